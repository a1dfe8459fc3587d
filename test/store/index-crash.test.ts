// kill -9 of a process storing keyed messages: after recovery every acknowledged message is found by its key
// and by its UNIQ_KEY, exactly once, across index files that rolled while it ran.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecord } from '../../src/store/index.js';
import { buildStoreChild, makeTempDir, openStore, removeDir } from './helpers.js';

let build: string;

// Keys: k<i> and g<i % 10>; UNIQ_KEY u<i>. The index flushes every 100 ms (so some files and the checkpoint are
// durable and some are not when the kill lands).
const CHILD = `
import { DefaultMessageStore } from './store/message-store.js';
import { resolveStoreConfig } from './store/config.js';
const [root, configJson] = process.argv.slice(2);
const log = { info() {}, warn() {}, error() {}, debug() {}, child() { return log; } };
const store = new DefaultMessageStore(resolveStoreConfig({ storePathRootDir: root, ...JSON.parse(configJson) }), log);
await store.start();
const ip = Buffer.from([127, 0, 0, 1]);
let n = 0;
async function producer() {
  for (;;) {
    const i = n++;
    const r = await store.putMessage({
      topic: 'IdxCrash', queueId: i % 4, flag: 0, body: Buffer.from('msg-' + i),
      propertiesString: 'KEYS\\u0001k' + i + ' g' + (i % 10) + '\\u0002UNIQ_KEY\\u0001u' + i + '\\u0002',
      keys: 'k' + i + ' g' + (i % 10), uniqKey: 'u' + i,
      tagsCode: 0, sysFlag: 0, bornTimestamp: Date.now(),
      bornHost: { ip, port: 1 }, storeHost: { ip, port: 10911 }, reconsumeTimes: 0, preparedTransactionOffset: 0,
    });
    if (r.status === 'PUT_OK') process.stdout.write(i + ' ' + r.commitLogOffset + '\\n');
  }
}
for (let p = 0; p < 8; p++) void producer();
`;

const CONFIG = {
  mappedFileSizeCommitLog: 64 * 1024, mappedFileSizeConsumeQueue: 2000, flushIntervalConsumeQueue: 100,
  flushIntervalIndex: 100, maxHashSlotNum: 4099, maxIndexNum: 1500,
};

beforeAll(() => {
  // The child runs plain JS: the store (and what it imports) transpiled without type checking.
  build = buildStoreChild('rmq-idx-crash-build-', CHILD);
});

afterAll(() => {
  fs.rmSync(build, { recursive: true, force: true });
});

function runAndKill(root: string, count: number): Promise<Map<number, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(build, 'child.mjs'), root, JSON.stringify(CONFIG)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acks = new Map<number, number>();
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const [i, off] = line.split(' ').map(Number);
        acks.set(i!, off!);
      }
      if (acks.size >= count && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(acks) : reject(new Error(`child exited with ${code}`))));
  });
}

describe('index after kill -9', () => {
  it('finds every acknowledged message by key and by UNIQ_KEY, once', async () => {
    const root = await makeTempDir();
    try {
      const acks = await runAndKill(root, 2000);
      const filesBefore = fs.readdirSync(path.join(root, 'index')).length;
      expect(filesBefore).toBeGreaterThan(2);
      const store = await openStore(root, CONFIG);
      expect(store.lastShutdownAbnormal).toBe(true);
      const end = Date.now() + 60_000;
      const bad: string[] = [];
      for (const [i, offset] of acks) {
        for (const key of [`k${i}`, `u${i}`]) {
          const r = await store.queryMessage('IdxCrash', key, 64, 0, end);
          // Other keys with the same hash may come back too (the client filters them); this one exactly once.
          const hits = r.records.map((b) => decodeRecord(b)).filter((d) => d.body.toString() === `msg-${i}`);
          if (hits.length !== 1 || hits[0]!.commitLogOffset !== offset) bad.push(`${key}:${hits.length}`);
        }
      }
      expect(bad.slice(0, 20)).toEqual([]);
      // A shared key: the newest 64 messages with it, each once.
      const g = await store.queryMessage('IdxCrash', 'g3', 64, 0, end);
      const bodies = g.records.map((b) => decodeRecord(b).body.toString());
      expect(new Set(bodies).size).toBe(bodies.length);
      expect(bodies.length).toBe(64);
      await store.shutdown();
    } finally {
      await removeDir(root);
    }
  }, 120_000);
});
