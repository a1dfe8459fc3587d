import { describe, expect, it } from 'vitest';
import { BodyDecodeError, decodeRegisterBrokerBody } from '../../src/namesrv/register-broker-body.js';

describe('decodeRegisterBrokerBody', () => {
  it('reads a Java 5.x body with mapping fields and attributes', () => {
    const body = Buffer.from(
      '{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":7,"stateVersion":0,"timestamp":1700000000000},' +
        '"topicConfigTable":{"TBW102":{"attributes":{},"order":false,"perm":7,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8}},' +
        '"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}',
    );
    expect(decodeRegisterBrokerBody(body, false)).toEqual({
      dataVersion: { counter: 7, stateVersion: 0, timestamp: 1700000000000 },
      topicConfigs: [{ topicName: 'TBW102', readQueueNums: 8, writeQueueNums: 8, perm: 7, topicSysFlag: 0 }],
      filterServerList: [],
    });
  });

  it('is lenient: 4.9.x dataVersion, numbers as strings, JS insertion order, missing fields', () => {
    const body = Buffer.from(
      '{topicConfigSerializeWrapper:{topicConfigTable:{"T":{"topicName":"T","readQueueNums":"2","writeQueueNums":2}},dataVersion:{"timestamp":5,"counter":1}}}',
    );
    const d = decodeRegisterBrokerBody(body, false);
    expect(d.dataVersion).toEqual({ stateVersion: 0, timestamp: 5, counter: 1 });
    expect(d.topicConfigs).toEqual([{ topicName: 'T', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicSysFlag: 0 }]);
    expect(d.filterServerList).toEqual([]);
  });

  it('accepts a bare TopicConfigSerializeWrapper (pre-3.0.11 brokers) and an empty body', () => {
    const d = decodeRegisterBrokerBody(Buffer.from('{"dataVersion":{"counter":1,"timestamp":1},"topicConfigTable":{"X":{"topicName":"X"}}}'), false);
    expect(d.topicConfigs.map((t) => t.topicName)).toEqual(['X']);
    expect(decodeRegisterBrokerBody(undefined, false).topicConfigs).toEqual([]);
  });

  it.each(['not json', '[1]', '{"topicConfigSerializeWrapper":{"topicConfigTable":{"T":{"readQueueNums":"x"}}}}', '{"topicConfigSerializeWrapper":5}'])(
    'rejects %j with BodyDecodeError',
    (text) => {
      expect(() => decodeRegisterBrokerBody(Buffer.from(text), false)).toThrow(BodyDecodeError);
    },
  );
});
