// Message property string: `name\x01value\x02` repeated (Java: MessageDecoder.messageProperties2String /
// string2messageProperties). Java drops segments with an empty name or value when parsing.

export const NAME_VALUE_SEPARATOR = '\u0001';
export const PROPERTY_SEPARATOR = '\u0002';
const NAME_VALUE_SEPARATOR_CODE = 1;
const PROPERTY_SEPARATOR_CODE = 2;

/** Well-known property keys (Java: common/message/MessageConst.java). */
export const MessageConst = {
  KEYS: 'KEYS',
  TAGS: 'TAGS',
  WAIT_STORE_MSG_OK: 'WAIT',
  DELAY_TIME_LEVEL: 'DELAY',
  UNIQ_CLIENT_MESSAGE_ID_KEYIDX: 'UNIQ_KEY',
  CLUSTER: 'CLUSTER',
  MSG_REGION: 'MSG_REGION',
  TRACE_SWITCH: 'TRACE_ON',
  RETRY_TOPIC: 'RETRY_TOPIC',
  REAL_TOPIC: 'REAL_TOPIC',
  REAL_QUEUE_ID: 'REAL_QID',
  TRANSACTION_PREPARED: 'TRAN_MSG',
  PRODUCER_GROUP: 'PGROUP',
  ORIGIN_MESSAGE_ID: 'ORIGIN_MESSAGE_ID',
  RECONSUME_TIME: 'RECONSUME_TIME',
  MAX_RECONSUME_TIMES: 'MAX_RECONSUME_TIMES',
  MIN_OFFSET: 'MIN_OFFSET',
  MAX_OFFSET: 'MAX_OFFSET',
  TRANSACTION_ID: '__transactionId__',
  TRANSACTION_CHECK_TIMES: 'TRANSACTION_CHECK_TIMES',
  TRANSACTION_PREPARED_QUEUE_OFFSET: 'TRAN_PREPARED_QUEUE_OFFSET',
  CHECK_IMMUNITY_TIME_IN_SECONDS: 'CHECK_IMMUNITY_TIME_IN_SECONDS',
  // 5.x timer messages
  TIMER_DELIVER_MS: 'TIMER_DELIVER_MS',
  TIMER_DELAY_SEC: 'TIMER_DELAY_SEC',
  TIMER_DELAY_MS: 'TIMER_DELAY_MS',
  TIMER_OUT_MS: 'TIMER_OUT_MS',
  TIMER_ENQUEUE_MS: 'TIMER_ENQUEUE_MS',
  TIMER_DEQUEUE_MS: 'TIMER_DEQUEUE_MS',
  TIMER_ROLL_TIMES: 'TIMER_ROLL_TIMES',
  TIMER_DEL_UNIQKEY: 'TIMER_DEL_UNIQKEY',
} as const;

export function parseProperties(s: string | undefined): Map<string, string> {
  const map = new Map<string, string>();
  if (!s) return map;
  let pos = 0;
  while (pos < s.length) {
    let end = s.indexOf(PROPERTY_SEPARATOR, pos);
    if (end < 0) end = s.length;
    const sep = s.indexOf(NAME_VALUE_SEPARATOR, pos);
    if (sep > pos && sep < end - 1) map.set(s.slice(pos, sep), s.slice(sep + 1, end));
    pos = end + 1;
  }
  return map;
}

/**
 * The value parseProperties(s).get(name) gives (the last segment with that name and a non-empty value), without
 * building the map: the SQL92 filter reads only the few properties its selector names.
 */
export function lastPropertyOf(s: string, name: string): string | undefined {
  const n = name.length;
  // parseProperties' names are non-empty and hold neither separator.
  if (n === 0 || name.includes(NAME_VALUE_SEPARATOR) || name.includes(PROPERTY_SEPARATOR)) return undefined;
  let found: string | undefined;
  let pos = 0;
  while (pos < s.length) {
    let end = s.indexOf(PROPERTY_SEPARATOR, pos);
    if (end < 0) end = s.length;
    const sep = pos + n;
    if (sep < end - 1 && s.charCodeAt(sep) === 1 && s.startsWith(name, pos)) found = s.slice(sep + 1, end);
    pos = end + 1;
  }
  return found;
}

export function encodeProperties(props: Map<string, string> | Record<string, string>): string {
  let out = '';
  const entries = props instanceof Map ? props.entries() : Object.entries(props);
  for (const [k, v] of entries) {
    if (v === undefined || v === null) continue;
    out += k + NAME_VALUE_SEPARATOR + v + PROPERTY_SEPARATOR;
  }
  return out;
}

/**
 * Reads one property without building a map (hot path: TAGS, KEYS, UNIQ_KEY, TRAN_MSG): the first property of
 * that name. The name is searched natively and taken where it starts a property and the separator follows; most
 * names asked for are absent, and one indexOf settles that (~2x faster than stepping from property to property).
 */
