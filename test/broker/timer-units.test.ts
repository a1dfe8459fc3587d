import { describe, expect, it } from 'vitest';
import { applyTimerHook, snapTimerPrecisionMs, timerOutMs } from '../../src/broker/timer/timer-hook.js';
import { TimerHeap } from '../../src/broker/timer/timer-heap.js';
import { BlockMins, DoneOffsets } from '../../src/broker/timer/timer-progress.js';
import { parseProperties } from '../../src/common/message-properties.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { tagsCodeOf } from '../../src/store/dispatcher.js';
import { TIMER_ROLL_WINDOW_MS } from '../../src/store/timer-topic.js';
import type { MessageToStore } from '../../src/store/types.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function msg(props: Record<string, string>, sysFlag = 0): MessageToStore {
  let p = '';
  for (const [k, v] of Object.entries(props)) p += `${k}\u0001${v}\u0002`;
  const host = { ip: Buffer.from([127, 0, 0, 1]), port: 1 };
  return {
    topic: 'T', queueId: 3, flag: 0, body: Buffer.from('b'), propertiesString: p, tagsCode: 0, sysFlag,
    bornTimestamp: 0, bornHost: host, storeHost: host, reconsumeTimes: 0, preparedTransactionOffset: 0,
  };
}

const CFG = { timerWheelEnable: true, timerMaxDelaySec: 259200 };

