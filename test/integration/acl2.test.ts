import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

/**
 * ACL 2.0 with stock tools: users and ACLs created by mqadmin 5.3.3 (compat/acl/acl2-setup.sh, signed as the
 * initAuthenticationUser super user), then the stock Java client 5.5.0 with credentials (compat/java Acl2Test), then
 * the rest of mqadmin's user/ACL commands. `node compat/acl2-official.mjs` runs the same against official 5.3.3.
 */
const SUPER = { MQADMIN_VERSION: '5.3.3', MQADMIN_ACCESS_KEY: 'rocketmq', MQADMIN_SECRET_KEY: '12345678' };

describe('ACL 2.0 with mqadmin 5.3.3 and the Java 5.5.0 client', () => {
  let server: TestServer;
  const mq = async (env: Record<string, string>, ...args: string[]) => (await runScript('compat/mqadmin/run.sh', [...args, '-n', server.namesrvAddr], 90_000, env)).output;

  beforeAll(async () => {
    server = await startTestServer({
      authenticationEnabled: true,
      authorizationEnabled: true,
      initAuthenticationUser: '{"username":"rocketmq","password":"12345678"}',
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('authenticates and authorizes every request as set up by mqadmin', { timeout: 12 * 60_000 }, async () => {
    const setup = await runScript('compat/acl/acl2-setup.sh', [server.namesrvAddr, server.brokerAddr], 8 * 60_000);
    expect(setup.code, tail(setup.output)).toBe(0);
    expect(setup.output).toMatch(/^appUser\s+appPass123\s+Normal\s+enable\s*$/m);
    expect(setup.output).toMatch(/^User:appUser\s+Custom\s+Topic:Acl2Deny\*\s+\[Pub\]\s+null\s+Deny\s*$/m);
    const java = await runScript('compat/java/run.sh', ['tag:acl2', `-Dnamesrv=${server.namesrvAddr}`, '-Drocketmq.version=5.5.0'], 8 * 60_000);
    console.log(java.output.split('\n').filter((l) => l.startsWith('[acl2]')).join('\n'));
    expect(java.code, tail(java.output, 80)).toBe(0);
    expect(java.output).toMatch(/scenarios: 2 passed, 0 failed/);
  });

  it('serves the other user and ACL commands', { timeout: 6 * 60_000 }, async () => {
    let out = await mq(SUPER, 'listUser', '-b', server.brokerAddr);
    expect(out, tail(out)).toMatch(/^rocketmq\s+12345678\s+Super\s+enable/m);
    expect(out).toMatch(/^appUser\s+appPass123\s+Normal\s+enable/m);

    out = await mq(SUPER, 'updateAcl', '-b', server.brokerAddr, '-s', 'User:appUser', '-r', 'Topic:Acl2TopicB', '-a', 'Pub,Sub', '-d', 'Allow');
    expect(out, tail(out)).toMatch(/update acl to \S+ success/);
    out = await mq(SUPER, 'listAcl', '-b', server.brokerAddr, '-s', 'User:appUser');
    expect(out, tail(out)).toMatch(/^User:appUser\s+Custom\s+Topic:Acl2TopicB\s+\[Pub, Sub\]\s+null\s+Allow/m);

    out = await mq(SUPER, 'deleteAcl', '-b', server.brokerAddr, '-s', 'User:appUser', '-r', 'Topic:Acl2TopicB');
    expect(out, tail(out)).toMatch(/delete acl to \S+ success/);
    out = await mq(SUPER, 'getAcl', '-b', server.brokerAddr, '-s', 'User:appUser');
    expect(out).not.toContain('Topic:Acl2TopicB');

    // a normal user may not manage users: no policy on the cluster resource
    out = await mq({ MQADMIN_VERSION: '5.3.3', MQADMIN_ACCESS_KEY: 'appUser', MQADMIN_SECRET_KEY: 'appPass123' }, 'createUser', '-b', server.brokerAddr, '-u', 'intruder', '-p', 'intruder123');
    expect(out).toContain('User:appUser has no permission to access Cluster:DefaultCluster from 127.0.0.1, no matched policies.');

    out = await mq(SUPER, 'updateUser', '-b', server.brokerAddr, '-u', 'appUser', '-s', 'disable');
    expect(out, tail(out)).toMatch(/update user to \S+ success/);
    out = await mq({ MQADMIN_VERSION: '5.3.3', MQADMIN_ACCESS_KEY: 'appUser', MQADMIN_SECRET_KEY: 'appPass123' }, 'getUser', '-b', server.brokerAddr, '-u', 'appUser');
    expect(out).toContain('User:appUser is disabled.');

    out = await mq(SUPER, 'deleteUser', '-b', server.brokerAddr, '-u', 'appUser');
    expect(out, tail(out)).toMatch(/delete user to \S+ success/);
    out = await mq(SUPER, 'getUser', '-b', server.brokerAddr, '-u', 'appUser');
    expect(out).not.toMatch(/^appUser\s/m);
  });
});
