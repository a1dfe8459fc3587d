// UPDATE_AND_GET_GROUP_FORBIDDEN (353): a group's pulls of one topic refused with NO_PERMISSION and forbiddenType 5
// (Java PullMessageProcessor checks it for pulls without an inline subscription), persisted in subscriptionGroup.json's
// forbiddenTable, lifted again with readable=true.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { startTestServer } from '../helpers/server.js';
import { javaHeartbeat } from './helpers.js';
import { send } from './timer-helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('group forbidden', () => {
  it('refuses the group\'s pulls of the topic until it is readable again, across a restart', async () => {
    const server = await startTestServer();
    const client = new RemotingClient(silentLogger());
    closers.push(() => server.stop(), async () => client.close());
    const addr = () => server.brokerAddr;
    for (const topic of ['GF', 'GF2']) expect((await send(client, addr(), topic, { KEYS: 'k' })).code).toBe(0);
    const heartbeat = () => client.request(addr(), createRequest(RequestCode.HEART_BEAT, {}, javaHeartbeat('gf@1', 'G', ['GF', 'GF2'])), 10_000);
    expect((await heartbeat()).code).toBe(0);
    // a push consumer's pull: no inline subscription (sysFlag 1 = commit offset only)
    const pull = (topic: string, sysFlag = 1) => client.request(addr(), createRequest(RequestCode.PULL_MESSAGE, {
      consumerGroup: 'G', topic, queueId: '0', queueOffset: '0', maxMsgNums: '32', sysFlag: String(sysFlag), commitOffset: '0',
      suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
    }), 10_000);
    const forbid = (readable?: boolean) => client.request(addr(), createRequest(RequestCode.UPDATE_AND_GET_GROUP_FORBIDDEN, {
      group: 'G', topic: 'GF', ...(readable === undefined ? {} : { readable: String(readable) }),
    }), 10_000);

    expect((await pull('GF')).code).toBe(ResponseCode.SUCCESS);
    const set = await forbid(false);
    expect([set.code, set.body?.toString()]).toEqual([ResponseCode.SUCCESS, '{"group":"G","readable":false,"topic":"GF"}']);
    const refused = await pull('GF');
    expect([refused.code, refused.remark, refused.extFields.forbiddenType])
      .toEqual([ResponseCode.NO_PERMISSION, 'the consumer group[G] is forbidden for topic[GF]', '5']);
    expect((await pull('GF2')).code).toBe(ResponseCode.SUCCESS); // other topics of the group
    expect((await pull('GF', 1 | 4)).code).toBe(ResponseCode.SUCCESS); // an inline subscription is not checked (Java)

    const saved = JSON.parse(fs.readFileSync(path.join(server.storeDir, 'config', 'subscriptionGroup.json'), 'utf8'));
    expect(saved.forbiddenTable).toEqual({ G: { GF: 4 } }); // PermName.PERM_READ, as Java writes it
    await server.restartBroker();
    expect((await heartbeat()).code).toBe(0);
    expect((await forbid()).body?.toString()).toBe('{"group":"G","readable":false,"topic":"GF"}');
    expect((await pull('GF')).code).toBe(ResponseCode.NO_PERMISSION);

    expect((await forbid(true)).body?.toString()).toBe('{"group":"G","readable":true,"topic":"GF"}');
    expect((await pull('GF')).code).toBe(ResponseCode.SUCCESS);
    const after = JSON.parse(fs.readFileSync(path.join(server.storeDir, 'config', 'subscriptionGroup.json'), 'utf8'));
    expect(after.forbiddenTable).toEqual({});
    const missing = await client.request(addr(), createRequest(RequestCode.UPDATE_AND_GET_GROUP_FORBIDDEN, { group: 'G' }), 10_000);
    expect(missing.code).toBe(ResponseCode.SYSTEM_ERROR);
  });
});
