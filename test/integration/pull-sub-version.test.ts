// A pull that names a newer subscription version than the broker has waits for the heartbeat bringing it (the race a
// stock push consumer runs at every rebalance change; see src/broker/client/subscription-version-waits.ts), and gets
// SUBSCRIPTION_NOT_LATEST when that heartbeat does not come in time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUB_VERSION_WAIT_MS } from '../../src/broker/client/subscription-version-waits.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { javaHeartbeat } from '../broker/helpers.js';
import { type TestServer, createTopic, startTestServer, waitFor } from '../helpers/server.js';

const TOPIC = 'SubVersionTopic';
const GROUP = 'CG_subversion';

describe('pull with a subscription version ahead of the heartbeats', () => {
  let server: TestServer;
  let client: RemotingClient;

  const heartbeat = async (subVersion: number) => {
    const res = await client.request(
      server.brokerAddr,
      createRequest(RequestCode.HEART_BEAT, {}, javaHeartbeat('127.0.0.1@subver', GROUP, [TOPIC], [], subVersion)),
      5000,
    );
    expect(res.code).toBe(ResponseCode.SUCCESS);
  };
  // As the 4.9.x push consumer pulls: commit-offset and suspend flags, no subscription in the pull (sysFlag 3).
  const pull = (subVersion: number) =>
    client.request(
      server.brokerAddr,
      createRequest(RequestCode.PULL_MESSAGE, {
        consumerGroup: GROUP, topic: TOPIC, queueId: '0', queueOffset: '0', maxMsgNums: '32', sysFlag: '3',
        commitOffset: '0', suspendTimeoutMillis: '15000', subVersion: String(subVersion),
      }),
      20_000,
    );

  beforeAll(async () => {
    server = await startTestServer();
    client = new RemotingClient(silentLogger());
    await createTopic(server, TOPIC, 1);
    const sent = await client.request(
      server.brokerAddr,
      createRequest(
        RequestCode.SEND_MESSAGE_V2,
        { a: 'PG_subver', b: TOPIC, c: 'TBW102', d: '1', e: '0', f: '0', g: String(Date.now()), h: '0', i: '' },
        Buffer.from('hello'),
      ),
      5000,
    );
    expect(sent.code).toBe(ResponseCode.SUCCESS);
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('answers the pull with its messages once the heartbeat with the new version arrives', async () => {
    await heartbeat(100);
    const answer = pull(200);
    // the pull is held for the version; only then the heartbeat that carries it
    await waitFor(() => server.broker.context.consumerManager.subVersionWaiting === 1, 5000, 'the pull to wait');
    await heartbeat(200);
    const res = await answer;
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.body?.length ?? 0).toBeGreaterThan(0);
    expect(server.broker.context.consumerManager.subVersionWaiting).toBe(0);
  });

  it('answers SUBSCRIPTION_NOT_LATEST when no heartbeat brings the version in time', async () => {
    const t0 = Date.now();
    const res = await pull(300);
    expect(res.code).toBe(ResponseCode.SUBSCRIPTION_NOT_LATEST);
    expect(res.remark).toContain('subscription not latest');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(SUB_VERSION_WAIT_MS - 50);
    expect(server.broker.context.consumerManager.subVersionWaiting).toBe(0);
  });
});
