// The commit log of DLedger mode (CommitLogPort over a DLedger node; Java store/dledger/DLedgerCommitLog,
// protocol/dledger.md §5): each message is one Raft entry whose body is a standard record. The leader encodes the
// records, takes queue offsets when its node has appended them (before the quorum, §8.16), and answers the put when
// the quorum holds the entry and it is dispatched here. On every member only committed entries are dispatched, in log
// order, read back from the DLedger data (the reput); offsets are inner-record offsets (entry pos + 48), the log's
// end is the committed position. Below dividedCommitlogOffset a migrated broker's classic commit log serves reads.
import type { Logger } from 'pino';
import {
  CommitLog, type CommitLogDeps, type CommitLogFactory, type CommitLogFile, type CommitLogPort, type CommitLogStats,
  type DecodedRecord, parseDelayLevels, type PreparedMessage, type PutResult, type PutStatus, type QueueOffsetCounter,
  RecordPos, type ReplicaAppendRefusal, type StoreConfig, storeFs as fs, writeInt64, writeRecord,
} from '../../store/index.js';
import { classicDataEnd, sealClassicLog } from './classic-log.js';
import { entryStoreTimestamp, scanEntries } from './entry-scan.js';
import { putStatusOfAck, REFUSED_BEFORE_APPEND } from './put-outcome.js';
import { DLedgerReput } from './reput.js';
import { DLEDGER_ENTRY_HEADER_BYTES, type DLedgerNodePort, type DLedgerAppendResult } from './types.js';

export interface DLedgerCommitLogOptions {
  /** The group member whose log this is (its store is loaded and recovered by this commit log). */
  node: DLedgerNodePort;
  /** Which official broker's put outcomes to give (haSemantics). */
  semantics: '4.9.8' | '5.3.3';
}

export function dledgerCommitLogFactory(opts: DLedgerCommitLogOptions): CommitLogFactory {
  return (deps) => new DLedgerCommitLog(deps, opts);
}

/** The append hook (DLedgerCommitLog's constructor installs the same): PHYSICALOFFSET := entry pos + 48. */
function writePhysicalOffset(entryBytes: Buffer, pos: number): void {
  writeInt64(entryBytes, DLEDGER_ENTRY_HEADER_BYTES + RecordPos.PHYSICAL_OFFSET, pos + DLEDGER_ENTRY_HEADER_BYTES);
}

function refused(status: PutStatus, remark?: string): PutResult {
  return {
    status, commitLogOffset: -1, commitLogOffsets: [], queueOffset: -1, wroteBytes: 0, storeTimestamp: 0, messageCount: 0,
    ...(remark ? { remark } : {}),
  };
}

export class DLedgerCommitLog implements CommitLogPort {
  readonly node: DLedgerNodePort;
  readonly stats: CommitLogStats = { writeCalls: 0, fsyncCalls: 0 };
  failure: Error | null = null;
  /** Where the DLedger data begins when a classic log precedes it (Java dividedCommitlogOffset); −1 without one. */
  dividedOffset = -1;

  private readonly config: StoreConfig;
  private readonly logger: Logger;
  private readonly semantics: '4.9.8' | '5.3.3';
  /** The classic log (files below dividedOffset); empty when the broker never ran without DLedger. */
  private readonly classic: CommitLog;
  private classicInUse = false;
  /** No DLedger data yet but a classic log: it is recovered and sealed in recover() (§5.4). */
  private migrating = false;
  private classicStartOffset = 0;
  private readonly reput: DLedgerReput;
  /** Set by the broker once it is master on this leader (queue offsets rebuilt): until then appends are refused. */
  private masterReady = false;
  private pendingAckBytes = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  private started = false;
  private closing = false;
  private waitsCancelled = false;

  constructor(deps: CommitLogDeps, opts: DLedgerCommitLogOptions) {
    this.node = opts.node;
    this.config = deps.config;
    this.logger = deps.logger;
    this.semantics = opts.semantics;
    this.classic = new CommitLog({ ...deps, onWritten: () => undefined, onNoSpace: () => undefined });
    this.reput = new DLedgerReput({
      store: () => this.node.store, fileSizeBytes: deps.config.mappedFileSizeCommitLog,
      delayLevelsMs: parseDelayLevels(deps.config.messageDelayLevel), onWritten: deps.onWritten, logger: deps.logger,
    });
    this.node.onCommitted(() => this.reput.schedule());
    this.node.onRoleChange((role) => {
      if (role !== 'LEADER') this.masterReady = false;
      this.reput.notifyProgress();
    });
  }

  private get store() {
    return this.node.store;
  }

  private get fileSizeBytes(): number {
    return this.config.mappedFileSizeCommitLog;
  }

