// SQL92 filtering on the pull path, against a real in-process nameserver + broker over sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { encodeProperties, parseProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { decodeRecord, encodeRecord, readRecordProperties } from '../../src/store/record.js';
import { CQ_UNIT_SIZE, STORE_CONFIG_DEFAULTS } from '../../src/store/index.js';
import { makeMessage } from '../store/helpers.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

const FLAG_COMMIT_OFFSET = 1;
const FLAG_SUSPEND = 2;
const FLAG_SUBSCRIPTION = 4;

let topicSeq = 0;

class Harness {
  readonly client = new RemotingClient(silentLogger());
  constructor(readonly server: TestServer) {}

  async topic(): Promise<string> {
    const topic = `SqlT_${process.pid}_${++topicSeq}`;
    await createTopic(this.server, topic, 1);
    return topic;
  }

  async send(topic: string, props: Record<string, string>): Promise<number> {
    const res = await this.client.request(
      this.server.brokerAddr,
      createRequest(
        RequestCode.SEND_MESSAGE,
        {
          producerGroup: 'sql92_pg', topic, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0',
          bornTimestamp: String(Date.now()), flag: '0', properties: encodeProperties(props), reconsumeTimes: '0',
          unitMode: 'false', batch: 'false',
        },
        Buffer.from(JSON.stringify(props)),
      ),
      5000,
    );
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    return Number(res.extFields.queueOffset);
  }

  async sendAll(topic: string, list: Array<Record<string, string>>): Promise<void> {
    for (let i = 0; i < list.length; i += 64) await Promise.all(list.slice(i, i + 64).map((p) => this.send(topic, p)));
  }

  pull(
    topic: string, group: string, queueOffset: number,
    opts: { sql?: string; maxMsgNums?: number; suspendMs?: number; withSubscription?: boolean } = {},
  ): Promise<RemotingCommand> {
    const withSub = opts.withSubscription ?? true;
    const sysFlag = (withSub ? FLAG_SUBSCRIPTION : 0) | (opts.suspendMs !== undefined ? FLAG_SUSPEND : 0) | FLAG_COMMIT_OFFSET;
    const ext: Record<string, string> = {
      consumerGroup: group, topic, queueId: '0', queueOffset: String(queueOffset), maxMsgNums: String(opts.maxMsgNums ?? 32),
      sysFlag: String(sysFlag), commitOffset: '0', suspendTimeoutMillis: String(opts.suspendMs ?? 0), subVersion: '0',
    };
    if (withSub) {
      ext.subscription = opts.sql ?? '*';
      ext.expressionType = opts.sql === undefined ? 'TAG' : 'SQL92';
    }
    return this.client.request(this.server.brokerAddr, createRequest(RequestCode.PULL_MESSAGE, ext), (opts.suspendMs ?? 0) + 10_000);
  }

  async heartbeat(group: string, topic: string, sql: string): Promise<void> {
    const body = {
      clientID: `sql92-test@${group}`,
      consumerDataSet: [{
        groupName: group, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        subscriptionDataSet: [{ classFilterMode: false, codeSet: [], expressionType: 'SQL92', subString: sql, subVersion: 1, tagsSet: [], topic }],
        unitMode: false,
      }],
      producerDataSet: [],
    };
    const res = await this.client.request(
      this.server.brokerAddr, createRequest(RequestCode.HEART_BEAT, {}, Buffer.from(JSON.stringify(body))), 5000,
    );
    expect(res.code).toBe(ResponseCode.SUCCESS);
  }

  async checkClientConfig(sql: string): Promise<RemotingCommand> {
    const body = { clientId: 'c', group: 'G', subscriptionData: { topic: 'T', subString: sql, expressionType: 'SQL92' } };
    return this.client.request(
      this.server.brokerAddr, createRequest(RequestCode.CHECK_CLIENT_CONFIG, {}, Buffer.from(JSON.stringify(body))), 5000,
    );
  }
}

/** The `a` property of each record in a pull answer. */
function pulledValues(res: RemotingCommand, prop = 'a'): string[] {
  const out: string[] = [];
  const body = res.body ?? Buffer.alloc(0);
  for (let pos = 0; pos < body.length;) {
    const rec = decodeRecord(body, pos);
    out.push(parseProperties(rec.propertiesString).get(prop) ?? '<none>');
    pos += rec.totalSize;
  }
  return out;
}

const next = (res: RemotingCommand) => Number(res.extFields.nextBeginOffset);
/** Consume-queue entries one filtered pull scans: Java's maxFilterMessageSize window (16000 bytes = 800). */
const SQL_FILTER_MAX_SCAN_ENTRIES = STORE_CONFIG_DEFAULTS.maxFilterMessageSize / CQ_UNIT_SIZE;

