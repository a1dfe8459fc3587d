import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../common/logger.js';
import {
  CQ_PLACEHOLDER_SIZE, decodeRecord, TIMER_OUT_MS, TIMER_TOPIC,
  type DispatchedEntry, type MessageStore, type MessageToStore, type PutResult, type QueueEntry,
} from '../../store/index.js';
import { MessageConst, getProperty } from '../../common/message-properties.js';
import { TableFile } from '../../common/table-file.js';
import { MARKER_DUE, RECALLED, convertDueMessage } from './timer-convert.js';
import { RECALL_KEEP_MS, TimerRecalls, markerOf } from './timer-recalls.js';
import { type TimerEntry, TimerHeap, entryLe } from './timer-heap.js';
import { type TimerHookConfig, type TimerRefusal, applyTimerHook, snapTimerPrecisionMs } from './timer-hook.js';
import { BLOCK_ENTRIES, BlockMins, DoneOffsets } from './timer-progress.js';
import {
  type JavaTimerCheckpoint, encodeTimerCheckpoint, readTimerCheckpoint, timerCheckpointPath,
  timerDoneByJava,
} from './timer-checkpoint.js';

export interface TimerTuning {
  /** Entries due within this much of now are moved from the consume queue into the in-memory heap. */
  windowMs: number;
  /** Heap size the service shrinks back to (it may briefly hold twice as many); 28 bytes an entry. */
  heapMaxEntries: number;
  /** Due messages read and re-put together (in due order). */
  deliverBatch: number;
  maintainIntervalMs: number;
  persistIntervalMs: number;
  /** Consume-queue blocks read by one call during a scan. */
  scanRunBlocks: number;
  /**
   * Widest range of queue offsets tracked above the lowest pending one (0.14 byte each); beyond it the oldest
   * pending entries are re-parked at the queue end. Age already bounds it: every entry is re-parked within
   * TIMER_ROLL_WINDOW_MS.
   */
  maxPendingSpan: number;
}

export const DEFAULT_TIMER_TUNING: TimerTuning = {
  windowMs: 60_000,
  heapMaxEntries: 100_000,
  deliverBatch: 64,
  maintainIntervalMs: 500,
  // Java TimerMessageStore flushes its checkpoint every timerFlushIntervalMs = 1000.
  persistIntervalMs: 1000,
  scanRunBlocks: 8,
  maxPendingSpan: 1 << 25,
};

export interface TimerServiceConfig extends TimerHookConfig {
  storePathRootDir: string;
  timerPrecisionMs: number;
}

interface Counters {
  delivered: number;
  rolled: number;
  dropped: number;
  /** Messages not delivered because their producer recalled them, and delete markers whose time came. */
  recalled: number;
  markersDone: number;
  scans: number;
  blocksRead: number;
}

/** Put outcomes that retrying cannot fix (Java TimerMessageStore.doPut → PUT_NO_RETRY). */
const NO_RETRY = new Set(['MESSAGE_ILLEGAL', 'PROPERTIES_SIZE_EXCEEDED']);
const STORED = new Set(['PUT_OK', 'FLUSH_DISK_TIMEOUT', 'FLUSH_SLAVE_TIMEOUT', 'SLAVE_NOT_AVAILABLE']);

/** What the timer tells the metrics (Java DefaultStoreMetricsManager's timer counters). */
export interface TimerEvents {
  /** A message parked on the timer topic was taken in; delaySeconds: its action time after it was stored. */
  timerEnqueued(realTopic: string, delaySeconds: number): void;
  /** A parked message left the timer: delivered, re-parked further on, recalled, or a due delete marker. */
  timerDequeued(realTopic: string): void;
}

/**
 * 5.x timer messages (Java TimerMessageStore, with a different index): messages parked on rmq_sys_wheel_timer
 * q0 carry their action time in the consume-queue tagsCode. Entries due within `windowMs` sit in a min-heap;
 * the rest are found again by scans that read only the consume-queue blocks whose earliest action time falls
 * in the next window. Progress (`config/timerProgress.json`) is the lowest pending queue offset plus a bitmap
 * of offsets done above it, so a clean restart neither loses nor repeats a delivery.
 *
 * Invariant: every pending entry at or below the frontier (fMs, fOff) — in (actionMs, queueOffset) order —
 * is in the heap or being delivered; every other pending entry is counted in its block's minimum.
 */
