// One consume queue (topic, queueId): 20-byte entries `commitLogOffset int64 | size int32 | tagsCode int64`
// in files of mappedFileSizeConsumeQueue bytes named by the byte offset of their first entry
// (Java ConsumeQueue). Recent entries live in an in-memory tail; older ones are read from the files.
import path from 'node:path';
import type { Logger } from 'pino';
import { CQ_UNIT_SIZE, OS_PAGE_SIZE } from '../config.js';
import { fs, fdatasync, isOffsetFileName, readFullySync, writevAll, writevAllSync } from '../io.js';
import { PageCacheReader } from '../page-cache-reader.js';
import { EntryReadAhead } from './read-ahead.js';
import { readInt64, writeInt32, writeInt64 } from '../record.js';
import { Segment } from '../segment.js';
import type { QueueOffsetCounter } from '../commit-log/port.js';

/** Java fills the part of a first file before its first real entry with (0, Integer.MAX_VALUE, 0). */
export const CQ_PLACEHOLDER_SIZE = 0x7fffffff;
const INITIAL_TAIL_ENTRIES = 64;
/** Largest read of a load scan: about 1 MiB, a whole number of entries (a read must not split an entry). */
const LOAD_READ_BYTES = Math.floor((1024 * 1024) / CQ_UNIT_SIZE) * CQ_UNIT_SIZE;
/** The first read of a load scan (200 entries); each next read doubles, up to LOAD_READ_BYTES. */
const LOAD_FIRST_READ_BYTES = 200 * CQ_UNIT_SIZE;
/** One read buffer for all loads (they are synchronous, one queue at a time). */
let loadScratch: Buffer | undefined;
/** Largest gap in queue offsets filled with placeholders; beyond it the entry is refused as corrupt. */
const MAX_GAP_FILL_ENTRIES = 65536;
/**
 * Entries are written to their file behind the dispatch (write-behind), not once per commit-log batch: after
 * WRITE_BEHIND_MS, or at once when this many are waiting, or when a flush or reader needs them on disk. Java
 * copies them into a mapped file; one positional write per queue per interval costs about the same. Unwritten
 * entries stay in the in-memory tail (reads use it) and are rebuilt from the commit log after a crash (the
 * checkpoint's logicsMsgTimestamp only moves after they are written and synced).
 */
const WRITE_BEHIND_MS = 100;
const WRITE_BEHIND_ENTRIES = 1024;
const SYNC_WRITE_MAX_BYTES = 64 * 1024;

export interface CqEntry {
  commitLogOffset: number;
  sizeBytes: number;
  tagsCode: number;
}

