// The store facade (Java DefaultMessageStore): validation, start-up recovery, flush scheduling, queries.
import { fs } from './io.js';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type {
  DispatchedEntry, GetResult, MessageFilter, MessageStore, MessageToStore, PutResult, PutStatus, QueryMessageResult,
  QueueEntry,
} from './types.js';
import { CQ_UNIT_SIZE, OS_PAGE_SIZE, parseDelayLevels, STORE_SCHEMA, type StoreConfig } from './config.js';
import { ConfigError, checkValue, restartOnlyChanges } from '../common/config-schema.js';
import { localCommitLog } from './commit-log/commit-log.js';
import type { CommitLogFactory, CommitLogPort, PreparedMessage } from './commit-log/port.js';
import { IndexService } from './index/index-service.js';
import { PageCacheReader } from './page-cache-reader.js';
import { ConsumeQueueStore } from './consume-queue/store.js';
import { parseEntry } from './consume-queue/consume-queue.js';
import { Dispatcher, SCHEDULE_TOPIC } from './dispatcher.js';
import { AbortFile, StoreCheckpoint } from './checkpoint.js';
import { DEFAULT_STORE_ENV, StoreCleaner, type StoreEnv } from './cleanup.js';
import { getMessage, MAX_PULL_TOTAL_BYTES, type GetContext } from './get-message.js';
import { bodyCrc32, bodyCrc32Parts } from './crc32.js';
import { bodyLengthOf } from './record.js';
import {
  encodeRecordSize, isQueuedTransactionType, MAX_PROPERTIES_LENGTH, MAX_TOPIC_LENGTH, MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2, readInt64, RECORD_OVERHEAD_V1_IPV4, RecordPos, storeTimestampPos, topicBytesOf, withHostFlags,
} from './record.js';

const MAX_QUEUE_ID = 0x7fffffff;

export interface StoreStats {
  commitLogWriteCalls: number;
  /** In-memory tail buffers of the commit log used again instead of allocated. */
  tailChunksReused: number;
  /** Buffers of commit-log blocks read whole for pulls used again for later blocks instead of allocated. */
  readBlocksReused: number;
  commitLogFsyncCalls: number;
  consumeQueueFsyncFiles: number;
  /** Consume-queue flush rounds finished (each flushIntervalConsumeQueue). */
  consumeQueueFlushRounds: number;
  /** Consume-queue reads behind the in-memory tails served from an entry block read ahead (no read of their own). */
  consumeQueueReadAheadHits: number;
  /** Reads behind the in-memory tails: on the event loop, through the thread pool, and sync ones found slow. */
  syncReads: number;
  asyncReads: number;
  slowSyncReads: number;
}

type State = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

/** What the last start-up recovery did (also logged). */
export interface RecoveryStats {
  abnormal: boolean;
  /** Where re-reading started, where validation started, and the recovered end of the log. */
  scanStart: number;
  windowStart: number;
  logEnd: number;
  bytesScanned: number;
  /** Consume-queue entries re-dispatched. */
  rebuilt: number;
  durationMs: number;
}

function rejected(status: PutStatus, remark: string): PutResult {
  return {
    status, commitLogOffset: -1, commitLogOffsets: [], queueOffset: -1, wroteBytes: 0, storeTimestamp: 0,
    messageCount: 0, remark,
  };
}

export class DefaultMessageStore implements MessageStore {
  readonly commitLog: CommitLogPort;
  readonly cqStore: ConsumeQueueStore;
  /** Reads behind the in-memory tails (pulls of a backlog): on the event loop while the page cache serves them. */
  readonly pageCacheReader = new PageCacheReader();
  readonly dispatcher: Dispatcher;
  /** The key index (`{root}/index`); null with messageIndexEnable=false. */
  readonly indexService: IndexService | null;
  checkpoint: StoreCheckpoint | null = null;
  /** Whether the previous run ended without a clean shutdown (abort file found at start). */
  lastShutdownAbnormal = false;
  /** Retention and the disk guard. */
  readonly cleaner: StoreCleaner;
  recoveryStats: RecoveryStats | null = null;

