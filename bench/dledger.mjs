#!/usr/bin/env node
// The DLedger part of `npm run bench` (issue #14): a 3-member DLedger group of official brokers (5.3.3) and then one
// of ours, one after the other, same topology (compat/lib/dledger-group.mjs: our nameserver, three members of one
// group, every peer link through a TCP proxy; 1 GiB data files) — ratios ours / official:
//   send        sync sends of 1 KiB from 16 threads through the leader with the stock Java 4.9.8 load driver
//               (compat/bench, as bench/ha.mjs), after a warm-up: msg/s and p99
//   catch-up    one follower killed, a backlog of BENCH_DLEDGER_BACKLOG_MIB (256; quick 32) written through the leader
//               in 64 KiB messages, the follower started again: MiB/s from when its committed position first moves
//               until it equals the leader's
//   failover    a stock ali-ons producer sending one message at a time and retrying (compat/lib/dledger-sender.mjs,
//               route polled every second), kill -9 of the leader: time until another member is master in the
//               nameserver's route, and until the first SEND_OK of a send begun after the kill
//
//   node bench/dledger.mjs [--quick] [--only=ours|official] [--keep]
// Env: BENCH_SECONDS (5; quick 2), BENCH_RUNS (3; quick 1), BENCH_WARMUP (30; quick 1), BENCH_DLEDGER_OFFICIAL_VERSION
//      (5.3.3), BENCH_DLEDGER_BACKLOG_MIB, BENCH_OFFICIAL_HEAP (per broker, 1g).
// Results: bench/results/dledger-<date>.json and a table on stdout. Run `npm run build` first (npm run bench does).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DLedgerGroup, IDS } from '../compat/lib/dledger-group.mjs';
import { startSender } from '../compat/lib/dledger-sender.mjs';
import { sleep, waitFor } from '../compat/lib/ha-tools.mjs';
import { children, killTree, stopAllServers } from '../compat/lib/servers.mjs';
import { guardProcess } from '../compat/lib/script-args.mjs';
import { REAL_JAVA, classpath, driver, groupBenchArgs, median } from './java-driver.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const { flag, opt, quick: QUICK, num, common } = groupBenchArgs();
const env = process.env;
const CFG = {
  ...common,
  officialVersion: env.BENCH_DLEDGER_OFFICIAL_VERSION || '5.3.3',
  backlogMiB: num(env.BENCH_DLEDGER_BACKLOG_MIB, QUICK ? 32 : 256),
};
const FILE_BYTES = 1073741824;
const TOPIC = 'BenchDLedger';
/** Bounds a group that does not come up or recover (official JVMs start slowly on a loaded box). */
const TIMEOUT_MS = 240_000;
const log = (m) => process.stderr.write(`[bench-dledger ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

/** The official members start through bench/official-java (heap set like bench/ha.mjs); ours ignore these. */
function officialJvmEnv() {
  env.PATH = `${path.join(HERE, 'official-java')}:${env.PATH}`;
  env.BENCH_REAL_JAVA = REAL_JAVA;
  env.BENCH_BROKER_JVM = `-Xms${CFG.heap} -Xmx${CFG.heap} -XX:MaxDirectMemorySize=${CFG.heap}`;
}

async function leaderId(g) {
  return g.idOf(await g.masterAddr());
}

/** Every member at the leader's committed position (and a master in the route). */
async function settled(g, what) {
  await waitFor(async () => {
    const id = await leaderId(g);
    if (!id) return false;
    const pos = await Promise.all(IDS.map((m) => g.committedPos(m)));
    return pos.every((p) => p === pos[0]);
  }, TIMEOUT_MS, what, 200);
}

async function benchGroup(kind, cp, work) {
  const dir = fs.mkdtempSync(path.join(work, `${kind}-`));
  const g = new DLedgerGroup(dir, dir, { kinds: [kind, kind, kind], fileBytes: FILE_BYTES });
  const r = {};
  try {
    const t0 = Date.now();
    await g.start();
    await waitFor(async () => {
      const addrs = Object.values(await g.route());
      return (await g.masterAddr()) !== null && IDS.every((id) => addrs.includes(g.addr(id)));
    }, TIMEOUT_MS, 'a master and two slaves in the nameserver');
    await g.createTopic(TOPIC, 16, TIMEOUT_MS);
    await waitFor(async () => (await g.remote.route(g.nsAddr, TOPIC)) !== null, TIMEOUT_MS, `a route for ${TOPIC}`);
    r.upMs = Date.now() - t0;
    log(`  ${kind}: group up in ${r.upMs} ms, leader ${await leaderId(g)}; sync sends, 1 KiB, 16 threads`);
    const d = driver(cp, work, ['--mode', 'send', '--namesrv', g.nsAddr, '--topic', TOPIC, '--send', 'sync', '--threads', '16', '--size', '1024',
      '--warmup', String(CFG.warmup), '--seconds', String(CFG.seconds), '--runs', String(CFG.runs)], { log });
    r.runs = await d.done;
    if (!r.runs.length) throw new Error(`${kind}: the driver finished no run`);
    r.catchUp = await catchUpRun(g, kind, cp, work);
    r.failover = await failoverRun(g, kind);
    return r;
  } finally {
    await g.stop();
  }
}

async function catchUpRun(g, kind, cp, work) {
  await settled(g, 'every member at the committed position before the catch-up');
  const leader = await leaderId(g);
  const follower = IDS.find((id) => id !== leader);
  await g.kill(follower);
  const start = await g.committedPos(leader);
  const target = start + CFG.backlogMiB * 1024 * 1024;
  log(`  ${kind}: follower ${follower} down, writing ${CFG.backlogMiB} MiB through leader ${leader}`);
  const d = driver(cp, work, ['--mode', 'send', '--namesrv', g.nsAddr, '--topic', TOPIC, '--send', 'sync', '--threads', '16', '--size', '65536',
    '--warmup', '0', '--seconds', '600', '--runs', '1'], { log });
  await waitFor(async () => (await g.committedPos(leader)) >= target, 900_000, 'the backlog', 500);
  killTree(d.proc, 'SIGKILL');
  await d.done;
  // the leader's position once the driver's last sends are in (two equal reads 500 ms apart)
  let end = -1;
  await waitFor(async () => {
    const now = await g.committedPos(leader);
    const same = now === end;
    end = now;
    return same;
  }, 60_000, 'the leader to settle', 500);
  const from = Date.now();
  await g.restart(follower);
  const startedMs = Date.now() - from;
  // The transfer starts when the follower's committed position first moves (its start and joining excluded).
  const at = await g.committedPos(follower);
  let movedAt = 0;
  await waitFor(async () => {
    const now = await g.committedPos(follower);
    if (!movedAt && now > at) movedAt = Date.now();
    return now >= end;
  }, 900_000, 'the follower to catch up', 100);
  const doneAt = Date.now();
  const bytes = end - at;
  const seconds = (doneAt - (movedAt || from)) / 1000;
  log(`  ${kind}: ${(bytes / 2 ** 20).toFixed(0)} MiB caught up in ${seconds.toFixed(1)} s once moving (` +
    `follower started in ${startedMs} ms, moving ${movedAt ? movedAt - from - startedMs : '-'} ms later)`);
  return { follower, bytes, seconds, mbps: bytes / 2 ** 20 / seconds, followerStartMs: startedMs, totalSeconds: (doneAt - from) / 1000 };
}

async function failoverRun(g, kind) {
  await settled(g, 'every member at the committed position before the failover');
  const sender = startSender(g.nsAddr, TOPIC, 'PG_bench_dledger', 'bdl');
  try {
    await waitFor(() => sender.acked.length >= 50, TIMEOUT_MS, 'the first 50 SEND_OKs');
    const master = await g.masterAddr();
    const leader = g.idOf(master);
    const t0 = Date.now();
    await g.kill(leader);
    const goneAt = Date.now(); // official.sh kill returns after the SIGKILL
    let newMasterMs = null;
    await waitFor(async () => {
      const m = await g.masterAddr().catch(() => null);
      if (m && m !== master) newMasterMs = Date.now() - t0;
      return newMasterMs !== null;
    }, TIMEOUT_MS, 'a new master in the route', 50);
    await waitFor(() => sender.acked.some((a) => a.sentAt > goneAt), TIMEOUT_MS, 'a SEND_OK after the kill', 50);
    const firstOkMs = sender.acked.find((a) => a.sentAt > goneAt).at - t0;
    const failedSends = sender.failedAt.filter((t) => t > t0).length;
    log(`  ${kind}: kill -9 of leader ${leader}: new master ${g.idOf(await g.masterAddr())} in the route after ${newMasterMs} ms, ` +
      `first SEND_OK after ${firstOkMs} ms (${failedSends} failed sends)`);
    return { killed: leader, newMasterMs, firstOkMs, failedSends };
  } finally {
    sender.sending = false;
    await sender.done.catch(() => undefined);
  }
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-dledger-'));
  guardProcess('bench-dledger'); // SIGINT and SIGTERM (npm run bench, timeout) stop every server and driver
  const cp = await classpath();
  officialJvmEnv();
  const only = opt('only');
  const kinds = only === 'ours' ? ['ours'] : only === 'official' ? [CFG.officialVersion] : [CFG.officialVersion, 'ours'];
  const out = { date: new Date().toISOString(), cfg: CFG, machine: { cpus: os.cpus().length, memGiB: +(os.totalmem() / 2 ** 30).toFixed(1), loadAvg: os.loadavg() }, results: {} };
  try {
    for (const kind of kinds) out.results[kind === 'ours' ? 'ours' : `official-${kind}`] = await benchGroup(kind, cp, work);
  } finally {
    await stopAllServers();
  }
  out.machine.loadAvgAfter = os.loadavg();
  const file = path.join(HERE, 'results', `dledger-${out.date.replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  printTable(out);
  if (!flag('keep')) fs.rmSync(work, { recursive: true, force: true });
  else log(`kept stores and logs in ${work}`);
  log(`results: ${path.relative(ROOT, file)}`);
  // exit rather than wait: a stock ali-ons producer whose close() did not finish keeps its timers going (bench/ha.mjs)
  process.exit(0);
}

function printTable(out) {
  const labels = Object.keys(out.results);
  const two = labels.length === 2;
  const row = (name, f) => `| ${name} | ${labels.map((l) => fmt(f(out.results[l]))).join(' | ')} |${two ? ` ${ratio(f, out, labels)} |` : ''}`;
  console.log(`| DLedger, 3 members | ${labels.join(' | ')} |${two ? ' ours/official |' : ''}`);
  console.log(`|---|${labels.map(() => '---').join('|')}|${two ? '---|' : ''}`);
  console.log(row('sync 1 KiB x16 via the leader, msg/s', (r) => median(r.runs.map((x) => x.throughput))));
  console.log(row('p99 ms', (r) => median(r.runs.map((x) => x.lat?.p99))));
  console.log(row(`follower catch-up of ${CFG.backlogMiB} MiB, MiB/s`, (r) => r.catchUp?.mbps));
  console.log(row('kill -9 of the leader: new master in the route, ms', (r) => r.failover?.newMasterMs));
  console.log(row('kill -9 of the leader: first SEND_OK (retrying sender), ms', (r) => r.failover?.firstOkMs));
}

function fmt(v) {
  if (v === undefined || v === null || Number.isNaN(v)) return '–';
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2);
}

function ratio(f, out, labels) {
  const [off, ours] = labels.map((l) => f(out.results[l]));
  return Number.isFinite(off) && Number.isFinite(ours) && off > 0 ? `${(ours / off).toFixed(2)}x` : '–';
}

main().catch(async (e) => {
  log(`error: ${e.stack ?? e}`);
  await stopAllServers();
  for (const c of children) killTree(c, 'SIGKILL');
  process.exit(1);
});
