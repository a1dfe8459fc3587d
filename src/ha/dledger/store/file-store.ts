// The DLedger Raft log on disk (D/store/file/DLedgerMmapFileStore), byte-compatible with an official 0.3.1.2
// member: `<baseDir>/data/` entry files, `<baseDir>/index/` 32-byte units, `currterm`, `checkpoint`
// (protocol/dledger.md §4). Synchronous like the Java mmap store: an append is in the page cache when it returns
// (safe against kill -9, §4.8); a timer fdatasyncs written files 10 ms later and writes the checkpoint every 3 s.
//
// Where ours differs (never in the bytes): an entry's first 8 bytes (magic, size) are written after the rest of
// it, so a write cut short by a crash leaves no header a scan would accept; a failed write is taken back (no blank
// or half entry left behind); truncation zeroes what it cuts; a follower truncate that continues the log exactly
// appends instead of wiping the files; appends whose term would go backwards, whose size an official member could
// not encode, or whose position disagrees with ours are refused before anything is written.
import path from 'node:path';
import type { Logger } from '../../../common/logger.js';
import {
  DLEDGER_DEFAULTS,
  DLEDGER_ENTRY_HEADER_BYTES,
  DLedgerCode,
  DLedgerStoreError,
  type DLedgerEntry,
  type DLedgerStorePort,
} from '../types.js';
import {
  DLEDGER_ENTRY_MAGIC,
  DLEDGER_INDEX_UNIT_BYTES,
  DLEDGER_MAX_ENTRY_BYTES,
  DLEDGER_MIN_BLANK_BYTES,
  decodeEntry,
  entriesEqual,
  readEntryHeader,
  writeEntryHeader,
} from './entry-codec.js';
import { DLedgerLogFiles } from './log-files.js';
import { recoverLog } from './recovery.js';
import { readCheckpoint, readCurrTerm, writeCheckpoint, writeCurrTerm, type PersistedTerm } from './state-files.js';

const HEADER = DLEDGER_ENTRY_HEADER_BYTES;
const UNIT = DLEDGER_INDEX_UNIT_BYTES;

export interface DLedgerFileStoreOptions {
  /** `<storePathRootDir>/dledger-<selfId>`: currterm, checkpoint, index/ and (unless dataDir) data/. */
  baseDir: string;
  /** storePathDLedgerCommitLog: the data files' directory instead of `<baseDir>/data` (null: the default). */
  dataDir?: string | null;
  /** Data file size = the broker's mappedFileSizeCommitLog; must be equal on every member. */
  dataFileBytes: number;
  /** Index file size (32-byte units); DLEDGER_DEFAULTS.indexFileBytes unless a test wants small files. */
  indexFileBytes?: number;
  /** fdatasync of written files this long after a write (DLedgerConfig.flushFileInterval). */
  flushIntervalMs?: number;
  /** Checkpoint period (DLedgerConfig.checkPointInterval). */
  checkpointIntervalMs?: number;
  /** Ours: newest data bytes kept in memory for reads. */
  tailCacheBytes?: number;
  /** Ours: positions of the newest entries kept in memory. */
  tailCacheEntries?: number;
}

export const DLEDGER_TAIL_CACHE_BYTES = 16 * 1024 * 1024;
export const DLEDGER_TAIL_CACHE_ENTRIES = 65536;

export interface DLedgerDataFile {
  readonly filePath: string;
  readonly fromOffset: number;
  readonly endOffset: number;
}

export class DLedgerFileStore implements DLedgerStorePort {
  readonly dataDir: string;
  readonly indexDir: string;
  private readonly files: DLedgerLogFiles;
  private readonly checkpointIntervalMs: number;

