#!/usr/bin/env node
// Master/slave interop matrix (issue #13 test 1): a broker group of two processes, each ours or the official
// Apache RocketMQ broker (4.9.8 or 5.3.3), in every pairing that matters for moving a group between them:
//   ha:ours-master/ours-slave  ha:ours-master/official-V-slave  ha:official-V-master/ours-slave
// The slave joins the master's nameserver (it learns the master's HA address from the register answer), a stock
// ali-ons producer sends to the group, and then:
//   - the slave's commit log equals the master's byte for byte (files compared; BLANK and padding included, the
//     messages cross a 64 MiB file boundary), every record's BODYCRC holds;
//   - every queue answers the same records from both; the master's offset msgIds viewed on the slave give the same
//     record; key queries on the slave find what they find on the master;
//   - a topic, a subscription group and a consumer offset made on the master reach the slave (on the official
//     schedule: a 5.3.3 slave's first metadata sync comes ~60 s after it starts);
//   - the slave refuses a send with its version's code (5.3.3: SYSTEM_BUSY 2, 4.9.8: SERVICE_NOT_AVAILABLE 14).
// Both brokers run with mappedFileSizeCommitLog=67108864 (official.sh's size; the two must match).
//
//   node compat/ha-compat.mjs [--versions=5.3.3,4.9.8] [--rows=ours/ours,ours/official,official/ours]
//        [--messages=400] [--json=FILE] [--log-dir=DIR] [--keep]
//
// Run `npm run build` first. Exit 0 when every row passed, 1 otherwise, 2 on usage errors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { caseName } from './lib/ha-cases.mjs';
import { OfficialServer, OursServer, children, killTree, pickPorts, stopAllServers, usedPorts } from './lib/servers.mjs';
import { Code, Message, Remote, bodyCrc32, decodeRecord, firstDifference, phyOffsetOf, producer, waitFor } from './lib/ha-tools.mjs';

const FILE_BYTES = 67108864;
const TOPIC = 'HaCompatTopic';
const BIG_BODY_BYTES = 200 * 1024;
/** Enough big messages to roll the master's log into its second 64 MiB file. */
const BIG_MESSAGES = Math.ceil((FILE_BYTES * 1.05) / BIG_BODY_BYTES);

function parseArgs(argv) {
  const o = { versions: '5.3.3,4.9.8', rows: 'ours/ours,ours/official,official/ours', messages: '400', json: '', logDir: '', keep: false };
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    const key = m?.[1].replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!m || !(key in o)) {
      console.error(`ha-compat: unexpected argument ${a}`);
      process.exit(2);
    }
    o[key] = typeof o[key] === 'boolean' ? m[2] !== 'false' : (m[2] ?? '');
  }
  const versions = o.versions.split(',').map((s) => s.trim()).filter(Boolean);
  const cases = [];
  for (const r of o.rows.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (r === 'ours/ours') cases.push({ master: 'ours', slave: 'ours' });
    else if (r === 'ours/official') for (const v of versions) cases.push({ master: 'ours', slave: v });
    else if (r === 'official/ours') for (const v of versions) cases.push({ master: v, slave: 'ours' });
    else {
      console.error(`ha-compat: bad row ${r}`);
      process.exit(2);
    }
  }
  return { ...o, cases, messages: Number(o.messages) };
}

export { caseName };