describe('readRecordProperties', () => {
  it('reads the properties of v1/v2, IPv4/IPv6 records like decodeRecord', () => {
    const ipv6 = Buffer.alloc(16, 7);
    const variants = [
      makeMessage('T', 0, 'body', { tags: 'TagA', props: { a: '1', b: '\u4e2d' } }),
      makeMessage('T'.repeat(200), 1, '', { props: { a: '2' } }),
      makeMessage('T6', 2, 'x'.repeat(1000), { props: { a: '3' }, bornHost: ipv6, storeHost: ipv6 }),
      makeMessage('Tnone', 3, 'no properties'),
    ];
    for (const msg of variants) {
      const buf = Buffer.concat([Buffer.alloc(5), encodeRecord(msg, 1, 2, 3)]);
      expect(readRecordProperties(buf, 5)).toBe(decodeRecord(buf, 5).propertiesString);
      expect(readRecordProperties(buf.subarray(5))).toBe(msg.propertiesString);
    }
    expect(() => readRecordProperties(Buffer.alloc(40))).toThrow(RangeError);
  });
});

describe('SQL92 pull filtering (enablePropertyFilter=true)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = new Harness(await startTestServer({ enablePropertyFilter: true }));
  });
  afterAll(async () => {
    await h?.client.close();
    await h?.server.stop();
  });

  it('returns only the matching records and moves past the rest', async () => {
    const topic = await h.topic();
    await h.sendAll(topic, Array.from({ length: 10 }, (_, i) => ({ a: String(i), b: i % 2 === 0 ? 'yes' : 'no', TAGS: i < 5 ? 'TagA' : 'TagB' })));
    const res = await h.pull(topic, 'sql_g1', 0, { sql: "a between 0 and 3 and b = 'yes'" });
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    expect(pulledValues(res)).toEqual(['0', '2']);
    expect(next(res)).toBe(10);

    // TAGS is a property like any other.
    const tags = await h.pull(topic, 'sql_g1', 0, { sql: "TAGS = 'TagB' AND a > 7" });
    expect(pulledValues(tags)).toEqual(['8', '9']);

    // maxMsgNums counts delivered messages; the next pull starts after the last one delivered.
    const first3 = await h.pull(topic, 'sql_g1', 0, { sql: 'a >= 2', maxMsgNums: 3 });
    expect(pulledValues(first3)).toEqual(['2', '3', '4']);
    expect(next(first3)).toBe(5);
  });

  it('answers PULL_RETRY_IMMEDIATELY with an advanced offset when nothing matched', async () => {
    const topic = await h.topic();
    await h.sendAll(topic, Array.from({ length: 5 }, (_, i) => ({ a: String(i) })));
    const res = await h.pull(topic, 'sql_g2', 0, { sql: 'a > 100' });
    expect(res.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
    expect(res.remark).toBe('NO_MATCHED_MESSAGE');
    expect(next(res)).toBe(5);
    // Unknown (missing property) and Java runtime errors ('x' is no int) drop as well.
    await h.sendAll(topic, [{ b: '1' }, { a: 'x' }]);
    const more = await h.pull(topic, 'sql_g2', 5, { sql: 'a > 1' });
    expect(more.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
    expect(next(more)).toBe(7);
    expect((await h.pull(topic, 'sql_g2', 7, { sql: 'a > 1' })).code).toBe(ResponseCode.PULL_NOT_FOUND);
  });

  it(`scans at most ${SQL_FILTER_MAX_SCAN_ENTRIES} entries per pull`, async () => {
    const topic = await h.topic();
    const n = SQL_FILTER_MAX_SCAN_ENTRIES + 40;
    await h.sendAll(topic, Array.from({ length: n }, (_, i) => ({ a: String(i), hit: i === n - 1 ? 'y' : 'n' })));
    const first = await h.pull(topic, 'sql_g3', 0, { sql: "hit = 'y'" });
    expect(first.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
    expect(next(first)).toBe(SQL_FILTER_MAX_SCAN_ENTRIES);
    const second = await h.pull(topic, 'sql_g3', next(first), { sql: "hit = 'y'" });
    expect(second.code).toBe(ResponseCode.SUCCESS);
    expect(pulledValues(second)).toEqual([String(n - 1)]);
    expect(next(second)).toBe(n);
  });

  it('refuses a malformed selector with SUBSCRIPTION_PARSE_FAILED', async () => {
    const topic = await h.topic();
    const res = await h.pull(topic, 'sql_g4', 0, { sql: "a > 'x'" });
    expect(res.code).toBe(ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    expect(res.remark).toMatch(/^parse the consumer's subscription failed: Value ''x'' cannot be compared/);
  });

  it('filters with the heartbeat subscription when the pull carries none', async () => {
    const topic = await h.topic();
    await h.sendAll(topic, Array.from({ length: 6 }, (_, i) => ({ a: String(i) })));
    await h.heartbeat('sql_g5', topic, 'a IN (\'1\', \'4\')');
    const res = await h.pull(topic, 'sql_g5', 0, { withSubscription: false });
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    expect(pulledValues(res)).toEqual(['1', '4']);

    await h.heartbeat('sql_g6', topic, 'a IN (1)');
    const bad = await h.pull(topic, 'sql_g6', 0, { withSubscription: false });
    expect(bad.code).toBe(ResponseCode.FILTER_DATA_NOT_EXIST);
    expect(bad.remark).toMatch(/Your expression may be wrong/);
  });

  it('keeps a parked pull parked for messages it does not select, and wakes it for one it does', async () => {
    const topic = await h.topic();
    const hold = h.server.broker.context.pullRequestHoldService;
    const held = hold.heldCount;
    const parked = h.pull(topic, 'sql_g7', 0, { sql: "color = 'red'", suspendMs: 20_000 });
    await waitUntil(() => hold.heldCount === held + 1);
    await h.send(topic, { color: 'blue', a: 'b1' });
    await h.send(topic, { a: 'none' });
    // The dispatch (and any wake-up) happens before the send is answered.
    expect(hold.heldCount).toBe(held + 1);
    await h.send(topic, { color: 'red', a: 'r1' });
    const res = await parked;
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(pulledValues(res)).toEqual(['r1']);
    expect(next(res)).toBe(3);
  });

  it('answers a parked pull that saw only non-matching messages at its timeout, past them', async () => {
    const topic = await h.topic();
    const parked = h.pull(topic, 'sql_g8', 0, { sql: "color = 'red'", suspendMs: 400 });
    const hold = h.server.broker.context.pullRequestHoldService;
    await waitUntil(() => hold.heldCount > 0);
    await h.send(topic, { color: 'blue' });
    const res = await parked;
    expect(res.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
    expect(next(res)).toBe(1);
  });

  it('CHECK_CLIENT_CONFIG compiles the selector', async () => {
    expect((await h.checkClientConfig("a between 0 and 3 and b = 'yes'")).code).toBe(ResponseCode.SUCCESS);
    const bad = await h.checkClientConfig('a between 3 and 0');
    expect(bad.code).toBe(ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    expect(bad.remark).toMatch(/^Invalid MessageSelector\. Illegal values of between/);
  });

  it('leaves TAG subscriptions alone', async () => {
    const topic = await h.topic();
    await h.sendAll(topic, [{ TAGS: 'A', a: '1' }, { TAGS: 'B', a: '2' }]);
    const all = await h.pull(topic, 'sql_g9', 0);
    expect(pulledValues(all)).toEqual(['1', '2']);
  });
});

describe('SQL92 on retry topics (filterSupportRetry=true)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = new Harness(await startTestServer({ enablePropertyFilter: true, filterSupportRetry: true }));
  });
  afterAll(async () => {
    await h?.client.close();
    await h?.server.stop();
  });

  it("judges %RETRY% messages by the group's selector for their original topic", async () => {
    const topic = await h.topic();
    await h.heartbeat('sql_rg', topic, "a = 'keep'");
    const retry = '%RETRY%sql_rg';
    await h.sendAll(retry, [
      { a: 'keep', RETRY_TOPIC: topic },
      { a: 'drop', RETRY_TOPIC: topic },
      { a: 'other', RETRY_TOPIC: 'SomeTagTopic' }, // no SQL92 subscription for that topic: passes
    ]);
    const res = await h.pull(retry, 'sql_rg', 0);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    expect(pulledValues(res)).toEqual(['keep', 'other']);
  });
});

describe('SQL92 pull filtering (enablePropertyFilter=false)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = new Harness(await startTestServer());
  });
  afterAll(async () => {
    await h?.client.close();
    await h?.server.stop();
  });

  it('answers SYSTEM_ERROR as the Java broker does', async () => {
    const topic = await h.topic();
    await h.send(topic, { a: '1' });
    const res = await h.pull(topic, 'sql_off', 0, { sql: 'a = 1' });
    expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(res.remark).toBe('The broker does not support consumer to filter message by SQL92');
    const check = await h.checkClientConfig('a = 1');
    expect(check.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(check.remark).toBe('The broker does not support consumer to filter message by SQL92');
  });
});

async function waitUntil(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
