import os from 'node:os';
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface RunResult {
  code: number;
  output: string;
}

/**
 * Runs a compat script asynchronously (the server under test lives in this process, so the event loop must
 * stay free) and collects its output. The tail of the output goes into assertion messages on failure.
 */
export function runScript(script: string, args: string[], timeoutMs: number, env?: Record<string, string>): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // cwd outside the repo: Java clients and mqadmin may drop local offset files into their working directory.
    const child = spawn('bash', [path.join(ROOT, script), ...args], {
      cwd: os.tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env ? { ...process.env, ...env } : process.env,
    });
    let output = '';
    const collect = (b: Buffer) => {
      output += b.toString();
      if (output.length > 400_000) output = output.slice(-200_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 137 : 1), output });
    });
  });
}

export function tail(text: string, lines = 80): string {
  return text.split('\n').slice(-lines).join('\n');
}
