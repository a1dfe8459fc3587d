import { describe, expect, it } from 'vitest';
import { adminBrokerProcessors, formatRuntime, humanReadableByteCount } from '../../src/broker/processors/admin-broker.js';
import { adminGroupProcessors } from '../../src/broker/processors/admin-group.js';
import { adminHaProcessors } from '../../src/broker/processors/admin-ha.js';
import { adminStatsProcessors } from '../../src/broker/processors/admin-stats.js';
import { applyAttributeModifications, adminTopicProcessors } from '../../src/broker/processors/admin-topic.js';
import { clientManageProcessors } from '../../src/broker/processors/client-manage.js';
import { newTopicConfig } from '../../src/broker/topic/topic-config.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { FakeConnection, javaHeartbeat, makeContext } from './helpers.js';

function setup(overrides = {}) {
  const t = makeContext(overrides);
  t.server.registerTable(clientManageProcessors(t.ctx));
  t.server.registerTable(adminTopicProcessors(t.ctx));
  t.server.registerTable(adminGroupProcessors(t.ctx));
  t.server.registerTable(adminBrokerProcessors(t.ctx));
  t.server.registerTable(adminHaProcessors(t.ctx));
  return t;
}

const createTopicHeader = (topic: string, extra: Record<string, string> = {}) => ({
  topic,
  defaultTopic: 'TBW102',
  readQueueNums: '2',
  writeQueueNums: '2',
  perm: '6',
  topicFilterType: 'SINGLE_TAG',
  topicSysFlag: '0',
  order: 'false',
  ...extra,
});

