#!/usr/bin/env node
// `npm run bench`: the official Apache RocketMQ namesrv+broker and rocketmq-ts, one after the other on this machine,
// driven by the same stock-Java-client load (compat/bench), compared in one table (ratio = ours / official), plus
// this machine's loopback-TCP and disk limits. Results also go to bench/results/<date>.json.
//
//   npm run bench                      # default: warm-up + 3 runs per scenario (about 5-10 minutes)
//   npm run bench -- --quick           # 1 short run per scenario (about 2-3 minutes)
//   npm run bench -- --only=ours --profile   # rocketmq-ts under `node --cpu-prof`, prints the hot functions
//
// Options: --quick  --only=official|ours  --scenarios=sync1,sync16,sync64,async,batch16,size64k,consume,e2e
//          --profile (ours runs with --cpu-prof; its numbers then include profiler overhead)  --no-limits  --keep
//          --no-store (skip the store part: bench/store-recovery.mjs, SYNC_FLUSH vs ASYNC_FLUSH and recovery after
//          kill -9 of a 2 GiB store; 256 MiB with --quick; runs last, for ours only)
//          --no-ha (skip the master/slave part: bench/ha.mjs, SYNC/ASYNC_MASTER groups side by side; runs last)
//          --no-grpc (skip the gRPC part: bench/grpc-bench.mjs, the Java 5.x gRPC client against our endpoint and the
//          official proxy 5.3.3: sync sends, SimpleConsumer receive+ack (POP) vs the remoting pull consumer)
// Env:     BENCH_SECONDS (per run, default 5; quick 2)  BENCH_RUNS (3; quick 1)  BENCH_WARMUP (seconds, 5; quick 1)
//          BENCH_CONSUME_MSGS (backlog, 200000; quick 15000)  BENCH_PREFILL_SECONDS (cap on filling it, 30; quick 4)
//          BENCH_E2E_RATE (msg/s, 1000)  BENCH_ASYNC_INFLIGHT (256)
//          BENCH_OFFICIAL_HEAP / BENCH_OFFICIAL_NS_HEAP (broker / namesrv -Xms/-Xmx; default: the start scripts' JVM
//          options, 8g / 4g heaps, when they take at most 60% of RAM, else 1g / 256m)  BENCH_OFFICIAL_VERSION (4.9.8)
//          BENCH_OURS_ARGS (extra --key=value flags for `dist/main.js start`)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { diskLimit, tcpLimits } from './limits.mjs';
import { formatTop, topFunctions } from './cpuprofile-top.mjs';

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
const known = ['quick', 'profile', 'no-limits', 'no-store', 'no-ha', 'no-grpc', 'keep', 'help', 'only', 'scenarios'];
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
  ...officialJvm(),
  officialVersion: env.BENCH_OFFICIAL_VERSION || '4.9.8',
  oursArgs: (env.BENCH_OURS_ARGS ?? '').split(/\s+/).filter(Boolean),
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

