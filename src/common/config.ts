import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TLS_SCHEMA } from '../remoting/tls.js';
import { GRPC_SCHEMA } from '../grpc/config.js';
import { STORE_SCHEMA } from '../store/index.js';
import { DLEDGER_SCHEMA } from './config-dledger.js';
import { validateTopicName } from '../broker/topic/topic-config.js';
import { ConfigError, type ConfigOf, type Schema } from './config-schema.js';

export { ConfigError, applySettings, defaults, pick, restartOnlyChanges } from './config-schema.js';
export type { ConfigOf, KeySpec, Schema } from './config-schema.js';

const home = os.homedir();

/** A value the broker writes into message properties: the separators \u0001 and \u0002 would split it. */
function checkPropertyValue(value: string): void {
  if (!value || /[\u0001\u0002]/.test(value)) throw new Error('must be non-empty, without the characters \\u0001 and \\u0002');
}

/** Java TopicValidator's rule for a topic name (the one topic creation applies). */
function checkTopicName(value: string): void {
  const wrong = validateTopicName(value);
  if (wrong) throw new Error(wrong);
}

/**
 * What peers can make a server hold (remoting/buffer-budget.ts), for the broker's and the nameserver's servers.
 * The official broker bounds none of it in total; its nearest keys are NettyServerConfig writeBufferHighWaterMark
 * / writeBufferLowWaterMark (Netty's 64 KiB / 32 KiB when unset), serverSocketSndBufSize / serverSocketRcvBufSize
 * (the kernel's buffers) and BrokerConfig enableNetWorkFlowControl (5.x: pulls on an unwritable channel dropped).
 */
const REMOTING_MEMORY_SCHEMA = {
  // Java's name. Above it a connection is not writable: reading from it stops (as Java 5.x turns autoRead off) and
  // its pulls wait until it drained. Ours is higher than Netty's 64 KiB so one pull answer (256 KiB in memory)
  // does not make a reading consumer unwritable; it becomes writable again when its buffer is empty.
  writeBufferHighWaterMark: { type: 'int', default: 1048576, min: 16384, live: true },
  // Ours: partial inbound frames plus unsent outbound bytes, all connections together; past it the connection
  // stalled longest (oldest partial frame or oldest undrained output) is closed.
  remotingBufferBudgetBytes: { type: 'int', default: 268435456, min: 16777216, live: true },
  // Ours: a frame must arrive whole this long after its first byte (Java has only the 120 s idle timeout).
  frameReadTimeoutMillis: { type: 'int', default: 60000, min: 1000, live: true },
} as const satisfies Schema;

/** The remoting memory limits of a server, read live from its config (updateBrokerConfig applies at once). */
export function bufferLimitsOf(c: { writeBufferHighWaterMark: number; remotingBufferBudgetBytes: number; frameReadTimeoutMillis: number }): {
  readonly budgetBytes: number; readonly highWaterMarkBytes: number; readonly frameReadTimeoutMs: number;
} {
  return {
    get budgetBytes() {
      return c.remotingBufferBudgetBytes;
    },
    get highWaterMarkBytes() {
      return c.writeBufferHighWaterMark;
    },
    get frameReadTimeoutMs() {
      return c.frameReadTimeoutMillis;
    },
  };
}

/**
 * Broker keys (Java BrokerConfig and a few MessageStoreConfig keys the broker uses itself), with the Java names
 * and (unless noted) the Java defaults. `live` keys may change through mqadmin updateBrokerConfig; the others
 * need a restart. The store's keys follow (STORE_SCHEMA, store/config.ts).
 */
