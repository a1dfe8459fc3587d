// A directory of fixed-size files named by the 20-digit absolute offset of their first byte (D/store/file/
// MmapFileList + DefaultMmapFile), for DLedger data and index files. Files are created at full size and sparse
// (ftruncate: nothing is written but what the log holds); bytes go in with positional writeSync — in the page
// cache when the call returns, as with the official node's mmap — and a flush round fdatasyncs the files written
// since the last one.
//
// Differences from the Java list, none visible in the bytes an official node reads:
//  - a truncation zeroes what it cuts off (Java only moves its write position and leaves the old bytes, which a
//    later recovery may take for entries again);
//  - a 0-byte file at the end (a crash between creating and sizing it) is removed on load instead of refused.
import path from 'node:path';
import type { Logger } from '../../../common/logger.js';
import { fs } from '../../../store/io.js';
import { offsetToFileName } from './entry-codec.js';

const ZERO_CHUNK_BYTES = 1024 * 1024;
const PAGE_BYTES = 4096;
let zeroChunk: Buffer | null = null;

export interface LogFile {
  readonly fromOffset: number;
  readonly filePath: string;
  fd: number;
  /** Bytes in use from the file start (MmapFile wrotePosition); beyond it the file holds zeros. */
  wrotePosition: number;
  /** First byte in use (MmapFile startPosition): above 0 only in a first file rebuilt mid-file. */
  startPosition: number;
  /** Written since the last flush round took it. */
  dirty: boolean;
}

/** What prepareAppend did, for undoAppend. */
export interface PreparedAppend {
  file: LogFile;
  /** Where the append goes in `file`. */
  rel: number;
  /** A file created for it. */
  created: LogFile | null;
  /** The file ended with a blank for it, and where that blank starts. */
  blanked: LogFile | null;
  blankRel: number;
}

export class DLedgerFileList {
  readonly files: LogFile[] = [];
  /** Flush rounds in flight; descriptors of files removed meanwhile are closed when they end. */
  private flushing = 0;
  private retiredFds: number[] = [];

  constructor(
    readonly dir: string,
    readonly fileBytes: number,
    private readonly kind: 'data' | 'index',
    private readonly log: Logger,
  ) {}

  /**
   * Opens every file of the directory, oldest first, each counted as full (MmapFileList.doLoad). A file of another
   * size is refused (the official node exits) — the size is part of every position in the log.
   */
  loadSync(): void {
    fs.mkdirSync(this.dir, { recursive: true });
    const found: { from: number; name: string }[] = [];
    for (const name of fs.readdirSync(this.dir)) {
      if (!/^\d{1,20}$/.test(name)) {
        this.log.warn({ dir: this.dir, name }, `dledger ${this.kind}: ignoring a file whose name is not an offset`);
        continue;
      }
      found.push({ from: Number(name), name });
    }
    found.sort((a, b) => a.from - b.from);
    for (let i = 0; i < found.length; i++) {
      const filePath = path.join(this.dir, found[i]!.name);
      const st = fs.statSync(filePath);
      if (!st.isFile()) throw new Error(`dledger ${this.kind}: ${filePath} is not a file`);
      const size = st.size;
      if (size === 0 && i === found.length - 1) {
        this.log.warn({ filePath }, `dledger ${this.kind}: removing an empty last file (created, never sized)`);
        fs.rmSync(filePath);
        continue;
      }
      if (size !== this.fileBytes) {
        this.closeAllSync();
        throw new Error(
          `dledger ${this.kind} file ${filePath} has ${size} bytes, expected ${this.fileBytes}: every ${this.kind} file ` +
            `must have the configured size (${this.kind === 'data' ? 'mappedFileSizeCommitLog, equal on every member' : 'the DLedger index file size'}); ` +
            'delete old files before changing it',
        );
      }
      const fd = fs.openSync(filePath, 'r+');
      this.files.push({ fromOffset: found[i]!.from, filePath, fd, wrotePosition: size, startPosition: 0, dirty: false });
    }
  }