export class TimerMessageService {
  readonly precisionMs: number;
  /** When the last new timer-queue entry was taken in, and its store time (enqueueBehindMillis). */
  private lastEnqueueAtMs = Number.NEGATIVE_INFINITY;
  private lastEnqueueStoreMs = 0;
  /** The metrics, when they are on. */
  events?: TimerEvents;
  readonly tuning: TimerTuning;
  readonly counters: Counters = { delivered: 0, rolled: 0, dropped: 0, recalled: 0, markersDone: 0, scans: 0, blocksRead: 0 };
  /** config/timerProgress.json, ours. */
  private readonly file: TableFile;
  private done = new DoneOffsets(0);
  private readonly blocks = new BlockMins();
  private readonly heap = new TimerHeap();
  /** Delete keys of recalled messages (see timer-recalls.ts). */
  readonly recalls = new TimerRecalls();
  private readonly inFlight = new Set<number>();
  private fMs = Number.NEGATIVE_INFINITY;
  private fOff = Number.NEGATIVE_INFINITY;
  /** During a scan only entries up to here are known to be in the heap, so only they may be delivered. */
  private scanning = false;
  private safeMs = Number.NEGATIVE_INFINITY;
  private safeOff = Number.NEGATIVE_INFINITY;
  /** Queue offsets below this have been seen (at start-up or through dispatch). */
  private knownEnd = 0;
  private started = false;
  private dirty = false;
  private retryAfterMs = 0;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAtMs = Number.POSITIVE_INFINITY;
  private maintainTimer: NodeJS.Timeout | undefined;
  private lastPersistMs = 0;
  private kickWanted = false;
  private delivering: Promise<void> | null = null;
  /** Reading the delete markers of entries dispatched while this service did not run; nothing is delivered until done. */
  private markerTask: Promise<void> | null = null;
  private markersReady = true;
  private scanTask: Promise<void> | null = null;
  private rollTask: Promise<void> | null = null;
  private persistTask: Promise<void> | null = null;
  /** Java's config/timercheck, written next to our file for an official broker opening this store. */
  private readonly checkpointFile: TableFile;
  /** The time both files of one save carry (our file's updateTimestamp and timercheck's timestamp). */
  private persistNowMs = 0;
  private checkpointCounter = 0;
  /** An official broker's progress, newer than ours: imported at start (timerDoneByJava). */
  private javaProgress: JavaTimerCheckpoint | undefined;

  constructor(
    private readonly config: TimerServiceConfig,
    private readonly store: MessageStore,
    private readonly logger: Logger,
    tuning: Partial<TimerTuning> = {},
  ) {
    this.precisionMs = snapTimerPrecisionMs(config.timerPrecisionMs);
    this.tuning = { ...DEFAULT_TIMER_TUNING, ...tuning };
    this.file = new TableFile(
      path.join(config.storePathRootDir, 'config', 'timerProgress.json'), () => this.encode(this.persistNowMs), logger, 'timer progress',
    );
    this.checkpointFile = new TableFile(
      timerCheckpointPath(config.storePathRootDir), () => encodeTimerCheckpoint(this.javaCheckpoint(this.persistNowMs)), logger, 'timer checkpoint',
    );
  }

  /** The put hook (run before the delay-level hook); a refusal must be answered instead of storing. */
  applyTimer(msg: MessageToStore): TimerRefusal | undefined {
    return applyTimerHook(msg, this.config, this.precisionMs);
  }

  load(): void {
    const data = this.file.load() as
      { queueOffset?: unknown; bitmapBase?: unknown; bitmap?: unknown; updateTimestamp?: unknown; recallsSeenBelow?: unknown; recalls?: unknown } | undefined;
    const java = readTimerCheckpoint(this.checkpointFile.file);
    this.checkpointCounter = java?.counter ?? 0;
    const ourTimestamp = Number(data?.updateTimestamp ?? 0);
    // An official 5.x broker ran on this store after us (or we never did): its progress decides.
    if (java && !(java.timestamp <= (Number.isFinite(ourTimestamp) ? ourTimestamp : 0))) {
      this.javaProgress = java;
      this.done = new DoneOffsets(0);
      this.recalls.load(undefined, 0);
      return;
    }
    const low = Number(data?.queueOffset ?? 0);
    if (!data || !Number.isSafeInteger(low) || low < 0) {
      this.recalls.load(undefined, 0);
      return;
    }
    const base = Number(data.bitmapBase ?? low);
    this.done = DoneOffsets.decode(low, Number.isSafeInteger(base) ? base : low, typeof data.bitmap === 'string' ? data.bitmap : '');
    // A file from before recalls were kept: every pending entry is read once for markers.
    this.recalls.load(data, this.done.low);
  }

