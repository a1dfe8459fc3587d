// Names POP builds from topics and groups (Java common/KeyBuilder.java, common/PopAckConstants.java): the POP retry
// topics, the revive topic and its consumer group, the lock/polling key of a (topic, group, queue).
import { RETRY_GROUP_TOPIC_PREFIX, SystemTopic } from '../topic/topic-config.js';

/** KeyBuilder.POP_ORDER_REVIVE_QUEUE: the reviveQid of an orderly (FIFO) pop, which writes no checkpoint. */
export const POP_ORDER_REVIVE_QUEUE = 999;
/** PopAckConstants.REVIVE_GROUP: its consumer offsets are the revive services' progress. */
export const REVIVE_GROUP = 'CID_RMQ_SYS_REVIVE_GROUP';
/** PopAckConstants.REVIVE_TOPIC prefix; the topic is per cluster. */
export const REVIVE_TOPIC_PREFIX = SystemTopic.REVIVE_LOG_PREFIX;
/** PopAckConstants.retryQueueNum: queues of a POP retry topic. */
export const POP_RETRY_QUEUE_NUMS = 1;
/** PopAckConstants.ackTimeInterval: a checkpoint reaches its revive queue this long before its revive time. */
export const ACK_TIME_INTERVAL_MS = 1000;
/** PopAckConstants.SECOND: the extra wait revive gives acks. */
export const SECOND_MS = 1000;

/** The retry flag of extraInfo / receipt handles (ExtraInfoUtil NORMAL_TOPIC / RETRY_TOPIC / RETRY_TOPIC_V2). */
export type RetryFlag = '0' | '1' | '2';

export function reviveTopicOf(clusterName: string): string {
  return REVIVE_TOPIC_PREFIX + clusterName;
}

/** `%RETRY%<group>_<topic>` (v1). */
export function popRetryTopicV1(topic: string, group: string): string {
  return `${RETRY_GROUP_TOPIC_PREFIX}${group}_${topic}`;
}

/** `%RETRY%<group>+<topic>` (v2, enableRetryTopicV2). */
export function popRetryTopicV2(topic: string, group: string): string {
  return `${RETRY_GROUP_TOPIC_PREFIX}${group}+${topic}`;
}

export function popRetryTopic(topic: string, group: string, v2: boolean): string {
  return v2 ? popRetryTopicV2(topic, group) : popRetryTopicV1(topic, group);
}

/** KeyBuilder.isPopRetryTopicV2: any `%RETRY%` name containing `+`. */
export function isPopRetryTopicV2(topic: string): boolean {
  return topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) && topic.includes('+');
}

/** ExtraInfoUtil.getRetry(topic): the flag a topic name carries. */
export function retryFlagOf(topic: string): RetryFlag {
  if (isPopRetryTopicV2(topic)) return '2';
  return topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? '1' : '0';
}

/**
 * ExtraInfoUtil.getRealTopic(topic, cid, retry): the topic a handle's message is stored on. Undefined for a flag
 * that is none of "0", "1", "2" (Java throws "getRetry fail, format is wrong").
 */
export function realTopicOf(topic: string, group: string, flag: string): string | undefined {
  if (flag === '0') return topic;
  if (flag === '1') return popRetryTopicV1(topic, group);
  if (flag === '2') return popRetryTopicV2(topic, group);
  return undefined;
}

/** KeyBuilder.parseNormalTopic(topic, cid): the topic a (possibly retry) topic name of this group belongs to. */
export function normalTopicOf(topic: string, group: string): string {
  if (!topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return topic;
  const v2 = `${RETRY_GROUP_TOPIC_PREFIX}${group}+`;
  if (topic.startsWith(v2)) return topic.slice(v2.length);
  return topic.slice(`${RETRY_GROUP_TOPIC_PREFIX}${group}_`.length);
}

/** KeyBuilder.buildPollingKey / PopMessageProcessor lock keys: `<topic>@<group>@<queueId>`. */
export function queueKey(topic: string, group: string, queueId: number): string {
  return `${topic}@${group}@${queueId}`;
}
