import { describe, expect, it } from 'vitest';
import { StatsItems, StatsName } from '../../src/broker/stats-items.js';

describe('StatsItems (Java StatsItem windows)', () => {
  it('a first sample counts from zero one interval earlier; later ones the growth between first and last per second', () => {
    const s = new StatsItems();
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'minute')).toBeUndefined();
    s.add(StatsName.TOPIC_PUT_NUMS, 'T', 100);
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'minute')).toEqual({ sum: 0, tps: 0, avgpt: 0 });
    s.sample(1_000);
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'minute')).toEqual({ sum: 100, tps: 10, avgpt: 100 });
    s.add(StatsName.TOPIC_PUT_NUMS, 'T', 50);
    s.add(StatsName.TOPIC_PUT_NUMS, 'T', 50);
    s.sample(11_000);
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'minute')).toEqual({ sum: 200, tps: 10, avgpt: 200 / 3 });
    // the first tick samples the hour and day windows too (from zero 10 min / 1 h before), the second does not
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'hour')).toEqual({ sum: 100, tps: 100 / 600, avgpt: 100 });
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'day')).toEqual({ sum: 100, tps: 100 / 3600, avgpt: 100 });
  });

  it('keeps 7 minute samples, 7 hour samples (every 60th tick) and 25 day samples (every 360th)', () => {
    const s = new StatsItems();
    for (let i = 0; i < 400; i++) {
      s.add(StatsName.TOPIC_PUT_NUMS, 'T', i < 3 ? 1_000 : 10); // a burst in the first ticks, then 1 msg/s
      s.sample(i * 10_000);
    }
    // minute: ticks 393..399, 60 s in which 60 messages arrived
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'minute')).toMatchObject({ sum: 60, tps: 1 });
    // hour: ticks 0, 60, ..., 360 (7 samples, the synthetic zero dropped): 1,000 at tick 0, 6,580 at tick 360
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'hour')).toMatchObject({ sum: 5_580, tps: 5_580 / 3_600 });
    // day: the synthetic zero an hour before tick 0, ticks 0 and 360
    expect(s.snapshot(StatsName.TOPIC_PUT_NUMS, 'T', 'day')).toMatchObject({ sum: 6_580, tps: 6_580 / 7_200 });
  });

  it('counts puts by topic and cluster, gets by topic@group and cluster', () => {
    const s = new StatsItems();
    s.countPut('C', 'T', 2, 300);
    s.countGet('C', 'T', 'G', 2, 300);
    s.sample(10_000);
    expect(s.snapshot(StatsName.TOPIC_PUT_SIZE, 'T', 'minute')?.sum).toBe(300);
    expect(s.snapshot(StatsName.BROKER_PUT_NUMS, 'C', 'minute')?.sum).toBe(2);
    expect(s.snapshot(StatsName.GROUP_GET_NUMS, 'T@G', 'minute')?.sum).toBe(2);
    expect(s.snapshot(StatsName.GROUP_GET_SIZE, 'T@G', 'minute')?.avgpt).toBe(300);
    expect(s.snapshot(StatsName.BROKER_GET_NUMS, 'C', 'minute')?.sum).toBe(2);
    expect(s.snapshot('NO_SUCH_STATS', 'T', 'minute')).toBeUndefined();
  });
});
