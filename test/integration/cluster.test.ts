import fs from 'node:fs';
import path from 'node:path';
import { Message } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, createBroker } from '../../src/broker/broker-controller.js';
import { BROKER_SCHEMA, NAMESRV_SCHEMA, defaults } from '../../src/common/config.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createNamesrv } from '../../src/namesrv/index.js';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { tempDir, waitFor } from '../helpers/server.js';

type Namesrv = ReturnType<typeof createNamesrv>;

/** Two independent nameservers, two brokers of one cluster registered with both, a stock client over all. */
describe('two brokers in one cluster behind two nameservers', () => {
  const logger = silentLogger();
  const namesrvs: Namesrv[] = [];
  const brokers: Broker[] = [];
  const dirs: string[] = [];
  const nsAddrs: string[] = [];
  const client = new RemotingClient(logger);

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const dir = tempDir(`ns${i}`);
      dirs.push(dir);
      const cfg = { ...defaults(NAMESRV_SCHEMA), listenPort: 0, kvConfigPath: path.join(dir, 'kv.json') };
      const ns = createNamesrv(cfg, logger);
      nsAddrs.push(`127.0.0.1:${await ns.start()}`);
      namesrvs.push(ns);
    }
    for (const name of ['broker-a', 'broker-b']) {
      const dir = tempDir(name);
      dirs.push(dir);
      const b = createBroker(
        {
          ...defaults(BROKER_SCHEMA),
          brokerName: name,
          brokerClusterName: 'TwoBrokerCluster',
          brokerIP1: '127.0.0.1',
          listenPort: 0,
          namesrvAddr: nsAddrs.join(';'),
          storePathRootDir: dir,
          mappedFileSizeCommitLog: 16 * 1024 * 1024,
          mappedFileSizeConsumeQueue: 200_000,
        },
        logger,
      );
      await b.start();
      brokers.push(b);
    }
  });

  afterAll(async () => {
    await client.close();
    for (const b of brokers) await b.shutdown();
    for (const ns of namesrvs) await ns.shutdown();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function routeFrom(ns: string, topic: string): Promise<{ brokerDatas: Array<{ brokerName: string }>; queueDatas: unknown[] } | undefined> {
    const res = await client.request(ns, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }), 5000);
    return res.code === 0 ? (parseFastjson(res.body ?? Buffer.alloc(0)) as never) : undefined;
  }

  it('serves the same cluster from each nameserver', async () => {
    for (const ns of nsAddrs) {
      const res = await client.request(ns, createRequest(RequestCode.GET_BROKER_CLUSTER_INFO), 5000);
      const info = parseFastjson(res.body ?? Buffer.alloc(0)) as { clusterAddrTable: Record<string, string[]> };
      expect([...info.clusterAddrTable.TwoBrokerCluster].sort()).toEqual(['broker-a', 'broker-b']);
    }
  });

  it('spreads a producer over both brokers and a consumer group reads from both', async () => {
    const topic = 'ClusterSpread';
    for (const b of brokers) {
      const res = await client.request(
        b.brokerAddr(),
        createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
          topic, defaultTopic: 'TBW102', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
        }),
        5000,
      );
      expect(res.code).toBe(0);
    }
    for (const ns of nsAddrs) {
      await waitFor(async () => ((await routeFrom(ns, topic))?.brokerDatas.length ?? 0) === 2, 10_000, `route of ${topic} on ${ns}`);
    }

    const producer = onsProducer(nsAddrs, 'PG_cluster');
    await producer.ready();
    const perBroker = new Map<string, number>();
    const sent = new Set<string>();
    try {
      for (let i = 0; i < 100; i++) {
        const msg = new Message(topic, 'T', `cluster ${i}`);
        msg.keys = [`c${i}`];
        const r = await producer.send(msg);
        expect(r.sendStatus).toBe('SEND_OK');
        perBroker.set(r.messageQueue.brokerName, (perBroker.get(r.messageQueue.brokerName) ?? 0) + 1);
        sent.add(`c${i}`);
      }
    } finally {
      await producer.close();
    }
    expect([...perBroker.keys()].sort()).toEqual(['broker-a', 'broker-b']);

    const got = new Set<string>();
    const consumer = onsConsumer(nsAddrs, 'GID_cluster');
    consumer.subscribe(topic, '*', async (m) => {
      got.add(m.keys);
    });
    try {
      await consumer.ready();
      await waitFor(() => got.size >= sent.size, 30_000, `all ${sent.size} messages from both brokers (got ${got.size})`);
    } finally {
      await consumer.close();
    }
    for (const k of sent) expect(got.has(k)).toBe(true);
  });

  it('keeps serving routes from the other nameserver when one is gone', async () => {
    await namesrvs[0].shutdown();
    const route = await routeFrom(nsAddrs[1], 'ClusterSpread');
    expect(route?.brokerDatas.map((b) => b.brokerName).sort()).toEqual(['broker-a', 'broker-b']);
  });
});
