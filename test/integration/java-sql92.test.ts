import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const RUN_TIMEOUT_MS = 10 * 60_000;

/**
 * compat/java Sql92FilterTest (stock Java client 4.9.8, MessageSelector.bySql) against an in-process broker with
 * enablePropertyFilter=true. Without the flag those scenarios skip themselves, so this run also checks that none did.
 */
describe('stock Java client SQL92 selectors against rocketmq-ts', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ enablePropertyFilter: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('passes Sql92FilterTest (push and lite pull selectors, malformed selectors refused)', { timeout: RUN_TIMEOUT_MS + 60_000 }, async () => {
    const res = await runScript('compat/java/run.sh', ['Sql92FilterTest', `-Dnamesrv=${server.namesrvAddr}`], RUN_TIMEOUT_MS);
    expect(res.code, tail(res.output, 120)).toBe(0);
    expect(res.output, tail(res.output, 40)).not.toMatch(/^SKIP /m);
    expect(res.output).toMatch(/scenarios: 4 passed, 0 failed/);
  });
});
