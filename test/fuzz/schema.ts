// What the fuzzer knows of each request code: its header fields with their Java types (the Java *RequestHeader
// classes; field names as our processors read them) and the kind of body it carries. Unknown codes are fuzzed too.
import { RequestCode as C } from '../../src/common/request-code.js';

export type FieldType = 'int' | 'long' | 'bool' | 'topic' | 'group' | 'string' | 'properties' | 'msgId' | 'addr' | 'clientId' | 'recallHandle';
export type BodyKind = 'none' | 'message' | 'batch' | 'heartbeat' | 'lock' | 'groupConfig' | 'clientConfig' | 'register'
  | 'properties' | 'json';

export interface CodeSpec {
  fields: Readonly<Record<string, FieldType>>;
  body: BodyKind;
  /** The V2 one-letter keys (SendMessageRequestHeaderV2) stand for these fields. */
  letters?: Readonly<Record<string, string>>;
}

const SEND_FIELDS = {
  producerGroup: 'group', topic: 'topic', defaultTopic: 'topic', defaultTopicQueueNums: 'int', queueId: 'int', sysFlag: 'int',
  bornTimestamp: 'long', flag: 'int', properties: 'properties', reconsumeTimes: 'int', unitMode: 'bool',
  maxReconsumeTimes: 'int', batch: 'bool', brokerName: 'string',
} as const;
export const V2_LETTERS: Readonly<Record<string, string>> = {
  producerGroup: 'a', topic: 'b', defaultTopic: 'c', defaultTopicQueueNums: 'd', queueId: 'e', sysFlag: 'f',
  bornTimestamp: 'g', flag: 'h', properties: 'i', reconsumeTimes: 'j', unitMode: 'k', maxReconsumeTimes: 'l',
  batch: 'm', brokerName: 'n',
};
const PULL_FIELDS = {
  consumerGroup: 'group', topic: 'topic', queueId: 'int', queueOffset: 'long', maxMsgNums: 'int', sysFlag: 'int',
  commitOffset: 'long', suspendTimeoutMillis: 'long', subscription: 'string', subVersion: 'long', expressionType: 'string',
} as const;
const TOPIC_QUEUE = { topic: 'topic', queueId: 'int' } as const;