  /** Runs synchronously unless an official broker's progress has to be imported first. */
  async start(): Promise<void> {
    if (this.javaProgress) {
      const java = this.javaProgress;
      this.javaProgress = undefined;
      await this.importJavaProgress(java);
    }
    const min = this.store.getMinOffsetInQueue(TIMER_TOPIC, 0);
    const max = this.store.getMaxOffsetInQueue(TIMER_TOPIC, 0);
    if (this.done.low > max) {
      this.logger.warn({ progress: this.done.low, max }, 'timer queue is shorter than the saved progress (lost after a crash?)');
    }
    this.done.truncate(max);
    this.done.raiseLow(min);
    this.knownEnd = max;
    this.blocks.dropBelow(BlockMins.blockOf(this.done.low));
    // Nothing is known about the parked entries yet: the first scan reads them all.
    for (let b = BlockMins.blockOf(this.done.low); b * BLOCK_ENTRIES < max; b++) this.blocks.set(b, Number.NEGATIVE_INFINITY);
    this.started = true;
    // Delete markers dispatched since the last save (or while stopped) are read before anything is delivered; new
    // ones pass onDispatch. In the background: a promoted slave may read many entries, and its role change must not wait.
    const markersFrom = Math.max(min, Math.min(this.recalls.seenBelow, max));
    if (markersFrom < max) {
      this.markersReady = false;
      this.markerTask = this.findMarkers(markersFrom, max)
        .then((complete) => {
          // Not complete (stopped meanwhile): the next start reads the range again.
          if (complete) this.recalls.seenBelow = this.knownEnd;
        })
        .catch((err: unknown) => this.logger.error({ err }, 'timer recall markers could not be read; recalls made before this start may be delivered'))
        .finally(() => {
          this.markersReady = true;
          this.markerTask = null;
          this.kick();
        });
    } else {
      this.recalls.seenBelow = max;
    }
    this.maintainTimer = setInterval(() => this.maintain(), this.tuning.maintainIntervalMs);
    this.maintainTimer.unref();
    this.maintain();
  }

  async shutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    if (this.maintainTimer) clearInterval(this.maintainTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    await this.markerTask;
    await this.scanTask;
    await this.rollTask;
    await this.delivering;
    await this.persistTask;
    this.persistSync();
  }

  /** Store dispatch listener: a newly parked entry goes to the heap if due inside the window. */
  onDispatch = (e: DispatchedEntry): void => {
    if (!this.started || e.topic !== TIMER_TOPIC || e.queueId !== 0 || e.queueOffset < this.knownEnd) return;
    // Offsets skipped by dispatch (not expected) are left for the next scan to read.
    for (let b = BlockMins.blockOf(this.knownEnd); this.knownEnd < e.queueOffset && b * BLOCK_ENTRIES < e.queueOffset; b++) {
      this.blocks.set(b, Number.NEGATIVE_INFINITY);
    }
    this.knownEnd = e.queueOffset + 1;
    const marker = markerOf(e.propertiesString);
    if (marker) this.noteMarker(marker.key, marker.outMs, e.queueOffset);
    if (this.markersReady) this.recalls.seenBelow = this.knownEnd;
    this.admit({ actionMs: e.tagsCode, queueOffset: e.queueOffset, commitLogOffset: e.commitLogOffset, sizeBytes: e.sizeBytes });
    this.lastEnqueueAtMs = Date.now();
    this.lastEnqueueStoreMs = e.storeTimestamp;
    if (this.events && e.propertiesString) {
      this.events.timerEnqueued(getProperty(e.propertiesString, MessageConst.REAL_TOPIC) ?? '', Math.floor((e.tagsCode - e.storeTimestamp) / 1000));
    }
  };

