// The stored message record: commit-log bytes = wire bytes of pull/query/view bodies.
// Layout (big-endian; Java MessageExtEncoder / MessageDecoder):
//   TOTALSIZE 4 | MAGICCODE 4 | BODYCRC 4 | QUEUEID 4 | FLAG 4 | QUEUEOFFSET 8 | PHYSICALOFFSET 8 | SYSFLAG 4 |
//   BORNTIMESTAMP 8 | BORNHOST 8 (20 if sysFlag 0x10) | STORETIMESTAMP 8 | STOREHOST 8 (20 if sysFlag 0x20) |
//   RECONSUMETIMES 4 | PREPARED_TX_OFFSET 8 | BODYLEN 4 + BODY | TOPICLEN 1 (v1) / 2 (v2) + TOPIC |
//   PROPLEN 2 + PROPERTIES
import type { HostAddress, MessageToStore } from './types.js';
import { bodyCrc32, bodyCrc32Parts } from './crc32.js';

/** MessageDecoder.MESSAGE_MAGIC_CODE (v1, 1-byte topic length); as unsigned 32-bit. */
export const MESSAGE_MAGIC_CODE_V1 = 0xdaa320a7;
/** MessageDecoder.MESSAGE_MAGIC_CODE_V2 (2-byte topic length, used when the topic exceeds 127 bytes). */
export const MESSAGE_MAGIC_CODE_V2 = 0xdaa320ab;
/** CommitLog.BLANK_MAGIC_CODE: end-of-file filler `int remaining | int BLANK`. */
export const BLANK_MAGIC_CODE = 0xcbd43194;
/** Length of the BLANK end-of-file marker (TOTALSIZE + MAGICCODE). */
export const END_FILE_MIN_BLANK_LENGTH = 8;

/** MessageSysFlag bits. */
export const SysFlag = Object.freeze({
  COMPRESSED: 0x1,
  MULTI_TAGS: 0x2,
  TRANSACTION_TYPE_MASK: 0xc,
  TRANSACTION_NOT_TYPE: 0x0,
  TRANSACTION_PREPARED_TYPE: 0x4,
  TRANSACTION_COMMIT_TYPE: 0x8,
  TRANSACTION_ROLLBACK_TYPE: 0xc,
  BORNHOST_V6: 0x10,
  STOREHOSTADDRESS_V6: 0x20,
  NEED_UNWRAP: 0x40,
  INNER_BATCH: 0x80,
  COMPRESSION_TYPE_MASK: 0x700,
});

/** Byte positions of the fixed-place fields. */
export const RecordPos = Object.freeze({
  TOTAL_SIZE: 0,
  MAGIC_CODE: 4,
  BODY_CRC: 8,
  QUEUE_ID: 12,
  FLAG: 16,
  QUEUE_OFFSET: 20,
  PHYSICAL_OFFSET: 28,
  SYS_FLAG: 36,
  BORN_TIMESTAMP: 40,
  BORN_HOST: 48,
});

/** Fixed overhead of a v1 record with IPv4 hosts: 91 bytes + body + topic + properties. */
export const RECORD_OVERHEAD_V1_IPV4 = 91;
/** Largest properties string (int16 length). */
export const MAX_PROPERTIES_LENGTH = 32767;
/** Largest topic the store accepts, bytes. */
export const MAX_TOPIC_LENGTH = 255;
/** A topic longer than this (bytes) is stored with the v2 magic and a 2-byte topic length. */
export const MAX_V1_TOPIC_LENGTH = 127;

const TWO_POW_32 = 4294967296;
const TWO_POW_63 = 9223372036854775808;

export function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_POW_32 + buf.readUInt32BE(pos + 4);
}

/**
 * readInt64 from the bytes, without Buffer's checks, for the scans over consume-queue entries (the caller keeps
 * pos + 8 <= buf.length): a pull's scan reads two per entry, and readInt32BE twice cost ~3x this (~30 vs ~11 ns).
 */
export function int64At(buf: Buffer, pos: number): number {
  return int32At(buf, pos) * TWO_POW_32 + (int32At(buf, pos + 4) >>> 0);
}

/** readInt32BE from the bytes, without Buffer's checks (pos + 4 <= buf.length). */
export function int32At(buf: Buffer, pos: number): number {
  return (buf[pos]! << 24) | (buf[pos + 1]! << 16) | (buf[pos + 2]! << 8) | buf[pos + 3]!;
}

