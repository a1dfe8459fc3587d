// ali-ons (a stock npm client) reads our route data with its own parser (JSON2) and sorts both arrays.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { BASE_TOPICS, registerBroker, startNamesrv } from './helpers.js';

const require = createRequire(import.meta.url);

describe('ali-ons against the namesrv', () => {
  it('fetches a route and gets TOPIC_NOT_EXIST for an unknown topic', async () => {
    const MQClientAPI = require('ali-ons/lib/mq_client_api');
    const t = await startNamesrv();
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    const api = new MQClientAPI({ nameSrv: t.addr, httpclient: {}, logger: quiet });
    try {
      const topics = [...BASE_TOPICS, { name: 'T' }];
      await registerBroker(t.client, t.addr, { name: 'broker-b', addr: '127.0.0.1:20911', topics });
      await registerBroker(t.client, t.addr, { name: 'broker-a', addr: '127.0.0.1:10911', topics });
      await registerBroker(t.client, t.addr, { name: 'broker-a', addr: '127.0.0.1:10921', id: 1, topics });
      await api.ready();
      const route = await api.getTopicRouteInfoFromNameServer('T', 3000);
      expect(route.brokerDatas.map((b: any) => [b.brokerName, b.brokerAddrs])).toEqual([
        ['broker-a', { '0': '127.0.0.1:10911', '1': '127.0.0.1:10921' }],
        ['broker-b', { '0': '127.0.0.1:20911' }],
      ]);
      expect(route.queueDatas.map((q: any) => q.brokerName)).toEqual(['broker-a', 'broker-b']);
      await expect(api.getTopicRouteInfoFromNameServer('Nope', 3000)).rejects.toThrow(/No topic route info/);
    } finally {
      await api.close();
      await t.stop();
    }
  });
});
