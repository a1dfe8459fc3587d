// Public entry of the store, and the only store module code outside src/store imports: createMessageStore, the
// MessageStore interface and its types, and the record/topic helpers the broker shares with the store.
import pino, { type Logger } from 'pino';
import { resolveStoreConfig, type StoreConfigInput } from './config.js';
import { DefaultMessageStore } from './message-store.js';
import type { StoreEnv } from './cleanup.js';
import type { CommitLogFactory } from './commit-log/port.js';

export type * from './types.js';
export {
  resolveStoreConfig, parseDelayLevels, STORE_SCHEMA, STORE_CONFIG_DEFAULTS, DEFAULT_STORE_PATH_ROOT_DIR,
  DEFAULT_MESSAGE_DELAY_LEVEL, CQ_UNIT_SIZE,
} from './config.js';
export type { StoreConfig, StoreConfigInput, FlushDiskType } from './config.js';
export { DefaultMessageStore, type StoreStats, type RecoveryStats } from './message-store.js';
export type {
  CommitLogDeps, CommitLogFactory, CommitLogFile, CommitLogPort, CommitLogStats, PreparedMessage, QueueOffsetCounter,
  ReplicaAppendRefusal, WrittenRecord,
} from './commit-log/port.js';
export { CommitLog, localCommitLog } from './commit-log/commit-log.js';
export { StoreCleaner, diskUsedRatio, DEFAULT_STORE_ENV, type StoreEnv, type StatFsLike, type CleanupRun } from './cleanup.js';
export { MAX_PULL_TOTAL_BYTES } from './get-message.js';
export { tagsCodeOf, tagsCodeOfTags, SCHEDULE_TOPIC } from './dispatcher.js';
export { getProperty, indexKeysOf } from './record-properties.js';
export { CQ_PLACEHOLDER_SIZE } from './consume-queue/consume-queue.js';
export { TIMER_OUT_MS, TIMER_TOPIC, timerActionMs, timerTagsCode } from './timer-topic.js';
export * from './record.js';
export { crc32, bodyCrc32 } from './crc32.js';
export { setStoreFs, fs as storeFs, type StoreFs } from './io.js';

/**
 * Creates (but does not start) a store. Missing config keys take the Java defaults; call start() before use
 * and shutdown() to close cleanly.
 */
export function createMessageStore(
  config: StoreConfigInput = {}, logger?: Logger, env?: Partial<StoreEnv>, commitLogFactory?: CommitLogFactory,
): DefaultMessageStore {
  return new DefaultMessageStore(resolveStoreConfig(config), logger ?? pino({ level: 'silent' }), env, commitLogFactory);
}
