import type { BrokerConfig } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import { MessageConst, encodeProperties } from '../../common/message-properties.js';
import {
  decodeRecord, type DecodedRecord, type MessageStore, type MessageToStore, type PutResult,
} from '../../store/index.js';
import { createUniqueKey, parseHostAddress } from '../message-id.js';
import type { ConsumerOffsetManager } from '../offset/consumer-offset-manager.js';
import { Perm } from '../topic/topic-config.js';
import type { TopicConfigManager } from '../topic/topic-config-manager.js';
import {
  HALF_TOPIC,
  OP_TOPIC,
  REMOVE_TAG,
  SYS_TRANS_GROUP,
  encodeOpBody,
  parseOpBody,
  toHalfMessage,
  transactionKey,
} from './transactional-message-util.js';

/** Finished transactions remembered to refuse a second delivery (FIFO eviction beyond this). */
const FINISHED_MEMORY_MAX = 100_000;
/** At start, how many op messages per queue (newest first) are read back to rebuild that memory. */
const REBUILD_MAX_OP_MESSAGES = 4096;
/** Read batch for op and half queues (Java pulls op messages 32 at a time). */
export const READ_BATCH = 32;
const READ_MAX_BYTES = 4 * 1024 * 1024;

export interface TransactionDeps {
  config: BrokerConfig;
  store: MessageStore;
  topicConfigManager: TopicConfigManager;
  consumerOffsetManager: ConsumerOffsetManager;
  brokerAddr(): string;
  logger: Logger;
}

/** A Set that forgets its oldest members beyond a limit. */
class BoundedSet<T> {
  private readonly items = new Set<T>();
  constructor(private readonly max: number) {}
  add(v: T): void {
    if (this.items.has(v)) return;
    this.items.add(v);
    if (this.items.size > this.max) {
      const oldest = this.items.values().next();
      if (!oldest.done) this.items.delete(oldest.value);
    }
  }
  has(v: T): boolean {
    return this.items.has(v);
  }
}

/**
 * Half and op queues (Java TransactionalMessageServiceImpl + TransactionalMessageBridge): stores half messages,
 * writes op ("remove") messages, reads both queues for the check-back service, and keeps the progress of
 * CID_RMQ_SYS_TRANS in the consumer offsets.
 *
 * Beyond Java: it remembers which transactions are finished (by half offset and by transaction key, so a
 * check-back copy counts as its original), so a repeated END_TRANSACTION, or a check answered after the producer's
 * own END, never delivers a committed message twice.
 */
export class TransactionalMessageService {
  private readonly finishedOffsets = new BoundedSet<string>(FINISHED_MEMORY_MAX);
  private readonly finishedKeys = new BoundedSet<string>(FINISHED_MEMORY_MAX);
  private readonly ending = new Set<string>();
  private rebuilt: Promise<void> = Promise.resolve();
  private readonly logger: Logger;

  constructor(private readonly deps: TransactionDeps) {
    this.logger = deps.logger;
  }

  get config(): BrokerConfig {
    return this.deps.config;
  }

  get store(): MessageStore {
    return this.deps.store;
  }

  /** Rebuilds the finished-transaction memory from the newest op messages (runs in the background). */
  start(): void {
    this.rebuilt = this.rebuildFinished().catch((err) => {
      this.logger.warn({ err }, 'rebuilding finished transactions from op messages failed');
    });
  }

  /** Resolves once start()'s rebuild is done. */
  ready(): Promise<void> {
    return this.rebuilt;
  }

  ensureHalfTopic(): void {
    this.deps.topicConfigManager.createTopicIfAbsent(HALF_TOPIC, 1, Perm.READ | Perm.WRITE);
  }

  /** TransactionalMessageBridge.putHalfMessage: park the message on the half topic. */
  prepareMessage(msg: MessageToStore): Promise<PutResult> {
    this.ensureHalfTopic();
    return this.deps.store.putMessage(toHalfMessage(msg));
  }

  /** The half message stored at a commit-log offset, or undefined when there is no whole record there. */
  async lookHalfMessage(commitLogOffset: number): Promise<DecodedRecord | undefined> {
    const { store } = this.deps;
    if (!Number.isSafeInteger(commitLogOffset) || commitLogOffset < store.getMinPhyOffset() || commitLogOffset >= store.getMaxPhyOffset()) {
      return undefined;
    }
    const buf = await store.lookMessageByOffset(commitLogOffset);
    if (!buf) return undefined;
    try {
      return decodeRecord(buf);
    } catch {
      return undefined;
    }
  }

  isFinished(half: DecodedRecord, key = transactionKey(half)): boolean {
    return this.finishedKeys.has(key) || this.finishedOffsets.has(offsetKey(half.queueId, half.queueOffset));
  }

  hasOpFor(half: DecodedRecord): boolean {
    return this.finishedOffsets.has(offsetKey(half.queueId, half.queueOffset));
  }

