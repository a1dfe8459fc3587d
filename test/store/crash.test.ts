// kill -9 of a process that is storing messages: every put it acknowledged must be there after recovery.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecord } from '../../src/store/index.js';
import { buildStoreChild, makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

let build: string;

const CHILD = `
import { DefaultMessageStore } from './store/message-store.js';
import { resolveStoreConfig } from './store/config.js';
const [root, flushDiskType, configJson] = process.argv.slice(2);
const log = { info() {}, warn() {}, error() {}, debug() {}, child() { return log; } };
const store = new DefaultMessageStore(resolveStoreConfig({ storePathRootDir: root, flushDiskType, ...JSON.parse(configJson) }), log);
await store.start();
const ip = Buffer.from([127, 0, 0, 1]);
let n = 0;
async function producer() {
  for (;;) {
    const i = n++;
    const r = await store.putMessage({
      topic: 'Crash', queueId: i % 4, flag: 0, body: Buffer.from('msg-' + i + '-'.repeat(i % 300)),
      propertiesString: 'TAGS\\u0001t' + (i % 3) + '\\u0002', tagsCode: 0, sysFlag: 0, bornTimestamp: Date.now(),
      bornHost: { ip, port: 1 }, storeHost: { ip, port: 10911 }, reconsumeTimes: 0, preparedTransactionOffset: 0,
    });
    if (r.status === 'PUT_OK') process.stdout.write(i + ' ' + r.commitLogOffset + ' ' + r.queueOffset + '\\n');
  }
}
for (let p = 0; p < 16; p++) void producer();
`;

beforeAll(() => {
  // The child runs plain JS: the store (and what it imports) transpiled without type checking.
  build = buildStoreChild('rmq-crash-build-', CHILD);
});

afterAll(() => {
  fs.rmSync(build, { recursive: true, force: true });
});

const CONFIG = { mappedFileSizeCommitLog: 64 * 1024, mappedFileSizeConsumeQueue: 2000, flushIntervalConsumeQueue: 200 };

interface Ack {
  i: number;
  commitLogOffset: number;
  queueOffset: number;
}

/** Runs the child until it has acknowledged `count` puts, then SIGKILLs it. */
function runAndKill(root: string, mode: string, count: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(build, 'child.mjs'), root, mode, JSON.stringify(CONFIG)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acks: Ack[] = [];
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const [i, off, q] = line.split(' ').map(Number);
        acks.push({ i: i!, commitLogOffset: off!, queueOffset: q! });
      }
      if (acks.length >= count && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acks);
      else reject(new Error(`child exited with ${code}`));
    });
  });
}

describe('kill -9', () => {
  it.each(['ASYNC_FLUSH', 'SYNC_FLUSH'])('keeps every acknowledged message (%s)', async (mode) => {
    const root = await makeTempDir();
    try {
      const acks = await runAndKill(root, mode, 2000);
      expect(fs.existsSync(path.join(root, 'abort'))).toBe(true);
      const store = await openStore(root, { ...CONFIG, flushDiskType: mode as 'ASYNC_FLUSH' });
      expect(store.lastShutdownAbnormal).toBe(true);
      const bad: number[] = [];
      for (const a of acks) {
        const rec = await store.lookMessageByOffset(a.commitLogOffset);
        const d = rec && decodeRecord(rec);
        const ok = d && /^msg-(\d+)/.exec(d.body.toString())?.[1] === String(a.i) && d.queueId === a.i % 4 && d.queueOffset === a.queueOffset;
        if (!ok) bad.push(a.i);
      }
      expect(bad).toEqual([]);
      // Every queue is complete and consecutive from 0, and includes every acknowledged message.
      const ackedByQueue = new Map<string, number>();
      for (const a of acks) ackedByQueue.set(`${a.i % 4}:${a.queueOffset}`, a.commitLogOffset);
      for (let q = 0; q < 4; q++) {
        let offset = 0;
        for (;;) {
          const r = await store.getMessage('Crash', q, offset, 32, 1 << 20);
          if (r.status !== 'FOUND') break;
          for (const b of r.records) {
            const d = decodeRecord(b);
            const acked = ackedByQueue.get(`${q}:${offset}`);
            if (d.queueOffset !== offset || (acked !== undefined && d.commitLogOffset !== acked)) bad.push(offset);
            ackedByQueue.delete(`${q}:${offset}`);
            offset++;
          }
        }
        expect(store.getMaxOffsetInQueue('Crash', q)).toBe(offset);
        const next = await store.putMessage(makeMessage('Crash', q, 'after'));
        expect(next.queueOffset).toBe(offset);
      }
      expect(bad).toEqual([]);
      expect(ackedByQueue.size).toBe(0);
      await store.shutdown();
    } finally {
      await removeDir(root);
    }
  }, 60_000);
});
