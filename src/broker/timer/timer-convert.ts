import { javaStringHashCode } from '../../common/java-hash.js';
import { MessageConst, parseProperties } from '../../common/message-properties.js';
import { TIMER_TOPIC, timerActionMs, type DecodedRecord, type MessageToStore } from '../../store/index.js';
import { JAVA_LONG_MAX } from './timer-hook.js';
import { messageFromRecord } from '../stored-message.js';
import { recallDeleteKey } from './timer-recalls.js';

/** Why convertDueMessage dropped a message on purpose (not malformed): its producer recalled it. */
export const RECALLED = 'recalled (RecallMessage)';
/** Why convertDueMessage dropped a delete marker: due, and never delivered (Java doPut → PUT_NO_RETRY). */
export const MARKER_DUE = 'a due TIMER_DEL_UNIQKEY marker';

/**
 * The message to put for a parked record whose action time has come (Java TimerMessageStore.convert +
 * convertMessage): to REAL_TOPIC/REAL_QID with TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS set; or, when it only came
 * up to be re-parked (due beyond the roll window), back to the timer topic with TIMER_ROLL_TIMES + 1. UNIQ_KEY,
 * body, flag, tags, keys, born time and host, sysFlag and reconsumeTimes are kept. Java clears REAL_TOPIC /
 * REAL_QID and sets WAIT=false only after it has encoded the stored property string, so the delivered record
 * keeps REAL_* and has no WAIT (seen on an official 5.3.3 broker); so does ours. A string says why the record
 * is dropped instead: RECALLED when `isRecalled` knows its delete key (`<REAL_TOPIC>+<UNIQ_KEY>`), MARKER_DUE for a
 * delete marker whose time has come (a marker not yet due is re-parked like any other message).
 */
export function convertDueMessage(
  rec: DecodedRecord, nowMs: number, precisionMs: number, forceRoll = false, isRecalled: (deleteKey: string) => boolean = () => false,
): { msg: MessageToStore; roll: boolean } | string {
  const props = parseProperties(rec.propertiesString);
  const outMs = Number(props.get(MessageConst.TIMER_OUT_MS));
  const realTopic = props.get(MessageConst.REAL_TOPIC);
  const realQid = Number(props.get(MessageConst.REAL_QUEUE_ID));
  if (!Number.isSafeInteger(outMs) || !realTopic || !Number.isInteger(realQid) || realQid < 0) {
    return 'not a timer message (TIMER_OUT_MS, REAL_TOPIC or REAL_QID missing)';
  }
  // Java delivers slot T once formatTimeMs(now) > T, i.e. at T + precision: never before TIMER_DELIVER_MS.
  const roll = forceRoll || outMs + precisionMs > nowMs;
  if (!roll) {
    if (props.has(MessageConst.TIMER_DEL_UNIQKEY)) return MARKER_DUE;
    const uniqKey = props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
    if (uniqKey && isRecalled(recallDeleteKey(realTopic, uniqKey))) return RECALLED;
  }
  const enqueueMs = Math.floor(rec.storeTimestamp / precisionMs) * precisionMs;
  // Java marks a message that was already due when the wheel took it in with Long.MAX_VALUE.
  props.set(MessageConst.TIMER_ENQUEUE_MS, outMs < enqueueMs ? JAVA_LONG_MAX : String(enqueueMs));
  props.set(MessageConst.TIMER_DEQUEUE_MS, String(nowMs));
  let topic = TIMER_TOPIC;
  let queueId = 0;
  let tagsCode: number;
  if (roll) {
    const times = Number.parseInt(props.get(MessageConst.TIMER_ROLL_TIMES) ?? '0', 10) || 0;
    props.set(MessageConst.TIMER_ROLL_TIMES, String(times + 1));
    tagsCode = timerActionMs(outMs, nowMs);
  } else {
    topic = realTopic;
    queueId = realQid;
    const tags = props.get(MessageConst.TAGS);
    tagsCode = tags ? javaStringHashCode(tags) : 0;
  }
  const msg = messageFromRecord(rec, topic, queueId, props, { tagsCode, preparedTransactionOffset: 0 });
  return { msg, roll };
}