const KiB = 1024;
const ALL_SCENARIOS = [
  { id: 'sync1', label: 'sync send 1 KiB, 1 thread', mode: 'send', size: KiB, args: { send: 'sync', threads: 1, size: KiB }, limit: { kind: 'echo', conc: 1, size: KiB } },
  { id: 'sync16', label: 'sync send 1 KiB, 16 threads', mode: 'send', size: KiB, args: { send: 'sync', threads: 16, size: KiB }, limit: { kind: 'echo', conc: 16, size: KiB } },
  { id: 'sync64', label: 'sync send 1 KiB, 64 threads', mode: 'send', size: KiB, args: { send: 'sync', threads: 64, size: KiB }, limit: { kind: 'echo', conc: 64, size: KiB } },
  { id: 'async', label: `async send 1 KiB, ${CFG.asyncInflight} in flight`, mode: 'send', size: KiB, args: { send: 'async', threads: 1, size: KiB, inflight: CFG.asyncInflight }, limit: { kind: 'echo', conc: CFG.asyncInflight, size: KiB } },
  { id: 'batch16', label: 'batch send 16 x 1 KiB, 16 threads', mode: 'send', size: KiB, args: { send: 'batch', threads: 16, size: KiB, batch: 16 }, limit: { kind: 'echo', conc: 16, size: 16 * KiB, per: 16 } },
  { id: 'size64k', label: 'sync send 64 KiB, 16 threads', mode: 'send', size: 64 * KiB, args: { send: 'sync', threads: 16, size: 64 * KiB }, limit: { kind: 'echo', conc: 16, size: 64 * KiB } },
  { id: 'consume', label: 'push consume 1 KiB, 16 queues (drain backlog)', mode: 'consume', size: KiB, args: { size: KiB, threads: 16, prefill: CFG.consumeMsgs, prefillSeconds: CFG.prefillSeconds, warmup: QUICK ? 0 : 1 }, limit: { kind: 'sink', size: KiB } },
  { id: 'e2e', label: `send->deliver 1 KiB at ${CFG.e2eRate} msg/s`, mode: 'e2e', size: KiB, args: { size: KiB, threads: 4, rate: CFG.e2eRate }, limit: null },
];
const wanted = opt('scenarios')?.split(',');
const SCENARIOS = wanted ? ALL_SCENARIOS.filter((s) => wanted.includes(s.id)) : ALL_SCENARIOS;
if (wanted) for (const w of wanted) if (!ALL_SCENARIOS.some((s) => s.id === w)) { process.stderr.write(`bench: unknown scenario ${w}\n`); process.exit(2); }

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
const fmt = (v, d = 0) => (v === undefined || v === null || Number.isNaN(v) ? '-' : Number(v).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const a = xs.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((x, y) => x - y);
  if (!a.length) return undefined;
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

// ------------------------------------------------------------------ /proc sampling

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
function procTicks(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime (fields 14, 15)
  } catch { return 0; }
}
function machineTicks() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return { busy: user + nice + system + irq + softirq + (steal || 0), all: user + nice + system + idle + iowait + irq + softirq + (steal || 0) };
}
function procMem(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0);
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
  } catch { return { rss: 0, anon: 0, file: 0 }; }
}
function memOf(pids) {
  const m = { rss: 0, anon: 0, file: 0 };
  for (const p of pids) { const x = procMem(p); m.rss += x.rss; m.anon += x.anon; m.file += x.file; }
  return m;
}
function snapshot(serverPids, driverPid) {
  return {
    t: performance.now(),
    server: serverPids.reduce((a, p) => a + procTicks(p), 0),
    driver: driverPid ? procTicks(driverPid) : 0,
    machine: machineTicks(),
  };
}

// ------------------------------------------------------------------ ports, processes

function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
async function pickPorts() {
  for (let i = 0; i < 200; i++) {
    const base = 12000 + Math.floor(Math.random() * 1250) * 16; // below the ephemeral range (32768+), as official.sh advises
    const ns = base;
    const broker = base + 8;
    const all = [ns, broker, broker - 2, broker + 1];
    let ok = true;
    for (const p of all) if (!(await portFree(p))) { ok = false; break; }
    if (ok) return { ns, broker };
  }
  throw new Error('no free ports');
}

/** Spawns a process and resolves at the first stdout line matching RE (rejects if it exits first / times out). */
function spawnUntil(cmd, args, opts, re, timeoutMs, onLine) {
  const p = spawn(cmd, args, opts);
  const ready = new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: p.stdout });
    let done = false;
    const timer = setTimeout(() => { if (!done) { done = true; reject(new Error(`${path.basename(cmd)}: not ready after ${timeoutMs / 1000}s`)); } }, timeoutMs);
    rl.on('line', (line) => {
      onLine?.(line);
      if (!done && re.test(line)) { done = true; clearTimeout(timer); resolve(line); }
    });
    p.on('exit', (code, sig) => { if (!done) { done = true; clearTimeout(timer); reject(new Error(`${path.basename(cmd)} exited (${code ?? sig}) before it was ready`)); } });
  });
  return { proc: p, ready };
}
function waitExit(p, ms) {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.once('exit', () => { clearTimeout(t); resolve(true); });
  });
}

// ------------------------------------------------------------------ the two servers

const REAL_JAVA = execFileSync('bash', ['-c', 'command -v java'], { encoding: 'utf8' }).trim();

