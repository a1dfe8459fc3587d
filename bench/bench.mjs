#!/usr/bin/env node
// `npm run bench`: the official Apache RocketMQ namesrv+broker and rocketmq-ts, one after the other on this machine,
// driven by the same stock-Java-client load (compat/bench), compared in one table (ratio = ours / official), plus
// this machine's loopback-TCP and disk limits. Results also go to bench/results/<date>.json.
//
//   npm run bench                      # default: warm-up + 3 runs per scenario (about 5-10 minutes)
//   npm run bench -- --quick           # 1 short run per scenario (about 2-3 minutes)
//   npm run bench -- --only=ours --profile   # rocketmq-ts under `node --cpu-prof`, prints the hot functions
//
// Options: --quick  --only=official|ours
//          --scenarios=sync1,sync16,sync64,async,batch16,size64k,consume,e2e,filter-tag,filter-sql,namesrv,conns1k,
//                      cold,topics2k (default: all; see bench/README.md)
//          --skip=<the same ids> (leave those out, e.g. --skip=cold,conns1k)
//          --rounds=N (both servers N times, taking turns: official first in odd rounds, ours first in even ones; the
//          table gives each ratio as the median of the N rounds' ratios, and the rounds' ratios next to it)
//          --profile (ours runs with --cpu-prof; its numbers then include profiler overhead)  --no-limits  --keep
//          --no-store (skip the store part: bench/store-recovery.mjs, SYNC_FLUSH vs ASYNC_FLUSH and recovery after
//          kill -9 of a 2 GiB store; 256 MiB with --quick; runs last, for ours only)
//          --no-ha (skip the master/slave part: bench/ha.mjs, SYNC/ASYNC_MASTER groups side by side; runs last)
//          --no-dledger (skip the DLedger part: bench/dledger.mjs, 3-member groups of official 5.3.3 brokers and of
//          ours: sends, follower catch-up, failover after kill -9 of the leader; runs after the HA part)
//          --no-grpc (skip the gRPC part: bench/grpc-bench.mjs, the Java 5.x gRPC client against our endpoint and the
//          official proxy 5.3.3: sync sends, SimpleConsumer receive+ack (POP) vs the remoting pull consumer)
// Env:     BENCH_SECONDS (per run, default 5; quick 2)  BENCH_RUNS (3; quick 1)  BENCH_WARMUP (seconds, 5; quick 1)
//          BENCH_CONSUME_MSGS (backlog, 200000; quick 15000)  BENCH_PREFILL_SECONDS (cap on filling it, 30; quick 4)
//          BENCH_E2E_RATE (msg/s, 1000)  BENCH_ASYNC_INFLIGHT (256)
//          BENCH_FILTER_MSGS (filtered backlog, 800000; quick 40000)  BENCH_COLD_BYTES (cold backlog, 2 GiB; quick
//          256 MiB)  BENCH_COLD_PREFILL_SECONDS (cap, 600; quick 120)  BENCH_TOPICS (2000; quick 500)
//          BENCH_CONNS_RATE (msg/s, 5000)  BENCH_CONNS_IDLE (800)
//          BENCH_OFFICIAL_HEAP / BENCH_OFFICIAL_NS_HEAP (broker / namesrv -Xms/-Xmx; default: the start scripts' JVM
//          options, 8g / 4g heaps, when they take at most 60% of RAM, else 1g / 256m)  BENCH_OFFICIAL_VERSION (4.9.8)
//          BENCH_OURS_ARGS (extra --key=value flags for `dist/main.js start`)  BENCH_OURS_DIST (the build to run as
//          ours, default dist: A/B runs of two builds)  BENCH_OURS_NODE_ARGS (node/V8 flags before main.js, e.g.
//          --trace-gc)  BENCH_OURS_STDOUT (file that keeps our server's stdout lines)  RMQ_V8_FLAGS (passed through to
//          our server: replaces its GC flags; "" = V8's defaults)  BENCH_DRIVER_JVM (extra JVM options of the Java load
//          driver, e.g. -XX:StartFlightRecording=filename=/tmp/driver.jfr,settings=profile)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { diskLimit, tcpLimits } from './limits.mjs';
import { formatTop, topFunctions } from './cpuprofile-top.mjs';
import { createMemoryCgroup } from './mem-cgroup.mjs';
import { dropCaches, dropCachesRefusal, residentBytes } from './page-cache.mjs';
import { CLK_TCK, alive, fdsOf, memOf, pickPorts, snapshot, spawnUntil } from './proc.mjs';
import { fmt, report, roundsReport } from './report.mjs';
import { allScenarios } from './scenarios.mjs';
import { OURS_FIXED_ARGS, startServer } from './servers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const OFFICIAL_SH = path.join(ROOT, 'compat/official/official.sh');
const DRIVER_BUILD = path.join(ROOT, 'compat/bench/build.sh');