  /**
   * Java getDequeueBehindMessages / getDequeueBehindMillis: entries due and not yet delivered, and how long the
   * oldest of them has been due (0 when none is).
   */
  dequeueBehind(nowMs: number = Date.now()): { messages: number; millis: number } {
    const dueBy = nowMs - this.precisionMs;
    const messages = this.inFlight.size + this.heap.countAtOrBelow(dueBy);
    const oldest = this.heap.peekActionMs();
    return { messages, millis: messages > 0 && oldest <= dueBy ? nowMs - oldest - this.precisionMs : 0 };
  }

  /**
   * Java getEnqueueBehindMillis: for 2 s after an entry was taken in, how long ago that entry was stored (else 0).
   */
  enqueueBehindMillis(nowMs: number = Date.now()): number {
    return nowMs - this.lastEnqueueAtMs < 2000 ? nowMs - this.lastEnqueueStoreMs : 0;
  }

  /** Java getEnqueueBehindMessages: timer-queue entries the service has not taken in yet. */
  enqueueBehind(): number {
    if (!this.started) return 0;
    return Math.max(0, this.store.getMaxOffsetInQueue(TIMER_TOPIC, 0) - this.knownEnd);
  }

  /**
   * Whether every entry due by `nowMs` has been delivered (Java TimerMessageStore dequeue/enqueue behind ≤ 0): POP
   * revive waits for it before it treats a quiet revive queue as complete, so no due ack is still in the timer.
   */
  isCaughtUp(nowMs: number = Date.now()): boolean {
    if (!this.started) return false;
    return this.inFlight.size === 0 && this.heap.peekActionMs() + this.precisionMs > nowMs && this.fMs >= nowMs;
  }

  /** For runtime info and tests. */
  status(): {
    pendingFrom: number; queueEnd: number; heapEntries: number; inFlight: number; scanning: boolean; memoryBytes: number; pendingRecalls: number;
    readingMarkers: boolean;
  } & Counters {
    return {
      pendingRecalls: this.recalls.size,
      readingMarkers: !this.markersReady,
      scanning: this.scanTask !== null,
      pendingFrom: this.done.low,
      queueEnd: this.knownEnd,
      heapEntries: this.heap.size,
      inFlight: this.inFlight.size,
      memoryBytes: this.heap.memoryBytes + this.done.memoryBytes + this.blocks.memoryBytes,
      ...this.counters,
    };
  }

  /** Whether RecallMessage may park one more delete marker (the kept keys are bounded). */
  canTakeRecall(): boolean {
    return !this.recalls.full;
  }

  private noteMarker(key: string, outMs: number, queueOffset: number): void {
    if (this.recalls.note(key, outMs)) {
      this.dirty = true;
    } else {
      this.logger.warn({ queueOffset, key, kept: this.recalls.size }, 'timer recall marker not kept: too many pending recalls; the message will be delivered');
    }
  }

  /** Notes the delete markers among the timer queue's entries [from, to); false when stopped before the end. */
  private async findMarkers(from: number, to: number): Promise<boolean> {
    let found = 0;
    let at = from;
    while (at < to && this.started) {
      const entries = await this.store.getQueueEntries(TIMER_TOPIC, 0, at, Math.min(256, to - at));
      if (entries.length === 0) break;
      const records = await Promise.all(entries.map((e) => this.store.lookMessageByOffset(e.commitLogOffset).catch(() => null)));
      for (let i = 0; i < entries.length; i++) {
        const raw = records[i];
        if (!raw || raw.length !== entries[i]!.sizeBytes) continue;
        let marker: ReturnType<typeof markerOf>;
        try {
          marker = markerOf(decodeRecord(raw).propertiesString);
        } catch {
          continue; // unreadable: delivery drops it with a warning
        }
        if (marker) {
          this.noteMarker(marker.key, marker.outMs, entries[i]!.queueOffset);
          found++;
        }
      }
      at = entries[entries.length - 1]!.queueOffset + 1;
    }
    this.logger.info({ from, to: at, found, pending: this.recalls.size }, 'timer recall markers read');
    return at >= to || this.started;
  }

  // ---------------------------------------------------------------- heap and frontier

