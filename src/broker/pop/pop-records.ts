// Checkpoint and ack records on the revive topic (Java store/pop/PopCheckPoint.java, AckMsg.java, BatchAckMsg.java;
// PopMessageProcessor.buildCkMsg / genCkUniqueId / genAckUniqueId, AckMessageProcessor.appendAck) and the
// BATCH_ACK_MESSAGE request body (remoting/protocol/body/BatchAck.java, BatchAckMessageRequestBody.java).
//
// Bodies are fastjson output: keys sorted, nulls left out, e.g.
//   CK   {"bm":0,"bn":"broker-a","c":"G","d":[0,1],"it":60000,"n":2,"pt":1700000000000,"q":1,
//         "reviveTime":1700000060000,"ro":0,"so":5,"t":"T"}                    (+ "rp":"1" when re-put)
//   ACK  {"ao":6,"bn":"broker-a","c":"G","pt":1700000000000,"q":1,"so":5,"t":"T"}
//   bAck {"ao":-1,"aol":[5,6],"bn":"broker-a","c":"G","pt":1700000000000,"q":1,"so":5,"t":"T"}
// `t` is the topic the messages are stored on (the retry topic for retried ones), `d` the offsets as deltas from
// `so`. Records are timer messages: a CK reaches its revive queue at reviveTime − 1 s, an ACK at reviveTime.
import { stringifyFastjson } from '../../common/fastjson.js';
import { javaStringHashCode } from '../../common/java-hash.js';
import { MessageConst, encodeProperties } from '../../common/message-properties.js';
import type { HostAddress, MessageToStore } from '../../store/index.js';
import { ACK_TIME_INTERVAL_MS } from './pop-keys.js';

export const CK_TAG = 'ck';
export const ACK_TAG = 'ack';
export const BATCH_ACK_TAG = 'bAck';

/** PopCheckPoint */
export interface CheckPoint {
  startOffset: number;
  popTime: number;
  invisibleTime: number;
  /** Bit i set: the i-th popped message is acknowledged (read side only; always 0 when written). */
  bitMap: number;
  num: number;
  queueId: number;
  topic: string;
  group: string;
  /** The CK record's own offset in its revive queue (read side; 0 when written). */
  reviveOffset: number;
  /** Offsets of the popped messages minus startOffset; undefined for old checkpoints (then so..so+n−1). */
  queueOffsetDiff?: number[];
  brokerName?: string;
  /** How often the checkpoint was re-put after a failed revive (a string in Java). */
  rePutTimes?: string;
}

/** AckMsg / BatchAckMsg (ackOffset −1 and ackOffsetList for a batch). */
export interface AckRecord {
  ackOffset: number;
  startOffset: number;
  group: string;
  topic: string;
  queueId: number;
  popTime: number;
  brokerName?: string;
  ackOffsetList?: number[];
}

export function reviveTimeOf(ck: Pick<CheckPoint, 'popTime' | 'invisibleTime'>): number {
  return ck.popTime + ck.invisibleTime;
}

/** PopCheckPoint.indexOfAck: the bit of an acked offset, or −1. */
export function indexOfAck(ck: CheckPoint, ackOffset: number): number {
  if (ackOffset < ck.startOffset) return -1;
  const diff = ackOffset - ck.startOffset;
  if (!ck.queueOffsetDiff || ck.queueOffsetDiff.length === 0) return diff < ck.num ? diff : -1;
  return ck.queueOffsetDiff.indexOf(diff);
}

/** PopCheckPoint.ackOffsetByIndex */
export function ackOffsetByIndex(ck: CheckPoint, index: number): number {
  if (!ck.queueOffsetDiff || ck.queueOffsetDiff.length === 0) return ck.startOffset + index;
  return ck.startOffset + (ck.queueOffsetDiff[index] ?? 0);
}

/** PopCheckPoint.parseRePutTimes: a value Java cannot parse counts as Byte.MAX_VALUE. */
export function parseRePutTimes(ck: CheckPoint): number {
  if (ck.rePutTimes === undefined) return 0;
  return /^[+-]?\d{1,9}$/.test(ck.rePutTimes) ? Number(ck.rePutTimes) : 127;
}

// ---------------------------------------------------------------- JSON

