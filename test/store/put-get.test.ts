import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BLANK_MAGIC_CODE, decodeRecord, encodeRecord, type DefaultMessageStore, type PutResult,
} from '../../src/store/index.js';
import type { MessageToStore } from '../../src/store/types.js';
import { makeMessage, makeTempDir, openStore, removeDir, rng } from './helpers.js';

let root: string;
let store: DefaultMessageStore;

beforeEach(async () => {
  root = await makeTempDir();
  store = await openStore(root);
});

afterEach(async () => {
  await store.shutdown();
  await removeDir(root);
});

interface Sent {
  msg: MessageToStore;
  result: PutResult;
}

async function putMany(count: number, queues: number, seed = 1): Promise<Sent[]> {
  const r = rng(seed);
  const sent: Sent[] = [];
  // Concurrent puts: they are grouped into shared writes.
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const size = 4 + Math.floor(r() * 600);
    const body = Buffer.alloc(size, i & 0xff);
    body.writeUInt32BE(i, 0);
    const msg = makeMessage('TopicA', i % queues, body, { tags: `tag${i % 3}`, keys: `key${i}` });
    pending.push(store.putMessage(msg).then((result) => void sent.push({ msg, result })));
  }
  await Promise.all(pending);
  sent.sort((a, b) => a.result.commitLogOffset - b.result.commitLogOffset);
  return sent;
}

