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

function onsOptions() {
  return {
    httpclient: { request: () => Promise.reject(new Error('nameSrv is given')) },
    nameSrv: nsAddr,
    logger: { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined },
    // the stock client polls the route every 30 s unless told otherwise; a failover test does not wait that long
    pollNameServerInteval: 1000,
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

beforeAll(async () => {
  ensureDist();
  const nsDir = tempDir('dlg-ns');
  dirs.push(nsDir);
  namesrv = createNamesrv({ ...defaults(NAMESRV_SCHEMA), listenPort: 0, kvConfigPath: path.join(nsDir, 'kv.json') }, logger);
  nsAddr = `127.0.0.1:${await namesrv.start()}`;
  const ids = ['n0', 'n1', 'n2'];
  const ports = [await freePort(), await freePort(), await freePort()];
  const peers = ids.map((id, i) => `${id}-127.0.0.1:${ports[i]}`).join(';');
  await Promise.all(ids.map(async (id) => {
    const dir = tempDir(`dlg-${id}`);
    dirs.push(dir);
    const member = await runServerProcess([
      'broker', '-n', nsAddr, '--listenPort=0', '--grpcServerPort=-1', '--brokerIP1=127.0.0.1', `--storePathRootDir=${dir}`,
      `--brokerName=${GROUP}`, '--mappedFileSizeCommitLog=1048576', '--mappedFileSizeConsumeQueue=60000', '--registerNameServerPeriod=10000',
      '--enableDLegerCommitLog=true', `--dLegerGroup=${GROUP}`, `--dLegerPeers=${peers}`, `--dLegerSelfId=${id}`,
    ], 60_000, { ...process.env, RMQ_LOG_LEVEL: 'info' });
    members.set(id, member);
  }));
}, 120_000);

afterAll(async () => {
  await client.close();
  for (const m of members.values()) await m.stop();
  await namesrv?.shutdown();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('a DLedger group of three brokers of ours', () => {
  let master = '';

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
    const leader = [...members.entries()].find(([, m]) => m.brokerAddr === master)!;
    const killedAt = Date.now();
    process.kill(leader[1].child.pid!, 'SIGKILL');
    await new Promise((r) => leader[1].child.once('exit', r));
    members.delete(leader[0]);

    await waitFor(async () => {
      const ids = await groupIds();
      return ids['0'] !== undefined && ids['0'] !== master;
    }, 30_000, 'a new master in the nameserver');
    const newMaster = (await groupIds())['0']!;
    const masterAfterMs = Date.now() - killedAt;

    const producer = new Producer({ ...onsOptions(), producerGroup: 'PG_dledger_group', instanceName: `p${process.pid}_b` });
    // the killed master's connection closes under it: reported as errors, answered by the retries below
    producer.on('error', () => undefined);
    await producer.ready();
    let firstOkAfterMs = -1;
    try {
      await waitFor(async () => {
        try {
          const r = await producer.send(new Message(TOPIC, 'TagD', 'after-probe'));
          if (r.sendStatus !== 'SEND_OK') return false;
          acked.push({ body: 'after-probe', queueId: Number(r.messageQueue.queueId), queueOffset: r.queueOffset });
          return true;
        } catch {
          return false;
        }
      }, 60_000, 'a SEND_OK after the failover');
      firstOkAfterMs = Date.now() - killedAt;
      await sendBatch(producer, 'after', 100);
    } finally {
      await closeQuietly(producer);
    }
    console.log(`dledger failover: new master in the route after ${masterAfterMs} ms, first SEND_OK after ${firstOkAfterMs} ms`);

    // The checker: every acknowledged message at the queue offset its SEND_OK named, no offset holding two messages.
    const stored = new Map<string, { queueId: number; queueOffset: number }>();
    for (let q = 0; q < QUEUES; q++) {
      const records = await readQueue(newMaster, q);
      const offsets = records.map((r) => r.queueOffset);
      expect(new Set(offsets).size, `queue ${q}: an offset used twice`).toBe(offsets.length);
      expect(offsets, `queue ${q}: offsets not consecutive`).toEqual(offsets.map((_, i) => i));
      for (const r of records) stored.set(r.body, { queueId: q, queueOffset: r.queueOffset });
    }
    const missing = acked.filter((a) => !stored.has(a.body));
    expect(missing, 'acknowledged but lost').toEqual([]);
    for (const a of acked) expect(stored.get(a.body), a.body).toEqual({ queueId: a.queueId, queueOffset: a.queueOffset });

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
});