// ------------------------------------------------------------------ options

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
if (flag('help') || flag('h')) {
  process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1).filter((l, i, a) => a.slice(0, i + 1).every((x) => x.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
  process.exit(0);
}
const known = ['quick', 'profile', 'no-limits', 'no-store', 'no-ha', 'no-dledger', 'no-grpc', 'keep', 'help', 'only', 'scenarios', 'skip', 'rounds'];
for (const a of argv) {
  const name = a.replace(/^--/, '').split('=')[0];
  if (!a.startsWith('--') || !known.includes(name)) { process.stderr.write(`bench: unknown argument ${a} (see --help)\n`); process.exit(2); }
}
const QUICK = flag('quick');
const env = process.env;
const num = (v, d) => (v === undefined || v === '' ? d : Number(v));
const CFG = {
  quick: QUICK,
  seconds: num(env.BENCH_SECONDS, QUICK ? 2 : 5),
  runs: num(env.BENCH_RUNS, QUICK ? 1 : 3),
  // The driver is a fresh JVM per scenario: 2 s left its JIT still warming through the first runs (run 1 -> 3
  // rose by up to 2x), so the default warm-up is 5 s.
  warmup: num(env.BENCH_WARMUP, QUICK ? 1 : 5),
  // A 50,000-message backlog drained in under a second, and runs of one scenario differed by 2x; 200,000 drain
  // in a few seconds (and no longer fit in our 64 MiB in-memory tail, so pulls read from the page cache too).
  consumeMsgs: num(env.BENCH_CONSUME_MSGS, QUICK ? 15000 : 200000),
  prefillSeconds: num(env.BENCH_PREFILL_SECONDS, QUICK ? 4 : 30),
  e2eRate: num(env.BENCH_E2E_RATE, 1000),
  asyncInflight: num(env.BENCH_ASYNC_INFLIGHT, 256),
  // 200,000 gave 25,000 matches per run: ours drained them in 0.3-0.5 s on ~15 clock ticks of server CPU (10 ms
  // each), so one tick moved a run's CPU per message by ~7 % and the rounds of one row spread 1.00-1.43x.
  filterMsgs: num(env.BENCH_FILTER_MSGS, QUICK ? 40000 : 800000),
  coldBytes: num(env.BENCH_COLD_BYTES, QUICK ? 256 * 1024 ** 2 : 2 * 1024 ** 3),
  coldPrefillSeconds: num(env.BENCH_COLD_PREFILL_SECONDS, QUICK ? 120 : 600),
  topics: num(env.BENCH_TOPICS, QUICK ? 500 : 2000),
  nsTopics: 1000,
  nsBrokers: 10,
  nsConnections: 16,
  connsProducers: 100,
  connsConsumers: 100,
  connsIdle: num(env.BENCH_CONNS_IDLE, 800),
  connsRate: num(env.BENCH_CONNS_RATE, 5000),
  ...officialJvm(),
  officialVersion: env.BENCH_OFFICIAL_VERSION || '4.9.8',
  oursArgs: (env.BENCH_OURS_ARGS ?? '').split(/\s+/).filter(Boolean),
  // extra JVM options of the load driver, e.g. -XX:StartFlightRecording=filename=/tmp/driver.jfr,settings=profile
  driverJvm: (env.BENCH_DRIVER_JVM ?? '').split(/\s+/).filter(Boolean),
  limitMs: QUICK ? 700 : 2000,
  diskMiB: QUICK ? 128 : 256,
  profile: flag('profile'),
};
/**
 * The official servers' JVM options: those of its start scripts (bin/runbroker.sh: -Xms8g -Xmx8g -Xmn4g, G1 with
 * 16 MiB regions, AlwaysPreTouch, 15 GiB direct memory; bin/runserver.sh: -Xms4g -Xmx4g -Xmn2g, G1) when those
 * heaps take at most 60% of this machine's RAM, otherwise (or when BENCH_OFFICIAL_HEAP / BENCH_OFFICIAL_NS_HEAP set
 * a heap) the given or a small heap (1g / 256m) with official.sh's other options.
 */
function officialJvm() {
  const G1 = '-XX:+UseG1GC -XX:G1HeapRegionSize=16m -XX:G1ReservePercent=25 -XX:InitiatingHeapOccupancyPercent=30 -XX:SoftRefLRUPolicyMSPerMB=0';
  const scriptsFit = (8 + 4) * 1024 ** 3 <= 0.6 * os.totalmem();
  const heapFromEnv = Boolean(env.BENCH_OFFICIAL_HEAP || env.BENCH_OFFICIAL_NS_HEAP);
  if (!heapFromEnv && scriptsFit) {
    return {
      officialJvmProfile: 'start scripts',
      brokerJvm: `-Xms8g -Xmx8g -Xmn4g ${G1} -XX:+AlwaysPreTouch -XX:MaxDirectMemorySize=15g -XX:-UseLargePages`,
      namesrvJvm: `-Xms4g -Xmx4g -Xmn2g ${G1}`,
    };
  }
  const broker = env.BENCH_OFFICIAL_HEAP || '1g';
  const namesrv = env.BENCH_OFFICIAL_NS_HEAP || '256m';
  return {
    officialJvmProfile: heapFromEnv ? 'heap from the environment' : 'small heap (the start scripts\' 8 + 4 GiB take more than 60% of RAM)',
    brokerJvm: `-Xms${broker} -Xmx${broker}`,
    namesrvJvm: `-Xms${namesrv} -Xmx${namesrv}`,
  };
}

const SERVERS = (opt('only') ?? 'official,ours').split(',');
for (const s of SERVERS) if (!['official', 'ours'].includes(s)) { process.stderr.write(`bench: --only: unknown server ${s}\n`); process.exit(2); }
const ROUNDS = Number(opt('rounds') ?? 1);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) { process.stderr.write(`bench: --rounds must be a positive integer\n`); process.exit(2); }
if (ROUNDS > 1 && SERVERS.length < 2) { process.stderr.write('bench: --rounds compares the two servers: leave out --only\n'); process.exit(2); }

