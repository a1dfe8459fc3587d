// The HA failover scenarios (issue #13 tests 2-3) with a chosen stock client: ali-ons in this process, or the stock
// Java client (compat/jclient, rocketmq-client 4.9.8 or 5.x) as a process. Each runs on one kind of group (ours or
// official V) with a seeded random source and returns { status: PASS|FAIL, reason, figures }.
import { Group } from './ha-group.mjs';
import {
  Code, Message, Remote, consumer, maxOf, producer, sleep, waitFor,
} from './ha-tools.mjs';
import { javaClasspath, javaClientVersion, startJavaConsumer, startJavaSender } from './java-client.mjs';
import {
  TOPIC, createTopicEverywhere, fail, slaveCaughtUp, untilSendOk,
} from './ha-scenarios.mjs';

const CONSUMER_GROUP = 'CID_ha_cf';

/**
 * A consumer client by name: `ali-ons` (push), or `<java>-push` / `<java>-litepull` with <java> as
 * javaClientVersion names it (java = 4.9.8, java5 = 5.3.3, java@V). start(nsAddr, env, onBody) → { stop() }.
 * `backlog`: more messages than the client prefetches (ali-ons 500 per queue; the Java clients 1,000 per queue
 * pullThresholdForQueue), so after the kill part of the backlog must come from the slave.
 */
export function consumerClient(name) {
  if (name === 'ali-ons') {
    return {
      name,
      backlog: (quick) => (quick ? 4000 : 10000),
      async start(nsAddr, env, onBody) {
        const c = consumer(nsAddr, CONSUMER_GROUP);
        c.subscribe(TOPIC, '*', async (msg) => {
          onBody(msg.body.toString());
          await sleep(1);
        });
        return { stop: () => c.close() };
      },
    };
  }
  const m = /^(.+)-(push|litepull)$/.exec(name);
  const version = m && javaClientVersion(m[1]);
  if (!version) throw new Error(`unknown consumer client ${name}`);
  return {
    name,
    backlog: (quick) => (quick ? 12000 : 20000),
    async start(nsAddr, env, onBody) {
      const cp = await javaClasspath(version);
      const c = startJavaConsumer(cp, env.tmp, m[2], nsAddr, TOPIC, CONSUMER_GROUP, { consumeDelayMs: 1, onMessage: (msg) => onBody(msg.body) });
      await c.ready;
      return { stop: () => c.stop() };
    },
  };
}

/** The group's committed offsets summed over the topic's queues at `addr`; null when no queue has one. */
async function committedSum(remote, addr, queues = 4) {
  let sum = 0;
  let found = 0;
  for (let q = 0; q < queues; q++) {
    const r = await remote.request(addr, Code.QUERY_CONSUMER_OFFSET, { consumerGroup: CONSUMER_GROUP, topic: TOPIC, queueId: String(q) }).catch(() => null);
    if (r?.code !== 0) continue;
    sum += Number(r.extFields.offset);
    found++;
  }
  return found ? sum : null;
}

/**
 * Test 2: a consumer group reads a backlog from a master + slave group; the master is killed (kill -9) at a seeded
 * point; every message must still be consumed (from the slave), at least once. The master comes back on its store;
 * new messages are sent until the master serves a pull (the consumer reads from it again), they are consumed and the
 * group's offsets reach the master again. Reported beside that: the progress the
 * slave holds while the master is down, what the master holds when it returns, and how many backlog messages were
 * delivered again after it returned (what becomes of progress committed while the master was down).
 */
