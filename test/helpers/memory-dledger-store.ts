// An in-memory DLedgerStorePort for the Raft node's tests (a test double of our own component, until the file
// store lands). It keeps the position rules of the real one (protocol/dledger.md §4.4/§4.5): an entry's pos is the
// previous entry's end, and an entry that does not fit with 8 spare bytes into what is left of a data file starts
// the next file. close() keeps the data, so a stopped node can be "restarted" on the same store.
import { DLedgerCode, DLEDGER_ENTRY_HEADER_BYTES, type DLedgerEntry, type DLedgerStorePort, DLedgerStoreError } from '../../src/ha/dledger/types.js';

/** MmapFileList.MIN_BLANK_LEN. */
const MIN_BLANK_BYTES = 8;

import { encodeEntry } from '../../src/ha/dledger/store/entry-codec.js';

/** The store's entry encoder (DLedgerEntryCoder.encode: the 48-byte header then the body), for tests comparing bytes. */
export { encodeEntry };

function sameEntry(a: DLedgerEntry, b: DLedgerEntry): boolean {
  return a.size === b.size && a.magic === b.magic && a.index === b.index && a.term === b.term && a.channel === b.channel &&
    a.pos === b.pos && a.body.equals(b.body);
}

export class MemoryDLedgerStore implements DLedgerStorePort {
  private entries: DLedgerEntry[] = [];
  beginIndex = -1;
  endIndex = -1;
  endTerm = -1;
  committedIndex = -1;
  private firstFileOffset = 0;
  private nextPos = 0;
  persistedTerm: { currTerm: number; voteLeader: string | null } = { currTerm: 0, voteLeader: null };
  /** Every persistTerm call, in order (tests check persistence before replies). */
  readonly termWrites: Array<{ currTerm: number; voteLeader: string | null }> = [];
  closed = false;
  loaded = false;

  constructor(readonly fileSizeBytes = 64 * 1024 * 1024) {}

  get committedPos(): number {
    if (this.committedIndex < 0) return this.minOffset;
    const e = this.get(this.committedIndex)!;
    return e.pos + e.size;
  }

  get minOffset(): number {
    return this.entries.length > 0 ? this.entries[0]!.pos : this.firstFileOffset;
  }

  get writePos(): number {
    return this.nextPos;
  }

  loadSync(startOffset: number): void {
    this.loaded = true;
    this.closed = false;
    if (this.entries.length === 0) {
      this.firstFileOffset = startOffset;
      this.nextPos = startOffset;
    }
  }

  /** Where an entry of `size` bytes written next would start (after a file-end blank if it must). */
  private positionFor(size: number): number {
    const fileStart = this.firstFileOffset + Math.floor((this.nextPos - this.firstFileOffset) / this.fileSizeBytes) * this.fileSizeBytes;
    const room = fileStart + this.fileSizeBytes - this.nextPos;
    return size + MIN_BLANK_BYTES > room ? fileStart + this.fileSizeBytes : this.nextPos;
  }

  private push(e: DLedgerEntry): void {
    if (this.entries.length === 0) this.beginIndex = e.index;
    this.entries.push(e);
    this.endIndex = e.index;
    this.endTerm = e.term;
    this.nextPos = e.pos + e.size;
  }

  appendAsLeader(body: Buffer, term: number, hook?: (entryBytes: Buffer, pos: number) => void): DLedgerEntry {
    if (this.closed) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, 'store closed');
    const size = DLEDGER_ENTRY_HEADER_BYTES + body.length;
    const pos = this.positionFor(size);
    const e: DLedgerEntry = { magic: 1, size, index: this.endIndex + 1, term, pos, channel: 0, chainCrc: 0, bodyCrc: 0, body: Buffer.from(body) };
    if (hook) {
      const bytes = encodeEntry(e);
      hook(bytes, pos);
      e.body = Buffer.from(bytes.subarray(DLEDGER_ENTRY_HEADER_BYTES));
    }
    this.push(e);
    return e;
  }

  appendAsFollower(entry: DLedgerEntry): void {
    if (this.closed) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, 'store closed');
    if (entry.index !== this.endIndex + 1) {
      throw new DLedgerStoreError(DLedgerCode.INCONSISTENT_INDEX, `index ${entry.index} != ${this.endIndex + 1}`);
    }
    const size = DLEDGER_ENTRY_HEADER_BYTES + entry.body.length;
    const pos = this.positionFor(size);
    if (pos !== entry.pos) throw new DLedgerStoreError(DLedgerCode.INCONSISTENT_STATE, `pos ${entry.pos} != ${pos}`);
    this.push({ ...entry, size, body: Buffer.from(entry.body) });
  }

  truncate(entry: DLedgerEntry): number {
    const size = DLEDGER_ENTRY_HEADER_BYTES + entry.body.length;
    const e = { ...entry, size, body: Buffer.from(entry.body) };
    const local = this.get(e.index);
    if (local && sameEntry(local, e)) {
      this.entries.length = e.index - this.beginIndex + 1;
    } else if (this.endIndex >= 0 && e.index >= this.beginIndex && e.index <= this.endIndex + 1) {
      this.entries.length = e.index - this.beginIndex;
      this.entries.push(e);
    } else {
      // Not inside what we hold: start over at the entry's position, in a file aligned to the file size
      // (MmapFileList.rebuildWithPos).
      this.entries = [e];
      this.beginIndex = e.index;
      this.firstFileOffset = e.pos - (e.pos % this.fileSizeBytes);
    }
    const last = this.entries[this.entries.length - 1]!;
    this.endIndex = last.index;
    this.endTerm = last.term;
    this.nextPos = last.pos + last.size;
    if (this.committedIndex > this.endIndex) this.committedIndex = this.endIndex;
    return this.endIndex;
  }

  get(index: number): DLedgerEntry | null {
    if (index < this.beginIndex || index > this.endIndex || this.beginIndex < 0) return null;
    return this.entries[index - this.beginIndex] ?? null;
  }

  readData(pos: number, size: number): Buffer | null {
    for (const e of this.entries) {
      if (e.pos === pos && e.size === size) return encodeEntry(e);
    }
    return null;
  }

  updateCommittedIndex(index: number): void {
    const capped = Math.min(index, this.endIndex);
    if (capped > this.committedIndex && capped >= this.beginIndex) this.committedIndex = capped;
  }

  persistTerm(currTerm: number, voteLeader: string | null): void {
    this.persistedTerm = { currTerm, voteLeader };
    this.termWrites.push({ currTerm, voteLeader });
  }

  get dataFiles(): readonly { filePath: string; fromOffset: number; endOffset: number }[] {
    return [];
  }

  dropOldestDataFile(): boolean {
    return false;
  }

  close(): void {
    this.closed = true;
  }

  /** All entries (tests). */
  all(): DLedgerEntry[] {
    return [...this.entries];
  }
}
