// One index file, byte-for-byte Java's layout (store/index/IndexFile.java, IndexHeader.java):
//   header, 40 bytes: beginTimestamp 8 @0 | endTimestamp 8 @8 | beginPhyOffset 8 @16 | endPhyOffset 8 @24 |
//                     hashSlotCount 4 @32 | indexCount 4 @36
//   hash slots:       hashSlotNum × int32 from @40 — number of the newest entry of the slot's chain (0: none)
//   entries:          indexNum × 20 bytes from @40 + 4·hashSlotNum, entry n at + 20·n —
//                     keyHash 4 | phyOffset 8 | timeDiff 4 (seconds since beginTimestamp) | prevIndex 4
// Entry numbers start at 1 (indexCount starts at 1, so 0 means "none"). The file is sparse.
//
// Node has no mmap, so writes are positional and batched: new entries go to in-memory chunks that the index
// service's writer appends once per event-loop turn; the writable file keeps its slot table in memory
// (4·hashSlotNum bytes, big-endian as on disk) and writes dirty slot pages together with the header when the
// index is flushed. The header on disk therefore always describes slots and entries that were written before
// it. Read-only (full) files are read with small positional reads.
import path from 'node:path';
import { fs, closeFile, closeOpeningFile, closeOpeningFileSync, fdatasync, ftruncate, openFile, readFully, readFullySync, RW, RW_CREATE, writevAll } from '../io.js';
import { readInt64, writeInt32, writeInt64 } from '../record.js';
import { javaStringHashCode } from '../../common/java-hash.js';

export const INDEX_HEADER_SIZE = 40;
export const HASH_SLOT_SIZE = 4;
export const INDEX_ENTRY_SIZE = 20;
const INVALID_INDEX = 0;
const INT32_MAX = 0x7fffffff;

export const IndexHeaderPos = Object.freeze({
  BEGIN_TIMESTAMP: 0,
  END_TIMESTAMP: 8,
  BEGIN_PHY_OFFSET: 16,
  END_PHY_OFFSET: 24,
  HASH_SLOT_COUNT: 32,
  INDEX_COUNT: 36,
});

/** Slot-table bytes written per dirty page, and the largest run of pages written in one call. */
const SLOT_PAGE_BYTES = 4096;
const MAX_SLOT_RUN_PAGES = 256;
/** Entries per in-memory write chunk. */
const CHUNK_ENTRIES = 512;

export interface IndexGeometry {
  hashSlotNum: number;
  indexNum: number;
}

export function indexFileSize(g: IndexGeometry): number {
  return INDEX_HEADER_SIZE + g.hashSlotNum * HASH_SLOT_SIZE + g.indexNum * INDEX_ENTRY_SIZE;
}

/** IndexFile.indexKeyHashMethod: |String.hashCode|, and 0 for Integer.MIN_VALUE (whose Math.abs stays negative). */
export function indexKeyHash(key: string): number {
  return indexKeyHashOf(javaStringHashCode(key));
}

/** indexKeyHash from the key's String.hashCode. */
export function indexKeyHashOf(javaHash: number): number {
  return javaHash === -0x80000000 ? 0 : Math.abs(javaHash);
}