  private state: 'new' | 'open' | 'closed' = 'new';
  private begin = -1;
  private beginPos = -1;
  private end = -1;
  private lastTerm = -1;
  private committed = -1;
  private committedEnd = -1;
  /** Where the first data file goes while there is none (loadSync's startOffset, aligned). */
  private emptyStart = 0;
  private term: PersistedTerm = { currTerm: 0, voteLeader: null };
  private checkpointTimer: NodeJS.Timeout | null = null;
  private lastCheckpoint = '';

  constructor(
    readonly options: DLedgerFileStoreOptions,
    private readonly log: Logger,
  ) {
    const indexFileBytes = options.indexFileBytes ?? DLEDGER_DEFAULTS.indexFileBytes;
    if (!Number.isSafeInteger(options.dataFileBytes) || options.dataFileBytes < HEADER + 1 + DLEDGER_MIN_BLANK_BYTES) {
      throw new Error(`dledger data file size ${options.dataFileBytes} is too small`);
    }
    if (!Number.isSafeInteger(indexFileBytes) || indexFileBytes < UNIT || indexFileBytes % UNIT !== 0) {
      throw new Error(`dledger index file size ${indexFileBytes} is not a positive multiple of ${UNIT}`);
    }
    this.dataDir = options.dataDir || path.join(options.baseDir, 'data');
    this.indexDir = path.join(options.baseDir, 'index');
    this.files = new DLedgerLogFiles(
      {
        dataDir: this.dataDir,
        indexDir: this.indexDir,
        dataFileBytes: options.dataFileBytes,
        indexFileBytes,
        tailCacheBytes: options.tailCacheBytes ?? DLEDGER_TAIL_CACHE_BYTES,
        tailCacheEntries: options.tailCacheEntries ?? DLEDGER_TAIL_CACHE_ENTRIES,
        flushIntervalMs: options.flushIntervalMs ?? DLEDGER_DEFAULTS.flushFileIntervalMs,
      },
      log,
    );
    this.checkpointIntervalMs = options.checkpointIntervalMs ?? DLEDGER_DEFAULTS.checkPointIntervalMs;
  }

  get beginIndex(): number {
    return this.begin;
  }
  get endIndex(): number {
    return this.end;
  }
  get endTerm(): number {
    return this.lastTerm;
  }
  get committedIndex(): number {
    return this.committed;
  }
  get committedPos(): number {
    return this.committed >= 0 ? this.committedEnd : this.minOffset;
  }
  get minOffset(): number {
    if (this.begin >= 0) return this.beginPos;
    return this.files.data.files.length > 0 ? this.files.data.minOffset : this.emptyStart;
  }
  /** Where the next entry starts if it fits the last file (an entry needing a file-end blank starts the next one). */
  get writePos(): number {
    return this.files.data.files.length > 0 ? this.files.data.maxWrotePosition : this.emptyStart;
  }
  get persistedTerm(): { currTerm: number; voteLeader: string | null } {
    return { ...this.term };
  }
  get dataFiles(): readonly DLedgerDataFile[] {
    const size = this.files.data.fileBytes;
    return this.files.data.files.map((f) => ({ filePath: f.filePath, fromOffset: f.fromOffset, endOffset: f.fromOffset + size }));
  }

