// POP consumption on the broker, apart from any transport (Java PopMessageProcessor, AckMessageProcessor,
// ChangeInvisibleTimeProcessor, NotificationProcessor, PollingInfoProcessor, PopReviveService). The remoting
// processors (processors/pop-message.ts, ack-message.ts, change-invisible.ts, pop-notification.ts) decode frames
// into these requests and encode the outcomes; a gRPC endpoint calls the same methods with its own types.
//
// API (every method answers with a value; a Refusal carries a remoting response code and a remark, which the
// gRPC side maps as the official proxy maps broker answers):
//
//   pop(req: PopRequest, opts?: { isClosed?: () => boolean; onSuspended?: () => void }): Promise<PopResult | Refusal>
//       Reads up to req.maxMsgNums (≤ 32) messages of req.topic (queueId −1 = every queue) and its POP retry topic,
//       each invisible for req.invisibleTime ms; waits for messages until req.bornTime + req.pollTime. Every
//       PoppedMessage carries its 9-field receipt handle and the topic it is stored on. With req.order the queue
//       stays blocked until the batch is acked or visible again (req.attemptId: a retry of the same receive gets
//       the same batch). isClosed: the requester went away; the wait then ends with status ABANDONED.
//       onSuspended: called when the request is parked to wait (the remoting metrics' is_long_polling).
//   ack(req: AckRequest): Promise<Refusal | undefined>
//       req.topic/queueId/offset name the stored message (for a handle: realTopicOf(topic, group, flag),
//       handle.queueId, handle.queueOffset); req.extraInfo is the handle. An ack of an expired handle is accepted
//       (the proxy checks expiry: isHandleExpired).
//   batchAck(body: { brokerName?: string; acks: BatchAck[] }, peer: string): Promise<Refusal | undefined>
//   changeInvisibleTime(req: ChangeInvisibleRequest): Promise<ChangedInvisible | Refusal>
//       Returns the new receipt handle (the old one no longer matches; acking it is accepted and ineffective).
//   forwardToDeadLetterQueue(req: { consumerGroup, topic, handle: ReceiptHandle, peer }): Promise<Refusal | undefined>
//       The message to %DLQ%<group>, then acked (the proxy's ForwardMessageToDeadLetterQueue).
//   notification(req: NotificationRequest, opts?): Promise<{ hasMsg: boolean; pollingFull: boolean } | Refusal>
//   pollingInfo(req: { consumerGroup, topic, queueId, peer }): { pollingNum: number } | Refusal
// Handle codecs for adapters: decodeReceiptHandle, encodeReceiptHandle, isHandleExpired (extra-info.ts);
// realTopicOf, popRetryTopic (pop-keys.ts).
import { ResponseCode } from '../../common/response-code.js';
import type { DispatchedEntry, MessageFilter } from '../../store/index.js';
import type { SubscriptionData } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import { compileSubscription, pullMessageFilter, sqlPropertiesFilter } from '../filter/sql-filter.js';
import type { CompiledFilter } from '../filter/sql92/index.js';
import { buildSubscriptionData, tagsCodeFilter } from '../filter/tag-filter.js';
import { type Refusal, refusal } from '../outcome.js';
import { isReadable } from '../topic/topic-config.js';
import { parseProperties } from '../../common/message-properties.js';
import type { ReceiptHandle } from './extra-info.js';
import {
  type AckRequest, type ChangeInvisibleRequest, type ChangedInvisible, ackPopped, batchAckPopped, changeInvisible, forwardToDeadLetter,
} from './pop-ack.js';
import { FAQ_HINT, PopCore } from './pop-core.js';
import type { WakeReason } from './pop-long-polling.js';
import { POP_ORDER_REVIVE_QUEUE, popRetryTopic, popRetryTopicV1 } from './pop-keys.js';
import { type PopSession, type PoppedMessage, popFromQueue, popFromTopic } from './pop-read.js';
import type { BatchAck } from './pop-records.js';
import { PopReviveService } from './revive-service.js';

export type { AckRequest, ChangeInvisibleRequest, ChangedInvisible, PoppedMessage };