  private admit(e: TimerEntry): void {
    if (this.done.has(e.queueOffset) || this.inFlight.has(e.queueOffset)) return;
    if (!entryLe(e.actionMs, e.queueOffset, this.fMs, this.fOff)) {
      this.blocks.note(BlockMins.blockOf(e.queueOffset), e.actionMs);
      return;
    }
    this.heap.push(e);
    if (this.heap.size > 2 * this.tuning.heapMaxEntries) this.shrinkHeap();
    this.armWake(e.actionMs + this.precisionMs);
  }

  /** Keeps the heapMaxEntries earliest entries and lowers the frontier to the last of them. */
  private shrinkHeap(): void {
    const last = this.heap.truncate(this.tuning.heapMaxEntries, (actionMs, queueOffset) => {
      this.blocks.note(BlockMins.blockOf(queueOffset), actionMs);
    });
    if (!last) return;
    this.fMs = last.actionMs;
    this.fOff = last.queueOffset;
    if (!entryLe(this.safeMs, this.safeOff, this.fMs, this.fOff)) {
      this.safeMs = this.fMs;
      this.safeOff = this.fOff;
    }
  }

  private markDone(offset: number): void {
    this.inFlight.delete(offset);
    if (this.done.set(offset)) this.blocks.dropBelow(BlockMins.blockOf(this.done.low));
    this.dirty = true;
  }

  // ---------------------------------------------------------------- scan

  private maintain(): void {
    if (!this.started) return;
    const min = this.store.getMinOffsetInQueue(TIMER_TOPIC, 0);
    if (min > this.done.low) {
      this.logger.warn({ from: this.done.low, to: min }, 'timer queue entries were removed before delivery (commit log cleaned?)');
      this.done.raiseLow(min);
      this.blocks.dropBelow(BlockMins.blockOf(this.done.low));
      this.dirty = true;
    }
    const now = Date.now();
    // A key is forgotten once its slot is well past and nothing up to it waits: not in the heap, not in a delivery,
    // and not beyond the frontier a scan has made good (after a restart the first scan is still finding old entries).
    if (this.recalls.size > 0 && !this.delivering && this.markersReady) {
      const frontierMs = this.scanning ? this.safeMs : this.fMs;
      if (this.recalls.prune(Math.min(now - RECALL_KEEP_MS, this.heap.peekActionMs(), frontierMs)) > 0) this.dirty = true;
    }
    if (!this.scanTask && this.fMs < now + this.tuning.windowMs / 2 && this.heap.size < this.tuning.heapMaxEntries / 2) {
      this.scanTask = this.scan()
        .catch((err: unknown) => this.logger.error({ err }, 'timer scan failed'))
        .finally(() => {
          this.scanTask = null;
          this.kick();
        });
    }
    if (!this.rollTask && this.knownEnd - this.done.low > this.tuning.maxPendingSpan) {
      this.rollTask = this.rollOldest()
        .catch((err: unknown) => this.logger.error({ err }, 'timer re-park failed'))
        .finally(() => {
          this.rollTask = null;
        });
    }
    if (this.dirty && !this.persistTask && now - this.lastPersistMs >= this.tuning.persistIntervalMs) {
      this.persistTask = this.persist().finally(() => {
        this.persistTask = null;
      });
    }
  }

  /** Moves the frontier to the end of the next window, reading the blocks that may hold entries due by then. */
  private async scan(): Promise<void> {
    this.counters.scans++;
    this.scanning = true;
    this.safeMs = this.fMs;
    this.safeOff = this.fOff;
    const target = Math.floor((Date.now() + this.tuning.windowMs) / this.precisionMs) * this.precisionMs;
    if (!entryLe(target, Number.POSITIVE_INFINITY, this.fMs, this.fOff)) {
      this.fMs = target;
      this.fOff = Number.POSITIVE_INFINITY;
    }
    const scanEnd = this.knownEnd;
    try {
      let b = BlockMins.blockOf(this.done.low);
      const lastBlock = BlockMins.blockOf(scanEnd - 1);
      while (b <= lastBlock && this.started) {
        if (this.blocks.get(b) > this.fMs) {
          b++;
          continue;
        }
        let e = b + 1;
        while (e <= lastBlock && e - b < this.tuning.scanRunBlocks && this.blocks.get(e) <= this.fMs) e++;
        // Whole blocks are recomputed; the block holding scanEnd keeps the notes of newer arrivals.
        for (let k = b; k < e; k++) if ((k + 1) * BLOCK_ENTRIES <= scanEnd) this.blocks.set(k, Number.POSITIVE_INFINITY);
        const from = Math.max(b * BLOCK_ENTRIES, this.done.low);
        const to = Math.min(e * BLOCK_ENTRIES, scanEnd);
        if (to > from) await this.scanRange(from, to, b, e);
        this.counters.blocksRead += e - b;
        b = e;
      }
    } finally {
      this.scanning = false;
    }
  }

