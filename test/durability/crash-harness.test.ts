// Crash harness: the real server process (`node dist/main.js start`) under continuous load from a stock
// client (ali-ons) is SIGKILLed at random points and restarted on the same store, under SYNC_FLUSH and
// ASYNC_FLUSH. After every restart every acknowledged (SEND_OK) message must be there, and every message
// delivered must carry exactly the body that was sent for its id.
import { Message, Producer } from 'ali-ons';
import type { EventEmitter } from 'node:events';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { onsProducer } from '../helpers/ali-ons.js';
import { type TestServer, createTopic } from '../helpers/server.js';
import { rng } from '../store/helpers.js';
import { rawPull } from './helpers.js';

const repo = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(repo, 'dist', 'main.js');
const TOPIC = 'CrashHarness';
const QUEUES = 4;
const CYCLES = Number(process.env.RMQ_CRASH_CYCLES ?? 8);
const SENDERS = 8;
const SEED = Number(process.env.RMQ_CRASH_SEED ?? 20240601);

/** Newest mtime under a directory (to decide whether dist is stale). */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

beforeAll(() => {
  const stale = !fs.existsSync(MAIN) || fs.statSync(MAIN).mtimeMs < newestMtime(path.join(repo, 'src'));
  if (stale) {
    // `npm run build`; tsc emits even when another file has a type error, which is not this test's concern.
    const r = spawnSync('npm', ['run', 'build'], { cwd: repo, stdio: 'pipe', encoding: 'utf8' });
    if (!fs.existsSync(MAIN)) throw new Error(`npm run build produced no dist/main.js:\n${r.stdout}\n${r.stderr}`);
  }
}, 300_000);

/** The body sent for a message id: deterministic, so any delivered message can be checked byte for byte. */
function bodyFor(id: string): Buffer {
  const r = rng([...id].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, 7));
  const len = 40 + Math.floor(r() * 1500);
  const b = Buffer.alloc(len);
  const head = Buffer.from(`${id}|`);
  head.copy(b, 0);
  for (let i = head.length; i < len; i++) b[i] = 32 + Math.floor(r() * 95);
  return b;
}

function idOf(body: Buffer): string {
  return body.subarray(0, body.indexOf(0x7c)).toString();
}

interface Running {
  child: ChildProcess;
  namesrvAddr: string;
  brokerAddr: string;
  recovery: { durationMs: number; bytesScanned: number; abnormal: boolean } | null;
  readyMs: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `rmq start` on the store and resolves once it prints its ready line. */
function startServer(storeDir: string, mode: string): Promise<Running> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [
    MAIN, 'start',
    `--storePathRootDir=${storeDir}`, '--listenPort=0', '--namesrvPort=0', '--brokerIP1=127.0.0.1',
    `--flushDiskType=${mode}`, '--mappedFileSizeCommitLog=1048576', '--mappedFileSizeConsumeQueue=6000',
  ], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RMQ_LOG_LEVEL: 'info' } });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return new Promise((resolve, reject) => {
    const running: Partial<Running> = { child, exited, recovery: null };
    let out = '';
    let err = '';
    let errLines = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      err = (err + chunk).slice(-20000);
      const lines = (errLines + chunk).split('\n');
      errLines = lines.pop()!;
      for (const line of lines) {
        if (!line.includes('message store: recovered')) continue;
        try {
          const j = JSON.parse(line) as { durationMs: number; bytesScanned: number; abnormal: boolean };
          running.recovery = { durationMs: j.durationMs, bytesScanned: j.bytesScanned, abnormal: j.abnormal };
        } catch {
          // not JSON: ignore
        }
      }
    });
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const m = /rocketmq-ts ready: namesrv (\S+), broker (\S+) /.exec(out);
      if (m && running.namesrvAddr === undefined) {
        running.namesrvAddr = m[1]!;
        running.brokerAddr = m[2]!;
        running.readyMs = Math.round(performance.now() - t0);
        resolve(running as Running);
      }
    });
    child.on('error', reject);
    void exited.then(({ code, signal }) => {
      if (running.namesrvAddr === undefined) reject(new Error(`server exited (${code ?? signal}) before ready:\n${err}`));
    });
  });
}

async function kill9(r: Running): Promise<void> {
  r.child.kill('SIGKILL');
  const { signal } = await r.exited;
  expect(signal).toBe('SIGKILL');
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([p, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms))]);
}

/** Pulls every queue from its min to its max and checks each body against the id it carries. */
async function readBack(brokerAddr: string): Promise<{ ids: Set<string>; corrupt: string[]; total: number }> {
  const client = new RemotingClient(silentLogger());
  const ids = new Set<string>();
  const corrupt: string[] = [];
  let total = 0;
  try {
    for (let q = 0; q < QUEUES; q++) {
      let offset = 0;
      for (;;) {
        const res = await rawPull(client, brokerAddr, TOPIC, q, offset);
        if (res.code === ResponseCode.PULL_OFFSET_MOVED && res.nextBeginOffset > offset) {
          offset = res.nextBeginOffset;
          continue;
        }
        if (res.code !== ResponseCode.SUCCESS) break;
        if (res.messages.length === 0) {
          corrupt.push(`${q}:${offset}:FOUND without a message`); // never loop on an answer that does not move on
          break;
        }
        for (const m of res.messages) {
          total++;
          const id = idOf(m.body);
          if (!bodyFor(id).equals(m.body) || m.queueOffset !== offset) corrupt.push(`${q}:${m.queueOffset}:${id}`);
          ids.add(id);
          offset = m.queueOffset + 1;
        }
      }
    }
  } finally {
    await client.close();
  }
  return { ids, corrupt, total };
}

