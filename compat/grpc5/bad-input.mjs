// Bad input with a raw grpc-js client (requests the stock clients never send): every answer's Code must be the
// official proxy's; messages are compared where the proxy's text is plain (ours drops the Java class prefixes and
// stack frames the proxy appends: see README, 5.x clients).
import { createRequire } from 'node:module';
import { assert, messagingClient, rawMetadata, sec, sleep, until } from './util.mjs';

const require = createRequire(import.meta.url);
const grpc = require('@grpc/grpc-js');

function unary(client, method, req, md) {
  return new Promise((resolve) => client[method](req, md, { deadline: Date.now() + 30_000 }, (err, res) => resolve([err, res])));
}
function receive(client, req, md) {
  return new Promise((resolve) => {
    const items = [];
    const s = client.ReceiveMessage(req, md, { deadline: Date.now() + 30_000 });
    s.on('data', (d) => items.push(d));
    s.on('error', () => undefined);
    s.on('status', (status) => resolve({ items, status }));
  });
}
function telemetryStatus(client, md, settings) {
  return new Promise((resolve) => {
    const s = client.Telemetry(md);
    s.on('error', () => undefined);
    s.on('status', resolve);
    s.write({ settings });
  });
}
async function openSettings(client, md, settings) {
  const s = client.Telemetry(md);
  s.on('error', () => undefined);
  const first = new Promise((resolve) => s.once('data', resolve));
  s.write({ settings });
  return { reply: await first, stream: s };
}
const eq = (st, code, message, what) => {
  assert(st?.code === code, `${what}: code ${st?.code} (${st?.message}), want ${code}`);
  if (message instanceof RegExp) assert(message.test(st.message), `${what}: message "${st.message}" does not match ${message}`);
  else if (message !== undefined) assert(st.message === message, `${what}: message "${st.message}", want "${message}"`);
};

