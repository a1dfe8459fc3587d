import fs from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeOffsetMessageId } from '../../src/broker/message-id.js';
import { TransactionCheckService } from '../../src/broker/transaction/transaction-check-service.js';
import { parseOpBody } from '../../src/broker/transaction/transactional-message-util.js';
import type { BrokerConfig } from '../../src/common/config.js';
import { encodeProperties, parseProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { Connection, DEFAULT_CONNECTION_LIMITS } from '../../src/remoting/connection.js';
import { type DecodedRecord, decodeRecord } from '../../src/store/record.js';
import { type TestServer, startTestServer, waitFor } from '../helpers/server.js';
import { javaHeartbeat, logger } from './helpers.js';

const HALF = 'RMQ_SYS_TRANS_HALF_TOPIC';
const OP = 'RMQ_SYS_TRANS_OP_HALF_TOPIC';
const PGROUP = 'pg_tx';
const COMMIT = 8;
const ROLLBACK = 12;

/** A raw client connection that also records requests the broker sends to it (CHECK_TRANSACTION_STATE). */
interface Peer {
  conn: Connection;
  incoming: RemotingCommand[];
  request(code: number, ext: Record<string, string>, body?: Buffer): Promise<RemotingCommand>;
  oneway(code: number, ext: Record<string, string>, body?: Buffer): void;
  waitIncoming(n: number, timeoutMs?: number): Promise<void>;
}

async function connect(addr: string): Promise<Peer> {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  const socket = net.connect({ host, port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const incoming: RemotingCommand[] = [];
  const conn = new Connection(
    socket,
    (c, cmd) => {
      incoming.push(cmd);
      c.requestDone();
    },
    logger,
    { ...DEFAULT_CONNECTION_LIMITS, idleTimeoutMs: 0 },
  );
  closers.push(() => conn.close());
  return {
    conn,
    incoming,
    request: (code, ext, body) => conn.request(createRequest(code, ext, body), 5000),
    oneway: (code, ext, body) => void conn.sendOneway(createRequest(code, ext, body)),
    waitIncoming: (n, timeoutMs = 10_000) => waitFor(() => incoming.length >= n, timeoutMs, `${n} broker requests`),
  };
}

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function start(overrides: Partial<BrokerConfig> = {}): Promise<TestServer> {
  // The broker's own check timer stays out of the way unless a test asks for it; tests run passes themselves.
  const server = await startTestServer({ transactionCheckInterval: 3_600_000, ...overrides });
  closers.push(() => server.stop());
  return server;
}

function checkService(server: TestServer): TransactionCheckService {
  const ctx = server.broker.context;
  return new TransactionCheckService({
    tx: ctx.transactionalMessageService,
    producerManager: ctx.producerManager,
    topicConfigManager: ctx.topicConfigManager,
    brokerName: () => ctx.config.brokerName,
    logger,
  });
}

let uniqSeq = 0;
interface HalfSent {
  res: RemotingCommand;
  uniqKey: string;
  commitLogOffset: number;
  queueOffset: number;
}

/** SEND_MESSAGE_V2 as the Java client sends a transactional half message. */
async function sendHalf(peer: Peer, topic: string, key: string, extraProps: Record<string, string> = {}): Promise<HalfSent> {
  const uniqKey = `7F000001${String(process.pid % 10000).padStart(4, '0')}${String(++uniqSeq).padStart(20, '0')}`;
  const props = encodeProperties({ KEYS: key, TAGS: 'TagA', WAIT: 'true', TRAN_MSG: 'true', PGROUP, UNIQ_KEY: uniqKey, ...extraProps });
  const res = await peer.request(
    RequestCode.SEND_MESSAGE_V2,
    { a: PGROUP, b: topic, c: 'TBW102', d: '4', e: '1', f: '4', g: String(Date.now()), h: '0', i: props, j: '0', k: 'false', l: '16' },
    Buffer.from(`body of ${key}`),
  );
  const decoded = res.code === 0 ? decodeOffsetMessageId(res.extFields.msgId) : undefined;
  return { res, uniqKey, commitLogOffset: decoded?.commitLogOffset ?? -1, queueOffset: Number(res.extFields.queueOffset ?? -1) };
}

function endHeader(h: { commitLogOffset: number; queueOffset: number; uniqKey: string }, type: number, fromCheck = false, group = PGROUP) {
  return {
    producerGroup: group,
    tranStateTableOffset: String(h.queueOffset),
    commitLogOffset: String(h.commitLogOffset),
    commitOrRollback: String(type),
    fromTransactionCheck: String(fromCheck),
    msgId: h.uniqKey,
    transactionId: h.uniqKey,
  };
}

async function records(server: TestServer, topic: string, queueId: number): Promise<DecodedRecord[]> {
  const res = await server.broker.context.store.getMessage(topic, queueId, 0, 1000, 16 * 1024 * 1024);
  return res.records.map((r) => decodeRecord(r));
}

function queueSize(server: TestServer, topic: string, queueId: number): number {
  return server.broker.context.store.getMaxOffsetInQueue(topic, queueId);
}

async function registerProducer(peer: Peer, clientId = 'tx-client@1'): Promise<void> {
  const res = await peer.request(RequestCode.HEART_BEAT, {}, javaHeartbeat(clientId, '', [], [PGROUP]));
  expect(res.code).toBe(ResponseCode.SUCCESS);
}

/** Lets the clock move past the given store time, so a later pass does not treat the record as "fresh". */
async function after(timestampMs: number, marginMs = 0): Promise<void> {
  await waitFor(() => Date.now() > timestampMs + marginMs, 5000, 'clock to move on');
}

describe('transactional messages: half messages and END_TRANSACTION', () => {
  it('parks a half message on the half topic and answers like a normal send with a transactionId', async () => {
    const server = await start();
    const peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicA', 'k1');
    expect(h.res.code).toBe(ResponseCode.SUCCESS);
    expect(h.res.extFields.transactionId).toBe(h.uniqKey);
    expect(h.res.extFields.queueId).toBe('1');
    expect(h.queueOffset).toBe(0);

    const half = await server.broker.context.transactionalMessageService.lookHalfMessage(h.commitLogOffset);
    expect(half?.topic).toBe(HALF);
    expect(half?.queueId).toBe(0);
    expect((half?.sysFlag ?? -1) & 0xc).toBe(0); // reset to NOT, so it is queued on the half topic
    const props = parseProperties(half?.propertiesString);
    expect(props.get('REAL_TOPIC')).toBe('TxTopicA');
    expect(props.get('REAL_QID')).toBe('1');
    expect(props.get('__transactionId__')).toBe(h.uniqKey);
    expect(props.get('TRAN_MSG')).toBe('true');
    expect(queueSize(server, HALF, 0)).toBe(1);
    expect(queueSize(server, 'TxTopicA', 1)).toBe(0);
    expect(server.broker.context.topicConfigManager.get(HALF)?.readQueueNums).toBe(1);
  });

  it('refuses transactional sends with rejectTransactionMessage=true', async () => {
    const server = await start({ rejectTransactionMessage: true });
    const peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicR', 'k1');
    expect(h.res.code).toBe(ResponseCode.NO_PERMISSION);
    expect(h.res.remark).toContain('transaction message is forbidden');
  });

  it('COMMIT delivers once to the real queue and writes an op message; a second END changes nothing', async () => {
    const server = await start();
    const peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicC', 'k1');
    const res = await peer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT));
    expect(res.code).toBe(ResponseCode.SUCCESS);

    const delivered = await records(server, 'TxTopicC', 1);
    expect(delivered).toHaveLength(1);
    const m = delivered[0];
    expect(m.sysFlag & 0xc).toBe(COMMIT);
    expect(m.preparedTransactionOffset).toBe(h.commitLogOffset);
    expect(m.body.toString()).toBe('body of k1');
    const props = parseProperties(m.propertiesString);
    expect(props.get('UNIQ_KEY')).toBe(h.uniqKey);
    expect(props.get('KEYS')).toBe('k1');
    // Java keeps the half message's property string: REAL_* and TRAN_MSG stay on the committed message.
    expect(props.get('REAL_TOPIC')).toBe('TxTopicC');
    expect(props.get('TRAN_MSG')).toBe('true');

    const ops = await records(server, OP, 0);
    expect(ops).toHaveLength(1);
    expect(ops[0].body.toString()).toBe('0,');
    expect(parseProperties(ops[0].propertiesString).get('TAGS')).toBe('d');

    const again = await peer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT));
    expect(again.code).toBe(ResponseCode.SUCCESS);
    const rollbackAfter = await peer.request(RequestCode.END_TRANSACTION, endHeader(h, ROLLBACK));
    expect(rollbackAfter.code).toBe(ResponseCode.SUCCESS);
    expect(queueSize(server, 'TxTopicC', 1)).toBe(1);
    expect(queueSize(server, OP, 0)).toBe(1);
  });

  it('ROLLBACK writes only the op message', async () => {
    const server = await start();
    const peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicRb', 'k1');
    const res = await peer.request(RequestCode.END_TRANSACTION, endHeader(h, ROLLBACK));
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(queueSize(server, 'TxTopicRb', 1)).toBe(0);
    expect(queueSize(server, OP, 0)).toBe(1);
    // a late COMMIT of a rolled-back transaction is not delivered either
    await peer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT));
    expect(queueSize(server, 'TxTopicRb', 1)).toBe(0);
  });

  it('handles oneway END_TRANSACTION without answering, and ignores state UNKNOW', async () => {
    const server = await start();
    const peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicOw', 'k1');
    const unknown = await peer.request(RequestCode.END_TRANSACTION, endHeader(h, 0));
    expect(unknown.code).toBe(ResponseCode.SUCCESS);
    expect(queueSize(server, OP, 0)).toBe(0);
    peer.oneway(RequestCode.END_TRANSACTION, endHeader(h, COMMIT));
    await waitFor(() => queueSize(server, 'TxTopicOw', 1) === 1 && queueSize(server, OP, 0) === 1, 5000, 'oneway commit');
    // the oneway request was not answered: only responses to our two-way requests arrived, none unsolicited
    expect(peer.incoming).toHaveLength(0);
  });

  it('refuses END_TRANSACTION that does not match the half message', async () => {
    const server = await start();
    const peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicBad', 'k1');
    const wrongGroup = await peer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT, false, 'other_group'));
    expect(wrongGroup.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(wrongGroup.remark).toContain('producer group wrong');
    const wrongQueueOffset = await peer.request(RequestCode.END_TRANSACTION, endHeader({ ...h, queueOffset: 7 }, COMMIT));
    expect(wrongQueueOffset.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(wrongQueueOffset.remark).toContain('transaction state table offset wrong');
    const noRecord = await peer.request(RequestCode.END_TRANSACTION, endHeader({ ...h, commitLogOffset: h.commitLogOffset + 5 }, COMMIT));
    expect(noRecord.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(noRecord.remark).toContain('Find prepared transaction message failed');
    const badType = await peer.request(RequestCode.END_TRANSACTION, endHeader(h, 3));
    expect(badType.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(queueSize(server, 'TxTopicBad', 1)).toBe(0);
    expect(queueSize(server, OP, 0)).toBe(0);

    // an ordinary message is not a half message, even with the right offsets
    const plain = await peer.request(
      RequestCode.SEND_MESSAGE_V2,
      { a: PGROUP, b: 'TxTopicBad', c: 'TBW102', d: '4', e: '0', f: '0', g: String(Date.now()), h: '0', i: encodeProperties({ PGROUP }), j: '0', k: 'false' },
      Buffer.from('plain'),
    );
    const plainOffset = decodeOffsetMessageId(plain.extFields.msgId)?.commitLogOffset ?? -1;
    const notHalf = await peer.request(RequestCode.END_TRANSACTION, endHeader({ commitLogOffset: plainOffset, queueOffset: 0, uniqKey: 'x' }, COMMIT));
    expect(notHalf.code).toBe(ResponseCode.SYSTEM_ERROR);
  });

  it('a committed message with a delay level goes through the delay hook', async () => {
    const server = await start();
    const peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicDelay', 'k1', { DELAY: '3' });
    expect((await peer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT))).code).toBe(ResponseCode.SUCCESS);
    expect(queueSize(server, 'TxTopicDelay', 1)).toBe(0);
    const parked = await records(server, 'SCHEDULE_TOPIC_XXXX', 2);
    expect(parked).toHaveLength(1);
    const props = parseProperties(parked[0].propertiesString);
    expect(props.get('REAL_TOPIC')).toBe('TxTopicDelay');
    expect(props.get('REAL_QID')).toBe('1');
    expect(props.has('TRAN_MSG')).toBe(false);
    expect(parked[0].sysFlag & 0xc).toBe(COMMIT);
  });

  it('remembers finished transactions across a restart', async () => {
    const server = await start();
    let peer = await connect(server.brokerAddr);
    const h = await sendHalf(peer, 'TxTopicRs', 'k1');
    expect((await peer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT))).code).toBe(ResponseCode.SUCCESS);
    peer.conn.close();
    await server.restartBroker();
    peer = await connect(server.brokerAddr);
    expect((await peer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT))).code).toBe(ResponseCode.SUCCESS);
    expect(queueSize(server, 'TxTopicRs', 1)).toBe(1);
  });
});

