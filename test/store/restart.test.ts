import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, readInt64, type PutResult } from '../../src/store/index.js';
import type { MessageToStore } from '../../src/store/types.js';
import { makeMessage, makeTempDir, openStore, removeDir, rng } from './helpers.js';

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  await removeDir(root);
});

interface Sent {
  msg: MessageToStore;
  result: PutResult;
}

async function fill(root: string, count: number, queues: number, seed: number, extra = {}): Promise<Sent[]> {
  const store = await openStore(root, extra);
  const r = rng(seed);
  const sent: Sent[] = [];
  for (let i = 0; i < count; i++) {
    const msg = makeMessage(`T${i % 2}`, i % queues, Buffer.alloc(4 + Math.floor(r() * 500), i & 0xff), { tags: `t${i % 4}` });
    sent.push({ msg, result: await store.putMessage(msg) });
  }
  await store.shutdown();
  return sent;
}

async function pullAll(store: Awaited<ReturnType<typeof openStore>>, topic: string, queueId: number, from = 0): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let offset = from;
  for (;;) {
    const r = await store.getMessage(topic, queueId, offset, 32, 1 << 20);
    if (r.status !== 'FOUND') break;
    out.push(...r.records);
    offset = r.nextBeginOffset;
  }
  return out;
}

function expected(sent: Sent[], topic: string, queueId: number): Buffer[] {
  return sent
    .filter((s) => s.msg.topic === topic && s.msg.queueId === queueId)
    .map((s) => encodeRecord(s.msg, s.result.queueOffset, s.result.commitLogOffset, s.result.storeTimestamp));
}

async function verifyAll(store: Awaited<ReturnType<typeof openStore>>, sent: Sent[], queues: number): Promise<void> {
  for (const topic of ['T0', 'T1']) {
    for (let q = 0; q < queues; q++) {
      const want = expected(sent, topic, q);
      expect(store.getMaxOffsetInQueue(topic, q)).toBe(want.length);
      const got = await pullAll(store, topic, q);
      expect(got.length).toBe(want.length);
      got.forEach((b, i) => expect(b.equals(want[i]!)).toBe(true));
    }
  }
}

