// The key index (Java store/index/IndexService): `{root}/index/{yyyyMMddHHmmssSSS}` files, filled by dispatch
// with `topic#UNIQ_KEY` and `topic#key` for each KEYS entry, queried by QUERY_MESSAGE. New entries are written
// once per event-loop turn by one writer; slot pages and headers are written and fsynced by flush(), after
// which the store records the covered time as the checkpoint's indexMsgTimestamp.
import path from 'node:path';
import type { Logger } from 'pino';
import { fs, writevAll, writevAllSync } from '../io.js';
import { SysFlag } from '../record.js';
import { javaStringHashCode, javaStringHashCodeContinued } from '../../common/java-hash.js';
import { IndexFile, indexFileName, indexKeyHashOf, isIndexFileName, type IndexGeometry } from './index-file.js';

/** MessageConst.KEY_SEPARATOR */
export const KEY_SEPARATOR = ' ';

/** Topics whose `topic#` hash is kept; past it the cache starts over. */
const PREFIX_HASH_CACHE_MAX = 65_536;

export interface IndexServiceConfig extends IndexGeometry {
  /** Most offsets one query returns (MessageStoreConfig.maxMsgsNumBatch). */
  maxMsgsNumBatch: number;
}

/** One dispatched record, as the index needs it (a slice of Java's DispatchRequest). */
export interface IndexRequest {
  topic: string;
  commitLogOffset: number;
  storeTimestamp: number;
  sysFlag: number;
  /** KEYS property (space-separated), if any. */
  keys: string | undefined;
  /** UNIQ_KEY property, if any. */
  uniqKey: string | undefined;
}

export interface QueryOffsetResult {
  phyOffsets: number[];
  indexLastUpdateTimestamp: number;
  indexLastUpdatePhyoffset: number;
}

/**
 * Where start-up re-dispatch must begin so that the index misses nothing: `fromOffset`, raised (when
 * given) to the newest commit-log file stored at or before `notBeforeTimestamp`.
 */
export interface IndexRecoveryHint {
  fromOffset: number;
  notBeforeTimestamp?: number;
}

/** Slack below the checkpoint time, as Java's StoreCheckpoint.getMinTimestamp. */
const CHECKPOINT_SLACK_MS = 3000;
/** Write-behind of index entries (see scheduleWrite). */
const WRITE_BEHIND_MS = 100;
const WRITE_BEHIND_KEYS = 2048;
const SYNC_WRITE_MAX_BYTES = 64 * 1024;

export class IndexService {
  /** Oldest first. */
  private files: IndexFile[] = [];
  /** Store time of the newest record given to buildIndex (what a completed flush covers). */
  lastDispatchTimestamp = 0;
  /** A file filled up since the last flush (Java flushes a file as soon as it rolls). */
  flushWanted = false;
  /** Set when a write failed: indexing stops, as Java's makeIndexFileError. */
  failure: Error | null = null;

  /** Records below this are never indexed again (lowered to the log end after a truncating recovery). */
  private skipCeiling = Infinity;
  /**
   * Start-up with a full newest file: the offset of its last message and how many of that message's keys it
   * holds. The message's other keys (if any) belong in the next file when re-dispatch brings it again.
   */
  private straddle: { offset: number; indexedKeys: number } | null = null;
  /** Files holding entries not yet handed to the writer. */
  private unwritten = new Set<IndexFile>();
  private readonly prefixHashes = new Map<string, number>();
  private writeScheduled = false;
  /** Write-behind timer (see scheduleWrite); null when the write is due at once or not scheduled. */
  private writeTimer: NodeJS.Timeout | null = null;
  /** Keys added since the writer last took the files' entries. */
  private unwrittenKeys = 0;
  private writing = false;
  private idleWaiters: Array<() => void> = [];
  private flushing: Promise<number> | null = null;
  private readonly runWritesBound = (): void => void this.runWrites();

  constructor(
    readonly dir: string,
    private readonly config: IndexServiceConfig,
    private readonly logger: Logger,
  ) {}

  get indexFiles(): readonly IndexFile[] {
    return this.files;
  }

  // ---------------------------------------------------------------- start-up

