// Retention (fileReservedTime, deleteWhen), forced clean-up and the disk-full guard, with an injected clock,
// file times and statfs.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createMessageStore, decodeRecord, diskUsedRatio, type DefaultMessageStore, type PutResult, type StatFsLike,
  type StoreConfigInput, type StoreEnv,
} from '../../src/store/index.js';
import { makeMessage, makeTempDir, removeDir } from './helpers.js';

const HOUR = 3600_000;
const SMALL: StoreConfigInput = {
  mappedFileSizeCommitLog: 4096,
  mappedFileSizeConsumeQueue: 200, // 10 entries per file
  flushIntervalConsumeQueue: 50,
  deleteCommitLogFilesInterval: 0,
  deleteConsumeQueueFilesInterval: 0,
  messageIndexEnable: false,
};

/** A disk `usedPercent` full (statfs figures as Linux reports them for a 1 GiB partition). */
function disk(usedPercent: number): StatFsLike {
  const blocks = 262144;
  const used = Math.round((blocks * usedPercent) / 100);
  return { bsize: 4096, blocks, bfree: blocks - used, bavail: blocks - used };
}

interface Fake {
  nowMs: number;
  usedPercent: number;
  /** mtime overrides by file name; others use the real mtime. */
  mtimes: Map<string, number>;
}

let root: string;
let fake: Fake;
let env: Partial<StoreEnv>;

beforeEach(async () => {
  root = await makeTempDir();
  // A time at 10:00 local, far from the default deleteWhen hour.
  const d = new Date();
  d.setHours(10, 0, 0, 0);
  fake = { nowMs: d.getTime(), usedPercent: 20, mtimes: new Map() };
  env = {
    now: () => fake.nowMs,
    statfs: async () => disk(fake.usedPercent),
    fileMtimeMs: async (file) => fake.mtimes.get(path.basename(file)) ?? (await fs.promises.stat(file)).mtimeMs,
  };
});

afterEach(async () => {
  await removeDir(root);
});

async function open(extra: StoreConfigInput = {}): Promise<DefaultMessageStore> {
  const store = createMessageStore({ storePathRootDir: root, ...SMALL, ...extra }, undefined, env);
  await store.start();
  return store;
}

/** `count` messages over two queues, ~200 bytes each: about 20 per 4 KiB file. */
async function fill(store: DefaultMessageStore, count: number): Promise<PutResult[]> {
  const out: PutResult[] = [];
  for (let i = 0; i < count; i++) {
    const r = await store.putMessage(makeMessage('Ret', i % 2, `m${i}-${'x'.repeat(100)}`, { tags: 'a' }));
    expect(r.status).toBe('PUT_OK');
    out.push(r);
  }
  // The consume queues on disk and synced (clean-up only deletes synced consume-queue files).
  await store.cqStore.drainWrites();
  await store.cqStore.flushAll();
  return out;
}

function commitLogFiles(): string[] {
  return fs.readdirSync(path.join(root, 'commitlog')).sort();
}

function cqFiles(queueId: number): string[] {
  return fs.readdirSync(path.join(root, 'consumequeue', 'Ret', String(queueId))).sort();
}

/** Checks that pulls below the min are OFFSET_TOO_SMALL pointing at the min, and the min is readable. */
async function expectMinConsistent(store: DefaultMessageStore, sent: PutResult[]): Promise<void> {
  const minPhy = store.getMinPhyOffset();
  for (let q = 0; q < 2; q++) {
    const min = store.getMinOffsetInQueue('Ret', q);
    const mine = sent.filter((_, i) => i % 2 === q);
    // The first message of this queue still stored.
    const firstKept = mine.findIndex((r) => r.commitLogOffset >= minPhy);
    expect(min).toBe(firstKept);
    const below = await store.getMessage('Ret', q, 0, 4, 1 << 20);
    if (min > 0) {
      expect(below.status).toBe('OFFSET_TOO_SMALL');
      expect(below.nextBeginOffset).toBe(min);
    }
    const at = await store.getMessage('Ret', q, below.status === 'OFFSET_TOO_SMALL' ? below.nextBeginOffset : 0, 4, 1 << 20);
    expect(at.status).toBe('FOUND');
    const rec = decodeRecord(at.records[0]!);
    expect(rec.queueOffset).toBe(min);
    expect(rec.commitLogOffset).toBe(mine[min]!.commitLogOffset);
  }
}

