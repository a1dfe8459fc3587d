// Runtime values of the SQL92 selector and Java's conversions between them (ComparisonExpression.__compare,
// Integer/Long/Double.valueOf). Where Java throws (a string that does not parse as the number it is compared
// with, and the like), we throw Sql92EvalError and the message is dropped, as ExpressionMessageFilter does.

/** Java Integer. */
export class JInt {
  constructor(readonly v: number) {}
}
/** Java Long (exact: a bigint). */
export class JLong {
  constructor(readonly v: bigint) {}
}
/** Java Double. */
export class JDouble {
  constructor(readonly v: number) {}
}

/** A runtime value: property values are strings, literals are Integer/Long/Double/String/Boolean/NULL. */
export type Value = null | boolean | string | JInt | JLong | JDouble;

/** Where property values come from (a Map of the message's properties fits). */
export interface PropertySource {
  get(name: string): string | undefined;
  /** Set when the values can be read as UTF-8 bytes (a stored record's properties): comparisons then skip decoding. */
  readonly bytes?: PropertyBytes;
}

/** A message's properties as stored (`name \x01 value \x02 ...`, UTF-8), looked up without decoding them. */
export interface PropertyBytes {
  readonly buf: Uint8Array;
  /**
   * Start in buf of the value get(name) would return, for `key`, the ASCII bytes of a name holding neither
   * separator (the last property of that name with a non-empty value, as parseProperties keeps it), or -1 when
   * get would return undefined. The value ends at valueEnd.
   */
  find(key: Uint8Array): number;
  /** End (exclusive) of the value the last find located. */
  readonly valueEnd: number;
  /** The value [start, end) decoded as get returns it. */
  decode(start: number, end: number): string;
}

/** The ASCII bytes of a property name PropertyBytes.find can look up, or null (empty, non-ASCII or a separator). */
export function propertyKeyBytes(name: string): Uint8Array | null {
  if (name.length === 0) return null;
  const key = new Uint8Array(name.length);
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c <= 2 || c >= 0x80) return null;
    key[i] = c;
  }
  return key;
}

/** The bytes of an ASCII string (each a char code), or null when it has a non-ASCII char. */
export function asciiBytes(s: string): Uint8Array | null {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return null;
    out[i] = c;
  }
  return out;
}

/** bytes [start, end) of buf equal `want`. */
export function bytesEqual(buf: Uint8Array, start: number, end: number, want: Uint8Array): boolean {
  const n = want.length;
  if (end - start !== n) return false;
  for (let i = 0; i < n; i++) if (buf[start + i] !== want[i]) return false;
  return true;
}

/**
 * The value of an optional sign and 1..maxDigits ASCII digits in buf [start, end), as shortAsciiInteger reads the
 * same text; NaN for anything else (the caller then decodes the text and takes the general path).
 */
export function asciiIntegerBytes(buf: Uint8Array, start: number, end: number, maxDigits: number): number {
  let i = start;
  let sign = 1;
  const c0 = buf[start];
  if (c0 === 0x2d || c0 === 0x2b) {
    sign = c0 === 0x2d ? -1 : 1;
    i++;
  }
  if (end === i || end - i > maxDigits) return NaN;
  let v = 0;
  for (; i < end; i++) {
    const d = buf[i]! - 0x30;
    if (d < 0 || d > 9) return NaN;
    v = v * 10 + d;
  }
  return sign * v;
}

/** Java threw while evaluating (NumberFormatException, ClassCastException): the message does not match. */
export class Sql92EvalError extends Error {
  override readonly name = 'Sql92EvalError';
}

// ------------------------------------------------------------------------------------------------ conversions

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** Value of a decimal digit as Character.digit(c, 10) sees it (ASCII and other Unicode Nd digits), or -1. */
function digitValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c < 0x80 || !/\p{Nd}/u.test(s[i]!)) return -1;
  // Nd digits come in runs that start at a zero; count back to it.
  let zero = c;
  while (zero > c - 9 && /\p{Nd}/u.test(String.fromCharCode(zero - 1))) zero--;
  return (c - zero) % 10;
}

/** Long.parseLong / Integer.parseInt: optional sign, one or more digits, no spaces; null when Java throws. */
function parseJavaInteger(s: string, min: bigint, max: bigint): bigint | null {
  let i = 0;
  let negative = false;
  if (s[0] === '-' || s[0] === '+') {
    negative = s[0] === '-';
    i = 1;
  }
  if (i >= s.length) return null;
  let v = 0n;
  for (; i < s.length; i++) {
    const d = digitValue(s, i);
    if (d < 0) return null;
    v = v * 10n + BigInt(d);
    if (v > max + 1n) return null;
  }
  if (negative) v = -v;
  return v < min || v > max ? null : v;
}

/** Value of up to `maxDigits` ASCII digits with an optional sign (the common case), else NaN. */
function shortAsciiInteger(s: string, maxDigits: number): number {
  const n = s.length;
  let i = 0;
  let sign = 1;
  const c0 = s.charCodeAt(0);
  if (c0 === 0x2d || c0 === 0x2b) {
    sign = c0 === 0x2d ? -1 : 1;
    i = 1;
  }
  if (n === i || n - i > maxDigits) return NaN;
  let v = 0;
  for (; i < n; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return NaN;
    v = v * 10 + d;
  }
  return sign * v;
}

export function javaIntegerValueOf(s: string): JInt {
  const fast = shortAsciiInteger(s, 9);
  if (fast === fast) return new JInt(fast | 0);
  const v = parseJavaInteger(s, INT_MIN, INT_MAX);
  if (v === null) throw new Sql92EvalError(`For input string: "${s}" (not an int)`);
  return new JInt(Number(v));
}

