// The commit log as the rest of the store uses it (the facade, the pull path, recovery, clean-up). The local
// segment-file log (commit-log.ts) implements it; createMessageStore takes a factory for another one.
import type { Logger } from 'pino';
import type { StoreConfig } from '../config.js';
import type { PageCacheReader } from '../page-cache-reader.js';
import type { DecodedRecord } from '../record.js';
import type { DispatchedEntry, MessageToStore, PutResult, PutStatus } from '../types.js';

/** Per-queue counter the append path takes queue offsets from (the consume queue's next offset). */
export interface QueueOffsetCounter {
  nextQueueOffset: number;
}

/** One message of an append, prepared (validated, measured) by the store. */
export interface PreparedMessage {
  msg: MessageToStore;
  totalSize: number;
  sysFlag: number;
  bodyCrc: number;
  propertiesLength: number;
  /** Gets a queue offset and a consume-queue entry (tx NOT / COMMIT). */
  queued: boolean;
  /** The topic's UTF-8 bytes (record.ts topicBytesOf). */
  topicBytes: Buffer;
}

/** What the commit log reports for each written record: the consume-queue entry plus what the index needs. */
export interface WrittenRecord extends DispatchedEntry {
  /** Gets a consume-queue entry (tx NOT / COMMIT); others only go to the index. */
  queued: boolean;
  sysFlag: number;
  keys: string | undefined;
  uniqKey: string | undefined;
}

export interface CommitLogStats {
  writeCalls: number;
  fsyncCalls: number;
  /** In-memory tail buffers used again for new records (logs that keep such a tail). */
  tailChunksReused?: number;
  /** Buffers of blocks read whole (loadBlock) used again for later blocks (logs that keep such blocks). */
  readBlocksReused?: number;
}

/** One file of the log, as retention sees it. */
export interface CommitLogFile {
  readonly filePath: string;
  readonly fromOffset: number;
  readonly endOffset: number;
  /** Deletes the file once reads in flight on it are done (or after intervalMs regardless). */
  destroyWhenIdle(intervalMs: number): Promise<void>;
}

/**
 * The replica stage of a SYNC_MASTER (installed by the HA master): given the end offset of a batch whose puts wait
 * (WAIT=true), the status they get from replication — at once (PUT_OK: nothing to wait for; SLAVE_NOT_AVAILABLE)
 * or once a slave acknowledged the end or the wait timed out (FLUSH_SLAVE_TIMEOUT).
 */
export type ReplicaWait = (endOffset: number) => PutStatus | Promise<PutStatus>;

/** Why a slave's append of replicated bytes was refused (nothing of it was appended). */
export interface ReplicaAppendRefusal {
  refused: string;
}

export interface CommitLogPort {
  readonly stats: CommitLogStats;
  /** Set when a write failed for good: the log cannot go on without a hole, so appends are refused. */
  readonly failure: Error | null;

  // ---- start-up
  /** Opens the files found on disk. */
  loadSync(): void;
  /**
   * Where validation starts: after a clean stop the last recoverScanFileNum files; after an abnormal one (a
   * checkpoint time given) the newest file stored before that time.
   */
  recoveryWindowStart(abnormalMinTimestamp?: number): number;
  /**
   * Validates from windowStart, hands every record from scanStart on to onRecord (re-dispatch; `pause` lets the
   * receivers catch up), cuts the torn tail and positions the writer at the end, which it returns.
   */
  recover(
    scanStart: number, windowStart: number,
    onRecord: (record: DecodedRecord, offset: number) => void, pause: () => Promise<void>,
  ): Promise<number>;
  /**
   * Called once recovery is done and the store's queues are set (the last step of the store's start): a log with a
   * life of its own (the DLedger node: peer port, elections) starts here.
   */
  start?(): Promise<void>;

  // ---- append
  /** Whether `bytes` more can be appended now without exceeding the pending-write bound. */
  canAccept(bytes: number): boolean;
  /**
   * Appends consecutive records; offsets and queue offsets are assigned before this returns. The promise settles
   * after the writer's stages (written, flushed under SYNC_FLUSH, dispatched) with their merged status.
   */
  append(prepared: PreparedMessage[], totalBytes: number, counter: QueueOffsetCounter): Promise<PutResult>;
  /** Resolves when every append so far has been written (or failed). */
  drain(): Promise<void>;
  /** Installs the replica stage (null: none). Only puts that wait (WAIT=true) wait for it. */
  setReplicaWait(wait: ReplicaWait | null): void;

