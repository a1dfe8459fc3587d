import { Message } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { type TestServer, createTopic, startTestServer, waitFor } from '../helpers/server.js';

const TAGS = ['TagA', 'TagB', 'TagC'];

/** Sends `count` messages with tags and keys; returns key → body. */
async function produce(namesrvAddr: string, topic: string, count: number): Promise<Map<string, string>> {
  if (!createdTopics.has(topic)) {
    await createTopic(server, topic, 4);
    createdTopics.add(topic);
  }
  const producer = onsProducer(namesrvAddr, `PG_${topic}`);
  await producer.ready();
  const sent = new Map<string, string>();
  try {
    for (let i = 0; i < count; i++) {
      const key = `${topic}-k${i}`;
      const body = `body ${i} of ${topic} ✓`;
      const msg = new Message(topic, TAGS[i % TAGS.length], body);
      msg.keys = [key];
      const result = await producer.send(msg);
      expect(result.sendStatus).toBe('SEND_OK');
      sent.set(key, body);
    }
  } finally {
    await producer.close();
  }
  return sent;
}

let server: TestServer;
const createdTopics = new Set<string>();

describe('ali-ons (npm) against rocketmq-ts', () => {

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('delivers 1,000 messages with tags and keys to a push consumer group', async () => {
    const topic = 'OnsTopicAll';
    const sent = await produce(server.namesrvAddr, topic, 1000);
    const received = new Map<string, { body: string; tags: string }>();
    const consumer = onsConsumer(server.namesrvAddr, 'GID_ons_all');
    consumer.subscribe(topic, '*', async (msg) => {
      received.set(msg.keys, { body: msg.body.toString(), tags: msg.tags });
    });
    try {
      await consumer.ready();
      await waitFor(() => received.size >= sent.size, 60_000, `1000 messages (got ${received.size})`);
    } finally {
      await consumer.close();
    }
    for (const [key, body] of sent) {
      expect(received.get(key)?.body).toBe(body);
    }
    const tagCounts = new Map<string, number>();
    for (const v of received.values()) tagCounts.set(v.tags, (tagCounts.get(v.tags) ?? 0) + 1);
    expect([...tagCounts.keys()].sort()).toEqual(TAGS);
  });

  it('filters by tag on the broker and the client', async () => {
    const topic = 'OnsTopicTags';
    const sent = await produce(server.namesrvAddr, topic, 60);
    const got: string[] = [];
    const consumer = onsConsumer(server.namesrvAddr, 'GID_ons_tags');
    consumer.subscribe(topic, 'TagA || TagC', async (msg) => {
      got.push(msg.tags);
    });
    try {
      await consumer.ready();
      await waitFor(() => got.length >= 40, 30_000, `40 TagA/TagC messages (got ${got.length})`);
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await consumer.close();
    }
    expect(sent.size).toBe(60);
    expect(got.length).toBe(40);
    expect(got.every((t) => t === 'TagA' || t === 'TagC')).toBe(true);
  });

  it('splits the queues between two consumers of one group', async () => {
    const topic = 'OnsTopicSplit';
    await createTopic(server, topic, 4);
    createdTopics.add(topic);
    const byConsumer = [new Set<string>(), new Set<string>()];
    const consumers = [0, 1].map((i) => {
      const c = onsConsumer(server.namesrvAddr, 'GID_ons_split');
      c.subscribe(topic, '*', async (msg) => {
        byConsumer[i].add(msg.keys);
      });
      return c;
    });
    try {
      await Promise.all(consumers.map((c) => c.ready()));
      // Both must own queues: wait until the rebalance settles, then send.
      await waitFor(
        () => consumers.every((c) => [...c.processQueueTable.keys()].some((k) => k.includes(topic))),
        30_000,
        'both consumers to own queues',
      );
      const sent = await produce(server.namesrvAddr, topic, 200);
      await waitFor(() => byConsumer[0].size + byConsumer[1].size >= sent.size, 30_000, 'all messages split across consumers');
      expect(byConsumer[0].size).toBeGreaterThan(0);
      expect(byConsumer[1].size).toBeGreaterThan(0);
      const union = new Set([...byConsumer[0], ...byConsumer[1]]);
      for (const key of sent.keys()) expect(union.has(key)).toBe(true);
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
  });

  it('resumes a restarted consumer from its committed offset', async () => {
    const topic = 'OnsTopicResume';
    const first = await produce(server.namesrvAddr, topic, 50);
    const seen1 = new Set<string>();
    const c1 = onsConsumer(server.namesrvAddr, 'GID_ons_resume');
    c1.subscribe(topic, '*', async (msg) => {
      seen1.add(msg.keys);
    });
    await c1.ready();
    await waitFor(() => seen1.size >= first.size, 30_000, 'first batch');
    await c1.close(); // persists offsets to the broker

    const second = new Map<string, string>();
    const producer = onsProducer(server.namesrvAddr, 'PG_resume2');
    await producer.ready();
    for (let i = 0; i < 30; i++) {
      const msg = new Message(topic, 'TagR', `second ${i}`);
      msg.keys = [`${topic}-second-${i}`];
      await producer.send(msg);
      second.set(msg.keys, `second ${i}`);
    }
    await producer.close();

    const seen2 = new Set<string>();
    const c2 = onsConsumer(server.namesrvAddr, 'GID_ons_resume');
    c2.subscribe(topic, '*', async (msg) => {
      seen2.add(msg.keys);
    });
    try {
      await c2.ready();
      await waitFor(() => [...second.keys()].every((k) => seen2.has(k)), 30_000, 'second batch');
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await c2.close();
    }
    const replayed = [...seen2].filter((k) => first.has(k));
    expect(replayed).toEqual([]);
  });

  it('keeps every message across a broker restart', async () => {
    const topic = 'OnsTopicRestart';
    const sent = await produce(server.namesrvAddr, topic, 300);
    await server.restartBroker();
    const received = new Set<string>();
    const consumer = onsConsumer(server.namesrvAddr, 'GID_ons_restart');
    consumer.subscribe(topic, '*', async (msg) => {
      received.add(msg.keys);
    });
    try {
      await consumer.ready();
      await waitFor(() => received.size >= sent.size, 60_000, `all messages after restart (got ${received.size})`);
    } finally {
      await consumer.close();
    }
    for (const key of sent.keys()) expect(received.has(key)).toBe(true);
  });
});