export const CODES: ReadonlyMap<number, CodeSpec> = new Map<number, CodeSpec>([
  [C.SEND_MESSAGE, { fields: SEND_FIELDS, body: 'message' }],
  [C.SEND_MESSAGE_V2, { fields: SEND_FIELDS, body: 'message', letters: V2_LETTERS }],
  [C.SEND_BATCH_MESSAGE, { fields: SEND_FIELDS, body: 'batch', letters: V2_LETTERS }],
  [C.SEND_REPLY_MESSAGE, { fields: SEND_FIELDS, body: 'message' }],
  [C.SEND_REPLY_MESSAGE_V2, { fields: SEND_FIELDS, body: 'message', letters: V2_LETTERS }],
  [C.PULL_MESSAGE, { fields: PULL_FIELDS, body: 'none' }],
  [C.RECALL_MESSAGE, { fields: { producerGroup: 'group', topic: 'topic', recallHandle: 'recallHandle' }, body: 'none' }],
  [C.UPDATE_AND_GET_GROUP_FORBIDDEN, { fields: { group: 'group', topic: 'topic', readable: 'bool' }, body: 'none' }],
  [C.UPDATE_COLD_DATA_FLOW_CTR_CONFIG, { fields: {}, body: 'properties' }],
  [C.REMOVE_COLD_DATA_FLOW_CTR_CONFIG, { fields: {}, body: 'properties' }],
  [C.GET_COLD_DATA_FLOW_CTR_INFO, { fields: {}, body: 'none' }],
  [C.SET_COMMITLOG_READ_MODE, { fields: { READ_AHEAD_MODE: 'int' }, body: 'none' }],
  [C.RESUME_CHECK_HALF_MESSAGE, { fields: { topic: 'topic', msgId: 'msgId' }, body: 'none' }],
  [C.LITE_PULL_MESSAGE, { fields: PULL_FIELDS, body: 'none' }],
  [C.QUERY_MESSAGE, { fields: { topic: 'topic', key: 'string', maxNum: 'int', beginTimestamp: 'long', endTimestamp: 'long' }, body: 'none' }],
  [C.VIEW_MESSAGE_BY_ID, { fields: { offset: 'long' }, body: 'none' }],
  [C.QUERY_CONSUMER_OFFSET, { fields: { consumerGroup: 'group', ...TOPIC_QUEUE, setZeroIfNotFound: 'bool' }, body: 'none' }],
  [C.UPDATE_CONSUMER_OFFSET, { fields: { consumerGroup: 'group', ...TOPIC_QUEUE, commitOffset: 'long' }, body: 'none' }],
  [C.SEARCH_OFFSET_BY_TIMESTAMP, { fields: { ...TOPIC_QUEUE, timestamp: 'long' }, body: 'none' }],
  [C.GET_MAX_OFFSET, { fields: TOPIC_QUEUE, body: 'none' }],
  [C.GET_MIN_OFFSET, { fields: TOPIC_QUEUE, body: 'none' }],
  [C.GET_EARLIEST_MSG_STORETIME, { fields: TOPIC_QUEUE, body: 'none' }],
  [C.HEART_BEAT, { fields: {}, body: 'heartbeat' }],
  [C.UNREGISTER_CLIENT, { fields: { clientID: 'clientId', producerGroup: 'group', consumerGroup: 'group' }, body: 'none' }],
  [C.CHECK_CLIENT_CONFIG, { fields: { clientId: 'clientId', group: 'group' }, body: 'clientConfig' }],
  [C.CONSUMER_SEND_MSG_BACK, { fields: { offset: 'long', group: 'group', delayLevel: 'int', originMsgId: 'msgId', originTopic: 'topic', unitMode: 'bool', maxReconsumeTimes: 'int' }, body: 'none' }],
  [C.END_TRANSACTION, { fields: { producerGroup: 'group', tranStateTableOffset: 'long', commitLogOffset: 'long', commitOrRollback: 'int', fromTransactionCheck: 'bool', msgId: 'msgId', transactionId: 'string' }, body: 'none' }],
  [C.GET_CONSUMER_LIST_BY_GROUP, { fields: { consumerGroup: 'group' }, body: 'none' }],
  [C.LOCK_BATCH_MQ, { fields: {}, body: 'lock' }],
  [C.UNLOCK_BATCH_MQ, { fields: {}, body: 'lock' }],
  [C.UPDATE_AND_CREATE_TOPIC, { fields: { topic: 'topic', defaultTopic: 'topic', readQueueNums: 'int', writeQueueNums: 'int', perm: 'int', topicFilterType: 'string', topicSysFlag: 'int', order: 'bool', attributes: 'string' }, body: 'none' }],
  [C.DELETE_TOPIC_IN_BROKER, { fields: { topic: 'topic' }, body: 'none' }],
  [C.GET_ALL_TOPIC_CONFIG, { fields: {}, body: 'none' }],
  [C.GET_TOPIC_CONFIG, { fields: { topic: 'topic' }, body: 'none' }],
  [C.GET_TOPIC_STATS_INFO, { fields: { topic: 'topic' }, body: 'none' }],
  [C.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, { fields: {}, body: 'none' }],
  [C.QUERY_TOPIC_CONSUME_BY_WHO, { fields: { topic: 'topic' }, body: 'none' }],
  [C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, { fields: {}, body: 'groupConfig' }],
  [C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, { fields: {}, body: 'none' }],
  [C.DELETE_SUBSCRIPTIONGROUP, { fields: { groupName: 'group', cleanOffset: 'bool' }, body: 'none' }],
  [C.GET_SUBSCRIPTIONGROUP_CONFIG, { fields: { group: 'group' }, body: 'none' }],
  [C.GET_CONSUME_STATS, { fields: { consumerGroup: 'group', topic: 'topic', topicList: 'string' }, body: 'none' }],
  [C.GET_CONSUMER_CONNECTION_LIST, { fields: { consumerGroup: 'group' }, body: 'none' }],
  [C.GET_PRODUCER_CONNECTION_LIST, { fields: { producerGroup: 'group' }, body: 'none' }],
  [C.GET_ALL_CONSUMER_OFFSET, { fields: {}, body: 'none' }],
  [C.GET_ALL_PRODUCER_INFO, { fields: {}, body: 'none' }],
  [C.QUERY_TOPICS_BY_CONSUMER, { fields: { group: 'group' }, body: 'none' }],
  [C.INVOKE_BROKER_TO_RESET_OFFSET, { fields: { topic: 'topic', group: 'group', timestamp: 'long', isForce: 'bool', queueId: 'int', offset: 'long' }, body: 'none' }],
  [C.CLONE_GROUP_OFFSET, { fields: { srcGroup: 'group', destGroup: 'group', topic: 'topic', offline: 'bool' }, body: 'none' }],
  [C.QUERY_CONSUME_TIME_SPAN, { fields: { topic: 'topic', group: 'group' }, body: 'none' }],
  [C.GET_CONSUMER_RUNNING_INFO, { fields: { consumerGroup: 'group', clientId: 'clientId', jstackEnable: 'bool' }, body: 'none' }],
  [C.CONSUME_MESSAGE_DIRECTLY, { fields: { consumerGroup: 'group', clientId: 'clientId', msgId: 'msgId', brokerName: 'string' }, body: 'none' }],
  [C.GET_BROKER_CONSUME_STATS, { fields: { isOrder: 'bool' }, body: 'none' }],
  [C.UPDATE_AND_CREATE_TOPIC_LIST, { fields: {}, body: 'none' }],
  [C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, { fields: {}, body: 'none' }],
  [C.VIEW_BROKER_STATS_DATA, { fields: { statsName: 'string', statsKey: 'string' }, body: 'none' }],
  [C.QUERY_CONSUME_QUEUE, { fields: { ...TOPIC_QUEUE, index: 'long', count: 'int', consumerGroup: 'group' }, body: 'none' }],
  [C.CLEAN_EXPIRED_CONSUMEQUEUE, { fields: {}, body: 'none' }],
  [C.CLEAN_UNUSED_TOPIC, { fields: {}, body: 'none' }],
  // Deletes due commit-log files on purpose: harmless here only because the config frames never make files due
  // (RESERVED_TIME_EDGES in generate.ts).
  [C.DELETE_EXPIRED_COMMITLOG, { fields: {}, body: 'none' }],
  [C.GET_BROKER_RUNTIME_INFO, { fields: {}, body: 'none' }],
  [C.GET_BROKER_CONFIG, { fields: {}, body: 'none' }],
  [C.UPDATE_BROKER_CONFIG, { fields: {}, body: 'properties' }],
  // Nameserver codes (sent to the nameserver port).
  [C.REGISTER_BROKER, { fields: { brokerName: 'string', brokerAddr: 'addr', clusterName: 'string', haServerAddr: 'addr', brokerId: 'long', compressed: 'bool', bodyCrc32: 'int' }, body: 'register' }],
  [C.UNREGISTER_BROKER, { fields: { brokerName: 'string', brokerAddr: 'addr', clusterName: 'string', brokerId: 'long' }, body: 'none' }],
  [C.BROKER_HEARTBEAT, { fields: { clusterName: 'string', brokerAddr: 'addr', brokerName: 'string', brokerId: 'long', heartbeatTimeoutMillis: 'long' }, body: 'none' }],
  [C.QUERY_DATA_VERSION, { fields: { brokerName: 'string', brokerAddr: 'addr', clusterName: 'string', brokerId: 'long' }, body: 'json' }],
  [C.GET_ROUTEINFO_BY_TOPIC, { fields: { topic: 'topic', acceptStandardJsonOnly: 'bool' }, body: 'none' }],
  [C.GET_BROKER_CLUSTER_INFO, { fields: {}, body: 'none' }],
  [C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, { fields: {}, body: 'none' }],
  [C.GET_TOPICS_BY_CLUSTER, { fields: { cluster: 'string' }, body: 'none' }],
  [C.GET_SYSTEM_TOPIC_LIST_FROM_NS, { fields: {}, body: 'none' }],
  [C.DELETE_TOPIC_IN_NAMESRV, { fields: { topic: 'topic', clusterName: 'string' }, body: 'none' }],
  [C.REGISTER_TOPIC_IN_NAMESRV, { fields: { topic: 'topic' }, body: 'json' }],
  [C.WIPE_WRITE_PERM_OF_BROKER, { fields: { brokerName: 'string' }, body: 'none' }],
  [C.ADD_WRITE_PERM_OF_BROKER, { fields: { brokerName: 'string' }, body: 'none' }],
  [C.PUT_KV_CONFIG, { fields: { namespace: 'string', key: 'string', value: 'string' }, body: 'none' }],
  [C.GET_KV_CONFIG, { fields: { namespace: 'string', key: 'string' }, body: 'none' }],
  [C.DELETE_KV_CONFIG, { fields: { namespace: 'string', key: 'string' }, body: 'none' }],
  [C.GET_KVLIST_BY_NAMESPACE, { fields: { namespace: 'string' }, body: 'none' }],
  [C.GET_NAMESRV_CONFIG, { fields: {}, body: 'none' }],
]);

