import { MQVersion } from '../../common/version.js';
import type { BrokerContext } from '../context.js';
import { DLQ_GROUP_TOPIC_PREFIX, Perm, type TopicConfig, dlqTopic } from '../topic/topic-config.js';

/** Java's default for a group's retryMaxTimes (SubscriptionGroupConfig). */
export const DEFAULT_MAX_RECONSUME_TIMES = 16;

/**
 * The retry limit for a request: the client's own value when it is new enough to send one (≥ V3_4_9),
 * else the group's retryMaxTimes (Java SendMessageProcessor / consumerSendMsgBack).
 */
export function maxReconsumeTimes(requestVersion: number, headerValue: number | undefined, groupRetryMaxTimes: number | undefined): number {
  if (requestVersion >= MQVersion.V3_4_9 && headerValue !== undefined && headerValue !== null && !Number.isNaN(headerValue)) {
    return headerValue;
  }
  return groupRetryMaxTimes ?? DEFAULT_MAX_RECONSUME_TIMES;
}

/** `%DLQ%<group>`: one queue, created when the first dead letter appears, readable and writable (Java ≥ 4.9.2). */
export function ensureDlqTopic(ctx: BrokerContext, group: string): TopicConfig {
  return ctx.topicConfigManager.createTopicIfAbsent(dlqTopic(group), 1, Perm.READ | Perm.WRITE);
}

export function isDlqTopic(topic: string): boolean {
  return topic.startsWith(DLQ_GROUP_TOPIC_PREFIX);
}