/** Writes a JS integer (|v| < 2^53) as a big-endian int64 (byte stores: the hot queue and index entries use it). */
export function writeInt64(buf: Buffer, pos: number, v: number): void {
  if (!(pos >= 0 && pos + 8 <= buf.length)) throw new RangeError(`int64 at ${pos} is outside a buffer of ${buf.length}`);
  put64(buf, pos, v);
}

/** Writes an int32 (signed or unsigned 32-bit value) big-endian, like writeInt32BE without its call overhead. */
export function writeInt32(buf: Buffer, pos: number, v: number): void {
  if (!(pos >= 0 && pos + 4 <= buf.length)) throw new RangeError(`int32 at ${pos} is outside a buffer of ${buf.length}`);
  put32(buf, pos, v);
}

export function bornHostLength(sysFlag: number): number {
  return sysFlag & SysFlag.BORNHOST_V6 ? 20 : 8;
}

export function storeHostLength(sysFlag: number): number {
  return sysFlag & SysFlag.STOREHOSTADDRESS_V6 ? 20 : 8;
}

/** Position of STORETIMESTAMP, which moves with the born-host length. */
export function storeTimestampPos(sysFlag: number): number {
  return RecordPos.BORN_HOST + bornHostLength(sysFlag);
}

/** Position of STOREHOST. */
export function storeHostPos(sysFlag: number): number {
  return storeTimestampPos(sysFlag) + 8;
}

/** sysFlag with the host-v6 bits set from the actual address lengths (CommitLog.asyncPutMessage does this). */
export function withHostFlags(sysFlag: number, bornHost: HostAddress, storeHost: HostAddress): number {
  let f = sysFlag & ~(SysFlag.BORNHOST_V6 | SysFlag.STOREHOSTADDRESS_V6);
  if (bornHost.ip.length === 16) f |= SysFlag.BORNHOST_V6;
  if (storeHost.ip.length === 16) f |= SysFlag.STOREHOSTADDRESS_V6;
  return f;
}

/**
 * Total record size (MessageExtEncoder.calMsgLength). Lengths are in bytes; the topic length also decides
 * the version (v2 above 127 bytes), unless `v2` is given explicitly.
 */
export function encodeRecordSize(
  sysFlag: number,
  bodyLength: number,
  topicLength: number,
  propertiesLength: number,
  v2: boolean = topicLength > MAX_V1_TOPIC_LENGTH,
): number {
  return (
    4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 +
    bornHostLength(sysFlag) + 8 + storeHostLength(sysFlag) +
    4 + 8 +
    4 + bodyLength +
    (v2 ? 2 : 1) + topicLength +
    2 + propertiesLength
  );
}

/** What the append path has computed for one record before writing it. */
export interface RecordPlacement {
  totalSize: number;
  sysFlag: number;
  bodyCrc: number;
  queueOffset: number;
  commitLogOffset: number;
  storeTimestamp: number;
  topicBytes: Buffer;
  propertiesLength: number;
}

/** The DataView of the buffer records were last written into (appends fill one tail chunk after another). */
let viewTarget: Buffer | undefined;
let view: DataView = new DataView(new ArrayBuffer(0));

function viewOf(target: Buffer): DataView {
  if (target !== viewTarget) {
    view = new DataView(target.buffer, target.byteOffset, target.byteLength);
    viewTarget = target;
  }
  return view;
}

/**
 * Writes one record at `pos` of `target` (which must have totalSize bytes free). The fixed fields go in through a
 * DataView of the target (about half the time of byte-by-byte stores: 61 against 125 ns for a record's fields
 * here) and short copies run as loops: Buffer's write*()/copy() calls cost more in checks and call overhead than
 * the few bytes they move, and this runs once per stored message.
 */
