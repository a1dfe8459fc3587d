// Header numbers are read as Java's Integer.parseInt / Long.parseLong read them: what Java refuses is refused
// (and named), what Java accepts is accepted, including the corners (sign, leading zeros, Unicode digits, range).
import { describe, expect, it } from 'vitest';
import { HeaderError, HeaderReader, createRequest } from '../../src/remoting/command.js';
import { readSendHeader } from '../../src/broker/processors/send-message.js';
import { parseJavaInt, parseJavaLong } from '../../src/remoting/java-number.js';

describe('Java number parsing', () => {
  it('accepts what Integer.parseInt accepts', () => {
    expect(parseJavaInt('0')).toBe(0);
    expect(parseJavaInt('-0')).toBe(0);
    expect(Object.is(parseJavaInt('-0'), -0)).toBe(false);
    expect(parseJavaInt('+7')).toBe(7);
    expect(parseJavaInt('000000000000000000000042')).toBe(42);
    expect(parseJavaInt('2147483647')).toBe(2147483647);
    expect(parseJavaInt('-2147483648')).toBe(-2147483648);
    // Character.digit takes any Unicode decimal digit: Arabic-Indic and fullwidth.
    expect(parseJavaInt('\u0661\u0662\u0663')).toBe(123);
    expect(parseJavaInt('-\uff19')).toBe(-9);
  });

  it('refuses what Integer.parseInt refuses', () => {
    for (const s of ['', '-', '+', ' 1', '1 ', '1e3', '0x10', '1.0', '1_000', '2147483648', '-2147483649', '--1', '+-1',
      'NaN', 'Infinity', '١e', '\u00b2', '1\u0000']) {
      expect(parseJavaInt(s), JSON.stringify(s)).toBeUndefined();
    }
  });

  it('accepts what Long.parseLong accepts, exactly up to 2^53 and rounded beyond', () => {
    expect(parseJavaLong('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseJavaLong('-9007199254740991')).toBe(-Number.MAX_SAFE_INTEGER);
    expect(parseJavaLong('1700000000123')).toBe(1700000000123);
    expect(parseJavaLong('9223372036854775807')).toBe(2 ** 63);
    expect(Number.isSafeInteger(parseJavaLong('9223372036854775807'))).toBe(false);
    expect(parseJavaLong('-9223372036854775808')).toBe(-(2 ** 63));
    expect(parseJavaLong('00000000000000000000000009223372036854775807')).toBe(2 ** 63);
    expect(parseJavaLong('9007199254740993')).toBe(9007199254740992);
  });

  it('refuses what Long.parseLong refuses', () => {
    for (const s of ['', '1e3', '1e21', '1e308', '0x10', '9223372036854775808', '-9223372036854775809',
      '99999999999999999999', '12345678901234567890', '1.5', ' 3', 'Infinity']) {
      expect(parseJavaLong(s), s).toBeUndefined();
    }
  });

  it('HeaderReader names the field and shows the value', () => {
    const h = new HeaderReader({ bornTimestamp: '1e3', queueId: '0x10', big: '9'.repeat(500) });
    expect(() => h.long('bornTimestamp')).toThrow(HeaderError);
    expect(() => h.long('bornTimestamp')).toThrow(/<bornTimestamp> is not a long .*"1e3"/);
    expect(() => h.int('queueId')).toThrow(/<queueId> is not an int .*"0x10"/);
    // SEND_MESSAGE_V2 carries them under letters: the error names the field, not the letter.
    const v2 = (extFields: Record<string, string>) => readSendHeader(createRequest(310, extFields));
    expect(() => v2({ a: 'g', b: 'T', e: '1', g: '1e3' })).toThrow(/<bornTimestamp> is not a long .*"1e3"/);
    expect(() => v2({ a: 'g', b: 'T', e: '0x10' })).toThrow(/<queueId> is not an int .*"0x10"/);
    expect(() => v2({ a: 'g', b: 'T' })).toThrow(/<queueId> is null/);
    // A letter that is absent falls back to the full name; the letter wins when both are there.
    expect(v2({ a: 'g', b: 'T', queueId: '3', e: '5', flag: '7', m: 'TRUE' })).toMatchObject({
      producerGroup: 'g', topic: 'T', queueId: 5, flag: 7, batch: true, sysFlag: 0, defaultTopicQueueNums: 4, properties: '',
    });
    expect(v2({ a: 'g', b: 'T', queueId: '3' }).queueId).toBe(3);
    let remark = '';
    try {
      h.long('big');
    } catch (err) {
      remark = (err as Error).message;
    }
    expect(remark).toContain('500 characters');
    expect(remark.length).toBeLessThan(200);
    expect(h.optInt('missing', 4)).toBe(4);
    expect(new HeaderReader({ x: '' }).optLong('x', 9)).toBe(9);
    expect(new HeaderReader({ b: 'TRUE' }).bool('b')).toBe(true);
    expect(new HeaderReader({ b: 'yes' }).bool('b', true)).toBe(false);
  });
});
