// Blocks of the commit log read whole for pulls beyond the in-memory tail, kept for the pulls that come next.
//
// The records of one queue are interleaved with those of every other queue written at the same time, so a pull
// of 32 records from one of 16 queues touches 32 records ~16 records apart: 32 reads. Its neighbours' pulls touch
// the same stretch of the log a moment later. When a pull has several records in one block, the block is read
// once (one positional read instead of one per record) and the pulls of the other queues are served from it as
// views, the way Java's pull threads copy out of one mapped file. Blocks are never written to after they are read
// (commit-log bytes do not change below the written offset) and never reused: views handed out keep their block
// alive until dropped, and at most `maxBlocks` are kept here.

/** Block size: the commit-log offsets [k * BLOCK_BYTES, (k + 1) * BLOCK_BYTES), clipped to the segment and written end. */
export const READ_BLOCK_BYTES = 1024 * 1024;
/** Blocks kept (least recently used dropped first). */
export const READ_BLOCKS_MAX = 16;
/** A pull's records in one block that make reading the whole block worth it. */
export const READ_BLOCK_MIN_RECORDS = 4;
/** ... and whose records fill at least 1/this of the stretch of the log they lie in. */
export const READ_BLOCK_MIN_DENSITY = 32;

interface Block {
  /** Commit-log offset of buf[0] (a block clipped at a segment start begins past k * BLOCK_BYTES). */
  start: number;
  buf: Buffer;
}

export class ReadBlocks {
  /** Block index (offset / blockBytes) to block, in least-recently-used-first order. */
  private readonly blocks = new Map<number, Block>();
  /** Moves on each cut (dropFrom, clear): a block read that started before one is not kept. */
  generation = 0;
  /** Key of the block last put or got (the newest in `blocks`, so a get of it need not move it); -1 if none. */
  private newestKey = -1;

  constructor(
    readonly blockBytes = READ_BLOCK_BYTES,
    private readonly maxBlocks = READ_BLOCKS_MAX,
  ) {}

  /** A view of [offset, offset+size) if a kept block holds all of it. */
  get(offset: number, size: number): Buffer | undefined {
    const key = Math.floor(offset / this.blockBytes);
    const b = this.blocks.get(key);
    if (!b || offset < b.start || offset + size > b.start + b.buf.length) return undefined;
    // A scan reads hundreds of records from one block in a row: move it to the newest end only once.
    if (key !== this.newestKey) {
      this.blocks.delete(key);
      this.blocks.set(key, b);
      this.newestKey = key;
    }
    return b.buf.subarray(offset - b.start, offset - b.start + size);
  }

  /** Keeps the bytes read at `start` (within one block) as that block, replacing a shorter read of it. */
  put(start: number, buf: Buffer): void {
    const key = Math.floor(start / this.blockBytes);
    this.blocks.delete(key);
    this.blocks.set(key, { start, buf });
    this.newestKey = key;
    if (this.blocks.size > this.maxBlocks) this.blocks.delete(this.blocks.keys().next().value!);
  }

  /** Forgets every block holding bytes at or beyond `offset` (the log was cut back there). */
  dropFrom(offset: number): void {
    this.generation++;
    this.newestKey = -1;
    for (const [key, b] of this.blocks) if (b.start + b.buf.length > offset) this.blocks.delete(key);
  }

  clear(): void {
    this.generation++;
    this.newestKey = -1;
    this.blocks.clear();
  }

  get size(): number {
    return this.blocks.size;
  }
}
