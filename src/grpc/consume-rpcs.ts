// ReceiveMessage, AckMessage, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue on the broker's POP service
// (Java proxy grpc/v2/consumer/{ReceiveMessageActivity, ReceiveMessageResponseStreamWriter,
// PopMessageResultFilterImpl, AckMessageActivity, ChangeInvisibleDurationActivity},
// grpc/v2/producer/ForwardMessageToDLQActivity). Messages are Java's where the proxy's texts are readable; where the
// proxy appends a Java exception class and stack frame, ours keeps the readable part (see README, 5.x clients).
import type * as grpc from '@grpc/grpc-js';
import { MessageConst, parseProperties } from '../common/message-properties.js';
import { ResponseCode } from '../common/response-code.js';
import { isRefusal, type Refusal } from '../broker/outcome.js';
import { ExtraInfoError, decodeReceiptHandle, encodeReceiptHandle, isHandleExpired, type ReceiptHandle } from '../broker/pop/extra-info.js';
import { realTopicOf } from '../broker/pop/pop-keys.js';
import type { PopService } from '../broker/pop/pop-service.js';
import { buildSubscriptionData } from '../broker/filter/tag-filter.js';
import { decodeRecord } from '../store/index.js';
import { type CallContext, callContext, requireClientId } from './call-context.js';
import { recordToMessage } from './message-convert.js';
import { topicNotFound } from './route-rpcs.js';
import type { GrpcServices, Msg, UnaryHandler } from './services.js';
import { type CodeName, GrpcStatusError, OK, type Status, errorStatus, refusalStatus, status } from './status.js';
import { fromMillis, toMillis, validateConsumerGroup, validateInvisibleTime, validateTopic } from './validators.js';

/** "5.0.3": older clients get BAD_REQUEST instead of ILLEGAL_POLLING_TIME (Java ReceiveMessageActivity). */
const ILLEGAL_POLLING_TIME_INTRODUCED_CLIENT_VERSION = '5.0.3';
/** Java PopMessageProcessor: at most 32 messages per pop. */
const MAX_BATCH = 32;

/** A broker refusal as the proxy reports it (a missing topic reads as the nameserver's answer would). */
function brokerStatus(r: Refusal, topic: string): Status {
  if (r.code === ResponseCode.TOPIC_NOT_EXIST) return status('TOPIC_NOT_FOUND', topicNotFound(topic).message);
  return refusalStatus(r);
}

/** Java ReceiptHandle.decode, with the parse failure as INTERNAL_SERVER_ERROR and its readable text. */
function decodeHandle(handle: string): ReceiptHandle {
  try {
    return decodeReceiptHandle(handle);
  } catch (err) {
    if (err instanceof ExtraInfoError) throw new GrpcStatusError('INTERNAL_SERVER_ERROR', err.message);
    throw err;
  }
}

export function receiveMessage(s: GrpcServices, pop: PopService): grpc.handleServerStreamingCall<Msg, Msg> {
  return (call) => {
    const cc = callContext(call);
    const finish = (st?: Status) => {
      if (st && !call.cancelled) call.write({ status: st });
      if (!call.cancelled) {
        call.write({ delivery_timestamp: fromMillis(Date.now()) });
        call.end();
      }
    };
    receive(s, pop, call, cc).then(
      (st) => finish(st),
      (err) => {
        const st = errorStatus(err);
        if (st.code === 'INTERNAL_SERVER_ERROR') s.logger.warn({ clientId: cc.clientId, err }, 'gRPC receive failed');
        finish(st);
      },
    );
  };
}

