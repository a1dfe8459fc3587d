// Consume-queue entries read ahead for pulls behind the in-memory tail.
//
// A consumer draining a backlog pulls 32 entries (640 bytes) at a time from the queue's files, one positional read
// per pull, and its next pull asks for the 32 entries after them. So a pull that has to go to disk reads a block of
// READ_AHEAD_ENTRIES from where it starts, and the pulls after it take their entries from that block: one read per
// ~25 pulls instead of one each (Java's pulls read the entries out of the mapped file, without a call). Entries
// below a queue's written index do not change while the store runs (only start-up truncation and repair rewrite
// them, and they drop the queue's block), so a block needs no check beyond its range. Blocks are fresh buffers
// never written again: a view handed out stays valid after its block is dropped. At most `maxBlocks` blocks are
// kept across all queues (least recently used dropped first), each of one to two blocks' entries (a filtered pull's
// window of 800 entries reads 1,600): 4 to 8 MiB with the defaults.
import { CQ_UNIT_SIZE } from '../config.js';

/** Entries read per block: 16,380 bytes. */
export const READ_AHEAD_ENTRIES = 819;
/** Blocks kept, one per queue at most. */
export const READ_AHEAD_BLOCKS_MAX = 256;

interface Block {
  /** Queue offset of the block's first entry. */
  from: number;
  /** Queue offset after its last entry. */
  end: number;
  buf: Buffer;
}

export class EntryReadAhead {
  /** Queue (any object standing for one) to its block, least recently used first. */
  private readonly blocks = new Map<object, Block>();
  /** Reads served from a block (for tests and the stats). */
  hits = 0;

  constructor(
    readonly blockEntries = READ_AHEAD_ENTRIES,
    private readonly maxBlocks = READ_AHEAD_BLOCKS_MAX,
  ) {}

  /** A view of the entries [from, end) of `queue` if its block holds all of them. */
  get(queue: object, from: number, end: number): Buffer | undefined {
    const b = this.blocks.get(queue);
    if (!b || from < b.from || end > b.end) return undefined;
    this.blocks.delete(queue);
    this.blocks.set(queue, b);
    this.hits++;
    return b.buf.subarray((from - b.from) * CQ_UNIT_SIZE, (end - b.from) * CQ_UNIT_SIZE);
  }

  /** Keeps `buf` (whole entries from queue offset `from`, not to be written again) as the block of `queue`. */
  put(queue: object, from: number, buf: Buffer): void {
    this.blocks.delete(queue);
    this.blocks.set(queue, { from, end: from + Math.floor(buf.length / CQ_UNIT_SIZE), buf });
    if (this.blocks.size > this.maxBlocks) this.blocks.delete(this.blocks.keys().next().value!);
  }

  /** Forgets the block of `queue` (its entries were rewritten or its files are gone). */
  drop(queue: object): void {
    this.blocks.delete(queue);
  }

  get size(): number {
    return this.blocks.size;
  }
}
