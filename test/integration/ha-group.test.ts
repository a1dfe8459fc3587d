// One broker group of ours: a SYNC_MASTER and a SLAVE in this process behind a real nameserver, driven by ali-ons
// (stock npm client) and raw remoting requests. The slave learns its master from the nameserver, copies the log
// byte for byte, builds queues and index from it, follows the metadata, refuses writes as 5.3.3 does, and serves a
// consumer group once the master is gone; the master comes back on its store and the slave links again.
import fs from 'node:fs';
import path from 'node:path';
import { Message } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, createBroker } from '../../src/broker/broker-controller.js';
import { decodeOffsetMessageId } from '../../src/broker/message-id.js';
import { BROKER_SCHEMA, type BrokerConfig, NAMESRV_SCHEMA, defaults } from '../../src/common/config.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { createNamesrv } from '../../src/namesrv/index.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { decodeRecord } from '../../src/store/index.js';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { tempDir, waitFor } from '../helpers/server.js';

const TOPIC = 'HaGroupTopic';
const logger = silentLogger();
const client = new RemotingClient(logger);
const dirs: string[] = [];
let namesrv: ReturnType<typeof createNamesrv>;
let nsAddr: string;
let master: Broker;
let slave: Broker;
let masterConfig: BrokerConfig;
const sent: Array<{ msgId: string; body: string; key: string }> = [];

function brokerConfig(name: string, extra: Partial<BrokerConfig>): BrokerConfig {
  const dir = tempDir(name);
  dirs.push(dir);
  return {
    ...defaults(BROKER_SCHEMA), brokerName: 'broker-ha', brokerIP1: '127.0.0.1', listenPort: 0, namesrvAddr: nsAddr,
    storePathRootDir: dir, mappedFileSizeCommitLog: 256 * 1024, mappedFileSizeConsumeQueue: 20 * 1000, ...extra,
  };
}

function call(addr: string, code: number, fields: Record<string, string> = {}, body?: Buffer): Promise<RemotingCommand> {
  return client.request(addr, createRequest(code, fields, body), 5000);
}

function pull(addr: string, queueId: number, queueOffset: number, group = 'CID_HA_RAW'): Promise<RemotingCommand> {
  return call(addr, RequestCode.PULL_MESSAGE, {
    consumerGroup: group, topic: TOPIC, queueId: String(queueId), queueOffset: String(queueOffset), maxMsgNums: '32',
    sysFlag: String(4), commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
  });
}

/** Every record of a queue, read with pulls. */
async function readQueue(addr: string, queueId: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const res = await pull(addr, queueId, offset);
    if (res.code !== ResponseCode.SUCCESS) return out;
    let pos = 0;
    while (pos < res.body!.length) {
      const size = res.body!.readInt32BE(pos);
      out.push(res.body!.subarray(pos, pos + size));
      pos += size;
    }
    offset = Number(res.extFields.nextBeginOffset);
  }
}

beforeAll(async () => {
  const nsDir = tempDir('ns');
  dirs.push(nsDir);
  namesrv = createNamesrv({ ...defaults(NAMESRV_SCHEMA), listenPort: 0, kvConfigPath: path.join(nsDir, 'kv.json') }, logger);
  nsAddr = `127.0.0.1:${await namesrv.start()}`;
  masterConfig = brokerConfig('master', { brokerRole: 'SYNC_MASTER', inSyncReplicas: 2, slaveTimeout: 2500 });
  master = createBroker(masterConfig, logger);
  await master.start();
  slave = createBroker(
    brokerConfig('slave', { brokerRole: 'SLAVE', brokerId: 1, slaveReadEnable: true, slaveSyncAllIntervalMs: 300 }),
    logger,
  );
  await slave.start();
  const created = await call(master.brokerAddr(), RequestCode.UPDATE_AND_CREATE_TOPIC, {
    topic: TOPIC, defaultTopic: 'TBW102', readQueueNums: '4', writeQueueNums: '4', perm: '6', topicFilterType: 'SINGLE_TAG',
    topicSysFlag: '0', order: 'false',
  });
  expect(created.code).toBe(ResponseCode.SUCCESS);
}, 60_000);

