import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeRecord, type DefaultMessageStore } from '../../../src/store/index.js';
import type { MessageFilter } from '../../../src/store/types.js';
import { READ_BLOCK_BYTES, ReadBlocks } from '../../../src/store/commit-log/read-blocks.js';
import { makeMessage, makeTempDir, openStore, removeDir } from '../helpers.js';
import { compileSql92 } from '../../../src/broker/filter/sql92/index.js';
import { pullMessageFilter, sqlPropertiesFilter } from '../../../src/broker/filter/sql-filter.js';
import { buildSubscriptionData, tagsCodeFilter } from '../../../src/broker/filter/tag-filter.js';

describe('ReadBlocks', () => {
  it('serves views inside a kept block only, and forgets the least recently used past its cap', () => {
    const b = new ReadBlocks(100, 2);
    b.put(100, Buffer.alloc(100, 1));
    b.put(250, Buffer.alloc(50, 2)); // a block clipped at a segment start: [250, 300)
    expect(b.get(120, 10)).toEqual(Buffer.alloc(10, 1));
    expect(b.get(195, 10)).toBeUndefined(); // runs past the block's end
    expect(b.get(240, 5)).toBeUndefined(); // block 2, but before what was read of it
    expect(b.get(260, 40)).toEqual(Buffer.alloc(40, 2));
    b.get(100, 1); // block 1 used last: block 2 is the oldest now
    b.put(300, Buffer.alloc(100, 3));
    expect(b.size).toBe(2);
    expect(b.get(260, 1)).toBeUndefined();
    expect(b.get(100, 1)).toEqual(Buffer.alloc(1, 1));
  });

  it('tells where a record lies in a kept block without a view, pinned as a view is', () => {
    const b = new ReadBlocks(100, 1);
    const m1 = b.allocate(100);
    m1.fill(0);
    m1.write('abc', 87); // log offset 287
    b.put(250, m1.subarray(50, 100), m1); // clipped at a segment start: [250, 300) in m1[50, 100)
    const pins = b.newPins();
    const held = b.holding(287, 3, pins)!;
    expect(held.start).toBe(250);
    expect(held.buf.toString('latin1', 287 - held.start, 290 - held.start)).toBe('abc');
    expect(b.holding(240, 5, pins)).toBeUndefined(); // before what was read of the block
    expect(b.holding(298, 5, pins)).toBeUndefined(); // runs past its end
    expect(pins.count).toBe(1);
    b.put(300, b.allocate(100)); // the held block leaves the LRU: its buffer waits for the pins
    expect(b.allocate(100)).not.toBe(m1);
    pins.release();
    expect(b.allocate(100)).toBe(m1);
  });

  it('forgets blocks at or past a cut, and moves its generation on each cut', () => {
    const b = new ReadBlocks(100, 8);
    b.put(0, Buffer.alloc(100));
    b.put(100, Buffer.alloc(100));
    b.put(200, Buffer.alloc(60));
    const g = b.generation;
    b.dropFrom(150);
    expect(b.generation).toBe(g + 1);
    expect(b.get(0, 100)).toBeDefined();
    expect(b.get(100, 10)).toBeUndefined();
    expect(b.get(200, 10)).toBeUndefined();
    b.clear();
    expect(b.size).toBe(0);
    expect(b.generation).toBe(g + 2);
  });

  it('reads a sparse block whole at its first want only while the last such blocks were used enough', () => {
    // 1,000-byte blocks, 2 kept, pays at 1/32 (32 bytes): each sparse pull wants 16 bytes of a block.
    const b = new ReadBlocks(1000, 2, 32);
    let key = 0;
    /** A block wanted `wantsBeforeRead` times (16 bytes each), read, then viewed until `usedBytes` of it were used. */
    const sparseBlock = (wantsBeforeRead: number, usedBytes: number) => {
      const at = key++ * 1000;
      let go = false;
      for (let w = 0; w < wantsBeforeRead; w++) go = b.want(at, 16);
      expect(go).toBe(true);
      b.put(at, Buffer.alloc(1000));
      for (let used = 16 * wantsBeforeRead; used < usedBytes; used += 16) b.get(at + used, 16);
    };
    // No history: one pull's 16 bytes do not pay, two pulls' do.
    expect(b.want(key * 1000, 16)).toBe(false);
    sparseBlock(1, 128);
    // Nine more used 128 bytes each (the queues' consumers moving through the log together): with 2 kept, eight of
    // the ten have left the cache, the outcomes a forecast needs ...
    for (let i = 0; i < 9; i++) sparseBlock(2, 128);
    // ... make the next block worth reading at its first want.
    expect(b.want(key * 1000, 16)).toBe(true);
    sparseBlock(1, 128);
    // Blocks read that way that only their first pull used (a lone reader) stop the forecast once a few of them
    // have left the cache (2 kept here; 16 in a store).
    let forecasts = 0;
    for (let i = 0; i < 40; i++) {
      const at = key++ * 1000;
      if (!b.want(at, 16)) break;
      forecasts++;
      b.put(at, Buffer.alloc(1000));
    }
    // The first two read push out the 2 paid blocks still kept; the next four push out four unpaid ones, which
    // bring the paid share of the outcomes under 3/4.
    expect(forecasts).toBe(2 + 4);
    expect(b.want(key * 1000, 16)).toBe(false);
  });

  it('reads into the buffer of a block out of the LRU only once no pinned view of it is held, and never after an unpinned view', () => {
    const b = new ReadBlocks(100, 1);
    const m1 = b.allocate(100);
    b.put(0, m1.subarray(0, 100), m1);
    const pins = b.newPins();
    expect(b.get(10, 5, pins)).toBeDefined();
    expect(b.get(20, 5, pins)).toBeDefined(); // a run of views of one block pins it once
    expect(pins.count).toBe(1);
    const m2 = b.allocate(100);
    expect(m2).not.toBe(m1);
    b.put(100, m2, m2); // block 0 leaves the LRU, still pinned
    expect(b.allocate(100)).not.toBe(m1);
    expect(b.reusedBuffers).toBe(0);
    pins.release();
    pins.release(); // twice: harmless
    expect(b.allocate(100)).toBe(m1);
    expect(b.reusedBuffers).toBe(1);
    // A view without pins (or one taken after the pins were released): the block is never reused.
    const late = b.newPins();
    late.release();
    expect(b.get(110, 5, late)).toBeDefined();
    b.put(200, m1, m1);
    expect(b.allocate(100)).not.toBe(m2);
    expect(b.get(210, 5)).toBeDefined();
    const m3 = b.allocate(100);
    b.put(300, m3, m3);
    expect(b.allocate(100)).not.toBe(m1);
    // A clipped block's allocation goes back whole; a read not kept gives its buffer back at once.
    const m4 = b.allocate(40);
    expect(m4.length).toBe(100);
    b.giveBack(m4);
    expect(b.allocate(100)).toBe(m4);
  });
});