  // ---------------------------------------------------------------- start-up

  /**
   * Opens the classic files (if any) and loads the DLedger store. With no DLedger data yet, the store is told to
   * begin where the last classic file holding data ends (§5.4); the classic log is recovered and sealed in recover().
   */
  loadSync(): void {
    this.classic.loadSync();
    let files = this.classic.files;
    const dataEnd = classicDataEnd(files);
    if (files.length > 0 && dataEnd < 0) {
      // Classic files without a byte of data (a preallocated file): nothing to keep.
      this.logger.info({ files: files.length }, 'DLedger commit log: removing classic commit-log files that hold no data');
      for (const f of files) fs.rmSync(f.filePath, { force: true });
      this.classic.loadSync();
      files = this.classic.files;
    }
    this.classicStartOffset = dataEnd > 0 ? dataEnd : 0;
    this.store.loadSync(this.classicStartOffset);
    this.classicInUse = files.length > 0;
    this.migrating = this.classicInUse && this.store.endIndex === -1;
    if (this.classicInUse) {
      this.dividedOffset = this.migrating ? this.classicStartOffset : (this.store.dataFiles[0]?.fromOffset ?? this.classicStartOffset);
    }
  }

  /**
   * Where recovery must look from: the classic window while migrating; after a clean stop the committed position
   * (the DLedger store validated its own data); after an abnormal one the newest data file whose first record was
   * stored before the checkpoint's time (Java dledgerRecoverAbnormally / isMmapFileMatchedRecover).
   */
  recoveryWindowStart(abnormalMinTimestamp?: number): number {
    if (this.migrating) return this.classic.recoveryWindowStart(abnormalMinTimestamp);
    if (abnormalMinTimestamp === undefined) return this.store.committedPos;
    const files = this.store.dataFiles;
    for (let i = files.length - 1; i >= 0; i--) {
      const ts = entryStoreTimestamp(this.store, Math.max(files[i]!.fromOffset, this.store.minOffset));
      if (ts > 0 && ts <= abnormalMinTimestamp) return Math.max(files[i]!.fromOffset, this.store.minOffset);
    }
    return this.classicInUse ? this.classic.recoveryWindowStart(abnormalMinTimestamp) : this.store.minOffset;
  }

  /**
   * Recovers the classic log (while migrating: fully, then seals it), re-dispatches every committed record from
   * scanStart on, and sets the reput at the committed position. Entries written but not committed stay undispatched
   * until the node commits them. Returns the DLedger data's end (consume queues pointing beyond it are cut).
   */
  async recover(
    scanStart: number, windowStart: number, onRecord: (record: DecodedRecord, offset: number) => void, pause: () => Promise<void>,
  ): Promise<number> {
    if (this.classicInUse) {
      if (this.migrating) {
        const writtenEnd = await this.classic.recover(scanStart, windowStart, onRecord, pause);
        const divided = sealClassicLog(this.classic.files, writtenEnd, this.fileSizeBytes, this.logger);
        if (divided !== this.classicStartOffset) {
          this.logger.warn({ writtenEnd, divided, dledgerStart: this.classicStartOffset },
            'DLedger commit log: the classic log ended before its last file holding data; the files between stay empty');
        }
        this.dividedOffset = this.classicStartOffset;
        this.migrating = false;
      } else {
        // Sealed earlier: read through to the last file's end (nothing there is validated or cut).
        const lastEnd = this.classic.files[this.classic.files.length - 1]!.endOffset;
        await this.classic.recover(Math.min(scanStart, lastEnd), Infinity, onRecord, pause);
      }
    }
    const committedPos = this.store.committedPos;
    let pos = Math.max(scanStart, this.store.minOffset, this.dividedOffset);
    while (pos < committedPos) {
      const scan = scanEntries(this.store, pos, committedPos, this.fileSizeBytes);
      for (const r of scan.records) {
        onRecord(r.record, r.offset);
        this.reput.lastStoreTimestamp = r.record.storeTimestamp;
      }
      if (!scan.ok) {
        this.logger.error({ reason: scan.reason, at: scan.next, committedPos }, 'DLedger commit log: re-dispatch stopped at unreadable data');
        break;
      }
      pos = scan.next;
      await pause();
    }
    this.reput.startAt(Math.max(committedPos, this.store.minOffset));
    this.logger.info({
      dividedCommitlogOffset: this.dividedOffset, minOffset: this.minOffset, committedPos, dataEnd: this.store.writePos,
      endIndex: this.store.endIndex, committedIndex: this.store.committedIndex,
    }, 'DLedger commit log: recovered');
    return this.store.writePos;
  }