const BROKER_OWN_SCHEMA = {
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
  autoCreateTopicEnable: { type: 'bool', default: true, live: true },
  autoCreateSubscriptionGroup: { type: 'bool', default: true, live: true },
  // The queue count of TBW102, created at start.
  defaultTopicQueueNums: { type: 'int', default: 8, min: 1, max: 1024 },
  brokerPermission: { type: 'int', default: 6, min: 0, max: 15, live: true },
  longPollingEnable: { type: 'bool', default: true, live: true },
  shortPollingTimeMills: { type: 'int', default: 1000, min: 0, live: true },
  registerNameServerPeriod: { type: 'int', default: 30000, min: 10000, max: 60000 },
  registerBrokerTimeoutMills: { type: 'int', default: 24000, min: 100, live: true },
  flushConsumerOffsetInterval: { type: 'int', default: 5000, min: 100 },
  clusterTopicEnable: { type: 'bool', default: true },
  brokerTopicEnable: { type: 'bool', default: true },
  enablePropertyFilter: { type: 'bool', default: false, live: true },
  // Judge %RETRY% messages by the group's SQL92 subscription of their original topic (ExpressionForRetryMessageFilter).
  filterSupportRetry: { type: 'bool', default: false, live: true },
  // 5.x timer messages (MessageStoreConfig): TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS. Java snaps the
  // precision down to one of 100, 200, 500, 1000 ms; so does the timer service.
  timerWheelEnable: { type: 'bool', default: true },
  timerMaxDelaySec: { type: 'int', default: 259200, min: 1, live: true },
  timerPrecisionMs: { type: 'int', default: 1000, min: 1 },
  // RecallMessage (5.3.x BrokerConfig; its default is false: refused with NO_PERMISSION unless enabled).
  recallMessageEnable: { type: 'bool', default: false, live: true },
  allowRecallWhenBrokerNotWriteable: { type: 'bool', default: true, live: true },
  // Cold-data flow control (5.x; broker/coldctr/cold-data-flow-control.ts). Java keeps the first and the last in
  // MessageStoreConfig, the rest in BrokerConfig; coldDataScanEnable (mincore on mapped files) is not ours.
  coldDataFlowControlEnable: { type: 'bool', default: false, live: true },
  coldCtrStrategyEnable: { type: 'bool', default: false, live: true },
  usePIDColdCtrStrategy: { type: 'bool', default: true, live: true },
  /** Cold bytes a group may read per 5 s before its cold pulls are slowed (Java 3 MiB). */
  cgColdReadThreshold: { type: 'int', default: 3 * 1024 * 1024, min: 0, live: true },
  /** Cold bytes all groups together may read per 5 s (Java 100 MiB). */
  globalColdReadThreshold: { type: 'int', default: 100 * 1024 * 1024, min: 0, live: true },
  /** Data further behind the log's end than this percentage of RAM is cold (Java 26). */
  accessMessageInMemoryHotRatio: { type: 'int', default: 26, min: 0, max: 100, live: true },
  // Message traces (Java BrokerConfig). Every message the broker stores from a send gets MSG_REGION=regionId and
  // TRACE_ON=traceOn, as a 5.x broker does (the 5.x clients' consume traces are dropped without a region).
  regionId: { type: 'string', default: 'DefaultRegion', live: true, check: checkPropertyValue },
  traceOn: { type: 'bool', default: true, live: true },
  // traceTopicEnable creates msgTraceTopicName (one read and one write queue, a system topic) at start.
  traceTopicEnable: { type: 'bool', default: false },
  msgTraceTopicName: { type: 'string', default: 'RMQ_SYS_TRACE_TOPIC', check: checkTopicName },
  // MessageStoreConfig.defaultQueryMaxNum: the answer size of a unique-key QUERY_MESSAGE.
  defaultQueryMaxNum: { type: 'int', default: 32, min: 1, max: 100000, live: true },
  // Java: rocketmq.broker.rebalance.lockMaxLiveTime
  lockMaxLiveTimeMills: { type: 'int', default: 60000, min: 1000, live: true },
  // Transactions (Java BrokerConfig). transactionCheckInterval is 30000 in 5.x, 60000 in 4.9.x.
  transactionCheckInterval: { type: 'int', default: 30000, min: 100, live: true },
  transactionTimeOut: { type: 'int', default: 6000, min: 0, live: true },
  transactionCheckMax: { type: 'int', default: 15, min: 1, live: true },
  rejectTransactionMessage: { type: 'bool', default: false, live: true },
  // POP consumption (Java BrokerConfig). Revive queues (rmq_sys_REVIVE_LOG_<cluster>) are created at start.
  reviveQueueNum: { type: 'int', default: 8, min: 1, max: 512 },
  reviveInterval: { type: 'int', default: 1000, min: 10, live: true },
  reviveMaxSlow: { type: 'int', default: 3, min: 1, live: true },
  reviveScanTime: { type: 'int', default: 10000, min: 100, live: true },
  popFromRetryProbability: { type: 'int', default: 20, min: 0, max: 100, live: true },
  popPollingSize: { type: 'int', default: 1024, min: 0, live: true },
  maxPopPollingSize: { type: 'int', default: 100000, min: 0, live: true },
  popLongPollingForceNotifyInterval: { type: 'int', default: 800, min: 0, live: true },
  enableRetryTopicV2: { type: 'bool', default: false, live: true },
  retrieveMessageFromPopRetryTopicV1: { type: 'bool', default: true, live: true },
  popResponseReturnActualRetryTopic: { type: 'bool', default: false, live: true },
  initPopOffsetByCheckMsgInMem: { type: 'bool', default: true, live: true },
  // QUERY_ASSIGNMENT: the mode of (topic, group) pairs nobody set with SET_MESSAGE_REQUEST_MODE
  defaultMessageRequestMode: { type: 'enum', default: 'PULL', values: ['PULL', 'POP'], live: true },
  defaultPopShareQueueNum: { type: 'int', default: -1, live: true },
  serverLoadBalancerEnable: { type: 'bool', default: true, live: true },
  // ACL 1.0 (4.x, Java BrokerConfig.aclEnable): every request is checked against {rocketmqHome}/{rocketmq.acl.plain.file}.
  aclEnable: { type: 'bool', default: false },
  // Java: -Drocketmq.home.dir / ROCKETMQ_HOME.
  rocketmqHome: { type: 'string', default: process.env.ROCKETMQ_HOME ?? path.join(home, 'rocketmq') },
  // Java system property: the ACL file, relative to rocketmqHome unless absolute.
  'rocketmq.acl.plain.file': { type: 'string', default: 'conf/plain_acl.yml' },
  // ACL 2.0 (5.x AuthConfig, read from broker.conf as Java does): users and ACL policies.
  authenticationEnabled: { type: 'bool', default: false },
  authorizationEnabled: { type: 'bool', default: false },
  // A super user created at start when absent: {"username":"rocketmq","password":"12345678"}.
  initAuthenticationUser: { type: 'string', default: '' },
  // Request codes exempt from the checks, comma-separated.
  authenticationWhitelist: { type: 'string', default: '' },
  authorizationWhitelist: { type: 'string', default: '' },
  // Where users and ACLs are kept (ours: auth.json; Java: RocksDB); default {storePathRootDir}/config.
  authConfigPath: { type: 'string', default: '' },
  // Metrics (Java BrokerConfig): PROM serves Prometheus text on metricsPromExporterHost:Port ('' = all interfaces,
  // as Java). OTLP_GRPC and LOG are not supported (logged, metrics stay off).
  metricsExporterType: { type: 'enum', default: 'DISABLE', values: ['DISABLE', 'OTLP_GRPC', 'PROM', 'LOG'] },
  metricsPromExporterHost: { type: 'string', default: '' },
  metricsPromExporterPort: { type: 'int', default: 5557, min: 0, max: 65535 },
  // The consumer lag gauges count only the messages a TAG / SQL92 subscription takes, estimated from the consume
  // queues (at most 20,000 entries read per queue, Java MessageStore.estimateMessageCount); false: every message.
  estimateAccumulation: { type: 'bool', default: true, live: true },
  // A consumer group known only from its pulls or pops (no heartbeat) keeps a subscription this long after the last one.
  subscriptionExpiredTimeout: { type: 'int', default: 600000, min: 1000, live: true },
  // ours: the admin web page. -1 = off (default); 0 = a free port; bound to adminWebHost.
  adminWebPort: { type: 'int', default: -1, min: -1, max: 65535 },
  adminWebHost: { type: 'string', default: '127.0.0.1' },
  // Master/slave (brokerRole and the HA keys are store keys, store/config.ts).
  /** Slaves serve pulls and consumers are told to read from them when the master is slow (Java false). */
  slaveReadEnable: { type: 'bool', default: false, live: true },
  /**
   * Ours: which official broker's master/slave behaviour to follow where 4.9.8 and 5.3.3 differ (SYNC_MASTER waits
   * and SLAVE_NOT_AVAILABLE, slave refusals, slave pulls, metadata sync schedule). README "High availability".
   */
  haSemantics: { type: 'enum', default: '5.3.3', values: ['5.3.3', '4.9.8'] },
  /** Ours: slave metadata sync every this many ms instead of the official schedule (0 = official: 60 s in 5.3.3, 10 s in 4.9.8). */
  slaveSyncAllIntervalMs: { type: 'int', default: 0, min: 0, live: true },
  ...REMOTING_MEMORY_SCHEMA,
} as const satisfies Schema;

/** Every key broker.conf can set: the broker's own, the store's, DLedger mode's, TLS and the gRPC endpoint's. */
export const BROKER_SCHEMA = {
  ...BROKER_OWN_SCHEMA, ...STORE_SCHEMA, ...DLEDGER_SCHEMA, ...TLS_SCHEMA, ...GRPC_SCHEMA,
} as const satisfies Schema;

export const NAMESRV_SCHEMA = {
  listenPort: { type: 'int', default: 9876, min: 0, max: 65535 },
  kvConfigPath: { type: 'string', default: path.join(home, 'namesrv', 'kvConfig.json') },
  scanNotActiveBrokerInterval: { type: 'int', default: 5000, min: 100 },
  brokerChannelExpiredTime: { type: 'int', default: 120000, min: 1000 },
  orderMessageEnable: { type: 'bool', default: false },
  ...TLS_SCHEMA,
  ...REMOTING_MEMORY_SCHEMA,
} as const satisfies Schema;

export type BrokerConfig = ConfigOf<typeof BROKER_SCHEMA>;
export type NamesrvConfig = ConfigOf<typeof NAMESRV_SCHEMA>;

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
