// Which timer-topic queue offsets are done (delivered, re-parked or dropped as malformed), and, per block of
// offsets, the earliest action time of the entries that are neither done nor in the due-soon heap.
// Both cost memory in proportion to the span between the lowest pending offset and the queue end:
// 1 bit + 1/64 byte per offset.

/** Offsets per block of the earliest-action index (10 KiB of consume queue). */
export const BLOCK_ENTRIES = 512;
const WORD_BITS = 32;
/** Compact once this many whole words lie below the low watermark. */
const COMPACT_WORDS = 1024;

/**
 * Done queue offsets: everything below `low` is done; above it, a bitmap. `low` is the persisted progress
 * (Java: TimerCheckpoint.lastTimerQueueOffset) and the bitmap makes out-of-order completion survive a restart.
 */
export class DoneOffsets {
  /** Lowest offset not known to be done. */
  low: number;
  /** Offset of bit 0 of words[0]; a multiple of 32, ≤ low. */
  private base: number;
  private words: Uint32Array;

  constructor(low: number, base = low - (low % WORD_BITS), words = new Uint32Array(64)) {
    this.low = low;
    this.base = base;
    this.words = words;
    this.advance();
  }

  get memoryBytes(): number {
    return this.words.byteLength;
  }

  has(offset: number): boolean {
    if (offset < this.low) return true;
    const bit = offset - this.base;
    const w = Math.floor(bit / WORD_BITS);
    return w < this.words.length && (this.words[w]! & (1 << (bit % WORD_BITS))) !== 0;
  }

  /** Marks one offset done; returns true when `low` moved. */
  set(offset: number): boolean {
    if (offset < this.low) return false;
    const bit = offset - this.base;
    const w = Math.floor(bit / WORD_BITS);
    if (w >= this.words.length) this.grow(w + 1);
    this.words[w] = this.words[w]! | (1 << (bit % WORD_BITS));
    return offset === this.low ? this.advance() : false;
  }

  /** Raises `low` (the queue's min offset moved past it, or the queue was truncated below it). */
  raiseLow(offset: number): void {
    if (offset <= this.low) return;
    this.low = offset;
    this.advance();
  }

  /** Forgets every done mark at or above `offset` and lowers `low` to it if needed (queue truncated). */
  truncate(offset: number): void {
    if (offset < this.low) this.low = offset;
    if (offset < this.base) {
      this.base = offset - (offset % WORD_BITS);
      this.words = new Uint32Array(64);
      return;
    }
    const bit = offset - this.base;
    const w = Math.floor(bit / WORD_BITS);
    if (w < this.words.length) {
      this.words[w] = this.words[w]! & ((1 << (bit % WORD_BITS)) - 1);
      this.words.fill(0, w + 1);
    }
  }

  private advance(): boolean {
    const start = this.low;
    for (;;) {
      const bit = this.low - this.base;
      const w = Math.floor(bit / WORD_BITS);
      if (w >= this.words.length) break;
      const word = this.words[w]!;
      if ((bit % WORD_BITS) === 0 && word === 0xffffffff) {
        this.low += WORD_BITS;
        continue;
      }
      if ((word & (1 << (bit % WORD_BITS))) === 0) break;
      this.low++;
    }
    const deadWords = Math.floor((this.low - this.base) / WORD_BITS);
    if (deadWords >= COMPACT_WORDS || (deadWords > 0 && deadWords * 2 >= this.words.length)) {
      this.words.copyWithin(0, deadWords);
      this.words.fill(0, this.words.length - deadWords);
      this.base += deadWords * WORD_BITS;
      if (this.words.length > 64 && this.usedWords() < this.words.length / 4) this.words = this.words.slice(0, this.words.length / 2);
    }
    return this.low !== start;
  }

  private usedWords(): number {
    let n = this.words.length;
    while (n > 0 && this.words[n - 1] === 0) n--;
    return n;
  }

  private grow(minWords: number): void {
    let cap = this.words.length;
    while (cap < minWords) cap *= 2;
    const next = new Uint32Array(cap);
    next.set(this.words);
    this.words = next;
  }

  /** Persisted form: `low`, the bitmap's base offset and its words (little-endian), trailing zeros cut. */
  encode(): { queueOffset: number; bitmapBase: number; bitmap: string } {
    const used = this.usedWords();
    const buf = Buffer.allocUnsafe(used * 4);
    for (let i = 0; i < used; i++) buf.writeUInt32LE(this.words[i]!, i * 4);
    return { queueOffset: this.low, bitmapBase: this.base, bitmap: buf.toString('base64') };
  }

  static decode(queueOffset: number, bitmapBase: number, bitmap: string): DoneOffsets {
    const buf = Buffer.from(bitmap, 'base64');
    const words = new Uint32Array(Math.max(64, Math.ceil(buf.length / 4)));
    for (let i = 0; i + 4 <= buf.length; i += 4) words[i / 4] = buf.readUInt32LE(i);
    if (bitmapBase % WORD_BITS !== 0 || bitmapBase > queueOffset) return new DoneOffsets(queueOffset);
    return new DoneOffsets(queueOffset, bitmapBase, words);
  }
}

/**
 * Per block of BLOCK_ENTRIES offsets, a lower bound of the action times of its pending entries that are not in
 * the heap (+Infinity: none; -Infinity: unknown, read the block). A scan reads only blocks whose bound falls
 * inside its window, so the consume queue is not re-read in full every time the window moves.
 */
export class BlockMins {
  private mins = new Float64Array(64).fill(Number.POSITIVE_INFINITY);
  private baseBlock = 0;

  get memoryBytes(): number {
    return this.mins.byteLength;
  }

  static blockOf(offset: number): number {
    return Math.floor(offset / BLOCK_ENTRIES);
  }

  get(block: number): number {
    const i = block - this.baseBlock;
    return i >= 0 && i < this.mins.length ? this.mins[i]! : Number.POSITIVE_INFINITY;
  }

  set(block: number, value: number): void {
    const i = this.index(block);
    if (i >= 0) this.mins[i] = value;
  }

  note(block: number, actionMs: number): void {
    const i = this.index(block);
    if (i >= 0 && actionMs < this.mins[i]!) this.mins[i] = actionMs;
  }

  /** Forgets blocks below `block` (all their offsets are done). */
  dropBelow(block: number): void {
    const dead = block - this.baseBlock;
    if (dead <= 0) return;
    if (dead >= this.mins.length) {
      this.mins.fill(Number.POSITIVE_INFINITY);
    } else {
      this.mins.copyWithin(0, dead);
      this.mins.fill(Number.POSITIVE_INFINITY, this.mins.length - dead);
    }
    this.baseBlock = block;
  }

  private index(block: number): number {
    const i = block - this.baseBlock;
    if (i < 0) return -1;
    if (i >= this.mins.length) {
      let cap = this.mins.length;
      while (cap <= i) cap *= 2;
      const next = new Float64Array(cap).fill(Number.POSITIVE_INFINITY);
      next.set(this.mins);
      this.mins = next;
    }
    return i;
  }
}
