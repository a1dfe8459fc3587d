import { describe, expect, it } from 'vitest';
import { RouteInfoManager } from '../../src/namesrv/route-info-manager.js';
import type { RegisterBrokerRequest } from '../../src/namesrv/route-info-manager.js';
import type { TopicConfigInfo } from '../../src/namesrv/route-types.js';
import { logger } from './helpers.js';

function topic(name: string, nums = 4, perm = 6): TopicConfigInfo {
  return { topicName: name, readQueueNums: nums, writeQueueNums: nums, perm, topicSysFlag: 0 };
}

function req(over: Partial<RegisterBrokerRequest>): RegisterBrokerRequest {
  return {
    clusterName: 'C',
    brokerAddr: '10.0.0.1:10911',
    brokerName: 'b',
    brokerId: 0,
    haServerAddr: '10.0.0.1:10912',
    dataVersion: { stateVersion: 0, timestamp: 1, counter: 1 },
    topicConfigs: [topic('S'), topic('T')],
    filterServerList: [],
    channel: null,
    ...over,
  };
}

describe('RouteInfoManager', () => {
  it('updates queue data only on first registration or a changed dataVersion', () => {
    const r = new RouteInfoManager({ brokerChannelExpiredTimeMs: 120_000 }, logger);
    r.registerBroker(req({}));
    // same dataVersion, different table: ignored (Java trusts the version)
    r.registerBroker(req({ topicConfigs: [topic('S'), topic('T', 8)] }));
    expect(r.pickupTopicRouteData('T')!.queueDatas[0].readQueueNums).toBe(4);
    r.registerBroker(req({ topicConfigs: [topic('S'), topic('T', 8)], dataVersion: { stateVersion: 0, timestamp: 2, counter: 2 } }));
    expect(r.pickupTopicRouteData('T')!.queueDatas[0].readQueueNums).toBe(8);
    // a topic deleted in the namesrv comes back with the next registration (5.x isTopicConfigChanged)
    r.deleteTopic('T');
    r.registerBroker(req({ topicConfigs: [topic('S'), topic('T', 8)], dataVersion: { stateVersion: 0, timestamp: 2, counter: 2 } }));
    expect(r.pickupTopicRouteData('T')).not.toBeNull();
  });

  it('moves its route version on every change a route shows, not on a heartbeat registration', () => {
    const r = new RouteInfoManager({ brokerChannelExpiredTimeMs: 120_000 }, logger);
    r.registerBroker(req({}));
    let v = r.version;
    const moved = (): boolean => {
      const changed = r.version !== v;
      v = r.version;
      return changed;
    };
    r.registerBroker(req({})); // the broker's 30 s re-registration: nothing a route shows changed
    expect(moved()).toBe(false);
    r.registerBroker(req({ topicConfigs: [topic('S'), topic('T', 8)], dataVersion: { stateVersion: 0, timestamp: 2, counter: 2 } }));
    expect(moved()).toBe(true);
    r.registerBroker(req({ dataVersion: { stateVersion: 0, timestamp: 2, counter: 2 }, filterServerList: ['f:1'] }));
    expect(moved()).toBe(true);
    r.registerBroker(req({ dataVersion: { stateVersion: 0, timestamp: 2, counter: 2 }, zoneName: 'z' }));
    expect(moved()).toBe(true);
    r.registerBroker(req({ brokerAddr: 's:1', brokerId: 1, dataVersion: { stateVersion: 0, timestamp: 2, counter: 2 } }));
    expect(moved()).toBe(true);
    r.wipeWritePermOfBroker('b');
    expect(moved()).toBe(true);
    r.registerTopic('N', [{ brokerName: 'b', perm: 6, readQueueNums: 1, writeQueueNums: 1, topicSysFlag: 0 }]);
    expect(moved()).toBe(true);
    r.deleteTopic('N');
    expect(moved()).toBe(true);
    r.unregisterBroker({ clusterName: 'C', brokerAddr: 's:1', brokerName: 'b', brokerId: 1 });
    expect(moved()).toBe(true);
  });

  it('moves an address to its new id (slave promoted to master)', () => {
    const r = new RouteInfoManager({ brokerChannelExpiredTimeMs: 120_000 }, logger);
    r.registerBroker(req({ brokerAddr: 'm:1' }));
    r.registerBroker(req({ brokerAddr: 's:1', brokerId: 1 }));
    expect([...r.brokerAddrTable.get('b')!.brokerAddrs]).toEqual([
      [0, 'm:1'],
      [1, 's:1'],
    ]);
    r.unregisterBroker({ clusterName: 'C', brokerAddr: 'm:1', brokerName: 'b', brokerId: 0 });
    const res = r.registerBroker(req({ brokerAddr: 's:1', brokerId: 0 }));
    expect(res).toEqual({});
    expect([...r.brokerAddrTable.get('b')!.brokerAddrs]).toEqual([[0, 's:1']]);
  });

  it('slaves never write queue data; a slave learns its master', () => {
    const r = new RouteInfoManager({ brokerChannelExpiredTimeMs: 120_000 }, logger);
    expect(r.registerBroker(req({ brokerAddr: 's:1', brokerId: 1 }))).toEqual({});
    expect(r.pickupTopicRouteData('T')).toBeNull();
    r.registerBroker(req({ brokerAddr: 'm:1', haServerAddr: 'm:2' }));
    expect(r.registerBroker(req({ brokerAddr: 's:1', brokerId: 1 }))).toEqual({ haServerAddr: 'm:2', masterAddr: 'm:1' });
  });

  it('a 5.x slave that is the lowest id updates queue data (read-only in acting-master mode)', () => {
    const r = new RouteInfoManager({ brokerChannelExpiredTimeMs: 120_000 }, logger);
    r.registerBroker(req({ brokerAddr: 's:1', brokerId: 1, enableActingMaster: true }));
    expect(r.pickupTopicRouteData('T')!.queueDatas[0].perm).toBe(4);
  });

  it('expires by the clock and removes empty topics and clusters', () => {
    let now = 0;
    const r = new RouteInfoManager({ brokerChannelExpiredTimeMs: 1000, now: () => now }, logger);
    r.registerBroker(req({}));
    now = 1000;
    expect(r.scanNotActiveBrokers()).toEqual([]);
    now = 1001;
    expect(r.scanNotActiveBrokers()).toEqual(['10.0.0.1:10911']);
    expect(r.topicQueueTable.size).toBe(0);
    expect(r.clusterAddrTable.size).toBe(0);
    expect(r.brokerAddrTable.size).toBe(0);
    expect(r.brokerLiveTable.size).toBe(0);
  });

  it('a master whose registration expires leaves its slave in the route with the queues (consumers move to it)', () => {
    let now = 0;
    const r = new RouteInfoManager({ brokerChannelExpiredTimeMs: 1000, now: () => now }, logger);
    r.registerBroker(req({}));
    now = 500;
    r.registerBroker(req({ brokerAddr: '10.0.0.2:10911', brokerId: 1, haServerAddr: '10.0.0.2:10912' }));
    now = 1400;
    r.registerBroker(req({ brokerAddr: '10.0.0.2:10911', brokerId: 1, haServerAddr: '10.0.0.2:10912' }));
    expect(r.scanNotActiveBrokers()).toEqual(['10.0.0.1:10911']);
    const route = r.pickupTopicRouteData('T')!;
    expect([...route.brokerDatas[0].brokerAddrs]).toEqual([[1, '10.0.0.2:10911']]);
    expect(route.queueDatas.map((q) => [q.brokerName, q.perm])).toEqual([['b', 6]]);
    // The slave's next registration learns no master (its sync pauses), and the master's return is seen again.
    expect(r.registerBroker(req({ brokerAddr: '10.0.0.2:10911', brokerId: 1 }))).toEqual({});
    r.registerBroker(req({}));
    expect(r.registerBroker(req({ brokerAddr: '10.0.0.2:10911', brokerId: 1 }))).toEqual({ haServerAddr: '10.0.0.1:10912', masterAddr: '10.0.0.1:10911' });
  });
});
