// The stock Java 4.9.8 load driver (compat/bench) as the group benchmarks use it (bench/ha.mjs, bench/dledger.mjs):
// its classpath, one driver process whose run-end results are collected, the median of a figure over runs.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { children } from '../compat/lib/servers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The java on PATH when the bench started (PATH may later name bench/official-java for official brokers). */
export const REAL_JAVA = execFileSync('bash', ['-c', 'command -v java'], { encoding: 'utf8' }).trim();

/** Builds the driver (compat/bench/build.sh) and resolves its classpath. */
export function classpath() {
  const build = path.join(ROOT, 'compat/bench/build.sh');
  return new Promise((resolve, reject) => {
    const p = spawn('bash', [build], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => (out += b));
    p.on('close', (code) => (code === 0 ? resolve(out.trim().split('\n').pop()) : reject(new Error(`build.sh exited ${code}`))));
  });
}

/**
 * One driver process; `done` resolves with its run-end results. `hooks.start` / `hooks.end` see each run begin and
 * end (what `end` returns joins that run's result: the HA bench's lag sampling); `log` prints each run's figures.
 */
export function driver(cp, work, args, { hooks = {}, log = () => undefined } = {}) {
  const home = path.join(work, 'driver-home');
  fs.mkdirSync(home, { recursive: true });
  const p = spawn(REAL_JAVA, ['-Xms256m', '-Xmx1g', '-XX:+UseG1GC', '-Djava.net.preferIPv4Stack=true', `-Duser.home=${home}`,
    `-Drocketmq.client.logRoot=${path.join(work, 'driver-logs')}`, '-Drocketmq.client.logLevel=WARN', '-cp', cp, 'bench.Driver', ...args],
  { stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(p);
  const runs = [];
  readline.createInterface({ input: p.stdout }).on('line', (line) => {
    let ev;
    try {
      ev = JSON.parse(line);
    } catch {
      return;
    }
    if (ev.event === 'run-start') hooks.start?.();
    if (ev.event === 'run-end') {
      runs.push({ ...ev.result, ...(hooks.end?.() ?? {}) });
      log(`    run ${ev.run}: ${Math.round(ev.result.throughput)} msg/s, p99 ${ev.result.lat?.p99?.toFixed(2)} ms${ev.result.errors ? `, ${ev.result.errors} not SEND_OK (${ev.result.lastError})` : ''}`);
    }
  });
  const done = new Promise((resolve) => p.on('close', () => {
    children.delete(p);
    resolve(runs);
  }));
  return { proc: p, done };
}

/** The median (the lower one of an even count); NaN for none. */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

/**
 * The flags and settings the group benchmarks (bench/ha.mjs, bench/dledger.mjs) share: `--quick`, `--name=value`,
 * and BENCH_SECONDS / BENCH_RUNS / BENCH_WARMUP / BENCH_OFFICIAL_HEAP with their quick and full defaults. The warm-up
 * is 30 s, not the main bench's 5: every group is fresh broker JVMs, and with 5 s the official SYNC runs still climbed
 * 1,205 -> 1,779 -> 4,322 msg/s (2026-12-02; with 30 s: 6,101 -> 6,854 -> 8,415).
 */
export function groupBenchArgs(argv = process.argv.slice(2), env = process.env) {
  const flag = (n) => argv.includes(`--${n}`);
  const opt = (n) => argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3);
  const quick = flag('quick');
  const num = (v, d) => (v === undefined || v === '' ? d : Number(v));
  const common = {
    seconds: num(env.BENCH_SECONDS, quick ? 2 : 5),
    runs: num(env.BENCH_RUNS, quick ? 1 : 3),
    warmup: num(env.BENCH_WARMUP, quick ? 1 : 30),
    heap: env.BENCH_OFFICIAL_HEAP || '1g',
  };
  return { flag, opt, quick, num, common };
}
