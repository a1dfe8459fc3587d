// The consumer gauges of the official 5.x broker (Java broker/metrics/ConsumerLagCalculator): per subscription group
// that is known here (heartbeats, or pulls and pops, which keep a group known for subscriptionExpiredTimeout after
// its consumers left) and per topic it subscribes:
//   lag        messages not yet consumed (committed offset .. max offset; POP: its offset .. max plus those in
//              flight), and the store time of the first of them;
//   inflight   messages handed out and not yet committed (pull offset .. committed; POP: popped, not acked), and
//              the store time at the pull offset;
//   available  messages not yet handed out (pull offset .. max).
// With estimateAccumulation a TAG subscription counts only the entries whose tag hash it takes (sampled from at
// most MAX_SCAN entries per range, as MessageStore.estimateMessageCount does). A POP group gives a second row per
// topic (is_retry) for its retry topic.
import { tagsCodeFilter } from '../filter/tag-filter.js';
import type { BrokerContext } from '../context.js';
import { popRetryTopic, popRetryTopicV1 } from '../pop/pop-keys.js';
import { Perm, RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';

/** Java MessageStoreConfig.maxConsumeQueueScan and sampleCountThreshold. */
const MAX_SCAN = 20_000;
const SAMPLE_MATCH_THRESHOLD = 5_000;
const SCAN_CHUNK = 2_000;

export interface ConsumerLagRow {
  group: string;
  /** The subscribed topic (the retry row carries it too, with isRetry). */
  topic: string;
  isRetry: boolean;
  lag: number;
  /** Store time of the first message not consumed, 0 when none. */
  earliestUnconsumedMs: number;
  inflight: number;
  /** Store time of the message at the pull offset, 0 when none. */
  earliestUnpulledMs: number;
  available: number;
}

type Count = (topic: string, queueId: number, from: number, to: number) => Promise<number>;

export async function consumerLagRows(ctx: BrokerContext): Promise<ConsumerLagRow[]> {
  const { config, consumerManager, topicConfigManager } = ctx;
  const rows: ConsumerLagRow[] = [];
  const usable = (topic: string) => {
    const tc = topicConfigManager.get(topic);
    const perm = (tc?.perm ?? 0) & config.brokerPermission;
    return tc !== undefined && (perm & (Perm.READ | Perm.WRITE)) !== 0;
  };
  for (const group of ctx.subscriptionGroupManager.table.keys()) {
    const info = consumerManager.getConsumerGroupInfo(group, true);
    if (!info) continue;
    // A group whose consumers pop (5.x gRPC clients register as CONSUME_ACTIVELY / PASSIVELY, then pop) counts as
    // POP: what the official broker shows for them behind a cluster-mode proxy, where only its pops reach the broker.
    const isPop = info.consumeType === 'CONSUME_POP' || consumerManager.getCompensatedGroupInfo(group)?.consumeType === 'CONSUME_POP';
    for (const [topic, sub] of info.subscriptions) {
      if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || !usable(topic)) continue;
      // Java estimates TAG subscriptions other than "*" only (an SQL92 one takes every entry of the consume queue)
      const match = config.estimateAccumulation ? tagsCodeFilter(sub) : undefined;
      const count: Count = (t, q, from, to) => estimateCount(ctx, t, q, from, to, match);
      rows.push({ group, topic, isRetry: false, ...(await topicStats(ctx, group, topic, isPop, count)) });
      if (!isPop) continue;
      let retry: string | undefined = popRetryTopic(topic, group, config.enableRetryTopicV2);
      if (!usable(retry)) {
        const v1 = popRetryTopicV1(topic, group);
        retry = config.enableRetryTopicV2 && config.retrieveMessageFromPopRetryTopicV1 && usable(v1) ? v1 : undefined;
      }
      const empty = { lag: 0, earliestUnconsumedMs: 0, inflight: 0, earliestUnpulledMs: 0, available: 0 };
      rows.push({ group, topic, isRetry: true, ...(retry ? await topicStats(ctx, group, retry, true, count) : empty) });
    }
  }
  return rows;
}

