// The key index across restarts: idempotent re-dispatch after a clean stop, and rebuilding what an abnormal
// stop, a removed directory or a damaged file lost. A "crash" is a copy of the live store directory taken with
// every write issued (what the page cache holds after kill -9), opened with its abort file still present.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DefaultMessageStore } from '../../src/store/message-store.js';
import { writeInt64 } from '../../src/store/index.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';
import { indexDir, indexFileNames, ModelIndex, queryBodies, readIndexFile } from './index-helpers.js';

let root: string;
let crash: string;

beforeEach(async () => {
  root = await makeTempDir();
  crash = await makeTempDir();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(2024, 2, 3, 4, 5, 6, 0));
});

afterEach(async () => {
  vi.useRealTimers();
  await removeDir(root);
  await removeDir(crash);
});

interface Sent {
  body: string;
  keys: string[];
  uniq: string;
  offset: number;
  ts: number;
}

const TOPIC = 'IR';

/** No periodic flush: the tests flush by hand, so what is on disk is decided by the test. */
function cfg(maxHashSlotNum: number, maxIndexNum: number, extra: Record<string, unknown> = {}) {
  return { maxHashSlotNum, maxIndexNum, flushIntervalConsumeQueue: 3_600_000, flushIntervalIndex: 0, ...extra };
}

async function put(store: DefaultMessageStore, sent: Sent[], n: number, keysOf: (i: number) => string[] = (i) => [`k${i % 4}`]) {
  for (let j = 0; j < n; j++) {
    const i = sent.length;
    vi.setSystemTime(Date.now() + 1000); // one second apart: distinct time diffs
    const keys = keysOf(i);
    const uniq = `U${String(i).padStart(3, '0')}`;
    const r = await store.putMessage(makeMessage(TOPIC, i % 2, `b${i}`, { keys: keys.join(' '), props: { UNIQ_KEY: uniq } }));
    expect(r.status).toBe('PUT_OK');
    sent.push({ body: `b${i}`, keys, uniq, offset: r.commitLogOffset, ts: r.storeTimestamp });
  }
}

/** The flush the store runs every flushIntervalConsumeQueue (consume queues, index, checkpoint). */
async function flushTick(store: DefaultMessageStore): Promise<void> {
  await store['flushConsumeQueuesTick']();
}

/** Copies the live store with every issued write completed: the state a kill -9 leaves. */
async function crashCopy(store: DefaultMessageStore, to: string): Promise<void> {
  await store.commitLog.drain();
  await store.indexService!.drainWrites();
  fs.rmSync(to, { recursive: true, force: true });
  fs.cpSync(store.config.storePathRootDir, to, { recursive: true });
  expect(fs.existsSync(path.join(to, 'abort'))).toBe(true);
}

/** Every key and unique key finds exactly its messages, once. */
async function verifyQueries(store: DefaultMessageStore, sent: Sent[]): Promise<void> {
  const byKey = new Map<string, string[]>();
  for (const s of sent) {
    for (const k of s.keys) byKey.set(k, [...(byKey.get(k) ?? []), s.body]);
  }
  for (const [k, bodies] of byKey) expect(await queryBodies(store, TOPIC, k, 64), `key ${k}`).toEqual(bodies);
  for (const s of sent) expect(await queryBodies(store, TOPIC, s.uniq), `uniq ${s.uniq}`).toEqual([s.body]);
}

/** The index files hold exactly what Java would have written for `sent` (names aside). */
function verifyFiles(dir: string, sent: Sent[], slots: number, entries: number): void {
  const model = new ModelIndex(slots, entries);
  for (const s of sent) model.put(TOPIC, [s.uniq, ...s.keys], s.offset, s.ts);
  const names = indexFileNames(dir);
  // A trailing file with nothing of its own is created by the dispatch that finds the last one full.
  const files = names.map((n) => readIndexFile(path.join(indexDir(dir), n), slots));
  while (files.length > model.files.length && files[files.length - 1]!.header.hashSlotCount === 0) files.pop();
  expect(files.length).toBe(model.files.length);
  files.forEach((f, i) => {
    const m = model.files[i]!;
    expect(f.header, `file ${i} header`).toEqual(m.header);
    expect(f.slots, `file ${i} slots`).toEqual(m.slots);
    for (let n = 1; n < m.header.indexCount; n++) expect(f.entries[n], `file ${i} entry ${n}`).toEqual(m.entries[n]);
  });
}