const KiB = 1024;
const ALL_SCENARIOS = allScenarios(CFG);
const wanted = opt('scenarios')?.split(',');
const skipped = opt('skip')?.split(',') ?? [];
const SCENARIOS = (wanted ? ALL_SCENARIOS.filter((s) => wanted.includes(s.id)) : ALL_SCENARIOS).filter((s) => !skipped.includes(s.id));
for (const w of [...(wanted ?? []), ...skipped]) if (!ALL_SCENARIOS.some((s) => s.id === w)) { process.stderr.write(`bench: unknown scenario ${w}\n`); process.exit(2); }

// ------------------------------------------------------------------ output helpers

const TTY = process.stderr.isTTY;
let statusShown = false;
function status(line) { // transient progress line
  if (TTY) { process.stderr.write(`\r\x1b[K${line}`); statusShown = true; }
}
function log(line) {
  if (statusShown) { process.stderr.write('\r\x1b[K'); statusShown = false; }
  process.stderr.write(`${line}\n`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ the Java load driver

let CLASSPATH;
function javaArgs(work, extra, jvm = []) {
  const home = path.join(work, 'driver-home');
  fs.mkdirSync(home, { recursive: true });
  return [
    '-Xms256m', '-Xmx1g', '-XX:+UseG1GC', ...jvm, ...CFG.driverJvm, '-Djava.net.preferIPv4Stack=true', '-Dfile.encoding=UTF-8',
    `-Duser.home=${home}`, `-Drocketmq.client.logRoot=${path.join(work, 'driver-logs')}`, '-Drocketmq.client.logLevel=WARN',
    `-Drocketmq.client.localOffsetStoreDir=${path.join(home, '.rocketmq_offsets')}`,
    '-cp', CLASSPATH, 'bench.Driver', ...extra,
  ];
}

/**
 * The cold scenario's step before each run: the page cache is dropped and what stays of the store measured.
 * Returns { residentBeforeBytes, residentAfterBytes } or { refused: reason }.
 */
function makeCold(server, cgroup) {
  const residentBeforeBytes = residentBytes(server.commitLogDir);
  const refused = dropCaches();
  if (refused) return { refused };
  // drop_caches leaves mapped pages; reclaim inside the server's memory cgroup drops those too
  const reclaimError = cgroup?.reclaim();
  if (reclaimError) log(`  [${server.name}] cgroup reclaim failed, only drop_caches applied: ${reclaimError}`);
  const method = cgroup && !reclaimError ? `drop_caches + memory cgroup ${cgroup.kind} reclaim` : 'drop_caches';
  return { residentBeforeBytes, residentAfterBytes: residentBytes(server.commitLogDir), method };
}

/**
 * Runs one scenario's driver; samples server CPU around every run (`inst.cpuPids()`), memory and open descriptors
 * at each run's end. → { runs: [...], phases: [...], error?, skipped? }
 */
function runScenario(sc, inst, work, logFd, cgroup) {
  const { server } = inst;
  const extra = ['--mode', sc.mode, '--namesrv', `127.0.0.1:${server.ports.ns}`, '--topic', `Bench_${sc.id.replace(/-/g, '_')}`,
    '--warmup', String(CFG.warmup), '--seconds', String(CFG.seconds), '--runs', String(CFG.runs)];
  for (const [k, v] of Object.entries(sc.args)) extra.push(`--${k}`, String(v));
  fs.writeSync(logFd, `\n== driver ${sc.id}: java ... bench.Driver ${extra.join(' ')}\n`);
  const p = spawn('java', javaArgs(work, extra, sc.jvm), { stdio: [sc.cold ? 'pipe' : 'ignore', 'pipe', logFd] });
  const out = { runs: [], phases: [] };
  const cpuPids = () => (sc.cpu === 'namesrv' ? server.namesrvPids() : inst.pids);
  let before = null;
  let cold;
  let lastShown = 0;
  const tag = `  [${server.name}] ${sc.id}`;
  const rl = readline.createInterface({ input: p.stdout });
  rl.on('line', (line) => {
    let ev;
    try { ev = JSON.parse(line); } catch { return; }
    if (ev.event === 'need-cold') {
      cold = makeCold(server, cgroup);
      if (cold.refused) {
        out.skipped = cold.refused;
        log(`${tag} skipped: ${cold.refused}`);
        p.stdin.end('skip\n');
        return;
      }
      log(`${tag} page cache dropped (${cold.method}): commit log resident ${fmt(cold.residentBeforeBytes / 1048576)} MiB before, ${fmt(cold.residentAfterBytes / 1048576)} MiB after`);
      p.stdin.write('go\n');
    } else if (ev.event === 'run-start') {
      before = snapshot(cpuPids(), p.pid);
    } else if (ev.event === 'run-end') {
      const after = snapshot(cpuPids(), p.pid);
      const r = ev.result;
      const secs = (after.t - before.t) / 1000;
      const serverTicks = after.server - before.server;
      const serverSysTicks = after.serverSys - before.serverSys;
      const driverTicks = after.driver - before.driver;
      const machineBusy = after.machine.busy - before.machine.busy;
      const cpu = {
        serverCpuMs: (serverTicks * 1000) / CLK_TCK,
        usPerMsg: r.count > 0 ? (serverTicks * 1e6) / CLK_TCK / r.count : undefined,
        // the part spent in the kernel (socket and file system calls, page faults): what a change of ours can move least
        serverSysMs: (serverSysTicks * 1000) / CLK_TCK,
        sysUsPerMsg: r.count > 0 ? (serverSysTicks * 1e6) / CLK_TCK / r.count : undefined,
        serverCpus: serverTicks / CLK_TCK / secs,
        driverCpus: driverTicks / CLK_TCK / secs,
        otherCpus: Math.max(0, machineBusy - serverTicks - driverTicks) / CLK_TCK / secs,
      };
      // the 1-minute load average at each run's end: the machine may be shared, and then only ratios mean anything
      out.runs.push({ run: ev.run, ...r, cpu, mem: memOf(inst.pids), fds: fdsOf(inst.pids), loadavg1: os.loadavg()[0], ...(cold ? { cold } : {}) });
      log(`${tag} run ${ev.run}/${CFG.runs}: ${fmt(r.throughput)} msg/s` +
        (r.lat?.n ? `, p50 ${fmt(r.lat.p50, 2)} ms, p99 ${fmt(r.lat.p99, 2)} ms, max ${fmt(r.lat.max, 1)} ms` : '') +
        `, server CPU ${fmt(cpu.usPerMsg, 1)} us/msg (${fmt(cpu.sysUsPerMsg, 1)} in the kernel; ${fmt(cpu.serverCpus, 2)} cores; driver ${fmt(cpu.driverCpus, 2)}, other processes ${fmt(cpu.otherCpus, 2)})` +
        (r.errors ? `, ${r.errors} errors` : '') + (r.lastError ? ` (${r.lastError})` : '') + `; load average ${fmt(os.loadavg()[0], 2)}`);
    } else if (ev.event === 'progress') {
      const rate = ev.elapsedMs > 0 ? (ev.count * 1000) / ev.elapsedMs : 0;
      const line = `${tag} ${ev.label}: ${fmt(ev.count)} msgs, ${fmt(rate)}/s${ev.errors ? `, ${ev.errors} errors` : ''}`;
      if (TTY) status(line);
      else if (performance.now() - lastShown > 5000) { lastShown = performance.now(); log(line); }
    } else if (ev.event === 'warmup-start') {
      status(`${tag} warm-up ...`);
    } else if (ev.event === 'phase') {
      log(`${tag} ${ev.name} (${fmt(ev.count)}) ...`);
    } else if (ev.event === 'phase-end') {
      out.phases.push(ev);
      log(`${tag} ${ev.name}: ${fmt(ev.count)} in ${fmt(ev.durationMs / 1000, 1)} s${ev.errors ? `, ${ev.errors} errors` : ''}`);
    } else if (ev.event === 'error') {
      out.error = ev.message;
      log(`${tag} driver error: ${ev.message}`);
    }
  });
  const budget = (sc.budgetSeconds ?? CFG.warmup + CFG.runs * (CFG.seconds + 30) + CFG.prefillSeconds * 2 + 120) * 1000;
  return new Promise((resolve) => {
    const timer = setTimeout(() => { out.error = `driver timed out after ${budget / 1000}s`; log(`${tag} ${out.error}`); p.kill('SIGKILL'); }, budget);
    p.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0 && !out.error) out.error = `driver exited with ${code}`;
      resolve(out);
    });
  });
}

