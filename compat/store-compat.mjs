#!/usr/bin/env node
// Store-directory compatibility with the official Apache RocketMQ broker, both ways:
//   official-V→ours   the official broker V writes a store (stock Java client: StoreCompatTest phase "produce"), stops;
//                     our server starts on that very directory and the phase "consume" checks it
//   ours→official-V   the same the other way round
//
//   node compat/store-compat.mjs [--versions=5.3.3,4.9.8] [--directions=official-ours,ours-official]
//        [--unclean] (also the kill -9 variants: the writer is SIGKILLed instead of stopped)  [--only-unclean]
//        [--client=4.9.8] [--messages=200] [--ns-port=27876] [--broker-port=27911] [--json=FILE] [--keep]
//        [--commitlog-size=32768] [--cq-size=400]   (mappedFileSizeCommitLog / mappedFileSizeConsumeQueue of both)
//
// Writer and reader use the same ports (so offset msgIds, which hold the store host, stay valid across the move).
// Small files by default (32 KiB commit-log files, 20-entry consume-queue files), so a few hundred messages span
// several files of each kind (file names, BLANK end-of-file records, rolling). The official store root is
// DIR/store (official.sh layout: configs in DIR/home/conf, logs in DIR/logs). Run `npm run build` first.
// Exit 0 when every case passed, 1 otherwise, 2 on usage errors. Plain Node >= 20, no dependencies.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const COMPAT = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(COMPAT, '..');
const JAVA_RUN = path.join(COMPAT, 'java/run.sh');
const OFFICIAL = path.join(COMPAT, 'official/official.sh');
const MAIN = path.join(ROOT, 'dist/main.js');

function usage(msg) {
  if (msg) console.error(`store-compat: ${msg}`);
  console.error(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 14).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(2);
}

export function parseArgs(argv) {
  const o = {
    versions: '5.3.3,4.9.8', directions: 'official-ours,ours-official', unclean: false, onlyUnclean: false,
    client: '4.9.8', messages: '200', nsPort: '27876', brokerPort: '27911', json: '', keep: false, logDir: '',
    commitlogSize: '32768', cqSize: '400',
  };
  for (const a of argv) {
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(a);
    if (!m) usage(`unexpected argument ${a}`);
    const key = m[1].replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (key === 'help') usage();
    if (!(key in o)) usage(`unknown option --${m[1]}`);
    if (typeof o[key] === 'boolean') o[key] = m[2] === undefined ? true : m[2] !== 'false';
    else if (m[2] === undefined || m[2] === '') usage(`--${m[1]} needs a value`);
    else o[key] = m[2];
  }
  const versions = o.versions.split(',').map((s) => s.trim()).filter(Boolean);
  for (const v of versions) if (!/^\d+\.\d+\.(\d+|x)$/.test(v)) usage(`bad version ${v} (e.g. 4.9.8, 5.3.x)`);
  const directions = o.directions.split(',').map((s) => s.trim()).filter(Boolean);
  for (const d of directions) if (!['official-ours', 'ours-official'].includes(d)) usage(`bad direction ${d}`);
  const variants = o.onlyUnclean ? ['unclean'] : o.unclean ? ['clean', 'unclean'] : ['clean'];
  const cases = [];
  for (const version of versions) {
    for (const variant of variants) {
      for (const direction of directions) cases.push({ version, direction, unclean: variant === 'unclean' });
    }
  }
  const ns = Number(o.nsPort);
  const broker = Number(o.brokerPort);
  for (const p of [ns, broker]) if (!(p > 1024 && p < 32767)) usage(`ports must be 1025-32766, got ${p}`);
  const commitLogSize = Number(o.commitlogSize);
  const cqSize = Number(o.cqSize);
  if (!(Number.isSafeInteger(commitLogSize) && commitLogSize >= 8192)) usage(`bad --commitlog-size ${o.commitlogSize}`);
  if (!(Number.isSafeInteger(cqSize) && cqSize >= 20 && cqSize % 20 === 0)) usage(`--cq-size must be a multiple of 20, got ${o.cqSize}`);
  return { ...o, cases, ports: { ns, broker }, messages: Number(o.messages), commitLogSize, cqSize };
}

export function caseName(c) {
  const off = `official-${c.version}`;
  return `store:${c.direction === 'official-ours' ? `${off}→ours` : `ours→${off}`}${c.unclean ? ' (kill -9)' : ''}`;
}

// ------------------------------------------------------------------ processes

