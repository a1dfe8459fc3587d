import { javaStringHashCode } from '../../common/java-hash.js';
import { MessageConst, encodeProperties, parseProperties, readSendProperties } from '../../common/message-properties.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import { type ProcessorTable, type RequestContext, sameProcessor } from '../../remoting/dispatcher.js';
import type { MessageToStore, PutResult } from '../../store/types.js';
import type { BrokerContext } from '../context.js';
import { createOffsetMessageId, createUniqueKey, parseHostAddress } from '../message-id.js';
import { RETRY_GROUP_TOPIC_PREFIX, SystemTopic, type TopicConfig, isWriteable, validateTopicName } from '../topic/topic-config.js';
import { ensureDlqTopic, maxReconsumeTimes } from '../retry/retry-policy.js';
import { isHalfMessageSend } from '../transaction/transactional-message-util.js';
import { putResultToResponse } from './put-status.js';

/** Where SendMessageRequestHeaderV2 carries each field: one-letter keys (Java SendMessageRequestHeaderV2). */
const V2_LETTERS: Readonly<Record<string, string>> = {
  producerGroup: 'a',
  topic: 'b',
  defaultTopic: 'c',
  defaultTopicQueueNums: 'd',
  queueId: 'e',
  sysFlag: 'f',
  bornTimestamp: 'g',
  flag: 'h',
  properties: 'i',
  reconsumeTimes: 'j',
  unitMode: 'k',
  maxReconsumeTimes: 'l',
  batch: 'm',
  brokerName: 'n',
};

const MAX_PROPERTIES_BYTES = 32767;
/** Inner messages one SEND_BATCH_MESSAGE may carry; Java has no count cap, only the 4 MiB size cap. */
const MAX_BATCH_MESSAGES = 10_000;

/** Topics producers may not write to (Java TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET). */
const NOT_ALLOWED_SEND_TOPICS = new Set<string>([
  SystemTopic.SCHEDULE_TOPIC,
  SystemTopic.TRANS_HALF,
  SystemTopic.TRANS_OP_HALF,
  SystemTopic.TRANS_CHECK_MAX_TIME,
  SystemTopic.SELF_TEST,
  SystemTopic.OFFSET_MOVED_EVENT,
]);

export interface SendHeader {
  producerGroup: string;
  topic: string;
  defaultTopic: string;
  defaultTopicQueueNums: number;
  queueId: number;
  sysFlag: number;
  bornTimestamp: number;
  flag: number;
  properties: string;
  reconsumeTimes: number;
  maxReconsumeTimes: number | undefined;
  batch: boolean;
}

/** Reads either header style: full names (10, Go) or the V2 letters (310/320, Java and ali-ons). */
export function readSendHeader(req: RemotingCommand): SendHeader {
  const fields = req.extFields;
  const v2 = req.code !== RequestCode.SEND_MESSAGE && fields.b !== undefined && fields.topic === undefined;
  const h = new HeaderReader(fields, v2 ? V2_LETTERS : undefined);
  return {
    producerGroup: h.str('producerGroup'),
    topic: h.str('topic'),
    defaultTopic: h.optStr('defaultTopic') ?? SystemTopic.AUTO_CREATE_TOPIC_KEY,
    defaultTopicQueueNums: h.optInt('defaultTopicQueueNums', 4) ?? 4,
    queueId: h.int('queueId'),
    sysFlag: h.optInt('sysFlag', 0) ?? 0,
    bornTimestamp: h.optLong('bornTimestamp', Date.now()) ?? Date.now(),
    flag: h.optInt('flag', 0) ?? 0,
    properties: h.optStr('properties') ?? '',
    reconsumeTimes: h.optInt('reconsumeTimes', 0) ?? 0,
    maxReconsumeTimes: h.optInt('maxReconsumeTimes'),
    batch: h.bool('batch'),
  };
}

export function sendMessageProcessors(ctx: BrokerContext): ProcessorTable {
  const processor = (req: RemotingCommand, rc: RequestContext) => handleSend(ctx, req, rc);
  return sameProcessor([RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE], processor);
}

