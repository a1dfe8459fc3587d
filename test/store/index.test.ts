// The key index: Java's IndexFile layout, key and unique-key queries, time ranges, maxNum, collisions, rollover.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeRecord, type PutResult } from '../../src/store/index.js';
import { indexFileName, indexKeyHash } from '../../src/store/index/index-file.js';
import { javaStringHashCode } from '../../src/common/java-hash.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';
import { indexDir, indexFileNames, ModelIndex, queryBodies, readIndexFile } from './index-helpers.js';

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  vi.useRealTimers();
  await removeDir(root);
});

const SMALL = { maxHashSlotNum: 16, maxIndexNum: 64 };

function keyed(topic: string, body: string, keys?: string, uniq?: string, sysFlag = 0) {
  return makeMessage(topic, 0, body, { keys, props: uniq ? { UNIQ_KEY: uniq } : {}, sysFlag });
}

describe('index key hash and file names (Java IndexFile / UtilAll)', () => {
  it('hashes keys as abs(String.hashCode), 0 for Integer.MIN_VALUE', () => {
    expect(indexKeyHash('hello')).toBe(99162322);
    expect(javaStringHashCode('polygenelubricants')).toBe(-2147483648);
    expect(indexKeyHash('polygenelubricants')).toBe(0);
    const neg = 'TopicTest#KEY-negative-hash-0';
    const h = javaStringHashCode(neg);
    expect(indexKeyHash(neg)).toBe(Math.abs(h));
    // UTF-16 code units, as Java.
    expect(indexKeyHash('T#键😀')).toBe(Math.abs(javaStringHashCode('T#键😀')));
  });

  it('names files yyyyMMddHHmmssSSS in local time', () => {
    expect(indexFileName(new Date(2024, 0, 2, 3, 4, 5, 6).getTime())).toBe('20240102030405006');
    expect(indexFileName(new Date(1999, 11, 31, 23, 59, 59, 999).getTime())).toBe('19991231235959999');
  });
});

describe('index file layout', () => {
  it('writes header, slots and 20-byte entries exactly as Java IndexFile does', async () => {
    const store = await openStore(root, SMALL);
    const model = new ModelIndex(SMALL.maxHashSlotNum, SMALL.maxIndexNum);
    const keysOf = (i: number) => (i % 3 === 0 ? `k${i} shared` : `k${i}`);
    const offsets: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await store.putMessage(keyed('Lay', `m${i}`, keysOf(i), `U${i}`));
      expect(r.status).toBe('PUT_OK');
      offsets.push(r.commitLogOffset);
      model.put('Lay', [`U${i}`, ...keysOf(i).split(' ')], r.commitLogOffset, r.storeTimestamp);
    }
    await store.shutdown();

    const names = indexFileNames(root);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^\d{17}$/);
    const f = readIndexFile(path.join(indexDir(root), names[0]!), SMALL.maxHashSlotNum);
    expect(f.size).toBe(40 + 16 * 4 + 64 * 20);
    const m = model.files[0]!;
    expect(f.header).toEqual(m.header);
    expect(f.header.indexCount).toBe(1 + 12 * 2 + 4); // counts from 1
    expect(f.slots).toEqual(m.slots);
    for (let n = 1; n < m.header.indexCount; n++) expect(f.entries[n]).toEqual(m.entries[n]);
    // Entry 0 is never written; bytes after the last entry stay zero.
    const base = 40 + 16 * 4;
    expect(f.raw.subarray(base, base + 20).every((b) => b === 0)).toBe(true);
    expect(f.raw.subarray(base + 20 * m.header.indexCount).every((b) => b === 0)).toBe(true);
    // By hand: follow the chain of Lay#k0's slot to its one entry, the third written (U0, k0, ...).
    const hash = indexKeyHash('Lay#k0');
    let n = f.raw.readInt32BE(40 + 4 * (hash % 16));
    while (n !== 0 && f.raw.readInt32BE(base + 20 * n) !== hash) n = f.raw.readInt32BE(base + 20 * n + 16);
    expect(n).toBe(2);
    expect(f.raw.readInt32BE(base + 20 * n + 4)).toBe(0); // phyOffset high word
    expect(f.raw.readInt32BE(base + 20 * n + 8)).toBe(offsets[0]);
    expect(f.raw.readInt32BE(base + 20 * n + 12)).toBe(0); // time diff of the first message
  });

  it('skips ROLLBACK transaction records, indexes PREPARED and NOT ones', async () => {
    const store = await openStore(root, SMALL);
    await store.putMessage(keyed('Tx', 'rolled back', 'tk', undefined, 0xc));
    await store.putMessage(keyed('Tx', 'prepared', 'tk', undefined, 0x4));
    await store.putMessage(keyed('Tx', 'normal', 'tk'));
    expect(await queryBodies(store, 'Tx', 'tk')).toEqual(['prepared', 'normal']);
    await store.shutdown();
  });

  it('does nothing with messageIndexEnable=false', async () => {
    const store = await openStore(root, { ...SMALL, messageIndexEnable: false });
    await store.putMessage(keyed('Off', 'x', 'k'));
    const r = await store.queryMessage('Off', 'k', 32, 0, Date.now() + 1000);
    expect(r).toEqual({ records: [], indexLastUpdateTimestamp: 0, indexLastUpdatePhyoffset: 0 });
    await store.shutdown();
    expect(indexFileNames(root)).toEqual([]);
  });
});

