#!/usr/bin/env node
// gRPC client scenarios through an official rocketmq-proxy 5.3.3 in cluster mode: the proxy speaks remoting POP to
// the broker behind it (ours or the official one), so these scenarios prove the broker's POP with stock software.
// Client: npm rocketmq-client-nodejs 1.0.8 (Producer, SimpleConsumer, PushConsumer).
//
//   node compat/grpc/run.mjs --proxy=127.0.0.1:G --namesrv=127.0.0.1:N --broker=127.0.0.1:B [--only=a,b] [--list]
//
// Prints `PASS name (1.2s)`, `FAIL name (1.2s): reason`, then `scenarios: N passed, N failed` (compat/runner.mjs
// parses these lines as it does the Java harness's). Topics and groups are created with raw admin requests
// (admin.mjs) carrying message.type, as `mqadmin updateTopic -a +message.type=…` does. Exit 0 = all passed.
// Waits are for events; a deadline only bounds a broken server. The proxy refuses invisible times under 10 s, so
// re-delivery scenarios take 10-20 s each.
import { createRequire } from 'node:module';
import { awaitRoute, createGroup, createTopic, maxOffset, pullBodies } from './admin.mjs';

const require = createRequire(import.meta.url);
const { Producer, SimpleConsumer, PushConsumer, ConsumeResult, FilterExpression } = require('rocketmq-client-nodejs');

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([a-z]+)(?:=(.*))?$/.exec(a);
  if (!m) throw new Error(`unexpected argument ${a}`);
  return [m[1], m[2] ?? 'true'];
}));
const RUN = Date.now().toString(36);
const WAIT_MS = Number(args.waitMs ?? 60_000);
const logger = { info() {}, warn() {}, error() {}, debug() {}, close() {} };
const endpoints = args.proxy;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function assert(cond, what) {
  if (!cond) throw new Error(what);
}
async function until(what, fn, timeoutMs = WAIT_MS) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** Per scenario: clients to shut down (consumers first, so their streams complete before anything stops). */
class Scope {
  constructor() {
    this.clients = [];
  }
  async producer(topic) {
    const p = new Producer({ endpoints, namespace: '', topics: [topic], logger, requestTimeout: 10_000 });
    await p.startup();
    this.clients.push(p);
    return p;
  }
  async simple(group, topic, filter = '*', awaitDuration = 5000) {
    const c = new SimpleConsumer({ endpoints, namespace: '', consumerGroup: group, subscriptions: new Map([[topic, filter]]), awaitDuration, logger, requestTimeout: 10_000 });
    await c.startup();
    this.clients.unshift(c);
    return c;
  }
  async push(group, topic, consume) {
    const c = new PushConsumer({
      endpoints, namespace: '', consumerGroup: group, subscriptions: new Map([[topic, new FilterExpression('*')]]), logger,
      messageListener: { consume }, requestTimeout: 10_000,
    });
    await c.startup();
    this.clients.unshift(c);
    return c;
  }
  async close() {
    for (const c of this.clients) await c.shutdown().catch(() => undefined);
  }
}

async function setup(topic, group, { type = 'NORMAL', retryMaxTimes = 16, orderly = false, queues = 4 } = {}) {
  await createTopic(args.broker, topic, { type, queues });
  await createGroup(args.broker, group, { retryMaxTimes, orderly });
  await awaitRoute(args.namesrv, topic);
}

const body = (mv) => mv.body.toString();