  // ---- replication (the HA master ships written bytes; a slave appends what it receives)
  /** The offset the next append starts at (on a slave it may lie inside a record received in part). */
  readonly appendOffset: number;
  /** Called with the new writtenOffset after every write (not per message: per group commit). */
  onWrittenOffset(listener: (writtenOffset: number) => void): void;
  /**
   * Written bytes from `offset` to the end of what is written, at most `maxBytes`, never past the end of the file
   * holding `offset` (Java CommitLog.getData: a frame never crosses a file). Empty at the written end; null when the
   * offset is not in the log (below its minimum or beyond its end).
   */
  readForReplica(offset: number, maxBytes: number): Promise<Buffer | null>;
  /**
   * A slave's append of bytes its master shipped (Java CommitLog.appendData): `offset` must be this log's append
   * offset (an empty log takes the start of any file), the bytes must stay inside one file and continue the log's
   * records (every record where its PHYSICALOFFSET says). The complete records are dispatched once written, like
   * recovery re-dispatches them; a record received in part waits for the rest. Refused (nothing appended) otherwise.
   * `bytes` may come as the parts of one frame. The caller must not change them afterwards: the part of a record
   * received in part is kept as a view of them.
   */
  appendReplicated(offset: number, bytes: Buffer | readonly Buffer[]): ReplicaAppendRefusal | undefined;
  /**
   * Before a slave's log takes appends of its own (it becomes a master): waits for pending writes, then drops a
   * trailing record received in part and steps over padding after a BLANK, so appends start on a record boundary.
   */
  settleReplicatedTail(): Promise<void>;

  // ---- offsets
  /** First byte still in the log (retention moves it). */
  readonly minOffset: number;
  /** Every byte below this is written and may be read and dispatched (the confirmed end of the log). */
  readonly writtenOffset: number;
  /** Every byte below this has been fdatasync'ed. */
  readonly flushedOffset: number;
  /** Store timestamp of the newest record flushed (checkpoint physicMsgTimestamp). */
  readonly flushedStoreTimestamp: number;
  /** Bytes written but not yet flushed. */
  readonly unflushedBytes: number;
  /** Flushes everything written so far; concurrent callers share one pass. */
  flush(): Promise<void>;

  // ---- read
  /**
   * Zero-copy view of a written record range while it is still in memory, else undefined. With `pins` (from
   * newReadPins) the log may reuse that memory once they are released; without, it keeps it for the view.
   */
  readCached(offset: number, size: number, pins?: ReadPins): Buffer | undefined;
  /** Pins for readCached, when the log reuses memory behind released views (optional). */
  newReadPins?(): ReadPins;
  /**
   * A view of [offset, offset+size) from a block loadBlock read, or undefined (logs that keep such blocks). With
   * `pins` (from newReadPins) the log may reuse the block's memory once they are released, as for readCached.
   */
  readBlockCached?(offset: number, size: number, pins?: ReadPins): Buffer | undefined;
  /**
   * What readBlockCached would view, without the view: the block's bytes `buf`, whose byte 0 is the log's offset
   * `start`, pinned as readBlockCached pins its view. For a scan that looks at many records and takes few; views
   * of `buf` are valid while the pins hold.
   */
  blockHolding?(offset: number, size: number, pins?: ReadPins): { readonly start: number; readonly buf: Buffer } | undefined;
  /** Reads the block holding `offset` whole, for readBlockCached; `likelyCached` as for read(). */
  loadBlock?(offset: number, likelyCached: boolean): Promise<void>;
  /**
   * Counts `bytes` of records a sparse pull wants from the block holding `offset` and says whether to read that
   * block whole now (ReadBlocks.want); with loadBlock.
   */
  wantBlock?(offset: number, bytes: number): boolean;
  /** [offset, offset+size) of written data, or null; `likelyCached`: recent data, the read may run on the loop. */
  read(offset: number, size: number, likelyCached?: boolean): Promise<Buffer | null>;
  /** Whether Java would still count the offset as "in memory" (within memoryBudgetBytes of the end). */
  isInMemory(offset: number, memoryBudgetBytes: number): boolean;

  // ---- retention
  /** The log's files, oldest first; the last holds the newest byte or is the preallocated next one. */
  readonly files: readonly CommitLogFile[];
  /** Takes the oldest file out of the log (the min moves to the next file) if it is still `file`; the caller deletes it. */
  dropOldestFile(file: CommitLogFile): boolean;

  /** Drains, flushes and closes the files. */
  close(): Promise<void>;
}

/** Memory views of one reader hold, released together once it no longer uses them. Releasing twice is harmless. */
export interface ReadPins {
  release(): void;
}

/** What the store hands a commit log it builds. */
export interface CommitLogDeps {
  config: StoreConfig;
  logger: Logger;
  /** Called with each written (and, under SYNC_FLUSH, flushed) batch's records, in log order. */
  onWritten: (entries: WrittenRecord[]) => void;
  /**
   * Called after a write found the disk full and the log rewound to its written end: the store hands queue
   * offsets back and refuses puts until the disk guard sees space again.
   */
  onNoSpace: () => void;
  /** Reads of written data no longer in memory (shared with the consume queues). */
  reader: PageCacheReader;
}

export type CommitLogFactory = (deps: CommitLogDeps) => CommitLogPort;