function setCheckpointIndexTime(dir: string, ts: number): void {
  const file = path.join(dir, 'checkpoint');
  const b = fs.readFileSync(file);
  writeInt64(b, 16, ts);
  fs.writeFileSync(file, b);
}

describe('index after a clean stop', () => {
  it('re-dispatching the whole log changes nothing (idempotent), and new messages continue the files', async () => {
    const c = cfg(8, 7); // 6 entries per file; 2 per message
    let store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 10);
    await store.shutdown();
    const before = indexFileNames(root).map((n) => fs.readFileSync(path.join(indexDir(root), n)));
    expect(before.length).toBeGreaterThan(2);

    store = await openStore(root, { ...c, recoverScanFileNum: 0 }); // scan the whole log
    await verifyQueries(store, sent);
    await store.shutdown();
    const after = indexFileNames(root).map((n) => fs.readFileSync(path.join(indexDir(root), n)));
    expect(after.length).toBe(before.length);
    after.forEach((b, i) => expect(b.equals(before[i]!), `file ${i}`).toBe(true));

    store = await openStore(root, c);
    await put(store, sent, 5);
    await verifyQueries(store, sent);
    await store.shutdown();
    verifyFiles(root, sent, 8, 7);
  });

  it('completes a message whose keys were cut by a roll when the newer file is gone', async () => {
    const c = cfg(8, 6); // 5 entries per file
    let store = await openStore(root, c);
    const sent: Sent[] = [];
    // 2 + 2 entries, then a message of 3 (UNIQ + 2 keys): one goes to the first file, two to the second.
    await put(store, sent, 3, (i) => (i === 2 ? ['x', 'y'] : [`k${i}`]));
    await store.shutdown();
    const names = indexFileNames(root);
    expect(names).toHaveLength(2);
    fs.rmSync(path.join(indexDir(root), names[1]!));

    store = await openStore(root, c);
    await verifyQueries(store, sent);
    await store.shutdown();
    verifyFiles(root, sent, 8, 6);
  });

  it('rebuilds a removed index directory from the whole log', async () => {
    const c = cfg(8, 9);
    let store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 12);
    await store.shutdown();
    fs.rmSync(indexDir(root), { recursive: true });

    store = await openStore(root, c);
    await verifyQueries(store, sent);
    await store.shutdown();
    verifyFiles(root, sent, 8, 9);
  });

  it('drops a short (truncated) file and every later one, and rebuilds them', async () => {
    const c = cfg(8, 7);
    let store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 10);
    await store.shutdown();
    const names = indexFileNames(root);
    expect(names.length).toBeGreaterThanOrEqual(3);
    fs.truncateSync(path.join(indexDir(root), names[1]!), 100);

    store = await openStore(root, c);
    expect(indexFileNames(root)[0]).toBe(names[0]);
    await verifyQueries(store, sent);
    await store.shutdown();
    verifyFiles(root, sent, 8, 7);
  });

  it('indexes new messages written where a truncated commit-log tail used to be', async () => {
    const c = cfg(64, 1000);
    let store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 6);
    await store.shutdown();
    // Corrupt the last record's body: recovery cuts the log there, below the index's end.
    const lastRec = sent[sent.length - 1]!;
    const seg = path.join(root, 'commitlog', '00000000000000000000');
    const bytes = fs.readFileSync(seg);
    const bodyAt = bytes.indexOf(Buffer.from(lastRec.body), lastRec.offset);
    expect(bodyAt).toBeGreaterThan(lastRec.offset);
    const fd = fs.openSync(seg, 'r+');
    fs.writeSync(fd, Buffer.from('X'), 0, 1, bodyAt); // BODYCRC no longer matches
    fs.closeSync(fd);

    store = await openStore(root, c);
    expect(store.getMaxPhyOffset()).toBe(lastRec.offset);
    sent.pop();
    await put(store, sent, 1, () => ['fresh']);
    expect(sent[sent.length - 1]!.offset).toBe(lastRec.offset);
    expect(await queryBodies(store, TOPIC, 'fresh')).toEqual([sent[sent.length - 1]!.body]);
    await store.shutdown();
  });
});