describe('key queries', () => {
  it('finds by each key and by UNIQ_KEY, per topic, oldest first', async () => {
    const store = await openStore(root, SMALL);
    await store.putMessage(keyed('QA', 'one', 'order-1 user-7', 'UNIQ1'));
    await store.putMessage(keyed('QA', 'two', 'order-2  user-7', 'UNIQ2')); // double space: empty key skipped
    const last = await store.putMessage(keyed('QB', 'other topic', 'order-1', 'UNIQ3'));
    await store.putMessage(makeMessage('QA', 1, 'keys from the fields', { props: {} }));
    expect(await queryBodies(store, 'QA', 'order-1')).toEqual(['one']);
    expect(await queryBodies(store, 'QA', 'user-7')).toEqual(['one', 'two']);
    expect(await queryBodies(store, 'QB', 'order-1')).toEqual(['other topic']);
    expect(await queryBodies(store, 'QA', 'UNIQ2')).toEqual(['two']);
    expect(await queryBodies(store, 'QA', 'UNIQ3')).toEqual([]);
    expect(await queryBodies(store, 'QA', 'nope')).toEqual([]);
    expect(await queryBodies(store, 'QA', '')).toEqual([]);
    const r = await store.queryMessage('QA', 'order-2', 32, 0, Date.now() + 1000);
    expect(r.records).toHaveLength(1);
    // The newest index entry: the QB message (the last message has no keys; the broker would add a UNIQ_KEY).
    expect(r.indexLastUpdatePhyoffset).toBe(last.commitLogOffset);
    expect(r.indexLastUpdateTimestamp).toBe(last.storeTimestamp);
    await store.shutdown();
  });

  it('uses MessageToStore.keys / uniqKey when given (the broker fills them)', async () => {
    const store = await openStore(root, SMALL);
    const msg = makeMessage('QF', 0, 'fields');
    msg.keys = 'fk1 fk2';
    msg.uniqKey = 'FU';
    await store.putMessage(msg);
    expect(await queryBodies(store, 'QF', 'fk2')).toEqual(['fields']);
    expect(await queryBodies(store, 'QF', 'FU')).toEqual(['fields']);
    await store.shutdown();
  });

  it('honours maxNum (newest first from the chain, returned oldest first) and caps it at maxMsgsNumBatch', async () => {
    const store = await openStore(root, { maxHashSlotNum: 64, maxIndexNum: 400 });
    const offsets: number[] = [];
    for (let i = 0; i < 70; i++) offsets.push((await store.putMessage(keyed('QM', `m${i}`, 'same'))).commitLogOffset);
    expect(await queryBodies(store, 'QM', 'same', 3)).toEqual(['m67', 'm68', 'm69']);
    const all = await store.queryMessage('QM', 'same', 1000, 0, Date.now() + 1000);
    expect(all.records).toHaveLength(64);
    expect(all.records.map((b) => decodeRecord(b).commitLogOffset)).toEqual(offsets.slice(6));
    expect(await queryBodies(store, 'QM', 'same', 0)).toEqual([]);
    await store.shutdown();
  });

  it('returns hash collisions (the client filters) but not other hashes sharing the slot', async () => {
    // "Aa" and "BB" have the same String.hashCode, and so do "T#Aa" and "T#BB".
    expect(javaStringHashCode('T#Aa')).toBe(javaStringHashCode('T#BB'));
    const store = await openStore(root, { maxHashSlotNum: 1, maxIndexNum: 64 }); // every key in one slot
    await store.putMessage(keyed('T', 'aa', 'Aa'));
    await store.putMessage(keyed('T', 'bb', 'BB'));
    await store.putMessage(keyed('T', 'cc', 'Cc'));
    expect(await queryBodies(store, 'T', 'Aa')).toEqual(['aa', 'bb']);
    expect(await queryBodies(store, 'T', 'BB')).toEqual(['aa', 'bb']);
    expect(await queryBodies(store, 'T', 'Cc')).toEqual(['cc']);
    await store.shutdown();
  });

  it('selects by store time in seconds relative to the file begin, and walks no further back than begin', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t0 = new Date(2024, 5, 1, 12, 0, 0, 0).getTime();
    const store = await openStore(root, SMALL);
    const at: number[] = [];
    for (let i = 0; i < 4; i++) {
      vi.setSystemTime(t0 + i * 10_000 + 250);
      const r = await store.putMessage(keyed('QT', `t${i}`, 'k'));
      at.push(r.storeTimestamp);
    }
    expect(at[1]).toBe(t0 + 10_250);
    const q = (b: number, e: number) => queryBodies(store, 'QT', 'k', 32, b, e);
    expect(await q(0, t0 + 100_000)).toEqual(['t0', 't1', 't2', 't3']);
    // Entry time = file begin (t0 + 250 ms) + whole seconds: exact here.
    expect(await q(at[1]!, at[2]!)).toEqual(['t1', 't2']);
    expect(await q(at[1]! + 1, at[2]!)).toEqual(['t2']);
    expect(await q(at[3]! + 1000, at[3]! + 5000)).toEqual([]);
    expect(await q(0, at[0]! - 1)).toEqual([]);
    expect(await q(at[0]!, at[0]!)).toEqual(['t0']);
    await store.shutdown();
  });
});

