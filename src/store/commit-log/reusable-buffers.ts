// The reuse rule shared by the tail cache's chunks and the read blocks: a buffer that left its cache is read or
// written into again only once no view of it can still be in use. Views handed out with pins (the pull path,
// released once the answer is written) are counted; a view handed out without pins marks its buffer as never to
// be reused.

/** A cached buffer's reuse state. */
export interface Reusable {
  /** Pinned views not yet released. */
  pins: number;
  /** A view was handed out without pins, or the buffer was handed back already: never reused (again). */
  shared: boolean;
  /** Out of its cache; its buffer is reused when its last pin goes, unless shared. */
  retired: boolean;
}

/**
 * The items a reader's views point into, released together when the views are no longer used. Releasing twice is
 * harmless; never releasing only costs reuse.
 */
export class ViewPins<T extends Reusable> {
  private items: T[] = [];
  private released = false;

  constructor(private readonly owner: BufferRecycler<T>) {}

  /** Pins `item` for a view of it (a run of views of one item pins it once). */
  add(item: T): void {
    if (this.released) {
      item.shared = true;
      return;
    }
    if (this.items[this.items.length - 1] === item) return;
    item.pins++;
    this.items.push(item);
  }

  get count(): number {
    return this.items.length;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const item of this.items) this.owner.unpin(item);
    this.items = [];
  }
}

/** Free buffers of `bufferBytes` from retired items, up to `maxFree`; more are left to the garbage collector. */
export class BufferRecycler<T extends Reusable> {
  private readonly free: Buffer[] = [];
  /** Buffers taken from the free list instead of allocated (for tests and the stats). */
  reused = 0;

  constructor(
    readonly bufferBytes: number,
    private readonly maxFree: number,
    /** The allocation an item's views lie in: what goes back to the free list. */
    private readonly memOf: (item: T) => Buffer,
  ) {}

  /** A buffer for `size` bytes: a free one when it fits and one is free, else a fresh one of at least bufferBytes. */
  take(size: number): Buffer {
    if (size <= this.bufferBytes) {
      const buf = this.free.pop();
      if (buf) {
        this.reused++;
        return buf;
      }
    }
    return Buffer.allocUnsafe(Math.max(this.bufferBytes, size));
  }

  /** A buffer from take() that no item holds (its read failed or was overtaken): no view of it exists. */
  giveBack(mem: Buffer): void {
    if (mem.length === this.bufferBytes && this.free.length < this.maxFree) this.free.push(mem);
  }

  newPins(): ViewPins<T> {
    return new ViewPins(this);
  }

  /** ViewPins.release, item by item. */
  unpin(item: T): void {
    item.pins--;
    if (item.pins === 0 && item.retired) this.recycle(item);
  }

  /** The item left its cache: its buffer is reused once its last pin goes. */
  retire(item: T): void {
    item.retired = true;
    if (item.pins === 0) this.recycle(item);
  }

  /** Forgets the free buffers (the cache closes or starts over). */
  clear(): void {
    this.free.length = 0;
  }

  private recycle(item: T): void {
    const mem = this.memOf(item);
    if (item.shared || mem.length !== this.bufferBytes || this.free.length >= this.maxFree) return;
    item.shared = true; // handed over: an item never gives its buffer back twice
    this.free.push(mem);
  }
}
