// The stored message record: commit-log bytes = wire bytes of pull/query/view bodies.
// Layout (big-endian; Java MessageExtEncoder / MessageDecoder):
//   TOTALSIZE 4 | MAGICCODE 4 | BODYCRC 4 | QUEUEID 4 | FLAG 4 | QUEUEOFFSET 8 | PHYSICALOFFSET 8 | SYSFLAG 4 |
//   BORNTIMESTAMP 8 | BORNHOST 8 (20 if sysFlag 0x10) | STORETIMESTAMP 8 | STOREHOST 8 (20 if sysFlag 0x20) |
//   RECONSUMETIMES 4 | PREPARED_TX_OFFSET 8 | BODYLEN 4 + BODY | TOPICLEN 1 (v1) / 2 (v2) + TOPIC |
//   PROPLEN 2 + PROPERTIES
import type { HostAddress, MessageToStore } from './types.js';
import { bodyCrc32 } from './crc32.js';

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

export function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_POW_32 + buf.readUInt32BE(pos + 4);
}

/** Writes a JS integer (|v| < 2^53) as a big-endian int64. */
export function writeInt64(buf: Buffer, pos: number, v: number): void {
  const hi = Math.floor(v / TWO_POW_32);
  buf.writeInt32BE(hi, pos);
  buf.writeUInt32BE(v - hi * TWO_POW_32, pos + 4);
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

/** Writes one record at `pos` of `target` (which must have totalSize bytes free). */
export function writeRecord(target: Buffer, pos: number, msg: MessageToStore, p: RecordPlacement): void {
  const v2 = p.topicBytes.length > MAX_V1_TOPIC_LENGTH;
  let o = pos;
  target.writeInt32BE(p.totalSize, o); o += 4;
  target.writeUInt32BE(v2 ? MESSAGE_MAGIC_CODE_V2 : MESSAGE_MAGIC_CODE_V1, o); o += 4;
  target.writeInt32BE(p.bodyCrc, o); o += 4;
  target.writeInt32BE(msg.queueId, o); o += 4;
  target.writeInt32BE(msg.flag | 0, o); o += 4;
  writeInt64(target, o, p.queueOffset); o += 8;
  writeInt64(target, o, p.commitLogOffset); o += 8;
  target.writeInt32BE(p.sysFlag, o); o += 4;
  writeInt64(target, o, msg.bornTimestamp); o += 8;
  o = writeHost(target, o, msg.bornHost);
  writeInt64(target, o, p.storeTimestamp); o += 8;
  o = writeHost(target, o, msg.storeHost);
  target.writeInt32BE(msg.reconsumeTimes | 0, o); o += 4;
  writeInt64(target, o, msg.preparedTransactionOffset); o += 8;
  target.writeInt32BE(msg.body.length, o); o += 4;
  o += msg.body.copy(target, o);
  if (v2) {
    target.writeInt16BE(p.topicBytes.length, o); o += 2;
  } else {
    target.writeInt8(p.topicBytes.length, o); o += 1;
  }
  o += p.topicBytes.copy(target, o);
  target.writeInt16BE(p.propertiesLength, o); o += 2;
  if (p.propertiesLength > 0) o += target.write(msg.propertiesString, o, p.propertiesLength, 'utf8');
  if (o - pos !== p.totalSize) throw new Error(`record size mismatch: wrote ${o - pos}, expected ${p.totalSize}`);
}

function writeHost(target: Buffer, o: number, host: HostAddress): number {
  o += host.ip.copy(target, o);
  target.writeInt32BE(host.port, o);
  return o + 4;
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
  const totalSize = encodeRecordSize(sysFlag, msg.body.length, topicBytes.length, propertiesLength);
  const buf = Buffer.allocUnsafe(totalSize);
  writeRecord(buf, 0, msg, {
    totalSize, sysFlag, bodyCrc: bodyCrc32(msg.body), queueOffset, commitLogOffset, storeTimestamp,
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
  if (buf.length - offset < RECORD_OVERHEAD_V1_IPV4) throw new RangeError('record truncated');
  const limit = offset + buf.readInt32BE(offset);
  if (limit > buf.length) throw new RangeError('record truncated');
  const magic = buf.readUInt32BE(offset + RecordPos.MAGIC_CODE);
  const sysFlag = buf.readInt32BE(offset + RecordPos.SYS_FLAG);
  // BORNHOST, STORETIMESTAMP, STOREHOST, RECONSUMETIMES, PREPARED_TX_OFFSET, then BODYLEN.
  let o = storeHostPos(sysFlag) + storeHostLength(sysFlag) + 4 + 8 + offset;
  const bodyLen = buf.readInt32BE(o);
  o += 4 + bodyLen;
  if (bodyLen < 0 || o + 3 > limit) throw new RangeError(`bad body length ${bodyLen}`);
  if (magic === MESSAGE_MAGIC_CODE_V2) {
    o += 2 + buf.readInt16BE(o);
  } else {
    o += 1 + buf.readInt8(o);
  }
  if (o + 2 > limit) throw new RangeError('bad topic length');
  const propLen = buf.readInt16BE(o);
  o += 2;
  if (propLen < 0 || o + propLen > limit) throw new RangeError(`bad properties length ${propLen}`);
  return propLen > 0 ? buf.toString('utf8', o, o + propLen) : '';
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
