import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// fdatasync that waits for the test to release it.
const gate = vi.hoisted(() => ({ hold: false, waiting: [] as Array<() => void> }));

vi.mock('../../src/store/io.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/store/io.js')>();
  return {
    ...real,
    fdatasync: async (fd: number) => {
      if (gate.hold) await new Promise<void>((resolve) => gate.waiting.push(resolve));
      return real.fdatasync(fd);
    },
  };
});

const { makeMessage, makeTempDir, openStore, removeDir } = await import('./helpers.js');

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  gate.hold = false;
  for (const f of gate.waiting.splice(0)) f();
  await removeDir(root);
});

describe('SYNC_FLUSH timeout', () => {
  it('answers FLUSH_DISK_TIMEOUT when the fsync is slower than syncFlushTimeout, yet keeps the message', async () => {
    const store = await openStore(root, { flushDiskType: 'SYNC_FLUSH', syncFlushTimeout: 30 });
    gate.hold = true;
    const r = await store.putMessage(makeMessage('S', 0, 'slow'));
    expect(r.status).toBe('FLUSH_DISK_TIMEOUT');
    // Written (page cache) even though not yet flushed.
    expect(await store.lookMessageByOffset(r.commitLogOffset)).not.toBeNull();
    gate.hold = false;
    for (const f of gate.waiting.splice(0)) f();
    const r2 = await store.putMessage(makeMessage('S', 0, 'fast'));
    expect(r2.status).toBe('PUT_OK');
    expect(store.getMaxOffsetInQueue('S', 0)).toBe(2);
    await store.shutdown();
  });
});