export function writeRecord(target: Buffer, pos: number, msg: MessageToStore, p: RecordPlacement): void {
  const topic = p.topicBytes;
  const v2 = topic.length > MAX_V1_TOPIC_LENGTH;
  const parts = msg.bodyParts;
  const body = parts ? undefined : msg.body;
  const bodyLength = body ? body.length : bodyLengthOf(msg);
  if (pos < 0 || pos + p.totalSize > target.length) throw new RangeError(`record of ${p.totalSize} bytes does not fit at ${pos}`);
  const dv = viewOf(target);
  dv.setInt32(pos, p.totalSize);
  dv.setUint32(pos + 4, v2 ? MESSAGE_MAGIC_CODE_V2 : MESSAGE_MAGIC_CODE_V1);
  dv.setInt32(pos + 8, p.bodyCrc);
  dv.setInt32(pos + 12, msg.queueId);
  dv.setInt32(pos + 16, msg.flag);
  let o = pos + 20;
  o = set64(dv, o, p.queueOffset);
  o = set64(dv, o, p.commitLogOffset);
  dv.setInt32(o, p.sysFlag);
  o = set64(dv, o + 4, msg.bornTimestamp);
  o = putHost(target, o, msg.bornHost);
  o = set64(dv, o, p.storeTimestamp);
  o = putHost(target, o, msg.storeHost);
  dv.setInt32(o, msg.reconsumeTimes);
  o = set64(dv, o + 4, msg.preparedTransactionOffset);
  dv.setInt32(o, bodyLength);
  o += 4;
  if (body) {
    if (bodyLength > 0) target.set(body, o);
    o += bodyLength;
  } else {
    for (const part of parts!) {
      target.set(part, o);
      o += part.length;
    }
  }
  if (v2) {
    target[o++] = topic.length >>> 8;
  }
  target[o++] = topic.length & 0xff;
  for (let i = 0; i < topic.length; i++) target[o + i] = topic[i]!;
  o += topic.length;
  const propertiesLength = p.propertiesLength;
  target[o++] = (propertiesLength >>> 8) & 0xff;
  target[o++] = propertiesLength & 0xff;
  if (propertiesLength > 0) {
    const props = msg.propertiesString;
    // Property strings are ASCII nearly always (byte length = string length): one byte per char, no UTF-8 encoder.
    if (props.length === propertiesLength) o += target.write(props, o, propertiesLength, 'latin1');
    else o += target.write(props, o, propertiesLength, 'utf8');
  }
  if (o - pos !== p.totalSize) throw new Error(`record size mismatch: wrote ${o - pos}, expected ${p.totalSize}`);
}

/** Length of a message's body, given whole or as pieces (MessageToStore.bodyParts). */
export function bodyLengthOf(msg: MessageToStore): number {
  const parts = msg.bodyParts;
  if (parts === undefined) return msg.body.length;
  let n = 0;
  for (const p of parts) n += p.length;
  return n;
}

/** Big-endian int32 (signed or unsigned 32-bit value) at o; returns o + 4. */
function put32(b: Buffer, o: number, v: number): number {
  b[o] = v >>> 24;
  b[o + 1] = v >>> 16;
  b[o + 2] = v >>> 8;
  b[o + 3] = v;
  return o + 4;
}

/**
 * Big-endian int64 of a JS integer (|v| < 2^53) at o; returns o + 8. A value outside Java's long range throws, as
 * writeInt32BE did for its high word: a record is refused rather than stored with a wrapped field.
 */
function put64(b: Buffer, o: number, v: number): number {
  if (!(v >= -TWO_POW_63 && v < TWO_POW_63)) throw new RangeError(`int64 field value ${v} is outside the long range`);
  const hi = Math.floor(v / TWO_POW_32);
  put32(b, o, hi);
  return put32(b, o + 4, v - hi * TWO_POW_32);
}

/** put64 through a DataView (same range check). */
function set64(dv: DataView, o: number, v: number): number {
  if (!(v >= -TWO_POW_63 && v < TWO_POW_63)) throw new RangeError(`int64 field value ${v} is outside the long range`);
  const hi = Math.floor(v / TWO_POW_32);
  dv.setInt32(o, hi);
  dv.setUint32(o + 4, v - hi * TWO_POW_32);
  return o + 8;
}

function putHost(b: Buffer, o: number, host: HostAddress): number {
  const ip = host.ip;
  for (let i = 0; i < ip.length; i++) b[o + i] = ip[i]!;
  return put32(b, o + ip.length, host.port);
}

