import { languageNameFromOrdinal } from '../common/language-code.js';
import { FLAG_RESPONSE, type RemotingCommand } from './command.js';
import { decodeLetterHeader } from './letter-header.js';

/** A header that could not be decoded: the connection is closed (Java's decoder closes the channel). */
export class FrameError extends Error {}

const MAX_EXT_FIELDS = 1024;

/** Decodes a JSON header (serialize type 0). Values of extFields are coerced to strings (ali-ons sends raw JS values). */
export function decodeJsonHeader(header: Buffer): Omit<RemotingCommand, 'body'> {
  const text = header.toString('utf8');
  const letters = decodeLetterHeader(text);
  if (letters !== undefined) return letters;
  let obj: unknown;
  try {
    obj = JSON.parse(text);
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
  return Buffer.from(jsonHeaderText(cmd), 'utf8');
}

const JAVA_LANGUAGE_JSON = ',"language":"JAVA"';

/**
 * The header's JSON text: strict JSON, keys in fastjson's (alphabetical) order; ali-ons parses it with JSON.parse.
 * Written field by field rather than through an intermediate object; only the extFields map and the remark go
 * through JSON.stringify. The same text JSON.stringify gives for that object (see the codec tests).
 */
function jsonHeaderText(cmd: RemotingCommand): string {
  const { code, flag, opaque, version, language } = cmd;
  if (typeof code !== 'number' || typeof flag !== 'number' || typeof opaque !== 'number' || typeof version !== 'number' ||
    typeof language !== 'string') {
    return jsonHeaderTextSlow(cmd);
  }
  let t = `{"code":${jsonNumber(code)}`;
  if (cmd.extFields !== undefined) t += `,"extFields":${extFieldsJson(cmd.extFields)}`;
  t += `,"flag":${jsonNumber(flag)}`;
  t += language === 'JAVA' ? JAVA_LANGUAGE_JSON : `,"language":${JSON.stringify(language)}`;
  t += `,"opaque":${jsonNumber(opaque)}`;
  if (cmd.remark !== undefined && cmd.remark !== null) t += `,"remark":${JSON.stringify(cmd.remark)}`;
  return `${t},"serializeTypeCurrentRPC":"JSON","version":${jsonNumber(version)}}`;
}

/** A string JSON writes as it is between quotes: printable ASCII without `"` and `\\`. */
const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * JSON.stringify(extFields) for a map of plain strings (what answers carry: offsets, msgIds, names), without
 * JSON.stringify's per-character escaping pass over long values (a batch's msgIds are ~33 characters a message);
 * anything else goes through JSON.stringify.
 */
function extFieldsJson(ext: Record<string, string>): string {
  if (ext === null || typeof ext !== 'object' || Array.isArray(ext) || Object.getPrototypeOf(ext) !== Object.prototype) {
    return JSON.stringify(ext);
  }
  let t = '{';
  for (const k of Object.keys(ext)) {
    const v: unknown = ext[k];
    if (typeof v !== 'string' || !JSON_PLAIN.test(v) || !JSON_PLAIN.test(k)) return JSON.stringify(ext);
    t += t.length === 1 ? `"${k}":"${v}"` : `,"${k}":"${v}"`;
  }
  return `${t}}`;
}

function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** Any header the fast path does not take (a field of an unexpected type): through an object, as JSON.stringify writes it. */
function jsonHeaderTextSlow(cmd: RemotingCommand): string {
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
  return JSON.stringify(o);
}

/**
 * Encodes a whole frame: [length][serType<<24 | headerLen][header][body]. The length fields and the header share
 * one buffer (one allocation, one iovec); body buffers follow as they are.
 */
export function encodeFrame(cmd: RemotingCommand): Buffer[] {
  let bodyLen = cmd.body ? cmd.body.length : 0;
  if (cmd.bodyParts) for (const part of cmd.bodyParts) bodyLen += part.length;
  const head = plainFrameHead(cmd, bodyLen) ?? frameHead(jsonHeaderText(cmd), bodyLen);
  const parts: Buffer[] = [head];
  if (cmd.body && cmd.body.length > 0) parts.push(cmd.body);
  if (cmd.bodyParts) for (const part of cmd.bodyParts) parts.push(part);
  return parts;
}

/** The length fields and the header text in one buffer. */
function frameHead(text: string, bodyLen: number): Buffer {
  const headerLength = Buffer.byteLength(text, 'utf8');
  const head = Buffer.allocUnsafe(8 + headerLength);
  head.writeInt32BE(4 + headerLength + bodyLen, 0);
  head.writeInt32BE(headerLength & 0xffffff, 4);
  head.write(text, 8, headerLength, 'utf8');
  return head;
}

