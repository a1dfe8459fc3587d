import { describe, expect, it } from 'vitest';
import { clientManageProcessors } from '../../src/broker/processors/client-manage.js';
import { consumerListProcessors } from '../../src/broker/processors/consumer-list.js';
import { lockProcessors } from '../../src/broker/processors/lock.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { FakeConnection, javaHeartbeat, makeContext } from './helpers.js';

function setup(overrides = {}) {
  const t = makeContext(overrides);
  t.server.registerTable(clientManageProcessors(t.ctx));
  t.server.registerTable(consumerListProcessors(t.ctx));
  t.server.registerTable(lockProcessors(t.ctx));
  return t;
}

describe('HEART_BEAT', () => {
  it('registers consumers and producers, creates the group and %RETRY% topic', async () => {
    const t = setup();
    const conn = new FakeConnection('10.1.1.1:4000');
    const res = await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('10.1.1.1@1', 'G1', ['T', '%RETRY%G1'], ['P1']), version: 401, language: 'JAVA' }, conn);
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.remark).toBeUndefined();
    const retry = t.ctx.topicConfigManager.get('%RETRY%G1');
    expect(retry).toMatchObject({ readQueueNums: 1, writeQueueNums: 1, perm: 6 });
    expect(t.ctx.subscriptionGroupManager.get('G1')).toBeDefined();
    const info = t.ctx.consumerManager.getConsumerGroupInfo('G1');
    expect(info?.consumeType).toBe('CONSUME_PASSIVELY');
    const ch = info?.channels.get(conn.asConnection);
    expect(ch).toMatchObject({ clientId: '10.1.1.1@1', language: 'JAVA', version: 401 });
    expect([...(info?.subscriptions.keys() ?? [])]).toEqual(['T', '%RETRY%G1']);
    expect(t.ctx.producerManager.getGroupChannels('P1')?.size).toBe(1);
  });

  it('accepts ali-ons (no expressionType) and Go (codes as strings) bodies', async () => {
    const t = setup();
    const aliOns = {
      clientID: '10.0.0.1@ons',
      consumerDataSet: [
        {
          groupName: 'GID_ons',
          consumeType: 'CONSUME_PASSIVELY',
          messageModel: 'CLUSTERING',
          consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
          subscriptionDataSet: [{ topic: 'T', subString: 'a || b', classFilterMode: false, tagsSet: ['a', 'b'], codeSet: [97, 98], subVersion: 1700000000001 }],
          unitMode: false,
        },
      ],
      producerDataSet: [],
    };
    const res = await t.server.call(RequestCode.HEART_BEAT, { body: Buffer.from(JSON.stringify(aliOns)), version: 121 });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.consumerManager.findSubscriptionData('GID_ons', 'T')).toEqual({
      topic: 'T',
      subString: 'a || b',
      expressionType: 'TAG',
      tagsSet: ['a', 'b'],
      codeSet: [97, 98],
      subVersion: 1700000000001,
      classFilterMode: false,
    });
    const go =
      '{"clientID":"10.0.0.2@go","producerDataSet":[],"consumerDataSet":[{"groupName":"GGo","consumeType":"CONSUME_PASSIVELY","messageModel":"BROADCASTING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"T","subString":"x","tagsSet":["x"],"codeSet":["120"],"subVersion":1700000000002,"expressionType":"TAG"}],"unitMode":false}]}';
    expect((await t.server.call(RequestCode.HEART_BEAT, { body: Buffer.from(go), language: 'GO', version: 317 })).code).toBe(0);
    expect(t.ctx.consumerManager.findSubscriptionData('GGo', 'T')?.codeSet).toEqual([120]);
    expect(t.ctx.consumerManager.getConsumerGroupInfo('GGo')?.messageModel).toBe('BROADCASTING');
  });

  it('answers SYSTEM_ERROR with a remark for bodies it cannot use', async () => {
    const t = setup();
    const bad = await t.server.call(RequestCode.HEART_BEAT, { body: Buffer.from('{"clientID":') });
    expect(bad.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(bad.remark).toMatch(/HEART_BEAT: request body is not valid JSON/);
    const empty = await t.server.call(RequestCode.HEART_BEAT, {});
    expect(empty.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(empty.remark).toMatch(/empty/);
    const noId = await t.server.call(RequestCode.HEART_BEAT, { body: Buffer.from('{"consumerDataSet":[]}') });
    expect(noId.remark).toBe('heartbeat body has no clientID');
    const noTopic = await t.server.call(RequestCode.HEART_BEAT, {
      body: Buffer.from('{"clientID":"c","consumerDataSet":[{"groupName":"G","subscriptionDataSet":[{"subString":"*"}]}]}'),
    });
    expect(noTopic.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(noTopic.remark).toBe('consumerDataSet[0].subscriptionDataSet[0].topic is missing');
  });

  it('does not register consumers of groups that cannot exist (auto-create off)', async () => {
    const t = setup({ autoCreateSubscriptionGroup: false });
    const res = await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('c', 'G1', ['T']) });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.consumerManager.getConsumerGroupInfo('G1')).toBeUndefined();
    expect(t.ctx.topicConfigManager.get('%RETRY%G1')).toBeUndefined();
  });
});

