// Three brokers of ours as one DLedger group (issue #14): separate `rmq broker` processes with temp stores, one
// nameserver of ours, a stock client (ali-ons) sending and consuming. The leader's process is killed (SIGKILL, by
// pid); a new master must appear in the route within a bounded wait, sends must succeed again, and a checker over
// everything acknowledged finds every message exactly where its SEND_OK put it: none lost, no queue offset used twice.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Consumer, Message, Producer } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMESRV_SCHEMA, defaults } from '../../src/common/config.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { createNamesrv } from '../../src/namesrv/index.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { decodeRecord } from '../../src/store/index.js';
import { ensureDist } from '../helpers/child-server.js';
import { type ServerProcess, runServerProcess } from '../helpers/process-server.js';
import { tempDir, waitFor } from '../helpers/server.js';

const GROUP = 'RaftNode00';
const TOPIC = 'DLedgerGroupTopic';
const QUEUES = 4;
const logger = silentLogger();
const client = new RemotingClient(logger);
const dirs: string[] = [];
let namesrv: ReturnType<typeof createNamesrv>;
let nsAddr: string;
const members = new Map<string, ServerProcess>();
/** What SEND_OK told the producer, per message. */
const acked: Array<{ body: string; queueId: number; queueOffset: number }> = [];

/** A port nothing listens on right now (the DLedger peer ports must be written into dLegerPeers before start). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function call(addr: string, code: number, fields: Record<string, string> = {}, body?: Buffer): Promise<RemotingCommand> {
  return client.request(addr, createRequest(code, fields, body), 5000);
}

/** brokerId → address of the group in the nameserver. */
async function groupIds(): Promise<Record<string, string>> {
  const res = await call(nsAddr, RequestCode.GET_BROKER_CLUSTER_INFO);
  const info = parseFastjson(res.body!) as { brokerAddrTable: Record<string, { brokerAddrs: Record<string, string> }> };
  return info.brokerAddrTable[GROUP]?.brokerAddrs ?? {};
}

/** `failover`: the stock client polls the route every 30 s unless told otherwise; the failover sender asks every 1 s. */
function onsOptions(failover = false) {
  return {
    httpclient: { request: () => Promise.reject(new Error('nameSrv is given')) },
    nameSrv: nsAddr,
    logger: { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined },
    ...(failover ? { pollNameServerInteval: 1000 } : {}),
  };
}

/**
 * ali-ons close() removes every listener while a route update may still fail (its MQProducer re-emits the error on
 * the next turn): a listener added right after keeps that from being an unhandled error.
 */
async function closeQuietly(c: { close(): Promise<void>; on(event: 'error', fn: () => void): unknown }): Promise<void> {
  await c.close();
  c.on('error', () => undefined);
}

async function sendBatch(producer: Producer, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const body = `${prefix}-${i}`;
    const r = await producer.send(new Message(TOPIC, 'TagD', body));
    expect(r.sendStatus).toBe('SEND_OK');
    acked.push({ body, queueId: Number(r.messageQueue.queueId), queueOffset: r.queueOffset });
  }
}

/** Every record of a queue on `addr`, as (queueOffset, body), read with raw pulls from offset 0. */
async function readQueue(addr: string, queueId: number): Promise<Array<{ queueOffset: number; body: string }>> {
  const out: Array<{ queueOffset: number; body: string }> = [];
  let offset = 0;
  for (;;) {
    const res = await call(addr, RequestCode.PULL_MESSAGE, {
      consumerGroup: 'CID_dledger_checker', topic: TOPIC, queueId: String(queueId), queueOffset: String(offset), maxMsgNums: '32',
      sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
    });
    if (res.code !== ResponseCode.SUCCESS) return out;
    let pos = 0;
    while (pos < res.body!.length) {
      const size = res.body!.readInt32BE(pos);
      const rec = decodeRecord(res.body!.subarray(pos, pos + size));
      out.push({ queueOffset: rec.queueOffset, body: rec.body.toString() });
      pos += size;
    }
    offset = Number(res.extFields.nextBeginOffset);
  }
}

let peers = '';
const memberDirs = new Map<string, string>();