  loadSync(startOffset: number): void {
    if (this.state !== 'new') throw new Error('dledger store: loadSync called twice');
    const t = readCurrTerm(this.options.baseDir);
    if (t.source && !t.source.endsWith('currterm')) this.log.warn({ source: t.source }, 'dledger store: currterm missing, read its copy');
    this.term = t.term;
    this.files.loadSync();
    try {
      const checkpoint = readCheckpoint(this.options.baseDir);
      const rec = recoverLog(this.files.data, this.files.index, checkpoint?.dataMinOffset ?? null, this.log);
      this.begin = rec.beginIndex;
      this.beginPos = rec.beginPos;
      this.end = rec.endIndex;
      this.lastTerm = rec.endTerm;
      this.emptyStart = this.files.data.alignDown(Math.max(0, startOffset));
      if (this.files.data.files.length === 0 && this.emptyStart > 0) {
        // A broker moving from the classic commit log: DLedger positions continue its offsets (§5.4).
        if (startOffset !== this.emptyStart) this.log.warn({ startOffset, fileStart: this.emptyStart }, 'dledger store: start offset not at a file boundary');
        this.files.data.createFile(this.emptyStart);
      }
      this.state = 'open';
      if (checkpoint?.committedIndex != null) this.updateCommittedIndex(checkpoint.committedIndex);
    } catch (err) {
      this.state = 'closed';
      this.files.closeSync();
      throw err;
    }
    this.files.resetCaches(this.writePos, this.end + 1);
    this.lastCheckpoint = this.checkpointText();
    this.checkpointTimer = setInterval(() => this.persistCheckpoint(false), this.checkpointIntervalMs);
    this.checkpointTimer.unref();
    this.log.info(
      { dir: this.options.baseDir, beginIndex: this.begin, endIndex: this.end, endTerm: this.lastTerm, committedIndex: this.committed, writePos: this.writePos },
      'dledger store loaded',
    );
  }

  appendAsLeader(body: Buffer, term: number, hook?: (entryBytes: Buffer, pos: number) => void): DLedgerEntry {
    this.checkOpen();
    const size = HEADER + body.length;
    this.checkEntry(size, term);
    const index = this.end + 1;
    const pos = this.files.entryPosition(size, this.emptyStart);
    this.checkIndexPosition(index);
    const bytes = Buffer.allocUnsafe(size);
    const entry = { magic: DLEDGER_ENTRY_MAGIC, size, index, term, pos, channel: 0, chainCrc: 0, bodyCrc: 0, body: bytes.subarray(HEADER) };
    writeEntryHeader(bytes, 0, entry, body.length);
    body.copy(bytes, HEADER);
    hook?.(bytes, pos);
    this.store(bytes, entry);
    return entry;
  }