describe('rollover', () => {
  it('rolls to new files when full; queries span files; a message whose keys straddle the roll is found by all', async () => {
    const cfg = { maxHashSlotNum: 4, maxIndexNum: 6 }; // entries 1..5 per file
    const store = await openStore(root, cfg);
    const model = new ModelIndex(cfg.maxHashSlotNum, cfg.maxIndexNum);
    const sent: PutResult[] = [];
    for (let i = 0; i < 9; i++) {
      const keys = i === 1 ? ['a', 'b', 'c', 'd'] : ['a'];
      const r = await store.putMessage(keyed('RO', `r${i}`, keys.join(' '), `U${i}`));
      sent.push(r);
      model.put('RO', [`U${i}`, ...keys], r.commitLogOffset, r.storeTimestamp);
    }
    expect(await queryBodies(store, 'RO', 'a')).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8']);
    expect(await queryBodies(store, 'RO', 'd')).toEqual(['r1']);
    expect(await queryBodies(store, 'RO', 'U1')).toEqual(['r1']);
    await store.shutdown();

    const names = indexFileNames(root);
    expect(names.length).toBe(model.files.length);
    expect(names.length).toBeGreaterThanOrEqual(4);
    expect([...names].sort()).toEqual(names);
    names.forEach((name, i) => {
      const f = readIndexFile(path.join(indexDir(root), name), cfg.maxHashSlotNum);
      const m = model.files[i]!;
      expect(f.header).toEqual(m.header);
      expect(f.slots).toEqual(m.slots);
      for (let n = 1; n < m.header.indexCount; n++) expect(f.entries[n]).toEqual(m.entries[n]);
    });
  });

  it('deletes files whose entries all lie below the commit log minimum, never the newest', async () => {
    const cfg = { maxHashSlotNum: 4, maxIndexNum: 3 };
    const store = await openStore(root, cfg);
    const offs: number[] = [];
    for (let i = 0; i < 6; i++) offs.push((await store.putMessage(keyed('DE', `d${i}`, 'k'))).commitLogOffset);
    await store.indexService!.flush();
    // Each file holds the UNIQ-less key "k" of two messages.
    expect(indexFileNames(root)).toHaveLength(3);
    expect(store.deleteExpiredIndexFiles(offs[3]!)).toBe(1);
    expect(store.deleteExpiredIndexFiles(Number.MAX_SAFE_INTEGER)).toBe(1);
    await vi.waitFor(() => expect(indexFileNames(root)).toHaveLength(1));
    expect(await queryBodies(store, 'DE', 'k')).toEqual(['d4', 'd5']);
    await store.shutdown();
  });
});

describe('write batching', () => {
  it('writes entries once per turn and headers only when flushed', async () => {
    const cfg = { maxHashSlotNum: 8, maxIndexNum: 1000, flushIntervalConsumeQueue: 3_600_000 };
    const store = await openStore(root, cfg);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.putMessage(keyed('WB', `w${i}`, `k${i % 5}`))));
    await store.indexService!.drainWrites();
    const file = path.join(indexDir(root), indexFileNames(root)[0]!);
    let f = readIndexFile(file, 8);
    expect(f.header.indexCount).toBe(0); // not flushed yet
    // The entries are on disk already.
    const base = 40 + 8 * 4;
    expect(f.raw.readInt32BE(base + 20 * 50)).toBe(indexKeyHash('WB#k4'));
    expect(await queryBodies(store, 'WB', 'k0')).toEqual(['w0', 'w5', 'w10', 'w15', 'w20', 'w25', 'w30', 'w35', 'w40', 'w45']);
    const covered = await store.indexService!.flush();
    expect(covered).toBeGreaterThan(0);
    f = readIndexFile(file, 8);
    expect(f.header.indexCount).toBe(51);
    await store.shutdown();
    expect(fs.existsSync(file)).toBe(true);
  });
});
