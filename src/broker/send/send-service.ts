// Sending, apart from any transport (Java SendMessageProcessor.sendMessage / sendBatchMessage and the store's put
// hooks): checks, then one chain of rewrite steps — retry/DLQ, half message, timer, delay — then the put. The
// remoting processor decodes its frame into a SendRequest and encodes the SendOutcome; a gRPC adapter does the same
// with its own types.
import { MessageConst, encodeProperties, parseProperties } from '../../common/message-properties.js';
import { ResponseCode } from '../../common/response-code.js';
import type { HostAddress, MessageToStore, PutResult } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { parseHostAddress } from '../message-id.js';
import { ensureDlqTopic, maxReconsumeTimes } from '../retry/retry-policy.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';
import { isHalfMessageSend, toHalfMessage } from '../transaction/transactional-message-util.js';
import { type Refusal, refusal } from '../outcome.js';
import { type SendHeader, buildMessage, checkMessage, checkSizes } from './message-checks.js';
import { recallHandleFor } from '../timer/recall-handle.js';

/** One inner message of a batch. */
export interface BatchItem {
  flag: number;
  body: Buffer;
  properties: string;
}

export interface SendRequest {
  header: SendHeader;
  /** The single message's body; ignored for a batch; unused (empty) when bodyParts is given. */
  body: Buffer;
  /** The single message's body as pieces (a request cut by socket chunks), stored as they are. */
  bodyParts?: readonly Buffer[];
  /**
   * The inner messages of a batch (SEND_BATCH_MESSAGE); absent for a single message. A string says why the batch
   * body could not be decoded: refused with MESSAGE_ILLEGAL after the topic checks (Java checks, then decodes).
   */
  batch?: BatchItem[] | string;
  /** The client's protocol version (the retry limit of old clients is the group's). */
  requestVersion: number;
  /** `ip:port` of the producer: BORNHOST, and named in remarks. */
  peer: string;
}

export interface Stored {
  result: PutResult;
  queueId: number;
  /** The topic the message was stored on when a step moved it (e.g. to %DLQ%). */
  storedTopic: string;
  /** The UNIQ_KEY of a half message (5.x answers it as transactionId). */
  transactionId?: string;
  /** A parked timer message's recall handle (5.3.x answers it; RecallMessage takes it). */
  recallHandle?: string;
  /** A single message's UNIQ_KEY (5.3.3 answers it as transactionId on every send). */
  uniqKey?: string;
  storeHost: HostAddress;
}

export type SendOutcome = Stored | Refusal;

/** A message on its way through the rewrite steps. */
interface SendState {
  readonly ctx: BrokerContext;
  readonly req: SendRequest;
  msg: MessageToStore;
  /** The topic the send counts for in the put statistics. */
  storedTopic: string;
  transactionId?: string;
  /** Set by a step after which no other rewrite applies (a half message is parked as it is). */
  done: boolean;
}

/** A rewrite of the message before it is stored; a refusal ends the send. */
type SendStep = (s: SendState) => Refusal | undefined;

/**
 * A producer-side send to `%RETRY%<group>` (the Java consumer's fallback when send-back fails, and the orderly
 * consumer's last step): past the group's retry limit it becomes a dead letter (Java handleRetryAndDLQ).
 */
