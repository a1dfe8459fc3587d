import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

/**
 * compat/java SubscriptionRefreshTest (tag "subscriptionRefresh") with the stock Java clients: a running push
 * consumer's subscription version is moved the way a 5.x rebalance moves it when its heartbeat loses the client's
 * heartbeat lock, so that its pulls name a version no heartbeat brought (scheduled heartbeats are 10 minutes apart
 * there). The scenario needs the next message within 10 s; the broker gets the version by asking the client
 * (src/broker/pull/subscription-refresh.ts). The official broker refuses those pulls until a heartbeat comes.
 */
describe('a push consumer whose subscription version moved without a heartbeat', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const version of ['4.9.8', '5.5.0']) {
    it(`keeps consuming: the broker takes the version from the client (Java client ${version})`, { timeout: 5 * 60_000 }, async () => {
      const consumers = server.broker.context.consumerManager;
      const adoptedBefore = consumers.subVersionWaitStats.adopted;
      const res = await runScript(
        'compat/java/run.sh', ['tag:subscriptionRefresh', `-Dnamesrv=${server.namesrvAddr}`, `-Drocketmq.version=${version}`], 4 * 60_000,
      );
      console.log(res.output.split('\n').filter((l) => /^(\[subscriptionRefresh\]|scenarios:|FAIL |PASS )/.test(l)).join('\n'));
      expect(res.code, tail(res.output, 120)).toBe(0);
      expect(res.output).toMatch(/scenarios: 1 passed, 0 failed/);

      expect(res.output).toMatch(/\[subscriptionRefresh\] delivered with the new version after \d+ ms/);
      expect(consumers.subVersionWaitStats.adopted).toBeGreaterThan(adoptedBefore);
    });
  }
});
