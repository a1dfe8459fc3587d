// Hostile peers against the server-wide memory budget: slow readers (they send thousands of pulls and never read)
// and stalled frames (a 16 MiB frame minus its last byte), while a normal ali-ons producer and consumer keep
// working. The real server runs as a child with remotingBufferBudgetBytes = 64 MiB; its RSS, sampled throughout,
// must stay within the baseline (measured under the normal traffic) plus the budget plus a margin for the heap's
// breathing room, and every message the normal producer got acknowledged must reach the normal consumer.
import { Message } from 'ali-ons';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestCode } from '../../src/common/request-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { encodeFrame } from '../../src/remoting/header-codec.js';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { type ChildServer, MAIN, ensureDist, rssBytes, startChildServer } from '../helpers/child-server.js';
import { type TestServer, createTopic, waitFor } from '../helpers/server.js';
import { rawSend } from './helpers.js';

const MiB = 1024 * 1024;
const BUDGET = 64 * MiB;
/**
 * Room for what the budget does not count: the pooled pieces of large frames (16 MiB), the heap holding thousands
 * of parked pull requests, GC slack and allocator fragmentation. The unbounded server (main before issue #16)
 * peaked at 462 MiB over a 106 MiB baseline in this test (+356), and its normal producer got 1 message through.
 * 128 MiB sufficed while the normal producer got 1,700-6,200 messages through during the attack (peaks 256-278
 * over 130-141); with the send and pull paths of 2026-12-02 it gets 21,000-42,000 through, and the garbage of that
 * traffic raised the peaks to 294-371 over 131-134 (+160..+240; the budget's own closes unchanged), so 192 MiB:
 * the bound (+256) still fails the unbounded server by 100 MiB.
 */
const MARGIN = 192 * MiB;
const SLOW_READERS = Number(process.env.RMQ_MEM_SLOW ?? 6);
const PULLS_PER_READER = 3000;
const STALLED_FRAMES = Number(process.env.RMQ_MEM_STALLED ?? 8);
const ATTACK_MS = 12_000;
const BACKLOG_TOPIC = 'MemBacklog';
const LIVE_TOPIC = 'MemLive';
const QUEUES = 8;
// RMQ_MEMORY_MAIN=<other checkout>/dist/main.js runs the same attack against another build.
const main = process.env.RMQ_MEMORY_MAIN ?? MAIN;

let server: ChildServer;
let storeDir: string;

beforeAll(async () => {
  if (!process.env.RMQ_MEMORY_MAIN) ensureDist();
  storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-memory-'));
  server = await startChildServer([
    `--storePathRootDir=${storeDir}`, `--remotingBufferBudgetBytes=${BUDGET}`, '--writeBufferHighWaterMark=1048576',
    '--mappedFileSizeCommitLog=67108864', `--commitLogTailCacheBytes=${8 * MiB}`,
  ], main);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  if (storeDir) fs.rmSync(storeDir, { recursive: true, force: true });
});

/** A backlog to pull: `count` 1 KiB messages over the topic's queues. */
async function fillBacklog(count: number): Promise<void> {
  const client = new RemotingClient(silentLogger());
  try {
    const body = Buffer.alloc(1024, 0x61);
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < count) {
        const i = next++;
        const res = await rawSend(client, server.brokerAddr, BACKLOG_TOPIC, i % QUEUES, body);
        if (res.code !== 0) throw new Error(`backlog send: ${res.code} ${res.remark}`);
      }
    }));
  } finally {
    await client.close();
  }
}

function pullFrame(queueId: number, queueOffset: number): Buffer {
  return Buffer.concat(encodeFrame(createRequest(RequestCode.PULL_MESSAGE, {
    consumerGroup: 'G_slow_reader', topic: BACKLOG_TOPIC, queueId: String(queueId), queueOffset: String(queueOffset),
    maxMsgNums: '32', sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0',
    expressionType: 'TAG',
  })));
}

function connect(addr: string): Promise<net.Socket> {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const s = net.connect(port, host, () => resolve(s));
    s.on('error', reject);
  });
}

/** Sends thousands of pulls and never reads an answer. */
async function slowReader(k: number, perQueue: number): Promise<net.Socket> {
  const s = await connect(server.brokerAddr);
  s.on('error', () => undefined);
  s.pause();
  const frames: Buffer[] = [];
  for (let i = 0; i < PULLS_PER_READER; i++) frames.push(pullFrame(i % QUEUES, ((k * 997 + i) * 32) % Math.max(1, perQueue - 32)));
  s.write(Buffer.concat(frames));
  return s;
}