/** PopMessageRequestHeader, decoded. */
export interface PopRequest {
  consumerGroup: string;
  topic: string;
  /** −1: every read queue of the topic. */
  queueId: number;
  maxMsgNums: number;
  invisibleTime: number;
  /** How long (ms from bornTime) to wait for messages; 0 answers at once. */
  pollTime: number;
  /** When the client sent the request (ms); 0 = now. */
  bornTime: number;
  /** 0 MIN (a new group starts at the first message), 1 MAX (at the last). */
  initMode: number;
  expressionType?: string;
  expression?: string;
  order: boolean;
  attemptId?: string;
  /** `ip:port` of the consumer, named in remarks. */
  peer: string;
}

/** What a pop answers when it is not refused. */
export interface PopResult {
  /** FOUND → SUCCESS "FOUND"; POLLING_TIMEOUT (210) / POLLING_FULL (209) "NO_MESSAGE_IN_QUEUE"; ABANDONED: no answer. */
  status: 'FOUND' | 'POLLING_TIMEOUT' | 'POLLING_FULL' | 'ABANDONED';
  popTime: number;
  invisibleTime: number;
  reviveQid: number;
  restNum: number;
  startOffsetInfo: string;
  msgOffsetInfo: string;
  /** Orderly pops only. */
  orderCountInfo?: string;
  messages: PoppedMessage[];
}

export interface NotificationRequest {
  consumerGroup: string;
  topic: string;
  queueId: number;
  pollTime: number;
  bornTime: number;
  order?: boolean;
  attemptId?: string;
  peer: string;
}

/** PopMessageRequestHeader.isTimeoutTooMuch: the request waited this much longer than it wanted. */
const TIMEOUT_TOO_MUCH_MS = 500;
/** PopMessageProcessor: at most 32 messages per pop. */
export const MAX_POP_MSG_NUMS = 32;

interface CheckedPop {
  filter?: MessageFilter;
  matches?: (entry: DispatchedEntry) => boolean;
}