/** Encodes one record into a fresh buffer (tests, tools; the store writes in place with writeRecord). */
export function encodeRecord(
  msg: MessageToStore,
  queueOffset: number,
  commitLogOffset: number,
  storeTimestamp: number,
): Buffer {
  const topicBytes = Buffer.from(msg.topic, 'utf8');
  const propertiesLength = Buffer.byteLength(msg.propertiesString, 'utf8');
  const sysFlag = withHostFlags(msg.sysFlag, msg.bornHost, msg.storeHost);
  const totalSize = encodeRecordSize(sysFlag, bodyLengthOf(msg), topicBytes.length, propertiesLength);
  const buf = Buffer.allocUnsafe(totalSize);
  writeRecord(buf, 0, msg, {
    totalSize, sysFlag, bodyCrc: msg.bodyParts ? bodyCrc32Parts(msg.bodyParts) : bodyCrc32(msg.body), queueOffset, commitLogOffset, storeTimestamp,
    topicBytes, propertiesLength,
  });
  return buf;
}

export interface DecodedRecord {
  totalSize: number;
  /** Unsigned magic (MESSAGE_MAGIC_CODE_V1 or _V2). */
  magic: number;
  bodyCrc: number;
  queueId: number;
  flag: number;
  queueOffset: number;
  commitLogOffset: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: HostAddress;
  storeTimestamp: number;
  storeHost: HostAddress;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  /** View into the input buffer. */
  body: Buffer;
  topic: string;
  propertiesString: string;
}

/** Decodes the record starting at `offset`; throws RangeError when the bytes are not a whole valid record. */
export function decodeRecord(buf: Buffer, offset = 0): DecodedRecord {
  const end = buf.length;
  if (end - offset < 8) throw new RangeError('record truncated');
  const totalSize = buf.readInt32BE(offset);
  const magic = buf.readUInt32BE(offset + 4);
  if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) {
    throw new RangeError(`bad magic code 0x${magic.toString(16)}`);
  }
  if (totalSize < RECORD_OVERHEAD_V1_IPV4 || totalSize > end - offset) {
    throw new RangeError(`bad total size ${totalSize}`);
  }
  const limit = offset + totalSize;
  const sysFlag = buf.readInt32BE(offset + RecordPos.SYS_FLAG);
  let o = offset + RecordPos.BORN_HOST;
  const bornIpLen = sysFlag & SysFlag.BORNHOST_V6 ? 16 : 4;
  const bornHost = { ip: Buffer.from(buf.subarray(o, o + bornIpLen)), port: buf.readInt32BE(o + bornIpLen) };
  o += bornIpLen + 4;
  const storeTimestamp = readInt64(buf, o); o += 8;
  const storeIpLen = sysFlag & SysFlag.STOREHOSTADDRESS_V6 ? 16 : 4;
  const storeHost = { ip: Buffer.from(buf.subarray(o, o + storeIpLen)), port: buf.readInt32BE(o + storeIpLen) };
  o += storeIpLen + 4;
  const reconsumeTimes = buf.readInt32BE(o); o += 4;
  const preparedTransactionOffset = readInt64(buf, o); o += 8;
  const bodyLen = buf.readInt32BE(o); o += 4;
  if (bodyLen < 0 || o + bodyLen > limit) throw new RangeError(`bad body length ${bodyLen}`);
  const body = buf.subarray(o, o + bodyLen); o += bodyLen;
  let topicLen: number;
  if (magic === MESSAGE_MAGIC_CODE_V2) {
    topicLen = buf.readInt16BE(o); o += 2;
  } else {
    topicLen = buf.readInt8(o); o += 1;
  }
  if (topicLen < 0 || o + topicLen + 2 > limit) throw new RangeError(`bad topic length ${topicLen}`);
  const topic = buf.toString('utf8', o, o + topicLen); o += topicLen;
  const propLen = buf.readInt16BE(o); o += 2;
  if (propLen < 0 || o + propLen !== limit) throw new RangeError(`bad properties length ${propLen}`);
  const propertiesString = propLen > 0 ? buf.toString('utf8', o, o + propLen) : '';
  return {
    totalSize,
    magic,
    bodyCrc: buf.readInt32BE(offset + RecordPos.BODY_CRC),
    queueId: buf.readInt32BE(offset + RecordPos.QUEUE_ID),
    flag: buf.readInt32BE(offset + RecordPos.FLAG),
    queueOffset: readInt64(buf, offset + RecordPos.QUEUE_OFFSET),
    commitLogOffset: readInt64(buf, offset + RecordPos.PHYSICAL_OFFSET),
    sysFlag,
    bornTimestamp: readInt64(buf, offset + RecordPos.BORN_TIMESTAMP),
    bornHost,
    storeTimestamp,
    storeHost,
    reconsumeTimes,
    preparedTransactionOffset,
    body,
    topic,
    propertiesString,
  };
}