  /** Consecutive files, each starting where the previous one ends (MmapFileList.checkSelf). */
  checkSelf(): boolean {
    for (let i = 1; i < this.files.length; i++) {
      if (this.files[i]!.fromOffset - this.files[i - 1]!.fromOffset !== this.fileBytes) return false;
    }
    return true;
  }

  get first(): LogFile | undefined {
    return this.files[0];
  }

  get last(): LogFile | undefined {
    return this.files[this.files.length - 1];
  }

  /** First byte in use, 0 without files (MmapFileList.getMinOffset). */
  get minOffset(): number {
    const f = this.first;
    return f ? f.fromOffset + f.startPosition : 0;
  }

  /** End of the bytes in use, 0 without files (MmapFileList.getMaxWrotePosition). */
  get maxWrotePosition(): number {
    const f = this.last;
    return f ? f.fromOffset + f.wrotePosition : 0;
  }

  /** The file holding absolute offset `offset`, if any. */
  fileAt(offset: number): LogFile | undefined {
    const first = this.first;
    if (!first || offset < first.fromOffset) return undefined;
    return this.files[Math.floor((offset - first.fromOffset) / this.fileBytes)];
  }

  alignDown(offset: number): number {
    return offset - (offset % this.fileBytes);
  }

  /** Creates the file starting at `fromOffset` (full size, sparse) and appends it to the list. */
  createFile(fromOffset: number): LogFile {
    fs.mkdirSync(this.dir, { recursive: true });
    const filePath = path.join(this.dir, offsetToFileName(fromOffset));
    const fd = fs.openSync(filePath, 'w+');
    try {
      fs.ftruncateSync(fd, this.fileBytes);
    } catch (err) {
      fs.closeSync(fd);
      fs.rmSync(filePath, { force: true });
      throw err;
    }
    const file: LogFile = { fromOffset, filePath, fd, wrotePosition: 0, startPosition: 0, dirty: false };
    this.files.push(file);
    return file;
  }

  /**
   * Where `len` bytes appended now would start, without writing anything (MmapFileList.preAppend's arithmetic):
   * with `useBlank`, an append must leave 8 bytes in its file, else it starts the next file. `emptyStart` is
   * where the first file goes when there is none.
   */
  appendPosition(len: number, useBlank: boolean, emptyStart: number): number {
    const last = this.last;
    if (!last) return this.alignDown(emptyStart);
    if (last.wrotePosition === this.fileBytes) return last.fromOffset + this.fileBytes;
    const room = this.fileBytes - last.wrotePosition;
    if (len + (useBlank ? 8 : 0) > room) {
      if (!useBlank) throw new Error(`dledger ${this.kind}: ${len} bytes do not fit the ${room} left in ${last.filePath}`);
      return last.fromOffset + this.fileBytes;
    }
    return last.fromOffset + last.wrotePosition;
  }

  /**
   * Makes room for an append of `len` bytes at appendPosition(): creates the first/next file, and ends the last
   * one with a blank (magic −1, bytes left) when the append does not fit it. Returns the file and the offset in it.
   */
  prepareAppend(len: number, useBlank: boolean, emptyStart: number): PreparedAppend {
    const prep: PreparedAppend = { file: this.last!, rel: 0, created: null, blanked: null, blankRel: 0 };
    let last = this.last;
    if (!last) last = prep.created = this.createFile(this.alignDown(emptyStart));
    else if (last.wrotePosition === this.fileBytes) last = prep.created = this.createFile(last.fromOffset + this.fileBytes);
    const room = this.fileBytes - last.wrotePosition;
    if (len + (useBlank ? 8 : 0) > room) {
      if (!useBlank) throw new Error(`dledger ${this.kind}: ${len} bytes do not fit the ${room} left in ${last.filePath}`);
      // The rest of the file is zeros already (created sparse, zeroed on truncation): 8 bytes make the blank.
      const blank = Buffer.alloc(8);
      blank.writeInt32BE(-1, 0);
      blank.writeInt32BE(room, 4);
      prep.blankRel = last.wrotePosition;
      this.writeAt(last, last.wrotePosition, blank, 0, 8);
      last.wrotePosition = this.fileBytes;
      prep.blanked = last;
      last = prep.created = this.createFile(last.fromOffset + this.fileBytes);
    }
    prep.file = last;
    prep.rel = last.wrotePosition;
    return prep;
  }

