import { describe, expect, it } from 'vitest';
import { decodeRecallHandle, encodeRecallHandle, recallHandleFor } from '../../src/broker/timer/recall-handle.js';
import { MAX_PENDING_RECALLS, TimerRecalls, markerOf } from '../../src/broker/timer/timer-recalls.js';
import { encodeProperties } from '../../src/common/message-properties.js';

describe('recall handles', () => {
  it('encode as the official 5.3.3 broker answered them (captured from its SEND_MESSAGE_V2 response)', () => {
    const h = { topic: 'RecallProbe1796555503864', brokerName: 'broker-a', timestampStr: '1796555533001', uniqKey: 'PROBEUNIQ1' };
    const captured = 'djEgUmVjYWxsUHJvYmUxNzk2NTU1NTAzODY0IGJyb2tlci1hIDE3OTY1NTU1MzMwMDEgUFJPQkVVTklRMQ==';
    expect(encodeRecallHandle(h)).toBe(captured);
    expect(decodeRecallHandle(captured)).toEqual(h);
  });

  it('use the URL-safe alphabet, and refuse what Java\'s URL decoder refuses', () => {
    // '>>>' and '???' encode to '+' and '/' in the standard alphabet
    const h = { topic: 'T>>>', brokerName: 'b???', timestampStr: '1', uniqKey: 'U' };
    const enc = encodeRecallHandle(h);
    expect(enc).not.toMatch(/[+/]/);
    expect(decodeRecallHandle(enc)).toEqual(h);
    expect(decodeRecallHandle(enc.replace(/=+$/, ''))).toEqual(h); // padding is optional
    for (const bad of ['', 'a+b/', 'abcde', '====', Buffer.from('v2 a b 1 c').toString('base64'), Buffer.from('v1 a b 1').toString('base64')]) {
      expect(decodeRecallHandle(bad)).toBe('recall handle is invalid');
    }
  });

  it('are made for parked timer messages with a UNIQ_KEY only, not for retry topics', () => {
    const parked = { TIMER_OUT_MS: '1000', REAL_TOPIC: 'T', REAL_QID: '1', UNIQ_KEY: 'U1' };
    expect(decodeRecallHandle(recallHandleFor(encodeProperties(parked), 'bk')!)).toEqual({ topic: 'T', brokerName: 'bk', timestampStr: '1001', uniqKey: 'U1' });
    expect(recallHandleFor(encodeProperties({ ...parked, REAL_TOPIC: '%RETRY%g' }), 'bk')).toBeUndefined();
    expect(recallHandleFor(encodeProperties({ TIMER_OUT_MS: '1000', REAL_TOPIC: 'T' }), 'bk')).toBeUndefined();
    expect(recallHandleFor(encodeProperties({ REAL_TOPIC: 'T', UNIQ_KEY: 'U1', DELAY: '3' }), 'bk')).toBeUndefined();
    expect(recallHandleFor('', 'bk')).toBeUndefined();
  });
});

describe('TimerRecalls', () => {
  it('reads markers from properties', () => {
    expect(markerOf(encodeProperties({ TIMER_DEL_UNIQKEY: 'T+U', TIMER_OUT_MS: '5000' }))).toEqual({ key: 'T+U', outMs: 5000 });
    expect(markerOf(encodeProperties({ UNIQ_KEY: 'U' }))).toBeUndefined();
    expect(markerOf(undefined)).toBeUndefined();
  });

  it('prunes by due time, saves and loads, and skips malformed saved entries', () => {
    const r = new TimerRecalls();
    r.note('a', 1000);
    r.note('b', 3000);
    r.seenBelow = 42;
    expect(r.prune(2000)).toBe(1);
    expect(r.has('a')).toBe(false);
    expect(r.has('b')).toBe(true);
    const saved = JSON.parse(JSON.stringify(r.encode()));
    const back = new TimerRecalls();
    back.load(saved, 7);
    expect([back.has('b'), back.seenBelow, back.size]).toEqual([true, 42, 1]);
    back.load({ recallsSeenBelow: 9, recalls: [['x', 1], ['y', 'later'], 'z', [3, 4]] }, 7);
    expect([back.size, back.has('x'), back.seenBelow]).toEqual([1, true, 9]);
    // no or broken recall fields: nothing kept, and markers are read again from the fallback
    back.load({ recallsSeenBelow: -1, recalls: [] }, 7);
    expect([back.size, back.seenBelow]).toEqual([0, 7]);
    back.load(undefined, 3);
    expect([back.size, back.seenBelow]).toEqual([0, 3]);
  });

  it('is bounded', () => {
    const r = new TimerRecalls();
    for (let i = 0; i < MAX_PENDING_RECALLS; i++) expect(r.note(`k${i}`, i)).toBe(true);
    expect(r.full).toBe(true);
    expect(r.note('one-more', 1)).toBe(false);
    expect(r.note('k5', 99)).toBe(true); // a key already kept is updated
    expect([r.size, r.overflowed]).toEqual([MAX_PENDING_RECALLS, 1]);
  });
});
