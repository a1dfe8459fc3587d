// The 5.x timer topic as the store sees it: its consume-queue tagsCode is the time the broker's timer service
// must act on the entry (deliver it, or re-park it when it is further away than the roll window), so a scan of
// the 20-byte entries finds due messages without reading the commit log. Java TimerMessageStore keeps this
// in its own timerlog/timerwheel files instead; the CQ tagsCode is ours.
import { getProperty } from '../common/message-properties.js';

/** TimerMessageStore.TIMER_TOPIC = TopicValidator.SYSTEM_TOPIC_PREFIX + "wheel_timer". */
export const TIMER_TOPIC = 'rmq_sys_wheel_timer';
/** MessageConst.PROPERTY_TIMER_OUT_MS: the due time, rounded down to timerPrecisionMs by the broker. */
export const TIMER_OUT_MS = 'TIMER_OUT_MS';
/**
 * A parked message is re-parked (re-put to the timer topic) once it has waited this long, so its commit-log
 * copy never ages past the retention time (Java: timerRollWindowSlot = 2 days of 1 s slots).
 */
export const TIMER_ROLL_WINDOW_MS = 2 * 86_400_000;

/** When the timer service must look at an entry: its due time, or the roll time if that comes first. */
export function timerActionMs(outMs: number, storeTimestamp: number): number {
  return Math.min(outMs, storeTimestamp + TIMER_ROLL_WINDOW_MS);
}

/**
 * The tagsCode of a stored timer-topic record (recovery re-dispatch). Without a usable TIMER_OUT_MS the entry
 * is due at once, and the timer service drops it as malformed.
 */
export function timerTagsCode(propertiesString: string, storeTimestamp: number): number {
  const raw = getProperty(propertiesString, TIMER_OUT_MS);
  const outMs = raw !== undefined && /^-?\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  return Number.isSafeInteger(outMs) ? timerActionMs(outMs, storeTimestamp) : storeTimestamp;
}