export async function consumerFailover(kind, env, random, client = consumerClient('ali-ons')) {
  const n = client.backlog(env.quick);
  const group = new Group(kind, env.tmp, env.logDir, { name: `cf-${client.name}-${kind}`, slave: {} });
  const remote = new Remote();
  const figures = { client: client.name, messages: n };
  let c;
  try {
    await group.start();
    await createTopicEverywhere(remote, group);
    const p = producer(group.nsAddr, 'PG_ha_cf');
    await p.ready();
    for (let i = 0; i < n; i += 8) {
      await Promise.all(Array.from({ length: Math.min(8, n - i) }, (_, k) => p.send(new Message(TOPIC, 'T', Buffer.from(`cf-${i + k}`)))));
    }
    await slaveCaughtUp(remote, group, TOPIC);
    const slaveReads = async () => Number((await remote.runtime(group.slaveAddr)).msgGetTotalTodayNow);
    const seen = new Map();
    let deliveries = 0;
    let lastDeliveryMs = 0;
    let killedAt = 0;
    let firstAfterKill = 0;
    c = await client.start(group.nsAddr, env, (body) => {
      seen.set(body, (seen.get(body) ?? 0) + 1);
      deliveries++;
      lastDeliveryMs = Date.now();
      if (killedAt && !firstAfterKill) firstAfterKill = lastDeliveryMs;
    });
    const killAt = Math.floor(n * (0.3 + random() * 0.3));
    await waitFor(() => seen.size >= killAt, 180_000, `${killAt} messages consumed`, 20);
    const readsBefore = await slaveReads();
    killedAt = Date.now();
    await group.killMaster();
    figures.killedAfterConsumed = seen.size;
    // The first pull the slave answers with messages (its msgGetTotalTodayNow moves): consumers read from it now.
    await waitFor(async () => (await slaveReads()) > readsBefore, 120_000, 'the slave to serve a pull', 100);
    figures.slaveServesAfterKillMs = Date.now() - killedAt;
    await waitFor(() => seen.size >= n, 180_000, 'every message consumed with the master down', 100);
    figures.firstDeliveryAfterKillMs = firstAfterKill - killedAt;
    figures.drainAfterKillMs = lastDeliveryMs - killedAt;
    const firstPass = deliveries; // every delivery so far was of a backlog message
    figures.redeliveredWhileDown = firstPass - n;
    // the client commits every 5 s (ali-ons, Java persistConsumerOffsetInterval): what the slave holds then
    await sleep(6000);
    figures.slaveCommittedWhileDown = await committedSum(remote, group.slaveAddr);
    await group.restart(group.master);
    figures.masterCommittedOnReturn = await committedSum(remote, group.masterAddr);
    // New messages until the master serves a pull with messages (its msgGetTotalTodayNow moves from 0 after the
    // restart: the consumer reads from it again; a client may take its 30 s route poll to see it back), 200 at least.
    await untilSendOk(p, TOPIC);
    const returnedAt = Date.now();
    let extra = 0;
    const masterReads = async () => Number((await remote.runtime(group.masterAddr)).msgGetTotalTodayNow);
    while (extra < 200 || (await masterReads()) === 0) {
      await p.send(new Message(TOPIC, 'T', Buffer.from(`cf-after-${extra++}`)));
      if (extra >= 200) await sleep(200);
      if (Date.now() - returnedAt > 180_000) throw new Error('timed out after 180000 ms waiting for the master to serve a pull after its return');
    }
    figures.masterServesAfterReturnMs = Date.now() - returnedAt;
    figures.sentAfterReturn = extra;
    await waitFor(() => [...seen.keys()].filter((b) => b.startsWith('cf-after-')).length >= extra, 180_000, 'the messages sent after the master came back', 100);
    // The group's progress reaches the master again (commits go to the master once it is in the route).
    await waitFor(async () => {
      const sum = await committedSum(remote, group.masterAddr);
      figures.masterCommitted = sum;
      return sum >= n + extra;
    }, 120_000, 'the group\'s offsets on the master', 1000);
    let backlogDeliveries = 0;
    for (const [body, count] of seen) if (/^cf-\d+$/.test(body)) backlogDeliveries += count;
    figures.backlogRedeliveredAfterReturn = backlogDeliveries - firstPass;
    figures.deliveries = deliveries;
    figures.duplicates = deliveries - seen.size;
    await c.stop();
    c = null;
    await p.close();
    const missing = [];
    for (let i = 0; i < n; i++) if (!seen.has(`cf-${i}`)) missing.push(i);
    if (missing.length) return fail(`${missing.length} messages never consumed`, figures);
    return { status: 'PASS', reason: '', figures };
  } catch (e) {
    return fail(e.message.split('\n')[0], figures);
  } finally {
    await c?.stop().catch(() => undefined);
    await remote.close();
    await group.stop();
  }
}

/**
 * Sends one message after another for `seconds` with a stock producer, `kill` called `killAfterMs` after the first
 * SEND_OK. → records [{ ok, error, sentAt, at }] and when the kill happened.
 */
