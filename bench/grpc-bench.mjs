#!/usr/bin/env node
// The gRPC part of the bench: the stock rocketmq-client-java 5.2.0 (bench/grpc/GrpcBench.java) against our broker's
// gRPC endpoint and against the official rocketmq-proxy 5.3.3 (cluster mode) in front of the official 5.3.3 broker,
// one after the other on this machine; ratios are ours / official.
//
//   node bench/grpc-bench.mjs [--quick] [--only=official|ours]
//
// Scenarios: sync send 1 KiB with 1 and 16 threads (msg/s, p50/p99 ms); SimpleConsumer receive(32)+ack draining a
// backlog (POP, 4 consumers); the same backlog drained by the stock remoting push consumer (pull; the load driver of
// `npm run bench`, rocketmq-client 4.9.8) on the same server: POP vs pull. Each row also gives the servers' CPU per
// message over the measured window (user + kernel; ours is one process, the official side the proxy, the broker and
// the nameserver together). Results go to bench/results/grpc-<date>.json.
// Env: BENCH_SECONDS (5; quick 2), BENCH_WARMUP (5; quick 2), BENCH_GRPC_BACKLOG (50000; quick 5000),
// BENCH_GRPC_JIT_WARMUP (60; quick 5: seconds of unmeasured sends on each server before its first scenario),
// BENCH_OURS_NODE_ARGS (node flags for our server, e.g. --cpu-prof --cpu-prof-dir=DIR).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { awaitRoute, createTopic } from '../compat/grpc/admin.mjs';
import { pickPorts } from '../compat/lib/servers.mjs';
import { classpath, driver } from './java-driver.mjs';
import { CLK_TCK, procTicksSplit } from './proc.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const OFFICIAL_SH = path.join(ROOT, 'compat/official/official.sh');
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const only = argv.find((a) => a.startsWith('--only='))?.slice(7);
const SERVERS = (only ?? 'official,ours').split(',');
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 2 : 5));
const WARMUP = Number(process.env.BENCH_WARMUP ?? (QUICK ? 2 : 5));
const BACKLOG = Number(process.env.BENCH_GRPC_BACKLOG ?? (QUICK ? 5000 : 50000));
// Unmeasured 16-thread sends on each freshly started server before its scenarios: the official proxy and broker are
// new JVMs whose JIT is still compiling the send path for tens of seconds (2026-12-07, official only, 1-thread sync
// send after a 5 s warm-up: 167-302 msg/s at 4.0 ms of CPU per message; after 30 s: 773 msg/s at 1.3 ms).
const JIT_WARMUP = Number(process.env.BENCH_GRPC_JIT_WARMUP ?? (QUICK ? 5 : 60));
const CLIENT = '5.2.0';
const log = (m) => process.stderr.write(`${m}\n`);

function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, ...opts });
}

/** rocketmq-client-java 5.2.0 and GrpcBench compiled against it (compat/.cache, like compat/grpc5/java). */
function buildDriver() {
  const d = path.join(ROOT, 'compat/.cache', `grpc-bench-${CLIENT}`);
  const src = path.join(HERE, 'grpc/GrpcBench.java');
  const stamp = path.join(d, '.built');
  if (fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs >= fs.statSync(src).mtimeMs) return d;
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, 'pom.xml'), `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>local.bench</groupId><artifactId>grpc-bench</artifactId><version>1</version><packaging>pom</packaging>
<dependencies><dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-client-java</artifactId><version>${CLIENT}</version></dependency></dependencies>
</project>\n`);
  fs.rmSync(path.join(d, 'lib'), { recursive: true, force: true });
  sh('mvn', ['-q', '-B', '-f', path.join(d, 'pom.xml'), 'dependency:copy-dependencies', `-DoutputDirectory=${path.join(d, 'lib')}`]);
  fs.mkdirSync(path.join(d, 'classes'), { recursive: true });
  sh('javac', ['-nowarn', '-d', path.join(d, 'classes'), '-cp', `${path.join(d, 'lib')}/*`, src]);
  fs.writeFileSync(stamp, '');
  return d;
}

/** User and kernel CPU ticks of each server process. */
function ticksOf(pids) {
  return pids.map((pid) => procTicksSplit(pid));
}

/**
 * Server CPU µs per message over a measured window (ticks at its start and end): all processes together with the
 * kernel's part, and each process's share (`byProcess`, in the order of the pids).
 */
