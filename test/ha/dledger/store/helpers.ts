import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { silentLogger } from '../../../../src/common/logger.js';
import { decodeEntry, readIndexUnit } from '../../../../src/ha/dledger/store/entry-codec.js';
import { DLedgerFileStore, type DLedgerFileStoreOptions } from '../../../../src/ha/dledger/store/file-store.js';

export function tempDir(prefix = 'rmq-dledger-store-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Small files: a data file holds a few entries, an index file 16 units. */
export const SMALL = { dataFileBytes: 1024, indexFileBytes: 16 * 32 } as const;

export function openStore(baseDir: string, opts: Partial<DLedgerFileStoreOptions> = {}, startOffset = 0): DLedgerFileStore {
  const store = new DLedgerFileStore({ baseDir, ...SMALL, ...opts }, silentLogger());
  store.loadSync(startOffset);
  return store;
}

/** A body whose bytes say which entry it is (no zero bytes, so a zeroed byte is always a change). */
export function bodyFor(i: number, len = 40 + ((i * 37) % 90)): Buffer {
  const b = Buffer.alloc(len);
  for (let k = 0; k < len; k++) b[k] = 1 + ((i * 31 + k * 7) % 250);
  return b;
}

export function dataFilePath(baseDir: string, fromOffset: number): string {
  return path.join(baseDir, 'data', String(fromOffset).padStart(20, '0'));
}

export function indexFilePath(baseDir: string, fromOffset: number): string {
  return path.join(baseDir, 'index', String(fromOffset).padStart(20, '0'));
}

/** Writes `bytes` at `pos` of a file (damage for recovery tests). */
export function patchFile(file: string, pos: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, pos);
  } finally {
    fs.closeSync(fd);
  }
}

export function readFileRange(file: string, pos: number, len: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(len);
    fs.readSync(fd, b, 0, len, pos);
    return b;
  } finally {
    fs.closeSync(fd);
  }
}

/** Every entry of the store decodes from the files and agrees with its index unit (SMALL file sizes). */
export function checkFiles(baseDir: string, s: DLedgerFileStore): void {
  for (let i = s.beginIndex; i <= s.endIndex && i >= 0; i++) {
    const e = s.get(i)!;
    const file = Math.floor(e.pos / SMALL.dataFileBytes) * SMALL.dataFileBytes;
    const onDisk = decodeEntry(readFileRange(dataFilePath(baseDir, file), e.pos - file, e.size));
    expect(onDisk).toEqual(e);
    const ifile = Math.floor((i * 32) / SMALL.indexFileBytes) * SMALL.indexFileBytes;
    expect(readIndexUnit(readFileRange(indexFilePath(baseDir, ifile), i * 32 - ifile, 32))).toEqual({
      magic: 1, pos: e.pos, size: e.size, index: i, term: e.term,
    });
  }
}
