import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A bad configuration value: names the key; the CLI prints it on one line and exits with status 2. */
export class ConfigError extends Error {}

type KeySpec =
  | { type: 'int'; default: number; min?: number; max?: number }
  | { type: 'bool'; default: boolean }
  | { type: 'string'; default: string }
  | { type: 'enum'; default: string; values: readonly string[] };

export type Schema = Record<string, KeySpec>;

type ValueOf<S extends KeySpec> = S extends { type: 'int' } ? number : S extends { type: 'bool' } ? boolean : string;
export type ConfigOf<S extends Schema> = { -readonly [K in keyof S]: ValueOf<S[K]> };

const home = os.homedir();

/** Broker + store keys, with the Java names and (unless noted) the Java defaults. */
export const BROKER_SCHEMA = {
  brokerClusterName: { type: 'string', default: 'DefaultCluster' },
  brokerName: { type: 'string', default: 'broker-a' },
  brokerId: { type: 'int', default: 0, min: 0 },
  namesrvAddr: { type: 'string', default: '' },
  // Java defaults to the host's first non-loopback address; we default to loopback so dev mode is safe.
  brokerIP1: { type: 'string', default: '127.0.0.1' },
  brokerIP2: { type: 'string', default: '' },
  listenPort: { type: 'int', default: 10911, min: 0, max: 65535 },
  // The VIP channel (Java binds listenPort - 2). 0 = listenPort - 2, -1 = off.
  fastListenPort: { type: 'int', default: 0, min: -1, max: 65535 },
  storePathRootDir: { type: 'string', default: path.join(home, 'store') },
  storePathCommitLog: { type: 'string', default: '' },
  mappedFileSizeCommitLog: { type: 'int', default: 1073741824, min: 4096 },
  mappedFileSizeConsumeQueue: { type: 'int', default: 6000000, min: 20 },
  flushDiskType: { type: 'enum', default: 'ASYNC_FLUSH', values: ['ASYNC_FLUSH', 'SYNC_FLUSH'] },
  flushIntervalCommitLog: { type: 'int', default: 500, min: 1 },
  flushCommitLogLeastPages: { type: 'int', default: 4, min: 0 },
  flushIntervalConsumeQueue: { type: 'int', default: 1000, min: 1 },
  syncFlushTimeout: { type: 'int', default: 5000, min: 1 },
  maxMessageSize: { type: 'int', default: 4194304, min: 1024, max: 16 * 1024 * 1024 - 65536 },
  // Retention and the disk guard (MessageStoreConfig). The ratios are percentages; the store clamps them as
  // Java does (max used 10-95, forced clean 30-85, warning 35-90).
  fileReservedTime: { type: 'int', default: 72, min: 0 },
  deleteWhen: { type: 'string', default: '04' },
  diskMaxUsedSpaceRatio: { type: 'int', default: 75, min: 0, max: 100 },
  diskSpaceCleanForciblyRatio: { type: 'int', default: 85, min: 0, max: 100 },
  diskSpaceWarningLevelRatio: { type: 'int', default: 90, min: 0, max: 100 },
  cleanFileForciblyEnable: { type: 'bool', default: true },
  cleanResourceInterval: { type: 'int', default: 10000, min: 100 },
  brokerRole: { type: 'enum', default: 'ASYNC_MASTER', values: ['ASYNC_MASTER', 'SYNC_MASTER', 'SLAVE'] },
  autoCreateTopicEnable: { type: 'bool', default: true },
  autoCreateSubscriptionGroup: { type: 'bool', default: true },
  defaultTopicQueueNums: { type: 'int', default: 8, min: 1, max: 1024 },
  brokerPermission: { type: 'int', default: 6, min: 0, max: 15 },
  longPollingEnable: { type: 'bool', default: true },
  shortPollingTimeMills: { type: 'int', default: 1000, min: 0 },
  maxTransferBytesOnMessageInMemory: { type: 'int', default: 262144, min: 1 },
  maxTransferCountOnMessageInMemory: { type: 'int', default: 32, min: 1 },
  registerNameServerPeriod: { type: 'int', default: 30000, min: 10000, max: 60000 },
  registerBrokerTimeoutMills: { type: 'int', default: 24000, min: 100 },
  flushConsumerOffsetInterval: { type: 'int', default: 5000, min: 100 },
  clusterTopicEnable: { type: 'bool', default: true },
  brokerTopicEnable: { type: 'bool', default: true },
  enablePropertyFilter: { type: 'bool', default: false },
  // Judge %RETRY% messages by the group's SQL92 subscription of their original topic (ExpressionForRetryMessageFilter).
  filterSupportRetry: { type: 'bool', default: false },
  messageDelayLevel: { type: 'string', default: '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h' },
  // 5.x timer messages (MessageStoreConfig): TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS. Java snaps the
  // precision down to one of 100, 200, 500, 1000 ms; so does the timer service.
  timerWheelEnable: { type: 'bool', default: true },
  timerMaxDelaySec: { type: 'int', default: 259200, min: 1 },
  timerPrecisionMs: { type: 'int', default: 1000, min: 1 },
  // Key index and QUERY_MESSAGE (Java MessageStoreConfig). An index file is 40 + 4·slots + 20·entries bytes (sparse).
  messageIndexEnable: { type: 'bool', default: true },
  maxHashSlotNum: { type: 'int', default: 5000000, min: 1, max: 100000000 },
  maxIndexNum: { type: 'int', default: 20000000, min: 2, max: 100000000 },
  messageIndexSafe: { type: 'bool', default: false },
  maxMsgsNumBatch: { type: 'int', default: 64, min: 1, max: 100000 },
  defaultQueryMaxNum: { type: 'int', default: 32, min: 1, max: 100000 },
  // Java: rocketmq.broker.rebalance.lockMaxLiveTime
  lockMaxLiveTimeMills: { type: 'int', default: 60000, min: 1000 },
  // Transactions (Java BrokerConfig). transactionCheckInterval is 30000 in 5.x, 60000 in 4.9.x.
  transactionCheckInterval: { type: 'int', default: 30000, min: 100 },
  transactionTimeOut: { type: 'int', default: 6000, min: 0 },
  transactionCheckMax: { type: 'int', default: 15, min: 1 },
  rejectTransactionMessage: { type: 'bool', default: false },
} as const satisfies Schema;

