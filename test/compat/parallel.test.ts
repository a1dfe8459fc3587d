// compat/parallel.mjs: several runner.mjs matrices at once (npm test runs ours and the official server side by side).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without type declarations
import { runLabel, splitRuns } from '../../compat/parallel.mjs';

const SCRIPT = path.resolve(__dirname, '../../compat/parallel.mjs');

describe('compat/parallel.mjs', () => {
  it('splits the arguments at each --', () => {
    expect(splitRuns(['--', '--server=ours', '--', '--server=official', '--clients=go'])).toEqual([['--server=ours'], ['--server=official', '--clients=go']]);
    expect(() => splitRuns(['--server=ours'])).toThrow(/before the first/);
    expect(() => splitRuns(['--', '--server=ours', '--'])).toThrow(/usage/);
    expect(() => splitRuns([])).toThrow(/usage/);
  });

  it('names each run by its server', () => {
    expect(runLabel(['--server=ours'], 0)).toBe('ours');
    expect(runLabel(['--server=official', '--official-version=5.3.3'], 1)).toBe('official-5.3.3');
    expect(runLabel(['--clients=go'], 0)).toBe('ours');
    expect(runLabel(['--server=ours'], 1)).toBe('ours-1');
  });

  it('prefixes progress, prints each matrix whole and fails when one run fails', () => {
    // a stand-in runner: progress lines on both streams, then a matrix, then the exit code its arguments ask for
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parallel-test-'));
    const fake = path.join(dir, 'fake-runner.mjs');
    fs.writeFileSync(fake, [
      "const a = process.argv.slice(2);",
      "const code = Number(a.find((x) => x.startsWith('--exit='))?.slice(7) ?? 0);",
      "const name = a.find((x) => x.startsWith('--server='))?.slice(9);",
      "process.stdout.write(`step one of ${name}\\n`);",
      "process.stderr.write(`warning of ${name}\\n`);",
      "process.stdout.write(`\\n== compat matrix: server ${name}\\nrow 1 PASS\\nrow 2 PASS\\n`);",
      // a two-byte character split between two writes, and a last line without its newline
      "const x = Buffer.from('java × ' + name);",
      "process.stderr.write(x.subarray(0, 6), () => setTimeout(() => process.stderr.write(x.subarray(6), () => process.exit(code)), 50));",
    ].join('\n'));
    try {
      const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], {
        env: { ...process.env, COMPAT_PARALLEL_RUNNER: fake }, encoding: 'utf8', timeout: 30_000,
      });
      const ok = run('--', '--server=ours', '--', '--server=official', '--official-version=5.3.3');
      expect(ok.status).toBe(0);
      expect(ok.stdout).toContain('[ours] step one of ours\n');
      expect(ok.stdout).toContain('[official-5.3.3] step one of official\n');
      expect(ok.stderr).toContain('[official-5.3.3] warning of official\n');
      expect(ok.stderr).toContain('[ours] java × ours\n');
      expect(ok.stderr).toContain('[official-5.3.3] java × official\n');
      expect(ok.stdout).toContain('\n== compat matrix: server ours\nrow 1 PASS\nrow 2 PASS\n');
      expect(ok.stdout).toContain('\n== compat matrix: server official\nrow 1 PASS\nrow 2 PASS\n');
      expect(ok.stdout).toMatch(/\[ours\] runner\.mjs --server=ours: exit 0 after \d+ s/);

      const bad = run('--', '--server=ours', '--', '--server=official', '--exit=1');
      expect(bad.status).toBe(1);
      expect(bad.stdout).toMatch(/\[official\] runner\.mjs --server=official --exit=1: exit 1/);
      expect(run('--server=ours').status).toBe(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
