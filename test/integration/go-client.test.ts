import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('stock Go client (rocketmq-client-go/v2) against rocketmq-ts', () => {
  let server: TestServer;

  beforeAll(async () => {
    // TestTransactionCommitRollbackAndCheck waits for check-backs (every 2 s instead of 30 s); TestSql92Selector
    // needs SQL92 filtering
    server = await startTestServer({ transactionCheckInterval: 2000, enablePropertyFilter: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('passes every scenario of compat/go', { timeout: 10 * 60_000 }, async () => {
    const res = await runScript('compat/go/run.sh', [server.namesrvAddr], 9 * 60_000);
    const lines = res.output.split('\n').filter((l) => /^(--- (PASS|FAIL|SKIP)|ok|FAIL)/.test(l));
    console.log(`go scenarios:\n${lines.join('\n')}`);
    expect(res.code, tail(res.output, 120)).toBe(0);
    expect(lines.some((l) => l.startsWith('--- PASS'))).toBe(true);
    expect(lines.some((l) => l.startsWith('--- SKIP'))).toBe(false);
  });
});