  /**
   * IndexService.load. Files are taken in name order. After an abnormal stop a file whose end time is later
   * than the checkpoint's indexMsgTimestamp is dropped (Java). Also dropped: a file of the wrong size, every file after
   * a dropped one, and every file after one that is not full (a file only rolls when full, so a later file means
   * its last flush was lost; the not-full file itself stays, as the file to write). Returns where re-dispatch
   * must start to refill the index.
   */
  loadSync(lastExitOK: boolean, indexMsgTimestamp: number): IndexRecoveryHint {
    fs.mkdirSync(this.dir, { recursive: true });
    const names = fs.readdirSync(this.dir).filter(isIndexFileName).sort();
    let dropped = false;
    for (const name of names) {
      const filePath = path.join(this.dir, name);
      if (dropped) {
        this.logger.warn({ file: filePath }, 'index: dropping file after a damaged or unfinished one');
        fs.rmSync(filePath, { force: true });
        continue;
      }
      const f = IndexFile.openSync(filePath, this.config);
      if (!f) {
        this.logger.warn({ file: filePath }, 'index: file size does not match maxHashSlotNum/maxIndexNum, dropping it');
        fs.rmSync(filePath, { force: true });
        dropped = true;
        continue;
      }
      if (!lastExitOK && f.endTimestamp > indexMsgTimestamp) {
        this.logger.warn({ file: filePath, endTimestamp: f.endTimestamp, indexMsgTimestamp },
          'index: file is newer than the index checkpoint, dropping it for rebuild');
        f.destroySync();
        dropped = true;
        continue;
      }
      this.files.push(f);
      if (!f.isWriteFull()) dropped = names.indexOf(name) < names.length - 1;
    }
    const last = this.files[this.files.length - 1];
    if (last && !last.isWriteFull()) {
      const repaired = last.loadSlotsSync(!lastExitOK);
      if (repaired > 0) this.logger.warn({ file: last.filePath, repaired }, 'index: repaired slots written after the last header');
    } else if (last) {
      this.straddle = { offset: last.endPhyOffset, indexedKeys: last.countTailEntriesAtSync(last.endPhyOffset) };
    }
    this.logger.info({ files: this.files.length, dropped }, 'index: loaded');
    // No files: a new store, or the directory was removed (or the index was off): rebuild it all.
    if (!last) return { fromOffset: 0 };
    if (dropped) return { fromOffset: last.endPhyOffset };
    // A clean stop flushed everything dispatched; the ordinary recovery window is enough.
    if (lastExitOK) return { fromOffset: Infinity };
    return indexMsgTimestamp > 0
      ? { fromOffset: last.endPhyOffset, notBeforeTimestamp: indexMsgTimestamp - CHECKPOINT_SLACK_MS }
      : { fromOffset: last.endPhyOffset };
  }

  /** After recovery: a log truncated below what the index holds must not stop new records from being indexed. */
  afterRecovery(logEndOffset: number): void {
    const last = this.files[this.files.length - 1];
    if (last && last.endPhyOffset >= logEndOffset) {
      this.logger.warn({ endPhyOffset: last.endPhyOffset, logEndOffset }, 'index: the commit log ends before the index does');
      this.skipCeiling = logEndOffset;
    }
  }

  // ---------------------------------------------------------------- build

  /** Whether buildIndex would look at a record at this offset (lets re-dispatch skip parsing properties). */
  wants(commitLogOffset: number): boolean {
    const last = this.files[this.files.length - 1];
    if (!last) return true;
    // A full newest file is followed by a new one that inherits its end (see skipBelow).
    const end = last.isWriteFull() ? Math.min(last.endPhyOffset, this.skipCeiling) : this.skipBelow(last);
    return commitLogOffset >= end;
  }

  /**
   * Records at or below the file's last indexed record are already in the index (idempotent re-dispatch;
   * Java skips only offsets strictly below endPhyOffset, so it indexes that last record twice). A file holding
   * nothing of its own yet carries its predecessor's end; the message there may have been cut by the roll,
   * which buildIndex completes (see `straddle`).
   */
  private skipBelow(f: IndexFile): number {
    const own = f.indexCount > 1 ? f.endPhyOffset + 1 : f.endPhyOffset;
    return Math.min(own, this.skipCeiling);
  }