/** Start-up: a probe JVM (already running) sends from the moment the server is spawned until the first SEND_OK. */
async function startProbe(work, ports) {
  const { proc, ready } = spawnUntil('java', javaArgs(work, ['--mode', 'probe', '--namesrv', `127.0.0.1:${ports.ns}`, '--timeout', '180']),
    { stdio: ['pipe', 'pipe', 'ignore'] }, /probe-ready/, 60000);
  await ready;
  const ok = new Promise((resolve) => {
    readline.createInterface({ input: proc.stdout }).on('line', (line) => {
      if (/probe-ok|probe-fail/.test(line)) resolve({ at: performance.now(), ev: JSON.parse(line) });
    });
    proc.on('exit', () => resolve({ at: performance.now(), ev: { event: 'probe-fail', lastError: 'probe exited' } }));
  });
  return { go: () => proc.stdin.write('go\n'), ok, proc };
}

// ------------------------------------------------------------------ one server instance

/**
 * Starts `name` on the store directory `store` (reused when it exists) with a probe measuring the first successful
 * send. → { server, pids, readyMs, firstSendMs, ... } or { error }.
 */
async function startInstance(name, work, store, logFd, profileDir) {
  const ports = await pickPorts();
  const probe = await startProbe(work, ports);
  const server = startServer(name, { CFG, store, ports, logFd, log, profileDir });
  probe.go();
  try {
    const [r, first] = await Promise.all([server.ready, probe.ok]);
    const inst = { server, ports, pids: r.pids, readyMs: r.readyMs };
    if (r.brokerProperties) inst.brokerProperties = r.brokerProperties;
    if (r.jvmArgs) inst.heapArgs = { namesrv: r.jvmArgs[0], broker: r.jvmArgs[1] };
    inst.firstSendMs = first.ev.event === 'probe-ok' ? first.at - server.t0 : undefined;
    if (first.ev.event !== 'probe-ok') inst.startupError = first.ev.lastError;
    log(`[${name}] ready line after ${fmt(inst.readyMs)} ms, first successful send after ${fmt(inst.firstSendMs)} ms; pids ${inst.pids.join(', ')}; namesrv 127.0.0.1:${ports.ns}, broker 127.0.0.1:${ports.broker}, store ${store}`);
    return inst;
  } catch (e) {
    probe.proc.kill('SIGKILL');
    await server.stop();
    return { error: e.message };
  }
}

