// The real server (`node dist/main.js start`) as a child process, for tests that measure it from outside (RSS,
// handles) or kill it. dist/ is rebuilt first when src/ is newer.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const MAIN = path.join(REPO, 'dist', 'main.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when it is missing or older than src/ (tsc emits even when another file has a type error). */
export function ensureDist(): void {
  const stale = !fs.existsSync(MAIN) || fs.statSync(MAIN).mtimeMs < newestMtime(path.join(REPO, 'src'));
  if (!stale) return;
  const r = spawnSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'pipe', encoding: 'utf8' });
  if (!fs.existsSync(MAIN)) throw new Error(`npm run build produced no dist/main.js:\n${r.stdout}\n${r.stderr}`);
}

export interface ChildServer {
  child: ChildProcess;
  pid: number;
  namesrvAddr: string;
  brokerAddr: string;
  exited: Promise<ExitStatus>;
  /** Log lines (JSON, from stderr) whose msg contains `text`. */
  logged(text: string): Array<Record<string, unknown>>;
  /**
   * SIGTERM, then SIGKILL if it has not exited after `killAfterMs`; answers how it exited. A process still there
   * `giveUpAfterMs` after the SIGKILL (stuck in the kernel, e.g. on a disk) fails the call with its pid instead of
   * being waited for without end.
   */
  stop(opts?: StopOptions): Promise<ExitStatus>;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StopOptions {
  killAfterMs?: number;
  giveUpAfterMs?: number;
}

/** Ends `child` (SIGTERM, SIGKILL after `killAfterMs`) and waits for its exit at most `giveUpAfterMs` past the SIGKILL. */
export async function stopChild(child: ChildProcess, exited: Promise<ExitStatus>, opts: StopOptions = {}): Promise<ExitStatus> {
  const { killAfterMs = 20_000, giveUpAfterMs = 15_000 } = opts;
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill('SIGTERM');
  const killTimer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  let giveUpTimer: ReturnType<typeof setTimeout> | undefined;
  const giveUp = new Promise<undefined>((resolve) => {
    giveUpTimer = setTimeout(() => resolve(undefined), killAfterMs + giveUpAfterMs);
  });
  try {
    const status = await Promise.race([exited, giveUp]);
    if (!status) throw new Error(`the server (pid ${child.pid}) had not exited ${giveUpAfterMs / 1000} s after SIGKILL`);
    return status;
  } finally {
    clearTimeout(killTimer);
    clearTimeout(giveUpTimer);
  }
}

/**
 * Starts `rmq start` with `--key=value` args and resolves once it prints its ready line; a server not ready within
 * `readyTimeoutMs` is killed and the start fails with its log's tail.
 */
export function startChildServer(args: string[], main = MAIN, nodeArgs: string[] = [], readyTimeoutMs = 120_000): Promise<ChildServer> {
  const extra = process.env.RMQ_CHILD_NODE_ARGS ? process.env.RMQ_CHILD_NODE_ARGS.split(' ') : [];
  // The nameserver's KV table lives in the test's store, not in ~/namesrv (its default, as Java's): a fuzz run's
  // PUT_KV_CONFIG once grew that file to 1.8 MB, which every later start on this machine read.
  const store = args.find((a) => a.startsWith('--storePathRootDir='))?.slice('--storePathRootDir='.length);
  const kv = store && !args.some((a) => a.startsWith('--kvConfigPath=')) ? [`--kvConfigPath=${path.join(store, 'namesrv', 'kvConfig.json')}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...extra, main, 'start', '--listenPort=0', '--namesrvPort=0', '--brokerIP1=127.0.0.1', ...kv, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RMQ_LOG_LEVEL: process.env.RMQ_CHILD_LOG_LEVEL ?? 'info' },
  });
  const exited = new Promise<ExitStatus>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const lines: Array<Record<string, unknown>> = [];
  let partial = '';
  let tail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-8000);
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not JSON
      }
    }
    if (lines.length > 50_000) lines.splice(0, lines.length - 50_000);
  });
  return new Promise((resolve, reject) => {
    const readyTimer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server not ready within ${readyTimeoutMs} ms; its log's tail:\n${tail}`));
    }, readyTimeoutMs);
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const m = /rocketmq-ts ready: namesrv (\S+), broker (\S+) /.exec(out);
      if (!m) return;
      out = '';
      clearTimeout(readyTimer);
      resolve({
        child, pid: child.pid!, namesrvAddr: m[1]!, brokerAddr: m[2]!, exited,
        logged: (text) => lines.filter((l) => String(l.msg ?? '').includes(text)),
        stop: (opts) => stopChild(child, exited, opts),
      });
    });
    child.on('error', (err) => {
      clearTimeout(readyTimer);
      reject(err);
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(readyTimer);
      reject(new Error(`server exited (${code ?? signal}) before ready:\n${tail}`));
    });
  });
}

/** Resident set size of a process, bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** Open file descriptors of a process (Linux /proc). */
export function openFds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}