/** `rmq broker` for member `id` (its store directory kept across restarts). */
async function startMember(id: string): Promise<ServerProcess> {
  let dir = memberDirs.get(id);
  if (!dir) {
    dir = tempDir(`dlg-${id}`);
    dirs.push(dir);
    memberDirs.set(id, dir);
  }
  const member = await runServerProcess([
    'broker', '-n', nsAddr, '--listenPort=0', '--grpcServerPort=-1', '--brokerIP1=127.0.0.1', `--storePathRootDir=${dir}`,
    `--brokerName=${GROUP}`, '--mappedFileSizeCommitLog=1048576', '--mappedFileSizeConsumeQueue=60000', '--registerNameServerPeriod=10000',
    '--slaveReadEnable=true', '--enableDLegerCommitLog=true', `--dLegerGroup=${GROUP}`, `--dLegerPeers=${peers}`, `--dLegerSelfId=${id}`,
  ], 60_000, { ...process.env, RMQ_LOG_LEVEL: 'info' });
  members.set(id, member);
  return member;
}

beforeAll(async () => {
  ensureDist();
  const nsDir = tempDir('dlg-ns');
  dirs.push(nsDir);
  namesrv = createNamesrv({ ...defaults(NAMESRV_SCHEMA), listenPort: 0, kvConfigPath: path.join(nsDir, 'kv.json') }, logger);
  nsAddr = `127.0.0.1:${await namesrv.start()}`;
  const ids = ['n0', 'n1', 'n2'];
  const ports = [await freePort(), await freePort(), await freePort()];
  peers = ids.map((id, i) => `${id}-127.0.0.1:${ports[i]}`).join(';');
  await Promise.all(ids.map((id) => startMember(id)));
}, 120_000);

