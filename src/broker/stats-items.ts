// Java BrokerStatsManager's stats items, as VIEW_BROKER_STATS_DATA (mqadmin statsAll, the dashboard) and the 5.x
// TopicStatsTable.topicPutTps read them (common/stats/StatsItem.java): per stats name and key a counter (value, and
// times: how many adds) sampled every 10 s (the last 7 samples: one minute), every 10 min (7: one hour) and every
// hour (25: one day). A window's sum is the growth between its first and last sample, tps that per second, avgpt
// the sum per add. An item's first sample of a window is preceded by a zero one an interval earlier (as Java), so
// what was counted before it shows at once.

/** The stats names this broker keeps (Java BrokerStatsManager constants). */
export const StatsName = {
  TOPIC_PUT_NUMS: 'TOPIC_PUT_NUMS',
  TOPIC_PUT_SIZE: 'TOPIC_PUT_SIZE',
  /** key `topic@group` */
  GROUP_GET_NUMS: 'GROUP_GET_NUMS',
  GROUP_GET_SIZE: 'GROUP_GET_SIZE',
  /** key the cluster name */
  BROKER_PUT_NUMS: 'BROKER_PUT_NUMS',
  BROKER_GET_NUMS: 'BROKER_GET_NUMS',
} as const;
export type StatsName = (typeof StatsName)[keyof typeof StatsName];

export const SAMPLE_INTERVAL_MS = 10_000;
/** Every 60th sample is also an hour-window sample (10 min), every 360th a day-window sample (1 h). */
const HOUR_EVERY = 60;
const DAY_EVERY = 360;
/** Per window: how often it is sampled (in ticks), how many samples it keeps, where they lie in StatsItem.samples. */
const WINDOWS = {
  minute: { every: 1, kept: 7, at: 0 },
  hour: { every: HOUR_EVERY, kept: 7, at: 7 * 3 },
  day: { every: DAY_EVERY, kept: 25, at: 14 * 3 },
} as const;
export type StatsWindow = keyof typeof WINDOWS;
const WINDOW_NAMES = Object.keys(WINDOWS) as StatsWindow[];
/** Numbers one item keeps: [timestampMs, times, value] for each sample of each window. */
const SAMPLE_NUMBERS = (7 + 7 + 25) * 3;
/**
 * Items per stats name at most (an item is ~1.1 KB); beyond this, items that stopped counting are dropped first,
 * then the oldest. Java keeps every item until its topic or group is deleted.
 */
const MAX_ITEMS_PER_NAME = 20_000;

class StatsItem {
  value = 0;
  times = 0;
  /** The windows' samples, oldest first, each window in its own part (WINDOWS[w].at). */
  readonly samples = new Float64Array(SAMPLE_NUMBERS);
  /** Samples held per window. */
  readonly held: Record<StatsWindow, number> = { minute: 0, hour: 0, day: 0 };

  push(w: StatsWindow, timestampMs: number, times: number, value: number): void {
    const { kept, at } = WINDOWS[w];
    let n = this.held[w];
    if (n === kept) {
      this.samples.copyWithin(at, at + 3, at + kept * 3); // drop the oldest
      n--;
    }
    const p = at + n * 3;
    this.samples[p] = timestampMs;
    this.samples[p + 1] = times;
    this.samples[p + 2] = value;
    this.held[w] = n + 1;
  }
}

/** Java StatsSnapshot: what one window says. */
export interface StatsSnapshot {
  sum: number;
  tps: number;
  avgpt: number;
}

export class StatsItems {
  /** One table per stats name, made up front (a send counts into three: no lookup of the table itself). */
  private readonly byName = new Map<string, Map<string, StatsItem>>(Object.values(StatsName).map((n) => [n, new Map()]));
  private readonly topicPutNums = this.byName.get(StatsName.TOPIC_PUT_NUMS)!;
  private readonly topicPutSize = this.byName.get(StatsName.TOPIC_PUT_SIZE)!;
  private readonly brokerPutNums = this.byName.get(StatsName.BROKER_PUT_NUMS)!;
  private ticks = 0;

  /** Adds `value` to the item (created on first use), counting one add unless told otherwise. */
  add(name: StatsName, key: string, value: number, times = 1): void {
    addTo(this.byName.get(name)!, key, value, times);
  }

  /** A send stored `messages` messages of `bytes` record bytes (Java incTopicPutNums / Size, incBrokerPutNums). */
  countPut(cluster: string, topic: string, messages: number, bytes: number): void {
    addTo(this.topicPutNums, topic, messages, 1);
    addTo(this.topicPutSize, topic, bytes, 1);
    addTo(this.brokerPutNums, cluster, messages, 1);
  }

  /** A pull or pop found `messages` messages (Java incGroupGetNums / Size, incBrokerGetNums). */
  countGet(cluster: string, topic: string, group: string, messages: number, bytes: number): void {
    const key = `${topic}@${group}`;
    this.add(StatsName.GROUP_GET_NUMS, key, messages);
    this.add(StatsName.GROUP_GET_SIZE, key, bytes);
    this.add(StatsName.BROKER_GET_NUMS, cluster, messages);
  }

  /** One 10 s tick (the broker calls it every SAMPLE_INTERVAL_MS; the first tick also samples the hour and day). */
  sample(nowMs: number = Date.now()): void {
    const tick = this.ticks++;
    for (const items of this.byName.values()) {
      for (const item of items.values()) {
        for (const w of WINDOW_NAMES) {
          const { every } = WINDOWS[w];
          if (tick % every !== 0) continue;
          if (item.held[w] === 0) item.push(w, nowMs - every * SAMPLE_INTERVAL_MS, 0, 0);
          item.push(w, nowMs, item.times, item.value);
        }
      }
    }
  }

  /** The item's figures over a window, or undefined when the item does not exist (Java: "not exist"). */
  snapshot(name: string, key: string, window: StatsWindow): StatsSnapshot | undefined {
    const item = this.byName.get(name)?.get(key);
    if (!item) return undefined;
    const n = item.held[window];
    if (n === 0) return { sum: 0, tps: 0, avgpt: 0 };
    const { at } = WINDOWS[window];
    const s = item.samples;
    const [t0, times0, v0] = [s[at]!, s[at + 1]!, s[at + 2]!];
    const last = at + (n - 1) * 3;
    const [t1, times1, v1] = [s[last]!, s[last + 1]!, s[last + 2]!];
    const sum = v1 - v0;
    const timesDiff = times1 - times0;
    return { sum, tps: t1 > t0 ? (sum * 1000) / (t1 - t0) : 0, avgpt: timesDiff > 0 ? sum / timesDiff : 0 };
  }
}

function addTo(items: Map<string, StatsItem>, key: string, value: number, times: number): void {
  let item = items.get(key);
  if (!item) {
    if (items.size >= MAX_ITEMS_PER_NAME) dropIdle(items);
    item = new StatsItem();
    items.set(key, item);
  }
  item.value += value;
  item.times += times;
}

/** Drops the items whose minute window saw no growth, or the oldest one when every item still counts. */
function dropIdle(items: Map<string, StatsItem>): void {
  for (const [key, item] of items) {
    if (item.held.minute === WINDOWS.minute.kept && item.samples[2] === item.value) items.delete(key);
  }
  if (items.size >= MAX_ITEMS_PER_NAME) items.delete(items.keys().next().value!);
}
