// Pulls behind a consume queue's in-memory tail read a block of entries ahead and take the next pulls' entries from
// it (src/store/consume-queue/read-ahead.ts): fewer reads, the same answers, and no stale entry after a rewrite.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeRecord, type DefaultMessageStore } from '../../src/store/index.js';
import { EntryReadAhead } from '../../src/store/consume-queue/read-ahead.js';
import { javaStringHashCode } from '../../src/common/java-hash.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

const MESSAGES = 6000;
const TAGS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

let root: string;
let store: DefaultMessageStore;

const reads = () => store.stats.syncReads + store.stats.asyncReads;

describe('consume-queue read-ahead', () => {
  beforeEach(async () => {
    root = await makeTempDir();
    // Queue files of 10,000 entries, a tail of 64 entries, and a commit log whose records stay in its memory: every
    // read counted below is a consume-queue read.
    store = await openStore(root, {
      mappedFileSizeCommitLog: 16 * 1024 * 1024, mappedFileSizeConsumeQueue: 10000 * 20,
      consumeQueueTailCacheEntries: 64, flushIntervalConsumeQueue: 1,
    });
    let i = 0;
    const put = async (n: number): Promise<void> => {
      for (const end = i + n; i < end; i++) {
        await store.putMessage(makeMessage('R', 0, Buffer.alloc(50, i), { tags: TAGS[i % TAGS.length] }));
      }
      await store.cqStore.find('R', 0)!.drainWrites();
    };
    // In batches with the queue's writes drained after each: the tail drops only written entries, and only when an
    // append finds it full, so entries written late would keep it large (and the first entries in memory).
    while (i < MESSAGES) await put(500);
    const cq = store.cqStore.find('R', 0)!;
    while (cq.entriesInMemory(0, 1) !== undefined && i < 4 * MESSAGES) await put(500);
    expect(cq.entriesInMemory(0, 1)).toBeUndefined();
  });

  afterEach(async () => {
    await store.shutdown();
    await removeDir(root);
  });

  it('serves a drain of 32-entry pulls behind the tail with one read per block, in order', async () => {
    const cq = store.cqStore.find('R', 0)!;
    const before = reads();
    let offset = 0;
    let pulls = 0;
    // Up to the in-memory tail (a pull reaching it stops there; the next one reads the tail).
    while (cq.entriesInMemory(offset, 1) === undefined) {
      const r = await store.getMessage('R', 0, offset, 32, 1 << 20);
      pulls++;
      expect(r.status).toBe('FOUND');
      const n = r.records.length;
      expect(n).toBeGreaterThan(0);
      expect(r.records.map((rec) => decodeRecord(rec).queueOffset)).toEqual(Array.from({ length: n }, (_, i) => offset + i));
      offset = r.nextBeginOffset;
    }
    expect(offset).toBeGreaterThan(MESSAGES / 2);
    const diskReads = reads() - before;
    // One read per pull without it; with it, one per 819 entries (~25 pulls).
    expect(pulls).toBeGreaterThan(45);
    expect(diskReads).toBeLessThanOrEqual(Math.ceil(offset / 819) + 1);
    expect(store.stats.consumeQueueReadAheadHits).toBeGreaterThanOrEqual(pulls - diskReads);
  });

  it('serves tag-filtered pulls (800-entry windows) from blocks of twice that', async () => {
    const tag = javaStringHashCode('c');
    const filter = { isMatchedByConsumeQueue: (code: number) => code === tag };
    const cq = store.cqStore.find('R', 0)!;
    const before = reads();
    let offset = 0;
    let pulls = 0;
    const got: number[] = [];
    while (cq.entriesInMemory(offset, 1) === undefined) {
      const r = await store.getMessage('R', 0, offset, 32, 1 << 20, filter);
      pulls++;
      for (const rec of r.records) got.push(decodeRecord(rec).queueOffset);
      offset = r.nextBeginOffset;
    }
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => 2 + i * 8));
    expect(got.length).toBeGreaterThan(MESSAGES / 16);
    // 32 matches span 256 entries: a 1,600-entry block serves about 4 pulls of 800-entry windows.
    expect(pulls).toBeGreaterThan(10);
    expect(reads() - before).toBeLessThan(pulls / 2);
  });

  it('gives the rewritten entry after a repair, not the block read before it', async () => {
    const cq = store.cqStore.find('R', 0)!;
    const first = await cq.readEntriesFromDisk(0, 32, true);
    expect(first!.readInt32BE(5 * 20 + 8)).toBeGreaterThan(0);
    const hits = store.stats.consumeQueueReadAheadHits;
    expect(await cq.readEntriesFromDisk(0, 32, true)).not.toBeNull();
    expect(store.stats.consumeQueueReadAheadHits).toBe(hits + 1);
    const e6 = await cq.readEntry(6);
    expect(cq.repairEntrySync(5, e6!.commitLogOffset, e6!.sizeBytes, 0)).toBe(true);
    const again = await cq.readEntriesFromDisk(0, 32, true);
    expect(again!.readBigInt64BE(5 * 20)).toBe(BigInt(e6!.commitLogOffset));
  });
});

describe('EntryReadAhead', () => {
  it('keeps at most its bound of blocks, least recently used dropped, and views outlive their block', () => {
    const ra = new EntryReadAhead(10, 2);
    const [q1, q2, q3] = [{}, {}, {}];
    const block = (n: number, base: number) => {
      const b = Buffer.alloc(n * 20);
      for (let i = 0; i < n; i++) b.writeInt32BE(base + i, i * 20);
      return b;
    };
    ra.put(q1, 100, block(10, 100));
    ra.put(q2, 0, block(10, 0));
    const view = ra.get(q1, 102, 105)!; // q1 now the most recent
    expect([0, 1, 2].map((i) => view.readInt32BE(i * 20))).toEqual([102, 103, 104]);
    expect(ra.get(q1, 99, 101)).toBeUndefined();
    expect(ra.get(q1, 105, 111)).toBeUndefined();
    ra.put(q3, 0, block(10, 0));
    expect(ra.size).toBe(2);
    expect(ra.get(q2, 0, 1)).toBeUndefined();
    expect(ra.get(q1, 100, 110)).toBeDefined();
    ra.drop(q1);
    expect(ra.get(q1, 100, 101)).toBeUndefined();
    expect(view.readInt32BE(0)).toBe(102);
  });
});
