// POP on the broker over real remoting frames (what a Java 5.x client and the cluster proxy send): pop, ack,
// re-delivery through the retry topic, change invisible time, long polling, FIFO batches, and the answers to bad
// input. Times: invisible times of 1-2 s (the broker has no minimum; the proxy enforces 10 s).
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { type TestServer, startTestServer, waitFor } from '../helpers/server.js';
import { ack, bodyOf, changeInvisible, pop } from './pop-helpers.js';
import { send } from './timer-helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function start(): Promise<{ server: TestServer; client: RemotingClient }> {
  const server = await startTestServer({ reviveInterval: 200, reviveMaxSlow: 1 });
  const client = new RemotingClient(silentLogger());
  closers.push(() => server.stop(), () => client.close());
  return { server, client };
}

async function sendN(client: RemotingClient, addr: string, topic: string, n: number, props: Record<string, string> = {}, queueId = 0): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await send(client, addr, topic, { KEYS: `k${i}`, ...props }, Buffer.from(`m${i}`), queueId);
    expect(r.code).toBe(ResponseCode.SUCCESS);
  }
}

describe('POP_MESSAGE / ACK_MESSAGE', () => {
  it('pops, acks some, and re-delivers the rest through the retry topic with reconsumeTimes 1', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopT1', 4);
    const first = await pop(client, addr, 'PopG1', 'PopT1', { invisibleTime: 1500 });
    expect(first.res.code).toBe(ResponseCode.SUCCESS);
    expect(first.res.remark).toBe('FOUND');
    expect(first.messages.map(bodyOf).sort()).toEqual(['m0', 'm1', 'm2', 'm3']);
    for (const m of first.messages.filter((x) => bodyOf(x) !== 'm2')) expect((await ack(client, addr, 'PopG1', m)).code).toBe(ResponseCode.SUCCESS);

    // nothing visible now
    const empty = await pop(client, addr, 'PopG1', 'PopT1', { invisibleTime: 1500 });
    expect(empty.res.code).toBe(ResponseCode.POLLING_TIMEOUT);
    expect(empty.res.remark).toBe('NO_MESSAGE_IN_QUEUE');
    expect(empty.res.extFields).toMatchObject({ startOffsetInfo: '', msgOffsetInfo: '' });

    let again: Awaited<ReturnType<typeof pop>> | undefined;
    await waitFor(async () => {
      again = await pop(client, addr, 'PopG1', 'PopT1', { invisibleTime: 60_000 });
      return again.messages.length > 0;
    }, 20_000, 'm2 re-delivered');
    expect(again!.messages.map(bodyOf)).toEqual(['m2']);
    const m = again!.messages[0]!;
    expect(m.record.topic).toBe('PopT1');
    expect(m.record.reconsumeTimes).toBe(1);
    expect(m.realTopic).toBe('%RETRY%PopG1_PopT1');
    expect(m.props.get('POP_CK')?.split(' ')[4]).toBe('1');
    expect(m.props.get('1ST_POP_TIME')).toBe(first.res.extFields.popTime);
    expect((await ack(client, addr, 'PopG1', m)).code).toBe(ResponseCode.SUCCESS);
  }, 40_000);

  it('long polling: a waiting pop is answered when a message arrives', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopT2', 1);
    const drained = await pop(client, addr, 'PopG2', 'PopT2');
    expect(drained.messages).toHaveLength(1);
    const t0 = Date.now();
    const waiting = pop(client, addr, 'PopG2', 'PopT2', { pollTime: 10_000, bornTime: Date.now() });
    await new Promise((r) => setTimeout(r, 300));
    await sendN(client, addr, 'PopT2', 1);
    const got = await waiting;
    expect(got.messages.map(bodyOf)).toEqual(['m0']);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('change invisible time: the new handle acks; the old one is accepted but does not', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopT3', 2);
    const first = await pop(client, addr, 'PopG3', 'PopT3', { invisibleTime: 60_000 });
    expect(first.messages).toHaveLength(2);
    const [a, b] = first.messages;
    const ca = await changeInvisible(client, addr, 'PopG3', a!, 1000);
    expect(ca.code).toBe(ResponseCode.SUCCESS);
    expect(Number(ca.extFields.invisibleTime)).toBe(1000);
    const cb = await changeInvisible(client, addr, 'PopG3', b!, 1000);
    expect(cb.code).toBe(ResponseCode.SUCCESS);
    // a: ack with the new handle (as MQClientAPIImpl builds it); b: ack with the old handle
    const q = a!.extraInfo.split(' ');
    const newHandle = `${q[7]} ${ca.extFields.popTime} ${ca.extFields.invisibleTime} ${ca.extFields.reviveQid} ${q[4]} ${q[5]} ${q[6]} ${q[7]}`;
    expect((await ack(client, addr, 'PopG3', { ...a!, extraInfo: newHandle })).code).toBe(ResponseCode.SUCCESS);
    expect((await ack(client, addr, 'PopG3', b!)).code).toBe(ResponseCode.SUCCESS);
    let again: Awaited<ReturnType<typeof pop>> | undefined;
    await waitFor(async () => {
      again = await pop(client, addr, 'PopG3', 'PopT3');
      return again.messages.length > 0;
    }, 20_000, 'b re-delivered');
    expect(again!.messages.map(bodyOf)).toEqual([bodyOf(b!)]);
  }, 40_000);
});
