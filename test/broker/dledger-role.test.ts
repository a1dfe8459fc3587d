// A broker of ours in DLedger mode over the test node (a one-member group we switch by hand): no HA port, brokerId −1
// and only the periodic registration until the first role change, then the official role handling — LEADER → master
// id 0 once caught up, FOLLOWER → slave id digits + 1 with the master's services stopped and sends refused as 5.3.3
// refuses them — each change registered with the nameserver, a stock client sending and reading on the master.
import fs from 'node:fs';
import path from 'node:path';
import { Message } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, createBroker } from '../../src/broker/broker-controller.js';
import { loadDLedgerMode } from '../../src/broker/dledger/dledger-loader.js';
import { BROKER_SCHEMA, type BrokerConfig, NAMESRV_SCHEMA, defaults } from '../../src/common/config.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { createNamesrv } from '../../src/namesrv/index.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { decodeRecord } from '../../src/store/index.js';
import { LaidOutMemoryStore, TestDLedgerNode } from '../helpers/dledger-test-node.js';
import { onsProducer } from '../helpers/ali-ons.js';
import { tempDir, waitFor } from '../helpers/server.js';

const TOPIC = 'DLedgerRoleTopic';
const logger = silentLogger();
const client = new RemotingClient(logger);
const dirs: string[] = [];
let namesrv: ReturnType<typeof createNamesrv>;
let nsAddr: string;
let broker: Broker;
let config: BrokerConfig;
let node: TestDLedgerNode;

function call(addr: string, code: number, fields: Record<string, string> = {}, body?: Buffer): Promise<RemotingCommand> {
  return client.request(addr, createRequest(code, fields, body), 5000);
}

/** brokerId → address of our group in the nameserver's cluster info. */
async function registeredIds(): Promise<Record<string, string>> {
  const res = await call(nsAddr, RequestCode.GET_BROKER_CLUSTER_INFO);
  const info = parseFastjson(res.body!) as { brokerAddrTable: Record<string, { brokerAddrs: Record<string, string> }> };
  return info.brokerAddrTable[config.brokerName]?.brokerAddrs ?? {};
}

function sendRaw(body: string): Promise<RemotingCommand> {
  return call(broker.brokerAddr(), RequestCode.SEND_MESSAGE, {
    producerGroup: 'PG_raw', topic: TOPIC, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0',
    bornTimestamp: String(Date.now()), flag: '0', properties: '', reconsumeTimes: '0', unitMode: 'false', batch: 'false',
  }, Buffer.from(body));
}

async function pullAll(queueId: number): Promise<string[]> {
  const out: string[] = [];
  let offset = 0;
  for (;;) {
    const res = await call(broker.brokerAddr(), RequestCode.PULL_MESSAGE, {
      consumerGroup: 'CID_raw', topic: TOPIC, queueId: String(queueId), queueOffset: String(offset), maxMsgNums: '32',
      sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
    });
    if (res.code !== ResponseCode.SUCCESS) return out;
    let pos = 0;
    while (pos < res.body!.length) {
      const size = res.body!.readInt32BE(pos);
      out.push(decodeRecord(res.body!.subarray(pos, pos + size)).body.toString());
      pos += size;
    }
    offset = Number(res.extFields.nextBeginOffset);
  }
}

beforeAll(async () => {
  await loadDLedgerMode();
  const nsDir = tempDir('dl-ns');
  dirs.push(nsDir);
  namesrv = createNamesrv({ ...defaults(NAMESRV_SCHEMA), listenPort: 0, kvConfigPath: path.join(nsDir, 'kv.json') }, logger);
  nsAddr = `127.0.0.1:${await namesrv.start()}`;
  const dir = tempDir('dl-broker');
  dirs.push(dir);
  config = {
    ...defaults(BROKER_SCHEMA), brokerName: 'RaftNode00', brokerIP1: '127.0.0.1', listenPort: 0, grpcServerPort: -1, namesrvAddr: nsAddr,
    storePathRootDir: dir, mappedFileSizeCommitLog: 64 * 1024, mappedFileSizeConsumeQueue: 20 * 1000, registerNameServerPeriod: 10_000,
    enableDLegerCommitLog: true, dLegerGroup: 'RaftNode00', dLegerPeers: 'n2-127.0.0.1:1', dLegerSelfId: 'n2',
  };
  broker = createBroker(config, logger, {
    dledgerNodeFactory: (cfg) => {
      node = new TestDLedgerNode(new LaidOutMemoryStore(cfg.mappedFileSizeForEntryDataBytes), cfg.selfId, cfg.group, false);
      return node;
    },
  });
  await broker.start();
}, 30_000);