afterAll(async () => {
  await client.close();
  await slave?.shutdown();
  await master?.shutdown();
  await namesrv?.shutdown();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('a group of ours: SYNC_MASTER + SLAVE', () => {
  it('the slave registers, learns the master from the nameserver and links (no haMasterAddress)', async () => {
    await waitFor(async () => {
      const res = await call(nsAddr, RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: TOPIC });
      if (res.code !== 0) return false;
      const route = parseFastjson(res.body!) as { brokerDatas: Array<{ brokerAddrs: Record<string, string> }> };
      const addrs = route.brokerDatas[0]?.brokerAddrs ?? {};
      return addrs['0'] === master.brokerAddr() && addrs['1'] === slave.brokerAddr();
    }, 20_000, 'the route to list master and slave');
    await waitFor(async () => {
      const res = await call(master.brokerAddr(), RequestCode.GET_BROKER_HA_STATUS);
      return (parseFastjson(res.body!) as { haConnectionInfo: unknown[] }).haConnectionInfo.length === 1;
    }, 20_000, 'the slave to link');
  });

  it('SEND_OK means the slave has it: records, offsets, msgIds and keys are the same on both', async () => {
    const producer = onsProducer(nsAddr, 'PG_ha_group');
    await producer.ready();
    try {
      for (let i = 0; i < 200; i++) {
        const key = `ha-key-${i}`;
        const msg = new Message(TOPIC, 'TagHA', `ha body ${i} ${'p'.repeat(i * 13)}`);
        msg.keys = [key];
        const r = await producer.send(msg);
        expect(r.sendStatus).toBe('SEND_OK');
        sent.push({ msgId: r.msgId, body: msg.body.toString(), key });
      }
    } finally {
      await producer.close();
    }
    // SYNC_MASTER with inSyncReplicas=2: every acknowledged message was on the slave when acknowledged.
    const masterMax = master.context.store.getMaxPhyOffset();
    expect(slave.context.store.getMaxPhyOffset()).toBeGreaterThanOrEqual(masterMax);
    // the records are there; the topic's config reaches the slave by the metadata sync, and a slave that does not know
    // the topic answers pulls with TOPIC_NOT_EXIST (17): wait for it, not for the sends to be slow enough
    await waitFor(() => slave.context.topicConfigManager.get(TOPIC) !== undefined, 20_000, 'the topic on the slave');
    for (let q = 0; q < 4; q++) {
      const a = await readQueue(master.brokerAddr(), q);
      const b = await readQueue(slave.brokerAddr(), q);
      expect(b.length).toBe(a.length);
      expect(Buffer.concat(b).equals(Buffer.concat(a))).toBe(true);
    }
    // The offset msgId names the master's store host; the slave answers a view by the same offset.
    const target = sent[150]!;
    const id = decodeOffsetMessageId(target.msgId)!;
    const view = await call(slave.brokerAddr(), RequestCode.VIEW_MESSAGE_BY_ID, { topic: TOPIC, offset: String(id.commitLogOffset) });
    expect(view.code).toBe(ResponseCode.SUCCESS);
    expect(decodeRecord(view.body!).body.toString()).toBe(target.body);
    const q = await call(slave.brokerAddr(), RequestCode.QUERY_MESSAGE, {
      topic: TOPIC, key: target.key, maxNum: '32', beginTimestamp: '0', endTimestamp: String(Date.now() + 60_000),
    });
    expect(q.code).toBe(ResponseCode.SUCCESS);
    expect(decodeRecord(q.body!).body.toString()).toBe(target.body);
  }, 120_000);

  it('the slave refuses writes as 5.3.3 does and serves reads with suggestWhichBrokerId', async () => {
    const send = await call(slave.brokerAddr(), RequestCode.SEND_MESSAGE, {
      producerGroup: 'PG', topic: TOPIC, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0',
      bornTimestamp: String(Date.now()), flag: '0', properties: '', reconsumeTimes: '0', unitMode: 'false', batch: 'false',
    }, Buffer.from('x'));
    expect([send.code, send.remark]).toEqual([ResponseCode.SYSTEM_BUSY, '[REJECTREQUEST]system busy, start flow control for a while']);
    const end = await call(slave.brokerAddr(), RequestCode.END_TRANSACTION, {
      producerGroup: 'PG', tranStateTableOffset: '0', commitLogOffset: '0', commitOrRollback: '8', fromTransactionCheck: 'false', msgId: 'x',
    });
    expect(end.code).toBe(ResponseCode.SLAVE_NOT_AVAILABLE);
    // A slave (brokerId 1) suggests the master (5.3.3) unless the consumer is far behind; caught up → retry at once.
    const found = await pull(slave.brokerAddr(), 0, 0);
    expect([found.code, found.extFields.suggestWhichBrokerId]).toEqual([ResponseCode.SUCCESS, '0']);
    const caughtUp = await pull(slave.brokerAddr(), 0, Number(found.extFields.maxOffset));
    expect(caughtUp.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
  });

  it('metadata follows: topics, subscription groups and consumer offsets made on the master reach the slave', async () => {
    const m = master.brokerAddr();
    expect((await call(m, RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic: 'HaLaterTopic', defaultTopic: 'TBW102', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
    })).code).toBe(0);
    const group = { groupName: 'CID_HA_SYNCED', consumeEnable: true, retryMaxTimes: 7, whichBrokerWhenConsumeSlowly: 1, brokerId: 0 };
    expect((await call(m, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, Buffer.from(JSON.stringify(group)))).code).toBe(0);
    expect((await call(m, RequestCode.UPDATE_CONSUMER_OFFSET, {
      consumerGroup: 'CID_HA_SYNCED', topic: TOPIC, queueId: '2', commitOffset: '17',
    })).code).toBe(0);
    await waitFor(() => slave.context.topicConfigManager.get('HaLaterTopic')?.readQueueNums === 2, 20_000, 'the topic on the slave');
    await waitFor(() => slave.context.subscriptionGroupManager.get('CID_HA_SYNCED')?.retryMaxTimes === 7, 20_000, 'the group on the slave');
    await waitFor(async () => {
      const res = await call(slave.brokerAddr(), RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: 'CID_HA_SYNCED', topic: TOPIC, queueId: '2' });
      return res.code === 0 && res.extFields.offset === '17';
    }, 20_000, 'the offset on the slave');
  });

  it('mqadmin-visible state: runtime info and haStatus on both', async () => {
    const ms = parseFastjson((await call(master.brokerAddr(), RequestCode.GET_BROKER_HA_STATUS)).body!) as Record<string, any>;
    expect(ms.master).toBe(true);
    expect(ms.inSyncSlaveNums).toBe(1);
    expect(ms.haConnectionInfo[0].slaveAckOffset).toBe(ms.masterCommitLogMaxOffset);
    const ss = parseFastjson((await call(slave.brokerAddr(), RequestCode.GET_BROKER_HA_STATUS)).body!) as Record<string, any>;
    expect(ss.master).toBe(false);
    expect(ss.haClientRuntimeInfo.maxOffset).toBe(ms.masterCommitLogMaxOffset);
    const rt = parseFastjson((await call(slave.brokerAddr(), RequestCode.GET_BROKER_RUNTIME_INFO)).body!) as { table: Record<string, string> };
    expect(rt.table.brokerActive).toBe('false');
    expect(rt.table.commitLogMaxOffset).toBe(String(ms.masterCommitLogMaxOffset));
    const conf = (await call(slave.brokerAddr(), RequestCode.GET_BROKER_CONFIG)).body!.toString();
    expect(conf).toMatch(/^brokerRole=SLAVE$/m);
    expect(conf).toMatch(/^brokerId=1$/m);
    expect(conf).toMatch(/^accessMessageInMemoryMaxRatio=30$/m); // 5.3.3: a slave's ratio less 10
  });

  it('with the master gone a consumer group reads everything from the slave; the master comes back on its store', async () => {
    const masterPort = master.port;
    const haPort = master.haPort;
    await master.shutdown();
    await waitFor(async () => {
      const res = await call(nsAddr, RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: TOPIC });
      const route = parseFastjson(res.body!) as { brokerDatas: Array<{ brokerAddrs: Record<string, string> }> };
      return res.code === 0 && route.brokerDatas[0]?.brokerAddrs['0'] === undefined;
    }, 20_000, 'the route to lose the master but keep the slave');
    const consumer = onsConsumer(nsAddr, 'CID_HA_FAILOVER');
    const got = new Set<string>();
    consumer.subscribe(TOPIC, '*', async (msg: { body: Buffer }) => {
      got.add(msg.body.toString());
    });
    try {
      await waitFor(() => got.size === sent.length, 60_000, 'every message from the slave');
    } finally {
      await consumer.close();
    }
    expect([...got].sort()).toEqual(sent.map((s) => s.body).sort());
    // The master restarts on the same store and ports; the slave links again and sends resume.
    master = createBroker({ ...masterConfig, listenPort: masterPort, haListenPort: haPort }, logger);
    await master.start();
    const producer = onsProducer(nsAddr, 'PG_ha_group2');
    await producer.ready();
    try {
      await waitFor(async () => {
        const res = await call(master.brokerAddr(), RequestCode.GET_BROKER_HA_STATUS);
        return (parseFastjson(res.body!) as { haConnectionInfo: unknown[] }).haConnectionInfo.length === 1;
      }, 60_000, 'the slave to link again');
      const r = await producer.send(new Message(TOPIC, 'TagHA', 'after the restart'));
      expect(r.sendStatus).toBe('SEND_OK');
    } finally {
      await producer.close();
    }
  }, 180_000);
});
