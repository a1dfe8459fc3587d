// QUERY_MESSAGE (12) and VIEW_MESSAGE_BY_ID (33) over the wire: messages sent with ali-ons, looked up with
// raw requests shaped like the Java client's (MQClientAPIImpl.queryMessage / viewMessage).
import { Message } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeOffsetMessageId } from '../../src/broker/message-id.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { createRequest, type RemotingCommand } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { decodeRecord, getProperty, type DecodedRecord } from '../../src/store/index.js';
import { onsProducer } from '../helpers/ali-ons.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

let server: TestServer;
let client: RemotingClient;
const TOPIC = 'QueryMsgTopic';
const sent: Array<{ msgId: string; body: string; keys: string[] }> = [];
let beginMs: number;

/** Splits a QUERY_MESSAGE body (records back to back) as MessageDecoder.decodes does. */
function records(body: Buffer | undefined): DecodedRecord[] {
  const out: DecodedRecord[] = [];
  let pos = 0;
  while (body && pos < body.length) {
    const rec = decodeRecord(body, pos);
    out.push(rec);
    pos += rec.totalSize;
  }
  return out;
}

function query(key: string, extra: Record<string, string> = {}, topic = TOPIC): Promise<RemotingCommand> {
  return client.request(server.brokerAddr, createRequest(RequestCode.QUERY_MESSAGE, {
    topic, key, maxNum: '32', beginTimestamp: String(beginMs), endTimestamp: String(Date.now() + 60_000), ...extra,
  }), 5000);
}

describe('QUERY_MESSAGE and VIEW_MESSAGE_BY_ID', () => {
  beforeAll(async () => {
    server = await startTestServer();
    client = new RemotingClient(silentLogger());
    await createTopic(server, TOPIC, 4);
    beginMs = Date.now() - 1000;
    const producer = onsProducer(server.namesrvAddr, 'PG_query_message');
    await producer.ready();
    try {
      for (let i = 0; i < 12; i++) {
        const keys = [`order-${i}`, i % 3 === 0 ? 'every-third' : `solo-${i}`];
        const msg = new Message(TOPIC, 'TagQ', `query body ${i}`);
        msg.keys = keys;
        const r = await producer.send(msg);
        expect(r.sendStatus).toBe('SEND_OK');
        sent.push({ msgId: r.msgId, body: `query body ${i}`, keys });
      }
    } finally {
      await producer.close();
    }
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  it('finds messages by key (one and several), with the index headers', async () => {
    const one = await query('order-5');
    expect(one.code).toBe(ResponseCode.SUCCESS);
    expect(records(one.body).map((r) => r.body.toString())).toEqual(['query body 5']);
    expect(Number(one.extFields.indexLastUpdateTimestamp)).toBeGreaterThanOrEqual(beginMs);
    expect(Number(one.extFields.indexLastUpdatePhyoffset)).toBeGreaterThanOrEqual(0);

    const several = await query('every-third');
    expect(several.code).toBe(ResponseCode.SUCCESS);
    const recs = records(several.body);
    expect(recs.map((r) => r.body.toString())).toEqual(['query body 0', 'query body 3', 'query body 6', 'query body 9']);
    for (const r of recs) {
      expect(r.topic).toBe(TOPIC);
      expect(getProperty(r.propertiesString, 'KEYS')?.split(' ')).toContain('every-third');
    }
    // maxNum bounds the answer (the newest ones, returned oldest first).
    const two = await query('every-third', { maxNum: '2' });
    expect(records(two.body).map((r) => r.body.toString())).toEqual(['query body 6', 'query body 9']);
  });

  it('finds a message by its UNIQ_KEY (read back with VIEW_MESSAGE_BY_ID from the offset msgId)', async () => {
    const target = sent[7]!;
    const decoded = decodeOffsetMessageId(target.msgId);
    expect(decoded?.addr).toBe(server.brokerAddr);
    const view = await client.request(server.brokerAddr, createRequest(RequestCode.VIEW_MESSAGE_BY_ID, {
      topic: TOPIC, offset: String(decoded!.commitLogOffset),
    }), 5000);
    expect(view.code).toBe(ResponseCode.SUCCESS);
    const viewed = records(view.body);
    expect(viewed).toHaveLength(1);
    expect(viewed[0]!.body.toString()).toBe(target.body);
    // ali-ons sets no UNIQ_KEY; the broker gives every message one (as a 5.x broker does).
    const uniq = getProperty(viewed[0]!.propertiesString, 'UNIQ_KEY');
    expect(uniq).toMatch(/^[0-9A-F]{32}$/);

    // A unique-key query asks for defaultQueryMaxNum whatever maxNum says.
    const res = await query(uniq!, { _UNIQUE_KEY_QUERY: 'true', maxNum: '0' });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    const found = records(res.body);
    expect(found.map((r) => r.body.toString())).toEqual([target.body]);
    expect(found[0]!.commitLogOffset).toBe(decoded!.commitLogOffset);
  });

  it('answers QUERY_NOT_FOUND with the headers for an unknown key, another topic or a time range that misses', async () => {
    for (const res of [
      await query('no-such-key'),
      await query('order-1', {}, 'SomeOtherTopic'),
      await query('order-1', { beginTimestamp: '0', endTimestamp: String(beginMs - 60_000) }),
    ]) {
      expect(res.code).toBe(ResponseCode.QUERY_NOT_FOUND);
      expect(res.remark).toBe('can not find message, maybe time range not correct');
      expect(res.extFields.indexLastUpdateTimestamp).toBeDefined();
      expect(res.extFields.indexLastUpdatePhyoffset).toBeDefined();
      expect(res.body ?? Buffer.alloc(0)).toHaveLength(0);
    }
  });

  it('answers SYSTEM_ERROR naming a missing header field', async () => {
    const res = await client.request(server.brokerAddr, createRequest(RequestCode.QUERY_MESSAGE, {
      topic: TOPIC, maxNum: '32', beginTimestamp: '0', endTimestamp: '1',
    }), 5000);
    expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(res.remark).toContain('key');
  });

  it('still finds messages after a broker restart', async () => {
    await server.restartBroker();
    const res = await query('order-11');
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(records(res.body).map((r) => r.body.toString())).toEqual(['query body 11']);
  });
});
