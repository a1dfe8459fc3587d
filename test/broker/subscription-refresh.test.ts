import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConsumerManager, type ConsumerRegistration } from '../../src/broker/client/consumer-manager.js';
import type { SubscriptionData } from '../../src/broker/client/types.js';
import { REFRESH_BACKOFF_MS, refreshSubscriptionFromClient, runningInfoSubscriptions } from '../../src/broker/pull/subscription-refresh.js';
import { BROKER_SCHEMA, defaults } from '../../src/common/config.js';
import { RequestCode } from '../../src/common/request-code.js';
import { type RemotingCommand, createResponse } from '../../src/remoting/command.js';
import { FakeConnection, logger, tempDir } from './helpers.js';

/** GET_CONSUMER_RUNNING_INFO answers of the stock Java clients (protocol/vectors/bodies/, how they were captured). */
function capturedBody(version: string): Buffer {
  const file = path.resolve(import.meta.dirname, `../../protocol/vectors/bodies/java-${version}-get-consumer-running-info-response-body.json`);
  return Buffer.from((JSON.parse(fs.readFileSync(file, 'utf8')) as { bodyHex: string }).bodyHex, 'hex');
}

const config = { ...defaults(BROKER_SCHEMA), storePathRootDir: tempDir() };

const sub = (topic: string, subVersion: number, subString = '*'): SubscriptionData => ({
  topic, subString, expressionType: 'TAG', tagsSet: subString === '*' ? [] : [subString], codeSet: [], subVersion, classFilterMode: false,
});

const reg = (subs: SubscriptionData[]): ConsumerRegistration => ({
  consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', subscriptions: subs,
});

/** A consumer connection that answers GET_CONSUMER_RUNNING_INFO with `answer` (or never, when it is null). */
class AnsweringConnection extends FakeConnection {
  readonly asked: RemotingCommand[] = [];
  constructor(private readonly answer: (() => RemotingCommand) | null) {
    super();
  }
  override request(cmd: RemotingCommand, timeoutMs: number): Promise<RemotingCommand> {
    this.asked.push(cmd);
    const answer = this.answer;
    if (!answer) return new Promise((_, reject) => setTimeout(() => reject(new Error(`request timed out after ${timeoutMs} ms`)), timeoutMs));
    return new Promise((resolve) => setImmediate(() => resolve(answer())));
  }
}

function runningInfo(subs: SubscriptionData[]): RemotingCommand {
  const res = createResponse(0);
  // MessageQueue objects as map keys, the way fastjson writes mqTable
  res.body = Buffer.from(
    `{"mqTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"commitOffset":2}},"properties":{"consumerGroup":"G"},`
    + `"subscriptionSet":${JSON.stringify(subs)}}`,
  );
  return res;
}

let managers: ConsumerManager[] = [];
function consumerManager(): ConsumerManager {
  const cm = new ConsumerManager(config, logger, undefined, { scanIntervalMs: 0 });
  managers.push(cm);
  return cm;
}
afterEach(() => {
  for (const cm of managers) cm.shutdown();
  managers = [];
});

describe('runningInfoSubscriptions', () => {
  it('reads the subscriptions of the captured Java 4.9.8 and 5.5.0 answers', () => {
    expect(runningInfoSubscriptions(capturedBody('4.9.8'))).toEqual([
      sub('%RETRY%cg_pullsWithAVersionNoHeartbeatBroughtAreServed_1ljwa7fhr', 1796666416277),
      sub('ct_pullsWithAVersionNoHeartbeatBroughtAreServed_1ljwa7fhr', 1796666416304),
    ]);
    expect(runningInfoSubscriptions(capturedBody('5.5.0'))).toEqual([
      sub('%RETRY%cg_pullsWithAVersionNoHeartbeatBroughtAreServed_1ljwa91h2', 1796666418234),
      sub('ct_pullsWithAVersionNoHeartbeatBroughtAreServed_1ljwa91h2', 1796666419845),
    ]);
  });

  it('gives nothing for an answer without subscriptions and throws on garbage', () => {
    expect(runningInfoSubscriptions(Buffer.from('{"properties":{},"jstack":"..."}'))).toEqual([]);
    expect(() => runningInfoSubscriptions(Buffer.from('{"subscriptionSet":[{"topic":'))).toThrow();
    expect(() => runningInfoSubscriptions(Buffer.from('[1,2]'))).toThrow(/must be a JSON object/);
  });
});

