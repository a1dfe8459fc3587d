import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MAX_LOGGED_ARRAY_ITEMS, MAX_LOGGED_STRING_CHARS, loggerOptions } from '../../src/common/logger.js';
import { REPO, ensureDist } from '../helpers/child-server.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter((l) => l !== ''));
      cb();
    },
  });
  return { lines, stream };
}

describe('log lines with client-sized fields', () => {
  it('cut long strings and long arrays, keep short fields and the caller\'s object as they are', () => {
    const { lines, stream } = capture();
    const log = pino(loggerOptions('info'), stream).child({ component: 'namesrv' });
    const fields = { brokerName: 'z'.repeat(70_000), brokerId: 0, cluster: 'DefaultCluster', keys: Array.from({ length: 100 }, (_, i) => `k${i}`) };
    log.info(fields, 'unregister broker');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThan(2_000);
    const o = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(o.component).toBe('namesrv');
    expect(o.msg).toBe('unregister broker');
    expect(o.brokerName).toBe(`${'z'.repeat(MAX_LOGGED_STRING_CHARS)}…(70000 chars)`);
    expect(o.brokerId).toBe(0);
    expect(o.cluster).toBe('DefaultCluster');
    expect(o.keys).toHaveLength(MAX_LOGGED_ARRAY_ITEMS + 1);
    expect((o.keys as string[]).at(-1)).toBe('…(100 items)');
    expect(fields.brokerName).toHaveLength(70_000); // not mutated
    expect(fields.keys).toHaveLength(100);
  });

  it('cut inside objects and arrays two levels down, and objects wider than the item limit', () => {
    const { lines, stream } = capture();
    const settings = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`key${i}`, i === 0 ? 'v'.repeat(9_000) : String(i)]));
    const err = new Error('boom');
    pino(loggerOptions('info'), stream).info({ settings, ignoredUnknownKeys: [['a'.repeat(5_000)]], err }, 'broker config updated');
    const o = JSON.parse(lines[0]!) as { settings: Record<string, string>; ignoredUnknownKeys: string[][]; err: { message: string } };
    expect(lines[0]!.length).toBeLessThan(3_000);
    expect(Object.keys(o.settings)).toHaveLength(MAX_LOGGED_ARRAY_ITEMS + 1);
    expect(o.settings.key0).toBe(`${'v'.repeat(MAX_LOGGED_STRING_CHARS)}…(9000 chars)`);
    expect(o.settings.key31).toBe('31');
    expect(o.settings['…']).toBe('(40 fields)');
    expect(o.ignoredUnknownKeys[0]![0]).toBe(`${'a'.repeat(MAX_LOGGED_STRING_CHARS)}…(5000 chars)`);
    expect(o.err.message).toBe('boom'); // errors go to pino's serializer as they are
    expect(settings.key0).toHaveLength(9_000);
  });

  it('leave a line with nothing long untouched', () => {
    const { lines, stream } = capture();
    pino(loggerOptions('info'), stream).warn({ topic: 'TopicA', queues: [1, 2, 3], name: 'x'.repeat(MAX_LOGGED_STRING_CHARS) }, 'create topic');
    const o = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(o).toMatchObject({ topic: 'TopicA', queues: [1, 2, 3], name: 'x'.repeat(MAX_LOGGED_STRING_CHARS), msg: 'create topic' });
  });

  it('apply to the server\'s own logger on stderr, JSON and pretty', () => {
    ensureDist();
    const logger = path.join(REPO, 'dist', 'common', 'logger.js');
    for (const pretty of [false, true]) {
      const script = `import { createLogger } from ${JSON.stringify(logger)};
        createLogger('info', { pretty: ${pretty} }).info({ brokerName: 'z'.repeat(70000) }, 'register broker');`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stderr).toContain('register broker');
      expect(r.stderr).toContain('…(70000 chars)');
      expect(r.stderr.length).toBeLessThan(2_000);
    }
  });
});