/**
 * Pulls every queue of `topic` at once, 32 at a time and round after round, as a push consumer's pulls arrive
 * together, until each queue's offset passes `perQueue`. Checks that every record is of its queue, with the body
 * the tests write (its first int is queueOffset * queues + queueId). `release`: give each answer's pins back at once.
 */
async function drainSideBySide(
  store: DefaultMessageStore, topic: string, queues: number, perQueue: number, filter: MessageFilter | undefined,
  release: boolean,
): Promise<{ taken: number[][]; pulls: number }> {
  let pulls = 0;
  const taken = await Promise.all(Array.from({ length: queues }, async (_, q) => {
    let next = 0;
    const offsets: number[] = [];
    while (next < perQueue) {
      const r = await store.getMessage(topic, q, next, 32, 1 << 20, filter);
      pulls++;
      for (const rec of r.records) {
        const d = decodeRecord(rec);
        expect(d.queueId).toBe(q);
        expect(d.body.readUInt32BE(0)).toBe(d.queueOffset * queues + q);
        offsets.push(d.queueOffset);
      }
      if (release) r.pins?.release();
      next = r.nextBeginOffset;
    }
    return offsets;
  }));
  return { taken, pulls };
}

describe('pulls beyond the tail read dense blocks whole', () => {
  let root: string;
  let store: DefaultMessageStore;
  beforeEach(async () => {
    root = await makeTempDir();
    // No tail cache: every pull reads the log. 1.5 MiB files: blocks are clipped at file boundaries too.
    store = await openStore(path.join(root, 's'), { commitLogTailCacheBytes: 1, mappedFileSizeCommitLog: 3 * 512 * 1024 });
  });
  afterEach(async () => {
    await store.shutdown();
    await removeDir(root);
  });

  /** 16 interleaved queues pulled side by side, 32 at a time, as a push consumer does; every record checked. */
  async function pullDenseQueues(): Promise<{ records: number; reads: number }> {
    const QUEUES = 16;
    const PER_QUEUE = 300;
    const bodies = new Map<string, Buffer>();
    for (let i = 0; i < QUEUES * PER_QUEUE; i++) {
      const q = i % QUEUES;
      const n = Math.floor(i / QUEUES);
      const body = Buffer.alloc(200 + ((i * 37) % 500), (i * 7) & 0xff);
      body.writeUInt32BE(i, 0);
      bodies.set(`${q}:${n}`, body);
      await store.putMessage(makeMessage('Dense', q, body));
    }
    expect(store.getMaxPhyOffset()).toBeGreaterThan(2 * READ_BLOCK_BYTES);
    const readsBefore = store.stats.syncReads + store.stats.asyncReads;
    let records = 0;
    const next = new Array<number>(QUEUES).fill(0);
    while (next.some((n) => n < PER_QUEUE)) {
      for (let q = 0; q < QUEUES; q++) {
        if (next[q]! >= PER_QUEUE) continue;
        const r = await store.getMessage('Dense', q, next[q]!, 32, 1 << 20);
        expect(r.status).toBe('FOUND');
        r.records.forEach((rec, k) => {
          const d = decodeRecord(rec);
          expect(d.queueId).toBe(q);
          expect(d.queueOffset).toBe(next[q]! + k);
          expect(d.body.equals(bodies.get(`${q}:${next[q]! + k}`)!)).toBe(true);
        });
        records += r.records.length;
        next[q] = r.nextBeginOffset;
      }
    }
    expect(records).toBe(QUEUES * PER_QUEUE);
    return { records, reads: store.stats.syncReads + store.stats.asyncReads - readsBefore };
  }

  it('returns every record of 16 interleaved queues byte for byte, with far fewer reads than records', async () => {
    const { records, reads } = await pullDenseQueues();
    // One read per record without blocks (plus the consume-queue reads); with them a few per MiB.
    expect(reads).toBeLessThan(records / 8);
  });

  it('reads record by record with read-ahead off (dataReadAheadEnable=false, mqadmin setCommitLogReadAheadMode 1)', async () => {
    store.updateConfig({ dataReadAheadEnable: false });
    const { records, reads } = await pullDenseQueues();
    // one read per record beyond the tail kept in memory (2,883 of 4,800 here; 3 reads with read-ahead on)
    expect(reads).toBeGreaterThan(records / 2);
  });

  it('reads a block once for the pulls of all queues at the same time (SQL92 filter, 1 in 4 taken)', async () => {
    const QUEUES = 16;
    const PER_QUEUE = 400;
    for (let i = 0; i < QUEUES * PER_QUEUE; i++) {
      const q = i % QUEUES;
      const n = Math.floor(i / QUEUES);
      const body = Buffer.alloc(500 + ((i * 37) % 300), (i * 7) & 0xff);
      body.writeUInt32BE(i, 0);
      await store.putMessage(makeMessage('Par', q, body, { props: { k: String(n % 4), n: String(n) } }));
    }
    const blocks = Math.ceil(store.getMaxPhyOffset() / READ_BLOCK_BYTES) + 2; // + clipping at the 1.5 MiB files
    const sql = compileSql92('k = 0');
    const readsBefore = store.stats.syncReads + store.stats.asyncReads;
    const sqlFilter = pullMessageFilter(undefined, sqlPropertiesFilter(sql));
    const { taken, pulls } = await drainSideBySide(store, 'Par', QUEUES, PER_QUEUE, sqlFilter, false);
    for (const t of taken) expect(t).toEqual(Array.from({ length: PER_QUEUE / 4 }, (_, i) => i * 4));
    const reads = store.stats.syncReads + store.stats.asyncReads - readsBefore;
    // Each pull reads its consume-queue window; the log's blocks are read about once each (not once per queue).
    expect(reads - pulls).toBeLessThanOrEqual(2 * blocks);
  });

  it('reads a block whole once the sparse pulls of several queues want enough of it (tag filter, 1 in 8 taken)', async () => {
    // 8 queues of 1 KiB records, 1 in 8 of each tagged t0: a queue's matches lie ~64 KiB apart, so one pull of 32
    // wants 1/64 of the stretch it reads, too little for a block; the 8 queues' pulls together want 1/8 of it.
    const QUEUES = 8;
    const PER_QUEUE = 1024;
    for (let i = 0; i < QUEUES * PER_QUEUE; i += 256) {
      await Promise.all(Array.from({ length: 256 }, (_, k) => {
        const q = (i + k) % QUEUES;
        const n = Math.floor((i + k) / QUEUES);
        const body = Buffer.alloc(1000, (i + k) & 0xff);
        body.writeUInt32BE(i + k, 0);
        return store.putMessage(makeMessage('Tagged', q, body, { tags: `t${n % 8}` }));
      }));
    }
    expect(store.getMaxPhyOffset()).toBeGreaterThan(6 * READ_BLOCK_BYTES);
    const filter = pullMessageFilter(tagsCodeFilter(buildSubscriptionData('Tagged', 't0')), undefined);
    const readsBefore = store.stats.syncReads + store.stats.asyncReads;
    const { taken, pulls } = await drainSideBySide(store, 'Tagged', QUEUES, PER_QUEUE, filter, true);
    for (const t of taken) expect(t).toEqual(Array.from({ length: PER_QUEUE / 8 }, (_, i) => i * 8));
    const records = taken.reduce((n, t) => n + t.length, 0);
    const reads = store.stats.syncReads + store.stats.asyncReads - readsBefore;
    // Record by record this is one read per record taken (1,024) plus the consume-queue reads (one per pull); with
    // the blocks the queues want together, the first pull into each block reads its own records and the rest share it.
    expect(records).toBe(QUEUES * PER_QUEUE / 8);
    expect(reads - pulls).toBeLessThan(records / 3);
  });

  it('never reads into the buffer of a block a held pull answer views, while released ones are reused', async () => {
    // 16 queues x 1 KiB records: a round of pulls (32 from every queue) spans ~0.5 MiB of the log, a block two
    // rounds. The answers of every 4th round are held (their pins not released) while the drain goes on through
    // ~36 MiB, more than twice the 16 blocks kept; the others are released at once, so the blocks only they
    // viewed are read into again. Every held record must still be the one stored.
    const QUEUES = 16;
    const PER_QUEUE = 2304;
    const BODY = 1000;
    const bodyOf = (i: number) => {
      const b = Buffer.alloc(BODY, (i * 7) & 0xff);
      b.writeUInt32BE(i, 0);
      return b;
    };
    for (let i = 0; i < QUEUES * PER_QUEUE; i += 256) {
      await Promise.all(Array.from({ length: 256 }, (_, k) => store.putMessage(makeMessage('Held', (i + k) % QUEUES, bodyOf(i + k)))));
    }
    expect(store.getMaxPhyOffset()).toBeGreaterThan(2 * 16 * READ_BLOCK_BYTES);
    const reusedBefore = store.stats.readBlocksReused;
    const held: Array<{ q: number; from: number; records: Buffer[] }> = [];
    const next = new Array<number>(QUEUES).fill(0);
    for (let round = 0; next.some((n) => n < PER_QUEUE); round++) {
      await Promise.all(Array.from({ length: QUEUES }, async (_, q) => {
        if (next[q]! >= PER_QUEUE) return;
        const from = next[q]!;
        const r = await store.getMessage('Held', q, from, 32, 1 << 20);
        expect(r.status).toBe('FOUND');
        next[q] = r.nextBeginOffset;
        if (round % 4 === 0) held.push({ q, from, records: r.records });
        else r.pins?.release();
      }));
    }
    // Buffers were read into again (the test would prove nothing otherwise) ...
    expect(store.stats.readBlocksReused - reusedBefore).toBeGreaterThan(8);
    // ... and none a held answer views: the bytes it points at are the record stored there.
    let records = 0;
    for (const h of held) {
      h.records.forEach((rec, k) => {
        const d = decodeRecord(rec);
        expect(d.queueId).toBe(h.q);
        expect(d.queueOffset).toBe(h.from + k);
        const i = (h.from + k) * QUEUES + h.q;
        expect(d.body.equals(bodyOf(i))).toBe(true);
        records++;
      });
    }
    expect(records).toBeGreaterThan(QUEUES * PER_QUEUE / 5);
  });

  it('reads a sparse pull record by record: 1 KiB records 128 KiB apart do not pull in whole blocks', async () => {
    for (let i = 0; i < 40; i++) {
      await store.putMessage(makeMessage('Sparse', 0, Buffer.alloc(1000, i)));
      for (let k = 0; k < 127; k++) await store.putMessage(makeMessage('Busy', 0, Buffer.alloc(1000, 0xee)));
    }
    const readsBefore = store.stats.syncReads + store.stats.asyncReads;
    const r = await store.getMessage('Sparse', 0, 0, 32, 1 << 20);
    expect(r.records.map((rec) => decodeRecord(rec).body[0])).toEqual(Array.from({ length: 32 }, (_, i) => i));
    // one read per record (plus the consume-queue's); whole blocks would be ~4 reads of 1 MiB for 32 KiB taken
    expect(store.stats.syncReads + store.stats.asyncReads - readsBefore).toBeGreaterThanOrEqual(32);
  });
});
