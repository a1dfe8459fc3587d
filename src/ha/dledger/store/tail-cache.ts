// Bounded in-memory copies of the newest log bytes and index units, so that the Raft pushers (reading the entries
// just appended) and the broker's dispatch (reading what was just committed) are served without syscalls. The
// files stay the truth: a miss reads them.

/** The newest `capacityBytes` of data positions [start, end), kept in a ring. Contiguous by construction. */
export class DataTailCache {
  private readonly ring: Buffer;
  private start = 0;
  private end = 0;

  constructor(readonly capacityBytes: number) {
    this.ring = Buffer.alloc(Math.max(0, capacityBytes));
  }

  /** Forgets everything; the next append must start at `pos`. */
  reset(pos: number): void {
    this.start = pos;
    this.end = pos;
  }

  /** Bytes just written at `pos` (restarts the cache when they do not continue it). */
  append(pos: number, src: Buffer): void {
    const cap = this.ring.length;
    if (cap === 0) return;
    if (pos !== this.end) this.reset(pos);
    let from = 0;
    let len = src.length;
    if (len > cap) {
      from = len - cap;
      len = cap;
    }
    const at = (pos + from) % cap;
    const first = Math.min(len, cap - at);
    src.copy(this.ring, at, from, from + first);
    if (first < len) src.copy(this.ring, 0, from + first, from + len);
    this.end = pos + src.length;
    if (this.end - this.start > cap) this.start = this.end - cap;
  }

  /** The log now ends at `pos` (a truncation). */
  truncate(pos: number): void {
    if (pos < this.start) this.reset(pos);
    else if (pos < this.end) this.end = pos;
  }

  /** Drops everything below `pos` (retention, rebuild). */
  dropBelow(pos: number): void {
    if (pos >= this.end) this.reset(pos);
    else if (pos > this.start) this.start = pos;
  }

  /** Copies [pos, pos + len) into `dst` at `dstOff` if all of it is cached. */
  readInto(pos: number, len: number, dst: Buffer, dstOff: number): boolean {
    const cap = this.ring.length;
    if (cap === 0 || pos < this.start || pos + len > this.end) return false;
    const at = pos % cap;
    const first = Math.min(len, cap - at);
    this.ring.copy(dst, dstOff, at, at + first);
    if (first < len) this.ring.copy(dst, dstOff + first, 0, len - first);
    return true;
  }
}

/** Position and size of the newest `capacity` entries, by index (what the index file says, without reading it). */
export class IndexTailCache {
  private readonly pos: Float64Array;
  private readonly size: Int32Array;
  private start = 0;
  private end = 0;

  constructor(readonly capacity: number) {
    this.pos = new Float64Array(Math.max(0, capacity));
    this.size = new Int32Array(Math.max(0, capacity));
  }

  reset(nextIndex: number): void {
    this.start = nextIndex;
    this.end = nextIndex;
  }

  append(index: number, pos: number, size: number): void {
    const cap = this.pos.length;
    if (cap === 0) return;
    if (index !== this.end) this.reset(index);
    this.pos[index % cap] = pos;
    this.size[index % cap] = size;
    this.end = index + 1;
    if (this.end - this.start > cap) this.start = this.end - cap;
  }

  /** The log now ends before `index`. */
  truncate(index: number): void {
    if (index < this.start) this.reset(index);
    else if (index < this.end) this.end = index;
  }

  dropBelow(index: number): void {
    if (index >= this.end) this.reset(index);
    else if (index > this.start) this.start = index;
  }

  /** [pos, size] of `index`, or null when not cached. */
  lookup(index: number): [number, number] | null {
    const cap = this.pos.length;
    if (cap === 0 || index < this.start || index >= this.end) return null;
    return [this.pos[index % cap]!, this.size[index % cap]!];
  }
}