/** Runs one receive; returns the status still to write (undefined when the stream already has it). */
async function receive(s: GrpcServices, pop: PopService, call: grpc.ServerWritableStream<Msg, Msg>, cc: CallContext): Promise<Status | undefined> {
  requireClientId(cc);
  const req = call.request;
  const c = s.config;
  const settings = s.clients.mergedSettings(cc.clientId);
  // The proxy fails here with a NullPointerException (INTERNAL_SERVER_ERROR); same code, a message that says why.
  if (!settings) throw new GrpcStatusError('INTERNAL_SERVER_ERROR', 'cannot find client settings for this client; send Settings on the Telemetry stream before receiving');
  const fifo = settings.subscription?.fifo === true;
  const maxAttempts = Number(settings.backoff_policy?.max_attempts ?? 0);
  const remaining = cc.deadlineMs - Date.now();
  let pollingMs = req.long_polling_timeout ? toMillis(req.long_polling_timeout) : remaining - toMillis(settings.request_timeout) / 2;
  pollingMs = Math.min(Math.max(pollingMs, c.grpcClientConsumerMinLongPollingTimeoutMillis), c.grpcClientConsumerMaxLongPollingTimeoutMillis);
  if (pollingMs > remaining) {
    if (remaining >= c.grpcClientConsumerMinLongPollingTimeoutMillis) pollingMs = remaining;
    else {
      const old = cc.clientVersion === '' || ILLEGAL_POLLING_TIME_INTRODUCED_CLIENT_VERSION > cc.clientVersion;
      return status(old ? 'BAD_REQUEST' : 'ILLEGAL_POLLING_TIME', 'The deadline time remaining is not enough for polling, please check network condition');
    }
  }
  const topic = validateTopic(req.message_queue?.topic);
  const group = validateConsumerGroup(req.group);
  let invisibleMs = toMillis(req.invisible_duration);
  if (c.enableProxyAutoRenew && req.auto_renew) invisibleMs = c.defaultInvisibleTimeMills;
  else validateInvisibleTime(invisibleMs, c.minInvisibleTimeMillsForRecv, c.maxInvisibleTimeMills);
  const exprType = req.filter_expression?.type === 'SQL' ? 'SQL92' : 'TAG';
  const expression = String(req.filter_expression?.expression ?? '');
  const sub = buildSubscriptionData(topic, expression, exprType);

  const result = await pop.pop({
    consumerGroup: group, topic, queueId: -1, maxMsgNums: Math.min(Math.max(Number(req.batch_size ?? 0), 1), MAX_BATCH),
    invisibleTime: invisibleMs, pollTime: pollingMs, bornTime: Date.now(), initMode: 1, expressionType: exprType, expression,
    order: fifo, attemptId: req.attempt_id !== undefined && req.attempt_id !== null ? String(req.attempt_id) : undefined, peer: cc.peer,
  }, { isClosed: () => call.cancelled });
  if (isRefusal(result)) return brokerStatus(result, topic);
  if (result.status === 'ABANDONED') return undefined;
  if (result.status === 'POLLING_FULL') return status('TOO_MANY_REQUESTS', 'polling full');
  if (result.status !== 'FOUND') return status('MESSAGE_NOT_FOUND', 'no new message');

  // Java PopMessageResultFilterImpl: a tag the subscription does not name (hash collision) is acked silently; a
  // message delivered max_attempts times goes to the dead-letter queue.
  const deliver: Msg[] = [];
  for (const m of result.messages) {
    const rec = decodeRecord(m.record);
    const props = parseProperties(rec.propertiesString);
    const tag = props.get(MessageConst.TAGS);
    const handle = decodeReceiptHandle(m.receiptHandle);
    if (sub.tagsSet.length > 0 && (tag === undefined || !sub.tagsSet.includes(tag))) {
      await pop.ack({ consumerGroup: group, topic: m.storedTopic, queueId: m.queueId, offset: m.queueOffset, extraInfo: m.receiptHandle, peer: cc.peer });
      continue;
    }
    if (m.reconsumeTimes >= maxAttempts) {
      const refused = await pop.forwardToDeadLetterQueue({ consumerGroup: group, topic, handle, peer: cc.peer });
      if (refused) s.logger.warn({ group, topic, code: refused.code, remark: refused.remark }, 'forwarding a message to the DLQ failed');
      continue;
    }
    deliver.push(recordToMessage(rec, { topic, receiptHandle: m.receiptHandle, reconsumeTimes: m.reconsumeTimes, props }));
  }
  if (deliver.length === 0) return status('MESSAGE_NOT_FOUND', 'no match message');
  if (call.cancelled) return undefined; // unacked, they come back after the invisible time
  call.write({ status: OK });
  for (const message of deliver) call.write({ message });
  return undefined;
}

