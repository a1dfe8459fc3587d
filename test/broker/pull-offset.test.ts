// GET_CONSUME_STATS pullOffset: the group's latest pull position per queue, as the official 5.3.3 broker reports it
// (ConsumerOffsetManager.commitPullOffset on every answered pull; pullOffset = max(consumerOffset, pullOffset)).
// Found by the differential probe (compat/java DiffProbeTest, compat/diff.mjs) against official 5.3.3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastjsonEntries, parseFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { encodeProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

const FLAG_SUBSCRIPTION = 4;

describe('pullOffset in GET_CONSUME_STATS', () => {
  let server: TestServer;
  const client = new RemotingClient(silentLogger());
  const call = (code: number, ext: Record<string, string>, body?: Buffer): Promise<RemotingCommand> =>
    client.request(server.brokerAddr, createRequest(code, ext, body), 10_000);

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await client.close();
    await server?.stop();
  });

  const send = async (topic: string, i: number) => {
    const res = await call(RequestCode.SEND_MESSAGE, {
      producerGroup: 'po_pg', topic, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0',
      bornTimestamp: String(Date.now()), flag: '0', properties: encodeProperties({ TAGS: 'A' }), reconsumeTimes: '0',
      unitMode: 'false', batch: 'false',
    }, Buffer.from(`m${i}`));
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
  };
  const pull = (topic: string, group: string, queueOffset: number, maxMsgNums: number) =>
    call(RequestCode.PULL_MESSAGE, {
      consumerGroup: group, topic, queueId: '0', queueOffset: String(queueOffset), maxMsgNums: String(maxMsgNums),
      sysFlag: String(FLAG_SUBSCRIPTION), commitOffset: '0', suspendTimeoutMillis: '0', subVersion: '0',
      subscription: '*', expressionType: 'TAG',
    });
  const stats = async (group: string, topic: string) => {
    const res = await call(RequestCode.GET_CONSUME_STATS, { consumerGroup: group, topic });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    const [[, wrapper]] = fastjsonEntries((parseFastjson(res.body!) as { offsetTable: unknown }).offsetTable);
    return Object.fromEntries(fastjsonEntries(wrapper).map(([k, v]) => [k, Number(v)]));
  };

  it('is the next offset of the latest pull (any status), never below the committed offset', async () => {
    const topic = `PullOff_${process.pid}`;
    await createTopic(server, topic, 1);
    for (let i = 0; i < 5; i++) await send(topic, i);

    // no pull yet: the committed offset (none: 0)
    expect(await stats('G1', topic)).toMatchObject({ brokerOffset: 5, consumerOffset: 0, pullOffset: 0 });

    const found = await pull(topic, 'G1', 0, 2);
    expect(found.code).toBe(ResponseCode.SUCCESS);
    expect(await stats('G1', topic)).toMatchObject({ consumerOffset: 0, pullOffset: 2 });

    // a pull far past the end answers OFFSET_MOVED with nextBeginOffset = max offset: recorded as well
    const moved = await pull(topic, 'G1', 100, 32);
    expect(moved.code).toBe(ResponseCode.PULL_OFFSET_MOVED);
    expect(await stats('G1', topic)).toMatchObject({ pullOffset: Number(moved.extFields.nextBeginOffset) });

    // a commit beyond the last pull wins (max), a commit below it does not
    const commit = (offset: number) =>
      call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'G2', topic, queueId: '0', commitOffset: String(offset) });
    await pull(topic, 'G2', 0, 1);
    expect((await commit(4)).code).toBe(ResponseCode.SUCCESS);
    expect(await stats('G2', topic)).toMatchObject({ consumerOffset: 4, pullOffset: 4 });
    await pull(topic, 'G2', 4, 32);
    expect(await commit(3)).toMatchObject({ code: ResponseCode.SUCCESS });
    expect(await stats('G2', topic)).toMatchObject({ consumerOffset: 3, pullOffset: 5 });
  });

  it('refuses a commit for a group the broker does not know, before looking at the topic (5.3.3)', async () => {
    // Probed against official 5.3.3: 26 "Group NoSuchGroupX not exist!" for an existing and a missing topic alike;
    // once the group exists, its commit is stored (queue ids unchecked there too).
    const topic = 'PoUnknownGroupT';
    await createTopic(server, topic, 4);
    const commit = (group: string, t: string) =>
      call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: group, topic: t, queueId: '1', commitOffset: '5' });
    for (const t of [topic, 'PoNoSuchTopic']) {
      const res = await commit('PoNoSuchGroup', t);
      expect([res.code, res.remark]).toEqual([ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, 'Group PoNoSuchGroup not exist!']);
    }
    expect(server.broker.context.consumerOffsetManager.queryOffset('PoNoSuchGroup', topic, 1)).toBe(-1);
    const group = { groupName: 'PoKnownGroup', consumeEnable: true, retryMaxTimes: 16, brokerId: 0, whichBrokerWhenConsumeSlowly: 1 };
    expect((await call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, Buffer.from(JSON.stringify(group)))).code).toBe(ResponseCode.SUCCESS);
    expect((await commit('PoKnownGroup', topic)).code).toBe(ResponseCode.SUCCESS);
    expect((await commit('PoKnownGroup', 'PoNoSuchTopic')).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    const known = await call(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: 'PoKnownGroup', topic, queueId: '1' });
    expect([known.code, known.extFields.offset]).toEqual([ResponseCode.SUCCESS, '5']);
  });
});
