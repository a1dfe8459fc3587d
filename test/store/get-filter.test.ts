// The store applying a MessageFilter while it scans (Java DefaultMessageStore.getMessage with a MessageFilter):
// window, statuses, nextBeginOffset, and the limits counting only the records taken.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CQ_UNIT_SIZE, decodeRecord, type DefaultMessageStore, type MessageFilter, type StoreConfigInput,
} from '../../src/store/index.js';
import { parseProperties } from '../../src/common/message-properties.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

/** A filtered read scans at most 40 consume-queue entries (Java: max(maxFilterMessageSize, maxMsgNums × 20) bytes). */
const WINDOW_ENTRIES = 40;
const CONFIG: StoreConfigInput = { maxFilterMessageSize: WINDOW_ENTRIES * CQ_UNIT_SIZE };

let root: string;
let store: DefaultMessageStore;

beforeEach(async () => {
  root = await makeTempDir();
  store = await openStore(root, CONFIG);
});

afterEach(async () => {
  await store.shutdown();
  await removeDir(root);
});

/** Puts messages with property a = 0..count-1 (and tag A for even a, B for odd). */
async function putNumbered(topic: string, count: number, bodyBytes = 10): Promise<void> {
  for (let i = 0; i < count; i++) {
    await store.putMessage(makeMessage(topic, 0, Buffer.alloc(bodyBytes, i), { tags: i % 2 === 0 ? 'A' : 'B', props: { a: String(i) } }));
  }
}

/** A commit-log filter on property a. */
function byA(test: (a: number) => boolean): MessageFilter {
  return { isMatchedByCommitLog: (_record, props) => test(Number(parseProperties(props).get('a'))) };
}

function values(records: Buffer[]): number[] {
  return records.map((r) => Number(parseProperties(decodeRecord(r).propertiesString).get('a')));
}

describe('getMessage with a commit-log filter', () => {
  it('passes over rejected records without counting them against maxMsgNums', async () => {
    await putNumbered('S', 30);
    const r = await store.getMessage('S', 0, 0, 4, 1 << 20, byA((a) => a % 3 === 0));
    expect(r.status).toBe('FOUND');
    expect(values(r.records)).toEqual([0, 3, 6, 9]);
    // Java stops at the first entry that would overflow the batch: right after a=9.
    expect(r.nextBeginOffset).toBe(10);
    expect(r.totalBytes).toBe(r.records.reduce((n, b) => n + b.length, 0));
  });

  it('stops right after the batch filled at the last record a read pass fetched', async () => {
    await putNumbered('S', 10);
    // Every record matches: the first pass reads exactly maxMsgNums records and takes them all.
    const r = await store.getMessage('S', 0, 0, 4, 1 << 20, byA(() => true));
    expect(values(r.records)).toEqual([0, 1, 2, 3]);
    expect(r.nextBeginOffset).toBe(4);
  });

  it('walks the entries in order across read passes of different sizes (1 in 8 matching)', async () => {
    await putNumbered('S', WINDOW_ENTRIES);
    const r = await store.getMessage('S', 0, 1, 3, 1 << 20, byA((a) => a % 8 === 0));
    expect(values(r.records)).toEqual([8, 16, 24]);
    expect(r.nextBeginOffset).toBe(25);
    const rest = await store.getMessage('S', 0, r.nextBeginOffset, 3, 1 << 20, byA((a) => a % 8 === 0));
    expect(values(rest.records)).toEqual([32]);
    expect(rest.nextBeginOffset).toBe(WINDOW_ENTRIES);
  });

  it('counts only the records taken against maxTotalBytes', async () => {
    await putNumbered('S', 12, 100);
    const size = (await store.getMessage('S', 0, 0, 1, 1 << 20)).totalBytes;
    const r = await store.getMessage('S', 0, 0, 32, size * 3, byA((a) => a % 2 === 0));
    expect(values(r.records)).toEqual([0, 2, 4]);
    expect(r.nextBeginOffset).toBe(5);
  });

  it('answers NO_MATCHED_MESSAGE past the window when nothing matched, and the next read finds what lies beyond', async () => {
    await putNumbered('S', WINDOW_ENTRIES + 5);
    const last = WINDOW_ENTRIES + 4;
    const filter = byA((a) => a === last);
    const first = await store.getMessage('S', 0, 0, 32, 1 << 20, filter);
    expect(first).toMatchObject({ status: 'NO_MATCHED_MESSAGE', nextBeginOffset: WINDOW_ENTRIES, records: [], totalBytes: 0 });
    const second = await store.getMessage('S', 0, first.nextBeginOffset, 32, 1 << 20, filter);
    expect(second.status).toBe('FOUND');
    expect(values(second.records)).toEqual([last]);
    expect(second.nextBeginOffset).toBe(WINDOW_ENTRIES + 5);
  });

  it('scans to the window end (not only maxMsgNums entries) while the batch has room', async () => {
    await putNumbered('S', WINDOW_ENTRIES + 10);
    const r = await store.getMessage('S', 0, 0, 2, 1 << 20, byA((a) => a === 7 || a === WINDOW_ENTRIES - 1 || a === WINDOW_ENTRIES + 1));
    expect(values(r.records)).toEqual([7, WINDOW_ENTRIES - 1]);
    expect(r.nextBeginOffset).toBe(WINDOW_ENTRIES);
  });

  it('asks the commit-log check only about records the consume-queue check passed, with their properties', async () => {
    await putNumbered('S', 10);
    const asked: number[] = [];
    const filter: MessageFilter = {
      isMatchedByConsumeQueue: (tagsCode) => tagsCode === makeMessage('x', 0, '', { tags: 'A' }).tagsCode,
      isMatchedByCommitLog: (record, props) => {
        expect(props).toBe(decodeRecord(record).propertiesString);
        const a = Number(parseProperties(props).get('a'));
        asked.push(a);
        return a !== 4;
      },
    };
    const r = await store.getMessage('S', 0, 0, 32, 1 << 20, filter);
    expect(asked).toEqual([0, 2, 4, 6, 8]);
    expect(values(r.records)).toEqual([0, 2, 6, 8]);
    expect(r.nextBeginOffset).toBe(10);
    // Rejected by either check only: NO_MATCHED_MESSAGE, past everything scanned.
    const none = await store.getMessage('S', 0, 5, 32, 1 << 20, { ...filter, isMatchedByCommitLog: () => false });
    expect(none).toMatchObject({ status: 'NO_MATCHED_MESSAGE', nextBeginOffset: 10, records: [] });
  });

  it('reads on across consume-queue files within the window when the entries come from disk', async () => {
    await putNumbered('S', WINDOW_ENTRIES + 5);
    await store.shutdown();
    // Only the newest entry stays in memory; files hold 10 entries each (TINY), so the window spans five files.
    store = await openStore(root, { ...CONFIG, consumeQueueTailCacheEntries: 1 });
    const r = await store.getMessage('S', 0, 3, 32, 1 << 20, byA((a) => a === 15));
    expect(r.status).toBe('FOUND');
    expect(values(r.records)).toEqual([15]);
    expect(r.nextBeginOffset).toBe(3 + WINDOW_ENTRIES);
  });

  it('leaves unfiltered reads to maxMsgNums entries', async () => {
    await putNumbered('S', 10);
    const r = await store.getMessage('S', 0, 0, 3, 1 << 20);
    expect(values(r.records)).toEqual([0, 1, 2]);
    expect(r.nextBeginOffset).toBe(3);
  });
});