  private state: State = 'created';
  private readonly abortFile: AbortFile;
  private readonly getCtx: GetContext;
  private maxRecordBytes: number;
  private timers: NodeJS.Timeout[] = [];
  private lastThoroughFlushMs = Date.now();
  private lastThoroughCqFlushMs = Date.now();
  private lastIndexFlushMs = Date.now();
  private commitLogFlushRunning = false;
  private cqFlushRunning: Promise<void> | null = null;
  private cqFsyncFiles = 0;
  private cqFlushRounds = 0;

  constructor(
    readonly config: StoreConfig,
    private readonly logger: Logger,
    env: Partial<StoreEnv> = {},
    /** Builds the commit log (default: the local segment-file log). */
    commitLogFactory: CommitLogFactory = localCommitLog,
  ) {
    this.cqStore = new ConsumeQueueStore(
      path.join(config.storePathRootDir, 'consumequeue'), config.mappedFileSizeConsumeQueue,
      config.consumeQueueTailCacheEntries, logger, this.pageCacheReader,
    );
    this.indexService = config.messageIndexEnable
      ? new IndexService(path.join(config.storePathRootDir, 'index'), {
        hashSlotNum: config.maxHashSlotNum, indexNum: config.maxIndexNum, maxMsgsNumBatch: config.maxMsgsNumBatch,
      }, logger)
      : null;
    this.dispatcher = new Dispatcher(this.cqStore, logger, parseDelayLevels(config.messageDelayLevel), this.indexService);
    this.commitLog = commitLogFactory({
      config, logger, reader: this.pageCacheReader,
      onWritten: (entries) => this.dispatcher.dispatchWritten(entries),
      onNoSpace: () => {
        // Disk full: the refused puts' queue offsets are handed back (nothing past a queue's dispatched end was
        // acknowledged), and puts are refused until the disk guard measures space again.
        for (const cq of this.cqStore.all()) cq.nextQueueOffset = cq.maxOffset;
        this.cleaner.diskFull = true;
        void this.cleaner.checkDiskSpace();
      },
    });
    this.abortFile = new AbortFile(path.join(config.storePathRootDir, 'abort'));
    this.maxRecordBytes = 0;
    this.getCtx = { commitLog: this.commitLog, cqStore: this.cqStore, config, memoryBudgetBytes: 0, maxRecordBytes: 0 };
    this.deriveFromConfig();
    this.cleaner = new StoreCleaner({
      config, logger, commitLog: this.commitLog, cqStore: this.cqStore, env: { ...DEFAULT_STORE_ENV, ...env },
      onMinPhyOffsetAdvanced: (min) => this.deleteExpiredIndexFiles(min),
    });
  }

  /** Values computed from settings; again after every runtime change. */
  private deriveFromConfig(): void {
    const { config } = this;
    // Reads accept any record this run may have written: a lowered maxMessageSize does not hide bigger ones.
    const recordBytes = encodeRecordSize(0x30, config.maxMessageSize, MAX_TOPIC_LENGTH, MAX_PROPERTIES_LENGTH);
    this.maxRecordBytes = Math.max(this.maxRecordBytes, recordBytes);
    this.getCtx.maxRecordBytes = this.maxRecordBytes;
    this.getCtx.memoryBudgetBytes = Math.floor(os.totalmem() * (config.accessMessageInMemoryMaxRatio / 100));
  }

  /**
   * Settings changed on the running broker (mqadmin updateBrokerConfig). Only keys marked `live` in STORE_SCHEMA
   * may change (everything else reads them at start); a bad value or another key throws ConfigError and changes
   * nothing. Readers of the config see the new values at once; derived values are recomputed.
   */
  updateConfig(changes: Partial<StoreConfig>): void {
    const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    for (const [k, v] of Object.entries(defined)) {
      if (!Object.hasOwn(STORE_SCHEMA, k)) throw new ConfigError(`${k}: not a store setting`);
      checkValue(k, STORE_SCHEMA[k as keyof StoreConfig], v);
    }
    const refused = restartOnlyChanges(STORE_SCHEMA, this.config, defined);
    if (refused.length > 0) throw new ConfigError(`${refused.join(', ')} cannot be changed on a running store`);
    Object.assign(this.config, defined);
    this.deriveFromConfig();
    this.logger.info({ changes: defined }, 'message store: config updated');
  }

