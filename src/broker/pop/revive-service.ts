// Re-delivery of popped messages nobody acknowledged in time (Java broker/processor/PopReviveService.java, one per
// revive queue, masters only). Checkpoints and acks reach the revive queues through the timer when they are due;
// each round reads a queue from its committed offset, marks the acked bits of every checkpoint, and puts each
// unacked message of a checkpoint that is old enough on the POP retry topic (`%RETRY%<group>_<topic>`, queue 0)
// with reconsumeTimes + 1. The queue's offset (consumer offset of CID_RMQ_SYS_REVIVE_GROUP, Java's convention:
// the last checkpoint done) moves only past checkpoints whose messages were stored again, so a crash in between
// re-delivers (a duplicate), never loses. Revive never dead-letters: consumers decide that.
import { MessageConst, getProperty, parseProperties } from '../../common/message-properties.js';
import type { DecodedRecord, GetResult, PutStatus } from '../../store/index.js';
import { decodeRecord } from '../../store/index.js';
import { messageFromRecord } from '../stored-message.js';
import { Perm, RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';
import type { PopCore } from './pop-core.js';
import { ACK_TIME_INTERVAL_MS, POP_RETRY_QUEUE_NUMS, REVIVE_GROUP, SECOND_MS, normalTopicOf, popRetryTopic } from './pop-keys.js';
import { PROPERTY_FIRST_POP_TIME } from './pop-read.js';
import {
  ACK_TAG, BATCH_ACK_TAG, CK_TAG, type CheckPoint, ackOffsetByIndex, checkPointMessage, decodeAck, decodeCheckPoint, indexOfAck,
  parseRePutTimes, reviveMergeKey, reviveTimeOf,
} from './pop-records.js';

/** PopReviveService.ckRewriteIntervalsInSeconds: how much later a checkpoint that failed to revive comes back. */
const CK_REWRITE_INTERVALS_S = [10, 20, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200];
/** Revive records read per store call (Java reads 32). */
const SCAN_BATCH = 32;
const SCAN_BATCH_BYTES = 4 * 1024 * 1024;
/** After this much quiet on a revive queue (and the timer caught up), "now" counts as its end time. */
const IDLE_END_MS = 3 * SECOND_MS;
const WRITTEN: ReadonlySet<PutStatus> = new Set(['PUT_OK', 'FLUSH_DISK_TIMEOUT', 'FLUSH_SLAVE_TIMEOUT', 'SLAVE_NOT_AVAILABLE']);

/** What one scan of a revive queue found. */
interface Scan {
  oldOffset: number;
  checkPoints: Map<string, CheckPoint>;
  /** The latest due time seen (or now, once the queue is quiet): checkpoints 2 s older than this are revived. */
  endTime: number;
}

export interface ReviveCounters {
  rounds: number;
  checkPoints: number;
  revived: number;
  rePut: number;
}

/** How far a revive queue's processing is behind (Java PopReviveService.getReviveBehindMessages / Millis). */
export interface ReviveBehind {
  messages: number;
  millis: number;
}

export class PopReviveService {
  readonly counters: ReviveCounters = { rounds: 0, checkPoints: 0, revived: 0, rePut: 0 };
  private readonly reviveOffsets = new Map<number, number>();
  /**
   * Per revive queue, Java's currentReviveMessageTimestamp: after each round the revive time of the oldest
   * checkpoint it found, or the round's end when it found none; absent before the queue's first round.
   */
  private readonly reviveTimestamps = new Map<number, number>();
  /**
   * Per revive queue, the highest offset counted as read by the metrics. A round that finds checkpoints not yet
   * due reads them again in the next (Java waits inside its round for up to 4 s instead), so records are counted
   * at their first read, as they are counted once in Java's usual flow.
   */
  private readonly countedUpTo = new Map<number, number>();
  private started = false;
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | null = null;
  private slow = 1;

  constructor(private readonly core: PopCore) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(this.core.ctx.config.reviveInterval);
  }

  async shutdown(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    this.timer = setTimeout(() => {
      this.round = this.runRound()
        .then((found) => {
          const { reviveInterval, reviveMaxSlow } = this.core.ctx.config;
          if (found) {
            this.slow = 1;
            this.schedule(reviveInterval);
          } else {
            // Java takes a rest of slow × interval after an empty round, up to reviveMaxSlow
            this.schedule(reviveInterval + this.slow * reviveInterval);
            if (this.slow < reviveMaxSlow) this.slow++;
          }
        }, (err: unknown) => {
          this.core.ctx.logger.error({ err }, 'pop revive round failed');
          this.schedule(this.core.ctx.config.reviveInterval);
        })
        .finally(() => {
          this.round = null;
        });
    }, delayMs);
    this.timer.unref();
  }

  /** One pass over every revive queue; true when any checkpoint was seen. Exposed for tests. */
  async runRound(): Promise<boolean> {
    this.counters.rounds++;
    let found = false;
    for (let qid = 0; qid < this.core.ctx.config.reviveQueueNum; qid++) {
      if (!this.started) break;
      if ((await this.reviveQueue(qid)) > 0) found = true;
    }
    return found;
  }

  private async reviveQueue(qid: number): Promise<number> {
    const scan = await this.scanQueue(qid);
    const oldest = await this.mergeAndRevive(qid, scan);
    this.reviveTimestamps.set(qid, oldest ?? Date.now());
    return scan.checkPoints.size;
  }

  /**
   * Java getReviveBehindMessages / getReviveBehindMillis of a revive queue: records after the last checkpoint done
   * (as fixed upstream in apache/rocketmq#8652; 5.3.3 counts one more, so an empty queue shows 1), and, while any
   * are, the time since the revive time of the oldest checkpoint of the queue's last round. 0 and 0 before the
   * queue's first round.
   */
  behind(qid: number): ReviveBehind {
    const since = this.reviveTimestamps.get(qid);
    if (since === undefined) return { messages: 0, millis: 0 };
    const { store, consumerOffsetManager } = this.core.ctx;
    const topic = this.core.reviveTopic;
    const done = Math.max(this.reviveOffsets.get(qid) ?? -1, consumerOffsetManager.queryOffset(REVIVE_GROUP, topic, qid));
    const max = store.getMaxOffsetInQueue(topic, qid);
    return { messages: Math.max(0, max - done - 1), millis: max - done > 1 ? Math.max(0, Date.now() - since) : 0 };
  }

  /** PopReviveService.consumeReviveMessage */
  private async scanQueue(qid: number): Promise<Scan> {
    const { ctx } = this.core;
    const topic = this.core.reviveTopic;
    const committed = ctx.consumerOffsetManager.queryOffset(REVIVE_GROUP, topic, qid);
    const oldOffset = Math.max(this.reviveOffsets.get(qid) ?? -1, committed);
    const scan: Scan = { oldOffset, checkPoints: new Map(), endTime: 0 };
    const start = Date.now();
    let offset = oldOffset + 1;
    for (;;) {
      if (!this.started) break;
      // Taken before the read: everything due by then is stored when the read starts.
      const before = Date.now();
      const caughtUp = ctx.timerMessageService?.isCaughtUp(before) ?? true;
      const res: GetResult = await ctx.store.getMessage(topic, qid, offset, SCAN_BATCH, SCAN_BATCH_BYTES);
      if (res.records.length === 0) {
        if (res.status !== 'NO_MESSAGE_IN_QUEUE' && res.status !== 'OFFSET_OVERFLOW_ONE' && res.nextBeginOffset !== offset) {
          // the offset is outside the queue (files removed): continue from where the store says
          ctx.logger.warn({ qid, offset, status: res.status, next: res.nextBeginOffset }, 'revive offset corrected');
          ctx.consumerOffsetManager.commitOffset(REVIVE_GROUP, topic, qid, res.nextBeginOffset - 1);
          this.reviveOffsets.set(qid, res.nextBeginOffset - 1);
          break;
        }
        if (scan.endTime !== 0 && before - scan.endTime > IDLE_END_MS && caughtUp) scan.endTime = before;
        break;
      }
      for (const raw of res.records) this.take(scan, raw);
      offset = res.nextBeginOffset;
      if (Date.now() - start > ctx.config.reviveScanTime) break;
    }
    return scan;
  }

  /** Indexes a checkpoint, or marks the bits an ack or batch ack names. */
  private take(scan: Scan, raw: Buffer): void {
    let rec: DecodedRecord;
    try {
      rec = decodeRecord(raw);
    } catch (err) {
      this.core.ctx.logger.warn({ err }, 'unreadable revive record skipped');
      return;
    }
    const tags = getProperty(rec.propertiesString, MessageConst.TAGS);
    const text = rec.body.toString('utf8');
    const metrics = this.core.ctx.stats.metrics;
    const firstRead = metrics !== undefined && rec.queueOffset > (this.countedUpTo.get(rec.queueId) ?? -1);
    if (firstRead) this.countedUpTo.set(rec.queueId, rec.queueOffset);
    if (tags === CK_TAG) {
      const ck = decodeCheckPoint(text);
      if (ck) {
        if (firstRead) metrics.popReviveRead(ck.group, ck.topic, 'CK', rec.queueId);
        ck.reviveOffset = rec.queueOffset;
        scan.checkPoints.set(reviveMergeKey(ck.topic, ck.group, ck.queueId, ck.startOffset, ck.popTime, ck.brokerName ?? ''), ck);
      }
    } else if (tags === ACK_TAG || tags === BATCH_ACK_TAG) {
      const ack = decodeAck(text);
      if (ack) {
        if (firstRead) metrics.popReviveRead(ack.group, ack.topic, 'ACK', rec.queueId);
        const broker = ack.brokerName ? ack.brokerName : this.core.brokerName;
        const ck = scan.checkPoints.get(reviveMergeKey(ack.topic, ack.group, ack.queueId, ack.startOffset, ack.popTime, broker));
        if (ck) {
          for (const o of tags === ACK_TAG ? [ack.ackOffset] : (ack.ackOffsetList ?? [])) {
            const i = indexOfAck(ck, o);
            if (i >= 0) ck.bitMap = setBit(ck.bitMap, i);
          }
        }
      }
    }
    const deliver = Number(getProperty(rec.propertiesString, MessageConst.TIMER_DELIVER_MS));
    if (Number.isSafeInteger(deliver) && deliver > scan.endTime) scan.endTime = deliver;
  }

  /**
   * PopReviveService.mergeAndRevive: checkpoints in offset order, while they are old enough. Returns the revive
   * time of the first (in offset order) checkpoint the scan found, if any.
   */
  private async mergeAndRevive(qid: number, scan: Scan): Promise<number | undefined> {
    const { ctx } = this.core;
    const topic = this.core.reviveTopic;
    const sorted = [...scan.checkPoints.values()].sort((a, b) => a.reviveOffset - b.reviveOffset);
    let newOffset = scan.oldOffset;
    for (const ck of sorted) {
      if (!this.started) break;
      if (scan.endTime - reviveTimeOf(ck) <= ACK_TIME_INTERVAL_MS + SECOND_MS) break;
      this.counters.checkPoints++;
      const normal = normalTopicOf(ck.topic, ck.group);
      if (ctx.topicConfigManager.get(normal) && ctx.subscriptionGroupManager.findSubscriptionGroupConfig(ck.group)) {
        await this.reviveCheckPoint(qid, ck);
      } else {
        ctx.logger.warn({ qid, topic: ck.topic, group: ck.group }, 'revive: topic or group gone, checkpoint skipped');
      }
      newOffset = ck.reviveOffset;
      ctx.consumerOffsetManager.commitOffset(REVIVE_GROUP, topic, qid, newOffset);
    }
    this.reviveOffsets.set(qid, Math.max(newOffset, this.reviveOffsets.get(qid) ?? -1));
    return sorted.length > 0 ? reviveTimeOf(sorted[0]!) : undefined;
  }

  /** Every unacked message of the checkpoint to the retry topic; a failure re-puts a one-message checkpoint. */
  private async reviveCheckPoint(qid: number, ck: CheckPoint): Promise<void> {
    for (let j = 0; j < ck.num; j++) {
      if (bitIsSet(ck.bitMap, j)) continue;
      const msgOffset = ackOffsetByIndex(ck, j);
      let ok: boolean;
      try {
        const res = await this.core.ctx.store.getMessage(ck.topic, ck.queueId, msgOffset, 1, SCAN_BATCH_BYTES);
        const raw = res.records[0];
        // a local store that does not have the message will not have it later (Java: needRetry false)
        ok = raw ? await this.reviveRetry(ck, decodeRecord(raw)) : true;
      } catch (err) {
        this.core.ctx.logger.error({ err, topic: ck.topic, queueId: ck.queueId, offset: msgOffset }, 'revive: message not readable');
        ok = false;
      }
      if (!ok) await this.rePutCheckPoint(qid, ck, msgOffset);
    }
  }

  /** PopReviveService.reviveRetry */
  private async reviveRetry(ck: CheckPoint, rec: DecodedRecord): Promise<boolean> {
    const { ctx } = this.core;
    const topic = ck.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? ck.topic : popRetryTopic(ck.topic, ck.group, ctx.config.enableRetryTopicV2);
    const props = parseProperties(rec.propertiesString);
    if (rec.reconsumeTimes === 0 || !props.has(PROPERTY_FIRST_POP_TIME)) props.set(PROPERTY_FIRST_POP_TIME, String(ck.popTime));
    const host = this.core.host();
    const msg = messageFromRecord(rec, topic, 0, props, {
      bornHost: host, storeHost: host, reconsumeTimes: rec.reconsumeTimes + 1, preparedTransactionOffset: 0,
    });
    if (!ctx.topicConfigManager.get(topic)) {
      ctx.topicConfigManager.createTopicIfAbsent(topic, POP_RETRY_QUEUE_NUMS, Perm.READ | Perm.WRITE);
      if (ctx.consumerOffsetManager.queryOffset(ck.group, topic, 0) < 0) ctx.consumerOffsetManager.commitOffset(ck.group, topic, 0, 0);
    }
    const res = await ctx.store.putMessage(msg);
    ctx.stats.metrics?.popReviveRetried(ck.group, ck.topic, res.status);
    if (!WRITTEN.has(res.status)) {
      ctx.logger.error({ topic, status: res.status }, 'revive: retry message not stored');
      return false;
    }
    this.counters.revived++;
    ctx.popInflight?.decrement(ck.topic, ck.group, ck.queueId, ck.popTime, 1);
    return true;
  }

  /** PopReviveService.rePutCK */
  private async rePutCheckPoint(qid: number, old: CheckPoint, msgOffset: number): Promise<void> {
    const times = parseRePutTimes(old);
    const ck: CheckPoint = {
      startOffset: msgOffset, popTime: old.popTime, invisibleTime: old.invisibleTime, bitMap: 0, num: 1, queueId: old.queueId,
      topic: old.topic, group: old.group, reviveOffset: 0, queueOffsetDiff: [0], brokerName: old.brokerName,
      rePutTimes: String(times + 1),
    };
    if (reviveTimeOf(old) <= Date.now()) {
      ck.invisibleTime = old.invisibleTime + CK_REWRITE_INTERVALS_S[Math.min(times, CK_REWRITE_INTERVALS_S.length - 1)]! * 1000;
    }
    this.counters.rePut++;
    await this.core.putReviveRecord(checkPointMessage(ck, {
      reviveTopic: this.core.reviveTopic, reviveQid: qid, host: this.core.host(), nowMs: Date.now(),
    }));
  }
}

const bitIsSet = (bits: number, i: number): boolean => Math.floor(bits / 2 ** i) % 2 === 1;
const setBit = (bits: number, i: number): number => (bitIsSet(bits, i) ? bits : bits + 2 ** i);
