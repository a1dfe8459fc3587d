// The local commit log (CommitLogPort): one append-only sequence of records over fixed-size segment files.
// Offsets are assigned synchronously at append time (the event loop is the putMessageLock); bytes are encoded
// into the tail cache and written by a single writer loop that takes everything appended since its last
// write as one batch (group commit) and runs it through the stages write → flush (SYNC_FLUSH: one fdatasync)
// → dispatch (the batch's records to the consume queues and index) → resolve (the waiting puts).
import type { Logger } from 'pino';
import type { PutResult, PutStatus } from '../types.js';
import { indexKeysOf } from '../record-properties.js';
import { parseDelayLevels, type StoreConfig } from '../config.js';
import {
  BLANK_MAGIC_CODE, END_FILE_MIN_BLANK_LENGTH, writeRecord, type DecodedRecord, type RecordPlacement,
} from '../record.js';
import { fs, fdatasync, writevAll, writevAllSync } from '../io.js';
import { Segment } from '../segment.js';
import { TailCache, TailPins } from './tail-cache.js';
import { BlockPins, ReadBlocks } from './read-blocks.js';
import {
  abnormalWindowStart, loadSegmentsSync, recoverLog, recoveryWindowStart, truncateSegmentsSync,
} from './recovery.js';
import type {
  CommitLogDeps, CommitLogFactory, CommitLogFile, CommitLogPort, CommitLogStats, PreparedMessage, QueueOffsetCounter,
  ReadPins, ReplicaAppendRefusal, ReplicaWait, WrittenRecord,
} from './port.js';
import {
  type Batch, type Waiter, type WriteOp, batchDispatched, newBatch, stageReported, stageStarted,
} from './batch.js';
import { type ReplicaScanState, scanReplicated } from './replica-scan.js';

export { mergePutStatus } from './batch.js';

/** Batches up to this size are written synchronously on the event loop (see writeOps). */
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

const NO_BYTES = Buffer.alloc(0);
/** readForReplica: data this close to the written end is read on the event loop (it is in the page cache). */
const REPLICA_READ_ON_LOOP_BYTES = 256 * 1024 * 1024;

/** The pins of one reader's views: of tail-cache chunks and of blocks (each reused only once no view is in use). */
class LogPins implements ReadPins {
  private blockPins: BlockPins | undefined;
  private released = false;

  constructor(
    readonly tail: TailPins,
    private readonly blocks: ReadBlocks,
  ) {}

  /** Pins for views of blocks (made on the first such view: most pulls read the tail only). */
  get forBlocks(): BlockPins {
    if (!this.blockPins) {
      this.blockPins = this.blocks.newPins();
      if (this.released) this.blockPins.release(); // a view taken after the release: its block is never reused
    }
    return this.blockPins;
  }

  release(): void {
    this.released = true;
    this.tail.release();
    this.blockPins?.release();
  }
}

/** The default factory: the local segment-file log. */
export const localCommitLog: CommitLogFactory = (deps) => new CommitLog(deps);

export class CommitLog implements CommitLogPort {
  private segments: Segment[] = [];
  /** Next offset to assign. */
  writeOffset = 0;
  /** Every byte below this has been written (write syscall done); readers may read below it. */
  writtenOffset = 0;
  /** Every byte below this has been fdatasync'ed. */
  flushedOffset = 0;
  /** Store timestamp of the newest record written / flushed (checkpoint physicMsgTimestamp). */
  writtenStoreTimestamp = 0;
  flushedStoreTimestamp = 0;
  readonly stats: CommitLogStats = { writeCalls: 0, fsyncCalls: 0, tailChunksReused: 0, readBlocksReused: 0 };
  /** Set when a write failed: the log cannot continue without a hole, so appends stop. */
  failure: Error | null = null;

