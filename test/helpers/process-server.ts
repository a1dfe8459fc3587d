import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';

const MAIN = path.resolve(import.meta.dirname, '../../dist/main.js');

/** `node dist/main.js ARGS` as a separate process: the ready line's addresses, its logs, events on log lines. */
export interface ServerProcess {
  readyLine: string;
  namesrvAddr: string;
  brokerAddr: string;
  child: ChildProcessWithoutNullStreams;
  /** Everything written to stderr (the JSON / pretty logs) so far. */
  logs(): string;
  /** Resolves with the first log line (existing or future) matching `re`. */
  waitForLog(re: RegExp): Promise<string>;
  stop(): Promise<number | null>;
}

export function runServerProcess(args: string[], readyTimeoutMs = 60_000, env?: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
  let err = '';
  let out = '';
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  const check = () => {
    for (const w of [...waiters]) {
      const line = err.split('\n').find((l) => w.re.test(l));
      if (line) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  child.stderr.on('data', (b: Buffer) => {
    err += b.toString();
    check();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line in ${readyTimeoutMs} ms:\n${err.slice(-3000)}`));
    }, readyTimeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before ready:\n${err.slice(-3000)}`));
    });
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const i = out.indexOf('\n');
      if (i < 0) return;
      clearTimeout(timer);
      const readyLine = out.slice(0, i);
      const ns = /namesrv (127\.0\.0\.1:\d+)/.exec(readyLine)?.[1] ?? '';
      const broker = /broker (127\.0\.0\.1:\d+)/.exec(readyLine)?.[1] ?? '';
      resolve({
        readyLine,
        namesrvAddr: ns,
        brokerAddr: broker,
        child,
        logs: () => err,
        waitForLog: (re) =>
          new Promise((r) => {
            waiters.push({ re, resolve: r });
            check();
          }),
        stop: () =>
          new Promise((r) => {
            if (child.exitCode !== null) return r(child.exitCode);
            child.once('exit', (code) => r(code));
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
