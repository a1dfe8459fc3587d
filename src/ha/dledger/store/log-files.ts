// The byte level under the DLedger store: data and index file lists, their tail caches, entry writes and the
// flush timer. Knows positions and units, not terms or commit indexes (file-store.ts keeps those).
import type { Logger } from '../../../common/logger.js';
import { DLedgerCode, DLedgerStoreError, type DLedgerEntry } from '../types.js';
import { DLEDGER_ENTRY_MAGIC, DLEDGER_INDEX_UNIT_BYTES, encodeIndexUnit, readIndexUnit } from './entry-codec.js';
import { DLedgerFileList, type PreparedAppend } from './file-list.js';
import { DataTailCache, IndexTailCache } from './tail-cache.js';

const UNIT = DLEDGER_INDEX_UNIT_BYTES;

export interface LogFilesOptions {
  dataDir: string;
  indexDir: string;
  dataFileBytes: number;
  indexFileBytes: number;
  tailCacheBytes: number;
  tailCacheEntries: number;
  flushIntervalMs: number;
}

export class DLedgerLogFiles {
  readonly data: DLedgerFileList;
  readonly index: DLedgerFileList;
  private readonly dataCache: DataTailCache;
  private readonly indexCache: IndexTailCache;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushRunning = false;
  private closed = false;

  constructor(
    private readonly opts: LogFilesOptions,
    private readonly log: Logger,
  ) {
    this.data = new DLedgerFileList(opts.dataDir, opts.dataFileBytes, 'data', log);
    this.index = new DLedgerFileList(opts.indexDir, opts.indexFileBytes, 'index', log);
    this.dataCache = new DataTailCache(opts.tailCacheBytes);
    this.indexCache = new IndexTailCache(opts.tailCacheEntries);
  }

  loadSync(): void {
    try {
      this.data.loadSync();
      this.index.loadSync();
    } catch (err) {
      this.closeSync();
      throw err;
    }
  }

  /** After recovery: nothing cached, the next entry is `nextIndex` at `writePos`. */
  resetCaches(writePos: number, nextIndex: number): void {
    this.dataCache.reset(writePos);
    this.indexCache.reset(nextIndex);
  }

  /** Where an entry of `size` bytes goes now (after a file-end blank when it needs one). */
  entryPosition(size: number, emptyStart: number): number {
    return this.data.appendPosition(size, true, emptyStart);
  }

  /** Whether entry `index`'s unit would land at index × 32 (the index files continue the log). */
  indexContinues(index: number): boolean {
    return this.index.appendPosition(UNIT, false, index * UNIT) === index * UNIT;
  }

  /**
   * Writes an encoded entry at `entry.pos` (the caller checked it is the append position) and its index unit. The
   * header's first 8 bytes (magic, size) go last, so a write cut short leaves no header a scan accepts; any failure
   * takes the write back (blank and new file included) and throws DISK_FULL / DISK_ERROR.
   */
  write(bytes: Buffer, entry: DLedgerEntry, emptyStart: number): void {
    const size = bytes.length;
    let prep: PreparedAppend | null = null;
    try {
      prep = this.data.prepareAppend(size, true, emptyStart);
      if (prep.file.fromOffset + prep.rel !== entry.pos) throw new Error(`data append position moved to ${prep.file.fromOffset + prep.rel}`);
      this.data.writeAt(prep.file, prep.rel + 8, bytes, 8, size - 8);
      this.data.writeAt(prep.file, prep.rel, bytes, 0, 8);
      this.appendIndexUnit(entry.index, entry.pos, size, entry.magic, entry.term);
    } catch (err) {
      if (prep) this.data.undoAppend(prep, size);
      throw this.writeError(err, entry);
    }
    prep.file.wrotePosition = prep.rel + size;
    this.dataCache.append(entry.pos, bytes);
    this.indexCache.append(entry.index, entry.pos, size);
    this.scheduleFlush();
  }

  /** Cuts the index at `index` and writes its unit again (a follower truncate keeping an equal entry). */
  rewriteIndexUnit(index: number, pos: number, size: number, magic: number, term: number): void {
    this.index.truncateOffset(index * UNIT);
    this.indexCache.truncate(index);
    try {
      this.appendIndexUnit(index, pos, size, magic, term);
    } catch (err) {
      throw this.writeError(err, { index, pos } as DLedgerEntry);
    }
    this.indexCache.append(index, pos, size);
    this.scheduleFlush();
  }

