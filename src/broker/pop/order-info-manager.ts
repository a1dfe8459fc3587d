// FIFO (orderly) POP state per (topic, group, queue): the batch last handed out, which of its offsets are acked,
// per-offset next-visible times and consume counts (Java broker/offset/ConsumerOrderInfoManager.java). A queue is
// blocked while its batch has an unacked offset that is not visible again; acks move the group's offset to the
// first unacked offset of the batch. Persisted as config/consumerOrderInfo.json (Java's layout) every 10 s and at
// shutdown; after a crash an older copy only makes a batch come back, which the offset (at the batch start) does
// anyway.
import path from 'node:path';
import { stringifyFastjson } from '../../common/fastjson.js';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';

/** ConsumerOrderInfoManager.CLEAN_SPAN_FROM_LAST: entries idle this long are dropped. */
const CLEAN_SPAN_FROM_LAST_MS = 24 * 3600 * 1000;
/** Java persists every 10 s (BrokerController's consumer-order-info flush). */
export const ORDER_INFO_PERSIST_INTERVAL_MS = 10_000;

/** ConsumerOrderInfoManager.OrderInfo */
export interface OrderInfo {
  popTime: number;
  /** The invisible time of the pop (`i`). */
  invisibleTime?: number;
  /** `o`: the first offset absolute, the others as distances from it. */
  offsetList: number[];
  /** `ot`: queue offset → next visible time (set by ChangeInvisibleTime). */
  offsetNextVisibleTime?: Map<number, number>;
  /** `oc`: queue offset → times consumed before (only offsets delivered again). */
  offsetConsumedCount?: Map<number, number>;
  /** `l` */
  lastConsumeTimestamp: number;
  /** `cm`: bit i set = the i-th offset is acked. */
  commitOffsetBit: number;
  /** `a` */
  attemptId?: string;
}

const bitSet = (bits: number, i: number): boolean => Math.floor(bits / 2 ** i) % 2 === 1;
const withBit = (bits: number, i: number): number => (bitSet(bits, i) ? bits : bits + 2 ** i);

function queueOffsetAt(list: readonly number[], i: number): number {
  return i === 0 ? list[0]! : list[0]! + list[i]!;
}

/** OrderInfo.buildOffsetList */
export function buildOffsetList(offsets: readonly number[]): number[] {
  if (offsets.length <= 1) return [...offsets];
  const first = offsets[0]!;
  return [first, ...offsets.slice(1).map((o) => o - first)];
}

export function queueOffsetsOf(info: OrderInfo): number[] {
  return info.offsetList.map((_, i) => queueOffsetAt(info.offsetList, i));
}

/** OrderInfo.needBlock: an unacked offset of the batch is still invisible (a request of the same attempt never is). */
export function needBlock(info: OrderInfo, attemptId: string | undefined, currentInvisibleTime: number, nowMs: number): boolean {
  if (info.offsetList.length === 0) return false;
  if (info.attemptId !== undefined && info.attemptId === attemptId) return false;
  if (info.invisibleTime === undefined || info.invisibleTime <= 0) info.invisibleTime = currentInvisibleTime;
  for (let i = 0; i < info.offsetList.length; i++) {
    if (bitSet(info.commitOffsetBit, i)) continue;
    const nextVisible = info.offsetNextVisibleTime?.get(queueOffsetAt(info.offsetList, i)) ?? info.popTime + info.invisibleTime;
    if (nowMs < nextVisible) return true;
  }
  return false;
}

/** OrderInfo.getNextOffset: the first unacked offset, or the last + 1 when all are acked; −2 for an empty batch. */
export function nextOffsetOf(info: OrderInfo): number {
  const n = info.offsetList.length;
  if (n === 0) return -2;
  for (let i = 0; i < n; i++) if (!bitSet(info.commitOffsetBit, i)) return queueOffsetAt(info.offsetList, i);
  return queueOffsetAt(info.offsetList, n - 1) + 1;
}

