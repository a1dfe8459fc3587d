// The POP handle formats (Java remoting/protocol/header/ExtraInfoUtil.java, common/consumer/ReceiptHandle.java).
//
// extraInfo / receipt handle: fields separated by one space,
//   startOffset popTime invisibleTime reviveQid retryFlag brokerName queueId queueOffset [commitLogOffset]
// The broker puts the 8-field form into POP_CK; the proxy (and our gRPC endpoint) appends the commit-log offset.
// startOffset is the checkpoint's first offset (the batch start), popTime and invisibleTime are ms, reviveQid is the
// revive queue of the checkpoint (999 for orderly pops), retryFlag is "0" normal / "1" retry v1 / "2" retry v2,
// queueId and queueOffset belong to the topic the message is stored on (the retry topic for a retried message).
//
// The pop response header lists, one entry per queue read, joined by ';':
//   startOffsetInfo  `<flag> <queueId> <startOffset>`
//   msgOffsetInfo    `<flag> <queueId> <o1>,<o2>,...`      (the offsets of that queue's records in the body)
//   orderCountInfo   `<flag> qo<queueId>%<offset> <count>` per offset, then `<flag> <queueId> <minCount>`
import { type RetryFlag, POP_ORDER_REVIVE_QUEUE, retryFlagOf } from './pop-keys.js';

/** MessageConst.KEY_SEPARATOR */
const SEP = ' ';

/** A malformed handle or extraInfo; the message is Java's (IllegalArgumentException / NumberFormatException). */
export class ExtraInfoError extends Error {
  constructor(
    message: string,
    /** The Java exception class a Java peer would have reported. */
    readonly javaClass: 'java.lang.IllegalArgumentException' | 'java.lang.NumberFormatException' = 'java.lang.IllegalArgumentException',
  ) {
    super(message);
  }

  /** Java's `Throwable.toString()`: what a broker answers as the remark of its SYSTEM_ERROR. */
  get javaText(): string {
    return `${this.javaClass}: ${this.message}`;
  }
}

/** Java String.split(" "): trailing empty strings dropped; a string without a separator is one element. */
export function javaSplit(s: string, sep: string = SEP): string[] {
  const parts = s.split(sep);
  if (parts.length === 1) return parts;
  let end = parts.length;
  while (end > 0 && parts[end - 1] === '') end--;
  return parts.slice(0, end);
}

const LONG_RE = /^[+-]?\d{1,19}$/;

/** Long.parseLong (limited to the exact range of a JS number, which every offset and time stays in). */
export function parseJavaLong(raw: string): number {
  const n = LONG_RE.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new ExtraInfoError(`For input string: "${raw}"`, 'java.lang.NumberFormatException');
  return n;
}

/** Integer.parseInt */
export function parseJavaInt(raw: string): number {
  const n = LONG_RE.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
    throw new ExtraInfoError(`For input string: "${raw}"`, 'java.lang.NumberFormatException');
  }
  return n;
}

/** A decoded receipt handle (Java ReceiptHandle; `retrieveTime` there is popTime here). */
export interface ReceiptHandle {
  startOffset: number;
  popTime: number;
  invisibleTime: number;
  reviveQid: number;
  retryFlag: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  /** -1 when the handle has only 8 fields (the broker's POP_CK form). */
  commitLogOffset: number;
}

/** ReceiptHandle.encode: 9 fields, or the 8-field extraInfo when commitLogOffset is -1. */
export function encodeReceiptHandle(h: ReceiptHandle): string {
  const base = `${h.startOffset}${SEP}${h.popTime}${SEP}${h.invisibleTime}${SEP}${h.reviveQid}${SEP}${h.retryFlag}`
    + `${SEP}${h.brokerName}${SEP}${h.queueId}${SEP}${h.queueOffset}`;
  return h.commitLogOffset >= 0 ? `${base}${SEP}${h.commitLogOffset}` : base;
}

/**
 * ReceiptHandle.decode: at least 8 fields ("Parse failed, dataList size N"), numbers as Java parses them; the 9th
 * field (commit-log offset) is optional. Throws ExtraInfoError.
 */
export function decodeReceiptHandle(handle: string): ReceiptHandle {
  const d = javaSplit(handle);
  if (d.length < 8) throw new ExtraInfoError(`Parse failed, dataList size ${d.length}`);
  return {
    startOffset: parseJavaLong(d[0]!),
    popTime: parseJavaLong(d[1]!),
    invisibleTime: parseJavaLong(d[2]!),
    reviveQid: parseJavaInt(d[3]!),
    retryFlag: d[4]!,
    brokerName: d[5]!,
    queueId: parseJavaInt(d[6]!),
    queueOffset: parseJavaLong(d[7]!),
    commitLogOffset: d.length >= 9 ? parseJavaLong(d[8]!) : -1,
  };
}

/** ReceiptHandle.isExpired: the message is visible again (popTime + invisibleTime ≤ now). */
export function isHandleExpired(h: Pick<ReceiptHandle, 'popTime' | 'invisibleTime'>, nowMs: number = Date.now()): boolean {
  return h.popTime + h.invisibleTime <= nowMs;
}