afterAll(async () => {
  await client.close();
  for (const m of members.values()) await m.stop();
  await namesrv?.shutdown();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('a DLedger group of three brokers of ours', () => {
  let master = '';
  let killedId = '';

  it('elects a leader that registers as master (id 0) and two followers as slaves (ids 1-3)', async () => {
    await waitFor(async () => {
      const ids = await groupIds();
      return ids['0'] !== undefined && Object.keys(ids).filter((k) => ['1', '2', '3'].includes(k)).length === 2;
    }, 60_000, 'one master and two slaves in the nameserver');
    const ids = await groupIds();
    master = ids['0']!;
    expect(Object.keys(ids).sort()).toHaveLength(3);
    // the topic on every member (a 5.3.3 slave takes metadata changes), so any of them can take over with it
    for (const m of members.values()) {
      const created = await call(m.brokerAddr, RequestCode.UPDATE_AND_CREATE_TOPIC, {
        topic: TOPIC, defaultTopic: 'TBW102', readQueueNums: String(QUEUES), writeQueueNums: String(QUEUES), perm: '6',
        topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
      });
      expect(created.code).toBe(ResponseCode.SUCCESS);
    }
  }, 90_000);

  it('acknowledges sends only once a majority holds them; followers refuse sends', async () => {
    const producer = new Producer({ ...onsOptions(), producerGroup: 'PG_dledger_group', instanceName: `p${process.pid}_a` });
    producer.on('error', () => undefined);
    await producer.ready();
    try {
      await sendBatch(producer, 'before', 200);
    } finally {
      await closeQuietly(producer);
    }
    const follower = [...members.values()].find((m) => m.brokerAddr !== master)!;
    const refused = await call(follower.brokerAddr, RequestCode.SEND_MESSAGE, {
      producerGroup: 'PG', topic: TOPIC, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0',
      bornTimestamp: String(Date.now()), flag: '0', properties: '', reconsumeTimes: '0', unitMode: 'false', batch: 'false',
    }, Buffer.from('to a follower'));
    expect(refused.code).toBe(ResponseCode.SYSTEM_BUSY);
  }, 120_000);

  it('after kill -9 of the leader a new master appears, sends succeed again, and nothing acknowledged is lost or reused', async () => {
    const producer = new Producer({ ...onsOptions(true), producerGroup: 'PG_dledger_group', instanceName: `p${process.pid}_b` });
    // the killed master's connection closes under it: reported as errors, answered by the retries below
    producer.on('error', () => undefined);
    await producer.ready();
    // a sender that keeps going through the kill: what it got SEND_OK for must survive; failures are not counted
    let sending = true;
    let attempts = 0;
    let okAfterKill = 0;
    let killedAt = 0;
    const sender = (async () => {
      while (sending) {
        const body = `during-${attempts++}`;
        try {
          const r = await producer.send(new Message(TOPIC, 'TagD', body));
          if (r.sendStatus !== 'SEND_OK') continue;
          acked.push({ body, queueId: Number(r.messageQueue.queueId), queueOffset: r.queueOffset });
          if (killedAt > 0) okAfterKill++;
        } catch {
          // a send to the dead master: refused or cut; the producer goes on
        }
      }
    })();
    await waitFor(() => acked.length >= 250, 30_000, 'sends in flight before the kill');

    const leader = [...members.entries()].find(([, m]) => m.brokerAddr === master)!;
    killedAt = Date.now();
    process.kill(leader[1].child.pid!, 'SIGKILL');
    await new Promise((r) => leader[1].child.once('exit', r));
    members.delete(leader[0]);

    await waitFor(async () => {
      const ids = await groupIds();
      return ids['0'] !== undefined && ids['0'] !== master;
    }, 30_000, 'a new master in the nameserver');
    const newMaster = (await groupIds())['0']!;
    const masterAfterMs = Date.now() - killedAt;
    await waitFor(() => okAfterKill > 0, 60_000, 'a SEND_OK after the failover');
    const firstOkAfterMs = Date.now() - killedAt;
    await waitFor(() => okAfterKill >= 100, 60_000, '100 SEND_OKs after the failover');
    sending = false;
    await sender;
    await closeQuietly(producer);
    console.log(`dledger failover: new master in the route after ${masterAfterMs} ms, first SEND_OK after ${firstOkAfterMs} ms; ` +
      `${acked.length} acknowledged (${attempts} sends tried through the kill)`);

    // The checker: each queue's offsets are 0..n-1, each holding one message, and every acknowledged message sits at
    // the queue and offset its SEND_OK named (a message may also appear a second time: a retried send whose first
    // attempt reached the log — at-least-once, never an offset reused).
    const atOffset = new Map<string, string>();
    for (let q = 0; q < QUEUES; q++) {
      const records = await readQueue(newMaster, q);
      expect(records.map((r) => r.queueOffset), `queue ${q}: offsets 0..n-1, none twice`).toEqual(records.map((_, i) => i));
      for (const r of records) atOffset.set(`${q}@${r.queueOffset}`, r.body);
    }
    const misplaced = acked.filter((a) => atOffset.get(`${a.queueId}@${a.queueOffset}`) !== a.body);
    expect(misplaced, 'acknowledged but not found where SEND_OK put it').toEqual([]);
    killedId = leader[0];

    // a stock consumer reads everything back from the new master
    const consumer = new Consumer({
      ...onsOptions(), consumerGroup: 'CID_dledger_group', instanceName: `c${process.pid}`, consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      rebalanceInterval: 1000,
    });
    consumer.on('error', () => undefined);
    const seen = new Set<string>();
    consumer.subscribe(TOPIC, '*', async (msg: { body: Buffer }) => {
      seen.add(msg.body.toString());
    });
    try {
      await waitFor(() => acked.every((a) => seen.has(a.body)), 60_000, 'the consumer to read every acknowledged message');
    } finally {
      await closeQuietly(consumer);
    }
  }, 240_000);

  it('the killed member restarts on its store, follows as a slave and ends with the same queues (only committed entries dispatched)', async () => {
    expect(killedId).not.toBe('');
    const back = await startMember(killedId);
    const slaveId = String(Number(killedId.slice(1)) + 1);
    await waitFor(async () => (await groupIds())[slaveId] === back.brokerAddr, 60_000, 'the restarted member as a slave');
    const newMaster = (await groupIds())['0']!;
    for (let q = 0; q < QUEUES; q++) {
      const want = await readQueue(newMaster, q);
      await waitFor(async () => (await readQueue(back.brokerAddr, q)).length === want.length, 60_000, `queue ${q} caught up`);
      expect(await readQueue(back.brokerAddr, q), `queue ${q}`).toEqual(want);
    }
  }, 120_000);
});
