// Write-through memory of the newest commit-log bytes. Records are encoded straight into these chunks, the
// writer writes chunk slices, and readers of recent records get zero-copy views. Chunks are never reused,
// so a view handed out stays valid after eviction.

interface Chunk {
  /** Commit-log offset of buf[0]. */
  base: number;
  buf: Buffer;
  used: number;
}

export const TAIL_CHUNK_BYTES = 1024 * 1024;

export class TailCache {
  private chunks: Chunk[] = [];
  /** Index of the oldest live chunk (entries before it are evicted; compacted lazily). */
  private head = 0;
  private retainedBytes = 0;

  constructor(
    private readonly capacityBytes: number,
    private readonly chunkBytes = TAIL_CHUNK_BYTES,
  ) {}

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
    const chunk: Chunk = { base: offset, buf: Buffer.allocUnsafe(Math.max(this.chunkBytes, size)), used: size };
    this.chunks.push(chunk);
    this.retainedBytes += size;
    return { buf: chunk.buf, pos: 0 };
  }

  /** Zero-copy view of [offset, offset+size) if it lies inside one retained chunk. */
  read(offset: number, size: number): Buffer | undefined {
    for (let i = this.chunks.length - 1; i >= this.head; i--) {
      const c = this.chunks[i]!;
      if (offset >= c.base) {
        const start = offset - c.base;
        if (start + size <= c.used) return c.buf.subarray(start, start + size);
        return undefined;
      }
    }
    return undefined;
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
      this.chunks[this.head] = undefined as unknown as Chunk;
      this.head++;
    }
    if (this.head > 64 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** Forgets everything reserved at or beyond `offset` (the log rewound there). */
  truncate(offset: number): void {
    while (this.chunks.length > this.head) {
      const c = this.chunks[this.chunks.length - 1]!;
      if (c.base >= offset) {
        this.retainedBytes -= c.used;
        this.chunks.pop();
        continue;
      }
      const keep = Math.max(0, Math.min(c.used, offset - c.base));
      this.retainedBytes -= c.used - keep;
      c.used = keep;
      break;
    }
  }

  /** Forgets everything (recovery repositions the log). */
  clear(): void {
    this.chunks = [];
    this.head = 0;
    this.retainedBytes = 0;
  }
}