  private async scanRange(from: number, to: number, firstBlock: number, endBlock: number): Promise<void> {
    const entries = await this.store.getQueueEntries(TIMER_TOPIC, 0, from, to - from);
    let expected = from;
    for (const ent of entries) {
      if (ent.queueOffset >= to) break;
      // Offsets the store skipped have no readable entry: nothing there can be delivered.
      for (; expected < ent.queueOffset; expected++) this.markDone(expected);
      expected = ent.queueOffset + 1;
      this.consider(ent);
    }
    if (expected < to) {
      if (this.store.getMinOffsetInQueue(TIMER_TOPIC, 0) >= to) {
        for (; expected < to; expected++) this.markDone(expected);
      } else {
        // Unreadable for now: look again next time.
        for (let k = firstBlock; k < endBlock; k++) this.blocks.set(k, Number.NEGATIVE_INFINITY);
      }
    }
  }

  private consider(ent: QueueEntry): void {
    const off = ent.queueOffset;
    if (ent.sizeBytes <= 0 || ent.sizeBytes === CQ_PLACEHOLDER_SIZE) {
      this.markDone(off);
      return;
    }
    if (this.done.has(off) || this.inFlight.has(off)) return;
    if (entryLe(ent.tagsCode, off, this.safeMs, this.safeOff)) return; // already in the heap
    this.admit({ actionMs: ent.tagsCode, queueOffset: off, commitLogOffset: ent.commitLogOffset, sizeBytes: ent.sizeBytes });
  }

  /**
   * Re-parks the lowest block's pending entries that are not due soon (not in the heap) at the queue end, so
   * that the tracked span shrinks (Java rolls far timers the same way, with TIMER_ROLL_TIMES).
   */
  private async rollOldest(): Promise<void> {
    while (this.started && this.knownEnd - this.done.low > this.tuning.maxPendingSpan) {
      const from = this.done.low;
      const to = Math.min((BlockMins.blockOf(from) + 1) * BLOCK_ENTRIES, this.knownEnd);
      const batch: TimerEntry[] = [];
      for (const ent of await this.store.getQueueEntries(TIMER_TOPIC, 0, from, to - from)) {
        const off = ent.queueOffset;
        if (ent.sizeBytes <= 0 || ent.sizeBytes === CQ_PLACEHOLDER_SIZE) {
          this.markDone(off);
        } else if (!this.done.has(off) && !this.inFlight.has(off) && !entryLe(ent.tagsCode, off, this.fMs, this.fOff)) {
          this.inFlight.add(off);
          batch.push({ actionMs: ent.tagsCode, queueOffset: off, commitLogOffset: ent.commitLogOffset, sizeBytes: ent.sizeBytes });
        }
      }
      if (batch.length > 0) await this.deliverBatch(batch, true);
      if (this.done.low === from) return; // the rest is due soon: delivery moves it on
    }
  }

  // ---------------------------------------------------------------- delivery

