/**
 * fastjson 1.2.x compatibility: a lenient parser for bodies Java peers produce, and a serializer for the
 * non-standard forms the broker must emit (remoting-protocol.md §5).
 *
 * Parsing — `parseFastjson(text)` accepts standard JSON plus what fastjson's default parser features allow
 * and fastjson's default writer produces:
 *   - unquoted keys (`{name:"a"}`), bare numeric keys (`{0:"a"}`), single-quoted strings and keys,
 *   - object or array keys (`{{"brokerName":"b","queueId":0,"topic":"T"}:{...}}`),
 *   - extra commas (`[1,,2]`, `{"a":1,}`: AllowArbitraryCommas), a leading BOM, `\x41`, `\'`, `\v` escapes.
 * Result representation:
 *   - objects whose keys are all strings or numbers become plain objects; a bare numeric key becomes its
 *     string form (`{0:"a"}` → `{ "0": "a" }`, exactly what `JSON.parse('{"0":"a"}')` gives);
 *   - an object with at least one object/array key becomes a `Map` whose keys keep their parsed form
 *     (objects for object keys, numbers for bare numeric keys, strings otherwise); iterate either form
 *     with `fastjsonEntries`;
 *   - integers outside ±(2^53−1) become `bigint` (or a decimal string with `{ bigIntegers: 'string' }`),
 *     so Java longs are never rounded; every other number is a JS number (decimals as doubles).
 *
 * Serialising — `stringifyFastjson(value)` writes compact JSON the way fastjson does:
 *   - plain-object keys in Java `String.compareTo` order (fastjson sorts bean fields; `sortKeys: false` keeps
 *     insertion order), null/undefined properties and map values omitted;
 *   - `Map` entries in insertion order; string keys quoted, number/bigint/boolean keys bare (`{0:"a"}`), and
 *     object keys written in place with their fields sorted (`{{"brokerName":"b","queueId":0,"topic":"T"}:1}`);
 *   - `bigint` as digits, `JavaDouble` with a trailing `.0` for integral values (Java's `0.0`),
 *     `Date` as epoch millis, `Buffer`/`Uint8Array` as base64 (fastjson's byte[] form), `Set` as an array;
 *   - `browserCompatible: true` mirrors SerializerFeature.BrowserCompatible: non-ASCII escaped as `\uXXXX`
 *     and integers beyond ±2^53 quoted (what the Java namesrv uses for route data).
 * Not on any hot path: used for admin/route bodies only.
 */

export class FastjsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
  }
}

export interface FastjsonParseOptions {
  /** How integers beyond Number.MAX_SAFE_INTEGER are returned. Default 'bigint'. */
  bigIntegers?: 'bigint' | 'string';
  /** Nesting limit, so a hostile body cannot exhaust the stack. Default 512. */
  maxDepth?: number;
}

export const FASTJSON_DEFAULT_MAX_DEPTH = 512;

/** Parses a fastjson-produced text (or UTF-8 buffer). Throws FastjsonSyntaxError on malformed input. */
export function parseFastjson(input: string | Uint8Array, options: FastjsonParseOptions = {}): unknown {
  let text = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const p = new Parser(text, options.bigIntegers ?? 'bigint', options.maxDepth ?? FASTJSON_DEFAULT_MAX_DEPTH);
  p.skipWs();
  const v = p.value(0);
  p.skipWs();
  if (p.pos < text.length) throw new FastjsonSyntaxError('unexpected trailing characters', p.pos);
  return v;
}

/** Entries of a parsed object in document order, whichever representation it got. Non-objects → []. */
export function fastjsonEntries(v: unknown): Array<[unknown, unknown]> {
  if (v instanceof Map) return [...v.entries()];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return Object.entries(v as Record<string, unknown>);
  return [];
}

const NUMBER_RE = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const INTEGER_RE = /^-?\d+$/;

type Key = { kind: 'string'; v: string } | { kind: 'number'; v: number | bigint | string; raw: string } | { kind: 'object'; v: unknown };

class Parser {
  pos = 0;
  constructor(
    readonly s: string,
    private readonly bigMode: 'bigint' | 'string',
    private readonly maxDepth: number,
  ) {}

  fail(msg: string): never {
    throw new FastjsonSyntaxError(msg, this.pos);
  }

