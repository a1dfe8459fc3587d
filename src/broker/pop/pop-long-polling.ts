// Long polling for POP_MESSAGE and NOTIFICATION (Java broker/longpolling/PopLongPollingService.java): a request
// that found nothing waits under `<topic>@<group>@<queueId>` (queueId −1 = every queue) until a message arrives for
// it or its deadline (bornTime + pollTime) passes; either way it is run again once. The POP service takes the
// oldest waiter of a key first, the NOTIFICATION service the newest (notifyLast).
import type { Logger } from '../../common/logger.js';
import type { DispatchedEntry } from '../../store/index.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';
import { isPopRetryTopicV2, queueKey } from './pop-keys.js';

export type WakeReason = 'arrival' | 'timeout' | 'closed' | 'shutdown';

/** One parked request. `wake` is called exactly once. */
export interface PollingWaiter {
  /** Whether an arriving message is one this request could take (tags, SQL92); absent = any. */
  matches?: (entry: DispatchedEntry) => boolean;
  /** The requester went away: the waiter is dropped without running again. */
  isClosed(): boolean;
  wake(reason: WakeReason): void;
}

/** Java PollingResult */
export type PollingResult = 'POLLING_SUC' | 'POLLING_FULL' | 'POLLING_TIMEOUT' | 'NOT_POLLING';

export interface PollingLimits {
  /** Waiters per key beyond which a request is refused with POLLING_FULL (Java popPollingSize, 1024). */
  popPollingSize: number;
  /** Waiters in total (Java maxPopPollingSize, 100000). */
  maxPopPollingSize: number;
  /** Every this-many-th offset wakes a waiter whatever its filter (Java popLongPollingForceNotifyInterval). */
  popLongPollingForceNotifyInterval: number;
}

interface Parked {
  key: string;
  waiter: PollingWaiter;
  timer: NodeJS.Timeout;
}

export class PopLongPolling {
  private readonly byKey = new Map<string, Set<Parked>>();
  /** topic → groups that have polled it (Java topicCidMap). */
  private readonly groupsByTopic = new Map<string, Set<string>>();
  /** v1 retry topic `%RETRY%<group>_<topic>` → its (topic, group): a retry put wakes that topic's waiters. */
  private readonly retryOwners = new Map<string, { topic: string; group: string }>();
  private total = 0;
  private stopped = false;

  constructor(
    private readonly notifyLast: boolean,
    private readonly limits: () => PollingLimits,
    private readonly logger: Logger,
  ) {}

  get parkedCount(): number {
    return this.total;
  }

  /** Waiters under one key (POLLING_INFO). */
  countAt(topic: string, group: string, queueId: number): number {
    return this.byKey.get(queueKey(topic, group, queueId))?.size ?? 0;
  }

  /**
   * Parks a request (PopLongPollingService.polling). NOT_POLLING when pollTime ≤ 0; POLLING_TIMEOUT when the
   * deadline has passed already; POLLING_FULL when the limits are reached.
   */
  polling(
    topic: string, group: string, queueId: number, deadlineMs: number, pollTimeMs: number, waiter: PollingWaiter,
    retryTopicV1?: string,
  ): PollingResult {
    if (pollTimeMs <= 0 || this.stopped) return 'NOT_POLLING';
    let groups = this.groupsByTopic.get(topic);
    if (!groups) {
      groups = new Set();
      this.groupsByTopic.set(topic, groups);
    }
    groups.add(group);
    if (retryTopicV1) this.retryOwners.set(retryTopicV1, { topic, group });
    const limits = this.limits();
    if (this.total >= limits.maxPopPollingSize) return 'POLLING_FULL';
    const now = Date.now();
    if (deadlineMs <= now) return 'POLLING_TIMEOUT';
    const key = queueKey(topic, group, queueId);
    let set = this.byKey.get(key);
    if (!set) {
      set = new Set();
      this.byKey.set(key, set);
    } else if (set.size > limits.popPollingSize) {
      return 'POLLING_FULL';
    }
    const parked: Parked = { key, waiter, timer: setTimeout(() => this.release(parked, 'timeout'), deadlineMs - now) };
    set.add(parked);
    this.total++;
    return 'POLLING_SUC';
  }

