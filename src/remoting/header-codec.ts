import { languageNameFromOrdinal } from '../common/language-code.js';
import { FLAG_RESPONSE, type RemotingCommand } from './command.js';

/** A header that could not be decoded: the connection is closed (Java's decoder closes the channel). */
export class FrameError extends Error {}

const MAX_EXT_FIELDS = 1024;

/** Decodes a JSON header (serialize type 0). Values of extFields are coerced to strings (ali-ons sends raw JS values). */
export function decodeJsonHeader(header: Buffer): Omit<RemotingCommand, 'body'> {
  let obj: unknown;
  try {
    obj = JSON.parse(header.toString('utf8'));
  } catch {
    throw new FrameError('header is not valid JSON');
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new FrameError('header is not a JSON object');
  const o = obj as Record<string, unknown>;
  const code = toInt(o.code, 'code');
  const ext = o.extFields;
  let extFields: Record<string, string>;
  if (ext === undefined || ext === null) {
    extFields = {};
  } else {
    if (typeof ext !== 'object' || Array.isArray(ext)) throw new FrameError('extFields is not an object');
    extFields = stringFields(ext as Record<string, unknown>);
  }
  let language = 'JAVA';
  if (typeof o.language === 'string') language = o.language;
  else if (typeof o.language === 'number') language = languageNameFromOrdinal(o.language);
  return {
    code,
    language,
    version: o.version === undefined ? 0 : toInt(o.version, 'version'),
    opaque: o.opaque === undefined ? 0 : toInt(o.opaque, 'opaque'),
    flag: o.flag === undefined ? 0 : toInt(o.flag, 'flag'),
    remark: typeof o.remark === 'string' ? o.remark : undefined,
    extFields,
  };
}

/**
 * extFields with string values only. Java peers send strings, so the parsed object is used as it is (no copy on
 * the hot path); a value of another type (ali-ons sends raw JS values) makes a coerced copy, nulls dropped.
 */
function stringFields(ext: Record<string, unknown>): Record<string, string> {
  let count = 0;
  let allStrings = true;
  for (const k in ext) {
    if (++count > MAX_EXT_FIELDS) throw new FrameError('too many extFields');
    if (typeof ext[k] !== 'string') allStrings = false;
  }
  if (allStrings) return ext as Record<string, string>;
  const out: Record<string, string> = {};
  for (const k in ext) {
    const v = ext[k];
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

function toInt(v: unknown, name: string): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new FrameError(`header field ${name} is not an integer`);
  return n;
}

/** Decodes a ROCKETMQ binary header (serialize type 1). Java: RocketMQSerializable.rocketMQProtocolDecode. */
export function decodeBinaryHeader(h: Buffer): Omit<RemotingCommand, 'body'> {
  if (h.length < 21) throw new FrameError('binary header shorter than 21 bytes');
  const code = h.readInt16BE(0);
  const language = languageNameFromOrdinal(h.readUInt8(2));
  const version = h.readInt16BE(3);
  const opaque = h.readInt32BE(5);
  const flag = h.readInt32BE(9);
  let pos = 13;
  const remarkLen = h.readInt32BE(pos);
  pos += 4;
  if (remarkLen < 0 || pos + remarkLen + 4 > h.length) throw new FrameError('binary header remark length out of range');
  const remark = remarkLen > 0 ? h.toString('utf8', pos, pos + remarkLen) : undefined;
  pos += remarkLen;
  const extLen = h.readInt32BE(pos);
  pos += 4;
  if (extLen < 0 || pos + extLen > h.length) throw new FrameError('binary header extFields length out of range');
  const end = pos + extLen;
  const extFields: Record<string, string> = {};
  let count = 0;
  while (pos < end) {
    if (++count > MAX_EXT_FIELDS) throw new FrameError('too many extFields');
    if (pos + 2 > end) throw new FrameError('truncated extFields key length');
    const kLen = h.readInt16BE(pos);
    pos += 2;
    if (kLen < 0 || pos + kLen + 4 > end) throw new FrameError('extFields key length out of range');
    const key = h.toString('utf8', pos, pos + kLen);
    pos += kLen;
    const vLen = h.readInt32BE(pos);
    pos += 4;
    if (vLen < 0 || pos + vLen > end) throw new FrameError('extFields value length out of range');
    const value = h.toString('utf8', pos, pos + vLen);
    pos += vLen;
    // Java 4.9.4+ reads zero-length strings as null; keep empty values, they are harmless for us.
    if (kLen > 0) extFields[key] = value;
  }
  return { code, language, version, opaque, flag, remark, extFields };
}

/** Encodes a command header as JSON (we always answer JSON: ali-ons reads JSON only). */
export function encodeJsonHeader(cmd: RemotingCommand): Buffer {
  // Strict JSON, key order like fastjson (alphabetical); ali-ons parses it with JSON.parse.
  const o: Record<string, unknown> = {
    code: cmd.code,
    extFields: cmd.extFields,
    flag: cmd.flag,
    language: cmd.language,
    opaque: cmd.opaque,
  };
  if (cmd.remark !== undefined && cmd.remark !== null) o.remark = cmd.remark;
  o.serializeTypeCurrentRPC = 'JSON';
  o.version = cmd.version;
  return Buffer.from(JSON.stringify(o), 'utf8');
}

/** Encodes a whole frame: [length][serType<<24 | headerLen][header][body]. */
export function encodeFrame(cmd: RemotingCommand): Buffer[] {
  const header = encodeJsonHeader(cmd);
  let bodyLen = cmd.body ? cmd.body.length : 0;
  if (cmd.bodyParts) for (const part of cmd.bodyParts) bodyLen += part.length;
  const prefix = Buffer.allocUnsafe(8);
  prefix.writeInt32BE(4 + header.length + bodyLen, 0);
  prefix.writeInt32BE(header.length & 0xffffff, 4);
  const parts = [prefix, header];
  if (cmd.body && cmd.body.length > 0) parts.push(cmd.body);
  if (cmd.bodyParts) for (const part of cmd.bodyParts) parts.push(part);
  return parts;
}

export function isResponseFlag(flag: number): boolean {
  return (flag & FLAG_RESPONSE) !== 0;
}
