// Processes, ports and the two server kinds (ours as `node dist/main.js start`, the official broker through
// official/official.sh), shared by the compat runner and the scripts beside it. Plain Node >= 20.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const COMPAT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(COMPAT, '..');
const OFFICIAL = path.join(COMPAT, 'official/official.sh');

// ------------------------------------------------------------------ processes

export const children = new Set();

/**
 * Servers started and not yet stopped. Official brokers outlive official.sh (nohup), so a script that dies must
 * stop these itself: stopAllServers() from its crash handler.
 */
export const liveServers = new Set();

export async function stopAllServers() {
  await Promise.allSettled([...liveServers].map((s) => s.stop()));
}

/**
 * Runs a command, tee-ing its output into `logFile` and handing each complete line to `onLine`.
 * Resolves { code, output }.
 */
export function run(cmd, args, { logFile, onLine, env, timeoutMs = 0, cwd = ROOT } = {}) {
  return new Promise((resolve) => {
    // own process group: a timeout or Ctrl-C ends the whole tree (run.sh -> java, go test -> test binary)
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.add(child);
    const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
    let output = '';
    const partial = { out: '', err: '' };
    const feed = (which) => (s) => {
      log?.write(s);
      output += s;
      if (output.length > 4_000_000) output = output.slice(-2_000_000);
      partial[which] += s;
      const lines = partial[which].split('\n');
      partial[which] = lines.pop();
      for (const l of lines) onLine?.(l, which);
    };
    // decoded as streams: a character split between two reads ('×' in the runner's column names) stays whole
    child.stdout.setEncoding('utf8').on('data', feed('out'));
    child.stderr.setEncoding('utf8').on('data', feed('err'));
    const timer = timeoutMs ? setTimeout(() => killTree(child, 'SIGKILL'), timeoutMs) : null;
    child.on('error', (err) => {
      output += `\n${err}\n`;
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      children.delete(child);
      for (const w of ['out', 'err']) if (partial[w]) onLine?.(partial[w], w);
      onLine?.(null, 'out');
      log?.end();
      resolve({ code: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 9) : 1), output });
    });
  });
}

