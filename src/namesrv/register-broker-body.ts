import zlib from 'node:zlib';
import { fastjsonEntries, parseFastjson } from '../common/fastjson.js';
import { PermName, type DataVersion, type QueueData, type TopicConfigInfo } from './route-types.js';

/** A request body we could not decode; the processor answers SYSTEM_ERROR with this message. */
export class BodyDecodeError extends Error {}

/** Inflated size cap for compressed registrations (a zip bomb must not take the nameserver down). */
export const MAX_INFLATED_REGISTER_BODY_BYTES = 64 * 1024 * 1024;
/** Topic configs per registration; Java has no cap, brokers with ~100k topics exist. */
export const MAX_TOPICS_PER_REGISTRATION = 1_000_000;

/** Defaults of a TopicConfig field the body leaves out (Java: TopicConfig field initialisers). */
const TOPIC_CONFIG_DEFAULT_QUEUE_NUMS = 16;
const TOPIC_CONFIG_DEFAULT_PERM = PermName.PERM_READ | PermName.PERM_WRITE;

export interface RegisterBrokerBody {
  dataVersion: DataVersion;
  topicConfigs: TopicConfigInfo[];
  filterServerList: string[];
}

/** Java: the body of a registration without one — counter 0, timestamp 0, no topics. */
export function emptyRegisterBrokerBody(): RegisterBrokerBody {
  return { dataVersion: { stateVersion: 0, timestamp: 0, counter: 0 }, topicConfigs: [], filterServerList: [] };
}

// ---- lenient field coercion (fastjson: numbers as strings, strings as numbers) ----

export function asObject(v: unknown, what: string): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new BodyDecodeError(`${what} is not an object`);
  return v;
}

function field(o: unknown, name: string): unknown {
  if (o instanceof Map) return o.get(name);
  return (o as Record<string, unknown>)[name];
}

export function toLong(v: unknown, what: string, dflt?: number): number {
  if (v === undefined || v === null) {
    if (dflt !== undefined) return dflt;
    throw new BodyDecodeError(`${what} is missing`);
  }
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  // Beyond 2^53 precision is lost; these are counters and millisecond timestamps.
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) return Number(v);
  if (typeof v === 'boolean' && dflt !== undefined) return v ? 1 : 0;
  throw new BodyDecodeError(`${what} is not an integer: ${String(v).slice(0, 32)}`);
}

export function decodeDataVersion(v: unknown): DataVersion {
  const o = asObject(v, 'dataVersion');
  return {
    stateVersion: toLong(field(o, 'stateVersion'), 'dataVersion.stateVersion', 0),
    timestamp: toLong(field(o, 'timestamp'), 'dataVersion.timestamp', 0),
    counter: toLong(field(o, 'counter'), 'dataVersion.counter', 0),
  };
}

/** DataVersion body of QUERY_DATA_VERSION. */
export function parseDataVersionBody(body: Buffer | undefined): DataVersion {
  if (!body || body.length === 0) throw new BodyDecodeError('DataVersion body is missing');
  return decodeDataVersion(parseJson(body, 'DataVersion'));
}

/**
 * Standard JSON (what Java brokers send: fastjson's default output for these bodies) goes through JSON.parse, ~50x
 * faster on a registration of a thousand topics; anything it refuses (unquoted or numeric keys, single quotes, …)
 * through the lenient parser. The decoders below read only numbers they turn into JS numbers anyway, so JSON.parse
 * rounding an integer beyond 2^53 gives the value the lenient parser's bigint would become.
 */
