import { describe, expect, it } from 'vitest';
import { adminConsumerRelayProcessors } from '../../src/broker/processors/admin-consumer-relay.js';
import { adminOffsetProcessors } from '../../src/broker/processors/admin-offset.js';
import { clientManageProcessors } from '../../src/broker/processors/client-manage.js';
import { newTopicConfig } from '../../src/broker/topic/topic-config.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { type RemotingCommand, createResponse } from '../../src/remoting/command.js';
import { FakeConnection, javaHeartbeat, makeContext } from './helpers.js';

const BASE_TIME = 1_700_000_000_000;

/** A broker context with topic T (4 queues, 10 messages each, store time of offset n = BASE_TIME + n). */
function setup() {
  const t = makeContext();
  t.server.registerTable(clientManageProcessors(t.ctx));
  t.server.registerTable(adminOffsetProcessors(t.ctx));
  t.server.registerTable(adminConsumerRelayProcessors(t.ctx));
  t.ctx.topicConfigManager.upsert(newTopicConfig('T', 4));
  for (let q = 0; q < 4; q++) t.store.setQueue('T', q, 0, 10, BASE_TIME);
  const store = t.store as unknown as Record<string, unknown>;
  store.getOffsetInQueueByTime = async (_topic: string, _q: number, ts: number) => Math.min(10, Math.max(0, ts - BASE_TIME));
  store.getEarliestMessageTime = async () => BASE_TIME;
  return t;
}

/** offsetTable of a ResetOffsetBody as [queueId, offset] pairs. */
function resetTable(body: Buffer | undefined): Array<[number, number]> {
  const parsed = parseFastjson(body!) as { offsetTable: Map<{ queueId: number; topic: string; brokerName: string }, number> };
  return [...parsed.offsetTable].map(([mq, off]) => [mq.queueId, off] as [number, number]).sort((a, b) => a[0] - b[0]);
}

async function online(t: ReturnType<typeof setup>, clientId: string, group = 'G', language = 'JAVA'): Promise<FakeConnection> {
  const conn = new FakeConnection();
  await t.server.call(RequestCode.HEART_BEAT, { body: javaHeartbeat(clientId, group, ['T']), language, version: 409 }, conn);
  conn.sent.length = 0;
  return conn;
}