/**
 * frameHead(jsonHeaderText(cmd)) for what nearly every answer is: a Java-language header without a remark whose
 * extFields are plain strings (printable ASCII without quote or backslash, so one byte a character and nothing to
 * escape). The bytes are written straight into the frame's buffer: building the text first and measuring and
 * encoding it took ~2 µs an answer, most of it in joining the pieces and in testing each value with a regexp.
 * Undefined for anything else (the caller takes the text path); same bytes either way (see the codec tests).
 */
function plainFrameHead(cmd: RemotingCommand, bodyLen: number): Buffer | undefined {
  const { code, flag, opaque, version, language, extFields, remark } = cmd;
  if (
    typeof code !== 'number' || typeof flag !== 'number' || typeof opaque !== 'number' || typeof version !== 'number' ||
    language !== 'JAVA' || (remark !== undefined && remark !== null)
  ) return undefined;
  const codeText = jsonNumber(code);
  const flagText = jsonNumber(flag);
  const opaqueText = jsonNumber(opaque);
  const versionText = jsonNumber(version);
  let length = PLAIN_FIXED_BYTES + codeText.length + flagText.length + opaqueText.length + versionText.length;
  let keys: string[] | undefined;
  if (extFields !== undefined) {
    if (extFields === null || typeof extFields !== 'object' || Object.getPrototypeOf(extFields) !== Object.prototype) {
      return undefined;
    }
    keys = Object.keys(extFields);
    // ,"extFields":{ and } plus "k":"v" and a comma between entries
    length += PLAIN_EXT_OPEN.length + 1 + (keys.length > 0 ? keys.length - 1 : 0);
    for (const k of keys) {
      const v: unknown = extFields[k];
      if (typeof v !== 'string') return undefined;
      length += k.length + v.length + 5;
    }
  }
  const head = Buffer.allocUnsafe(8 + length);
  head.writeInt32BE(4 + length + bodyLen, 0);
  head.writeInt32BE(length & 0xffffff, 4);
  let p = putAscii(head, 8, PLAIN_CODE);
  p = putAscii(head, p, codeText);
  if (keys !== undefined) {
    p = putAscii(head, p, PLAIN_EXT_OPEN);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (i > 0) head[p++] = 0x2c;
      head[p++] = 0x22;
      p = putPlain(head, p, k);
      if (p < 0) return undefined;
      p = putAscii(head, p, '":"');
      p = putPlain(head, p, extFields![k]!);
      if (p < 0) return undefined;
      head[p++] = 0x22;
    }
    head[p++] = 0x7d;
  }
  p = putAscii(head, p, PLAIN_FLAG);
  p = putAscii(head, p, flagText);
  p = putAscii(head, p, PLAIN_LANGUAGE_OPAQUE);
  p = putAscii(head, p, opaqueText);
  p = putAscii(head, p, PLAIN_VERSION);
  p = putAscii(head, p, versionText);
  head[p++] = 0x7d;
  return head;
}

// plainFrameHead's text around the four numbers and the extFields, in fastjson's key order.
const PLAIN_CODE = '{"code":';
const PLAIN_EXT_OPEN = ',"extFields":{';
const PLAIN_FLAG = ',"flag":';
const PLAIN_LANGUAGE_OPAQUE = ',"language":"JAVA","opaque":';
const PLAIN_VERSION = ',"serializeTypeCurrentRPC":"JSON","version":';
/** Its bytes other than the numbers and the extFields (the closing brace included). */
const PLAIN_FIXED_BYTES =
  PLAIN_CODE.length + PLAIN_FLAG.length + PLAIN_LANGUAGE_OPAQUE.length + PLAIN_VERSION.length + 1;

/** Writes an ASCII string at `p`; returns the position after it. */
function putAscii(buf: Buffer, p: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
  return p;
}

/** From this length a plain string is tested with JSON_PLAIN and copied natively (a batch's msgIds: ~530 characters). */
const PLAIN_NATIVE_MIN_CHARS = 48;

/** As putAscii for a string JSON writes as it is between quotes (see JSON_PLAIN); -1 at any other character. */
function putPlain(buf: Buffer, p: number, s: string): number {
  if (s.length >= PLAIN_NATIVE_MIN_CHARS) {
    if (!JSON_PLAIN.test(s)) return -1;
    return p + buf.write(s, p, s.length, 'latin1');
  }
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
    buf[p++] = c;
  }
  return p;
}

export function isResponseFlag(flag: number): boolean {
  return (flag & FLAG_RESPONSE) !== 0;
}