async function aliOnsLoad(nsAddr, seconds, killAfterMs, kill) {
  const p = producer(nsAddr, 'PG_ha_pf');
  await p.ready();
  const records = [];
  const t0 = Date.now();
  let killedAt = 0;
  let i = 0;
  const killing = sleep(killAfterMs).then(async () => {
    killedAt = Date.now();
    await kill();
  });
  while (Date.now() - t0 < seconds * 1000) {
    const sentAt = Date.now();
    try {
      const r = await p.send(new Message(TOPIC, 'T', Buffer.from(`pf-${i++}`)));
      records.push({ ok: r.sendStatus === 'SEND_OK', error: r.sendStatus === 'SEND_OK' ? null : r.sendStatus, sentAt, at: Date.now() });
    } catch (e) {
      records.push({ ok: false, error: String(e.message), sentAt, at: Date.now() });
    }
  }
  await killing;
  await p.close();
  return { records, killedAt };
}

async function javaLoad(version, env, nsAddr, seconds, killAfterMs, kill) {
  const cp = await javaClasspath(version);
  const s = startJavaSender(cp, env.tmp, nsAddr, TOPIC, 'PG_ha_pf', 'pf');
  try {
    await s.ready;
    await waitFor(() => s.acked.length > 0, 120_000, 'the Java producer\'s first SEND_OK', 50);
    const t0 = Date.now();
    await sleep(killAfterMs);
    const killedAt = Date.now();
    await kill();
    await sleep(Math.max(0, t0 + seconds * 1000 - Date.now()));
    await s.stop();
    const records = [
      ...s.acked.map((a) => ({ ok: true, error: null, sentAt: a.sentAt, at: a.at })),
      ...s.failed.map((f) => ({ ok: false, error: f.error, sentAt: f.sentAt, at: f.at })),
    ].filter((r) => r.sentAt >= t0).sort((a, b) => a.sentAt - b.sentAt);
    return { records, killedAt };
  } finally {
    await s.stop();
  }
}

/**
 * Test 3: two groups (broker-a, broker-b, masters) behind one nameserver; a stock producer with default settings
 * (ali-ons, or the Java DefaultMQProducer: `java`, `java5`, `java@V`) sends one message after another; master-a is
 * killed at a seeded moment. Counted: failed sends, the time from the kill to the last failure, the slowest send,
 * sends slower than 1 s (the Java producer retries a failed send on the other group within the same call).
 */
export async function producerFailover(kind, env, random, client = 'ali-ons') {
  const seconds = env.quick ? 12 : 40;
  const version = client === 'ali-ons' ? null : javaClientVersion(client);
  if (client !== 'ali-ons' && !version) throw new Error(`unknown producer client ${client}`);
  const a = new Group(kind, env.tmp, env.logDir, { name: `pf-a-${client}-${kind}`, brokerName: 'broker-a' });
  const remote = new Remote();
  let b;
  const figures = { client };
  try {
    await a.start();
    b = new Group(kind, env.tmp, env.logDir, { name: `pf-b-${client}-${kind}`, brokerName: 'broker-b', namesrv: a.nsAddr });
    await b.start();
    for (const g of [a, b]) {
      const r = await remote.createTopic(g.masterAddr, TOPIC, 4);
      if (r.code !== 0) throw new Error(`create topic on ${g.brokerName}: ${r.code}`);
    }
    await waitFor(async () => (await remote.route(a.nsAddr, TOPIC))?.brokerDatas?.length === 2, 60_000, 'both groups in the route');
    const killAfterMs = 2000 + Math.floor(random() * 3000);
    const kill = () => a.killMaster();
    const { records, killedAt } = version
      ? await javaLoad(version, env, a.nsAddr, seconds, killAfterMs, kill)
      : await aliOnsLoad(a.nsAddr, seconds, killAfterMs, kill);
    const failures = records.filter((r) => !r.ok);
    const errors = {};
    for (const f of failures) {
      const why = String(f.error).replace(/\d+/g, 'N').slice(0, 60);
      errors[why] = (errors[why] ?? 0) + 1;
    }
    const slow = records.filter((r) => r.at - r.sentAt > 1000);
    Object.assign(figures, {
      sends: records.length,
      ok: records.length - failures.length,
      failed: failures.length,
      killAfterMs,
      recoveredAfterMs: failures.length ? failures.at(-1).at - killedAt : 0,
      slowestSendMs: maxOf(records.map((r) => r.at - r.sentAt), 0),
      sendsOver1s: slow.length,
      lastSlowSendAfterKillMs: slow.length ? slow.at(-1).at - killedAt : 0,
      ...(failures.length ? { errors } : {}),
    });
    return { status: 'PASS', reason: '', figures };
  } catch (e) {
    return fail(e.message.split('\n')[0], figures);
  } finally {
    await remote.close();
    await b?.stop();
    await a.stop();
  }
}
