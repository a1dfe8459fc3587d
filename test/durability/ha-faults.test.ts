// The short, seeded part of the master/slave fault tests (compat/ha-faults.mjs) in every `npm test`: groups of our
// real server processes (a nameserver, a master, a slave) under load from the stock ali-ons client;
//   sync-store-loss   kill -9 of a SYNC_MASTER (inSyncReplicas=2) and its store deleted: every acknowledged message
//                     is in the slave's commit log
//   slave-down        SYNC_MASTER, slaveTimeout=1000: a dead slave and a stalled one answer FLUSH_SLAVE_TIMEOUT
//                     within the configured time, the slave catches up when it goes on
// The seed is random per run and printed (RMQ_HA_SEED replays one); the long schedules and the official broker
// side by side are `npm run ha:faults`.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(repo, 'dist', 'main.js');
const SEED = Number(process.env.RMQ_HA_SEED ?? Math.floor(Math.random() * 2 ** 31));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

beforeAll(() => {
  if (!fs.existsSync(MAIN) || fs.statSync(MAIN).mtimeMs < newestMtime(path.join(repo, 'src'))) {
    const r = spawnSync('npm', ['run', 'build'], { cwd: repo, stdio: 'pipe', encoding: 'utf8' });
    if (!fs.existsSync(MAIN)) throw new Error(`npm run build produced no dist/main.js:\n${r.stdout}\n${r.stderr}`);
  }
}, 300_000);

function faults(scenarios: string, jsonFile: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [
      path.join(repo, 'compat/ha-faults.mjs'), '--servers=ours', `--scenarios=${scenarios}`, '--quick', `--seed=${SEED}`, `--json=${jsonFile}`,
    ], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b) => (output += b));
    child.stderr.on('data', (b) => (output += b));
    const timer = setTimeout(() => child.kill('SIGTERM'), 8 * 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
    });
  });
}

describe(`HA faults on our processes (seed ${SEED}; replay with RMQ_HA_SEED=${SEED})`, () => {
  it('SYNC_MASTER keeps every acknowledged message when the master and its store are lost; slow or dead slaves answer in time', async () => {
    const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-ha-faults-')), 'out.json');
    try {
      const res = await faults('sync-store-loss,slave-down', json);
      const tail = res.output.split('\n').slice(-30).join('\n');
      expect(res.code, `ha-faults exited ${res.code} (seed ${SEED}):\n${tail}`).toBe(0);
      const out = JSON.parse(fs.readFileSync(json, 'utf8')) as { results: Array<{ scenario: string; status: string; figures: Record<string, any> }> };
      const loss = out.results.find((r) => r.scenario === 'sync-store-loss')!;
      expect(loss.figures.acked).toBeGreaterThan(100);
      expect(loss.figures.missing).toBe(0);
      const down = out.results.find((r) => r.scenario === 'slave-down')!;
      expect(down.figures.deadSlave.statuses).toEqual({ FLUSH_SLAVE_TIMEOUT: 6 });
      expect(down.figures.deadSlave.maxMs).toBeLessThan(2500);
      expect(down.figures.afterResume.status).toBe('SEND_OK');
    } finally {
      fs.rmSync(path.dirname(json), { recursive: true, force: true });
    }
  }, 10 * 60_000);
});
