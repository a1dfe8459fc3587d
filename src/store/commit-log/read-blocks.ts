// Blocks of the commit log read whole for pulls beyond the in-memory tail, kept for the pulls that come next.
//
// The records of one queue are interleaved with those of every other queue written at the same time, so a pull
// of 32 records from one of 16 queues touches 32 records ~16 records apart: 32 reads. Its neighbours' pulls touch
// the same stretch of the log a moment later. When a pull has several records in one block, the block is read
// once (one positional read instead of one per record) and the pulls of the other queues are served from it as
// views, the way Java's pull threads copy out of one mapped file. Blocks are never written to after they are read
// (commit-log bytes do not change below the written offset), and at most `maxBlocks` are kept here.
//
// A block's buffer is read into again for a later block (instead of a fresh 1 MiB allocation, whose external
// memory drove ~15 % of a backlog drain's CPU into the garbage collector) only once no view of it can still be in
// use, as the tail cache does with its chunks: views taken with pins (the pull path, released once the response
// is written) are counted, and a view handed out without pins marks its block as never to be reused. So a view of
// block memory must come from get() (never from a block's buffer directly), and a pinned one must not be used
// after its pins are released.

import { BufferRecycler, type Reusable, type ViewPins } from './reusable-buffers.js';

/** Block size: the commit-log offsets [k * BLOCK_BYTES, (k + 1) * BLOCK_BYTES), clipped to the segment and written end. */
export const READ_BLOCK_BYTES = 1024 * 1024;
/** Blocks kept (least recently used dropped first). */
export const READ_BLOCKS_MAX = 16;
/** A pull's records in one block that make reading the whole block worth it. */
export const READ_BLOCK_MIN_RECORDS = 4;
/** ... and whose records fill at least 1/this of the stretch of the log they lie in. */
export const READ_BLOCK_MIN_DENSITY = 32;
/** Buffers of blocks out of the LRU kept for the next block reads; more are left to the garbage collector. */
const FREE_BLOCKS_MAX = 4;
/** Blocks whose demand by sparse pulls is remembered (see want); the least recently wanted is forgotten first. */
const DEMAND_BLOCKS_MAX = 256;
/** How many blocks' outcomes (did sparse pulls use enough of them?) are remembered, and how many make a forecast. */
const OUTCOMES_MAX = 16;
const OUTCOMES_MIN = 8;
/** Share of the remembered outcomes that must have paid for a block to be read whole at its first sparse want. */
const PAID_SHARE_TO_FORECAST = 0.75;

interface Block extends Reusable {
  /** Commit-log offset of buf[0] (a block clipped at a segment start begins past k * BLOCK_BYTES). */
  start: number;
  /** The bytes read (a view of `mem` when the block is clipped). */
  buf: Buffer;
  /** The allocation `buf` lies in: what goes back to the free list. */
  mem: Buffer;
  /** Sparse pulls wanted records of it before it was read: its outcome is remembered when it leaves (see want). */
  sparse: boolean;
  /** Bytes of its records wanted before it was read plus those of the views handed out since. */
  used: number;
}

/** The blocks a reader's views point into (for a pull: released once its response has been written to the socket). */
export type BlockPins = ViewPins<Block>;

export class ReadBlocks {
  /** Block index (offset / blockBytes) to block, in least-recently-used-first order. */
  private readonly blocks = new Map<number, Block>();
  /** Moves on each cut (dropFrom, clear): a block read that started before one is not kept. */
  generation = 0;
  /** Key of the block last put or got (the newest in `blocks`, so a get of it need not move it); -1 if none. */
  private newestKey = -1;
  /** Buffers of blockBytes no view can use any more, for the next block reads. */
  private readonly recycler: BufferRecycler<Block>;
  /** Block key to the bytes of its records that sparse pulls have wanted since it was last kept (see want). */
  private readonly demand = new Map<number, number>();
  /** Whether each of the last sparse-wanted blocks paid (its records used reached 1/minDensity of it), oldest first. */
  private readonly outcomes: boolean[] = [];
  private paidOutcomes = 0;

  constructor(
    readonly blockBytes = READ_BLOCK_BYTES,
    private readonly maxBlocks = READ_BLOCKS_MAX,
    private readonly minDensity = READ_BLOCK_MIN_DENSITY,
  ) {
    this.recycler = new BufferRecycler<Block>(blockBytes, FREE_BLOCKS_MAX, (b) => b.mem);
  }

  /** Block buffers taken from the free list instead of allocated (for tests and the stats). */
  get reusedBuffers(): number {
    return this.recycler.reused;
  }

  /**
   * A buffer of at least `size` bytes to read a block into, to be handed to put() (or giveBack() if not kept): a
   * free one when `size` fits blockBytes and one is free, else a fresh one (blockBytes long, so it can be reused).
   */
  allocate(size: number): Buffer {
    return this.recycler.take(size);
  }

