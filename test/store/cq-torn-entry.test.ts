// A consume-queue entry damaged by a power loss while its record is intact in the commit log: a write torn inside
// the entry (its size cut to a wrong but positive value: CI seed 553858892 of test/durability/power-loss.test.ts
// lost one acknowledged SYNC_FLUSH message this way) or sectors of it landing out of order (offset zeros, size
// whole). The load's validity check (offset >= 0, size > 0) passes both; the re-dispatch after an abnormal stop
// must put the right entry back, or the acknowledged message can never be pulled again.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeRecord, type DefaultMessageStore } from '../../src/store/index.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

const CQ_UNIT = 20;
const CONFIG = { flushDiskType: 'SYNC_FLUSH' as const, mappedFileSizeCommitLog: 64 * 1024, mappedFileSizeConsumeQueue: 4000 };
const COUNT = 30;

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
  const store = await openStore(root, CONFIG);
  for (let i = 0; i < COUNT; i++) {
    // Bodies of 300+ bytes: every record's size has a non-zero second-lowest byte.
    const r = await store.putMessage(makeMessage('CqTorn', 0, `msg-${i}-${'x'.repeat(300 + i)}`, { keys: `k${i}` }));
    expect(r.status).toBe('PUT_OK');
  }
  await store.shutdown();
  // The next start-up sees an abnormal stop, as after a power loss.
  fs.writeFileSync(path.join(root, 'abort'), '');
});

afterEach(async () => {
  await removeDir(root);
});

/** Rewrites bytes [from, to) of the queue's entry `index` with zeros. */
function zeroEntryBytes(index: number, from: number, to: number): void {
  const file = path.join(root, 'consumequeue', 'CqTorn', '0', '0'.padStart(20, '0'));
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, Buffer.alloc(to - from), 0, to - from, index * CQ_UNIT + from);
  fs.closeSync(fd);
}

async function bodies(store: DefaultMessageStore): Promise<string[]> {
  const out: string[] = [];
  let offset = store.getMinOffsetInQueue('CqTorn', 0);
  const max = store.getMaxOffsetInQueue('CqTorn', 0);
  while (offset < max) {
    const r = await store.getMessage('CqTorn', 0, offset, 32, 1 << 20);
    if (r.status !== 'FOUND') break;
    for (const b of r.records) out.push(/^msg-(\d+)-/.exec(decodeRecord(b).body.toString())![1]!);
    offset = r.nextBeginOffset;
  }
  return out;
}

describe('consume-queue entry damaged by a power loss', () => {
  const expected = Array.from({ length: COUNT }, (_, i) => String(i));

  it('a write torn inside the last entry (size cut to a wrong positive value) is repaired', async () => {
    // 11 bytes kept: the 8-byte offset and 3 of the 4 size bytes (0x0000HH00).
    zeroEntryBytes(COUNT - 1, 11, CQ_UNIT);
    const store = await openStore(root, CONFIG);
    try {
      expect(await bodies(store)).toEqual(expected);
    } finally {
      await store.shutdown();
    }
  });

  it('an entry in the middle whose offset sector was lost (offset 0, size whole) is repaired', async () => {
    zeroEntryBytes(12, 0, 8);
    const store = await openStore(root, CONFIG);
    try {
      expect(await bodies(store)).toEqual(expected);
    } finally {
      await store.shutdown();
    }
  });

  it('an out-of-order entry left after a clean stop is passed over, not a failed pull', async () => {
    // Not a power loss (no abort file: nothing is re-checked), so only that entry's message is unreachable; the
    // pull must not trip over an offset below the records read with it (RangeError merging reads).
    fs.rmSync(path.join(root, 'abort'));
    zeroEntryBytes(12, 0, 8);
    const store = await openStore(root, CONFIG);
    try {
      expect(await bodies(store)).toEqual(expected.filter((i) => i !== '12'));
    } finally {
      await store.shutdown();
    }
  });
});
