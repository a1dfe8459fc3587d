// consumer-failover and producer-failover (issue #13 tests 2-3) driven by a stock client in its own process
// (compat/lib/go-client.mjs; any module with the same startSender / startPushConsumer fits), beside the ali-ons
// variants of ha-scenarios.mjs: same topology, same seeded kill moments, same pass criteria. The backlog of
// consumer-failover and the probes are sent with ali-ons (setup, not the client under test).
import { Group } from './ha-group.mjs';
import { Code, Message, Remote, maxOf, producer, sleep, waitFor } from './ha-tools.mjs';

const TOPIC = 'HaFaultTopic';
const QUEUES = 4;

function fail(reason, figures) {
  return { status: 'FAIL', reason, figures };
}

/** Sum over the queues of the group's committed offsets on `addr` (null when one is missing). */
async function committedSum(remote, addr, group) {
  let sum = 0;
  for (let q = 0; q < QUEUES; q++) {
    const r = await remote.request(addr, Code.QUERY_CONSUMER_OFFSET, { consumerGroup: group, topic: TOPIC, queueId: String(q) });
    if (r.code !== 0) return null;
    sum += Number(r.extFields.offset);
  }
  return sum;
}

/**
 * A push consumer of `client` reads a backlog from a master + slave group; kill -9 of the master at a seeded
 * point; every message must be consumed (from the slave); the master comes back, 200 more are consumed and the
 * group's committed offsets on the master reach the end. Also measured: the committed offsets the master held just
 * before the kill and the slave while the master was down, and which backlog messages came again after the restart.
 */
export async function consumerFailoverWith(client, kind, env, random) {
  const n = env.quick ? 4000 : 10000;
  const group = new Group(kind, env.tmp, env.logDir, { name: `cf-${client.name}-${kind}`, slave: {} });
  const remote = new Remote();
  const cg = `CID_ha_cf_${client.name}`;
  const figures = { client: client.name, messages: n };
  let c;
  let p;
  try {
    await group.start();
    const res = await remote.createTopic(group.masterAddr, TOPIC, QUEUES);
    if (res.code !== 0) throw new Error(`create topic: ${res.code} ${res.remark ?? ''}`);
    await waitFor(async () => (await remote.route(group.nsAddr, TOPIC)) !== null, 60_000, 'the topic route');
    p = producer(group.nsAddr, 'PG_ha_cf');
    // a second listener: sdk-base prints every error (route polls of the killed master) while fewer than two are registered
    p.on('error', () => undefined);
    await p.ready();
    for (let i = 0; i < n; i += 8) {
      await Promise.all(Array.from({ length: Math.min(8, n - i) }, (_, k) => p.send(new Message(TOPIC, 'T', Buffer.from(`cf-${i + k}`)))));
    }
    await waitFor(async () => (await remote.maxPhyOffset(group.slaveAddr)) === (await remote.maxPhyOffset(group.masterAddr)), 120_000, 'the slave to catch up');
    await waitFor(async () => Boolean((await remote.json(group.slaveAddr, Code.GET_ALL_TOPIC_CONFIG)).topicConfigTable?.[TOPIC]),
      150_000, `topic ${TOPIC} on the slave (metadata sync)`, 1000);
    const slaveReads = async () => Number((await remote.runtime(group.slaveAddr)).msgGetTotalTodayNow);
    const seen = new Map();
    let killedAt = 0;
    let firstAfterKill = 0;
    let restartedAt = 0;
    let lastDeliveryMs = 0;
    const againAfterRestart = new Set();
    c = await client.startPushConsumer(group.nsAddr, TOPIC, cg, {
      logDir: env.logDir,
      consumeDelayMs: 1, // as the ali-ons variant's handler
      onMessage(m) {
        if (restartedAt && !m.body.startsWith('cf-after-') && seen.has(m.body)) againAfterRestart.add(m.body);
        seen.set(m.body, (seen.get(m.body) ?? 0) + 1);
        lastDeliveryMs = Date.now();
        if (killedAt && !firstAfterKill) firstAfterKill = lastDeliveryMs;
      },
    });
    await c.ready;
    const killAt = Math.floor(n * (0.3 + random() * 0.3));
    await waitFor(() => seen.size >= killAt || c.error, 180_000, `${killAt} messages consumed`, 20);
    if (c.error) throw new Error(c.error);
    const readsBefore = await slaveReads();
    // committed progress on the master just before it dies (the client commits every few seconds)
    figures.masterCommittedBeforeKill = await committedSum(remote, group.masterAddr, cg);
    killedAt = Date.now();
    await group.killMaster();
    figures.killedAfterConsumed = seen.size;
    await waitFor(async () => (await slaveReads()) > readsBefore, 180_000, 'the slave to serve a pull', 100);
    figures.slaveServesAfterKillMs = Date.now() - killedAt;
    await waitFor(() => seen.size >= n, 240_000, 'every message consumed with the master down', 100);
    figures.firstDeliveryAfterKillMs = firstAfterKill - killedAt;
    figures.drainAfterKillMs = lastDeliveryMs - killedAt;
    figures.redeliveredWhileDown = [...seen.values()].reduce((a, v) => a + v, 0) - n;
    // committed progress while the master is down: what the slave holds for the group (it takes commits only if
    // the client sends them there)
    figures.slaveCommittedWhileDown = await committedSum(remote, group.slaveAddr, cg);
    await group.restart(group.master);
    restartedAt = Date.now();
    const extra = 200;
    await waitFor(async () => (await p.send(new Message(TOPIC, 'probe', Buffer.from(`probe ${Date.now()}`)))).sendStatus === 'SEND_OK',
      90_000, 'a SEND_OK from the restarted master', 500);
    for (let i = 0; i < extra; i++) await p.send(new Message(TOPIC, 'T', Buffer.from(`cf-after-${i}`)));
    await waitFor(() => [...seen.keys()].filter((b) => b.startsWith('cf-after-')).length >= extra, 180_000, 'the messages sent after the master came back', 100);
    await waitFor(async () => {
      figures.masterCommitted = await committedSum(remote, group.masterAddr, cg);
      return figures.masterCommitted >= n + extra;
    }, 120_000, 'the group\'s offsets on the master', 1000);
    figures.redeliveredAfterRestart = againAfterRestart.size;
    figures.deliveries = [...seen.values()].reduce((a, v) => a + v, 0);
    figures.duplicates = figures.deliveries - seen.size;
    const missing = [];
    for (let i = 0; i < n; i++) if (!seen.has(`cf-${i}`)) missing.push(i);
    if (missing.length) return fail(`${missing.length} messages never consumed`, figures);
    return { status: 'PASS', reason: '', figures };
  } catch (e) {
    return fail(`${e.message.split('\n')[0]}${c?.error ? ` (client: ${c.error})` : ''}`, figures);
  } finally {
    await c?.close();
    await p?.close();
    p?.on('error', () => undefined); // close() leaves one listener; its route timer can still fail once (the servers stop)
    await remote.close();
    await group.stop();
  }
}

