// Replays REGISTER_BROKER requests captured from official Java brokers (see fixtures/README.md).
import fs from 'node:fs';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { json, startNamesrv } from './helpers.js';

interface Captured {
  version: number;
  extFields: Record<string, string>;
  bodyBase64: string;
}

describe.each(['4.9.8', '5.3.3'])('REGISTER_BROKER captured from Java broker %s', (version) => {
  const cap = JSON.parse(fs.readFileSync(new URL(`./fixtures/register-broker-${version}.json`, import.meta.url), 'utf8')) as Captured;
  const body = Buffer.from(cap.bodyBase64, 'base64');

  it('carries bodyCrc32 = crc32 & 0x7FFFFFFF', () => {
    expect(Number(cap.extFields.bodyCrc32)).toBe(zlib.crc32(body) & 0x7fffffff);
  });

  it('registers and serves the TBW102 route; QUERY_DATA_VERSION sees no change', async () => {
    const t = await startNamesrv();
    try {
      const res = await t.call(RequestCode.REGISTER_BROKER, cap.extFields, body);
      expect(res.code).toBe(ResponseCode.SUCCESS);
      const route = json(await t.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TBW102' }));
      expect(route.queueDatas).toEqual([{ brokerName: 'broker-a', perm: 7, readQueueNums: 4, topicSysFlag: 0, writeQueueNums: 4 }]);
      expect(route.brokerDatas[0].brokerAddrs).toEqual({ '0': '127.0.0.1:37911' });
      const dataVersion = JSON.parse(body.toString('utf8')).topicConfigSerializeWrapper.dataVersion;
      const q = await t.call(
        RequestCode.QUERY_DATA_VERSION,
        { brokerName: 'broker-a', brokerAddr: '127.0.0.1:37911', clusterName: 'DefaultCluster', brokerId: '0' },
        JSON.stringify(dataVersion),
      );
      expect(q.extFields.changed).toBe('false');
      const topics = json(await t.call(RequestCode.GET_TOPICS_BY_CLUSTER, { cluster: 'DefaultCluster' })).topicList;
      expect(topics).toContain('SELF_TEST_TOPIC');
    } finally {
      await t.stop();
    }
  });
});