  private readonly config: StoreConfig;
  private readonly logger: Logger;
  private readonly onWritten: CommitLogDeps['onWritten'];
  private readonly onNoSpace: CommitLogDeps['onNoSpace'];
  private readonly reader: CommitLogDeps['reader'];
  /** Whole blocks read for dense pulls beyond the tail cache (see read-blocks.ts). */
  private readonly blocks = new ReadBlocks();
  /** Block reads under way, by start offset (see loadBlock). */
  private readonly blockLoads = new Map<number, { end: number; done: Promise<void> }>();
  private readonly cache: TailCache;
  private readonly segmentSize: number;
  private ops: WriteOp[] = [];
  private waiters: Waiter[] = [];
  /** How many of `waiters` wait for the flush and replica stages (WAIT=true). */
  private waiting = 0;
  private entries: WrittenRecord[] = [];
  private pendingBytes = 0;
  private pendingStoreTimestamp = 0;
  private scheduled = false;
  private writing = false;
  private idleWaiters: Array<() => void> = [];
  private dirtySegments = new Set<Segment>();
  private flushing: Promise<void> | null = null;
  private readonly runBatchesBound = (): void => void this.runBatches();
  private replicaWait: ReplicaWait | null = null;
  private readonly writtenListeners: Array<(writtenOffset: number) => void> = [];
  /** Where a slave's scan of replicated bytes stands (replica-scan.ts). */
  private replicaScan: ReplicaScanState = { recordStart: 0, carry: null };
  private readonly delayLevelsMs: readonly number[];

  constructor(deps: CommitLogDeps) {
    this.config = deps.config;
    this.logger = deps.logger;
    this.onWritten = deps.onWritten;
    this.onNoSpace = deps.onNoSpace;
    this.reader = deps.reader;
    this.segmentSize = deps.config.mappedFileSizeCommitLog;
    this.cache = new TailCache(deps.config.commitLogTailCacheBytes);
    this.delayLevelsMs = parseDelayLevels(deps.config.messageDelayLevel);
  }

  get minOffset(): number {
    return this.segments[0]?.fromOffset ?? 0;
  }

  /** The segment files, oldest first; the last holds the newest byte or is the preallocated next one. */
  get files(): readonly CommitLogFile[] {
    return this.segments;
  }

  /** Takes the oldest segment out of the log if it is still `file`: readers find segments by offset from the first. */
  dropOldestFile(file: CommitLogFile): boolean {
    if (this.segments[0] !== file) return false;
    this.segments.shift();
    return true;
  }

  // ---------------------------------------------------------------- start-up

  loadSync(): void {
    this.segments = loadSegmentsSync(this.config.storePathCommitLog, this.segmentSize);
  }

  /**
   * Where validation starts: after a clean stop, the last `recoverScanFileNum` files holding data; after an
   * abnormal stop, only the newest file stored before the checkpoint's min timestamp (Java recoverAbnormally):
   * everything older was fsynced before the checkpoint was written.
   */
  recoveryWindowStart(abnormalMinTimestamp?: number): number {
    if (abnormalMinTimestamp !== undefined) return abnormalWindowStart(this.segments, abnormalMinTimestamp);
    return recoveryWindowStart(this.segments, this.config.recoverScanFileNum);
  }

  /**
   * Recovers the log (see recoverLog), hands every record from `scanStart` on to `onRecord` (re-dispatch),
   * truncates the torn tail and positions the writer at the end, which it returns.
   */
  async recover(
    scanStart: number,
    windowStart: number,
    onRecord: (record: DecodedRecord, offset: number) => void,
    pause: () => Promise<void>,
  ): Promise<number> {
    const { processOffset, lastStoreTimestamp } = await recoverLog(this.segments, {
      scanStart, windowStart, checkCrc: this.config.checkCRCOnRecover, logger: this.logger, onRecord, pause,
    });
    this.segments = truncateSegmentsSync(this.segments, processOffset, this.logger);
    this.writeOffset = this.writtenOffset = this.flushedOffset = processOffset;
    this.writtenStoreTimestamp = this.flushedStoreTimestamp = lastStoreTimestamp;
    this.replicaScan = { recordStart: processOffset, carry: null };
    return processOffset;
  }

  // ---------------------------------------------------------------- append

  /** Whether `bytes` more can be appended now without exceeding the pending-write bound. */
  canAccept(bytes: number): boolean {
    return this.pendingBytes === 0 || this.pendingBytes + bytes <= this.config.maxPendingWriteBytes;
  }

