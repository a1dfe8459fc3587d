import { describe, expect, it } from 'vitest';
import {
  FastjsonSyntaxError,
  JavaDouble,
  fastjsonEntries,
  parseFastjson,
  stringifyFastjson,
  stringifyWithObjectKeys,
} from '../../src/common/fastjson.js';

// Bodies as Java peers send them. Sources: remoting-protocol.md §4–5, apache/rocketmq issue #3389 (a real
// TopicStatsTable body captured from a broker), issue #10284 (a real consumerOffset.json from a 5.4 broker).
const TOPIC_STATS_3389 =
  '{"offsetTable":{{"brokerName":"rocketmq-broker-a","queueId":2,"topic":"test"}:{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0},' +
  '{"brokerName":"rocketmq-broker-a","queueId":3,"topic":"test"}:{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}}}';
const CONSUMER_OFFSET_10284 =
  '{"dataVersion":{"counter":565102,"stateVersion":34,"timestamp":1777529309588},"offsetTable":{"TopicTest@gid-test":{0:123,1:456}}}';

describe('parseFastjson', () => {
  it('parses standard JSON like JSON.parse', () => {
    const text = '{"a":[1,2.5,-3e2,true,false,null],"b":{"c":"d\\n\\u00e9"},"e":""}';
    expect(parseFastjson(text)).toEqual(JSON.parse(text));
  });

  it('accepts bare numeric keys (Map<Integer,…>) as string keys of a plain object', () => {
    const v = parseFastjson(CONSUMER_OFFSET_10284) as any;
    expect(v.dataVersion).toEqual({ counter: 565102, stateVersion: 34, timestamp: 1777529309588 });
    expect(v.offsetTable['TopicTest@gid-test']).toEqual({ '0': 123, '1': 456 });
  });

  it('parses a route body in the unquoted form Java sends to old clients', () => {
    const v = parseFastjson(
      '{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"b","cluster":"c"}],"filterServerTable":{},"queueDatas":[]}',
    ) as any;
    expect(v.brokerDatas[0].brokerAddrs).toEqual({ '0': '10.0.0.1:10911', '1': '10.0.0.2:10911' });
  });

  it('turns objects with object keys into a Map keyed by the parsed key objects', () => {
    const v = parseFastjson(TOPIC_STATS_3389) as { offsetTable: Map<any, any> };
    expect(v.offsetTable).toBeInstanceOf(Map);
    const entries = [...v.offsetTable.entries()];
    expect(entries).toHaveLength(2);
    expect(entries[0][0]).toEqual({ brokerName: 'rocketmq-broker-a', queueId: 2, topic: 'test' });
    expect(entries[1][1]).toEqual({ lastUpdateTimestamp: 0, maxOffset: 0, minOffset: 0 });
    expect(fastjsonEntries(v.offsetTable).map(([k]) => (k as any).queueId)).toEqual([2, 3]);
  });

  it('keeps bare numeric keys as numbers inside a Map (mixed keys)', () => {
    const m = parseFastjson('{{"a":1}:"x",7:"y",z:"w"}') as Map<unknown, unknown>;
    expect([...m.keys()]).toEqual([{ a: 1 }, 7, 'z']);
  });

  it('accepts unquoted keys, single quotes, extra commas, BOM and fastjson escapes', () => {
    expect(parseFastjson("\ufeff{name:'it''s',list:[1,,2,],'k':'\\x41\\''}".replace("''", "\\'"))).toEqual({
      name: "it's",
      list: [1, 2],
      k: "A'",
    });
    expect(parseFastjson('{,"a":1,,}')).toEqual({ a: 1 });
  });

  it('keeps integers beyond 2^53 exact', () => {
    const v = parseFastjson('{"big":9223372036854775807,"neg":-9007199254740993,"ok":9007199254740991}') as any;
    expect(v.big).toBe(9223372036854775807n);
    expect(v.neg).toBe(-9007199254740993n);
    expect(v.ok).toBe(9007199254740991);
    expect((parseFastjson('[12345678901234567890]', { bigIntegers: 'string' }) as any)[0]).toBe('12345678901234567890');
    expect(parseFastjson('1.5e3')).toBe(1500);
  });

  it('accepts a buffer', () => {
    expect(parseFastjson(Buffer.from('{"a":"é"}'))).toEqual({ a: 'é' });
  });

  it('does not let a __proto__ key touch the prototype', () => {
    const v = parseFastjson('{"__proto__":{"polluted":1}}') as any;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as any).polluted).toBeUndefined();
  });

  it.each([
    ['{"a":1', 'unterminated object'],
    ['{"a" 1}', 'expected :'],
    ['[1 2]', 'expected , or ]'],
    ['"abc', 'unterminated string'],
    ['{"a":tru}', 'unexpected character'],
    ['{"a":01}', 'malformed number'],
    ['{} x', 'trailing'],
    ['', 'unexpected end'],
    ['"\\q"', 'invalid escape'],
  ])('rejects %j with a positioned error', (text, msg) => {
    expect(() => parseFastjson(text)).toThrow(FastjsonSyntaxError);
    expect(() => parseFastjson(text)).toThrow(msg);
  });

  it('limits nesting depth', () => {
    expect(() => parseFastjson('['.repeat(600) + ']'.repeat(600))).toThrow(/nesting/);
    expect(parseFastjson('['.repeat(10) + ']'.repeat(10), { maxDepth: 20 })).toBeDefined();
  });
});