  /** Starts the node (peer port, elections, replication) once the store is recovered. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.node.start();
    this.reput.schedule();
  }

  // ---------------------------------------------------------------- append

  canAccept(bytes: number): boolean {
    return this.pendingAckBytes === 0 || this.pendingAckBytes + bytes <= this.config.maxPendingWriteBytes;
  }

  /**
   * One entry per message (a batch too: DLedgerCommitLog.asyncPutMessages appends each as its own entry), appended
   * at once; queue offsets are those of the entries the node appended. The put is answered when the quorum holds the
   * last entry and the reput dispatched it, or with the DLedger outcome (§5.6).
   */
  append(prepared: PreparedMessage[], totalBytes: number, counter: QueueOffsetCounter): Promise<PutResult> {
    if (!this.masterReady || this.node.role !== 'LEADER') return Promise.resolve(refused(REFUSED_BEFORE_APPEND));
    if (prepared.length > 1 && prepared.some((m) => !m.queued)) {
      // DLedgerCommitLog.asyncPutMessages: no transactional batches.
      return Promise.resolve(refused('MESSAGE_ILLEGAL', 'a batch cannot hold transactional messages'));
    }
    const storeTimestamp = Date.now();
    const base = counter.nextQueueOffset;
    const bodies: Buffer[] = new Array(prepared.length);
    try {
      let queued = 0;
      for (let i = 0; i < prepared.length; i++) {
        const m = prepared[i]!;
        const body = Buffer.allocUnsafe(m.totalSize);
        writeRecord(body, 0, m.msg, {
          totalSize: m.totalSize, sysFlag: m.sysFlag, bodyCrc: m.bodyCrc, queueOffset: m.queued ? base + queued++ : 0,
          commitLogOffset: 0, storeTimestamp, topicBytes: m.topicBytes, propertiesLength: m.propertiesLength,
        });
        bodies[i] = body;
      }
    } catch (err) {
      this.logger.error({ err, topic: prepared[0]?.msg.topic }, 'DLedger commit log: a record could not be encoded; refused');
      return Promise.resolve(refused('UNKNOWN_ERROR', 'the message could not be encoded into a commit-log record'));
    }
    // Every check that can refuse the whole put came before this point; from here the node decides per entry.
    const offsets: number[] = [];
    let queuedAppended = 0;
    let lastAck: Promise<DLedgerAppendResult> | null = null;
    let endPos = 0;
    let refusedAt = -1;
    for (let i = 0; i < bodies.length; i++) {
      const { appended, acked } = this.node.append(bodies[i]!, writePhysicalOffset);
      if (!appended) {
        refusedAt = i;
        void acked.then((r) => this.logger.debug({ code: r.code }, 'DLedger commit log: the node refused an append'));
        break;
      }
      offsets.push(appended.pos + DLEDGER_ENTRY_HEADER_BYTES);
      if (prepared[i]!.queued) queuedAppended++;
      lastAck = acked;
      endPos = appended.pos + appended.size;
    }
    // 5.3.3 increaseOffset after the local append: the offsets of entries the node holds are taken, whatever comes.
    counter.nextQueueOffset = base + queuedAppended;
    if (offsets.length > 0) this.stats.writeCalls++;
    if (refusedAt >= 0) {
      if (offsets.length > 0) {
        // Only part of a batch went in (the node refused a later entry): those entries will commit and be delivered.
        this.logger.warn({ appended: offsets.length, of: prepared.length, topic: prepared[0]!.msg.topic },
          'DLedger commit log: the node refused part of a batch; the producer is told the batch failed');
      }
      return Promise.resolve(refused(REFUSED_BEFORE_APPEND));
    }
    const result: PutResult = {
      status: 'PUT_OK', commitLogOffset: offsets[0]!, commitLogOffsets: offsets, queueOffset: prepared[0]!.queued ? base : 0,
      wroteBytes: totalBytes, storeTimestamp, messageCount: prepared.length,
    };
    this.pendingAckBytes += totalBytes;
    const done = lastAck!.then(
      (ack) => this.answer(result, ack.code, endPos),
      (err: unknown) => {
        this.logger.error({ err }, 'DLedger commit log: the append wait failed');
        return { ...result, status: 'UNKNOWN_ERROR' as PutStatus };
      },
    ).finally(() => {
      this.pendingAckBytes -= totalBytes;
      this.inFlight.delete(done);
    });
    this.inFlight.add(done);
    return done;
  }

  /** The quorum's answer for a put; a success waits until the reput dispatched the entries. */
  private answer(result: PutResult, code: number, endPos: number): PutResult | Promise<PutResult> {
    const status = putStatusOfAck(code, this.semantics);
    if (status !== 'PUT_OK') return { ...result, status };
    return this.reput.whenDispatched(endPos, result);
  }