/**
 * Two groups broker-a / broker-b (masters) behind one nameserver; `client`'s producer (default settings) sends one
 * message after another; master-a is killed (kill -9) 2-5 s (seeded) after the first SEND_OK. Counted: failed
 * sends, the time from the kill to the last failure, the slowest send, SEND_OKs after the kill. Passes when sends
 * kept succeeding on broker-b after the kill and the producer ended recovered (its last 10 sends SEND_OK).
 */
export async function producerFailoverWith(client, kind, env, random) {
  const seconds = env.quick ? 12 : 40;
  const a = new Group(kind, env.tmp, env.logDir, { name: `pf-${client.name}-a-${kind}`, brokerName: 'broker-a' });
  const remote = new Remote();
  let b;
  let s;
  const figures = { client: client.name };
  try {
    await a.start();
    b = new Group(kind, env.tmp, env.logDir, { name: `pf-${client.name}-b-${kind}`, brokerName: 'broker-b', namesrv: a.nsAddr });
    await b.start();
    for (const g of [a, b]) {
      const r = await remote.createTopic(g.masterAddr, TOPIC, QUEUES);
      if (r.code !== 0) throw new Error(`create topic on ${g.brokerName}: ${r.code}`);
    }
    await waitFor(async () => (await remote.route(a.nsAddr, TOPIC))?.brokerDatas?.length === 2, 60_000, 'both groups in the route');
    s = client.startSender(a.nsAddr, TOPIC, `PG_ha_pf_${client.name}`, 'pf', { logDir: env.logDir });
    await waitFor(() => s.acked.length > 0 || s.error, 120_000, 'the first SEND_OK');
    if (s.error) throw new Error(s.error);
    const killAfterMs = 2000 + Math.floor(random() * 3000);
    const t0 = Date.now();
    await sleep(killAfterMs);
    const failedBefore = s.failedAt.length;
    const killedAt = Date.now();
    await a.killMaster();
    await sleep(Math.max(0, seconds * 1000 - (Date.now() - t0)));
    s.sending = false;
    await s.done;
    const after = s.acked.filter((x) => x.sentAt >= killedAt);
    const failures = s.failedAt.slice(failedBefore);
    const results = [...s.acked.map((x) => ({ at: x.at, ok: true })), ...s.failedAt.map((at) => ({ at, ok: false }))].sort((x, y) => x.at - y.at);
    Object.assign(figures, {
      sends: s.tried, ok: s.acked.length, failed: s.failedAt.length, failedAfterKill: failures.length, killAfterMs,
      recoveredAfterMs: failures.length ? failures.at(-1) - killedAt : 0,
      slowestSendMs: maxOf(s.acked.map((x) => x.at - x.sentAt), 0),
      okAfterKill: { 'broker-a': after.filter((x) => x.brokerName === 'broker-a').length, 'broker-b': after.filter((x) => x.brokerName === 'broker-b').length },
    });
    if (s.failedAt.length) figures.failuresByError = s.failuresByError;
    if (!figures.okAfterKill['broker-b']) return fail('no SEND_OK on broker-b after master-a was killed', figures);
    if (results.slice(-10).some((r) => !r.ok)) return fail('the producer had not recovered by the end (failures among the last 10 sends)', figures);
    return { status: 'PASS', reason: '', figures };
  } catch (e) {
    return fail(`${e.message.split('\n')[0]}${s?.error ? ` (client: ${s.error})` : ''}`, figures);
  } finally {
    if (s) {
      s.sending = false;
      await s.done;
    }
    await remote.close();
    await b?.stop();
    await a.stop();
  }
}
