import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, waitFor } from '../helpers/server.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createTypedTopic, grpcEndpoint, quietLogger, rmq, storedRecords } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

describe('gRPC endpoint: rocketmq-client-nodejs 1.0.8 consumers on POP', () => {
  let server: TestServer;
  let producer: Any;
  const clients: Any[] = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    for (const c of clients) await c.shutdown().catch(() => undefined);
    await producer?.shutdown().catch(() => undefined);
    await server?.stop();
  });

  async function simple(group: string, topic: string, filter: Any = '*') {
    const c = new rmq.SimpleConsumer({
      endpoints: grpcEndpoint(server), namespace: '', consumerGroup: group, subscriptions: new Map([[topic, filter]]),
      awaitDuration: 3000, logger: quietLogger,
    });
    await c.startup();
    clients.unshift(c);
    return c;
  }
  async function send(topic: string, msgs: Any[]) {
    if (!producer) {
      producer = new rmq.Producer({ endpoints: grpcEndpoint(server), namespace: '', logger: quietLogger });
      await producer.startup();
    }
    const out = [];
    for (const m of msgs) out.push(await producer.send({ topic, ...m }));
    return out;
  }

  it('SimpleConsumer receives what was sent (tag filter, properties, digest, attempt 1), acks, and nothing comes back', async () => {
    const topic = 'GrpcSimple';
    await createTypedTopic(server, topic, 'NORMAL', 4);
    const c = await simple('GS1', topic, 'TagA');
    const receipts = await send(topic, [
      ...[0, 1, 2, 3, 4].map((i) => ({ tag: 'TagA', keys: [`k${i}`], body: Buffer.from(`m${i}`), properties: new Map([['n', String(i)]]) })),
      { tag: 'TagB', body: Buffer.from('other tag') },
    ]);
    const got = new Map<string, Any>();
    await waitFor(async () => {
      for (const mv of await c.receive(16, 15_000)) {
        expect(got.has(mv.body.toString())).toBe(false);
        got.set(mv.body.toString(), mv);
        await c.ack(mv);
      }
      return got.size === 5;
    }, 30_000, '5 messages');
    const m3 = got.get('m3');
    expect(m3.tag).toBe('TagA');
    expect(m3.keys).toEqual(['k3']);
    expect(m3.properties.get('n')).toBe('3');
    expect(m3.deliveryAttempt).toBe(1);
    expect(m3.messageId).toBe(receipts[3].messageId);
    expect(m3.topic).toBe(topic);
    expect([...got.keys()].sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(await c.receive(16, 15_000)).toEqual([]);
    // the group is listed as a consumer with this client, and its progress counts the acked messages as consumed
    const info = server.broker.context.consumerManager.getConsumerGroupInfo('GS1');
    expect([...(info?.channels.values() ?? [])].map((ch) => ch.clientId)).toContain(c.clientId);
    // what mqadmin consumerConnection / consumerProgress ask the broker
    const admin = new RemotingClient(silentLogger());
    try {
      const conn = await admin.request(server.brokerAddr, createRequest(RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: 'GS1' }), 5000);
      expect(conn.code).toBe(0);
      const cc = parseFastjson(conn.body!) as { connectionSet: Array<{ clientId: string; language: string }>; consumeType: string };
      expect(cc.connectionSet.map((x) => x.clientId)).toContain(c.clientId);
      expect(cc.connectionSet.find((x) => x.clientId === c.clientId)?.language).toBe('HTTP'); // Node's x-mq-language
      expect(cc.consumeType).toBe('CONSUME_ACTIVELY');
      const stats = await admin.request(server.brokerAddr, createRequest(RequestCode.GET_CONSUME_STATS, { consumerGroup: 'GS1', topic }), 5000);
      expect(stats.code).toBe(0);
      const cs = parseFastjson(stats.body!) as { offsetTable: Map<unknown, { brokerOffset: number; consumerOffset: number }> | Record<string, { brokerOffset: number; consumerOffset: number }> };
      const rows = cs.offsetTable instanceof Map ? [...cs.offsetTable.values()] : Object.values(cs.offsetTable);
      expect(rows.reduce((a, r) => a + Number(r.brokerOffset), 0)).toBe(6);
      expect(rows.reduce((a, r) => a + Number(r.consumerOffset), 0)).toBe(6); // POP moves the offset at pop time
    } finally {
      await admin.close();
    }
  });

  it('redelivers after the invisible time (attempt 2); ChangeInvisibleDuration hands back a new handle that acks', async () => {
    const topic = 'GrpcRedeliver';
    await createTypedTopic(server, topic, 'NORMAL', 2);
    const c = await simple('GS2', topic);
    await send(topic, [{ body: Buffer.from('come-back') }, { body: Buffer.from('keep') }]);
    const first = new Map<string, Any>();
    await waitFor(async () => {
      for (const mv of await c.receive(16, 10_000)) first.set(mv.body.toString(), mv);
      return first.size === 2;
    }, 30_000, 'both messages');
    const keep = first.get('keep');
    const oldHandle = keep.receiptHandle;
    await c.changeInvisibleDuration(keep, 60_000);
    expect(keep.receiptHandle).not.toBe(oldHandle);
    let again: Any;
    await waitFor(async () => {
      again = (await c.receive(16, 10_000)).find((mv: Any) => mv.body.toString() === 'come-back');
      return again !== undefined;
    }, 45_000, 'come-back delivered again');
    expect(again.deliveryAttempt).toBe(2);
    await c.ack(again);
    await c.ack(keep);
    expect(await c.receive(16, 10_000)).toEqual([]);
  });

  it('past max attempts a receive forwards the message to %DLQ%<group>', async () => {
    const topic = 'GrpcDlq';
    await createTypedTopic(server, topic, 'NORMAL', 1);
    server.broker.context.subscriptionGroupManager.updateSubscriptionGroupConfig({
      ...server.broker.context.subscriptionGroupManager.findSubscriptionGroupConfig('GS3')!, retryMaxTimes: 1,
    });
    const c = await simple('GS3', topic);
    const [r] = await send(topic, [{ body: Buffer.from('dead-letter-me') }]);
    const attempts: number[] = [];
    await waitFor(async () => {
      for (const mv of await c.receive(16, 10_000)) attempts.push(mv.deliveryAttempt);
      return attempts.length >= 2;
    }, 60_000, 'two deliveries');
    expect(attempts).toEqual([1, 2]);
    await waitFor(async () => {
      expect(await c.receive(16, 10_000)).toEqual([]);
      return (await storedRecords(server, '%DLQ%GS3')).length > 0;
    }, 60_000, 'the DLQ copy');
    const [dlq] = await storedRecords(server, '%DLQ%GS3');
    expect(dlq.body.toString()).toBe('dead-letter-me');
    expect(dlq.props.get('UNIQ_KEY')).toBe(r.messageId);
  });

  it('PushConsumer consumes everything; a failure comes back as attempt 2', async () => {
    const topic = 'GrpcPush';
    await createTypedTopic(server, topic, 'NORMAL', 2);
    const seen = new Map<string, number[]>();
    let failed = false;
    const c = new rmq.PushConsumer({
      endpoints: grpcEndpoint(server), namespace: '', consumerGroup: 'GP1', subscriptions: new Map([[topic, new rmq.FilterExpression('*')]]),
      logger: quietLogger,
      messageListener: {
        async consume(mv: Any) {
          const b = mv.body.toString();
          seen.set(b, [...(seen.get(b) ?? []), mv.deliveryAttempt]);
          if (b === 'p3' && !failed) {
            failed = true;
            return rmq.ConsumeResult.FAILURE;
          }
          return rmq.ConsumeResult.SUCCESS;
        },
      },
    });
    await c.startup();
    clients.unshift(c);
    await send(topic, [0, 1, 2, 3, 4, 5].map((i) => ({ body: Buffer.from(`p${i}`) })));
    await waitFor(() => seen.size === 6 && (seen.get('p3')?.length ?? 0) >= 2, 60_000, 'six messages and the retry');
    expect(seen.get('p3')!.slice(0, 2)).toEqual([1, 2]);
    for (const [b, a] of seen) if (b !== 'p3') expect(a).toEqual([1]);
  });
});