  appendAsFollower(entry: DLedgerEntry): void {
    this.checkOpen();
    const size = HEADER + entry.body.length;
    if (entry.index !== this.end + 1) {
      throw new DLedgerStoreError(DLedgerCode.INCONSISTENT_INDEX, `entry index ${entry.index} != end index ${this.end} + 1`);
    }
    this.checkEntry(size, entry.term, entry.magic);
    const pos = this.files.entryPosition(size, this.emptyStart);
    if (entry.pos !== pos) {
      throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `entry ${entry.index} at position ${entry.pos}, ours would be ${pos} (data file sizes differ?)`);
    }
    this.checkIndexPosition(entry.index);
    this.store(this.encode(entry, size), { ...entry, size });
  }

  truncate(entry: DLedgerEntry): number {
    this.checkOpen();
    const size = HEADER + entry.body.length;
    const e = { ...entry, size };
    this.checkEntry(size, -1, e.magic);
    let existed = false;
    if (this.begin >= 0 && e.index >= this.begin && e.index <= this.end) {
      try {
        const local = this.get(e.index);
        existed = local !== null && entriesEqual(e, local);
      } catch {
        existed = false;
      }
    }
    if (existed) {
      // Same entry: the log ends right after it (its index unit is rewritten, as the Java store does).
      this.cut(e.index, e.term, e.pos + size);
      this.files.rewriteIndexUnit(e.index, e.pos, size, e.magic, e.term);
    } else {
      if (this.begin >= 0 && e.index >= this.begin && e.index <= this.end + 1) {
        // Cut where entry e.index starts in our log; then it is an append if it lands where the leader put it.
        if (e.index === this.begin) this.cut(-1, -1, this.beginPos);
        else this.cut(e.index - 1, this.termOf(e.index - 1), this.entryEnd(e.index - 1));
      }
      const continues = this.end === e.index - 1 && this.files.entryPosition(size, this.emptyStart) === e.pos && this.files.indexContinues(e.index);
      if (!continues) this.rebuild(e.index, e.pos);
      this.store(this.encode(e, size), e);
    }
    this.log.info({ index: e.index, pos: e.pos, existed, endIndex: this.end }, 'dledger store: truncated');
    return this.end;
  }

  get(index: number): DLedgerEntry | null {
    this.checkOpen();
    if (this.begin < 0 || index < this.begin || index > this.end) return null;
    const [pos, size] = this.files.locate(index);
    const buf = this.readData(pos, size);
    if (!buf) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `no data for entry ${index} at ${pos} (${size} bytes)`);
    let entry: DLedgerEntry;
    try {
      entry = decodeEntry(buf);
    } catch (err) {
      throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `entry ${index} at ${pos}: ${(err as Error).message}`);
    }
    if (entry.pos !== pos || entry.index !== index) {
      throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `entry at ${pos} says index ${entry.index} pos ${entry.pos}, expected ${index}`);
    }
    return entry;
  }

  readData(pos: number, size: number): Buffer | null {
    this.checkOpen();
    if (!Number.isSafeInteger(pos) || !Number.isSafeInteger(size) || size < 0) return null;
    if (pos < this.minOffset || pos + size > this.writePos) return null;
    return this.files.read(pos, size);
  }

  updateCommittedIndex(index: number): void {
    this.checkOpen();
    // DLedgerMmapFileStore.updateCommittedIndex (the term check is the node's).
    if (index === -1 || this.end === -1 || index === this.committed) return;
    if (index < this.committed || index < this.begin) return;
    const capped = Math.min(index, this.end);
    const [pos, size] = this.files.locate(capped);
    this.committed = capped;
    this.committedEnd = pos + size;
  }

  persistTerm(currTerm: number, voteLeader: string | null): void {
    writeCurrTerm(this.options.baseDir, { currTerm, voteLeader });
    this.term = { currTerm, voteLeader };
  }

  dropOldestDataFile(filePath: string): boolean {
    this.checkOpen();
    const files = this.files.data.files;
    if (files.length < 2 || files[0]!.filePath !== filePath) return false;
    // The next file must hold the next entry at its start, else the log would be left without a begin.
    const next = files[1]!;
    const buf = next.wrotePosition >= HEADER ? this.readData(next.fromOffset, HEADER) : null;
    const h = buf ? readEntryHeader(buf) : null;
    if (!h || h.magic !== DLEDGER_ENTRY_MAGIC || h.pos !== next.fromOffset || h.index > this.end) return false;
    this.files.dropFirstDataFile(h.index, next.fromOffset);
    this.begin = h.index;
    this.beginPos = next.fromOffset;
    this.log.info({ filePath, beginIndex: this.begin }, 'dledger store: dropped the oldest data file');
    return true;
  }

  close(): void {
    if (this.state !== 'open') {
      this.state = 'closed';
      return;
    }
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.checkpointTimer = null;
    try {
      this.files.flushSync();
      this.persistCheckpoint(true);
    } finally {
      this.state = 'closed';
      this.files.closeSync();
    }
  }

  /** Flushes written data and index files now (tests, and whoever needs a durable point). */
  flushSync(): void {
    this.checkOpen();
    this.files.flushSync();
  }

  // ------------------------------------------------------------------ internals

  private checkOpen(): void {
    if (this.state !== 'open') throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `dledger store is ${this.state === 'new' ? 'not loaded' : 'closed'}`);
  }

  /** Refusals before anything is written. `term` −1: no term check (truncate may go back in term). */
  private checkEntry(size: number, term: number, magic = DLEDGER_ENTRY_MAGIC): void {
    const fileBytes = this.files.data.fileBytes;
    if (size > DLEDGER_MAX_ENTRY_BYTES || size + DLEDGER_MIN_BLANK_BYTES > fileBytes) {
      throw new DLedgerStoreError(
        DLedgerCode.INTERNAL_ERROR,
        `entry of ${size} bytes is larger than a member can store (${Math.min(DLEDGER_MAX_ENTRY_BYTES, fileBytes - DLEDGER_MIN_BLANK_BYTES)})`,
      );
    }
    // 0.3.1.2 knows magic 1 only; its recovery would cut the log at anything else (§4.7, pitfall 20).
    if (magic !== DLEDGER_ENTRY_MAGIC) throw new DLedgerStoreError(DLedgerCode.INCONSISTENT_STATE, `entry magic ${magic} is not 1`);
    if (term !== -1 && this.end >= 0 && term < this.lastTerm) {
      // Recovery stops at a term going backwards: such an entry would be lost at the next start.
      throw new DLedgerStoreError(DLedgerCode.INCONSISTENT_TERM, `term ${term} is below the last entry's term ${this.lastTerm}`);
    }
  }

  private checkIndexPosition(index: number): void {
    if (!this.files.indexContinues(index)) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `the index files do not end at entry ${index}`);
  }

  private encode(entry: DLedgerEntry, size: number): Buffer {
    const bytes = Buffer.allocUnsafe(size);
    writeEntryHeader(bytes, 0, entry, entry.body.length);
    entry.body.copy(bytes, HEADER);
    return bytes;
  }

  /** Writes an encoded entry at its (checked) position and makes it the end of the log. */
  private store(bytes: Buffer, entry: DLedgerEntry): void {
    this.files.write(bytes, entry, this.emptyStart);
    this.end = entry.index;
    this.lastTerm = entry.term;
    if (this.begin < 0) {
      this.begin = entry.index;
      this.beginPos = entry.pos;
    }
  }

  /** Ends the log after entry `lastIndex` (term `lastTerm`), whose data ends at `dataEnd`; −1: empties it. */
  private cut(lastIndex: number, lastTerm: number, dataEnd: number): void {
    this.files.cut(dataEnd, lastIndex < 0 ? this.begin : lastIndex + 1);
    this.end = lastIndex;
    this.lastTerm = lastTerm;
    if (lastIndex < 0) this.begin = this.beginPos = -1;
    if (this.committed > this.end) {
      this.log.error({ committedIndex: this.committed, endIndex: this.end }, 'dledger store: truncated below the committed index');
      this.committed = this.end;
      this.committedEnd = this.end >= 0 ? this.entryEnd(this.end) : -1;
    }
  }

  /** Wipes data and index and restarts them with entry `index` at `pos` next (MmapFileList.rebuildWithPos). */
  private rebuild(index: number, pos: number): void {
    this.log.warn({ index, pos, beginIndex: this.begin, endIndex: this.end }, 'dledger store: rebuilding the files at the entry position');
    this.files.rebuild(index, pos);
    this.begin = this.beginPos = this.end = this.lastTerm = -1;
    if (this.committed >= index) this.committed = this.committedEnd = -1;
    // Our checkpoint remembers where the rebuilt data begins (the official node keeps that in memory only).
    this.persistCheckpoint(true);
  }

  private entryEnd(index: number): number {
    const [pos, size] = this.files.locate(index);
    return pos + size;
  }

  private termOf(index: number): number {
    const e = this.get(index);
    if (!e) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `entry ${index} not stored`);
    return e.term;
  }

  private checkpointText(): string {
    return `${this.committed}/${this.end}/${this.files.rebuiltStart()}`;
  }

  private persistCheckpoint(force: boolean): void {
    const text = this.checkpointText();
    if (!force && text === this.lastCheckpoint) return;
    try {
      writeCheckpoint(this.options.baseDir, { committedIndex: this.committed, endIndex: this.end, dataMinOffset: this.files.rebuiltStart() });
      this.lastCheckpoint = text;
    } catch (err) {
      this.log.error({ err }, 'dledger store: writing the checkpoint failed');
    }
  }
}