const retryOrDeadLetter: SendStep = (s) => {
  const { ctx, req, msg } = s;
  const { header } = req;
  if (!header.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return undefined;
  const group = header.topic.slice(RETRY_GROUP_TOPIC_PREFIX.length);
  const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
  if (!groupConfig) return refusal(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group not exist, ${group}`);
  const max = maxReconsumeTimes(req.requestVersion, header.maxReconsumeTimes, groupConfig.retryMaxTimes);
  if (header.reconsumeTimes > max || ctx.rebalanceLockManager.isLockedByAnyone?.(group)) {
    msg.topic = ensureDlqTopic(ctx, group).topicName;
    msg.queueId = 0;
    const props = parseProperties(msg.propertiesString);
    props.delete(MessageConst.DELAY_TIME_LEVEL);
    msg.propertiesString = encodeProperties(props);
  }
  s.storedTopic = msg.topic;
  return undefined;
};

/** A transactional send is parked on the half topic as it is (Java client clears DELAY; no timer either). */
const halfMessage: SendStep = (s) => {
  const { ctx, msg } = s;
  if (!isHalfMessageSend(msg.propertiesString, msg.reconsumeTimes)) return undefined;
  if (ctx.config.rejectTransactionMessage) {
    return refusal(ResponseCode.NO_PERMISSION, `the broker[${ctx.config.brokerIP1}] sending transaction message is forbidden`);
  }
  ctx.transactionalMessageService.ensureHalfTopic();
  s.transactionId = msg.uniqKey;
  toHalfMessage(msg);
  s.done = true;
  return undefined;
};

/** 5.x timer messages (TIMER_DELIVER_MS / _DELAY_SEC / _DELAY_MS); a DELAY level wins over them (Java handleScheduleMessage). */
const timer: SendStep = ({ ctx, msg }) => {
  const refused = ctx.timerMessageService?.applyTimer(msg);
  return refused ? refusal(refused.code, refused.remark) : undefined;
};

/** Delay levels: parked on SCHEDULE_TOPIC_XXXX (Java transformDelayLevelMessage). */
const delayLevel: SendStep = ({ ctx, msg }) => {
  ctx.scheduleMessageService.applyDelay(msg);
  return undefined;
};

/** In order; each sees the message as the steps before it left it. */
const SEND_STEPS: readonly SendStep[] = [retryOrDeadLetter, halfMessage, timer, delayLevel];

export async function sendMessage(ctx: BrokerContext, req: SendRequest): Promise<SendOutcome> {
  const { header } = req;
  const checked = checkMessage(ctx, header, req.peer);
  if ('code' in checked) return checked;
  const queueId = header.queueId >= 0 ? header.queueId : Math.floor(Math.random() * Math.max(1, checked.writeQueueNums));
  const bornHost = parseHostAddress(req.peer);
  const storeHost = parseHostAddress(ctx.brokerAddr());

  if (req.batch) {
    if (header.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
      return refusal(ResponseCode.MESSAGE_ILLEGAL, `batch request does not support retry group ${header.topic}`);
    }
    if (typeof req.batch === 'string') return refusal(ResponseCode.MESSAGE_ILLEGAL, req.batch);
    const msgs: MessageToStore[] = [];
    for (const m of req.batch) {
      const tooBig = checkSizes(ctx, m.body.length, m.properties);
      if (tooBig) return tooBig;
      msgs.push(buildMessage(ctx, header, queueId, m.flag, m.body, m.properties, bornHost, storeHost));
    }
    return { result: await ctx.store.putMessages(msgs), queueId, storedTopic: header.topic, storeHost };
  }

  // A body received in pieces goes to the store as those pieces (copied once, into the commit log).
  const parts = req.bodyParts;
  let bodyBytes = req.body.length;
  if (parts) for (const p of parts) bodyBytes += p.length;
  const tooBig = checkSizes(ctx, bodyBytes, header.properties);
  if (tooBig) return tooBig;
  const msg = buildMessage(ctx, header, queueId, header.flag, req.body, header.properties, bornHost, storeHost);
  if (parts) msg.bodyParts = parts;
  const state: SendState = { ctx, req, msg, storedTopic: header.topic, done: false };
  for (const step of SEND_STEPS) {
    const refused = step(state);
    if (refused) return refused;
    if (state.done) break;
  }
  const result = await ctx.store.putMessage(state.msg);
  const recallHandle = recallHandleFor(state.msg.propertiesString, ctx.config.brokerName);
  return {
    result, queueId, storedTopic: state.storedTopic, transactionId: state.transactionId, recallHandle, uniqKey: state.msg.uniqKey, storeHost,
  };
}
