// POP crash test: the real server process (`node dist/main.js start`) is SIGKILLed between a pop and its acks,
// several times, and restarted on the same store. A checker then drains the group: every message whose send was
// acknowledged must be popped and acked again eventually (duplicates allowed: POP is at-least-once across a crash),
// with its body intact. The checkpoints, the acks and the group's offsets all live in the store and its config
// files, so this is what the ordering of those writes has to guarantee. Seeded: RMQ_POP_CRASH_SEED replays a run.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { ack, pop } from '../broker/pop-helpers.js';
import { rng } from '../store/helpers.js';
import { rawSend } from './helpers.js';

const repo = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(repo, 'dist', 'main.js');
const TOPIC = 'PopCrash';
const GROUP = 'PopCrashGroup';
const MESSAGES = 80;
const KILLS = 3;
const SEED = Number(process.env.RMQ_POP_CRASH_SEED ?? 20261201);
const INVISIBLE_MS = 2000;

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
    const r = spawnSync('npm', ['run', 'build'], { cwd: repo, stdio: 'pipe', encoding: 'utf8' });
    if (!fs.existsSync(MAIN)) throw new Error(`npm run build produced no dist/main.js:\n${r.stdout}\n${r.stderr}`);
  }
}, 300_000);

interface Running {
  child: ChildProcess;
  brokerAddr: string;
  exited: Promise<NodeJS.Signals | null>;
}

function startServer(storeDir: string): Promise<Running> {
  const child = spawn(process.execPath, [
    MAIN, 'start', `--storePathRootDir=${storeDir}`, '--listenPort=0', '--namesrvPort=0', '--brokerIP1=127.0.0.1',
    '--mappedFileSizeCommitLog=1048576', '--mappedFileSizeConsumeQueue=6000', '--reviveInterval=200', '--reviveMaxSlow=1',
    '--flushConsumerOffsetInterval=100',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, signal) => resolve(signal)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (c: Buffer) => {
      err = (err + c.toString()).slice(-10000);
    });
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /rocketmq-ts ready: namesrv \S+, broker (\S+) /.exec(out);
      if (m) resolve({ child, brokerAddr: m[1]!, exited });
    });
    void exited.then((s) => reject(new Error(`server exited (${s}) before ready:\n${err}`)));
  });
}

/** Waits until config/consumerOffset.json holds at least `ends` for the group's queues of the topic. */
async function waitForPersistedOffsets(ends: Map<number, number>, storeDir = currentStore): Promise<void> {
  const file = path.join(storeDir, 'config', 'consumerOffset.json');
  const deadline = Date.now() + 20_000;
  for (;;) {
    let table: Record<string, number> = {};
    try {
      table = (JSON.parse(fs.readFileSync(file, 'utf8').replace(/([{,])(\d+):/g, '$1"$2":')) as { offsetTable: Record<string, Record<string, number>> })
        .offsetTable[`${TOPIC}@${GROUP}`] ?? {};
    } catch {
      // not written yet
    }
    if ([...ends].every(([q, end]) => (table[String(q)] ?? -1) >= end)) return;
    if (Date.now() > deadline) throw new Error(`offsets ${JSON.stringify(table)} never persisted up to ${JSON.stringify([...ends])}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
let currentStore = '';

const idOf = (body: Buffer): string => body.toString().split('|')[0]!;
const bodyFor = (id: string): string => `${id}|${'x'.repeat(20 + (id.length * 7) % 50)}`;

describe('kill -9 between pop and ack', () => {
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-pop-crash-'));
  currentStore = storeDir;
  let client = new RemotingClient(silentLogger());
  let server: Running | undefined;
  afterAll(async () => {
    await client.close();
    if (server) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    fs.rmSync(storeDir, { recursive: true, force: true });
  });

  it(`re-delivers every acknowledged message, never loses one (seed ${SEED})`, async () => {
    const r = rng(SEED);
    server = await startServer(storeDir);
    const sent = new Set<string>();
    for (let i = 0; i < MESSAGES; i++) {
      const id = `m${i}`;
      const res = await rawSend(client, server.brokerAddr, TOPIC, i % 4, Buffer.from(bodyFor(id)), { KEYS: id });
      if (res.code === ResponseCode.SUCCESS) sent.add(id);
    }
    expect(sent.size).toBe(MESSAGES);

    const acked = new Set<string>();
    let deliveries = 0;
    let fromRetry = 0;
    let corrupt = 0;
    /** Highest popped offset + 1 per queue of the topic: what the group's persisted offsets must reach. */
    const poppedEnd = new Map<number, number>();
    const note = (m: { realTopic: string; record: { queueId: number; queueOffset: number } }) => {
      deliveries++;
      if (m.realTopic !== TOPIC) fromRetry++;
      else poppedEnd.set(m.record.queueId, Math.max(poppedEnd.get(m.record.queueId) ?? 0, m.record.queueOffset + 1));
    };
    const popOnce = async (ackShare: number): Promise<number> => {
      const got = await pop(client, server!.brokerAddr, GROUP, TOPIC, { maxMsgNums: 8, invisibleTime: INVISIBLE_MS, initMode: 0 });
      for (const m of got.messages) {
        note(m);
        const id = idOf(m.record.body);
        if (m.record.body.toString() !== bodyFor(id)) corrupt++;
        if (r() < ackShare && (await ack(client, server!.brokerAddr, GROUP, m)).code === ResponseCode.SUCCESS) acked.add(id);
      }
      return got.messages.length;
    };

    for (let kill = 0; kill < KILLS; kill++) {
      // a few pops, some acked, then a pop whose messages are never acked before the kill
      const rounds = 1 + Math.floor(r() * 3);
      for (let i = 0; i < rounds; i++) await popOnce(0.6);
      const inFlight = await pop(client, server.brokerAddr, GROUP, TOPIC, { maxMsgNums: 8, invisibleTime: INVISIBLE_MS, initMode: 0 });
      inFlight.messages.forEach(note);
      // kill only once the group's offsets on disk are past everything popped: what was not acked can then come
      // back only through its checkpoint (timer → revive → retry topic), not by popping the topic again
      await waitForPersistedOffsets(poppedEnd);
      server.child.kill('SIGKILL');
      expect(await server.exited).toBe('SIGKILL');
      await client.close();
      client = new RemotingClient(silentLogger());
      server = await startServer(storeDir);
    }

    // the checker: drain with acks until every sent message has been acked once (bounded by a deadline)
    const deadline = Date.now() + 90_000;
    while (acked.size < sent.size && Date.now() < deadline) {
      if ((await popOnce(1)) === 0) await new Promise((res) => setTimeout(res, 200));
    }
    const missing = [...sent].filter((id) => !acked.has(id));
    expect(corrupt).toBe(0);
    expect(fromRetry, 'deliveries through the retry topic (revive after a crash)').toBeGreaterThan(0);
    expect(missing, `never re-delivered after ${KILLS} kills (${deliveries} deliveries, ${fromRetry} from the retry topic)`).toEqual([]);
  }, 180_000);
});
