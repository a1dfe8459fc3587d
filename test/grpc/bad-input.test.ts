// Requests the stock clients never send, against our endpoint, with the codes (and where readable the texts) the
// official proxy 5.3.3 answers (observed; brief §3). The same requests run against the official proxy in the compat
// matrix (compat/grpc5/bad-input.mjs).
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { type RawClient, call, createTypedTopic, metadata, rawClient } from './helpers.js';

const sec = (s: number) => ({ seconds: s, nanos: 0 });

function receive(client: RawClient, req: unknown, md: grpc.Metadata, deadlineMs = 30_000): Promise<{ items: any[]; status: grpc.StatusObject }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve) => {
    const items: unknown[] = [];
    const s = client.ReceiveMessage(req, md, { deadline: Date.now() + deadlineMs });
    s.on('data', (d: unknown) => items.push(d));
    s.on('error', () => undefined);
    s.on('status', (status: grpc.StatusObject) => resolve({ items: items as never[], status }));
  });
}

/** Opens Telemetry and writes Settings; resolves with the first reply (and the stream). */
async function settings(client: RawClient, md: grpc.Metadata, s: unknown): Promise<{ reply: any; stream: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const stream = client.Telemetry(md);
  stream.on('error', () => undefined);
  const reply = new Promise((resolve) => stream.once('data', resolve));
  stream.write({ settings: s });
  return { reply: await reply, stream };
}

