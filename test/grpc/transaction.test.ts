import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, waitFor } from '../helpers/server.js';
import { createTypedTopic, grpcEndpoint, quietLogger, rmq, storedRecords } from './helpers.js';

const require = createRequire(import.meta.url);
const { TransactionResolution } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');

describe('gRPC endpoint: transactions from rocketmq-client-nodejs 1.0.8', () => {
  let server: TestServer;
  let producer: { startup(): Promise<void>; shutdown(): Promise<void>; beginTransaction(): any; send(m: unknown, tx?: unknown): Promise<any> } | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  const checked: string[] = [];
  const topic = 'GrpcTx';

  beforeAll(async () => {
    server = await startTestServer({ transactionCheckInterval: 500, transactionTimeOut: 1000 });
    await createTypedTopic(server, topic, 'TRANSACTION', 2);
    producer = new rmq.Producer({
      endpoints: grpcEndpoint(server), namespace: '', topics: [topic], logger: quietLogger,
      checker: {
        async check(mv: { messageId: string; body: Buffer }) {
          checked.push(mv.body.toString());
          return mv.body.toString() === 'commit-on-check' ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
        },
      },
    });
    await producer!.startup();
  });
  afterAll(async () => {
    await producer?.shutdown().catch(() => undefined);
    await server?.stop();
  });

  it('commit and rollback by the client; an open transaction is resolved by check-back on the Telemetry stream', async () => {
    const p = producer!;
    const tx1 = p.beginTransaction();
    await p.send({ topic, body: Buffer.from('committed') }, tx1);
    await tx1.commit();
    const tx2 = p.beginTransaction();
    await p.send({ topic, body: Buffer.from('rolled-back') }, tx2);
    await tx2.rollback();
    const tx3 = p.beginTransaction();
    const r3 = await p.send({ topic, body: Buffer.from('commit-on-check') }, tx3);
    const tx4 = p.beginTransaction();
    await p.send({ topic, body: Buffer.from('rollback-on-check') }, tx4);
    // tx3 and tx4 are left open: the broker asks the producer (RecoverOrphanedTransactionCommand) and the checker decides.
    await waitFor(async () => (await storedRecords(server, topic)).length === 2 && checked.includes('rollback-on-check'), 30_000, 'check-backs');
    const bodies = (await storedRecords(server, topic)).map((r) => r.body.toString()).sort();
    expect(bodies).toEqual(['commit-on-check', 'committed']);
    expect(checked.sort()).toEqual(['commit-on-check', 'rollback-on-check']);
    const rec = (await storedRecords(server, topic)).find((r) => r.body.toString() === 'commit-on-check')!;
    expect(rec.props.get('UNIQ_KEY')).toBe(r3.messageId);
    // nothing is checked again once resolved
    const n = checked.length;
    await new Promise((r) => setTimeout(r, 2500)); // two check rounds: nothing more may be asked
    expect(checked.length).toBe(n);
  });
});
