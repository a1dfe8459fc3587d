import { buildConfigs } from '../../src/cli/run.js';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/server.js';

const MAIN = path.resolve(import.meta.dirname, '../../dist/main.js');

describe('rmq CLI', () => {
  it('rejects a bad value with one line naming the key and exit status 2', () => {
    const r = spawnSync('node', [MAIN, 'start', '--listenPort=abc'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('listenPort');
  });

  it('rejects an unreadable config file and a bad enum value', () => {
    const a = spawnSync('node', [MAIN, 'broker', '-c', '/nonexistent/broker.conf'], { encoding: 'utf8' });
    expect(a.status).toBe(2);
    expect(a.stderr).toContain('/nonexistent/broker.conf');
    const b = spawnSync('node', [MAIN, 'start', '--flushDiskType=SOMETIMES'], { encoding: 'utf8' });
    expect(b.status).toBe(2);
    expect(b.stderr).toContain('flushDiskType');
    const c = spawnSync('node', [MAIN, 'start', '--messageDelayLevel=1s 5x'], { encoding: 'utf8' });
    expect(c.status).toBe(2);
    expect(c.stderr).toContain('messageDelayLevel');
  });

  it('starts namesrv + broker, prints one ready line, and stops cleanly on SIGTERM', async () => {
    const store = tempDir('cli');
    const conf = path.join(store, 'broker.conf');
    fs.writeFileSync(conf, 'brokerName=broker-cli\nbrokerClusterName=CliCluster\n# a comment\nmappedFileSizeCommitLog=1048576\n');
    const child = spawn('node', [MAIN, 'start', '-c', conf, '--namesrvPort=0', '--listenPort=0', `--storePathRootDir=${store}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (b) => {
          out += b.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code} before ready`)));
        setTimeout(() => reject(new Error('no ready line in 20 s')), 20_000);
      });
      expect(line).toMatch(/^rocketmq-ts ready: namesrv 127\.0\.0\.1:\d+, broker 127\.0\.0\.1:\d+ \(broker-cli, cluster CliCluster/);
      expect(line).toContain(store);
      const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
      expect(fs.existsSync(path.join(store, 'config', 'topics.json'))).toBe(true);
      expect(fs.existsSync(path.join(store, 'abort'))).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(store, { recursive: true, force: true });
    }
  });
});

describe('rmq start configuration', () => {
  it('hands the embedded nameserver its own keys instead of ignoring them as unknown broker keys', () => {
    const warnings: unknown[] = [];
    const logger = { warn: (o: unknown) => warnings.push(o) } as unknown as Parameters<typeof buildConfigs>[2];
    const { broker, namesrv } = buildConfigs('start', {
      extraArgs: ['--kvConfigPath=/tmp/kv-test/kv.json', '--scanNotActiveBrokerInterval=7000', '--brokerName=b1', '--noSuchKey=1'],
    }, logger);
    expect(namesrv.kvConfigPath).toBe('/tmp/kv-test/kv.json');
    expect(namesrv.scanNotActiveBrokerInterval).toBe(7000);
    expect(broker.brokerName).toBe('b1');
    expect(warnings).toEqual([{ keys: ['noSuchKey'] }]);
  });
});