const children = new Set();
/** The server running right now (stopped on SIGINT/SIGTERM). */
let current = null;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs a command in its own process group, output appended to logFile; resolves { code, output }. */
function run(cmd, args, { logFile, cwd, env, timeoutMs = 0, onLine } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.add(child);
    const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
    log?.write(`\n==== ${new Date().toISOString()} ${cmd} ${args.join(' ')}\n`);
    let output = '';
    let partial = '';
    const feed = (b) => {
      const s = b.toString();
      log?.write(s);
      output += s;
      if (output.length > 2_000_000) output = output.slice(-1_000_000);
      partial += s;
      const lines = partial.split('\n');
      partial = lines.pop();
      for (const l of lines) onLine?.(l);
    };
    child.stdout.on('data', feed);
    child.stderr.on('data', feed);
    const timer = timeoutMs ? setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs) : null;
    child.on('error', (err) => {
      output += `\n${err}\n`;
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      children.delete(child);
      if (partial) onLine?.(partial);
      log?.end();
      resolve({ code: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 9) : 1), output });
    });
  });
}

function killGroup(child, sig) {
  try {
    process.kill(-child.pid, sig);
  } catch {
    try {
      child.kill(sig);
    } catch {
      /* gone */
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '0.0.0.0', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** Waits (up to 30 s) until the ports a broker pair binds are free: NS, B-2 (VIP), B, B+1 (HA). */
async function awaitPortsFree(ports) {
  const all = [ports.ns, ports.broker - 2, ports.broker, ports.broker + 1];
  for (let i = 0; i < 60; i++) {
    let ok = true;
    for (const p of all) if (!(await portFree(p))) ok = false;
    if (ok) return;
    await sleep(500);
  }
  throw new Error(`ports ${all.join(', ')} still in use after 30 s`);
}

// ------------------------------------------------------------------ servers

/** Official namesrv + broker via official.sh on DIR (store root DIR/store). */
class Official {
  constructor(version, dir, ports, logFile, sizes) {
    Object.assign(this, { version, dir, ports, logFile, sizes, label: `official-${version}` });
  }

  async start() {
    await awaitPortsFree(this.ports);
    const r = await run('bash', [OFFICIAL, 'start', this.version, this.dir, String(this.ports.ns), String(this.ports.broker)],
      {
        logFile: this.logFile,
        cwd: this.dir,
        // later lines win in broker.properties. transactionCheckInterval: official.sh's 3 s equals 5.x's
        // transactionOpBatchInterval (op records are written in 3 s batches), so a check round could find a
        // transaction the producer had just committed still open and check it again: a second commit
        env: {
          OFFICIAL_BROKER_EXTRA: [`mappedFileSizeCommitLog=${this.sizes.commitLog}`,
            `mappedFileSizeConsumeQueue=${this.sizes.cq}`, 'transactionCheckInterval=10000'].join('\n'),
        },
      });
    if (r.code !== 0 || !/^ready ns=/m.test(r.output)) throw new Error(`official.sh start ${this.version} failed (exit ${r.code}): ${tail(r.output)}`);
  }

  async stop() {
    const r = await run('bash', [OFFICIAL, 'stop', this.dir], { logFile: this.logFile, cwd: this.dir });
    if (r.code !== 0) throw new Error(`official.sh stop failed: ${tail(r.output)}`);
  }

  /** SIGKILL to the broker (its store keeps the abort file), then a normal stop of the nameserver. */
  async kill() {
    const f = path.join(this.dir, 'broker.pid');
    const pid = Number(fs.readFileSync(f, 'utf8').trim());
    if (pid > 0 && alive(pid)) {
      process.kill(pid, 'SIGKILL');
      while (alive(pid)) await sleep(100);
    }
    await this.stop();
  }
}

/** Our server (node dist/main.js start) on a given store root. */
class Ours {
  constructor(storeRoot, ports, logFile, sizes) {
    Object.assign(this, { storeRoot, ports, logFile, sizes, label: 'ours', proc: null });
  }

  async start() {
    await awaitPortsFree(this.ports);
    const args = [MAIN, 'start', `--namesrvPort=${this.ports.ns}`, `--listenPort=${this.ports.broker}`, '--grpcServerPort=0',
      `--storePathRootDir=${this.storeRoot}`, `--storePathCommitLog=${path.join(this.storeRoot, 'commitlog')}`,
      '--brokerIP1=127.0.0.1', '--brokerName=broker-a', '--brokerClusterName=DefaultCluster',
      `--mappedFileSizeCommitLog=${this.sizes.commitLog}`, `--mappedFileSizeConsumeQueue=${this.sizes.cq}`,
      '--enablePropertyFilter=true', '--transactionCheckInterval=2000'];
    const log = fs.createWriteStream(this.logFile, { flags: 'a' });
    log.write(`\n==== ${new Date().toISOString()} node ${args.join(' ')}\n`);
    const child = spawn(process.execPath, args, { cwd: this.storeRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.add(child);
    await new Promise((resolve, reject) => {
      let seen = '';
      let done = false;
      const timer = setTimeout(() => {
        killGroup(child, 'SIGKILL');
        finish(new Error(`no ready line after 120 s: ${tail(seen)}`));
      }, 120_000);
      const finish = (err) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const onData = (b) => {
        log.write(b);
        if (done) return;
        seen += b.toString();
        if (seen.length > 200_000) seen = seen.slice(-100_000);
        if (/rocketmq-ts ready: /.test(seen)) {
          this.proc = child;
          finish();
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('close', (code, signal) => {
        children.delete(child);
        log.end(`==== exited code=${code} signal=${signal}\n`);
        if (this.proc === child) this.proc = null;
        finish(new Error(`our server exited (code ${code}, signal ${signal}) before ready: ${tail(seen)}`));
      });
    });
  }

  async #end(sig) {
    const child = this.proc;
    if (!child) return;
    const closed = new Promise((r) => child.once('close', r));
    child.kill(sig);
    const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await closed;
    clearTimeout(t);
  }

  stop() {
    return this.#end('SIGTERM');
  }

  kill() {
    return this.#end('SIGKILL');
  }
}

function tail(s, n = 1500) {
  const t = (s ?? '').trim();
  return t.length > n ? `…${t.slice(-n)}` : t;
}

// ------------------------------------------------------------------ one case

/** The scenario phase against the server now running; resolves { ok, reason, seconds }. */
async function phase(ph, c, work, opts, logFile, progress) {
  const props = [`-Dnamesrv=127.0.0.1:${opts.ports.ns}`, `-Drocketmq.version=${opts.client}`, `-Dphase=${ph}`,
    `-DstateFile=${path.join(work, 'state.properties')}`, `-DstoreMessages=${opts.messages}`,
    ...(c.unclean ? ['-DstoreUnclean=true'] : []),
    // 4.9.x has no 5.x timer messages (TIMER_DELIVER_MS is just a property there)
    ...(c.version.startsWith('4.') ? ['-Dtimers=false'] : [])];
  let outcome = null;
  const r = await run('bash', [JAVA_RUN, 'tag:storecompat', ...props], {
    logFile, cwd: work, timeoutMs: 10 * 60_000,
    onLine: (l) => {
      const m = /^(PASS|FAIL|SKIP) (?:\w+#)?(storeCompat\w+)(?: \(([\d.]+)s\))?(?:: (.*))?/.exec(l);
      if (m && !(m[1] === 'SKIP')) {
        outcome = { status: m[1], name: m[2], seconds: m[3] ? Number(m[3]) : null, reason: m[4] ?? '' };
        progress(`  ${m[1]} ${m[2]}${m[3] ? ` (${m[3]}s)` : ''}${m[4] ? `: ${m[4]}` : ''}`);
      }
    },
  });
  if (!outcome) return { ok: false, reason: `${ph} phase reported no outcome (run.sh exited ${r.code}): ${tail(r.output, 300)}` };
  if (outcome.status !== 'PASS' || r.code !== 0) return { ok: false, reason: `${ph}: ${outcome.reason || `run.sh exited ${r.code}`}` };
  return { ok: true, seconds: outcome.seconds };
}

export async function runCase(c, opts, baseTmp, logDir, progress = () => {}) {
  const name = caseName(c);
  const slug = `${c.direction}-${c.version}${c.unclean ? '-kill9' : ''}`;
  const work = fs.mkdtempSync(path.join(baseTmp, `${slug}-`));
  const dir = path.join(work, 'server'); // official.sh STOREDIR; store root = DIR/store
  const storeRoot = path.join(dir, 'store');
  fs.mkdirSync(storeRoot, { recursive: true });
  const logFile = path.join(logDir, `${slug}.log`);
  const sizes = { commitLog: opts.commitLogSize, cq: opts.cqSize };
  const official = new Official(c.version, dir, opts.ports, logFile, sizes);
  const ours = new Ours(storeRoot, opts.ports, path.join(logDir, `${slug}-ours.log`), sizes);
  const [writer, reader] = c.direction === 'official-ours' ? [official, ours] : [ours, official];
  const t0 = Date.now();
  const steps = [];
  const step = async (label, fn) => {
    const s = Date.now();
    try {
      return await fn();
    } finally {
      steps.push(`${label} ${((Date.now() - s) / 1000).toFixed(1)}s`);
    }
  };
  let running = null;
  const use = (srv) => {
    running = srv;
    current = srv;
  };
  let result;
  try {
    progress(`${name}: starting ${writer.label} on ${storeRoot}`);
    use(writer);
    await step(`${writer.label} start`, () => writer.start());
    const p = await step('produce', () => phase('produce', c, work, opts, logFile, progress));
    if (!p.ok) throw new Error(p.reason);
    progress(`${name}: ${c.unclean ? 'SIGKILL to' : 'stopping'} ${writer.label}`);
    await step(`${writer.label} ${c.unclean ? 'kill -9' : 'stop'}`, () => (c.unclean ? writer.kill() : writer.stop()));
    use(null);
    progress(`${name}: starting ${reader.label} on the same store`);
    use(reader);
    await step(`${reader.label} start`, () => reader.start());
    const q = await step('consume', () => phase('consume', c, work, opts, logFile, progress));
    if (!q.ok) throw new Error(q.reason);
    result = { name, status: 'PASS', reason: '' };
  } catch (e) {
    result = { name, status: 'FAIL', reason: String(e.message ?? e) };
  } finally {
    if (running) await running.stop().catch((e) => steps.push(`stop failed: ${e.message}`));
    current = null;
  }
  result.seconds = +((Date.now() - t0) / 1000).toFixed(1);
  result.steps = steps;
  result.store = storeRoot;
  result.version = c.version;
  result.direction = c.direction;
  result.unclean = c.unclean;
  if (!opts.keep && result.status === 'PASS') fs.rmSync(work, { recursive: true, force: true });
  else result.kept = work;
  return result;
}

// ------------------------------------------------------------------ main

function progress(msg) {
  process.stdout.write(`[store-compat ${new Date().toTimeString().slice(0, 8)}] ${msg}\n`);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(MAIN)) usage('dist/main.js missing: run `npm run build` first');
  const logDir = opts.logDir || path.join(COMPAT, 'results', `store-compat-${new Date().toISOString().replace(/[:.]/g, '-')}-logs`);
  fs.mkdirSync(logDir, { recursive: true });
  const baseTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-storecompat-'));
  const onSignal = () => {
    for (const ch of children) killGroup(ch, 'SIGKILL');
    // official.sh leaves the JVMs running in the background: stop them by their pid files
    if (current instanceof Official) spawnSync('bash', [OFFICIAL, 'stop', current.dir], { stdio: 'ignore', timeout: 60_000 });
    if (!opts.keep) fs.rmSync(baseTmp, { recursive: true, force: true });
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const t0 = Date.now();
  for (const v of new Set(opts.cases.map((c) => c.version))) {
    const r = await run('bash', [OFFICIAL, 'fetch', v], { logFile: path.join(logDir, 'fetch.log'), cwd: baseTmp });
    if (r.code !== 0) usage(`official.sh fetch ${v} failed: ${tail(r.output, 500)}`);
  }
  const results = [];
  for (const c of opts.cases) {
    const r = await runCase(c, opts, baseTmp, logDir, progress);
    progress(`${r.status} ${r.name} (${r.seconds}s: ${r.steps.join(', ')})${r.reason ? `: ${r.reason.split('\n')[0]}` : ''}`);
    results.push(r);
  }
  const wall = +((Date.now() - t0) / 1000).toFixed(1);
  console.log('');
  const w = Math.max(...results.map((r) => r.name.length));
  for (const r of results) console.log(`${r.name.padEnd(w)}  ${r.status === 'PASS' ? 'pass' : 'FAIL'}  ${r.seconds}s${r.reason ? `  ${r.reason.split('\n')[0]}` : ''}`);
  const failed = results.filter((r) => r.status !== 'PASS').length;
  console.log(`store-compat: ${results.length - failed} passed, ${failed} failed; wall time ${wall}s; logs ${path.relative(ROOT, logDir)}/`);
  for (const r of results) if (r.kept) console.log(`  kept ${r.kept} (${r.name})`);
  if (opts.json) fs.writeFileSync(opts.json, `${JSON.stringify({ wallSeconds: wall, client: opts.client, results }, null, 2)}\n`);
  if (!results.some((r) => r.kept)) fs.rmSync(baseTmp, { recursive: true, force: true });
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`store-compat: ${e.stack ?? e}`);
    for (const ch of children) killGroup(ch, 'SIGKILL');
    process.exit(1);
  });
}
