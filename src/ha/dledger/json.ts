// Reading and writing the fastjson 1 bodies of DLedger RPC (protocol/dledger.md §1.3): keys sorted, nulls omitted,
// byte[] as padded base64, enums by name, longs as bare numbers. Reading is lenient like fastjson's parseObject:
// unknown keys are ignored, missing keys keep the Java class defaults, numeric strings are numbers, and an unknown
// enum name becomes null.
import { FastjsonSyntaxError, parseFastjson, stringifyFastjson } from '../../common/fastjson.js';
import { javaStringHashCode } from '../../common/java-hash.js';
import type { DLedgerEntry } from './types.js';

/** A body that does not parse as the expected class: the peer server answers SYSTEM_ERROR, like fastjson's throw. */
export class DLedgerBodyError extends Error {}

export type JsonObject = Record<string, unknown>;

/** Parses a request/response body into an object; throws DLedgerBodyError for anything else (null, [], junk). */
export function parseBody(body: Buffer | undefined): JsonObject {
  if (!body || body.length === 0) throw new DLedgerBodyError('empty body');
  const text = body.toString('utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // Java peers write standard JSON; fastjson's reader also takes single quotes, bare keys, extra commas.
    try {
      v = parseFastjson(text, { bigIntegers: 'string' });
    } catch (err) {
      const at = err instanceof FastjsonSyntaxError ? err.message : String(err);
      throw new DLedgerBodyError(`body is not JSON: ${at}`);
    }
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Map) {
    throw new DLedgerBodyError('body is not a JSON object');
  }
  return v as JsonObject;
}

/** A Java long/int field: absent or null → dflt; numbers and numeric strings accepted (fastjson casts them). */
export function readLong(o: JsonObject, key: string, dflt: number): number {
  const v = o[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^\s*-?\d+(\.\d*)?\s*$/.test(v)) return Math.trunc(Number(v));
  if (typeof v === 'string' && v.trim() === '') return dflt;
  throw new DLedgerBodyError(`field ${key} is not a number: ${JSON.stringify(v).slice(0, 40)}`);
}

/** A Java Long (nullable) field. */
export function readOptLong(o: JsonObject, key: string): number | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  return readLong(o, key, 0);
}

/** A Java String field: absent or null → null; numbers and booleans become their text (fastjson does so too). */
export function readString(o: JsonObject, key: string): string | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  throw new DLedgerBodyError(`field ${key} is not a string`);
}

/** A Java boolean field. */
export function readBool(o: JsonObject, key: string, dflt: boolean): boolean {
  const v = o[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 1) return true;
  if (v === 'false' || v === 0) return false;
  throw new DLedgerBodyError(`field ${key} is not a boolean`);
}

/** An enum field by name: an unknown name becomes null (fastjson), a non-string is refused. */
export function readEnum<T extends string>(o: JsonObject, key: string, names: readonly T[], dflt: T | null): T | null {
  const v = o[key];
  if (v === undefined) return dflt;
  if (v === null) return null;
  if (typeof v === 'string') return (names as readonly string[]).includes(v) ? (v as T) : null;
  if (typeof v === 'number' && Number.isInteger(v)) return names[v] ?? null; // fastjson also takes an ordinal
  throw new DLedgerBodyError(`field ${key} is not an enum name`);
}

/** A byte[] field (base64 text). */
export function readBytes(o: JsonObject, key: string): Buffer | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new DLedgerBodyError(`field ${key} is not base64 text`);
  return Buffer.from(v, 'base64');
}

function readObject(v: unknown, what: string): JsonObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Map) {
    throw new DLedgerBodyError(`${what} is not an object`);
  }
  return v as JsonObject;
}

/** D/entry/DLedgerEntry from its JSON; every int/long field defaults to 0 as in the Java class. */
export function readEntry(v: unknown): DLedgerEntry {
  const o = readObject(v, 'entry');
  return {
    magic: readLong(o, 'magic', 0),
    size: readLong(o, 'size', 0),
    index: readLong(o, 'index', 0),
    term: readLong(o, 'term', 0),
    pos: readLong(o, 'pos', 0),
    channel: readLong(o, 'channel', 0),
    chainCrc: readLong(o, 'chainCrc', 0),
    bodyCrc: readLong(o, 'bodyCrc', 0),
    body: readBytes(o, 'body') ?? Buffer.alloc(0),
  };
}

/** A nullable DLedgerEntry field. */
export function readOptEntry(o: JsonObject, key: string): DLedgerEntry | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  return readEntry(v);
}

/** A List<DLedgerEntry> field; absent or null → []. */
export function readEntryList(o: JsonObject, key: string): DLedgerEntry[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new DLedgerBodyError(`field ${key} is not a list`);
  return v.map((e) => readEntry(e));
}

/** A List<Long> field (nullable). */
export function readLongList(o: JsonObject, key: string): number[] | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) throw new DLedgerBodyError(`field ${key} is not a list`);
  return v.map((_, i) => readLong(v as unknown as JsonObject, String(i), 0));
}

/** A Map<String,String> field in document order (nullable). */
export function readStringMap(o: JsonObject, key: string): Map<string, string> | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  const m = readObject(v, key);
  const out = new Map<string, string>();
  for (const k of Object.keys(m)) {
    const s = readString(m, k);
    if (s !== null) out.set(k, s);
  }
  return out;
}

/** The JSON of a DLedgerEntry as a plain object for the writer (keys sorted there; body as base64). */
export function entryJson(e: DLedgerEntry): JsonObject {
  return {
    body: e.body,
    bodyCrc: e.bodyCrc,
    chainCrc: e.chainCrc,
    channel: e.channel,
    index: e.index,
    magic: e.magic,
    pos: e.pos,
    size: e.size,
    term: e.term,
  };
}

/** Writes an object the way fastjson writes a bean: keys sorted, nulls omitted, byte[] as base64, UTF-8. */
export function writeBody(o: JsonObject): Buffer {
  return Buffer.from(stringifyFastjson(o), 'utf8');
}

/**
 * The iteration order of a java.util.HashMap filled with `keys` in this order (default capacity 16, load factor
 * 0.75, resized by doubling; a bucket keeps insertion order). fastjson writes a Map in its iteration order, and
 * the official MetadataResponse's peers map is a HashMap (D/MemberState.peerMap).
 */
export function javaHashMapOrder(keys: readonly string[]): string[] {
  let capacity = 16;
  while (keys.length > capacity * 0.75) capacity *= 2;
  const bucketOf = (k: string): number => {
    const h = javaStringHashCode(k);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return keys
    .map((k, i) => ({ k, i, b: bucketOf(k) }))
    .sort((x, y) => x.b - y.b || x.i - y.i)
    .map((x) => x.k);
}