  /** [pos, size] of a stored entry, from memory or the index file. */
  locate(index: number): [number, number] {
    const cached = this.indexCache.lookup(index);
    if (cached) return cached;
    const buf = Buffer.allocUnsafe(UNIT);
    if (!this.index.readInto(index * UNIT, UNIT, buf, 0)) {
      throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `no index unit for entry ${index}`);
    }
    const u = readIndexUnit(buf);
    if (u.index !== index || u.magic !== DLEDGER_ENTRY_MAGIC) {
      throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `index unit ${index} says index ${u.index} magic ${u.magic}`);
    }
    return [u.pos, u.size];
  }

  /** A fresh copy of data [pos, pos + size), or null when the files do not hold it. */
  read(pos: number, size: number): Buffer | null {
    const out = Buffer.allocUnsafe(size);
    if (this.dataCache.readInto(pos, size, out, 0)) return out;
    return this.data.readInto(pos, size, out, 0) ? out : null;
  }

  /** The log ends before entry `nextIndex`, whose data would start at `dataEnd` (cut-off bytes are zeroed). */
  cut(dataEnd: number, nextIndex: number): void {
    this.data.truncateOffset(dataEnd);
    this.index.truncateOffset(nextIndex * UNIT);
    this.dataCache.truncate(dataEnd);
    this.indexCache.truncate(nextIndex);
    this.scheduleFlush();
  }

  /** Wipes both lists; entry `index` goes next, at `pos` (MmapFileList.rebuildWithPos). */
  rebuild(index: number, pos: number): void {
    this.data.rebuildWithPos(pos);
    this.index.rebuildWithPos(index * UNIT);
    this.resetCaches(pos, index);
  }

  /** Deletes the oldest data file; entry `beginIndex` at `beginPos` is now the first one. */
  dropFirstDataFile(beginIndex: number, beginPos: number): void {
    this.data.removeFirst();
    this.index.resetOffset(beginIndex * UNIT);
    this.dataCache.dropBelow(beginPos);
    this.indexCache.dropBelow(beginIndex);
  }

  /** Where the data begins when the first file was rebuilt mid-file, else null. */
  rebuiltStart(): number | null {
    const first = this.data.first;
    return first && first.startPosition > 0 ? first.fromOffset + first.startPosition : null;
  }

  flushSync(): void {
    this.data.flushSync();
    this.index.flushSync();
  }

  /** Flushes, then closes every file. */
  closeSync(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    try {
      if (!this.closed) this.flushSync();
    } finally {
      this.closed = true;
      this.data.closeAllSync();
      this.index.closeAllSync();
    }
  }

  private appendIndexUnit(index: number, pos: number, size: number, magic: number, term: number): void {
    const prep = this.index.prepareAppend(UNIT, false, index * UNIT);
    if (prep.file.fromOffset + prep.rel !== index * UNIT) {
      this.index.undoAppend(prep, 0);
      throw new Error(`index append position ${prep.file.fromOffset + prep.rel} != ${index * UNIT}`);
    }
    try {
      this.index.writeAt(prep.file, prep.rel, encodeIndexUnit({ magic, pos, size, index, term }), 0, UNIT);
    } catch (err) {
      this.index.undoAppend(prep, UNIT);
      throw err;
    }
    prep.file.wrotePosition = prep.rel + UNIT;
  }

  private writeError(err: unknown, entry: Pick<DLedgerEntry, 'index' | 'pos'>): DLedgerStoreError {
    if (err instanceof DLedgerStoreError) return err;
    const e = err as NodeJS.ErrnoException;
    const code = e.code === 'ENOSPC' ? DLedgerCode.DISK_FULL : DLedgerCode.DISK_ERROR;
    this.log.error({ err, index: entry.index, pos: entry.pos }, 'dledger store: write failed');
    return new DLedgerStoreError(code, `write of entry ${entry.index} failed: ${e.message}`);
  }

  /** fdatasync of the written files flushIntervalMs after a write (DLedgerMmapFileStore.FlushDataService). */
  private scheduleFlush(): void {
    if (this.flushTimer || this.flushRunning || this.closed) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushRunning = true;
      void (async () => {
        try {
          await this.data.flush();
          await this.index.flush();
        } catch (err) {
          this.log.error({ err }, 'dledger store: flush failed');
        } finally {
          this.flushRunning = false;
        }
        if (!this.closed && (this.data.hasDirty() || this.index.hasDirty())) this.scheduleFlush();
      })();
    }, this.opts.flushIntervalMs);
    this.flushTimer.unref();
  }
}
