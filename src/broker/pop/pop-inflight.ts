// Messages popped and not yet acked or revived, per topic, group and queue (Java PopInflightMessageCounter): the
// consumer lag metrics add them to a POP group's lag. In memory only; pops from before this start are not counted,
// so their acks and revives lower nothing either.

export class PopInflightCounter {
  /** `topic@group` -> queueId -> messages in flight (no entry: 0). */
  private readonly table = new Map<string, Map<number, number>>();

  constructor(private readonly startTimeMs: number) {}

  /** A pop handed out `n` messages of the queue. */
  increment(topic: string, group: string, queueId: number, n: number): void {
    if (n <= 0) return;
    const key = `${topic}@${group}`;
    let queues = this.table.get(key);
    if (!queues) this.table.set(key, (queues = new Map()));
    queues.set(queueId, (queues.get(queueId) ?? 0) + n);
  }

  /** `n` messages popped at popTimeMs were acked or revived (nothing if they were popped before this start). */
  decrement(topic: string, group: string, queueId: number, popTimeMs: number, n: number): void {
    if (popTimeMs < this.startTimeMs) return;
    const key = `${topic}@${group}`;
    const queues = this.table.get(key);
    const now = queues?.get(queueId);
    if (!queues || now === undefined) return;
    if (now - n > 0) {
      queues.set(queueId, now - n);
      return;
    }
    queues.delete(queueId);
    if (queues.size === 0) this.table.delete(key);
  }

  /** An orderly pop's queue starts again from its offset: nothing of it counts as in flight (Java clears it). */
  clear(topic: string, group: string, queueId: number): void {
    const key = `${topic}@${group}`;
    const queues = this.table.get(key);
    if (!queues) return;
    queues.delete(queueId);
    if (queues.size === 0) this.table.delete(key);
  }

  /** A deleted topic or group takes its counts with it. */
  clearTopic(topic: string): void {
    for (const key of this.table.keys()) if (key.slice(0, key.lastIndexOf('@')) === topic) this.table.delete(key);
  }

  clearGroup(group: string): void {
    for (const key of this.table.keys()) if (key.slice(key.lastIndexOf('@') + 1) === group) this.table.delete(key);
  }

  get(topic: string, group: string, queueId: number): number {
    return this.table.get(`${topic}@${group}`)?.get(queueId) ?? 0;
  }
}