interface CycleReport {
  cycle: number;
  ackedThisCycle: number;
  ackedTotal: number;
  stored: number;
  missing: number;
  corrupt: number;
  recoveryMs: number;
  scannedBytes: number;
  readyMs: number;
}

/** Drives load until `stopAfterMs`, then SIGKILLs; returns the ids acknowledged with SEND_OK. */
async function loadAndKill(r: Running, mode: string, cycle: number, stopAfterMs: number): Promise<string[]> {
  const producer = onsProducer(r.namesrvAddr, 'PG_crash_harness');
  producer.on('error', () => undefined);
  await producer.ready();
  // ali-ons keeps one inner producer per process, bound to the first nameserver, which is killed in cycle 0:
  // its reconnect errors are expected.
  const inner = (Producer as unknown as { defaultProducer?: EventEmitter }).defaultProducer;
  if (inner && inner.listenerCount('error') === 0) inner.on('error', () => undefined);
  const acked: string[] = [];
  let stop = false;
  let seq = 0;
  const sender = async (s: number): Promise<void> => {
    while (!stop) {
      const id = `${mode}-${cycle}-${s}-${seq++}`;
      const msg = new Message(TOPIC, 'crash', bodyFor(id));
      msg.keys = [id];
      try {
        const res = await producer.send(msg);
        if (res.sendStatus === 'SEND_OK') acked.push(id);
      } catch {
        // Not acknowledged (the server died under it, or refused it): allowed to be missing.
      }
    }
  };
  const senders = Array.from({ length: SENDERS }, (_, s) => sender(s));
  // The kill point is measured from the first acknowledgement of this cycle, not from the start of the load: on a
  // loaded machine the producer may need longer than the shortest kill delay to find the restarted broker. (The
  // deadline only bounds a broken server; the cycle then fails on acked.length.)
  const firstAckBy = Date.now() + 60_000;
  while (acked.length === 0 && Date.now() < firstAckBy) await new Promise((res) => setTimeout(res, 10));
  await new Promise((res) => setTimeout(res, stopAfterMs));
  // Kill while sends are in flight. Answers the server wrote before it died may still be read after this
  // point; they are acknowledgements all the same.
  stop = true;
  await kill9(r);
  await withTimeout(Promise.all(senders), 15_000);
  // close() tells the (dead) broker and rejects; errors it emits afterwards are expected too.
  await withTimeout(producer.close().catch(() => undefined), 5_000);
  producer.on('error', () => undefined);
  return acked;
}

const reports: Record<string, CycleReport[]> = {};

afterAll(async () => {
  const inner = (Producer as unknown as { defaultProducer?: { close(): Promise<void> } }).defaultProducer;
  if (inner) await withTimeout(inner.close().catch(() => undefined), 5_000);
  for (const [mode, rows] of Object.entries(reports)) {
    const acked = rows.at(-1)?.ackedTotal ?? 0;
    const rec = rows.map((r) => r.recoveryMs);
    console.log(`crash harness ${mode}: ${rows.length} kill -9 cycles, ${acked} acked, ` +
      `${rows.at(-1)?.stored ?? 0} stored, ${rows.reduce((a, r) => a + r.missing, 0)} missing, ` +
      `${rows.reduce((a, r) => a + r.corrupt, 0)} corrupt, recovery ms ${rec.join('/')}`);
    console.table(rows);
  }
});

describe('kill -9 of the real server under load', () => {
  for (const mode of ['SYNC_FLUSH', 'ASYNC_FLUSH'] as const) {
    it(`loses no acknowledged message and delivers nothing corrupted (${mode})`, async () => {
      const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), `rmqts-crash-${mode}-`));
      const r = rng(SEED + mode.length);
      const ackedAll = new Set<string>();
      const rows: CycleReport[] = [];
      reports[mode] = rows;
      let server = await startServer(storeDir, mode);
      try {
        await createTopic({ brokerAddr: server.brokerAddr, namesrvAddr: server.namesrvAddr } as TestServer, TOPIC, QUEUES);
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          const acked = await loadAndKill(server, mode, cycle, 300 + Math.floor(r() * 900));
          for (const id of acked) ackedAll.add(id);
          server = await startServer(storeDir, mode);
          expect(server.recovery?.abnormal).toBe(true);
          const back = await readBack(server.brokerAddr);
          const missing = [...ackedAll].filter((id) => !back.ids.has(id));
          rows.push({
            cycle, ackedThisCycle: acked.length, ackedTotal: ackedAll.size, stored: back.ids.size,
            missing: missing.length, corrupt: back.corrupt.length, recoveryMs: server.recovery?.durationMs ?? -1,
            scannedBytes: server.recovery?.bytesScanned ?? -1, readyMs: server.readyMs,
          });
          expect(missing.slice(0, 10)).toEqual([]);
          expect(back.corrupt.slice(0, 10)).toEqual([]);
          expect(acked.length).toBeGreaterThan(0);
        }
        // Finally a clean stop: exit 0, and a clean start finds the same messages.
        server.child.kill('SIGTERM');
        expect((await server.exited).code).toBe(0);
        server = await startServer(storeDir, mode);
        expect(server.recovery?.abnormal).toBe(false);
        const back = await readBack(server.brokerAddr);
        expect([...ackedAll].filter((id) => !back.ids.has(id))).toEqual([]);
        expect(back.corrupt).toEqual([]);
      } finally {
        if (server.child.exitCode === null && server.child.signalCode === null) {
          server.child.kill('SIGKILL');
          await server.exited;
        }
        fs.rmSync(storeDir, { recursive: true, force: true });
      }
    }, 120_000);
  }
});