  /** IndexService.buildIndex (synchronous; the writes happen in the next turn). */
  buildIndex(req: IndexRequest): void {
    if (this.failure) return;
    if ((req.sysFlag & SysFlag.TRANSACTION_TYPE_MASK) === SysFlag.TRANSACTION_ROLLBACK_TYPE) return;
    let f = this.writableFile();
    if (req.commitLogOffset < this.skipBelow(f)) return;
    if (req.storeTimestamp > this.lastDispatchTimestamp) this.lastDispatchTimestamp = req.storeTimestamp;
    // Keys are indexed in a fixed order (UNIQ_KEY, then KEYS left to right), so the ones already in the
    // previous file are the first `skip`.
    let skip = 0;
    if (this.straddle && f.indexCount <= 1 && req.commitLogOffset === this.straddle.offset) skip = this.straddle.indexedKeys;
    const { keys, uniqKey } = req;
    if (!uniqKey && !keys) return;
    // Keys are `topic#key` (IndexService.buildKey): hashed as one string without building it.
    const prefixHash = this.topicPrefixHash(req.topic);
    if (uniqKey) {
      if (skip > 0) skip--;
      else f = this.putKey(f, javaStringHashCodeContinued(prefixHash, uniqKey), req);
    }
    if (keys) {
      let at = 0;
      while (at <= keys.length) {
        let stop = keys.indexOf(KEY_SEPARATOR, at);
        if (stop < 0) stop = keys.length;
        if (stop > at) {
          if (skip > 0) skip--;
          else f = this.putKey(f, javaStringHashCodeContinued(prefixHash, keys, at, stop), req);
        }
        at = stop + 1;
      }
    }
  }

  /** String.hashCode of `topic#`, cached per topic (bounded). */
  private topicPrefixHash(topic: string): number {
    let h = this.prefixHashes.get(topic);
    if (h === undefined) {
      if (this.prefixHashes.size >= PREFIX_HASH_CACHE_MAX) this.prefixHashes.clear();
      h = javaStringHashCode(`${topic}#`);
      this.prefixHashes.set(topic, h);
    }
    return h;
  }

  private putKey(f: IndexFile, javaHash: number, req: IndexRequest): IndexFile {
    let file = f;
    const keyHash = indexKeyHashOf(javaHash);
    while (!file.putKeyHash(keyHash, req.commitLogOffset, req.storeTimestamp)) {
      this.logger.info({ file: file.filePath }, 'index: file is full, rolling to a new one');
      file = this.createFile(file);
    }
    this.unwritten.add(file);
    this.unwrittenKeys++;
    this.scheduleWrite();
    return file;
  }

  /** The last file if it takes keys, else a new one (IndexService.getAndCreateLastIndexFile). */
  private writableFile(): IndexFile {
    const last = this.files[this.files.length - 1];
    if (last && !last.isWriteFull()) return last;
    return this.createFile(last);
  }

  private createFile(prev: IndexFile | undefined): IndexFile {
    let name = indexFileName(Date.now());
    // Two files created in one millisecond would share a name (a Java quirk); keep names unique and ordered.
    if (prev && name <= prev.name) name = String(BigInt(prev.name) + 1n);
    const f = IndexFile.create(this.dir, name, this.config, prev?.endPhyOffset ?? 0, prev?.endTimestamp ?? 0);
    this.files.push(f);
    if (prev) this.flushWanted = true;
    return f;
  }

  // ---------------------------------------------------------------- writer