describe('refreshSubscriptionFromClient', () => {
  it('takes the newer version the consumer reports for the expression the broker holds', async () => {
    const cm = consumerManager();
    const conn = new AnsweringConnection(() => runningInfo([sub('T', 200), sub('%RETRY%G', 50)]));
    cm.registerConsumer('G', conn, { clientId: 'c1', language: 'JAVA', version: 513 }, reg([sub('T', 100), sub('%RETRY%G', 50)]));
    const waiting = cm.waitForSubVersion('G', 'T', 200, 60_000);

    // two pulls of the group at once share one question
    const [a, b] = await Promise.all([
      refreshSubscriptionFromClient(cm, 'G', 'T', 200, conn),
      refreshSubscriptionFromClient(cm, 'G', 'T', 150, conn),
    ]);
    expect(conn.asked).toHaveLength(1);
    expect(conn.asked[0].code).toBe(RequestCode.GET_CONSUMER_RUNNING_INFO);
    expect(conn.asked[0].extFields).toEqual({ consumerGroup: 'G', clientId: 'c1', jstackEnable: 'false' });
    expect(a?.subVersion).toBe(200);
    expect(b?.subVersion).toBe(200);
    expect(cm.findSubscriptionData('G', 'T')).toEqual(sub('T', 200));
    // a pull waiting for that version is answered too
    expect((await waiting)?.subVersion).toBe(200);
    expect(cm.subVersionWaitStats.adopted).toBe(1);
  });

  it('takes nothing when the expression differs, the version is older, or the connection is not the member', async () => {
    const cm = consumerManager();
    const other = new AnsweringConnection(() => runningInfo([sub('T', 300, 'TagB')]));
    cm.registerConsumer('G', other, { clientId: 'c1', language: 'JAVA', version: 513 }, reg([sub('T', 100, 'TagA')]));
    expect(await refreshSubscriptionFromClient(cm, 'G', 'T', 300, other)).toBeUndefined();
    expect(cm.findSubscriptionData('G', 'T')?.subVersion).toBe(100);

    const older = new AnsweringConnection(() => runningInfo([sub('U', 150)]));
    cm.registerConsumer('H', older, { clientId: 'c2', language: 'JAVA', version: 513 }, reg([sub('U', 100)]));
    expect(await refreshSubscriptionFromClient(cm, 'H', 'U', 200, older)).toBeUndefined();
    expect(cm.findSubscriptionData('H', 'U')?.subVersion).toBe(100);

    const stranger = new AnsweringConnection(() => runningInfo([sub('U', 300)]));
    expect(await refreshSubscriptionFromClient(cm, 'H', 'U', 300, stranger)).toBeUndefined();
    expect(stranger.asked).toHaveLength(0);
    expect(cm.subVersionWaitStats.adopted).toBe(0);
  });

  it('asks a connection and group again only after the back-off, and never a connection that did not answer', async () => {
    const cm = consumerManager();
    let now = 1_000_000;
    let reported = 150;
    const conn = new AnsweringConnection(() => runningInfo([sub('T', reported)]));
    cm.registerConsumer('G', conn, { clientId: 'c1', language: 'JAVA', version: 513 }, reg([sub('T', 100)]));
    const opts = { now: () => now };
    expect(await refreshSubscriptionFromClient(cm, 'G', 'T', 200, conn, opts)).toBeUndefined();
    expect(await refreshSubscriptionFromClient(cm, 'G', 'T', 200, conn, opts)).toBeUndefined();
    expect(conn.asked).toHaveLength(1);
    now += REFRESH_BACKOFF_MS;
    reported = 200;
    expect((await refreshSubscriptionFromClient(cm, 'G', 'T', 200, conn, opts))?.subVersion).toBe(200);
    expect(conn.asked).toHaveLength(2);

    const silent = new AnsweringConnection(null);
    cm.registerConsumer('S', silent, { clientId: 'ons', language: 'JAVA', version: 513 }, reg([sub('T', 100)]));
    expect(await refreshSubscriptionFromClient(cm, 'S', 'T', 200, silent, { timeoutMs: 20 })).toBeUndefined();
    now += 10 * REFRESH_BACKOFF_MS;
    expect(await refreshSubscriptionFromClient(cm, 'S', 'T', 200, silent, { timeoutMs: 20, now: () => now })).toBeUndefined();
    expect(silent.asked).toHaveLength(1);
  });

  it('does not ask clients too old to answer GET_CONSUMER_RUNNING_INFO', async () => {
    const cm = consumerManager();
    const conn = new AnsweringConnection(() => runningInfo([sub('T', 200)]));
    cm.registerConsumer('G', conn, { clientId: 'old', language: 'JAVA', version: 61 }, reg([sub('T', 100)]));
    expect(await refreshSubscriptionFromClient(cm, 'G', 'T', 200, conn)).toBeUndefined();
    expect(conn.asked).toHaveLength(0);
  });
});