describe('topic admin', () => {
  it('UPDATE_AND_CREATE_TOPIC saves, registers and is idempotent', async () => {
    const t = setup();
    const res = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('TopicA') });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.topicConfigManager.get('TopicA')).toEqual({ ...newTopicConfig('TopicA', 2), attributes: {} });
    expect(t.registrations).toBe(1);
    await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('TopicA') });
    expect(t.registrations).toBe(1);
    await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('TopicA', { writeQueueNums: '4', attributes: '+message.type=NORMAL' }) });
    expect(t.ctx.topicConfigManager.get('TopicA')).toMatchObject({ writeQueueNums: 4, attributes: { 'message.type': 'NORMAL' } });
    expect(t.registrations).toBe(2);
  });

  it('UPDATE_AND_CREATE_TOPIC refuses bad names, system topics and bad values with a remark', async () => {
    const t = setup();
    const sys = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('SCHEDULE_TOPIC_XXXX') });
    expect(sys.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(sys.remark).toBe('The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic.');
    const own = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('DefaultCluster') });
    expect(own.remark).toMatch(/conflict with system topic/);
    const prefixed = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('rmq_sys_x') });
    expect(prefixed.code).toBe(ResponseCode.INVALID_PARAMETER);
    const bad = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('a b') });
    expect(bad.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(bad.remark).toMatch(/illegal characters/);
    const filter = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('T', { topicFilterType: 'X' }) });
    expect(filter.remark).toMatch(/topicFilterType X/);
    const queues = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('T', { readQueueNums: '-1' }) });
    expect(queues.remark).toMatch(/readQueueNums -1/);
    const attr = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('T', { attributes: '-x' }) });
    expect(attr.remark).toMatch(/only add attribute/);
    await expect(t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { extFields: createTopicHeader('T', { perm: 'rw' }) })).rejects.toThrow(/perm/);
    expect(t.ctx.topicConfigManager.get('T')).toBeUndefined();
  });

  it('UPDATE_AND_CREATE_TOPIC_LIST (5.x): every entry checked before any is applied; Java defaults for absent fields', async () => {
    const t = setup();
    const list = (entries: unknown[]) => ({ body: Buffer.from(JSON.stringify({ topicConfigList: entries })) });
    const bad = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, list([{ topicName: 'L1' }, { topicName: 'SCHEDULE_TOPIC_XXXX' }]));
    expect(bad.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(bad.remark).toBe('The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic.');
    expect(t.ctx.topicConfigManager.get('L1')).toBeUndefined();
    const notInt = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, list([{ topicName: 'L1', perm: 'x' }]));
    expect(notInt.remark).toBe('topic L1: perm "x" is not an integer');
    const ok = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, list([
      { topicName: 'L1' },
      { topicName: 'L2', readQueueNums: 2, writeQueueNums: 2, perm: 4, order: true, attributes: { '+message.type': 'FIFO' } },
    ]));
    expect(ok.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.topicConfigManager.get('L1')).toMatchObject({ readQueueNums: 16, writeQueueNums: 16, perm: 6, order: false, attributes: {} });
    expect(t.ctx.topicConfigManager.get('L2')).toMatchObject({ readQueueNums: 2, perm: 4, order: true, attributes: { 'message.type': 'FIFO' } });
    const registered = t.registrations;
    // unchanged entries are idempotent; a changed one in the same list is still applied (Java stops at the first)
    await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, list([{ topicName: 'L1' }, { topicName: 'L2', readQueueNums: 3, writeQueueNums: 2, perm: 4, order: true }]));
    expect(t.ctx.topicConfigManager.get('L2')).toMatchObject({ readQueueNums: 3, attributes: { 'message.type': 'FIFO' } });
    expect(t.registrations).toBe(registered + 1);
    const noBody = await t.server.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, {});
    expect(noBody.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(noBody.remark).toMatch(/topicConfigList/);
  });

  it('attribute modifications follow Java AttributeUtil', () => {
    expect(applyAttributeModifications({}, '+a=1,+b=2', true)).toEqual({ a: '1', b: '2' });
    expect(applyAttributeModifications({ a: '1', b: '2' }, '+a=3,-b', false)).toEqual({ a: '3' });
    expect(() => applyAttributeModifications({}, '-a', false)).toThrow(/nonexistent/);
    expect(() => applyAttributeModifications({}, '+a=1,+a=2', true)).toThrow(/duplication/);
    expect(() => applyAttributeModifications({}, 'a=1', true)).toThrow(/wrong format/);
  });

  it('DELETE_TOPIC_IN_BROKER removes config, queues and offsets', async () => {
    const t = setup();
    t.ctx.topicConfigManager.upsert(newTopicConfig('Gone', 1));
    t.ctx.consumerOffsetManager.commitOffset('G', 'Gone', 0, 5);
    const res = await t.server.call(RequestCode.DELETE_TOPIC_IN_BROKER, { extFields: { topic: 'Gone' } });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.topicConfigManager.get('Gone')).toBeUndefined();
    expect(t.store.deleted).toEqual(['Gone']);
    expect(t.ctx.consumerOffsetManager.queryOffset('G', 'Gone', 0)).toBe(-1);
    const sys = await t.server.call(RequestCode.DELETE_TOPIC_IN_BROKER, { extFields: { topic: 'TBW102' } });
    expect(sys.code).toBe(ResponseCode.INVALID_PARAMETER);
  });

  it('GET_TOPIC_STATS_INFO: MessageQueue object keys, store offsets and times', async () => {
    const t = setup();
    t.ctx.topicConfigManager.upsert(newTopicConfig('S', 2));
    t.store.setQueue('S', 0, 3, 10, 1_000);
    const res = await t.server.call(RequestCode.GET_TOPIC_STATS_INFO, { extFields: { topic: 'S' } });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.body?.toString()).toBe(
      '{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"S"}:{"lastUpdateTimestamp":1009,"maxOffset":10,"minOffset":3},' +
        '{"brokerName":"broker-a","queueId":1,"topic":"S"}:{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}},' +
        '"topicPutTps":0.0}',
    );
    // 5.x topicPutTps: puts over the sampled minute (samples every 10 s; the first one counts from zero 10 s before)
    t.ctx.stats.items.countPut('DefaultCluster', 'S', 30, 30_000);
    t.ctx.stats.items.sample(10_000);
    const busy = await t.server.call(RequestCode.GET_TOPIC_STATS_INFO, { extFields: { topic: 'S' } });
    expect(busy.body!.toString()).toMatch(/,"topicPutTps":3\.0\}$/);
    const missing = await t.server.call(RequestCode.GET_TOPIC_STATS_INFO, { extFields: { topic: 'nope' } });
    expect(missing.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(missing.remark).toBe('topic[nope] not exist');
  });

  it('GET_ALL_TOPIC_CONFIG, GET_TOPIC_CONFIG, system topics, consumers of a topic', async () => {
    const t = setup();
    t.ctx.topicConfigManager.upsert(newTopicConfig('X', 4));
    const all = await t.server.call(RequestCode.GET_ALL_TOPIC_CONFIG, {});
    const parsed = parseFastjson(all.body!) as { dataVersion: { counter: number }; topicConfigTable: Record<string, unknown> };
    expect(parsed.topicConfigTable.X).toEqual({ ...newTopicConfig('X', 4) });
    expect(parsed.dataVersion.counter).toBe(t.ctx.topicConfigManager.dataVersion.counter);
    expect(all.extFields.totalTopicNum).toBe(String(t.ctx.topicConfigManager.table.size));

    const one = await t.server.call(RequestCode.GET_TOPIC_CONFIG, { extFields: { topic: 'X' } });
    expect(one.body?.toString()).toBe(
      '{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"X","topicSysFlag":0,"writeQueueNums":4}',
    );
    expect((await t.server.call(RequestCode.GET_TOPIC_CONFIG, { extFields: { topic: 'Y' } })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);

    const sys = parseFastjson((await t.server.call(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, {})).body!) as { topicList: string[] };
    expect(sys.topicList).toEqual(expect.arrayContaining(['TBW102', 'SCHEDULE_TOPIC_XXXX', 'DefaultCluster', 'broker-a', 'RMQ_SYS_TRANS_HALF_TOPIC']));
    expect(sys.topicList).not.toContain('X');

    await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('c', 'G1', ['X']) });
    t.ctx.consumerOffsetManager.commitOffset('G2', 'X', 0, 1);
    const who = await t.server.call(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, { extFields: { topic: 'X' } });
    expect(who.body?.toString()).toBe('{"groupList":["G1","G2"]}');
  });
});

