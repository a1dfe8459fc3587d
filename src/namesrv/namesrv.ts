import type { Logger } from 'pino';
import { type NamesrvConfig, bufferLimitsOf, expandHome } from '../common/config.js';
import type { ConnectionLimits } from '../remoting/connection.js';
import { type ProcessorTable, RequestDispatcher } from '../remoting/dispatcher.js';
import { RemotingServer } from '../remoting/server.js';
import { TlsAcceptor, createServerTlsContext } from '../remoting/tls.js';
import type { NamesrvContext } from './context.js';
import { KvConfigManager } from './kv-config-manager.js';
import { brokerRegistrationProcessors } from './processors/broker-registration.js';
import { clusterTopicProcessors } from './processors/cluster-topics.js';
import { kvConfigProcessors } from './processors/kv-config.js';
import { namesrvConfigProcessors } from './processors/namesrv-config.js';
import { routeProcessors } from './processors/route.js';
import { topicAdminProcessors } from './processors/topic-admin.js';
import { RouteInfoManager } from './route-info-manager.js';

export interface NamesrvOptions {
  /** Listen address; default 0.0.0.0 (Java binds all interfaces). */
  host?: string;
  /** Clock for broker liveness (tests). */
  now?: () => number;
  connectionLimits?: ConnectionLimits;
}

export interface Namesrv {
  /** Loads the KV config, listens on config.listenPort (0 = ephemeral), starts the liveness scan; returns the bound port. */
  start(): Promise<number>;
  /** Stops the scan, closes the listener and every connection, waits for pending KV writes. */
  shutdown(): Promise<void>;
  readonly server: RemotingServer;
  readonly routes: RouteInfoManager;
  readonly kv: KvConfigManager;
}

/** The nameserver: route tables, broker liveness and KV config behind one RemotingServer (Java: NamesrvController). */
export function createNamesrv(config: NamesrvConfig, parentLogger: Logger, options: NamesrvOptions = {}): Namesrv {
  const logger = parentLogger.child({ component: 'namesrv' });
  const dispatcher = new RequestDispatcher(logger);
  const server = new RemotingServer(logger, dispatcher, options.connectionLimits, bufferLimitsOf(config));
  const routes = new RouteInfoManager(
    {
      // read per registration so UPDATE_NAMESRV_CONFIG takes effect
      get brokerChannelExpiredTimeMs() {
        return config.brokerChannelExpiredTime;
      },
      now: options.now,
    },
    logger,
  );
  const kv = new KvConfigManager(expandHome(config.kvConfigPath), logger);
  const ctx: NamesrvContext = { config, routes, kv, logger };

  const tables: ProcessorTable[] = [
    brokerRegistrationProcessors(ctx),
    routeProcessors(ctx),
    clusterTopicProcessors(ctx),
    topicAdminProcessors(ctx),
    kvConfigProcessors(ctx),
    namesrvConfigProcessors(ctx),
  ];
  for (const table of tables) dispatcher.registerTable(table);
  // Java: BrokerHousekeepingService — a closed broker channel unregisters that broker at once.
  server.onConnection((conn) => conn.onClose((c) => routes.onConnectionClosed(c)));

  let scanTimer: NodeJS.Timeout | undefined;
  let started = false;

  return {
    server,
    routes,
    kv,
    async start() {
      if (started) throw new Error('namesrv already started');
      started = true;
      await kv.load();
      const tlsMode = config['tls.server.mode'];
      if (tlsMode !== 'disabled') server.useTls(new TlsAcceptor(tlsMode, createServerTlsContext(config), config, logger));
      const port = await server.listen(config.listenPort, options.host ?? '0.0.0.0');
      // Java: first scan after one interval, then every interval.
      scanTimer = setInterval(() => {
        try {
          routes.scanNotActiveBrokers();
        } catch (err) {
          logger.error({ err }, 'scan not active brokers failed');
        }
      }, config.scanNotActiveBrokerInterval);
      scanTimer.unref();
      logger.info({ port }, 'namesrv started');
      return port;
    },
    async shutdown() {
      if (scanTimer) clearInterval(scanTimer);
      scanTimer = undefined;
      await server.close();
      await kv.flush();
      logger.info('namesrv stopped');
    },
  };
}
