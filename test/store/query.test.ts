import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeRecord, type DefaultMessageStore, type PutResult } from '../../src/store/index.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

let root: string;
let store: DefaultMessageStore;

beforeEach(async () => {
  root = await makeTempDir();
  store = await openStore(root);
});

afterEach(async () => {
  vi.useRealTimers();
  await store.shutdown();
  await removeDir(root);
});

describe('time and offset queries', () => {
  it('getOffsetInQueueByTime / getEarliestMessageTime / getMessageStoreTimestamp', async () => {
    expect(await store.getEarliestMessageTime('Q', 0)).toBe(-1);
    expect(await store.getOffsetInQueueByTime('Q', 0, 5)).toBe(0);
    vi.useFakeTimers({ toFake: ['Date'] });
    const base = 1_800_000_000_000;
    // Store times base, base+10, ..., two messages share each time.
    for (let i = 0; i < 40; i++) {
      vi.setSystemTime(base + Math.floor(i / 2) * 10);
      await store.putMessage(makeMessage('Q', 0, `m${i}`));
    }
    vi.useRealTimers();
    expect(await store.getEarliestMessageTime('Q', 0)).toBe(base);
    expect(await store.getMessageStoreTimestamp('Q', 0, 7)).toBe(base + 30);
    expect(await store.getMessageStoreTimestamp('Q', 0, 99)).toBe(-1);
    expect(await store.getOffsetInQueueByTime('Q', 0, base - 1000)).toBe(0);
    expect(await store.getOffsetInQueueByTime('Q', 0, base)).toBe(0);
    expect(await store.getOffsetInQueueByTime('Q', 0, base + 30)).toBe(6);
    expect(await store.getOffsetInQueueByTime('Q', 0, base + 31)).toBe(8);
    expect(await store.getOffsetInQueueByTime('Q', 0, base + 190)).toBe(38);
    expect(await store.getOffsetInQueueByTime('Q', 0, base + 191)).toBe(40);
  });

  it('lookMessageByOffset returns whole records and null for bad offsets', async () => {
    const results: PutResult[] = [];
    for (let i = 0; i < 30; i++) results.push(await store.putMessage(makeMessage('L', i % 2, `body-${i}`)));
    for (const [i, r] of results.entries()) {
      const rec = await store.lookMessageByOffset(r.commitLogOffset);
      expect(rec!.length).toBe(r.wroteBytes);
      expect(decodeRecord(rec!).body.toString()).toBe(`body-${i}`);
    }
    expect(await store.lookMessageByOffset(results[3]!.commitLogOffset + 1)).toBeNull();
    expect(await store.lookMessageByOffset(store.getMaxPhyOffset())).toBeNull();
    expect(await store.lookMessageByOffset(-5)).toBeNull();
    // Works from disk after a restart too.
    await store.shutdown();
    store = await openStore(root, { commitLogTailCacheBytes: 1 });
    const rec = await store.lookMessageByOffset(results[29]!.commitLogOffset);
    expect(decodeRecord(rec!).body.toString()).toBe('body-29');
  });
});