  /**
   * Entries are written behind the dispatch: WRITE_BEHIND_MS after the first unwritten one, at once when
   * WRITE_BEHIND_KEYS are waiting or someone drains/flushes (one write per interval instead of one per batch).
   * Unwritten entries are served from memory and rebuilt from the commit log after a crash.
   */
  private scheduleWrite(now = false): void {
    if (this.writing) return;
    if (now || this.unwrittenKeys >= WRITE_BEHIND_KEYS) {
      if (this.writeTimer) {
        clearTimeout(this.writeTimer);
        this.writeTimer = null;
      } else if (this.writeScheduled) {
        return;
      }
      this.writeScheduled = true;
      setImmediate(this.runWritesBound);
      return;
    }
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = null;
      this.runWritesBound();
    }, WRITE_BEHIND_MS);
  }

  private async runWrites(): Promise<void> {
    this.writeScheduled = false;
    this.writing = true;
    this.unwrittenKeys = 0;
    try {
      while (this.unwritten.size > 0) {
        // Oldest file first: a roll leaves entries in two files.
        const files = [...this.unwritten];
        this.unwritten.clear();
        for (const f of files) {
          const w = f.takeUnwrittenEntries();
          if (!w || !f.hold()) continue;
          try {
            await f.ready;
            let bytes = 0;
            for (const b of w.bufs) bytes += b.length;
            // The usual write-behind slice is small: write it from the event loop (no thread-pool round trip).
            if (bytes <= SYNC_WRITE_MAX_BYTES) writevAllSync(f.fd, w.bufs, w.position);
            else await writevAll(f.fd, w.bufs, w.position);
            f.markWritten(w.end);
          } catch (err) {
            // The entries stay readable from memory; indexing stops (Java marks the index as failed).
            if (!this.failure) this.logger.error({ err, file: f.filePath }, 'index: write failed; indexing stops');
            this.failure ??= err as Error;
            f.markWriteFailed(err as Error);
          } finally {
            f.release();
          }
        }
      }
    } finally {
      this.writing = false;
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const r of idle) r();
    }
  }

  /** Resolves once every entry built so far has been written (or failed). */
  drainWrites(): Promise<void> {
    if (!this.writing && !this.writeScheduled) return Promise.resolve();
    if (this.writeTimer) this.scheduleWrite(true);
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---------------------------------------------------------------- flush

  /**
   * Writes every file's dirty slot pages and header and fsyncs them. Resolves to the store time everything
   * dispatched so far is durable up to (for the checkpoint's indexMsgTimestamp), 0 if nothing was dispatched.
   */
  flush(): Promise<number> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    const p = this.flushOnce().finally(() => {
      this.flushing = null;
    });
    this.flushing = p;
    return p;
  }

  private async flushOnce(): Promise<number> {
    const covered = this.lastDispatchTimestamp;
    this.flushWanted = false;
    if (this.writeTimer) this.scheduleWrite(true);
    const plans = [];
    for (const f of this.files) {
      const plan = f.prepareFlush();
      if (plan) plans.push(f.flush(plan));
    }
    await Promise.all(plans);
    const last = this.files[this.files.length - 1];
    for (const f of this.files) if (f !== last) f.releaseSlotTableIfSealed();
    return covered;
  }

  // ---------------------------------------------------------------- query

  /**
   * IndexService.queryOffset: newest file first, skipping files whose time range misses [begin, end]; stops
   * at a file that begins before `begin` or once maxNum offsets (capped at maxMsgsNumBatch) are found.
   */
  async queryOffset(topic: string, key: string, maxNum: number, begin: number, end: number): Promise<QueryOffsetResult> {
    const limit = Math.min(maxNum, this.config.maxMsgsNumBatch);
    const result: QueryOffsetResult = { phyOffsets: [], indexLastUpdateTimestamp: 0, indexLastUpdatePhyoffset: 0 };
    const files = this.files.slice();
    const fullKey = `${topic}#${key}`;
    for (let i = files.length - 1; i >= 0; i--) {
      const f = files[i]!;
      if (i === files.length - 1) {
        result.indexLastUpdateTimestamp = f.endTimestamp;
        result.indexLastUpdatePhyoffset = f.endPhyOffset;
      }
      if (limit > 0 && f.isTimeMatched(begin, end) && f.hold()) {
        try {
          await f.selectPhyOffsets(result.phyOffsets, fullKey, limit, begin, end);
        } catch (err) {
          this.logger.warn({ err, file: f.filePath }, 'index: query read failed');
        } finally {
          f.release();
        }
      }
      if (f.beginTimestamp < begin) break;
      if (result.phyOffsets.length >= limit) break;
    }
    return result;
  }

  // ---------------------------------------------------------------- cleanup

  /**
   * IndexService.deleteExpiredFile: deletes the oldest files whose last entry points below the commit log's
   * minimum offset (never the newest file). Returns how many were deleted.
   */
  deleteExpiredFiles(minPhyOffset: number): number {
    let n = 0;
    while (this.files.length > 1 && this.files[0]!.endPhyOffset < minPhyOffset) {
      const f = this.files.shift()!;
      this.logger.info({ file: f.filePath, endPhyOffset: f.endPhyOffset, minPhyOffset }, 'index: deleting expired file');
      f.destroy();
      n++;
    }
    return n;
  }

  /** Writes and fsyncs everything, then closes the files; resolves to the covered store time (see flush). */
  async close(): Promise<number> {
    await this.drainWrites();
    let covered = 0;
    try {
      covered = await this.flush();
    } catch (err) {
      this.logger.error({ err }, 'index: final flush failed');
    }
    for (const f of this.files) await f.close().catch(() => {});
    this.files = [];
    return covered;
  }
}
