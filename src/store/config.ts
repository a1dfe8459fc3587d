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
  /** Retention: commit-log files last modified this many hours ago may be deleted (Java 72). */
  fileReservedTime: number;
  /** Retention: `;`-separated local hours during which expired files are deleted (Java "04"). */
  deleteWhen: string;
  /** Clean-up also runs when the store's disk is more than this % used (Java 75; clamped 10-95). */
  diskMaxUsedSpaceRatio: number;
  /** Above this % used, files are deleted even if not expired (Java 85; clamped 30-85). */
  diskSpaceCleanForciblyRatio: number;
  /** Above this % used the disk counts as full and puts get SERVICE_NOT_AVAILABLE (Java 90; clamped 35-90). */
  diskSpaceWarningLevelRatio: number;
  /** Allow deleting unexpired files when the disk passes diskSpaceCleanForciblyRatio (Java true). */
  cleanFileForciblyEnable: boolean;
  /** Clean-up period, ms (Java 10000). */
  cleanResourceInterval: number;
  /** Pause between two commit-log file deletions, ms (Java 100). */
  deleteCommitLogFilesInterval: number;
  /** Pause after a queue's consume-queue files were deleted, ms (Java 100). */
  deleteConsumeQueueFilesInterval: number;
  /** A deleted file still being read is closed anyway after this long, ms (Java 120000; Java's spelling). */
  destroyMapedFileIntervalForcibly: number;
  /** Most commit-log files deleted per clean-up run (Java 10). */
  deleteFileBatchMax: number;
  /** Build the key index (`{root}/index`) and answer QUERY_MESSAGE (Java true). */
  messageIndexEnable: boolean;
  /** Hash slots per index file (Java 5,000,000). */
  maxHashSlotNum: number;
  /** Entries per index file (Java 20,000,000); a full file rolls to a new one. */
  maxIndexNum: number;
  /**
   * Java: after an abnormal stop, also start recovery no later than the index checkpoint. Accepted for
   * compatibility; this store always re-dispatches whatever the index lacks, as if it were true.
   */
  messageIndexSafe: boolean;
  /** Most offsets one key query returns (Java 64). */
  maxMsgsNumBatch: number;
  /**
   * Ours: the index's slot pages and headers are written and fsynced (and the checkpoint's indexMsgTimestamp
   * advanced) at most this often, ms, and right after a file fills up. Java writes them through mmap and forces
   * them only on roll; entries themselves are written every event-loop turn.
   */
  flushIntervalIndex: number;
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
    fileReservedTime: 72,
    deleteWhen: '04',
    diskMaxUsedSpaceRatio: 75,
    diskSpaceCleanForciblyRatio: 85,
    diskSpaceWarningLevelRatio: 90,
    cleanFileForciblyEnable: true,
    cleanResourceInterval: 10000,
    deleteCommitLogFilesInterval: 100,
    deleteConsumeQueueFilesInterval: 100,
    destroyMapedFileIntervalForcibly: 120000,
    deleteFileBatchMax: 10,
    messageIndexEnable: true,
    maxHashSlotNum: 5000000,
    maxIndexNum: 5000000 * 4,
    messageIndexSafe: false,
    maxMsgsNumBatch: 64,
    flushIntervalIndex: 10000,
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
  positiveInt('cleanResourceInterval', config.cleanResourceInterval);
  positiveInt('deleteFileBatchMax', config.deleteFileBatchMax);
  if (!Number.isFinite(config.fileReservedTime) || config.fileReservedTime < 0) {
    throw new Error(`fileReservedTime must be a number of hours >= 0, got ${String(config.fileReservedTime)}`);
  }
  parseDeleteWhen(config.deleteWhen);
  positiveInt('maxHashSlotNum', config.maxHashSlotNum);
  positiveInt('maxIndexNum', config.maxIndexNum);
  positiveInt('maxMsgsNumBatch', config.maxMsgsNumBatch);
  // IndexFile computes its size as a Java int.
  if (40 + config.maxHashSlotNum * 4 + config.maxIndexNum * 20 > 0x7fffffff) {
    throw new Error('maxHashSlotNum * 4 + maxIndexNum * 20 must stay below 2 GiB');
  }
  if (config.mappedFileSizeCommitLog < 256) throw new Error('mappedFileSizeCommitLog is too small');
  return config;
}

function positiveInt(name: string, v: number): void {
  if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`${name} must be a positive integer, got ${String(v)}`);
}

/** `deleteWhen` ("04", "01;13") as hours 0-23 (UtilAll.isItTimeToDo); throws on anything else. */
export function parseDeleteWhen(spec: string): number[] {
  const hours: number[] = [];
  for (const part of spec.split(';')) {
    const t = part.trim();
    if (t === '') continue;
    const h = /^\d{1,2}$/.test(t) ? Number(t) : NaN;
    if (!(h >= 0 && h <= 23)) throw new Error(`deleteWhen: bad hour "${part}" in "${spec}"`);
    hours.push(h);
  }
  return hours;
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
