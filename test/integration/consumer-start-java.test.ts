import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

/**
 * New stock Java 4.9.8 push consumers start every queue at once: compat/java ConsumerStartTest (tag
 * "consumerStart") starts 12 consumers in new groups, one after another, on a 16-queue topic. At its first
 * rebalance each bumps its subscription version and pulls with it while its heartbeat is on the way; the broker
 * holds such pulls until that heartbeat (src/broker/client/subscription-version-waits.ts). The official broker
 * refuses them with SUBSCRIPTION_NOT_LATEST and the client pulls those queues again 1 s later (measured in about
 * half of the starts, README "Consumer start-up"). Here: some pulls did wait (the race happened), none was refused.
 */
describe('stock Java push consumers starting on a 16-queue topic', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('never get SUBSCRIPTION_NOT_LATEST for the version their own heartbeat is bringing', { timeout: 10 * 60_000 }, async () => {
    const res = await runScript('compat/java/run.sh', ['tag:consumerStart', `-Dnamesrv=${server.namesrvAddr}`], 8 * 60_000);
    console.log(res.output.split('\n').filter((l) => /^(\[consumerStart\]|scenarios:|FAIL |PASS )/.test(l)).join('\n'));
    expect(res.code, tail(res.output, 120)).toBe(0);
    expect(res.output).toMatch(/scenarios: 1 passed, 0 failed/);
    const stats = server.broker.context.consumerManager.subVersionWaitStats;
    console.log(`pulls held for their subscription version: ${stats.answered} answered, ${stats.refused} refused`);
    expect(stats.refused).toBe(0);
    expect(stats.answered).toBeGreaterThan(0);
  });
});