export function killTree(child, sig) {
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

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------ ports

function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    // 0.0.0.0: also collides with anything bound to 127.0.0.1:port (4.9.x brokers bind the wildcard)
    s.listen({ port, host: '0.0.0.0', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/**
 * Nameserver port N and broker port B (B-2 = VIP, B+1 = HA, B+2 = our gRPC endpoint also free), all below 32768, none of `exclude`
 * (ports picked for a server that is not listening yet).
 */
export async function pickPorts(exclude = []) {
  for (let i = 0; i < 200; i++) {
    const ns = 20000 + Math.floor(Math.random() * 6000);
    const b = ns + 1000 + Math.floor(Math.random() * 5000);
    const all = [ns, b - 2, b - 1, b, b + 1, b + 2];
    let ok = !all.some((p) => exclude.includes(p));
    for (const p of all) if (ok && !(await portFree(p))) ok = false;
    if (ok) return { ns, broker: b, grpc: b + 2 };
  }
  throw new Error('no free ports found below 32768');
}

// ------------------------------------------------------------------ official logs

/**
 * Appends the WARN/ERROR lines (and exception lines) the official JVMs wrote under `srcDirs` to `destFile` in the
 * runner's log dir, which outlives the temp store: a failed run against the reference can be explained afterwards
 * (e.g. Netty OutOfDirectMemoryError in broker.log). `seen` maps file -> bytes already read (restarts append).
 * Returns how many of those lines name an OutOfDirectMemoryError / OutOfMemoryError.
 */
export function keepOfficialWarnings(srcDirs, destFile, seen) {
  const files = [];
  const walk = (d) => {
    let entries = [];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (/\.(log|out)$/.test(e.name)) files.push(f);
    }
  };
  for (const d of srcDirs) walk(d);
  const out = [];
  let outOfMemory = 0;
  for (const f of files.sort()) {
    let text;
    try {
      const buf = fs.readFileSync(f);
      text = buf.subarray(Math.min(seen.get(f) ?? 0, buf.length)).toString('utf8');
      seen.set(f, buf.length);
    } catch {
      continue;
    }
    const lines = text.split('\n').filter((l) => /\b(WARN|ERROR)\b|Exception|Error\b/.test(l));
    outOfMemory += lines.filter((l) => /OutOf(Direct)?MemoryError/.test(l)).length;
    const kept = lines.length > 2000 ? lines.slice(-2000) : lines;
    out.push(`==== ${f}: ${lines.length} WARN/ERROR/exception lines${kept.length < lines.length ? ' (the last 2000)' : ''}`, ...kept);
  }
  if (out.length) fs.appendFileSync(destFile, `${out.join('\n')}\n`);
  return outOfMemory;
}

// ------------------------------------------------------------------ servers

/** All ports a server uses (for pickPorts' exclude list). */
export const usedPorts = (ports) => (ports ? [ports.ns, ports.broker - 2, ports.broker - 1, ports.broker, ports.broker + 1, ports.broker + 2] : []);

/**
 * Our server as a separate process: node dist/main.js start ... (SIGTERM to stop). `name` names its store and log
 * (several may run at once), `extraArgs` are more --key=value settings. With `namesrvAddr` it runs
 * `node dist/main.js broker -n ADDR` instead (a broker joining another server's nameserver, e.g. a slave).
 */
export class OursServer {
  constructor(tmp, logDir, { name = 'ours', extraArgs = [], namesrvAddr = null, namesrvOnly = false } = {}) {
    this.label = 'ours';
    this.name = name;
    this.extraArgs = extraArgs;
    this.namesrvAddr = namesrvAddr;
    // `node dist/main.js namesrv --listenPort=ports.ns` alone (a nameserver that outlives the brokers it serves)
    this.namesrvOnly = namesrvOnly;
    this.store = path.join(tmp, `store-${name}`);
    this.logFile = path.join(logDir, `server-${name}.log`);
    this.proc = null;
  }

  async start() {
    if (!this.ports) this.ports = await pickPorts();
    const main = path.join(ROOT, 'dist/main.js');
    if (!fs.existsSync(main)) throw new Error('dist/main.js missing: run `npm run build` first');
    fs.mkdirSync(this.store, { recursive: true });
    // the embedded nameserver keeps its KV config in this store, never in ~/namesrv
    const head = this.namesrvAddr ? [main, 'broker', '-n', this.namesrvAddr]
      : [main, 'start', `--namesrvPort=${this.ports.ns}`, `--kvConfigPath=${path.join(this.store, 'kvConfig.json')}`];
    const args = this.namesrvOnly
      ? [main, 'namesrv', `--listenPort=${this.ports.ns}`, `--kvConfigPath=${path.join(this.store, 'kvConfig.json')}`, ...this.extraArgs]
      : [...head, `--listenPort=${this.ports.broker}`,
        `--storePathRootDir=${this.store}`, `--grpcServerPort=${this.ports.grpc ?? 0}`, '--transactionCheckInterval=2000', '--enablePropertyFilter=true',
        // RecallMessage is off by default in both servers (5.3.3's BrokerConfig); the scenarios recall timers
        '--recallMessageEnable=true', ...this.extraArgs];
    for (let attempt = 1; ; attempt++) {
      const res = await this.#launch(args);
      if (res === true) return;
      if (/EADDRINUSE/.test(res) && attempt < 6) {
        await sleep(2000);
        continue;
      }
      throw new Error(`our server did not start: ${res.slice(-2000)}`);
    }
  }

  #launch(args) {
    return new Promise((resolve) => {
      const log = fs.createWriteStream(this.logFile, { flags: 'a' });
      log.write(`\n==== ${new Date().toISOString()} node ${args.join(' ')}\n`);
      const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      children.add(child);
      let seen = '';
      let done = false;
      const finish = (v) => {
        if (!done) {
          done = true;
          clearTimeout(timer);
          resolve(v);
        }
      };
      const timer = setTimeout(() => {
        killTree(child, 'SIGKILL');
        finish(`no ready line after 90 s\n${seen}`);
      }, 90_000);
      const onData = (b) => {
        log.write(b);
        if (done) return;
        seen += b.toString();
        if (seen.length > 200_000) seen = seen.slice(-100_000);
        if (/rocketmq-ts ready: /.test(seen)) {
          this.proc = child;
          liveServers.add(this);
          finish(true);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('close', (code, signal) => {
        children.delete(child);
        log.end(`==== exited code=${code} signal=${signal}\n`);
        if (this.proc === child) this.proc = null;
        finish(`exited (code ${code}, signal ${signal}) before ready\n${seen}`);
      });
    });
  }

  async stop() {
    liveServers.delete(this);
    const child = this.proc;
    if (!child) return;
    const closed = new Promise((r) => child.once('close', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await closed;
    clearTimeout(t);
  }

  /** kill -9 (a crash: nothing is flushed or unregistered). */
  async kill() {
    const child = this.proc;
    if (!child) return;
    const closed = new Promise((r) => child.once('close', r));
    killTree(child, 'SIGKILL');
    await closed;
  }

  get pid() {
    return this.proc?.pid ?? null;
  }

  async restart() {
    await this.stop();
    await this.start();
  }

  describe() {
    return `rocketmq-ts (dist/main.js${this.extraArgs.length ? ` ${this.extraArgs.join(' ')}` : ''}) ` +
      `ns=127.0.0.1:${this.ports.ns} broker=127.0.0.1:${this.ports.broker} store=${this.store}`;
  }
}

/**
 * Official Apache RocketMQ through compat/official/official.sh (start/stop on one store dir). `name` names its store
 * and log, `extra` are more broker.properties lines (OFFICIAL_BROKER_EXTRA).
 */
export class OfficialServer {
  constructor(version, tmp, logDir, { name = `official-${version}`, extra = '', namesrvAddr = null, env = {} } = {}) {
    this.version = version;
    // more environment for official.sh (e.g. the benchmarks' JVM options wrapper)
    this.env = env;
    this.label = `official-${version}`;
    this.extra = extra;
    // With namesrvAddr: no nameserver of its own; the broker registers there (a slave joining another group).
    this.namesrvAddr = namesrvAddr;
    this.store = path.join(tmp, `store-${name}`);
    this.logFile = path.join(logDir, `server-${name}.log`);
    this.warnFile = path.join(logDir, `server-${name}-warnings.log`);
    this.logsSeen = new Map();
    /** Lines naming an OutOf(Direct)MemoryError in its logs so far (counted at each stop). */
    this.outOfMemoryLines = 0;
    this.started = false;
  }

  async prepare() {
    const r = await run('bash', [OFFICIAL, 'fetch', this.version], { logFile: this.logFile });
    if (r.code !== 0) throw new Error(`official.sh fetch ${this.version} failed:\n${r.output.slice(-2000)}`);
    const v = await run('bash', [OFFICIAL, 'version', this.version]);
    this.concrete = v.output.trim().split('\n').pop();
  }

  async start() {
    if (!this.ports) this.ports = await pickPorts();
    fs.mkdirSync(this.store, { recursive: true });
    const env = { ...this.env, ...(this.extra ? { OFFICIAL_BROKER_EXTRA: this.extra } : {}) };
    if (this.namesrvAddr) Object.assign(env, { OFFICIAL_NO_NAMESRV: '1', OFFICIAL_BROKER_NAMESRV: this.namesrvAddr });
    // listed before official.sh runs: a Ctrl-C / SIGTERM during a start must stop the JVMs it already spawned
    // (official.sh writes their pid files at once; a SIGTERM mid-start left the official namesrv running)
    this.starting = true;
    liveServers.add(this);
    const r = await run('bash', [OFFICIAL, 'start', this.version, this.store, String(this.ports.ns), String(this.ports.broker)],
      { logFile: this.logFile, env });
    if (r.code !== 0 || !/^ready ns=/m.test(r.output)) {
      throw new Error(`official.sh start failed (exit ${r.code}):\n${r.output.slice(-2000)}`);
    }
    this.starting = false;
    this.started = true;
  }

  async stop() {
    liveServers.delete(this);
    if (!this.started && !this.starting) return;
    await run('bash', [OFFICIAL, 'stop', this.store], { logFile: this.logFile });
    this.started = false;
    this.starting = false;
    this.outOfMemoryLines += keepOfficialWarnings([path.join(this.store, 'logs'), path.join(this.store, 'home/logs')], this.warnFile, this.logsSeen);
  }

  /** kill -9 of the broker (its nameserver, if any, stays up); restartBroker() brings it back on its store. */
  async kill() {
    if (!this.started) return;
    await run('bash', [OFFICIAL, 'kill', this.store], { logFile: this.logFile });
    this.brokerKilled = true;
  }

  /** The broker's process id (official.sh's broker.pid), null when it is not running. */
  get pid() {
    if (!this.started || this.brokerKilled) return null;
    try {
      return Number(fs.readFileSync(path.join(this.store, 'broker.pid'), 'utf8').trim()) || null;
    } catch {
      return null;
    }
  }

  /** Starts the broker again on its store after kill(), registering with the same nameserver as before. */
  async restartBroker() {
    const env = { ...this.env, OFFICIAL_NO_NAMESRV: '1', OFFICIAL_BROKER_NAMESRV: this.namesrvAddr ?? `127.0.0.1:${this.ports.ns}` };
    if (this.extra) env.OFFICIAL_BROKER_EXTRA = this.extra;
    const r = await run('bash', [OFFICIAL, 'start', this.version, this.store, String(this.ports.ns), String(this.ports.broker)],
      { logFile: this.logFile, env });
    if (r.code !== 0 || !/^ready ns=/m.test(r.output)) throw new Error(`official.sh start (broker again) failed (exit ${r.code}):\n${r.output.slice(-2000)}`);
    this.brokerKilled = false;
  }

  async restart() {
    await this.stop();
    await this.start();
  }

  describe() {
    return `Apache RocketMQ ${this.concrete ?? this.version} (official.sh${this.extra ? `, ${this.extra.replace(/\n/g, ' ')}` : ''}) ns=127.0.0.1:${this.ports.ns} ` +
      `broker=127.0.0.1:${this.ports.broker} store=${this.store}`;
  }
}

/**
 * An official rocketmq-proxy (5.x, cluster mode) in front of a nameserver (ours or the official one), through
 * official/official.sh proxy-start / proxy-stop. Its gRPC and remoting ports bind 0.0.0.0, below 32768.
 */
export class OfficialProxy {
  constructor(version, tmp, logDir, name) {
    this.version = version;
    this.dir = path.join(tmp, `proxy-${name}`);
    this.logFile = path.join(logDir, `proxy-${name}.log`);
    this.warnFile = path.join(logDir, `proxy-${name}-warnings.log`);
    this.outOfMemoryLines = 0;
    this.started = false;
  }

  /** `extra`: more rmq-proxy.json members (official.sh OFFICIAL_PROXY_EXTRA), e.g. the TLS files. */
  async start(namesrv, exclude = [], extra = '') {
    for (let attempt = 0; attempt < 50 && !this.ports; attempt++) {
      const grpc = 20000 + Math.floor(Math.random() * 12000);
      if (exclude.includes(grpc) || exclude.includes(grpc + 1)) continue;
      if ((await portFree(grpc)) && (await portFree(grpc + 1))) this.ports = { grpc, remoting: grpc + 1 };
    }
    if (!this.ports) throw new Error('no free proxy ports below 32768');
    fs.mkdirSync(this.dir, { recursive: true });
    const r = await run('bash', [OFFICIAL, 'proxy-start', this.version, this.dir, namesrv, String(this.ports.grpc), String(this.ports.remoting)],
      { logFile: this.logFile, env: extra ? { OFFICIAL_PROXY_EXTRA: extra } : {} });
    if (r.code !== 0 || !/^ready proxy /m.test(r.output)) throw new Error(`official.sh proxy-start failed (exit ${r.code}):\n${r.output.slice(-2000)}`);
    this.started = true;
    return `127.0.0.1:${this.ports.grpc}`;
  }

  async stop() {
    if (!this.started) return;
    await run('bash', [OFFICIAL, 'proxy-stop', this.dir], { logFile: this.logFile });
    this.started = false;
    this.outOfMemoryLines += keepOfficialWarnings([path.join(this.dir, 'logs')], this.warnFile, new Map());
  }
}