  /** Resolves when every put so far has its answer. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  setReplicaWait(): void {
    // The quorum is the replica stage of DLedger mode; the HA service is not used.
  }

  /** The broker's master switch (role handler): appends are taken only while set, and only on the leader. */
  setMasterReady(ready: boolean): void {
    this.masterReady = ready;
  }

  /**
   * The LEADER wait (DLedgerRoleChangeHandler): true once every entry of this leader's log is committed and
   * dispatched (or the log is empty), false as soon as the node is no longer leader.
   */
  waitLeaderCaughtUp(): Promise<boolean> {
    return this.reput.waitCaughtUp(() => this.node.role === 'LEADER' && !this.closing && !this.waitsCancelled);
  }

  /** Ends every leader-ready wait with false (the broker is shutting down). */
  cancelLeaderWaits(): void {
    this.waitsCancelled = true;
    this.reput.notifyProgress();
  }

  /** Bytes committed but not yet dispatched (Java dispatchBehindBytes). */
  get dispatchBehindBytes(): number {
    return this.reput.behindBytes;
  }

  // ---------------------------------------------------------------- replication (classic HA is not used)

  get appendOffset(): number {
    return this.store.writePos;
  }

  onWrittenOffset(listener: (writtenOffset: number) => void): void {
    this.reput.onDispatched(listener);
  }

  async readForReplica(): Promise<Buffer | null> {
    return null;
  }

  appendReplicated(): ReplicaAppendRefusal | undefined {
    return { refused: 'DLedger mode: the log is replicated by its Raft group, not by the HA port' };
  }

  async settleReplicatedTail(): Promise<void> {
    // Nothing to settle: the Raft layer truncates divergent tails itself.
  }

  // ---------------------------------------------------------------- offsets

  get minOffset(): number {
    return this.classicInUse && this.classic.files.length > 0 ? this.classic.minOffset : this.store.minOffset;
  }

  /** The committed position (Java DLedgerCommitLog.getMaxOffset / getConfirmOffset): end of the last committed entry. */
  get writtenOffset(): number {
    return this.store.committedPos;
  }

  /** The DLedger store flushes its own files every 10 ms; what is committed counts as flushed here. */
  get flushedOffset(): number {
    return this.store.committedPos;
  }

  get flushedStoreTimestamp(): number {
    return this.reput.lastStoreTimestamp || this.classic.flushedStoreTimestamp;
  }

  get unflushedBytes(): number {
    return 0;
  }

  async flush(): Promise<void> {
    // the DLedger store's own flush thread (FlushDataService) does this
  }

  // ---------------------------------------------------------------- read

  readCached(): Buffer | undefined {
    return undefined;
  }

  /** Committed bytes [offset, offset + size): the classic log below dividedOffset, the DLedger data above. */
  async read(offset: number, size: number, likelyCached = false): Promise<Buffer | null> {
    if (size <= 0) return null;
    if (this.classicInUse && offset < this.dividedOffset) return this.classic.read(offset, size, likelyCached);
    if (offset < this.store.minOffset || offset + size > this.store.committedPos) return null;
    try {
      return this.store.readData(offset, size);
    } catch (err) {
      this.logger.warn({ err, offset, size }, 'DLedger commit log: read failed');
      return null;
    }
  }

  isInMemory(offset: number, memoryBudgetBytes: number): boolean {
    return this.store.committedPos - offset <= memoryBudgetBytes;
  }

  // ---------------------------------------------------------------- retention

  /** The classic files while any remain (they go first), then the DLedger data files. */
  get files(): readonly CommitLogFile[] {
    const dledger = this.store.dataFiles.map((f): CommitLogFile => ({
      filePath: f.filePath, fromOffset: f.fromOffset, endOffset: f.endOffset,
      // the store has let go of it in dropOldestDataFile; the file itself goes here if it is still there
      destroyWhenIdle: () => fs.promises.rm(f.filePath, { force: true }),
    }));
    return this.classicInUse ? [...this.classic.files, ...dledger] : dledger;
  }

  dropOldestFile(file: CommitLogFile): boolean {
    if (this.classicInUse && this.classic.files.length > 0) {
      if (!this.classic.dropOldestFile(file)) return false;
      if (this.classic.files.length === 0) {
        this.classicInUse = false;
        this.logger.info('DLedger commit log: the last classic commit-log file is gone');
      }
      return true;
    }
    return this.store.dropOldestDataFile(file.filePath);
  }

  /** Stops the node (which fails the waits in flight and closes the store), then closes the classic files. */
  async close(): Promise<void> {
    this.closing = true;
    this.reput.stop();
    if (this.started) await this.node.stop();
    else this.store.close();
    await this.drain();
    await this.classic.close();
  }
}