  get stats(): StoreStats {
    return {
      commitLogWriteCalls: this.commitLog.stats.writeCalls,
      tailChunksReused: this.commitLog.stats.tailChunksReused ?? 0,
      readBlocksReused: this.commitLog.stats.readBlocksReused ?? 0,
      commitLogFsyncCalls: this.commitLog.stats.fsyncCalls,
      consumeQueueFsyncFiles: this.cqFsyncFiles,
      consumeQueueFlushRounds: this.cqFlushRounds,
      consumeQueueReadAheadHits: this.cqStore.readAhead.hits,
      ...this.pageCacheReader.stats,
    };
  }

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    if (this.state !== 'created') throw new Error(`message store cannot start from state ${this.state}`);
    this.state = 'starting';
    const startedAtMs = performance.now();
    const { config } = this;
    fs.mkdirSync(config.storePathRootDir, { recursive: true });
    this.lastShutdownAbnormal = this.abortFile.existsSync();
    if (this.lastShutdownAbnormal) this.logger.warn('message store: previous shutdown was not clean (abort file present)');
    this.checkpoint = new StoreCheckpoint(path.join(config.storePathRootDir, 'checkpoint'));

    this.commitLog.loadSync();
    this.cqStore.loadSync();
    // One pass over the log: validate the recovery window (the last files after a clean stop; after an
    // abnormal one, from the checkpoint's time as Java does) and re-dispatch every record the consume queues
    // may lack — the window, and everything after the newest entry any queue holds if that is older (e.g.
    // the consumequeue directory was removed). Dispatch is idempotent by queue offset.
    const windowStart = this.commitLog.recoveryWindowStart(
      this.lastShutdownAbnormal ? this.checkpoint.minTimestamp : undefined,
    );
    // The index asks for whatever it may lack too (files dropped after an abnormal stop, or removed).
    const indexFrom = this.indexRebuildStart();
    const scanStart = Math.max(this.commitLog.minOffset, Math.min(windowStart, this.cqStore.maxPhysicEnd(), indexFrom));
    let rebuilt = 0;
    const logEnd = await this.commitLog.recover(
      scanStart, windowStart,
      (record, offset) => {
        // After an abnormal stop an entry the queue holds for a record in the window (written after the
        // checkpoint's consume-queue flush) may have been torn: checked against its record.
        if (this.dispatcher.dispatchRecovered(record, offset, this.lastShutdownAbnormal && offset >= windowStart)) rebuilt++;
      },
      async () => {
        await this.cqStore.drainWrites();
        await this.indexService?.drainWrites();
      },
    );
    await this.cqStore.drainWrites();
    this.indexService?.afterRecovery(logEnd);
    this.deleteExpiredIndexFiles();
    this.cqStore.truncateBeyondSync(logEnd);
    this.dispatcher.dispatchedEndOffset = logEnd;
    for (const cq of this.cqStore.all()) cq.nextQueueOffset = cq.maxOffset;
    await this.cleaner.correctConsumeQueueMins();
    this.recoveryStats = {
      abnormal: this.lastShutdownAbnormal, scanStart, windowStart, logEnd, bytesScanned: Math.max(0, logEnd - scanStart),
      rebuilt, durationMs: Math.round(performance.now() - startedAtMs),
    };
    this.logger.info({ ...this.recoveryStats, indexFrom }, 'message store: recovered');

