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

describe('FIFO pop (order=true)', () => {
  it('blocks the queue until its batch is acked; the same attempt gets the same batch; counts rise on re-delivery', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopF1', 3, {}, 0);
    const first = await pop(client, addr, 'PopGF', 'PopF1', { order: true, attemptId: 'a1', invisibleTime: 1000 });
    expect(first.messages.map(bodyOf)).toEqual(['m0', 'm1', 'm2']);
    expect(first.res.extFields.reviveQid).toBe('999');
    expect(first.res.extFields.orderCountInfo).toBe('0 0 0');
    expect(first.messages[0]!.extraInfo.split(' ')[3]).toBe('999');

    const other = await pop(client, addr, 'PopGF', 'PopF1', { order: true, attemptId: 'a2', invisibleTime: 1000 });
    expect(other.res.code).toBe(ResponseCode.POLLING_TIMEOUT);
    const same = await pop(client, addr, 'PopGF', 'PopF1', { order: true, attemptId: 'a1', invisibleTime: 1000 });
    expect(same.messages.map(bodyOf)).toEqual(['m0', 'm1', 'm2']);

    // visible again after the invisible time: handed out again, each offset counted once more
    let again: Awaited<ReturnType<typeof pop>> | undefined;
    await waitFor(async () => {
      again = await pop(client, addr, 'PopGF', 'PopF1', { order: true, attemptId: 'a3', invisibleTime: 60_000 });
      return again.messages.length > 0;
    }, 10_000, 'the batch visible again');
    expect(again!.messages.map(bodyOf)).toEqual(['m0', 'm1', 'm2']);
    expect(again!.res.extFields.orderCountInfo!.split(';').sort()).toEqual(['0 0 1', '0 qo0%0 1', '0 qo0%1 1', '0 qo0%2 1']);

    // acks in any order: the last one first (the offset stays at the batch start), then an offset outside the
    // batch (illegal), then the rest, which opens the queue
    expect((await ack(client, addr, 'PopGF', again!.messages[2]!)).code).toBe(ResponseCode.SUCCESS);
    expect(server.broker.context.consumerOffsetManager.queryOffset('PopGF', 'PopF1', 0)).toBe(0);
    const notInBatch = await sendN(client, addr, 'PopF1', 1, {}, 0).then(() => client.request(addr, createRequest(RequestCode.ACK_MESSAGE, {
      consumerGroup: 'PopGF', topic: 'PopF1', queueId: '0', offset: '3', extraInfo: again!.messages[0]!.extraInfo,
    }), 10_000));
    expect(notInBatch.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect(notInBatch.remark).toMatch(/^offset is illegal, key:PopF1@PopGF@0, old:0, commit:3, next:-1/);
    for (const m of again!.messages.slice(0, 2)) expect((await ack(client, addr, 'PopGF', m)).code).toBe(ResponseCode.SUCCESS);
    expect(server.broker.context.consumerOffsetManager.queryOffset('PopGF', 'PopF1', 0)).toBe(3);
    const next = await pop(client, addr, 'PopGF', 'PopF1', { order: true, attemptId: 'a4' });
    expect(next.messages.map(bodyOf)).toEqual(['m0']); // the message sent above (its own body m0)
    expect(next.messages[0]!.record.queueOffset).toBe(3);
  }, 30_000);
});

