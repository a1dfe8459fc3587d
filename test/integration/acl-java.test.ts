import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer, tempDir } from '../helpers/server.js';

/**
 * ACL 1.0 with the stock Java client 4.9.8 (AclClientRPCHook): compat/java AclTest (tag "acl") against our broker
 * with aclEnable=true and compat/acl/plain_acl.yml. The same scenario runs against the official 4.9.8 broker with
 * `node compat/acl-official.mjs` (the expected remarks in AclTest are the official broker's).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('ACL 1.0: stock Java client 4.9.8 with credentials', () => {
  let server: TestServer;
  let home: string;

  beforeAll(async () => {
    home = tempDir('acl-home');
    fs.mkdirSync(path.join(home, 'conf'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'compat/acl/plain_acl.yml'), path.join(home, 'conf/plain_acl.yml'));
    server = await startTestServer({ aclEnable: true, rocketmqHome: home });
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('permits and denies each request as the official broker does', { timeout: 10 * 60_000 }, async () => {
    const res = await runScript('compat/java/run.sh', ['tag:acl', `-Dnamesrv=${server.namesrvAddr}`], 8 * 60_000);
    console.log(res.output.split('\n').filter((l) => /^(\[acl\]|scenarios:|FAIL |PASS )/.test(l)).join('\n'));
    expect(res.code, tail(res.output, 120)).toBe(0);
    expect(res.output).toMatch(/scenarios: 2 passed, 0 failed/);
  });
});