    this.abortFile.createSync();
    if (config.flushDiskType === 'ASYNC_FLUSH') {
      this.timers.push(setInterval(() => void this.flushCommitLogTick(), config.flushIntervalCommitLog));
    }
    this.timers.push(setInterval(() => void this.flushConsumeQueuesTick(), config.flushIntervalConsumeQueue));
    for (const t of this.timers) t.unref();
    await this.cleaner.start();
    await this.commitLog.start?.();
    this.state = 'running';
  }

  async shutdown(): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'stopping';
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.cleaner.stop();
    await this.commitLog.drain();
    await this.cqFlushRunning;
    await this.cqStore.drainWrites();
    await this.commitLog.close();
    await this.cqStore.closeAll();
    const cp = this.checkpoint!;
    const indexCovered = (await this.indexService?.close()) ?? 0;
    if (indexCovered > 0) cp.indexMsgTimestamp = indexCovered;
    cp.physicMsgTimestamp = this.commitLog.flushedStoreTimestamp;
    if (this.dispatcher.lastStoreTimestamp > 0) cp.logicsMsgTimestamp = this.dispatcher.lastStoreTimestamp;
    await cp.close();
    this.abortFile.deleteSync();
    this.state = 'stopped';
    this.logger.info(this.stats, 'message store: stopped');
  }

  private async flushCommitLogTick(): Promise<void> {
    if (this.commitLogFlushRunning || this.state !== 'running') return;
    const now = Date.now();
    const cfg = this.config;
    const dirty = this.commitLog.unflushedBytes;
    const thorough = now - this.lastThoroughFlushMs >= cfg.flushCommitLogThoroughInterval;
    if (dirty <= 0 || (dirty < cfg.flushCommitLogLeastPages * OS_PAGE_SIZE && !thorough)) return;
    if (thorough) this.lastThoroughFlushMs = now;
    this.commitLogFlushRunning = true;
    try {
      await this.commitLog.flush();
    } catch (err) {
      this.logger.error({ err }, 'commit log flush failed');
    } finally {
      this.commitLogFlushRunning = false;
    }
  }

  private flushConsumeQueuesTick(): Promise<void> {
    if (this.cqFlushRunning || this.state !== 'running') return Promise.resolve();
    // Java FlushConsumeQueueService: a queue is synced once flushConsumeQueueLeastPages of it are unsynced, every
    // queue only in a thorough round. With many queues each written now and then (2,000 topics x 8 queues), a sync
    // of every written queue each second was one fdatasync per message.
    const now = Date.now();
    const thorough = now - this.lastThoroughCqFlushMs >= this.config.flushConsumeQueueThoroughInterval;
    if (thorough) this.lastThoroughCqFlushMs = now;
    const leastPages = thorough ? 0 : this.config.flushConsumeQueueLeastPages;
    const run = (async () => {
      // Read before the flush: every entry dispatched by then is synced by a round that syncs every queue.
      const ts = this.dispatcher.lastStoreTimestamp;
      try {
        const files = await this.cqStore.flushAll(leastPages);
        this.cqFsyncFiles += files;
        const cp = this.checkpoint!;
        const index = this.indexService;
        if (index && (index.flushWanted || Date.now() - this.lastIndexFlushMs >= this.config.flushIntervalIndex)) {
          this.lastIndexFlushMs = Date.now();
          try {
            const covered = await index.flush();
            if (covered > 0) cp.indexMsgTimestamp = covered;
          } catch (err) {
            this.logger.error({ err }, 'index flush failed');
          }
        }
        // The point recovery re-dispatches from: below the first unsynced entry of every queue left unsynced.
        const synced = leastPages <= 0 ? ts : this.cqStore.syncedUpTo(ts);
        if (synced > cp.logicsMsgTimestamp) cp.logicsMsgTimestamp = synced;
        cp.physicMsgTimestamp = this.commitLog.flushedStoreTimestamp;
        await cp.flush();
      } catch (err) {
        this.logger.error({ err }, 'consume queue flush failed');
      }
    })().finally(() => {
      this.cqFlushRounds++;
      this.cqFlushRunning = null;
    });
    this.cqFlushRunning = run;
    return run;
  }

  /**
   * Where re-dispatch must start for the index to miss nothing (Infinity with the index off): loads the index
   * files, dropping those newer than the checkpoint after an abnormal stop (IndexService.load).
   */
  private indexRebuildStart(): number {
    if (!this.indexService) return Infinity;
    const cp = this.checkpoint!;
    const hint = this.indexService.loadSync(!this.lastShutdownAbnormal, cp.indexMsgTimestamp);
    let from = hint.fromOffset;
    if (hint.notBeforeTimestamp !== undefined) {
      from = Math.max(from, this.commitLog.recoveryWindowStart(hint.notBeforeTimestamp));
    }
    return from;
  }

  /**
   * Deletes index files whose entries all point below the commit log's minimum offset (Java runs this from the
   * consume-queue cleanup after the log's head files go). Returns how many were deleted.
   */
  deleteExpiredIndexFiles(minPhyOffset: number = this.commitLog.minOffset): number {
    return this.indexService?.deleteExpiredFiles(minPhyOffset) ?? 0;
  }

  onDispatch(listener: (entry: DispatchedEntry) => void): void {
    this.dispatcher.onDispatch(listener);
  }

  // ---------------------------------------------------------------- put

  /** The topic's UTF-8 bytes, or a refusal: checked once per put (a batch has one topic and queue). */
  private topicBytesFor(topic: string, queueId: number): Buffer | PutResult {
    const topicBytes = topicBytesOf(topic);
    if (topicBytes.length === 0 || topicBytes.length > MAX_TOPIC_LENGTH || !isSafeTopicName(topic)) {
      return rejected('MESSAGE_ILLEGAL', `illegal topic (length ${topicBytes.length})`);
    }
    if (!Number.isInteger(queueId) || queueId < 0 || queueId > MAX_QUEUE_ID) {
      return rejected('MESSAGE_ILLEGAL', `illegal queueId ${queueId}`);
    }
    return topicBytes;
  }

  /** One message's checks and sizes; its topic and queue were checked by topicBytesFor. */
  private prepare(msg: MessageToStore, topicBytes: Buffer): PreparedMessage | PutResult {
    // A body given as pieces (a large request cut by socket chunks) is measured, CRC'd and copied piece by piece.
    const parts = msg.bodyParts;
    if (!parts && !Buffer.isBuffer(msg.body)) return rejected('MESSAGE_ILLEGAL', 'message body is missing');
    const bodyLength = bodyLengthOf(msg);
    if (bodyLength > this.config.maxMessageSize) {
      return rejected('MESSAGE_ILLEGAL', `message body size ${bodyLength} exceeds ${this.config.maxMessageSize}`);
    }
    const propertiesLength = Buffer.byteLength(msg.propertiesString, 'utf8');
    if (propertiesLength > MAX_PROPERTIES_LENGTH) {
      return rejected('PROPERTIES_SIZE_EXCEEDED', `properties size ${propertiesLength} exceeds ${MAX_PROPERTIES_LENGTH}`);
    }
    const badNumber = badNumericField(msg);
    if (badNumber) return rejected('MESSAGE_ILLEGAL', badNumber);
    const bornIp = msg.bornHost.ip.length;
    const storeIp = msg.storeHost.ip.length;
    if ((bornIp !== 4 && bornIp !== 16) || (storeIp !== 4 && storeIp !== 16)) {
      return rejected('MESSAGE_ILLEGAL', 'host addresses must be IPv4 or IPv6');
    }
    const sysFlag = withHostFlags(msg.sysFlag, msg.bornHost, msg.storeHost);
    const totalSize = encodeRecordSize(sysFlag, bodyLength, topicBytes.length, propertiesLength);
    return {
      msg, totalSize, sysFlag, bodyCrc: parts ? bodyCrc32Parts(parts) : bodyCrc32(msg.body), propertiesLength, queued: isQueuedTransactionType(sysFlag),
      topicBytes,
    };
  }

  putMessage(msg: MessageToStore): Promise<PutResult> {
    return this.putMessages([msg]);
  }

  putMessages(msgs: MessageToStore[]): Promise<PutResult> {
    if (this.state !== 'running' || this.commitLog.failure) {
      return Promise.resolve(rejected('SERVICE_NOT_AVAILABLE', 'message store is not running'));
    }
    // DefaultMessageStore.checkStoreStatus: a slave's log only takes what its master ships.
    if (this.config.brokerRole === 'SLAVE') {
      // The remark a 4.9.8 slave answers sends with (SendMessageProcessor: "... messages are put to the slave ...").
      return Promise.resolve(rejected('SERVICE_NOT_AVAILABLE', this.cleaner.diskFullRemark()));
    }
    if (this.cleaner.diskFull) return Promise.resolve(rejected('SERVICE_NOT_AVAILABLE', this.cleaner.diskFullRemark()));
    if (msgs.length === 0) return Promise.resolve(rejected('MESSAGE_ILLEGAL', 'empty batch'));
    const first = msgs[0]!;
    const topicBytes = this.topicBytesFor(first.topic, first.queueId);
    if (!Buffer.isBuffer(topicBytes)) return Promise.resolve(topicBytes);
    const prepared: PreparedMessage[] = new Array(msgs.length);
    let total = 0;
    let bodies = 0;
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      if (m.topic !== first.topic || m.queueId !== first.queueId) {
        return Promise.resolve(rejected('MESSAGE_ILLEGAL', 'a batch must target one topic and queue'));
      }
      const p = this.prepare(m, topicBytes);
      if (!('msg' in p)) return Promise.resolve(p);
      prepared[i] = p;
      total += p.totalSize;
      bodies += bodyLengthOf(m);
    }
    if (msgs.length > 1 && bodies > this.config.maxMessageSize) {
      return Promise.resolve(rejected('MESSAGE_ILLEGAL', `batch size ${bodies} exceeds ${this.config.maxMessageSize}`));
    }
    if (total + 8 > this.config.mappedFileSizeCommitLog) {
      return Promise.resolve(rejected('MESSAGE_ILLEGAL', `record size ${total} does not fit a commit log file`));
    }
    if (!this.commitLog.canAccept(total)) {
      return Promise.resolve(rejected('OS_PAGE_CACHE_BUSY', '[PC_SYNCHRONIZED]too many bytes waiting for the disk'));
    }
    const cq = this.cqStore.getOrCreate(first.topic, first.queueId);
    return this.commitLog.append(prepared, total, cq);
  }

  // ---------------------------------------------------------------- get / query

  getMessage(
    topic: string, queueId: number, queueOffset: number, maxMsgNums: number, maxTotalBytes: number,
    filter?: MessageFilter,
  ): Promise<GetResult> {
    return getMessage(this.getCtx, topic, queueId, queueOffset, maxMsgNums, maxTotalBytes, filter);
  }

  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.cqStore.find(topic, queueId)?.maxOffset ?? 0;
  }

  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.cqStore.find(topic, queueId)?.minOffset ?? 0;
  }

  async getCommitLogOffsetInQueue(topic: string, queueId: number, queueOffset: number): Promise<number> {
    const entry = await this.cqStore.find(topic, queueId)?.readEntry(queueOffset);
    return entry ? entry.commitLogOffset : -1;
  }

  /** STORETIMESTAMP of the record at a commit-log offset, or -1 (CommitLog.pickupStoreTimestamp). */
  async getStoreTimestampAt(commitLogOffset: number): Promise<number> {
    const head = await this.commitLog.read(commitLogOffset, RecordPos.BORN_HOST + 20 + 8);
    if (!head) return -1;
    return readInt64(head, storeTimestampPos(head.readInt32BE(RecordPos.SYS_FLAG)));
  }

  private async storeTimeOfEntry(topic: string, queueId: number, queueOffset: number): Promise<number> {
    const entry = await this.cqStore.find(topic, queueId)?.readEntry(queueOffset);
    return entry ? this.getStoreTimestampAt(entry.commitLogOffset) : -1;
  }

  async getOffsetInQueueByTime(topic: string, queueId: number, timestampMs: number): Promise<number> {
    const cq = this.cqStore.find(topic, queueId);
    if (!cq) return 0;
    // First offset whose store time is >= timestampMs (BoundaryType.LOWER); max when there is none.
    let lo = cq.minOffset;
    let hi = cq.maxOffset;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const t = await this.storeTimeOfEntry(topic, queueId, mid);
      if (t >= 0 && t < timestampMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Store time of the oldest record in the commit log, -1 when it is empty (DefaultMessageStore.getEarliestMessageTime). */
  getCommitLogEarliestTime(): Promise<number> {
    const min = this.commitLog.minOffset;
    if (this.commitLog.writtenOffset <= min) return Promise.resolve(-1);
    return this.getStoreTimestampAt(min);
  }

  /** Bytes written to the commit log and not yet flushed (Java flushBehindBytes). */
  flushBehindBytes(): number {
    return this.commitLog.unflushedBytes;
  }

  /** Bytes written to the commit log whose records are not yet in the consume queues (Java dispatchBehindBytes). */
  dispatchBehindBytes(): number {
    return Math.max(0, this.commitLog.writtenOffset - this.dispatcher.dispatchedEndOffset);
  }

  getEarliestMessageTime(topic: string, queueId: number): Promise<number> {
    const cq = this.cqStore.find(topic, queueId);
    if (!cq || cq.maxOffset <= cq.minOffset) return Promise.resolve(-1);
    return this.storeTimeOfEntry(topic, queueId, cq.minOffset);
  }

  getMessageStoreTimestamp(topic: string, queueId: number, queueOffset: number): Promise<number> {
    return this.storeTimeOfEntry(topic, queueId, queueOffset);
  }

  async lookMessageByOffset(commitLogOffset: number): Promise<Buffer | null> {
    const head = await this.commitLog.read(commitLogOffset, 8);
    if (!head) return null;
    const size = head.readInt32BE(0);
    const magic = head.readUInt32BE(4);
    if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) return null;
    if (size < RECORD_OVERHEAD_V1_IPV4 || size > this.maxRecordBytes) return null;
    return this.commitLog.read(commitLogOffset, size);
  }

  /**
   * DefaultMessageStore.queryMessage: offsets from the index (up to three passes, each moving `end` back to the
   * first hit's store time when none of the hits could be read), then the whole records, oldest first.
   */
  async queryMessage(
    topic: string, key: string, maxNum: number, beginTimestampMs: number, endTimestampMs: number,
  ): Promise<QueryMessageResult> {
    const result: QueryMessageResult = { records: [], indexLastUpdateTimestamp: 0, indexLastUpdatePhyoffset: 0 };
    if (!this.indexService) return result;
    let lastQueryMsgTime = endTimestampMs;
    let totalBytes = 0;
    for (let pass = 0; pass < 3; pass++) {
      const q = await this.indexService.queryOffset(topic, key, maxNum, beginTimestampMs, lastQueryMsgTime);
      if (q.phyOffsets.length === 0) break;
      q.phyOffsets.sort((a, b) => a - b);
      result.indexLastUpdateTimestamp = q.indexLastUpdateTimestamp;
      result.indexLastUpdatePhyoffset = q.indexLastUpdatePhyoffset;
      for (let m = 0; m < q.phyOffsets.length; m++) {
        const record = await this.lookMessageByOffset(q.phyOffsets[m]!);
        if (!record) continue;
        if (m === 0) lastQueryMsgTime = readInt64(record, storeTimestampPos(record.readInt32BE(RecordPos.SYS_FLAG)));
        // Java has no byte cap here; Java clients refuse frames over 16 MiB, so stop below that.
        if (result.records.length > 0 && totalBytes + record.length > MAX_PULL_TOTAL_BYTES) break;
        result.records.push(record);
        totalBytes += record.length;
      }
      if (result.records.length > 0) break;
      if (lastQueryMsgTime < beginTimestampMs) break;
    }
    return result;
  }

  async getQueueEntries(topic: string, queueId: number, fromOffset: number, maxCount: number): Promise<QueueEntry[]> {
    const cq = this.cqStore.find(topic, queueId);
    const out: QueueEntry[] = [];
    if (!cq) return out;
    let index = Math.max(fromOffset, cq.minOffset);
    while (out.length < maxCount && index < cq.maxOffset) {
      const buf = await cq.readEntries(index, maxCount - out.length);
      if (!buf) {
        index = cq.rollNextFile(index); // unreadable file: skip to the next one, as getMessage does
        continue;
      }
      for (let pos = 0; pos + CQ_UNIT_SIZE <= buf.length; pos += CQ_UNIT_SIZE) {
        const e = parseEntry(buf, pos);
        out.push({ queueOffset: index, commitLogOffset: e.commitLogOffset, sizeBytes: e.sizeBytes, tagsCode: e.tagsCode });
        index++;
      }
    }
    return out;
  }

  /**
   * The store's part of a role change (the broker's one role method calls it): a slave becoming a master first
   * settles the replicated tail (a record received in part is dropped) and its queues take offsets from their ends.
   */
  async setBrokerRole(role: StoreConfig['brokerRole']): Promise<void> {
    const wasSlave = this.config.brokerRole === 'SLAVE';
    this.config.brokerRole = role;
    if (!wasSlave || role === 'SLAVE') return;
    await this.commitLog.settleReplicatedTail();
    await this.cqStore.drainWrites();
    for (const cq of this.cqStore.all()) if (cq.nextQueueOffset < cq.maxOffset) cq.nextQueueOffset = cq.maxOffset;
  }

  /**
   * Java recoverTopicQueueTable: every queue takes offsets from its dispatched end again. A DLedger leader does this
   * before it becomes master: offsets an earlier leadership took for entries that never committed are given back.
   */
  recoverTopicQueueTable(): void {
    for (const cq of this.cqStore.all()) cq.nextQueueOffset = cq.maxOffset;
  }

  getMinPhyOffset(): number {
    return this.commitLog.minOffset;
  }

  getMaxPhyOffset(): number {
    return this.commitLog.writtenOffset;
  }

  getQueueIds(topic: string): number[] {
    return this.cqStore.queueIds(topic);
  }

  async deleteTopic(topic: string): Promise<void> {
    if (!isSafeTopicName(topic)) return;
    await this.cqStore.deleteTopic(topic);
  }

  getQueueTopics(): string[] {
    return this.cqStore.topicNames();
  }

  async cleanExpiredConsumeQueues(): Promise<string[]> {
    const min = this.commitLog.minOffset;
    const removed: string[] = [];
    for (const cq of [...this.cqStore.all()]) {
      // maxPhysicEnd 0: no entry yet (Java getLastOffset -1, "maybe created just now"), kept; so is a queue with an
      // append under way (an offset taken, not yet dispatched), which would land in a queue that restarts at 0
      if (cq.topic === SCHEDULE_TOPIC || cq.maxPhysicEnd === 0 || cq.maxPhysicEnd >= min) continue;
      if (cq.nextQueueOffset !== cq.maxOffset) continue;
      await this.cqStore.deleteQueue(cq.topic, cq.queueId);
      removed.push(`${cq.topic}@${cq.queueId}`);
    }
    if (removed.length > 0) this.logger.info({ removed, minPhyOffset: min }, 'expired consume queues removed');
    return removed;
  }

  executeDeleteFilesManually(): void {
    this.cleaner.executeDeleteFilesManually();
  }
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

function isInt32(v: number): boolean {
  return Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX;
}

/**
 * Every number the record holds must be written exactly, before any offset is taken: int32 fields in range,
 * int64 fields within ±(2^53 − 1), which is all a JS number holds exactly. Java would store a bornTimestamp of
 * Long.MAX_VALUE; we refuse it (MESSAGE_ILLEGAL) rather than store another number. Returns the remark, or undefined.
 */
function badNumericField(msg: MessageToStore): string | undefined {
  if (!Number.isSafeInteger(msg.bornTimestamp)) {
    return `bornTimestamp ${msg.bornTimestamp} cannot be stored exactly (this broker keeps int64 fields within ±(2^53 − 1))`;
  }
  if (!Number.isSafeInteger(msg.preparedTransactionOffset)) return `preparedTransactionOffset ${msg.preparedTransactionOffset} is out of range`;
  if (!isInt32(msg.flag)) return `flag ${msg.flag} is not an int`;
  if (!isInt32(msg.sysFlag)) return `sysFlag ${msg.sysFlag} is not an int`;
  if (!isInt32(msg.reconsumeTimes)) return `reconsumeTimes ${msg.reconsumeTimes} is not an int`;
  if (!isInt32(msg.bornHost.port) || !isInt32(msg.storeHost.port)) return 'host ports must be ints';
  if (!Number.isSafeInteger(msg.tagsCode)) return `tagsCode ${msg.tagsCode} is out of range`;
  return undefined;
}

/** Topic names become directory names: refuse path separators and dot names. */
function isSafeTopicName(topic: string): boolean {
  return topic !== '.' && topic !== '..' && !/[/\\\0]/.test(topic);
}
