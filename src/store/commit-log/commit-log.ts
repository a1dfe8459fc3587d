// The local commit log (CommitLogPort): one append-only sequence of records over fixed-size segment files.
// Offsets are assigned synchronously at append time (the event loop is the putMessageLock); bytes are encoded
// into the tail cache and written by a single writer loop that takes everything appended since its last
// write as one batch (group commit) and runs it through the stages write → flush (SYNC_FLUSH: one fdatasync)
// → dispatch (the batch's records to the consume queues and index) → resolve (the waiting puts).
import type { Logger } from 'pino';
import type { PutResult, PutStatus } from '../types.js';
import { indexKeysOf } from '../record-properties.js';
import type { StoreConfig } from '../config.js';
import {
  BLANK_MAGIC_CODE, END_FILE_MIN_BLANK_LENGTH, topicBytesOf, writeRecord, type DecodedRecord, type RecordPlacement,
} from '../record.js';
import { fs, fdatasync, writevAll, writevAllSync } from '../io.js';
import { Segment } from '../segment.js';
import { TailCache } from './tail-cache.js';
import {
  abnormalWindowStart, loadSegmentsSync, recoverLog, recoveryWindowStart, truncateSegmentsSync,
} from './recovery.js';
import type {
  CommitLogDeps, CommitLogFactory, CommitLogFile, CommitLogPort, CommitLogStats, PreparedMessage, QueueOffsetCounter,
  WrittenRecord,
} from './port.js';

interface WriteOp {
  seg: Segment;
  filePos: number;
  buf: Buffer;
}

interface Waiter {
  resolve: (r: PutResult) => void;
  result: PutResult;
}

/** One group commit: everything appended since the writer's previous turn, on its way through the stages. */
interface Batch {
  ops: WriteOp[];
  waiters: Waiter[];
  entries: WrittenRecord[];
  endOffset: number;
  bytes: number;
  storeTimestamp: number;
  /** The stages' merged outcome (mergePutStatus): PUT_OK unless one of them failed or timed out. */
  status: PutStatus;
  /** Set when a stage ran past its deadline and answered the puts early; they are not answered again. */
  answered: boolean;
}

/** Batches up to this size are written synchronously on the event loop (see writeOps). */
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

/**
 * Java CommitLog.handleDiskFlushAndHA: each stage's non-OK status replaces the outcome so far (a later stage's
 * failure wins over an earlier one's).
 */
export function mergePutStatus(current: PutStatus, stage: PutStatus): PutStatus {
  return stage === 'PUT_OK' ? current : stage;
}

