// Write-through memory of the newest commit-log bytes. Records are encoded straight into these chunks, the
// writer writes chunk slices, and readers of recent records get zero-copy views.
//
// An evicted chunk's buffer is used again for new records (instead of a fresh 1 MiB allocation, whose external
// memory drives V8's full collections at high write rates) only when no view of it can still be in use: views
// taken with a pin (the pull path, released once the response is written) are counted, and any view handed out
// without one marks its chunk as never to be reused. So a view of chunk memory must come from read() or
// readPinned() (never from a chunk's buffer directly), and a pinned one must not be used after its pins are released.

import { BufferRecycler, type Reusable, type ViewPins } from './reusable-buffers.js';

/** One chunk of the tail; `pins` counts pinned views not yet released. */
export interface TailChunk extends Reusable {
  /** Commit-log offset of buf[0]. */
  base: number;
  buf: Buffer;
  used: number;
}

export const TAIL_CHUNK_BYTES = 1024 * 1024;
/** Evicted chunks kept for reuse; more are left to the garbage collector. */
const FREE_CHUNKS_MAX = 4;

/**
 * The chunks a reader's views point into, released together when the views are no longer used (for a pull: once
 * its response has been written to the socket). Releasing twice is harmless; never releasing only costs reuse.
 */
/** Pins for readPinned: released once the reader no longer uses its views. */
export type TailPins = ViewPins<TailChunk>;

export class TailCache {
  private chunks: TailChunk[] = [];
  /** Index of the oldest live chunk (entries before it are evicted; compacted lazily). */
  private head = 0;
  private retainedBytes = 0;
  private readonly recycler: BufferRecycler<TailChunk>;

  constructor(
    private readonly capacityBytes: number,
    chunkBytes = TAIL_CHUNK_BYTES,
  ) {
    this.recycler = new BufferRecycler<TailChunk>(chunkBytes, FREE_CHUNKS_MAX, (c) => c.buf);
  }

  /** Chunk buffers taken from the free list instead of allocated (for tests and the stop log line). */
  get reusedChunks(): number {
    return this.recycler.reused;
  }

  /**
   * Space for `size` bytes that will live at commit-log `offset` (>= the end of everything reserved so far).
   * Returns the chunk buffer and the position inside it.
   */
  reserve(offset: number, size: number): { buf: Buffer; pos: number } {
    const last = this.chunks.length > this.head ? this.chunks[this.chunks.length - 1]! : undefined;
    if (last && last.base + last.used === offset && last.buf.length - last.used >= size) {
      const pos = last.used;
      last.used += size;
      this.retainedBytes += size;
      return { buf: last.buf, pos };
    }
    const buf = this.recycler.take(size);
    const chunk: TailChunk = { base: offset, buf, used: size, pins: 0, shared: false, retired: false };
    this.chunks.push(chunk);
    this.retainedBytes += size;
    return { buf: chunk.buf, pos: 0 };
  }

  /** Zero-copy view of [offset, offset+size) if it lies inside one retained chunk; its chunk is never reused. */
  read(offset: number, size: number): Buffer | undefined {
    const c = this.chunkOf(offset, size);
    if (!c) return undefined;
    c.shared = true;
    return c.buf.subarray(offset - c.base, offset - c.base + size);
  }

  /** read() for a reader that releases `pins` once it no longer uses the view: the chunk may then be reused. */
  readPinned(offset: number, size: number, pins: TailPins): Buffer | undefined {
    const c = this.chunkOf(offset, size);
    if (!c) return undefined;
    pins.add(c);
    return c.buf.subarray(offset - c.base, offset - c.base + size);
  }

  /** A pin set for readPinned. */
  newPins(): TailPins {
    return this.recycler.newPins();
  }

  /**
   * The newest chunk starting at or below `offset` (chunks are kept in ascending base order), if it holds the
   * range. A backlog read far behind the tail asks for every record: a binary search, not a walk over 64 chunks.
   */
  private chunkOf(offset: number, size: number): TailChunk | undefined {
    const chunks = this.chunks;
    let lo = this.head;
    let hi = chunks.length - 1;
    if (hi < lo || offset < chunks[lo]!.base) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (chunks[mid]!.base <= offset) lo = mid;
      else hi = mid - 1;
    }
    const c = chunks[lo]!;
    return offset - c.base + size <= c.used ? c : undefined;
  }

  /** Lowest offset still retained (Infinity when empty). */
  get startOffset(): number {
    return this.chunks.length > this.head ? this.chunks[this.head]!.base : Infinity;
  }

  get bytes(): number {
    return this.retainedBytes;
  }

  /** Drops the oldest chunks while over capacity; only chunks wholly below `writtenOffset` and not the newest. */
  evict(writtenOffset: number): void {
    while (this.retainedBytes > this.capacityBytes && this.chunks.length - this.head > 1) {
      const c = this.chunks[this.head]!;
      if (c.base + c.used > writtenOffset) break;
      this.retainedBytes -= c.used;
      this.chunks[this.head] = undefined as unknown as TailChunk;
      this.head++;
      this.recycler.retire(c);
    }
    if (this.head > 64 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Forgets everything reserved at or beyond `offset` (the log rewound there). The chunks cut off are not reused:
   * the failed write may still have their bytes in flight.
   */
  truncate(offset: number): void {
    while (this.chunks.length > this.head) {
      const c = this.chunks[this.chunks.length - 1]!;
      if (c.base >= offset) {
        this.retainedBytes -= c.used;
        c.shared = true;
        this.chunks.pop();
        continue;
      }
      const keep = Math.max(0, Math.min(c.used, offset - c.base));
      this.retainedBytes -= c.used - keep;
      c.used = keep;
      break;
    }
  }

  /** Forgets everything (recovery repositions the log, or the log closes); nothing is reused after this. */
  clear(): void {
    for (let i = this.head; i < this.chunks.length; i++) this.chunks[i]!.shared = true;
    this.chunks = [];
    this.head = 0;
    this.retainedBytes = 0;
    this.recycler.clear();
  }
}
