import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageCacheReader, SYNC_READ_MAX_BYTES } from '../../src/store/page-cache-reader.js';

describe('PageCacheReader', () => {
  let dir: string;
  let fd: number;
  const data = Buffer.alloc(SYNC_READ_MAX_BYTES + 4096);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + 3) & 0xff;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-pcr-'));
    const file = path.join(dir, 'f');
    fs.writeFileSync(file, data);
    fd = fs.openSync(file, 'r');
  });
  afterAll(() => {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function readBack(r: PageCacheReader, position: number, length: number, likelyCached: boolean): Promise<Buffer> {
    const buf = Buffer.alloc(length);
    const n = await r.read(fd, buf, 0, length, position, likelyCached);
    return buf.subarray(0, n);
  }

  it('reads the same bytes on both paths, short at the end of the file', async () => {
    const r = new PageCacheReader();
    expect((await readBack(r, 100, 5000, true)).equals(data.subarray(100, 5100))).toBe(true);
    expect((await readBack(r, 100, 5000, false)).equals(data.subarray(100, 5100))).toBe(true);
    expect((await readBack(r, data.length - 10, 100, true)).equals(data.subarray(data.length - 10))).toBe(true);
    expect(r.stats.syncReads).toBe(2);
    expect(r.stats.asyncReads).toBe(1);
  });

  it('sends data not expected in the page cache, and reads above the size cap, to the thread pool', async () => {
    const r = new PageCacheReader();
    await readBack(r, 0, 64, false);
    const big = await readBack(r, 0, SYNC_READ_MAX_BYTES + 1, true);
    expect(big.equals(data.subarray(0, SYNC_READ_MAX_BYTES + 1))).toBe(true);
    expect(r.stats).toEqual({ syncReads: 0, asyncReads: 2, slowSyncReads: 0 });
  });

  it('backs off to the thread pool after a streak of slow reads only, and comes back after the back-off', async () => {
    let clockMs = 0;
    let readCostMs = 0;
    // Every call to now() advances the clock by half of readCostMs: a read (between two calls) measures that half.
    const r = new PageCacheReader(2, 3, 1000, () => (clockMs += readCostMs / 2));
    readCostMs = 5; // measured 2.5 ms: slow
    await readBack(r, 0, 64, true);
    await readBack(r, 0, 64, true);
    readCostMs = 0.1; // a fast read ends the streak: a preempted thread, not a cold cache
    await readBack(r, 0, 64, true);
    readCostMs = 5;
    await readBack(r, 0, 64, true);
    await readBack(r, 0, 64, true);
    expect(r.wouldReadSync(64, true)).toBe(true);
    await readBack(r, 0, 64, true); // third slow read in a row
    expect(r.stats.slowSyncReads).toBe(5);
    expect(r.wouldReadSync(64, true)).toBe(false);
    await readBack(r, 0, 64, true);
    expect(r.stats.asyncReads).toBe(1);
    clockMs += 1000;
    expect(r.wouldReadSync(64, true)).toBe(true);
  });

  it('rejects like the async path on a bad descriptor', async () => {
    const r = new PageCacheReader();
    await expect(r.read(-1, Buffer.alloc(8), 0, 8, 0, true)).rejects.toThrow();
    await expect(r.read(-1, Buffer.alloc(8), 0, 8, 0, false)).rejects.toThrow();
  });
});
