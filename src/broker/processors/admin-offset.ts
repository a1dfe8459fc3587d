// Consumer-offset administration: INVOKE_BROKER_TO_RESET_OFFSET (222, pushing RESET_CONSUMER_CLIENT_OFFSET 220
// to the group's clients), CLONE_GROUP_OFFSET (314), QUERY_CONSUME_TIME_SPAN (303).
// Java 4.9.x: broker/processor/AdminBrokerProcessor.java (resetOffset, cloneGroupOffset, queryConsumeTimeSpan),
// broker/client/net/Broker2Client.resetOffset.
import { stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { MessageQueue } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import { resetClientOffset } from '../client/broker-to-client.js';
import { Turns, stringifyArrayInTurns } from './queue-tables.js';

/** MQVersion.Version.V3_0_7_SNAPSHOT.ordinal(): the first client version that understands code 220. */
const MIN_RESET_CLIENT_VERSION = 28;

/** ResetOffsetBody (`{"offsetTable":{<MessageQueue>:offset}}`, fastjson object keys) or, for C++ clients, ResetOffsetBodyForC. */
export function encodeResetOffsetBody(offsets: Array<[MessageQueue, number]>, forC = false): Buffer {
  if (forC) {
    const list = offsets.map(([mq, offset]) => ({ brokerName: mq.brokerName, offset, queueId: mq.queueId, topic: mq.topic }));
    return Buffer.from(stringifyFastjson({ offsetTable: list }));
  }
  return Buffer.from(stringifyFastjson({ offsetTable: new Map(offsets) }));
}

/**
 * Java 4.9.x Broker2Client.resetOffset: the new offset of every queue is the one found by timestamp (-1 = the
 * queue's max offset) when forced or when it lies before the committed offset, else the committed offset. The
 * table goes to every connected client of the group (220, oneway), which moves its offsets and commits them; the
 * broker does not commit them itself. With no client online the answer is CONSUMER_NOT_ONLINE, and mqadmin then
 * falls back to committing the offsets itself (UPDATE_CONSUMER_OFFSET per queue).
 * The 5.x header fields `queueId` (>= 0: that queue only) and `offset` (instead of the timestamp) are honoured.
 */
async function resetOffset(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const topic = h.str('topic');
  const group = h.str('group');
  const timestamp = h.long('timestamp');
  const isForce = h.bool('isForce', false);
  const onlyQueueId = h.optInt('queueId', -1) ?? -1;
  const explicitOffset = h.optLong('offset', -1) ?? -1;
  const tc = ctx.topicConfigManager.get(topic);
  if (!tc) {
    return createResponse(ResponseCode.TOPIC_NOT_EXIST, `[reset-offset] reset offset failed, no topic in this broker. topic=${topic}`);
  }
  const { store } = ctx;
  const brokerName = ctx.config.brokerName;
  const offsets: Array<[MessageQueue, number]> = [];
  const turns = new Turns();
  for (let queueId = 0; queueId < tc.writeQueueNums; queueId++) {
    await turns.done();
    if (onlyQueueId >= 0 && queueId !== onlyQueueId) continue;
    const consumerOffset = ctx.consumerOffsetManager.queryOffset(group, topic, queueId);
    if (consumerOffset === -1) {
      return createResponse(ResponseCode.SYSTEM_ERROR, `THe consumer group <${group}> not exist`); // sic (Java)
    }
    let target: number;
    if (onlyQueueId >= 0 && explicitOffset >= 0) target = explicitOffset;
    else if (timestamp === -1) target = store.getMaxOffsetInQueue(topic, queueId);
    else target = await store.getOffsetInQueueByTime(topic, queueId, timestamp);
    if (target < 0) target = 0;
    offsets.push([{ brokerName, queueId, topic }, isForce || target < consumerOffset ? target : consumerOffset]);
  }

  const info = ctx.consumerManager.getConsumerGroupInfo(group);
  if (!info || info.channels.size === 0) {
    return createResponse(
      ResponseCode.CONSUMER_NOT_ONLINE,
      `Consumer not online, so can not reset offset, Group: ${group} Topic: ${topic} Timestamp: ${timestamp}`,
    );
  }
  const header = { topic, group, timestamp: String(timestamp), isForce: 'false' };
  for (const ch of info.channels.values()) {
    if (ch.version < MIN_RESET_CLIENT_VERSION) {
      return createResponse(ResponseCode.SYSTEM_ERROR, `the client does not support this feature. version=${ch.version}`);
    }
    const pushed = resetClientOffset(ch.channel, header, encodeResetOffsetBody(offsets, ch.language === 'CPP'));
    ctx.logger.info({ topic, group, clientId: ch.clientId, pushed }, '[reset-offset] offsets pushed to client');
  }
  return createResponse(ResponseCode.SUCCESS, undefined, {}, encodeResetOffsetBody(offsets, req.language === 'CPP'));
}

/** Java cloneGroupOffset: copies srcGroup's offsets of the topic (or of every topic it has offsets for) to destGroup. */
function cloneGroupOffset(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const h = new HeaderReader(req.extFields);
  const srcGroup = h.str('srcGroup');
  const destGroup = h.str('destGroup');
  const topicArg = (h.optStr('topic') ?? '').trim();
  const offline = h.bool('offline', false);
  const topics = topicArg === '' ? ctx.consumerOffsetManager.whichTopicByGroup(srcGroup) : [topicArg];
  for (const topic of topics) {
    if (!ctx.topicConfigManager.get(topic)) {
      ctx.logger.warn({ topic }, '[cloneGroupOffset] topic config not exist');
      continue;
    }
    if (!offline && ctx.consumerManager.findSubscriptionDataCount(srcGroup) > 0 && !ctx.consumerManager.findSubscriptionData(srcGroup, topic)) {
      ctx.logger.warn({ srcGroup, topic }, '[cloneGroupOffset] the online source group does not subscribe the topic');
      continue;
    }
    // Java replaces the destination's table for the topic with a copy of the source's (when it has one).
    // (Java 4.9.x passes the request's topic here even when it is blank, cloning nothing; we clone each topic.)
    ctx.consumerOffsetManager.cloneOffset(srcGroup, destGroup, topic);
  }
  return createResponse(ResponseCode.SUCCESS);
}

/** Java UtilAll.formatDate(date, "yyyy-MM-dd#HH:mm:ss:SSS") in the broker's local time zone. */
function formatSpanTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}#${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}:${p(d.getMilliseconds(), 3)}`;
}