/** The handle's message is stored on this topic (the POP retry topic when the handle says so). */
function storedTopicOf(topic: string, group: string, h: ReceiptHandle): string {
  const stored = realTopicOf(topic, group, h.retryFlag);
  if (stored === undefined) throw new GrpcStatusError('INTERNAL_SERVER_ERROR', 'getRetry fail, format is wrong');
  return stored;
}

function setTopStatus(codes: Set<CodeName>): Status {
  if (codes.size > 1) return status('MULTIPLE_RESULTS', 'MULTIPLE_RESULTS');
  if (codes.size === 1) {
    const [code] = codes;
    return status(code, code);
  }
  return status('INTERNAL_SERVER_ERROR', 'ack message result is empty');
}

export function ackMessage(s: GrpcServices, pop: PopService): UnaryHandler {
  return async (req, cc) => {
    const topic = validateTopic(req.topic);
    const group = validateConsumerGroup(req.group);
    const entries: Msg[] = [];
    const codes = new Set<CodeName>();
    for (const e of req.entries ?? []) {
      const base = { message_id: String(e.message_id ?? ''), receipt_handle: String(e.receipt_handle ?? '') };
      let st: Status;
      try {
        const h = decodeHandle(base.receipt_handle);
        if (isHandleExpired(h)) throw new GrpcStatusError('INVALID_RECEIPT_HANDLE', 'receipt handle is expired');
        const refused = await pop.ack({
          consumerGroup: group, topic: storedTopicOf(topic, group, h), queueId: h.queueId, offset: h.queueOffset,
          extraInfo: encodeReceiptHandle(h), peer: cc.peer,
        });
        st = refused ? status('INTERNAL_SERVER_ERROR', 'ack failed: status is abnormal') : OK;
      } catch (err) {
        st = errorStatus(err);
      }
      codes.add(st.code);
      entries.push({ ...base, status: st });
    }
    return { status: setTopStatus(codes), entries };
  };
}

export function changeInvisibleDuration(s: GrpcServices, pop: PopService): UnaryHandler {
  return async (req, cc) => {
    const topic = validateTopic(req.topic);
    const group = validateConsumerGroup(req.group);
    const invisibleMs = toMillis(req.invisible_duration);
    validateInvisibleTime(invisibleMs, 0, s.config.maxInvisibleTimeMills);
    const h = decodeHandle(String(req.receipt_handle ?? ''));
    if (isHandleExpired(h)) throw new GrpcStatusError('INVALID_RECEIPT_HANDLE', 'receipt handle is expired');
    const changed = await pop.changeInvisibleTime({
      consumerGroup: group, topic: storedTopicOf(topic, group, h), queueId: h.queueId, offset: h.queueOffset,
      extraInfo: encodeReceiptHandle(h), peer: cc.peer, invisibleTime: invisibleMs,
    });
    if (isRefusal(changed)) return { status: status('INTERNAL_SERVER_ERROR', 'changeInvisibleDuration failed: status is abnormal') };
    return { status: OK, receipt_handle: changed.receiptHandle };
  };
}

export function forwardMessageToDeadLetterQueue(s: GrpcServices, pop: PopService): UnaryHandler {
  return async (req, cc) => {
    const topic = validateTopic(req.topic);
    const group = validateConsumerGroup(req.group);
    const h = decodeHandle(String(req.receipt_handle ?? ''));
    if (h.commitLogOffset < 0) throw new GrpcStatusError('INVALID_RECEIPT_HANDLE', 'commit log offset is empty');
    const refused = await pop.forwardToDeadLetterQueue({ consumerGroup: group, topic, handle: h, peer: cc.peer });
    // Java buildStatus(remotingCode, remark): success has no remark, so its message is the code "0".
    if (refused) return { status: refusalStatus(refused) };
    return { status: status('OK', String(ResponseCode.SUCCESS)) };
  };
}
