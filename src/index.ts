// The embeddable server: a nameserver and a broker inside the calling process, for an application's own tests
// (the in-process alternative to a broker container). Ports 0 and a temporary store by default; stop() removes it.
//
//   import { startServer } from 'rocketmq-ts';
//   const mq = await startServer();          // mq.namesrvAddr → give it to the client under test
//   await mq.stop();
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Broker, createBroker } from './broker/broker-controller.js';
import { loadDLedgerMode } from './broker/dledger/dledger-loader.js';
import { BROKER_SCHEMA, type BrokerConfig, NAMESRV_SCHEMA, type NamesrvConfig, defaults } from './common/config.js';
import { type Logger, createLogger, silentLogger } from './common/logger.js';
import { type Namesrv, createNamesrv } from './namesrv/index.js';

export type { BrokerConfig, NamesrvConfig } from './common/config.js';
export type { Logger } from './common/logger.js';

export interface EmbeddedOptions {
  /** A pino logger, or a level name ('info', 'debug', ...); silent by default. */
  logger?: Logger | string;
}

export interface NamesrvOptions extends EmbeddedOptions {
  /** Any NAMESRV_SCHEMA key (listenPort defaults to 0: a free port). */
  config?: Partial<NamesrvConfig>;
}

export interface BrokerOptions extends EmbeddedOptions {
  /** Nameserver(s) to register with, `;`-separated. */
  namesrvAddr: string;
  /**
   * Any broker.conf key. Defaults here: listenPort 0, a new temporary storePathRootDir (removed by stop() unless
   * you give your own), 16 MiB commit-log files and 10,000-entry consume-queue files (small temp stores start fast).
   */
  config?: Partial<BrokerConfig>;
}

export interface ServerOptions extends EmbeddedOptions {
  broker?: Partial<BrokerConfig>;
  namesrv?: Partial<NamesrvConfig>;
}

export interface EmbeddedNamesrv {
  /** `127.0.0.1:port` */
  readonly addr: string;
  readonly port: number;
  readonly namesrv: Namesrv;
  stop(): Promise<void>;
}

export interface EmbeddedBroker {
  /** `brokerIP1:port`, as registered with the nameservers. */
  readonly addr: string;
  readonly port: number;
  readonly storeDir: string;
  readonly broker: Broker;
  /**
   * Creates a topic (read = write queues, perm 6) and registers it with the nameservers; resolves once they serve
   * its route. Clients without auto-create (ali-ons) need their topics created first.
   */
  createTopic(topic: string, queues?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedServer {
  readonly namesrvAddr: string;
  readonly brokerAddr: string;
  readonly storeDir: string;
  readonly namesrv: EmbeddedNamesrv;
  readonly broker: EmbeddedBroker;
  createTopic(topic: string, queues?: number): Promise<void>;
  /** Stops the broker (unregistered, store flushed), then the nameserver; removes a temporary store. */
  stop(): Promise<void>;
}

function loggerOf(o: EmbeddedOptions): Logger {
  if (!o.logger) return silentLogger();
  return typeof o.logger === 'string' ? createLogger(o.logger) : o.logger;
}

export async function startNamesrv(options: NamesrvOptions = {}): Promise<EmbeddedNamesrv> {
  const config: NamesrvConfig = { ...defaults(NAMESRV_SCHEMA), listenPort: 0, ...options.config };
  let tmp: string | undefined;
  if (options.config?.kvConfigPath === undefined) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketmq-ts-namesrv-'));
    config.kvConfigPath = path.join(tmp, 'kvConfig.json');
  }
  const namesrv = createNamesrv(config, loggerOf(options), { host: '127.0.0.1' });
  const port = await namesrv.start();
  return {
    addr: `127.0.0.1:${port}`,
    port,
    namesrv,
    async stop() {
      await namesrv.shutdown();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

export async function startBroker(options: BrokerOptions): Promise<EmbeddedBroker> {
  const ownStore = options.config?.storePathRootDir === undefined;
  const storeDir = ownStore ? fs.mkdtempSync(path.join(os.tmpdir(), 'rocketmq-ts-store-')) : options.config!.storePathRootDir!;
  const config: BrokerConfig = {
    ...defaults(BROKER_SCHEMA),
    brokerIP1: '127.0.0.1',
    listenPort: 0,
    mappedFileSizeCommitLog: 16 * 1024 * 1024,
    mappedFileSizeConsumeQueue: 20 * 10_000,
    ...options.config,
    namesrvAddr: options.namesrvAddr,
    storePathRootDir: storeDir,
  };
  await loadDLedgerMode(config);
  const broker = createBroker(config, loggerOf(options));
  try {
    await broker.start();
  } catch (err) {
    if (ownStore) fs.rmSync(storeDir, { recursive: true, force: true });
    throw err;
  }
  return {
    addr: broker.brokerAddr(),
    port: broker.port,
    storeDir,
    broker,
    async createTopic(topic, queues = 4) {
      const ctx = broker.context;
      ctx.topicConfigManager.createTopicIfAbsent(topic, queues, 6);
      await ctx.topicConfigManager.saved();
      await ctx.registerBrokerAll();
    },
    async stop() {
      await broker.shutdown();
      if (ownStore) fs.rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** A nameserver and one broker registered with it, both in this process. */
export async function startServer(options: ServerOptions = {}): Promise<EmbeddedServer> {
  const logger = loggerOf(options);
  const namesrv = await startNamesrv({ logger, config: options.namesrv });
  let broker: EmbeddedBroker;
  try {
    broker = await startBroker({ logger, namesrvAddr: namesrv.addr, config: options.broker });
  } catch (err) {
    await namesrv.stop();
    throw err;
  }
  return {
    namesrvAddr: namesrv.addr,
    brokerAddr: broker.addr,
    storeDir: broker.storeDir,
    namesrv,
    broker,
    createTopic: (topic, queues) => broker.createTopic(topic, queues),
    async stop() {
      await broker.stop();
      await namesrv.stop();
    },
  };
}
