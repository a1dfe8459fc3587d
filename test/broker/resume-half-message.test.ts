// RESUME_CHECK_HALF_MESSAGE (323): the record an offset msgId names is put back on the half queue with
// TRANSACTION_CHECK_TIMES 0 (Java AdminBrokerProcessor.resumeCheckHalfMessage); what is not a transaction's half
// message, or no message at all, is refused with SYSTEM_ERROR. The whole flow with a stock producer is
// compat/java ResumeHalfMessageTest.
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { parseProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { decodeRecord } from '../../src/store/index.js';
import { startTestServer } from '../helpers/server.js';
import { send } from './timer-helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const HALF = 'RMQ_SYS_TRANS_HALF_TOPIC';

describe('RESUME_CHECK_HALF_MESSAGE', () => {
  it('puts a half message back with its check count at 0 and refuses anything else', async () => {
    const server = await startTestServer();
    const client = new RemotingClient(silentLogger());
    closers.push(() => server.stop(), async () => client.close());
    const addr = server.brokerAddr;
    const resume = (msgId: string) =>
      client.request(addr, createRequest(RequestCode.RESUME_CHECK_HALF_MESSAGE, { topic: 'TRANS_CHECK_MAX_TIME_TOPIC', msgId }), 10_000);

    const half = await send(client, addr, 'TxT', { TRAN_MSG: 'true', PGROUP: 'PG_tx', KEYS: 'k1', TRANSACTION_CHECK_TIMES: '15' }, Buffer.from('half body'));
    expect(half.code).toBe(ResponseCode.SUCCESS);
    const plain = await send(client, addr, 'TxT', { KEYS: 'k2' });

    const ok = await resume(half.extFields.msgId!);
    expect([ok.code, ok.remark]).toEqual([ResponseCode.SUCCESS, undefined]);
    const { store } = server.broker.context;
    const got = await store.getMessage(HALF, 0, 0, 10, 1 << 20);
    expect(got.records).toHaveLength(2);
    const [first, copy] = got.records.map((r) => decodeRecord(r));
    const props = parseProperties(copy!.propertiesString);
    expect(props.get('TRANSACTION_CHECK_TIMES')).toBe('0');
    expect([props.get('REAL_TOPIC'), props.get('PGROUP'), props.get('KEYS')]).toEqual(['TxT', 'PG_tx', 'k1']);
    expect(copy!.body.toString()).toBe('half body');
    expect(copy!.bornTimestamp).toBe(first!.bornTimestamp);

    const notHalf = await resume(plain.extFields.msgId!);
    expect(notHalf.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(notHalf.remark).toContain('is not a transaction\'s half message');
    const beyond = await resume('7F0000010000000000007FFFFFFFFFFF');
    expect([beyond.code, beyond.remark]).toEqual([
      ResponseCode.SYSTEM_ERROR,
      'Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC. (no message at offset 140737488355327)',
    ]);
    expect((await resume('not-an-id')).code).toBe(ResponseCode.SYSTEM_ERROR);
    expect((await store.getMessage(HALF, 0, 0, 10, 1 << 20)).records).toHaveLength(2);
  });
});
