import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatPrettyLine } from '../../src/common/logger.js';
import { runServerProcess } from '../helpers/process-server.js';
import { tempDir } from '../helpers/server.js';

describe('--pretty logs', () => {
  it('prints human-readable lines on stderr, the ready line alone on stdout', async () => {
    const store = tempDir('pretty');
    const server = await runServerProcess(['start', '--namesrvPort=0', '--listenPort=0', `--storePathRootDir=${store}`, '--pretty']);
    try {
      expect(server.readyLine).toMatch(/^rocketmq-ts ready: namesrv 127\.0\.0\.1:\d+, broker /);
      const port = server.namesrvAddr.split(':')[1];
      expect(await server.waitForLog(/namesrv started/)).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[namesrv\\] namesrv started port=${port}$`));
      expect(server.logs()).not.toMatch(/^\{"level"/m);
    } finally {
      expect(await server.stop()).toBe(0);
      fs.rmSync(store, { recursive: true, force: true });
    }
  });

  it('formats fields and errors', () => {
    const t = new Date(2026, 0, 2, 3, 4, 5, 6).getTime();
    expect(formatPrettyLine(JSON.stringify({ level: 40, time: t, component: 'acl', msg: 'request denied by ACL', peer: '127.0.0.1:5', code: 10, reason: 'No acl config for x' }))).toBe(
      '03:04:05.006 WARN  [acl] request denied by ACL peer=127.0.0.1:5 code=10 reason="No acl config for x"',
    );
    expect(formatPrettyLine(JSON.stringify({ level: 50, time: t, msg: 'boom', err: { message: 'bad', stack: 'Error: bad\n    at x' } }))).toBe('03:04:05.006 ERROR boom\n    Error: bad\n        at x');
    expect(formatPrettyLine('not json')).toBe('not json');
  });
});
