// Store configuration. Keys keep the Java names of MessageStoreConfig (store/config/MessageStoreConfig.java)
// wherever a Java key exists; keys marked "ours" have no Java counterpart.
import os from 'node:os';
import path from 'node:path';

export type FlushDiskType = 'ASYNC_FLUSH' | 'SYNC_FLUSH';

export interface StoreConfig {
  /** Java default `~/store`. */
  storePathRootDir: string;
  /** Java default `<storePathRootDir>/commitlog` (a single path; Java's `,`-separated lists are not supported). */
  storePathCommitLog: string;
  /** Commit-log segment size in bytes (Java 1 GiB). */
  mappedFileSizeCommitLog: number;
  /** Consume-queue file size in bytes; rounded up to a multiple of 20 as Java does (Java 300,000 entries). */
  mappedFileSizeConsumeQueue: number;
  flushDiskType: FlushDiskType;
  /** ASYNC_FLUSH: commit-log flush period in ms (Java 500). */
  flushIntervalCommitLog: number;
  /** ASYNC_FLUSH: flush only when at least this many 4 KiB pages are dirty (Java 4). */
  flushCommitLogLeastPages: number;
  /** ASYNC_FLUSH: flush regardless of dirty pages this often, ms (Java 10000). */
  flushCommitLogThoroughInterval: number;
  /** Consume-queue (and checkpoint) flush period in ms (Java 1000). */
  flushIntervalConsumeQueue: number;
  /** SYNC_FLUSH: a put waits this long for its fsync before answering FLUSH_DISK_TIMEOUT, ms (Java 5000). */
  syncFlushTimeout: number;
  /** Largest body accepted, bytes (Java 4 MiB). */
  maxMessageSize: number;
  /** Verify BODYCRC while recovering the commit log (Java true). */
  checkCRCOnRecover: boolean;
  /** Pull caps for data judged "in memory" / "on disk" (Java 256 KiB / 32 msgs and 64 KiB / 8 msgs). */
  maxTransferBytesOnMessageInMemory: number;
  maxTransferCountOnMessageInMemory: number;
  maxTransferBytesOnMessageInDisk: number;
  maxTransferCountOnMessageInDisk: number;
  /** Data within this percentage of RAM behind the log end counts as "in memory" (Java 40). */
  accessMessageInMemoryMaxRatio: number;
  /** A pull scans at most max(this/20, maxMsgNums) consume-queue entries (Java 16000 bytes). */
  maxFilterMessageSize: number;
  /** Delay levels, used to recompute SCHEDULE_TOPIC_XXXX tagsCodes when re-dispatching (Java default below). */
  messageDelayLevel: string;
  /** Ours: bytes of recent commit log kept in memory (write-through tail cache). */
  commitLogTailCacheBytes: number;
  /** Ours: puts answer OS_PAGE_CACHE_BUSY while more than this many bytes wait for their write. */
  maxPendingWriteBytes: number;
  /** Ours: a clean restart validates this many trailing commit-log files (Java 4.9 CommitLog.recoverNormally: 3). */
  recoverScanFileNum: number;
  /** Ours: recent consume-queue entries kept in memory per queue. */
  consumeQueueTailCacheEntries: number;
}

export const CQ_UNIT_SIZE = 20;
export const OS_PAGE_SIZE = 4096;

export const DEFAULT_MESSAGE_DELAY_LEVEL = '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h';

