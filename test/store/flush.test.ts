import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
