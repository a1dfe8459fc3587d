import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listJavaScenarios, runScript, tail } from '../helpers/compat.js';
import { type TestServer, startTestServer, tempDir } from '../helpers/server.js';

/**
 * Scenarios of the stock Java client (org.apache.rocketmq:rocketmq-client 4.9.8 from Maven Central) that
 * rocketmq-ts cannot pass yet, with the reason. Each is listed in the README's known gaps.
 */
const KNOWN_GAPS: Record<string, string> = {};

const JAVA_RUN_TIMEOUT_MS = 15 * 60_000;

/** The 4.9.x line most deployments run, and the newest 5.x remoting client on Maven Central. */
const NEWEST_5X = '5.5.0';

describe('stock Java client 4.9.8 against rocketmq-ts', () => {
  let server: TestServer;

  beforeAll(async () => {
    // TransactionCheckTest waits for check-backs: check every 2 s instead of Java's 30 s
    server = await startTestServer({ transactionCheckInterval: 2000, enablePropertyFilter: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('passes every scenario of compat/java except the listed known gaps', { timeout: JAVA_RUN_TIMEOUT_MS + 60_000 }, async () => {
    const all = await listJavaScenarios();
    const selected = all.filter((s) => !(s in KNOWN_GAPS));
    expect(selected.length).toBeGreaterThan(10);
    const res = await runScript('compat/java/run.sh', [selected.join(','), `-Dnamesrv=${server.namesrvAddr}`], JAVA_RUN_TIMEOUT_MS);
    const summary = res.output.split('\n').filter((l) => /^(scenarios:|FAIL |SKIP )/.test(l));
    console.log(`java scenarios (${selected.length} selected, ${Object.keys(KNOWN_GAPS).length} known gaps):\n${summary.join('\n')}`);
    expect(res.code, tail(res.output, 120)).toBe(0);
    // Scenarios skip themselves when the broker lacks a feature (SQL92 needs enablePropertyFilter): none may here.
    expect(res.output, tail(res.output, 40)).not.toMatch(/^SKIP /m);
  });

  it('loses nothing when the broker restarts between producing and consuming', { timeout: 10 * 60_000 }, async () => {
    const dir = tempDir('java-restart');
    const stateFile = path.join(dir, 'state.properties');
    const args = (phase: string) => ['restart', `-Dnamesrv=${server.namesrvAddr}`, `-Dphase=${phase}`, `-DstateFile=${stateFile}`];
    try {
      const produce = await runScript('compat/java/run.sh', args('produce'), 5 * 60_000);
      expect(produce.code, tail(produce.output, 120)).toBe(0);
      await server.restartBroker();
      const consume = await runScript('compat/java/run.sh', args('consume'), 5 * 60_000);
      expect(consume.code, tail(consume.output, 120)).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe(`stock Java client ${NEWEST_5X} (remoting API) against rocketmq-ts`, () => {
  let server: TestServer;

  beforeAll(async () => {
    // TransactionCheckTest waits for check-backs: check every 2 s instead of Java's 30 s
    server = await startTestServer({ transactionCheckInterval: 2000, enablePropertyFilter: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('passes every scenario of compat/java except the listed known gaps', { timeout: JAVA_RUN_TIMEOUT_MS + 60_000 }, async () => {
    const selected = (await listJavaScenarios()).filter((s) => !(s in KNOWN_GAPS));
    const res = await runScript(
      'compat/java/run.sh',
      [selected.join(','), `-Dnamesrv=${server.namesrvAddr}`, `-Drocketmq.version=${NEWEST_5X}`],
      JAVA_RUN_TIMEOUT_MS,
    );
    const summary = res.output.split('\n').filter((l) => /^(scenarios:|FAIL |SKIP )/.test(l));
    console.log(`java ${NEWEST_5X} scenarios:\n${summary.join('\n')}`);
    expect(res.code, tail(res.output, 120)).toBe(0);
    expect(res.output, tail(res.output, 40)).not.toMatch(/^SKIP /m);
  });
});

describe('stock Java client 4.9.8 against rocketmq-ts with autoCreateTopicEnable=false', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ autoCreateTopicEnable: false });
  });
  afterAll(async () => {
    await server?.stop();
  });

  // compat/java NoAutoCreateTopicTest (tag noAutoCreate): an unknown topic fails in the client with
  // "No route info of this topic" (MQClientException 10005), as with the official brokers; a created topic works
  it('refuses unknown topics like the official broker', { timeout: 5 * 60_000 }, async () => {
    const res = await runScript('compat/java/run.sh', ['tag:noAutoCreate', `-Dnamesrv=${server.namesrvAddr}`, '-DautoCreateTopicEnable=false'], 4 * 60_000);
    expect(res.code, tail(res.output, 80)).toBe(0);
    expect(res.output, tail(res.output, 40)).toMatch(/^PASS NoAutoCreateTopicTest#/m);
    expect(res.output, tail(res.output, 40)).not.toMatch(/^SKIP /m);
  });
});
