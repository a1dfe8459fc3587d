import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, waitFor } from '../helpers/server.js';
import { javaStringHashCode } from '../../src/common/java-hash.js';
import { consistentHash } from '../../src/grpc/send-properties.js';
import { createTypedTopic, grpcEndpoint, quietLogger, rmq, storedRecords } from './helpers.js';

describe('gRPC endpoint: rocketmq-client-nodejs 1.0.8 producer', () => {
  let server: TestServer;
  const clients: Array<{ shutdown(): Promise<void> }> = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    for (const c of clients) await c.shutdown().catch(() => undefined);
    await server?.stop();
  });

  async function producer(topic: string, extra: Record<string, unknown> = {}) {
    const p = new rmq.Producer({ endpoints: grpcEndpoint(server), namespace: '', topics: [topic], logger: quietLogger, ...extra });
    await p.startup();
    clients.push(p);
    return p;
  }

  it('sends to a topic auto-created at QueryRoute; the stored message carries what the client sent', async () => {
    const topic = 'GrpcAuto';
    const p = await producer(topic);
    const before = Date.now();
    const receipt = await p.send({
      topic, tag: 'TagA', keys: ['k1', 'k2'], body: Buffer.from('hello grpc'), properties: new Map([['color', 'red']]),
    });
    expect(receipt.messageId).toMatch(/^01[0-9A-F]{32}$/);
    expect(receipt.transactionId).toBe(receipt.messageId);
    const tc = server.broker.context.topicConfigManager.get(topic);
    expect(tc?.writeQueueNums).toBe(8);
    const [rec] = await storedRecords(server, topic);
    expect(rec.body.toString()).toBe('hello grpc');
    expect(rec.props.get('TAGS')).toBe('TagA');
    expect(rec.props.get('KEYS')).toBe('k1 k2');
    expect(rec.props.get('UNIQ_KEY')).toBe(receipt.messageId);
    expect(rec.props.get('color')).toBe('red');
    expect(rec.props.get('PGROUP')).toBe(topic);
    expect(rec.props.get('RECONSUME_TIME')).toBe('0');
    expect(rec.props.get('__BORNHOST')).toBe(os.hostname()); // Node sends its host name as born_host
    expect(Number(rec.props.get('BORN_TIMESTAMP'))).toBe(rec.bornTimestamp);
    expect(rec.bornTimestamp).toBeGreaterThanOrEqual(before - 5);
    expect(rec.queueOffset).toBe(receipt.offset);
    // listed as a producer of group = topic, as the proxy registers it
    const producers = server.broker.context.producerManager.getGroupChannels(topic);
    expect([...(producers?.values() ?? [])].map((c) => c.clientId)).toContain(p.clientId);
  });

  it('pins a FIFO message group to one queue by Guava consistentHash over the write queues', async () => {
    const topic = 'GrpcFifo';
    await createTypedTopic(server, topic, 'FIFO', 4);
    const p = await producer(topic);
    for (let i = 0; i < 6; i++) await p.send({ topic, messageGroup: 'order-1', body: Buffer.from(`f${i}`) });
    const recs = await storedRecords(server, topic);
    expect(recs.map((r) => r.body.toString())).toEqual(['f0', 'f1', 'f2', 'f3', 'f4', 'f5']);
    expect(new Set(recs.map((r) => r.queueId))).toEqual(new Set([consistentHash(javaStringHashCode('order-1'), 4)]));
    expect(recs[0].props.get('__SHARDINGKEY')).toBe('order-1');
  });

  it('delivers a delayed message through the timer when due, not before', async () => {
    const topic = 'GrpcDelay';
    await createTypedTopic(server, topic, 'DELAY', 2);
    const p = await producer(topic);
    const due = Date.now() + 2000;
    await p.send({ topic, body: Buffer.from('later'), deliveryTimestamp: new Date(due) });
    expect(await storedRecords(server, topic)).toHaveLength(0);
    await waitFor(async () => (await storedRecords(server, topic)).length === 1, 15_000, 'the delayed message');
    expect(Date.now()).toBeGreaterThanOrEqual(due - 1000);
    const [rec] = await storedRecords(server, topic);
    expect(rec.props.get('TIMER_DELIVER_MS')).toBe(String(due));
  });
});
