// The consume-queue load scan (start-up): it reads a queue's files in growing chunks to find the min and max
// entries. Chunks must hold whole 20-byte entries: a queue whose file holds more entries than fit in the largest
// chunk (about 1 MiB, 52,428 entries) must come back with every entry, and a short queue with exactly its own.
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConsumeQueue } from '../../src/store/consume-queue/consume-queue.js';
import { makeTempDir, removeDir } from './helpers.js';

const FILE_SIZE = 300000 * 20;
const TAIL_ENTRIES = 1024;
const logger = pino({ level: 'silent' });

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  await removeDir(root);
});

function open(): ConsumeQueue {
  return new ConsumeQueue('T', 0, path.join(root, 'T', '0'), FILE_SIZE, TAIL_ENTRIES, logger);
}

/** Writes `count` entries (record i at commit-log offset 100 * i, 100 bytes), flushes and closes. */
async function writeEntries(count: number): Promise<void> {
  const cq = open();
  cq.loadSync();
  for (let i = 0; i < count; i++) expect(cq.putEntry(i, 100 * i, 100, i)).toBe(true);
  await cq.flush();
  await cq.close();
}

describe('consume-queue load scan', () => {
  for (const count of [1, 199, 200, 201, 70_000]) {
    it(`reloads a queue of ${count} entries with its exact min, max and last record end`, async () => {
      await writeEntries(count);
      const cq = open();
      cq.loadSync();
      expect(cq.minOffset).toBe(0);
      expect(cq.maxOffset).toBe(count);
      expect(cq.maxPhysicEnd).toBe(100 * count);
      // An entry beyond the largest chunk is read back whole.
      const probe = Math.min(count - 1, 60_000);
      expect(await cq.readEntry(probe)).toEqual({ commitLogOffset: 100 * probe, sizeBytes: 100, tagsCode: probe });
      await cq.close();
    });
  }
});