/** UtilAll.timeMillisToHumanString: `yyyyMMddHHmmssSSS` in local time. */
export function indexFileName(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${p(d.getFullYear(), 4)}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}` +
    `${p(d.getSeconds())}${p(d.getMilliseconds(), 3)}`;
}

export function isIndexFileName(name: string): boolean {
  return /^\d{17}$/.test(name);
}

export interface IndexEntry {
  keyHash: number;
  phyOffset: number;
  timeDiff: number;
  prevIndex: number;
}

interface EntryChunk {
  /** Entry number of buf[0]. */
  first: number;
  count: number;
  buf: Buffer;
  /** Handed to the writer: no more appends. */
  submitted: boolean;
}

/** A snapshot of what one flush writes (taken synchronously, written later). */
export interface IndexFlushPlan {
  writes: Array<{ position: number; buf: Buffer }>;
  /** Entries below this number must be written before the header. */
  entriesBefore: number;
}

export class IndexFile {
  beginTimestamp = 0;
  endTimestamp = 0;
  beginPhyOffset = 0;
  endPhyOffset = 0;
  hashSlotCount = 0;
  indexCount = 1;

  fd = -1;
  readonly ready: Promise<void>;
  readonly name: string;
  /** Entries below this number are on disk (the writer's pwrite has returned). */
  writtenCount: number;

  private readonly entriesPos: number;
  private slotTable: Buffer | null = null;
  private dirtyPages: Uint8Array | null = null;
  private dirtyPageCount = 0;
  private headerDirty = false;
  private chunks: EntryChunk[] = [];
  private writtenWaiters: Array<{ n: number; resolve: () => void; reject: (err: Error) => void }> = [];
  private writeError: Error | null = null;
  private refs = 0;
  private destroyed = false;
  private closed = false;

  private constructor(
    readonly filePath: string,
    readonly geometry: IndexGeometry,
    init: (f: IndexFile) => Promise<void> | void,
  ) {
    this.name = path.basename(filePath);
    this.entriesPos = INDEX_HEADER_SIZE + geometry.hashSlotNum * HASH_SLOT_SIZE;
    this.writtenCount = 1;
    const r = init(this);
    this.ready = r instanceof Promise ? r : Promise.resolve();
    this.ready.catch(() => {});
  }

  get sizeBytes(): number {
    return indexFileSize(this.geometry);
  }

  /**
   * A new, empty, writable file (created asynchronously, sparse). Like Java's constructor, a file that follows
   * another starts with begin = end = the previous file's end offset and time.
   */
  static create(dir: string, name: string, g: IndexGeometry, prevEndPhyOffset: number, prevEndTimestamp: number): IndexFile {
    const filePath = path.join(dir, name);
    const size = indexFileSize(g);
    const f = new IndexFile(filePath, g, async (self) => {
      await fs.promises.mkdir(dir, { recursive: true });
      const fd = await openFile(filePath, RW_CREATE);
      try {
        await ftruncate(fd, size);
      } catch (err) {
        await closeFile(fd).catch(() => {});
        throw err;
      }
      if (self.closed) {
        await closeFile(fd).catch(() => {});
        return;
      }
      self.fd = fd;
    });
    if (prevEndPhyOffset > 0) f.beginPhyOffset = f.endPhyOffset = prevEndPhyOffset;
    if (prevEndTimestamp > 0) f.beginTimestamp = f.endTimestamp = prevEndTimestamp;
    f.headerDirty = true;
    f.slotTable = Buffer.alloc(g.hashSlotNum * HASH_SLOT_SIZE);
    f.dirtyPages = new Uint8Array(Math.ceil(f.slotTable.length / SLOT_PAGE_BYTES));
    return f;
  }

  /**
   * Opens an existing file at start-up and reads its header (IndexHeader.load). Returns null if its size is not
   * what maxHashSlotNum / maxIndexNum imply (cut short, or written with other settings).
   */
  static openSync(filePath: string, g: IndexGeometry): IndexFile | null {
    const fd = fs.openSync(filePath, RW);
    if (fs.fstatSync(fd).size !== indexFileSize(g)) {
      fs.closeSync(fd);
      return null;
    }
    const f = new IndexFile(filePath, g, (self) => {
      self.fd = fd;
    });
    const h = Buffer.alloc(INDEX_HEADER_SIZE);
    readFullySync(fd, h, 0, INDEX_HEADER_SIZE, 0);
    f.beginTimestamp = readInt64(h, IndexHeaderPos.BEGIN_TIMESTAMP);
    f.endTimestamp = readInt64(h, IndexHeaderPos.END_TIMESTAMP);
    f.beginPhyOffset = readInt64(h, IndexHeaderPos.BEGIN_PHY_OFFSET);
    f.endPhyOffset = readInt64(h, IndexHeaderPos.END_PHY_OFFSET);
    f.hashSlotCount = h.readInt32BE(IndexHeaderPos.HASH_SLOT_COUNT);
    f.indexCount = h.readInt32BE(IndexHeaderPos.INDEX_COUNT);
    if (f.indexCount <= 0) f.indexCount = 1;
    // A count beyond capacity cannot have been written by a sane writer; clamp so reads stay in the file.
    if (f.indexCount > g.indexNum) f.indexCount = g.indexNum;
    f.writtenCount = f.indexCount;
    return f;
  }

  /**
   * Makes a loaded file writable again (start-up): reads its slot table into memory. With `repair` (after an
   * abnormal stop) a slot naming an entry at or beyond indexCount — written after the header of the last
   * flush — is walked back along the entries' prev links to the newest entry the header covers; when the walk
   * breaks (an entry that never reached the disk), the covered entries are scanned for it instead.
   * Returns the number of slots repaired.
   */
  loadSlotsSync(repair: boolean): number {
    const table = Buffer.alloc(this.geometry.hashSlotNum * HASH_SLOT_SIZE);
    this.slotTable = table;
    this.dirtyPages = new Uint8Array(Math.ceil(table.length / SLOT_PAGE_BYTES));
    // An empty file has nothing to read (and after a clean stop nothing to repair).
    if (this.indexCount <= 1 && !repair) return 0;
    readFullySync(this.fd, table, 0, table.length, INDEX_HEADER_SIZE);
    if (!repair) return 0;
    // Most slots are 0 or valid: test them through a native-endian view, decode only the rest.
    const words = new Int32Array(table.buffer, table.byteOffset, this.geometry.hashSlotNum);
    const e = Buffer.alloc(INDEX_ENTRY_SIZE);
    let repaired = 0;
    const lost = new Set<number>();
    for (let s = 0; s < words.length; s++) {
      if (words[s] === 0) continue;
      let v = table.readInt32BE(s * HASH_SLOT_SIZE);
      if (v > INVALID_INDEX && v < this.indexCount) continue;
      let guard = 64;
      while (v > INVALID_INDEX && v >= this.indexCount && v < this.geometry.indexNum && guard-- > 0) {
        readFullySync(this.fd, e, 0, INDEX_ENTRY_SIZE, this.entriesPos + v * INDEX_ENTRY_SIZE);
        const prev = e.readInt32BE(16);
        if (e.readInt32BE(0) % this.geometry.hashSlotNum !== s || prev >= v) {
          v = INVALID_INDEX;
          break;
        }
        v = prev;
      }
      if (v < INVALID_INDEX || v >= this.indexCount) v = INVALID_INDEX;
      // The walk broke (an entry after the header never reached the disk): the slot's covered chain is found by
      // scanning the covered entries below, not dropped with it.
      if (v === INVALID_INDEX) lost.add(s);
      table.writeInt32BE(v, s * HASH_SLOT_SIZE);
      const page = Math.floor((s * HASH_SLOT_SIZE) / SLOT_PAGE_BYTES);
      if (this.dirtyPages[page] === 0) {
        this.dirtyPages[page] = 1;
        this.dirtyPageCount++;
      }
      repaired++;
    }
    if (lost.size > 0) this.findNewestEntriesSync(lost, table);
    if (repaired > 0) this.headerDirty = true;
    return repaired;
  }

  /** Sets each slot of `slots` to its newest entry below indexCount (scanning back in chunks), if it has one. */
  private findNewestEntriesSync(slots: Set<number>, table: Buffer): void {
    const chunkEntries = 4096;
    const buf = Buffer.alloc(chunkEntries * INDEX_ENTRY_SIZE);
    for (let end = this.indexCount; end > 1 && slots.size > 0; end -= chunkEntries) {
      const start = Math.max(1, end - chunkEntries);
      const n = end - start;
      readFullySync(this.fd, buf, 0, n * INDEX_ENTRY_SIZE, this.entriesPos + start * INDEX_ENTRY_SIZE);
      for (let i = n - 1; i >= 0 && slots.size > 0; i--) {
        const slot = buf.readInt32BE(i * INDEX_ENTRY_SIZE) % this.geometry.hashSlotNum;
        if (!slots.has(slot)) continue;
        slots.delete(slot);
        table.writeInt32BE(start + i, slot * HASH_SLOT_SIZE);
      }
    }
  }

  /**
   * How many of the newest entries (at most `limit`) point at `phyOffset` (start-up only): the keys of the last
   * message that made it into this file before it filled up.
   */
  countTailEntriesAtSync(phyOffset: number, limit = 4096): number {
    const e = Buffer.alloc(INDEX_ENTRY_SIZE);
    let n = 0;
    for (let i = this.indexCount - 1; i >= 1 && n < limit; i--) {
      readFullySync(this.fd, e, 0, INDEX_ENTRY_SIZE, this.entriesPos + i * INDEX_ENTRY_SIZE);
      if (readInt64(e, 4) !== phyOffset) break;
      n++;
    }
    return n;
  }

  isWriteFull(): boolean {
    return this.indexCount >= this.geometry.indexNum;
  }

  /** Whether the slot table is in memory (the file takes new keys or has slot pages still to flush). */
  get hasSlotTable(): boolean {
    return this.slotTable !== null;
  }

  get isDirty(): boolean {
    return this.headerDirty || this.dirtyPageCount > 0 || this.chunks.length > 0;
  }

  /** IndexFile.putKey. Returns false when the file is full (the caller rolls to a new file). */
  putKey(key: string, phyOffset: number, storeTimestamp: number): boolean {
    return this.putKeyHash(indexKeyHash(key), phyOffset, storeTimestamp);
  }

  /** putKey with the key's indexKeyHash already computed. */
  putKeyHash(keyHash: number, phyOffset: number, storeTimestamp: number): boolean {
    if (this.indexCount >= this.geometry.indexNum) return false;
    const table = this.slotTable;
    if (!table) throw new Error(`index file ${this.name} is not writable`);
    const slotPos = keyHash % this.geometry.hashSlotNum;
    const slotByte = slotPos * HASH_SLOT_SIZE;
    let slotValue = table.readInt32BE(slotByte);
    if (slotValue <= INVALID_INDEX || slotValue > this.indexCount) slotValue = INVALID_INDEX;

    // Java computes the difference against the header as it is before this put (0 for a fresh first file).
    let timeDiff = Math.trunc((storeTimestamp - this.beginTimestamp) / 1000);
    if (this.beginTimestamp <= 0) timeDiff = 0;
    else if (timeDiff > INT32_MAX) timeDiff = INT32_MAX;
    else if (timeDiff < 0) timeDiff = 0;

    const n = this.indexCount;
    const { buf, pos } = this.reserveEntry(n);
    writeInt32(buf, pos, keyHash);
    writeInt64(buf, pos + 4, phyOffset);
    writeInt32(buf, pos + 12, timeDiff);
    writeInt32(buf, pos + 16, slotValue);

    writeInt32(table, slotByte, n);
    const page = Math.floor(slotByte / SLOT_PAGE_BYTES);
    if (this.dirtyPages![page] === 0) {
      this.dirtyPages![page] = 1;
      this.dirtyPageCount++;
    }
    if (n <= 1) {
      this.beginPhyOffset = phyOffset;
      this.beginTimestamp = storeTimestamp;
    }
    this.hashSlotCount++;
    this.indexCount++;
    this.endPhyOffset = phyOffset;
    this.endTimestamp = storeTimestamp;
    this.headerDirty = true;
    return true;
  }

  private reserveEntry(n: number): { buf: Buffer; pos: number } {
    const last = this.chunks[this.chunks.length - 1];
    if (last && !last.submitted && last.first + last.count === n && (last.count + 1) * INDEX_ENTRY_SIZE <= last.buf.length) {
      const pos = last.count * INDEX_ENTRY_SIZE;
      last.count++;
      return { buf: last.buf, pos };
    }
    const chunk: EntryChunk = { first: n, count: 1, buf: Buffer.allocUnsafe(CHUNK_ENTRIES * INDEX_ENTRY_SIZE), submitted: false };
    this.chunks.push(chunk);
    return { buf: chunk.buf, pos: 0 };
  }

  // ---------------------------------------------------------------- writer side

  /** Entries appended since the last call, as one contiguous write; null when there are none. */
  takeUnwrittenEntries(): { position: number; bufs: Buffer[]; end: number } | null {
    let first = -1;
    let end = -1;
    const bufs: Buffer[] = [];
    for (const c of this.chunks) {
      if (c.submitted) continue;
      c.submitted = true;
      if (first < 0) first = c.first;
      bufs.push(c.buf.subarray(0, c.count * INDEX_ENTRY_SIZE));
      end = c.first + c.count;
    }
    if (first < 0) return null;
    return { position: this.entriesPos + first * INDEX_ENTRY_SIZE, bufs, end };
  }

  /** The writer finished writing every entry below `end`. */
  markWritten(end: number): void {
    let drop = 0;
    while (drop < this.chunks.length && this.chunks[drop]!.first + this.chunks[drop]!.count <= end) drop++;
    if (drop > 0) this.chunks.splice(0, drop);
    if (end > this.writtenCount) this.writtenCount = end;
    if (this.writtenWaiters.length > 0) {
      const keep: typeof this.writtenWaiters = [];
      for (const w of this.writtenWaiters) {
        if (w.n <= this.writtenCount) w.resolve();
        else keep.push(w);
      }
      this.writtenWaiters = keep;
    }
  }

  /** The writer could not write this file's entries: flushes waiting for them fail. */
  markWriteFailed(err: Error): void {
    this.writeError ??= err;
    const waiters = this.writtenWaiters;
    this.writtenWaiters = [];
    for (const w of waiters) w.reject(err);
  }

  private waitWritten(n: number): Promise<void> {
    if (n <= this.writtenCount) return Promise.resolve();
    if (this.writeError) return Promise.reject(this.writeError);
    return new Promise((resolve, reject) => this.writtenWaiters.push({ n, resolve, reject }));
  }

  // ---------------------------------------------------------------- flush

  /** Snapshot of the dirty slot pages and the header (IndexHeader.updateByteBuffer); null if nothing changed. */
  prepareFlush(): IndexFlushPlan | null {
    if (!this.headerDirty && this.dirtyPageCount === 0) return null;
    const writes: IndexFlushPlan['writes'] = [];
    const table = this.slotTable;
    const pages = this.dirtyPages;
    if (table && pages && this.dirtyPageCount > 0) {
      let p = 0;
      while (p < pages.length) {
        if (pages[p] === 0) {
          p++;
          continue;
        }
        const start = p;
        while (p < pages.length && pages[p] === 1 && p - start < MAX_SLOT_RUN_PAGES) pages[p++] = 0;
        const from = start * SLOT_PAGE_BYTES;
        const to = Math.min(p * SLOT_PAGE_BYTES, table.length);
        const copy = Buffer.allocUnsafe(to - from);
        table.copy(copy, 0, from, to);
        writes.push({ position: INDEX_HEADER_SIZE + from, buf: copy });
      }
      this.dirtyPageCount = 0;
    }
    writes.push({ position: 0, buf: this.encodeHeader() });
    this.headerDirty = false;
    return { writes, entriesBefore: this.indexCount };
  }

  encodeHeader(): Buffer {
    const h = Buffer.alloc(INDEX_HEADER_SIZE);
    writeInt64(h, IndexHeaderPos.BEGIN_TIMESTAMP, this.beginTimestamp);
    writeInt64(h, IndexHeaderPos.END_TIMESTAMP, this.endTimestamp);
    writeInt64(h, IndexHeaderPos.BEGIN_PHY_OFFSET, this.beginPhyOffset);
    writeInt64(h, IndexHeaderPos.END_PHY_OFFSET, this.endPhyOffset);
    h.writeInt32BE(this.hashSlotCount, IndexHeaderPos.HASH_SLOT_COUNT);
    h.writeInt32BE(this.indexCount, IndexHeaderPos.INDEX_COUNT);
    return h;
  }

  /** Writes a plan (slot pages, then the header last) once its entries are on disk, then fdatasyncs. */
  async flush(plan: IndexFlushPlan): Promise<void> {
    if (!this.hold()) return;
    try {
      await this.ready;
      await this.waitWritten(plan.entriesBefore);
      if (this.fd < 0) return;
      for (const w of plan.writes) await writevAll(this.fd, [w.buf], w.position);
      await fdatasync(this.fd);
    } catch (err) {
      // Nothing was recorded as durable; write everything again next time.
      this.headerDirty = true;
      if (this.dirtyPages) {
        for (const w of plan.writes) {
          if (w.position === 0) continue;
          const first = (w.position - INDEX_HEADER_SIZE) / SLOT_PAGE_BYTES;
          const n = Math.ceil(w.buf.length / SLOT_PAGE_BYTES);
          for (let p = first; p < first + n; p++) {
            if (this.dirtyPages[p] === 0) {
              this.dirtyPages[p] = 1;
              this.dirtyPageCount++;
            }
          }
        }
      }
      throw err;
    } finally {
      this.release();
    }
  }

  /** Drops the in-memory slot table of a full file whose slots are all on disk. */
  releaseSlotTableIfSealed(): void {
    if (this.slotTable && this.isWriteFull() && this.dirtyPageCount === 0 && !this.headerDirty) {
      this.slotTable = null;
      this.dirtyPages = null;
    }
  }

  // ---------------------------------------------------------------- read

  /** IndexFile.isTimeMatched: [begin, end] overlaps the file's time range. */
  isTimeMatched(begin: number, end: number): boolean {
    const b = this.beginTimestamp;
    const e = this.endTimestamp;
    return (begin < b && end > e) || (begin >= b && begin <= e) || (end >= b && end <= e);
  }

  private async readSlot(slotPos: number, scratch: Buffer): Promise<number> {
    if (this.slotTable) return this.slotTable.readInt32BE(slotPos * HASH_SLOT_SIZE);
    const n = await readFully(this.fd, scratch, 0, HASH_SLOT_SIZE, INDEX_HEADER_SIZE + slotPos * HASH_SLOT_SIZE);
    return n === HASH_SLOT_SIZE ? scratch.readInt32BE(0) : INVALID_INDEX;
  }

  /** Entry `n` (1 ≤ n < indexCount), from the write chunks or the disk. */
  async readEntry(n: number, scratch: Buffer): Promise<IndexEntry | null> {
    for (const c of this.chunks) {
      if (n >= c.first && n < c.first + c.count) return parseEntry(c.buf, (n - c.first) * INDEX_ENTRY_SIZE);
    }
    const got = await readFully(this.fd, scratch, 0, INDEX_ENTRY_SIZE, this.entriesPos + n * INDEX_ENTRY_SIZE);
    return got === INDEX_ENTRY_SIZE ? parseEntry(scratch, 0) : null;
  }

  /**
   * IndexFile.selectPhyOffset: walks the key's hash chain newest first, collecting the offsets of entries with
   * the same hash whose time lies in [begin, end]. Keys are not compared: collisions are returned (clients
   * filter). The caller holds the file.
   */
  async selectPhyOffsets(out: number[], key: string, maxNum: number, begin: number, end: number): Promise<void> {
    const scratch = Buffer.allocUnsafe(INDEX_ENTRY_SIZE);
    const keyHash = indexKeyHash(key);
    const slotValue = await this.readSlot(keyHash % this.geometry.hashSlotNum, scratch);
    if (slotValue <= INVALID_INDEX || slotValue > this.indexCount || this.indexCount <= 1) return;
    for (let next = slotValue; ;) {
      if (out.length >= maxNum) break;
      const e = await this.readEntry(next, scratch);
      if (!e || e.timeDiff < 0) break;
      const timeRead = this.beginTimestamp + e.timeDiff * 1000;
      const timeMatched = timeRead >= begin && timeRead <= end;
      if (e.keyHash === keyHash && timeMatched) out.push(e.phyOffset);
      // Java stops at 0, beyond the count, a self-link, or a time before `begin`. A valid chain only ever
      // points to older (smaller) entries, so anything else is corruption and also stops the walk.
      if (e.prevIndex <= INVALID_INDEX || e.prevIndex > this.indexCount || e.prevIndex >= next || timeRead < begin) break;
      next = e.prevIndex;
    }
  }

  // ---------------------------------------------------------------- lifetime

  /** Keeps the descriptor open while in use (MappedFile.hold); false once the file is being destroyed. */
  hold(): boolean {
    if (this.destroyed) return false;
    this.refs++;
    return true;
  }

  release(): void {
    this.refs--;
    if (this.refs === 0 && this.destroyed) void this.finishDestroy();
  }

  /** Deletes the file once no reader or writer holds it. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.refs === 0) void this.finishDestroy();
  }

  private async finishDestroy(): Promise<void> {
    await this.close().catch(() => {});
    await fs.promises.rm(this.filePath, { force: true }).catch(() => {});
  }

  destroySync(): void {
    this.destroyed = true;
    this.closeSync();
    fs.rmSync(this.filePath, { force: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await closeOpeningFile(this);
  }

  closeSync(): void {
    this.closed = true;
    closeOpeningFileSync(this);
  }
}

function parseEntry(buf: Buffer, pos: number): IndexEntry {
  return {
    keyHash: buf.readInt32BE(pos),
    phyOffset: readInt64(buf, pos + 4),
    timeDiff: buf.readInt32BE(pos + 12),
    prevIndex: buf.readInt32BE(pos + 16),
  };
}
