// Retention and the disk guard seen through the broker: after expired commit-log files are deleted a pull
// below the min answers PULL_OFFSET_MOVED with a next offset that works (raw pull and a stock ali-ons push
// consumer), and a full disk answers sends with SERVICE_NOT_AVAILABLE (14).
import { Message } from 'ali-ons';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseCode } from '../../src/common/response-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { RemotingClient } from '../../src/remoting/client.js';
import type { DefaultMessageStore, StatFsLike } from '../../src/store/index.js';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { type TestServer, createTopic, startTestServer, waitFor } from '../helpers/server.js';
import { commitLogFilesOnDisk, rawPull, rawSend, settledCommitLogFiles } from './helpers.js';

const TOPIC = 'RetentionTopic';
const COUNT = 240;
const HOUR = 3600_000;

let server: TestServer;
let client: RemotingClient;
let store: DefaultMessageStore;
let usedPercent = 20;
const bodies: string[] = [];

function disk(percent: number): StatFsLike {
  const blocks = 262144;
  const used = Math.round((blocks * percent) / 100);
  return { bsize: 4096, blocks, bfree: blocks - used, bavail: blocks - used };
}

beforeAll(async () => {
  // The clean-up runs when the test says so: deleteWhen is the fake clock's hour, the timer is far away.
  const fakeNow = new Date();
  fakeNow.setHours(10, 0, 0, 0);
  server = await startTestServer({
    mappedFileSizeCommitLog: 4096,
    mappedFileSizeConsumeQueue: 200,
    deleteWhen: '10',
    cleanResourceInterval: 3600_000,
  });
  store = server.broker.context.store as DefaultMessageStore;
  store.cleaner.env = {
    ...store.cleaner.env,
    now: () => fakeNow.getTime() + 96 * HOUR,
    statfs: async () => disk(usedPercent),
  };
  client = new RemotingClient(silentLogger());
  await createTopic(server, TOPIC, 1);
  for (let i = 0; i < COUNT; i++) {
    const body = `retained-${i}-${'r'.repeat(120)}`;
    const res = await rawSend(client, server.brokerAddr, TOPIC, 0, Buffer.from(body), { UNIQ_KEY: `RK${i}`, TAGS: 'T' });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    bodies.push(body);
  }
  // Consume-queue files are deleted only once written and synced.
  await store.cqStore.drainWrites();
  await store.cqStore.flushAll();
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
});

describe('retention through the broker', () => {
  it('deletes expired files and answers a pull below the min with PULL_OFFSET_MOVED and a usable next offset', async () => {
    const filesBefore = await settledCommitLogFiles(server.storeDir, store);
    const run = await store.cleaner.runOnce();
    expect(run.commitLogFilesDeleted).toBe(10);
    expect(commitLogFilesOnDisk(server.storeDir)).toBe(filesBefore - 10);
    const min = store.getMinOffsetInQueue(TOPIC, 0);
    expect(min).toBeGreaterThan(0);

    const moved = await rawPull(client, server.brokerAddr, TOPIC, 0, 0);
    expect(moved.code).toBe(ResponseCode.PULL_OFFSET_MOVED);
    expect(moved.nextBeginOffset).toBe(min);
    expect(moved.minOffset).toBe(min);
    expect(moved.maxOffset).toBe(COUNT);

    const found = await rawPull(client, server.brokerAddr, TOPIC, 0, moved.nextBeginOffset);
    expect(found.code).toBe(ResponseCode.SUCCESS);
    expect(found.messages[0]!.queueOffset).toBe(min);
    expect(found.messages[0]!.commitLogOffset).toBeGreaterThanOrEqual(store.getMinPhyOffset());
    expect(found.messages[0]!.body.toString()).toBe(bodies[min]);
    expect(found.messages[0]!.properties.UNIQ_KEY).toBe(`RK${min}`);
  });

  it('a stock push consumer starting at 0 is moved to the min and receives everything still stored', async () => {
    const min = store.getMinOffsetInQueue(TOPIC, 0);
    const got = new Map<number, string>();
    const consumer = onsConsumer(server.namesrvAddr, 'GID_retention');
    consumer.subscribe(TOPIC, '*', async (msg: { queueOffset: number | string; body: Buffer }) => {
      got.set(Number(msg.queueOffset), msg.body.toString());
    });
    try {
      await consumer.ready();
      await waitFor(() => got.size >= COUNT - min, 30_000, `${COUNT - min} messages (got ${got.size})`);
    } finally {
      await consumer.close();
    }
    expect(Math.min(...got.keys())).toBe(min);
    for (const [offset, body] of got) expect(body).toBe(bodies[offset]);
  });
});

describe('disk guard through the broker', () => {
  it('refuses sends with SERVICE_NOT_AVAILABLE (14) above the warning level and accepts them again below the forced-clean level', async () => {
    usedPercent = 92;
    await store.cleaner.checkDiskSpace();
    const refused = await rawSend(client, server.brokerAddr, TOPIC, 0, Buffer.from('refused'));
    expect(refused.code).toBe(ResponseCode.SERVICE_NOT_AVAILABLE);
    expect(refused.remark).toContain("the broker's disk is full");

    // A stock producer sees the failure too (it retries, then gives up).
    const producer = onsProducer(server.namesrvAddr, 'PG_diskfull');
    await producer.ready();
    try {
      await expect(producer.send(new Message(TOPIC, 'T', 'refused too'))).rejects.toThrow(/still failed/);
      // Pulls keep working while the disk is full.
      const min = store.getMinOffsetInQueue(TOPIC, 0);
      expect((await rawPull(client, server.brokerAddr, TOPIC, 0, min)).code).toBe(ResponseCode.SUCCESS);

      usedPercent = 50;
      await store.cleaner.checkDiskSpace();
      const ok = await producer.send(new Message(TOPIC, 'T', 'accepted'));
      expect(ok.sendStatus).toBe('SEND_OK');
    } finally {
      await producer.close();
    }
  });
});