  /** A buffer from allocate() that was not put (the read failed short or was overtaken by a cut): no view of it exists. */
  giveBack(mem: Buffer): void {
    this.recycler.giveBack(mem);
  }

  /** BlockPins for get(). */
  newPins(): BlockPins {
    return this.recycler.newPins();
  }

  /**
   * A view of [offset, offset+size) if a kept block holds all of it. With `pins` the block's buffer may be reused
   * once they are released (and the block left the LRU); without, it never is.
   */
  get(offset: number, size: number, pins?: BlockPins): Buffer | undefined {
    const b = this.holding(offset, size, pins);
    return b?.buf.subarray(offset - b.start, offset - b.start + size);
  }

  /**
   * The kept block holding all of [offset, offset+size), pinned as get() pins a view of it, or undefined: a scan
   * that looks at many records and takes few reads them in place (at offset - start of its bytes) and makes views
   * only of those it takes. Those views must come from the block's bytes while the pins hold.
   */
  holding(offset: number, size: number, pins?: BlockPins): { readonly start: number; readonly buf: Buffer } | undefined {
    const key = Math.floor(offset / this.blockBytes);
    const b = this.blocks.get(key);
    if (!b || offset < b.start || offset + size > b.start + b.buf.length) return undefined;
    // A scan reads hundreds of records from one block in a row: move it to the newest end only once.
    if (key !== this.newestKey) {
      this.blocks.delete(key);
      this.blocks.set(key, b);
      this.newestKey = key;
    }
    if (pins) pins.add(b);
    else b.shared = true;
    b.used += size;
    return b;
  }

  /**
   * Keeps the bytes read at `start` (within one block) as that block, replacing a shorter read of it. `mem`: the
   * allocation `buf` lies in, from allocate() (its buffer is then reused once no view of the block is in use).
   */
  put(start: number, buf: Buffer, mem: Buffer = buf): void {
    const key = Math.floor(start / this.blockBytes);
    const replaced = this.blocks.get(key);
    if (replaced) {
      this.blocks.delete(key);
      this.recycler.retire(replaced);
    }
    const wanted = this.demand.get(key);
    this.blocks.set(key, {
      start, buf, mem, pins: 0, shared: false, retired: false, sparse: wanted !== undefined, used: replaced?.used ?? wanted ?? 0,
    });
    this.newestKey = key;
    this.demand.delete(key);
    if (this.blocks.size > this.maxBlocks) {
      const oldest = this.blocks.keys().next().value!;
      const b = this.blocks.get(oldest)!;
      this.blocks.delete(oldest);
      if (b.sparse) this.remember(b.used * this.minDensity >= this.blockBytes);
      this.recycler.retire(b);
    }
  }

  /**
   * Counts `bytes` of records at `offset` that a sparse pull wants from a block not kept, and says whether to read
   * that block whole now. One sparse pull (a filter taking 1 record in 8 of one queue in 16) wants too little of a
   * block to pay for reading it whole, but the pulls of the other queues want the rest of their records from the
   * same stretch of the log: once what they want together reaches 1/minDensity of the block, it pays. And when
   * most of the last blocks read that way were used that much by the time they left (the queues' consumers move
   * through the log together), the next one is read at its first want, instead of the first pull into each block
   * reading its records one by one. A lone sparse reader never gets there: its blocks are never used enough.
   */
  want(offset: number, bytes: number): boolean {
    const key = Math.floor(offset / this.blockBytes);
    const total = (this.demand.get(key) ?? 0) + bytes;
    this.demand.delete(key);
    this.demand.set(key, total);
    if (this.demand.size > DEMAND_BLOCKS_MAX) {
      // Forgotten without having been read: its records were not wanted enough.
      this.demand.delete(this.demand.keys().next().value!);
      this.remember(false);
    }
    if (total * this.minDensity >= this.blockBytes) return true;
    return this.outcomes.length >= OUTCOMES_MIN && this.paidOutcomes >= PAID_SHARE_TO_FORECAST * this.outcomes.length;
  }

  private remember(paid: boolean): void {
    this.outcomes.push(paid);
    if (paid) this.paidOutcomes++;
    if (this.outcomes.length > OUTCOMES_MAX && this.outcomes.shift()) this.paidOutcomes--;
  }

  /** Forgets every block holding bytes at or beyond `offset` (the log was cut back there). */
  dropFrom(offset: number): void {
    this.generation++;
    this.newestKey = -1;
    for (const [key, b] of this.blocks) {
      if (b.start + b.buf.length > offset) {
        this.blocks.delete(key);
        this.recycler.retire(b);
      }
    }
  }

  /** Forgets everything (the log closes or starts over); no buffer is reused after this. */
  clear(): void {
    this.generation++;
    this.newestKey = -1;
    for (const b of this.blocks.values()) b.shared = true;
    this.blocks.clear();
    this.demand.clear();
    this.outcomes.length = 0;
    this.paidOutcomes = 0;
    this.recycler.clear();
  }

  get size(): number {
    return this.blocks.size;
  }
}