export function getProperty(s: string | undefined, name: string): string | undefined {
  // An empty name is no property (Java's parser drops such segments).
  if (!s || name.length === 0) return undefined;
  for (let at = s.indexOf(name); at >= 0; at = s.indexOf(name, at + 1)) {
    const sep = at + name.length;
    if ((at === 0 || s.charCodeAt(at - 1) === PROPERTY_SEPARATOR_CODE) && s.charCodeAt(sep) === NAME_VALUE_SEPARATOR_CODE) {
      let end = s.indexOf(PROPERTY_SEPARATOR, sep + 1);
      if (end < 0) end = s.length;
      return end > sep + 1 ? s.slice(sep + 1, end) : undefined;
    }
  }
  return undefined;
}

/** The properties every send looks at, read in one pass (see readSendProperties). */
export interface SendProperties {
  tags?: string;
  keys?: string;
  uniqKey?: string;
  cluster?: string;
  /** MSG_REGION or TRACE_ON is there (the broker sets both itself: see withTraceProperties). */
  traceSet: boolean;
}

/** Which of the send's names the property at [pos, sep) of `s` is (a bit of SendProperties; 16: MSG_REGION or TRACE_ON), or 0. */
function sendPropertyBit(s: string, pos: number, sep: number): number {
  // By length first, then one native comparison in place: no slice of the name and no hash of it.
  switch (sep - pos) {
    case 4:
      if (s.startsWith(MessageConst.TAGS, pos)) return 1;
      return s.startsWith(MessageConst.KEYS, pos) ? 2 : 0;
    case 8:
      if (s.startsWith(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX, pos)) return 4;
      return s.startsWith(MessageConst.TRACE_SWITCH, pos) ? 16 : 0;
    case 7:
      return s.startsWith(MessageConst.CLUSTER, pos) ? 8 : 0;
    case 10:
      return s.startsWith(MessageConst.MSG_REGION, pos) ? 16 : 0;
    default:
      return 0;
  }
}

/**
 * TAGS, KEYS, UNIQ_KEY and CLUSTER in one scan of a properties string, with getProperty's rules (the first
 * occurrence of a name counts; an empty value reads as absent), and whether MSG_REGION or TRACE_ON is there.
 */
export function readSendProperties(s: string): SendProperties {
  // All four fields from the start: one object shape for every message, whatever its properties.
  const out: SendProperties = { tags: undefined, keys: undefined, uniqKey: undefined, cluster: undefined, traceSet: false };
  let seen = 0;
  let pos = 0;
  while (pos < s.length) {
    let end = s.indexOf(PROPERTY_SEPARATOR, pos);
    if (end < 0) end = s.length;
    const sep = s.indexOf(NAME_VALUE_SEPARATOR, pos);
    if (sep >= 0 && sep < end) {
      const bit = sendPropertyBit(s, pos, sep);
      if (bit === 16) {
        out.traceSet = true;
      } else if (bit !== 0 && (seen & bit) === 0) {
        seen |= bit;
        if (end > sep + 1) {
          const value = s.slice(sep + 1, end);
          if (bit === 1) out.tags = value;
          else if (bit === 2) out.keys = value;
          else if (bit === 4) out.uniqKey = value;
          else out.cluster = value;
        }
      }
    }
    pos = end + 1;
  }
  return out;
}

/**
 * The properties with MSG_REGION and TRACE_ON set to the broker's (Java 5.x AbstractSendMessageProcessor
 * buildMsgContext puts both into every message it is sent): appended, after dropping any the producer sent
 * (`traceSet`, from readSendProperties). `props` is empty or ends with the property separator.
 */
export function withTraceProperties(props: string, traceSet: boolean, suffix: string): string {
  if (!traceSet) return props + suffix;
  let out = '';
  let pos = 0;
  while (pos < props.length) {
    let end = props.indexOf(PROPERTY_SEPARATOR, pos);
    if (end < 0) end = props.length;
    const sep = props.indexOf(NAME_VALUE_SEPARATOR, pos);
    const name = sep >= 0 && sep < end ? props.slice(pos, sep) : props.slice(pos, end);
    if (name !== MessageConst.MSG_REGION && name !== MessageConst.TRACE_SWITCH) out += props.slice(pos, end + 1);
    pos = end + 1;
  }
  return out + suffix;
}

/** `MSG_REGION\x01<region>\x02TRACE_ON\x01<on>\x02`: what withTraceProperties appends. */
export function tracePropertiesSuffix(regionId: string, traceOn: boolean): string {
  return `${MessageConst.MSG_REGION}${NAME_VALUE_SEPARATOR}${regionId}${PROPERTY_SEPARATOR}` +
    `${MessageConst.TRACE_SWITCH}${NAME_VALUE_SEPARATOR}${traceOn}${PROPERTY_SEPARATOR}`;
}
