// Shared bits of the gRPC scenarios: waiting for events, reading stored records with a raw remoting pull, and a
// raw gRPC receive (what the stock clients do not expose: store_timestamp, body_encoding). Independent of the
// server's code; protos from the rocketmq-client-nodejs package.
import { createRequire } from 'node:module';
import path from 'node:path';
import { request } from '../grpc/admin.mjs';

const require = createRequire(import.meta.url);
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

export const WAIT_MS = Number(process.env.GRPC5_WAIT_MS ?? 60_000);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function assert(cond, what) {
  if (!cond) throw new Error(what);
}

/** Polls `fn` until it returns something truthy; the deadline only bounds a broken server. */
export async function until(what, fn, timeoutMs = WAIT_MS) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

function parseProps(s) {
  const m = new Map();
  for (const kv of s.split('\u0002')) {
    const i = kv.indexOf('\u0001');
    if (i > 0 && i < kv.length - 1) m.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return m;
}

/** Every record of a topic's queues 0..7 (PULL_MESSAGE from offset 0), decoded. */
export async function pullRecords(broker, topic, queues = 8) {
  const out = [];
  for (let q = 0; q < queues; q++) {
    const r = await request(broker, 11, {
      consumerGroup: 'CG_grpc5_reader', topic, queueId: q, queueOffset: 0, maxMsgNums: 32, sysFlag: 4, commitOffset: 0,
      suspendTimeoutMillis: 0, subscription: '*', subVersion: 0, expressionType: 'TAG',
    });
    if (r.code !== 0) continue;
    const b = r.body;
    for (let pos = 0; pos < b.length;) {
      const total = b.readInt32BE(pos);
      const queueOffset = Number(b.readBigInt64BE(pos + 20));
      const sysFlag = b.readInt32BE(pos + 36);
      const bornTimestamp = Number(b.readBigInt64BE(pos + 40));
      let o = pos + 48 + (sysFlag & 0x10 ? 20 : 8);
      const storeTimestamp = Number(b.readBigInt64BE(o));
      o += 8 + (sysFlag & 0x20 ? 20 : 8);
      const reconsumeTimes = b.readInt32BE(o);
      o += 4 + 8;
      const bodyLen = b.readInt32BE(o);
      const body = b.subarray(o + 4, o + 4 + bodyLen);
      o += 4 + bodyLen;
      const topicLen = b.readUInt8(o);
      o += 1 + topicLen;
      const propsLen = b.readInt16BE(o);
      const props = parseProps(b.subarray(o + 2, o + 2 + propsLen).toString());
      out.push({ queueId: q, queueOffset, sysFlag, bornTimestamp, storeTimestamp, reconsumeTimes, body, props });
      pos += total;
    }
  }
  return out;
}

let Client;
export function messagingClient() {
  if (!Client) {
    const root = path.join(path.dirname(require.resolve('rocketmq-client-nodejs/package.json')), 'proto');
    const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [root] });
    Client = grpc.loadPackageDefinition(def).apache.rocketmq.v2.MessagingService;
  }
  return Client;
}

export function rawMetadata(clientId, version = '5.2.0') {
  const md = new grpc.Metadata();
  if (clientId) md.set('x-mq-client-id', clientId);
  md.set('x-mq-language', 'JAVA');
  md.set('x-mq-protocol', 'v2');
  md.set('x-mq-client-version', version);
  return md;
}

export const sec = (s) => ({ seconds: s, nanos: 0 });
const toMs = (t) => Number(t.seconds) * 1000 + Math.trunc((t.nanos ?? 0) / 1e6);

/** Settings on a Telemetry stream, one receive, ack what came; the first message's system properties as numbers. */
export async function rawReceive(endpoint, group, topic) {
  const client = new (messagingClient())(endpoint, grpc.credentials.createInsecure());
  const md = rawMetadata(`raw-${group}`);
  const stream = client.Telemetry(md);
  stream.on('error', () => undefined);
  const first = new Promise((resolve) => stream.once('data', resolve));
  stream.write({ settings: { client_type: 'SIMPLE_CONSUMER', request_timeout: sec(3), subscription: { group: { name: group }, subscriptions: [{ topic: { name: topic }, expression: { type: 'TAG', expression: '*' } }] } } });
  await first;
  try {
    return await until('a raw receive', async () => {
      const items = await new Promise((resolve) => {
        const got = [];
        const s = client.ReceiveMessage({
          group: { name: group }, message_queue: { topic: { name: topic }, id: -1 }, filter_expression: { type: 'TAG', expression: '*' },
          batch_size: 1, invisible_duration: sec(30), long_polling_timeout: sec(5),
        }, md, { deadline: Date.now() + 15_000 });
        s.on('data', (d) => got.push(d));
        s.on('error', () => undefined);
        s.on('status', () => resolve(got));
      });
      const m = items.find((i) => i.message)?.message;
      if (!m) return undefined;
      await new Promise((resolve) => client.AckMessage({ group: { name: group }, topic: { name: topic }, entries: [{ message_id: m.system_properties.message_id, receipt_handle: m.system_properties.receipt_handle }] }, md, resolve));
      const sp = m.system_properties;
      return { ...sp, store_timestamp: toMs(sp.store_timestamp), born_timestamp: toMs(sp.born_timestamp), body: m.body };
    });
  } finally {
    stream.end();
    await sleep(100);
    client.close();
  }
}
