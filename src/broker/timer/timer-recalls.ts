// Recalled timer messages (5.x RecallMessage). A recall parks a delete marker: a timer message on the same topic,
// due in the same wheel slot, whose TIMER_DEL_UNIQKEY property is `<topic>+<UNIQ_KEY>` of the message to cancel.
// Java's TimerMessageStore tells markers apart by a bit in its timerlog and, per slot, reads the markers before the
// other messages (deleteUniqKeys). Our index is the timer topic's consume queue, whose entries carry only the action
// time, so a marker is noted when it is dispatched (its properties are at hand then), and its key is kept here until
// its slot is well past. The keys are saved with the timer progress; markers dispatched after the last save are
// found again at start by reading the records above `seenBelow`.
import { MessageConst, getProperty } from '../../common/message-properties.js';
import { TIMER_OUT_MS } from '../../store/index.js';

/** Keys kept at most (~150 bytes each); RecallMessage is refused (SYSTEM_BUSY) once this many are pending. */
export const MAX_PENDING_RECALLS = 200_000;
/** A key outlives its due time by this much (a slot delivered late still finds it). */
export const RECALL_KEEP_MS = 5 * 60_000;

/** Java TimerMessageStore.buildDeleteKey. */
export function recallDeleteKey(realTopic: string, uniqKey: string): string {
  return `${realTopic}+${uniqKey}`;
}

/** The delete key and due time of a marker's properties; undefined for any other record. */
export function markerOf(propertiesString: string | undefined): { key: string; outMs: number } | undefined {
  if (!propertiesString || !propertiesString.includes(MessageConst.TIMER_DEL_UNIQKEY)) return undefined;
  const key = getProperty(propertiesString, MessageConst.TIMER_DEL_UNIQKEY);
  if (!key) return undefined;
  const outMs = Number(getProperty(propertiesString, TIMER_OUT_MS));
  return { key, outMs: Number.isSafeInteger(outMs) ? outMs : 0 };
}

export class TimerRecalls {
  /** delete key → the marker's due time (TIMER_OUT_MS). */
  private readonly keys = new Map<string, number>();
  /** Every marker among the timer queue's entries below this offset has been noted. */
  seenBelow = 0;
  /** Markers that could not be noted because the map was full (logged by the caller). */
  overflowed = 0;

  get size(): number {
    return this.keys.size;
  }

  get full(): boolean {
    return this.keys.size >= MAX_PENDING_RECALLS;
  }

  /** Returns false when the map is full and the key was not kept. */
  note(key: string, outMs: number): boolean {
    const had = this.keys.get(key);
    if (had === undefined && this.full) {
      this.overflowed++;
      return false;
    }
    this.keys.set(key, Math.max(outMs, had ?? outMs));
    return true;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Forgets keys due before `beforeMs`; returns how many. */
  prune(beforeMs: number): number {
    let n = 0;
    for (const [k, outMs] of this.keys) {
      if (outMs < beforeMs) {
        this.keys.delete(k);
        n++;
      }
    }
    return n;
  }

  encode(): { recallsSeenBelow: number; recalls: Array<[string, number]> } {
    return { recallsSeenBelow: this.seenBelow, recalls: [...this.keys] };
  }

  /** From a saved progress file; anything malformed is skipped (start-up then re-reads from `fallbackSeenBelow`). */
  load(data: { recallsSeenBelow?: unknown; recalls?: unknown } | undefined, fallbackSeenBelow: number): void {
    this.keys.clear();
    const seen = Number(data?.recallsSeenBelow);
    const list = data?.recalls;
    if (!Number.isSafeInteger(seen) || seen < 0 || !Array.isArray(list)) {
      this.seenBelow = fallbackSeenBelow;
      return;
    }
    for (const item of list) {
      if (Array.isArray(item) && typeof item[0] === 'string' && Number.isSafeInteger(item[1])) this.note(item[0], item[1] as number);
    }
    this.seenBelow = seen;
  }
}
