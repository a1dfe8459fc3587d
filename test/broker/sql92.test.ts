import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAX_EXPRESSION_DEPTH, SQL92_CACHE_SIZE, SqlParseError, compileSql92, sql92CacheSize,
} from '../../src/broker/filter/sql92/index.js';

type Outcome = 'TRUE' | 'FALSE' | 'NULL' | 'THROW' | 'PARSE_ERROR';

/** What our implementation says, in the vocabulary of protocol/sql92/Sql92Golden.java. */
function outcome(expr: string, props: Record<string, string> = {}): Outcome {
  let f;
  try {
    f = compileSql92(expr);
  } catch (err) {
    if (err instanceof SqlParseError) return 'PARSE_ERROR';
    throw err;
  }
  try {
    const r = f.evaluateRaw(new Map(Object.entries(props)));
    return r === null ? 'NULL' : r ? 'TRUE' : 'FALSE';
  } catch {
    return 'THROW';
  }
}

interface Vector {
  expr: string;
  props: Record<string, string>;
  java: Outcome;
  error?: string;
}

function vectors(version: string): Vector[] {
  const file = path.resolve(import.meta.dirname, `../../protocol/sql92/vectors-${version}.json`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Vector[];
}

const label = (v: Vector) => `${JSON.stringify(v.expr)} with ${JSON.stringify(v.props)}`;

describe('SQL92 selector: vectors captured from the Java filter module (protocol/sql92/capture.sh)', () => {
  it('agrees with rocketmq-filter 5.3.3 on every case', () => {
    const all = vectors('5.3.3');
    expect(all.length).toBeGreaterThan(400);
    const wrong = all.filter((v) => outcome(v.expr, v.props) !== v.java).map((v) => `${label(v)}: java ${v.java}, ours ${outcome(v.expr, v.props)}`);
    expect(wrong).toEqual([]);
  });

  it('agrees with the 4.9.8 broker except where 5.x added CONTAINS/STARTSWITH/ENDSWITH keywords', () => {
    const newKeyword = /contains|startswith|endswith/i;
    const all = vectors('4.9.8').filter((v) => !newKeyword.test(v.expr));
    expect(all.length).toBeGreaterThan(380);
    const wrong = all.filter((v) => outcome(v.expr, v.props) !== v.java).map((v) => `${label(v)}: java ${v.java}, ours ${outcome(v.expr, v.props)}`);
    expect(wrong).toEqual([]);
  });
});

// The same semantics, spelled out (each row also appears in the captured vectors).
const TABLE: Array<[string, Record<string, string>, Outcome, string]> = [
  // literals and type coercion of string properties
  ['a > 5', { a: '10' }, 'TRUE', 'a string is parsed as the int literal it meets'],
  ['a > 5', { a: '10.5' }, 'THROW', 'Integer.valueOf("10.5") fails, so the message is dropped'],
  ['a > 5.0', { a: '10.5' }, 'TRUE', 'a double literal parses the property as a double'],
  ['a > 5.0', { a: ' 10 ' }, 'TRUE', 'Double.valueOf trims, Integer.valueOf does not'],
  ['a > 5', { a: ' 10' }, 'THROW', ''],
  ['a > 3000000000', { a: '3000000001' }, 'TRUE', 'beyond int range literals are longs'],
  ['a = 9007199254740993', { a: '9007199254740992' }, 'FALSE', 'longs compare exactly'],
  ['a = 5', { a: '5.0' }, 'THROW', ''],
  ['a = 5.0', { a: '5' }, 'TRUE', ''],
  ['a = 5', { a: 'abc' }, 'THROW', '= converts too'],
  ["a = 'x'", { a: 'x' }, 'TRUE', ''],
  ['a = TRUE', { a: 'TRUE' }, 'TRUE', 'Boolean.valueOf is case-insensitive'],
  ['a = TRUE', { a: 'yes' }, 'FALSE', ''],
  ['TRUE = a', { a: 'true' }, 'THROW', 'Java casts the Boolean to String (ClassCastException)'],
  ['a > b', { a: '10', b: '9' }, 'TRUE', 'two strings compare as doubles'],
  ['a > b', { a: 'abc', b: 'x' }, 'THROW', ''],
  ['a = b', { a: '10', b: '10.0' }, 'FALSE', '= between strings compares text'],
  ['a >= 1.5', { a: '0x1.8p0' }, 'TRUE', 'Java accepts hex floats'],
  ['a > 5.0', { a: 'NaN' }, 'TRUE', 'Double.compareTo puts NaN above everything'],
  ['a = 5', { a: '\u0665' }, 'TRUE', 'Integer.valueOf accepts non-ASCII decimal digits'],
  ['1 = TRUE', {}, 'FALSE', 'incomparable types compare as "less"'],
  ['a > 0.0', { a: '1' }, 'PARSE_ERROR', 'float literals below Double.MIN_VALUE are refused'],
  ['a = 9223372036854775808', {}, 'PARSE_ERROR', ''],
  ['a = -2147483648', { a: '-2147483648' }, 'TRUE', ''],
  ['a = 007', { a: '0' }, 'TRUE', '"007" lexes as 0 0 7; the parser stops after the first'],
  // NULL handling
  ['a > 5', {}, 'NULL', 'a missing property is unknown'],
  ['a IS NULL', {}, 'TRUE', ''],
  ['a IS NOT NULL', { a: '' }, 'TRUE', ''],
  ['a = b', {}, 'TRUE', 'NULL = NULL is TRUE in this engine'],
  ['a = b', { b: '1' }, 'NULL', ''],
  ['a = b', { a: '1' }, 'FALSE', ''],
  ["a > 5 OR b = 'x'", { b: 'x' }, 'TRUE', ''],
  ["a > 5 OR b = 'x'", { b: 'y' }, 'NULL', ''],
  ["a > 5 AND b = 'x'", { b: 'y' }, 'FALSE', ''],
  ['NOT (a > 5)', {}, 'NULL', ''],
  ["a NOT IN ('x')", {}, 'NULL', ''],
  ['a = NULL', { a: 'x' }, 'PARSE_ERROR', 'use IS NULL'],
  ['a', { a: 'true' }, 'FALSE', 'a bare property is a cast: only a Boolean value is TRUE'],
  ['NOT a', { a: 'x' }, 'TRUE', ''],
  // precedence
  ['a = 1 OR b = 2 AND c = 3', { a: '1', b: '0', c: '0' }, 'TRUE', 'AND binds tighter than OR'],
  ['(a = 1 OR b = 2) AND c = 3', { a: '1', b: '0', c: '0' }, 'FALSE', ''],
  ['NOT a = 1', { a: '2' }, 'FALSE', 'NOT binds tighter than =: (NOT a) = 1'],
  ['NOT (a = 1)', { a: '2' }, 'TRUE', ''],
  ["NOT a = 'x'", { a: 'x' }, 'THROW', ''],
  ['NOT a BETWEEN 1 AND 2', { a: '1' }, 'PARSE_ERROR', ''],
  // BETWEEN / IN
  ["a between 0 and 3 and b = 'yes'", { a: '2', b: 'yes' }, 'TRUE', ''],
  ['a BETWEEN 0 AND 3', { a: '3' }, 'TRUE', 'inclusive'],
  ['a BETWEEN 0 AND 3', { a: '1.5' }, 'THROW', ''],
  ['a NOT BETWEEN 0 AND 3', { a: '4' }, 'TRUE', ''],
  ['a BETWEEN 3 AND 1', { a: '2' }, 'PARSE_ERROR', 'literal bounds must be ordered'],
  ['a NOT BETWEEN 3 AND 1', { a: '2' }, 'TRUE', '...but only for BETWEEN'],
  ["a BETWEEN 'a' AND 'b'", { a: 'a' }, 'PARSE_ERROR', ''],
  ["TAGS IN ('TagA', 'TagC')", { TAGS: 'TagA' }, 'TRUE', 'TAGS is an ordinary property'],
  ["a IN ('x', 'y')", { a: 'Y' }, 'FALSE', 'values are case-sensitive'],
  ['a IN (1)', { a: '1' }, 'PARSE_ERROR', 'IN takes string literals'],
  ["1 IN ('a')", {}, 'PARSE_ERROR', 'IN needs a property on the left'],
  // keywords are case-insensitive, identifiers are not
  ['a Is NuLl', {}, 'TRUE', ''],
  ["a NoT BeTwEeN 1 aNd 2", { a: '5' }, 'TRUE', ''],
  ['A = 1', { a: '1' }, 'NULL', ''],
  // strings, escapes, comments
  ["a = 'it''s'", { a: "it's" }, 'TRUE', ''],
  ["a = ''''", { a: "'" }, 'TRUE', ''],
  ["a = 'x' -- comment\n", { a: 'x' }, 'TRUE', ''],
  ["a = /* c */ 'x'", { a: 'x' }, 'TRUE', ''],
  ["a = 'x' /*", { a: 'x' }, 'PARSE_ERROR', 'an unterminated comment'],
  ['a = 1 b = 2', { a: '1' }, 'TRUE', 'tokens after a complete expression are ignored...'],
  ['a = 1 #', { a: '1' }, 'PARSE_ERROR', '...but the next one is lexed (peeked at)...'],
  ['a = 1 b #', { a: '1' }, 'TRUE', '...and only that one'],
  ['a = 1 NOT b', { a: '1' }, 'PARSE_ERROR', 'NOT enters the comparison loop'],
  // 5.x string matching
  ["a CONTAINS 'x'", { a: 'axb' }, 'TRUE', ''],
  ["a NOT CONTAINS 'x'", {}, 'FALSE', 'absent is FALSE, not unknown'],
  ["NOT (a CONTAINS 'x')", {}, 'TRUE', ''],
  ["a CONTAINS ''", { a: 'x' }, 'FALSE', ''],
  ["a STARTSWITH 'ab'", { a: 'abc' }, 'TRUE', ''],
  ["a NOT ENDSWITH 'yz'", { a: 'xyz' }, 'FALSE', ''],
  // syntax errors
  ['', {}, 'PARSE_ERROR', ''],
  ['a =', {}, 'PARSE_ERROR', ''],
  ['a == 1', {}, 'PARSE_ERROR', ''],
  ['a != 1', {}, 'PARSE_ERROR', ''],
  ["a > 'x'", { a: 'y' }, 'PARSE_ERROR', 'only numbers with > >= < <='],
  ["'x'", {}, 'PARSE_ERROR', 'not a condition'],
  ['a = 1 AND', { a: '1' }, 'PARSE_ERROR', ''],
  ["a LIKE 'x'", {}, 'NULL', 'LIKE is not supported: parsed as the bare property a'],
];

describe('SQL92 selector semantics', () => {
  it.each(TABLE)('%j with %j is %s %s', (expr, props, expected) => {
    expect(outcome(expr, props)).toBe(expected);
  });

  it('evaluate() selects only on TRUE', () => {
    const f = compileSql92("a > 5 OR b = 'x'");
    expect(f.evaluate(new Map([['a', '6']]))).toBe(true);
    expect(f.evaluate(new Map([['b', 'y']]))).toBe(false); // null
    expect(f.evaluate(new Map([['a', 'zz']]))).toBe(false); // Java throws
    expect(f.evaluate(new Map([['a', '1'], ['b', 'y']]))).toBe(false);
  });
});

describe('SqlParseError', () => {
  const parseError = (expr: string): SqlParseError => {
    try {
      compileSql92(expr);
    } catch (err) {
      if (err instanceof SqlParseError) return err;
      throw err;
    }
    throw new Error(`${expr} compiled`);
  };

  it('names the position and what was expected', () => {
    const e = parseError("a = 1 AND b ='x' AND");
    expect(e.position).toBe(20);
    expect([e.line, e.column]).toEqual([1, 21]);
    expect(e.message).toBe('Encountered end of expression, was expecting a literal, a property name, "(", "+", "-" or NOT (at line 1, column 21)');
    const lex = parseError("a = 1 AND\n  b ! 'x'");
    expect([lex.position, lex.line, lex.column]).toEqual([14, 2, 5]);
    expect(lex.reason).toBe('Lexical error: unexpected character "!"');
    expect(parseError("a > 'x'").reason).toBe("Value ''x'' cannot be compared.");
    expect(parseError('a BETWEEN 3 AND 1').reason).toMatch(/left value\(3\) must less than or equal to right value\(1\)/);
    expect(parseError("a = 'oops").reason).toBe('Lexical error: unterminated string literal');
    expect(parseError('a IN (1)').reason).toBe('Encountered "1", was expecting a string literal');
  });

  it('bounds nesting so evaluation cannot overflow the stack', () => {
    const deep = (n: number) => `${'('.repeat(n)}a = 1${')'.repeat(n)}`;
    expect(compileSql92(deep(200)).evaluate(new Map([['a', '1']]))).toBe(true);
    expect(parseError(deep(MAX_EXPRESSION_DEPTH + 10)).reason).toMatch(/nested deeper/);
    const chain = Array.from({ length: MAX_EXPRESSION_DEPTH + 10 }, (_, i) => `a = ${i}`).join(' OR ');
    expect(parseError(chain).reason).toMatch(/nested deeper/);
    expect(parseError(`${'NOT '.repeat(100_000)}a`).reason).toMatch(/nested deeper/);
  });
});

describe('compile cache', () => {
  it('returns the same compiled filter, remembers failures, and stays bounded', () => {
    const a = compileSql92("cache_probe = 'x'");
    expect(compileSql92("cache_probe = 'x'")).toBe(a);
    expect(() => compileSql92('cache_probe =')).toThrow(SqlParseError);
    expect(() => compileSql92('cache_probe =')).toThrow(SqlParseError);
    for (let i = 0; i < SQL92_CACHE_SIZE + 50; i++) compileSql92(`n = ${i}`);
    expect(sql92CacheSize()).toBe(SQL92_CACHE_SIZE);
    // Least recently used entries went first.
    expect(compileSql92("cache_probe = 'x'")).not.toBe(a);
  });
});