  skipWs(): void {
    const s = this.s;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      // fastjson also treats \f and \b as whitespace
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x08) this.pos++;
      else break;
    }
  }

  value(depth: number): unknown {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`);
    const s = this.s;
    if (this.pos >= s.length) this.fail('unexpected end of input');
    const c = s[this.pos];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
      case "'":
        return this.string();
      default: {
        if (c === '-' || (c >= '0' && c <= '9')) return this.number();
        if (s.startsWith('true', this.pos)) return this.literal(4, true);
        if (s.startsWith('false', this.pos)) return this.literal(5, false);
        if (s.startsWith('null', this.pos)) return this.literal(4, null);
        return this.fail(`unexpected character ${JSON.stringify(c)}`);
      }
    }
  }

  private literal<T>(len: number, v: T): T {
    this.pos += len;
    return v;
  }

  private number(): number | bigint | string {
    const s = this.s;
    const start = this.pos;
    if (s[this.pos] === '-') this.pos++;
    while (this.pos < s.length && /[0-9.eE+-]/.test(s[this.pos])) this.pos++;
    const raw = s.slice(start, this.pos);
    if (!NUMBER_RE.test(raw)) {
      this.pos = start;
      this.fail(`malformed number ${JSON.stringify(raw.slice(0, 32))}`);
    }
    return this.numberValue(raw);
  }

  private numberValue(raw: string): number | bigint | string {
    if (INTEGER_RE.test(raw)) {
      const n = Number(raw);
      if (Number.isSafeInteger(n)) return n;
      return this.bigMode === 'bigint' ? BigInt(raw) : raw;
    }
    return Number(raw);
  }

  string(): string {
    const s = this.s;
    const quote = s[this.pos];
    this.pos++;
    let out = '';
    let chunkStart = this.pos;
    for (;;) {
      if (this.pos >= s.length) this.fail('unterminated string');
      const c = s[this.pos];
      if (c === quote) {
        out += s.slice(chunkStart, this.pos);
        this.pos++;
        return out;
      }
      if (c !== '\\') {
        this.pos++;
        continue;
      }
      out += s.slice(chunkStart, this.pos);
      this.pos++;
      const e = s[this.pos];
      this.pos++;
      switch (e) {
        case '"':
        case "'":
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
        case 'F':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case '0':
          out += '\0';
          break;
        case 'x':
          out += String.fromCharCode(this.hex(2));
          break;
        case 'u':
          out += String.fromCharCode(this.hex(4));
          break;
        default:
          this.pos--;
          this.fail(`invalid escape \\${e ?? ''}`);
      }
      chunkStart = this.pos;
    }
  }

  private hex(len: number): number {
    const h = this.s.slice(this.pos, this.pos + len);
    if (h.length !== len || !/^[0-9a-fA-F]+$/.test(h)) this.fail('invalid hex escape');
    this.pos += len;
    return parseInt(h, 16);
  }

  private array(depth: number): unknown[] {
    const s = this.s;
    this.pos++; // [
    const out: unknown[] = [];
    for (;;) {
      this.skipWs();
      if (this.pos >= s.length) this.fail('unterminated array');
      const c = s[this.pos];
      if (c === ']') {
        this.pos++;
        return out;
      }
      if (c === ',') {
        // AllowArbitraryCommas: `[1,,2]` and `[1,]`
        this.pos++;
        continue;
      }
      out.push(this.value(depth + 1));
      this.skipWs();
      const d = s[this.pos];
      if (d === ',') this.pos++;
      else if (d === undefined) this.fail('unterminated array');
      else if (d !== ']') this.fail('expected , or ] in array');
    }
  }

  private key(depth: number): Key {
    const s = this.s;
    const c = s[this.pos];
    if (c === '"' || c === "'") return { kind: 'string', v: this.string() };
    if (c === '{' || c === '[') return { kind: 'object', v: this.value(depth + 1) };
    // Unquoted: fastjson writes non-string map keys bare; AllowUnQuotedFieldNames lets any identifier through.
    const start = this.pos;
    while (this.pos < s.length && !/[\s:,{}[\]"']/.test(s[this.pos])) this.pos++;
    const raw = s.slice(start, this.pos);
    if (raw === '') this.fail('expected an object key');
    if (NUMBER_RE.test(raw)) return { kind: 'number', v: this.numberValue(raw), raw };
    return { kind: 'string', v: raw };
  }

  private object(depth: number): unknown {
    const s = this.s;
    this.pos++; // {
    const entries: Array<[Key, unknown]> = [];
    let hasObjectKey = false;
    for (;;) {
      this.skipWs();
      if (this.pos >= s.length) this.fail('unterminated object');
      const c = s[this.pos];
      if (c === '}') {
        this.pos++;
        break;
      }
      if (c === ',') {
        this.pos++;
        continue;
      }
      const k = this.key(depth);
      if (k.kind === 'object') hasObjectKey = true;
      this.skipWs();
      if (s[this.pos] !== ':') this.fail('expected : after object key');
      this.pos++;
      this.skipWs();
      const v = this.value(depth + 1);
      entries.push([k, v]);
      this.skipWs();
      const d = s[this.pos];
      if (d === ',') this.pos++;
      else if (d === undefined) this.fail('unterminated object');
      else if (d !== '}') this.fail('expected , or } in object');
    }
    if (hasObjectKey) {
      const m = new Map<unknown, unknown>();
      for (const [k, v] of entries) m.set(k.v, v);
      return m;
    }
    const o: Record<string, unknown> = {};
    for (const [k, v] of entries) {
      const name = k.kind === 'number' ? String(k.v) : (k.v as string);
      // define, not assign: a "__proto__" key must stay data, as with JSON.parse
      if (name === '__proto__') Object.defineProperty(o, name, { value: v, enumerable: true, writable: true, configurable: true });
      else o[name] = v;
    }
    return o;
  }
}

/** A Java double: written with a trailing `.0` when integral (fastjson writes `0.0`, not `0`). */
export class JavaDouble {
  constructor(readonly value: number) {}
}

export interface FastjsonStringifyOptions {
  /** Sort plain-object keys like fastjson sorts bean fields. Default true. Maps always keep insertion order. */
  sortKeys?: boolean;
  /** SerializerFeature.BrowserCompatible: `\uXXXX` for non-ASCII, quoted integers beyond ±2^53. */
  browserCompatible?: boolean;
}

const MAX_STRINGIFY_DEPTH = 512;
const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);

/** Serialises to compact fastjson-style JSON (see the module comment). */
export function stringifyFastjson(value: unknown, options: FastjsonStringifyOptions = {}): string {
  const w = new Writer(options.sortKeys ?? true, options.browserCompatible ?? false);
  w.value(value, 0, false);
  return w.out;
}

/** The name the task brief uses; the same function. */
export const stringifyWithObjectKeys = stringifyFastjson;

class Writer {
  out = '';
  private readonly seen = new Set<object>();
  constructor(
    private readonly sortKeys: boolean,
    private readonly browserCompatible: boolean,
  ) {}

  private str(s: string): void {
    let j = JSON.stringify(s);
    if (this.browserCompatible) j = j.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    this.out += j;
  }

  private isAbsent(v: unknown): boolean {
    return v === undefined || v === null || typeof v === 'function' || typeof v === 'symbol';
  }

  /** inKey: writing an object in key position, whose fields fastjson always sorts. */
  value(v: unknown, depth: number, inKey: boolean): void {
    if (depth > MAX_STRINGIFY_DEPTH) throw new Error(`fastjson: value nested deeper than ${MAX_STRINGIFY_DEPTH}`);
    if (v === null || v === undefined || typeof v === 'function' || typeof v === 'symbol') {
      this.out += 'null';
      return;
    }
    switch (typeof v) {
      case 'string':
        this.str(v);
        return;
      case 'boolean':
        this.out += v ? 'true' : 'false';
        return;
      case 'number':
        this.out += Number.isFinite(v) ? String(v) : 'null';
        return;
      case 'bigint':
        if (this.browserCompatible && (v > MAX_SAFE_BIG || v < -MAX_SAFE_BIG)) this.out += `"${v}"`;
        else this.out += v.toString();
        return;
      default:
        break;
    }
    if (v instanceof JavaDouble) {
      const d = v.value;
      if (!Number.isFinite(d)) this.out += 'null';
      else this.out += Number.isInteger(d) && Math.abs(d) < 1e21 ? `${d}.0` : String(d);
      return;
    }
    if (v instanceof Date) {
      this.out += String(v.getTime());
      return;
    }
    if (v instanceof Uint8Array) {
      this.out += `"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}"`;
      return;
    }
    const obj = v as object;
    if (this.seen.has(obj)) throw new Error('fastjson: circular structure');
    this.seen.add(obj);
    try {
      if (Array.isArray(obj) || obj instanceof Set) {
        this.out += '[';
        let first = true;
        for (const item of obj) {
          if (!first) this.out += ',';
          first = false;
          this.value(item, depth + 1, false);
        }
        this.out += ']';
      } else if (obj instanceof Map) {
        this.out += '{';
        let first = true;
        for (const [k, item] of obj) {
          if (this.isAbsent(item) || k === undefined) continue;
          if (!first) this.out += ',';
          first = false;
          this.mapKey(k, depth);
          this.out += ':';
          this.value(item, depth + 1, false);
        }
        this.out += '}';
      } else {
        let keys = Object.keys(obj);
        if (this.sortKeys || inKey) keys = keys.sort();
        this.out += '{';
        let first = true;
        for (const k of keys) {
          const item = (obj as Record<string, unknown>)[k];
          if (this.isAbsent(item)) continue;
          if (!first) this.out += ',';
          first = false;
          this.str(k);
          this.out += ':';
          this.value(item, depth + 1, inKey);
        }
        this.out += '}';
      }
    } finally {
      this.seen.delete(obj);
    }
  }

  private mapKey(k: unknown, depth: number): void {
    if (typeof k === 'string') this.str(k);
    else if (typeof k === 'number' || typeof k === 'bigint' || typeof k === 'boolean') this.out += String(k);
    else if (k === null) this.out += 'null';
    else this.value(k, depth + 1, true);
  }
}
