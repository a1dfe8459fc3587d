// The DLedger file store: appends (leader and follower), the file-end blank, truncation in its three shapes, reads,
// retention and the refusals — checked against the bytes in the files, and again after a reload.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../src/common/logger.js';
import { DLedgerFileStore } from '../../../../src/ha/dledger/store/file-store.js';
import { DLedgerCode, type DLedgerEntry } from '../../../../src/ha/dledger/types.js';
import { setStoreFs, type StoreFs } from '../../../../src/store/io.js';
import { bodyFor, checkFiles, dataFilePath, indexFilePath, openStore, readFileRange, SMALL, tempDir } from './helpers.js';

const dirs: string[] = [];
function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function expectCode(fn: () => unknown, code: number): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect((err as { code?: number } | undefined)?.code, String(err)).toBe(code);
}

describe('appends', () => {
  it('writes the file-end blank (magic −1, bytes left) when an entry plus 8 bytes does not fit', () => {
    const d = dir();
    const s = openStore(d);
    expect([s.beginIndex, s.endIndex, s.endTerm, s.writePos, s.minOffset, s.committedPos]).toEqual([-1, -1, -1, 0, 0, 0]);
    const a = s.appendAsLeader(Buffer.alloc(900, 1), 1); // 948 bytes: 76 left
    const b = s.appendAsLeader(Buffer.alloc(20, 2), 1); // 68 + 8 = 76: fits exactly, 8 left
    const c = s.appendAsLeader(Buffer.alloc(1, 3), 2); // 49 + 8 > 8: blank at 1016, entry at 1024
    expect([a.pos, b.pos, c.pos]).toEqual([0, 948, 1024]);
    expect([a.index, b.index, c.index, c.term]).toEqual([0, 1, 2, 2]);
    const blank = readFileRange(dataFilePath(d, 0), 1016, 8);
    expect([blank.readInt32BE(0), blank.readInt32BE(4)]).toEqual([-1, 8]);
    expect(s.writePos).toBe(1024 + 49);
    expect(fs.statSync(dataFilePath(d, 1024)).size).toBe(1024);
    // Files are full size but sparse (nothing written beyond the data).
    expect(fs.statSync(dataFilePath(d, 1024)).blocks * 512).toBeLessThanOrEqual(8192);
    checkFiles(d, s);
    s.close();
    const r = openStore(d);
    expect([r.beginIndex, r.endIndex, r.endTerm, r.writePos]).toEqual([0, 2, 2, 1073]);
    expect(r.get(2)).toEqual(c);
    r.close();
  });

  it('runs the hook on the entry bytes before they are written (the broker writes PHYSICALOFFSET = pos + 48)', () => {
    const d = dir();
    const s = openStore(d);
    s.appendAsLeader(bodyFor(0), 1);
    const e = s.appendAsLeader(Buffer.alloc(64), 1, (bytes, pos) => bytes.writeBigInt64BE(BigInt(pos + 48), 48 + 28));
    expect(e.body.readBigInt64BE(28)).toBe(BigInt(e.pos + 48));
    s.close();
    const r = openStore(d);
    expect(r.get(1)!.body.readBigInt64BE(28)).toBe(BigInt(e.pos + 48));
    r.close();
  });

  it('follower appends need index end+1 and our position, and change nothing when refused', () => {
    const leaderDir = dir();
    const followerDir = dir();
    const leader = openStore(leaderDir);
    const follower = openStore(followerDir);
    const entries: DLedgerEntry[] = [];
    for (let i = 0; i < 40; i++) entries.push(leader.appendAsLeader(bodyFor(i), 1 + Math.floor(i / 10)));
    for (const e of entries.slice(0, 30)) follower.appendAsFollower(e);
    const before = follower.writePos;
    expectCode(() => follower.appendAsFollower(entries[31]!), DLedgerCode.INCONSISTENT_INDEX);
    expectCode(() => follower.appendAsFollower({ ...entries[30]!, pos: entries[30]!.pos + 1 }), DLedgerCode.DISK_ERROR);
    expectCode(() => follower.appendAsFollower({ ...entries[30]!, term: 2 }), DLedgerCode.INCONSISTENT_TERM);
    expectCode(() => follower.appendAsFollower({ ...entries[30]!, magic: 2 }), DLedgerCode.INCONSISTENT_STATE);
    expect([follower.endIndex, follower.writePos]).toEqual([29, before]);
    for (const e of entries.slice(30)) follower.appendAsFollower(e);
    leader.close();
    follower.close();
    // Byte-identical logs.
    for (const f of fs.readdirSync(path.join(leaderDir, 'data'))) {
      expect(fs.readFileSync(path.join(followerDir, 'data', f)).equals(fs.readFileSync(path.join(leaderDir, 'data', f)))).toBe(true);
    }
    for (const f of fs.readdirSync(path.join(leaderDir, 'index'))) {
      expect(fs.readFileSync(path.join(followerDir, 'index', f)).equals(fs.readFileSync(path.join(leaderDir, 'index', f)))).toBe(true);
    }
  });

  it('a failed write (ENOSPC) is taken back whole: no half entry, no blank, no new file; DISK_FULL', () => {
    const d = dir();
    const s = openStore(d);
    s.appendAsLeader(Buffer.alloc(900, 1), 1); // 76 bytes left in the first file
    const before = s.writePos;
    let failNext = false;
    const faulty = {
      ...fs,
      writeSync: ((...args: Parameters<typeof fs.writeSync>) => {
        if (failNext) {
          failNext = false;
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
        return (fs.writeSync as (...a: unknown[]) => number)(...args);
      }) as typeof fs.writeSync,
    } as StoreFs;
    const previous = setStoreFs(faulty);
    try {
      // Needs the blank: the blank is written, then the entry's first write fails.
      const calls: number[] = [];
      const real = faulty.writeSync;
      faulty.writeSync = ((...args: Parameters<typeof fs.writeSync>) => {
        calls.push(args[0] as number);
        if (calls.length === 2) failNext = true;
        return real(...args);
      }) as typeof fs.writeSync;
      expectCode(() => s.appendAsLeader(Buffer.alloc(100, 2), 1), DLedgerCode.DISK_FULL);
    } finally {
      setStoreFs(previous);
    }
    expect([s.endIndex, s.writePos]).toEqual([0, before]);
    expect(readFileRange(dataFilePath(d, 0), before, 1024 - before).every((b) => b === 0)).toBe(true);
    expect(fs.existsSync(dataFilePath(d, 1024))).toBe(false);
    // The next entry that fits still goes into the first file, exactly where a leader would put it.
    expect(s.appendAsLeader(Buffer.alloc(10, 3), 1).pos).toBe(before);
    s.close();
    const r = openStore(d);
    expect([r.endIndex, r.writePos]).toEqual([1, before + 58]);
    r.close();
  });

  it('refuses entries an official member could not store, and terms going backwards', () => {
    const d = dir();
    const s = openStore(d, { dataFileBytes: 8 * 1024 * 1024, indexFileBytes: 1024 });
    expectCode(() => s.appendAsLeader(Buffer.alloc(4 * 1024 * 1024 - 47), 1), DLedgerCode.INTERNAL_ERROR);
    s.appendAsLeader(Buffer.alloc(4 * 1024 * 1024 - 48), 3);
    expectCode(() => s.appendAsLeader(Buffer.alloc(1), 2), DLedgerCode.INCONSISTENT_TERM);
    expect([s.endIndex, s.endTerm]).toEqual([0, 3]);
    s.close();
    const small = openStore(dir());
    expectCode(() => small.appendAsLeader(Buffer.alloc(1024 - 48 - 7), 1), DLedgerCode.INTERNAL_ERROR);
    small.close();
  });

  it('starts the first data file at the classic commit log end when migrating (§5.4)', () => {
    const d = dir();
    const s = openStore(d, {}, 3 * 1024);
    expect([s.minOffset, s.writePos, s.committedPos]).toEqual([3072, 3072, 3072]);
    expect(fs.statSync(dataFilePath(d, 3072)).size).toBe(1024);
    s.close();
    const r = openStore(d); // no start offset needed any more: the file is there
    expect(r.appendAsLeader(bodyFor(0), 0).pos).toBe(3072);
    expect(r.get(0)!.index).toBe(0);
    r.close();
  });

  it('puts the data files where storePathDLedgerCommitLog says (dataDir), the rest in the base directory', () => {
    const d = dir();
    const data = path.join(dir(), 'elsewhere');
    const s = openStore(d, { dataDir: data });
    for (let i = 0; i < 12; i++) s.appendAsLeader(bodyFor(i), 1);
    s.close();
    expect(fs.readdirSync(data).length).toBeGreaterThan(1);
    expect(fs.readdirSync(d).sort()).toEqual(['checkpoint', 'index']);
    const r = openStore(d, { dataDir: data });
    expect(r.endIndex).toBe(11);
    r.close();
  });

  it('reads raw data across files, and nothing outside [minOffset, writePos)', () => {
    const d = dir();
    const s = openStore(d, { tailCacheBytes: 0, tailCacheEntries: 0 });
    for (let i = 0; i < 30; i++) s.appendAsLeader(bodyFor(i), 1);
    const all = Buffer.concat(fs.readdirSync(path.join(d, 'data')).sort().map((f) => fs.readFileSync(path.join(d, 'data', f))));
    expect(s.readData(0, s.writePos)!.equals(all.subarray(0, s.writePos))).toBe(true);
    expect(s.readData(1000, 100)!.equals(all.subarray(1000, 1100))).toBe(true);
    expect(s.readData(s.writePos - 10, 11)).toBeNull();
    expect(s.readData(-1, 4)).toBeNull();
    expect(s.readData(s.writePos, 0)!.length).toBe(0);
    s.close();
  });

  it('refuses to load a data or index file of another size, naming it', () => {
    const d = dir();
    const s = openStore(d);
    for (let i = 0; i < 30; i++) s.appendAsLeader(bodyFor(i), 1);
    s.close();
    expect(() => openStore(d, { dataFileBytes: 2048 })).toThrow(/00000000000000000000 has 1024 bytes, expected 2048.*mappedFileSizeCommitLog/);
    expect(() => openStore(d, { indexFileBytes: 1024 })).toThrow(/index file .* has 512 bytes, expected 1024/);
    // A data file cut short in the middle of the log is refused too.
    fs.truncateSync(dataFilePath(d, 1024), 1000);
    expect(() => openStore(d)).toThrow(/has 1000 bytes/);
  });
});

describe('truncate (follower, §4.5)', () => {
  function fill(s: DLedgerFileStore, n: number, term = 1): DLedgerEntry[] {
    const out: DLedgerEntry[] = [];
    for (let i = 0; i < n; i++) out.push(s.appendAsLeader(bodyFor(i), term));
    return out;
  }

  it('the same entry: cuts right after it; the cut-off bytes are zeros', () => {
    const d = dir();
    const s = openStore(d);
    const es = fill(s, 20);
    expect(s.truncate(es[7]!)).toBe(7);
    expect([s.endIndex, s.endTerm, s.writePos]).toEqual([7, 1, es[7]!.pos + es[7]!.size]);
    expect(s.get(8)).toBeNull();
    const file = Math.floor(s.writePos / 1024) * 1024;
    expect(readFileRange(dataFilePath(d, file), s.writePos - file, file + 1024 - s.writePos).every((b) => b === 0)).toBe(true);
    expect(fs.existsSync(dataFilePath(d, file + 1024))).toBe(false);
    s.appendAsFollower({ ...es[8]!, term: 2 });
    checkFiles(d, s);
    s.close();
    const r = openStore(d);
    expect([r.endIndex, r.endTerm]).toEqual([8, 2]);
    r.close();
  });

  it('a different entry: cuts at its position and writes it', () => {
    const d = dir();
    const s = openStore(d);
    const es = fill(s, 20);
    const other: DLedgerEntry = { ...es[9]!, term: 2, body: Buffer.from('replacement') };
    other.size = 48 + other.body.length;
    expect(s.truncate(other)).toBe(9);
    expect(s.get(9)).toEqual(other);
    expect([s.endIndex, s.endTerm, s.writePos]).toEqual([9, 2, other.pos + other.size]);
    checkFiles(d, s);
    s.close();
    const r = openStore(d);
    expect([r.beginIndex, r.endIndex, r.endTerm]).toEqual([0, 9, 2]);
    expect(r.get(9)!.body.toString()).toBe('replacement');
    r.close();
  });

  it('entry 0 on an empty store is a plain append (COMPARE 0 → 406 → TRUNCATE 0, §3.2)', () => {
    const leader = openStore(dir());
    const es = fill(leader, 3);
    leader.close();
    const d = dir();
    const s = openStore(d);
    expect(s.truncate(es[0]!)).toBe(0);
    s.appendAsFollower(es[1]!);
    expect([s.beginIndex, s.endIndex, s.minOffset]).toEqual([0, 1, 0]);
    s.close();
  });

  it('a position outside the files: rebuilds them there, and (ours) recovers that after a restart', () => {
    const leaderDir = dir();
    const leader = openStore(leaderDir);
    const es = fill(leader, 60);
    // The leader drops old files; its begin entry is now at a file start far beyond the follower's end.
    while (leader.dataFiles.length > 3) expect(leader.dropOldestDataFile(leader.dataFiles[0]!.filePath)).toBe(true);
    const beginEntry = leader.get(leader.beginIndex)!;
    leader.close();
    const d = dir();
    const s = openStore(d);
    fill(s, 3);
    expect(s.truncate(beginEntry)).toBe(beginEntry.index);
    expect([s.beginIndex, s.endIndex, s.minOffset]).toEqual([beginEntry.index, beginEntry.index, beginEntry.pos]);
    expect(fs.readdirSync(path.join(d, 'data'))).toEqual([path.basename(dataFilePath(d, beginEntry.pos))]);
    for (const e of es.slice(beginEntry.index + 1)) s.appendAsFollower(e);
    s.close();
    const r = openStore(d);
    expect([r.beginIndex, r.endIndex]).toEqual([beginEntry.index, 59]);
    r.close();
  });

  it('mid-file rebuild (a leader whose begin is mid-file): the checkpoint keeps where the data begins', () => {
    const d = dir();
    const s = openStore(d);
    fill(s, 2);
    const e: DLedgerEntry = { magic: 1, size: 48 + 10, index: 500, term: 4, pos: 5 * 1024 + 300, channel: 0, chainCrc: 0, bodyCrc: 0, body: Buffer.alloc(10, 7) };
    s.truncate(e);
    s.appendAsFollower({ ...e, index: 501, pos: e.pos + e.size });
    expect([s.beginIndex, s.endIndex, s.minOffset, s.writePos]).toEqual([500, 501, 5420, 5420 + 116]);
    expect(s.readData(5419, 1)).toBeNull();
    s.close();
    expect(fs.readFileSync(path.join(d, 'checkpoint'), 'utf8')).toMatch(/^committedIndex=-1\nendIndex=501\nrocketmqTsDataMinOffset=5420\n$/);
    const r = openStore(d);
    expect([r.beginIndex, r.endIndex, r.minOffset, r.endTerm]).toEqual([500, 501, 5420, 4]);
    expect(r.get(501)!.body.equals(e.body)).toBe(true);
    r.close();
    // What the official node does with the same files (no key in its checkpoint): nothing at the file start, all cut.
    fs.writeFileSync(path.join(d, 'checkpoint'), 'committedIndex=-1\nendIndex=501\n');
    const o = openStore(d);
    expect([o.beginIndex, o.endIndex]).toEqual([-1, -1]);
    o.close();
  });

  it('truncating below the committed index lowers it (logged as an error)', () => {
    const s = openStore(dir());
    const es = fill(s, 10);
    s.updateCommittedIndex(8);
    s.truncate(es[6]!);
    expect([s.endIndex, s.committedIndex, s.committedPos]).toEqual([6, 6, es[6]!.pos + es[6]!.size]);
    // A different entry 5: the log is cut before it, so entry 4 is the last committed one.
    s.truncate({ ...es[5]!, term: 3 });
    expect([s.endIndex, s.committedIndex, s.committedPos]).toEqual([5, 4, es[4]!.pos + es[4]!.size]);
    s.close();
  });
});

describe('commit index and retention', () => {
  it('moves the committed index forward only, capped at the end', () => {
    const s = openStore(dir());
    expect(s.committedPos).toBe(0);
    s.updateCommittedIndex(3);
    expect(s.committedIndex).toBe(-1); // empty log
    const es: DLedgerEntry[] = [];
    for (let i = 0; i < 6; i++) es.push(s.appendAsLeader(bodyFor(i), 1));
    s.updateCommittedIndex(3);
    s.updateCommittedIndex(2);
    expect([s.committedIndex, s.committedPos]).toEqual([3, es[3]!.pos + es[3]!.size]);
    s.updateCommittedIndex(99);
    expect([s.committedIndex, s.committedPos]).toEqual([5, s.writePos]);
    s.close();
  });

  it('drops the oldest data file (never the last); the begin index and the index files follow', () => {
    const d = dir();
    const s = openStore(d);
    for (let i = 0; i < 80; i++) s.appendAsLeader(bodyFor(i), 1);
    const files = s.dataFiles;
    expect(files[0]).toEqual({ filePath: dataFilePath(d, 0), fromOffset: 0, endOffset: 1024 });
    expect(s.dropOldestDataFile(files[1]!.filePath)).toBe(false);
    expect(s.dropOldestDataFile(files[0]!.filePath)).toBe(true);
    expect(fs.existsSync(files[0]!.filePath)).toBe(false);
    const first = s.get(s.beginIndex)!;
    expect(first.pos).toBe(1024);
    expect(s.minOffset).toBe(1024);
    expect(s.get(s.beginIndex - 1)).toBeNull();
    while (s.dataFiles.length > 1) expect(s.dropOldestDataFile(s.dataFiles[0]!.filePath)).toBe(true);
    expect(s.dropOldestDataFile(s.dataFiles[0]!.filePath)).toBe(false);
    const begin = s.beginIndex;
    const minOffset = s.minOffset;
    // Index files wholly below the begin index are gone.
    const firstIndexFile = Math.floor((begin * 32) / SMALL.indexFileBytes) * SMALL.indexFileBytes;
    expect(fs.readdirSync(path.join(d, 'index')).sort()[0]).toBe(path.basename(indexFilePath(d, firstIndexFile)));
    s.close();
    const r = openStore(d);
    expect([r.beginIndex, r.endIndex, r.minOffset]).toEqual([begin, 79, minOffset]);
    expect(r.get(begin)!.index).toBe(begin);
    r.close();
  });
});

it('close flushes; a second close and calls after it are harmless or refused', () => {
  const s = new DLedgerFileStore({ baseDir: dir(), ...SMALL }, silentLogger());
  expectCode(() => s.get(0), DLedgerCode.DISK_ERROR);
  s.loadSync(0);
  s.appendAsLeader(bodyFor(1), 1);
  s.close();
  s.close();
  expectCode(() => s.appendAsLeader(bodyFor(2), 1), DLedgerCode.DISK_ERROR);
});