async function startOfficial(work, ports, logFd) {
  const store = path.join(work, 'official');
  const t0 = performance.now();
  const { proc, ready } = spawnUntil('bash', [OFFICIAL_SH, 'start', CFG.officialVersion, store, String(ports.ns), String(ports.broker)], {
    stdio: ['ignore', 'pipe', logFd],
    env: { ...env, OFFICIAL_START_TIMEOUT: env.OFFICIAL_START_TIMEOUT ?? '170', PATH: `${path.join(HERE, 'official-java')}:${env.PATH}`, BENCH_REAL_JAVA: REAL_JAVA, BENCH_BROKER_JVM: CFG.brokerJvm, BENCH_NAMESRV_JVM: CFG.namesrvJvm,
      // the broker's own default file sizes (official.sh makes them small for the compatibility runs), as ours uses
      OFFICIAL_BROKER_EXTRA: `mappedFileSizeCommitLog=${1024 ** 3}\nmappedFileSizeConsumeQueue=${300000 * 20}\n${env.OFFICIAL_BROKER_EXTRA ?? ''}` },
  }, /^ready ns=/, 180000);
  return {
    name: 'official',
    t0,
    storeDir: store,
    ready: ready.then(async () => {
      const readyMs = performance.now() - t0;
      await waitExit(proc, 10000);
      const pids = ['namesrv', 'broker'].map((k) => Number(fs.readFileSync(path.join(store, `${k}.pid`), 'utf8').trim()));
      let brokerProperties;
      try { brokerProperties = fs.readFileSync(path.join(store, 'home/conf/broker.properties'), 'utf8'); } catch { /* older official.sh */ }
      let jvmArgs;
      try { jvmArgs = pids.map((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter((a) => /^-X(ms|mx|mn)|^-XX:\+AlwaysPreTouch$/.test(a)).join(' ')); } catch { /* gone */ }
      return { readyMs, pids, brokerProperties, jvmArgs };
    }),
    async stop() {
      try { execFileSync('bash', [OFFICIAL_SH, 'stop', store], { stdio: ['ignore', 'ignore', logFd] }); } catch (e) { log(`  official.sh stop failed: ${e.message}`); }
    },
  };
}

async function startOurs(work, ports, logFd, profileDir) {
  const store = path.join(work, 'ours');
  const args = [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    path.join(ROOT, 'dist/main.js'), 'start', `--namesrvPort=${ports.ns}`, `--listenPort=${ports.broker}`, '--grpcServerPort=0', `--storePathRootDir=${store}`, ...CFG.oursArgs,
  ];
  const t0 = performance.now();
  const { proc, ready } = spawnUntil(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', logFd] }, /rocketmq-ts ready/, 120000);
  return {
    name: 'ours',
    t0,
    storeDir: store,
    ready: ready.then(() => ({ readyMs: performance.now() - t0, pids: [proc.pid] })),
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      if (!(await waitExit(proc, 30000))) { log('  ours did not exit 30s after SIGTERM; sending SIGKILL'); proc.kill('SIGKILL'); await waitExit(proc, 5000); }
    },
    proc,
  };
}

// ------------------------------------------------------------------ the Java load driver

let CLASSPATH;
function javaArgs(work, extra) {
  const home = path.join(work, 'driver-home');
  fs.mkdirSync(home, { recursive: true });
  return [
    '-Xms256m', '-Xmx1g', '-XX:+UseG1GC', '-Djava.net.preferIPv4Stack=true', '-Dfile.encoding=UTF-8',
    `-Duser.home=${home}`, `-Drocketmq.client.logRoot=${path.join(work, 'driver-logs')}`, '-Drocketmq.client.logLevel=WARN',
    `-Drocketmq.client.localOffsetStoreDir=${path.join(home, '.rocketmq_offsets')}`,
    '-cp', CLASSPATH, 'bench.Driver', ...extra,
  ];
}

/** Runs one scenario's driver; samples server CPU around every run. → { runs: [...], error?, events } */
function runScenario(sc, server, pids, work, logFd) {
  const extra = ['--mode', sc.mode, '--namesrv', `127.0.0.1:${server.ports.ns}`, '--topic', `Bench_${sc.id}`,
    '--warmup', String(CFG.warmup), '--seconds', String(CFG.seconds), '--runs', String(CFG.runs)];
  for (const [k, v] of Object.entries(sc.args)) extra.push(`--${k}`, String(v));
  fs.writeSync(logFd, `\n== driver ${sc.id}: java ... bench.Driver ${extra.join(' ')}\n`);
  const p = spawn('java', javaArgs(work, extra), { stdio: ['ignore', 'pipe', logFd] });
  const out = { runs: [], phases: [] };
  let before = null;
  let lastShown = 0;
  const tag = `  [${server.name}] ${sc.id}`;
  const rl = readline.createInterface({ input: p.stdout });
  rl.on('line', (line) => {
    let ev;
    try { ev = JSON.parse(line); } catch { return; }
    if (ev.event === 'run-start') {
      before = snapshot(pids, p.pid);
    } else if (ev.event === 'run-end') {
      const after = snapshot(pids, p.pid);
      const r = ev.result;
      const secs = (after.t - before.t) / 1000;
      const serverTicks = after.server - before.server;
      const driverTicks = after.driver - before.driver;
      const machineBusy = after.machine.busy - before.machine.busy;
      const cpu = {
        serverCpuMs: (serverTicks * 1000) / CLK_TCK,
        usPerMsg: r.count > 0 ? (serverTicks * 1e6) / CLK_TCK / r.count : undefined,
        serverCpus: serverTicks / CLK_TCK / secs,
        driverCpus: driverTicks / CLK_TCK / secs,
        otherCpus: Math.max(0, machineBusy - serverTicks - driverTicks) / CLK_TCK / secs,
      };
      out.runs.push({ run: ev.run, ...r, cpu });
      log(`${tag} run ${ev.run}/${CFG.runs}: ${fmt(r.throughput)} msg/s` +
        (r.lat?.n ? `, p50 ${fmt(r.lat.p50, 2)} ms, p99 ${fmt(r.lat.p99, 2)} ms, max ${fmt(r.lat.max, 1)} ms` : '') +
        `, server CPU ${fmt(cpu.usPerMsg, 1)} us/msg (${fmt(cpu.serverCpus, 2)} cores; driver ${fmt(cpu.driverCpus, 2)}, other processes ${fmt(cpu.otherCpus, 2)})` +
        (r.errors ? `, ${r.errors} errors` : '') + (r.lastError ? ` (${r.lastError})` : ''));
    } else if (ev.event === 'progress') {
      const rate = ev.elapsedMs > 0 ? (ev.count * 1000) / ev.elapsedMs : 0;
      const line = `${tag} ${ev.label}: ${fmt(ev.count)} msgs, ${fmt(rate)}/s${ev.errors ? `, ${ev.errors} errors` : ''}`;
      if (TTY) status(line);
      else if (performance.now() - lastShown > 5000) { lastShown = performance.now(); log(line); }
    } else if (ev.event === 'warmup-start') {
      status(`${tag} warm-up ...`);
    } else if (ev.event === 'phase') {
      log(`${tag} ${ev.name} (up to ${fmt(ev.count)} msgs, at most ${CFG.prefillSeconds}s) ...`);
    } else if (ev.event === 'phase-end') {
      out.phases.push(ev);
      log(`${tag} ${ev.name}: ${fmt(ev.count)} msgs in ${fmt(ev.durationMs / 1000, 1)} s${ev.errors ? `, ${ev.errors} errors` : ''}`);
    } else if (ev.event === 'error') {
      out.error = ev.message;
      log(`${tag} driver error: ${ev.message}`);
    }
  });
  const budget = (CFG.warmup + CFG.runs * (CFG.seconds + 30) + CFG.prefillSeconds + 120) * 1000;
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

// ------------------------------------------------------------------ one server, all scenarios

async function benchServer(name, work) {
  const ports = await pickPorts();
  const logFile = path.join(work, `${name}.log`);
  const logFd = fs.openSync(logFile, 'a');
  const profileDir = name === 'ours' && CFG.profile ? path.join(HERE, 'results', `cpuprof-${RUN_DATE.replace(/:/g, '-')}`) : undefined;
  const res = { name, ports, logFile, scenarios: {} };
  log(`\n[${name}] starting (namesrv 127.0.0.1:${ports.ns}, broker 127.0.0.1:${ports.broker})${profileDir ? ' under --cpu-prof' : ''}`);
  const probe = await startProbe(work, ports);
  const server = name === 'official' ? await startOfficial(work, ports, logFd) : await startOurs(work, ports, logFd, profileDir);
  probe.go();
  server.ports = ports;
  let pids;
  try {
    const [r, first] = await Promise.all([server.ready, probe.ok]);
    pids = r.pids;
    res.pids = pids;
    res.readyMs = r.readyMs;
    if (r.brokerProperties) res.brokerProperties = r.brokerProperties;
    if (r.jvmArgs) res.heapArgs = { namesrv: r.jvmArgs[0], broker: r.jvmArgs[1] };
    res.firstSendMs = first.ev.event === 'probe-ok' ? first.at - server.t0 : undefined;
    if (first.ev.event !== 'probe-ok') res.startupError = first.ev.lastError;
    log(`[${name}] ready line after ${fmt(res.readyMs)} ms, first successful send after ${fmt(res.firstSendMs)} ms; pids ${pids.join(', ')}`);
  } catch (e) {
    res.error = e.message;
    log(`[${name}] FAILED to start: ${e.message} (log: ${logFile})`);
    probe.proc.kill('SIGKILL');
    await server.stop();
    return res;
  }
  const idle0 = snapshot(pids);
  await sleep(3000);
  const idle1 = snapshot(pids);
  res.idleCpus = (idle1.server - idle0.server) / CLK_TCK / ((idle1.t - idle0.t) / 1000);
  res.idleMem = memOf(pids);
  log(`[${name}] idle: CPU ${fmt(res.idleCpus, 3)} cores, RSS ${fmt(res.idleMem.rss / 1024, 1)} MiB (anon ${fmt(res.idleMem.anon / 1024, 1)}, file ${fmt(res.idleMem.file / 1024, 1)})`);
  const peak = { rss: 0, anon: 0, file: 0 };
  const sampler = setInterval(() => {
    const m = memOf(pids);
    for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
  }, 250);
  try {
    for (const sc of SCENARIOS) {
      if (!pids.every((p) => fs.existsSync(`/proc/${p}`))) { res.scenarios[sc.id] = { error: 'server process gone', runs: [] }; continue; }
      status(`  [${name}] ${sc.id} starting driver ...`);
      const ts = performance.now();
      res.scenarios[sc.id] = await runScenario(sc, server, pids, work, logFd);
      res.scenarios[sc.id].elapsedMs = performance.now() - ts;
    }
  } finally {
    clearInterval(sampler);
  }
  res.loadMem = peak;
  log(`[${name}] peak RSS under load ${fmt(peak.rss / 1024, 1)} MiB (anon ${fmt(peak.anon / 1024, 1)}, file ${fmt(peak.file / 1024, 1)})`);
  await server.stop();
  fs.closeSync(logFd);
  if (name === 'ours') {
    // Our store logs its counters at stop; the read paths matter for the consume scenario.
    const line = fs.readFileSync(logFile, 'utf8').split('\n').reverse().find((l) => l.includes('message store: stopped'));
    try {
      const st = JSON.parse(line);
      res.storeStats = { syncReads: st.syncReads, asyncReads: st.asyncReads, slowSyncReads: st.slowSyncReads, commitLogWriteCalls: st.commitLogWriteCalls };
      log(`[ours] store reads behind the in-memory tail: ${fmt(st.syncReads)} on the event loop, ${fmt(st.asyncReads)} in the thread pool (${fmt(st.slowSyncReads)} slow)`);
    } catch { /* no stop line (killed) */ }
  }
  if (profileDir) {
    const f = fs.existsSync(profileDir) ? fs.readdirSync(profileDir).filter((x) => x.endsWith('.cpuprofile')) : [];
    if (f.length) {
      const file = path.join(profileDir, f[0]);
      res.profile = { file, ...topFunctions(file, 25, ROOT) };
      log(formatTop(res.profile));
    } else log('  no .cpuprofile written (did the server exit cleanly?)');
  }
  return res;
}

// ------------------------------------------------------------------ report

function summarize(sr) {
  const runs = sr?.runs ?? [];
  if (!runs.length) return undefined;
  return {
    throughput: median(runs.map((r) => r.throughput)),
    mbps: median(runs.map((r) => r.mbps)),
    p50: median(runs.map((r) => r.lat?.n ? r.lat.p50 : undefined)),
    p99: median(runs.map((r) => r.lat?.n ? r.lat.p99 : undefined)),
    max: median(runs.map((r) => r.lat?.n ? r.lat.max : undefined)),
    usPerMsg: median(runs.map((r) => r.cpu?.usPerMsg)),
    otherCpus: median(runs.map((r) => r.cpu?.otherCpus)),
    firstMs: median(runs.map((r) => r.firstMs)),
    errors: runs.reduce((a, r) => a + (r.errors ?? 0), 0),
  };
}

function table(rows, header) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  const line = (r) => r.map((c, i) => (i < 2 ? String(c ?? '').padEnd(w[i]) : String(c ?? '').padStart(w[i]))).join('  ');
  return [line(header), w.map((x) => '-'.repeat(x)).join('  '), ...rows.map(line)].join('\n');
}

function report(result) {
  const off = result.servers.official;
  const ours = result.servers.ours;
  const ratio = (a, b) => (a === undefined || b === undefined || !b ? '-' : `${(a / b).toFixed(2)}x`);
  const rows = [];
  for (const sc of SCENARIOS) {
    const o = summarize(off?.scenarios?.[sc.id]);
    const u = summarize(ours?.scenarios?.[sc.id]);
    const failO = off && !o ? 'FAIL' : undefined;
    const failU = ours && !u ? 'FAIL' : undefined;
    const metrics = [
      ['msg/s', (s) => s?.throughput, 0],
      ...(sc.size >= 16 * KiB ? [['MB/s', (s) => s?.mbps, 1]] : []),
      ['p50 ms', (s) => s?.p50, 2],
      ['p99 ms', (s) => s?.p99, 2],
      ['max ms', (s) => s?.max, 1],
      ['server CPU us/msg', (s) => s?.usPerMsg, 1],
      ...(sc.mode === 'consume' ? [['first delivery after ms', (s) => s?.firstMs, 0]] : []),
    ];
    let first = true;
    for (const [m, get, d] of metrics) {
      if (sc.mode === 'consume' && /^(p50|p99|max) ms$/.test(m)) continue; // backlog drain: no per-message latency
      const a = get(o);
      const b = get(u);
      rows.push([first ? sc.label : '', m, failO ?? fmt(a, d), failU ?? fmt(b, d), ratio(b, a)]);
      first = false;
    }
    const errs = [o?.errors && `official ${o.errors} errors`, u?.errors && `ours ${u.errors} errors`].filter(Boolean);
    if (errs.length) rows.push(['', 'send/consume errors', o?.errors ?? '-', u?.errors ?? '-', '']);
  }
  const mib = (kb) => (kb ? kb / 1024 : undefined);
  rows.push(['start-up', 'ready line ms', fmt(off?.readyMs), fmt(ours?.readyMs), ratio(ours?.readyMs, off?.readyMs)]);
  rows.push(['', 'first send OK ms', fmt(off?.firstSendMs), fmt(ours?.firstSendMs), ratio(ours?.firstSendMs, off?.firstSendMs)]);
  rows.push(['idle server', 'CPU cores used', fmt(off?.idleCpus, 3), fmt(ours?.idleCpus, 3), ratio(ours?.idleCpus, off?.idleCpus)]);
  rows.push(['memory (all server processes)', 'idle RSS MiB', fmt(mib(off?.idleMem?.rss), 1), fmt(mib(ours?.idleMem?.rss), 1), ratio(ours?.idleMem?.rss, off?.idleMem?.rss)]);
  rows.push(['', 'idle RssAnon MiB', fmt(mib(off?.idleMem?.anon), 1), fmt(mib(ours?.idleMem?.anon), 1), ratio(ours?.idleMem?.anon, off?.idleMem?.anon)]);
  rows.push(['', 'peak RSS load MiB', fmt(mib(off?.loadMem?.rss), 1), fmt(mib(ours?.loadMem?.rss), 1), ratio(ours?.loadMem?.rss, off?.loadMem?.rss)]);
  rows.push(['', 'peak RssAnon load MiB', fmt(mib(off?.loadMem?.anon), 1), fmt(mib(ours?.loadMem?.anon), 1), ratio(ours?.loadMem?.anon, off?.loadMem?.anon)]);

  const out = [];
  out.push('');
  out.push(`rocketmq-ts vs official Apache RocketMQ ${CFG.officialVersion} — ${result.date}, ${result.machine.cpus} CPUs, ${fmt(result.machine.memMiB)} MiB RAM, ${result.mode} mode`);
  const heap = off?.heapArgs ? `broker ${off.heapArgs.broker}, namesrv ${off.heapArgs.namesrv}` : `broker ${CFG.brokerJvm}, namesrv ${CFG.namesrvJvm}`;
  out.push(`official: compat/official/official.sh (ASYNC_FLUSH, default 1 GiB commitlog files; broker.properties in the JSON); JVM: ${CFG.officialJvmProfile}: ${heap}`);
  out.push(`ours: node ${process.version} dist/main.js start (defaults${CFG.oursArgs.length ? ` + ${CFG.oursArgs.join(' ')}` : ''})${CFG.profile ? ' UNDER --cpu-prof (slower than normal)' : ''}`);
  out.push(`load: stock Java client 4.9.8 (compat/bench), ${CFG.runs} run(s) x ${CFG.seconds}s after ${CFG.warmup}s warm-up per scenario, medians; ratio = ours / official (throughput: higher is better; latency, CPU, memory, start-up: lower is better)`);
  out.push('');
  out.push(table(rows, ['scenario', 'metric', 'official', 'ours', 'ours/official']));

  // physical limits
  if (result.limits) {
    const L = result.limits;
    const lrows = [];
    for (const sc of SCENARIOS) {
      if (!sc.limit) continue;
      const lim = L.tcp.find((t) => t.kind === sc.limit.kind && t.size === sc.limit.size && (t.conc ?? 0) === (sc.limit.conc ?? 0));
      if (!lim) continue;
      const limMsgs = lim.msgsPerSec * (sc.limit.per ?? 1);
      const o = summarize(off?.scenarios?.[sc.id]);
      const u = summarize(ours?.scenarios?.[sc.id]);
      const what = lim.kind === 'sink' ? `loopback stream, ${sc.size / KiB} KiB frames` : `loopback req/resp, ${lim.conc} in flight, ${lim.size / KiB} KiB`;
      const share = (s) => (s?.throughput ? `${((100 * s.throughput) / limMsgs).toFixed(1)}%` : '-');
      const diskShare = (s) => (sc.mode === 'send' && s?.throughput ? `${((100 * s.throughput * sc.size) / (L.disk.mbps * 1e6)).toFixed(1)}%` : '-');
      lrows.push([sc.label, `${what}: ${fmt(limMsgs)} msg/s`, share(o), share(u), diskShare(o), diskShare(u)]);
    }
    out.push('');
    out.push(`physical limits on this machine: disk ${fmt(L.disk.mbps, 0)} MB/s sequential write+fdatasync (${L.disk.fsType}, ${L.disk.dir}); loopback RTT p50 ${fmt(L.tcp.find((t) => t.kind === 'echo' && t.conc === 1)?.p50Ms, 3)} ms (1 KiB, 1 in flight)`);
    out.push(table(lrows, ['scenario', 'TCP limit', 'official % TCP', 'ours % TCP', 'official % disk', 'ours % disk']));
  }
  // noise
  const others = [];
  for (const s of [off, ours]) for (const sc of Object.values(s?.scenarios ?? {})) for (const r of sc.runs ?? []) others.push(r.cpu?.otherCpus);
  const bg = median(others);
  out.push('');
  out.push(`background CPU used by other processes during the runs: median ${fmt(bg, 2)} of ${result.machine.cpus} cores` +
    (bg > 0.2 ? '  -> NOISY: other work competed for the CPUs; compare ratios with care' : ''));
  for (const s of [off, ours]) if (s?.error) out.push(`${s.name}: ${s.error} (log ${s.logFile})`);
  for (const s of [off, ours]) for (const [id, sc] of Object.entries(s?.scenarios ?? {})) if (sc.error) out.push(`${s.name} ${id}: ${sc.error}`);
  return out.join('\n');
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
    for (const name of SERVERS) {
      result.servers[name] = await benchServer(name, work);
    }
  } finally {
    result.elapsedSeconds = (performance.now() - t0) / 1000;
    result.machine.loadavgAtEnd = os.loadavg();
    const text = report(result);
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