describe('timer hook (HookUtils)', () => {
  it('rounds like Java and snaps the precision', () => {
    expect(timerOutMs(10_500, 1000)).toBe(10_000);
    expect(timerOutMs(10_000, 1000)).toBe(9000);
    expect(timerOutMs(10_001, 100)).toBe(10_000);
    expect([1, 99, 100, 199, 200, 499, 500, 999, 1000, 5000].map(snapTimerPrecisionMs)).toEqual([100, 100, 100, 100, 200, 200, 500, 500, 1000, 1000]);
  });

  it('parks future timers on rmq_sys_wheel_timer q0 with the action time as tagsCode', () => {
    const m = msg({ TIMER_DELIVER_MS: '100500', TAGS: 'x' });
    expect(applyTimerHook(m, CFG, 1000, 90_000)).toBeUndefined();
    expect(m.topic).toBe('rmq_sys_wheel_timer');
    expect(m.queueId).toBe(0);
    expect(m.tagsCode).toBe(100_000);
    const p = parseProperties(m.propertiesString);
    expect(p.get('TIMER_OUT_MS')).toBe('100000');
    expect(p.get('REAL_TOPIC')).toBe('T');
    expect(p.get('REAL_QID')).toBe('3');
    // Recovery recomputes the same key from the record.
    expect(tagsCodeOf('rmq_sys_wheel_timer', m.propertiesString, 90_000, [])).toBe(100_000);
    // A due time beyond the roll window is first acted on (re-parked) at the end of the window.
    const far = msg({ TIMER_DELAY_SEC: String(3 * 86400) });
    applyTimerHook(far, CFG, 1000, 1_000_000);
    expect(far.tagsCode).toBe(1_000_000 + TIMER_ROLL_WINDOW_MS);
  });

  it('leaves prepared transactions, due timers and already-converted messages alone', () => {
    const prepared = msg({ TIMER_DELAY_SEC: '10' }, 0x4);
    expect(applyTimerHook(prepared, CFG, 1000, 0)).toBeUndefined();
    expect(prepared.topic).toBe('T');
    const due = msg({ TIMER_DELIVER_MS: '5' });
    expect(applyTimerHook(due, CFG, 1000, 10)).toBeUndefined();
    expect(due.topic).toBe('T');
    const converted = msg({ TIMER_DELIVER_MS: '500000', TIMER_OUT_MS: '400000' });
    expect(applyTimerHook(converted, CFG, 1000, 10)).toBeUndefined();
    expect(converted.topic).toBe('T');
  });

  it('drops the timer properties when a DELAY level is set', () => {
    const m = msg({ DELAY: '3', TIMER_DELIVER_MS: '999999', TIMER_DELAY_SEC: '4', TIMER_DELAY_MS: '5', KEYS: 'k' });
    expect(applyTimerHook(m, { ...CFG, timerWheelEnable: false }, 1000, 0)).toBeUndefined();
    expect([...parseProperties(m.propertiesString).keys()]).toEqual(['DELAY', 'KEYS']);
    expect(m.topic).toBe('T');
  });

  it('refuses bad and disabled timers with the Java codes', () => {
    expect(applyTimerHook(msg({ TIMER_DELAY_MS: '10' }), { ...CFG, timerWheelEnable: false }, 1000, 0)?.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(applyTimerHook(msg({ TIMER_DELAY_SEC: '1.5' }), CFG, 1000, 0)?.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect(applyTimerHook(msg({ TIMER_DELAY_SEC: '259201' }), CFG, 1000, 0)?.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect(applyTimerHook(msg({ TIMER_DELAY_SEC: '259200' }), CFG, 1000, 0)).toBeUndefined();
    expect(applyTimerHook(msg({ TIMER_DELIVER_MS: '5', TIMER_DEL_UNIQKEY: 'u' }), CFG, 1000, 10)?.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
  });
});

describe('timer structures', () => {
  it('DoneOffsets tracks out-of-order completion and round-trips through its encoding', () => {
    const r = rng(7);
    const n = 5000;
    const order = Array.from({ length: n }, (_, i) => i + 100);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    let d = new DoneOffsets(100);
    const set = new Set<number>();
    for (let i = 0; i < n; i++) {
      d.set(order[i]!);
      set.add(order[i]!);
      if (i % 997 === 0) {
        const e = d.encode();
        d = DoneOffsets.decode(e.queueOffset, e.bitmapBase, e.bitmap);
      }
      let low = 100;
      while (set.has(low)) low++;
      if (i % 250 === 0) {
        expect(d.low).toBe(low);
        for (let k = 0; k < 50; k++) {
          const o = 100 + Math.floor(r() * n);
          expect(d.has(o)).toBe(set.has(o));
        }
      }
    }
    expect(d.low).toBe(100 + n);
    d.set(100 + n + 40);
    d.truncate(100 + n + 10);
    expect(d.has(100 + n + 40)).toBe(false);
    d.truncate(50);
    expect(d.low).toBe(50);
    expect(d.has(60)).toBe(false);
  });

  it('TimerHeap pops in (actionMs, queueOffset) order and truncates to the earliest', () => {
    const r = rng(3);
    const h = new TimerHeap();
    const items = Array.from({ length: 3000 }, (_, i) => ({ actionMs: Math.floor(r() * 50) * 100, queueOffset: i, commitLogOffset: i * 10, sizeBytes: 5 }));
    for (const it of items) h.push(it);
    const evicted: number[] = [];
    const last = h.truncate(1000, (_k, o) => evicted.push(o))!;
    expect(h.size).toBe(1000);
    expect(evicted).toHaveLength(2000);
    const sorted = [...items].sort((a, b) => a.actionMs - b.actionMs || a.queueOffset - b.queueOffset);
    expect(last).toEqual({ actionMs: sorted[999]!.actionMs, queueOffset: sorted[999]!.queueOffset });
    for (let i = 0; i < 1000; i++) expect(h.pop()).toEqual(sorted[i]);
    expect(h.pop()).toBeUndefined();
  });

  it('BlockMins keeps per-block minima and forgets dropped blocks', () => {
    const b = new BlockMins();
    b.note(5, 100);
    b.note(5, 50);
    b.note(700, 7);
    expect(b.get(5)).toBe(50);
    expect(b.get(700)).toBe(7);
    expect(b.get(6)).toBe(Number.POSITIVE_INFINITY);
    b.dropBelow(6);
    expect(b.get(5)).toBe(Number.POSITIVE_INFINITY);
    expect(b.get(700)).toBe(7);
  });
});