export interface OrderInfoOwners {
  /** Read queue count of a topic, undefined when the topic is gone. */
  readQueueNums(topic: string): number | undefined;
  groupExists(group: string): boolean;
}

export class ConsumerOrderInfoManager {
  /** `<topic>@<group>` → queueId → OrderInfo */
  readonly table = new Map<string, Map<number, OrderInfo>>();
  private readonly file: TableFile;

  constructor(
    storePathRootDir: string,
    private readonly owners: OrderInfoOwners,
    logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new TableFile(path.join(storePathRootDir, 'config', 'consumerOrderInfo.json'), () => this.encode(), logger, 'consumer order info');
  }

  private static key(topic: string, group: string): string {
    return `${topic}@${group}`;
  }

  get(topic: string, group: string, queueId: number): OrderInfo | undefined {
    return this.table.get(ConsumerOrderInfoManager.key(topic, group))?.get(queueId);
  }

  /**
   * Records a new batch (ConsumerOrderInfoManager.update) and returns its order counts: per offset
   * `[offset, count]` for offsets delivered before, and the queue's minimum count (0 when a new offset is in it).
   */
  update(
    attemptId: string | undefined, topic: string, group: string, queueId: number, popTime: number, invisibleTime: number,
    offsets: readonly number[],
  ): { perOffset: Array<[number, number]>; minCount: number } {
    const key = ConsumerOrderInfoManager.key(topic, group);
    let qs = this.table.get(key);
    if (!qs) {
      qs = new Map();
      this.table.set(key, qs);
    }
    const prev = qs.get(queueId);
    const info: OrderInfo = {
      popTime, invisibleTime, offsetList: buildOffsetList(offsets), lastConsumeTimestamp: this.now(), commitOffsetBit: 0, attemptId,
    };
    if (prev) {
      // OrderInfo.mergeOffsetConsumedCount: the same attempt keeps its counts; otherwise re-delivered offsets count +1
      if (prev.attemptId !== undefined && prev.attemptId === attemptId) {
        info.offsetConsumedCount = prev.offsetConsumedCount ?? new Map();
      } else {
        const before = new Set(queueOffsetsOf(prev));
        const counts = new Map<number, number>();
        for (const o of offsets) if (before.has(o)) counts.set(o, (prev.offsetConsumedCount?.get(o) ?? 0) + 1);
        info.offsetConsumedCount = counts;
      }
    }
    qs.set(queueId, info);
    this.file.changed();
    const perOffset: Array<[number, number]> = [];
    let minCount = Number.MAX_SAFE_INTEGER;
    if (info.offsetConsumedCount) {
      for (const [o, c] of info.offsetConsumedCount) {
        perOffset.push([o, c]);
        minCount = Math.min(minCount, c);
      }
      if (info.offsetConsumedCount.size !== info.offsetList.length) minCount = 0;
    } else {
      minCount = 0;
    }
    return { perOffset, minCount };
  }

  /** ConsumerOrderInfoManager.checkBlock */
  checkBlock(attemptId: string | undefined, topic: string, group: string, queueId: number, invisibleTime: number): boolean {
    const info = this.get(topic, group, queueId);
    return info ? needBlock(info, attemptId, invisibleTime, this.now()) : false;
  }

  clearBlock(topic: string, group: string, queueId: number): void {
    this.table.get(ConsumerOrderInfoManager.key(topic, group))?.delete(queueId);
    this.file.changed();
  }

  /**
   * Marks one offset of the batch acked (ConsumerOrderInfoManager.commitAndNext). Returns the offset to commit, −1
   * when the offset is not in the batch (illegal), −2 when the ack belongs to an older batch (ignored).
   */
  commitAndNext(topic: string, group: string, queueId: number, queueOffset: number, popTime: number): number {
    const info = this.get(topic, group, queueId);
    if (!info) return queueOffset + 1;
    if (info.offsetList.length === 0) return -1;
    if (popTime !== info.popTime) return -2;
    const i = info.offsetList.findIndex((_, k) => queueOffsetAt(info.offsetList, k) === queueOffset);
    if (i < 0) return -1;
    info.commitOffsetBit = withBit(info.commitOffsetBit, i);
    this.file.changed();
    return nextOffsetOf(info);
  }