/** Samples the peak memory of the instance's processes until stopped. */
function peakSampler(inst) {
  const peak = { rss: 0, anon: 0, file: 0 };
  const timer = setInterval(() => {
    const m = memOf(inst.pids);
    for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
  }, 250);
  return { peak, stop: () => clearInterval(timer) };
}

/**
 * Start-up on the scenario's store: after a clean stop, and after kill -9 of the restarted server (the store is
 * left for the official recovery or ours). The instance passed in is stopped.
 */
async function measureRestarts(name, inst, work, store, logFd) {
  const restarts = {};
  await inst.server.stop();
  const clean = await startInstance(name, work, store, logFd);
  if (clean.error) return { error: `restart after a clean stop: ${clean.error}` };
  restarts.clean = { readyMs: clean.readyMs, firstSendMs: clean.firstSendMs };
  await clean.server.kill();
  const crash = await startInstance(name, work, store, logFd);
  if (crash.error) return { ...restarts, error: `restart after kill -9: ${crash.error}` };
  restarts.crash = { readyMs: crash.readyMs, firstSendMs: crash.firstSendMs };
  await crash.server.stop();
  return restarts;
}

/** The scenarios that get a server of their own: started on an empty store, stopped after. */
async function freshScenario(name, sc, work, logFd, profileDir) {
  const store = path.join(work, `${name}-${sc.id}`);
  if (sc.cold) {
    const refused = dropCachesRefusal();
    if (refused) {
      log(`  [${name}] ${sc.id} skipped: ${refused}`);
      return { skipped: refused, runs: [] };
    }
  }
  log(`\n[${name}] ${sc.id}: a server of its own on an empty store`);
  const inst = await startInstance(name, work, store, logFd, profileDir);
  if (inst.error) return { error: `start failed: ${inst.error}`, runs: [] };
  const sampler = peakSampler(inst);
  const cgroup = sc.cold ? coldCgroup(name, inst) : undefined;
  let res;
  try {
    res = await runScenario(sc, inst, work, logFd, cgroup);
  } finally {
    sampler.stop();
  }
  res.peakMem = sampler.peak;
  if (sc.restart && !res.error) {
    res.restarts = await measureRestarts(name, inst, work, store, logFd);
    log(`  [${name}] ${sc.id} restart: clean stop → ready ${fmt(res.restarts.clean?.readyMs)} ms, first send ${fmt(res.restarts.clean?.firstSendMs)} ms; ` +
      `kill -9 → ready ${fmt(res.restarts.crash?.readyMs)} ms, first send ${fmt(res.restarts.crash?.firstSendMs)} ms${res.restarts.error ? ` (${res.restarts.error})` : ''}`);
  } else {
    await inst.server.stop();
  }
  cgroup?.remove();
  return res;
}