const say = (msg) => console.log(`[ha-compat ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** One broker of the group, ours or official. */
function brokerOf(kind, role, tmp, logDir, namesrvAddr, row) {
  const name = `${row}-${role}-${kind}`;
  if (kind === 'ours') {
    const common = [`--mappedFileSizeCommitLog=${FILE_BYTES}`, '--brokerIP2=127.0.0.1'];
    if (role === 'master') return new OursServer(tmp, logDir, { name, extraArgs: [...common, '--brokerRole=ASYNC_MASTER'] });
    return new OursServer(tmp, logDir, {
      name, namesrvAddr, extraArgs: [...common, '--brokerRole=SLAVE', '--brokerId=1', '--slaveReadEnable=true'],
    });
  }
  if (role === 'master') return new OfficialServer(kind, tmp, logDir, { name });
  // slaveReadEnable: a 5.3.3 slave refuses every pull without it (harmless on 4.9.8).
  return new OfficialServer(kind, tmp, logDir, { name, namesrvAddr, extra: 'brokerId=1\nbrokerRole=SLAVE\nslaveReadEnable=true' });
}

const commitLogDir = (server) => (server.label === 'ours' ? path.join(server.store, 'commitlog') : path.join(server.store, 'store', 'commitlog'));

async function runCase(c, tmp, logDir, remote) {
  const checks = [];
  const check = (ok, what) => {
    checks.push(`${ok ? 'ok' : 'FAIL'} ${what}`);
    say(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) throw new Error(what);
  };
  const row = caseName(c).replace(/^ha:/, '').replace(/\W+/g, '_');
  const master = brokerOf(c.master, 'master', tmp, logDir, null, row);
  master.ports = await pickPorts();
  const ns = `127.0.0.1:${master.ports.ns}`;
  const slave = brokerOf(c.slave, 'slave', tmp, logDir, ns, row);
  slave.ports = await pickPorts(usedPorts(master.ports));
  const servers = [slave, master];
  try {
    for (const s of [master, slave]) if (s.prepare) await s.prepare();
    say(`starting the master (${master.label}) and then the slave (${slave.label})`);
    await master.start();
    await slave.start();
    const m = `127.0.0.1:${master.ports.broker}`;
    const s = `127.0.0.1:${slave.ports.broker}`;
    const created = await remote.createTopic(m, TOPIC, 4);
    check(created.code === 0, `topic created on the master (${created.code} ${created.remark ?? ''})`);
    await waitFor(async () => (await remote.route(ns, TOPIC)) !== null, 60_000, 'the topic route');
    await waitFor(async () => {
      const route = await remote.route(ns, TOPIC);
      const addrs = route?.brokerDatas?.[0]?.brokerAddrs ?? {};
      return addrs['0'] === m && addrs['1'] === s;
    }, 90_000, 'the route to list master (0) and slave (1)');
    check(true, 'the route lists the master as 0 and the slave as 1');

    const p = producer(ns, `PG_${caseName(c).replace(/\W/g, '_')}`);
    await p.ready();
    const sent = [];
    try {
      for (let i = 0; i < c.messages; i++) {
        const msg = new Message(TOPIC, `Tag${i % 3}`, Buffer.from(`ha-compat ${i} ${'q'.repeat((i * 37) % 3000)}`));
        msg.keys = [`hakey-${i}`];
        const r = await p.send(msg);
        if (r.sendStatus !== 'SEND_OK') throw new Error(`send ${i}: ${r.sendStatus}`);
        sent.push({ msgId: r.msgId, key: `hakey-${i}` });
      }
      // The slave's HA link comes up on its own schedule (an official slave connects from its HA client's loop,
      // after the route already lists it). Once it copied these first messages it linked while the master's log
      // was in its first file, which the checks below rely on: a link made later, past a file boundary, starts at
      // that file, as Java's master does for a slave that asks for offset 0 (a fresh CI run failed that way).
      const firstMax = await remote.maxPhyOffset(m);
      await waitFor(async () => (await remote.maxPhyOffset(s)) >= firstMax, 120_000, 'the slave to copy the first messages');
      say(`  ${c.messages} messages sent and copied; now ${BIG_MESSAGES} of ${BIG_BODY_BYTES >> 10} KiB to cross a file boundary`);
      const big = Buffer.alloc(BIG_BODY_BYTES);
      for (let i = 0; i < BIG_MESSAGES; i++) {
        for (let j = 0; j < big.length; j += 4) big.writeUInt32BE((Math.imul(i + 1, 2654435761) + j * 40503) >>> 0, j);
        const r = await p.send(new Message(TOPIC, 'Big', big));
        if (r.sendStatus !== 'SEND_OK') throw new Error(`big send ${i}: ${r.sendStatus}`);
      }
    } finally {
      await p.close();
    }
    const masterMax = await remote.maxPhyOffset(m);
    check(masterMax > FILE_BYTES, `the master's log crossed a file boundary (max offset ${masterMax})`);
    await waitFor(async () => (await remote.maxPhyOffset(s)) === masterMax, 120_000, 'the slave to catch up');
    check(true, `the slave caught up to ${masterMax}`);

    const slaveMin = Number((await remote.runtime(s)).commitLogMinOffset);
    check(slaveMin === 0, `the slave's log starts at 0 (it linked while the master's log was in its first file): ${slaveMin}`);
    const diff = firstDifference(commitLogDir(master), commitLogDir(slave), FILE_BYTES, slaveMin, masterMax);
    check(diff < 0, `commit logs byte for byte equal over [${slaveMin}, ${masterMax})${diff >= 0 ? `: first difference at ${diff}` : ''}`);

    const refused = await remote.request(s, Code.SEND_MESSAGE, {
      producerGroup: 'PG_x', topic: TOPIC, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0',
      bornTimestamp: String(Date.now()), flag: '0', properties: '', reconsumeTimes: '0', unitMode: 'false', batch: 'false',
    }, Buffer.from('to the slave'));
    const expected = c.slave === '4.9.8' ? 14 : 2;
    check(refused.code === expected, `a send to the slave is refused with ${expected} (got ${refused.code} ${refused.remark ?? ''})`);

    const metaTopic = 'HaCompatMetaTopic';
    const metaGroup = 'CID_HA_COMPAT_META';
    check((await remote.createTopic(m, metaTopic, 2)).code === 0, 'a second topic created on the master');
    const groupBody = Buffer.from(JSON.stringify({ groupName: metaGroup, consumeEnable: true, retryMaxTimes: 5, brokerId: 0, whichBrokerWhenConsumeSlowly: 1 }));
    check((await remote.request(m, Code.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, groupBody)).code === 0, 'a subscription group created on the master');
    check((await remote.request(m, Code.UPDATE_CONSUMER_OFFSET, { consumerGroup: metaGroup, topic: TOPIC, queueId: '1', commitOffset: '9' })).code === 0,
      'a consumer offset committed on the master');
    const t0 = Date.now();
    await waitFor(async () => {
      const topics = await remote.json(s, Code.GET_ALL_TOPIC_CONFIG);
      const groups = await remote.json(s, Code.GET_ALL_SUBSCRIPTIONGROUP_CONFIG);
      const off = await remote.request(s, Code.QUERY_CONSUMER_OFFSET, { consumerGroup: metaGroup, topic: TOPIC, queueId: '1' });
      return Boolean(topics.topicConfigTable?.[metaTopic]) && Boolean(topics.topicConfigTable?.[TOPIC]) && groups.subscriptionGroupTable?.[metaGroup]?.retryMaxTimes === 5 &&
        off.code === 0 && off.extFields.offset === '9';
    }, 150_000, 'the metadata on the slave', 1000);
    check(true, `topic, group and offset reached the slave ${((Date.now() - t0) / 1000).toFixed(0)} s after they were made`);
    // A slave serves a topic's pulls once it has the topic (official ones too): after the metadata sync.
    const group = 'CID_HA_COMPAT_READER';
    let records = 0;
    for (let q = 0; q < 4; q++) {
      const a = await remote.readQueue(m, TOPIC, q, group);
      const b = await remote.readQueue(s, TOPIC, q, group);
      check(a.records.length === b.records.length && a.records.every((r, i) => r.equals(b.records[i])),
        `queue ${q}: ${b.records.length} records from the slave equal the master's ${a.records.length} (last answers ${a.lastCode} / ${b.lastCode})`);
      for (const r of b.records) {
        const rec = decodeRecord(r);
        if (bodyCrc32(rec.body) !== rec.bodyCrc) check(false, `BODYCRC of the record at ${rec.commitLogOffset} on the slave`);
      }
      records += b.records.length;
      const [mo, so] = await Promise.all([m, s].map((addr) => remote.request(addr, Code.GET_MAX_OFFSET, { topic: TOPIC, queueId: String(q) })));
      check(mo.extFields.offset === so.extFields.offset, `queue ${q}: max offset ${so.extFields.offset} on both`);
    }
    check(records === c.messages + BIG_MESSAGES, `every message is on the slave (${records}), every BODYCRC holds`);
    for (const { msgId, key } of sent.filter((_, i) => i % 40 === 7)) {
      const offset = String(phyOffsetOf(msgId));
      const [vm, vs] = await Promise.all([m, s].map((addr) => remote.request(addr, Code.VIEW_MESSAGE_BY_ID, { topic: TOPIC, offset })));
      check(vs.code === 0 && vs.body.equals(vm.body), `view of msgId ${msgId} on the slave equals the master's`);
      const q = { topic: TOPIC, key, maxNum: '32', beginTimestamp: '0', endTimestamp: String(Date.now() + 60_000) };
      const [qm, qs] = await Promise.all([m, s].map((addr) => remote.request(addr, Code.QUERY_MESSAGE, q)));
      check(qs.code === 0 && qs.body.equals(qm.body), `key ${key}: the slave's index finds the master's record`);
    }

    return { status: 'PASS', reason: '', checks };
  } catch (e) {
    return { status: 'FAIL', reason: String(e.message).split('\n')[0], checks };
  } finally {
    for (const sv of servers) await sv.stop().catch(() => undefined);
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-ha-compat-'));
  const logDir = o.logDir || path.join(tmp, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const remote = new Remote();
  const results = [];
  const stop = () => {
    for (const ch of children) killTree(ch, 'SIGKILL');
    stopAllServers().finally(() => process.exit(130));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Official brokers outlive a crashed script: stop every server before dying.
  const crash = (e) => {
    console.error(`ha-compat: ${e?.stack ?? e}`);
    stopAllServers().finally(() => process.exit(1));
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  for (const c of o.cases) {
    const name = caseName(c);
    say(`== ${name}`);
    const t0 = Date.now();
    const r = await runCase({ ...c, messages: o.messages }, tmp, logDir, remote);
    const seconds = +((Date.now() - t0) / 1000).toFixed(1);
    results.push({ name, status: r.status, reason: r.reason, seconds, checks: r.checks });
    say(`${r.status} ${name} (${seconds}s)${r.reason ? `: ${r.reason}` : ''}`);
  }
  await remote.close();
  if (o.json) fs.writeFileSync(o.json, `${JSON.stringify({ results }, null, 2)}\n`);
  if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else say(`kept ${tmp}`);
  process.exit(results.every((r) => r.status === 'PASS') ? 0 : 1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`ha-compat: ${e.stack ?? e}`);
    for (const ch of children) killTree(ch, 'SIGKILL');
    process.exit(1);
  });
}
