import { describe, expect, it } from 'vitest';
import {
  MessageConst, getProperty, lastPropertyOf, parseProperties, readSendProperties, tracePropertiesSuffix, withTraceProperties,
} from '../../src/common/message-properties.js';

const NAMES = [MessageConst.TAGS, MessageConst.KEYS, MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX, MessageConst.CLUSTER];

/** What the one-pass reader must agree with: four getProperty scans. */
function byGetProperty(s: string) {
  return {
    tags: getProperty(s, MessageConst.TAGS),
    keys: getProperty(s, MessageConst.KEYS),
    uniqKey: getProperty(s, MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
    cluster: getProperty(s, MessageConst.CLUSTER),
    traceSet: hasName(s, MessageConst.MSG_REGION) || hasName(s, MessageConst.TRACE_SWITCH),
  };
}

/** A property of that name is there, with any value (an empty one too). */
function hasName(s: string, name: string): boolean {
  return s.split('\u0002').some((p) => p.includes('\u0001') && p.slice(0, p.indexOf('\u0001')) === name);
}

/** Up to 7 properties from `pieces`, each with or without a value and a separator after it. */
function randomSendPropertiesString(rnd: (n: number) => number, pieces: string[]): string {
  let s = '';
  const parts = rnd(8);
  for (let j = 0; j < parts; j++) {
    s += pieces[rnd(pieces.length)]!;
    if (rnd(3) > 0) s += '\u0001' + pieces[rnd(pieces.length)]!;
    if (rnd(4) > 0) s += '\u0002';
  }
  return s;
}

function strip<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

describe('readSendProperties', () => {
  it('reads what a Java producer sends', () => {
    const s = 'KEYS\u0001k1 k2\u0002UNIQ_KEY\u00017F000001ABCD\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002';
    expect(readSendProperties(s)).toEqual({ keys: 'k1 k2', uniqKey: '7F000001ABCD', tags: 'TagA', cluster: undefined, traceSet: false });
  });

  it('keeps the first occurrence and reads an empty value as absent, as getProperty does', () => {
    expect(strip(readSendProperties('TAGS\u0001\u0002TAGS\u0001b\u0002KEYS\u0001x\u0002KEYS\u0001y'))).toEqual({ keys: 'x', traceSet: false });
    expect(strip(readSendProperties(''))).toEqual({ traceSet: false });
    expect(strip(readSendProperties('TAGS'))).toEqual({ traceSet: false });
    expect(strip(readSendProperties('__proto__\u0001x\u0002constructor\u0001y\u0002TAGS\u0001t'))).toEqual({ tags: 't', traceSet: false });
    expect(strip(readSendProperties('MSG_REGION\u0001\u0002TAGS\u0001t'))).toEqual({ tags: 't', traceSet: true });
  });

  it('agrees with getProperty on random property strings', () => {
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pieces = [...NAMES, MessageConst.MSG_REGION, MessageConst.TRACE_SWITCH, 'WAIT', 'TAG', 'TAGSX', '', 'v', 'a b', '\u0001', '\u0002'];
    for (let i = 0; i < 5000; i++) {
      const s = randomSendPropertiesString(rnd, pieces);
      expect(strip(readSendProperties(s)), JSON.stringify(s)).toEqual(strip(byGetProperty(s)));
    }
  });
});

describe('withTraceProperties', () => {
  const suffix = tracePropertiesSuffix('RegionX', false);

  it('appends MSG_REGION and TRACE_ON as the broker sets them', () => {
    expect(suffix).toBe('MSG_REGION\u0001RegionX\u0002TRACE_ON\u0001false\u0002');
    const props = 'TAGS\u0001a\u0002WAIT\u0001true\u0002';
    const out = withTraceProperties(props, readSendProperties(props).traceSet, suffix);
    expect(out).toBe(props + suffix);
    expect(withTraceProperties('', false, suffix)).toBe(suffix);
  });

  it("replaces a producer's own values, as Java's property map does", () => {
    const props = 'MSG_REGION\u0001Mine\u0002TAGS\u0001a\u0002TRACE_ON\u0001\u0002KEYS\u0001k\u0002';
    const out = withTraceProperties(props, readSendProperties(props).traceSet, suffix);
    expect(out).toBe('TAGS\u0001a\u0002KEYS\u0001k\u0002' + suffix);
    const map = parseProperties(out);
    expect(map.get(MessageConst.MSG_REGION)).toBe('RegionX');
    expect(map.get(MessageConst.TRACE_SWITCH)).toBe('false');
    expect(getProperty(out, MessageConst.MSG_REGION)).toBe('RegionX');
  });
});

describe('getProperty', () => {
  /** The first property of that name, found by stepping from property to property. */
  function stepping(s: string, name: string): string | undefined {
    let pos = 0;
    while (pos <= s.length) {
      if (s.startsWith(name + '\u0001', pos)) {
        const start = pos + name.length + 1;
        let end = s.indexOf('\u0002', start);
        if (end < 0) end = s.length;
        return end > start ? s.slice(start, end) : undefined;
      }
      const next = s.indexOf('\u0002', pos);
      if (next < 0) return undefined;
      pos = next + 1;
    }
    return undefined;
  }

  it('takes the first property of the name, only where a property starts', () => {
    expect(getProperty('a\u0001TAGS\u0002TAGS\u0001z', 'TAGS')).toBe('z');
    expect(getProperty('XTAGS\u0001x\u0002TAGSX\u0001y\u0002TAGS\u0001t\u0002TAGS\u0001u', 'TAGS')).toBe('t');
    expect(getProperty('TAGS\u0001\u0002TAGS\u0001b', 'TAGS')).toBeUndefined();
    expect(getProperty('TAGS', 'TAGS')).toBeUndefined();
    expect(getProperty('\u0001x\u0002', '')).toBeUndefined();
    expect(getProperty(undefined, 'TAGS')).toBeUndefined();
  });

  it('agrees with stepping from property to property on random strings', () => {
    let seed = 4242;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return (seed >>> 8) % n;
    };
    const pieces = [...NAMES, 'WAIT', 'TAG', 'TAGSX', 'XTAGS', '', 'v', 'a b', '\u0001', '\u0002', 'TAGS\u0001', '\u0002TAGS'];
    const names = [...NAMES, 'TAG', 'WAIT', 'v', 'a b', 'TAGSX'];
    let found = 0;
    for (let i = 0; i < 5000; i++) {
      const s = randomSendPropertiesString(rnd, pieces);
      for (const name of names) {
        const want = stepping(s, name);
        if (want !== undefined) found++;
        expect(getProperty(s, name), JSON.stringify([s, name])).toBe(want);
      }
    }
    expect(found).toBeGreaterThan(1000);
  });
});