/**
 * The cold scenario's server processes in a memory cgroup of their own (bench/mem-cgroup.mjs), so that mapped
 * commit-log pages can be dropped too. Undefined (drop_caches only) when that is not possible here.
 */
function coldCgroup(name, inst) {
  const cg = createMemoryCgroup(`rmqbench-${process.pid}-${name}`);
  if (cg.refused) {
    log(`  [${name}] no memory cgroup (${cg.refused}): drop_caches only, mapped pages stay resident`);
    return undefined;
  }
  try {
    for (const pid of inst.pids) cg.add(pid);
  } catch (e) {
    log(`  [${name}] could not move the server into ${cg.dir} (${e.message}): drop_caches only`);
    cg.remove();
    return undefined;
  }
  return cg;
}

// ------------------------------------------------------------------ one server, all scenarios

async function benchServer(name, work) {
  const logFile = path.join(work, `${name}.log`);
  const logFd = fs.openSync(logFile, 'a');
  const profileDir = name === 'ours' && CFG.profile ? path.join(HERE, 'results', `cpuprof-${RUN_DATE.replace(/:/g, '-')}`) : undefined;
  const res = { name, logFile, scenarios: {} };
  const shared = SCENARIOS.filter((sc) => !sc.fresh);
  if (shared.length > 0) {
    log(`\n[${name}] starting${profileDir ? ' under --cpu-prof' : ''}`);
    const inst = await startInstance(name, work, path.join(work, name), logFd, profileDir);
    if (inst.error) {
      res.error = inst.error;
      log(`[${name}] FAILED to start: ${inst.error} (log: ${logFile})`);
      fs.closeSync(logFd);
      return res;
    }
    Object.assign(res, { ports: inst.ports, pids: inst.pids, readyMs: inst.readyMs, firstSendMs: inst.firstSendMs });
    for (const k of ['brokerProperties', 'heapArgs', 'startupError']) if (inst[k]) res[k] = inst[k];
    const idle0 = snapshot(inst.pids);
    await sleep(3000);
    const idle1 = snapshot(inst.pids);
    res.idleCpus = (idle1.server - idle0.server) / CLK_TCK / ((idle1.t - idle0.t) / 1000);
    res.idleMem = memOf(inst.pids);
    log(`[${name}] idle: CPU ${fmt(res.idleCpus, 3)} cores, RSS ${fmt(res.idleMem.rss / 1024, 1)} MiB (anon ${fmt(res.idleMem.anon / 1024, 1)}, file ${fmt(res.idleMem.file / 1024, 1)})`);
    const sampler = peakSampler(inst);
    try {
      for (const sc of shared) {
        if (!inst.pids.every(alive)) { res.scenarios[sc.id] = { error: 'server process gone', runs: [] }; continue; }
        status(`  [${name}] ${sc.id} starting driver ...`);
        const ts = performance.now();
        res.scenarios[sc.id] = await runScenario(sc, inst, work, logFd);
        res.scenarios[sc.id].elapsedMs = performance.now() - ts;
      }
    } finally {
      sampler.stop();
    }
    res.loadMem = sampler.peak;
    log(`[${name}] peak RSS under load ${fmt(res.loadMem.rss / 1024, 1)} MiB (anon ${fmt(res.loadMem.anon / 1024, 1)}, file ${fmt(res.loadMem.file / 1024, 1)})`);
    await inst.server.stop();
    if (name === 'ours') res.storeStats = storeStatsFrom(logFile);
  }
  for (const sc of SCENARIOS.filter((x) => x.fresh)) {
    const ts = performance.now();
    res.scenarios[sc.id] = await freshScenario(name, sc, work, logFd, profileDir);
    res.scenarios[sc.id].elapsedMs = performance.now() - ts;
  }
  fs.closeSync(logFd);
  if (profileDir) {
    const f = fs.existsSync(profileDir) ? fs.readdirSync(profileDir).filter((x) => x.endsWith('.cpuprofile')).sort() : [];
    if (f.length) {
      // the shared server's profile (the first written); fresh scenarios' servers leave theirs next to it
      const file = path.join(profileDir, f[0]);
      res.profile = { file, others: f.slice(1), ...topFunctions(file, 25, ROOT) };
      log(formatTop(res.profile));
    } else log('  no .cpuprofile written (did the server exit cleanly?)');
  }
  return res;
}