export function encodeCheckPoint(ck: CheckPoint): string {
  return stringifyFastjson({
    bm: ck.bitMap,
    bn: ck.brokerName,
    c: ck.group,
    d: ck.queueOffsetDiff,
    it: ck.invisibleTime,
    n: ck.num,
    pt: ck.popTime,
    q: ck.queueId,
    reviveTime: reviveTimeOf(ck),
    ro: ck.reviveOffset,
    rp: ck.rePutTimes,
    so: ck.startOffset,
    t: ck.topic,
  });
}

export function encodeAck(ack: AckRecord): string {
  return stringifyFastjson({
    ao: ack.ackOffset,
    aol: ack.ackOffsetList,
    bn: ack.brokerName,
    c: ack.group,
    pt: ack.popTime,
    q: ack.queueId,
    so: ack.startOffset,
    t: ack.topic,
  });
}

type Json = Record<string, unknown>;

function num(o: Json, ...names: string[]): number {
  for (const n of names) {
    const v = o[n];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  }
  return 0;
}

function str(o: Json, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = o[n];
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return String(v);
  }
  return undefined;
}

function parseObject(text: string): Json | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
  } catch {
    return undefined;
  }
}

/** A CK body; undefined when it is not a JSON object or has no topic or group (Java skips those). */
export function decodeCheckPoint(text: string): CheckPoint | undefined {
  const o = parseObject(text);
  if (!o) return undefined;
  const topic = str(o, 't');
  const group = str(o, 'c');
  if (topic === undefined || group === undefined) return undefined;
  const d = Array.isArray(o.d) ? o.d.filter((x): x is number => typeof x === 'number') : undefined;
  return {
    startOffset: num(o, 'so'),
    popTime: num(o, 'pt'),
    invisibleTime: num(o, 'it'),
    bitMap: num(o, 'bm'),
    num: num(o, 'n'),
    queueId: num(o, 'q'),
    topic,
    group,
    reviveOffset: num(o, 'ro'),
    queueOffsetDiff: d,
    brokerName: str(o, 'bn'),
    rePutTimes: str(o, 'rp'),
  };
}

/** An ACK or bAck body (short or long field names, as fastjson's alternateNames accept); undefined if unreadable. */
export function decodeAck(text: string): AckRecord | undefined {
  const o = parseObject(text);
  if (!o) return undefined;
  const list = o.aol ?? o.ackOffsetList;
  return {
    ackOffset: num(o, 'ao', 'ackOffset'),
    startOffset: num(o, 'so', 'startOffset'),
    group: str(o, 'c', 'consumerGroup') ?? '',
    topic: str(o, 't', 'topic') ?? '',
    queueId: num(o, 'q', 'queueId'),
    popTime: num(o, 'pt', 'popTime'),
    brokerName: str(o, 'bn', 'brokerName'),
    ackOffsetList: Array.isArray(list) ? list.filter((x): x is number => typeof x === 'number') : undefined,
  };
}

// ---------------------------------------------------------------- unique ids (UNIQ_KEY of the records)

/** PopMessageProcessor.genCkUniqueId */
export function ckUniqueId(ck: CheckPoint): string {
  return `${ck.topic}@${ck.queueId}@${ck.startOffset}@${ck.group}@${ck.popTime}@${ck.brokerName}@${CK_TAG}`;
}

/** PopMessageProcessor.genAckUniqueId; also what a bAck record ends up with (appendAck overwrites it). */
export function ackUniqueId(ack: AckRecord): string {
  return `${ack.topic}@${ack.queueId}@${ack.ackOffset}@${ack.group}@${ack.popTime}@${ack.brokerName}@${ACK_TAG}`;
}

/** The revive key a CK and its acks share (PopReviveService: topic + group + queueId + startOffset + popTime + broker). */
export function reviveMergeKey(topic: string, group: string, queueId: number, startOffset: number, popTime: number, brokerName: string): string {
  return `${topic}${group}${queueId}${startOffset}${popTime}${brokerName}`;
}

// ---------------------------------------------------------------- records as messages

interface RecordPlace {
  reviveTopic: string;
  reviveQid: number;
  /** The broker's own address: born and store host of every record. */
  host: HostAddress;
  nowMs: number;
}

