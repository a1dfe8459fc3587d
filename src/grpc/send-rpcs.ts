// SendMessage (Java proxy grpc/v2/producer/SendMessageActivity + processor/ProducerProcessor.sendMessage): the
// proxy's checks, its topic message-type validation and queue choice, then the broker's send service.
import { encodeProperties } from '../common/message-properties.js';
import { javaStringHashCode } from '../common/java-hash.js';
import { ResponseCode } from '../common/response-code.js';
import { isRefusal } from '../broker/outcome.js';
import { putResultToResponse } from '../broker/processors/put-status.js';
import type { BatchItem, Stored } from '../broker/send/send-service.js';
import { sendMessage } from '../broker/send/send-service.js';
import { DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX, isWriteable } from '../broker/topic/topic-config.js';
import { type BuiltMessage, buildMessage, consistentHash } from './send-properties.js';
import { topicMessageType } from './route-rpcs.js';
import type { GrpcServices, Msg, UnaryHandler } from './services.js';
import { type CodeName, GrpcStatusError, type Status, refusalStatus, status } from './status.js';
import type { TransactionIndex } from './transaction-rpcs.js';
import { messageTypeOf } from './message-convert.js';
import { validateTopic } from './validators.js';

/** Java DefaultTopicMessageTypeValidator: the message's type must be the topic's, unless the topic is MIXED. */
function checkMessageType(expected: string, actual: string): void {
  if (actual === 'UNSPECIFIED' || (actual !== expected && expected !== 'MIXED')) {
    throw new GrpcStatusError(
      'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE',
      `TopicMessageType validate failed, the expected type is ${expected}, but actual type is ${actual}`,
    );
  }
}

/** Stored but not yet durable as asked (Java SendMessageActivity.convertToSendMessageResponse). */
const SLOW_PUT: Partial<Record<string, CodeName>> = {
  FLUSH_DISK_TIMEOUT: 'MASTER_PERSISTENCE_TIMEOUT',
  FLUSH_SLAVE_TIMEOUT: 'SLAVE_PERSISTENCE_TIMEOUT',
  SLAVE_NOT_AVAILABLE: 'HA_NOT_AVAILABLE',
};

export function sendMessageRpc(s: GrpcServices, tx: TransactionIndex): UnaryHandler {
  const roundRobin = new Map<string, number>();
  return async (req, cc) => {
    const messages: Msg[] = req.messages ?? [];
    if (messages.length === 0) throw new GrpcStatusError('MESSAGE_CORRUPTED', 'no message to send');
    const first = messages[0];
    const topic = validateTopic(first.topic);
    const ns = String(first.topic?.resource_namespace ?? '');
    const c = s.config;
    const built: BuiltMessage[] = messages.map((m) => {
      if (String(m.topic?.name ?? '') !== topic || String(m.topic?.resource_namespace ?? '') !== ns) {
        throw new GrpcStatusError('MESSAGE_CORRUPTED', 'topic in message is not same');
      }
      return buildMessage(m, topic, cc.peer, c);
    });

    // Beyond the proxy: an unknown topic is created when autoCreateTopicEnable (the send service does it).
    let tc = s.ctx.topicConfigManager.get(topic);
    if (!tc && c.autoCreateTopicEnable) {
      tc = s.ctx.topicConfigManager.createTopicInSendMessageMethod(topic, 'TBW102', c.defaultTopicQueueNums, 0);
      if (tc) void s.ctx.registerBrokerAll();
    }
    const head = built[0];
    const isRetryOrDlq = topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || topic.startsWith(DLQ_GROUP_TOPIC_PREFIX);
    if (c.enableTopicMessageTypeCheck && !head.properties.has('TRANSFER_FLAG') && !isRetryOrDlq) {
      checkMessageType(topicMessageType(tc), messageTypeOf(head.properties));
    }
    const writeQueues = tc && isWriteable(tc.perm) ? tc.writeQueueNums : 0;
    if (tc && writeQueues <= 0) throw new GrpcStatusError('FORBIDDEN', 'no writable queue');
    let queueId = -1;
    if (writeQueues > 0) {
      if (messages.length === 1 && head.messageGroup !== '') {
        queueId = consistentHash(javaStringHashCode(head.messageGroup), writeQueues);
      } else {
        const n = ((roundRobin.get(topic) ?? Math.floor(Math.random() * writeQueues)) + 1) % writeQueues;
        roundRobin.set(topic, n);
        queueId = n;
      }
    }
    const header = {
      producerGroup: topic,
      topic,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: c.defaultTopicQueueNums,
      queueId,
      sysFlag: head.sysFlag,
      bornTimestamp: head.bornTimestamp,
      flag: 0,
      properties: encodeProperties(head.properties),
      reconsumeTimes: 0,
      maxReconsumeTimes: undefined,
      batch: messages.length > 1,
    };
    const batch: BatchItem[] | undefined = messages.length > 1
      ? built.map((b) => ({ flag: 0, body: b.body, properties: encodeProperties(b.properties) }))
      : undefined;
    const outcome = await sendMessage(s.ctx, { header, body: head.body, batch, requestVersion: 0, peer: cc.peer });
    if (isRefusal(outcome)) return { status: refusalStatus(outcome) };
    const uniqKeys = built.map((b) => b.uniqKey).join(',');
    const entry = resultEntry(s, outcome, uniqKeys, header.properties);
    if (entry.status.code === 'OK' && outcome.transactionId) {
      tx.remember(topic, outcome.transactionId, outcome.result.commitLogOffset, outcome.result.queueOffset);
    }
    return { status: status(entry.status.code, entry.status.code), entries: [entry] };
  };
}

function resultEntry(s: GrpcServices, stored: Stored, uniqKeys: string, properties: string): { status: Status } & Msg {
  const { result } = stored;
  const slow = SLOW_PUT[result.status];
  if (slow) return { status: status(slow, `send message failed, sendStatus=${result.status}`) };
  const res = putResultToResponse(result);
  if (res.code !== ResponseCode.SUCCESS) return { status: refusalStatus({ code: res.code, remark: res.remark ?? result.status }) };
  s.ctx.stats.msgPutTotal += result.messageCount;
  s.ctx.stats.items.countPut(s.ctx.config.brokerClusterName, stored.storedTopic, result.messageCount, result.wroteBytes);
  // counted as the official broker counts the proxy's SEND_MESSAGE
  s.ctx.stats.metrics?.messagesStored(stored.storedTopic, properties, result.messageCount, result.wroteBytes);
  if (stored.transactionId !== undefined) s.ctx.stats.metrics?.halfMessageStored(stored.storedTopic);
  // Observed on 5.3.3: transaction_id is the message id on every SEND_OK, not only for transactional sends.
  return {
    status: status('OK', 'OK'),
    message_id: uniqKeys,
    transaction_id: stored.transactionId ?? uniqKeys,
    offset: result.queueOffset,
    recall_handle: stored.recallHandle ?? '',
  };
}