/** Our store logs its counters at stop; the read paths matter for the consume scenarios. */
function storeStatsFrom(logFile) {
  const line = fs.readFileSync(logFile, 'utf8').split('\n').reverse().find((l) => l.includes('message store: stopped'));
  try {
    const st = JSON.parse(line);
    log(`[ours] store reads behind the in-memory tail: ${fmt(st.syncReads)} on the event loop, ${fmt(st.asyncReads)} in the thread pool (${fmt(st.slowSyncReads)} slow)`);
    return { syncReads: st.syncReads, asyncReads: st.asyncReads, slowSyncReads: st.slowSyncReads, commitLogWriteCalls: st.commitLogWriteCalls };
  } catch {
    return undefined; // no stop line (killed)
  }
}

// ------------------------------------------------------------------ main

const RUN_DATE = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

async function main() {
  const date = RUN_DATE;
  const result = {
    date,
    mode: QUICK ? 'quick' : 'default',
    config: CFG,
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memMiB: os.totalmem() / 1048576, loadavgAtStart: os.loadavg(), node: process.version },
    oursFixedArgs: OURS_FIXED_ARGS,
    servers: {},
  };
  const t0 = performance.now();
  if (!fs.existsSync(path.join(ROOT, 'dist/main.js'))) throw new Error('dist/main.js missing: run `npm run build` first (npm run bench does)');
  log(`bench: ${result.mode} mode, ${CFG.runs} x ${CFG.seconds}s runs after ${CFG.warmup}s warm-up, scenarios ${SCENARIOS.map((s) => s.id).join(',')}, servers ${SERVERS.join(',')}`);
  log(`bench: load average at start ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} on ${os.cpus().length} CPUs`);
  status('bench: building the Java load driver (compat/bench/build.sh) ...');
  CLASSPATH = execFileSync('bash', [DRIVER_BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop();
  if (SERVERS.includes('official')) {
    status(`bench: official ${CFG.officialVersion} jars (official.sh fetch) ...`);
    execFileSync('bash', [OFFICIAL_SH, 'fetch', CFG.officialVersion], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-'));
  result.workDir = work;
  try {
    if (!flag('no-limits')) {
      log('\n[limits] loopback TCP and disk ...');
      const specs = [];
      for (const sc of SCENARIOS) {
        if (sc.limit && !specs.some((s) => s.kind === sc.limit.kind && s.size === sc.limit.size && s.conc === sc.limit.conc)) {
          specs.push({ kind: sc.limit.kind, size: sc.limit.size, ...(sc.limit.conc ? { conc: sc.limit.conc } : {}) });
        }
      }
      if (!specs.some((s) => s.kind === 'echo' && s.conc === 1 && s.size === KiB)) specs.unshift({ kind: 'echo', conc: 1, size: KiB });
      const tcp = await tcpLimits(specs, CFG.limitMs, (r) => log(`  tcp ${r.kind}${r.conc ? ` ${r.conc} in flight` : ''} ${r.size / KiB} KiB: ${fmt(r.msgsPerSec)} msg/s, ${fmt(r.mbps, 1)} MB/s${r.p50Ms !== undefined ? `, p50 ${fmt(r.p50Ms, 3)} ms` : ''}`));
      const disk = diskLimit(work, CFG.diskMiB);
      log(`  disk ${disk.fsType} ${work}: ${fmt(disk.mbps)} MB/s (${CFG.diskMiB} MiB write + fdatasync in ${fmt(disk.seconds, 2)} s)`);
      result.limits = { tcp, disk };
    }
    if (ROUNDS === 1) {
      for (const name of SERVERS) result.servers[name] = await benchServer(name, work);
    } else {
      // Taking turns: on a VM whose speed drifts (and which runs slower right after the official JVMs hand their
      // memory back), the server that runs second is not always the one at a disadvantage.
      result.rounds = [];
      for (let r = 1; r <= ROUNDS; r++) {
        const order = r % 2 === 1 ? SERVERS : [...SERVERS].reverse();
        log(`\n[round ${r}/${ROUNDS}] ${order.join(' then ')}`);
        const round = { round: r, order, servers: {} };
        // each round on empty stores of its own, removed after it (the official one holds 1 GiB files)
        const roundWork = path.join(work, `round${r}`);
        fs.mkdirSync(roundWork);
        for (const name of order) round.servers[name] = await benchServer(name, roundWork);
        round.report = report({ ...result, servers: round.servers }, SCENARIOS, CFG);
        result.rounds.push(round);
        if (!flag('keep')) fs.rmSync(roundWork, { recursive: true, force: true });
      }
    }
  } finally {
    result.elapsedSeconds = (performance.now() - t0) / 1000;
    result.machine.loadavgAtEnd = os.loadavg();
    const text = result.rounds ? roundsReport(result, SCENARIOS, CFG) : report(result, SCENARIOS, CFG);
    result.report = text;
    const dir = path.join(HERE, 'results');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${date.replace(/:/g, '-')}${QUICK ? '-quick' : ''}.json`);
    fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    if (statusShown) process.stderr.write('\r\x1b[K');
    process.stdout.write(`${text}\n\nresults: ${path.relative(ROOT, file)}  (took ${fmt(result.elapsedSeconds / 60, 1)} min)\n`);
    if (flag('keep')) process.stdout.write(`kept stores and logs in ${work}\n`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
  if (!flag('no-store') && SERVERS.includes('ours')) await storeBench();
  if (!flag('no-ha')) await haBench();
  if (!flag('no-dledger')) await dledgerBench();
  if (!flag('no-grpc')) await grpcBench();
}

/** The master/slave part (issue #13): bench/ha.mjs, groups of the official broker and ours side by side. */
function haBench() {
  const args = [path.join(HERE, 'ha.mjs'), ...(QUICK ? ['--quick'] : []), ...(opt('only') ? [`--only=${opt('only')}`] : [])];
  process.stdout.write(`\n[ha] node ${args.map((a) => path.relative(ROOT, a) || a).join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: 'inherit', cwd: ROOT });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ha.mjs exited with ${code}`))));
  });
}

/** The DLedger part (issue #14): bench/dledger.mjs, 3-member groups of official 5.3.3 brokers and of ours. */
function dledgerBench() {
  const args = [path.join(HERE, 'dledger.mjs'), ...(QUICK ? ['--quick'] : []), ...(opt('only') ? [`--only=${opt('only')}`] : [])];
  process.stdout.write(`\n[dledger] node ${args.map((a) => path.relative(ROOT, a) || a).join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: 'inherit', cwd: ROOT });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`dledger.mjs exited with ${code}`))));
  });
}

/** The gRPC part (5.x clients): bench/grpc-bench.mjs, ours vs the official proxy + broker 5.3.3. */
function grpcBench() {
  const args = [path.join(HERE, 'grpc-bench.mjs'), ...(QUICK ? ['--quick'] : []), ...(opt('only') ? [`--only=${opt('only')}`] : [])];
  process.stdout.write(`\n[grpc] node ${args.map((a) => path.relative(ROOT, a) || a).join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: 'inherit', cwd: ROOT });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`grpc-bench.mjs exited with ${code}`))));
  });
}

/** The store part (issue: flush modes and recovery time): bench/store-recovery.mjs with this run's mode. */
function storeBench() {
  const args = [path.join(HERE, 'store-recovery.mjs'), '--full-rescan',
    ...(QUICK ? ['--size=256MiB', '--seconds=1'] : ['--size=2GiB', '--seconds=3'])];
  process.stdout.write(`\n[store] node ${args.map((a) => path.relative(ROOT, a) || a).join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: 'inherit', cwd: ROOT });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`store-recovery.mjs exited with ${code}`))));
  });
}

main().catch((e) => {
  process.stderr.write(`\nbench: ${e.stack ?? e.message}\n`);
  process.exit(1);
});