  /**
   * Takes back what prepareAppend did and zeroes `len` bytes from the prepared position, after a failed write
   * (a blank written for an entry that is then not stored would move every later position away from the leader's).
   */
  undoAppend(prep: PreparedAppend, len: number): void {
    if (prep.created && prep.created === this.last) {
      this.files.pop();
      this.remove(prep.created);
    } else {
      try {
        this.zero(prep.file, prep.rel, Math.min(this.fileBytes, prep.rel + len));
      } catch (err) {
        this.log.error({ err, filePath: prep.file.filePath }, `dledger ${this.kind}: zeroing a failed append failed`);
      }
      prep.file.wrotePosition = prep.rel;
    }
    if (prep.blanked && prep.blanked === this.last) {
      try {
        this.zero(prep.blanked, prep.blankRel, prep.blankRel + 8);
      } catch (err) {
        this.log.error({ err, filePath: prep.blanked.filePath }, `dledger ${this.kind}: removing a file-end blank failed`);
      }
      prep.blanked.wrotePosition = prep.blankRel;
    }
  }

  /** Positional write of src[srcOff, srcOff + len) at `rel` in `file` (loops over short writes). */
  writeAt(file: LogFile, rel: number, src: Buffer, srcOff: number, len: number): void {
    let done = 0;
    while (done < len) {
      done += fs.writeSync(file.fd, src, srcOff + done, len - done, rel + done);
    }
    file.dirty = true;
  }

  /**
   * Reads [pos, pos + len) into dst — only bytes in use: the range must lie within [minOffset, maxWrotePosition].
   * Returns false otherwise.
   */
  readInto(pos: number, len: number, dst: Buffer, dstOff: number): boolean {
    if (len < 0 || pos < this.minOffset || pos + len > this.maxWrotePosition) return false;
    let done = 0;
    while (done < len) {
      const at = pos + done;
      const file = this.fileAt(at);
      if (!file) return false;
      const rel = at - file.fromOffset;
      const n = Math.min(len - done, this.fileBytes - rel);
      let got = 0;
      while (got < n) {
        const r = fs.readSync(file.fd, dst, dstOff + done + got, n - got, rel + got);
        if (r === 0) return false;
        got += r;
      }
      done += n;
    }
    return true;
  }

  /**
   * Raw read of up to `len` bytes at `pos` regardless of write positions (recovery scans files counted full).
   * Returns the number of bytes read (short at a file end or past the files).
   */
  readRaw(pos: number, len: number, dst: Buffer): number {
    const file = this.fileAt(pos);
    if (!file) return 0;
    const rel = pos - file.fromOffset;
    const n = Math.min(len, this.fileBytes - rel);
    let got = 0;
    while (got < n) {
      const r = fs.readSync(file.fd, dst, got, n - got, rel + got);
      if (r === 0) break;
      got += r;
    }
    return got;
  }

  /**
   * Ends the log at `offset` (MmapFileList.truncateOffset): files starting above it are deleted, the file holding it
   * gets its write position there. Bytes cut off in that file are zeroed, up to `zeroUpTo` (absolute; default:
   * its old write position) — see the header comment.
   */
  truncateOffset(offset: number, zeroUpTo?: number): void {
    const keep: LogFile[] = [];
    for (const file of this.files) {
      const tail = file.fromOffset + this.fileBytes;
      if (tail <= offset) {
        keep.push(file);
      } else if (offset >= file.fromOffset) {
        const rel = offset - file.fromOffset;
        const oldEnd = zeroUpTo === undefined ? file.wrotePosition : Math.min(this.fileBytes, zeroUpTo - file.fromOffset);
        if (oldEnd > rel) this.zero(file, rel, oldEnd);
        file.wrotePosition = rel;
        if (file.startPosition > rel) file.startPosition = rel;
        keep.push(file);
      } else {
        this.remove(file);
      }
    }
    this.files.splice(0, this.files.length, ...keep);
  }

