// CONSUMER_SEND_MSG_BACK (36) and delay-level delivery: the properties the official 4.9.8 / 5.3.3 brokers put on
// retried, dead-lettered and delayed messages (seen with compat/go's retry/DLQ and delay scenarios).
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { type TestServer, startTestServer, waitFor } from '../helpers/server.js';
import { type Pulled, pull, pullAll, send } from './timer-helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function start(): Promise<{ server: TestServer; client: RemotingClient }> {
  const server = await startTestServer();
  const client = new RemotingClient(silentLogger());
  closers.push(() => server.stop(), () => client.close());
  return { server, client };
}

function sendBack(client: RemotingClient, brokerAddr: string, fields: Record<string, string>) {
  return client.request(brokerAddr, createRequest(RequestCode.CONSUMER_SEND_MSG_BACK, fields), 10_000);
}

describe('CONSUMER_SEND_MSG_BACK', () => {
  it('sets ORIGIN_MESSAGE_ID to the stored original\'s offset message id, not the header\'s originMsgId, and keeps it', async () => {
    const { server, client } = await start();
    const sent = await send(client, server.brokerAddr, 'SbT', { TAGS: 'T', KEYS: 'k', UNIQ_KEY: 'UNIQ-SB-1' }, Buffer.from('sb'));
    expect(sent.code).toBe(ResponseCode.SUCCESS);
    const offsetMsgId = sent.extFields.msgId!;
    const [orig] = await pullAll(client, server.brokerAddr, 'SbT');

    // first give-back: to %RETRY%G with delay level 1 (parked in the schedule topic first)
    const back1 = await sendBack(client, server.brokerAddr, {
      offset: String(orig!.record.commitLogOffset), group: 'G', delayLevel: '1', originMsgId: 'UNIQ-SB-1', originTopic: 'SbT',
      maxReconsumeTimes: '1',
    });
    expect(back1.code).toBe(ResponseCode.SUCCESS);
    let retried: Pulled[] = [];
    await waitFor(async () => (retried = await pull(client, server.brokerAddr, '%RETRY%G', 0, 0)).length > 0, 5000, 'the retry');
    const r = retried[0]!;
    expect(r.record.reconsumeTimes).toBe(1);
    expect(r.props.get('ORIGIN_MESSAGE_ID')).toBe(offsetMsgId);
    expect(r.props.get('RETRY_TOPIC')).toBe('SbT');
    expect(r.props.get('UNIQ_KEY')).toBe('UNIQ-SB-1');
    expect(r.props.get('DELAY')).toBe('1'); // delivered with its level, as Java does

    // second give-back of the retried copy: past maxReconsumeTimes, into %DLQ%G; the first ORIGIN_MESSAGE_ID stays
    const back2 = await sendBack(client, server.brokerAddr, {
      offset: String(r.record.commitLogOffset), group: 'G', delayLevel: '0', originMsgId: 'UNIQ-SB-1', originTopic: 'SbT',
      maxReconsumeTimes: '1',
    });
    expect(back2.code).toBe(ResponseCode.SUCCESS);
    const dead = await pullAll(client, server.brokerAddr, '%DLQ%G');
    expect(dead).toHaveLength(1);
    expect(dead[0]!.record.reconsumeTimes).toBe(2);
    expect(dead[0]!.record.body.toString()).toBe('sb');
    expect(dead[0]!.props.get('ORIGIN_MESSAGE_ID')).toBe(offsetMsgId);
    expect(dead[0]!.props.get('RETRY_TOPIC')).toBe('SbT');
    expect(dead[0]!.props.get('UNIQ_KEY')).toBe('UNIQ-SB-1');
  });
});

describe('delay levels', () => {
  it('delivers a DELAY message to its real topic with DELAY, REAL_TOPIC and REAL_QID kept', async () => {
    const { server, client } = await start();
    const before = Date.now();
    const res = await send(client, server.brokerAddr, 'DelayT', { DELAY: '1', KEYS: 'd', UNIQ_KEY: 'UNIQ-D-1' }, Buffer.from('d'), 1);
    expect(res.code).toBe(ResponseCode.SUCCESS);
    let got: Pulled[] = [];
    await waitFor(async () => (got = await pull(client, server.brokerAddr, 'DelayT', 1, 0)).length > 0, 5000, 'the delayed message');
    expect(Date.now() - before).toBeGreaterThanOrEqual(900);
    expect(got).toHaveLength(1);
    expect(got[0]!.props.get('DELAY')).toBe('1');
    expect(got[0]!.props.get('REAL_TOPIC')).toBe('DelayT');
    expect(got[0]!.props.get('REAL_QID')).toBe('1');
    expect(got[0]!.props.get('UNIQ_KEY')).toBe('UNIQ-D-1');
  });
});
