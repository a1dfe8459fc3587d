// Per-topic put counts and their rate over the last minute: what a 5.x broker answers as TopicStatsTable.topicPutTps
// (BrokerStatsManager TOPIC_PUT_NUMS, StatsItem.getStatsDataInMinute). Java samples each counter every 10 s, keeps
// the last 7 samples (one minute) and divides the growth between the first and the last sample by the time
// between them; a topic with fewer than two samples has rate 0.

export const SAMPLE_INTERVAL_MS = 10_000;
const SAMPLES_KEPT = 7;
/** Topics sampled at most; beyond this, topics that stopped receiving messages are dropped first. */
const MAX_TOPICS = 100_000;

interface TopicCounter {
  total: number;
  /** [timestampMs, total] pairs, oldest first. */
  samples: Array<[number, number]>;
}

export class TopicPutStats {
  private readonly topics = new Map<string, TopicCounter>();

  /** Counts `messages` stored to `topic` (a batch counts each of its messages). */
  add(topic: string, messages: number): void {
    let c = this.topics.get(topic);
    if (!c) {
      if (this.topics.size >= MAX_TOPICS) this.dropIdle();
      c = { total: 0, samples: [] };
      this.topics.set(topic, c);
    }
    c.total += messages;
  }

  /** Takes one sample of every counter (the broker calls it every SAMPLE_INTERVAL_MS). */
  sample(nowMs: number = Date.now()): void {
    for (const c of this.topics.values()) {
      c.samples.push([nowMs, c.total]);
      if (c.samples.length > SAMPLES_KEPT) c.samples.shift();
    }
  }

  /** Messages per second over the sampled minute. */
  tpsInMinute(topic: string): number {
    const s = this.topics.get(topic)?.samples;
    if (!s || s.length < 2) return 0;
    const [t0, v0] = s[0]!;
    const [t1, v1] = s[s.length - 1]!;
    return t1 > t0 ? ((v1 - v0) * 1000) / (t1 - t0) : 0;
  }

  private dropIdle(): void {
    for (const [topic, c] of this.topics) {
      const s = c.samples;
      if (s.length === SAMPLES_KEPT && s[0]![1] === c.total) this.topics.delete(topic);
    }
  }
}
