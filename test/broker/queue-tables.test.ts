// Per-queue admin answers of a topic with the most queues a topic may have (16,384): the same text as encoded in
// one piece, and the event loop gets turns while they are built. Before queue-tables.ts, building them held the
// loop 80–300 ms each (the fuzz's seed 5150 failed its stall check on them), so a send or pull of any other client
// waited that long.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JavaDouble, parseFastjson, stringifyFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { MAX_TOPIC_QUEUE_NUMS } from '../../src/broker/processors/admin-topic.js';
import {
  QUEUES_PER_TURN, encodeMessageQueueTable, encodeMessageQueueTableInTurns, stringifyArrayInTurns,
} from '../../src/broker/processors/queue-tables.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const table = (n: number) => Array.from({ length: n }, (_, queueId) => [
  { brokerName: 'broker-a', queueId, topic: 'T' }, { lastUpdateTimestamp: queueId * 7, maxOffset: queueId, minOffset: 0 },
] as [{ brokerName: string; queueId: number; topic: string }, object]);

describe('queue tables encoded in turns', () => {
  it('gives the text of the one-piece encoding, at every size around the chunk', async () => {
    for (const n of [0, 1, QUEUES_PER_TURN - 1, QUEUES_PER_TURN, QUEUES_PER_TURN + 1, 2 * QUEUES_PER_TURN + 500]) {
      for (const extra of [{}, { consumeTps: new JavaDouble(0) }, { topicPutTps: new JavaDouble(2.5) }]) {
        expect(await encodeMessageQueueTableInTurns(table(n), extra)).toBe(encodeMessageQueueTable(table(n), extra));
      }
      const spans = table(n).map(([mq, v]) => ({ ...v, messageQueue: mq, text: 'a"b\u00e9' }));
      expect(await stringifyArrayInTurns(spans)).toBe(stringifyFastjson(spans));
    }
  });
});

describe(`admin answers for a topic of ${MAX_TOPIC_QUEUE_NUMS} queues`, () => {
  let server: TestServer;
  const client = new RemotingClient(silentLogger());
  beforeAll(async () => {
    server = await startTestServer();
    const res = await client.request(server.brokerAddr, createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic: 'WideT', defaultTopic: 'TBW102', readQueueNums: String(MAX_TOPIC_QUEUE_NUMS), writeQueueNums: String(MAX_TOPIC_QUEUE_NUMS),
      perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
    }), 30_000);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
  });
  afterAll(async () => {
    await client.close();
    await server?.stop();
  });

  /** The answer, and how many turns the event loop of this process (the broker's too) took while it was built. */
  const withTurns = async (code: number, extFields: Record<string, string>) => {
    let turns = 0;
    let running = true;
    const spin = () => {
      turns++;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const res = await client.request(server.brokerAddr, createRequest(code, extFields), 60_000);
    running = false;
    return { res, turns };
  };

  it.each([
    ['GET_TOPIC_STATS_INFO', RequestCode.GET_TOPIC_STATS_INFO, { topic: 'WideT' }, 'offsetTable'],
    ['GET_CONSUME_STATS', RequestCode.GET_CONSUME_STATS, { consumerGroup: 'WideG', topic: 'WideT' }, 'offsetTable'],
    ['QUERY_CONSUME_TIME_SPAN', RequestCode.QUERY_CONSUME_TIME_SPAN, { topic: 'WideT', group: 'WideG' }, 'consumeTimeSpanSet'],
  ] as const)('%s: every queue in the answer, built over many turns of the event loop', async (_name, code, ext, field) => {
    const { res, turns } = await withTurns(code, ext);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    const parsed = parseFastjson(res.body!) as Record<string, unknown>;
    const entries = parsed[field] instanceof Map ? [...(parsed[field] as Map<unknown, unknown>).keys()] : (parsed[field] as unknown[]);
    expect(entries).toHaveLength(MAX_TOPIC_QUEUE_NUMS);
    // one turn per QUEUES_PER_TURN queues gathered and again per as many encoded (in one piece: 1 to 3 turns)
    expect(turns).toBeGreaterThanOrEqual(MAX_TOPIC_QUEUE_NUMS / QUEUES_PER_TURN);
  });
});