describe('index after an abnormal stop', () => {
  it('rebuilds entries written after the last flush, without duplicates', async () => {
    const c = cfg(8, 1000);
    const store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 8);
    await flushTick(store);
    await put(store, sent, 8);
    await crashCopy(store, crash);
    await store.shutdown();

    const again = await openStore(crash, c);
    expect(again.lastShutdownAbnormal).toBe(true);
    await verifyQueries(again, sent);
    await again.shutdown();
    verifyFiles(crash, sent, 8, 1000);
  });

  it('drops files newer than the checkpoint and rebuilds them from the previous file', async () => {
    const c = cfg(8, 5); // 4 entries (2 messages) per file
    const store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 9);
    await flushTick(store);
    await crashCopy(store, crash);
    await store.shutdown();
    // As if the process died after fsyncing the index but before the checkpoint said so; the checkpoint
    // still names the time of message 4 (the end of the second file).
    setCheckpointIndexTime(crash, sent[3]!.ts);
    const before = indexFileNames(crash);
    vi.setSystemTime(Date.now() + 60_000); // the restart happens later: new file names differ from dropped ones

    const again = await openStore(crash, c);
    const kept = indexFileNames(crash).filter((n) => before.includes(n));
    expect(kept).toEqual(before.slice(0, 2));
    await verifyQueries(again, sent);
    await again.shutdown();
    verifyFiles(crash, sent, 8, 5);
  });

  it('keeps a file that is not full as the last one and drops later files (lost final flush)', async () => {
    const c = cfg(8, 5);
    const store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 3); // file 1 full after message 2, file 2 gets message 3
    await flushTick(store);
    await crashCopy(store, crash);
    await store.shutdown();
    // Roll back file 1's header to a state before it filled (its final flush never happened).
    const names = indexFileNames(crash);
    const f1 = path.join(indexDir(crash), names[0]!);
    const fd = fs.openSync(f1, 'r+');
    const h = Buffer.alloc(40);
    fs.readSync(fd, h, 0, 40, 0);
    h.writeInt32BE(3, 36); // indexCount: 2 entries (message 1 only)
    h.writeInt32BE(2, 32);
    writeInt64(h, 24, sent[0]!.offset);
    writeInt64(h, 8, sent[0]!.ts);
    fs.writeSync(fd, h, 0, 40, 0);
    fs.closeSync(fd);
    vi.setSystemTime(Date.now() + 60_000);

    const again = await openStore(crash, c);
    expect(indexFileNames(crash)[0]).toBe(names[0]);
    expect(indexFileNames(crash)).not.toContain(names[1]);
    await verifyQueries(again, sent);
    await again.shutdown();
    verifyFiles(crash, sent, 8, 5);
  });

  it('repairs slots written after the header (died between the two) and rebuilds the rest', async () => {
    const c = cfg(8, 1000);
    const store = await openStore(root, c);
    const sent: Sent[] = [];
    await put(store, sent, 6);
    await flushTick(store);
    await put(store, sent, 6);
    await crashCopy(store, crash);
    await flushTick(store);
    // Slot table from the later flush, header from the earlier one.
    const name = indexFileNames(root)[0]!;
    const live = fs.readFileSync(path.join(indexDir(root), name));
    const fd = fs.openSync(path.join(indexDir(crash), name), 'r+');
    fs.writeSync(fd, live, 40, 8 * 4, 40);
    fs.closeSync(fd);
    await store.shutdown();
    const torn = readIndexFile(path.join(indexDir(crash), name), 8);
    expect(Math.max(...torn.slots)).toBeGreaterThanOrEqual(torn.header.indexCount);

    const again = await openStore(crash, c);
    await verifyQueries(again, sent);
    await again.shutdown();
    verifyFiles(crash, sent, 8, 1000);
  });
});