describe('INVOKE_BROKER_TO_RESET_OFFSET (222)', () => {
  const header = (extra: Record<string, string> = {}) => ({ topic: 'T', group: 'G', timestamp: String(BASE_TIME + 3), isForce: 'true', ...extra });

  it('answers like Java 4.9.x when the topic, the group offsets or the consumers are missing', async () => {
    const t = setup();
    expect((await t.server.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { extFields: header({ topic: 'nope' }) })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    const noGroup = await t.server.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { extFields: header() });
    expect([noGroup.code, noGroup.remark]).toEqual([ResponseCode.SYSTEM_ERROR, 'THe consumer group <G> not exist']);
    for (let q = 0; q < 4; q++) t.ctx.consumerOffsetManager.commitOffset('G', 'T', q, 8);
    const offline = await t.server.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { extFields: header() });
    expect(offline.code).toBe(ResponseCode.CONSUMER_NOT_ONLINE); // mqadmin then resets through UPDATE_CONSUMER_OFFSET
    expect(t.ctx.consumerOffsetManager.queryOffset('G', 'T', 0)).toBe(8);
  });

  it('computes the offsets by time and pushes them to every client of the group (220, oneway)', async () => {
    const t = setup();
    for (let q = 0; q < 4; q++) t.ctx.consumerOffsetManager.commitOffset('G', 'T', q, q === 0 ? 1 : 8);
    const a = await online(t, '10.0.0.1@a');
    const b = await online(t, '10.0.0.2@b');
    const forced = await t.server.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { extFields: header() });
    expect(forced.code).toBe(ResponseCode.SUCCESS);
    expect(resetTable(forced.body)).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(forced.body!.toString()).toMatch(/^\{"offsetTable":\{\{"brokerName":"broker-a","queueId":\d,"topic":"T"\}:3,/);
    for (const conn of [a, b]) {
      const pushed = conn.sent.find((c) => c.code === RequestCode.RESET_CONSUMER_CLIENT_OFFSET);
      expect(pushed?.extFields).toEqual({ topic: 'T', group: 'G', timestamp: String(BASE_TIME + 3), isForce: 'false' });
      expect(pushed?.flag).toBe(2); // oneway
      expect(resetTable(pushed?.body)).toEqual(resetTable(forced.body));
    }
    // Not forced: a queue is only moved back, never forward (queue 0 stays at its committed 1).
    const gentle = await t.server.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { extFields: header({ isForce: 'false' }) });
    expect(resetTable(gentle.body)).toEqual([
      [0, 1],
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    // timestamp -1 = the end of each queue; the broker itself commits nothing (the clients do)
    const toEnd = await t.server.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { extFields: header({ timestamp: '-1' }) });
    expect(resetTable(toEnd.body).map(([, o]) => o)).toEqual([10, 10, 10, 10]);
    expect(t.ctx.consumerOffsetManager.queryOffset('G', 'T', 1)).toBe(8);
  });

  it('honours the 5.x queueId/offset fields and sends C++ clients the list form', async () => {
    const t = setup();
    for (let q = 0; q < 4; q++) t.ctx.consumerOffsetManager.commitOffset('G', 'T', q, 8);
    const cpp = await online(t, '10.0.0.3@c', 'G', 'CPP');
    const one = await t.server.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { extFields: header({ queueId: '2', offset: '5' }) });
    expect(resetTable(one.body)).toEqual([[2, 5]]);
    expect(cpp.sent[0].body!.toString()).toBe('{"offsetTable":[{"brokerName":"broker-a","offset":5,"queueId":2,"topic":"T"}]}');
  });
});

