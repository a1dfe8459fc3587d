// The put hook for 5.x timer messages (Java HookUtils.checkIfTimerMessage + transformTimerMessage): a message
// with TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS due in the future is parked on rmq_sys_wheel_timer q0
// with TIMER_OUT_MS, REAL_TOPIC and REAL_QID; the timer service re-puts it when due.
import { MessageConst, encodeProperties, getProperty, parseProperties } from '../../common/message-properties.js';
import { ResponseCode } from '../../common/response-code.js';
import { TIMER_TOPIC, timerActionMs, timerTagsCode, type MessageToStore } from '../../store/index.js';

const TRANSACTION_TYPE_MASK = 0xc;
const TRANSACTION_NOT_TYPE = 0;
const TRANSACTION_COMMIT_TYPE = 0x8;
/** Java Long.MAX_VALUE, as Java writes it into TIMER_ENQUEUE_MS. */
export const JAVA_LONG_MAX = '9223372036854775807';

export interface TimerHookConfig {
  timerWheelEnable: boolean;
  timerMaxDelaySec: number;
}

/** A refused put: the response code and remark Java's SendMessageProcessor answers for the store status. */
export interface TimerRefusal {
  status: 'WHEEL_TIMER_NOT_ENABLE' | 'WHEEL_TIMER_MSG_ILLEGAL';
  code: number;
  remark: string;
}

/** MessageStoreConfig.setTimerPrecisionMs: snapped down to 100, 200, 500 or 1000 ms. */
export function snapTimerPrecisionMs(ms: number): number {
  const candidates = [100, 200, 500, 1000];
  for (let i = 1; i < candidates.length; i++) if (ms < candidates[i]!) return candidates[i - 1]!;
  return candidates[candidates.length - 1]!;
}

/** HookUtils rounds the deliver time down to the precision; an exact multiple loses one whole unit. */
export function timerOutMs(deliverMs: number, precisionMs: number): number {
  return deliverMs % precisionMs === 0 ? deliverMs - precisionMs : Math.floor(deliverMs / precisionMs) * precisionMs;
}

/** Java Long.parseLong: optional sign, decimal digits, within the long range; NaN otherwise. */
function parseJavaLong(raw: string): number {
  if (!/^[+-]?\d{1,19}$/.test(raw)) return Number.NaN;
  const n = Number(raw);
  return Math.abs(n) <= 9.223372036854776e18 ? n : Number.NaN;
}

const TIMER_REQUEST_KEYS = [MessageConst.TIMER_DELIVER_MS, MessageConst.TIMER_DELAY_SEC, MessageConst.TIMER_DELAY_MS];

function illegal(cfg: TimerHookConfig, detail: string): TimerRefusal {
  return {
    status: 'WHEEL_TIMER_MSG_ILLEGAL',
    code: ResponseCode.MESSAGE_ILLEGAL,
    // SendMessageProcessor.handlePutMessageResult's text, then what was wrong.
    remark: `timer message illegal, the delay time should not be bigger than the max delay ${cfg.timerMaxDelaySec * 1000}ms; `
      + `or if set del msg, the delay time should be bigger than the current time (${detail})`,
  };
}

/**
 * Applies the timer part of Java's handleScheduleMessage to a message about to be stored (changed in place).
 * Run it before the delay-level hook: a DELAY level wins and the TIMER_* properties are dropped. Returns a
 * refusal when the send must be answered with an error instead.
 */
export function applyTimerHook(
  msg: MessageToStore, cfg: TimerHookConfig, precisionMs: number, nowMs: number = Date.now(),
): TimerRefusal | undefined {
  const txType = msg.sysFlag & TRANSACTION_TYPE_MASK;
  if (txType !== TRANSACTION_NOT_TYPE && txType !== TRANSACTION_COMMIT_TYPE) return undefined;
  const props = msg.propertiesString;
  if (msg.topic === TIMER_TOPIC) {
    // A re-parked or directly sent timer-topic message: not transformed again (isRolledTimerMessage); its queue
    // key comes from TIMER_OUT_MS as at recovery.
    msg.tagsCode = timerTagsCode(props, nowMs);
    return undefined;
  }
  // Every send passes here: one substring check rules out the common message without timer properties.
  if (!props || !props.includes('TIMER_') || !TIMER_REQUEST_KEYS.some((k) => getProperty(props, k) !== undefined)) return undefined;

  const delayLevel = Number.parseInt(getProperty(props, MessageConst.DELAY_TIME_LEVEL) ?? '', 10);
  if (delayLevel > 0) {
    const map = parseProperties(props);
    for (const k of TIMER_REQUEST_KEYS) map.delete(k);
    msg.propertiesString = encodeProperties(map);
    return undefined;
  }
  if (getProperty(props, MessageConst.TIMER_OUT_MS) !== undefined) return undefined; // already converted once
  if (!cfg.timerWheelEnable) {
    return {
      status: 'WHEEL_TIMER_NOT_ENABLE',
      code: ResponseCode.SYSTEM_ERROR,
      remark: `accurate timer message is not enabled, timerWheelEnable is ${cfg.timerWheelEnable}`,
    };
  }

  const delaySec = getProperty(props, MessageConst.TIMER_DELAY_SEC);
  const delayMs = getProperty(props, MessageConst.TIMER_DELAY_MS);
  let deliverMs: number;
  let source: string;
  if (delaySec !== undefined) {
    deliverMs = nowMs + parseJavaLong(delaySec) * 1000;
    source = `TIMER_DELAY_SEC=${delaySec}`;
  } else if (delayMs !== undefined) {
    deliverMs = nowMs + parseJavaLong(delayMs);
    source = `TIMER_DELAY_MS=${delayMs}`;
  } else {
    const raw = getProperty(props, MessageConst.TIMER_DELIVER_MS) ?? '';
    deliverMs = parseJavaLong(raw);
    source = `TIMER_DELIVER_MS=${raw}`;
  }
  if (Number.isNaN(deliverMs)) return illegal(cfg, `${source} is not a number`);

  if (deliverMs > nowMs) {
    if (deliverMs - nowMs > cfg.timerMaxDelaySec * 1000) {
      return illegal(cfg, `${source} is ${Math.ceil((deliverMs - nowMs) / 1000)} s ahead, timerMaxDelaySec=${cfg.timerMaxDelaySec}`);
    }
    const outMs = timerOutMs(deliverMs, precisionMs);
    const map = parseProperties(props);
    map.set(MessageConst.TIMER_OUT_MS, String(outMs));
    map.set(MessageConst.REAL_TOPIC, msg.topic);
    map.set(MessageConst.REAL_QUEUE_ID, String(msg.queueId));
    msg.propertiesString = encodeProperties(map);
    msg.topic = TIMER_TOPIC;
    msg.queueId = 0;
    msg.tagsCode = timerActionMs(outMs, nowMs);
  } else if (getProperty(props, MessageConst.TIMER_DEL_UNIQKEY) !== undefined) {
    return illegal(cfg, 'a delete marker must be due in the future');
  }
  // Due already: stored on the real topic as it is (TIMER_* properties kept, as Java does).
  return undefined;
}
