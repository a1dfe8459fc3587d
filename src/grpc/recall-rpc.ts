// RecallMessage (Java proxy grpc/v2/producer/RecallMessageActivity, ProducerProcessor.recallMessage, broker
// RecallMessageProcessor). The topic must accept DELAY messages and the handle must decode (the proxy's checks);
// then the broker's (send/recall-service.ts), whose refusals the proxy maps as it maps any broker answer (5.3.3's
// default recallMessageEnable=false answers "forbidden").
import { isRefusal } from '../broker/outcome.js';
import { recallMessage as recall } from '../broker/send/recall-service.js';
import { decodeRecallHandle } from '../broker/timer/recall-handle.js';
import { topicMessageType } from './route-rpcs.js';
import type { GrpcServices, UnaryHandler } from './services.js';
import { GrpcStatusError, refusalStatus, status } from './status.js';
import { validateTopic } from './validators.js';

export function recallMessage(s: GrpcServices): UnaryHandler {
  return async (req, cc) => {
    const topic = validateTopic(req.topic);
    if (s.config.enableTopicMessageTypeCheck) {
      const expected = topicMessageType(s.ctx.topicConfigManager.get(topic));
      if (expected !== 'DELAY' && expected !== 'MIXED') {
        throw new GrpcStatusError(
          'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE', `TopicMessageType validate failed, the expected type is ${expected}, but actual type is DELAY`,
        );
      }
    }
    const recallHandle = String(req.recall_handle ?? '');
    const decoded = decodeRecallHandle(recallHandle);
    if (typeof decoded === 'string') throw new GrpcStatusError('INTERNAL_SERVER_ERROR', decoded);
    const outcome = await recall(s.ctx, { topic, recallHandle, peer: cc.peer });
    if (isRefusal(outcome)) return { status: refusalStatus(outcome) };
    return { status: status('OK', 'OK'), message_id: outcome.msgId };
  };
}
