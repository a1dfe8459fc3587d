// Cold-data flow control through the wire (5.x): UPDATE / REMOVE / GET_COLD_DATA_FLOW_CTR (2001-2003) and the pull
// path (Java PullMessageProcessor): a push consumer's group past its threshold gets SYSTEM_BUSY for pulls of cold
// data, a pull consumer's pull is held 3 s and served one message. SET_COMMITLOG_READ_MODE (2004) with Java's codes.
import { afterEach, describe, expect, it } from 'vitest';
import { COLD_HOLD_MS } from '../../src/broker/coldctr/cold-data-flow-control.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { startTestServer } from '../helpers/server.js';
import { javaHeartbeat } from './helpers.js';
import { send } from './timer-helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const BUSY_REMARK = 'This consumer group is reading cold data. It has been flow control';

describe('cold-data flow control', () => {
  it('slows the cold pulls of a group past its threshold: push consumers refused, pull consumers held', async () => {
    const server = await startTestServer();
    const client = new RemotingClient(silentLogger());
    closers.push(() => server.stop(), async () => client.close());
    const addr = () => server.brokerAddr;
    const call = (code: number, ext: Record<string, string> = {}, body?: Buffer) =>
      client.request(addr(), createRequest(code, ext, body), 20_000);
    for (let i = 0; i < 64; i++) expect((await send(client, addr(), 'CD', { KEYS: `k${i}` }, Buffer.alloc(1024, i))).code).toBe(0);
    // hot ratio 0: everything behind the log's end is cold
    const conf = await call(RequestCode.UPDATE_BROKER_CONFIG, {}, Buffer.from('coldDataFlowControlEnable=true\naccessMessageInMemoryHotRatio=0\n'));
    expect(conf.code).toBe(ResponseCode.SUCCESS);
    // P: a push consumer (CONSUME_PASSIVELY), A: a pull consumer (CONSUME_ACTIVELY)
    expect((await call(RequestCode.HEART_BEAT, {}, javaHeartbeat('cd@1', 'P', ['CD']))).code).toBe(0);
    const active = javaHeartbeat('cd@2', 'A', ['CD']).toString().replace('CONSUME_PASSIVELY', 'CONSUME_ACTIVELY');
    expect((await call(RequestCode.HEART_BEAT, {}, Buffer.from(active))).code).toBe(0);
    const threshold = await call(RequestCode.UPDATE_COLD_DATA_FLOW_CTR_CONFIG, {}, Buffer.from('P=1000\nA=1000\nX=lots\n'));
    expect(threshold.code).toBe(ResponseCode.SUCCESS);

    const pull = (group: string, offset: number, max = 8) => call(RequestCode.PULL_MESSAGE, {
      consumerGroup: group, topic: 'CD', queueId: '0', queueOffset: String(offset), maxMsgNums: String(max), sysFlag: '0',
      commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
    });
    const found = (r: RemotingCommand) => (r.code === ResponseCode.SUCCESS ? (r.body?.length ?? 0) : -1);

    // A pull of cold data takes the group past 1,000 bytes; the next one is refused. The counters are reset every
    // 5 s, so a reset between the two lets it through: try again then.
    let refused: RemotingCommand | undefined;
    for (let attempt = 0; attempt < 5 && !refused; attempt++) {
      expect(found(await pull('P', 0))).toBeGreaterThan(8 * 1024);
      const next = await pull('P', 8);
      if (next.code !== ResponseCode.SUCCESS) refused = next;
    }
    expect([refused?.code, refused?.remark]).toEqual([ResponseCode.SYSTEM_BUSY, BUSY_REMARK]);

    const info = JSON.parse((await call(RequestCode.GET_COLD_DATA_FLOW_CTR_INFO)).body!.toString());
    expect(info.configTable).toEqual({ P: 1000, A: 1000 });
    expect(Object.keys(info.runtimeTable.P).sort()).toEqual(['coldAcc', 'createTimeMills', 'lastColdReadTimeMills']);
    expect([info.cgColdReadThreshold, info.globalColdReadThreshold]).toEqual([3 * 1024 * 1024, 100 * 1024 * 1024]);

    // The pull consumer: held COLD_HOLD_MS, then one message.
    let held: { ms: number; res: RemotingCommand } | undefined;
    for (let attempt = 0; attempt < 5 && !held; attempt++) {
      expect(found(await pull('A', 0))).toBeGreaterThan(8 * 1024);
      const t0 = Date.now();
      const res = await pull('A', 8);
      const ms = Date.now() - t0;
      if (ms >= COLD_HOLD_MS - 50) held = { ms, res };
    }
    expect(held?.res.code).toBe(ResponseCode.SUCCESS);
    expect(held?.res.extFields.nextBeginOffset).toBe('9');

    // Without its own threshold the group has cgColdReadThreshold (3 MiB): served again.
    expect((await call(RequestCode.REMOVE_COLD_DATA_FLOW_CTR_CONFIG, {}, Buffer.from('P'))).code).toBe(ResponseCode.SUCCESS);
    expect(found(await pull('P', 8))).toBeGreaterThan(8 * 1024);
    const after = JSON.parse((await call(RequestCode.GET_COLD_DATA_FLOW_CTR_INFO)).body!.toString());
    expect(after.configTable).toEqual({ A: 1000 });

    // Off again: nobody is slowed.
    await call(RequestCode.UPDATE_COLD_DATA_FLOW_CTR_CONFIG, {}, Buffer.from('P=1\n'));
    expect((await call(RequestCode.UPDATE_BROKER_CONFIG, {}, Buffer.from('coldDataFlowControlEnable=false\n'))).code).toBe(0);
    for (let i = 0; i < 3; i++) expect(found(await pull('P', 8 * i))).toBeGreaterThan(8 * 1024);
  });

  it('sets the commit log read-ahead mode with Java\'s codes and remarks', async () => {
    const server = await startTestServer();
    const client = new RemotingClient(silentLogger());
    closers.push(() => server.stop(), async () => client.close());
    const setMode = (ext: Record<string, string>) =>
      client.request(server.brokerAddr, createRequest(RequestCode.SET_COMMITLOG_READ_MODE, ext), 10_000);
    const readAhead = async () => {
      const res = await client.request(server.brokerAddr, createRequest(RequestCode.GET_BROKER_CONFIG, {}), 10_000);
      return /^dataReadAheadEnable=(.*)$/m.exec(res.body!.toString())?.[1];
    };
    expect(await readAhead()).toBe('true');
    const random = await setMode({ READ_AHEAD_MODE: '1' });
    expect([random.code, random.remark]).toEqual([ResponseCode.SUCCESS, 'set commitlog readahead mode success, mode: 1']);
    expect(await readAhead()).toBe('false');
    const bad = await setMode({ READ_AHEAD_MODE: '2' });
    expect([bad.code, bad.remark]).toEqual([ResponseCode.INVALID_PARAMETER, 'set commitlog readahead mode param value error']);
    expect((await setMode({ READ_AHEAD_MODE: 'x' })).code).toBe(ResponseCode.SYSTEM_ERROR);
    expect((await setMode({})).code).toBe(ResponseCode.SYSTEM_ERROR);
    expect((await setMode({ READ_AHEAD_MODE: '0' })).code).toBe(ResponseCode.SUCCESS);
    expect(await readAhead()).toBe('true');
  });
});
