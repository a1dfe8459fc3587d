// The regexp path for Java's letter-named send headers must give exactly what JSON.parse gives, take every header
// of that shape that fastjson (or any JSON writer with the same layout) produces, and leave everything else to
// JSON.parse.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeLetterHeader } from '../../src/remoting/letter-header.js';
import { FrameError, decodeJsonHeader } from '../../src/remoting/header-codec.js';

const LETTERS = 'abcdefghijklmn';

/** What decodeJsonHeader's JSON.parse path makes of a header whose values are all strings. */
function viaJsonParse(text: string): unknown {
  const o = JSON.parse(text) as Record<string, unknown>;
  return {
    code: o.code, language: o.language, version: o.version, opaque: o.opaque, flag: o.flag, remark: undefined,
    extFields: o.extFields,
  };
}

function header(code: number, ext: Record<string, string>, opaque = 7, flag = 0, version = 409): string {
  return JSON.stringify({ code, extFields: ext, flag, language: 'JAVA', opaque, serializeTypeCurrentRPC: 'JSON', version });
}

const base = {
  a: 'pg', b: 'TopicTest', c: 'TBW102', d: '4', e: '1', f: '0', g: '1796023882125', h: '0',
  i: 'UNIQ_KEY\u0001C0000202445B4E0E2F2A96F5A95E0000\u0002WAIT\u0001true\u0002TAGS\u0001TagA', j: '0', k: 'false', m: 'false',
};

describe('letter-named JSON headers', () => {
  it('decode the captured Java send headers as JSON.parse does', () => {
    const dir = path.resolve(import.meta.dirname, '../../protocol/vectors');
    for (const name of ['java-send-message-v2-request.json', 'java-send-batch-message-request.json']) {
      const hex = (JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { frameHex: string }).frameHex;
      const frame = Buffer.from(hex, 'hex');
      const text = frame.toString('utf8', 8, 8 + (frame.readUInt32BE(4) & 0xffffff));
      const got = decodeLetterHeader(text);
      expect(got, name).toBeDefined();
      expect(got).toEqual(viaJsonParse(text));
    }
  });

  it('decode random headers of that shape exactly, escapes and all', () => {
    let seed = 20261204;
    const rnd = (n: number): number => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return (seed >>> 8) % n;
    };
    const specials = ['"', '\\', '/', '\n', '\t', '\b', '\u0001', '\u0002', '\u001f', '\u007f', 'é', '名', '😀', '\u2028', '\ud800'];
    const randomText = (): string => {
      let t = '';
      const n = rnd(4) === 0 ? rnd(200) : rnd(12);
      for (let k = 0; k < n; k++) t += rnd(3) === 0 ? specials[rnd(specials.length)] : String.fromCharCode(0x20 + rnd(95));
      return t;
    };
    for (let round = 0; round < 500; round++) {
      const ext: Record<string, string> = { a: randomText() };
      for (const l of LETTERS.slice(1)) if (rnd(3) > 0) ext[l] = randomText();
      const text = header(rnd(2) ? 310 : 320, ext, rnd(2) ? rnd(1 << 30) : -rnd(1 << 30), rnd(3), rnd(500));
      const got = decodeLetterHeader(text);
      expect(got, text).toBeDefined();
      expect(got).toEqual(viaJsonParse(text));
      expect(decodeJsonHeader(Buffer.from(text))).toEqual(got);
    }
  });

  it('leave every other layout to JSON.parse', () => {
    const good = header(310, base);
    expect(decodeLetterHeader(good)).toBeDefined();
    const others = [
      header(310, { b: 'x', a: 'y' }), // letters out of order
      header(310, { producerGroup: 'pg', topic: 't' }), // full names (the V1 header)
      header(310, { ...base, o: 'x' }), // an unknown letter
      header(310, {}),
      good.replace('"flag":0', '"flag":0,"remark":"r"'),
      good.replace('"language":"JAVA"', '"language":"JAVA" '),
      good.replace('{"code"', '{ "code"'),
      good.replace('"flag":0', '"flag":0.0'),
      good.replace('"opaque":7', '"opaque":1e2'),
      good.replace('"serializeTypeCurrentRPC":"JSON"', '"serializeTypeCurrentRPC":"ROCKETMQ"'),
      good.replace('"language":"JAVA"', '"language":3'),
      good.replace('"e":"1"', '"e":1'),
      good.slice(0, -1),
      good + ' ',
      header(310, { ...base, a: 'p'.repeat(9000) }), // long: JSON.parse is faster there
    ];
    for (const text of others) expect(decodeLetterHeader(text), text).toBeUndefined();
  });

  it('refuse what JSON refuses, so the JSON.parse path answers it', () => {
    const good = header(310, base);
    const invalid = [
      good.replace('"opaque":7', '"opaque":07'), // leading zero
      good.replace('"opaque":7', '"opaque":-'),
      good.replace('TopicTest', 'Topic\u0001Test'), // a raw control character inside a string
      good.replace('TopicTest', 'Topic\\xTest'), // no such escape
      good.replace('TopicTest', 'Topic\\u12Test'), // short \u escape
      good.replace('TopicTest', 'Topic\\'),
    ];
    for (const text of invalid) {
      expect(decodeLetterHeader(text), text).toBeUndefined();
      expect(() => decodeJsonHeader(Buffer.from(text)), text).toThrow(FrameError);
    }
  });
});
