// Builds consume-queue entries from commit-log records (Java ReputMessageService + CommitLogDispatcherBuildConsumeQueue)
// and notifies listeners (long polling). Entries are idempotent by queue offset, so re-dispatching is safe.
import type { Logger } from 'pino';
import type { DispatchedEntry } from './types.js';
import type { ConsumeQueueStore } from './consume-queue/store.js';
import type { IndexService } from './index/index-service.js';
import type { WrittenRecord } from './commit-log/port.js';
import { isQueuedTransactionType, type DecodedRecord } from './record.js';
import { javaStringHashCode } from '../common/java-hash.js';
import { TIMER_TOPIC, timerTagsCode } from './timer-topic.js';
import { getProperty } from './record-properties.js';

/** TopicValidator.RMQ_SYS_SCHEDULE_TOPIC */
export const SCHEDULE_TOPIC = 'SCHEDULE_TOPIC_XXXX';

/**
 * The consume-queue tagsCode of a stored record, as CommitLog.checkMessageAndReturnSize computes it:
 * hashCode(TAGS) (0 without tags); in SCHEDULE_TOPIC_XXXX the delivery time for the DELAY level; in the timer
 * topic the time the timer service acts on it (ours, see timer-topic.ts).
 */
export function tagsCodeOf(topic: string, propertiesString: string, storeTimestamp: number, delayLevelsMs: readonly number[]): number {
  if (propertiesString.length === 0) return 0;
  if (topic === TIMER_TOPIC) return timerTagsCode(propertiesString, storeTimestamp);
  let tagsCode = 0;
  const tags = getProperty(propertiesString, 'TAGS');
  if (tags) tagsCode = javaStringHashCode(tags);
  if (topic === SCHEDULE_TOPIC) {
    const level = Number.parseInt(getProperty(propertiesString, 'DELAY') ?? '', 10);
    if (Number.isFinite(level) && level > 0 && delayLevelsMs.length > 0) {
      tagsCode = storeTimestamp + delayLevelsMs[Math.min(level, delayLevelsMs.length) - 1]!;
    }
  }
  return tagsCode;
}

/** Convenience for brokers building a MessageToStore: the tagsCode of a TAGS value (0 when empty). */
export function tagsCodeOfTags(tags: string | undefined): number {
  return tags ? javaStringHashCode(tags) : 0;
}

export type DispatchListener = (entry: DispatchedEntry) => void;

export class Dispatcher {
  private readonly listeners: DispatchListener[] = [];
  /** Store timestamp of the newest record dispatched (checkpoint logicsMsgTimestamp after a CQ flush). */
  lastStoreTimestamp = 0;

  constructor(
    private readonly cqStore: ConsumeQueueStore,
    private readonly logger: Logger,
    private readonly delayLevelsMs: readonly number[],
    /** CommitLogDispatcherBuildIndex; null with messageIndexEnable=false. */
    private readonly index: IndexService | null = null,
  ) {}

  onDispatch(listener: DispatchListener): void {
    this.listeners.push(listener);
  }

  /** End of the last record handed to the queues (the store sets it to the log's end after recovery). */
  dispatchedEndOffset = 0;

  /** Records just written by the commit log, in log order. */
  dispatchWritten(entries: WrittenRecord[]): void {
    const last = entries[entries.length - 1];
    if (last) this.dispatchedEndOffset = Math.max(this.dispatchedEndOffset, last.commitLogOffset + last.sizeBytes);
    for (const e of entries) {
      // Java order: consume queue, index, then wake long polls.
      if (!e.queued) {
        if (this.index) this.buildIndex(e);
        continue;
      }
      let added: boolean;
      try {
        added = this.cqStore.getOrCreate(e.topic, e.queueId).putEntry(e.queueOffset, e.commitLogOffset, e.sizeBytes, e.tagsCode, e.storeTimestamp);
      } catch (err) {
        // One entry failing must not cost the batch's others their entries (a queue hole); a restart rebuilds it.
        this.logger.error({ err, topic: e.topic, queueId: e.queueId, queueOffset: e.queueOffset }, 'dispatch: consume-queue entry failed');
        continue;
      }
      if (!added) {
        this.logger.warn({ topic: e.topic, queueId: e.queueId, queueOffset: e.queueOffset },
          'dispatch: entry already present');
        continue;
      }
      this.lastStoreTimestamp = e.storeTimestamp;
      if (this.index) this.buildIndex(e);
      for (const l of this.listeners) {
        try {
          l(e);
        } catch (err) {
          this.logger.error({ err }, 'dispatch listener failed');
        }
      }
    }
  }

  /** A record found in the log at start-up; returns true if it added a consume-queue entry. */
  private buildIndex(e: WrittenRecord): void {
    try {
      this.index!.buildIndex(e);
    } catch (err) {
      this.logger.error({ err, commitLogOffset: e.commitLogOffset }, 'dispatch: building the index failed');
    }
  }

  /**
   * A record found in the log at start-up; true if its consume-queue entry was added (or, with verifyPresent,
   * an entry already there that did not match the record was rewritten).
   */
  dispatchRecovered(rec: DecodedRecord, commitLogOffset: number, verifyPresent = false): boolean {
    if (this.index && this.index.wants(commitLogOffset)) {
      const props = rec.propertiesString;
      this.index.buildIndex({
        topic: rec.topic, commitLogOffset, storeTimestamp: rec.storeTimestamp, sysFlag: rec.sysFlag,
        keys: props ? getProperty(props, 'KEYS') : undefined, uniqKey: props ? getProperty(props, 'UNIQ_KEY') : undefined,
      });
    }
    if (!isQueuedTransactionType(rec.sysFlag)) return false;
    const cq = this.cqStore.getOrCreate(rec.topic, rec.queueId);
    const tagsCode = tagsCodeOf(rec.topic, rec.propertiesString, rec.storeTimestamp, this.delayLevelsMs);
    const added = cq.putEntry(rec.queueOffset, commitLogOffset, rec.totalSize, tagsCode, rec.storeTimestamp) ||
      (verifyPresent && cq.repairEntrySync(rec.queueOffset, commitLogOffset, rec.totalSize, tagsCode));
    if (added) this.lastStoreTimestamp = rec.storeTimestamp;
    return added;
  }
}
