// The store's I/O seam: every file the store reads or writes goes through `fs` below (node:fs unless a test
// installs another with setStoreFs: the power-loss layer that drops unsynced bytes, or one that fails writes).
// Plus thin promise wrappers over fd-based fs calls (callback API: no FileHandle bookkeeping on the hot path).
import nodeFs from 'node:fs';

/** What the store uses of the file system: the node:fs module's shape. */
export type StoreFs = typeof nodeFs;

/** The file system every store module uses (a live binding: setStoreFs swaps it for all of them). */
export let fs: StoreFs = nodeFs;

/**
 * Installs another file system for every store module (tests: fault injection). Returns the previous one. Swap it
 * only while no store is open: descriptors opened through one are not known to the other.
 */
export function setStoreFs(impl: StoreFs): StoreFs {
  const previous = fs;
  fs = impl;
  return previous;
}

export function openFile(path: string, flags: number, mode = 0o644): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.open(path, flags, mode, (err, fd) => (err ? reject(err) : resolve(fd)));
  });
}

export function closeFile(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.close(fd, (err) => (err ? reject(err) : resolve()));
  });
}

/** A file whose descriptor opens asynchronously (`fd` is -1 until `ready`, and again once closed). */
export interface OpeningFile {
  fd: number;
  readonly ready: Promise<void>;
}

/** Closes `f`'s descriptor once its open has settled (shared by segments and index files). */
export async function closeOpeningFile(f: OpeningFile): Promise<void> {
  await f.ready.catch(() => {});
  if (f.fd >= 0) {
    const fd = f.fd;
    f.fd = -1;
    await closeFile(fd);
  }
}

export function closeOpeningFileSync(f: OpeningFile): void {
  if (f.fd >= 0) {
    fs.closeSync(f.fd);
    f.fd = -1;
  }
}

export function ftruncate(fd: number, len: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.ftruncate(fd, len, (err) => (err ? reject(err) : resolve()));
  });
}

export function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fdatasync(fd, (err) => (err ? reject(err) : resolve()));
  });
}

function writevOnce(fd: number, bufs: Buffer[], position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.writev(fd, bufs, position, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

/** The part of `bufs` after its first `skip` bytes (after a short write). */
function remainingBuffers(bufs: Buffer[], skip: number): Buffer[] {
  const rest: Buffer[] = [];
  let left = skip;
  for (const b of bufs) {
    if (left >= b.length) {
      left -= b.length;
      continue;
    }
    rest.push(left > 0 ? b.subarray(left) : b);
    left = 0;
  }
  return rest;
}

/** Positional gather write of all bytes (loops on short writes). */
export async function writevAll(fd: number, bufs: Buffer[], position: number): Promise<void> {
  let total = 0;
  for (const b of bufs) total += b.length;
  let written = await writevOnce(fd, bufs, position);
  while (written < total) {
    // Short write (rare on regular files): continue with what is left.
    const n = await writevOnce(fd, remainingBuffers(bufs, written), position + written);
    if (n === 0) throw new Error('writev wrote 0 bytes');
    written += n;
  }
}

/** Synchronous positional gather write of all bytes (small commit-log batches; see CommitLog.writeOps). */
export function writevAllSync(fd: number, bufs: Buffer[], position: number): void {
  let total = 0;
  for (const b of bufs) total += b.length;
  let written = fs.writevSync(fd, bufs, position);
  while (written < total) {
    const n = fs.writevSync(fd, remainingBuffers(bufs, written), position + written);
    if (n === 0) throw new Error('writev wrote 0 bytes');
    written += n;
  }
}

/** Positional read into `buf[offset, offset+length)`; returns bytes read (short at end of file). */
export function readAt(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.read(fd, buf, offset, length, position, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

/** Reads exactly `length` bytes at `position`, or fewer if the file ends first. */
export async function readFully(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await readAt(fd, buf, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** Synchronous exact read, for start-up and recovery only. */
export function readFullySync(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** Zero-padded 20-digit file name of a start offset (UtilAll.offset2FileName). */
export function offsetToFileName(offset: number): string {
  return String(offset).padStart(20, '0');
}

export function isOffsetFileName(name: string): boolean {
  return /^\d{20}$/.test(name);
}

export const RW_CREATE = fs.constants.O_RDWR | fs.constants.O_CREAT;
export const RW = fs.constants.O_RDWR;
