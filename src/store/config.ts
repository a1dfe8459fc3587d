// Store configuration: one schema (STORE_SCHEMA) with the Java names and defaults of MessageStoreConfig
// (store/config/MessageStoreConfig.java, 5.3.3); keys marked "ours" have no Java counterpart. The broker's schema
// includes it, so broker.conf sets every key here, and mqadmin updateBrokerConfig changes the `live` ones.
import os from 'node:os';
import path from 'node:path';
import { type ConfigOf, ConfigError, type Schema, checkValue, defaults } from '../common/config-schema.js';

export const CQ_UNIT_SIZE = 20;
export const OS_PAGE_SIZE = 4096;

export const DEFAULT_MESSAGE_DELAY_LEVEL = '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h';
export const DEFAULT_STORE_PATH_ROOT_DIR = path.join(os.homedir(), 'store');
/** Largest frame a Java client reads is 16 MiB; a message must fit with its headers. */
const MAX_MESSAGE_SIZE_LIMIT = 16 * 1024 * 1024 - 65536;

export const STORE_SCHEMA = {
  /** Java default `~/store`. */
  storePathRootDir: { type: 'string', default: DEFAULT_STORE_PATH_ROOT_DIR },
  /** Empty = `<storePathRootDir>/commitlog` (a single path; Java's `,`-separated lists are not supported). */
  storePathCommitLog: { type: 'string', default: '' },
  /** Commit-log segment size in bytes (Java 1 GiB). */
  mappedFileSizeCommitLog: { type: 'int', default: 1073741824, min: 4096 },
  /** Consume-queue file size in bytes; rounded up to a multiple of 20 as Java does (Java 300,000 entries). */
  mappedFileSizeConsumeQueue: { type: 'int', default: 300000 * CQ_UNIT_SIZE, min: CQ_UNIT_SIZE },
  flushDiskType: { type: 'enum', default: 'ASYNC_FLUSH', values: ['ASYNC_FLUSH', 'SYNC_FLUSH'] },
  /** ASYNC_FLUSH: commit-log flush period, ms (Java 500). Our flush timer is set at start. */
  flushIntervalCommitLog: { type: 'int', default: 500, min: 1 },
  /** ASYNC_FLUSH: flush only when at least this many 4 KiB pages are dirty (Java 4). */
  flushCommitLogLeastPages: { type: 'int', default: 4, min: 0, live: true },
  /** ASYNC_FLUSH: flush regardless of dirty pages this often, ms (Java 10000). */
  flushCommitLogThoroughInterval: { type: 'int', default: 10000, min: 0, live: true },
  /** Consume-queue (and checkpoint) flush period, ms (Java 1000). Our flush timer is set at start. */
  flushIntervalConsumeQueue: { type: 'int', default: 1000, min: 1 },
  /** Consume-queue flush: a queue is synced only once this many 4 KiB pages of it are unsynced (Java 2). */
  flushConsumeQueueLeastPages: { type: 'int', default: 2, min: 0, live: true },
  /**
   * Consume-queue flush regardless of unsynced pages this often, ms (Java 60000). Between such flushes the
   * checkpoint's logicsMsgTimestamp, where recovery after an abnormal stop starts re-dispatching, stays below the
   * first unsynced entry of any queue.
   */
  flushConsumeQueueThoroughInterval: { type: 'int', default: 60000, min: 0, live: true },
  /** SYNC_FLUSH: a put waits this long for its fsync before answering FLUSH_DISK_TIMEOUT, ms (Java 5000). */
  syncFlushTimeout: { type: 'int', default: 5000, min: 1, live: true },
  /** Largest body accepted, bytes (Java 4 MiB); the broker's send check and the store's read the same value. */
  maxMessageSize: { type: 'int', default: 4194304, min: 1, max: MAX_MESSAGE_SIZE_LIMIT, live: true },
  /** Verify BODYCRC while recovering the commit log (Java true). */
  checkCRCOnRecover: { type: 'bool', default: true },
  /** Pull caps for data judged "in memory" / "on disk" (Java 256 KiB / 32 msgs and 64 KiB / 8 msgs). */
  maxTransferBytesOnMessageInMemory: { type: 'int', default: 262144, min: 1, live: true },
  maxTransferCountOnMessageInMemory: { type: 'int', default: 32, min: 1, live: true },
  maxTransferBytesOnMessageInDisk: { type: 'int', default: 65536, min: 1, live: true },
  maxTransferCountOnMessageInDisk: { type: 'int', default: 8, min: 1, live: true },
  /** Data within this percentage of RAM behind the log end counts as "in memory" (Java 40). */
  accessMessageInMemoryMaxRatio: { type: 'int', default: 40, min: 0, max: 100, live: true },
  /**
   * Reads beyond the in-memory tail may take more than the records asked for (Java: madvise NORMAL vs RANDOM on its
   * mapped files, mqadmin setCommitLogReadAheadMode). Ours: whole 1 MiB blocks shared by the pulls of all queues,
   * and disk reads merged across 64 KiB gaps; false reads the records only. The kernel's own readahead on the
   * files is not changed (Node has no posix_fadvise).
   */
  dataReadAheadEnable: { type: 'bool', default: true, live: true },
  /** A filtered pull scans at most max(this/20, maxMsgNums) consume-queue entries (Java 16000 bytes). */
  maxFilterMessageSize: { type: 'int', default: 16000, min: 1, live: true },
  /** Delay levels, used to recompute SCHEDULE_TOPIC_XXXX tagsCodes when re-dispatching (and by the broker). */
  messageDelayLevel: { type: 'string', default: DEFAULT_MESSAGE_DELAY_LEVEL, check: checkDelayLevels },
  /** Ours: bytes of recent commit log kept in memory (write-through tail cache). */
  commitLogTailCacheBytes: { type: 'int', default: 64 * 1024 * 1024, min: 1 },
  /** Ours: puts answer OS_PAGE_CACHE_BUSY while more than this many bytes wait for their write. */
  maxPendingWriteBytes: { type: 'int', default: 64 * 1024 * 1024, min: 1, live: true },
  /** Ours: a clean restart validates this many trailing commit-log files, 0 = all (Java 4.9 recoverNormally: 3). */
  recoverScanFileNum: { type: 'int', default: 3, min: 0 },
  /** Ours: recent consume-queue entries kept in memory per queue. */
  consumeQueueTailCacheEntries: { type: 'int', default: 8192, min: 1 },
  // Retention and the disk guard. The ratios are percentages, clamped as Java's getters do (max used 10-95,
  // forced clean 30-85, warning 35-90).
  /** Commit-log files last modified this many hours ago may be deleted (Java 72). */
  fileReservedTime: { type: 'int', default: 72, min: 0, live: true },
  /** `;`-separated local hours during which expired files are deleted (Java "04"). */
  deleteWhen: { type: 'string', default: '04', check: parseDeleteWhen, live: true },
  /** Clean-up also runs when the store's disk is more than this % used (Java 75). */
  diskMaxUsedSpaceRatio: { type: 'int', default: 75, min: 0, max: 100, live: true },
  /** Above this % used, files are deleted even if not expired (Java 85). */
  diskSpaceCleanForciblyRatio: { type: 'int', default: 85, min: 0, max: 100, live: true },
  /** Above this % used the disk counts as full and puts get SERVICE_NOT_AVAILABLE (Java 90). */
  diskSpaceWarningLevelRatio: { type: 'int', default: 90, min: 0, max: 100, live: true },
  /** Allow deleting unexpired files when the disk passes diskSpaceCleanForciblyRatio (Java true). */
  cleanFileForciblyEnable: { type: 'bool', default: true, live: true },
  /** Clean-up period, ms (Java 10000; Java also fixes it at start). */
  cleanResourceInterval: { type: 'int', default: 10000, min: 100 },
  /** Pause between two commit-log file deletions, ms (Java 100). */
  deleteCommitLogFilesInterval: { type: 'int', default: 100, min: 0, live: true },
  /** Pause after a queue's consume-queue files were deleted, ms (Java 100). */
  deleteConsumeQueueFilesInterval: { type: 'int', default: 100, min: 0, live: true },
  /** A deleted file still being read is closed anyway after this long, ms (Java 120000; Java's spelling). */
  destroyMapedFileIntervalForcibly: { type: 'int', default: 120000, min: 0, live: true },
  /** Most commit-log files deleted per clean-up run (Java 10). */
  deleteFileBatchMax: { type: 'int', default: 10, min: 1, live: true },
  // Key index and QUERY_MESSAGE. An index file is 40 + 4·slots + 20·entries bytes (sparse).
  /** Build the key index (`{root}/index`) and answer QUERY_MESSAGE (Java true). */
  messageIndexEnable: { type: 'bool', default: true },
  /** Hash slots per index file (Java 5,000,000). */
  maxHashSlotNum: { type: 'int', default: 5000000, min: 1, max: 100000000 },
  /** Entries per index file (Java 20,000,000); a full file rolls to a new one. */
  maxIndexNum: { type: 'int', default: 5000000 * 4, min: 2, max: 100000000 },
  /**
   * Java: after an abnormal stop, also start recovery no later than the index checkpoint. Accepted for
   * compatibility; this store always re-dispatches whatever the index lacks, as if it were true.
   */
  messageIndexSafe: { type: 'bool', default: false },
  /** Most offsets one key query returns (Java 64). */
  maxMsgsNumBatch: { type: 'int', default: 64, min: 1, max: 100000 },
  /**
   * Ours: the index's slot pages and headers are written and fsynced (and the checkpoint's indexMsgTimestamp
   * advanced) at most this often, ms, and right after a file fills up. Java writes them through mmap and forces
   * them only on roll; entries themselves are written every event-loop turn.
   */
  flushIntervalIndex: { type: 'int', default: 10000, min: 0, live: true },
  // Master/slave replication (Java MessageStoreConfig; HA code in src/ha). The broker changes the role at run time
  // through one method (broker/broker-role.ts), never through updateBrokerConfig.
  brokerRole: { type: 'enum', default: 'ASYNC_MASTER', values: ['ASYNC_MASTER', 'SYNC_MASTER', 'SLAVE'] },
  /** The HA port (raw TCP, every broker listens). 0 = listenPort + 1 (Java 5.3.3; 4.9.8 always uses listenPort + 1). */
  haListenPort: { type: 'int', default: 0, min: 0, max: 65535 },
  /** `host:port` of the master's HA port; empty = learn it from the nameserver's register answer (Java: used if >= 6 chars). */
  haMasterAddress: { type: 'string', default: '' },
  /** Heartbeat frame (master) and heartbeat report (slave) after this much silence on the link, ms (Java 5000). */
  haSendHeartbeatInterval: { type: 'int', default: 5000, min: 1, live: true },
  /** A link that has read nothing for this long is closed, ms (Java 20000). */
  haHousekeepingInterval: { type: 'int', default: 20000, min: 1, live: true },
  /** Most commit-log bytes in one transfer frame (Java 32768); an official slave takes at most 4 MiB per frame. */
  haTransferBatchSize: { type: 'int', default: 32768, min: 1, max: 4 * 1024 * 1024 - 12, live: true },
  /** 4.9.8 semantics: SYNC_MASTER answers SLAVE_NOT_AVAILABLE when the slaves lag this many bytes or more (Java 256 MiB). */
  haSlaveFallbehindMax: { type: 'int', default: 268435456, min: 0, live: true },
  /** 5.3.3 semantics: a slave lagging this many bytes or more is not "in sync" (haStatus), bytes (Java 256 MiB). */
  haMaxGapNotInSync: { type: 'int', default: 268435456, min: 0, live: true },
  /** 5.3.3 SYNC_MASTER: copies (the master's included) a send waits for; 1 = no wait (Java 1). */
  inSyncReplicas: { type: 'int', default: 1, min: 1, max: 64, live: true },
  /** 5.3.3: only used with enableSlaveActingMaster or the controller, neither of which exists here; accepted (Java 1). */
  minInSyncReplicas: { type: 'int', default: 1, min: 1, max: 64, live: true },
  /** SYNC_MASTER: a send waits this long for its slave ack before FLUSH_SLAVE_TIMEOUT (12), ms (Java 3000). */
  slaveTimeout: { type: 'int', default: 3000, min: 1, live: true },
  /** A slave corrects pull offsets (OFFSET_TOO_SMALL etc.) as a master does (Java false: it keeps the asked offset). */
  offsetCheckInSlave: { type: 'bool', default: false, live: true },
  /**
   * Ours: a second HA connection from a host that already has a live one is closed (the port carries no slave id;
   * two links from one slave would count twice). Off for several slaves of one master on one host.
   */
  haOneConnectionPerSlaveHost: { type: 'bool', default: true, live: true },
} as const satisfies Schema;