describe('retention', () => {
  it('deletes expired commit-log files at the deleteWhen hour, oldest first, never the last, and moves every min', async () => {
    const store = await open({ deleteWhen: '10;22' });
    try {
      const sent = await fill(store, 300);
      const before = commitLogFiles();
      expect(before.length).toBeGreaterThan(12);
      // Not expired yet: nothing goes even though it is the deleteWhen hour.
      expect((await store.cleaner.runOnce()).commitLogFilesDeleted).toBe(0);
      // Four days later everything but the file being written has expired; at most 10 go per run.
      fake.nowMs += 96 * HOUR; // four days later, the same hour
      const run = await store.cleaner.runOnce();
      expect(run.commitLogFilesDeleted).toBe(10);
      expect(commitLogFiles()).toEqual(before.slice(10));
      expect(store.getMinPhyOffset()).toBe(Number(before[10]));
      expect(run.consumeQueueFilesDeleted).toBeGreaterThan(0);
      await expectMinConsistent(store, sent);
      // The next runs take the rest, but never the file holding the newest message.
      while ((await store.cleaner.runOnce()).commitLogFilesDeleted > 0);
      const last = sent[sent.length - 1]!;
      const remaining = commitLogFiles();
      expect(Number(remaining[0])).toBeLessThanOrEqual(last.commitLogOffset);
      expect(Number(remaining[0]) + 4096).toBeGreaterThan(last.commitLogOffset);
      await expectMinConsistent(store, sent);
      // Consume-queue files whose entries all point below the new min are gone; the last file stays.
      for (let q = 0; q < 2; q++) {
        const files = cqFiles(q);
        const firstEntryIndex = Number(files[0]) / 20;
        expect(store.getMinOffsetInQueue('Ret', q) - firstEntryIndex).toBeLessThan(10);
      }
      // Appends go on.
      const next = await store.putMessage(makeMessage('Ret', 0, 'after clean-up'));
      expect(next.queueOffset).toBe(150);
    } finally {
      await store.shutdown();
    }
  });

  it('keeps expired files outside the deleteWhen hours while the disk has room', async () => {
    const store = await open({ deleteWhen: '04' });
    try {
      await fill(store, 100);
      fake.nowMs += 100 * HOUR;
      fake.nowMs = new Date(fake.nowMs).setHours(10);
      expect((await store.cleaner.runOnce()).commitLogFilesDeleted).toBe(0);
      expect(store.getMinPhyOffset()).toBe(0);
    } finally {
      await store.shutdown();
    }
  });

  it('stops at the first file that has not expired (no holes)', async () => {
    const store = await open({ deleteWhen: '10' });
    try {
      await fill(store, 150);
      const files = commitLogFiles();
      const old = fake.nowMs - 100 * HOUR;
      for (const f of files) fake.mtimes.set(f, old);
      fake.mtimes.set(files[3]!, fake.nowMs); // written recently (as after a restart touched it)
      expect((await store.cleaner.runOnce()).commitLogFilesDeleted).toBe(3);
      expect(commitLogFiles()).toEqual(files.slice(3));
    } finally {
      await store.shutdown();
    }
  });

  it('survives restarts: min offsets are corrected at start-up, clean or after a crash', async () => {
    let store = await open({ deleteWhen: '10' });
    const sent = await fill(store, 200);
    fake.nowMs += 96 * HOUR; // four days later, the same hour
    await store.cleaner.runOnce();
    const minPhy = store.getMinPhyOffset();
    expect(minPhy).toBeGreaterThan(0);
    await store.shutdown();

    store = await open();
    expect(store.getMinPhyOffset()).toBe(minPhy);
    await expectMinConsistent(store, sent);
    await store.shutdown();

    fs.writeFileSync(path.join(root, 'abort'), '1');
    store = await open();
    expect(store.lastShutdownAbnormal).toBe(true);
    expect(store.getMinPhyOffset()).toBe(minPhy);
    await expectMinConsistent(store, sent);
    await store.shutdown();
  });

  it('raises every queue min before a commit-log file goes: a pull below it is moved, never sent to a removed record', async () => {
    // Java deletes up to deleteFileBatchMax files deleteCommitLogFilesInterval apart and corrects the queues only
    // afterwards; in between, a consumer at the old min read entries whose records were gone. Watch every turn
    // of the event loop while a forced clean-up deletes ten files 20 ms apart.
    const store = await open({ deleteCommitLogFilesInterval: 20 });
    try {
      const sent = await fill(store, 300);
      fake.usedPercent = 86;
      let stop = false;
      const seen = new Set<number>();
      const watcher = (async () => {
        while (!stop) {
          const minPhy = store.getMinPhyOffset();
          if (minPhy > 0 && !seen.has(minPhy)) {
            seen.add(minPhy);
            for (let q = 0; q < 2; q++) {
              const min = store.getMinOffsetInQueue('Ret', q);
              const mine = sent.filter((_, i) => i % 2 === q);
              expect(mine[min]!.commitLogOffset, `queue ${q} min ${min} at log min ${minPhy}`).toBeGreaterThanOrEqual(minPhy);
              const below = await store.getMessage('Ret', q, 0, 4, 1 << 20);
              expect(below.status, `queue ${q} at log min ${minPhy}`).toBe('OFFSET_TOO_SMALL');
            }
          }
          await new Promise((r) => setImmediate(r));
        }
      })();
      const run = await store.cleaner.runOnce();
      stop = true;
      await watcher;
      expect(run.commitLogFilesDeleted).toBe(10);
      expect(seen.size).toBe(10); // every intermediate min was checked
      await expectMinConsistent(store, sent);
    } finally {
      await store.shutdown();
    }
  });

  it('a restart on a store whose oldest commit-log files were removed by hand moves every queue min past them', async () => {
    let store = await open();
    const sent = await fill(store, 200);
    await store.shutdown();
    const files = commitLogFiles();
    for (const f of files.slice(0, 3)) fs.rmSync(path.join(root, 'commitlog', f));
    store = await open();
    try {
      expect(store.getMinPhyOffset()).toBe(Number(files[3]));
      expect(store.getMinOffsetInQueue('Ret', 0)).toBeGreaterThan(0);
      await expectMinConsistent(store, sent);
    } finally {
      await store.shutdown();
    }
  });

  it('tells the index which commit-log offset is now the minimum', async () => {
    const store = await open({ deleteWhen: '10' });
    try {
      await fill(store, 100);
      const hook = vi.spyOn(store, 'deleteExpiredIndexFiles');
      fake.nowMs += 96 * HOUR; // four days later, the same hour
      await store.cleaner.runOnce();
      expect(hook).toHaveBeenCalledWith(store.getMinPhyOffset());
    } finally {
      await store.shutdown();
    }
  });
});