/** ExtraInfoUtil.buildExtraInfo: the 8-field POP_CK of one popped message (the flag from the stored topic's name). */
export function buildExtraInfo(
  startOffset: number, popTime: number, invisibleTime: number, reviveQid: number, storedTopic: string,
  brokerName: string, queueId: number, queueOffset: number,
): string {
  return `${startOffset}${SEP}${popTime}${SEP}${invisibleTime}${SEP}${reviveQid}${SEP}${retryFlagOf(storedTopic)}`
    + `${SEP}${brokerName}${SEP}${queueId}${SEP}${queueOffset}`;
}

/**
 * The broker's lazy reading of an extraInfo header (ExtraInfoUtil.getXxx): each getter checks only that its own
 * field exists, with Java's message ("getBrokerName fail, extraInfoStrs length 1"). Throws ExtraInfoError.
 */
export class ExtraInfoReader {
  readonly parts: string[];

  constructor(extraInfo: string) {
    this.parts = javaSplit(extraInfo);
  }

  private field(index: number, getter: string): string {
    if (this.parts.length < index + 1) throw new ExtraInfoError(`${getter} fail, extraInfoStrs length ${this.parts.length}`);
    return this.parts[index]!;
  }

  get ckQueueOffset(): number {
    return parseJavaLong(this.field(0, 'getCkQueueOffset'));
  }
  get popTime(): number {
    return parseJavaLong(this.field(1, 'getPopTime'));
  }
  get invisibleTime(): number {
    return parseJavaLong(this.field(2, 'getInvisibleTime'));
  }
  get reviveQid(): number {
    return parseJavaInt(this.field(3, 'getReviveQid'));
  }
  get retry(): string {
    return this.field(4, 'getRetry');
  }
  get brokerName(): string {
    return this.field(5, 'getBrokerName');
  }
  get queueId(): number {
    return parseJavaInt(this.field(6, 'getQueueId'));
  }
  get queueOffset(): number {
    return parseJavaLong(this.field(7, 'getQueueOffset'));
  }
  /** ExtraInfoUtil.isOrder */
  get isOrder(): boolean {
    return this.reviveQid === POP_ORDER_REVIVE_QUEUE;
  }
}

// ---------------------------------------------------------------- response header lists

/** Appends one `startOffsetInfo` entry (ExtraInfoUtil.buildStartOffsetInfo). */
export function appendStartOffsetInfo(list: string[], storedTopic: string, queueId: number, startOffset: number): void {
  list.push(`${retryFlagOf(storedTopic)}${SEP}${queueId}${SEP}${startOffset}`);
}

/** Appends one `msgOffsetInfo` entry (ExtraInfoUtil.buildMsgOffsetInfo). */
export function appendMsgOffsetInfo(list: string[], storedTopic: string, queueId: number, offsets: readonly number[]): void {
  list.push(`${retryFlagOf(storedTopic)}${SEP}${queueId}${SEP}${offsets.join(',')}`);
}

/** Appends a per-offset order count (ExtraInfoUtil.buildQueueOffsetOrderCountInfo). */
export function appendOffsetOrderCount(list: string[], storedTopic: string, queueId: number, offset: number, count: number): void {
  list.push(`${retryFlagOf(storedTopic)}${SEP}qo${queueId}%${offset}${SEP}${count}`);
}

/** Appends a per-queue minimum order count (ExtraInfoUtil.buildQueueIdOrderCountInfo). */
export function appendQueueOrderCount(list: string[], storedTopic: string, queueId: number, count: number): void {
  list.push(`${retryFlagOf(storedTopic)}${SEP}${queueId}${SEP}${count}`);
}

/** Parses a `;`-joined list of `<flag> <key> <value>` into `<flag>@<key>` → value (parseStartOffsetInfo & co). */
function parseInfo<T>(info: string | undefined, what: string, value: (raw: string) => T): Map<string, T> | undefined {
  if (!info) return undefined;
  const out = new Map<string, T>();
  for (const one of info.split(';')) {
    const s = javaSplit(one);
    if (s.length !== 3) throw new ExtraInfoError(`parse ${what} error, ${info}`);
    const key = `${s[0]}@${s[1]}`;
    if (out.has(key)) throw new ExtraInfoError(`parse ${what} error, duplicate, ${info}`);
    out.set(key, value(s[2]!));
  }
  return out;
}

export function parseStartOffsetInfo(info: string | undefined): Map<string, number> | undefined {
  return parseInfo(info, 'startOffsetInfo', parseJavaLong);
}

export function parseMsgOffsetInfo(info: string | undefined): Map<string, number[]> | undefined {
  return parseInfo(info, 'msgOffsetMap', (raw) => raw.split(',').map(parseJavaLong));
}

export function parseOrderCountInfo(info: string | undefined): Map<string, number> | undefined {
  return parseInfo(info, 'orderCountInfo', parseJavaInt);
}

/** The key of a queue in the parsed lists (ExtraInfoUtil.getStartOffsetInfoMapKey). */
export function queueInfoKey(storedTopic: string, queueId: number): string {
  return `${retryFlagOf(storedTopic)}@${queueId}`;
}

/** The key of one offset in the parsed order counts (ExtraInfoUtil.getQueueOffsetMapKey). */
export function offsetInfoKey(storedTopic: string, queueId: number, offset: number): string {
  return `${retryFlagOf(storedTopic)}@qo${queueId}%${offset}`;
}

export type { RetryFlag };
