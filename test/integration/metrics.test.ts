import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Consumer, Message } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { runScript, tail } from '../helpers/compat.js';
import { createTypedTopic, grpcEndpoint, quietLogger, rmq } from '../grpc/helpers.js';
import { type TestServer, createTopic, startTestServer, waitFor } from '../helpers/server.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';

/**
 * The Prometheus endpoint (metricsExporterType=PROM) scraped while ali-ons producers and a consumer run: the
 * official 5.x names and labels, counters equal to what the clients did.
 */
const MAIN = path.resolve(import.meta.dirname, '../../dist/main.js');
const PRODUCERS = 3;
const PER_PRODUCER = 150;

/** Prometheus text → samples by name with their labels. */
function parse(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  const out = [];
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

type Sample = ReturnType<typeof parse>[number];

/** The sum of a series' samples whose labels include `match`. */
function sum(samples: Sample[], name: string, match: Record<string, string>): number {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}

describe('Prometheus metrics', () => {
  let server: TestServer;
  let url: string;
  const scrape = async () => parse(await (await fetch(url)).text());

  beforeAll(async () => {
    // transactionCheckInterval as compat/go's transaction scenario needs (checks every 2 s)
    server = await startTestServer({ metricsExporterType: 'PROM', metricsPromExporterHost: '127.0.0.1', metricsPromExporterPort: 0, transactionCheckInterval: 2000 });
    url = `http://127.0.0.1:${server.broker.metricsPort()}/metrics`;
    await createTopic(server, 'MetricsTopicA', 4);
    await createTopic(server, 'MetricsTopicB', 2);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('counts what the clients sent and consumed, scraped under load', { timeout: 120_000 }, async () => {
    const producers = Array.from({ length: PRODUCERS }, (_, i) => onsProducer(server.namesrvAddr, `MetricsP${i}`));
    let scrapes = 0;
    let sending = true;
    const scraper = (async () => {
      while (sending) {
        const s = await scrape(); // under load: every answer must parse and carry the official series
        expect(s.some((x) => x.name === 'rocketmq_broker_permission' && x.value === 6)).toBe(true);
        scrapes++;
      }
    })();
    let bodyBytes = 0;
    try {
      await Promise.all(
        producers.map(async (p, i) => {
          await p.ready();
          for (let n = 0; n < PER_PRODUCER; n++) {
            const body = `producer ${i} message ${n} ${'x'.repeat(n % 50)}`;
            bodyBytes += Buffer.byteLength(body);
            const topic = n % 3 === 0 ? 'MetricsTopicB' : 'MetricsTopicA';
            const res = await p.send(new Message(topic, 'T', body));
            expect(res.sendStatus).toBe('SEND_OK');
          }
        }),
      );
    } finally {
      sending = false;
      await scraper;
      await Promise.all(producers.map((p) => p.close()));
    }
    expect(scrapes).toBeGreaterThan(0);
    const sentA = PRODUCERS * (PER_PRODUCER - Math.ceil(PER_PRODUCER / 3));
    const sentB = PRODUCERS * Math.ceil(PER_PRODUCER / 3);

    let s = await scrape();
    const common = { cluster: 'DefaultCluster', node_type: 'broker', node_id: 'broker-a', otel_scope_name: 'broker-meter' };
    expect(sum(s, 'rocketmq_messages_in_total', { ...common, topic: 'MetricsTopicA', message_type: 'normal', is_system: 'false' })).toBe(sentA);
    expect(sum(s, 'rocketmq_messages_in_total', { topic: 'MetricsTopicB' })).toBe(sentB);
    expect(sum(s, 'rocketmq_message_size_count', { topic: 'MetricsTopicA' })).toBe(sentA);
    const bytesIn = sum(s, 'rocketmq_throughput_in_total', {});
    expect(bytesIn).toBeGreaterThan(bodyBytes); // whole records: body + headers + properties
    expect(sum(s, 'rocketmq_message_size_sum', {})).toBe(bytesIn);
    expect(sum(s, 'rocketmq_rpc_latency_milliseconds_count', { protocol_type: 'remoting', request_code: 'send_message_v2', response_code: 'success', result: 'success' })).toBe(sentA + sentB);
    expect(sum(s, 'rocketmq_topic_number', {})).toBeGreaterThanOrEqual(2);
    expect(sum(s, 'rocketmq_storage_size_bytes', { storage_type: 'local', storage_medium: 'disk' })).toBeGreaterThan(bytesIn);

    // consume topic A: messages out equal what the consumer got; the lag drains to 0 once offsets are committed
    const consumer = onsConsumer(server.namesrvAddr, 'MetricsGroup');
    let consumed = 0;
    try {
      const all = new Promise<void>((resolve) => {
        consumer.subscribe('MetricsTopicA', '*', async () => {
          if (++consumed === sentA) resolve();
        });
      });
      await consumer.ready();
      await all;
      s = await scrape();
      expect(sum(s, 'rocketmq_messages_out_total', { topic: 'MetricsTopicA', consumer_group: 'MetricsGroup', is_system: 'false' })).toBe(consumed);
      expect(sum(s, 'rocketmq_throughput_out_total', { topic: 'MetricsTopicA', consumer_group: 'MetricsGroup' })).toBeGreaterThan(0);
      expect(sum(s, 'rocketmq_consumer_connections', { consumer_group: 'MetricsGroup', protocol_type: 'remoting' })).toBe(1);
      await waitFor(async () => sum(await scrape(), 'rocketmq_consumer_lag_messages', { topic: 'MetricsTopicA', consumer_group: 'MetricsGroup' }) === 0 && sum(await scrape(), 'rocketmq_consumer_lag_messages', { consumer_group: 'MetricsGroup' }) === 0 && (await scrape()).some((x) => x.name === 'rocketmq_consumer_lag_messages' && x.labels.consumer_group === 'MetricsGroup'), 30_000, 'consumer lag 0 after the commit');
    } finally {
      await consumer.close();
    }
    expect(consumed).toBe(sentA);
  });

  it('counts dead letters of a stock consumer and the Go client\'s transactions as the official 5.3.3 broker does', { timeout: 5 * 60_000 }, async () => {
    const common = { cluster: 'DefaultCluster', node_type: 'broker', node_id: 'broker-a', otel_scope_name: 'broker-meter' };
    const store = { ...common, storage_type: 'local', storage_medium: 'disk' };
    // Dead letters: an ali-ons consumer allowing no retry gives every failed message back with maxReconsumeTimes 0,
    // so each goes straight to %DLQ%<group>; the counter carries the message's topic and the group.
    const DEAD = 4;
    await createTopic(server, 'MetricsDlqTopic', 2);
    const producer = onsProducer(server.namesrvAddr, 'MetricsDlqP');
    const consumer: Consumer = onsConsumer(server.namesrvAddr, 'MetricsDlqGroup', { maxReconsumeTimes: 0 });
    try {
      await producer.ready();
      for (let i = 0; i < DEAD; i++) expect((await producer.send(new Message('MetricsDlqTopic', 'T', `dead ${i}`))).sendStatus).toBe('SEND_OK');
      consumer.subscribe('MetricsDlqTopic', '*', async () => Consumer.ACTION_RETRY);
      await consumer.ready();
      await waitFor(async () => sum(await scrape(), 'rocketmq_send_to_dlq_messages_total', {}) >= DEAD, 60_000, `${DEAD} dead letters counted`);
    } finally {
      await consumer.close();
      await producer.close();
    }
    let s = await scrape();
    expect(sum(s, 'rocketmq_send_to_dlq_messages_total', { ...common, consumer_group: 'MetricsDlqGroup', topic: 'MetricsDlqTopic', is_system: 'false' })).toBe(DEAD);
    expect(sum(s, 'rocketmq_send_to_dlq_messages_total', {})).toBe(DEAD);
    // the store series (the official names and labels; a log with messages has an age)
    expect(s.filter((x) => x.name === 'rocketmq_storage_flush_behind_bytes' && Object.entries(store).every(([k, v]) => x.labels[k] === v))).toHaveLength(1);
    expect(s.filter((x) => x.name === 'rocketmq_storage_dispatch_behind_bytes' && x.labels.storage_medium === 'disk')).toHaveLength(1);
    expect(sum(s, 'rocketmq_storage_message_reserve_time_milliseconds', store)).toBeGreaterThan(0);

    // Transactions: compat/go's scenario ends 11 with keys commit0-2 and rollback0-2 at once, ucommit0-1 / urollback0-1
    // at the broker's check and again0 at its second check: 6 commits (3 of them checked back, so born more than
    // transactionTimeOut = 6 s before they finished) and 5 rollbacks; no half message is left.
    const runId = `metrics${process.pid}`;
    const res = await runScript('compat/go/run.sh', [server.namesrvAddr, '-run', '^TestTransactionCommitRollbackAndCheck$'], 4 * 60_000, { RUN_ID: runId });
    expect(res.code, tail(res.output, 60)).toBe(0);
    expect(res.output).toMatch(/--- PASS: TestTransactionCommitRollbackAndCheck/);
    const topic = `GoCompat_Tx_${runId}`;
    s = await scrape();
    expect(sum(s, 'rocketmq_commit_messages_total', { ...common, topic })).toBe(6);
    expect(sum(s, 'rocketmq_rollback_messages_total', { ...common, topic })).toBe(5);
    expect(sum(s, 'rocketmq_finish_message_latency_milliseconds_count', { ...common, topic })).toBe(6);
    // seconds, in the official broker's buckets (5 s, 1 min, ...): the three answered at once, the three checked later
    expect(sum(s, 'rocketmq_finish_message_latency_milliseconds_bucket', { topic, le: '5' })).toBe(3);
    expect(sum(s, 'rocketmq_finish_message_latency_milliseconds_bucket', { topic, le: '60' })).toBe(6);
    const half = s.filter((x) => x.name === 'rocketmq_half_messages' && x.labels.topic === topic);
    expect(half.map((x) => x.value)).toEqual([0]);
  });

  it('counts what the 5.x gRPC client sent and what its SimpleConsumer popped', { timeout: 120_000 }, async () => {
    const topic = 'MetricsGrpcTopic';
    const N = 6;
    await createTypedTopic(server, topic, 'NORMAL', 2);
    const producer = new rmq.Producer({ endpoints: grpcEndpoint(server), namespace: '', logger: quietLogger });
    const consumer = new rmq.SimpleConsumer({
      endpoints: grpcEndpoint(server), namespace: '', consumerGroup: 'MetricsGrpcGroup', subscriptions: new Map([[topic, '*']]),
      awaitDuration: 3000, logger: quietLogger,
    });
    let got = 0;
    const row = { topic, consumer_group: 'MetricsGrpcGroup', is_system: 'false' };
    try {
      await producer.startup();
      for (let i = 0; i < N; i++) await producer.send({ topic, tag: 'T', body: Buffer.from(`grpc ${i}`) });
      await consumer.startup();
      // received and not acked yet: in flight, and still part of the lag (the group's offset moved at the pop)
      const views: unknown[] = [];
      await waitFor(async () => {
        views.push(...(await consumer.receive(16, 60_000)));
        return views.length >= N;
      }, 60_000, `${N} messages received`);
      let s = await scrape();
      expect(sum(s, 'rocketmq_consumer_inflight_messages', { ...row, is_retry: 'false' })).toBe(N);
      expect(sum(s, 'rocketmq_consumer_lag_messages', { ...row, is_retry: 'false' })).toBe(N);
      expect(sum(s, 'rocketmq_consumer_ready_messages', { ...row, is_retry: 'false' })).toBe(0);
      expect(sum(s, 'rocketmq_consumer_lag_latency_milliseconds', { ...row, is_retry: 'false' })).toBeGreaterThan(0);
      // a POP group has a second row for its retry topic
      expect(s.filter((x) => x.name === 'rocketmq_consumer_lag_messages' && x.labels.consumer_group === 'MetricsGrpcGroup' && x.labels.is_retry === 'true').map((x) => x.value)).toEqual([0]);
      for (const mv of views) {
        await consumer.ack(mv);
        got++;
      }
      s = await scrape();
      expect(sum(s, 'rocketmq_consumer_inflight_messages', { ...row, is_retry: 'false' })).toBe(0);
      expect(sum(s, 'rocketmq_consumer_lag_messages', { ...row, is_retry: 'false' })).toBe(0);
      expect(sum(s, 'rocketmq_consumer_lag_latency_milliseconds', { ...row, is_retry: 'false' })).toBe(0);
    } finally {
      await consumer.shutdown().catch(() => undefined);
      await producer.shutdown().catch(() => undefined);
    }
    expect(got).toBe(N);
    const s = await scrape();
    expect(sum(s, 'rocketmq_messages_in_total', { topic, message_type: 'normal', is_system: 'false' })).toBe(N);
    expect(sum(s, 'rocketmq_messages_out_total', { topic, consumer_group: 'MetricsGrpcGroup', is_system: 'false', is_retry: 'false' })).toBe(N);
    expect(sum(s, 'rocketmq_throughput_out_total', { topic, consumer_group: 'MetricsGrpcGroup', is_retry: 'false' })).toBeGreaterThan(0);
  });

  it('shows the lag of a tag subscription as the official broker does, also once its consumer left', { timeout: 120_000 }, async () => {
    // As an official 5.3.3 broker showed it for the same steps: the group subscribes tag A of a topic where every
    // other message is B, consumes its 8, and leaves; of 8 more (4 A, 4 B) the lag counts the 4 A (estimated from the
    // consume queues' tag hashes), split between in flight (pulls parked when it left took them) and ready.
    const topic = 'MetricsLagTopic';
    const group = 'MetricsLagGroup';
    await createTopic(server, topic, 4);
    const row = { consumer_group: group, topic, is_retry: 'false', is_system: 'false' };
    const producer = onsProducer(server.namesrvAddr, 'MetricsLagP');
    const consumer = onsConsumer(server.namesrvAddr, group);
    try {
      await producer.ready();
      const send = async (n: number, prefix: string) => {
        for (let i = 0; i < n; i++) expect((await producer.send(new Message(topic, i % 2 ? 'B' : 'A', `${prefix} ${i}`))).sendStatus).toBe('SEND_OK');
      };
      await send(16, 'first');
      let got = 0;
      consumer.subscribe(topic, 'A', async () => {
        got++;
      });
      await consumer.ready();
      await waitFor(async () => got >= 8 && sum(await scrape(), 'rocketmq_consumer_lag_messages', row) === 0, 30_000, '8 A consumed and committed');
      let s = await scrape();
      expect(sum(s, 'rocketmq_consumer_ready_messages', row)).toBe(0);
      expect(sum(s, 'rocketmq_consumer_inflight_messages', row)).toBe(0);
      expect(sum(s, 'rocketmq_consumer_lag_latency_milliseconds', row)).toBe(0);
      await consumer.close();
      const sentAt = Date.now();
      await send(8, 'late');
      // a parked pull may still take its queue's first new message: wait until both have settled
      await waitFor(async () => {
        const x = await scrape();
        return sum(x, 'rocketmq_consumer_lag_messages', row) === 4 && sum(x, 'rocketmq_consumer_inflight_messages', row) + sum(x, 'rocketmq_consumer_ready_messages', row) === 4;
      }, 30_000, 'lag 4 = in flight + ready');
      s = await scrape();
      expect(got).toBe(8);
      const latency = sum(s, 'rocketmq_consumer_lag_latency_milliseconds', row);
      expect(latency).toBeGreaterThan(0);
      expect(latency).toBeLessThanOrEqual(Date.now() - sentAt + 1000);
      expect(sum(s, 'rocketmq_consumer_queueing_latency_milliseconds', row)).toBeGreaterThan(0);
    } finally {
      await consumer.close();
      await producer.close();
    }
  });

  it('marks the answers of pulls that waited for a message as is_long_polling, as Java marks suspended requests', { timeout: 60_000 }, async () => {
    const topic = 'MetricsPollTopic';
    await createTopic(server, topic, 1);
    const waited = { request_code: 'pull_message', response_code: 'success', is_long_polling: 'true', protocol_type: 'remoting' };
    const before = sum(await scrape(), 'rocketmq_rpc_latency_milliseconds_count', waited);
    const consumer = onsConsumer(server.namesrvAddr, 'MetricsPollGroup');
    const producer = onsProducer(server.namesrvAddr, 'MetricsPollP');
    try {
      let got = 0;
      consumer.subscribe(topic, '*', async () => {
        got++;
      });
      await consumer.ready();
      await producer.ready();
      // the consumer's pull of the empty queue is parked on the broker; the message then answers it
      await waitFor(() => server.broker.context.pullRequestHoldService.heldCount > 0, 30_000, 'a pull parked');
      expect((await producer.send(new Message(topic, 'T', 'wake'))).sendStatus).toBe('SEND_OK');
      await waitFor(() => got === 1, 30_000, 'the message consumed');
      await waitFor(async () => sum(await scrape(), 'rocketmq_rpc_latency_milliseconds_count', waited) === before + 1, 10_000, 'one long-polling answer counted');
    } finally {
      await consumer.close();
      await producer.close();
    }
  });

  it('counts timer messages in and out, their delays and those still waiting, as the official broker does', { timeout: 60_000 }, async () => {
    // Official 5.3.3 after compat's Java TimerMessageTest (client 5.5.0, 6 messages due in ~4.5 s): enqueue 6,
    // dequeue 6, delay sum 27 s in the 60 s bucket, 0 timing; ours gave the same for that run.
    const topic = 'MetricsTimerTopic';
    await createTypedTopic(server, topic, 'DELAY', 2);
    const row = { storage_type: 'local', storage_medium: 'disk', topic };
    const producer = new rmq.Producer({ endpoints: grpcEndpoint(server), namespace: '', logger: quietLogger });
    try {
      await producer.startup();
      const soon = Date.now() + 2000;
      for (let i = 0; i < 3; i++) await producer.send({ topic, body: Buffer.from(`soon ${i}`), deliveryTimestamp: new Date(soon) });
      await producer.send({ topic, body: Buffer.from('later'), deliveryTimestamp: new Date(Date.now() + 120_000) });
    } finally {
      await producer.shutdown().catch(() => undefined);
    }
    await waitFor(async () => sum(await scrape(), 'rocketmq_timer_enqueue_total', row) === 4, 10_000, '4 timer messages taken in');
    let s = await scrape();
    expect(sum(s, 'rocketmq_delay_message_latency_seconds_count', row)).toBe(4);
    expect(sum(s, 'rocketmq_delay_message_latency_seconds_bucket', { ...row, le: '60' })).toBe(3);
    expect(sum(s, 'rocketmq_delay_message_latency_seconds_bucket', { ...row, le: '600' })).toBe(4);
    await waitFor(async () => sum(await scrape(), 'rocketmq_timer_dequeue_total', row) === 3, 20_000, 'the 3 due ones delivered');
    s = await scrape();
    expect(sum(s, 'rocketmq_timing_messages', row)).toBe(1);
    expect(sum(s, 'rocketmq_timer_enqueue_total', row)).toBe(4);
    expect(s.filter((x) => x.name === 'rocketmq_timer_dequeue_lag' && x.labels.storage_type === 'local').map((x) => x.value)).toEqual([0]);
    expect(s.filter((x) => x.name === 'rocketmq_timer_enqueue_lag' && x.labels.storage_type === 'local').map((x) => x.value)).toEqual([0]);
  });

  it('times topic and group creation as the official broker does, refused ones included', { timeout: 30_000 }, async () => {
    // Official 5.3.3 after mqadmin updateTopic of a topic and of rmq_sys_… (refused) and updateSubGroup: one success
    // (is_system=false) and one failure (is_system=true) for topics, one success for groups; ours the same.
    const topics = (status: string, system: string) => ({ invocation_status: status, is_system: system });
    const count = 'rocketmq_topic_create_execution_time_milliseconds_count';
    const groupCount = 'rocketmq_consumer_group_create_execution_time_milliseconds_count';
    let s = await scrape();
    const before = [sum(s, count, topics('success', 'false')), sum(s, count, topics('failure', 'true')), sum(s, groupCount, { invocation_status: 'success' })];
    await createTopic(server, 'MetricsCreateTopic', 2);
    const client = new RemotingClient(silentLogger());
    try {
      const refused = await client.request(server.brokerAddr, createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
        topic: 'rmq_sys_MetricsCreate', defaultTopic: 'TBW102', readQueueNums: '2', writeQueueNums: '2', perm: '6',
        topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
      }), 5000);
      expect(refused.code).toBe(ResponseCode.INVALID_PARAMETER);
      const group = await client.request(server.brokerAddr, createRequest(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, Buffer.from(JSON.stringify({
        groupName: 'MetricsCreateGroup', consumeEnable: true, consumeBroadcastEnable: true, retryQueueNums: 1, retryMaxTimes: 16, brokerId: 0,
        whichBrokerWhenConsumeSlowly: 1, notifyConsumerIdsChangedEnable: true,
      }))), 5000);
      expect(group.code).toBe(ResponseCode.SUCCESS);
    } finally {
      await client.close();
    }
    s = await scrape();
    expect([sum(s, count, topics('success', 'false')), sum(s, count, topics('failure', 'true')), sum(s, groupCount, { invocation_status: 'success' })])
      .toEqual([before[0] + 1, before[1] + 1, before[2] + 1]);
    expect(sum(s, 'rocketmq_topic_create_execution_time_milliseconds_bucket', { ...topics('failure', 'true'), le: '5000' })).toBe(before[1] + 1);
  });

  it('refuses to start on a metrics port in use, naming the key', () => {
    const port = server.broker.metricsPort()!;
    const r = spawnSync(process.execPath, [MAIN, 'start', '--namesrvPort=0', '--listenPort=0', '--metricsExporterType=PROM', '--metricsPromExporterHost=127.0.0.1', `--metricsPromExporterPort=${port}`], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    // logs before it are JSON lines; the CLI's own message is one line
    expect(r.stderr.split('\n').filter((l) => l.startsWith('rmq:'))).toEqual([`rmq: bad configuration: metricsPromExporterPort: 127.0.0.1:${port} is already in use`]);
  });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

describe('POP revive metrics', () => {
  // Revive rounds run only when the test asks (reviveInterval of an hour), so the lag between rounds can be seen.
  let server: TestServer;
  let url: string;
  const scrape = async () => parse(await (await fetch(url)).text());

  beforeAll(async () => {
    server = await startTestServer({
      metricsExporterType: 'PROM', metricsPromExporterHost: '127.0.0.1', metricsPromExporterPort: 0, reviveInterval: 3_600_000,
      minInvisibleTimeMillsForRecv: 1000,
    });
    url = `http://127.0.0.1:${server.broker.metricsPort()}/metrics`;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('counts checkpoints and acks put and read, revived messages, and the revive lag, as the official broker does', { timeout: 90_000 }, async () => {
    // Official 5.3.3 behind its proxy, the Node SimpleConsumer popping 4, acking 2, changing the invisible time of 1:
    // CK 2 and ACK 3 put, the same read by revive (once each), 2 retry messages; ours showed the same.
    const topic = 'MetricsPopTopic';
    const group = 'MetricsPopGroup';
    await createTypedTopic(server, topic, 'NORMAL', 1);
    const producer = new rmq.Producer({ endpoints: grpcEndpoint(server), namespace: '', logger: quietLogger });
    const consumer = new rmq.SimpleConsumer({
      endpoints: grpcEndpoint(server), namespace: '', consumerGroup: group, subscriptions: new Map([[topic, '*']]), awaitDuration: 3000, logger: quietLogger,
    });
    const revive = server.broker.pop.revive;
    const put = (type: string) => ({ consumer_group: group, topic, revive_message_type: type, put_status: 'PUT_OK' });
    const read = (type: string) => ({ consumer_group: group, topic, revive_message_type: type });
    const lagRows = (s: Sample[], name: string) => s.filter((x) => x.name === name && x.labels.queue_id !== undefined);
    try {
      await producer.startup();
      for (let i = 0; i < 3; i++) await producer.send({ topic, tag: 'T', body: Buffer.from(`pop ${i}`) });
      await consumer.startup();
      // one queue: each receive that returns messages is one pop, one checkpoint
      const views: Any[] = [];
      let pops = 0;
      await waitFor(async () => {
        const got = await consumer.receive(16, 1000);
        if (got.length > 0) pops++;
        views.push(...got);
        return views.length >= 3;
      }, 30_000, '3 messages received');
      await consumer.ack(views[0]);
      await consumer.changeInvisibleDuration(views[1], 1000);
      let s = await scrape();
      expect(sum(s, 'rocketmq_pop_revive_in_message_total', put('CK'))).toBe(pops + 1);
      expect(sum(s, 'rocketmq_pop_revive_in_message_total', put('ACK'))).toBe(2);
      expect(sum(s, 'rocketmq_pop_checkpoint_buffer_size', {})).toBe(0);
      // before any round: every revive queue 0 and 0, as Java before its first round
      expect(lagRows(s, 'rocketmq_pop_revive_lag_milliseconds').map((x) => x.value)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
      await revive.runRound();
      // behind while its records wait for a round to revive them; the latency counts from the revive time of the
      // oldest checkpoint the last round found (or that round's end)
      let queueId = '';
      await waitFor(async () => {
        const x = await scrape();
        const behind = lagRows(x, 'rocketmq_pop_revive_lag_milliseconds').filter((r) => r.value > 0);
        if (behind.length !== 1) return false;
        queueId = behind[0].labels.queue_id;
        return sum(x, 'rocketmq_pop_revive_latency_milliseconds', { queue_id: queueId }) > 0;
      }, 20_000, 'one revive queue behind, for a while');
      // rounds until both unacked messages are stored again (each round reads the queue from the last checkpoint done)
      await waitFor(async () => {
        await revive.runRound();
        return sum(await scrape(), 'rocketmq_pop_revive_retry_messages_total', { consumer_group: group, topic, put_status: 'PUT_OK' }) === 2;
      }, 30_000, '2 messages revived');
      s = await scrape();
      expect(sum(s, 'rocketmq_pop_revive_out_message_total', { ...read('CK'), queue_id: queueId })).toBe(pops + 1);
      expect(sum(s, 'rocketmq_pop_revive_out_message_total', read('ACK'))).toBe(2);
      const again: Any[] = [];
      await waitFor(async () => {
        again.push(...(await consumer.receive(16, 10_000)));
        return again.length >= 2;
      }, 30_000, 'the 2 delivered again');
      for (const v of again) await consumer.ack(v);
      s = await scrape();
      const retryTopic = `%RETRY%${group}_${topic}`;
      expect(sum(s, 'rocketmq_pop_revive_in_message_total', { consumer_group: group, topic: retryTopic, revive_message_type: 'ACK' })).toBe(2);
    } finally {
      await consumer.shutdown().catch(() => undefined);
      await producer.shutdown().catch(() => undefined);
    }
  });
});
