import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import {
  BASE_TOPICS,
  type TestNamesrv,
  json,
  logger,
  registerBody,
  registerBroker,
  registerHeader,
  request,
  startNamesrv,
} from './helpers.js';

const A0 = '127.0.0.1:10911';
const A1 = '127.0.0.1:10921';
const B0 = '127.0.0.1:20911';

describe('namesrv over the wire', () => {
  let t: TestNamesrv;
  beforeEach(async () => {
    t = await startNamesrv();
  });
  afterEach(async () => {
    await t.stop();
  });

  async function registerTwoBrokersAndSlave(): Promise<void> {
    const topics = [...BASE_TOPICS, { name: 'T', read: 4, write: 4 }];
    const ra = await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics });
    expect(ra.code).toBe(ResponseCode.SUCCESS);
    expect(ra.extFields).toEqual({}); // master: no haServerAddr/masterAddr
    expect(ra.body).toBeUndefined(); // no ORDER_TOPIC_CONFIG namespace yet
    const rb = await registerBroker(t.client, t.addr, { name: 'broker-b', addr: B0, topics: [...BASE_TOPICS, { name: 'T', read: 8, write: 8 }] });
    expect(rb.code).toBe(ResponseCode.SUCCESS);
    // the slave's topic table differs: slaves never change queue data
    const rs = await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A1, id: 1, topics: [...topics, { name: 'SLAVE_ONLY' }] });
    expect(rs.code).toBe(ResponseCode.SUCCESS);
    expect(rs.extFields).toEqual({ haServerAddr: '127.0.0.1:10912', masterAddr: A0 });
  }

  it('registers two brokers and a slave; the route has both, compact, quoted numeric keys', async () => {
    await registerTwoBrokersAndSlave();
    const res = await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    const text = res.body!.toString('utf8');
    expect(text).toBe(
      '{"brokerDatas":[' +
        '{"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false},' +
        '{"brokerAddrs":{"0":"127.0.0.1:20911"},"brokerName":"broker-b","cluster":"DefaultCluster","enableActingMaster":false}],' +
        '"filterServerTable":{},"queueDatas":[' +
        '{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},' +
        '{"brokerName":"broker-b","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}',
    );
    expect(JSON.parse(text)).toBeTruthy();
    expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'SLAVE_ONLY' })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
  });

  it('serves a looked-up route again until the broker changes it (the encoded route is kept per version)', async () => {
    const dv = (counter: number) => ({ counter, timestamp: 1700000000000 + counter });
    await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: [...BASE_TOPICS, { name: 'T', read: 4, write: 4 }], dataVersion: dv(1) });
    const first = await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' });
    // the 30 s re-registration with the same data version: same route, byte for byte
    await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: [...BASE_TOPICS, { name: 'T', read: 4, write: 4 }], dataVersion: dv(1) });
    expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).body).toEqual(first.body);
    // a changed topic config reaches the next lookup
    await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: [...BASE_TOPICS, { name: 'T', read: 16, write: 16 }], dataVersion: dv(2) });
    expect(json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).queueDatas[0].readQueueNums).toBe(16);
    // so does a second broker
    await registerBroker(t.client, t.addr, { name: 'broker-b', addr: B0, topics: [...BASE_TOPICS, { name: 'T' }] });
    expect(json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).brokerDatas).toHaveLength(2);
  });

  it('answers TOPIC_NOT_EXIST with the Java remark for an unknown topic', async () => {
    const res = await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Nope' });
    expect(res.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(res.remark).toMatch(/^No topic route info in name server for the topic: Nope\nSee https:/);
    expect(res.body).toBeUndefined();
  });

  it('serves the TBW102 route when a broker registers TBW102 (autoCreateTopicEnable)', async () => {
    await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: [...BASE_TOPICS, { name: 'TBW102', read: 8, write: 8, perm: 7 }] });
    const route = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TBW102' }));
    expect(route.queueDatas).toEqual([{ brokerName: 'broker-a', perm: 7, readQueueNums: 8, topicSysFlag: 0, writeQueueNums: 8 }]);
    expect(route.brokerDatas[0].brokerAddrs).toEqual({ '0': A0 });
  });

  it('reports cluster info with both broker names', async () => {
    await registerTwoBrokersAndSlave();
    const info = json(await t.call(RequestCode.GET_BROKER_CLUSTER_INFO));
    expect(info.clusterAddrTable).toEqual({ DefaultCluster: ['broker-a', 'broker-b'] });
    expect(info.brokerAddrTable['broker-a'].brokerAddrs).toEqual({ '0': A0, '1': A1 });
  });

  it('unregister removes the broker, its queues and the empty topic', async () => {
    await registerTwoBrokersAndSlave();
    const base = { brokerName: 'broker-b', brokerAddr: B0, clusterName: 'DefaultCluster', brokerId: '0' };
    expect((await t.call(RequestCode.UNREGISTER_BROKER, base)).code).toBe(ResponseCode.SUCCESS);
    const route = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' }));
    expect(route.brokerDatas.map((b: any) => b.brokerName)).toEqual(['broker-a']);
    expect(route.queueDatas.map((q: any) => q.brokerName)).toEqual(['broker-a']);

    // the master of broker-a leaves: the slave keeps the name (and its queues) alive
    await t.call(RequestCode.UNREGISTER_BROKER, { ...base, brokerName: 'broker-a', brokerAddr: A0 });
    const r2 = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' }));
    expect(r2.brokerDatas[0].brokerAddrs).toEqual({ '1': A1 });
    await t.call(RequestCode.UNREGISTER_BROKER, { ...base, brokerName: 'broker-a', brokerAddr: A1, brokerId: '1' });
    expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(json(await t.call(RequestCode.GET_BROKER_CLUSTER_INFO))).toEqual({ brokerAddrTable: {}, clusterAddrTable: {} });
    expect(json(await t.call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))).toEqual({ topicList: [] });
  });

  it("removes a broker when the connection it registered on closes", async () => {
    const other = new RemotingClient(logger);
    await registerBroker(other, t.addr, { name: 'broker-x', addr: '127.0.0.1:30911', topics: [...BASE_TOPICS, { name: 'X' }] });
    await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: [...BASE_TOPICS, { name: 'X' }] });
    expect(json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'X' })).brokerDatas).toHaveLength(2);
    await other.close();
    await vi.waitFor(async () => {
      const route = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'X' }));
      expect(route.brokerDatas.map((b: any) => b.brokerName)).toEqual(['broker-a']);
    });
  });

  it('lists all topics, topics by cluster, system topics; deletes a topic', async () => {
    await registerTwoBrokersAndSlave();
    await registerBroker(t.client, t.addr, { cluster: 'Other', name: 'broker-c', addr: '127.0.0.1:40911', topics: [...BASE_TOPICS, { name: 'C_ONLY' }] });
    const all = json(await t.call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER));
    expect(all.topicList.sort()).toEqual(['C_ONLY', 'SELF_TEST_TOPIC', 'T']);
    expect(all.brokerAddr).toBeUndefined();
    expect(json(await t.call(RequestCode.GET_TOPICS_BY_CLUSTER, { cluster: 'DefaultCluster' })).topicList.sort()).toEqual(['SELF_TEST_TOPIC', 'T']);
    expect(json(await t.call(RequestCode.GET_TOPICS_BY_CLUSTER, { cluster: 'Other' })).topicList.sort()).toEqual(['C_ONLY', 'SELF_TEST_TOPIC']);
    expect(json(await t.call(RequestCode.GET_TOPICS_BY_CLUSTER, { cluster: 'Nope' }))).toEqual({ topicList: [] });

    const sys = json(await t.call(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS));
    expect(sys.topicList.sort()).toEqual(['DefaultCluster', 'Other', 'broker-a', 'broker-b', 'broker-c']);
    expect(sys.brokerAddr).toBe(A0);

    // cluster-scoped delete removes only that cluster's queues
    expect((await t.call(RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic: 'SELF_TEST_TOPIC', clusterName: 'Other' })).code).toBe(0);
    expect(json(await t.call(RequestCode.GET_TOPICS_BY_CLUSTER, { cluster: 'Other' })).topicList).toEqual(['C_ONLY']);
    expect(json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'SELF_TEST_TOPIC' })).queueDatas).toHaveLength(2);
    expect((await t.call(RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic: 'T' })).code).toBe(ResponseCode.SUCCESS);
    expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
  });

  it('wipes and restores write permission of a broker', async () => {
    await registerTwoBrokersAndSlave();
    const wipe = await t.call(RequestCode.WIPE_WRITE_PERM_OF_BROKER, { brokerName: 'broker-a' });
    expect(wipe.code).toBe(ResponseCode.SUCCESS);
    expect(wipe.extFields.wipeTopicCount).toBe('2');
    const route = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' }));
    expect(route.queueDatas.find((q: any) => q.brokerName === 'broker-a').perm).toBe(4);
    expect(route.queueDatas.find((q: any) => q.brokerName === 'broker-b').perm).toBe(6);
    const add = await t.call(RequestCode.ADD_WRITE_PERM_OF_BROKER, { brokerName: 'broker-a' });
    expect(add.extFields.addTopicCount).toBe('2');
    const r2 = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' }));
    expect(r2.queueDatas.find((q: any) => q.brokerName === 'broker-a').perm).toBe(6);
  });

  it('QUERY_DATA_VERSION reports whether the broker topic config changed', async () => {
    const dv = { counter: 5, timestamp: 1700000000123 };
    await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: BASE_TOPICS.concat({ name: 'T' }), dataVersion: dv });
    const hdr = { brokerName: 'broker-a', brokerAddr: A0, clusterName: 'DefaultCluster', brokerId: '0' };
    const same = await t.call(RequestCode.QUERY_DATA_VERSION, hdr, `{"counter":5,"stateVersion":0,"timestamp":1700000000123}`);
    expect(same.code).toBe(ResponseCode.SUCCESS);
    expect(same.extFields.changed).toBe('false');
    expect(json(same)).toEqual({ counter: 5, stateVersion: 0, timestamp: 1700000000123 });
    const changed = await t.call(RequestCode.QUERY_DATA_VERSION, hdr, `{"counter":6,"timestamp":1700000000999}`);
    expect(changed.extFields.changed).toBe('true');
    const unknown = await t.call(RequestCode.QUERY_DATA_VERSION, { ...hdr, brokerAddr: '1.2.3.4:1' }, `{"counter":1}`);
    expect(unknown.extFields.changed).toBe('true');
    expect(unknown.body).toBeUndefined();
  });

  it('REGISTER_TOPIC_IN_NAMESRV adds queue data for known brokers only', async () => {
    await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: BASE_TOPICS.concat({ name: 'T' }) });
    const body = '{"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":2,"topicSysFlag":0,"writeQueueNums":2}]}';
    expect((await t.call(RequestCode.REGISTER_TOPIC_IN_NAMESRV, { topic: 'NEW' }, body)).code).toBe(ResponseCode.SUCCESS);
    expect(json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'NEW' })).queueDatas[0].readQueueNums).toBe(2);
    const bad = body.replace('broker-a', 'ghost');
    expect((await t.call(RequestCode.REGISTER_TOPIC_IN_NAMESRV, { topic: 'GHOST' }, bad)).code).toBe(ResponseCode.SUCCESS);
    expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'GHOST' })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
  });

  it('returns the namesrv config as properties text', async () => {
    const res = await t.call(RequestCode.GET_NAMESRV_CONFIG);
    expect(res.code).toBe(ResponseCode.SUCCESS);
    const text = res.body!.toString('utf8');
    expect(text).toContain('orderMessageEnable=false\n');
    expect(text).toContain('scanNotActiveBrokerInterval=5000\n');
    const denied = await t.call(RequestCode.UPDATE_NAMESRV_CONFIG, {}, 'kvConfigPath=/tmp/x\n');
    expect(denied.code).toBe(ResponseCode.NO_PERMISSION);
    expect((await t.call(RequestCode.UPDATE_NAMESRV_CONFIG, {}, 'orderMessageEnable=true\n')).code).toBe(ResponseCode.SUCCESS);
    expect((await t.call(RequestCode.GET_NAMESRV_CONFIG)).body!.toString()).toContain('orderMessageEnable=true\n');
  });

  it('lists topics by their unit flags (311-313), from the topicSysFlag brokers register', async () => {
    await registerBroker(t.client, t.addr, {
      name: 'broker-a', addr: A0,
      topics: [...BASE_TOPICS, { name: 'UNIT', sysFlag: 1 }, { name: 'SUB', sysFlag: 2 }, { name: 'BOTH', sysFlag: 3 }, { name: 'PLAIN' }],
    });
    const list = async (code: number) => (json(await t.call(code)).topicList as string[]).sort();
    expect(await list(RequestCode.GET_UNIT_TOPIC_LIST)).toEqual(['BOTH', 'UNIT']);
    expect(await list(RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST)).toEqual(['BOTH', 'SUB']);
    expect(await list(RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST)).toEqual(['SUB']);
  });

  it('answers a broker name\'s members by id (901), none for an unknown name', async () => {
    await registerTwoBrokersAndSlave();
    const members = json(await t.call(RequestCode.GET_BROKER_MEMBER_GROUP, { clusterName: 'DefaultCluster', brokerName: 'broker-a' }));
    expect(members).toEqual({ brokerMemberGroup: { brokerAddrs: { 0: A0, 1: A1 }, brokerName: 'broker-a', cluster: 'DefaultCluster' } });
    const none = json(await t.call(RequestCode.GET_BROKER_MEMBER_GROUP, { clusterName: 'C', brokerName: 'nope' }));
    expect(none).toEqual({ brokerMemberGroup: { brokerAddrs: {}, brokerName: 'nope', cluster: 'C' } });
    expect((await t.call(RequestCode.GET_BROKER_MEMBER_GROUP, { brokerName: 'broker-a' })).code).toBe(ResponseCode.SYSTEM_ERROR);
  });

  it('unknown request code → REQUEST_CODE_NOT_SUPPORTED with remark', async () => {
    const res = await t.call(9999);
    expect(res.code).toBe(ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    expect(res.remark).toBe(' request type 9999 not supported');
  });

  describe('REGISTER_BROKER edge cases', () => {
    const spec = { name: 'broker-a', addr: A0, topics: BASE_TOPICS.concat({ name: 'T' }) };

    it('malformed body → SYSTEM_ERROR, connection stays usable', async () => {
      const res = await t.call(RequestCode.REGISTER_BROKER, registerHeader(spec), '{"topicConfigSerializeWrapper":{');
      expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect(res.remark).toMatch(/^Failed to decode RegisterBrokerBody/);
      const wrongShape = await t.call(RequestCode.REGISTER_BROKER, registerHeader(spec), '{"topicConfigSerializeWrapper":{"topicConfigTable":[1]}}');
      expect(wrongShape.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect((await registerBroker(t.client, t.addr, spec)).code).toBe(ResponseCode.SUCCESS);
      expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).code).toBe(ResponseCode.SUCCESS);
    });

    it('missing header field → SYSTEM_ERROR naming the field', async () => {
      const { haServerAddr: _h, ...hdr } = registerHeader(spec);
      const res = await t.call(RequestCode.REGISTER_BROKER, hdr, registerBody(spec.topics));
      expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect(res.remark).toContain('haServerAddr');
      const bad = await t.call(RequestCode.REGISTER_BROKER, { ...registerHeader(spec), brokerId: 'x' }, registerBody(spec.topics));
      expect(bad.code).toBe(ResponseCode.SYSTEM_ERROR);
      for (const code of [RequestCode.GET_ROUTEINFO_BY_TOPIC, RequestCode.GET_KV_CONFIG, RequestCode.UNREGISTER_BROKER, RequestCode.GET_TOPICS_BY_CLUSTER]) {
        expect((await t.call(code)).code).toBe(ResponseCode.SYSTEM_ERROR);
      }
      expect((await t.call(RequestCode.QUERY_DATA_VERSION, { brokerName: 'b', brokerAddr: 'a', clusterName: 'c', brokerId: '0' }, 'nope')).code).toBe(
        ResponseCode.SYSTEM_ERROR,
      );
    });

    it('checks bodyCrc32 like Java (crc32 & 0x7FFFFFFF), skipping 0', async () => {
      const body = registerBody(spec.topics);
      const crc = zlib.crc32(body) & 0x7fffffff;
      const bad = await t.call(RequestCode.REGISTER_BROKER, { ...registerHeader(spec), bodyCrc32: String(crc ^ 1) }, body);
      expect(bad.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect(bad.remark).toBe('crc32 not match');
      expect((await t.call(RequestCode.REGISTER_BROKER, { ...registerHeader(spec), bodyCrc32: String(crc) }, body)).code).toBe(0);
      expect((await t.call(RequestCode.REGISTER_BROKER, { ...registerHeader(spec), bodyCrc32: '0' }, body)).code).toBe(0);
    });

    it('accepts a compressed body (Java RegisterBrokerBody.encode(true))', async () => {
      const int = (n: number) => {
        const b = Buffer.alloc(4);
        b.writeInt32BE(n);
        return b;
      };
      const chunk = (s: string) => Buffer.concat([int(Buffer.byteLength(s)), Buffer.from(s)]);
      const topics = ['SELF_TEST_TOPIC 1 1 6 SINGLE_TAG {}', 'Z 2 3 6 SINGLE_TAG {}'];
      const raw = Buffer.concat([chunk('{"counter":3,"stateVersion":0,"timestamp":1}'), int(topics.length), ...topics.map(chunk), chunk('[]'), int(0)]);
      const body = zlib.deflateSync(raw, { level: 9 });
      const res = await t.call(RequestCode.REGISTER_BROKER, { ...registerHeader(spec), compressed: 'true', bodyCrc32: String(zlib.crc32(body) & 0x7fffffff) }, body);
      expect(res.code).toBe(ResponseCode.SUCCESS);
      const route = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Z' }));
      expect(route.queueDatas).toEqual([{ brokerName: 'broker-a', perm: 6, readQueueNums: 2, topicSysFlag: 0, writeQueueNums: 3 }]);
      const garbage = await t.call(RequestCode.REGISTER_BROKER, { ...registerHeader(spec), compressed: 'true' }, Buffer.from([1, 2, 3]));
      expect(garbage.code).toBe(ResponseCode.SYSTEM_ERROR);
    });

    it('rejects a first registration carrying a single topic, like Java 5.x', async () => {
      const res = await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: [{ name: 'T' }] });
      expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect(res.remark).toBe('register broker failed');
      // an empty registration (no body) is accepted
      expect((await t.call(RequestCode.REGISTER_BROKER, registerHeader(spec))).code).toBe(ResponseCode.SUCCESS);
      expect((await registerBroker(t.client, t.addr, { name: 'broker-a', addr: A0, topics: [{ name: 'T' }] })).code).toBe(ResponseCode.SUCCESS);
    });

    it('returns the ORDER_TOPIC_CONFIG namespace to the broker and orderTopicConf in routes', async () => {
      await t.call(RequestCode.PUT_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T', value: 'broker-a:4' });
      const res = await registerBroker(t.client, t.addr, spec);
      expect(json(res)).toEqual({ table: { T: 'broker-a:4' } });
      expect(json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).orderTopicConf).toBeUndefined();
      t.config.orderMessageEnable = true;
      expect(json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).orderTopicConf).toBe('broker-a:4');
    });

    it('records the zone and enableActingMaster from a 5.x broker', async () => {
      await registerBroker(t.client, t.addr, { ...spec, ext: { __ZONE_NAME: 'z1', enableActingMaster: 'false' } });
      const bd = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).brokerDatas[0];
      expect(bd).toEqual({ brokerAddrs: { '0': A0 }, brokerName: 'broker-a', cluster: 'DefaultCluster', enableActingMaster: false, zoneName: 'z1' });
    });
  });
});