async function handleSend(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext): Promise<RemotingCommand> {
  const header = readSendHeader(req);
  const checked = checkMessage(ctx, header, rc);
  if ('code' in checked) return checked;
  const topicConfig = checked;

  let queueId = header.queueId;
  if (queueId < 0) queueId = Math.floor(Math.random() * Math.max(1, topicConfig.writeQueueNums));

  const body = req.body ?? Buffer.alloc(0);
  const bornHost = parseHostAddress(rc.channel.remoteAddress);
  const storeHost = parseHostAddress(ctx.brokerAddr());

  let result: PutResult;
  let transactionId: string | undefined;
  let storedTopic = header.topic;
  if (req.code === RequestCode.SEND_BATCH_MESSAGE) {
    if (header.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
      return createResponse(ResponseCode.MESSAGE_ILLEGAL, `batch request does not support retry group ${header.topic}`);
    }
    const inner = decodeBatchBody(body);
    if (typeof inner === 'string') return createResponse(ResponseCode.MESSAGE_ILLEGAL, inner);
    const msgs: MessageToStore[] = [];
    for (const m of inner) {
      const tooBig = checkSizes(ctx, m.body.length, m.properties);
      if (tooBig) return tooBig;
      msgs.push(buildMessage(ctx, header, queueId, m.flag, m.body, m.properties, bornHost, storeHost));
    }
    result = await ctx.store.putMessages(msgs);
  } else {
    const tooBig = checkSizes(ctx, body.length, header.properties);
    if (tooBig) return tooBig;
    const msg = buildMessage(ctx, header, queueId, header.flag, body, header.properties, bornHost, storeHost);
    if (header.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
      const refused = routeRetryMessage(ctx, header, msg, req.version);
      if (refused) return refused;
      storedTopic = msg.topic;
    }
    if (isHalfMessageSend(msg.propertiesString, msg.reconsumeTimes)) {
      if (ctx.config.rejectTransactionMessage) {
        return createResponse(ResponseCode.NO_PERMISSION, `the broker[${ctx.config.brokerIP1}] sending transaction message is forbidden`);
      }
      // Java's client clears DELAY on transactional sends; a delay is applied at commit, not to the half message.
      transactionId = msg.uniqKey;
      result = await ctx.transactionalMessageService.prepareMessage(msg);
    } else {
      // Java handleScheduleMessage: timer properties first (a DELAY level wins over them), then the delay level.
      const refused = ctx.timerMessageService?.applyTimer(msg);
      if (refused) return createResponse(refused.code, refused.remark);
      result = await ctx.store.putMessage(ctx.scheduleMessageService.applyDelay(msg));
    }
  }

  const res = putResultToResponse(result);
  if (res.code === ResponseCode.SUCCESS || isStoredButSlow(res.code)) {
    ctx.stats.msgPutTotal += result.messageCount;
    ctx.stats.topicPuts.add(storedTopic, result.messageCount);
    res.extFields = {
      msgId: result.commitLogOffsets.map((o) => createOffsetMessageId(storeHost, o)).join(','),
      queueId: String(queueId),
      queueOffset: String(result.queueOffset),
      MSG_REGION: 'DefaultRegion',
      TRACE_ON: 'true',
    };
    // 5.x answers the UNIQ_KEY as transactionId (4.9.x clients read it too when present).
    if (transactionId) res.extFields.transactionId = transactionId;
  }
  return res;
}

/**
 * A producer-side send to `%RETRY%<group>` (the Java consumer's fallback when send-back fails, and the orderly
 * consumer's last step): past the group's retry limit it becomes a dead letter (Java handleRetryAndDLQ).
 */
