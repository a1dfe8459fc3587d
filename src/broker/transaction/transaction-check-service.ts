import type { Logger } from '../../common/logger.js';
import { MessageConst, encodeProperties, parseProperties } from '../../common/message-properties.js';
import { decodeRecord, encodeRecord, type DecodedRecord, type GetStatus } from '../../store/index.js';
import type { ProducerManager } from '../client/producer-manager.js';
import { createOffsetMessageId } from '../message-id.js';
import { Perm } from '../topic/topic-config.js';
import type { TopicConfigManager } from '../topic/topic-config-manager.js';
import type { TransactionalMessageService } from './transactional-message-service.js';
import { checkTransactionState } from '../client/broker-to-client.js';
import {
  CHECK_MAX_TIME_TOPIC,
  HALF_TOPIC,
  OP_TOPIC,
  REMOVE_TAG,
  immunityTimeMs,
  parseOpBody,
  renewHalfMessage,
  transactionKey,
} from './transactional-message-util.js';

/** TransactionalMessageServiceImpl.MAX_PROCESS_TIME_LIMIT: one queue's pass stops after 60 s. */
const MAX_QUEUE_PROCESS_TIME_MS = 60_000;
/** Our cap on check-backs sent per queue and pass (Java has only the time cap). */
const MAX_CHECKS_PER_PASS = 10_000;
/** TransactionalMessageServiceImpl.MAX_RETRY_COUNT_WHEN_HALF_NULL */
const MAX_RETRY_COUNT_WHEN_HALF_NULL = 1;

const NO_NEW_MESSAGE: ReadonlySet<GetStatus> = new Set<GetStatus>(['NO_MESSAGE_IN_QUEUE', 'OFFSET_OVERFLOW_ONE']);

export interface CheckServiceDeps {
  tx: TransactionalMessageService;
  producerManager: ProducerManager;
  topicConfigManager: TopicConfigManager;
  brokerName(): string;
  logger: Logger;
  /** A half message moved to TRANS_CHECK_MAX_TIME_TOPIC (its real topic and born time), for the metrics. */
  onDiscarded?(realTopic: string, bornTimestampMs: number): void;
}

export interface CheckPassStats {
  checked: number;
  discarded: number;
  skippedDone: number;
}

/** Op messages of one op queue read so far in a pass (TransactionalMessageServiceImpl.fillOpRemoveMap). */
interface OpState {
  /** half offset → op offset naming it, for half offsets at or above the pass's start. */
  removeMap: Map<number, number>;
  /** op offset → its half offsets not yet matched. */
  opMsgMap: Map<number, Set<number>>;
  /** op offsets fully accounted for. */
  doneOps: number[];
  /** op offset progress is counted from here (moves forward when the saved offset was out of range). */
  base: number;
  next: number;
  exhausted: boolean;
}

/**
 * Java TransactionalMessageCheckService + TransactionalMessageServiceImpl.check: every transactionCheckInterval,
 * scans each half queue from the saved progress, skips finished half messages (told by op messages), and for
 * each unfinished one older than transactionTimeOut re-appends a copy (TRANSACTION_CHECK_TIMES + 1) and asks a
 * live producer of its group with CHECK_TRANSACTION_STATE (39, oneway). After transactionCheckMax checks (or past
 * the file reserved time) the message is moved to TRANS_CHECK_MAX_TIME_TOPIC instead.
 */
export class TransactionCheckService {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private started = false;
  private stopping = false;
  private readonly logger: Logger;

  constructor(private readonly deps: CheckServiceDeps) {
    this.logger = deps.logger;
  }

  start(): void {
    this.started = true;
    this.stopping = false;
    this.schedule();
  }

  async shutdown(): Promise<void> {
    this.started = false;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await this.deps.tx.ready(); // the start-up rebuild reads the store, which closes next
  }

