// Message-trace support on the broker's side: MSG_REGION / TRACE_ON on every message stored from a send (a 5.x
// broker's buildMsgContext; the 5.x Java client drops its consume traces without a region), and traceTopicEnable.
// The stock-client end of it is compat/java TraceTest.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { silentLogger } from '../../src/common/logger.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { pullAll, send } from '../broker/timer-helpers.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

const servers: TestServer[] = [];
const clients: RemotingClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.stop();
});

async function start(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<{ server: TestServer; client: RemotingClient }> {
  const server = await startTestServer(overrides);
  servers.push(server);
  const client = new RemotingClient(silentLogger());
  clients.push(client);
  return { server, client };
}

describe('MSG_REGION and TRACE_ON', () => {
  it('are put on stored messages and send answers, from the live config, replacing a producer\'s own', async () => {
    const { server, client } = await start();
    await createTopic(server, 'TraceProps', 1);
    const first = await send(client, server.brokerAddr, 'TraceProps', { TAGS: 'a', KEYS: 'k1' });
    expect(first.code).toBe(ResponseCode.SUCCESS);
    expect(first.extFields).toMatchObject({ MSG_REGION: 'DefaultRegion', TRACE_ON: 'true' });

    const update = await client.request(
      server.brokerAddr,
      createRequest(RequestCode.UPDATE_BROKER_CONFIG, {}, Buffer.from('regionId=RegionT\ntraceOn=false\n')),
      5000,
    );
    expect(update.code).toBe(ResponseCode.SUCCESS);
    const second = await send(client, server.brokerAddr, 'TraceProps', { TAGS: 'b', MSG_REGION: 'ProducerOwn', TRACE_ON: 'true' });
    expect(second.extFields).toMatchObject({ MSG_REGION: 'RegionT', TRACE_ON: 'false' });

    const pulled = await pullAll(client, server.brokerAddr, 'TraceProps');
    expect(pulled.map((p) => [p.props.get('TAGS'), p.props.get('MSG_REGION'), p.props.get('TRACE_ON')])).toEqual([
      ['a', 'DefaultRegion', 'true'],
      ['b', 'RegionT', 'false'],
    ]);
    // one of each: the producer's own values are replaced, not kept beside the broker's
    const names = pulled[1]!.record.propertiesString.split('\u0002').map((p) => p.split('\u0001')[0]);
    expect(names.filter((n) => n === 'MSG_REGION' || n === 'TRACE_ON')).toEqual(['MSG_REGION', 'TRACE_ON']);
    expect(pulled[0]!.props.get('KEYS')).toBe('k1');
  });

  it('are put on each message of a batch', async () => {
    const { server, client } = await start();
    await createTopic(server, 'TraceBatch', 1);
    const inner = (tag: string): Buffer => {
      const body = Buffer.from(`body-${tag}`);
      const props = Buffer.from(encodeProperties({ TAGS: tag, WAIT: 'true' }));
      const b = Buffer.alloc(20 + body.length + 2 + props.length);
      b.writeInt32BE(b.length, 0);
      b.writeInt32BE(0, 4); // magic: the broker does not read it
      b.writeInt32BE(0, 8); // body CRC: recomputed
      b.writeInt32BE(0, 12); // flag
      b.writeInt32BE(body.length, 16);
      body.copy(b, 20);
      b.writeInt16BE(props.length, 20 + body.length);
      props.copy(b, 22 + body.length);
      return b;
    };
    const res = await client.request(
      server.brokerAddr,
      createRequest(
        RequestCode.SEND_BATCH_MESSAGE,
        { a: 'PG_batch', b: 'TraceBatch', c: 'TBW102', d: '4', e: '0', f: '0', g: String(Date.now()), h: '0', i: 'WAIT\u0001true\u0002', j: '0', k: 'false', m: 'true' },
        Buffer.concat([inner('x'), inner('y')]),
      ),
      5000,
    );
    expect(res.code).toBe(ResponseCode.SUCCESS);
    const pulled = await pullAll(client, server.brokerAddr, 'TraceBatch');
    expect(pulled.map((p) => [p.props.get('TAGS'), p.props.get('MSG_REGION'), p.props.get('TRACE_ON')])).toEqual([
      ['x', 'DefaultRegion', 'true'],
      ['y', 'DefaultRegion', 'true'],
    ]);
  });
});

describe('traceTopicEnable', () => {
  it('creates msgTraceTopicName at start with one queue, as a system topic, even without auto-creation', async () => {
    const { server, client } = await start({ traceTopicEnable: true, msgTraceTopicName: 'MyTraceTopic', autoCreateTopicEnable: false });
    const tc = server.broker.context.topicConfigManager.get('MyTraceTopic');
    expect(tc).toMatchObject({ readQueueNums: 1, writeQueueNums: 1, perm: 6 });
    const sys = await client.request(server.brokerAddr, createRequest(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, {}), 5000);
    expect((parseFastjson(sys.body!) as { topicList: string[] }).topicList).toContain('MyTraceTopic');
    const sent = await send(client, server.brokerAddr, 'MyTraceTopic', { KEYS: 'msgid-1' });
    expect(sent.code).toBe(ResponseCode.SUCCESS);
  });

  it('creates no trace topic by default', async () => {
    const { server } = await start();
    expect(server.broker.context.topicConfigManager.get('RMQ_SYS_TRACE_TOPIC')).toBeUndefined();
  });
});