describe('group admin', () => {
  it('subscription group CRUD', async () => {
    const t = setup();
    const cfg = { groupName: 'GID_x', consumeBroadcastEnable: false, retryMaxTimes: 3, brokerId: 0 };
    const up = await t.server.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, { body: Buffer.from(JSON.stringify(cfg)) });
    expect(up.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.subscriptionGroupManager.get('GID_x')).toMatchObject({ consumeBroadcastEnable: false, retryMaxTimes: 3, retryQueueNums: 1 });

    const one = await t.server.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { extFields: { group: 'GID_x' } });
    expect(parseFastjson(one.body!)).toMatchObject({ groupName: 'GID_x', retryMaxTimes: 3 });

    const all = await t.server.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {});
    const parsed = parseFastjson(all.body!) as { subscriptionGroupTable: Record<string, unknown> };
    expect(Object.keys(parsed.subscriptionGroupTable)).toEqual(expect.arrayContaining(['TOOLS_CONSUMER', 'GID_x']));

    t.ctx.consumerOffsetManager.commitOffset('GID_x', 'T', 0, 9);
    const del = await t.server.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, { extFields: { groupName: 'GID_x', cleanOffset: 'true' } });
    expect(del.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.subscriptionGroupManager.get('GID_x')).toBeUndefined();
    expect(t.ctx.consumerOffsetManager.queryOffset('GID_x', 'T', 0)).toBe(-1);

    const badName = await t.server.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, { body: Buffer.from('{"groupName":"a b"}') });
    expect(badName.code).toBe(ResponseCode.INVALID_PARAMETER);
    const badBody = await t.server.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, { body: Buffer.from('{"groupName":"G","retryQueueNums":"x"}') });
    expect(badBody.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(badBody.remark).toMatch(/retryQueueNums/);
    const noBody = await t.server.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {});
    expect(noBody.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(noBody.remark).toMatch(/SubscriptionGroupConfig JSON body is required/);

    const t2 = setup({ autoCreateSubscriptionGroup: false });
    const missing = await t2.server.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { extFields: { group: 'nope' } });
    expect(missing.code).toBe(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
  });

  it('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (5.x): all or none', async () => {
    const t = setup();
    const list = (entries: unknown[]) => ({ body: Buffer.from(JSON.stringify({ groupConfigList: entries })) });
    const bad = await t.server.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, list([{ groupName: 'GL1' }, { groupName: 'a b' }]));
    expect(bad.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(t.ctx.subscriptionGroupManager.get('GL1')).toBeUndefined();
    const ok = await t.server.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, list([{ groupName: 'GL1' }, { groupName: 'GL2', retryMaxTimes: 5 }]));
    expect(ok.code).toBe(ResponseCode.SUCCESS);
    expect(t.ctx.subscriptionGroupManager.get('GL1')).toMatchObject({ retryMaxTimes: 16 });
    expect(t.ctx.subscriptionGroupManager.get('GL2')).toMatchObject({ retryMaxTimes: 5 });
    const notList = await t.server.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, { body: Buffer.from('{"groupConfigList":3}') });
    expect(notList.code).toBe(ResponseCode.INVALID_PARAMETER);
  });

  it('GET_CONSUME_STATS: object keys, committed/broker offsets, consumeTps 0.0', async () => {
    const t = setup();
    t.ctx.topicConfigManager.upsert(newTopicConfig('T', 2));
    t.store.setQueue('T', 0, 0, 10, 5_000);
    t.store.setQueue('T', 1, 0, 4, 5_000);
    t.ctx.consumerOffsetManager.commitOffset('G', 'T', 0, 7);
    const res = await t.server.call(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'G', topic: 'T' } });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.body?.toString()).toBe(
      '{"consumeTps":0.0,"offsetTable":{' +
        '{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"brokerOffset":10,"consumerOffset":7,"lastTimestamp":5006,"pullOffset":7},' +
        '{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"brokerOffset":4,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}}}',
    );
    // no topic: every topic the group has offsets for
    t.ctx.topicConfigManager.upsert(newTopicConfig('%RETRY%G', 1));
    t.ctx.consumerOffsetManager.commitOffset('G', '%RETRY%G', 0, 0);
    const all = await t.server.call(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'G' } });
    const text = all.body!.toString();
    expect(text).toContain('"topic":"%RETRY%G"}');
    expect(text.match(/"queueId"/g)?.length).toBe(3);
    // an online group only reports topics it subscribes
    await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('c', 'G', ['T']) });
    const online = await t.server.call(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'G' } });
    expect(online.body!.toString()).not.toContain('%RETRY%G"}');
    // 5.x topicList header bypasses the subscription filter
    const listed = await t.server.call(RequestCode.GET_CONSUME_STATS, { extFields: { consumerGroup: 'G', topicList: '%RETRY%G;nope' } });
    expect(listed.body!.toString().match(/"queueId"/g)?.length).toBe(1);
  });

  it('GET_BROKER_CONSUME_STATS: every group, its topics\' write queues, order topics with isOrder, total diffs', async () => {
    const t = setup();
    t.ctx.topicConfigManager.upsert(newTopicConfig('T', 2));
    t.ctx.topicConfigManager.upsert({ ...newTopicConfig('O', 1), order: true });
    t.store.setQueue('T', 0, 0, 10, 5_000);
    t.store.setQueue('T', 1, 0, 4, 5_000);
    t.store.setQueue('O', 0, 0, 3, 5_000);
    for (const g of ['G1', 'G2']) t.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(g);
    t.ctx.consumerOffsetManager.commitOffset('G1', 'T', 0, 7);
    t.ctx.consumerOffsetManager.commitOffset('G1', 'T', 1, 4);
    t.ctx.consumerOffsetManager.commitOffset('G2', 'O', 0, 1);
    t.ctx.consumerOffsetManager.commitOffset('G2', 'Gone', 0, 1); // no topic config: left out
    const res = await t.server.call(RequestCode.GET_BROKER_CONSUME_STATS, { extFields: { isOrder: 'false' } });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    const text = res.body!.toString();
    expect(text).toContain('"brokerAddr":"');
    expect(text).toContain(
      '{"G1":[{"consumeTps":0.0,"offsetTable":{' +
        '{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"brokerOffset":10,"consumerOffset":7,"lastTimestamp":5006,"pullOffset":7},' +
        '{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"brokerOffset":4,"consumerOffset":4,"lastTimestamp":5003,"pullOffset":4}}}]}',
    );
    expect(text).toContain('{"G2":[{"consumeTps":0.0,"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"O"}:');
    expect(text).not.toContain('Gone');
    expect(text).toMatch(/"totalDiff":5,"totalInflightDiff":0}$/);
    const ordered = await t.server.call(RequestCode.GET_BROKER_CONSUME_STATS, { extFields: { isOrder: 'true' } });
    expect(ordered.body!.toString()).toContain('{"G1":[]}');
    expect(ordered.body!.toString()).toMatch(/"totalDiff":2,/);
    // an online group only reports topics it subscribes
    await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('c', 'G2', ['T']) });
    const online = await t.server.call(RequestCode.GET_BROKER_CONSUME_STATS, { extFields: { isOrder: 'false' } });
    expect(online.body!.toString()).toContain('{"G2":[]}');
  });

  it('GET_CONSUMER_CONNECTION_LIST and GET_PRODUCER_CONNECTION_LIST shapes', async () => {
    const t = setup();
    const conn = new FakeConnection('10.0.0.9:5555');
    await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat('10.0.0.9@1', 'G', ['T'], ['P']), language: 'JAVA', version: 401 }, conn);
    const res = await t.server.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, { extFields: { consumerGroup: 'G' } });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.body?.toString()).toBe(
      '{"connectionSet":[{"clientAddr":"10.0.0.9:5555","clientId":"10.0.0.9@1","language":"JAVA","version":401}],' +
        '"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",' +
        '"subscriptionTable":{"T":{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1700000000000,"tagsSet":[],"topic":"T"}}}',
    );
    const off = await t.server.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, { extFields: { consumerGroup: 'X' } });
    expect(off.code).toBe(ResponseCode.CONSUMER_NOT_ONLINE);
    expect(off.remark).toBe('the consumer group[X] not online');

    const prod = await t.server.call(RequestCode.GET_PRODUCER_CONNECTION_LIST, { extFields: { producerGroup: 'P' } });
    expect(prod.body?.toString()).toBe('{"connectionSet":[{"clientAddr":"10.0.0.9:5555","clientId":"10.0.0.9@1","language":"JAVA","version":401}]}');
    const noProd = await t.server.call(RequestCode.GET_PRODUCER_CONNECTION_LIST, { extFields: { producerGroup: 'Q' } });
    expect(noProd.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(noProd.remark).toBe('the producer group[Q] not exist');
  });

  it('GET_ALL_CONSUMER_OFFSET and QUERY_TOPICS_BY_CONSUMER', async () => {
    const t = setup();
    t.ctx.consumerOffsetManager.commitOffset('G', 'T', 0, 3);
    const all = await t.server.call(RequestCode.GET_ALL_CONSUMER_OFFSET, {});
    // 5.x adds the table's dataVersion (a 5.3.3 slave's sync fails without it).
    const v = t.ctx.consumerOffsetManager.dataVersion;
    expect(parseFastjson(all.body!)).toEqual({
      dataVersion: { counter: v.counter, stateVersion: 0, timestamp: v.timestamp }, offsetTable: { 'T@G': { '0': 3 } },
    });
    const topics = await t.server.call(RequestCode.QUERY_TOPICS_BY_CONSUMER, { extFields: { group: 'G' } });
    expect(topics.body?.toString()).toBe('{"brokerAddr":"127.0.0.1:10911","topicList":["T"]}');
  });
});

