import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readInt64 } from '../../src/store/index.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  await removeDir(root);
});

describe('flush', () => {
  it('SYNC_FLUSH: puts resolve PUT_OK after an fsync covering them; concurrent puts share fsyncs', async () => {
    const store = await openStore(root, { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: 1 << 20 });
    const one = await store.putMessage(makeMessage('S', 0, 'first'));
    expect(one.status).toBe('PUT_OK');
    expect(store.commitLog.flushedOffset).toBeGreaterThanOrEqual(one.commitLogOffset + one.wroteBytes);
    const before = store.stats.commitLogFsyncCalls;
    expect(before).toBeGreaterThanOrEqual(1);

    const n = 500;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => store.putMessage(makeMessage('S', i % 4, `m${i}`))),
    );
    expect(results.every((r) => r.status === 'PUT_OK')).toBe(true);
    const end = Math.max(...results.map((r) => r.commitLogOffset + r.wroteBytes));
    expect(store.commitLog.flushedOffset).toBeGreaterThanOrEqual(end);
    const fsyncs = store.stats.commitLogFsyncCalls - before;
    // Group commit: far fewer fsyncs (and writes) than puts.
    expect(fsyncs).toBeGreaterThanOrEqual(1);
    expect(fsyncs).toBeLessThan(n / 10);
    expect(store.stats.commitLogWriteCalls).toBeLessThan(n / 10);
    await store.shutdown();
  });

  it('ASYNC_FLUSH: puts resolve once written; the periodic flush catches up', async () => {
    const store = await openStore(root, { flushIntervalCommitLog: 10, flushCommitLogLeastPages: 0 });
    const r = await store.putMessage(makeMessage('A', 0, 'x'));
    expect(r.status).toBe('PUT_OK');
    expect(store.commitLog.writtenOffset).toBeGreaterThanOrEqual(r.commitLogOffset + r.wroteBytes);
    await waitFor(() => store.commitLog.flushedOffset >= r.commitLogOffset + r.wroteBytes);
    await store.shutdown();
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('consume-queue flush (Java FlushConsumeQueueService)', () => {
  const cpTimes = (): { physic: number; logics: number } => {
    const cp = fs.readFileSync(path.join(root, 'checkpoint'));
    return { physic: readInt64(cp, 0), logics: readInt64(cp, 8) };
  };

  it('syncs a queue once flushConsumeQueueLeastPages of it are unsynced; the checkpoint stays at its first unsynced entry until then', async () => {
    const store = await openStore(root, {
      flushIntervalCommitLog: 10, flushCommitLogLeastPages: 0, flushIntervalConsumeQueue: 20, mappedFileSizeConsumeQueue: 6000,
    });
    const one = await store.putMessage(makeMessage('Few', 0, 'one'));
    await waitFor(() => Date.now() > one.storeTimestamp);
    const two = await store.putMessage(makeMessage('Few', 0, 'two'));
    // The commit log's time passes both entries and rounds keep running; the queue's two entries stay unsynced.
    await waitFor(() => cpTimes().physic >= two.storeTimestamp);
    const rounds = store.stats.consumeQueueFlushRounds;
    await waitFor(() => store.stats.consumeQueueFlushRounds >= rounds + 3);
    expect(store.stats.consumeQueueFsyncFiles).toBe(0);
    expect(cpTimes().logics).toBeLessThanOrEqual(one.storeTimestamp);
    expect(one.storeTimestamp).toBeLessThan(two.storeTimestamp);

    // 2 pages of entries (8192 / 20 = 410): a round syncs the queue, and the checkpoint passes them.
    let last = two;
    for (let i = 0; i < 410; i++) last = await store.putMessage(makeMessage('Few', 0, `m${i}`));
    await waitFor(() => store.stats.consumeQueueFsyncFiles > 0 && cpTimes().logics >= last.storeTimestamp);
    await store.shutdown();
  });

  it('a thorough round syncs every queue and moves the checkpoint past them all', async () => {
    const store = await openStore(root, {
      flushIntervalCommitLog: 10, flushCommitLogLeastPages: 0, flushIntervalConsumeQueue: 20, flushConsumeQueueThoroughInterval: 0,
    });
    const fsyncs = store.stats.consumeQueueFsyncFiles;
    const rs = [];
    for (let q = 0; q < 4; q++) rs.push(await store.putMessage(makeMessage('Thorough', q, `q${q}`)));
    const last = rs[rs.length - 1]!;
    await waitFor(() => store.stats.consumeQueueFsyncFiles - fsyncs >= 4 && cpTimes().logics >= last.storeTimestamp);
    await store.shutdown();
  });
});