describe('gRPC endpoint: bad input gets the official Code', () => {
  let server: TestServer;
  let client: RawClient;
  const topic = 'GrpcBad';
  const group = 'GBad';
  const simpleSettings = {
    client_type: 'SIMPLE_CONSUMER', request_timeout: sec(3),
    subscription: { group: { name: group }, subscriptions: [{ topic: { name: topic }, expression: { type: 'TAG', expression: '*' } }] },
  };
  const receiveReq = (extra: Record<string, unknown> = {}) => ({
    group: { name: group }, message_queue: { topic: { name: topic }, id: -1 }, filter_expression: { type: 'TAG', expression: '*' },
    batch_size: 16, invisible_duration: sec(15), long_polling_timeout: sec(5), ...extra,
  });

  beforeAll(async () => {
    server = await startTestServer({ grpcMaxInboundMessageSize: 1024 * 1024 });
    await createTypedTopic(server, topic, 'NORMAL', 1);
    client = rawClient(server, { 'grpc.max_send_message_length': -1 });
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
  });

  it('a blank client id: CLIENT_ID_REQUIRED "client id cannot be empty" (unary and on Telemetry, which stays open)', async () => {
    const [, res] = await call(client, 'QueryRoute', { topic: { name: topic } }, metadata(''));
    expect(res.status).toEqual({ code: 'CLIENT_ID_REQUIRED', message: 'client id cannot be empty' });
    const { reply, stream } = await settings(client, metadata(''), simpleSettings);
    expect(reply.status).toEqual({ code: 'CLIENT_ID_REQUIRED', message: 'client id cannot be empty' });
    expect(reply.command).toBeUndefined();
    stream.end();
  });

  it('Heartbeat / NotifyClientTermination from an unknown client id: UNRECOGNIZED_CLIENT_TYPE', async () => {
    const [, hb] = await call(client, 'Heartbeat', { group: { name: group }, client_type: 'SIMPLE_CONSUMER' }, metadata('nobody'));
    expect(hb.status).toEqual({ code: 'UNRECOGNIZED_CLIENT_TYPE', message: 'cannot find client settings for this client' });
    const [, nt] = await call(client, 'NotifyClientTermination', { group: { name: group } }, metadata('nobody'));
    expect(nt.status.code).toBe('UNRECOGNIZED_CLIENT_TYPE');
  });

  it('Receive before Settings: INTERNAL_SERVER_ERROR (the proxy: a NullPointerException), then delivery_timestamp', async () => {
    const { items, status } = await receive(client, receiveReq(), metadata('no-settings-yet'));
    expect(status.code).toBe(grpc.status.OK);
    expect(items[0].status.code).toBe('INTERNAL_SERVER_ERROR');
    expect(items[0].status.message).toMatch(/settings/);
    expect(items[1].content).toBe('delivery_timestamp');
    expect(items).toHaveLength(2);
  });

  it('Telemetry without publishing or subscription: the stream ends INVALID_ARGUMENT', async () => {
    const stream = client.Telemetry(metadata('no-pubsub'));
    const st = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('error', () => undefined);
    stream.write({ settings: { client_type: 'PRODUCER' } });
    const s = await st;
    expect(s.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(s.details).toBe('there is no publishing or subscription data in settings');
  });

  it('a bad group in Settings ends the stream INVALID_ARGUMENT with the validator text', async () => {
    const stream = client.Telemetry(metadata('bad-group'));
    const st = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('error', () => undefined);
    stream.write({ settings: { ...simpleSettings, subscription: { ...simpleSettings.subscription, group: { name: 'bad group!' } } } });
    const s = await st;
    expect(s.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(s.details).toBe('process client telemetryCommand failed. the specified group[bad group!] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$');
  });

  it('invisible duration out of range: ILLEGAL_INVISIBLE_TIME on receive (min 10 s) and on change (max 12 h)', async () => {
    const md = metadata('invisible-client');
    const { stream } = await settings(client, md, simpleSettings);
    const { items } = await receive(client, receiveReq({ invisible_duration: sec(5) }), md);
    expect(items[0].status).toEqual({ code: 'ILLEGAL_INVISIBLE_TIME', message: 'the invisibleTime is too small. min is 10000' });
    const [, ch] = await call(client, 'ChangeInvisibleDuration', {
      group: { name: group }, topic: { name: topic }, receipt_handle: '0 1 2 3 0 broker-a 0 0 0', invisible_duration: sec(13 * 3600), message_id: 'x',
    }, md);
    expect(ch.status).toEqual({ code: 'ILLEGAL_INVISIBLE_TIME', message: 'the invisibleTime is too large. max is 43200000' });
    stream.end();
  });

  it('malformed and expired receipt handles: INTERNAL_SERVER_ERROR "Parse failed…" / INVALID_RECEIPT_HANDLE; a live message stays', async () => {
    const md = metadata('handle-client');
    const { stream } = await settings(client, md, simpleSettings);
    const [, bad] = await call(client, 'AckMessage', { group: { name: group }, topic: { name: topic }, entries: [{ message_id: 'm', receipt_handle: 'garbage' }] }, md);
    expect(bad.status).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'INTERNAL_SERVER_ERROR' });
    expect(bad.entries[0].status).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'Parse failed, dataList size 1' });
    const [, badChange] = await call(client, 'ChangeInvisibleDuration', {
      group: { name: group }, topic: { name: topic }, receipt_handle: 'garbage', invisible_duration: sec(20), message_id: 'm',
    }, md);
    expect(badChange.status).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'Parse failed, dataList size 1' });

    // A real handle, rewritten so that it expired (popTime field in the past): the ack is refused, the message stays.
    const producerMd = metadata('bad-input-producer');
    const p = await settings(client, producerMd, { client_type: 'PRODUCER', publishing: { topics: [{ name: topic }] } });
    const [, sent] = await call(client, 'SendMessage', { messages: [{
      topic: { name: topic }, body: Buffer.from('still here'),
      system_properties: { message_id: '01000000000000000000000000000000AA', message_type: 'NORMAL', body_encoding: 'IDENTITY' },
    }] }, producerMd);
    expect(sent.status.code).toBe('OK');
    const { items } = await receive(client, receiveReq(), md);
    const handle: string = items[1].message.system_properties.receipt_handle;
    const parts = handle.split(' ');
    parts[1] = String(Date.now() - 3_600_000);
    const [, expired] = await call(client, 'AckMessage', { group: { name: group }, topic: { name: topic }, entries: [{ message_id: 'm', receipt_handle: parts.join(' ') }] }, md);
    expect(expired.status).toEqual({ code: 'INVALID_RECEIPT_HANDLE', message: 'INVALID_RECEIPT_HANDLE' });
    expect(expired.entries[0].status).toEqual({ code: 'INVALID_RECEIPT_HANDLE', message: 'receipt handle is expired' });
    // the real handle still acks
    const [, ok] = await call(client, 'AckMessage', { group: { name: group }, topic: { name: topic }, entries: [{ message_id: 'm', receipt_handle: handle }] }, md);
    expect(ok.status).toEqual({ code: 'OK', message: 'OK' });
    stream.end();
    p.stream.end();
  });

  it('a frame over grpcMaxInboundMessageSize: RESOURCE_EXHAUSTED; a body over maxMessageSize in-band: MESSAGE_BODY_TOO_LARGE', async () => {
    const md = metadata('big-producer');
    const [err] = await call(client, 'SendMessage', { messages: [{
      topic: { name: topic }, body: Buffer.alloc(2 * 1024 * 1024, 1), system_properties: { message_id: 'big' },
    }] }, md);
    expect(err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // the connection is still usable
    const [, empty] = await call(client, 'SendMessage', { messages: [{ topic: { name: topic }, body: Buffer.alloc(0), system_properties: { message_id: 'e' } }] }, md);
    expect(empty.status).toEqual({ code: 'MESSAGE_BODY_EMPTY', message: 'message body cannot be empty' });
    const [, none] = await call(client, 'SendMessage', { messages: [] }, md);
    expect(none.status).toEqual({ code: 'MESSAGE_CORRUPTED', message: 'no message to send' });
    const [, sys] = await call(client, 'SendMessage', { messages: [{ topic: { name: topic }, body: Buffer.from('x'), user_properties: { TAGS: 'x' }, system_properties: { message_id: 'p' } }] }, md);
    expect(sys.status).toEqual({ code: 'ILLEGAL_MESSAGE_PROPERTY_KEY', message: 'property is used by system: TAGS' });
    const [, typed] = await call(client, 'SendMessage', { messages: [{ topic: { name: topic }, body: Buffer.from('x'), system_properties: { message_id: 'f', message_group: 'g' } }] }, md);
    expect(typed.status).toEqual({
      code: 'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE', message: 'TopicMessageType validate failed, the expected type is NORMAL, but actual type is FIFO',
    });
  });

  it('unknown topics, system topics, unimplemented RPCs', async () => {
    const md = metadata('misc');
    const unknown = 'NoSuchTopicHere';
    const [, sys] = await call(client, 'QueryRoute', { topic: { name: 'rmq_sys_wheel_timer' } }, md);
    expect(sys.status).toEqual({ code: 'ILLEGAL_TOPIC', message: 'cannot access system topic' });
    const [, qa] = await call(client, 'QueryAssignment', { topic: { name: unknown }, group: { name: group } }, md);
    expect(qa.status.code).toBe('TOPIC_NOT_FOUND');
    expect(qa.status.message).toBe(`CODE: 17  DESC: No topic route info in name server for the topic: ${unknown}\nFor more information, please visit the url, https://rocketmq.apache.org/docs/bestPractice/06FAQ`);
    const handle = Buffer.from(`v1 ${topic} broker-a ${Date.now() + 60_000} 01ABCDEF`).toString('base64url');
    const [, rNormal] = await call(client, 'RecallMessage', { topic: { name: topic }, recall_handle: handle }, md);
    expect(rNormal.status).toEqual({
      code: 'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE', message: 'TopicMessageType validate failed, the expected type is NORMAL, but actual type is DELAY',
    });
    await createTypedTopic(server, 'GrpcBadDelay', 'DELAY', 1);
    const [, rBad] = await call(client, 'RecallMessage', { topic: { name: 'GrpcBadDelay' }, recall_handle: 'not-a-handle' }, md);
    expect(rBad.status).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'recall handle is invalid' });
    const [, rOff] = await call(client, 'RecallMessage', { topic: { name: 'GrpcBadDelay' }, recall_handle: handle }, md);
    expect(rOff.status).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'recall failed, operation is forbidden' }); // recallMessageEnable=false
    const [err] = await call(client, 'UpdateOffset', {}, md);
    expect(err?.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(err?.details).toBe('Method apache.rocketmq.v2.MessagingService/UpdateOffset is unimplemented');
  });
});