describe('UNREGISTER_CLIENT / GET_CONSUMER_LIST_BY_GROUP', () => {
  it('lists live clients as {"consumerIdList":[...]} and forgets unregistered ones', async () => {
    const t = setup();
    const a = new FakeConnection();
    const b = new FakeConnection();
    await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('cid-a', 'G', ['T'], ['P']) }, a);
    await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('cid-b', 'G', ['T']) }, b);
    const list = await t.server.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: 'G' } });
    expect(list.code).toBe(ResponseCode.SUCCESS);
    expect(list.body?.toString()).toBe('{"consumerIdList":["cid-a","cid-b"]}');

    const un = await t.server.call(RequestCode.UNREGISTER_CLIENT, { extFields: { clientID: 'cid-a', consumerGroup: 'G', producerGroup: 'P' } }, a);
    expect(un.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.producerManager.getGroupChannels('P')).toBeUndefined();
    expect(b.notifications().at(-1)).toBe('G');
    const after = await t.server.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: 'G' } });
    expect(after.body?.toString()).toBe('{"consumerIdList":["cid-b"]}');

    const none = await t.server.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: 'nobody' } });
    expect(none.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(none.remark).toBe('no consumer for this group, nobody');
  });

  it('needs the clientID header', async () => {
    const t = setup();
    await expect(t.server.call(RequestCode.UNREGISTER_CLIENT, { extFields: {} })).rejects.toThrow(/clientID/);
  });
});

describe('CHECK_CLIENT_CONFIG', () => {
  const body = (type: string) =>
    Buffer.from(JSON.stringify({ clientId: 'c', group: 'G', subscriptionData: { topic: 'T', subString: 'a > 1', expressionType: type } }));

  it('accepts TAG, refuses SQL92 unless enablePropertyFilter', async () => {
    const t = setup();
    expect((await t.server.call(RequestCode.CHECK_CLIENT_CONFIG, { body: body('TAG') })).code).toBe(ResponseCode.SUCCESS);
    const sql = await t.server.call(RequestCode.CHECK_CLIENT_CONFIG, { body: body('SQL92') });
    expect(sql.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(sql.remark).toBe('The broker does not support consumer to filter message by SQL92');
    const t2 = setup({ enablePropertyFilter: true });
    expect((await t2.server.call(RequestCode.CHECK_CLIENT_CONFIG, { body: body('SQL92') })).code).toBe(ResponseCode.SUCCESS);
    expect((await t2.server.call(RequestCode.CHECK_CLIENT_CONFIG, { body: body('GROOVY') })).code).toBe(ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    expect((await t2.server.call(RequestCode.CHECK_CLIENT_CONFIG, { body: Buffer.from('nope') })).code).toBe(ResponseCode.SYSTEM_ERROR);
  });
});

describe('LOCK_BATCH_MQ / UNLOCK_BATCH_MQ', () => {
  const lockBody = (clientId: string, queueIds: number[]) =>
    Buffer.from(
      JSON.stringify({
        consumerGroup: 'G',
        clientId,
        onlyThisBroker: false,
        mqSet: queueIds.map((queueId) => ({ topic: 'T', brokerName: 'broker-a', queueId })),
      }),
    );

  it('answers {"lockOKMQSet":[...]} in fastjson field order and unlocks', async () => {
    const t = setup();
    const res = await t.server.call(RequestCode.LOCK_BATCH_MQ, { body: lockBody('c1', [0, 1]) });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.body?.toString()).toBe(
      '{"lockOKMQSet":[{"brokerName":"broker-a","queueId":0,"topic":"T"},{"brokerName":"broker-a","queueId":1,"topic":"T"}]}',
    );
    const other = await t.server.call(RequestCode.LOCK_BATCH_MQ, { body: lockBody('c2', [1, 2]) });
    expect(other.body?.toString()).toBe('{"lockOKMQSet":[{"brokerName":"broker-a","queueId":2,"topic":"T"}]}');
    const un = await t.server.call(RequestCode.UNLOCK_BATCH_MQ, { body: lockBody('c1', [1]) });
    expect(un.code).toBe(ResponseCode.SUCCESS);
    const retry = await t.server.call(RequestCode.LOCK_BATCH_MQ, { body: lockBody('c2', [1]) });
    expect(retry.body?.toString()).toBe('{"lockOKMQSet":[{"brokerName":"broker-a","queueId":1,"topic":"T"}]}');
    // Java fastjson request body (sorted keys, queueId as a number) also works; empty mqSet → empty result
    const empty = await t.server.call(RequestCode.LOCK_BATCH_MQ, { body: Buffer.from('{"clientId":"c1","consumerGroup":"G","mqSet":[]}') });
    expect(empty.body?.toString()).toBe('{"lockOKMQSet":[]}');
  });

  it('explains malformed bodies', async () => {
    const t = setup();
    const noGroup = await t.server.call(RequestCode.LOCK_BATCH_MQ, { body: Buffer.from('{"clientId":"c","mqSet":[]}') });
    expect(noGroup.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(noGroup.remark).toBe('LOCK_BATCH_MQ: consumerGroup is missing');
    const badMq = await t.server.call(RequestCode.LOCK_BATCH_MQ, {
      body: Buffer.from('{"clientId":"c","consumerGroup":"G","mqSet":[{"topic":"T","brokerName":"b","queueId":"x"}]}'),
    });
    expect(badMq.remark).toBe('LOCK_BATCH_MQ: mqSet[0].queueId must be an integer');
  });
});