/** A stage ran past its deadline: its puts are answered now with the stage's status (the batch itself goes on). */
function answerEarly(batch: Batch, stageStatus: PutStatus): void {
  batch.answered = true;
  const status = mergePutStatus(batch.status, stageStatus);
  for (const w of batch.waiters) w.resolve({ ...w.result, status });
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
  readonly stats: CommitLogStats = { writeCalls: 0, fsyncCalls: 0 };
  /** Set when a write failed: the log cannot continue without a hole, so appends stop. */
  failure: Error | null = null;

  private readonly config: StoreConfig;
  private readonly logger: Logger;
  private readonly onWritten: CommitLogDeps['onWritten'];
  private readonly onNoSpace: CommitLogDeps['onNoSpace'];
  private readonly reader: CommitLogDeps['reader'];
  private readonly cache: TailCache;
  private readonly segmentSize: number;
  private ops: WriteOp[] = [];
  private waiters: Waiter[] = [];
  private entries: WrittenRecord[] = [];
  private pendingBytes = 0;
  private pendingStoreTimestamp = 0;
  private scheduled = false;
  private writing = false;
  private idleWaiters: Array<() => void> = [];
  private dirtySegments = new Set<Segment>();
  private flushing: Promise<void> | null = null;
  private readonly runBatchesBound = (): void => void this.runBatches();

  constructor(deps: CommitLogDeps) {
    this.config = deps.config;
    this.logger = deps.logger;
    this.onWritten = deps.onWritten;
    this.onNoSpace = deps.onNoSpace;
    this.reader = deps.reader;
    this.segmentSize = deps.config.mappedFileSizeCommitLog;
    this.cache = new TailCache(deps.config.commitLogTailCacheBytes);
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
          storeTimestamp, topicBytes: topicBytesOf(m.msg.topic), propertiesLength: m.propertiesLength,
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
    const promise = new Promise<PutResult>((resolve) => this.waiters.push({ resolve, result }));
    if (!this.scheduled && !this.writing) {
      this.scheduled = true;
      setImmediate(this.runBatchesBound);
    }
    return promise;
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
   * The writer: one group commit at a time through write → flush → dispatch → resolve. A waiting stage returns
   * the promise of its status (null when it has nothing to wait for, so an ASYNC_FLUSH batch never yields
   * between its write and its answers), merged here into batch.status, which resolve hands to the puts.
   */
  private async runBatches(): Promise<void> {
    this.scheduled = false;
    this.writing = true;
    try {
      while (this.ops.length > 0) {
        const batch = this.takeBatch();
        if (!(await this.writeStage(batch))) continue;
        const flushing = this.flushStage(batch);
        if (flushing) batch.status = mergePutStatus(batch.status, await flushing);
        this.dispatchStage(batch);
        this.resolveStage(batch);
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
    const batch: Batch = {
      ops: this.ops, waiters: this.waiters, entries: this.entries, endOffset: this.writeOffset,
      bytes: this.pendingBytes, storeTimestamp: this.pendingStoreTimestamp, status: 'PUT_OK', answered: false,
    };
    this.ops = [];
    this.waiters = [];
    this.entries = [];
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

  /** SYNC_FLUSH (GroupCommitService): one fdatasync for the whole batch. Null under ASYNC_FLUSH. */
  private flushStage(batch: Batch): Promise<PutStatus> | null {
    return this.config.flushDiskType === 'SYNC_FLUSH' ? this.syncFlush(batch) : null;
  }

  /**
   * FLUSH_DISK_TIMEOUT when the fdatasync fails, or (the puts answered at once) when it takes longer than
   * syncFlushTimeout; the batch is dispatched after the flush either way.
   */
  private async syncFlush(batch: Batch): Promise<PutStatus> {
    const timer = setTimeout(answerEarly, this.config.syncFlushTimeout, batch, 'FLUSH_DISK_TIMEOUT');
    try {
      await this.flush();
    } catch (err) {
      this.logger.error({ err }, 'commit log: fdatasync failed');
      return 'FLUSH_DISK_TIMEOUT';
    } finally {
      clearTimeout(timer);
    }
    return batch.answered ? 'FLUSH_DISK_TIMEOUT' : 'PUT_OK';
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

  /** Answers the batch's puts with the merged status, unless a stage answered them already. */
  private resolveStage(batch: Batch): void {
    if (batch.answered) return;
    const status = batch.status;
    for (const w of batch.waiters) {
      if (status !== 'PUT_OK') w.result.status = status;
      w.resolve(w.result);
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
    this.entries = [];
    this.pendingBytes = 0;
    this.writeOffset = this.writtenOffset;
    this.cache.truncate(this.writtenOffset);
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

  /** Zero-copy view of a written record range when it is still in the tail cache. */
  readCached(offset: number, size: number): Buffer | undefined {
    if (offset + size > this.writtenOffset) return undefined;
    return this.cache.read(offset, size);
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

  /** Whether the offset is old enough that Java would no longer count it as "in memory". */
  isInMemory(offset: number, memoryBudgetBytes: number): boolean {
    return this.writtenOffset - offset <= memoryBudgetBytes;
  }

  async close(): Promise<void> {
    await this.drain();
    await this.flush().catch((err) => this.logger.error({ err }, 'commit log: final flush failed'));
    for (const seg of this.segments) await seg.close().catch(() => {});
    this.cache.clear();
  }
}
