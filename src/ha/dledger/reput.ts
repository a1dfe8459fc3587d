// The reput of DLedger mode (Java ReputMessageService over DLedgerCommitLog.getData, which returns nothing at or past
// committedPos): committed entries only, in log order, read back from the DLedger data and handed to the store's
// dispatch (consume queues, index, long-poll wake-ups) — on the leader and on followers alike. Puts wait here until
// their entries are dispatched; the leader-ready wait watches it.
import type { Logger } from 'pino';
import { type DecodedRecord, indexKeysOf, isQueuedTransactionType, tagsCodeOf, type PutResult, type WrittenRecord } from '../../store/index.js';
import { scanEntries } from './entry-scan.js';
import type { DLedgerStorePort } from './types.js';

/** How often the leader-ready wait looks again besides commit and dispatch events (Java polls every 100 ms). */
const CAUGHT_UP_POLL_MS = 100;

export interface ReputDeps {
  store: () => DLedgerStorePort;
  fileSizeBytes: number;
  delayLevelsMs: readonly number[];
  onWritten: (entries: WrittenRecord[]) => void;
  logger: Logger;
}

/** A put answered once the reput has dispatched through `endPos` (read-your-write on the leader). */
interface DispatchWaiter {
  endPos: number;
  resolve: (r: PutResult) => void;
  result: PutResult;
}

export class DLedgerReput {
  /** The next entry start to dispatch; everything below it (down to the store's min) is dispatched. */
  dispatchedPos = 0;
  /** Store timestamp of the newest record dispatched (the checkpoint's physicMsgTimestamp). */
  lastStoreTimestamp = 0;
  private running = false;
  private stopped = false;
  private scheduled = false;
  /** Why dispatch stopped at a committed entry it cannot read (logged; puts waiting are answered). */
  private stuck: string | null = null;
  private waiters: DispatchWaiter[] = [];
  private readonly progressListeners = new Set<() => void>();
  private readonly dispatchedListeners: Array<(dispatchedPos: number) => void> = [];

  constructor(private readonly d: ReputDeps) {}

  /** Starts at `pos` (recovery re-dispatched everything before it). */
  startAt(pos: number): void {
    this.dispatchedPos = pos;
    this.running = true;
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.waiters) w.resolve(w.result);
    this.waiters = [];
  }

  /** Bytes committed but not yet dispatched (Java dispatchBehindBytes). */
  get behindBytes(): number {
    return Math.max(0, this.d.store().committedPos - this.dispatchedPos);
  }

  onDispatched(listener: (dispatchedPos: number) => void): void {
    this.dispatchedListeners.push(listener);
  }

  /** Called after every dispatch step (and by the owner on role changes); returns an unsubscribe function. */
  onProgress(listener: () => void): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  notifyProgress(): void {
    for (const l of [...this.progressListeners]) l();
  }

  /**
   * The LEADER wait (DLedgerRoleChangeHandler): true once the store's whole log is committed and dispatched (or
   * empty), false as soon as `stillLeading` says no.
   */
  waitCaughtUp(stillLeading: () => boolean): Promise<boolean> {
    return new Promise((resolve) => {
      const check = (): void => {
        const store = this.d.store();
        let verdict: boolean | undefined;
        if (!stillLeading()) verdict = false;
        else if (store.endIndex === -1) verdict = true;
        else if (store.endIndex === store.committedIndex && this.behindBytes === 0) verdict = true;
        if (verdict === undefined) {
          this.schedule();
          return;
        }
        unsubscribe();
        clearInterval(timer);
        resolve(verdict);
      };
      const timer = setInterval(check, CAUGHT_UP_POLL_MS);
      timer.unref();
      const unsubscribe = this.onProgress(check);
      check();
    });
  }

  /** The put's answer once its entries (ending at endPos) are dispatched. */
  whenDispatched(endPos: number, result: PutResult): PutResult | Promise<PutResult> {
    if (this.dispatchedPos >= endPos || this.stuck || this.stopped) return result;
    this.schedule();
    return new Promise((resolve) => this.waiters.push({ endPos, resolve, result }));
  }

  schedule(): void {
    if (this.scheduled || !this.running || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.stopped) this.step();
    });
  }

  /** Dispatches committed entries from dispatchedPos, a chunk per turn of the event loop. */
  private step(): void {
    const store = this.d.store();
    const committedPos = store.committedPos;
    if (this.dispatchedPos < store.minOffset) {
      this.d.logger.warn({ dispatchedPos: this.dispatchedPos, minOffset: store.minOffset },
        'DLedger reput: entries not yet dispatched are no longer stored (the leader had deleted them); going on from the log\'s start');
      this.dispatchedPos = store.minOffset;
    }
    if (this.dispatchedPos < committedPos && !this.stuck) {
      const scan = scanEntries(store, this.dispatchedPos, committedPos, this.d.fileSizeBytes);
      if (scan.records.length > 0) {
        const entries = scan.records.map((r) => this.writtenRecordOf(r.record, r.offset));
        this.lastStoreTimestamp = entries[entries.length - 1]!.storeTimestamp;
        try {
          this.d.onWritten(entries);
        } catch (err) {
          this.d.logger.error({ err }, 'DLedger reput: dispatch failed');
        }
      }
      this.dispatchedPos = scan.next;
      if (!scan.ok) {
        this.stuck = scan.reason;
        this.d.logger.error({ reason: scan.reason, dispatchedPos: this.dispatchedPos, committedPos },
          'DLedger reput: a committed entry cannot be read; dispatch stops here');
      } else if (this.dispatchedPos < committedPos) {
        this.schedule();
      }
      for (const l of this.dispatchedListeners) l(this.dispatchedPos);
    }
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => w.endPos <= this.dispatchedPos || this.stuck);
      if (ready.length > 0) {
        this.waiters = this.waiters.filter((w) => !ready.includes(w));
        for (const w of ready) w.resolve(w.result);
      }
    }
    this.notifyProgress();
  }

  private writtenRecordOf(rec: DecodedRecord, offset: number): WrittenRecord {
    const ik = indexKeysOf({ propertiesString: rec.propertiesString });
    return {
      topic: rec.topic, queueId: rec.queueId, queueOffset: rec.queueOffset, commitLogOffset: offset, sizeBytes: rec.totalSize,
      tagsCode: tagsCodeOf(rec.topic, rec.propertiesString, rec.storeTimestamp, this.d.delayLevelsMs),
      storeTimestamp: rec.storeTimestamp, queued: isQueuedTransactionType(rec.sysFlag), sysFlag: rec.sysFlag,
      keys: ik.keys, uniqKey: ik.uniqKey, propertiesString: rec.propertiesString,
    };
  }
}