function cpuPerMsg(from, to, msgs) {
  if (!from || !to || !msgs) return undefined;
  const us = (ticks) => (ticks * 1e6) / CLK_TCK / msgs;
  const each = to.map((t, i) => ({ user: t.user - from[i].user, sys: t.sys - from[i].sys }));
  const sum = (k) => each.reduce((n, e) => n + e[k], 0);
  return { us: us(sum('user') + sum('sys')), kernelUs: us(sum('sys')), byProcess: each.map((e) => Math.round(us(e.user + e.sys) * 10) / 10) };
}

/** Runs the driver; the servers' CPU is read at its window-start and window-end lines. */
function java(d, args, work, pids) {
  return new Promise((resolve, reject) => {
    const p = spawn('java', ['-Xmx1g', `-Drocketmq.log.root=${path.join(work, 'client-logs')}`, '-Dmq.consoleAppender.enabled=false',
      '-cp', `${path.join(d, 'lib')}/*:${path.join(d, 'classes')}`, 'GrpcBench', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let result;
    let from;
    let to;
    let err = '';
    readline.createInterface({ input: p.stdout }).on('line', (l) => {
      if (!l.startsWith('{')) return;
      const ev = JSON.parse(l);
      if (ev.event === 'window-start') from = ticksOf(pids);
      else if (ev.event === 'window-end') to = ticksOf(pids);
      else result = ev;
    });
    p.stderr.on('data', (b) => (err = (err + b).slice(-2000)));
    p.on('close', (code) => {
      if (code !== 0 || !result) reject(new Error(`GrpcBench ${args[0]} exited ${code}: ${err.slice(-500)}`));
      else resolve({ ...result, cpu: cpuPerMsg(from, to, result.msgs) });
    });
  });
}

/** The remoting pull consumer of `npm run bench` (compat/bench, rocketmq-client 4.9.8) draining its own backlog. */
async function pullDrain(ns, topic, work, pids) {
  let from;
  const { done } = driver(await classpath(), work, ['--mode', 'consume', '--namesrv', ns, '--topic', topic, '--size', '1024',
    '--threads', '16', '--prefill', String(BACKLOG), '--prefillSeconds', '60', '--warmup', '0', '--seconds', String(SECONDS), '--runs', '1'], {
    hooks: { start: () => (from = ticksOf(pids)), end: () => ({ ticksAtEnd: ticksOf(pids) }) },
  });
  const [run] = await done;
  if (!run) throw new Error('the pull driver ended without a run');
  return { msgs: run.count, tput: run.throughput, seconds: run.durationMs / 1000, cpu: cpuPerMsg(from, run.ticksAtEnd, run.count) };
}

async function withServer(kind, work, fn) {
  const ports = await pickPorts();
  const ns = `127.0.0.1:${ports.ns}`;
  const broker = `127.0.0.1:${ports.broker}`;
  if (kind === 'ours') {
    const store = path.join(work, 'ours');
    // BENCH_OURS_NODE_ARGS: node flags before main.js, as in bench.mjs (e.g. `--cpu-prof --cpu-prof-dir=DIR`)
    const nodeArgs = (process.env.BENCH_OURS_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const p = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'dist/main.js'), 'start', `--namesrvPort=${ports.ns}`, `--listenPort=${ports.broker}`,
      `--grpcServerPort=${ports.grpc}`, `--storePathRootDir=${store}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((resolve, reject) => {
      let seen = '';
      p.stdout.on('data', (b) => { seen += b; if (/ready/.test(seen)) resolve(); });
      p.on('exit', () => reject(new Error('our server exited')));
    });
    try {
      return await fn({ ns, broker, endpoint: `127.0.0.1:${ports.grpc}`, pids: [p.pid] });
    } finally {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }
  }
  const store = path.join(work, 'official');
  const proxyDir = path.join(work, 'proxy');
  sh('bash', [OFFICIAL_SH, 'start', '5.3.3', store, String(ports.ns), String(ports.broker)]);
  try {
    sh('bash', [OFFICIAL_SH, 'proxy-start', '5.3.3', proxyDir, ns, String(ports.grpc), String(ports.grpc + 1)]);
    // The proxy, the broker and the nameserver: ours is all three in one process.
    const pids = [path.join(proxyDir, 'proxy.pid'), path.join(store, 'broker.pid'), path.join(store, 'namesrv.pid')]
      .map((f) => Number(fs.readFileSync(f, 'utf8').trim()));
    try {
      return await fn({ ns, broker, endpoint: `127.0.0.1:${ports.grpc}`, pids });
    } finally {
      sh('bash', [OFFICIAL_SH, 'proxy-stop', proxyDir]);
    }
  } finally {
    sh('bash', [OFFICIAL_SH, 'stop', store]);
  }
}

async function benchServer(kind, d, work) {
  return withServer(kind, work, async ({ ns, broker, endpoint, pids }) => {
    const res = {};
    for (const t of ['BenchGrpcSend', 'BenchGrpcPop', 'BenchGrpcPull']) {
      await createTopic(broker, t, { type: 'NORMAL', queues: 16 });
      await awaitRoute(ns, t);
    }
    if (JIT_WARMUP > 0) {
      log(`  [${kind}] warm-up: ${JIT_WARMUP} s of 16-thread sync sends, not measured`);
      res.jitWarmup = await java(d, ['send', endpoint, 'BenchGrpcSend', '16', String(JIT_WARMUP), '0', '1024'], work, pids);
    }
    for (const threads of [1, 16]) {
      log(`  [${kind}] sync send 1 KiB, ${threads} thread(s)`);
      res[`send${threads}`] = await java(d, ['send', endpoint, 'BenchGrpcSend', String(threads), String(SECONDS), String(WARMUP), '1024'], work, pids);
    }
    log(`  [${kind}] prefill ${BACKLOG} for POP`);
    res.prefill = await java(d, ['prefill', endpoint, 'BenchGrpcPop', String(BACKLOG), '1024'], work, pids);
    log(`  [${kind}] SimpleConsumer receive+ack (POP), 4 consumers`);
    res.pop = await java(d, ['consume', endpoint, 'BenchGrpcPop', `GBenchPop${Date.now()}`, '4', String(BACKLOG)], work, pids);
    log(`  [${kind}] remoting push consumer (pull) on the same backlog size`);
    try {
      res.pull = await pullDrain(ns, 'BenchGrpcPull', work, pids);
    } catch (e) {
      res.pull = { error: e.message };
    }
    return res;
  });
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'grpc-bench-'));
  log(`building the gRPC load driver (rocketmq-client-java ${CLIENT})`);
  const d = buildDriver();
  const out = { date: new Date().toISOString(), seconds: SECONDS, warmup: WARMUP, backlog: BACKLOG, client: CLIENT, results: {} };
  for (const kind of SERVERS) {
    log(`== ${kind}`);
    out.results[kind] = await benchServer(kind, d, work);
  }
  const o = out.results.official;
  const u = out.results.ours;
  const f = (v, n = 0) => (v === undefined || Number.isNaN(v) ? '-' : Number(v).toLocaleString('en-US', { maximumFractionDigits: n }));
  const ratio = (a, b) => (a && b ? `${(b / a).toFixed(2)}×` : '-');
  const cpu = (c) => (c ? `${f(c.us, 1)} (${f(c.kernelUs, 1)})` : '-');
  const rows = [
    ['gRPC sync send 1 KiB, 1 thread', o?.send1, u?.send1, `${f(o?.send1?.p99, 2)} → ${f(u?.send1?.p99, 2)}`],
    ['gRPC sync send 1 KiB, 16 threads', o?.send16, u?.send16, `${f(o?.send16?.p99, 2)} → ${f(u?.send16?.p99, 2)}`],
    [`SimpleConsumer receive+ack (POP), ${f(BACKLOG)} backlog`, o?.pop, u?.pop, '—'],
    [`remoting push consumer (pull), ${f(BACKLOG)} backlog`, o?.pull, u?.pull, '—'],
  ];
  // Server CPU: ours is one process; the official side is the proxy, the broker and the nameserver together.
  console.log('| scenario | official msg/s | ours msg/s | ours/official | p99 ms official → ours | server CPU µs/msg (kernel) official → ours | CPU ours/official |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, a, b, p99] of rows) {
    console.log(`| ${name} | ${f(a?.tput)} | ${f(b?.tput)} | ${ratio(a?.tput, b?.tput)} | ${p99} | ${cpu(a?.cpu)} → ${cpu(b?.cpu)} | ${ratio(a?.cpu?.us, b?.cpu?.us)} |`);
  }
  fs.mkdirSync(path.join(HERE, 'results'), { recursive: true });
  const file = path.join(HERE, 'results', `grpc-${out.date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
  log(`results: ${file}`);
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e?.stack ?? e);
  process.exit(1);
});
