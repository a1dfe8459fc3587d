// Recovery (protocol/dledger.md §4.7) of damaged files: a store of 40 entries over several 1 KiB data files is
// damaged the ways a crash or a disk can, reloaded, and must keep exactly the entries before the damage, agree
// with its index, leave zeros after its end, and go on appending where it ended.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeIndexUnit } from '../../../../src/ha/dledger/store/entry-codec.js';
import type { DLedgerFileStore } from '../../../../src/ha/dledger/store/file-store.js';
import type { DLedgerEntry } from '../../../../src/ha/dledger/types.js';
import { bodyFor, checkFiles, dataFilePath, indexFilePath, openStore, patchFile, readFileRange, SMALL, tempDir } from './helpers.js';

const N = 40;
let template: string;
let work: string;
let entries: DLedgerEntry[];

beforeAll(() => {
  template = tempDir();
  const s = openStore(template);
  entries = [];
  for (let i = 0; i < N; i++) entries.push(s.appendAsLeader(bodyFor(i), 1 + Math.floor(i / 10)));
  s.close();
  work = tempDir();
});

afterAll(() => {
  fs.rmSync(template, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
  fs.cpSync(template, work, { recursive: true });
});

const F = SMALL.dataFileBytes;
const fileOf = (pos: number) => Math.floor(pos / F) * F;
const dataAt = (pos: number) => dataFilePath(work, fileOf(pos));
const unitFile = (index: number) => indexFilePath(work, Math.floor((index * 32) / SMALL.indexFileBytes) * SMALL.indexFileBytes);
const unitRel = (index: number) => (index * 32) % SMALL.indexFileBytes;

/** Reloads `work`, checks the log ends right before entry `firstLost`, then appends one entry and reloads again. */
function expectRecoveredTo(firstLost: number): DLedgerFileStore {
  const s = openStore(work);
  expect([s.beginIndex, s.endIndex]).toEqual([0, firstLost - 1]);
  expect(s.endTerm).toBe(firstLost > 0 ? entries[firstLost - 1]!.term : -1);
  const end = firstLost > 0 ? entries[firstLost - 1]!.pos + entries[firstLost - 1]!.size : 0;
  expect(s.writePos).toBe(end);
  for (let i = 0; i < firstLost; i++) expect(s.get(i)).toEqual(entries[i]);
  checkFiles(work, s);
  // Zeros from the end (to the end of its file; later files are gone).
  const rel = end - fileOf(end);
  expect(readFileRange(dataAt(end), rel, F - rel).every((b) => b === 0)).toBe(true);
  expect(fs.existsSync(dataFilePath(work, fileOf(end) + F))).toBe(false);
  // Appending goes on where the log ended, exactly as the original did.
  const again = s.appendAsLeader(entries[firstLost]!.body, entries[firstLost]!.term);
  expect(again).toEqual(entries[firstLost]);
  s.close();
  const r = openStore(work);
  expect(r.endIndex).toBe(firstLost);
  checkFiles(work, r);
  return r;
}

describe('recovery', () => {
  it('a clean store comes back whole', () => {
    const s = openStore(work);
    expect([s.beginIndex, s.endIndex, s.endTerm, s.writePos]).toEqual([0, N - 1, 4, entries[N - 1]!.pos + entries[N - 1]!.size]);
    checkFiles(work, s);
    s.close();
  });

  it('torn tail: the last entry without its first 8 bytes (a crash before its header write)', () => {
    const last = entries[N - 1]!;
    patchFile(dataAt(last.pos), last.pos - fileOf(last.pos), Buffer.alloc(8));
    expectRecoveredTo(N - 1).close();
  });

  it('torn tail: the last entry cut inside its header, with its index unit written', () => {
    const last = entries[N - 1]!;
    patchFile(dataAt(last.pos), last.pos - fileOf(last.pos) + 20, Buffer.alloc(last.size - 20));
    expectRecoveredTo(N - 1).close();
  });

  it('zeroed tail: the last three entries read as zeros', () => {
    const first = entries[N - 3]!;
    expect(fileOf(first.pos)).toBe(fileOf(entries[N - 1]!.pos));
    const rel = first.pos - fileOf(first.pos);
    patchFile(dataAt(first.pos), rel, Buffer.alloc(F - rel));
    expectRecoveredTo(N - 3).close();
  });

  it('zeroed tail: a whole last file of zeros after the previous one ended with a blank (the blank is cut too)', () => {
    const k = entries.findIndex((e) => e.pos === fileOf(entries[N - 1]!.pos));
    expect(k).toBeGreaterThan(0);
    patchFile(dataAt(entries[N - 1]!.pos), 0, Buffer.alloc(F));
    // Ours also cuts the blank that is left with no entry after it: the next entry decides afresh.
    expectRecoveredTo(k).close();
  });

  it('index unit mismatch: the index is rewritten from the data from there on, every entry kept', () => {
    // In the second-last file: the scan starts at the third-last (units before it are not checked, as in Java).
    const k = entries.findIndex((e) => fileOf(e.pos) === fileOf(entries[N - 1]!.pos) - F) + 1;
    patchFile(unitFile(k), unitRel(k), encodeIndexUnit({ magic: 1, pos: entries[k]!.pos, size: entries[k]!.size, index: k, term: 9 }));
    patchFile(unitFile(k + 3), unitRel(k + 3), Buffer.alloc(32)); // and one missing further on
    const s = openStore(work);
    expect([s.beginIndex, s.endIndex]).toEqual([0, N - 1]);
    checkFiles(work, s);
    s.close();
  });

  it('index units missing at the end (a crash between the data and the index write): rewritten', () => {
    fs.rmSync(unitFile(N - 1));
    const s = openStore(work);
    expect(s.endIndex).toBe(N - 1);
    checkFiles(work, s);
    s.close();
  });

  it('wrong magic: the log is cut before that entry (0.3.1.2 takes magic 2 for damage)', () => {
    const k = entries.findIndex((e) => fileOf(e.pos) === fileOf(entries[N - 1]!.pos) - F) + 1;
    const e = entries[k]!;
    patchFile(dataAt(e.pos), e.pos - fileOf(e.pos), Buffer.from([0, 0, 0, 2]));
    expectRecoveredTo(k).close();
  });

  it('a term going backwards: the log is cut before that entry', () => {
    const k = N - 4;
    const e = entries[k]!;
    expect(e.term).toBe(entries[k - 1]!.term);
    const lower = Buffer.alloc(8);
    lower.writeBigInt64BE(BigInt(e.term - 1));
    patchFile(dataAt(e.pos), e.pos - fileOf(e.pos) + 16, lower);
    patchFile(unitFile(k), unitRel(k), encodeIndexUnit({ magic: 1, pos: e.pos, size: e.size, index: k, term: e.term - 1 }));
    expectRecoveredTo(k).close();
  });

  it('damage more than a file before the last one is refused, not cut (the official node exits)', () => {
    // The second entry of the third-last file, where the scan starts.
    const e = entries[entries.findIndex((x) => fileOf(x.pos) === fileOf(entries[N - 1]!.pos) - 2 * F) + 1]!;
    patchFile(dataAt(e.pos), e.pos - fileOf(e.pos), Buffer.from([0, 0, 0, 2]));
    expect(() => openStore(work)).toThrow(/check the files manually/);
    // Nothing was cut.
    expect(fs.readdirSync(path.join(work, 'data')).length).toBe(fs.readdirSync(path.join(template, 'data')).length);
  });

  it('starts from the third-last file, walking back when its first entry does not check out', () => {
    const files = fs.readdirSync(path.join(work, 'data')).sort();
    expect(files.length).toBeGreaterThanOrEqual(4);
    const thirdLast = Number(files[files.length - 3]);
    const k = entries.findIndex((e) => e.pos === thirdLast);
    patchFile(unitFile(k), unitRel(k), Buffer.alloc(32));
    const s = openStore(work);
    expect([s.beginIndex, s.endIndex]).toEqual([0, N - 1]);
    checkFiles(work, s);
    s.close();
  });

  it('an empty last data file (a crash between creating and sizing it) is removed', () => {
    const next = fileOf(entries[N - 1]!.pos) + F;
    fs.writeFileSync(dataFilePath(work, next), '');
    const s = openStore(work);
    expect(s.endIndex).toBe(N - 1);
    expect(fs.existsSync(dataFilePath(work, next))).toBe(false);
    s.close();
  });
});