function routeRetryMessage(ctx: BrokerContext, header: SendHeader, msg: MessageToStore, requestVersion: number): RemotingCommand | undefined {
  const group = header.topic.slice(RETRY_GROUP_TOPIC_PREFIX.length);
  const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
  if (!groupConfig) {
    return createResponse(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group not exist, ${group}`);
  }
  const max = maxReconsumeTimes(requestVersion, header.maxReconsumeTimes, groupConfig.retryMaxTimes);
  if (header.reconsumeTimes > max || ctx.rebalanceLockManager.isLockedByAnyone?.(group)) {
    msg.topic = ensureDlqTopic(ctx, group).topicName;
    msg.queueId = 0;
    const props = parseProperties(msg.propertiesString);
    props.delete(MessageConst.DELAY_TIME_LEVEL);
    msg.propertiesString = encodeProperties(props);
  }
  return undefined;
}

function isStoredButSlow(code: number): boolean {
  return code === ResponseCode.FLUSH_DISK_TIMEOUT || code === ResponseCode.FLUSH_SLAVE_TIMEOUT || code === ResponseCode.SLAVE_NOT_AVAILABLE;
}

/** Java AbstractSendMessageProcessor.msgCheck: permission, topic name, auto-creation and queue id checks. */
export function checkMessage(ctx: BrokerContext, header: SendHeader, rc: RequestContext): TopicConfig | RemotingCommand {
  const { config } = ctx;
  if (!isWriteable(config.brokerPermission)) {
    return createResponse(ResponseCode.NO_PERMISSION, `the broker[${config.brokerIP1}] sending message is forbidden`);
  }
  const bad = validateTopicName(header.topic);
  if (bad) return createResponse(ResponseCode.SYSTEM_ERROR, bad);
  if (NOT_ALLOWED_SEND_TOPICS.has(header.topic)) {
    return createResponse(ResponseCode.NO_PERMISSION, `Sending message to topic[${header.topic}] is forbidden.`);
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
    return createResponse(
      ResponseCode.TOPIC_NOT_EXIST,
      `topic[${header.topic}] not exist, apply first please! (autoCreateTopicEnable=${config.autoCreateTopicEnable}, producer ${rc.channel.remoteAddress})`,
    );
  }
  if (!isWriteable(tc.perm)) {
    return createResponse(ResponseCode.NO_PERMISSION, `the topic[${header.topic}] sending message is forbidden`);
  }
  const queueMax = Math.max(tc.writeQueueNums, tc.readQueueNums);
  if (header.queueId >= queueMax) {
    return createResponse(
      ResponseCode.SYSTEM_ERROR,
      `request queueId[${header.queueId}] is illegal, topic:[${header.topic}] writeQueueNums:[${tc.writeQueueNums}] readQueueNums:[${tc.readQueueNums}]`,
    );
  }
  return tc;
}

export function checkSizes(ctx: BrokerContext, bodyBytes: number, properties: string): RemotingCommand | undefined {
  if (bodyBytes > ctx.config.maxMessageSize) {
    return createResponse(ResponseCode.MESSAGE_ILLEGAL, `the message body size ${bodyBytes} bytes is larger than maxMessageSize ${ctx.config.maxMessageSize}`);
  }
  const propBytes = Buffer.byteLength(properties, 'utf8');
  if (propBytes > MAX_PROPERTIES_BYTES) {
    return createResponse(ResponseCode.MESSAGE_ILLEGAL, `the message properties size ${propBytes} bytes is larger than ${MAX_PROPERTIES_BYTES}`);
  }
  return undefined;
}

export function buildMessage(
  ctx: BrokerContext,
  header: SendHeader,
  queueId: number,
  flag: number,
  body: Buffer,
  properties: string,
  bornHost: MessageToStore['bornHost'],
  storeHost: MessageToStore['storeHost'],
): MessageToStore {
  const { tags, keys, uniqKey: clientKey, cluster } = readSendProperties(properties);
  let uniqKey = clientKey;
  let props = properties;
  if (props.length > 0 && !props.endsWith('\u0002')) props += '\u0002';
  if (!uniqKey) {
    // A 5.x broker gives messages without a client id one (ali-ons sets none), so key queries work.
    uniqKey = createUniqueKey();
    props += `${MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX}\u0001${uniqKey}\u0002`;
  }
  if (cluster === undefined) {
    props += `${MessageConst.CLUSTER}\u0001${ctx.config.brokerClusterName}\u0002`;
  }
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

interface BatchItem {
  flag: number;
  body: Buffer;
  properties: string;
}

/**
 * Batch body (Java MessageDecoder.encodeMessages): repeated TOTALSIZE, MAGICCODE, BODYCRC, FLAG,
 * BODY (int32 length + bytes), PROPERTIES (int16 length + string). Returns a remark when malformed.
 */
export function decodeBatchBody(body: Buffer): BatchItem[] | string {
  const out: BatchItem[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (out.length >= MAX_BATCH_MESSAGES) return `batch carries more than ${MAX_BATCH_MESSAGES} messages`;
    if (pos + 20 > body.length) return `batch body truncated at byte ${pos}`;
    const totalSize = body.readInt32BE(pos);
    if (totalSize < 22 || pos + totalSize > body.length) return `batch message at byte ${pos} has an invalid size ${totalSize}`;
    const flag = body.readInt32BE(pos + 12);
    const bodyLen = body.readInt32BE(pos + 16);
    let p = pos + 20;
    if (bodyLen < 0 || p + bodyLen + 2 > pos + totalSize) return `batch message at byte ${pos} has an invalid body length ${bodyLen}`;
    const msgBody = body.subarray(p, p + bodyLen);
    p += bodyLen;
    const propLen = body.readInt16BE(p);
    p += 2;
    if (propLen < 0 || p + propLen > pos + totalSize) return `batch message at byte ${pos} has an invalid properties length ${propLen}`;
    const properties = body.toString('utf8', p, p + propLen);
    out.push({ flag, body: msgBody, properties });
    pos += totalSize;
  }
  if (out.length === 0) return 'batch body carries no message';
  return out;
}