afterAll(async () => {
  await client.close();
  await broker?.shutdown();
  await namesrv?.shutdown();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('DLedger mode on a broker of ours (test node)', () => {
  it('starts as brokerId -1 with its configured role, no HA port, and registers only at the first periodic registration', async () => {
    expect(node.started).toBe(true);
    expect([config.brokerId, config.brokerRole, broker.haPort]).toEqual([-1, 'ASYNC_MASTER', 0]);
    expect(await registeredIds()).toEqual({});
    // Java: first periodic registration 10 s after start
    await waitFor(async () => (await registeredIds())['-1'] === broker.brokerAddr(), 15_000, 'the periodic registration as brokerId -1');
    // the member is not leader: sends reach the commit log and are refused before any append (5.3.3: SYSTEM_BUSY)
    const early = await sendRaw('before any role');
    expect([early.code, early.remark]).toEqual([ResponseCode.SYSTEM_BUSY, '[PC_SYNCHRONIZED]broker busy, start flow control for a while']);
    expect(node.store.endIndex).toBe(-1);
  }, 30_000);

  it('LEADER: becomes SYNC_MASTER with brokerId 0 once caught up, registers, and a stock producer sends', async () => {
    node.becomeLeader();
    await waitFor(async () => (await registeredIds())['0'] === broker.brokerAddr(), 10_000, 'brokerId 0 in the nameserver');
    expect(await registeredIds()).toEqual({ 0: broker.brokerAddr() });
    expect([config.brokerRole, config.brokerId]).toEqual(['SYNC_MASTER', 0]);
    const created = await call(broker.brokerAddr(), RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic: TOPIC, defaultTopic: 'TBW102', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG',
      topicSysFlag: '0', order: 'false',
    });
    expect(created.code).toBe(ResponseCode.SUCCESS);
    const producer = onsProducer(nsAddr, 'PG_dledger_role');
    await producer.ready();
    try {
      for (let i = 0; i < 20; i++) {
        const r = await producer.send(new Message(TOPIC, 'T', `leader-1 ${i}`));
        expect(r.sendStatus).toBe('SEND_OK');
      }
    } finally {
      await producer.close();
    }
    const read = [...(await pullAll(0)), ...(await pullAll(1))].sort();
    expect(read).toEqual(Array.from({ length: 20 }, (_, i) => `leader-1 ${i}`).sort());
  }, 30_000);

  it('FOLLOWER: becomes SLAVE with brokerId = digits + 1, stops the master services, refuses sends, serves nothing new', async () => {
    const started = () => (broker.context.scheduleMessageService as unknown as { started: boolean }).started;
    expect(started()).toBe(true);
    node.becomeFollower('n0');
    await waitFor(async () => (await registeredIds())['3'] === broker.brokerAddr(), 10_000, 'brokerId 3 in the nameserver');
    // the nameserver keeps one id per address (RouteInfoManager.registerBroker)
    expect(await registeredIds()).toEqual({ 3: broker.brokerAddr() });
    expect([config.brokerRole, config.brokerId]).toEqual(['SLAVE', 3]);
    const refused = await sendRaw('to a follower');
    expect([refused.code, refused.remark]).toEqual([ResponseCode.SYSTEM_BUSY, '[REJECTREQUEST]system busy, start flow control for a while']);
    expect(started()).toBe(false);
    // a CANDIDATE event on a slave changes nothing
    const handledBefore = broker.context.config.brokerId;
    node.becomeCandidate();
    node.becomeFollower('n0');
    await waitFor(async () => config.brokerRole === 'SLAVE' && (await registeredIds())['3'] === broker.brokerAddr(), 10_000, 'still slave');
    expect(broker.context.config.brokerId).toBe(handledBefore);
  }, 30_000);

  it('LEADER again: queue offsets continue from the consume queues, nothing lost or reused', async () => {
    node.becomeLeader();
    await waitFor(async () => (await registeredIds())['0'] === broker.brokerAddr(), 10_000, 'brokerId 0 again');
    const before = broker.context.store.getMaxOffsetInQueue(TOPIC, 0);
    const r = await sendRaw('leader-2');
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(Number(r.extFields.queueOffset)).toBe(before);
    expect((await pullAll(0)).at(-1)).toBe('leader-2');
  }, 30_000);
});

describe('DLedger mode with haSemantics=4.9.8 (test node)', () => {
  it('a follower refuses sends with SERVICE_NOT_AVAILABLE, a leader not yet master with SYSTEM_ERROR', async () => {
    const dir = tempDir('dl-498');
    dirs.push(dir);
    let node498!: TestDLedgerNode;
    const c: BrokerConfig = {
      ...defaults(BROKER_SCHEMA), brokerName: 'RaftNode01', brokerIP1: '127.0.0.1', listenPort: 0, grpcServerPort: -1, namesrvAddr: nsAddr,
      storePathRootDir: dir, mappedFileSizeCommitLog: 64 * 1024, haSemantics: '4.9.8',
      enableDLegerCommitLog: true, dLegerGroup: 'RaftNode01', dLegerPeers: 'n0-127.0.0.1:1', dLegerSelfId: 'n0',
    };
    const b = createBroker(c, logger, {
      dledgerNodeFactory: (cfg) => (node498 = new TestDLedgerNode(new LaidOutMemoryStore(cfg.mappedFileSizeForEntryDataBytes), cfg.selfId, cfg.group, false)),
    });
    await b.start();
    try {
      const send = () => call(b.brokerAddr(), RequestCode.SEND_MESSAGE, {
        producerGroup: 'PG_raw', topic: 'TBW102', defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0',
        bornTimestamp: String(Date.now()), flag: '0', properties: '', reconsumeTimes: '0', unitMode: 'false', batch: 'false',
      }, Buffer.from('x'));
      // not leader: the node refuses before appending (official OS_PAGECACHE_BUSY → SYSTEM_ERROR in 4.9.8)
      const early = await send();
      expect([early.code, early.remark]).toEqual([ResponseCode.SYSTEM_ERROR, '[PC_SYNCHRONIZED]broker busy, start flow control for a while']);
      node498.becomeFollower('n1');
      await waitFor(() => c.brokerRole === 'SLAVE' && c.brokerId === 1, 10_000, 'the follower to be a slave');
      const refused = await send();
      expect(refused.code).toBe(ResponseCode.SERVICE_NOT_AVAILABLE);
      expect(refused.remark).toMatch(/^service not available now\. It may be caused by one of the following reasons: the broker's disk is full/);
    } finally {
      await b.shutdown();
    }
  }, 30_000);
});