const SCENARIOS = {
  /** Producer → SimpleConsumer: every message once, with tag, keys and properties; acked ones stay acked. */
  async simpleReceiveAck(s) {
    const topic = `GT_simple_${RUN}`;
    const group = `GG_simple_${RUN}`;
    await setup(topic, group);
    const p = await s.producer(topic);
    const sent = new Set();
    for (let i = 0; i < 10; i++) {
      await p.send({ topic, tag: 'TagA', keys: [`k${i}`], body: Buffer.from(`simple-${i}`), properties: new Map([['n', String(i)]]) });
      sent.add(`simple-${i}`);
    }
    const c = await s.simple(group, topic);
    const got = new Map();
    await until('10 messages received', async () => {
      for (const mv of await c.receive(16, 30_000)) {
        assert(!got.has(body(mv)), `duplicate ${body(mv)}`);
        got.set(body(mv), mv);
        assert(mv.tag === 'TagA' && mv.keys[0] === `k${body(mv).slice(7)}` && mv.properties.get('n') === body(mv).slice(7), `attributes of ${body(mv)}`);
        assert(mv.deliveryAttempt === 1, `delivery attempt ${mv.deliveryAttempt}`);
        await c.ack(mv);
      }
      return got.size === sent.size;
    });
    const extra = await c.receive(16, 30_000);
    assert(extra.length === 0, `unexpected re-delivery of ${extra.map(body)}`);
  },

  /** Not acked: back after the invisible time (delivery attempt 2); change invisible duration + ack with the new handle. */
  async redeliveryAndChangeInvisible(s) {
    const topic = `GT_redeliver_${RUN}`;
    const group = `GG_redeliver_${RUN}`;
    await setup(topic, group);
    const p = await s.producer(topic);
    await p.send({ topic, body: Buffer.from('redeliver-me') });
    await p.send({ topic, body: Buffer.from('keep-invisible') });
    const c = await s.simple(group, topic);
    const first = new Map();
    await until('both messages', async () => {
      for (const mv of await c.receive(16, 10_000)) first.set(body(mv), mv);
      return first.size === 2;
    });
    // keep one invisible for longer, then ack it with the handle ChangeInvisibleDuration returned
    const keep = first.get('keep-invisible');
    await c.changeInvisibleDuration(keep, 40_000);
    const again = await until('re-delivery after 10 s', async () => (await c.receive(16, 10_000)).find((mv) => body(mv) === 'redeliver-me'), 90_000);
    assert(again.deliveryAttempt === 2, `delivery attempt ${again.deliveryAttempt}`);
    await c.ack(again);
    await c.ack(keep);
    const extra = await c.receive(16, 15_000);
    assert(extra.length === 0, `unexpected re-delivery of ${extra.map(body)}`);
  },

  /** retryMaxTimes 1 (max attempts 2): the third receive forwards the message to %DLQ%<group>. */
  async retryToDlq(s) {
    const topic = `GT_dlq_${RUN}`;
    const group = `GG_dlq_${RUN}`;
    await setup(topic, group, { retryMaxTimes: 1 });
    const p = await s.producer(topic);
    await p.send({ topic, body: Buffer.from('dead-letter-me') });
    const c = await s.simple(group, topic);
    const attempts = [];
    await until('two deliveries', async () => {
      for (const mv of await c.receive(16, 10_000)) attempts.push(mv.deliveryAttempt);
      return attempts.length >= 2;
    }, 90_000);
    assert(attempts.join(',') === '1,2', `delivery attempts ${attempts}`);
    const dlq = `%DLQ%${group}`;
    await until('the message in the DLQ', async () => {
      const more = await c.receive(16, 10_000);
      assert(more.length === 0, `delivered a third time: attempt ${more.map((m) => m.deliveryAttempt)}`);
      return (await maxOffset(args.broker, dlq)) > 0;
    }, 90_000);
    const bodies = await pullBodies(args.broker, dlq);
    assert(bodies.join(',') === 'dead-letter-me', `DLQ holds ${bodies}`);
  },

  /** FIFO topic + orderly group: a message group's batch blocks its queue until acked, then the next comes. */
  async fifo(s) {
    const topic = `GT_fifo_${RUN}`;
    const group = `GG_fifo_${RUN}`;
    await setup(topic, group, { type: 'FIFO', orderly: true, queues: 2 });
    const p = await s.producer(topic);
    for (let i = 0; i < 3; i++) await p.send({ topic, messageGroup: 'g1', body: Buffer.from(`fifo-${i}`) });
    const c = await s.simple(group, topic);
    const batch = await until('the first batch', async () => c.receive(16, 15_000).then((l) => (l.length ? l : undefined)));
    assert(batch.every((mv, i) => body(mv) === `fifo-${i}`), `order ${batch.map(body)}`);
    // nothing else while the batch is out
    const blocked = await c.receive(16, 15_000);
    assert(blocked.length === 0, `queue not blocked: got ${blocked.map(body)}`);
    for (const mv of batch) await c.ack(mv);
    await p.send({ topic, messageGroup: 'g1', body: Buffer.from('fifo-3') });
    const seen = batch.map(body);
    await until('the rest in order', async () => {
      for (const mv of await c.receive(16, 15_000)) {
        seen.push(body(mv));
        await c.ack(mv);
      }
      return seen.length >= 4;
    });
    assert(seen.join(',') === 'fifo-0,fifo-1,fifo-2,fifo-3', `order ${seen}`);
  },

  /** PushConsumer: everything consumed; one failure comes back (Node nacks with 0 ms) as delivery attempt 2. */
  async pushConsumer(s) {
    const topic = `GT_push_${RUN}`;
    const group = `GG_push_${RUN}`;
    await setup(topic, group);
    const p = await s.producer(topic);
    const seen = new Map();
    let failedOnce = false;
    await s.push(group, topic, async (mv) => {
      const b = body(mv);
      seen.set(b, [...(seen.get(b) ?? []), mv.deliveryAttempt]);
      if (b === 'push-3' && !failedOnce) {
        failedOnce = true;
        return ConsumeResult.FAILURE;
      }
      return ConsumeResult.SUCCESS;
    });
    for (let i = 0; i < 8; i++) await p.send({ topic, body: Buffer.from(`push-${i}`) });
    await until('8 messages and the retried one', async () => seen.size === 8 && (seen.get('push-3')?.length ?? 0) >= 2, 60_000);
    assert(seen.get('push-3').slice(0, 2).join(',') === '1,2', `attempts of the failed message ${seen.get('push-3')}`);
    for (const [b, attempts] of seen) if (b !== 'push-3') assert(attempts.length === 1, `${b} delivered ${attempts.length} times`);
  },
};

async function main() {
  if (args.list) {
    for (const n of Object.keys(SCENARIOS)) console.log(`GrpcProxy#${n}`);
    return 0;
  }
  for (const k of ['proxy', 'namesrv', 'broker']) if (!args[k]) throw new Error(`--${k}=host:port is required`);
  const only = args.only ? new Set(args.only.split(',')) : undefined;
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of Object.entries(SCENARIOS)) {
    if (only && !only.has(name)) continue;
    const full = `GrpcProxy#${name}`;
    console.log(`RUN ${full}`);
    const t0 = Date.now();
    const scope = new Scope();
    try {
      await fn(scope);
      passed++;
      console.log(`PASS ${full} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
    } catch (err) {
      failed++;
      console.log(`FAIL ${full} (${((Date.now() - t0) / 1000).toFixed(1)}s): ${String(err?.message ?? err).split('\n')[0]}`);
    } finally {
      await scope.close();
    }
  }
  console.log(`scenarios: ${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

// A stream the server resets after a client released it emits 'error' without a listener (brief §5.1): keep going.
process.on('uncaughtException', (err) => console.error(`[grpc compat] uncaught: ${err?.message ?? err}`));
main().then((code) => process.exit(code), (err) => {
  console.error(err?.stack ?? err);
  process.exit(2);
});