describe('stringifyFastjson', () => {
  it('writes a MessageQueue-keyed map in fastjson form with sorted key fields', () => {
    const offsetTable = new Map<object, object>([
      [{ topic: 'T', queueId: 0, brokerName: 'b' }, { pullOffset: 3, lastTimestamp: 7, consumerOffset: 2, brokerOffset: 1 }],
      [{ topic: 'T', queueId: 1, brokerName: 'b' }, { pullOffset: 0, lastTimestamp: 0, consumerOffset: 0, brokerOffset: 0 }],
    ]);
    expect(stringifyWithObjectKeys({ offsetTable, consumeTps: new JavaDouble(0) })).toBe(
      '{"consumeTps":0.0,"offsetTable":{' +
        '{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":1,"consumerOffset":2,"lastTimestamp":7,"pullOffset":3},' +
        '{"brokerName":"b","queueId":1,"topic":"T"}:{"brokerOffset":0,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}}}',
    );
  });

  it('round-trips the captured TopicStatsTable body byte for byte', () => {
    expect(stringifyFastjson(parseFastjson(TOPIC_STATS_3389))).toBe(TOPIC_STATS_3389);
  });

  it('writes number keys bare and string keys quoted, like fastjson', () => {
    const table = new Map([['TopicTest@gid-test', new Map([[0, 123], [1, 456]])]]);
    expect(stringifyFastjson({ offsetTable: table })).toBe('{"offsetTable":{"TopicTest@gid-test":{0:123,1:456}}}');
  });

  it('omits null/undefined fields and map values, keeps empty collections', () => {
    expect(stringifyFastjson({ b: null, a: undefined, c: [], d: {}, e: new Map([['x', null]]) })).toBe('{"c":[],"d":{},"e":{}}');
  });

  it('sorts plain-object keys by default, keeps insertion order on request', () => {
    expect(stringifyFastjson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
    expect(stringifyFastjson({ b: 1, a: 2 }, { sortKeys: false })).toBe('{"b":1,"a":2}');
  });

  it('writes bigint, JavaDouble, Date, Buffer and Set', () => {
    expect(
      stringifyFastjson([9223372036854775807n, new JavaDouble(1.5), new JavaDouble(-2), new Date(5), Buffer.from('hi'), new Set(['x'])]),
    ).toBe('[9223372036854775807,1.5,-2.0,5,"aGk=",["x"]]');
  });

  it('browserCompatible escapes non-ASCII and quotes unsafe longs', () => {
    expect(stringifyFastjson({ s: 'é中', n: 9007199254740993n, m: 5n }, { browserCompatible: true })).toBe(
      '{"m":5,"n":"9007199254740993","s":"\\u00e9\\u4e2d"}',
    );
  });

  it('output parses back with JSON.parse when no map has non-string keys', () => {
    const v = { brokerDatas: [{ brokerAddrs: new Map([['0', 'a:1']]), brokerName: 'b' }], x: 'q"\\' };
    expect(JSON.parse(stringifyFastjson(v))).toEqual({ brokerDatas: [{ brokerAddrs: { '0': 'a:1' }, brokerName: 'b' }], x: 'q"\\' });
  });

  it('rejects circular structures', () => {
    const a: any = {};
    a.self = a;
    expect(() => stringifyFastjson(a)).toThrow(/circular/);
  });
});
