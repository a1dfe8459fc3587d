import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

/** Runs of the scenario at most, until the race has happened once. */
const MAX_RUNS = 3;

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

  it('never get SUBSCRIPTION_NOT_LATEST for the version their own heartbeat is bringing', { timeout: 10 * 60_000 }, async (ctx) => {
    // Whether a pull overtakes its heartbeat depends on timing (the race happened in some runs here and in none
    // of 15 others on the same machine): the scenario runs again, with new groups, until some pulls waited; none
    // may ever be refused. Where the race never happened the check did not take place: skipped, not passed.
    // the getter gives a new snapshot each time: read it again after every run
    const consumers = server.broker.context.consumerManager;
    let stats = consumers.subVersionWaitStats;
    for (let run = 1; run <= MAX_RUNS && stats.answered === 0; run++) {
      const res = await runScript('compat/java/run.sh', ['tag:consumerStart', `-Dnamesrv=${server.namesrvAddr}`], 8 * 60_000);
      console.log(res.output.split('\n').filter((l) => /^(\[consumerStart\]|scenarios:|FAIL |PASS )/.test(l)).join('\n'));
      expect(res.code, tail(res.output, 120)).toBe(0);
      expect(res.output).toMatch(/scenarios: 1 passed, 0 failed/);
      stats = consumers.subVersionWaitStats;
      console.log(`run ${run}: pulls held for their subscription version: ${stats.answered} answered, ${stats.refused} refused`);
      expect(stats.refused).toBe(0);
    }
    ctx.skip(stats.answered === 0, `no pull overtook its heartbeat in ${MAX_RUNS} runs: nothing to check`);
  });
});
