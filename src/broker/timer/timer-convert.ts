import { javaStringHashCode } from '../../common/java-hash.js';
import { MessageConst, parseProperties } from '../../common/message-properties.js';
import { TIMER_TOPIC, timerActionMs, type DecodedRecord, type MessageToStore } from '../../store/index.js';
import { JAVA_LONG_MAX } from './timer-hook.js';
import { messageFromRecord } from '../stored-message.js';

/**
 * The message to put for a parked record whose action time has come (Java TimerMessageStore.convert +
 * convertMessage): to REAL_TOPIC/REAL_QID with TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS set; or, when it only came
 * up to be re-parked (due beyond the roll window), back to the timer topic with TIMER_ROLL_TIMES + 1. UNIQ_KEY,
 * body, flag, tags, keys, born time and host, sysFlag and reconsumeTimes are kept. Java clears REAL_TOPIC /
 * REAL_QID and sets WAIT=false only after it has encoded the stored property string, so the delivered record
 * keeps REAL_* and has no WAIT (seen on an official 5.3.3 broker); so does ours. A string says why the record
 * is dropped instead.
 */
export function convertDueMessage(
  rec: DecodedRecord, nowMs: number, precisionMs: number, forceRoll = false,
): { msg: MessageToStore; roll: boolean } | string {
  const props = parseProperties(rec.propertiesString);
  const outMs = Number(props.get(MessageConst.TIMER_OUT_MS));
  const realTopic = props.get(MessageConst.REAL_TOPIC);
  const realQid = Number(props.get(MessageConst.REAL_QUEUE_ID));
  if (!Number.isSafeInteger(outMs) || !realTopic || !Number.isInteger(realQid) || realQid < 0) {
    return 'not a timer message (TIMER_OUT_MS, REAL_TOPIC or REAL_QID missing)';
  }
  // Cancel markers are never delivered (Java doPut → PUT_NO_RETRY); cancelling itself is not supported.
  if (props.has(MessageConst.TIMER_DEL_UNIQKEY)) return 'a TIMER_DEL_UNIQKEY marker';
  // Java delivers slot T once formatTimeMs(now) > T, i.e. at T + precision: never before TIMER_DELIVER_MS.
  const roll = forceRoll || outMs + precisionMs > nowMs;
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
