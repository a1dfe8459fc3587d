// How topic changes reach the nameserver: UPDATE_AND_CREATE_TOPIC registers that topic alone (Java
// registerIncrementBrokerData), and a broker that is not both readable and writable registers every topic with its
// own permission (Java registerBrokerAll), so routes stop sending to a broker set to brokerPermission=4.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('topic registration with the nameserver', () => {
  let server: TestServer;
  let client: RemotingClient;
  beforeAll(async () => {
    server = await startTestServer();
    client = new RemotingClient(silentLogger());
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  const create = async (topic: string, queues: number) => {
    const res = await client.request(server.brokerAddr, createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic, defaultTopic: 'TBW102', readQueueNums: String(queues), writeQueueNums: String(queues), perm: '6',
      topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
    }), 5000);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
  };
  /** The route's queue data of our broker: [perm, readQueueNums, writeQueueNums]. */
  const route = async (topic: string) => {
    const res = await client.request(server.namesrvAddr, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }), 5000);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    const data = parseFastjson(res.body!) as { queueDatas: Array<{ perm: number; readQueueNums: number; writeQueueNums: number }> };
    expect(data.queueDatas).toHaveLength(1);
    const q = data.queueDatas[0]!;
    return [Number(q.perm), Number(q.readQueueNums), Number(q.writeQueueNums)];
  };
  const setPermission = async (perm: number) => {
    const res = await client.request(server.brokerAddr, createRequest(RequestCode.UPDATE_BROKER_CONFIG, {}, Buffer.from(`brokerPermission=${perm}\n`)), 5000);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
  };

  it('routes each created topic by the time its creation is answered (400 creations)', async () => {
    await create('RegT_first', 8);
    expect(await route('RegT_first')).toEqual([6, 8, 8]);
    // each creation registers its own topic; the times are printed, not asserted (a full registration per creation
    // made the later ones slower as the table grew)
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) await create(`RegT_bulk_${i}`, 2);
    const firstHalfMs = performance.now() - t0;
    const t1 = performance.now();
    for (let i = 200; i < 400; i++) await create(`RegT_bulk_${i}`, 2);
    const secondHalfMs = performance.now() - t1;
    for (const i of [0, 199, 200, 399]) expect(await route(`RegT_bulk_${i}`)).toEqual([6, 2, 2]);
    console.log(`topic registration: 200 creations ${Math.round(firstHalfMs)} ms, the next 200 ${Math.round(secondHalfMs)} ms`);
  }, 120_000);

  it('registers every topic with the broker permission while it is not both readable and writable', async () => {
    await create('RegT_perm_a', 4);
    await setPermission(4); // read-only: producers must stop routing here
    expect(await route('RegT_perm_a')).toEqual([4, 4, 4]);
    await create('RegT_perm_b', 2); // registered alone, with the broker's permission too
    expect(await route('RegT_perm_b')).toEqual([4, 2, 2]);
    await setPermission(6);
    expect(await route('RegT_perm_a')).toEqual([6, 4, 4]);
    expect(await route('RegT_perm_b')).toEqual([6, 2, 2]);
  });
});