export const NAMESRV_SCHEMA = {
  listenPort: { type: 'int', default: 9876, min: 0, max: 65535 },
  kvConfigPath: { type: 'string', default: path.join(home, 'namesrv', 'kvConfig.json') },
  scanNotActiveBrokerInterval: { type: 'int', default: 5000, min: 100 },
  brokerChannelExpiredTime: { type: 'int', default: 120000, min: 1000 },
  orderMessageEnable: { type: 'bool', default: false },
} as const satisfies Schema;

export type BrokerConfig = ConfigOf<typeof BROKER_SCHEMA>;
export type NamesrvConfig = ConfigOf<typeof NAMESRV_SCHEMA>;

export function defaults<S extends Schema>(schema: S): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  for (const [k, spec] of Object.entries(schema)) out[k] = spec.default;
  return out as ConfigOf<S>;
}

/**
 * Applies string settings (from a properties file or `--key=value` flags) onto a config. Keys the schema
 * does not know are returned (Java ignores them too); a known key with a bad value throws ConfigError.
 */
export function applySettings<S extends Schema>(schema: S, target: ConfigOf<S>, settings: Record<string, string>): string[] {
  const unknown: string[] = [];
  const t = target as Record<string, unknown>;
  for (const [key, raw] of Object.entries(settings)) {
    const spec = schema[key];
    if (!spec) {
      unknown.push(key);
      continue;
    }
    const value = raw.trim();
    switch (spec.type) {
      case 'int': {
        if (!/^-?\d+$/.test(value)) throw new ConfigError(`${key}: expected an integer, got "${raw}"`);
        const n = Number(value);
        if (spec.min !== undefined && n < spec.min) throw new ConfigError(`${key}: ${n} is below the minimum ${spec.min}`);
        if (spec.max !== undefined && n > spec.max) throw new ConfigError(`${key}: ${n} is above the maximum ${spec.max}`);
        t[key] = n;
        break;
      }
      case 'bool':
        if (!/^(true|false)$/i.test(value)) throw new ConfigError(`${key}: expected true or false, got "${raw}"`);
        t[key] = value.toLowerCase() === 'true';
        break;
      case 'enum':
        if (!spec.values.includes(value)) {
          throw new ConfigError(`${key}: expected one of ${spec.values.join(', ')}, got "${raw}"`);
        }
        t[key] = value;
        break;
      default:
        t[key] = value;
    }
  }
  return unknown;
}

/** Reads a Java properties file (`key=value` or `key: value`, `#`/`!` comments). */
export function readPropertiesFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  return parseProperties(text);
}

export function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (!m) {
      out[line] = '';
      continue;
    }
    out[m[1]] = m[2];
  }
  return out;
}

/** Expands a leading `~` the way users expect from broker.conf examples. */
export function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(home, p.slice(1)) : p;
}
