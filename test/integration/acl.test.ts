import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AclReloadEvent } from '../../src/broker/acl/plain-acl-manager.js';
import { signRequest } from '../../src/broker/acl/signature.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer, tempDir } from '../helpers/server.js';

/**
 * ACL 1.0 operations: hot reload of plain_acl.yml (a broken file keeps the last good one and logs its line), the ACL
 * admin codes through the stock mqadmin 4.9.8 (credentials from its conf/tools.yml), and the stock Go client with
 * credentials (compat/go TestAclCredentials).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const ACL_REMARK = 'org.apache.rocketmq.acl.common.AclException';

describe('ACL 1.0 operations', () => {
  let server: TestServer;
  let home: string;
  let aclFile: string;
  const client = new RemotingClient(silentLogger());

  beforeAll(async () => {
    home = tempDir('acl-ops');
    fs.mkdirSync(path.join(home, 'conf'), { recursive: true });
    aclFile = path.join(home, 'conf/plain_acl.yml');
    fs.copyFileSync(path.join(ROOT, 'compat/acl/plain_acl.yml'), aclFile);
    server = await startTestServer({ aclEnable: true, rocketmqHome: home });
  });
  afterAll(async () => {
    await client.close();
    await server?.stop();
    fs.rmSync(home, { recursive: true, force: true });
  });

  /** GET_CONSUMER_LIST_BY_GROUP (needs SUB on the group) signed by RocketMQUser: the remark tells a denial. */
  async function groupLookup(group: string): Promise<string> {
    const req = signRequest(createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { consumerGroup: group }), 'RocketMQUser', '12345678secret');
    const res = await client.request(server.brokerAddr, req, 5000);
    return res.remark ?? '';
  }

  function nextReload(): Promise<AclReloadEvent> {
    return new Promise((resolve) => server.broker.acl!.onReload(resolve));
  }

  it('reloads the file when it changes and keeps the last good version on a syntax error', async () => {
    expect(await groupLookup('ReloadGroup')).not.toContain(ACL_REMARK); // defaultGroupPerm SUB

    const good = fs.readFileSync(aclFile, 'utf8').replace('      - AclGroupDenied=DENY', '      - AclGroupDenied=DENY\n      - ReloadGroup=DENY');
    let reloaded = nextReload();
    fs.writeFileSync(aclFile, good);
    expect(await reloaded).toEqual({ ok: true });
    expect(await groupLookup('ReloadGroup')).toBe(
      `${ACL_REMARK}: No default permission for group:ReloadGroup, org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:611)`,
    );

    reloaded = nextReload();
    const broken = good.replace('  - accessKey: RocketMQAdmin', '  - accessKey: [RocketMQAdmin');
    fs.writeFileSync(aclFile, broken);
    const failed = await reloaded;
    expect(failed.ok).toBe(false);
    const brokenLine = broken.split('\n').findIndex((l) => l.includes('[RocketMQAdmin')) + 1;
    expect(failed.ok ? '' : failed.error).toMatch(new RegExp(`line (${brokenLine}|${brokenLine + 1})\\b`));
    // the last good version still applies
    expect(await groupLookup('ReloadGroup')).toContain('No default permission for group:ReloadGroup');
    expect(await groupLookup('SomeOtherGroup')).not.toContain(ACL_REMARK);

    reloaded = nextReload();
    fs.copyFileSync(path.join(ROOT, 'compat/acl/plain_acl.yml'), aclFile);
    expect(await reloaded).toEqual({ ok: true });
    expect(await groupLookup('ReloadGroup')).not.toContain(ACL_REMARK);
  });

  it('denies a request whose body it cannot read instead of waving it through', async () => {
    const req = signRequest(createRequest(RequestCode.HEART_BEAT, {}, Buffer.from('{"consumerDataSet": [')), 'RocketMQUser', '12345678secret');
    const res = await client.request(server.brokerAddr, req, 5000);
    expect(res.code).toBe(1);
    expect(res.remark).toMatch(/^org\.apache\.rocketmq\.acl\.common\.AclException: .+, org\.apache\.rocketmq\.acl\.plain\.PlainAccessValidator\.parse\(PlainAccessValidator\.java:134\)$/);
  });

  it('serves the ACL admin codes to the stock mqadmin 4.9.8', { timeout: 5 * 60_000 }, async () => {
    const admin = { MQADMIN_ACCESS_KEY: 'RocketMQAdmin', MQADMIN_SECRET_KEY: '12345678admin' };
    const mq = async (env: Record<string, string> | undefined, ...args: string[]) => {
      const res = await runScript('compat/mqadmin/run.sh', [...args, '-n', server.namesrvAddr], 90_000, env);
      return res.output;
    };
    let out = await mq(admin, 'updateAclConfig', '-b', server.brokerAddr, '-a', 'NewAccount1', '-s', 'newSecret123', '-t', 'AclTopicA=PUB', '-i', 'SUB');
    expect(out, tail(out)).toMatch(/create or update plain access config to \S+ success/);
    let text = fs.readFileSync(aclFile, 'utf8');
    expect(text).toContain('accessKey: NewAccount1');
    expect(text).toContain('AclTopicA=PUB');

    out = await mq(admin, 'updateGlobalWhiteAddr', '-b', server.brokerAddr, '-g', '10.10.104.*,10.10.105.1');
    expect(out, tail(out)).toMatch(/update global white remote addresses to \S+ success/);
    expect(fs.readFileSync(aclFile, 'utf8')).toMatch(/globalWhiteRemoteAddresses:\n\s+- 10\.10\.104\.\*\n\s+- 10\.10\.105\.1/);

    out = await mq(admin, 'clusterAclConfigVersion', '-c', 'DefaultCluster');
    const row = out.split('\n').find((l) => l.trim().startsWith('DefaultCluster'));
    expect(row, tail(out)).toBeDefined();
    const cols = row!.trim().split(/\s+/);
    expect(cols.slice(0, 4)).toEqual(['DefaultCluster', 'broker-a', server.brokerAddr, aclFile]);
    expect(Number(cols[4])).toBeGreaterThanOrEqual(2); // two changes so far

    out = await mq(admin, 'deleteAclConfig', '-b', server.brokerAddr, '-a', 'NewAccount1');
    expect(out, tail(out)).toMatch(/delete plain access config account from \S+ success/);
    text = fs.readFileSync(aclFile, 'utf8');
    expect(text).not.toContain('NewAccount1');

    // without credentials the broker refuses, as the official one does
    out = await mq(undefined, 'updateTopic', '-b', server.brokerAddr, '-t', 'NotCreated');
    expect(out).toContain('No accessKey is configured');
    // a non-admin account may not create topics
    out = await mq({ MQADMIN_ACCESS_KEY: 'RocketMQUser', MQADMIN_SECRET_KEY: '12345678secret' }, 'updateTopic', '-b', server.brokerAddr, '-t', 'NotCreated');
    expect(out).toContain('Need admin permission for request code=17, but accessKey=RocketMQUser is not');
  });

  it('works with the stock Go client and its credentials', { timeout: 5 * 60_000 }, async () => {
    const res = await runScript('compat/go/run.sh', [server.namesrvAddr, '-run', '^TestAclCredentials$'], 4 * 60_000, { ACL_ENABLED: '1' });
    console.log(res.output.split('\n').filter((l) => l.includes('[acl]')).join('\n'));
    expect(res.code, tail(res.output, 60)).toBe(0);
    expect(res.output).toMatch(/--- PASS: TestAclCredentials/);
  });
});
