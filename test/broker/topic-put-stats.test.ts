import { describe, expect, it } from 'vitest';
import { TopicPutStats } from '../../src/broker/topic-put-stats.js';

describe('TopicPutStats (5.x topicPutTps)', () => {
  it('is 0 until two samples exist, then the growth between the first and last sample per second', () => {
    const s = new TopicPutStats();
    expect(s.tpsInMinute('T')).toBe(0);
    s.add('T', 100);
    s.sample(1_000);
    expect(s.tpsInMinute('T')).toBe(0);
    s.add('T', 50);
    s.sample(11_000);
    expect(s.tpsInMinute('T')).toBe(5);
    expect(s.tpsInMinute('other')).toBe(0);
  });

  it('keeps one minute: the oldest of more than 7 samples is dropped', () => {
    const s = new TopicPutStats();
    for (let i = 0; i < 10; i++) {
      s.add('T', i < 3 ? 1_000 : 10); // a burst in the first samples, then 1 msg/s
      s.sample(i * 10_000);
    }
    // samples 3..9 remain: 60 s in which 60 messages arrived
    expect(s.tpsInMinute('T')).toBe(1);
  });
});