describe('disk guard', () => {
  it('computes used space as Java does (rounded up to a whole percent)', () => {
    expect(diskUsedRatio(disk(50))).toBe(0.5);
    expect(diskUsedRatio({ bsize: 4096, blocks: 1000, bfree: 100, bavail: 50 })).toBe(0.95); // 900/(900+50)=94.7%
    expect(diskUsedRatio({ bsize: 4096, blocks: 0, bfree: 0, bavail: 0 })).toBe(-1);
  });

  it('above diskMaxUsedSpaceRatio deletes expired files at any hour', async () => {
    const store = await open({ deleteWhen: '04' });
    try {
      await fill(store, 100);
      fake.usedPercent = 80;
      expect((await store.cleaner.runOnce()).commitLogFilesDeleted).toBe(0); // nothing expired yet
      fake.nowMs += 96 * HOUR; // four days later, the same hour
      expect((await store.cleaner.runOnce()).commitLogFilesDeleted).toBeGreaterThan(0);
      expect(store.cleaner.diskFull).toBe(false);
    } finally {
      await store.shutdown();
    }
  });

  it('above diskSpaceCleanForciblyRatio deletes unexpired files too (unless cleanFileForciblyEnable=false)', async () => {
    let store = await open({ cleanFileForciblyEnable: false });
    try {
      await fill(store, 100);
      fake.usedPercent = 86;
      expect((await store.cleaner.runOnce()).commitLogFilesDeleted).toBe(0);
    } finally {
      await store.shutdown();
    }
    store = await open();
    try {
      expect((await store.cleaner.runOnce()).commitLogFilesDeleted).toBeGreaterThan(0);
      expect(store.cleaner.diskFull).toBe(false);
      const ok = await store.putMessage(makeMessage('Ret', 0, 'still writable at 86%'));
      expect(ok.status).toBe('PUT_OK');
    } finally {
      await store.shutdown();
    }
  });

  it('above diskSpaceWarningLevelRatio refuses puts with SERVICE_NOT_AVAILABLE until usage falls below the forced-clean level', async () => {
    const store = await open();
    try {
      await fill(store, 10);
      fake.usedPercent = 91;
      await store.cleaner.checkDiskSpace();
      expect(store.cleaner.diskFull).toBe(true);
      const refused = await store.putMessage(makeMessage('Ret', 0, 'refused'));
      expect(refused.status).toBe('SERVICE_NOT_AVAILABLE');
      expect(refused.remark).toContain("the broker's disk is full [CL:  0.91 CQ:  0.91");
      // Reads still work.
      expect((await store.getMessage('Ret', 0, 0, 4, 1 << 20)).status).toBe('FOUND');
      // Between the two thresholds the flag stays (Java only clears it at or below the forced-clean ratio).
      fake.usedPercent = 88;
      await store.cleaner.checkDiskSpace();
      expect((await store.putMessage(makeMessage('Ret', 0, 'still refused'))).status).toBe('SERVICE_NOT_AVAILABLE');
      fake.usedPercent = 84;
      await store.cleaner.checkDiskSpace();
      expect(store.cleaner.diskFull).toBe(false);
      expect((await store.putMessage(makeMessage('Ret', 0, 'accepted'))).status).toBe('PUT_OK');
    } finally {
      await store.shutdown();
    }
  });

  it('clamps the thresholds as Java does', async () => {
    const store = await open({ diskSpaceWarningLevelRatio: 99, diskSpaceCleanForciblyRatio: 10, diskMaxUsedSpaceRatio: 100 });
    try {
      expect(store.cleaner.warningRatio).toBe(0.9);
      expect(store.cleaner.cleanForciblyRatio).toBe(0.3);
      expect(store.cleaner.maxUsedRatio).toBe(0.95);
    } finally {
      await store.shutdown();
    }
  });

  it('checks the disk on its own timer while running', async () => {
    const store = await open();
    try {
      fake.usedPercent = 95;
      // The timer looks every second; the deadline only bounds a broken timer.
      const deadline = Date.now() + 20_000;
      while (!store.cleaner.diskFull && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(store.cleaner.diskFull).toBe(true);
    } finally {
      await store.shutdown();
    }
  });
});
