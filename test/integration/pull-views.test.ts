// Pull answers carry zero-copy views of the commit log's in-memory tail, and the tail reuses evicted chunks. A
// chunk must never be reused while an answer viewing it still waits in the socket: here a consumer stops reading
// with answers unsent, the producer writes several times the tail's size (chunks are evicted and reused), then the
// consumer reads and every record must be the one that was stored.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { FrameDecoder } from '../../src/remoting/frame-decoder.js';
import { encodeFrame } from '../../src/remoting/header-codec.js';
import type { DefaultMessageStore } from '../../src/store/index.js';
import { decodeRecord } from '../../src/store/record.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

const TOPIC = 'PullViews';
const BODY_BYTES = 4000;
const MiB = 1024 * 1024;

describe('pull answers and tail-cache reuse', () => {
  let server: TestServer;
  let client: RemotingClient;

  /** Message i's body: BODY_BYTES bytes, each (i mod 251), with i in its first 4 bytes. */
  const body = (i: number) => {
    const b = Buffer.alloc(BODY_BYTES, i % 251);
    b.writeInt32BE(i, 0);
    return b;
  };
  const sendRange = async (from: number, to: number) => {
    for (let i = from; i < to; i += 50) {
      const sends = [];
      for (let k = i; k < Math.min(to, i + 50); k++) {
        sends.push(client.request(server.brokerAddr, createRequest(RequestCode.SEND_MESSAGE_V2,
          { a: 'PG_views', b: TOPIC, c: 'TBW102', d: '1', e: '0', f: '0', g: String(Date.now()), h: '0', i: '' }, body(k)), 10_000));
      }
      for (const res of await Promise.all(sends)) expect(res.code).toBe(ResponseCode.SUCCESS);
    }
  };

  beforeAll(async () => {
    server = await startTestServer({ commitLogTailCacheBytes: 2 * MiB });
    client = new RemotingClient(silentLogger());
    await createTopic(server, TOPIC, 1);
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('keeps every record a pull answer views intact while the tail reuses its memory', async () => {
    await sendRange(0, 400); // ~1.6 MiB: all of it in the 2 MiB tail
    const store = server.broker.context.store as DefaultMessageStore;
    const reusedBefore = store.stats.tailChunksReused;

    const sock = net.connect(Number(server.brokerAddr.split(':')[1]), '127.0.0.1');
    await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
    sock.pause(); // the consumer does not read: answers stay in the kernel and in the broker's socket buffer
    const decoder = new FrameDecoder();
    const got: RemotingCommand[] = [];
    sock.on('data', (chunk) => decoder.push(chunk, got));
    const PULLS = 96; // 32 records of ~4 KiB each: ~12 MiB of answers, more than loopback buffers take
    for (let p = 0; p < PULLS; p++) {
      const offset = (p * 32) % 384;
      sock.write(Buffer.concat(encodeFrame(createRequest(RequestCode.PULL_MESSAGE, {
        consumerGroup: 'G_views', topic: TOPIC, queueId: '0', queueOffset: String(offset), maxMsgNums: '32',
        sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '1000', subscription: '*', subVersion: '0',
      }))));
    }
    await sendRange(400, 3000); // ~10 MiB more: every chunk of the first 1.6 MiB leaves the tail
    expect(store.stats.tailChunksReused).toBeGreaterThan(reusedBefore);

    const all = new Promise<void>((resolve) => sock.on('data', () => { if (got.length >= PULLS) resolve(); }));
    sock.resume();
    await all;
    sock.destroy();
    let records = 0;
    for (const res of got) {
      expect(res.code).toBe(ResponseCode.SUCCESS);
      const buf = res.body!;
      const first = Number(res.extFields.nextBeginOffset) - 32;
      for (let at = 0, k = 0; at < buf.length; k++) {
        const r = decodeRecord(buf, at);
        const i = first + k;
        expect(r.queueOffset).toBe(i);
        expect(r.body.equals(body(i))).toBe(true);
        at += r.totalSize;
        records++;
      }
    }
    expect(records).toBe(PULLS * 32);
  });
});
