// Pulls that name a newer subscription version than the broker knows, waiting briefly for the heartbeat that brings
// it. A stock push consumer bumps its subscription version when a rebalance changes its queues
// (RebalancePushImpl.messageQueueChanged) and heartbeats right after, but its pull thread may already be sending
// pulls with the new version. Java answers those at once with SUBSCRIPTION_NOT_LATEST, and the 4.9.8 client waits
// pullTimeDelayMillsWhenException (1 s, measured) before pulling that queue again: a new consumer then
// starts some of its queues a second late, in about half of the starts measured here, with the official broker as
// with ours. Holding such a pull until the heartbeat lands (milliseconds) answers it as if the race had not happened;
// a pull whose heartbeat does not come in time gets SUBSCRIPTION_NOT_LATEST as before.
import type { SubscriptionData } from './types.js';

/** How long a pull waits for the heartbeat with its subscription version. */
export const SUB_VERSION_WAIT_MS = 500;
/** Pulls waiting at once, at most; more are answered at once (the pre-wait behaviour). */
export const MAX_SUB_VERSION_WAITERS = 4096;

interface Waiter {
  topic: string;
  subVersion: number;
  timer: NodeJS.Timeout;
  resolve: (sub: SubscriptionData | undefined) => void;
}

/** The group's subscription of a topic as the broker knows it now. */
export type SubscriptionLookup = (group: string, topic: string) => SubscriptionData | undefined;

export class SubscriptionVersionWaits {
  private readonly byGroup = new Map<string, Set<Waiter>>();
  private count = 0;
  /** Pulls that waited and got their version from a heartbeat. */
  answered = 0;
  /** Pulls that waited (or could not) and got no such heartbeat: SUBSCRIPTION_NOT_LATEST. */
  refused = 0;

  constructor(private readonly find: SubscriptionLookup) {}

  /** Waiting pulls (for tests and stats). */
  get size(): number {
    return this.count;
  }

  /**
   * Resolves with the group's subscription of the topic once the lookup gives one at `subVersion` or newer (checked
   * at each wake of the group), or with undefined after timeoutMs, at shutdown, or at once when too many are waiting.
   */
  wait(group: string, topic: string, subVersion: number, timeoutMs: number): Promise<SubscriptionData | undefined> {
    const now = this.find(group, topic);
    if (now && now.subVersion >= subVersion) return Promise.resolve(now);
    if (this.count >= MAX_SUB_VERSION_WAITERS || timeoutMs <= 0) {
      this.refused++;
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      let set = this.byGroup.get(group);
      if (!set) {
        set = new Set();
        this.byGroup.set(group, set);
      }
      const waiters = set;
      const waiter: Waiter = {
        topic,
        subVersion,
        resolve,
        timer: setTimeout(() => {
          this.remove(group, waiters, waiter);
          this.refused++;
          resolve(undefined);
        }, timeoutMs),
      };
      waiters.add(waiter);
      this.count++;
    });
  }

  /** A heartbeat of the group was registered: answers the waiters whose version it now has. */
  wake(group: string): void {
    const waiters = this.byGroup.get(group);
    if (!waiters) return;
    for (const w of [...waiters]) {
      const sub = this.find(group, w.topic);
      if (!sub || sub.subVersion < w.subVersion) continue;
      clearTimeout(w.timer);
      this.remove(group, waiters, w);
      this.answered++;
      w.resolve(sub);
    }
  }

  /** Answers every waiter with undefined (broker shutdown). */
  close(): void {
    for (const [group, waiters] of [...this.byGroup]) {
      for (const w of [...waiters]) {
        clearTimeout(w.timer);
        this.remove(group, waiters, w);
        w.resolve(undefined);
      }
    }
  }

  private remove(group: string, waiters: Set<Waiter>, w: Waiter): void {
    if (!waiters.delete(w)) return;
    this.count--;
    if (waiters.size === 0 && this.byGroup.get(group) === waiters) this.byGroup.delete(group);
  }
}
