import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Broker, createBroker } from '../../src/broker/broker-controller.js';
import { loadDLedgerMode } from '../../src/broker/dledger/dledger-loader.js';
import { BROKER_SCHEMA, type BrokerConfig, NAMESRV_SCHEMA, defaults } from '../../src/common/config.js';
import { createLogger, silentLogger } from '../../src/common/logger.js';
import { createNamesrv } from '../../src/namesrv/index.js';
import { RequestCode } from '../../src/common/request-code.js';
import { createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';

export interface TestServer {
  namesrvAddr: string;
  brokerAddr: string;
  storeDir: string;
  broker: Broker;
  /** Stops the broker cleanly and starts it again on the same port and store. */
  /** Stops and starts the broker on the same store; `whileStopped` runs in between (e.g. to edit its files). */
  restartBroker(whileStopped?: () => void): Promise<void>;
  stop(): Promise<void>;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `rmqts-${prefix}-`));
}

/** Starts a real nameserver and broker in this process on ephemeral ports with a temp store. */
export async function startTestServer(overrides: Partial<BrokerConfig> = {}): Promise<TestServer> {
  const logger = process.env.RMQ_TEST_LOG ? createLogger(process.env.RMQ_TEST_LOG) : silentLogger();
  const storeDir = overrides.storePathRootDir ?? tempDir('store');
  const nsConfig = defaults(NAMESRV_SCHEMA);
  nsConfig.listenPort = 0;
  nsConfig.kvConfigPath = path.join(storeDir, 'namesrv', 'kvConfig.json');
  const namesrv = createNamesrv(nsConfig, logger);
  const nsPort = await namesrv.start();
  const namesrvAddr = `127.0.0.1:${nsPort}`;

  const config: BrokerConfig = {
    ...defaults(BROKER_SCHEMA),
    brokerIP1: '127.0.0.1',
    listenPort: 0,
    grpcServerPort: 0,
    namesrvAddr,
    storePathRootDir: storeDir,
    mappedFileSizeCommitLog: 16 * 1024 * 1024,
    mappedFileSizeConsumeQueue: 20 * 10_000,
    ...overrides,
  };
  await loadDLedgerMode(config);
  let broker = createBroker(config, logger);
  try {
    await broker.start();
  } catch (err) {
    await namesrv.shutdown();
    throw err;
  }
  const port = broker.port;
  const grpcPort = broker.grpcPort;
  // The HA port too: with listenPort fixed for the restart, haListenPort 0 would mean listenPort + 1 — a port no one
  // reserved, which another test's connection may hold (EADDRINUSE on a loaded suite run).
  const haPort = broker.haPort;

  const server: TestServer = {
    namesrvAddr,
    brokerAddr: broker.brokerAddr(),
    storeDir,
    broker,
    async restartBroker(whileStopped?: () => void) {
      await broker.shutdown();
      whileStopped?.();
      broker = createBroker({ ...config, listenPort: port, grpcServerPort: grpcPort, haListenPort: haPort }, logger);
      server.broker = broker;
      await broker.start();
    },
    async stop() {
      await broker.shutdown();
      await namesrv.shutdown();
      if (!overrides.storePathRootDir) fs.rmSync(storeDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Waits until `predicate` holds, polling; throws with `what` after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Creates a topic the way mqadmin updateTopic does (UPDATE_AND_CREATE_TOPIC to the broker), then waits until
 * the nameserver serves its route. ali-ons has no auto-create fallback, so its tests create topics first.
 */
export async function createTopic(server: TestServer, topic: string, queues = 4): Promise<void> {
  const client = new RemotingClient(silentLogger());
  try {
    const res = await client.request(
      server.brokerAddr,
      createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
        topic,
        defaultTopic: 'TBW102',
        readQueueNums: String(queues),
        writeQueueNums: String(queues),
        perm: '6',
        topicFilterType: 'SINGLE_TAG',
        topicSysFlag: '0',
        order: 'false',
      }),
      5000,
    );
    if (res.code !== 0) throw new Error(`create topic ${topic}: code ${res.code} ${res.remark ?? ''}`);
    await waitFor(
      async () => (await client.request(server.namesrvAddr, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }), 5000)).code === 0,
      10_000,
      `route of ${topic}`,
    );
  } finally {
    await client.close();
  }
}