/**
 * Only the PROPERTIES string of the record at `offset` (broker-side SQL92 filtering; Java
 * MessageDecoder.decodeProperties), skipping the rest of the decode. Throws RangeError on a malformed record.
 */
export function readRecordProperties(buf: Buffer, offset = 0): string {
  const o = recordPropertiesAt(buf, offset);
  const propLen = buf.readInt16BE(o - 2);
  return propLen > 0 ? buf.toString('utf8', o, o + propLen) : '';
}

/**
 * Where the PROPERTIES bytes of the record at `offset` begin (their length is the int16 before them), checked as
 * readRecordProperties checks them: throws RangeError on a malformed record.
 */
export function recordPropertiesAt(buf: Buffer, offset = 0): number {
  // Every read is in bounds (checked before it), so the bytes are read directly (this runs for every record a
  // filtered pull scans).
  if (offset < 0 || buf.length - offset < RECORD_OVERHEAD_V1_IPV4) throw new RangeError('record truncated');
  const limit = offset + int32At(buf, offset);
  if (limit > buf.length) throw new RangeError('record truncated');
  const magic = int32At(buf, offset + RecordPos.MAGIC_CODE) >>> 0;
  const sysFlag = int32At(buf, offset + RecordPos.SYS_FLAG);
  // BORNHOST, STORETIMESTAMP, STOREHOST, RECONSUMETIMES, PREPARED_TX_OFFSET, then BODYLEN.
  let o = storeHostPos(sysFlag) + storeHostLength(sysFlag) + 4 + 8 + offset;
  if (o + 4 > limit) throw new RangeError('record truncated');
  const bodyLen = int32At(buf, o);
  o += 4 + bodyLen;
  if (bodyLen < 0 || o + 3 > limit) throw new RangeError(`bad body length ${bodyLen}`);
  if (magic === MESSAGE_MAGIC_CODE_V2) {
    o += 2 + ((buf[o]! << 24) >> 16 | buf[o + 1]!);
  } else {
    o += 1 + ((buf[o]! << 24) >> 24);
  }
  if (o + 2 > limit) throw new RangeError('bad topic length');
  const propLen = (buf[o]! << 24) >> 16 | buf[o + 1]!;
  o += 2;
  if (propLen < 0 || o + propLen > limit) throw new RangeError(`bad properties length ${propLen}`);
  return o;
}


/**
 * Checks a whole record as recovery does (CommitLog.checkMessageAndReturnSize): magic, lengths adding up to
 * TOTALSIZE and, optionally, BODYCRC. Returns the decoded record or null.
 */
export function checkRecord(buf: Buffer, offset: number, checkCrc: boolean): DecodedRecord | null {
  let rec: DecodedRecord;
  try {
    rec = decodeRecord(buf, offset);
  } catch {
    return null;
  }
  if (checkCrc && bodyCrc32(rec.body) !== rec.bodyCrc) return null;
  return rec;
}

/** Whether a record of this sysFlag gets a consume-queue entry (tx PREPARED and ROLLBACK do not). */
export function isQueuedTransactionType(sysFlag: number): boolean {
  const t = sysFlag & SysFlag.TRANSACTION_TYPE_MASK;
  return t === SysFlag.TRANSACTION_NOT_TYPE || t === SysFlag.TRANSACTION_COMMIT_TYPE;
}

// Topic strings repeat; cache their UTF-8 bytes (bounded).
const topicBytesCache = new Map<string, Buffer>();
const TOPIC_CACHE_MAX = 65536;

/** UTF-8 bytes of a topic, cached. */
export function topicBytesOf(topic: string): Buffer {
  let b = topicBytesCache.get(topic);
  if (!b) {
    if (topicBytesCache.size >= TOPIC_CACHE_MAX) topicBytesCache.clear();
    b = Buffer.from(topic, 'utf8');
    topicBytesCache.set(topic, b);
  }
  return b;
}
