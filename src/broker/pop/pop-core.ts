// The state POP's parts share: the revive topic, queue locks, FIFO order info, the two long-polling services, and
// the helpers every part uses (pop offsets, storing revive records). Built once per broker by PopService.
import os from 'node:os';
import { ResponseCode } from '../../common/response-code.js';
import type { HostAddress, MessageToStore, PutStatus } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { parseHostAddress } from '../message-id.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';
import { ConsumerOrderInfoManager } from './order-info-manager.js';
import { PopLongPolling, type PollingLimits } from './pop-long-polling.js';
import { reviveTopicOf } from './pop-keys.js';
import { QueueLocks } from './queue-locks.js';

/** PopMessageRequestHeader.initMode: where a group without an offset starts (ConsumeInitMode). */
export const INIT_MODE_MIN = 0;
export const INIT_MODE_MAX = 1;

/** Java FAQUrl.suggestTodo(APPLY_TOPIC_URL / SUBSCRIPTION_GROUP_NOT_EXIST). */
export const FAQ_HINT = '\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.';

/** Put outcomes that count as stored (Java checks exactly these after appending a checkpoint or ack). */
const STORED: ReadonlySet<PutStatus> = new Set(['PUT_OK', 'FLUSH_DISK_TIMEOUT', 'FLUSH_SLAVE_TIMEOUT', 'SLAVE_NOT_AVAILABLE']);

/** Java: messages within this share of RAM behind the log end count as "still in memory". */
const ACCESS_MESSAGE_IN_MEMORY_MAX_RATIO = 0.4;

/** Whose checkpoint or ack a revive record is, for the put counts of the metrics. */
export interface ReviveRecordOf {
  group: string;
  topic: string;
  type: 'CK' | 'ACK';
}

export class PopCore {
  readonly locks = new QueueLocks();
  readonly orderInfo: ConsumerOrderInfoManager;
  /** POP_MESSAGE waiters: oldest first. */
  readonly polling: PopLongPolling;
  /** NOTIFICATION waiters: newest first. */
  readonly notificationPolling: PopLongPolling;
  private ckCounter = 0;

  constructor(readonly ctx: BrokerContext) {
    const { config } = ctx;
    this.orderInfo = new ConsumerOrderInfoManager(config.storePathRootDir, {
      readQueueNums: (t) => ctx.topicConfigManager.get(t)?.readQueueNums,
      groupExists: (g) => ctx.subscriptionGroupManager.get(g) !== undefined,
    }, ctx.logger.child({ component: 'pop-order' }));
    const limits = (): PollingLimits => ({
      popPollingSize: config.popPollingSize,
      maxPopPollingSize: config.maxPopPollingSize,
      popLongPollingForceNotifyInterval: config.popLongPollingForceNotifyInterval,
    });
    this.polling = new PopLongPolling(false, limits, ctx.logger);
    this.notificationPolling = new PopLongPolling(true, limits, ctx.logger);
  }

  get reviveTopic(): string {
    return reviveTopicOf(this.ctx.config.brokerClusterName);
  }

  get brokerName(): string {
    return this.ctx.config.brokerName;
  }

  /** The broker's own address, born and store host of the records POP writes. */
  host(): HostAddress {
    return parseHostAddress(this.ctx.brokerAddr());
  }

  /** Round robin over the revive queues (PopMessageProcessor.ckMessageNumber). */
  nextReviveQid(): number {
    const qid = this.ckCounter % this.ctx.config.reviveQueueNum;
    this.ckCounter = (this.ckCounter + 1) % 0x7fffffff;
    return qid;
  }

  /** Stores a checkpoint/ack record through the timer hook (it is due later); false when it was not stored. */
  async putReviveRecord(msg: MessageToStore, counted?: ReviveRecordOf): Promise<boolean> {
    // Java counts a put with the store's status (PopMetricsManager.incPopRevivePutCount); what never reached the
    // store counts as its UNKNOWN_ERROR.
    let status: string = 'UNKNOWN_ERROR';
    try {
      const refused = this.ctx.timerMessageService?.applyTimer(msg);
      if (refused) {
        this.ctx.logger.error({ topic: msg.topic, remark: refused.remark }, 'pop record refused by the timer');
        return false;
      }
      try {
        const res = await this.ctx.store.putMessage(msg);
        status = res.status;
        if (STORED.has(res.status)) return true;
        this.ctx.logger.error({ topic: msg.topic, queueId: msg.queueId, status: res.status }, 'pop record not stored');
      } catch (err) {
        this.ctx.logger.error({ err, topic: msg.topic }, 'pop record not stored');
      }
      return false;
    } finally {
      if (counted) this.ctx.stats.metrics?.popRevivePut(counted.group, counted.topic, counted.type, status);
    }
  }

  /**
   * Where the group's next pop of a queue starts (PopMessageProcessor.getPopOffset): its committed offset, or the
   * initial offset (MIN mode and retry topics: the queue's min; MAX: 0 while offset 0 is still in memory, else
   * the last message), committed when `init`.
   */
  async popOffset(topic: string, group: string, queueId: number, initMode: number, init: boolean): Promise<number> {
    const committed = this.ctx.consumerOffsetManager.queryOffset(group, topic, queueId);
    if (committed >= 0) return committed;
    const { store, config } = this.ctx;
    let offset: number;
    if (initMode === INIT_MODE_MIN || topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
      offset = store.getMinOffsetInQueue(topic, queueId);
    } else if (config.initPopOffsetByCheckMsgInMem && store.getMinOffsetInQueue(topic, queueId) <= 0 && (await this.isInMemory(topic, queueId, 0))) {
      offset = 0;
    } else {
      offset = Math.max(0, store.getMaxOffsetInQueue(topic, queueId) - 1);
    }
    if (init) this.ctx.consumerOffsetManager.commitOffset(group, topic, queueId, offset);
    return offset;
  }

  /** DefaultMessageStore.checkInMemByConsumeOffset */
  private async isInMemory(topic: string, queueId: number, queueOffset: number): Promise<boolean> {
    const phy = await this.ctx.store.getCommitLogOffsetInQueue(topic, queueId, queueOffset);
    if (phy < 0) return false;
    return this.ctx.store.getMaxPhyOffset() - phy <= os.totalmem() * ACCESS_MESSAGE_IN_MEMORY_MAX_RATIO;
  }

  /** Wakes one POP and one NOTIFICATION waiter of exactly this key (a queue freed by an orderly ack, a rest). */
  wake(topic: string, group: string, queueId: number): void {
    this.polling.notifyArriving(topic, queueId, group);
    this.notificationPolling.notifyArriving(topic, queueId, group);
  }

  /** The topic/queue checks ack-like requests share (AckMessageProcessor, ChangeInvisibleTimeProcessor). */
  checkQueue(topic: string, queueId: number, peer: string): { code: number; remark: string } | undefined {
    const tc = this.ctx.topicConfigManager.get(topic);
    if (!tc) return { code: ResponseCode.TOPIC_NOT_EXIST, remark: `topic[${topic}] not exist, apply first please! ${FAQ_HINT}` };
    if (queueId >= tc.readQueueNums || queueId < 0) {
      return {
        code: ResponseCode.MESSAGE_ILLEGAL,
        remark: `queueId[${queueId}] is illegal, topic:[${topic}] topicConfig.readQueueNums:[${tc.readQueueNums}] consumer:[/${peer}]`,
      };
    }
    return undefined;
  }
}