/** The names in `dir`, none when it does not exist (one syscall, not an exists check and a read). */
function readdirIfExistsSync(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export function parseEntry(buf: Buffer, pos: number): CqEntry {
  return { commitLogOffset: readInt64(buf, pos), sizeBytes: buf.readInt32BE(pos + 8), tagsCode: readInt64(buf, pos + 12) };
}

export class ConsumeQueue implements QueueOffsetCounter {
  /** Next queue offset the append path hands out (ahead of maxOffset while records await their write). */
  nextQueueOffset = 0;
  /** Logical offset of the first entry. */
  minOffset = 0;
  /** Logical offset of the next entry to dispatch (= number of entries, Java getMaxOffsetInQueue). */
  maxOffset = 0;
  /** End (offset + size) of the last entry's record in the commit log. */
  maxPhysicEnd = 0;

  private files: Segment[] = [];
  /** Entries [tailStart, maxOffset), 20 bytes each. */
  private tail: Buffer = Buffer.alloc(INITIAL_TAIL_ENTRIES * CQ_UNIT_SIZE);
  private tailStart = 0;
  /** Entries below this have been written to their files; below syncedIndex also fdatasync'ed. */
  private writtenIndex = 0;
  private syncedIndex = 0;
  /**
   * Store timestamp of the first record whose entry came in while every entry was synced; 0 while all are synced or
   * when unknown. The checkpoint's consume-queue time stays below it (MessageStore's consume-queue flush).
   */
  unsyncedSinceStoreTimestamp = 0;
  private writing = false;
  private writeTimer: NodeJS.Timeout | null = null;
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  private readonly writeLoopBound = (): void => void this.writeLoop();
  private readonly writeBehindBound = (): void => {
    this.writeTimer = null;
    this.startWriteLoop();
  };

  constructor(
    readonly topic: string,
    readonly queueId: number,
    readonly dir: string,
    private readonly fileSize: number,
    private readonly tailCapacityEntries: number,
    private readonly logger: Logger,
    /** Reads of entries older than the in-memory tail (shared with the commit log). */
    private readonly reader: PageCacheReader = new PageCacheReader(),
    /** Blocks of entries read ahead for pulls behind the tail (shared by the store's queues). */
    private readonly readAhead: EntryReadAhead = new EntryReadAhead(),
  ) {}

  // ---------------------------------------------------------------- load (start-up, synchronous)

  /** Opens the queue's files and finds the last valid entry (scanning from the third-last file, as Java). */
  loadSync(): void {
    const names = readdirIfExistsSync(this.dir).filter(isOffsetFileName).sort();
    for (const name of names) {
      const from = Number(name);
      const filePath = path.join(this.dir, name);
      const prev = this.files[this.files.length - 1];
      const size = fs.statSync(filePath).size;
      if (from % this.fileSize !== 0 || (prev && prev.endOffset !== from) || size > this.fileSize) {
        // Damaged: drop this and later files; re-dispatch rebuilds them from the commit log.
        this.logger.warn({ file: filePath }, 'consume queue: unexpected file, dropping it and later files');
        for (const n of names.slice(names.indexOf(name))) fs.rmSync(path.join(this.dir, n), { force: true });
        break;
      }
      this.files.push(Segment.openSync(filePath, from, this.fileSize));
    }
    if (this.files.length === 0) return;
    const buf = (loadScratch ??= Buffer.allocUnsafe(LOAD_READ_BYTES));
    // Reads start small and double: most queues hold a few entries, and reading 1 MiB of a sparse file's zeros
    // per scan made start-up on 16,000 queues read-bound (tens of GB copied).
    const chunkAt = (k: number) => Math.min(LOAD_FIRST_READ_BYTES * 2 ** k, LOAD_READ_BYTES);
    // Min: the first entry of the first file that is not a placeholder.
    const first = this.files[0]!;
    let min = first.endOffset / CQ_UNIT_SIZE;
    outer: for (let pos = 0, k = 0; pos < this.fileSize; pos += chunkAt(k++)) {
      const n = readFullySync(first.fd, buf, 0, Math.min(chunkAt(k), this.fileSize - pos), pos);
      for (let i = 0; i + CQ_UNIT_SIZE <= n; i += CQ_UNIT_SIZE) {
        if (buf.readInt32BE(i + 8) !== CQ_PLACEHOLDER_SIZE || readInt64(buf, i) !== 0) {
          min = (first.fromOffset + pos + i) / CQ_UNIT_SIZE;
          break outer;
        }
      }
    }
    // Max: first invalid entry (offset < 0 or size <= 0), scanning from the third-last file.
    let max = this.files[this.files.length - 1]!.endOffset / CQ_UNIT_SIZE;
    let lastEnd = 0;
    scan: for (let f = Math.max(0, this.files.length - 3); f < this.files.length; f++) {
      const file = this.files[f]!;
      for (let pos = 0, k = 0; pos < this.fileSize; pos += chunkAt(k++)) {
        const n = readFullySync(file.fd, buf, 0, Math.min(chunkAt(k), this.fileSize - pos), pos);
        for (let i = 0; i + CQ_UNIT_SIZE <= n; i += CQ_UNIT_SIZE) {
          const offset = readInt64(buf, i);
          const size = buf.readInt32BE(i + 8);
          const index = (file.fromOffset + pos + i) / CQ_UNIT_SIZE;
          if (offset < 0 || size <= 0) {
            max = index;
            break scan;
          }
          if (index >= min) lastEnd = offset + size;
        }
      }
    }
    if (max < min) max = min;
    if (lastEnd === 0 && max > min) {
      // The last valid entry sits before the scanned files.
      const file = this.fileFor((max - 1) * CQ_UNIT_SIZE)!;
      readFullySync(file.fd, buf, 0, CQ_UNIT_SIZE, (max - 1) * CQ_UNIT_SIZE - file.fromOffset);
      lastEnd = readInt64(buf, 0) + buf.readInt32BE(8);
    }
    this.minOffset = this.tailStart = min;
    this.maxOffset = this.nextQueueOffset = this.writtenIndex = this.syncedIndex = max;
    this.maxPhysicEnd = lastEnd;
    this.truncateFilesSync(max);
    this.loadTailSync();
  }

  /**
   * Drops entries whose record ends beyond `physEnd`, the recovered end of the commit log (Java
   * truncateDirtyLogicFiles). Start-up only, with no writes in flight.
   */
  truncateBeyondSync(physEnd: number): void {
    if (this.maxPhysicEnd <= physEnd) return;
    const b = Buffer.allocUnsafe(CQ_UNIT_SIZE);
    let max = this.maxOffset;
    let lastEnd = 0;
    while (max > this.minOffset) {
      const e = this.entryAtSync(max - 1, b);
      const end = e.commitLogOffset + e.sizeBytes;
      if (e.sizeBytes !== CQ_PLACEHOLDER_SIZE && end <= physEnd) {
        lastEnd = end;
        break;
      }
      max--;
    }
    this.logger.info({ topic: this.topic, queueId: this.queueId, from: max, to: this.maxOffset },
      'consume queue: dropping entries beyond the commit log end');
    this.maxOffset = this.nextQueueOffset = this.writtenIndex = this.syncedIndex = max;
    this.maxPhysicEnd = lastEnd;
    this.truncateFilesSync(max);
    if (max < this.tailStart) this.loadTailSync();
  }

  private entryAtSync(index: number, scratch: Buffer): CqEntry {
    if (index >= this.tailStart) return parseEntry(this.tail, (index - this.tailStart) * CQ_UNIT_SIZE);
    const file = this.fileFor(index * CQ_UNIT_SIZE)!;
    readFullySync(file.fd, scratch, 0, CQ_UNIT_SIZE, index * CQ_UNIT_SIZE - file.fromOffset);
    return parseEntry(scratch, 0);
  }

  /** Zeroes entries from `index` on and deletes files that start after it. */
  private truncateFilesSync(index: number): void {
    this.readAhead.drop(this);
    const byteOffset = index * CQ_UNIT_SIZE;
    const keep: Segment[] = [];
    for (const file of this.files) {
      if (file.fromOffset <= byteOffset || keep.length === 0) {
        keep.push(file);
        if (byteOffset < file.endOffset) file.zeroFromSync(Math.max(0, byteOffset - file.fromOffset));
      } else {
        file.destroySync();
      }
    }
    this.files = keep;
  }

  private loadTailSync(): void {
    const count = Math.min(this.maxOffset - this.minOffset, this.tailCapacityEntries);
    const start = this.maxOffset - count;
    this.tail = Buffer.alloc(Math.max(INITIAL_TAIL_ENTRIES, count) * CQ_UNIT_SIZE);
    this.tailStart = start;
    let done = 0;
    while (done < count) {
      const byteOffset = (start + done) * CQ_UNIT_SIZE;
      const file = this.fileFor(byteOffset)!;
      const n = Math.min(count - done, (file.endOffset - byteOffset) / CQ_UNIT_SIZE);
      readFullySync(file.fd, this.tail, done * CQ_UNIT_SIZE, n * CQ_UNIT_SIZE, byteOffset - file.fromOffset);
      done += n;
    }
  }

  // ---------------------------------------------------------------- dispatch

  /**
   * Adds the entry for `queueOffset` (idempotent: an offset already present is skipped and false returned).
   * An empty queue starts at the first offset it is given (its min); a gap is filled with placeholders.
   */
  putEntry(queueOffset: number, commitLogOffset: number, sizeBytes: number, tagsCode: number, storeTimestamp = 0): boolean {
    if (queueOffset < this.maxOffset) return false;
    if (this.syncedIndex >= this.maxOffset) this.unsyncedSinceStoreTimestamp = storeTimestamp;
    if (this.maxOffset === this.minOffset && this.files.length === 0 && queueOffset > this.maxOffset) {
      this.minOffset = this.maxOffset = this.tailStart = this.writtenIndex = this.syncedIndex = queueOffset;
    }
    if (queueOffset > this.maxOffset) {
      // A gap should never happen; a huge one is a corrupt record (BODYCRC does not cover QUEUEOFFSET).
      if (queueOffset - this.maxOffset > MAX_GAP_FILL_ENTRIES) {
        this.logger.error({ topic: this.topic, queueId: this.queueId, queueOffset, expected: this.maxOffset },
          'consume queue: queue offset far beyond the end, entry ignored');
        return false;
      }
      this.logger.warn({ topic: this.topic, queueId: this.queueId, queueOffset, expected: this.maxOffset },
        'consume queue: gap in queue offsets, filling with placeholders');
      while (this.maxOffset < queueOffset) this.appendToTail(0, CQ_PLACEHOLDER_SIZE, 0);
    }
    this.appendToTail(commitLogOffset, sizeBytes, tagsCode);
    if (commitLogOffset + sizeBytes > this.maxPhysicEnd) this.maxPhysicEnd = commitLogOffset + sizeBytes;
    if (this.nextQueueOffset < this.maxOffset) this.nextQueueOffset = this.maxOffset;
    if (!this.writing) {
      if (this.maxOffset - this.writtenIndex >= WRITE_BEHIND_ENTRIES) this.startWriteLoop();
      else this.writeTimer ??= setTimeout(this.writeBehindBound, WRITE_BEHIND_MS);
    }
    return true;
  }

  /**
   * Re-dispatch after an abnormal stop, for a queue offset the queue already holds: puts the entry right when the
   * one loaded differs (a power loss tore it, or its sectors landed out of order, and the load's validity check —
   * offset >= 0, size > 0 — passed it). Start-up only. Returns whether the entry was rewritten.
   */
  repairEntrySync(queueOffset: number, commitLogOffset: number, sizeBytes: number, tagsCode: number): boolean {
    if (queueOffset < this.minOffset || queueOffset >= this.maxOffset) return false;
    const e = this.entryAtSync(queueOffset, Buffer.allocUnsafe(CQ_UNIT_SIZE));
    if (e.commitLogOffset === commitLogOffset && e.sizeBytes === sizeBytes) return false;
    const entry = Buffer.allocUnsafe(CQ_UNIT_SIZE);
    writeInt64(entry, 0, commitLogOffset);
    entry.writeInt32BE(sizeBytes, 8);
    writeInt64(entry, 12, tagsCode);
    if (queueOffset >= this.tailStart) entry.copy(this.tail, (queueOffset - this.tailStart) * CQ_UNIT_SIZE);
    if (queueOffset < this.writtenIndex) {
      this.readAhead.drop(this);
      // Already on disk: written here (the write loop only writes from writtenIndex on) and synced by the next flush.
      const file = this.fileFor(queueOffset * CQ_UNIT_SIZE);
      if (!file || file.fd < 0) return false;
      writevAllSync(file.fd, [entry], queueOffset * CQ_UNIT_SIZE - file.fromOffset);
      if (this.syncedIndex > queueOffset) {
        this.syncedIndex = queueOffset;
        this.unsyncedSinceStoreTimestamp = 0;
      }
    }
    if (commitLogOffset + sizeBytes > this.maxPhysicEnd) this.maxPhysicEnd = commitLogOffset + sizeBytes;
    this.logger.warn({ topic: this.topic, queueId: this.queueId, queueOffset, found: e, commitLogOffset, sizeBytes },
      'consume queue: entry differs from its commit-log record (torn by a crash), rewritten');
    return true;
  }

  private startWriteLoop(): void {
    if (this.writeTimer) {
      clearTimeout(this.writeTimer);
      this.writeTimer = null;
    }
    if (this.writing) return;
    this.writing = true;
    queueMicrotask(this.writeLoopBound);
  }

  private appendToTail(commitLogOffset: number, sizeBytes: number, tagsCode: number): void {
    let count = this.maxOffset - this.tailStart;
    if ((count + 1) * CQ_UNIT_SIZE > this.tail.length) {
      const droppable = Math.min(count >> 1, this.writtenIndex - this.tailStart);
      if (this.tail.length >= this.tailCapacityEntries * CQ_UNIT_SIZE && droppable > 0) {
        this.tail.copyWithin(0, droppable * CQ_UNIT_SIZE, count * CQ_UNIT_SIZE);
        this.tailStart += droppable;
        count -= droppable;
      } else {
        const grown = Buffer.alloc(this.tail.length * 2);
        this.tail.copy(grown, 0, 0, count * CQ_UNIT_SIZE);
        this.tail = grown;
      }
    }
    const p = count * CQ_UNIT_SIZE;
    writeInt64(this.tail, p, commitLogOffset);
    writeInt32(this.tail, p + 8, sizeBytes);
    writeInt64(this.tail, p + 12, tagsCode);
    this.maxOffset++;
  }

  // ---------------------------------------------------------------- persistence

  private async writeLoop(): Promise<void> {
    try {
      while (this.writtenIndex < this.maxOffset && !this.closed) {
        const from = this.writtenIndex;
        const file = await this.ensureFile(from * CQ_UNIT_SIZE);
        const to = Math.min(this.maxOffset, file.endOffset / CQ_UNIT_SIZE);
        // Copy: the tail may be compacted while the write is in flight.
        const data = Buffer.from(this.tail.subarray((from - this.tailStart) * CQ_UNIT_SIZE, (to - this.tailStart) * CQ_UNIT_SIZE));
        // Small writes (the usual write-behind slice) go straight into the page cache from the event loop:
        // cheaper than a thread-pool round trip per queue.
        if (data.length <= SYNC_WRITE_MAX_BYTES) writevAllSync(file.fd, [data], from * CQ_UNIT_SIZE - file.fromOffset);
        else await writevAll(file.fd, [data], from * CQ_UNIT_SIZE - file.fromOffset);
        this.writtenIndex = to;
      }
    } catch (err) {
      this.logger.error({ err, topic: this.topic, queueId: this.queueId }, 'consume queue: write failed');
    } finally {
      this.writing = false;
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const f of idle) f();
    }
  }

  /** The file holding `byteOffset`, creating files (placeholder-filled before min) as needed. */
  private async ensureFile(byteOffset: number): Promise<Segment> {
    let file = this.fileFor(byteOffset);
    while (!file) {
      const last = this.files[this.files.length - 1];
      const from = last ? last.endOffset : byteOffset - (byteOffset % this.fileSize);
      const created = Segment.create(this.dir, from, this.fileSize);
      this.files.push(created);
      await created.ready;
      const minByte = this.minOffset * CQ_UNIT_SIZE;
      if (!last && minByte > from) {
        const filler = Buffer.alloc(minByte - from);
        for (let p = 0; p < filler.length; p += CQ_UNIT_SIZE) filler.writeInt32BE(CQ_PLACEHOLDER_SIZE, p + 8);
        await writevAll(created.fd, [filler], 0);
      }
      file = this.fileFor(byteOffset);
    }
    await file.ready;
    return file;
  }

  private fileFor(byteOffset: number): Segment | undefined {
    const first = this.files[0];
    if (!first || byteOffset < first.fromOffset) return undefined;
    return this.files[Math.floor((byteOffset - first.fromOffset) / this.fileSize)];
  }

  /** Resolves once every dispatched entry has been written to its file. */
  drainWrites(): Promise<void> {
    if (!this.writing && (this.writtenIndex >= this.maxOffset || this.closed)) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    // Entries waiting for their write-behind turn (or left by a failed write) are written now.
    this.startWriteLoop();
    return done;
  }

  /** fdatasync of the files holding written-but-unsynced entries. Returns the number of files synced. */
  async flush(): Promise<number> {
    const target = this.writtenIndex;
    if (target <= this.syncedIndex) return 0;
    const files = new Set<Segment>();
    for (let i = this.syncedIndex; i < target; ) {
      const f = this.fileFor(i * CQ_UNIT_SIZE);
      if (!f) break;
      files.add(f);
      i = f.endOffset / CQ_UNIT_SIZE;
    }
    await Promise.all([...files].map((f) => f.withFd(fdatasync)));
    if (target > this.syncedIndex) this.syncedIndex = target;
    // Entries that came in during the sync keep the older time: later than needed is never wrong.
    if (this.syncedIndex >= this.maxOffset) this.unsyncedSinceStoreTimestamp = 0;
    return files.size;
  }

  /**
   * Page boundaries crossed between the synced entries and the dispatched ones (Java MappedFile.isAbleToFlush
   * compares the write and flush positions' page numbers the same way).
   */
  get unsyncedPages(): number {
    return Math.floor((this.maxOffset * CQ_UNIT_SIZE) / OS_PAGE_SIZE) - Math.floor((this.syncedIndex * CQ_UNIT_SIZE) / OS_PAGE_SIZE);
  }

  get hasUnsyncedEntries(): boolean {
    return this.syncedIndex < this.writtenIndex || this.writtenIndex < this.maxOffset;
  }

  // ---------------------------------------------------------------- read

  /** In-memory view of up to maxCount entries from `index`; undefined if `index` is older than the tail. */
  entriesInMemory(index: number, maxCount: number): Buffer | undefined {
    if (index < this.tailStart || index >= this.maxOffset) return undefined;
    const count = Math.min(maxCount, this.maxOffset - index);
    const start = (index - this.tailStart) * CQ_UNIT_SIZE;
    return this.tail.subarray(start, start + count * CQ_UNIT_SIZE);
  }

  /**
   * Up to maxCount entries from `index`, within one file and below the in-memory tail; null if unreadable.
   * `readAhead`: the caller reads on from there (a pull), so a block of entries from `index` is read and kept for
   * the next calls (read-ahead.ts), which may get a view of it; the entries must not be written to.
   */
  async readEntriesFromDisk(index: number, maxCount: number, readAhead = false): Promise<Buffer | null> {
    const byteOffset = index * CQ_UNIT_SIZE;
    const file = this.fileFor(byteOffset);
    if (!file || file.fd < 0 || index < this.minOffset) return null;
    const limit = Math.min(this.tailStart, this.writtenIndex, file.endOffset / CQ_UNIT_SIZE);
    const end = Math.min(index + maxCount, limit);
    if (end <= index) return null;
    if (readAhead) {
      const kept = this.readAhead.get(this, index, end);
      if (kept) return kept;
    }
    // Twice a pull's window, up to twice the block size: the filtered scans after this one (which move on by less
    // than their window) find theirs in it too.
    const block = this.readAhead.blockEntries;
    const ahead = readAhead ? Math.min(Math.max(2 * maxCount, block), 2 * block) : 0;
    const readEnd = Math.min(index + Math.max(maxCount, ahead), limit);
    const buf = Buffer.allocUnsafe((readEnd - index) * CQ_UNIT_SIZE);
    try {
      // Queue files are small and read where consumers are, usually just behind the tail: expected cached.
      const n = await file.withFd((fd) => this.reader.read(fd, buf, 0, buf.length, byteOffset - file.fromOffset, true));
      if (n !== buf.length) return null;
      if (readEnd === end) return buf;
      // Kept only if nothing rewrote or removed entries while the read ran (start-up only; destroy drops them).
      if (!this.closed && index >= this.minOffset && readEnd - index <= 2 * block) this.readAhead.put(this, index, buf);
      return buf.subarray(0, (end - index) * CQ_UNIT_SIZE);
    } catch {
      return null;
    }
  }

  /** Up to maxCount entries from `index` (memory or disk), as a buffer of 20-byte entries; null if none. */
  async readEntries(index: number, maxCount: number): Promise<Buffer | null> {
    if (index < this.minOffset || index >= this.maxOffset) return null;
    const mem = this.entriesInMemory(index, maxCount);
    return mem ? Buffer.from(mem) : this.readEntriesFromDisk(index, maxCount);
  }

  async readEntry(index: number): Promise<CqEntry | null> {
    const buf = await this.readEntries(index, 1);
    return buf ? parseEntry(buf, 0) : null;
  }

  /** Logical offset of the first entry of the file after the one holding `index` (Java rollNextFile). */
  rollNextFile(index: number): number {
    const perFile = this.fileSize / CQ_UNIT_SIZE;
    return index + perFile - (index % perFile);
  }

  // ---------------------------------------------------------------- clean-up (Java ConsumeQueue.deleteExpiredFile)

  /**
   * Deletes leading files whose last entry points below `minPhysicOffset` (the commit log's new minimum),
   * never the last file nor one with entries not yet fsynced, and raises the min past them. Returns the count.
   */
  async deleteExpiredFiles(minPhysicOffset: number, forciblyMs: number): Promise<number> {
    let deleted = 0;
    while (this.files.length > 1 && !this.closed) {
      const file = this.files[0]!;
      const endIndex = file.endOffset / CQ_UNIT_SIZE;
      if (endIndex > this.syncedIndex) break;
      if (endIndex - 1 >= this.minOffset) {
        const last = await this.readEntry(endIndex - 1);
        if (!last || last.commitLogOffset >= minPhysicOffset) break;
      }
      if (this.files[0] !== file) break;
      this.files.shift();
      if (this.minOffset < endIndex) this.minOffset = endIndex;
      deleted++;
      this.logger.info({ file: file.filePath }, 'consume queue: deleting expired file');
      await file.destroyWhenIdle(forciblyMs);
    }
    return deleted;
  }

  /**
   * Moves the min to the first entry whose record is at or after `minPhysicOffset`, or to max when none is
   * (Java ConsumeQueue.correctMinOffset). Entries are ordered by commit-log offset, so a binary search does.
   */
  async correctMinOffset(minPhysicOffset: number): Promise<void> {
    if (minPhysicOffset <= 0 || this.minOffset >= this.maxOffset) return;
    const first = await this.readEntry(this.minOffset);
    if (first && first.sizeBytes !== CQ_PLACEHOLDER_SIZE && first.commitLogOffset >= minPhysicOffset) return;
    const max = this.maxOffset;
    const last = await this.readEntry(max - 1);
    if (!last) return;
    if (last.commitLogOffset < minPhysicOffset) {
      this.minOffset = Math.max(this.minOffset, max);
    } else {
      let lo = this.minOffset;
      let hi = max - 1;
      while (lo < hi) {
        const mid = lo + Math.floor((hi - lo) / 2);
        const e = await this.readEntry(mid);
        if (!e) return;
        if (e.commitLogOffset < minPhysicOffset) lo = mid + 1;
        else hi = mid;
      }
      if (lo > this.minOffset) this.minOffset = lo;
    }
    this.logger.info({ topic: this.topic, queueId: this.queueId, minOffset: this.minOffset }, 'consume queue: min offset corrected');
  }

  // ---------------------------------------------------------------- lifecycle

  async close(): Promise<void> {
    this.readAhead.drop(this);
    await this.drainWrites();
    await this.flush().catch((err) => this.logger.error({ err }, 'consume queue: final flush failed'));
    this.closed = true;
    if (this.writeTimer) clearTimeout(this.writeTimer);
    this.writeTimer = null;
    for (const f of this.files) await f.close().catch(() => {});
  }

  async destroy(): Promise<void> {
    this.closed = true;
    this.readAhead.drop(this);
    if (this.writeTimer) clearTimeout(this.writeTimer);
    this.writeTimer = null;
    await this.drainWrites();
    for (const f of this.files) await f.close().catch(() => {});
    this.files = [];
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }
}