  /**
   * Appends consecutive records (one segment; a BLANK fills the old one if they don't fit). Offsets and queue
   * offsets are assigned before this returns; the promise settles once the bytes are written.
   */
  append(prepared: PreparedMessage[], totalBytes: number, counter: QueueOffsetCounter): Promise<PutResult> {
    let seg = this.currentSegment();
    let filePos = this.writeOffset - seg.fromOffset;
    if (totalBytes + END_FILE_MIN_BLANK_LENGTH > seg.sizeBytes - filePos) {
      const blank = Buffer.alloc(END_FILE_MIN_BLANK_LENGTH);
      blank.writeInt32BE(seg.sizeBytes - filePos, 0);
      blank.writeUInt32BE(BLANK_MAGIC_CODE, 4);
      this.addOp(seg, filePos, blank);
      this.writeOffset = seg.endOffset;
      seg = this.currentSegment();
      filePos = 0;
    }
    const storeTimestamp = Date.now();
    const firstOffset = this.writeOffset;
    const { buf, pos } = this.cache.reserve(firstOffset, totalBytes);
    const offsets: number[] = new Array(prepared.length);
    // Queue offsets are taken from the counter only once every record is encoded: a record that fails to encode
    // leaves no hole in its queue (and no bytes in the cache, no entry to dispatch).
    const baseQueueOffset = counter.nextQueueOffset;
    const entriesBefore = this.entries.length;
    let queuedCount = 0;
    let p = pos;
    try {
      for (let i = 0; i < prepared.length; i++) {
        const m = prepared[i]!;
        const queueOffset = m.queued ? baseQueueOffset + queuedCount++ : 0;
        const commitLogOffset = firstOffset + (p - pos);
        const placement: RecordPlacement = {
          totalSize: m.totalSize, sysFlag: m.sysFlag, bodyCrc: m.bodyCrc, queueOffset, commitLogOffset,
          storeTimestamp, topicBytes: m.topicBytes, propertiesLength: m.propertiesLength,
        };
        writeRecord(buf, p, m.msg, placement);
        offsets[i] = commitLogOffset;
        // Every record goes to dispatch: queued ones to their consume queue, all of them to the index.
        const ik = indexKeysOf(m.msg);
        this.entries.push({
          topic: m.msg.topic, queueId: m.msg.queueId, queueOffset, commitLogOffset,
          sizeBytes: m.totalSize, tagsCode: m.msg.tagsCode, storeTimestamp,
          queued: m.queued, sysFlag: m.sysFlag, keys: ik.keys, uniqKey: ik.uniqKey,
          propertiesString: m.msg.propertiesString,
        });
        p += m.totalSize;
      }
    } catch (err) {
      this.entries.length = entriesBefore;
      this.cache.truncate(firstOffset);
      this.blocks.dropFrom(firstOffset);
      this.logger.error({ err, topic: prepared[0]?.msg.topic }, 'commit log: a record could not be encoded; refused');
      return Promise.resolve({
        status: 'UNKNOWN_ERROR', commitLogOffset: -1, commitLogOffsets: [], queueOffset: -1, wroteBytes: 0,
        storeTimestamp: 0, messageCount: 0, remark: 'the message could not be encoded into a commit-log record',
      });
    }
    counter.nextQueueOffset = baseQueueOffset + queuedCount;
    const firstQueueOffset = prepared[0]!.queued ? baseQueueOffset : 0;
    this.addOp(seg, filePos, buf.subarray(pos, pos + totalBytes));
    this.writeOffset += totalBytes;
    this.pendingBytes += totalBytes;
    this.pendingStoreTimestamp = storeTimestamp;
    const result: PutResult = {
      status: 'PUT_OK', commitLogOffset: firstOffset, commitLogOffsets: offsets, queueOffset: firstQueueOffset,
      wroteBytes: totalBytes, storeTimestamp, messageCount: prepared.length,
    };
    const waits = prepared[0]!.msg.waitStoreMsgOK !== false;
    if (waits) this.waiting++;
    const promise = new Promise<PutResult>((resolve) => this.waiters.push({ resolve, result, waits }));
    this.scheduleWriter();
    return promise;
  }

  private scheduleWriter(): void {
    if (!this.scheduled && !this.writing) {
      this.scheduled = true;
      setImmediate(this.runBatchesBound);
    }
  }

  /** The segment containing writeOffset, created (and the one after it preallocated) when needed. */
  private currentSegment(): Segment {
    const seg = this.segmentFor(this.writeOffset) ?? this.createSegment(this.writeOffset);
    // Preallocate the next file while this one fills (Java's AllocateMappedFileService).
    if (seg === this.segments[this.segments.length - 1]) this.createSegment(seg.endOffset);
    return seg;
  }