  /** Claims a transaction for one END_TRANSACTION at a time; false when another one is already ending it. */
  tryBeginEnd(key: string): boolean {
    if (this.ending.has(key)) return false;
    this.ending.add(key);
    return true;
  }

  endDone(key: string): void {
    this.ending.delete(key);
  }

  /**
   * deletePrepareMessage: records the transaction as finished and writes an op message with tag `d` naming the
   * half offset to RMQ_SYS_TRANS_OP_HALF_TOPIC (same queue id as the half). Java 5.x batches op messages for up to
   * 3 s; we write one per END, which is what 4.9.x did.
   */
  async deletePrepareMessage(half: DecodedRecord): Promise<boolean> {
    this.markFinished(half);
    this.deps.topicConfigManager.createTopicIfAbsent(OP_TOPIC, 1, Perm.READ | Perm.WRITE);
    const storeHost = parseHostAddress(this.deps.brokerAddr());
    const props = new Map<string, string>([
      [MessageConst.TAGS, REMOVE_TAG],
      [MessageConst.WAIT_STORE_MSG_OK, 'false'],
      [MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX, createUniqueKey()],
    ]);
    const result = await this.deps.store.putMessage({
      topic: OP_TOPIC,
      queueId: half.queueId,
      flag: 0,
      body: encodeOpBody(half.queueOffset),
      propertiesString: encodeProperties(props),
      tagsCode: 0,
      sysFlag: 0,
      bornTimestamp: Date.now(),
      bornHost: storeHost,
      storeHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
    const ok = result.status === 'PUT_OK' || result.status === 'FLUSH_DISK_TIMEOUT';
    if (!ok) {
      this.logger.error({ status: result.status, halfOffset: half.queueOffset }, 'writing the transaction op message failed');
    }
    return ok;
  }

  markFinished(half: DecodedRecord): void {
    this.finishedKeys.add(transactionKey(half));
    this.finishedOffsets.add(offsetKey(half.queueId, half.queueOffset));
  }

  /** Progress of CID_RMQ_SYS_TRANS on a queue; the queue's min offset when none was saved (Java fetchConsumeOffset). */
  fetchConsumeOffset(topic: string, queueId: number): number {
    const off = this.deps.consumerOffsetManager.queryOffset(SYS_TRANS_GROUP, topic, queueId);
    return off >= 0 ? off : this.deps.store.getMinOffsetInQueue(topic, queueId);
  }

  updateConsumeOffset(topic: string, queueId: number, offset: number): void {
    this.deps.consumerOffsetManager.commitOffset(SYS_TRANS_GROUP, topic, queueId, offset);
  }

  /** Half queues to check: the half topic's read queues (Java fetchMessageQueues). */
  halfQueueIds(): number[] {
    let tc = this.deps.topicConfigManager.get(HALF_TOPIC);
    // Half messages stored but no topic config: topics.json lags the store (an official broker killed before it
    // saved the half topic it had created). Java's check pass creates the config (TransactionalMessageBridge
    // .selectTopicConfig); so do we, only when there is something to check.
    if (!tc && this.deps.store.getQueueIds(HALF_TOPIC).length > 0) {
      this.ensureHalfTopic();
      tc = this.deps.topicConfigManager.get(HALF_TOPIC);
    }
    if (!tc) return [];
    return Array.from({ length: Math.max(0, tc.readQueueNums) }, (_, i) => i);
  }

  /** Reads up to `max` whole records of a queue from `offset`. */
  read(topic: string, queueId: number, offset: number, max = READ_BATCH) {
    return this.deps.store.getMessage(topic, queueId, offset, max, READ_MAX_BYTES);
  }

  private async rebuildFinished(): Promise<void> {
    const { store } = this.deps;
    for (const queueId of store.getQueueIds(OP_TOPIC)) {
      const max = store.getMaxOffsetInQueue(OP_TOPIC, queueId);
      let offset = Math.max(store.getMinOffsetInQueue(OP_TOPIC, queueId), max - REBUILD_MAX_OP_MESSAGES);
      const halfOffsets: number[] = [];
      while (offset < max) {
        const res = await this.read(OP_TOPIC, queueId, offset);
        if (res.records.length === 0) {
          if (res.nextBeginOffset <= offset) break;
          offset = res.nextBeginOffset;
          continue;
        }
        for (const raw of res.records) {
          const op = decodeRecord(raw);
          for (const h of parseOpBody(op.body)) halfOffsets.push(h);
        }
        offset = res.nextBeginOffset;
      }
      for (const h of halfOffsets) {
        this.finishedOffsets.add(offsetKey(queueId, h));
        const res = await this.read(HALF_TOPIC, queueId, h, 1);
        if (res.status === 'FOUND' && res.records.length > 0) this.finishedKeys.add(transactionKey(decodeRecord(res.records[0])));
      }
      if (halfOffsets.length > 0) this.logger.info({ queueId, finished: halfOffsets.length }, 'rebuilt finished transactions from op messages');
    }
  }
}

function offsetKey(queueId: number, queueOffset: number): string {
  return `${queueId}:${queueOffset}`;
}