  /** ConsumerOrderInfoManager.updateNextVisibleTime (ignored for another batch). */
  updateNextVisibleTime(topic: string, group: string, queueId: number, queueOffset: number, popTime: number, nextVisibleTime: number): void {
    const info = this.get(topic, group, queueId);
    if (!info || info.popTime !== popTime) return;
    info.offsetNextVisibleTime ??= new Map();
    info.offsetNextVisibleTime.set(queueOffset, nextVisibleTime);
    this.file.changed();
  }

  /** ConsumerOrderInfoManager.autoClean: drops entries of gone topics/groups, queues beyond the read count, idle ones. */
  private autoClean(): void {
    const now = this.now();
    for (const [key, qs] of this.table) {
      const at = key.indexOf('@');
      const topic = key.slice(0, at);
      const group = key.slice(at + 1);
      const readQueueNums = this.owners.readQueueNums(topic);
      if (readQueueNums === undefined || !this.owners.groupExists(group) || qs.size === 0) {
        this.table.delete(key);
        continue;
      }
      for (const [q, info] of qs) {
        if (q >= readQueueNums || now - info.lastConsumeTimestamp > CLEAN_SPAN_FROM_LAST_MS) qs.delete(q);
      }
    }
  }

  /** Java's JSON: `{"table":{"<topic>@<group>":{<queueId>:{"a":…,"cm":…,"i":…,"l":…,"o":[…],"oc":{…},"ot":{…},"popTime":…}}}}`. */
  encode(): string {
    this.autoClean();
    const table = new Map<string, Map<number, Record<string, unknown>>>();
    for (const [key, qs] of this.table) {
      const out = new Map<number, Record<string, unknown>>();
      for (const [q, info] of qs) {
        out.set(q, {
          a: info.attemptId, cm: info.commitOffsetBit, i: info.invisibleTime, l: info.lastConsumeTimestamp, o: info.offsetList,
          oc: info.offsetConsumedCount, ot: info.offsetNextVisibleTime, popTime: info.popTime,
        });
      }
      table.set(key, out);
    }
    return stringifyFastjson({ table });
  }

  load(): void {
    const data = this.file.load() as { table?: Record<string, Record<string, Record<string, unknown>>> } | undefined;
    for (const [key, qs] of Object.entries(data?.table ?? {})) {
      if (!qs || typeof qs !== 'object') continue;
      const m = new Map<number, OrderInfo>();
      for (const [q, raw] of Object.entries(qs)) {
        const info = decodeOrderInfo(raw);
        if (info && Number.isInteger(Number(q))) m.set(Number(q), info);
      }
      this.table.set(key, m);
    }
  }

  startPersisting(intervalMs: number = ORDER_INFO_PERSIST_INTERVAL_MS): void {
    this.file.saveEvery(intervalMs);
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

function numberMap(v: unknown): Map<number, number> | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const m = new Map<number, number>();
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const key = Number(k);
    const val = Number(x);
    if (Number.isSafeInteger(key) && Number.isSafeInteger(val)) m.set(key, val);
  }
  return m;
}

function decodeOrderInfo(raw: unknown): OrderInfo | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const list = Array.isArray(o.o) ? o.o.map(Number).filter(Number.isSafeInteger) : [];
  return {
    popTime: Number(o.popTime ?? 0) || 0,
    invisibleTime: o.i === undefined || o.i === null ? undefined : Number(o.i),
    offsetList: list,
    offsetNextVisibleTime: numberMap(o.ot),
    offsetConsumedCount: numberMap(o.oc),
    lastConsumeTimestamp: Number(o.l ?? 0) || 0,
    commitOffsetBit: Number(o.cm ?? 0) || 0,
    attemptId: typeof o.a === 'string' ? o.a : undefined,
  };
}