/** Opens a 16 MiB frame, sends all but its last byte, and stalls. Resolves when the server closes it. */
async function stalledFrame(): Promise<void> {
  const s = await connect(server.brokerAddr);
  const total = 16 * MiB - 4;
  const head = Buffer.alloc(8);
  head.writeInt32BE(total, 0);
  head.writeInt32BE(4, 4); // JSON header of 4 bytes would follow: never completed
  const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
  s.on('error', () => undefined);
  s.write(head);
  const chunk = Buffer.alloc(MiB, 0x20);
  const frameBytes = total + 4;
  let sent = head.length;
  while (sent < frameBytes - 1 && !s.destroyed) {
    const n = Math.min(chunk.length, frameBytes - 1 - sent);
    if (!s.write(chunk.subarray(0, n))) await new Promise((r) => s.once('drain', r).once('close', r));
    sent += n;
  }
  await closed;
}

describe('the remoting memory budget', () => {
  it('keeps RSS within baseline + budget under slow readers and stalled frames; normal traffic goes on', async () => {
    const perQueue = 2500;
    await createTopic({ brokerAddr: server.brokerAddr, namesrvAddr: server.namesrvAddr } as TestServer, BACKLOG_TOPIC, QUEUES);
    await createTopic({ brokerAddr: server.brokerAddr, namesrvAddr: server.namesrvAddr } as TestServer, LIVE_TOPIC, 4);
    await fillBacklog(perQueue * QUEUES);

    // Normal traffic: one ali-ons producer sending all along, one consumer group receiving.
    const producer = onsProducer(server.namesrvAddr, 'PG_mem_live');
    const consumer = onsConsumer(server.namesrvAddr, 'GID_mem_live');
    const received = new Set<string>();
    consumer.subscribe(LIVE_TOPIC, '*', async (msg) => {
      received.add(msg.body.toString());
    });
    await producer.ready();
    await consumer.ready();
    const acked: string[] = [];
    let producing = true;
    let seq = 0;
    const produceLoop = (async () => {
      while (producing) {
        const body = `live-${seq++}-${'x'.repeat(500)}`;
        try {
          const r = await producer.send(new Message(LIVE_TOPIC, 't', body));
          if (r.sendStatus === 'SEND_OK') acked.push(body);
        } catch {
          // counted below: every acknowledged message must arrive; failures are reported
        }
      }
    })();

    // Baseline: RSS under the normal traffic alone, after it has run a while.
    await waitFor(() => received.size >= 200, 60_000, 'normal traffic to flow');
    let baseline = 0;
    for (let i = 0; i < 15; i++) {
      baseline = Math.max(baseline, rssBytes(server.pid));
      await new Promise((r) => setTimeout(r, 200));
    }

    // The attack.
    const slow = await Promise.all(Array.from({ length: SLOW_READERS }, (_, k) => slowReader(k, perQueue)));
    const stalledClosed = { count: 0 };
    const stallers = Array.from({ length: STALLED_FRAMES }, async () => {
      await stalledFrame().catch(() => undefined);
      stalledClosed.count++;
    });
    let peak = 0;
    const ackedBeforeAttack = acked.length;
    const attackEnd = Date.now() + ATTACK_MS;
    while (Date.now() < attackEnd) {
      peak = Math.max(peak, rssBytes(server.pid));
      await new Promise((r) => setTimeout(r, 100));
    }
    const ackedDuringAttack = acked.length - ackedBeforeAttack;
    for (const s of slow) s.destroy();
    producing = false;
    await produceLoop;
    // The stalled frames still open are closed by their read deadline (60 s) or when the server stops.

    // Every acknowledged live message reaches the consumer.
    await waitFor(() => acked.every((b) => received.has(b)), 60_000, `the live messages (${received.size} of ${acked.length})`);
    await consumer.close();
    await producer.close();

    const report = {
      baselineMiB: Math.round(baseline / MiB), peakMiB: Math.round(peak / MiB), budgetMiB: BUDGET / MiB,
      marginMiB: MARGIN / MiB, ackedDuringAttack, stalledFramesClosed: stalledClosed.count,
      budgetCloses: server.logged('remoting buffer budget spent').length,
    };
    console.log('memory budget:', JSON.stringify(report));
    expect(ackedDuringAttack).toBeGreaterThan(0);
    expect(stalledClosed.count).toBeGreaterThan(0);
    expect(peak, JSON.stringify(report)).toBeLessThanOrEqual(baseline + BUDGET + MARGIN);
  }, 300_000);
});
