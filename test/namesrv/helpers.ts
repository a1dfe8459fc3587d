import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NAMESRV_SCHEMA, type NamesrvConfig, defaults } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { type Namesrv, type NamesrvOptions, createNamesrv } from '../../src/namesrv/index.js';

export const logger = silentLogger();

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-namesrv-'));
}

export interface TestNamesrv {
  ns: Namesrv;
  addr: string;
  config: NamesrvConfig;
  client: RemotingClient;
  /** Sends a request on the shared client and returns the response. */
  call(code: number, ext?: Record<string, string>, body?: Buffer | string): Promise<RemotingCommand>;
  stop(): Promise<void>;
}

export async function startNamesrv(overrides: Partial<NamesrvConfig> = {}, options: NamesrvOptions = {}): Promise<TestNamesrv> {
  const config: NamesrvConfig = {
    ...defaults(NAMESRV_SCHEMA),
    listenPort: 0,
    kvConfigPath: path.join(tempDir(), 'kvConfig.json'),
    ...overrides,
  };
  const ns = createNamesrv(config, logger, { host: '127.0.0.1', ...options });
  const port = await ns.start();
  const addr = `127.0.0.1:${port}`;
  const client = new RemotingClient(logger);
  return {
    ns,
    addr,
    config,
    client,
    call: (code, ext = {}, body) => request(client, addr, code, ext, body),
    async stop() {
      await client.close();
      await ns.shutdown();
    },
  };
}

export function request(
  client: RemotingClient,
  addr: string,
  code: number,
  ext: Record<string, string> = {},
  body?: Buffer | string,
): Promise<RemotingCommand> {
  const b = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return client.request(addr, createRequest(code, ext, b), 3000);
}

export interface TopicSpec {
  name: string;
  read?: number;
  write?: number;
  perm?: number;
  sysFlag?: number;
}

/** A RegisterBrokerBody as a Java broker's fastjson writes it (sorted keys, compact). */
export function registerBody(topics: TopicSpec[], dataVersion = { counter: 1, timestamp: 1700000000000 }): Buffer {
  const table = topics
    .map(
      (t) =>
        `"${t.name}":{"attributes":{},"order":false,"perm":${t.perm ?? 6},"readQueueNums":${t.read ?? 4},` +
        `"topicFilterType":"SINGLE_TAG","topicName":"${t.name}","topicSysFlag":${t.sysFlag ?? 0},"writeQueueNums":${t.write ?? 4}}`,
    )
    .join(',');
  return Buffer.from(
    `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":${dataVersion.counter},"stateVersion":0,` +
      `"timestamp":${dataVersion.timestamp}},"topicConfigTable":{${table}}}}`,
    'utf8',
  );
}

export interface BrokerSpec {
  cluster?: string;
  name: string;
  addr: string;
  id?: number;
  topics: TopicSpec[];
  dataVersion?: { counter: number; timestamp: number };
  ext?: Record<string, string>;
}

export function registerHeader(b: BrokerSpec): Record<string, string> {
  return {
    brokerAddr: b.addr,
    brokerId: String(b.id ?? 0),
    brokerName: b.name,
    clusterName: b.cluster ?? 'DefaultCluster',
    haServerAddr: b.addr.replace(/:(\d+)$/, (_, p) => `:${Number(p) + 1}`),
    compressed: 'false',
    ...b.ext,
  };
}

export function registerBroker(client: RemotingClient, nsAddr: string, b: BrokerSpec): Promise<RemotingCommand> {
  return request(client, nsAddr, RequestCode.REGISTER_BROKER, registerHeader(b), registerBody(b.topics, b.dataVersion));
}

/** System-ish topics every real broker registers, so a registration is never a single-topic one. */
export const BASE_TOPICS: TopicSpec[] = [{ name: 'SELF_TEST_TOPIC', read: 1, write: 1 }];

export function json(res: RemotingCommand): any {
  return JSON.parse(res.body!.toString('utf8'));
}
