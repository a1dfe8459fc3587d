// A filtered read scans the consume queue's in-memory tail in passes with an await between them; appends meanwhile
// may compact that tail in place (copyWithin), so the scan must take its entries again after each await.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeRecord, type DefaultMessageStore, type MessageFilter } from '../../src/store/index.js';
import { parseProperties } from '../../src/common/message-properties.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

let root: string;
let store: DefaultMessageStore;

beforeEach(async () => {
  root = await makeTempDir();
  store = await openStore(root, { consumeQueueTailCacheEntries: 64, flushIntervalConsumeQueue: 1 });
});

afterEach(async () => {
  await store.shutdown();
  await removeDir(root);
});

describe('filtered read over a consume-queue tail compacted while it scans', () => {
  it('reads the entries it had not reached from where they are now', async () => {
    for (let i = 0; i < 200; i++) await store.putMessage(makeMessage('S', 0, Buffer.alloc(100, i), { props: { a: String(i) } }));
    const cq = store.cqStore.find('S', 0)!;
    // The queue's entries written to its file: the tail may then drop them.
    const written = () => (cq as unknown as { writtenIndex: number }).writtenIndex;
    for (let t = 0; t < 200 && written() < cq.maxOffset; t++) await new Promise((r) => setTimeout(r, 10));
    expect(written()).toBe(cq.maxOffset);
    const from = cq.maxOffset - 40;
    expect(cq.entriesInMemory(from, 40)?.length).toBe(40 * 20);
    const any = decodeRecord((await store.getMessage('S', 0, 0, 1, 1 << 20)).records[0]!);
    let appended = false;
    const filter: MessageFilter = {
      isMatchedByCommitLog: (_record, props) => {
        if (!appended) {
          // Between the scan's passes (its first pass is 32 entries): appends that compact the tail in place.
          appended = true;
          // Appends until the tail is compacted under the view the scan took: the entries its second pass reads
          // (the last 8 of the 40) then show other entries there.
          const view = cq.entriesInMemory(from, 40)!.subarray(32 * 20);
          const entries = Buffer.from(view);
          for (let k = 0; k < 4000 && view.equals(entries); k++) cq.putEntry(cq.maxOffset, any.commitLogOffset, any.totalSize, 0);
          expect(view.equals(entries)).toBe(false);
        }
        return Number(parseProperties(props).get('a')) % 4 === 0;
      },
    };
    const r = await store.getMessage('S', 0, from, 32, 1 << 20, filter);
    expect(appended).toBe(true);
    const got = r.records.map((rec) => Number(parseProperties(decodeRecord(rec).propertiesString).get('a')));
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => from + i * 4));
    expect(r.nextBeginOffset).toBe(from + 40);
  });
});
