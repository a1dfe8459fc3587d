// The soak: the real server as a child under mixed traffic for a long time — sends (single and batch) at a target
// rate, consumers pulling every queue with long polling and committing, a share of messages sent back for retry
// and consumed again from %RETRY%, admin calls to broker and nameserver, heartbeats, and connections closed and
// reopened — with retention deleting commit-log files as they age. Every few seconds: the server's RSS and open
// descriptors, send latency percentiles, throughput, consumer lag. Written as JSON and plotted as a PNG next to it;
// growth of RSS, descriptors or latency between the first and the last third (after a warm-up) fails.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RequestCode } from '../../src/common/request-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { createRequest, type RemotingCommand } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type ChildServer, ensureDist, openFds, rssBytes, startChildServer } from '../helpers/child-server.js';
import { type TestServer, createTopic } from '../helpers/server.js';
import { decodeWithAliOns, propertiesString } from '../durability/helpers.js';
import { lineChart } from './png.js';

export interface SoakOptions {
  minutes: number;
  /** Target messages per second (batch messages count one each). */
  rate: number;
  sampleEveryMs: number;
  warmupMs: number;
  outDir: string;
  /** Another build's dist/main.js (RMQ_SOAK_MAIN), for comparisons. */
  main?: string;
  /** More `--key=value` settings for the server. */
  serverArgs?: string[];
}

export interface SoakSample {
  t: number;
  rssMiB: number;
  fds: number;
  sendP50Ms: number;
  sendP99Ms: number;
  sentPerSec: number;
  consumedPerSec: number;
  lag: number;
  retried: number;
  errors: number;
  /**
   * The 1-minute load average less the cores this soak itself used in the window (server + driver): how much of the
   * machine other processes took. Latency follows it, so send p99 growth counts only while it stayed level.
   */
  otherLoad: number;
}

export interface SoakResult {
  options: SoakOptions;
  samples: SoakSample[];
  totals: {
    acked: number; consumed: number; skippedByRetention: number; retriedBack: number; retryConsumed: number; sendErrors: number;
    adminCalls: number; reconnects: number;
  };
  growth: { rssMiB: [number, number]; fds: [number, number]; sendP99Ms: [number, number] };
  problems: string[];
  jsonFile: string;
  pngFile: string;
}

const MiB = 1024 * 1024;

/** CPU time (user + system) a process used so far, from /proc/<pid>/stat; 0 where that is not readable. */
function processCpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in USER_HZ (100 on Linux)
  } catch {
    return 0;
  }
}
const TOPIC = 'SoakTopic';
const QUEUES = 8;
const GROUP = 'SoakGroup';
const RETRY_TOPIC = `%RETRY%${GROUP}`;
const PULL_FLAGS = 1 | 2 | 4; // commit offset, suspend, subscription

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]!;
};
const percentile = (sorted: number[], p: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!);

function sendRequest(topic: string, queueId: number, bodies: Buffer[], keys: string): RemotingCommand {
  const fields = { a: 'SoakProducer', b: topic, c: 'TBW102', d: '8', e: String(queueId), f: '0', g: String(Date.now()), h: '0', i: propertiesString({ KEYS: keys, TAGS: 'soak' }), j: '0', k: 'false', m: bodies.length > 1 ? 'true' : 'false' };
  if (bodies.length === 1) return createRequest(RequestCode.SEND_MESSAGE_V2, fields, bodies[0]);
  // MessageDecoder.encodeMessages: one record per inner message.
  const parts = bodies.map((b) => {
    const props = Buffer.from(propertiesString({ KEYS: keys }));
    const total = 20 + b.length + 2 + props.length;
    const m = Buffer.alloc(total);
    m.writeInt32BE(total, 0);
    m.writeInt32BE(b.length, 16);
    b.copy(m, 20);
    m.writeInt16BE(props.length, 20 + b.length);
    props.copy(m, 22 + b.length);
    return m;
  });
  return createRequest(RequestCode.SEND_BATCH_MESSAGE, fields, Buffer.concat(parts));
}