describe('broker liveness', () => {
  it('expires a broker that stops registering and closes its connection', async () => {
    const t = await startNamesrv({ brokerChannelExpiredTime: 150, scanNotActiveBrokerInterval: 25 });
    try {
      const other = new RemotingClient(logger);
      await registerBroker(other, t.addr, { name: 'broker-a', addr: A0, topics: BASE_TOPICS.concat({ name: 'T' }) });
      expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).code).toBe(ResponseCode.SUCCESS);
      await vi.waitFor(async () => {
        expect((await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'T' })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
      }, { timeout: 3000, interval: 25 });
      expect(t.ns.server.connectionCount).toBe(1); // the expired broker's link was closed, ours stays
      await other.close();
    } finally {
      await t.stop();
    }
  });

  it('uses heartbeatTimeoutMillis from the header; re-registration and heartbeats keep a broker alive', async () => {
    let now = 1_000_000;
    const t = await startNamesrv({ scanNotActiveBrokerInterval: 3_600_000 }, { now: () => now });
    try {
      const topics = BASE_TOPICS.concat({ name: 'T' });
      // separate links: expiry closes the expired broker's connection, as Java does
      const clientA = new RemotingClient(logger);
      await registerBroker(clientA, t.addr, { name: 'broker-a', addr: A0, topics, ext: { heartbeatTimeoutMillis: '10000' } });
      await registerBroker(t.client, t.addr, { name: 'broker-b', addr: B0, topics });
      now += 10_001;
      expect(t.ns.routes.scanNotActiveBrokers()).toEqual([A0]);
      now += 100_000;
      await t.call(RequestCode.BROKER_HEARTBEAT, { clusterName: 'DefaultCluster', brokerAddr: B0, brokerName: 'broker-b' });
      now += 100_000;
      expect(t.ns.routes.scanNotActiveBrokers()).toEqual([]); // 100 s since the heartbeat < 120 s
      now += 20_001;
      expect(t.ns.routes.scanNotActiveBrokers()).toEqual([B0]);
      await clientA.close();
    } finally {
      await t.stop();
    }
  });
});

describe('two clients, one namesrv', () => {
  it('keeps serving other connections when one sends garbage', async () => {
    const t = await startNamesrv();
    try {
      const c2 = new RemotingClient(logger);
      const r = await request(c2, t.addr, RequestCode.REGISTER_TOPIC_IN_NAMESRV, { topic: 'x' }, '{{{');
      expect(r.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect((await t.call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)).code).toBe(ResponseCode.SUCCESS);
      await c2.close();
    } finally {
      await t.stop();
    }
  });
});