  /**
   * Wakes one waiter of `<topic>@<group>@<queueId>` (PopLongPollingService.notifyMessageArriving): the oldest (or
   * newest), skipping closed ones; a waiter whose filter rejects `entry` stays parked unless `force`.
   */
  notifyArriving(topic: string, queueId: number, group: string, entry?: DispatchedEntry, force = false): boolean {
    const set = this.byKey.get(queueKey(topic, group, queueId));
    if (!set || set.size === 0) return false;
    const order = this.notifyLast ? [...set].reverse() : set;
    for (const p of order) {
      if (p.waiter.isClosed()) {
        this.release(p, 'closed');
        continue;
      }
      if (!force && entry && p.waiter.matches) {
        let wanted = true;
        try {
          wanted = p.waiter.matches(entry);
        } catch (err) {
          this.logger.error({ err }, 'pop waiter filter failed; waking it');
        }
        if (!wanted) return false; // Java puts it back and stops (one waiter is looked at per key)
      }
      this.release(p, 'arrival');
      return true;
    }
    return false;
  }

  /**
   * Store dispatch listener (PopLongPollingService.notifyMessageArrivingWithRetryTopic): for each group polling
   * the topic, one waiter of `T@g@-1` and one of `T@g@q`. A put to a POP retry topic wakes its topic's waiters
   * (5.3.3 does this for v2 names only; ours for v1 too, which only shortens the wait).
   */
  onDispatch = (entry: DispatchedEntry): void => {
    if (this.total === 0) return;
    let topic = entry.topic;
    let onlyGroup: string | undefined;
    if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
      if (isPopRetryTopicV2(topic)) {
        topic = topic.slice(topic.indexOf('+') + 1);
      } else {
        const owner = this.retryOwners.get(topic);
        if (!owner) return;
        topic = owner.topic;
        onlyGroup = owner.group;
      }
    }
    const groups = this.groupsByTopic.get(topic);
    if (!groups) return;
    const interval = this.limits().popLongPollingForceNotifyInterval;
    const force = interval > 0 && entry.queueOffset % interval === 0;
    for (const group of onlyGroup ? [onlyGroup] : groups) {
      if (!groups.has(group)) continue;
      this.notifyArriving(topic, -1, group, entry, force);
      this.notifyArriving(topic, entry.queueId, group, entry, force);
    }
  };

  private release(p: Parked, reason: WakeReason): void {
    const set = this.byKey.get(p.key);
    if (!set || !set.delete(p)) return;
    if (set.size === 0) this.byKey.delete(p.key);
    this.total--;
    clearTimeout(p.timer);
    try {
      p.waiter.wake(reason);
    } catch (err) {
      this.logger.error({ err }, 'pop waiter failed on wake-up');
    }
  }

  /** Answers every waiter now (shutdown); later polling() calls do not park. */
  shutdown(): void {
    this.stopped = true;
    for (const set of [...this.byKey.values()]) for (const p of [...set]) this.release(p, 'shutdown');
  }

  /** Forgets topics and groups that no longer exist (Java cleanUnusedResource, every 5 min). */
  cleanUnused(topicExists: (t: string) => boolean, groupExists: (g: string) => boolean): void {
    for (const [topic, groups] of this.groupsByTopic) {
      if (!topicExists(topic)) {
        this.groupsByTopic.delete(topic);
        continue;
      }
      for (const g of groups) if (!groupExists(g)) groups.delete(g);
    }
    for (const [retry, owner] of this.retryOwners) {
      if (!topicExists(owner.topic) || !groupExists(owner.group)) this.retryOwners.delete(retry);
    }
  }
}