function pullRequest(topic: string, queueId: number, offset: number, commitOffset: number): RemotingCommand {
  return createRequest(RequestCode.PULL_MESSAGE, {
    consumerGroup: GROUP, topic, queueId: String(queueId), queueOffset: String(offset), maxMsgNums: '32', sysFlag: String(PULL_FLAGS),
    commitOffset: String(commitOffset), suspendTimeoutMillis: '1000', subscription: '*', subVersion: '0', expressionType: 'TAG',
  });
}

function heartbeat(clientId: string): RemotingCommand {
  const body = JSON.stringify({
    clientID: clientId,
    consumerDataSet: [{
      groupName: GROUP, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', unitMode: false,
      subscriptionDataSet: [TOPIC, RETRY_TOPIC].map((topic) => ({ topic, subString: '*', tagsSet: [], codeSet: [], subVersion: Date.now(), expressionType: 'TAG' })),
    }],
    producerDataSet: [{ groupName: 'SoakProducer' }],
  });
  return createRequest(RequestCode.HEART_BEAT, {}, Buffer.from(body));
}

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  if (!opts.main) ensureDist();
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-soak-'));
  // Retention runs all along: 64 MiB files, none kept once older than the newest (fileReservedTime=0), and the
  // disk counted as "over" from 10 % used, so clean-up deletes as the log grows.
  const server: ChildServer = await startChildServer([
    `--storePathRootDir=${storeDir}`, '--mappedFileSizeCommitLog=67108864', '--fileReservedTime=0', '--diskMaxUsedSpaceRatio=10',
    '--cleanResourceInterval=5000', ...(opts.serverArgs ?? []),
  ], opts.main);
  const samples: SoakSample[] = [];
  const problems: string[] = [];
  const totals = { acked: 0, consumed: 0, skippedByRetention: 0, retriedBack: 0, retryConsumed: 0, sendErrors: 0, adminCalls: 0, reconnects: 0 };
  let stopping = false;
  let latencies: number[] = [];
  let windowSent = 0;
  let windowConsumed = 0;
  let windowErrors = 0;
  const clients: RemotingClient[] = [];
  const newClient = () => {
    const c = new RemotingClient(silentLogger());
    clients.push(c);
    return c;
  };
  try {
    const ts = { brokerAddr: server.brokerAddr, namesrvAddr: server.namesrvAddr } as TestServer;
    await createTopic(ts, TOPIC, QUEUES);
    const broker = server.brokerAddr;

    // Producers: a token bucket at `rate`, at most 512 sends in flight; 1 in 10 sends is a batch of 10.
    const producers = [newClient(), newClient(), newClient(), newClient()];
    /** Highest acknowledged queue offset per queue (from the SEND answers). */
    const ackedUpTo = Array.from({ length: QUEUES }, () => -1);
    let inFlight = 0;
    let seq = 0;
    const body = Buffer.alloc(700, 0x73);
    const produce = async () => {
      const started = performance.now();
      let issued = 0;
      while (!stopping) {
        const due = Math.floor(((performance.now() - started) / 1000) * opts.rate) - issued;
        if (due <= 0 || inFlight >= 512) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const batch = seq % 10 === 9 ? 10 : 1;
        issued += batch;
        const n = seq++;
        const client = producers[n % producers.length]!;
        inFlight++;
        const t0 = performance.now();
        const queueId = n % QUEUES;
        client.request(broker, sendRequest(TOPIC, queueId, Array.from({ length: batch }, () => body), `k${n}`), 10_000).then((res) => {
          if (res.code === 0) {
            totals.acked += batch;
            const last = Number(res.extFields.queueOffset) + batch - 1;
            if (last > ackedUpTo[queueId]!) ackedUpTo[queueId] = last;
            windowSent += batch;
            latencies.push(performance.now() - t0);
          } else {
            totals.sendErrors++;
            windowErrors++;
          }
        }, () => {
          totals.sendErrors++;
          windowErrors++;
        }).finally(() => {
          inFlight--;
        });
      }
    };

    // Consumers: each queue pulled in a loop (long polling), offsets committed with the next pull; 1 in 100
    // messages is sent back for retry and consumed again from %RETRY%.
    // Every answer on the main topic is checked: its records are the queue offsets [offset, nextBeginOffset) in order,
    // each with the body that was sent (a record changed after it was stored, or one skipped, is a problem at once).
    const checkAnswer = (queueId: number, offset: number, nextBegin: number, msgs: ReturnType<typeof decodeWithAliOns>) => {
      const bad = msgs.findIndex((m, i) => m.queueOffset !== offset + i || m.queueId !== queueId || !m.body.equals(body));
      if (bad < 0 && msgs.length === nextBegin - offset) return;
      const m = msgs[bad < 0 ? msgs.length - 1 : bad];
      if (problems.length < 20) {
        problems.push(`queue ${queueId}: pull at ${offset} answered ${msgs.length} records, nextBeginOffset ${nextBegin}` +
          (m ? `; record ${bad < 0 ? msgs.length - 1 : bad} has queue ${m.queueId} offset ${m.queueOffset}, body ${m.body.length} bytes${m.body.equals(body) ? '' : ' (not the sent body)'}` : ''));
      }
    };
    const consumerClients = [newClient(), newClient()];
    const next = new Map<string, number>();
    const consume = async (topic: string, queueId: number, client: RemotingClient) => {
      const key = `${topic}:${queueId}`;
      next.set(key, 0);
      // After the stop a consumer goes on while sends are still unanswered: a stored message can be consumed
      // before its SEND answer arrives, so "consumed = acknowledged" alone can hold for a moment with more to come.
      while (!stopping || (topic === TOPIC && (inFlight > 0 || totals.consumed + totals.skippedByRetention < totals.acked))) {
        const offset = next.get(key)!;
        let res: RemotingCommand;
        try {
          res = await client.request(broker, pullRequest(topic, queueId, offset, offset), 10_000);
        } catch {
          if (stopping) return;
          continue;
        }
        const nextBegin = Number(res.extFields.nextBeginOffset);
        if (res.code === 0 && res.body) {
          const msgs = decodeWithAliOns(res.body);
          if (topic === TOPIC) {
            checkAnswer(queueId, offset, nextBegin, msgs);
            totals.consumed += msgs.length;
            windowConsumed += msgs.length;
          } else {
            totals.retryConsumed += msgs.length;
          }
          for (const m of msgs) {
            if (topic !== TOPIC || m.queueOffset % 100 !== 7) continue;
            totals.retriedBack++;
            void client.request(broker, createRequest(RequestCode.CONSUMER_SEND_MSG_BACK, {
              offset: String(m.commitLogOffset), group: GROUP, delayLevel: '1', originMsgId: m.msgId, originTopic: topic, maxReconsumeTimes: '16',
            }), 10_000).catch(() => undefined);
          }
        }
        // Retention deleted what this consumer had not read yet (PULL_OFFSET_MOVED): counted, not lost.
        if (res.code === 21 && Number.isFinite(nextBegin) && nextBegin > offset) totals.skippedByRetention += nextBegin - offset;
        if (Number.isFinite(nextBegin)) next.set(key, nextBegin);
        if (stopping && topic !== TOPIC) return;
      }
    };

    // Heartbeats, admin calls, reconnects.
    const periodic = async () => {
      let tick = 0;
      while (!stopping) {
        await new Promise((r) => setTimeout(r, 1000));
        tick++;
        const admin = newClient();
        try {
          if (tick % 5 === 1) for (const [i, c] of consumerClients.entries()) await c.request(broker, heartbeat(`soak@${i}`), 10_000);
          const calls = [
            () => admin.request(broker, createRequest(RequestCode.GET_TOPIC_STATS_INFO, { topic: TOPIC }), 10_000),
            () => admin.request(broker, createRequest(RequestCode.GET_CONSUME_STATS, { consumerGroup: GROUP, topic: TOPIC }), 10_000),
            () => admin.request(broker, createRequest(RequestCode.GET_BROKER_RUNTIME_INFO), 10_000),
            () => admin.request(server.namesrvAddr, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: TOPIC }), 10_000),
            () => admin.request(broker, createRequest(RequestCode.QUERY_MESSAGE, { topic: TOPIC, key: `k${Math.max(0, seq - 50)}`, maxNum: '4', beginTimestamp: '0', endTimestamp: String(Date.now()) }), 10_000),
            () => admin.request(broker, createRequest(RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: GROUP }), 10_000),
          ];
          await calls[tick % calls.length]!();
          totals.adminCalls++;
        } catch (err) {
          if (!stopping) problems.push(`admin call failed: ${(err as Error).message}`);
        } finally {
          // A new connection per admin call, closed right after: the connect/close churn of short-lived tools.
          await admin.close();
          clients.splice(clients.indexOf(admin), 1);
        }
        if (tick % 15 === 0) {
          // A producer reconnects (its connection closed under in-flight sends, as when a client restarts).
          const i = tick % producers.length;
          const old = producers[i]!;
          producers[i] = newClient();
          totals.reconnects++;
          setTimeout(() => void old.close(), 2000);
        }
      }
    };

    const workers = [
      produce(),
      ...Array.from({ length: QUEUES }, (_, q) => consume(TOPIC, q, consumerClients[q % 2]!)),
      consume(RETRY_TOPIC, 0, consumerClients[0]!),
      periodic(),
    ];

    // Samples.
    const start = performance.now();
    const endAt = start + opts.minutes * 60_000;
    let lastSampleAt = start;
    let lastServerCpuMs = processCpuMs(server.pid);
    let lastDriverCpu = process.cpuUsage();
    while (performance.now() < endAt && server.child.exitCode === null) {
      await new Promise((r) => setTimeout(r, opts.sampleEveryMs));
      const now = performance.now();
      const secs = (now - lastSampleAt) / 1000;
      lastSampleAt = now;
      const sorted = latencies.sort((a, b) => a - b);
      const serverCpuMs = processCpuMs(server.pid);
      const driverCpu = process.cpuUsage(lastDriverCpu);
      const ownCores = (serverCpuMs - lastServerCpuMs + (driverCpu.user + driverCpu.system) / 1000) / (secs * 1000);
      lastServerCpuMs = serverCpuMs;
      lastDriverCpu = process.cpuUsage();
      samples.push({
        t: Math.round((now - start) / 1000),
        rssMiB: Math.round((rssBytes(server.pid) / MiB) * 10) / 10,
        fds: openFds(server.pid),
        sendP50Ms: Math.round(percentile(sorted, 0.5) * 100) / 100,
        sendP99Ms: Math.round(percentile(sorted, 0.99) * 100) / 100,
        sentPerSec: Math.round(windowSent / secs),
        consumedPerSec: Math.round(windowConsumed / secs),
        lag: totals.acked - totals.consumed,
        retried: totals.retriedBack,
        errors: windowErrors,
        otherLoad: Math.round(Math.max(0, os.loadavg()[0]! - ownCores) * 100) / 100,
      });
      latencies = [];
      windowSent = 0;
      windowConsumed = 0;
      windowErrors = 0;
    }
    if (server.child.exitCode !== null) problems.push(`the server exited (${server.child.exitCode ?? server.child.signalCode})`);
    stopping = true;
    // The consumers catch up with everything acknowledged. Bounded by progress, not by a fixed time: on a loaded
    // machine the lag at the end can take minutes to drain (a fixed 60 s left 67 of 240,502 unread at load ~6);
    // 30 s without a single message consumed is a stuck consumer, a problem rather than a hang.
    const allDone = Promise.all(workers).then(() => true);
    for (let seen = -1; totals.consumed + totals.skippedByRetention !== seen;) {
      seen = totals.consumed + totals.skippedByRetention;
      if (await Promise.race([allDone, new Promise<false>((r) => setTimeout(() => r(false), 30_000))])) break;
    }
    if (totals.consumed + totals.skippedByRetention < totals.acked) {
      problems.push(`consumed ${totals.consumed} (+${totals.skippedByRetention} deleted by retention first) of ${totals.acked} acknowledged messages`);
      for (let q = 0; q < QUEUES; q++) {
        const at = next.get(`${TOPIC}:${q}`) ?? 0;
        if (at <= ackedUpTo[q]!) problems.push(`queue ${q}: consumed up to ${at}, acknowledged up to ${ackedUpTo[q]! + 1}`);
      }
    }
  } finally {
    stopping = true;
    for (const c of clients) await c.close();
    await server.stop();
    fs.rmSync(storeDir, { recursive: true, force: true });
  }

  // Growth: the first and the last third of the samples after the warm-up, medians.
  const steady = samples.filter((s) => s.t * 1000 >= opts.warmupMs);
  const third = Math.max(1, Math.floor(steady.length / 3));
  const first = steady.slice(0, third);
  const last = steady.slice(-third);
  const growth = {
    rssMiB: [median(first.map((s) => s.rssMiB)), median(last.map((s) => s.rssMiB))] as [number, number],
    fds: [median(first.map((s) => s.fds)), median(last.map((s) => s.fds))] as [number, number],
    sendP99Ms: [median(first.map((s) => s.sendP99Ms)), median(last.map((s) => s.sendP99Ms))] as [number, number],
  };
  if (growth.rssMiB[1] > growth.rssMiB[0] + Math.max(48, growth.rssMiB[0] * 0.3)) problems.push(`RSS grew: ${growth.rssMiB[0]} → ${growth.rssMiB[1]} MiB`);
  if (growth.fds[1] > growth.fds[0] + 8) problems.push(`open descriptors grew: ${growth.fds[0]} → ${growth.fds[1]}`);
  const otherLoad = [median(first.map((s) => s.otherLoad)), median(last.map((s) => s.otherLoad))];
  if (growth.sendP99Ms[1] > Math.max(3 * growth.sendP99Ms[0], growth.sendP99Ms[0] + 50)) {
    const why = `send p99 grew: ${growth.sendP99Ms[0]} → ${growth.sendP99Ms[1]} ms (load from other processes ${otherLoad[0]} → ${otherLoad[1]})`;
    // Another process taking a core in the last third slows every send; that is the machine, not a leak.
    if (otherLoad[1]! > otherLoad[0]! + 0.75) console.log(`soak: not counted, the machine got busier: ${why}`);
    else problems.push(why);
  }

  fs.mkdirSync(opts.outDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const jsonFile = path.join(opts.outDir, `soak-${stamp}.json`);
  const pngFile = path.join(opts.outDir, `soak-${stamp}.png`);
  const result: SoakResult = { options: opts, samples, totals, growth, problems, jsonFile, pngFile };
  fs.writeFileSync(jsonFile, `${JSON.stringify(result, null, 2)}\n`);
  fs.writeFileSync(pngFile, lineChart(`SOAK ${opts.minutes} MIN AT ${opts.rate} MSG/S`, [
    { title: 'RSS MIB', points: samples.map((s) => [s.t, s.rssMiB]), color: [200, 40, 40] },
    { title: 'OPEN FDS', points: samples.map((s) => [s.t, s.fds]), color: [40, 140, 40] },
    { title: 'SEND P99 MS', points: samples.map((s) => [s.t, s.sendP99Ms]), color: [20, 90, 200] },
    { title: 'SENT MSG/S', points: samples.map((s) => [s.t, s.sentPerSec]), color: [120, 60, 160] },
    { title: 'CONSUMER LAG MSGS', points: samples.map((s) => [s.t, s.lag]), color: [180, 120, 20] },
  ]));
  return result;
}