function parseJson(body: Buffer, what: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    // not standard JSON: the lenient parser decides
  }
  try {
    return parseFastjson(body);
  } catch (err) {
    throw new BodyDecodeError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

function decodeTopicConfig(key: unknown, v: unknown): TopicConfigInfo {
  const o = asObject(v, `topicConfigTable[${String(key)}]`);
  const nameField = field(o, 'topicName');
  // Java keys the route by TopicConfig.topicName, not by the map key.
  const topicName = typeof nameField === 'string' && nameField !== '' ? nameField : String(key);
  return {
    topicName,
    readQueueNums: toLong(field(o, 'readQueueNums'), `${topicName}.readQueueNums`, TOPIC_CONFIG_DEFAULT_QUEUE_NUMS),
    writeQueueNums: toLong(field(o, 'writeQueueNums'), `${topicName}.writeQueueNums`, TOPIC_CONFIG_DEFAULT_QUEUE_NUMS),
    perm: toLong(field(o, 'perm'), `${topicName}.perm`, TOPIC_CONFIG_DEFAULT_PERM),
    topicSysFlag: toLong(field(o, 'topicSysFlag'), `${topicName}.topicSysFlag`, 0),
  };
}

function decodeStringList(v: unknown, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new BodyDecodeError(`${what} is not an array`);
  return v.filter((x): x is string => typeof x === 'string');
}

/** TopicConfigSerializeWrapper `{"dataVersion":{…},"topicConfigTable":{name:TopicConfig}}` (+5.x mapping fields, ignored). */
function decodeWrapper(w: unknown): Pick<RegisterBrokerBody, 'dataVersion' | 'topicConfigs'> {
  if (w === undefined || w === null) return { dataVersion: emptyRegisterBrokerBody().dataVersion, topicConfigs: [] };
  const o = asObject(w, 'topicConfigSerializeWrapper');
  const dv = field(o, 'dataVersion');
  const dataVersion = dv === undefined || dv === null ? emptyRegisterBrokerBody().dataVersion : decodeDataVersion(dv);
  const table = field(o, 'topicConfigTable');
  const topicConfigs: TopicConfigInfo[] = [];
  if (table !== undefined && table !== null) {
    asObject(table, 'topicConfigTable');
    for (const [k, v] of fastjsonEntries(table)) topicConfigs.push(decodeTopicConfig(k, v));
  }
  return { dataVersion, topicConfigs };
}

/** Compressed bodies are a zlib stream; JSON bodies start with `{` (perhaps after whitespace). */
function looksCompressed(body: Buffer): boolean {
  return body.length >= 2 && body[0] === 0x78 && (body[0] * 256 + body[1]) % 31 === 0;
}

/**
 * RegisterBrokerBody (Java: protocol/body/RegisterBrokerBody.java). JSON form, or — when `compressed` is set or
 * the bytes carry a zlib header (Java 5.x sends `compressed=false` even for compressed bodies) — the deflate form.
 * A body holding a bare TopicConfigSerializeWrapper (brokers before V3_0_11) is accepted too.
 */
export function decodeRegisterBrokerBody(body: Buffer | undefined, compressed: boolean): RegisterBrokerBody {
  if (!body || body.length === 0) return emptyRegisterBrokerBody();
  if (compressed || looksCompressed(body)) return decodeCompressed(body);
  const root = asObject(parseJson(body, 'RegisterBrokerBody'), 'RegisterBrokerBody');
  const wrapper = field(root, 'topicConfigSerializeWrapper');
  const legacy = wrapper === undefined && field(root, 'topicConfigTable') !== undefined;
  const decoded = decodeWrapper(legacy ? root : wrapper);
  return { ...decoded, filterServerList: decodeStringList(field(root, 'filterServerList'), 'filterServerList') };
}

/**
 * Deflate form: int32 len + DataVersion JSON, int32 topic count, then per topic int32 len + TopicConfig text
 * (`name read write perm filterType [attributesJson]`, space-separated), int32 len + filter-server JSON array,
 * then (5.x) mapping infos, which we ignore.
 */
function decodeCompressed(body: Buffer): RegisterBrokerBody {
  let raw: Buffer;
  try {
    raw = zlib.inflateSync(body, { maxOutputLength: MAX_INFLATED_REGISTER_BODY_BYTES });
  } catch (err) {
    throw new BodyDecodeError(`compressed RegisterBrokerBody does not inflate: ${(err as Error).message}`);
  }
  let pos = 0;
  const readChunk = (what: string): Buffer => {
    if (pos + 4 > raw.length) throw new BodyDecodeError(`compressed RegisterBrokerBody truncated at ${what}`);
    const len = raw.readInt32BE(pos);
    pos += 4;
    if (len < 0 || pos + len > raw.length) throw new BodyDecodeError(`compressed RegisterBrokerBody: bad length for ${what}`);
    const chunk = raw.subarray(pos, pos + len);
    pos += len;
    return chunk;
  };
  const dataVersion = decodeDataVersion(parseJson(readChunk('dataVersion'), 'DataVersion'));
  if (pos + 4 > raw.length) throw new BodyDecodeError('compressed RegisterBrokerBody truncated at topic count');
  const count = raw.readInt32BE(pos);
  pos += 4;
  if (count < 0 || count > MAX_TOPICS_PER_REGISTRATION) throw new BodyDecodeError(`compressed RegisterBrokerBody: bad topic count ${count}`);
  const topicConfigs: TopicConfigInfo[] = [];
  for (let i = 0; i < count; i++) {
    const parts = readChunk('topic config').toString('utf8').split(' ');
    // Java TopicConfig.decode ignores entries with fewer than 5 fields; topicSysFlag is not carried.
    if (parts.length < 5) continue;
    topicConfigs.push({
      topicName: parts[0],
      readQueueNums: toLong(parts[1], `${parts[0]}.readQueueNums`),
      writeQueueNums: toLong(parts[2], `${parts[0]}.writeQueueNums`),
      perm: toLong(parts[3], `${parts[0]}.perm`),
      topicSysFlag: 0,
    });
  }
  let filterServerList: string[] = [];
  if (pos < raw.length) {
    try {
      filterServerList = decodeStringList(parseFastjson(readChunk('filterServerList')), 'filterServerList');
    } catch {
      filterServerList = []; // Java logs and carries on with an empty list
    }
  }
  return { dataVersion, topicConfigs, filterServerList };
}

/** Body of REGISTER_TOPIC_IN_NAMESRV: a TopicRouteData whose queueDatas are taken. */
export function decodeQueueDatas(body: Buffer | undefined): QueueData[] {
  if (!body || body.length === 0) return [];
  const root = asObject(parseJson(body, 'TopicRouteData'), 'TopicRouteData');
  const list = field(root, 'queueDatas');
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new BodyDecodeError('queueDatas is not an array');
  return list.map((q, i) => {
    const o = asObject(q, `queueDatas[${i}]`);
    const brokerName = field(o, 'brokerName');
    if (typeof brokerName !== 'string') throw new BodyDecodeError(`queueDatas[${i}].brokerName is missing`);
    return {
      brokerName,
      readQueueNums: toLong(field(o, 'readQueueNums'), 'readQueueNums', 0),
      writeQueueNums: toLong(field(o, 'writeQueueNums'), 'writeQueueNums', 0),
      perm: toLong(field(o, 'perm'), 'perm', 0),
      topicSysFlag: toLong(field(o, 'topicSysFlag'), 'topicSysFlag', 0),
    };
  });
}