  private armWake(atMs: number): void {
    if (!this.started || atMs >= this.wakeAtMs) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAtMs = atMs;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wakeAtMs = Number.POSITIVE_INFINITY;
      this.kick();
    }, Math.max(0, atMs - Date.now()));
    this.wakeTimer.unref();
  }

  private kick(): void {
    this.kickWanted = true;
    if (this.delivering || !this.started) return;
    this.delivering = (async () => {
      while (this.kickWanted && this.started) {
        this.kickWanted = false;
        await this.deliverDue();
      }
    })()
      .catch((err: unknown) => {
        this.logger.error({ err }, 'timer delivery failed; retrying in 1 s');
        this.retryAfterMs = Date.now() + 1000;
        this.armWake(this.retryAfterMs);
      })
      .finally(() => {
        this.delivering = null;
        if (this.kickWanted && this.started) this.kick();
      });
  }

  /** Delivers every due entry the heap may release, a batch at a time, then sleeps until the next one. */
  private async deliverDue(): Promise<void> {
    for (;;) {
      if (!this.started || !this.markersReady) return;
      const now = Date.now();
      if (now < this.retryAfterMs) {
        this.armWake(this.retryAfterMs);
        return;
      }
      const boundMs = this.scanning ? this.safeMs : this.fMs;
      const boundOff = this.scanning ? this.safeOff : this.fOff;
      const batch: TimerEntry[] = [];
      while (batch.length < this.tuning.deliverBatch && this.heap.size > 0) {
        const k = this.heap.peekActionMs();
        if (k + this.precisionMs > now || !entryLe(k, this.heap.peekQueueOffset(), boundMs, boundOff)) break;
        const e = this.heap.pop()!;
        this.inFlight.add(e.queueOffset);
        batch.push(e);
      }
      if (batch.length === 0) {
        const k = this.heap.peekActionMs();
        // Entries beyond the scan's safe bound are released when the scan ends (it kicks).
        if (k !== Number.POSITIVE_INFINITY && entryLe(k, this.heap.peekQueueOffset(), boundMs, boundOff)) this.armWake(k + this.precisionMs);
        return;
      }
      await this.deliverBatch(batch);
    }
  }

  private async deliverBatch(batch: TimerEntry[], forceRoll = false): Promise<void> {
    const records = await Promise.all(batch.map((e) => this.store.lookMessageByOffset(e.commitLogOffset).catch(() => null)));
    const now = Date.now();
    const rolls: boolean[] = [];
    const realTopics: string[] = [];
    // Puts are issued in due order without waiting in between: the store appends in call order.
    const puts: Array<Promise<PutResult> | null> = batch.map((e, i) => {
      const raw = records[i];
      const rec = raw && raw.length === e.sizeBytes ? decodeRecord(raw) : null;
      const converted = rec
        ? convertDueMessage(rec, now, this.precisionMs, forceRoll, (key) => this.recalls.has(key))
        : 'the parked record is gone from the commit log';
      if (rec && this.events) realTopics[i] = getProperty(rec.propertiesString, MessageConst.REAL_TOPIC) ?? '';
      if (converted === RECALLED || converted === MARKER_DUE) {
        this.events?.timerDequeued(realTopics[i] ?? '');
        if (converted === RECALLED) this.counters.recalled++;
        else this.counters.markersDone++;
        this.markDone(e.queueOffset);
        return null;
      }
      if (typeof converted === 'string') {
        this.logger.warn({ queueOffset: e.queueOffset, commitLogOffset: e.commitLogOffset, reason: converted }, 'timer message dropped');
        this.counters.dropped++;
        this.markDone(e.queueOffset);
        return null;
      }
      rolls[i] = converted.roll;
      return this.store.putMessage(converted.msg);
    });
    const results = await Promise.allSettled(puts);
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i]!;
      const r = results[i]!;
      if (puts[i] === null) continue;
      const status = r.status === 'fulfilled' && r.value ? r.value.status : 'UNKNOWN_ERROR';
      if (STORED.has(status)) {
        this.events?.timerDequeued(realTopics[i] ?? '');
        if (rolls[i]) this.counters.rolled++;
        else this.counters.delivered++;
        this.markDone(e.queueOffset);
      } else if (NO_RETRY.has(status)) {
        this.logger.warn({ queueOffset: e.queueOffset, status }, 'timer message cannot be stored; dropped');
        this.counters.dropped++;
        this.markDone(e.queueOffset);
      } else {
        // Java retries after 500 ms (scaled by the precision).
        this.inFlight.delete(e.queueOffset);
        this.admit(e);
        this.retryAfterMs = Date.now() + Math.max(100, (500 * this.precisionMs) / 1000);
      }
    }
  }

  // ---------------------------------------------------------------- official broker hand-over

  /**
   * Takes over the timer queue from an official 5.x broker (its config/timercheck is newer than our progress):
   * an entry is done when timerDoneByJava says its wheel slot was dequeued; every other entry is pending. The
   * official broker's timerlog and timerwheel are then removed: their pending entries are ours now, and an official
   * broker opening this store later must not replay them (it starts from the timercheck we write).
   */
  private async importJavaProgress(java: JavaTimerCheckpoint): Promise<void> {
    const min = this.store.getMinOffsetInQueue(TIMER_TOPIC, 0);
    const end = Math.min(java.lastTimerQueueOffset, this.store.getMaxOffsetInQueue(TIMER_TOPIC, 0));
    const done = new DoneOffsets(min);
    let doneCount = 0;
    for (let from = min; from < end;) {
      const entries = await this.store.getQueueEntries(TIMER_TOPIC, 0, from, Math.min(256, end - from));
      if (entries.length === 0) break;
      const records = await Promise.all(entries.map((e) => this.store.lookMessageByOffset(e.commitLogOffset).catch(() => null)));
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        const raw = records[i];
        if (e.queueOffset >= end || !raw) continue;
        let outMs = Number.NaN;
        let storeTimestamp = 0;
        try {
          const rec = decodeRecord(raw);
          outMs = Number(getProperty(rec.propertiesString, TIMER_OUT_MS));
          storeTimestamp = rec.storeTimestamp;
        } catch {
          // unreadable: left pending, delivery drops it with a warning
        }
        if (Number.isSafeInteger(outMs) && timerDoneByJava(java, e.queueOffset, outMs, storeTimestamp, this.precisionMs)) {
          done.set(e.queueOffset);
          doneCount++;
        }
      }
      from = entries[entries.length - 1]!.queueOffset + 1;
    }
    this.done = done;
    this.persistSync();
    const root = path.dirname(path.dirname(this.checkpointFile.file));
    fs.rmSync(path.join(root, 'timerlog'), { recursive: true, force: true });
    fs.rmSync(path.join(root, 'timerwheel'), { force: true });
    this.logger.info(
      { lastReadTimeMs: java.lastReadTimeMs, lastTimerQueueOffset: java.lastTimerQueueOffset, from: min, to: end, done: doneCount },
      'timer progress taken over from an official broker (config/timercheck)',
    );
  }

  // ---------------------------------------------------------------- persistence

  private encode(now: number): string {
    return JSON.stringify({ ...this.done.encode(), precisionMs: this.precisionMs, updateTimestamp: now, ...this.recalls.encode() });
  }

  /**
   * Java's view of our progress: everything below our lowest pending offset was taken care of, and there is no
   * timerlog. An official broker re-reads the queue from there (done entries above it are delivered again).
   */
  private javaCheckpoint(now: number): JavaTimerCheckpoint {
    return {
      lastReadTimeMs: Math.floor(now / this.precisionMs) * this.precisionMs,
      lastTimerLogFlushPos: 0,
      lastTimerQueueOffset: this.done.low,
      masterTimerQueueOffset: this.done.low,
      stateVersion: 0,
      timestamp: now,
      counter: ++this.checkpointCounter,
    };
  }

  /** Our progress as Java's TimerCheckpoint (GET_TIMER_CHECK_POINT, 60: what a 5.3.3 slave copies). */
  checkpointForSlave(): JavaTimerCheckpoint {
    const now = this.lastPersistMs || Date.now();
    return {
      lastReadTimeMs: Math.floor(now / this.precisionMs) * this.precisionMs, lastTimerLogFlushPos: 0,
      lastTimerQueueOffset: this.done.low, masterTimerQueueOffset: this.done.low, stateVersion: 0, timestamp: now,
      counter: this.checkpointCounter,
    };
  }

  private async persist(): Promise<void> {
    this.dirty = false;
    this.persistNowMs = Date.now();
    this.lastPersistMs = this.persistNowMs;
    this.checkpointFile.changed();
    this.file.changed();
    try {
      // timercheck first: our file carries the same timestamp and so wins over it at our next start
      await this.checkpointFile.save();
      await this.file.save();
    } catch {
      this.dirty = true; // logged by the table file
    }
  }

  private persistSync(): void {
    this.persistNowMs = Date.now();
    this.checkpointFile.saveSync();
    this.file.saveSync();
    this.dirty = false;
  }
}