describe('transactional messages: check-back', () => {
  it('checks an unfinished half message with a copy, and the answer quoting the copy commits it', async () => {
    const server = await start({ transactionTimeOut: 1000 });
    const producer = await connect(server.brokerAddr);
    await registerProducer(producer);
    const committed = await sendHalf(producer, 'TxTopicChk', 'committed');
    const rolledBack = await sendHalf(producer, 'TxTopicChk', 'rolled-back');
    const pending = await sendHalf(producer, 'TxTopicChk', 'pending');
    await producer.request(RequestCode.END_TRANSACTION, endHeader(committed, COMMIT));
    await producer.request(RequestCode.END_TRANSACTION, endHeader(rolledBack, ROLLBACK));
    const checker = checkService(server);

    // the finished ones are passed over; the pending one is too young, so the pass stops there
    const young = await checker.checkOnce();
    expect(young).toEqual({ checked: 0, discarded: 0, skippedDone: 2 });
    expect(producer.incoming).toHaveLength(0);
    const sys = server.broker.context.consumerOffsetManager;
    expect(sys.queryOffset('CID_RMQ_SYS_TRANS', HALF, 0)).toBe(2);
    expect(sys.queryOffset('CID_RMQ_SYS_TRANS', OP, 0)).toBe(2);

    await after(Date.now(), 1000);
    const pass = await checker.checkOnce();
    expect(pass).toEqual({ checked: 1, discarded: 0, skippedDone: 0 });
    await producer.waitIncoming(1);
    const check = producer.incoming[0];
    expect(check.code).toBe(RequestCode.CHECK_TRANSACTION_STATE);
    expect(check.flag & 2).toBe(2); // oneway
    expect(check.extFields.msgId).toBe(pending.uniqKey);
    expect(check.extFields.transactionId).toBe(pending.uniqKey);
    expect(check.extFields.tranStateTableOffset).toBe('3'); // the copy, appended after the three halves
    const copyOffset = Number(check.extFields.commitLogOffset);
    expect(decodeOffsetMessageId(check.extFields.offsetMsgId)?.commitLogOffset).toBe(copyOffset);
    const body = decodeRecord(check.body as Buffer);
    expect(body.topic).toBe('TxTopicChk');
    expect(body.queueId).toBe(1);
    expect(body.queueOffset).toBe(3);
    expect(body.commitLogOffset).toBe(copyOffset);
    expect(body.body.toString()).toBe('body of pending');
    expect(body.totalSize).toBe(check.body?.length);
    expect(parseProperties(body.propertiesString).get('TRANSACTION_CHECK_TIMES')).toBe('1');

    expect(sys.queryOffset('CID_RMQ_SYS_TRANS', HALF, 0)).toBe(3);
    expect(sys.queryOffset('CID_RMQ_SYS_TRANS', OP, 0)).toBe(2);

    const answer = await producer.request(
      RequestCode.END_TRANSACTION,
      endHeader({ commitLogOffset: copyOffset, queueOffset: 3, uniqKey: pending.uniqKey }, COMMIT, true),
    );
    expect(answer.code).toBe(ResponseCode.SUCCESS);
    const delivered = (await records(server, 'TxTopicChk', 1)).map((r) => parseProperties(r.propertiesString).get('KEYS'));
    expect(delivered).toEqual(['committed', 'pending']);

    await after(Date.now(), 5);
    const quiet = await checker.checkOnce();
    expect(quiet.checked).toBe(0);
    expect(sys.queryOffset('CID_RMQ_SYS_TRANS', HALF, 0)).toBe(4);
    expect(sys.queryOffset('CID_RMQ_SYS_TRANS', OP, 0)).toBe(3);
    expect(producer.incoming).toHaveLength(1);
  });

  it('never delivers twice when the producer ends the original after a check copy was made', async () => {
    const server = await start({ transactionTimeOut: 10 });
    const producer = await connect(server.brokerAddr);
    await registerProducer(producer);
    const h = await sendHalf(producer, 'TxTopicLate', 'late');
    await after(Date.now(), 20);
    expect((await checkService(server).checkOnce()).checked).toBe(1);
    await producer.waitIncoming(1);
    const check = producer.incoming[0];
    // the producer's own (late) END for the original arrives first, then its answer to the check
    expect((await producer.request(RequestCode.END_TRANSACTION, endHeader(h, COMMIT))).code).toBe(ResponseCode.SUCCESS);
    const answer = await producer.request(
      RequestCode.END_TRANSACTION,
      endHeader({ commitLogOffset: Number(check.extFields.commitLogOffset), queueOffset: 1, uniqKey: h.uniqKey }, COMMIT, true),
    );
    expect(answer.code).toBe(ResponseCode.SUCCESS);
    expect(queueSize(server, 'TxTopicLate', 1)).toBe(1);
    expect((await records(server, OP, 0)).map((r) => parseOpBody(r.body))).toEqual([[0], [1]]);
  });

  it('moves a half message to TRANS_CHECK_MAX_TIME_TOPIC after transactionCheckMax checks', async () => {
    const server = await start({ transactionTimeOut: 10, transactionCheckMax: 2 });
    const producer = await connect(server.brokerAddr);
    await registerProducer(producer);
    await sendHalf(producer, 'TxTopicMax', 'never-answered');
    const checker = checkService(server);
    const results = [];
    for (let i = 0; i < 3; i++) {
      await after(Date.now(), 20);
      results.push(await checker.checkOnce());
    }
    // Java's order: the copy made by the 2nd check already carries TRANSACTION_CHECK_TIMES=2, and the same pass
    // reaches it next and discards it (the discard test comes before the "stored during this pass" test).
    expect(results.map((r) => [r.checked, r.discarded])).toEqual([
      [1, 0],
      [1, 1],
      [0, 0],
    ]);
    const discarded = await records(server, 'TRANS_CHECK_MAX_TIME_TOPIC', 0);
    expect(discarded).toHaveLength(1);
    expect(parseProperties(discarded[0].propertiesString).get('TRANSACTION_CHECK_TIMES')).toBe('2');
    await producer.waitIncoming(2);
    expect(producer.incoming.map((c) => parseProperties(decodeRecord(c.body as Buffer).propertiesString).get('TRANSACTION_CHECK_TIMES'))).toEqual([
      '1',
      '2',
    ]);
  });

  it('honours CHECK_IMMUNITY_TIME_IN_SECONDS: re-queues instead of checking, and refuses a late END from the producer', async () => {
    const server = await start({ transactionTimeOut: 10 });
    const producer = await connect(server.brokerAddr);
    await registerProducer(producer);
    const early = await sendHalf(producer, 'TxTopicImm', 'early', { CHECK_IMMUNITY_TIME_IN_SECONDS: '1' });
    const late = await sendHalf(producer, 'TxTopicImm', 'late', { CHECK_IMMUNITY_TIME_IN_SECONDS: '1' });
    const checker = checkService(server);
    await after(Date.now(), 20);
    expect(await checker.checkOnce()).toEqual({ checked: 0, discarded: 0, skippedDone: 0 });
    const copies = (await records(server, HALF, 0)).slice(2);
    expect(copies.map((r) => parseProperties(r.propertiesString).get('TRAN_PREPARED_QUEUE_OFFSET'))).toEqual(['0', '1']);
    expect(producer.incoming).toHaveLength(0);

    expect((await producer.request(RequestCode.END_TRANSACTION, endHeader(early, COMMIT))).code).toBe(ResponseCode.SUCCESS);
    await after(Date.now(), 1000);
    const refused = await producer.request(RequestCode.END_TRANSACTION, endHeader(late, COMMIT));
    expect(refused.code).toBe(ResponseCode.ILLEGAL_OPERATION);

    // past the immunity: the finished one is not checked again, the other one is
    const pass = await checker.checkOnce();
    expect(pass.checked).toBe(1);
    await producer.waitIncoming(1);
    expect(producer.incoming[0].extFields.msgId).toBe(late.uniqKey);
    expect(queueSize(server, 'TxTopicImm', 1)).toBe(1);
  });

  it('reads 4.9.x op bodies without a trailing comma', () => {
    expect(parseOpBody(Buffer.from('17'))).toEqual([17]);
    expect(parseOpBody(Buffer.from('1,2,3,'))).toEqual([1, 2, 3]);
    expect(parseOpBody(Buffer.from('x,-1,4'))).toEqual([4]);
  });

  it('runs passes on its own every transactionCheckInterval', async () => {
    const server = await start({ transactionCheckInterval: 100, transactionTimeOut: 10 });
    const producer = await connect(server.brokerAddr);
    await registerProducer(producer);
    const h = await sendHalf(producer, 'TxTopicTimer', 'timer');
    await producer.waitIncoming(1, 10_000);
    const check = producer.incoming[0];
    expect(check.extFields.msgId).toBe(h.uniqKey);
    producer.oneway(
      RequestCode.END_TRANSACTION,
      endHeader({ commitLogOffset: Number(check.extFields.commitLogOffset), queueOffset: Number(check.extFields.tranStateTableOffset), uniqKey: h.uniqKey }, ROLLBACK, true),
    );
    await waitFor(() => queueSize(server, OP, 0) === 1, 5000, 'rollback op');
    expect(queueSize(server, 'TxTopicTimer', 1)).toBe(0);
  });
});