describe('stats admin', () => {
  it('VIEW_BROKER_STATS_DATA: minute, hour and day figures of one item; a missing one is Java\'s SYSTEM_ERROR', async () => {
    const t = makeContext();
    t.server.registerTable(adminStatsProcessors(t.ctx));
    t.ctx.stats.items.countGet('DefaultCluster', 'T', 'G', 4, 400);
    t.ctx.stats.items.sample(20_000);
    const res = await t.server.call(RequestCode.VIEW_BROKER_STATS_DATA, { extFields: { statsName: 'GROUP_GET_NUMS', statsKey: 'T@G' } });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.body!.toString()).toBe(
      '{"statsDay":{"avgpt":4.0,"sum":4,"tps":0.0011111111111111111},"statsHour":{"avgpt":4.0,"sum":4,"tps":0.006666666666666667},' +
        '"statsMinute":{"avgpt":4.0,"sum":4,"tps":0.4}}',
    );
    const missing = await t.server.call(RequestCode.VIEW_BROKER_STATS_DATA, { extFields: { statsName: 'TOPIC_PUT_NUMS', statsKey: 'nope' } });
    expect(missing.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(missing.remark).toBe('The stats <TOPIC_PUT_NUMS> <nope> not exist');
  });
});

describe('broker admin', () => {
  it('GET_BROKER_RUNTIME_INFO fills every key mqadmin parses as a number', async () => {
    const t = setup();
    t.ctx.stats.msgPutTotal = 42;
    const res = await t.server.call(RequestCode.GET_BROKER_RUNTIME_INFO, {});
    expect(res.code).toBe(ResponseCode.SUCCESS);
    const { table } = parseFastjson(res.body!) as { table: Record<string, string> };
    for (const v of Object.values(table)) expect(typeof v).toBe('string');
    const numeric = [
      'msgPutTotalTodayNow',
      'msgGetTotalTodayNow',
      'msgPutTotalYesterdayMorning',
      'msgGetTotalYesterdayMorning',
      'msgPutTotalTodayMorning',
      'msgGetTotalTodayMorning',
      'earliestMessageTimeStamp',
      'commitLogDiskRatio',
      'pageCacheLockTimeMills',
      'sendThreadPoolQueueSize',
      'pullThreadPoolQueueSize',
      'sendThreadPoolQueueHeadWaitTimeMills',
      'pullThreadPoolQueueHeadWaitTimeMills',
      'timerReadBehind',
      'timerOffsetBehind',
      'timerCongestNum',
      'timerEnqueueTps',
      'timerDequeueTps',
      'bootTimestamp',
    ];
    for (const k of numeric) expect(Number.isFinite(Number(table[k])), `${k}=${table[k]}`).toBe(true);
    for (const k of ['putTps', 'getTransferredTps']) expect(Number.isFinite(Number(table[k].split(' ')[0])), k).toBe(true);
    expect(table.msgPutTotalTodayNow).toBe('42');
    expect(table.brokerVersionDesc).toBe('V4_9_8');
    expect(table.brokerVersion).toBe('409');
    expect(table.brokerActive).toBe('true');
    const ratio = Number(table.commitLogDiskRatio);
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeLessThanOrEqual(1);
    expect(table.runtime).toMatch(/^\[ 0 days, 0 hours, 0 minutes, \d+ seconds \]$/);
  });

  it('GET_BROKER_CONFIG: properties body and DataVersion header; UPDATE_BROKER_CONFIG applies and validates', async () => {
    const t = setup();
    const get = await t.server.call(RequestCode.GET_BROKER_CONFIG, {});
    const text = get.body!.toString();
    expect(text).toContain('brokerName=broker-a\n');
    expect(text).toContain('autoCreateTopicEnable=true\n');
    const v1 = JSON.parse(get.extFields.version) as { counter: number; stateVersion: number; timestamp: number };
    expect(Object.keys(v1)).toEqual(['counter', 'stateVersion', 'timestamp']);

    const up = await t.server.call(RequestCode.UPDATE_BROKER_CONFIG, { body: Buffer.from('autoCreateTopicEnable=false\nlockMaxLiveTimeMills=30000\nsomeUnknownKey=1\n') });
    expect(up.code).toBe(ResponseCode.SUCCESS);
    expect(t.config.autoCreateTopicEnable).toBe(false);
    expect(t.config.lockMaxLiveTimeMills).toBe(30000);
    const v2 = JSON.parse((await t.server.call(RequestCode.GET_BROKER_CONFIG, {})).extFields.version) as { counter: number };
    expect(v2.counter).toBe(v1.counter + 1);

    const bad = await t.server.call(RequestCode.UPDATE_BROKER_CONFIG, { body: Buffer.from('autoCreateTopicEnable=true\nlongPollingEnable=maybe\n') });
    expect(bad.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(bad.remark).toMatch(/longPollingEnable/);
    expect(t.config.autoCreateTopicEnable).toBe(false); // nothing applied
    const black = await t.server.call(RequestCode.UPDATE_BROKER_CONFIG, { body: Buffer.from('brokerConfigPath=/tmp/x\n') });
    expect(black.code).toBe(ResponseCode.NO_PERMISSION);
    const restart = await t.server.call(RequestCode.UPDATE_BROKER_CONFIG, { body: Buffer.from('listenPort=1234\n') });
    expect(restart.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(restart.remark).toMatch(/listenPort cannot be changed on a running broker/);

    const before = t.registrations;
    const perm = await t.server.call(RequestCode.UPDATE_BROKER_CONFIG, { body: Buffer.from('brokerPermission=4\n') });
    expect(perm.code).toBe(ResponseCode.SUCCESS);
    expect(t.config.brokerPermission).toBe(4);
    expect(t.registrations).toBe(before + 1);
  });

  it('formats like Java helpers', () => {
    expect(humanReadableByteCount(1000)).toBe('1000 B');
    expect(humanReadableByteCount(1536)).toBe('1.5 KiB');
    expect(humanReadableByteCount(10 * 1024 ** 3)).toBe('10.0 GiB');
    expect(formatRuntime(90061_000)).toBe('[ 1 days, 1 hours, 1 minutes, 1 seconds ]');
  });
});

describe('controller mode', () => {
  it('GET_BROKER_EPOCH_CACHE (mqadmin getBrokerEpoch) is refused as the official broker refuses it outside controller mode', async () => {
    const res = await setup().server.call(RequestCode.GET_BROKER_EPOCH_CACHE, {});
    expect([res.code, res.remark]).toEqual([ResponseCode.SYSTEM_ERROR, 'this request only for controllerMode ']);
  });
});