  /** Deletes files wholly below `offset`; the file holding it starts there (MmapFileList.resetOffset). */
  resetOffset(offset: number): void {
    const keep: LogFile[] = [];
    for (const file of this.files) {
      if (file.fromOffset <= offset) {
        if (offset < file.fromOffset + this.fileBytes) {
          file.startPosition = offset - file.fromOffset;
          keep.push(file);
        } else {
          this.remove(file);
        }
      } else {
        keep.push(file);
      }
    }
    this.files.splice(0, this.files.length, ...keep);
  }

  /** Wipes every file and starts a new one holding `pos` as both its first and next byte (rebuildWithPos). */
  rebuildWithPos(pos: number): void {
    for (const file of this.files) this.remove(file);
    this.files.length = 0;
    const file = this.createFile(this.alignDown(pos));
    file.wrotePosition = pos - file.fromOffset;
    file.startPosition = file.wrotePosition;
  }

  /** Deletes the oldest file (retention). */
  removeFirst(): LogFile | undefined {
    const file = this.files.shift();
    if (file) this.remove(file);
    return file;
  }

  /** fdatasync of every file written since the last round, off the event loop. */
  async flush(): Promise<void> {
    const fds: number[] = [];
    for (const f of this.files) {
      if (f.dirty) {
        f.dirty = false;
        fds.push(f.fd);
      }
    }
    if (fds.length === 0) return;
    this.flushing++;
    try {
      for (const fd of fds) {
        await new Promise<void>((resolve) => {
          fs.fdatasync(fd, (err) => {
            if (err) this.log.warn({ err, dir: this.dir }, `dledger ${this.kind}: fdatasync failed`);
            resolve();
          });
        });
      }
    } finally {
      if (--this.flushing === 0) this.closeRetired();
    }
  }

  hasDirty(): boolean {
    return this.files.some((f) => f.dirty);
  }

  flushSync(): void {
    for (const f of this.files) {
      if (f.dirty) {
        f.dirty = false;
        fs.fdatasyncSync(f.fd);
      }
    }
  }

  /** Closes every descriptor (those a flush round still uses when it ends). */
  closeAllSync(): void {
    for (const f of this.files) {
      if (f.fd >= 0) {
        if (this.flushing > 0) this.retiredFds.push(f.fd);
        else fs.closeSync(f.fd);
      }
      f.fd = -1;
    }
    this.files.length = 0;
    if (this.flushing === 0) this.closeRetired();
  }

  /**
   * Zeroes [fromRel, toRel) of `file`, last page first (a crash midway leaves a prefix of the old bytes). Pages
   * already zero are not written, so holes of the sparse file stay holes.
   */
  private zero(file: LogFile, fromRel: number, toRel: number): void {
    zeroChunk ??= Buffer.alloc(ZERO_CHUNK_BYTES);
    const chunk = Buffer.allocUnsafe(Math.min(ZERO_CHUNK_BYTES, Math.max(0, toRel - fromRel)));
    let end = toRel;
    while (end > fromRel) {
      const start = Math.max(fromRel, end - chunk.length);
      const n = fs.readSync(file.fd, chunk, 0, end - start, start);
      // Page by page from the end; bytes past the file's end (n short) are zeros already.
      for (let pageEnd = start + n; pageEnd > start; ) {
        const pageStart = Math.max(start, (Math.ceil(pageEnd / PAGE_BYTES) - 1) * PAGE_BYTES);
        let dirty = false;
        for (let k = pageStart - start; k < pageEnd - start; k++) {
          if (chunk[k] !== 0) {
            dirty = true;
            break;
          }
        }
        if (dirty) this.writeAt(file, pageStart, zeroChunk, 0, pageEnd - pageStart);
        pageEnd = pageStart;
      }
      end = start;
    }
  }

  private remove(file: LogFile): void {
    if (file.fd >= 0) {
      if (this.flushing > 0) this.retiredFds.push(file.fd);
      else fs.closeSync(file.fd);
      file.fd = -1;
    }
    fs.rmSync(file.filePath, { force: true });
  }

  private closeRetired(): void {
    for (const fd of this.retiredFds) {
      try {
        fs.closeSync(fd);
      } catch {
        // already closed with the store
      }
    }
    this.retiredFds = [];
  }
}
