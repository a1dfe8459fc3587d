// Helpers for the gRPC endpoint tests: the stock Node 5.x client (rocketmq-client-nodejs 1.0.8) against an
// in-process server, topics with a message.type, and reading back what the store holds.
import { createRequire } from 'node:module';
import { RequestCode } from '../../src/common/request-code.js';
import { createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { silentLogger } from '../../src/common/logger.js';
import { parseProperties } from '../../src/common/message-properties.js';
import { type DecodedRecord, decodeRecord } from '../../src/store/index.js';
import type { TestServer } from '../helpers/server.js';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const rmq: any = require('rocketmq-client-nodejs');

export const quietLogger = { info() {}, warn() {}, error() {}, debug() {}, close() {} };

export function grpcEndpoint(server: TestServer): string {
  return `127.0.0.1:${server.broker.grpcPort}`;
}

/** UPDATE_AND_CREATE_TOPIC with `+message.type=TYPE` (what `mqadmin updateTopic -a +message.type=TYPE` sends). */
export async function createTypedTopic(server: TestServer, topic: string, type: string, queues = 4): Promise<void> {
  const client = new RemotingClient(silentLogger());
  try {
    const res = await client.request(server.brokerAddr, createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic, defaultTopic: 'TBW102', readQueueNums: String(queues), writeQueueNums: String(queues), perm: '6',
      topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false', attributes: `+message.type=${type}`,
    }), 5000);
    if (res.code !== 0) throw new Error(`create topic ${topic}: ${res.code} ${res.remark}`);
  } finally {
    await client.close();
  }
}

/** Every record stored on a topic, over all its queues, in queue then offset order. */
export async function storedRecords(server: TestServer, topic: string): Promise<Array<DecodedRecord & { props: Map<string, string> }>> {
  const store = server.broker.context.store;
  const out: Array<DecodedRecord & { props: Map<string, string> }> = [];
  for (const q of store.getQueueIds(topic).sort((a, b) => a - b)) {
    const res = await store.getMessage(topic, q, 0, 1024, 64 * 1024 * 1024);
    for (const raw of res.records) {
      const rec = decodeRecord(Buffer.from(raw));
      out.push({ ...rec, props: parseProperties(rec.propertiesString) });
    }
  }
  return out;
}

import * as grpc from '@grpc/grpc-js';
import { messagingServiceClient } from '../../src/grpc/proto.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RawClient = any;

/** A plain grpc-js client of MessagingService (proto-loader objects), for requests the stock clients never send. */
export function rawClient(server: TestServer, options: grpc.ChannelOptions = {}): RawClient {
  const Client = messagingServiceClient();
  return new Client(grpcEndpoint(server), grpc.credentials.createInsecure(), options);
}

export function metadata(clientId: string, extra: Record<string, string> = {}): grpc.Metadata {
  const md = new grpc.Metadata();
  if (clientId) md.set('x-mq-client-id', clientId);
  md.set('x-mq-language', 'JAVA');
  md.set('x-mq-protocol', 'v2');
  md.set('x-mq-client-version', '5.2.0');
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return md;
}

/** A unary call as a promise of [error, response]. */
export function call(client: RawClient, method: string, req: unknown, md: grpc.Metadata, options: grpc.CallOptions = {}): Promise<[grpc.ServiceError | null, RawClient]> {
  return new Promise((resolve) => client[method](req, md, options, (err: grpc.ServiceError | null, res: unknown) => resolve([err, res])));
}