/** Java queryConsumeTimeSpan: per write queue, the store-time span and how far the group's offset lags in time. */
async function queryConsumeTimeSpan(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const topic = h.str('topic');
  const group = h.str('group');
  const tc = ctx.topicConfigManager.get(topic);
  if (!tc) return createResponse(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist`);
  const { store } = ctx;
  const spans: Array<Record<string, unknown>> = [];
  const turns = new Turns();
  for (let queueId = 0; queueId < tc.writeQueueNums; queueId++) {
    await turns.done();
    const minTimeStamp = await store.getEarliestMessageTime(topic, queueId);
    const maxOffset = store.getMaxOffsetInQueue(topic, queueId);
    const maxTimeStamp = await store.getMessageStoreTimestamp(topic, queueId, maxOffset - 1);
    const consumerOffset = ctx.consumerOffsetManager.queryOffset(group, topic, queueId);
    const consumeTimeStamp = consumerOffset > 0 ? await store.getMessageStoreTimestamp(topic, queueId, consumerOffset - 1) : minTimeStamp;
    let delayTime = 0;
    if (consumerOffset < maxOffset) {
      delayTime = Date.now() - (await store.getMessageStoreTimestamp(topic, queueId, consumerOffset));
    }
    spans.push({
      consumeTimeStamp,
      consumeTimeStampStr: formatSpanTime(consumeTimeStamp),
      delayTime,
      maxTimeStamp,
      maxTimeStampStr: formatSpanTime(maxTimeStamp),
      messageQueue: { brokerName: ctx.config.brokerName, queueId, topic },
      minTimeStamp,
      minTimeStampStr: formatSpanTime(minTimeStamp),
    });
  }
  // fastjson's {"consumeTimeSpanSet":[...]}, the spans encoded a share per turn of the event loop
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(`{"consumeTimeSpanSet":${await stringifyArrayInTurns(spans)}}`));
}

export function adminOffsetProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, (req) => resetOffset(ctx, req)],
    [RequestCode.CLONE_GROUP_OFFSET, (req) => cloneGroupOffset(ctx, req)],
    [RequestCode.QUERY_CONSUME_TIME_SPAN, (req) => queryConsumeTimeSpan(ctx, req)],
  ];
}