export type StoreConfig = ConfigOf<typeof STORE_SCHEMA>;
export type FlushDiskType = StoreConfig['flushDiskType'];
export type StoreConfigInput = Partial<StoreConfig>;

/** Defaults of every key (the commit-log path is derived from the root when empty). */
export const STORE_CONFIG_DEFAULTS: Readonly<StoreConfig> = Object.freeze(defaults(STORE_SCHEMA));

/** Fills defaults and normalises sizes; throws ConfigError on values the store cannot work with. */
export function resolveStoreConfig(input: StoreConfigInput = {}): StoreConfig {
  const config: StoreConfig = { ...STORE_CONFIG_DEFAULTS };
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined || !Object.hasOwn(STORE_SCHEMA, k)) continue;
    checkValue(k, STORE_SCHEMA[k as keyof StoreConfig], v);
    (config as Record<string, unknown>)[k] = v;
  }
  if (config.storePathCommitLog === '') config.storePathCommitLog = path.join(config.storePathRootDir, 'commitlog');
  // MessageStoreConfig.getMappedFileSizeConsumeQueue rounds up to whole 20-byte units.
  config.mappedFileSizeConsumeQueue = Math.ceil(config.mappedFileSizeConsumeQueue / CQ_UNIT_SIZE) * CQ_UNIT_SIZE;
  // IndexFile computes its size as a Java int.
  if (40 + config.maxHashSlotNum * 4 + config.maxIndexNum * 20 > 0x7fffffff) {
    throw new ConfigError('maxHashSlotNum * 4 + maxIndexNum * 20 must stay below 2 GiB');
  }
  return config;
}

/** `deleteWhen` ("04", "01;13") as hours 0-23 (UtilAll.isItTimeToDo); throws on anything else. */
export function parseDeleteWhen(spec: string): number[] {
  const hours: number[] = [];
  for (const part of spec.split(';')) {
    const t = part.trim();
    if (t === '') continue;
    const h = /^\d{1,2}$/.test(t) ? Number(t) : NaN;
    if (!(h >= 0 && h <= 23)) throw new Error(`bad hour "${part}" in "${spec}"`);
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

/** The form check of `messageDelayLevel`: parsable, at least one level, none negative. */
function checkDelayLevels(spec: string): void {
  const levels = parseDelayLevels(spec);
  if (levels.length === 0) throw new Error('no levels given');
  if (levels.some((ms) => !(ms >= 0))) throw new Error(`negative delay in "${spec}"`);
}