/** Codes the nameserver serves; the rest go to the broker. */
export const NAMESRV_CODES: ReadonlySet<number> = new Set([
  C.REGISTER_BROKER, C.UNREGISTER_BROKER, C.BROKER_HEARTBEAT, C.QUERY_DATA_VERSION, C.GET_ROUTEINFO_BY_TOPIC,
  C.GET_BROKER_CLUSTER_INFO, C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, C.GET_TOPICS_BY_CLUSTER, C.GET_SYSTEM_TOPIC_LIST_FROM_NS,
  C.DELETE_TOPIC_IN_NAMESRV, C.REGISTER_TOPIC_IN_NAMESRV, C.WIPE_WRITE_PERM_OF_BROKER, C.ADD_WRITE_PERM_OF_BROKER,
  C.PUT_KV_CONFIG, C.GET_KV_CONFIG, C.DELETE_KV_CONFIG, C.GET_KVLIST_BY_NAMESPACE, C.GET_NAMESRV_CONFIG,
]);

/**
 * broker.conf keys UPDATE_BROKER_CONFIG may set to valid values without changing what the oracle checks
 * (durability, retention, permissions stay as they are); every other key is only sent with values the broker
 * must refuse, or unknown keys.
 */
export const SAFE_LIVE_KEYS: Readonly<Record<string, readonly string[]>> = {
  defaultQueryMaxNum: ['1', '32', '100000'],
  shortPollingTimeMills: ['0', '1000'],
  lockMaxLiveTimeMills: ['1000', '60000'],
  maxTransferCountOnMessageInMemory: ['1', '32'],
  maxFilterMessageSize: ['1', '16000'],
  enablePropertyFilter: ['true', 'false'],
  filterSupportRetry: ['true', 'false'],
  recallMessageEnable: ['true', 'false'],
  // with the default hot ratio (26 % of RAM) nothing the fuzzer writes is cold: the pulls the oracle makes are not slowed
  coldDataFlowControlEnable: ['true', 'false'],
  dataReadAheadEnable: ['true', 'false'],
};