  private createSegment(fromOffset: number): Segment {
    const last = this.segments[this.segments.length - 1];
    if (last && fromOffset < last.endOffset) return this.segmentFor(fromOffset)!;
    const seg = Segment.create(this.config.storePathCommitLog, fromOffset, this.segmentSize);
    this.segments.push(seg);
    return seg;
  }

  private segmentFor(offset: number): Segment | undefined {
    const first = this.segments[0];
    if (!first || offset < first.fromOffset) return undefined;
    return this.segments[Math.floor((offset - first.fromOffset) / this.segmentSize)];
  }

  private addOp(seg: Segment, filePos: number, buf: Buffer): void {
    const last = this.ops[this.ops.length - 1];
    // Consecutive slices of one chunk merge into one iovec.
    if (
      last && last.seg === seg && last.filePos + last.buf.length === filePos &&
      last.buf.buffer === buf.buffer && last.buf.byteOffset + last.buf.length === buf.byteOffset
    ) {
      last.buf = Buffer.from(buf.buffer, last.buf.byteOffset, last.buf.length + buf.length);
      return;
    }
    this.ops.push({ seg, filePos, buf });
  }

  // ---------------------------------------------------------------- writer

  /**
   * The writer: one group commit at a time through write → replicate → flush → dispatch. The flush (SYNC_FLUSH)
   * holds the writer until its fdatasync is done; the replica stage (SYNC_MASTER) does not: later batches are
   * written and shipped while earlier ones wait for their acks. Each waiting stage reports its status to the batch,
   * whose puts are answered once every stage reported and the records are dispatched (batch.ts). An ASYNC_FLUSH
   * batch with no replica stage never yields between its write and its answers.
   */
  private async runBatches(): Promise<void> {
    this.scheduled = false;
    this.writing = true;
    try {
      while (this.ops.length > 0) {
        const batch = this.takeBatch();
        if (!(await this.writeStage(batch))) continue;
        for (const l of this.writtenListeners) l(this.writtenOffset);
        this.replicaStage(batch);
        const flushing = this.flushStage(batch);
        if (flushing) await flushing;
        this.dispatchStage(batch);
        batchDispatched(batch);
      }
    } finally {
      this.writing = false;
      const idle = this.idleWaiters;
      this.idleWaiters = [];
      for (const f of idle) f();
    }
  }

  /** Everything appended since the last turn becomes one batch; appends from now on gather the next one. */
  private takeBatch(): Batch {
    const batch = newBatch(
      this.ops, this.waiters, this.entries, this.writeOffset, this.pendingBytes, this.pendingStoreTimestamp, this.waiting,
    );
    this.ops = [];
    this.waiters = [];
    this.entries = [];
    this.waiting = 0;
    return batch;
  }