describe('lastPropertyOf', () => {
  /** Property strings built from pieces that hit every parsing edge: separators, empty names and values, repeats. */
  function randomPropertiesString(next: () => number): string {
    const pieces = ['k', 'region', 'a', 'eu', '', '\u0001', '\u0002', 'k\u0001', '\u00e9', 'x\u0001y'];
    let s = '';
    const n = Math.floor(next() * 12);
    for (let i = 0; i < n; i++) s += pieces[Math.floor(next() * pieces.length)];
    return s;
  }

  it('gives what parseProperties(s).get(name) gives, for any string and name', () => {
    let seed = 12345;
    const next = (): number => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed / 4294967296;
    };
    const names = ['k', 'region', 'a', 'eu', '', 'x', 'x\u0001y', 'k\u0002', '\u00e9', 'y'];
    let found = 0;
    const wrong: unknown[] = [];
    for (let i = 0; i < 20000; i++) {
      const s = randomPropertiesString(next);
      const map = parseProperties(s);
      for (const name of names) {
        const want = map.get(name);
        if (want !== undefined) found++;
        const got = lastPropertyOf(s, name);
        if (got !== want) wrong.push({ s, name, got, want });
      }
    }
    expect(wrong).toEqual([]);
    expect(found).toBeGreaterThan(1000); // the generator does produce matches
  });

  it('takes the last of repeated names and skips empty values', () => {
    expect(lastPropertyOf('k\u00011\u0002k\u00012\u0002', 'k')).toBe('2');
    expect(lastPropertyOf('k\u00011\u0002k\u0001\u0002', 'k')).toBe('1');
    expect(lastPropertyOf('kk\u00011\u0002', 'k')).toBeUndefined();
    expect(lastPropertyOf('k\u00011\u00012', 'k')).toBe('1\u00012');
  });
});
