// Header numbers as Java reads them (RemotingCommand.decodeCommandCustomHeader: Integer.parseInt / Long.parseLong,
// radix 10): an optional '+' or '-', then at least one decimal digit, nothing else (no spaces, exponents, hex or
// fractions), within the type's range. Anything else is a NumberFormatException in Java and undefined here.
// The ASCII path allocates nothing; it is on every send and pull.

const INT_MAX = 2147483647;
const INT_MIN_ABS = 2147483648;
/** Long.MAX_VALUE and the magnitude of Long.MIN_VALUE, as digit strings (exact comparison above 2^53). */
const LONG_MAX_DIGITS = '9223372036854775807';
const LONG_MIN_ABS_DIGITS = '9223372036854775808';
const CH_0 = 48;
const CH_9 = 57;
const CH_PLUS = 43;
const CH_MINUS = 45;

/** Java Integer.parseInt(s): the value, or undefined where Java throws NumberFormatException. */
export function parseJavaInt(s: string): number | undefined {
  const len = s.length;
  if (len === 0) return undefined;
  let i = 0;
  let neg = false;
  const c0 = s.charCodeAt(0);
  if (c0 === CH_MINUS || c0 === CH_PLUS) {
    neg = c0 === CH_MINUS;
    i = 1;
    if (len === 1) return undefined;
  }
  const limit = neg ? INT_MIN_ABS : INT_MAX;
  let n = 0;
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < CH_0 || c > CH_9) return parseNonAscii(s, parseJavaInt);
    n = n * 10 + (c - CH_0);
    if (n > limit) return undefined;
  }
  return neg ? (n === 0 ? 0 : -n) : n;
}

/**
 * Java Long.parseLong(s): the value, or undefined where Java throws. Values beyond ±(2^53 − 1) are valid Java longs
 * that a JS number holds only approximately: they come back rounded (Number.isSafeInteger tells), and code that
 * stores such a field exactly must refuse them (the store does, for every int64 it writes).
 */
export function parseJavaLong(s: string): number | undefined {
  const len = s.length;
  if (len === 0) return undefined;
  let i = 0;
  let neg = false;
  const c0 = s.charCodeAt(0);
  if (c0 === CH_MINUS || c0 === CH_PLUS) {
    neg = c0 === CH_MINUS;
    i = 1;
    if (len === 1) return undefined;
  }
  // Leading zeros are allowed and do not count towards the 19 significant digits a long has at most.
  while (i < len - 1 && s.charCodeAt(i) === CH_0) i++;
  const first = i;
  let n = 0;
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < CH_0 || c > CH_9) return parseNonAscii(s, parseJavaLong);
    n = n * 10 + (c - CH_0);
  }
  const digits = len - first;
  if (digits > 19) return undefined;
  if (digits === 19) {
    // Same length: digit strings compare like the numbers they spell.
    const sig = s.slice(first);
    if (sig > (neg ? LONG_MIN_ABS_DIGITS : LONG_MAX_DIGITS)) return undefined;
  }
  // Up to 15 digits the running sum is exact; above, let Number round the digits once, correctly.
  if (digits > 15) n = Number(s.slice(first));
  return neg ? (n === 0 ? 0 : -n) : n;
}

const UNICODE_DIGIT = /^\p{Nd}$/u;

/**
 * Java's parsers take any Unicode decimal digit (Character.digit(ch, 10) of a UTF-16 unit: '٣' is 3, fullwidth
 * '３' too). Rewrites those to ASCII and parses again; undefined when any other character is present.
 */
function parseNonAscii(s: string, parse: (ascii: string) => number | undefined): number | undefined {
  let ascii = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= CH_0 && c <= CH_9) || ((c === CH_MINUS || c === CH_PLUS) && i === 0)) {
      ascii += s[i];
      continue;
    }
    const d = unicodeDigitValue(c);
    if (d < 0) return undefined;
    ascii += String.fromCharCode(CH_0 + d);
  }
  return parse(ascii);
}

/** The value of a BMP decimal digit (Unicode Nd digits come in runs of ten, zero first), or -1. */
function unicodeDigitValue(code: number): number {
  if (code >= 0xd800 && code <= 0xdfff) return -1; // a surrogate half is no digit for Character.digit(char)
  if (!UNICODE_DIGIT.test(String.fromCharCode(code))) return -1;
  let zero = code;
  while (zero > 0 && UNICODE_DIGIT.test(String.fromCharCode(zero - 1))) zero--;
  return (code - zero) % 10;
}

/** The Java type names used in remarks. */
export const JAVA_INT_RANGE = 'an int (optional sign and decimal digits, -2147483648..2147483647)';
export const JAVA_LONG_RANGE = 'a long (optional sign and decimal digits, -9223372036854775808..9223372036854775807)';
