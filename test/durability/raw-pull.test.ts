// The raw pull helper the fuzz, soak and crash harnesses read stores back with. A producer may set the compressed
// flag (sysFlag bit 0) on a body that is not zlib: the broker stores it as sent, as the official one does. ali-ons'
// decodes() drops such a message and every one after it, so a read-back loop saw FOUND with no message and never
// moved on (CI run of 0f06075: the fuzz stuck in its read-back for 120 s). The helper keeps bodies as stored and
// throws on a record that does not decode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';
import { decodeWithAliOns, rawPull } from './helpers.js';

describe('raw pull read-back', () => {
  let server: TestServer;
  const client = new RemotingClient(silentLogger());
  beforeAll(async () => {
    server = await startTestServer();
    await createTopic(server, 'RawPullT', 1);
  });
  afterAll(async () => {
    await client.close();
    await server?.stop();
  });

  const send = async (sysFlag: number, body: string) => {
    const res = await client.request(server.brokerAddr, createRequest(RequestCode.SEND_MESSAGE, {
      producerGroup: 'PG_raw', topic: 'RawPullT', defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0',
      sysFlag: String(sysFlag), bornTimestamp: String(Date.now()), flag: '0', properties: '', reconsumeTimes: '0',
      unitMode: 'false', batch: 'false',
    }, Buffer.from(body)), 10_000);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    return Number(res.extFields.queueOffset);
  };

  it('reads a body flagged compressed but not zlib as stored, and the messages after it', async () => {
    expect(await send(0, 'plain-0')).toBe(0);
    expect(await send(1, 'not zlib at all')).toBe(1);
    expect(await send(0, 'plain-2')).toBe(2);
    const res = await rawPull(client, server.brokerAddr, 'RawPullT', 0, 0, 32);
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.messages.map((m) => [m.queueOffset, m.body.toString()])).toEqual([[0, 'plain-0'], [1, 'not zlib at all'], [2, 'plain-2']]);

    const pulled = await client.request(server.brokerAddr, createRequest(RequestCode.PULL_MESSAGE, {
      consumerGroup: 'GID_raw', topic: 'RawPullT', queueId: '0', queueOffset: '0', maxMsgNums: '1', sysFlag: '4',
      commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
    }), 10_000);
    const one = pulled.body!;
    expect(decodeWithAliOns(one)).toHaveLength(1);
    expect(() => decodeWithAliOns(one.subarray(0, one.length - 3))).toThrow(/record at byte 0 does not decode/);
  });
});