  /** Java waits transactionCheckInterval before every pass, the first one included. */
  private schedule(): void {
    if (!this.started) return;
    const interval = this.deps.tx.config.transactionCheckInterval;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.checkOnce()
        .then(() => undefined)
        .catch((err) => this.logger.error({ err }, 'transaction check pass failed'))
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, interval);
    this.timer.unref();
  }

  /** One pass over every half queue. Public for tests. */
  async checkOnce(): Promise<CheckPassStats> {
    const stats: CheckPassStats = { checked: 0, discarded: 0, skippedDone: 0 };
    await this.deps.tx.ready();
    for (const queueId of this.deps.tx.halfQueueIds()) {
      if (this.stopping) break;
      await this.checkQueue(queueId, stats);
    }
    return stats;
  }

  private async checkQueue(queueId: number, stats: CheckPassStats): Promise<void> {
    const { tx } = this.deps;
    const { transactionTimeOut, transactionCheckMax, fileReservedTime } = tx.config;
    const startTime = Date.now();
    const halfOffset = tx.fetchConsumeOffset(HALF_TOPIC, queueId);
    const opOffset = tx.fetchConsumeOffset(OP_TOPIC, queueId);
    if (halfOffset < 0 || opOffset < 0) return;

    const ops: OpState = { removeMap: new Map(), opMsgMap: new Map(), doneOps: [], base: opOffset, next: opOffset, exhausted: false };
    await this.fillOps(ops, queueId, halfOffset);

    const halves = new HalfReader(tx, queueId);
    let nullCount = 1;
    let newOffset = halfOffset;
    let i = halfOffset;
    let checks = 0;
    for (;;) {
      if (Date.now() - startTime > MAX_QUEUE_PROCESS_TIME_MS || checks >= MAX_CHECKS_PER_PASS) break;
      if (this.stopping) break;
      const opOfHalf = ops.removeMap.get(i);
      if (opOfHalf !== undefined) {
        this.matchOp(ops, i, opOfHalf);
        stats.skippedDone++;
        newOffset = ++i;
        continue;
      }
      const got = await halves.get(i);
      if (!got.record) {
        if (nullCount++ > MAX_RETRY_COUNT_WHEN_HALF_NULL) break;
        if (NO_NEW_MESSAGE.has(got.status) || got.nextBeginOffset <= i) break;
        i = got.nextBeginOffset; // offset moved (file deleted): jump like Java
        newOffset = i;
        continue;
      }
      const half = got.record;
      const props = parseProperties(half.propertiesString);
      if (tx.isFinished(half, transactionKey(half, props))) {
        // finished through another copy of the same transaction (or an op we have not read yet)
        stats.skippedDone++;
        newOffset = ++i;
        continue;
      }
      if (needDiscard(props, transactionCheckMax) || needSkip(half, fileReservedTime)) {
        await this.resolveDiscard(half, props);
        stats.discarded++;
        newOffset = ++i;
        continue;
      }
      if (half.storeTimestamp >= startTime) break; // stored during this pass (our own copies included)

      const now = Date.now();
      const age = now - half.bornTimestamp;
      let immunity = transactionTimeOut;
      const immunityStr = props.get(MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS);
      if (immunityStr !== undefined) {
        immunity = immunityTimeMs(immunityStr, transactionTimeOut);
        if (age <= immunity && (await this.checkPrepareQueueOffset(ops, half, props))) {
          newOffset = ++i;
          continue;
        }
      } else if (age >= 0 && age <= immunity) {
        break; // too young to check; so is everything after it
      }
      if (!ops.exhausted && age > -1) {
        await this.fillOps(ops, queueId, halfOffset); // maybe a later op message finishes it
        continue;
      }
      if (!(age > immunity || age <= -1)) break;

      const copy = await tx.store.putMessage(renewHalfMessage(half, props));
      if (copy.status !== 'PUT_OK' && copy.status !== 'FLUSH_DISK_TIMEOUT') {
        this.logger.error({ status: copy.status, halfOffset: i }, 'putting a half message back for check failed');
        break; // Java retries the same offset until its time cap; the next pass will
      }
      this.sendCheckMessage(half, props, copy.queueOffset, copy.commitLogOffset);
      checks++;
      stats.checked++;
      newOffset = ++i;
    }
    if (newOffset !== halfOffset) tx.updateConsumeOffset(HALF_TOPIC, queueId, newOffset);
    const newOpOffset = calculateOpOffset(ops.doneOps, ops.base);
    if (newOpOffset !== opOffset) tx.updateConsumeOffset(OP_TOPIC, queueId, newOpOffset);
  }

  /** Reads the next batch of op messages into the pass state. */
  private async fillOps(ops: OpState, queueId: number, miniOffset: number): Promise<void> {
    if (ops.exhausted) return;
    const res = await this.deps.tx.read(OP_TOPIC, queueId, ops.next);
    if (res.records.length === 0) {
      if (!NO_NEW_MESSAGE.has(res.status) && res.status !== 'FOUND' && res.nextBeginOffset > ops.next) {
        // the saved op offset is out of range: restart counting from where the queue really is (Java does the same)
        this.logger.warn({ queueId, opOffset: ops.next, status: res.status }, 'transaction op offset illegal; moving on');
        ops.next = res.nextBeginOffset;
        ops.base = res.nextBeginOffset;
        this.deps.tx.updateConsumeOffset(OP_TOPIC, queueId, res.nextBeginOffset);
        return;
      }
      ops.exhausted = true;
      return;
    }
    for (const raw of res.records) {
      const op = decodeRecord(raw);
      const tags = parseProperties(op.propertiesString).get(MessageConst.TAGS);
      const pending = new Set<number>();
      if (tags === REMOVE_TAG) {
        for (const h of parseOpBody(op.body)) {
          if (h < miniOffset) continue;
          ops.removeMap.set(h, op.queueOffset);
          pending.add(h);
        }
      } else {
        this.logger.error({ opOffset: op.queueOffset, tags }, 'op message with an unexpected tag');
      }
      if (pending.size > 0) ops.opMsgMap.set(op.queueOffset, pending);
      else ops.doneOps.push(op.queueOffset);
    }
    ops.next = res.nextBeginOffset;
  }

  private matchOp(ops: OpState, halfOffset: number, opOffset: number): void {
    ops.removeMap.delete(halfOffset);
    const pending = ops.opMsgMap.get(opOffset);
    if (!pending) return;
    pending.delete(halfOffset);
    if (pending.size === 0) {
      ops.opMsgMap.delete(opOffset);
      ops.doneOps.push(opOffset);
    }
  }

  /**
   * CHECK_IMMUNITY_TIME_IN_SECONDS (Java checkPrepareQueueOffset): while a half message is immune, it is re-queued
   * with TRAN_PREPARED_QUEUE_OFFSET naming the original, until an op for the original shows up. True = move on.
   */
  private async checkPrepareQueueOffset(ops: OpState, half: DecodedRecord, props: Map<string, string>): Promise<boolean> {
    const prepared = props.get(MessageConst.TRANSACTION_PREPARED_QUEUE_OFFSET);
    if (prepared !== undefined) {
      if (!/^\d+$/.test(prepared)) return false;
      const original = Number(prepared);
      const opOffset = ops.removeMap.get(original);
      if (opOffset !== undefined) {
        this.matchOp(ops, original, opOffset);
        return true;
      }
    } else {
      props.set(MessageConst.TRANSACTION_PREPARED_QUEUE_OFFSET, String(half.queueOffset));
    }
    const res = await this.deps.tx.store.putMessage(renewHalfMessage(half, props));
    return res.status === 'PUT_OK' || res.status === 'FLUSH_DISK_TIMEOUT';
  }

  /** DefaultTransactionalMessageCheckListener.resolveDiscardMsg: park it in TRANS_CHECK_MAX_TIME_TOPIC. */
  private async resolveDiscard(half: DecodedRecord, props: Map<string, string>): Promise<void> {
    this.logger.warn(
      { uniqKey: props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX), halfOffset: half.queueOffset },
      `half message checked too many times or too old; moved to ${CHECK_MAX_TIME_TOPIC}`,
    );
    this.deps.topicConfigManager.createTopicIfAbsent(CHECK_MAX_TIME_TOPIC, 1, Perm.READ | Perm.WRITE);
    // The same copy as a check-back renewal, but parked on TRANS_CHECK_MAX_TIME_TOPIC.
    const res = await this.deps.tx.store.putMessage({ ...renewHalfMessage(half, props), topic: CHECK_MAX_TIME_TOPIC, queueId: 0 });
    if (res.status !== 'PUT_OK' && res.status !== 'FLUSH_DISK_TIMEOUT') {
      this.logger.error({ status: res.status }, `putting a discarded half message to ${CHECK_MAX_TIME_TOPIC} failed`);
    } else {
      this.deps.onDiscarded?.(props.get(MessageConst.REAL_TOPIC) ?? half.topic, half.bornTimestamp);
    }
  }

  /**
   * AbstractTransactionalMessageCheckListener.sendCheckMessage + Broker2Client.checkProducerTransactionState.
   * The header names the copy just appended (the producer's END must quote it); the body is the message with its
   * real topic and queue restored, encoded as one stored record.
   */
  private sendCheckMessage(half: DecodedRecord, props: Map<string, string>, copyQueueOffset: number, copyCommitLogOffset: number): void {
    const group = props.get(MessageConst.PRODUCER_GROUP) ?? '';
    const uniqKey = props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
    const header: Record<string, string> = {
      topic: HALF_TOPIC, // 5.x sets it before restoring the real topic
      tranStateTableOffset: String(copyQueueOffset),
      commitLogOffset: String(copyCommitLogOffset),
      offsetMsgId: createOffsetMessageId(half.storeHost, copyCommitLogOffset),
      bname: this.deps.brokerName(),
    };
    if (uniqKey) {
      header.msgId = uniqKey;
      header.transactionId = uniqKey;
    }
    // Java's renewHalfMessageInner sets WAIT=false on the property map it shares with the checked message, so the
    // check body (not the stored copy) carries WAIT=false (seen in captures from 4.9.8 and 5.3.3).
    const bodyProps = new Map(props).set(MessageConst.WAIT_STORE_MSG_OK, 'false');
    const realTopic = props.get(MessageConst.REAL_TOPIC) ?? half.topic;
    const realQid = Number(props.get(MessageConst.REAL_QUEUE_ID) ?? half.queueId);
    const body = encodeRecord(
      {
        topic: realTopic,
        queueId: Number.isInteger(realQid) ? realQid : half.queueId,
        flag: half.flag,
        body: half.body,
        propertiesString: encodeProperties(bodyProps),
        tagsCode: 0,
        sysFlag: half.sysFlag,
        bornTimestamp: half.bornTimestamp,
        bornHost: half.bornHost,
        storeHost: half.storeHost,
        reconsumeTimes: half.reconsumeTimes,
        preparedTransactionOffset: half.preparedTransactionOffset,
      },
      copyQueueOffset,
      copyCommitLogOffset,
      half.storeTimestamp,
    );
    const channel = this.deps.producerManager.getAvailableChannel(group);
    if (!channel) {
      this.logger.warn({ group, uniqKey }, 'transaction check skipped: no live producer of the group');
      return;
    }
    if (!checkTransactionState(channel, header, body)) {
      this.logger.warn({ group, peer: channel.remoteAddress }, 'sending CHECK_TRANSACTION_STATE failed');
    }
  }
}