/** Defaults of every key except the two paths (which derive from the root). */
export const STORE_CONFIG_DEFAULTS: Readonly<Omit<StoreConfig, 'storePathRootDir' | 'storePathCommitLog'>> =
  Object.freeze({
    mappedFileSizeCommitLog: 1073741824,
    mappedFileSizeConsumeQueue: 6000000,
    flushDiskType: 'ASYNC_FLUSH' as FlushDiskType,
    flushIntervalCommitLog: 500,
    flushCommitLogLeastPages: 4,
    flushCommitLogThoroughInterval: 10000,
    flushIntervalConsumeQueue: 1000,
    syncFlushTimeout: 5000,
    maxMessageSize: 4194304,
    checkCRCOnRecover: true,
    maxTransferBytesOnMessageInMemory: 262144,
    maxTransferCountOnMessageInMemory: 32,
    maxTransferBytesOnMessageInDisk: 65536,
    maxTransferCountOnMessageInDisk: 8,
    accessMessageInMemoryMaxRatio: 40,
    maxFilterMessageSize: 16000,
    messageDelayLevel: DEFAULT_MESSAGE_DELAY_LEVEL,
    commitLogTailCacheBytes: 64 * 1024 * 1024,
    maxPendingWriteBytes: 64 * 1024 * 1024,
    recoverScanFileNum: 3,
    consumeQueueTailCacheEntries: 8192,
  });

export const DEFAULT_STORE_PATH_ROOT_DIR = path.join(os.homedir(), 'store');

export type StoreConfigInput = Partial<StoreConfig>;

/** Fills defaults and normalises sizes; throws on values the store cannot work with. */
export function resolveStoreConfig(input: StoreConfigInput = {}): StoreConfig {
  const defined: Partial<StoreConfig> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v !== undefined) (defined as Record<string, unknown>)[k] = v;
  }
  const storePathRootDir = defined.storePathRootDir ?? DEFAULT_STORE_PATH_ROOT_DIR;
  const config: StoreConfig = {
    ...STORE_CONFIG_DEFAULTS,
    ...defined,
    storePathRootDir,
    storePathCommitLog: defined.storePathCommitLog ?? path.join(storePathRootDir, 'commitlog'),
  };
  // MessageStoreConfig.getMappedFileSizeConsumeQueue rounds up to whole 20-byte units.
  config.mappedFileSizeConsumeQueue = Math.ceil(config.mappedFileSizeConsumeQueue / CQ_UNIT_SIZE) * CQ_UNIT_SIZE;
  if (config.flushDiskType !== 'ASYNC_FLUSH' && config.flushDiskType !== 'SYNC_FLUSH') {
    throw new Error(`flushDiskType must be ASYNC_FLUSH or SYNC_FLUSH, got ${String(config.flushDiskType)}`);
  }
  positiveInt('mappedFileSizeCommitLog', config.mappedFileSizeCommitLog);
  positiveInt('mappedFileSizeConsumeQueue', config.mappedFileSizeConsumeQueue);
  positiveInt('maxMessageSize', config.maxMessageSize);
  positiveInt('syncFlushTimeout', config.syncFlushTimeout);
  positiveInt('flushIntervalCommitLog', config.flushIntervalCommitLog);
  positiveInt('flushIntervalConsumeQueue', config.flushIntervalConsumeQueue);
  positiveInt('maxPendingWriteBytes', config.maxPendingWriteBytes);
  positiveInt('consumeQueueTailCacheEntries', config.consumeQueueTailCacheEntries);
  if (config.mappedFileSizeCommitLog < 256) throw new Error('mappedFileSizeCommitLog is too small');
  return config;
}

function positiveInt(name: string, v: number): void {
  if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`${name} must be a positive integer, got ${String(v)}`);
}

/** Parses `messageDelayLevel` ("1s 5s ... 2h") into delays in ms, index 0 = level 1. */
export function parseDelayLevels(spec: string): number[] {
  const unitMs: Record<string, number> = { s: 1000, m: 60000, h: 3600000, d: 86400000 };
  const out: number[] = [];
  for (const part of spec.trim().split(/\s+/)) {
    if (part === '') continue;
    const unit = unitMs[part.slice(-1)];
    const n = Number(part.slice(0, -1));
    if (unit === undefined || !Number.isFinite(n)) throw new Error(`bad messageDelayLevel entry: ${part}`);
    out.push(n * unit);
  }
  return out;
}