describe('put and get', () => {
  it('stores records contiguously across segments with BLANK fillers', async () => {
    const sent = await putMany(300, 4);
    const segSize = 4096;
    let expected = 0;
    for (const { msg, result } of sent) {
      expect(result.status).toBe('PUT_OK');
      const size = result.wroteBytes;
      // Continuous offsets, except that a record that does not fit (size + 8 > remaining) starts the next file.
      if (size + 8 > segSize - (expected % segSize)) expected += segSize - (expected % segSize);
      expect(result.commitLogOffset).toBe(expected);
      expect(result.commitLogOffsets).toEqual([expected]);
      expected += size;
      const rec = await store.lookMessageByOffset(result.commitLogOffset);
      expect(rec).not.toBeNull();
      expect(rec!.equals(encodeRecord(msg, result.queueOffset, result.commitLogOffset, result.storeTimestamp))).toBe(true);
    }
    expect(store.getMaxPhyOffset()).toBe(expected);
    expect(store.getMinPhyOffset()).toBe(0);

    // Every full file ends with a BLANK marker whose length is the rest of the file.
    const dir = path.join(root, 'commitlog');
    const files = fs.readdirSync(dir).sort();
    expect(files[0]).toBe('00000000000000000000');
    expect(files[1]).toBe('00000000000000004096');
    const lastFull = Math.floor(expected / segSize);
    for (let f = 0; f < lastFull; f++) {
      const data = fs.readFileSync(path.join(dir, files[f]!));
      expect(data.length).toBe(segSize);
      let pos = 0;
      for (;;) {
        const size = data.readInt32BE(pos);
        if (data.readUInt32BE(pos + 4) === BLANK_MAGIC_CODE) {
          expect(size).toBe(segSize - pos);
          break;
        }
        expect(decodeRecord(data.subarray(pos, pos + size)).commitLogOffset).toBe(f * segSize + pos);
        pos += size;
      }
    }
  });

  it('assigns consecutive queue offsets per queue and returns identical records', async () => {
    const sent = await putMany(200, 3, 7);
    for (let q = 0; q < 3; q++) {
      const mine = sent.filter((s) => s.msg.queueId === q);
      expect(mine.map((s) => s.result.queueOffset)).toEqual(mine.map((_, i) => i));
      expect(store.getMaxOffsetInQueue('TopicA', q)).toBe(mine.length);
      expect(store.getMinOffsetInQueue('TopicA', q)).toBe(0);
      // Pull the whole queue in batches.
      let offset = 0;
      const got: Buffer[] = [];
      while (offset < mine.length) {
        const r = await store.getMessage('TopicA', q, offset, 32, 1024 * 1024);
        expect(r.status).toBe('FOUND');
        expect(r.minOffset).toBe(0);
        expect(r.maxOffset).toBe(mine.length);
        expect(r.nextBeginOffset).toBe(offset + r.records.length);
        expect(r.totalBytes).toBe(r.records.reduce((a, b) => a + b.length, 0));
        got.push(...r.records);
        offset = r.nextBeginOffset;
      }
      expect(got.length).toBe(mine.length);
      got.forEach((rec, i) => {
        const s = mine[i]!;
        expect(rec.equals(encodeRecord(s.msg, i, s.result.commitLogOffset, s.result.storeTimestamp))).toBe(true);
      });
      expect(await store.getCommitLogOffsetInQueue('TopicA', q, 1)).toBe(mine[1]!.result.commitLogOffset);
    }
    expect(store.getQueueIds('TopicA')).toEqual([0, 1, 2]);
    // Consume-queue files of 200 bytes = 10 entries each.
    const cqDir = path.join(root, 'consumequeue', 'TopicA', '0');
    await store.cqStore.drainWrites();
    expect(fs.readdirSync(cqDir).sort().slice(0, 2)).toEqual(['00000000000000000000', '00000000000000000200']);
  });

  it('answers every outcome of the pull table', async () => {
    // Unknown queue.
    let r = await store.getMessage('Nope', 0, 0, 32, 1 << 20);
    expect(r).toMatchObject({ status: 'NO_MESSAGE_IN_QUEUE', nextBeginOffset: 0, minOffset: 0, maxOffset: 0 });
    r = await store.getMessage('Nope', 0, 5, 32, 1 << 20);
    expect(r).toMatchObject({ status: 'NO_MESSAGE_IN_QUEUE', nextBeginOffset: 0 });
    for (let i = 0; i < 5; i++) await store.putMessage(makeMessage('T', 0, `m${i}`));
    r = await store.getMessage('T', 0, 5, 32, 1 << 20);
    expect(r).toMatchObject({ status: 'OFFSET_OVERFLOW_ONE', nextBeginOffset: 5, minOffset: 0, maxOffset: 5 });
    r = await store.getMessage('T', 0, 9, 32, 1 << 20);
    expect(r).toMatchObject({ status: 'OFFSET_OVERFLOW_BADLY', nextBeginOffset: 5, records: [] });
    r = await store.getMessage('T', 0, -1, 32, 1 << 20);
    expect(r).toMatchObject({ status: 'OFFSET_TOO_SMALL', nextBeginOffset: 0 });
    r = await store.getMessage('T', 0, 2, 32, 1 << 20);
    expect(r.status).toBe('FOUND');
    expect(r.records.map((b) => decodeRecord(b).body.toString())).toEqual(['m2', 'm3', 'm4']);
    expect(r.nextBeginOffset).toBe(5);
  });

  it('skips entries the tag filter rejects and still advances nextBeginOffset', async () => {
    for (let i = 0; i < 20; i++) {
      await store.putMessage(makeMessage('F', 0, `b${i}`, { tags: i % 5 === 4 ? 'wanted' : 'other' }));
    }
    const wanted = makeMessage('F', 0, '', { tags: 'wanted' }).tagsCode;
    const filter = { isMatchedByConsumeQueue: (code: number) => code === wanted };
    let r = await store.getMessage('F', 0, 0, 2, 1 << 20, filter);
    expect(r.status).toBe('FOUND');
    expect(r.records.map((b) => decodeRecord(b).body.toString())).toEqual(['b4', 'b9']);
    // Java stops at the first entry that would overflow the batch: nextBegin is right after b9.
    expect(r.nextBeginOffset).toBe(10);
    r = await store.getMessage('F', 0, 15, 32, 1 << 20, filter);
    expect(r.records.map((b) => decodeRecord(b).body.toString())).toEqual(['b19']);
    expect(r.nextBeginOffset).toBe(20);
    // Nothing matches: NO_MATCHED_MESSAGE, offset advanced past the scanned entries.
    r = await store.getMessage('F', 0, 0, 32, 1 << 20, { isMatchedByConsumeQueue: () => false });
    expect(r).toMatchObject({ status: 'NO_MATCHED_MESSAGE', nextBeginOffset: 20, records: [] });
  });

  it('caps by maxMsgNums and maxTotalBytes but returns at least one record', async () => {
    for (let i = 0; i < 40; i++) await store.putMessage(makeMessage('C', 0, Buffer.alloc(100, i)));
    const size = 91 + 100 + 1; // no properties
    let r = await store.getMessage('C', 0, 0, 5, 1 << 20);
    expect(r.records.length).toBe(5);
    expect(r.nextBeginOffset).toBe(5);
    r = await store.getMessage('C', 0, 0, 64, 1 << 20);
    expect(r.records.length).toBe(32); // maxTransferCountOnMessageInMemory
    r = await store.getMessage('C', 0, 0, 32, size * 3);
    expect(r.records.length).toBe(3);
    expect(r.totalBytes).toBe(size * 3);
    r = await store.getMessage('C', 0, 7, 32, 10);
    expect(r.records.length).toBe(1);
    expect(r.nextBeginOffset).toBe(8);
  });

  it('rejects illegal messages with the Java statuses', async () => {
    const big = makeMessage('L', 0, Buffer.alloc(10));
    const s1 = await openStore(path.join(root, 'other'), { maxMessageSize: 5 });
    expect((await s1.putMessage(big)).status).toBe('MESSAGE_ILLEGAL');
    await s1.shutdown();
    const props = makeMessage('L', 0, 'x', { props: { BIG: 'p'.repeat(40000) } });
    expect((await store.putMessage(props)).status).toBe('PROPERTIES_SIZE_EXCEEDED');
    expect((await store.putMessage(makeMessage('t'.repeat(256), 0, 'x'))).status).toBe('MESSAGE_ILLEGAL');
    expect((await store.putMessage(makeMessage('../x', 0, 'x'))).status).toBe('MESSAGE_ILLEGAL');
    // A record that cannot fit a (tiny) commit-log file at all.
    expect((await store.putMessage(makeMessage('L', 0, Buffer.alloc(4050)))).status).toBe('MESSAGE_ILLEGAL');
    expect(store.getMaxOffsetInQueue('L', 0)).toBe(0);
  });

  it('answers OS_PAGE_CACHE_BUSY instead of queueing without bound', async () => {
    const s = await openStore(path.join(root, 'other'), { maxPendingWriteBytes: 1000 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.putMessage(makeMessage('B', 0, Buffer.alloc(200, i)))));
    const statuses = results.map((r) => r.status);
    expect(statuses).toContain('PUT_OK');
    expect(statuses).toContain('OS_PAGE_CACHE_BUSY');
    // Accepted ones got consecutive queue offsets.
    const ok = results.filter((r) => r.status === 'PUT_OK').map((r) => r.queueOffset);
    expect(ok).toEqual(ok.map((_, i) => i));
    expect((await s.putMessage(makeMessage('B', 0, 'later'))).status).toBe('PUT_OK');
    await s.shutdown();
  });

  it('stores a batch as consecutive records and queue offsets', async () => {
    await store.putMessage(makeMessage('Batch', 1, 'first'));
    const msgs = [0, 1, 2].map((i) => makeMessage('Batch', 1, `inner${i}`));
    const r = await store.putMessages(msgs);
    expect(r.status).toBe('PUT_OK');
    expect(r.queueOffset).toBe(1);
    expect(r.messageCount).toBe(3);
    expect(r.commitLogOffsets.length).toBe(3);
    expect(r.commitLogOffsets[1]! - r.commitLogOffsets[0]!).toBe(91 + 6 + 5);
    const g = await store.getMessage('Batch', 1, 1, 32, 1 << 20);
    expect(g.records.map((b) => decodeRecord(b).queueOffset)).toEqual([1, 2, 3]);
    expect((await store.putMessages([makeMessage('Batch', 1, 'a'), makeMessage('Batch', 2, 'b')])).status).toBe('MESSAGE_ILLEGAL');
  });

  it('does not queue transaction PREPARED/ROLLBACK records', async () => {
    const half = makeMessage('Tx', 0, 'half', { sysFlag: 0x4 });
    const r = await store.putMessage(half);
    expect(r.status).toBe('PUT_OK');
    expect(r.queueOffset).toBe(0);
    expect(store.getMaxOffsetInQueue('Tx', 0)).toBe(0);
    expect(decodeRecord((await store.lookMessageByOffset(r.commitLogOffset))!).body.toString()).toBe('half');
    expect((await store.putMessage(makeMessage('Tx', 0, 'normal'))).queueOffset).toBe(0);
    expect(store.getMaxOffsetInQueue('Tx', 0)).toBe(1);
  });

  it('calls onDispatch listeners before the put resolves', async () => {
    const seen: number[] = [];
    store.onDispatch((e) => seen.push(e.queueOffset));
    const r = await store.putMessage(makeMessage('D', 2, 'x'));
    expect(seen).toEqual([0]);
    expect(r.queueOffset).toBe(0);
  });

  it('serves records older than the tail cache from disk', async () => {
    const s = await openStore(path.join(root, 'other'), { commitLogTailCacheBytes: 1, mappedFileSizeCommitLog: 1 << 20 });
    const sent: PutResult[] = [];
    for (let i = 0; i < 50; i++) sent.push(await s.putMessage(makeMessage('Cold', 0, Buffer.alloc(300, i))));
    const r = await s.getMessage('Cold', 0, 0, 32, 1 << 20);
    expect(r.status).toBe('FOUND');
    r.records.forEach((b, i) => expect(decodeRecord(b).body[0]).toBe(i));
    await s.shutdown();
  });

  it('reuses tail memory behind released pull views and never behind views still held', async () => {
    const s = await openStore(path.join(root, 'pins'), { commitLogTailCacheBytes: 2 << 20, mappedFileSizeCommitLog: 64 << 20 });
    const put = async (n: number, from: number) => {
      for (let i = 0; i < n; i++) await s.putMessage(makeMessage('Pins', 0, Buffer.alloc(4000, (from + i) & 0xff)));
    };
    await put(300, 0);
    const held = await s.getMessage('Pins', 0, 0, 32, 1 << 20);
    expect(held.status).toBe('FOUND');
    expect(held.pins).toBeDefined();
    const before = held.records.map((r) => Buffer.from(r));
    // ~8 MiB more: the first chunk leaves the 2 MiB tail while pinned; unviewed chunks after it are reused
    await put(2000, 300);
    const reusedWhileHeld = s.stats.tailChunksReused;
    expect(reusedWhileHeld).toBeGreaterThan(0);
    held.records.forEach((r, i) => expect(r.equals(before[i]!)).toBe(true));
    held.pins!.release();
    await put(2000, 2300);
    expect(s.stats.tailChunksReused).toBeGreaterThan(reusedWhileHeld);
    // whatever memory was reused, what is read now is what was stored
    const late = await s.getMessage('Pins', 0, 4200, 32, 1 << 20);
    late.records.forEach((r, i) => expect(decodeRecord(r).body[0]).toBe((4200 + i) & 0xff));
    late.pins?.release();
    await s.shutdown();
  });

  it('stores a body given as pieces byte-identical to the same body given whole', async () => {
    const body = Buffer.alloc(70000);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7 + 3) & 0xff;
    const cuts = [[0, 1], [1, 40000], [40000, 40001], [40001, 70000]]; // 1-byte pieces and large ones
    const split = makeMessage('Parts', 1, Buffer.alloc(0), { keys: 'k1', tags: 't' });
    split.bodyParts = cuts.map(([a, b]) => Buffer.from(body.subarray(a, b)));
    const whole = makeMessage('Parts', 1, body, { keys: 'k1', tags: 't' });
    const store = await openStore(path.join(root, 'parts'), { mappedFileSizeCommitLog: 1 << 20 });
    const r1 = await store.putMessage(split);
    const r2 = await store.putMessage(whole);
    expect([r1.status, r2.status]).toEqual(['PUT_OK', 'PUT_OK']);
    const a = (await store.lookMessageByOffset(r1.commitLogOffset))!;
    const b = (await store.lookMessageByOffset(r2.commitLogOffset))!;
    const expected = encodeRecord(whole, r1.queueOffset, r1.commitLogOffset, r1.storeTimestamp);
    expect(a.equals(expected)).toBe(true);
    expect(decodeRecord(a).bodyCrc).toBe(decodeRecord(b).bodyCrc);
    expect(decodeRecord(a).body.equals(body)).toBe(true);
    const got = await store.getMessage('Parts', 1, 0, 32, 1 << 20);
    expect(got.records.map((r) => decodeRecord(r).body.equals(body))).toEqual([true, true]);
    got.pins?.release();
    // a body too big for the store is refused from its pieces' length
    const tooBig = makeMessage('Parts', 1, Buffer.alloc(0));
    tooBig.bodyParts = [Buffer.alloc(3 << 20), Buffer.alloc(3 << 20)];
    expect((await store.putMessage(tooBig)).status).toBe('MESSAGE_ILLEGAL');
    await store.shutdown();
  });

  it('deletes a topic', async () => {
    await store.putMessage(makeMessage('Del', 0, 'x'));
    await store.putMessage(makeMessage('Del', 3, 'x'));
    expect(store.getQueueIds('Del')).toEqual([0, 3]);
    await store.deleteTopic('Del');
    expect(store.getQueueIds('Del')).toEqual([]);
    expect(fs.existsSync(path.join(root, 'consumequeue', 'Del'))).toBe(false);
    expect((await store.getMessage('Del', 0, 0, 32, 1 << 20)).status).toBe('NO_MESSAGE_IN_QUEUE');
  });
});
