// Giving a consumed message back (Java AbstractSendMessageProcessor.consumerSendMsgBack), apart from any transport:
// to `%RETRY%<group>` with the next delay level, or to `%DLQ%<group>` past the retry limit or when the caller asks
// for a dead letter (delayLevel < 0: the gRPC ForwardMessageToDeadLetterQueue). The remoting processor
// (CONSUMER_SEND_MSG_BACK) and the POP service call it.
import { MessageConst, parseProperties } from '../../common/message-properties.js';
import { ResponseCode } from '../../common/response-code.js';
import { decodeRecord } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { createOffsetMessageId, parseHostAddress } from '../message-id.js';
import { type Refusal, refusal } from '../outcome.js';
import { ensureDlqTopic, maxReconsumeTimes } from '../retry/retry-policy.js';
import { messageFromRecord } from '../stored-message.js';
import { Perm, isWriteable, retryTopic } from '../topic/topic-config.js';

export interface SendBackRequest {
  /** Commit-log offset of the stored message. */
  offset: number;
  group: string;
  /** 0 = the next level by reconsume times, > 0 = that level, < 0 = straight to the dead-letter queue. */
  delayLevel: number;
  /** The client's retry limit (header maxReconsumeTimes), used when requestVersion ≥ V3_4_9. */
  maxReconsumeTimes?: number;
  requestVersion: number;
  /** The caller's name for the message's topic (header originTopic), for the dead-letter metric. */
  originTopic?: string;
}

/** Stores the message again on the retry or dead-letter topic; undefined when that worked. */
export async function sendMessageBack(ctx: BrokerContext, req: SendBackRequest): Promise<Refusal | undefined> {
  const { group } = req;
  let delayLevel = req.delayLevel;
  const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
  if (!groupConfig) return refusal(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group not exist, ${group}`);
  if (!isWriteable(ctx.config.brokerPermission)) {
    return refusal(ResponseCode.NO_PERMISSION, `the broker[${ctx.config.brokerIP1}] sending message is forbidden`);
  }
  const retryQueueNums = groupConfig.retryQueueNums ?? 1;
  if (retryQueueNums <= 0) return undefined;

  let topic = retryTopic(group);
  let queueId = Math.floor(Math.random() * retryQueueNums);
  const retryConfig = ctx.topicConfigManager.createTopicIfAbsent(topic, retryQueueNums, Perm.READ | Perm.WRITE);
  if (!isWriteable(retryConfig.perm)) return refusal(ResponseCode.NO_PERMISSION, `the topic[${topic}] sending message is forbidden`);

  const record = await ctx.store.lookMessageByOffset(req.offset);
  if (!record) return refusal(ResponseCode.SYSTEM_ERROR, `look message by offset failed, ${req.offset}`);
  const orig = decodeRecord(record);
  const props = parseProperties(orig.propertiesString);
  if (!props.get(MessageConst.RETRY_TOPIC)) props.set(MessageConst.RETRY_TOPIC, orig.topic);
  props.set(MessageConst.WAIT_STORE_MSG_OK, 'false');

  const max = maxReconsumeTimes(req.requestVersion, req.maxReconsumeTimes, groupConfig.retryMaxTimes);
  const storeHost = parseHostAddress(ctx.brokerAddr());
  const origOffsetMsgId = createOffsetMessageId(orig.storeHost, orig.commitLogOffset);
  if (orig.reconsumeTimes >= max || delayLevel < 0) {
    ctx.stats.metrics?.deadLettered(req.originTopic ?? props.get(MessageConst.RETRY_TOPIC) ?? orig.topic, group);
    topic = ensureDlqTopic(ctx, group).topicName;
    queueId = 0;
    props.delete(MessageConst.DELAY_TIME_LEVEL);
    if (!props.get('DLQ_ORIGIN_TOPIC')) props.set('DLQ_ORIGIN_TOPIC', props.get(MessageConst.RETRY_TOPIC) ?? orig.topic);
    if (!props.get('DLQ_ORIGIN_MESSAGE_ID')) props.set('DLQ_ORIGIN_MESSAGE_ID', props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX) ?? origOffsetMsgId);
  } else {
    if (delayLevel === 0) delayLevel = 3 + orig.reconsumeTimes;
    props.set(MessageConst.DELAY_TIME_LEVEL, String(delayLevel));
  }
  // Like Java: the id of the stored original (its offset message id), not the header's originMsgId (the client's
  // UNIQ_KEY); kept through later send-backs.
  if (!props.get(MessageConst.ORIGIN_MESSAGE_ID)) props.set(MessageConst.ORIGIN_MESSAGE_ID, origOffsetMsgId);

  const msg = messageFromRecord(orig, topic, queueId, props, { storeHost, reconsumeTimes: orig.reconsumeTimes + 1 });
  // Java runs the same put hook: with a DELAY level it drops TIMER_* properties copied from a timer message.
  const refused = ctx.timerMessageService?.applyTimer(msg);
  if (refused) return refusal(ResponseCode.SYSTEM_ERROR, refused.status); // Java: any failed put → SYSTEM_ERROR
  const result = await ctx.store.putMessage(ctx.scheduleMessageService.applyDelay(msg));
  if (result.status === 'PUT_OK' || result.status === 'FLUSH_DISK_TIMEOUT') return undefined;
  return refusal(ResponseCode.SYSTEM_ERROR, result.remark ?? result.status);
}