function reviveMessage(place: RecordPlace, tag: string, body: string, deliverMs: number, uniqKey: string): MessageToStore {
  const props = new Map<string, string>([
    [MessageConst.TAGS, tag],
    [MessageConst.TIMER_DELIVER_MS, String(deliverMs)],
    [MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniqKey],
  ]);
  return {
    topic: place.reviveTopic,
    queueId: place.reviveQid,
    flag: 0,
    body: Buffer.from(body, 'utf8'),
    propertiesString: encodeProperties(props),
    tagsCode: javaStringHashCode(tag),
    uniqKey,
    sysFlag: 0,
    bornTimestamp: place.nowMs,
    bornHost: place.host,
    storeHost: place.host,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

/** PopMessageProcessor.buildCkMsg: due one ackTimeInterval before the revive time. Run the timer hook before storing. */
export function checkPointMessage(ck: CheckPoint, place: RecordPlace): MessageToStore {
  return reviveMessage(place, CK_TAG, encodeCheckPoint(ck), reviveTimeOf(ck) - ACK_TIME_INTERVAL_MS, ckUniqueId(ck));
}

/** AckMessageProcessor.appendAck: due at popTime + invisibleTime of the checkpoint it acknowledges. */
export function ackMessage(ack: AckRecord, invisibleTime: number, place: RecordPlace): MessageToStore {
  const tag = ack.ackOffsetList ? BATCH_ACK_TAG : ACK_TAG;
  return reviveMessage(place, tag, encodeAck(ack), ack.popTime + invisibleTime, ackUniqueId(ack));
}

// ---------------------------------------------------------------- BATCH_ACK_MESSAGE body

/** One BatchAck of a BATCH_ACK_MESSAGE body: bit i of `bitSet` acknowledges offset startOffset + i. */
export interface BatchAck {
  group: string;
  /** The requested (normal) topic; `retry` says whether the messages live on its retry topic. */
  topic: string;
  retry: string;
  startOffset: number;
  queueId: number;
  reviveQueueId: number;
  popTime: number;
  invisibleTime: number;
  /** The set bits, ascending. */
  bits: number[];
}

/** Java BitSet.toByteArray / valueOf(byte[]): little-endian, bit i is byte i/8, bit i%8. */
export function bitsOfBytes(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    for (let j = 0; j < 8; j++) if (b & (1 << j)) out.push(i * 8 + j);
  }
  return out;
}

export function bytesOfBits(bits: readonly number[]): Buffer {
  const max = bits.reduce((m, b) => Math.max(m, b), -1);
  const out = Buffer.alloc(max < 0 ? 0 : (max >> 3) + 1);
  for (const b of bits) out[b >> 3]! |= 1 << (b & 7);
  return out;
}

/**
 * Decodes a BatchAckMessageRequestBody (`{"acks":[...],"brokerName":...}`, short or long field names; `b` is the
 * Base64 of BitSet.toByteArray). Throws Error with a reason when the body is not such an object.
 */
export function decodeBatchAckBody(body: Buffer): { brokerName?: string; acks: BatchAck[] } {
  let o: unknown;
  try {
    o = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new Error(`batch ack body is not JSON: ${(err as Error).message}`);
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new Error('batch ack body must be a JSON object');
  const root = o as Json;
  const acks: BatchAck[] = [];
  for (const raw of Array.isArray(root.acks) ? root.acks : []) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('batch ack entries must be JSON objects');
    const a = raw as Json;
    const b = a.b ?? a.bitSet;
    let bits: number[] = [];
    if (typeof b === 'string') bits = bitsOfBytes(Buffer.from(b, 'base64'));
    else if (Array.isArray(b)) bits = bitsOfBytes(Uint8Array.from(b.filter((x): x is number => typeof x === 'number')));
    acks.push({
      group: str(a, 'c', 'consumerGroup') ?? '',
      topic: str(a, 't', 'topic') ?? '',
      retry: str(a, 'r', 'retry') ?? '0',
      startOffset: num(a, 'so', 'startOffset'),
      queueId: num(a, 'q', 'queueId'),
      reviveQueueId: num(a, 'rq', 'reviveQueueId'),
      popTime: num(a, 'pt', 'popTime'),
      invisibleTime: num(a, 'it', 'invisibleTime'),
      bits,
    });
  }
  return { brokerName: str(root, 'brokerName'), acks };
}

/** Encodes a BatchAckMessageRequestBody as fastjson does (tests, and a gRPC endpoint that batches acks). */
export function encodeBatchAckBody(brokerName: string, acks: readonly BatchAck[]): string {
  return stringifyFastjson({
    acks: acks.map((a) => ({
      b: bytesOfBits(a.bits), c: a.group, it: a.invisibleTime, pt: a.popTime, q: a.queueId, r: a.retry,
      rq: a.reviveQueueId, so: a.startOffset, t: a.topic,
    })),
    brokerName,
  });
}