export function javaLongValueOf(s: string): JLong {
  const fast = shortAsciiInteger(s, 15);
  if (fast === fast) return new JLong(BigInt(fast));
  const v = parseJavaInteger(s, LONG_MIN, LONG_MAX);
  if (v === null) throw new Sql92EvalError(`For input string: "${s}" (not a long)`);
  return new JLong(v);
}

const DECIMAL_FLOAT = /^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)$/;
const HEX_FLOAT = /^([+-]?)0[xX](?:([0-9a-fA-F]+)\.?([0-9a-fA-F]*)|\.([0-9a-fA-F]+))[pP]([+-]?\d+)[fFdD]?$/;

/** Java String.trim: strips chars <= U+0020 at both ends. */
function javaTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}

/** Double.valueOf(String) (FloatingDecimal.readJavaFormatString); null when Java throws. */
export function parseJavaDouble(raw: string): number | null {
  const s = javaTrim(raw);
  if (DECIMAL_FLOAT.test(s)) return Number(s.replace(/[fFdD]$/, ''));
  const hex = HEX_FLOAT.exec(s);
  if (!hex) return null;
  const intPart = hex[2] ?? '';
  const fracPart = hex[3] ?? hex[4] ?? '';
  const mantissa = BigInt(`0x${intPart}${fracPart}` === '0x' ? '0x0' : `0x${intPart}${fracPart}`);
  const v = Number(mantissa) * 2 ** (Number(hex[5]) - 4 * fracPart.length);
  return hex[1] === '-' ? -v : v;
}

function javaDoubleValueOf(s: string): JDouble {
  const v = parseJavaDouble(s);
  if (v === null) throw new Sql92EvalError(`For input string: "${s}" (not a double)`);
  return new JDouble(v);
}

/** Java Double.compare: NaN above everything and equal to itself, -0.0 below 0.0. */
function compareDouble(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  const aNaN = a !== a;
  const bNaN = b !== b;
  if (aNaN || bNaN) return aNaN === bNaN ? 0 : aNaN ? 1 : -1;
  if (a === 0 && b === 0) {
    const an = Object.is(a, -0);
    const bn = Object.is(b, -0);
    return an === bn ? 0 : an ? -1 : 1;
  }
  return 0;
}

const enum Cls { STRING, BOOLEAN, INT, LONG, DOUBLE }

function classOf(v: NonNullable<Value>): Cls {
  switch (typeof v) {
    case 'string':
      return Cls.STRING;
    case 'boolean':
      return Cls.BOOLEAN;
    default:
      return v instanceof JInt ? Cls.INT : v instanceof JLong ? Cls.LONG : Cls.DOUBLE;
  }
}

const toDouble = (v: JInt | JLong | JDouble): JDouble => (v instanceof JDouble ? v : new JDouble(Number(v.v)));

/**
 * ComparisonExpression.__compare with string conversion on (the parser always turns it on): values of different
 * types are converted towards the literal's type ("10" vs 5 parses "10" as an int); pairs Java cannot convert
 * compare as -1; a failed number parse, or a Boolean on the left of a String, throws.
 */
export function javaCompare(lv: NonNullable<Value>, rv: NonNullable<Value>): number {
  let lc = classOf(lv);
  const rc = classOf(rv);
  if (lc !== rc) {
    switch (lc) {
      case Cls.BOOLEAN:
        // Java casts the Boolean itself to String here: a ClassCastException.
        if (rc === Cls.STRING) throw new Sql92EvalError(`cannot compare ${describeValue(lv)} with ${describeValue(rv)}`);
        return -1;
      case Cls.INT:
        if (rc === Cls.LONG) lv = new JLong(BigInt((lv as JInt).v));
        else if (rc === Cls.DOUBLE) lv = toDouble(lv as JInt);
        else if (rc === Cls.STRING) rv = javaIntegerValueOf(rv as string);
        else return -1;
        break;
      case Cls.LONG:
        if (rc === Cls.INT) rv = new JLong(BigInt((rv as JInt).v));
        else if (rc === Cls.DOUBLE) lv = toDouble(lv as JLong);
        else if (rc === Cls.STRING) rv = javaLongValueOf(rv as string);
        else return -1;
        break;
      case Cls.DOUBLE:
        if (rc === Cls.INT || rc === Cls.LONG) rv = toDouble(rv as JInt | JLong);
        else if (rc === Cls.STRING) rv = javaDoubleValueOf(rv as string);
        else return -1;
        break;
      case Cls.STRING:
        if (rc === Cls.BOOLEAN) lv = (lv as string).toLowerCase() === 'true';
        else if (rc === Cls.INT) lv = javaIntegerValueOf(lv as string);
        else if (rc === Cls.LONG) lv = javaLongValueOf(lv as string);
        else lv = javaDoubleValueOf(lv as string);
        break;
    }
    lc = classOf(lv);
  }
  switch (lc) {
    case Cls.STRING: {
      const a = lv as string;
      const b = rv as string;
      return a < b ? -1 : a > b ? 1 : 0;
    }
    case Cls.BOOLEAN:
      return lv === rv ? 0 : lv ? 1 : -1;
    case Cls.INT:
      return Math.sign((lv as JInt).v - (rv as JInt).v);
    case Cls.LONG: {
      const a = (lv as JLong).v;
      const b = (rv as JLong).v;
      return a < b ? -1 : a > b ? 1 : 0;
    }
    default:
      return compareDouble((lv as JDouble).v, (rv as JDouble).v);
  }
}

/** Java's toString of a value, as it appears in selector error messages. */
export function describeValue(v: Value): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return `'${v.replaceAll("'", "''")}'`;
  if (v instanceof JDouble) return Number.isInteger(v.v) && Math.abs(v.v) < 1e7 ? `${v.v}.0` : String(v.v);
  return String(v.v);
}
