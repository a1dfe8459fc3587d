import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { createRequest } from '../../src/remoting/command.js';
import { ADMIN_NAME_FIELDS } from '../../src/broker/processors/name-checks.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

/** Raw requests a stock client would never send: every one must get a code and a remark, never a crash. */
describe('broker answers bad requests with RocketMQ codes', () => {
  let server: TestServer;
  let client: RemotingClient;

  const send = (topic: string, body: Buffer, extra: Record<string, string> = {}) =>
    client.request(
      server.brokerAddr,
      createRequest(
        RequestCode.SEND_MESSAGE_V2,
        { a: 'PG_err', b: topic, c: 'TBW102', d: '4', e: '0', f: '0', g: String(Date.now()), h: '0', i: 'TAGS\u0001t\u0002', ...extra },
        body,
      ),
      5000,
    );

  beforeAll(async () => {
    server = await startTestServer({ autoCreateTopicEnable: false });
    client = new RemotingClient(silentLogger());
    await createTopic(server, 'ErrTopic', 2);
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('accepts a body of exactly maxMessageSize and refuses one byte more with MESSAGE_ILLEGAL', async () => {
    const max = 4 * 1024 * 1024;
    const ok = await send('ErrTopic', Buffer.alloc(max, 1));
    expect(ok.code).toBe(ResponseCode.SUCCESS);
    const tooBig = await send('ErrTopic', Buffer.alloc(max + 1, 1));
    expect(tooBig.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect(tooBig.remark).toMatch(/maxMessageSize/);
  });

  it('refuses an unknown topic with TOPIC_NOT_EXIST when autoCreateTopicEnable=false', async () => {
    const res = await send('NoSuchTopic', Buffer.from('x'));
    expect(res.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(res.remark).toContain('NoSuchTopic');
  });

  it('refuses illegal topic names and system topics', async () => {
    const bad = await send('bad topic!', Buffer.from('x'));
    expect(bad.code).not.toBe(ResponseCode.SUCCESS);
    expect(bad.remark).toMatch(/illegal|topic/i);
    const sys = await send('SCHEDULE_TOPIC_XXXX', Buffer.from('x'));
    expect(sys.code).toBe(ResponseCode.NO_PERMISSION);
  });

  it('refuses an out-of-range queue id', async () => {
    const res = await send('ErrTopic', Buffer.from('x'), { e: '99' });
    expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(res.remark).toContain('queueId');
  });

  it('names the missing header field', async () => {
    const res = await client.request(server.brokerAddr, createRequest(RequestCode.PULL_MESSAGE, { topic: 'ErrTopic' }), 5000);
    expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(res.remark).toContain('consumerGroup');
  });

  it('answers a malformed batch body with MESSAGE_ILLEGAL', async () => {
    const res = await client.request(
      server.brokerAddr,
      createRequest(
        RequestCode.SEND_BATCH_MESSAGE,
        { a: 'PG_err', b: 'ErrTopic', c: 'TBW102', d: '4', e: '0', f: '0', g: String(Date.now()), h: '0', i: '' },
        Buffer.from([0, 0, 0, 200, 1, 2, 3]),
      ),
      5000,
    );
    expect(res.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
  });

  it('answers a pull of an unknown topic with TOPIC_NOT_EXIST and an offset beyond max with PULL_OFFSET_MOVED', async () => {
    const pull = (topic: string, offset: number) =>
      client.request(
        server.brokerAddr,
        createRequest(RequestCode.PULL_MESSAGE, {
          consumerGroup: 'G_err',
          topic,
          queueId: '0',
          queueOffset: String(offset),
          maxMsgNums: '32',
          sysFlag: '4', // SUBSCRIPTION, no SUSPEND: answer at once
          commitOffset: '0',
          suspendTimeoutMillis: '1000',
          subscription: '*',
          subVersion: '0',
        }),
        5000,
      );
    expect((await pull('NoSuchTopic', 0)).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    const moved = await pull('ErrTopic', 1000);
    expect(moved.code).toBe(ResponseCode.PULL_OFFSET_MOVED);
    expect(Number(moved.extFields.nextBeginOffset)).toBe(Number(moved.extFields.maxOffset));
  });

  it('reads numeric header fields as Java does; a refused send takes no queue offset (also after a restart)', async () => {
    await createTopic(server, 'NumTopic', 1);
    const offsets: number[] = [];
    const good = async () => {
      const res = await send('NumTopic', Buffer.from('ok'));
      expect(res.code).toBe(ResponseCode.SUCCESS);
      offsets.push(Number(res.extFields.queueOffset));
    };
    await good();
    // Java-invalid numbers: SYSTEM_ERROR (as Java's NumberFormatException), a remark naming the field.
    for (const g of ['1e3', '0x10', '1e21', '1e308', '-9223372036854775809', '9223372036854775808', ' 1', '']) {
      if (g === '') continue; // empty = absent (Java 4.9.4+ binary headers), defaulted
      const res = await send('NumTopic', Buffer.from('bad'), { g });
      expect([res.code, res.remark]).toEqual([ResponseCode.SYSTEM_ERROR, expect.stringContaining('<bornTimestamp>')]);
      expect(res.remark).not.toMatch(/internal error|out of range of|ERR_/);
    }
    // Valid Java longs a JS number cannot hold exactly: refused before any offset is taken.
    for (const g of ['9223372036854775807', '-9223372036854775808', '9007199254740993']) {
      const res = await send('NumTopic', Buffer.from('big'), { g });
      expect([res.code, res.remark]).toEqual([ResponseCode.MESSAGE_ILLEGAL, expect.stringContaining('bornTimestamp')]);
    }
    const bad10 = await client.request(server.brokerAddr, createRequest(RequestCode.SEND_MESSAGE, {
      producerGroup: 'PG_err', topic: 'NumTopic', defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0',
      sysFlag: '0', bornTimestamp: '9223372036854775807', flag: '0', properties: '',
    }, Buffer.from('x')), 5000);
    expect(bad10.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    const badQueue = await send('NumTopic', Buffer.from('x'), { e: '+0x0' });
    expect(badQueue.remark).toContain('<queueId>');
    await good();
    await good();
    expect(offsets).toEqual([0, 1, 2]);
    await server.restartBroker();
    server.brokerAddr = server.broker.brokerAddr();
    await good();
    expect(offsets).toEqual([0, 1, 2, 3]);
    expect(server.broker.context.store.getMaxOffsetInQueue('NumTopic', 0)).toBe(4);
  });

  it('checks topic and group names on every admin code; no remark shows a path or JS error text', async () => {
    const huge = 'T'.repeat(70_000);
    const del = await client.request(server.brokerAddr, createRequest(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: huge }), 5000);
    expect(del.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(del.remark).toMatch(/longer than topic max length 127/);
    expect(del.remark!.length).toBeLessThan(200);
    const badChars = await client.request(server.brokerAddr, createRequest(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: `../../${'x'.repeat(300)}` }), 5000);
    expect(badChars.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(badChars.remark!.length).toBeLessThan(260);
    // Every admin code with a name field: an illegal topic or group there is refused the same way.
    for (const [code, fields] of ADMIN_NAME_FIELDS) {
      const names = [...(fields.topics ?? []), ...(fields.groups ?? []), ...(fields.topicLists ?? [])];
      for (const name of names) {
        const ext: Record<string, string> = {
          topic: 'ErrTopic', group: 'G_ok', groupName: 'G_ok', consumerGroup: 'G_ok', producerGroup: 'PG_ok',
          srcGroup: 'G_ok', destGroup: 'G_ok2', compareGroup: 'G_ok', clientId: 'c', timestamp: '0', isForce: 'false',
          [name]: name.toLowerCase().includes('group') ? 'g'.repeat(256) : 'bad/topic',
        };
        const res = await client.request(server.brokerAddr, createRequest(code, ext), 5000);
        if (res.code === ResponseCode.REQUEST_CODE_NOT_SUPPORTED) continue;
        expect([code, name, res.code]).toEqual([code, name, ResponseCode.INVALID_PARAMETER]);
        expect(res.remark).toContain(`${name}: `);
      }
    }
    for (const res of [del, badChars]) {
      expect(res.remark).not.toContain(server.storeDir);
      expect(res.remark).not.toMatch(/ENAMETOOLONG|Error:|at \//);
    }
  });

  it('serves the VIP channel at listenPort - 2', async () => {
    // A fixed listenPort binds P, P - 2 and (HA, unless given) P + 1. The ports are free when picked but another
    // process may take one before the broker binds it (EADDRINUSE in a loaded run of 2026-12-02): pick again then.
    let vip: Awaited<ReturnType<typeof startTestServer>> | undefined;
    let port = 0;
    for (let attempt = 1; !vip; attempt++) {
      port = await freePortPair();
      try {
        vip = await startTestServer({ listenPort: port, haListenPort: await listenOnce(0) });
      } catch (err) {
        if (attempt >= 5 || !/EADDRINUSE/.test(String(err))) throw err;
      }
    }
    try {
      const res = await client.request(`127.0.0.1:${port - 2}`, createRequest(RequestCode.GET_BROKER_RUNTIME_INFO), 5000);
      expect(res.code).toBe(ResponseCode.SUCCESS);
    } finally {
      await vip.stop();
    }
  });
});

/** A port P such that both P and P − 2 are free right now. */
async function freePortPair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = await listenOnce(0);
    if (p > 1026 && (await canListen(p - 2))) return p;
  }
  throw new Error('no free port pair');
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(port, '0.0.0.0', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function canListen(port: number): Promise<boolean> {
  try {
    await listenOnce(port);
    return true;
  } catch {
    return false;
  }
}
