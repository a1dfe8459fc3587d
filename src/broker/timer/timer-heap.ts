/** A parked timer entry: its action time (the CQ tagsCode), queue offset and commit-log location. */
export interface TimerEntry {
  actionMs: number;
  queueOffset: number;
  commitLogOffset: number;
  sizeBytes: number;
}

/** (a, ao) ≤ (b, bo) in (actionMs, queueOffset) order. */
export function entryLe(a: number, ao: number, b: number, bo: number): boolean {
  return a < b || (a === b && ao <= bo);
}

const MIN_CAPACITY = 1024;

/**
 * Min-heap of timer entries ordered by (actionMs, queueOffset), kept in parallel typed arrays (28 bytes an
 * entry, no per-entry objects) so that a few hundred thousand due-soon entries cost a few MB.
 */
export class TimerHeap {
  private keys = new Float64Array(MIN_CAPACITY);
  private offs = new Float64Array(MIN_CAPACITY);
  private cls = new Float64Array(MIN_CAPACITY);
  private sizes = new Int32Array(MIN_CAPACITY);
  private n = 0;

  get size(): number {
    return this.n;
  }

  get capacity(): number {
    return this.keys.length;
  }

  get memoryBytes(): number {
    return this.keys.length * 28;
  }

  /** How many entries have an action time at or below limitMs (a walk over all of them). */
  countAtOrBelow(limitMs: number): number {
    let n = 0;
    for (let i = 0; i < this.n; i++) if (this.keys[i]! <= limitMs) n++;
    return n;
  }

  peekActionMs(): number {
    return this.n > 0 ? this.keys[0]! : Number.POSITIVE_INFINITY;
  }

  peekQueueOffset(): number {
    return this.n > 0 ? this.offs[0]! : Number.POSITIVE_INFINITY;
  }

  push(e: TimerEntry): void {
    if (this.n === this.keys.length) this.resize(this.keys.length * 2);
    let i = this.n++;
    // Sift up.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (entryLe(this.keys[parent]!, this.offs[parent]!, e.actionMs, e.queueOffset)) break;
      this.move(parent, i);
      i = parent;
    }
    this.put(i, e.actionMs, e.queueOffset, e.commitLogOffset, e.sizeBytes);
  }

  pop(): TimerEntry | undefined {
    if (this.n === 0) return undefined;
    const top: TimerEntry = { actionMs: this.keys[0]!, queueOffset: this.offs[0]!, commitLogOffset: this.cls[0]!, sizeBytes: this.sizes[0]! };
    const last = --this.n;
    if (last > 0) {
      const k = this.keys[last]!;
      const o = this.offs[last]!;
      const c = this.cls[last]!;
      const s = this.sizes[last]!;
      let i = 0;
      // Sift down.
      for (;;) {
        const l = 2 * i + 1;
        if (l >= last) break;
        const r = l + 1;
        const child = r < last && !entryLe(this.keys[l]!, this.offs[l]!, this.keys[r]!, this.offs[r]!) ? r : l;
        if (entryLe(k, o, this.keys[child]!, this.offs[child]!)) break;
        this.move(child, i);
        i = child;
      }
      this.put(i, k, o, c, s);
    }
    if (this.keys.length > MIN_CAPACITY && this.n < this.keys.length / 4) this.resize(this.keys.length / 2);
    return top;
  }

  /**
   * Keeps the `keep` smallest entries and hands every other one to `evicted`. Returns the largest kept entry's
   * (actionMs, queueOffset), or undefined when nothing was evicted.
   */
  truncate(keep: number, evicted: (actionMs: number, queueOffset: number) => void): { actionMs: number; queueOffset: number } | undefined {
    if (this.n <= keep) return undefined;
    const order = new Uint32Array(this.n);
    for (let i = 0; i < this.n; i++) order[i] = i;
    order.sort((a, b) => this.keys[a]! - this.keys[b]! || this.offs[a]! - this.offs[b]!);
    for (let i = keep; i < this.n; i++) evicted(this.keys[order[i]!]!, this.offs[order[i]!]!);
    // A sorted array is a valid heap.
    const cap = Math.max(MIN_CAPACITY, keep * 2);
    const keys = new Float64Array(cap);
    const offs = new Float64Array(cap);
    const cls = new Float64Array(cap);
    const sizes = new Int32Array(cap);
    for (let i = 0; i < keep; i++) {
      const j = order[i]!;
      keys[i] = this.keys[j]!;
      offs[i] = this.offs[j]!;
      cls[i] = this.cls[j]!;
      sizes[i] = this.sizes[j]!;
    }
    this.keys = keys;
    this.offs = offs;
    this.cls = cls;
    this.sizes = sizes;
    this.n = keep;
    return keep > 0 ? { actionMs: keys[keep - 1]!, queueOffset: offs[keep - 1]! } : { actionMs: Number.NEGATIVE_INFINITY, queueOffset: Number.NEGATIVE_INFINITY };
  }

  clear(): void {
    this.n = 0;
    this.resize(MIN_CAPACITY);
  }

  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from]!;
    this.offs[to] = this.offs[from]!;
    this.cls[to] = this.cls[from]!;
    this.sizes[to] = this.sizes[from]!;
  }

  private put(i: number, k: number, o: number, c: number, s: number): void {
    this.keys[i] = k;
    this.offs[i] = o;
    this.cls[i] = c;
    this.sizes[i] = s;
  }

  private resize(cap: number): void {
    const keys = new Float64Array(cap);
    const offs = new Float64Array(cap);
    const cls = new Float64Array(cap);
    const sizes = new Int32Array(cap);
    keys.set(this.keys.subarray(0, this.n));
    offs.set(this.offs.subarray(0, this.n));
    cls.set(this.cls.subarray(0, this.n));
    sizes.set(this.sizes.subarray(0, this.n));
    this.keys = keys;
    this.offs = offs;
    this.cls = cls;
    this.sizes = sizes;
  }
}