export class PopService {
  readonly core: PopCore;
  readonly revive: PopReviveService;
  private cleanTimer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: BrokerContext) {
    this.core = new PopCore(ctx);
    this.revive = new PopReviveService(this.core);
  }

  load(): void {
    this.core.orderInfo.load();
  }

  /** Starts revive (masters only; in DLedger mode the role switch does) and the periodic saves; add `onDispatch` to the store's listeners. */
  start(): void {
    this.core.orderInfo.startPersisting();
    // DLedger mode: revive is a master's service the role switch starts (5.3.3 changeSpecialServiceStatus)
    if (this.ctx.config.brokerRole !== 'SLAVE' && !this.ctx.config.enableDLegerCommitLog) this.revive.start();
    this.cleanTimer = setInterval(() => {
      const topicExists = (t: string) => this.ctx.topicConfigManager.get(t) !== undefined;
      const groupExists = (g: string) => this.ctx.subscriptionGroupManager.get(g) !== undefined;
      this.core.polling.cleanUnused(topicExists, groupExists);
      this.core.notificationPolling.cleanUnused(topicExists, groupExists);
    }, 5 * 60_000);
    this.cleanTimer.unref();
  }

  async shutdown(): Promise<void> {
    if (this.cleanTimer) clearInterval(this.cleanTimer);
    this.core.polling.shutdown();
    this.core.notificationPolling.shutdown();
    await this.revive.shutdown();
    await this.core.orderInfo.close();
  }

  /** Store dispatch listener: wakes waiting pops and notifications. */
  onDispatch = (entry: DispatchedEntry): void => {
    this.core.polling.onDispatch(entry);
    this.core.notificationPolling.onDispatch(entry);
  };

  ack(req: AckRequest): Promise<Refusal | undefined> {
    return ackPopped(this.core, req);
  }

  batchAck(body: { brokerName?: string; acks: BatchAck[] }, peer: string): Promise<Refusal | undefined> {
    return batchAckPopped(this.core, body, peer);
  }

  changeInvisibleTime(req: ChangeInvisibleRequest): Promise<ChangedInvisible | Refusal> {
    return changeInvisible(this.core, req);
  }

  forwardToDeadLetterQueue(req: { consumerGroup: string; topic: string; handle: ReceiptHandle; peer: string }): Promise<Refusal | undefined> {
    return forwardToDeadLetter(this.core, req);
  }

  // ---------------------------------------------------------------- pop

  async pop(req: PopRequest, opts: { isClosed?: () => boolean; onSuspended?: () => void } = {}): Promise<PopResult | Refusal> {
    const bornTime = req.bornTime > 0 ? req.bornTime : Date.now();
    // Pop mode consumes in clustering mode only (PopMessageProcessor compensates the group's info first).
    this.ctx.consumerManager.compensateBasicConsumerInfo(req.consumerGroup, 'CONSUME_POP', 'CLUSTERING');
    let lastAttempt = false;
    for (;;) {
      const checked = this.checkPop(req, bornTime);
      if ('code' in checked) return checked;
      const s = await this.popOnce(req, checked);
      if (s.messages.length > 0) {
        if (s.restNum > 0) this.core.polling.notifyArriving(req.topic, req.queueId, req.consumerGroup);
        return answer(s, 'FOUND', req.order);
      }
      if (lastAttempt) return answer(s, 'POLLING_TIMEOUT', req.order);
      const woken = await new Promise<WakeReason | 'NOT_POLLING' | 'POLLING_TIMEOUT' | 'POLLING_FULL'>((resolve) => {
        const parked = this.core.polling.polling(req.topic, req.consumerGroup, req.queueId, bornTime + req.pollTime, req.pollTime, {
          matches: checked.matches,
          isClosed: () => opts.isClosed?.() ?? false,
          wake: resolve,
        }, popRetryTopicV1(req.topic, req.consumerGroup));
        if (parked !== 'POLLING_SUC') {
          resolve(parked);
          return;
        }
        opts.onSuspended?.();
        // Java re-runs at once when queues were busy (restNum counts their backlog)
        if (s.restNum > 0) setImmediate(() => this.core.polling.notifyArriving(req.topic, req.queueId, req.consumerGroup));
      });
      if (woken === 'closed') return answer(s, 'ABANDONED', req.order);
      if (woken === 'POLLING_FULL') return answer(s, 'POLLING_FULL', req.order);
      if (woken === 'NOT_POLLING' || woken === 'POLLING_TIMEOUT' || woken === 'shutdown') return answer(s, 'POLLING_TIMEOUT', req.order);
      if (woken === 'timeout') lastAttempt = true;
    }
  }

  /** The checks of PopMessageProcessor.processRequest, in its order, and the request's message filter. */
  private checkPop(req: PopRequest, bornTime: number): CheckedPop | Refusal {
    const { config } = this.ctx;
    const ip = config.brokerIP1;
    if (Date.now() - bornTime - req.pollTime > TIMEOUT_TOO_MUCH_MS) {
      return refusal(ResponseCode.POLLING_TIMEOUT, `the broker[${ip}] pop message is timeout too much`);
    }
    if (!isReadable(config.brokerPermission)) return refusal(ResponseCode.NO_PERMISSION, `the broker[${ip}] pop message is forbidden`);
    if (req.maxMsgNums > MAX_POP_MSG_NUMS) {
      return refusal(ResponseCode.INVALID_PARAMETER, `the broker[${ip}] pop message's num is greater than ${MAX_POP_MSG_NUMS}`);
    }
    if (!config.timerWheelEnable) {
      return refusal(ResponseCode.SYSTEM_ERROR, `the broker[${ip}] pop message is forbidden because timerWheelEnable is false`);
    }
    const tc = this.ctx.topicConfigManager.get(req.topic);
    if (!tc) return refusal(ResponseCode.TOPIC_NOT_EXIST, `topic[${req.topic}] not exist, apply first please! ${FAQ_HINT}`);
    if (!isReadable(tc.perm)) return refusal(ResponseCode.NO_PERMISSION, `the topic[${req.topic}] peeking message is forbidden`);
    if (req.queueId >= tc.readQueueNums) {
      return refusal(
        ResponseCode.INVALID_PARAMETER,
        `queueId[${req.queueId}] is illegal, topic:[${req.topic}] topicConfig.readQueueNums:[${tc.readQueueNums}] consumer:[/${req.peer}]`,
      );
    }
    const groupConfig = this.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(req.consumerGroup);
    if (!groupConfig) {
      return refusal(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group [${req.consumerGroup}] does not exist, ${FAQ_HINT}`);
    }
    if (!groupConfig.consumeEnable) return refusal(ResponseCode.NO_PERMISSION, `subscription group no permission, ${req.consumerGroup}`);
    return this.buildFilter(req);
  }

  /** The subscription (recorded for the group, with `*` on its retry topic) and the store filter it makes. */
  private buildFilter(req: PopRequest): CheckedPop | Refusal {
    const exp = req.expression !== undefined && req.expression !== '' ? req.expression : undefined;
    const type = exp === undefined ? 'TAG' : req.expressionType || 'TAG';
    let sub: SubscriptionData;
    let sql: CompiledFilter | undefined;
    try {
      sub = buildSubscriptionData(req.topic, exp ?? '*', type);
      if (sub.expressionType !== 'TAG') sql = compileSubscription(sub);
    } catch {
      return refusal(ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed");
    }
    const cm = this.ctx.consumerManager;
    cm.compensateSubscribeData(req.consumerGroup, req.topic, sub);
    const retry = popRetryTopic(req.topic, req.consumerGroup, this.ctx.config.enableRetryTopicV2);
    cm.compensateSubscribeData(req.consumerGroup, retry, buildSubscriptionData(retry, '*', type));
    const tags = tagsCodeFilter(sub);
    const filter = pullMessageFilter(tags, sql ? sqlPropertiesFilter(sql) : undefined);
    if (!filter) return {};
    const matches = (e: DispatchedEntry): boolean => {
      if (tags && !tags(e.tagsCode)) return false;
      return !sql || e.propertiesString === undefined || sql.evaluate(parseProperties(e.propertiesString));
    };
    return { filter, matches };
  }

  /** One pass over the retry topic and the queues (the part of processRequest after the checks). */
  private async popOnce(req: PopRequest, checked: CheckedPop): Promise<PopSession> {
    const { config } = this.ctx;
    const s: PopSession = {
      group: req.consumerGroup, topic: req.topic, maxMsgNums: req.maxMsgNums, invisibleTime: req.invisibleTime,
      initMode: req.initMode, order: req.order, attemptId: req.attemptId, filter: checked.filter, popTime: Date.now(),
      reviveQid: req.order ? POP_ORDER_REVIVE_QUEUE : this.core.nextReviveQid(), restNum: 0, bytes: 0,
      startOffsetInfo: [], msgOffsetInfo: [], orderCountInfo: [], messages: [],
    };
    const randomQ = Math.floor(Math.random() * 100);
    const needRetry = randomQ < config.popFromRetryProbability;
    const needRetryV1 = config.enableRetryTopicV2 && config.retrieveMessageFromPopRetryTopicV1 && randomQ % 2 === 0;
    const retryTopic = needRetryV1 ? popRetryTopicV1(req.topic, req.consumerGroup) : popRetryTopic(req.topic, req.consumerGroup, config.enableRetryTopicV2);
    if (needRetry && !req.order) await popFromTopic(this.core, s, retryTopic, true, randomQ);
    if (req.queueId < 0) await popFromTopic(this.core, s, req.topic, false, randomQ);
    else await popFromQueue(this.core, s, req.topic, false, req.queueId);
    if (!needRetry && s.messages.length < req.maxMsgNums && !req.order) await popFromTopic(this.core, s, retryTopic, true, randomQ);
    return s;
  }

  // ---------------------------------------------------------------- notification, polling info

  /** The checks NOTIFICATION and POLLING_INFO share (NotificationProcessor, PollingInfoProcessor). */
  private checkPeek(topic: string, group: string, queueId: number, peer: string): Refusal | undefined {
    const { config } = this.ctx;
    if (!isReadable(config.brokerPermission)) {
      return refusal(ResponseCode.NO_PERMISSION, `the broker[${config.brokerIP1}] peeking message is forbidden`);
    }
    const tc = this.ctx.topicConfigManager.get(topic);
    if (!tc) return refusal(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist, apply first please! ${FAQ_HINT}`);
    if (!isReadable(tc.perm)) return refusal(ResponseCode.NO_PERMISSION, `the topic[${topic}] peeking message is forbidden`);
    if (queueId >= tc.readQueueNums) {
      return refusal(
        ResponseCode.INVALID_PARAMETER,
        `queueId[${queueId}] is illegal, topic:[${topic}] topicConfig.readQueueNums:[${tc.readQueueNums}] consumer:[/${peer}]`,
      );
    }
    const groupConfig = this.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
    if (!groupConfig) return refusal(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group [${group}] does not exist, ${FAQ_HINT}`);
    if (!groupConfig.consumeEnable) return refusal(ResponseCode.NO_PERMISSION, `subscription group no permission, ${group}`);
    return undefined;
  }

  /** NOTIFICATION: whether the group has something to pop, waiting up to pollTime for it. */
  async notification(
    req: NotificationRequest, opts: { isClosed?: () => boolean; onSuspended?: () => void } = {},
  ): Promise<{ hasMsg: boolean; pollingFull: boolean } | Refusal> {
    const bornTime = req.bornTime > 0 ? req.bornTime : Date.now();
    let lastAttempt = false;
    for (;;) {
      const bad = this.checkPeek(req.topic, req.consumerGroup, req.queueId, req.peer);
      if (bad) return bad;
      if (await this.hasMessage(req)) return { hasMsg: true, pollingFull: false };
      if (lastAttempt) return { hasMsg: false, pollingFull: false };
      const woken = await new Promise<WakeReason | 'NOT_POLLING' | 'POLLING_TIMEOUT' | 'POLLING_FULL'>((resolve) => {
        const parked = this.core.notificationPolling.polling(req.topic, req.consumerGroup, req.queueId, bornTime + req.pollTime, req.pollTime, {
          isClosed: () => opts.isClosed?.() ?? false,
          wake: resolve,
        }, popRetryTopicV1(req.topic, req.consumerGroup));
        if (parked !== 'POLLING_SUC') resolve(parked);
        else opts.onSuspended?.();
      });
      if (woken === 'POLLING_FULL') return { hasMsg: false, pollingFull: true };
      if (woken === 'timeout') lastAttempt = true;
      else if (woken !== 'arrival') return { hasMsg: false, pollingFull: false };
    }
  }

  private async hasMessage(req: NotificationRequest): Promise<boolean> {
    const { config } = this.ctx;
    const randomQ = Math.floor(Math.random() * 100);
    const needRetry = randomQ % 5 === 0;
    const retry = popRetryTopic(req.topic, req.consumerGroup, config.enableRetryTopicV2);
    const retryV1 = config.enableRetryTopicV2 && config.retrieveMessageFromPopRetryTopicV1 ? popRetryTopicV1(req.topic, req.consumerGroup) : undefined;
    const fromRetry = (): boolean => this.hasInTopic(retry, randomQ, req) || (retryV1 !== undefined && this.hasInTopic(retryV1, randomQ, req));
    if (needRetry && fromRetry()) return true;
    const has = req.queueId < 0 ? this.hasInTopic(req.topic, randomQ, req) : this.hasInQueue(req.topic, req.queueId, req);
    if (has) return true;
    return !needRetry && fromRetry();
  }

  private hasInTopic(topic: string, randomQ: number, req: NotificationRequest): boolean {
    const tc = this.ctx.topicConfigManager.get(topic);
    if (!tc) return false;
    for (let i = 0; i < tc.readQueueNums; i++) if (this.hasInQueue(topic, (randomQ + i) % tc.readQueueNums, req)) return true;
    return false;
  }

  private hasInQueue(topic: string, queueId: number, req: NotificationRequest): boolean {
    if (req.order && this.core.orderInfo.checkBlock(req.attemptId, req.topic, req.consumerGroup, queueId, 0)) return false;
    let offset = this.ctx.consumerOffsetManager.queryOffset(req.consumerGroup, topic, queueId);
    if (offset < 0) offset = this.ctx.store.getMinOffsetInQueue(topic, queueId);
    return this.ctx.store.getMaxOffsetInQueue(topic, queueId) - offset > 0;
  }

  /** POLLING_INFO: how many pops wait on `<topic>@<group>@<queueId>`. */
  pollingInfo(req: { consumerGroup: string; topic: string; queueId: number; peer: string }): { pollingNum: number } | Refusal {
    const bad = this.checkPeek(req.topic, req.consumerGroup, req.queueId, req.peer);
    if (bad) return bad;
    return { pollingNum: this.core.polling.countAt(req.topic, req.consumerGroup, req.queueId) };
  }
}

function answer(s: PopSession, status: PopResult['status'], order: boolean): PopResult {
  return {
    status,
    popTime: s.popTime,
    invisibleTime: s.invisibleTime,
    reviveQid: s.reviveQid,
    restNum: s.restNum,
    startOffsetInfo: s.startOffsetInfo.join(';'),
    msgOffsetInfo: s.msgOffsetInfo.join(';'),
    orderCountInfo: order ? s.orderCountInfo.join(';') : undefined,
    messages: s.messages,
  };
}