describe('CLONE_GROUP_OFFSET (314) and QUERY_CONSUME_TIME_SPAN (303)', () => {
  it('clones the source group offsets of a topic, or of all its topics', async () => {
    const t = setup();
    t.ctx.topicConfigManager.upsert(newTopicConfig('U', 1));
    t.ctx.consumerOffsetManager.commitOffset('S', 'T', 0, 4);
    t.ctx.consumerOffsetManager.commitOffset('S', 'T', 1, 5);
    t.ctx.consumerOffsetManager.commitOffset('S', 'U', 0, 6);
    t.ctx.consumerOffsetManager.commitOffset('D', 'T', 3, 9);
    const res = await t.server.call(RequestCode.CLONE_GROUP_OFFSET, { extFields: { srcGroup: 'S', destGroup: 'D', topic: 'T', offline: 'true' } });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect([...(t.ctx.consumerOffsetManager.queryOffsets('D', 'T') ?? [])]).toEqual([
      [0, 4],
      [1, 5],
    ]);
    expect(t.ctx.consumerOffsetManager.queryOffset('D', 'U', 0)).toBe(-1);
    await t.server.call(RequestCode.CLONE_GROUP_OFFSET, { extFields: { srcGroup: 'S', destGroup: 'E', offline: 'true' } });
    expect(t.ctx.consumerOffsetManager.queryOffset('E', 'U', 0)).toBe(6);
  });

  it('reports per queue the stored time span and the consumed position', async () => {
    const t = setup();
    t.ctx.consumerOffsetManager.commitOffset('G', 'T', 0, 4);
    t.ctx.consumerOffsetManager.commitOffset('G', 'T', 1, 10);
    const res = await t.server.call(RequestCode.QUERY_CONSUME_TIME_SPAN, { extFields: { topic: 'T', group: 'G' } });
    const spans = (parseFastjson(res.body!) as { consumeTimeSpanSet: Array<Record<string, unknown>> }).consumeTimeSpanSet;
    expect(spans).toHaveLength(4);
    expect(spans[0]).toMatchObject({ messageQueue: { brokerName: 'broker-a', queueId: 0, topic: 'T' }, minTimeStamp: BASE_TIME, maxTimeStamp: BASE_TIME + 9, consumeTimeStamp: BASE_TIME + 3 });
    expect(spans[0].delayTime as number).toBeGreaterThan(0);
    expect(spans[1]).toMatchObject({ consumeTimeStamp: BASE_TIME + 9, delayTime: 0 });
    expect(spans[2]).toMatchObject({ consumeTimeStamp: BASE_TIME }); // never consumed: the earliest message
    expect(spans[0].minTimeStampStr).toMatch(/^\d{4}-\d\d-\d\d#\d\d:\d\d:\d\d:\d{3}$/);
    expect((await t.server.call(RequestCode.QUERY_CONSUME_TIME_SPAN, { extFields: { topic: 'nope', group: 'G' } })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
  });
});

describe('relays to a consumer: GET_CONSUMER_RUNNING_INFO (307), CONSUME_MESSAGE_DIRECTLY (309)', () => {
  /** A connection whose client answers broker requests with `answer`. */
  function answering(conn: FakeConnection, answer: (req: RemotingCommand) => RemotingCommand): RemotingCommand[] {
    const seen: RemotingCommand[] = [];
    (conn as unknown as { request: (req: RemotingCommand) => Promise<RemotingCommand> }).request = async (req) => {
      seen.push(req);
      return answer(req);
    };
    return seen;
  }

  it('forwards to the named client and returns its reply; names an offline client', async () => {
    const t = setup();
    const conn = await online(t, '10.0.0.1@a');
    const seen = answering(conn, () => createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from('{"jstack":"x"}')));
    const res = await t.server.call(RequestCode.GET_CONSUMER_RUNNING_INFO, { extFields: { consumerGroup: 'G', clientId: '10.0.0.1@a', jstackEnable: 'false' } });
    expect([res.code, res.body?.toString()]).toEqual([ResponseCode.SUCCESS, '{"jstack":"x"}']);
    expect(seen[0]).toMatchObject({ code: RequestCode.GET_CONSUMER_RUNNING_INFO, extFields: { consumerGroup: 'G', clientId: '10.0.0.1@a', jstackEnable: 'false' } });
    const gone = await t.server.call(RequestCode.GET_CONSUMER_RUNNING_INFO, { extFields: { consumerGroup: 'G', clientId: '10.0.0.9@z' } });
    expect([gone.code, gone.remark]).toEqual([ResponseCode.SYSTEM_ERROR, 'The Consumer <G> <10.0.0.9@z> not online']);
  });

  it('loads the record named by an offset msgId and hands it to the client', async () => {
    const t = setup();
    const conn = await online(t, '10.0.0.1@a');
    const seen = answering(conn, () => createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from('{"consumeResult":"CR_SUCCESS"}')));
    t.store.records.set(0x1234, Buffer.from('record'));
    const msgId = '7F00000100002A9F0000000000001234';
    const res = await t.server.call(RequestCode.CONSUME_MESSAGE_DIRECTLY, { extFields: { consumerGroup: 'G', clientId: '10.0.0.1@a', msgId } });
    expect(res.body?.toString()).toBe('{"consumeResult":"CR_SUCCESS"}');
    expect(seen[0].body?.toString()).toBe('record');
    expect(seen[0].extFields).toEqual({ consumerGroup: 'G', clientId: '10.0.0.1@a', msgId, brokerName: 'broker-a' });
    const missing = await t.server.call(RequestCode.CONSUME_MESSAGE_DIRECTLY, { extFields: { consumerGroup: 'G', clientId: '10.0.0.1@a', msgId: '7F00000100002A9F0000000000009999' } });
    expect(missing.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(seen).toHaveLength(1);
  });
});