describe('restart', () => {
  it('keeps every message, offset and queue across a clean restart; appends continue', async () => {
    const sent = await fill(root, 150, 3, 11);
    expect(fs.existsSync(path.join(root, 'abort'))).toBe(false);
    const cp = fs.readFileSync(path.join(root, 'checkpoint'));
    expect(cp.length).toBe(4096);
    expect(readInt64(cp, 0)).toBe(sent[sent.length - 1]!.result.storeTimestamp);
    expect(readInt64(cp, 8)).toBe(sent[sent.length - 1]!.result.storeTimestamp);

    const store = await openStore(root);
    expect(store.lastShutdownAbnormal).toBe(false);
    expect(fs.existsSync(path.join(root, 'abort'))).toBe(true);
    const last = sent[sent.length - 1]!.result;
    expect(store.getMaxPhyOffset()).toBe(last.commitLogOffset + last.wroteBytes);
    await verifyAll(store, sent, 3);
    expect(store.getQueueIds('T0')).toEqual([0, 1, 2]);

    const msg = makeMessage('T0', 0, 'after restart');
    const r = await store.putMessage(msg);
    expect(r.status).toBe('PUT_OK');
    expect(r.queueOffset).toBe(expected(sent, 'T0', 0).length);
    const next = last.commitLogOffset + last.wroteBytes;
    const seg = 4096;
    expect(r.commitLogOffset === next || r.commitLogOffset === next + seg - (next % seg)).toBe(true);
    sent.push({ msg, result: r });
    await store.shutdown();

    const again = await openStore(root);
    await verifyAll(again, sent, 3);
    await again.shutdown();
  });

  it('rebuilds the whole consumequeue directory from the log', async () => {
    const sent = await fill(root, 120, 2, 5);
    await fs.promises.rm(path.join(root, 'consumequeue'), { recursive: true });
    const store = await openStore(root);
    await verifyAll(store, sent, 2);
    // Tags codes are recomputed from the TAGS property.
    const wanted = makeMessage('x', 0, '', { tags: 't2' }).tagsCode;
    const r = await store.getMessage('T0', 0, 0, 32, 1 << 20, { isMatchedByConsumeQueue: (c) => c === wanted });
    expect(r.records.every((b) => decodeRecord(b).propertiesString.includes('TAGS\u0001t2'))).toBe(true);
    expect(r.records.length).toBeGreaterThan(0);
    await store.shutdown();
  });

  it('rebuilds a deleted queue directory (whole log scanned when recoverScanFileNum = 0)', async () => {
    const sent = await fill(root, 120, 2, 6);
    await fs.promises.rm(path.join(root, 'consumequeue', 'T1', '1'), { recursive: true });
    const store = await openStore(root, { recoverScanFileNum: 0 });
    await verifyAll(store, sent, 2);
    await store.shutdown();
  });

  it('with the default window, a deleted queue is rebuilt from the recent files with min moved up', async () => {
    const sent = await fill(root, 120, 2, 8);
    await fs.promises.rm(path.join(root, 'consumequeue', 'T1', '1'), { recursive: true });
    const store = await openStore(root);
    const want = expected(sent, 'T1', 1);
    const min = store.getMinOffsetInQueue('T1', 1);
    expect(min).toBeGreaterThan(0);
    expect(store.getMaxOffsetInQueue('T1', 1)).toBe(want.length);
    expect((await store.getMessage('T1', 1, 0, 32, 1 << 20)).status).toBe('OFFSET_TOO_SMALL');
    const got = await pullAll(store, 'T1', 1, min);
    got.forEach((b, i) => expect(b.equals(want[min + i]!)).toBe(true));
    expect(got.length).toBe(want.length - min);
    // New messages continue the queue.
    expect((await store.putMessage(makeMessage('T1', 1, 'n'))).queueOffset).toBe(want.length);
    await store.shutdown();
    // And the rebuilt queue loads (placeholders below min are not entries).
    const again = await openStore(root);
    expect(again.getMinOffsetInQueue('T1', 1)).toBe(min);
    expect(again.getMaxOffsetInQueue('T1', 1)).toBe(want.length + 1);
    await again.shutdown();
  });

  it.each(['zero', 'cut'])('drops a torn last record (%s) and appends over it', async (how) => {
    const sent = await fill(root, 60, 2, 9);
    const last = sent[sent.length - 1]!;
    const seg = 4096;
    const file = path.join(root, 'commitlog', String(last.result.commitLogOffset - (last.result.commitLogOffset % seg)).padStart(20, '0'));
    const pos = last.result.commitLogOffset % seg;
    const half = Math.floor(last.result.wroteBytes / 2);
    if (how === 'zero') {
      const fd = fs.openSync(file, 'r+');
      fs.writeSync(fd, Buffer.alloc(last.result.wroteBytes - half), 0, last.result.wroteBytes - half, pos + half);
      fs.closeSync(fd);
    } else {
      fs.truncateSync(file, pos + half);
    }
    // Simulate the crash leaving the abort file behind.
    fs.writeFileSync(path.join(root, 'abort'), '');

    const store = await openStore(root);
    expect(store.lastShutdownAbnormal).toBe(true);
    expect(store.getMaxPhyOffset()).toBe(last.result.commitLogOffset);
    const kept = sent.slice(0, -1);
    await verifyAll(store, kept, 2);
    expect(await store.lookMessageByOffset(last.result.commitLogOffset)).toBeNull();

    const msg = makeMessage(last.msg.topic, last.msg.queueId, 'replacement');
    const r = await store.putMessage(msg);
    expect(r.queueOffset).toBe(last.result.queueOffset);
    expect(r.commitLogOffset).toBe(last.result.commitLogOffset);
    kept.push({ msg, result: r });
    await store.shutdown();

    const again = await openStore(root);
    await verifyAll(again, kept, 2);
    await again.shutdown();
  });

  it('recovers a log with a corrupt body CRC in the middle of the last file', async () => {
    const sent = await fill(root, 40, 1, 10);
    const victim = sent[sent.length - 3]!;
    const seg = 4096;
    const file = path.join(root, 'commitlog', String(victim.result.commitLogOffset - (victim.result.commitLogOffset % seg)).padStart(20, '0'));
    const fd = fs.openSync(file, 'r+');
    // Flip a body byte (body starts after the 84-byte header + 4-byte body length, IPv4).
    const at = (victim.result.commitLogOffset % seg) + 84 + 4 + 1;
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, at);
    b[0] ^= 0xff;
    fs.writeSync(fd, b, 0, 1, at);
    fs.closeSync(fd);
    const store = await openStore(root);
    expect(store.getMaxPhyOffset()).toBe(victim.result.commitLogOffset);
    await verifyAll(store, sent.slice(0, -3), 1);
    await store.shutdown();
  });
});