/** Java needDiscard: true at transactionCheckMax checks; otherwise counts this check in the properties. */
function needDiscard(props: Map<string, string>, transactionCheckMax: number): boolean {
  const raw = props.get(MessageConst.TRANSACTION_CHECK_TIMES);
  let times = 1;
  if (raw !== undefined) {
    times = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : -1;
    if (times >= transactionCheckMax) return true;
    times++;
  }
  props.set(MessageConst.TRANSACTION_CHECK_TIMES, String(times));
  return false;
}

/** Java needSkip: born before the commit log's retention time (MessageStoreConfig.fileReservedTime, hours). */
function needSkip(half: DecodedRecord, fileReservedTimeHours: number): boolean {
  return Date.now() - half.bornTimestamp > fileReservedTimeHours * 3600 * 1000;
}

/** Java calculateOpOffset: move over the contiguous run of done op offsets. */
function calculateOpOffset(doneOps: number[], oldOffset: number): number {
  doneOps.sort((a, b) => a - b);
  let next = oldOffset;
  for (const d of doneOps) {
    if (d === next) next++;
    else if (d > next) break;
  }
  return next;
}

/** Reads half messages in small batches, in queue order. */
class HalfReader {
  private cache = new Map<number, DecodedRecord>();
  constructor(
    private readonly tx: TransactionalMessageService,
    private readonly queueId: number,
  ) {}

  async get(offset: number): Promise<{ record?: DecodedRecord; status: GetStatus; nextBeginOffset: number }> {
    const hit = this.cache.get(offset);
    if (hit) return { record: hit, status: 'FOUND', nextBeginOffset: offset + 1 };
    const res = await this.tx.read(HALF_TOPIC, this.queueId, offset);
    this.cache = new Map();
    for (const raw of res.records) {
      const rec = decodeRecord(raw);
      this.cache.set(rec.queueOffset, rec);
    }
    const rec = this.cache.get(offset);
    return { record: rec, status: res.status, nextBeginOffset: res.nextBeginOffset };
  }
}
