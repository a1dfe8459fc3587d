// What every send passes before it is stored, whatever transport brought it: Java AbstractSendMessageProcessor
// msgCheck (permission, topic name, auto-creation, queue id), the size checks, and the building of the message the
// store takes (MessageExtBrokerInner) with the properties the broker adds.
import { javaStringHashCode } from '../../common/java-hash.js';
import { MessageConst, readSendProperties, tracePropertiesSuffix, withTraceProperties } from '../../common/message-properties.js';
import { ResponseCode } from '../../common/response-code.js';
import type { HostAddress, MessageToStore } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { type Refusal, refusal } from '../outcome.js';
import { createUniqueKey } from '../message-id.js';
import { RETRY_GROUP_TOPIC_PREFIX, SystemTopic, type TopicConfig, isWriteable, validateTopicName } from '../topic/topic-config.js';

/** The fields of a send as every transport supplies them (Java SendMessageRequestHeader). */
export interface SendHeader {
  producerGroup: string;
  topic: string;
  defaultTopic: string;
  defaultTopicQueueNums: number;
  /** Negative: the broker picks a queue. */
  queueId: number;
  sysFlag: number;
  bornTimestamp: number;
  flag: number;
  properties: string;
  reconsumeTimes: number;
  maxReconsumeTimes: number | undefined;
  batch: boolean;
}

const MAX_PROPERTIES_BYTES = 32767;

/** Topics producers may not write to (Java TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET). */
const NOT_ALLOWED_SEND_TOPICS = new Set<string>([
  SystemTopic.SCHEDULE_TOPIC,
  SystemTopic.TRANS_HALF,
  SystemTopic.TRANS_OP_HALF,
  SystemTopic.TRANS_CHECK_MAX_TIME,
  SystemTopic.SELF_TEST,
  SystemTopic.OFFSET_MOVED_EVENT,
]);

/** Java AbstractSendMessageProcessor.msgCheck; `peer` names the producer in the remark of a missing topic. */
export function checkMessage(ctx: BrokerContext, header: SendHeader, peer: string): TopicConfig | Refusal {
  const { config } = ctx;
  if (!isWriteable(config.brokerPermission)) {
    return refusal(ResponseCode.NO_PERMISSION, `the broker[${config.brokerIP1}] sending message is forbidden`);
  }
  const bad = validateTopicName(header.topic);
  if (bad) return refusal(ResponseCode.SYSTEM_ERROR, bad);
  if (NOT_ALLOWED_SEND_TOPICS.has(header.topic)) {
    return refusal(ResponseCode.NO_PERMISSION, `Sending message to topic[${header.topic}] is forbidden.`);
  }
  let tc = ctx.topicConfigManager.get(header.topic);
  if (!tc) {
    if (header.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
      const group = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(header.topic.slice(RETRY_GROUP_TOPIC_PREFIX.length));
      if (group) tc = ctx.topicConfigManager.createTopicIfAbsent(header.topic, Math.max(1, group.retryQueueNums ?? 1), 6);
    } else {
      tc = ctx.topicConfigManager.createTopicInSendMessageMethod(header.topic, header.defaultTopic, header.defaultTopicQueueNums, 0);
    }
    if (tc) void ctx.registerBrokerAll();
  }
  if (!tc) {
    return refusal(
      ResponseCode.TOPIC_NOT_EXIST,
      `topic[${header.topic}] not exist, apply first please! (autoCreateTopicEnable=${config.autoCreateTopicEnable}, producer ${peer})`,
    );
  }
  if (!isWriteable(tc.perm)) {
    return refusal(ResponseCode.NO_PERMISSION, `the topic[${header.topic}] sending message is forbidden`);
  }
  const queueMax = Math.max(tc.writeQueueNums, tc.readQueueNums);
  if (header.queueId >= queueMax) {
    return refusal(
      ResponseCode.SYSTEM_ERROR,
      `request queueId[${header.queueId}] is illegal, topic:[${header.topic}] writeQueueNums:[${tc.writeQueueNums}] readQueueNums:[${tc.readQueueNums}]`,
    );
  }
  // The same name as the config's interned object (the table's key): the store's maps then find it by pointer.
  header.topic = tc.topicName;
  return tc;
}

export function checkSizes(ctx: BrokerContext, bodyBytes: number, properties: string): Refusal | undefined {
  if (bodyBytes > ctx.config.maxMessageSize) {
    return refusal(ResponseCode.MESSAGE_ILLEGAL, `the message body size ${bodyBytes} bytes is larger than maxMessageSize ${ctx.config.maxMessageSize}`);
  }
  // A UTF-16 unit takes at most 3 UTF-8 bytes: a short string cannot be too long, no need to measure it.
  if (properties.length * 3 <= MAX_PROPERTIES_BYTES) return undefined;
  const propBytes = Buffer.byteLength(properties, 'utf8');
  if (propBytes > MAX_PROPERTIES_BYTES) {
    return refusal(ResponseCode.MESSAGE_ILLEGAL, `the message properties size ${propBytes} bytes is larger than ${MAX_PROPERTIES_BYTES}`);
  }
  return undefined;
}

let clusterName = '';
let clusterPropertyText = '';
/** `CLUSTER\x01<name>\x02`, built once per cluster name rather than once per message. */
function clusterProperty(name: string): string {
  if (name !== clusterName) {
    clusterName = name;
    clusterPropertyText = `${MessageConst.CLUSTER}\u0001${name}\u0002`;
  }
  return clusterPropertyText;
}

let traceSuffixRegion: string | undefined;
let traceSuffixOn = true;
let traceSuffixText = '';
/** MSG_REGION and TRACE_ON as the broker sets them, built once per setting rather than once per message. */
function traceSuffix(regionId: string, traceOn: boolean): string {
  if (regionId !== traceSuffixRegion || traceOn !== traceSuffixOn) {
    traceSuffixRegion = regionId;
    traceSuffixOn = traceOn;
    traceSuffixText = tracePropertiesSuffix(regionId, traceOn);
  }
  return traceSuffixText;
}

/**
 * The message the store takes, with UNIQ_KEY (when the producer set none), CLUSTER, MSG_REGION and TRACE_ON added
 * as a 5.x broker does.
 */
export function buildMessage(
  ctx: BrokerContext,
  header: SendHeader,
  queueId: number,
  flag: number,
  body: Buffer,
  properties: string,
  bornHost: HostAddress,
  storeHost: HostAddress,
): MessageToStore {
  const { tags, keys, uniqKey: clientKey, cluster, traceSet } = readSendProperties(properties);
  let uniqKey = clientKey;
  let props = properties;
  if (props.length > 0 && !props.endsWith('\u0002')) props += '\u0002';
  if (!uniqKey) {
    // A 5.x broker gives messages without a client id one (ali-ons sets none), so key queries work.
    uniqKey = createUniqueKey();
    props += `${MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX}\u0001${uniqKey}\u0002`;
  }
  if (cluster === undefined) props += clusterProperty(ctx.config.brokerClusterName);
  props = withTraceProperties(props, traceSet, traceSuffix(ctx.config.regionId, ctx.config.traceOn));
  return {
    topic: header.topic,
    queueId,
    flag,
    body,
    propertiesString: props,
    tagsCode: tags ? javaStringHashCode(tags) : 0,
    keys,
    uniqKey,
    sysFlag: header.sysFlag,
    bornTimestamp: header.bornTimestamp,
    bornHost,
    storeHost,
    reconsumeTimes: header.reconsumeTimes,
    preparedTransactionOffset: 0,
  };
}