/** One topic's sums over its write queues (Java getConsumerLagStats, getInFlightMsgStats, getAvailableMsgCount). */
async function topicStats(
  ctx: BrokerContext, group: string, topic: string, isPop: boolean, count: Count,
): Promise<Omit<ConsumerLagRow, 'group' | 'topic' | 'isRetry'>> {
  const { store, consumerOffsetManager: offsets } = ctx;
  const queues = ctx.topicConfigManager.get(topic)?.writeQueueNums ?? 0;
  let lag = 0;
  let inflight = 0;
  let available = 0;
  let unconsumedMs = Infinity;
  let unpulledMs = Infinity;
  for (let q = 0; q < queues; q++) {
    const max = Math.max(0, store.getMaxOffsetInQueue(topic, q));
    const committed = offsets.queryOffset(group, topic, q);
    if (isPop) {
      // the group's offset moves when messages are popped: it is the pull offset of a POP group
      const pulled = committed < 0 ? max : committed;
      const popped = ctx.popInflight?.get(topic, group, q) ?? 0;
      const notPopped = await count(topic, q, pulled, max);
      lag += notPopped + popped;
      inflight += popped;
      available += notPopped;
      unconsumedMs = Math.min(unconsumedMs, await storeTime(ctx, topic, q, pulled - popped));
      unpulledMs = Math.min(unpulledMs, await storeTime(ctx, topic, q, pulled));
      continue;
    }
    const consumed = committed < 0 ? max : committed;
    lag += await count(topic, q, consumed, max);
    unconsumedMs = Math.min(unconsumedMs, await storeTime(ctx, topic, q, consumed));
    const pullOffset = offsets.queryPullOffset(group, topic, q);
    const pulled = pullOffset < 0 ? 0 : pullOffset;
    inflight += await count(topic, q, committed < 0 ? pulled : committed, pulled);
    unpulledMs = Math.min(unpulledMs, await storeTime(ctx, topic, q, pulled));
    available += await count(topic, q, pullOffset < 0 ? max : pullOffset, max);
  }
  return {
    lag, inflight, available,
    earliestUnconsumedMs: Number.isFinite(unconsumedMs) ? unconsumedMs : 0,
    earliestUnpulledMs: Number.isFinite(unpulledMs) ? unpulledMs : 0,
  };
}

/** Java getStoreTimeStamp: the store time at the offset, Infinity where there is no message. */
async function storeTime(ctx: BrokerContext, topic: string, queueId: number, offset: number): Promise<number> {
  if (offset < 0) return Infinity;
  const t = await ctx.store.getMessageStoreTimestamp(topic, queueId, offset).catch(() => -1);
  return t > 0 ? t : Infinity;
}

/**
 * Java calculateMessageCount / estimateMessageCount: to - from, or with a tag filter the entries it takes, read from
 * the consume queue; past MAX_SCAN entries read or SAMPLE_MATCH_THRESHOLD taken, the share taken so far times the
 * range. A range starting below the queue's minimum is moved up to it, keeping its length.
 */
async function estimateCount(
  ctx: BrokerContext, topic: string, queueId: number, from: number, to: number, match: ((tagsCode: number) => boolean) | undefined,
): Promise<number> {
  if (to <= from) return 0;
  if (!match) return to - from;
  const range = to - from;
  const min = ctx.store.getMinOffsetInQueue(topic, queueId);
  if (from < min) from = min;
  let scanned = 0;
  let matched = 0;
  let sampled = false;
  let at = from;
  while (at < from + range && !sampled) {
    const entries = await ctx.store.getQueueEntries(topic, queueId, at, Math.min(SCAN_CHUNK, from + range - at));
    if (entries.length === 0) break;
    for (const e of entries) {
      if (match(e.tagsCode)) matched++;
      scanned++;
      if (scanned >= MAX_SCAN || matched > SAMPLE_MATCH_THRESHOLD) {
        sampled = true;
        break;
      }
    }
    at = entries[entries.length - 1]!.queueOffset + 1;
  }
  if (scanned === 0) return range; // no consume-queue file covers the range: Java counts it whole
  return sampled ? Math.floor((matched * range) / scanned) : matched;
}
