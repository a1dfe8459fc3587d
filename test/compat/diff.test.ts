// compat/diff.mjs: how two differential-probe dumps (official vs ours) are normalised and compared.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without type declarations
import { compareDumps, differences, normalise } from '../../compat/diff.mjs';

const dump = (over: Record<string, unknown> = {}) => ({
  route: { a: { brokerDatas: [{ brokerAddrs: { '0': '127.0.0.1:26911' }, brokerName: 'broker-a' }], queueDatas: [{ perm: 6, readQueueNums: 4 }] } },
  offsets: { queues: { 'a/0': { max: 3, min: 0, 'searchOffset(now+1h)': 3 } } },
  topicStatus: { b: { offsetTable: { 'T/broker-a/0': { lastUpdateTimestamp: 1796030342107, maxOffset: 0, minOffset: 0 } } } },
  consumerProgress: { g: { consumeTps: 1.5, offsetTable: { 'T/broker-a/0': { brokerOffset: 3, consumerOffset: 2, lastTimestamp: 0, pullOffset: 3 } } } },
  ...over,
});

describe('compat/diff.mjs', () => {
  it('normalises ports, timestamps (0 kept), consumeTps and topicPutTps', () => {
    expect(normalise({ addr: '127.0.0.1:1234', lastTimestamp: 17, lastUpdateTimestamp: 0, maxOffset: 17, consumeTps: 2.0, topicPutTps: 2.4 }))
      .toEqual({ addr: '127.0.0.1:<port>', lastTimestamp: '<time>', lastUpdateTimestamp: 0, maxOffset: 17 });
  });

  it('passes identical dumps from servers on other ports at other times', () => {
    const ours = dump();
    ours.route.a.brokerDatas[0].brokerAddrs['0'] = '127.0.0.1:25911';
    ours.topicStatus.b.offsetTable['T/broker-a/0'].lastUpdateTimestamp = 1796030354527;
    const r = compareDumps(dump(), ours, { officialVersion: '5.3.3' });
    expect(Object.values(r.groups).map((g: any) => g.status)).toEqual(['PASS', 'PASS', 'PASS', 'PASS']);
  });

  it('reports value differences, missing fields and extra queues with their paths', () => {
    const ours = dump();
    ours.consumerProgress.g.offsetTable['T/broker-a/0'].pullOffset = 2;
    (ours.topicStatus.b.offsetTable as Record<string, unknown>)['T/broker-a/1'] = { maxOffset: 0, minOffset: 0 };
    const r = compareDumps(dump(), ours, { officialVersion: '5.3.3' });
    expect(r.groups.consumerProgress.status).toBe('FAIL');
    expect(r.groups.consumerProgress.lines).toEqual(['consumerProgress.g.offsetTable."T/broker-a/0".pullOffset: official 3, ours 2']);
    expect(r.groups.topicStatus.lines[0]).toMatch(/^topicStatus\.b\.offsetTable\."T\/broker-a\/1": official \(absent\), ours /);
    expect(r.groups.route.status).toBe('PASS');
    expect(differences([1, 2], [1])).toHaveLength(1);
  });

  it('ignores the documented 4.9.x/5.x differences only against a 4.x broker, and lists them', () => {
    const official = dump();
    official.offsets.queues['a/0']['searchOffset(now+1h)'] = 2;
    official.consumerProgress.g.offsetTable['T/broker-a/0'].pullOffset = 0;
    const ours = dump();
    (ours.topicStatus.b.offsetTable as Record<string, unknown>)['T/broker-a/4'] = { maxOffset: 0, minOffset: 0 };
    const v4 = compareDumps(official, ours, { officialVersion: '4.9.8' });
    expect(Object.values(v4.groups).map((g: any) => g.status)).toEqual(['PASS', 'PASS', 'PASS', 'PASS']);
    expect(v4.groups.offsets.ignored).toHaveLength(1);
    expect(v4.groups.topicStatus.ignored).toHaveLength(1);
    const v5 = compareDumps(official, ours, { officialVersion: '5.3.3' });
    expect(Object.values(v5.groups).map((g: any) => g.status)).toEqual(['PASS', 'FAIL', 'FAIL', 'FAIL']);
    // a queue both list must still agree against 4.x
    ours.topicStatus.b.offsetTable['T/broker-a/0'].maxOffset = 1;
    expect(compareDumps(official, ours, { officialVersion: '4.9.8' }).groups.topicStatus.status).toBe('FAIL');
  });
});