interface Capture {
  halfSendResponse: { code: number; extFields: Record<string, string> };
  checkTransactionState: { code: number; flag: number; extFields: Record<string, string>; bodyBase64: string };
}

function loadCapture(version: string): Capture {
  return JSON.parse(fs.readFileSync(new URL(`../../protocol/transaction/check-transaction-state-${version}.json`, import.meta.url), 'utf8'));
}

describe('transactional messages: frames compared with captures from official brokers', () => {
  it('sends the same CHECK_TRANSACTION_STATE header fields and body layout as 5.3.3 (a superset of 4.9.8)', async () => {
    const v5 = loadCapture('5.3.3');
    const v4 = loadCapture('4.9.8');
    const server = await start({ transactionTimeOut: 10 });
    const producer = await connect(server.brokerAddr);
    await registerProducer(producer);
    const h = await sendHalf(producer, 'TxCapture', 'capture-key');
    expect(Object.keys(h.res.extFields).sort()).toEqual(Object.keys(v5.halfSendResponse.extFields).sort());
    await after(Date.now(), 20);
    await checkService(server).checkOnce();
    await producer.waitIncoming(1);
    const ours = producer.incoming[0];

    const theirs = v5.checkTransactionState;
    expect(ours.code).toBe(theirs.code);
    expect(ours.flag).toBe(theirs.flag);
    expect(Object.keys(ours.extFields).sort()).toEqual(Object.keys(theirs.extFields).sort());
    for (const k of Object.keys(v4.checkTransactionState.extFields)) expect(ours.extFields).toHaveProperty(k);
    expect(ours.extFields.topic).toBe(theirs.extFields.topic);
    expect(ours.extFields.bname).toBe('broker-a');

    const frames = [
      { ext: ours.extFields, body: ours.body as Buffer, uniq: h.uniqKey },
      { ext: theirs.extFields, body: Buffer.from(theirs.bodyBase64, 'base64'), uniq: '7F0000010000000000000000000000AA' },
    ];
    for (const { ext, body: raw, uniq } of frames) {
      const body = decodeRecord(raw);
      expect(body.magic).toBe(0xdaa320a7);
      expect(body.topic).toBe('TxCapture');
      expect(body.queueOffset).toBe(Number(ext.tranStateTableOffset));
      expect(body.commitLogOffset).toBe(Number(ext.commitLogOffset));
      expect(decodeOffsetMessageId(ext.offsetMsgId)?.commitLogOffset).toBe(body.commitLogOffset);
      expect(ext.msgId).toBe(uniq);
      expect(ext.transactionId).toBe(uniq);
      const props = parseProperties(body.propertiesString);
      expect(props.get('TRANSACTION_CHECK_TIMES')).toBe('1');
      expect(props.get('WAIT')).toBe('false');
      expect(props.get('REAL_TOPIC')).toBe('TxCapture');
      expect(props.get('__transactionId__')).toBe(uniq);
    }
    // same property names (MSG_REGION and TRACE_ON too: a 5.x broker puts them on every message it stores)
    const names = (b: Buffer) => [...parseProperties(decodeRecord(b).propertiesString).keys()].sort();
    expect(names(ours.body as Buffer)).toEqual(names(Buffer.from(theirs.bodyBase64, 'base64')));
  });
});
