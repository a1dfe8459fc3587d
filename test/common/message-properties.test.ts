import { describe, expect, it } from 'vitest';
import { MessageConst, getProperty, readSendProperties } from '../../src/common/message-properties.js';

const NAMES = [MessageConst.TAGS, MessageConst.KEYS, MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX, MessageConst.CLUSTER];

/** What the one-pass reader must agree with: four getProperty scans. */
function byGetProperty(s: string) {
  return {
    tags: getProperty(s, MessageConst.TAGS),
    keys: getProperty(s, MessageConst.KEYS),
    uniqKey: getProperty(s, MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
    cluster: getProperty(s, MessageConst.CLUSTER),
  };
}

function strip<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

describe('readSendProperties', () => {
  it('reads what a Java producer sends', () => {
    const s = 'KEYS\u0001k1 k2\u0002UNIQ_KEY\u00017F000001ABCD\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002';
    expect(readSendProperties(s)).toEqual({ keys: 'k1 k2', uniqKey: '7F000001ABCD', tags: 'TagA' });
  });

  it('keeps the first occurrence and reads an empty value as absent, as getProperty does', () => {
    expect(readSendProperties('TAGS\u0001\u0002TAGS\u0001b\u0002KEYS\u0001x\u0002KEYS\u0001y')).toEqual({ keys: 'x' });
    expect(readSendProperties('')).toEqual({});
    expect(readSendProperties('TAGS')).toEqual({});
    expect(readSendProperties('__proto__\u0001x\u0002constructor\u0001y\u0002TAGS\u0001t')).toEqual({ tags: 't' });
  });

  it('agrees with getProperty on random property strings', () => {
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pieces = [...NAMES, 'WAIT', 'TAG', 'TAGSX', '', 'v', 'a b', '\u0001', '\u0002'];
    for (let i = 0; i < 5000; i++) {
      let s = '';
      const parts = rnd(8);
      for (let j = 0; j < parts; j++) {
        s += pieces[rnd(pieces.length)]!;
        if (rnd(3) > 0) s += '\u0001' + pieces[rnd(pieces.length)]!;
        if (rnd(4) > 0) s += '\u0002';
      }
      expect(strip(readSendProperties(s)), JSON.stringify(s)).toEqual(strip(byGetProperty(s)));
    }
  });
});