describe('bad input (answers as the 5.3.3 broker gives them)', () => {
  it('ack, change invisible time and pop refusals', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopB1', 1, {}, 0);
    const req = (code: number, fields: Record<string, string>, body?: Buffer) => client.request(addr, createRequest(code, fields, body), 10_000);
    const ackFields = { consumerGroup: 'PopGB', topic: 'PopB1', queueId: '0', offset: '0', extraInfo: '0 1700000000000 1000 0 0 broker-a 0 0' };

    const garbage = await req(RequestCode.ACK_MESSAGE, { ...ackFields, extraInfo: 'garbage' });
    expect([garbage.code, garbage.remark]).toEqual([ResponseCode.SYSTEM_ERROR, 'java.lang.IllegalArgumentException: getBrokerName fail, extraInfoStrs length 1']);
    const beyond = await req(RequestCode.ACK_MESSAGE, { ...ackFields, offset: '5' });
    expect([beyond.code, beyond.remark]).toEqual([ResponseCode.NO_MESSAGE, 'offset is illegal, key:PopB1@0, commit:5, store:0~1']);
    const noTopic = await req(RequestCode.ACK_MESSAGE, { ...ackFields, topic: 'PopNoSuchTopic' });
    expect(noTopic.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(noTopic.remark).toMatch(/^topic\[PopNoSuchTopic\] not exist, apply first please!/);
    const badQueue = await req(RequestCode.ACK_MESSAGE, { ...ackFields, queueId: '64' });
    expect(badQueue.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect(badQueue.remark).toMatch(/^queueId\[64\] is illegal, topic:\[PopB1\] topicConfig.readQueueNums:\[\d+\] consumer:\[\/127.0.0.1:\d+\]$/);
    // the broker does not check expiry (the proxy does): an expired handle is acked
    expect((await req(RequestCode.ACK_MESSAGE, ackFields)).code).toBe(ResponseCode.SUCCESS);

    const cit = await req(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, { ...ackFields, offset: '1', invisibleTime: '1000' });
    expect(cit.code).toBe(ResponseCode.NO_MESSAGE);
    expect(cit.extFields).toMatchObject({ popTime: '0', invisibleTime: '0', reviveQid: '0' });
    const emptyBatch = await req(RequestCode.BATCH_ACK_MESSAGE, {});
    expect(emptyBatch.code).toBe(ResponseCode.NO_MESSAGE);

    const tooMany = await pop(client, addr, 'PopGB', 'PopB1', { maxMsgNums: 33 });
    expect([tooMany.res.code, tooMany.res.remark]).toEqual([ResponseCode.INVALID_PARAMETER, "the broker[127.0.0.1] pop message's num is greater than 32"]);
    expect(tooMany.res.extFields).toMatchObject({ popTime: '0', invisibleTime: '0', reviveQid: '0', restNum: '0' });
    const noSuch = await pop(client, addr, 'PopGB', 'PopNoSuchTopic');
    expect(noSuch.res.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    const badSql = await pop(client, addr, 'PopGB', 'PopB1', { expType: 'SQL92', exp: 'a >' });
    expect([badSql.res.code, badSql.res.remark]).toEqual([ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed"]);
    const late = await pop(client, addr, 'PopGB', 'PopB1', { bornTime: Date.now() - 10_000, pollTime: 1000 });
    expect([late.res.code, late.res.remark]).toEqual([ResponseCode.POLLING_TIMEOUT, 'the broker[127.0.0.1] pop message is timeout too much']);
    const queue = await pop(client, addr, 'PopGB', 'PopB1', { queueId: 99 });
    expect(queue.res.code).toBe(ResponseCode.INVALID_PARAMETER);
  });
});

describe('assignment, request modes, notification, polling info', () => {
  it('SET_MESSAGE_REQUEST_MODE / QUERY_ASSIGNMENT / GET_ALL_MESSAGE_REQUEST_MODE', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopA1', 1);
    await server.broker.context.registerBrokerAll();
    const req = (code: number, body: unknown) => client.request(addr, createRequest(code, {}, Buffer.from(JSON.stringify(body))), 10_000);
    const mode = (topic: string, consumerGroup: string) => ({ topic, consumerGroup, mode: 'POP', popShareQueueNum: 0 });

    const retry = await req(RequestCode.SET_MESSAGE_REQUEST_MODE, mode('%RETRY%PopGA', 'PopGA'));
    expect([retry.code, retry.remark]).toEqual([ResponseCode.NO_PERMISSION, 'retry topic is not allowed to set mode']);
    const unknown = await req(RequestCode.SET_MESSAGE_REQUEST_MODE, mode('PopNoTopic', 'PopGA'));
    expect([unknown.code, unknown.remark]).toEqual([ResponseCode.TOPIC_NOT_EXIST, 'topic[PopNoTopic] not exist']);
    expect((await req(RequestCode.SET_MESSAGE_REQUEST_MODE, mode('PopA1', 'PopGA'))).code).toBe(ResponseCode.SUCCESS);
    const all = await client.request(addr, createRequest(RequestCode.GET_ALL_MESSAGE_REQUEST_MODE), 10_000);
    expect(JSON.parse(all.body!.toString())).toEqual({
      messageRequestModeMap: { PopA1: { PopGA: { consumerGroup: 'PopGA', mode: 'POP', popShareQueueNum: 0, topic: 'PopA1' } } },
    });

    // a consumer of each group, then the assignments: POP → queue -1; PULL (the default) → the AVG share
    for (const [group, clientId] of [['PopGA', 'c1'], ['PopGB2', 'c2']]) {
      const hb = await req(RequestCode.HEART_BEAT, {
        clientID: clientId, producerDataSet: [], consumerDataSet: [{
          groupName: group, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
          unitMode: false, subscriptionDataSet: [{ topic: 'PopA1', subString: '*', expressionType: 'TAG', tagsSet: [], codeSet: [], subVersion: 0, classFilterMode: false }],
        }],
      });
      expect(hb.code).toBe(ResponseCode.SUCCESS);
    }
    const q = (topic: string, group: string, clientId: string) => req(RequestCode.QUERY_ASSIGNMENT, {
      topic, consumerGroup: group, clientId, strategyName: 'AVG', messageModel: 'CLUSTERING',
    }).then((r) => JSON.parse(r.body!.toString()) as { messageQueueAssignments?: unknown[] });
    expect(await q('PopA1', 'PopGA', 'c1')).toEqual({
      messageQueueAssignments: [{ messageQueue: { brokerName: 'broker-a', queueId: -1, topic: 'PopA1' }, mode: 'POP' }],
    });
    const pull = await q('PopA1', 'PopGB2', 'c2');
    expect(pull.messageQueueAssignments!.length).toBe(server.broker.context.topicConfigManager.get('PopA1')!.readQueueNums);
    expect(await q('PopNoTopic', 'PopGA', 'c1')).toEqual({});
  });

  it('NOTIFICATION says whether there is something to pop; POLLING_INFO counts waiting pops', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopN1', 1);
    const notify = (pollTime: number) => client.request(addr, createRequest(RequestCode.NOTIFICATION, {
      consumerGroup: 'PopGN', topic: 'PopN1', queueId: '-1', pollTime: String(pollTime), bornTime: String(Date.now()),
    }), 10_000);
    expect((await notify(0)).extFields).toMatchObject({ hasMsg: 'true', pollingFull: 'false' });
    expect((await pop(client, addr, 'PopGN', 'PopN1')).messages).toHaveLength(1);
    expect((await notify(0)).extFields).toMatchObject({ hasMsg: 'false' });

    const waiting = pop(client, addr, 'PopGN', 'PopN1', { pollTime: 10_000, bornTime: Date.now() });
    const info = () => client.request(addr, createRequest(RequestCode.POLLING_INFO, { consumerGroup: 'PopGN', topic: 'PopN1', queueId: '-1' }), 10_000);
    await waitFor(async () => (await info()).extFields.pollingNum === '1', 5000, 'one pop waiting');
    const notified = notify(10_000);
    await new Promise((r) => setTimeout(r, 200));
    await sendN(client, addr, 'PopN1', 1);
    expect((await notified).extFields).toMatchObject({ hasMsg: 'true' });
    expect((await waiting).messages).toHaveLength(1);
    expect((await info()).extFields.pollingNum).toBe('0');
  });
});

describe('PopService API (what the gRPC endpoint calls)', () => {
  it('pop with handles, change invisible time by handle, forward to the dead-letter queue', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    await sendN(client, addr, 'PopS1', 2);
    const { decodeReceiptHandle } = await import('../../src/broker/pop/extra-info.js');
    const { realTopicOf } = await import('../../src/broker/pop/pop-keys.js');
    const svc = server.broker.pop;
    const popped = await svc.pop({
      consumerGroup: 'PopGS', topic: 'PopS1', queueId: -1, maxMsgNums: 32, invisibleTime: 60_000, pollTime: 0, bornTime: Date.now(),
      initMode: 0, order: false, peer: '127.0.0.1:1',
    });
    if ('code' in popped) throw new Error(popped.remark);
    expect(popped.status).toBe('FOUND');
    expect(popped.messages).toHaveLength(2);
    const [a, b] = popped.messages;
    // 9-field handles: the commit-log offset is the record's own
    const ha = decodeReceiptHandle(a!.receiptHandle);
    expect(ha.commitLogOffset).toBe(a!.commitLogOffset);
    expect(ha.queueOffset).toBe(a!.queueOffset);

    const changed = await svc.changeInvisibleTime({
      consumerGroup: 'PopGS', topic: realTopicOf('PopS1', 'PopGS', ha.retryFlag)!, queueId: ha.queueId, offset: ha.queueOffset,
      extraInfo: a!.receiptHandle, invisibleTime: 1000, peer: '127.0.0.1:1',
    });
    if ('code' in changed) throw new Error(changed.remark);
    const hn = decodeReceiptHandle(changed.receiptHandle);
    expect([hn.startOffset, hn.invisibleTime, hn.commitLogOffset, hn.queueOffset]).toEqual([ha.queueOffset, 1000, ha.commitLogOffset, ha.queueOffset]);

    const hb = decodeReceiptHandle(b!.receiptHandle);
    expect(await svc.forwardToDeadLetterQueue({ consumerGroup: 'PopGS', topic: 'PopS1', handle: hb, peer: '127.0.0.1:1' })).toBeUndefined();
    expect(await svc.forwardToDeadLetterQueue({ consumerGroup: 'PopGS', topic: 'PopS1', handle: { ...hb, commitLogOffset: -1 }, peer: '' }))
      .toMatchObject({ remark: 'commit log offset is empty' });
    await waitFor(() => server.broker.context.store.getMaxOffsetInQueue('%DLQ%PopGS', 0) === 1, 5000, 'the dead letter');

    // a comes back after its new 1 s; b (dead-lettered and acked) does not
    let again: Awaited<ReturnType<typeof pop>> | undefined;
    await waitFor(async () => {
      again = await pop(client, addr, 'PopGS', 'PopS1');
      return again.messages.length > 0;
    }, 20_000, 'a re-delivered');
    const { decodeRecord } = await import('../../src/store/record.js');
    expect(again!.messages.map(bodyOf)).toEqual([decodeRecord(a!.record).body.toString()]);
    expect(again!.messages[0]!.record.reconsumeTimes).toBe(1);
  }, 40_000);
});
