// Slots of the last index file written after its header's last flush while the entries they name never reached
// the disk (a power loss tearing the slot-page write: CI-style failure "not found by key" in
// test/durability/power-loss.test.ts, seed 209150607 cycle 2). Recovery walks such a slot back along the new
// entries' prev links; when that walk breaks, the keys the header still covers must stay findable.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';
import { indexDir, indexFileNames, queryBodies, readIndexFile } from './index-helpers.js';

const SLOTS = 50;
const CONFIG = { maxHashSlotNum: SLOTS, maxIndexNum: 1000, mappedFileSizeCommitLog: 64 * 1024 };
const COUNT = 40;

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
  const store = await openStore(root, CONFIG);
  for (let i = 0; i < COUNT; i++) {
    expect((await store.putMessage(makeMessage('IdxTorn', 0, `msg-${i}`, { keys: `k${i}` }))).status).toBe('PUT_OK');
  }
  await store.shutdown();
});

afterEach(async () => {
  await removeDir(root);
});

describe('index slots torn by a power loss', () => {
  it('a slot naming an entry that never reached the disk keeps the chain its header covers', async () => {
    const names = indexFileNames(root);
    expect(names).toHaveLength(1);
    const file = path.join(indexDir(root), names[0]!);
    const parsed = readIndexFile(file, SLOTS);
    const count = parsed.header.indexCount;
    // Every used slot now names a new entry past indexCount whose bytes are zeros (the write that held it was lost).
    const fd = fs.openSync(file, 'r+');
    let torn = 0;
    for (let s = 0; s < SLOTS; s++) {
      if (parsed.slots[s] === 0) continue;
      const b = Buffer.alloc(4);
      b.writeInt32BE(count + torn++, 0);
      fs.writeSync(fd, b, 0, 4, 40 + 4 * s);
    }
    fs.closeSync(fd);
    expect(torn).toBeGreaterThan(10);
    fs.writeFileSync(path.join(root, 'abort'), '');
    const store = await openStore(root, CONFIG);
    try {
      const lost: number[] = [];
      for (let i = 0; i < COUNT; i++) if (!(await queryBodies(store, 'IdxTorn', `k${i}`)).includes(`msg-${i}`)) lost.push(i);
      expect(lost).toEqual([]);
    } finally {
      await store.shutdown();
    }
  });
});
