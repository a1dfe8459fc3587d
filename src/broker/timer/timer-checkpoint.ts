// `{root}/config/timercheck`: the official 5.x broker's timer progress (Java TimerCheckpoint), one 4 KiB page of
// big-endian int64s — lastReadTimeMs@0 (every wheel slot before it was dequeued), lastTimerLogFlushPos@8,
// lastTimerQueueOffset@16 (rmq_sys_wheel_timer q0 entries below it were taken into its timerlog),
// masterTimerQueueOffset@24, then the DataVersion: stateVersion@32, timestamp@40, counter@48.
//
// Ours keeps its own progress in config/timerProgress.json; this file is the hand-over between the two:
//  * written next to it (lastTimerQueueOffset = our lowest pending offset, no timerlog), so an official broker
//    opening our store takes over pending timers instead of re-delivering the whole timer queue;
//  * read when it is newer than our file (an official broker ran on this store last): see timerDoneByJava.
import fs from 'node:fs';
import path from 'node:path';
import { readInt64, writeInt64 } from '../../store/index.js';

export const TIMER_CHECKPOINT_FILE_SIZE = 4096;

export interface JavaTimerCheckpoint {
  lastReadTimeMs: number;
  lastTimerLogFlushPos: number;
  lastTimerQueueOffset: number;
  masterTimerQueueOffset: number;
  stateVersion: number;
  /** DataVersion.timestamp: when the progress last changed. */
  timestamp: number;
  counter: number;
}

export function timerCheckpointPath(storePathRootDir: string): string {
  return path.join(storePathRootDir, 'config', 'timercheck');
}

/** Reads the file; undefined when absent, short, or holding nonsense. */
export function readTimerCheckpoint(file: string): JavaTimerCheckpoint | undefined {
  let b: Buffer;
  try {
    b = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  if (b.length < 32) return undefined;
  const cp: JavaTimerCheckpoint = {
    lastReadTimeMs: readInt64(b, 0),
    lastTimerLogFlushPos: readInt64(b, 8),
    lastTimerQueueOffset: readInt64(b, 16),
    masterTimerQueueOffset: readInt64(b, 24),
    stateVersion: b.length >= 56 ? readInt64(b, 32) : 0,
    timestamp: b.length >= 56 ? readInt64(b, 40) : 0,
    counter: b.length >= 56 ? readInt64(b, 48) : 0,
  };
  if (cp.lastTimerQueueOffset < 0 || cp.lastReadTimeMs < 0) return undefined;
  return cp;
}

export function encodeTimerCheckpoint(cp: JavaTimerCheckpoint): Buffer {
  const b = Buffer.alloc(TIMER_CHECKPOINT_FILE_SIZE);
  writeInt64(b, 0, cp.lastReadTimeMs);
  writeInt64(b, 8, cp.lastTimerLogFlushPos);
  writeInt64(b, 16, cp.lastTimerQueueOffset);
  writeInt64(b, 24, cp.masterTimerQueueOffset);
  writeInt64(b, 32, cp.stateVersion);
  writeInt64(b, 40, cp.timestamp);
  writeInt64(b, 48, cp.counter);
  return b;
}

/** Java MessageStoreConfig.timerRollWindowSlots default (2 days of slots). */
export const JAVA_TIMER_ROLL_WINDOW_SLOTS = 3600 * 24 * 2;

/**
 * Whether the official broker that wrote `cp` is done with the timer-queue entry at `queueOffset` (TIMER_OUT_MS
 * `outMs`, parked at `storeTimestamp`): the entry was taken into its timerlog (offset below lastTimerQueueOffset)
 * and the wheel slot it sat in was dequeued (before lastReadTimeMs) — delivered, or re-parked as a newer entry
 * if it was further away than the roll window (TimerMessageStore.doEnqueue puts such an entry in the slot of
 * enqueue time + the window, or + half the window when it is due less than a third of the window after that).
 */
export function timerDoneByJava(
  cp: JavaTimerCheckpoint, queueOffset: number, outMs: number, storeTimestamp: number, precisionMs: number,
): boolean {
  if (queueOffset >= cp.lastTimerQueueOffset) return false;
  const window = JAVA_TIMER_ROLL_WINDOW_SLOTS * precisionMs;
  let slotMs = outMs;
  if (outMs - storeTimestamp >= window) {
    slotMs = outMs - storeTimestamp - window < (JAVA_TIMER_ROLL_WINDOW_SLOTS / 3) * precisionMs
      ? storeTimestamp + Math.floor(JAVA_TIMER_ROLL_WINDOW_SLOTS / 2) * precisionMs
      : storeTimestamp + window;
  }
  return Math.floor(slotMs / precisionMs) * precisionMs < cp.lastReadTimeMs;
}
