// RecallMessage (Java proxy grpc/v2/producer/RecallMessageActivity, ProducerProcessor.recallMessage, broker
// RecallMessageProcessor). The topic must accept DELAY messages and the handle must decode; the broker then refuses
// unless recallMessageEnable (5.3.3's default is false, so the stock answer is "forbidden"). Cancelling a parked timer
// message (TIMER_DEL_UNIQKEY) is not implemented yet: with recallMessageEnable=true the answer says so.
import { topicMessageType } from './route-rpcs.js';
import type { GrpcServices, UnaryHandler } from './services.js';
import { GrpcStatusError } from './status.js';
import { validateTopic } from './validators.js';

/** RecallMessageHandle.decodeHandle: URL-safe Base64 of `v1 <topic> <brokerName> <timestamp> <uniqKey>`. */
export function decodeRecallHandle(handle: string): { topic: string; brokerName: string; timestampMs: number; uniqKey: string } {
  const text = Buffer.from(handle, 'base64url').toString('utf8');
  const parts = text.split(' ');
  if (handle === '' || parts.length < 5 || parts[0] !== 'v1' || !/^\d+$/.test(parts[3])) {
    throw new GrpcStatusError('INTERNAL_SERVER_ERROR', 'recall handle is invalid');
  }
  return { topic: parts[1], brokerName: parts[2], timestampMs: Number(parts[3]), uniqKey: parts[4] };
}

export function recallMessage(s: GrpcServices): UnaryHandler {
  return (req) => {
    const topic = validateTopic(req.topic);
    if (s.config.enableTopicMessageTypeCheck) {
      const expected = topicMessageType(s.ctx.topicConfigManager.get(topic));
      if (expected !== 'DELAY' && expected !== 'MIXED') {
        throw new GrpcStatusError(
          'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE', `TopicMessageType validate failed, the expected type is ${expected}, but actual type is DELAY`,
        );
      }
    }
    decodeRecallHandle(String(req.recall_handle ?? ''));
    // Broker RecallMessageProcessor answers NO_PERMISSION; the proxy maps it to INTERNAL_SERVER_ERROR with the remark.
    if (!s.config.recallMessageEnable) throw new GrpcStatusError('INTERNAL_SERVER_ERROR', 'recall failed, operation is forbidden');
    throw new GrpcStatusError('INTERNAL_SERVER_ERROR', 'recall failed, cancelling a timer message (TIMER_DEL_UNIQKEY) is not supported by this broker yet');
  };
}
