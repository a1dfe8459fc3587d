import { type Logger, silentLogger } from '../../common/logger.js';
import type { MessageQueue } from './types.js';

interface LockEntry {
  clientId: string;
  lastUpdateTimestamp: number;
}

const mqKey = (mq: MessageQueue): string => `${mq.topic}\u0000${mq.brokerName}\u0000${mq.queueId}`;

/**
 * Orderly-consumer queue locks: group → queue → holder (Java: broker/client/rebalance/RebalanceLockManager.java).
 * A lock lives lockMaxLiveTimeMills (Java property rocketmq.broker.rebalance.lockMaxLiveTime, 60 s) after the
 * holder's last lock request; orderly clients renew every 20 s. The limit is read on every call, so
 * UPDATE_BROKER_CONFIG takes effect at once.
 */
export class RebalanceLockManager {
  private readonly table = new Map<string, Map<string, LockEntry>>();

  constructor(
    private readonly config: { lockMaxLiveTimeMills: number },
    private readonly logger: Logger = silentLogger(),
    private readonly now: () => number = Date.now,
  ) {}

  private isExpired(entry: LockEntry, now: number): boolean {
    return now - entry.lastUpdateTimestamp > this.config.lockMaxLiveTimeMills;
  }

  /**
   * Grants every queue that is free, expired or already held by clientId (refreshing it) and returns those;
   * queues held by another live client are left out.
   */
  tryLockBatch(group: string, mqs: readonly MessageQueue[], clientId: string): MessageQueue[] {
    const now = this.now();
    let groupTable = this.table.get(group);
    if (!groupTable) {
      groupTable = new Map();
      this.table.set(group, groupTable);
    }
    const locked: MessageQueue[] = [];
    const seen = new Set<string>();
    for (const mq of mqs) {
      const key = mqKey(mq);
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = groupTable.get(key);
      if (!entry) {
        groupTable.set(key, { clientId, lastUpdateTimestamp: now });
        this.logger.info({ group, clientId, mq }, 'locked a free message queue');
        locked.push(mq);
      } else if (entry.clientId === clientId) {
        // Java refreshes even an expired entry of the same client.
        entry.lastUpdateTimestamp = now;
        locked.push(mq);
      } else if (this.isExpired(entry, now)) {
        this.logger.warn({ group, mq, oldClientId: entry.clientId, clientId }, 'took over an expired message queue lock');
        entry.clientId = clientId;
        entry.lastUpdateTimestamp = now;
        locked.push(mq);
      } else {
        this.logger.warn({ group, mq, lockedBy: entry.clientId, clientId }, 'message queue is locked by another client');
      }
    }
    if (groupTable.size === 0) this.table.delete(group);
    return locked;
  }

  /** Releases the queues clientId holds; queues held by others are left alone. */
  unlockBatch(group: string, mqs: readonly MessageQueue[], clientId: string): void {
    const groupTable = this.table.get(group);
    if (!groupTable) return;
    for (const mq of mqs) {
      const key = mqKey(mq);
      const entry = groupTable.get(key);
      if (!entry) continue;
      if (entry.clientId === clientId) {
        groupTable.delete(key);
        this.logger.info({ group, clientId, mq }, 'unlocked message queue');
      } else {
        this.logger.warn({ group, mq, lockedBy: entry.clientId, clientId }, 'unlock refused: queue held by another client');
      }
    }
    if (groupTable.size === 0) this.table.delete(group);
  }

  /** Whether clientId holds a live lock on the queue. A pure query: it does not renew the lock. */
  isLocked(group: string, mq: MessageQueue, clientId: string): boolean {
    const entry = this.table.get(group)?.get(mqKey(mq));
    return entry !== undefined && entry.clientId === clientId && !this.isExpired(entry, this.now());
  }

  /** Whether any queue of the group is under a live lock (Java !isLockAllExpired; orderly retries go to the DLQ). */
  isLockedByAnyone(group: string): boolean {
    const groupTable = this.table.get(group);
    if (!groupTable) return false;
    const now = this.now();
    for (const entry of groupTable.values()) if (!this.isExpired(entry, now)) return true;
    return false;
  }

  /** Drops expired entries so abandoned groups do not accumulate (Java keeps them forever). */
  removeExpired(): void {
    const now = this.now();
    for (const [group, groupTable] of this.table) {
      for (const [key, entry] of groupTable) if (this.isExpired(entry, now)) groupTable.delete(key);
      if (groupTable.size === 0) this.table.delete(group);
    }
  }
}