  /**
   * Writes the batch and moves writtenOffset past it. False when the write failed: its puts (and, on a full
   * disk, the ones queued behind it) are answered, and the batch goes no further.
   */
  private async writeStage(batch: Batch): Promise<boolean> {
    try {
      if (this.failure) throw this.failure;
      await this.writeOps(batch.ops);
    } catch (err) {
      this.pendingBytes -= batch.bytes;
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC' && !this.failure) {
        this.rewindNoSpace(err as Error, batch.ops, batch.waiters);
      } else {
        this.fail(err as Error, batch.waiters);
      }
      return false;
    }
    this.pendingBytes -= batch.bytes;
    this.writtenOffset = batch.endOffset;
    this.writtenStoreTimestamp = batch.storeTimestamp;
    this.cache.evict(batch.endOffset);
    this.stats.tailChunksReused = this.cache.reusedChunks;
    return true;
  }

  private async writeOps(ops: WriteOp[]): Promise<void> {
    let i = 0;
    while (i < ops.length) {
      const seg = ops[i]!.seg;
      const start = ops[i]!.filePos;
      const bufs: Buffer[] = [];
      let end = start;
      // One writev per run of contiguous slices in one segment.
      while (i < ops.length && ops[i]!.seg === seg && ops[i]!.filePos === end) {
        bufs.push(ops[i]!.buf);
        end += ops[i]!.buf.length;
        i++;
      }
      if (seg.fd < 0) await seg.ready;
      if (seg.fd < 0) throw new Error(`commit log file ${seg.filePath} is closed`);
      // A small batch is copied into the page cache right here (as Java copies into its mapped file): that costs
      // less than the thread-pool round trip of an async write. Large batches go to the pool so the event loop
      // never stalls for long.
      if (end - start <= SYNC_WRITE_MAX_BYTES) writevAllSync(seg.fd, bufs, start);
      else await writevAll(seg.fd, bufs, start);
      this.stats.writeCalls++;
      this.dirtySegments.add(seg);
    }
  }

  /**
   * SYNC_FLUSH (GroupCommitService): one fdatasync for the whole batch; null under ASYNC_FLUSH. The stage reports
   * FLUSH_DISK_TIMEOUT when the fdatasync fails or takes longer than syncFlushTimeout (the puts may then be answered
   * before it completes); the batch is dispatched after the fdatasync either way.
   */
  private flushStage(batch: Batch): Promise<void> | null {
    if (this.config.flushDiskType !== 'SYNC_FLUSH') return null;
    stageStarted(batch);
    let reported = false;
    const report = (status: 'PUT_OK' | 'FLUSH_DISK_TIMEOUT'): void => {
      if (reported) return;
      reported = true;
      stageReported(batch, 'flush', status);
    };
    const timer = setTimeout(report, this.config.syncFlushTimeout, 'FLUSH_DISK_TIMEOUT');
    return this.flush().then(
      () => {
        clearTimeout(timer);
        report('PUT_OK');
      },
      (err: unknown) => {
        clearTimeout(timer);
        this.logger.error({ err }, 'commit log: fdatasync failed');
        report('FLUSH_DISK_TIMEOUT');
      },
    );
  }

  /**
   * SYNC_MASTER (GroupTransferService): the puts that wait get their answer once a slave acknowledged the batch's
   * end (or the wait timed out). Not awaited: the writer goes on.
   */
  private replicaStage(batch: Batch): void {
    const wait = this.replicaWait;
    if (!wait || batch.waiting === 0) return;
    const outcome = wait(batch.endOffset);
    if (typeof outcome === 'string') {
      if (outcome !== 'PUT_OK') batch.replicaStatus = outcome;
      return;
    }
    stageStarted(batch);
    outcome.then(
      (status) => stageReported(batch, 'replica', status),
      (err: unknown) => {
        this.logger.error({ err }, 'commit log: replica wait failed');
        stageReported(batch, 'replica', 'FLUSH_SLAVE_TIMEOUT');
      },
    );
  }

  /** Hands the batch's records to the consume queues and the index (they become visible to pulls). */
  private dispatchStage(batch: Batch): void {
    if (batch.entries.length === 0) return;
    try {
      this.onWritten(batch.entries);
    } catch (err) {
      this.logger.error({ err }, 'commit log: dispatch failed');
    }
  }

  private fail(err: Error, waiters: Waiter[]): void {
    if (!this.failure) {
      this.failure = err;
      this.logger.error({ err }, 'commit log: write failed; the store stops accepting messages');
    }
    const status: PutStatus = /ENOENT|EACCES|EMFILE|ENOSPC/.test(String((err as NodeJS.ErrnoException).code))
      ? 'CREATE_MAPPED_FILE_FAILED'
      : 'UNKNOWN_ERROR';
    // The code only: an fs message can name a file of the store, which a remark must not show.
    const remark = `commit log write failed (${(err as NodeJS.ErrnoException).code ?? 'error'}); the store accepts no more messages`;
    for (const w of waiters) w.resolve({ ...w.result, status, remark });
  }

  /**
   * The disk is full (ENOSPC): nothing from `writtenOffset` on was acknowledged, so the log goes back there
   * instead of stopping for good. Every put of this batch and of those queued behind it is answered
   * SERVICE_NOT_AVAILABLE; bytes that did reach the file are zeroed (page by page, best effort: a page that
   * cannot be written was never allocated and reads as zeros) so recovery never mistakes them for records; the
   * owner hands the queue offsets back (onNoSpace). (A store writing through sparse mapped files gets SIGBUS here.)
   */
  private rewindNoSpace(err: Error, ops: WriteOp[], waiters: Waiter[]): void {
    const all = [...waiters, ...this.waiters];
    this.ops = [];
    this.waiters = [];
    this.waiting = 0;
    this.entries = [];
    this.pendingBytes = 0;
    this.writeOffset = this.writtenOffset;
    this.cache.truncate(this.writtenOffset);
    this.blocks.dropFrom(this.writtenOffset);
    const zeros = Buffer.alloc(4096);
    for (const op of ops) {
      if (op.seg.fd < 0) continue;
      for (let at = 0; at < op.buf.length; at += zeros.length) {
        const n = Math.min(zeros.length, op.buf.length - at);
        try {
          fs.writeSync(op.seg.fd, zeros, 0, n, op.filePos + at);
        } catch {
          // not allocated: nothing to clear
        }
      }
    }
    this.logger.error({ err: err.message, offset: this.writtenOffset, refused: all.length },
      'commit log: disk full, the unwritten puts are refused and the log rewound to its written end');
    this.onNoSpace();
    for (const w of all) w.resolve({ ...w.result, status: 'SERVICE_NOT_AVAILABLE', remark: 'the broker\'s disk is full (ENOSPC)' });
  }

  /** Resolves when every append so far has been written (or failed). */
  drain(): Promise<void> {
    if (!this.writing && !this.scheduled && this.ops.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  setReplicaWait(wait: ReplicaWait | null): void {
    this.replicaWait = wait;
  }

  // ---------------------------------------------------------------- replication

  get appendOffset(): number {
    return this.writeOffset;
  }

  onWrittenOffset(listener: (writtenOffset: number) => void): void {
    this.writtenListeners.push(listener);
  }

  /** Written bytes from `offset`, at most maxBytes, inside the file holding `offset` (CommitLog.getData). */
  async readForReplica(offset: number, maxBytes: number): Promise<Buffer | null> {
    if (offset === this.writtenOffset) return NO_BYTES;
    if (offset < this.minOffset || offset > this.writtenOffset || maxBytes <= 0) return null;
    const seg = this.segmentFor(offset);
    if (!seg) return null;
    const end = Math.min(this.writtenOffset, seg.endOffset, offset + maxBytes);
    // A slave catching up reads old data: off the event loop unless it is recent enough to be in the page cache.
    return this.read(offset, end - offset, this.writtenOffset - offset <= REPLICA_READ_ON_LOOP_BYTES);
  }

  /**
   * A slave's append (CommitLog.appendData; the offset and record checks are ours: Java appends whatever arrives).
   * The bytes are copied into the tail cache and written by the writer like any append; the records completed by
   * them are dispatched once written.
   */
  appendReplicated(offset: number, bytes: Buffer | readonly Buffer[]): ReplicaAppendRefusal | undefined {
    if (this.failure) return { refused: `the commit log stopped after a write failure: ${this.failure.message}` };
    const parts = Array.isArray(bytes) ? bytes : [bytes as Buffer];
    let total = 0;
    for (const p of parts) total += p.length;
    const size = this.segmentSize;
    if (this.writeOffset === 0 && offset !== 0) {
      // An empty slave takes the offset its master starts it at (the start of the master's last file).
      if (offset % size !== 0) {
        return { refused: `an empty log starts at a file start; ${offset} is not a multiple of mappedFileSizeCommitLog=${size}` };
      }
      this.restartEmptyAt(offset);
    } else if (offset !== this.writeOffset) {
      return { refused: `frame at offset ${offset}, but this log ends at ${this.writeOffset}` };
    }
    const fileEnd = offset - (offset % size) + size;
    if (offset + total > fileEnd) {
      return {
        refused: `frame [${offset}, ${offset + total}) crosses this log's file end ${fileEnd}: ` +
          `is mappedFileSizeCommitLog (${size}) the master's?`,
      };
    }
    // Every part scanned before anything is appended: a frame is taken or refused whole.
    let state = this.replicaScan;
    let lastStoreTimestamp = 0;
    const entries: WrittenRecord[] = [];
    for (let i = 0, at = offset; i < parts.length; at += parts[i]!.length, i++) {
      const scan = scanReplicated(state, at, parts[i]!, size, this.delayLevelsMs);
      if (!scan.ok) return { refused: scan.reason };
      for (const e of scan.entries) entries.push(e);
      state = scan.state;
      if (scan.lastStoreTimestamp > 0) lastStoreTimestamp = scan.lastStoreTimestamp;
    }
    if (total === 0) return undefined;
    const seg = this.currentSegment();
    const { buf, pos } = this.cache.reserve(offset, total);
    let end = pos;
    for (const p of parts) end += p.copy(buf, end);
    this.addOp(seg, offset - seg.fromOffset, buf.subarray(pos, end));
    for (const e of entries) this.entries.push(e);
    this.replicaScan = state;
    this.writeOffset += total;
    this.pendingBytes += total;
    if (lastStoreTimestamp > 0) this.pendingStoreTimestamp = lastStoreTimestamp;
    this.scheduleWriter();
    return undefined;
  }

  async settleReplicatedTail(): Promise<void> {
    await this.drain();
    const { recordStart } = this.replicaScan;
    if (recordStart > this.writeOffset) {
      // Padding after a BLANK: the rest of the file is zeros already.
      this.writeOffset = this.writtenOffset = recordStart;
    } else if (recordStart < this.writeOffset) {
      const seg = this.segmentFor(recordStart);
      const cut = this.writeOffset - recordStart;
      this.logger.warn({ offset: recordStart, bytes: cut }, 'commit log: dropping a replicated record received in part');
      if (seg && seg.fd >= 0) fs.writeSync(seg.fd, Buffer.alloc(cut), 0, cut, recordStart - seg.fromOffset);
      this.cache.truncate(recordStart);
      this.blocks.dropFrom(recordStart);
      this.writeOffset = this.writtenOffset = recordStart;
      if (this.flushedOffset > recordStart) this.flushedOffset = recordStart;
    }
    this.replicaScan = { recordStart: this.writeOffset, carry: null };
  }

  /** An empty log (nothing ever written) moves to start at `offset`; its empty files go. */
  private restartEmptyAt(offset: number): void {
    for (const seg of this.segments) {
      seg.destroy().catch((err: unknown) => this.logger.warn({ err, file: seg.filePath }, 'commit log: removing an empty file failed'));
    }
    this.segments = [];
    this.cache.clear();
    this.blocks.clear();
    this.writeOffset = this.writtenOffset = this.flushedOffset = offset;
    this.replicaScan = { recordStart: offset, carry: null };
    this.logger.info({ offset }, 'commit log: empty log starts where the master starts it');
  }

  // ---------------------------------------------------------------- flush

  /** fdatasync of every segment written since the last flush; concurrent callers share one pass. */
  flush(): Promise<void> {
    if (this.flushing) {
      // A pass already running may have started before the latest writes: chain one more.
      return this.flushing.then(() => this.flush());
    }
    const p = this.flushOnce().finally(() => {
      this.flushing = null;
    });
    this.flushing = p;
    return p;
  }

  private async flushOnce(): Promise<void> {
    const target = this.writtenOffset;
    const ts = this.writtenStoreTimestamp;
    if (target <= this.flushedOffset && this.dirtySegments.size === 0) return;
    const segs = [...this.dirtySegments];
    this.dirtySegments.clear();
    try {
      await Promise.all(segs.map((s) => s.withFd(fdatasync)));
    } catch (err) {
      for (const s of segs) this.dirtySegments.add(s);
      throw err;
    }
    this.stats.fsyncCalls++;
    if (target > this.flushedOffset) this.flushedOffset = target;
    this.flushedStoreTimestamp = ts;
  }

  /** Bytes written but not yet flushed. */
  get unflushedBytes(): number {
    return this.writtenOffset - this.flushedOffset;
  }

  // ---------------------------------------------------------------- read

  /** Zero-copy view of a written record range when it is still in the tail cache (see CommitLogPort.readCached). */
  readCached(offset: number, size: number, pins?: ReadPins): Buffer | undefined {
    if (offset + size > this.writtenOffset) return undefined;
    return pins instanceof LogPins ? this.cache.readPinned(offset, size, pins.tail) : this.cache.read(offset, size);
  }

  newReadPins(): ReadPins {
    return new LogPins(this.cache.newPins(), this.blocks);
  }

  /**
   * Reads [offset, offset+size) of written data from cache or disk; null if not available. `likelyCached`: the
   * caller expects the bytes in the page cache (recent data), so the read may run on the event loop.
   */
  async read(offset: number, size: number, likelyCached = false): Promise<Buffer | null> {
    if (size <= 0 || offset < this.minOffset || offset + size > this.writtenOffset) return null;
    const cached = this.cache.read(offset, size);
    if (cached) return cached;
    const seg = this.segmentFor(offset);
    if (!seg || offset + size > seg.endOffset || seg.fd < 0) return null;
    const buf = Buffer.allocUnsafe(size);
    try {
      const n = await seg.withFd((fd) => this.reader.read(fd, buf, 0, size, offset - seg.fromOffset, likelyCached));
      return n === size ? buf : null;
    } catch (err) {
      this.logger.warn({ err, offset, size }, 'commit log: read failed');
      return null;
    }
  }

  /**
   * A view of [offset, offset+size) from a block read earlier (see loadBlock), or undefined. With `pins` (from
   * newReadPins) the block's buffer may be read into again once they are released; without, it never is.
   */
  readBlockCached(offset: number, size: number, pins?: ReadPins): Buffer | undefined {
    const b = this.blockHolding(offset, size, pins);
    return b?.buf.subarray(offset - b.start, offset - b.start + size);
  }

  blockHolding(offset: number, size: number, pins?: ReadPins): { readonly start: number; readonly buf: Buffer } | undefined {
    if (offset < this.minOffset || offset + size > this.writtenOffset) return undefined;
    return this.blocks.holding(offset, size, pins instanceof LogPins ? pins.forBlocks : undefined);
  }

  wantBlock(offset: number, bytes: number): boolean {
    return this.blocks.want(offset, bytes);
  }

  /**
   * Reads the block of the log holding `offset` (READ_BLOCK_BYTES aligned, clipped to its segment and the written
   * end) and keeps it for readBlockCached. `likelyCached` as for read().
   */
  loadBlock(offset: number, likelyCached: boolean): Promise<void> {
    const seg = this.segmentFor(offset);
    if (!seg || seg.fd < 0 || offset < this.minOffset) return Promise.resolve();
    const size = this.blocks.blockBytes;
    const start = Math.max(seg.fromOffset, Math.floor(offset / size) * size, this.minOffset);
    const end = Math.min(Math.floor(offset / size) * size + size, seg.endOffset, this.writtenOffset);
    if (end <= start) return Promise.resolve();
    // The pulls of the queues written side by side want the same block at about the same time: one read serves
    // them all (a pull that finds the block still short of its record reads that record on its own).
    const inFlight = this.blockLoads.get(start);
    if (inFlight && inFlight.end >= end) return inFlight.done;
    const done = this.readBlock(seg, start, end, likelyCached).finally(() => {
      if (this.blockLoads.get(start)?.done === done) this.blockLoads.delete(start);
    });
    this.blockLoads.set(start, { end, done });
    return done;
  }

  private async readBlock(seg: Segment, start: number, end: number, likelyCached: boolean): Promise<void> {
    // A buffer of an earlier block no view uses any more, or a fresh one (see read-blocks.ts).
    const mem = this.blocks.allocate(end - start);
    this.stats.readBlocksReused = this.blocks.reusedBuffers;
    const generation = this.blocks.generation;
    try {
      const n = await seg.withFd((fd) => this.reader.read(fd, mem, 0, end - start, start - seg.fromOffset, likelyCached));
      // Cut back meanwhile (a replica truncation): what was read may be gone.
      if (n === end - start && generation === this.blocks.generation) this.blocks.put(start, mem.subarray(0, n), mem);
      else this.blocks.giveBack(mem);
    } catch (err) {
      // (not given back: a failed read is rare, and nothing here says the read is no longer under way)
      this.logger.warn({ err, offset: start, size: end - start }, 'commit log: block read failed');
    }
  }

  /** Whether the offset is old enough that Java would no longer count it as "in memory". */
  isInMemory(offset: number, memoryBudgetBytes: number): boolean {
    return this.writtenOffset - offset <= memoryBudgetBytes;
  }

  async close(): Promise<void> {
    await this.drain();
    await this.flush().catch((err) => this.logger.error({ err }, 'commit log: final flush failed'));
    for (const seg of this.segments) await seg.close().catch(() => {});
    this.cache.clear();
    this.blocks.clear();
  }
}