export async function badInput(env, n) {
  const topic = n.topic('NORMAL', 1);
  const group = n.group();
  const client = new (messagingClient())(env.endpoint, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1 });
  const consumer = {
    client_type: 'SIMPLE_CONSUMER', request_timeout: sec(3),
    subscription: { group: { name: group }, subscriptions: [{ topic: { name: topic }, expression: { type: 'TAG', expression: '*' } }] },
  };
  const rreq = (extra = {}) => ({
    group: { name: group }, message_queue: { topic: { name: topic }, id: -1 }, filter_expression: { type: 'TAG', expression: '*' },
    batch_size: 16, invisible_duration: sec(15), long_polling_timeout: sec(5), ...extra,
  });
  const streams = [];
  try {
    // blank client id: in-band on unary calls, a status-only command on Telemetry
    const [, r1] = await unary(client, 'QueryRoute', { topic: { name: topic } }, rawMetadata(''));
    eq(r1.status, 'CLIENT_ID_REQUIRED', 'client id cannot be empty', 'QueryRoute without client id');
    // unknown client: Heartbeat
    const [, hb] = await unary(client, 'Heartbeat', { group: { name: group }, client_type: 'SIMPLE_CONSUMER' }, rawMetadata(`nobody-${n.run}`));
    eq(hb.status, 'UNRECOGNIZED_CLIENT_TYPE', 'cannot find client settings for this client', 'Heartbeat of an unknown client');
    // Receive before Settings (the proxy: NullPointerException)
    const early = await receive(client, rreq(), rawMetadata(`early-${n.run}`));
    eq(early.items[0]?.status, 'INTERNAL_SERVER_ERROR', undefined, 'Receive before Settings');
    assert(early.items.at(-1)?.delivery_timestamp, 'Receive before Settings: no delivery_timestamp');
    // Settings without pub_sub: the stream ends INVALID_ARGUMENT
    const st = await telemetryStatus(client, rawMetadata(`nopubsub-${n.run}`), { client_type: 'PRODUCER' });
    assert(st.code === grpc.status.INVALID_ARGUMENT && st.details === 'there is no publishing or subscription data in settings', `Telemetry without pub_sub: ${st.code} ${st.details}`);
    // a consumer with Settings
    const md = rawMetadata(`bad-${n.run}`);
    const open = await openSettings(client, md, consumer);
    streams.push(open.stream);
    eq(open.reply.status, 'OK', 'OK', 'Settings reply');
    const small = await receive(client, rreq({ invisible_duration: sec(5) }), md);
    eq(small.items[0]?.status, 'ILLEGAL_INVISIBLE_TIME', 'the invisibleTime is too small. min is 10000', 'Receive with 5 s invisible');
    const [, big] = await unary(client, 'ChangeInvisibleDuration', {
      group: { name: group }, topic: { name: topic }, receipt_handle: '0 1 2 3 0 broker-a 0 0 0', invisible_duration: sec(13 * 3600), message_id: 'x',
    }, md);
    eq(big.status, 'ILLEGAL_INVISIBLE_TIME', 'the invisibleTime is too large. max is 43200000', 'ChangeInvisibleDuration 13 h');
    // malformed handle
    const [, bad] = await unary(client, 'AckMessage', { group: { name: group }, topic: { name: topic }, entries: [{ message_id: 'm', receipt_handle: 'garbage' }] }, md);
    eq(bad.status, 'INTERNAL_SERVER_ERROR', 'INTERNAL_SERVER_ERROR', 'ack of a malformed handle (top)');
    eq(bad.entries?.[0]?.status, 'INTERNAL_SERVER_ERROR', /^Parse failed, dataList size 1/, 'ack of a malformed handle (entry)');
    // a real message: its handle rewritten into the past is refused, the real one acks, nothing is lost
    const pmd = rawMetadata(`badp-${n.run}`);
    const po = await openSettings(client, pmd, { client_type: 'PRODUCER', request_timeout: sec(3), publishing: { topics: [{ name: topic }] } });
    streams.push(po.stream);
    const [, sent] = await unary(client, 'SendMessage', { messages: [{
      topic: { name: topic }, body: Buffer.from('still here'),
      system_properties: { message_id: `01${String(Date.now()).padStart(32, '0')}`, message_type: 'NORMAL', body_encoding: 'IDENTITY' },
    }] }, pmd);
    eq(sent.status, 'OK', 'OK', 'send');
    const got = await until('the message', async () => (await receive(client, rreq(), md)).items.find((i) => i.message)?.message, 60_000);
    const handle = got.system_properties.receipt_handle;
    const parts = handle.split(' ');
    parts[1] = String(Date.now() - 3_600_000);
    const [, expired] = await unary(client, 'AckMessage', { group: { name: group }, topic: { name: topic }, entries: [{ message_id: 'm', receipt_handle: parts.join(' ') }] }, md);
    eq(expired.status, 'INVALID_RECEIPT_HANDLE', 'INVALID_RECEIPT_HANDLE', 'ack of an expired handle (top)');
    eq(expired.entries?.[0]?.status, 'INVALID_RECEIPT_HANDLE', /receipt handle is expired$/, 'ack of an expired handle (entry)');
    const [, ok] = await unary(client, 'AckMessage', { group: { name: group }, topic: { name: topic }, entries: [{ message_id: 'm', receipt_handle: handle }] }, md);
    eq(ok.status, 'OK', 'OK', 'ack of the live handle');
    // sizes: a body over maxMessageSize in-band, a frame over the inbound limit (130 MiB) RESOURCE_EXHAUSTED
    const [, tooBig] = await unary(client, 'SendMessage', { messages: [{ topic: { name: topic }, body: Buffer.alloc(4 * 1024 * 1024 + 1, 1), system_properties: { message_id: 'big' } }] }, pmd);
    eq(tooBig.status, 'MESSAGE_BODY_TOO_LARGE', 'message body cannot exceed the max 4194304', 'body over 4 MiB');
    // grpc-js (ours) answers RESOURCE_EXHAUSTED; grpc-java (the proxy) resets the stream while the client still
    // sends, which the client sees as CANCELLED. Either way the frame is refused and nothing else is affected.
    const [frameErr] = await unary(client, 'SendMessage', { messages: [{ topic: { name: topic }, body: Buffer.alloc(131 * 1024 * 1024, 1), system_properties: { message_id: 'huge' } }] }, pmd);
    assert([grpc.status.RESOURCE_EXHAUSTED, grpc.status.CANCELLED].includes(frameErr?.code), `131 MiB frame: ${frameErr?.code} ${frameErr?.details}`);
    // the connection and the Telemetry stream stay usable
    const [, after] = await unary(client, 'Heartbeat', { group: { name: group }, client_type: 'SIMPLE_CONSUMER' }, md);
    eq(after.status, 'OK', 'OK', 'Heartbeat after the errors');
    // RecallMessage on a NORMAL topic: the topic type check comes first
    const recallHandle = Buffer.from(`v1 ${topic} broker-a ${Date.now() + 60_000} 01ABCDEF`).toString('base64url');
    const [, recall] = await unary(client, 'RecallMessage', { topic: { name: topic }, recall_handle: recallHandle }, pmd);
    eq(recall.status, 'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE', /the expected type is NORMAL, but actual type is DELAY$/, 'RecallMessage on a NORMAL topic');
    // unimplemented RPCs
    const [unimpl] = await unary(client, 'UpdateOffset', {}, md);
    assert(unimpl?.code === grpc.status.UNIMPLEMENTED, `UpdateOffset: ${unimpl?.code}`);
  } finally {
    for (const s of streams) s.end();
    await sleep(200);
    client.close();
  }
}
