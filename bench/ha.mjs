#!/usr/bin/env node
// The master/slave part of `npm run bench` (issue #13): the official broker's group and ours, one after the other,
// same topology (a nameserver, a master, a slave; 1 GiB commit-log files), same stock Java 4.9.8 load driver
// (compat/bench) — ratios ours / official:
//   sync / async   SYNC_MASTER (inSyncReplicas=2: every send waits for the slave) and ASYNC_MASTER sync sends of
//                  1 KiB from 16 threads: msg/s and p99; the replication lag (master end − slave end, bytes)
//                  sampled every 100 ms during the ASYNC runs
//   catch-up       the slave stopped, a backlog of BENCH_HA_BACKLOG_MIB (1024; quick 256) written to the master in
//                  64 KiB messages, the slave started again: MB/s until it holds everything
//   failover       a push consumer (ali-ons) reading a backlog, kill -9 of the master: time until a message comes
//                  from the slave (compat/lib/ha-failover.mjs consumerFailover, quick) — with --failover only
//
//   node bench/ha.mjs [--quick] [--only=ours|official] [--failover] [--keep]
// Env: BENCH_SECONDS (5; quick 2), BENCH_RUNS (3; quick 1), BENCH_WARMUP (30; quick 1), BENCH_OFFICIAL_VERSION
//      (4.9.8), BENCH_HA_BACKLOG_MIB, BENCH_OFFICIAL_HEAP (per broker, 1g).
// Results: bench/results/ha-<date>.json and a table on stdout. Run `npm run build` first (npm run bench does).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Group } from '../compat/lib/ha-group.mjs';
import { Remote, maxOf, rng, sleep, waitFor } from '../compat/lib/ha-tools.mjs';
import { consumerFailover } from '../compat/lib/ha-failover.mjs';
import { children, killTree, stopAllServers } from '../compat/lib/servers.mjs';
import { guardProcess } from '../compat/lib/script-args.mjs';
import { REAL_JAVA, classpath, driver, groupBenchArgs, median } from './java-driver.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const { flag, opt, quick: QUICK, num, common } = groupBenchArgs();
const env = process.env;
const CFG = {
  ...common,
  officialVersion: env.BENCH_OFFICIAL_VERSION || '4.9.8',
  backlogMiB: num(env.BENCH_HA_BACKLOG_MIB, QUICK ? 256 : 1024),
};
const FILE_BYTES = 1073741824;
const log = (m) => process.stderr.write(`[bench-ha ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

function pct(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
}

async function sendRuns(kind, role, cp, work, remote) {
  const master = { brokerRole: role, inSyncReplicas: 2, mappedFileSizeCommitLog: FILE_BYTES };
  const officialEnv = { PATH: `${path.join(HERE, 'official-java')}:${env.PATH}`, BENCH_REAL_JAVA: REAL_JAVA, BENCH_BROKER_JVM: `-Xms${CFG.heap} -Xmx${CFG.heap} -XX:MaxDirectMemorySize=${CFG.heap}` };
  const g = new Group(kind, work, work, { name: `bench-${role}-${kind}`, master, slave: { mappedFileSizeCommitLog: FILE_BYTES }, officialEnv });
  try {
    await g.start();
    const topic = `BenchHa_${role}`;
    await remote.createTopic(g.masterAddr, topic, 16);
    await waitFor(async () => (await remote.route(g.nsAddr, topic)) !== null, 60_000, 'route');
    // Linked and acking before the clock starts.
    await waitFor(async () => (await remote.maxPhyOffset(g.slaveAddr)) === (await remote.maxPhyOffset(g.masterAddr)), 120_000, 'slave linked');
    const lags = [];
    let sampling = null;
    log(`  ${g.label} ${role}: sync sends, 1 KiB, 16 threads`);
    const d = driver(cp, work, ['--mode', 'send', '--namesrv', g.nsAddr, '--topic', topic, '--send', 'sync', '--threads', '16', '--size', '1024',
      '--warmup', String(CFG.warmup), '--seconds', String(CFG.seconds), '--runs', String(CFG.runs)], { log, hooks: {
      start: () => {
        lags.length = 0;
        sampling = setInterval(async () => {
          try {
            const [m, s] = await Promise.all([remote.maxPhyOffset(g.masterAddr), remote.maxPhyOffset(g.slaveAddr)]);
            lags.push(Math.max(0, m - s));
          } catch { /* a sample lost */ }
        }, 100);
      },
      end: () => {
        clearInterval(sampling);
        return { lagP50: pct(lags, 0.5), lagP99: pct(lags, 0.99), lagMax: maxOf(lags, 0) };
      },
    } });
    const runs = await d.done;
    let catchUp;
    if (role === 'ASYNC_MASTER') catchUp = await catchUpRun(g, cp, work, remote, topic);
    return { runs, catchUp };
  } finally {
    await g.stop();
  }
}

async function catchUpRun(g, cp, work, remote, topic) {
  await g.killSlave();
  const start = await remote.maxPhyOffset(g.masterAddr);
  const target = start + CFG.backlogMiB * 1024 * 1024;
  log(`  ${g.label}: slave down, writing ${CFG.backlogMiB} MiB to the master`);
  const d = driver(cp, work, ['--mode', 'send', '--namesrv', g.nsAddr, '--topic', topic, '--send', 'sync', '--threads', '16', '--size', '65536',
    '--warmup', '0', '--seconds', '600', '--runs', '1'], { log });
  await waitFor(async () => (await remote.maxPhyOffset(g.masterAddr)) >= target, 900_000, 'the backlog', 500);
  killTree(d.proc, 'SIGKILL');
  await d.done;
  await sleep(500);
  const end = await remote.maxPhyOffset(g.masterAddr);
  const from = Date.now();
  await g.restart(g.slave);
  const startedMs = Date.now() - from;
  // The transfer starts when the slave's log first grows (its JVM or process start, and linking, excluded).
  const slaveAt = await remote.maxPhyOffset(g.slaveAddr);
  let movedAt = 0;
  await waitFor(async () => {
    const now = await remote.maxPhyOffset(g.slaveAddr);
    if (!movedAt && now > slaveAt) movedAt = Date.now();
    return now >= end;
  }, 900_000, 'the slave to catch up', 100);
  const doneAt = Date.now();
  const bytes = end - slaveAt;
  const seconds = (doneAt - (movedAt || from)) / 1000;
  log(`  ${g.label}: ${(bytes / 2 ** 20).toFixed(0)} MiB caught up in ${seconds.toFixed(1)} s once moving (` +
    `slave started in ${startedMs} ms, linked and moving ${movedAt - from - startedMs} ms later)`);
  return { bytes, seconds, mbps: bytes / 2 ** 20 / seconds, slaveStartMs: startedMs, totalSeconds: (doneAt - from) / 1000 };
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-ha-'));
  guardProcess('bench-ha'); // SIGINT and SIGTERM (npm run bench, timeout) stop every server and driver
  const cp = await classpath();
  const remote = new Remote();
  const kinds = opt('only') === 'ours' ? ['ours'] : opt('only') === 'official' ? [CFG.officialVersion] : [CFG.officialVersion, 'ours'];
  const out = { date: new Date().toISOString(), cfg: CFG, machine: { cpus: os.cpus().length, memGiB: +(os.totalmem() / 2 ** 30).toFixed(1) }, results: {} };
  try {
    for (const kind of kinds) {
      const label = kind === 'ours' ? 'ours' : `official-${kind}`;
      const r = {};
      for (const role of ['SYNC_MASTER', 'ASYNC_MASTER']) r[role] = await sendRuns(kind, role, cp, work, remote);
      if (flag('failover')) {
        const f = await consumerFailover(kind, { tmp: work, logDir: work, quick: true, seed: 1 }, rng(1));
        r.failover = f.figures;
        log(`  ${label}: failover ${f.status} ${JSON.stringify(f.figures)}`);
      }
      out.results[label] = r;
    }
  } finally {
    await remote.close();
    await stopAllServers();
  }
  const file = path.join(HERE, 'results', `ha-${out.date.replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  printTable(out);
  if (!flag('keep')) fs.rmSync(work, { recursive: true, force: true });
  log(`results: ${path.relative(ROOT, file)}`);
  // Exit rather than wait for the event loop: a stock ali-ons client of the failover part whose close() did not
  // finish keeps its MQClient loops (route / heartbeat / rebalance sleeps of 30, 30, 10 s) going — seen after the
  // 2026-12-02 run, which printed its table and then never exited, so `npm run bench` would wait forever.
  process.exit(0);
}

function printTable(out) {
  const labels = Object.keys(out.results);
  const row = (name, f) => `| ${name} | ${labels.map((l) => f(out.results[l])).join(' | ')} |${labels.length === 2 ? ` ${ratio(f, out, labels)} |` : ''}`;
  const m = (role, key) => (r) => fmt(median(r[role].runs.map((x) => (key === 'p99' ? x.lat?.p99 : x[key]))));
  console.log(`| | ${labels.join(' | ')} |${labels.length === 2 ? ' ours/official |' : ''}`);
  console.log(`|---|${labels.map(() => '---').join('|')}|${labels.length === 2 ? '---|' : ''}`);
  console.log(row('SYNC_MASTER sync 1 KiB x16, msg/s', m('SYNC_MASTER', 'throughput')));
  console.log(row('SYNC_MASTER p99 ms', m('SYNC_MASTER', 'p99')));
  console.log(row('ASYNC_MASTER sync 1 KiB x16, msg/s', m('ASYNC_MASTER', 'throughput')));
  console.log(row('ASYNC_MASTER p99 ms', m('ASYNC_MASTER', 'p99')));
  console.log(row('ASYNC replication lag p99 / max, KiB', (r) => `${fmt(median(r.ASYNC_MASTER.runs.map((x) => x.lagP99)) / 1024)} / ${fmt(Math.max(...r.ASYNC_MASTER.runs.map((x) => x.lagMax)) / 1024)}`));
  console.log(row(`slave catch-up of ${CFG.backlogMiB} MiB, MiB/s`, (r) => fmt(r.ASYNC_MASTER.catchUp?.mbps)));
  if (labels.every((l) => out.results[l].failover)) console.log(row('consumer reads from the slave after kill -9, ms', (r) => fmt(r.failover.slaveServesAfterKillMs)));
}

function fmt(v) {
  if (v === undefined || Number.isNaN(v)) return '–';
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2);
}

function ratio(f, out, labels) {
  const [off, ours] = labels.map((l) => parseFloat(String(f(out.results[l])).replace(/,/g, '')));
  return Number.isFinite(off) && Number.isFinite(ours) && off > 0 ? `${(ours / off).toFixed(2)}x` : '–';
}

main().catch(async (e) => {
  log(`error: ${e.stack ?? e}`);
  await stopAllServers();
  for (const c of children) killTree(c, 'SIGKILL');
  process.exit(1);
});
