import path from 'node:path';
import { type BrokerConfig, bufferLimitsOf, ConfigError, pick } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { RequestCode } from '../common/request-code.js';
import { GrpcEndpoint, grpcPortToBind } from '../grpc/server.js';
import { RemotingClient } from '../remoting/client.js';
import { type ProcessorTable, RequestDispatcher } from '../remoting/dispatcher.js';
import { RemotingServer } from '../remoting/server.js';
import { TlsAcceptor, clientTlsOptions, createServerTlsContext } from '../remoting/tls.js';
import { STORE_SCHEMA, createMessageStore, type MessageStore } from '../store/index.js';
import { HaClient } from '../ha/ha-client.js';
import { HaService } from '../ha/ha-service.js';
import { ColdDataFlowControl } from './coldctr/cold-data-flow-control.js';
import { BrokerRoleSwitch, prepareRoleConfig } from './broker-role.js';
import type { DLedgerNodeFactory } from './dledger/dledger-mode.js';
import { dledgerMode } from './dledger/dledger-loader.js';
import { DLedgerRoleChangeHandler } from './dledger/role-change-handler.js';
import type { DLedgerCommitLog } from '../ha/dledger/dledger-commit-log.js';
import { gateByRole } from './role-gate.js';
import { SlaveSynchronize } from './slave/slave-synchronize.js';
import { adminHaProcessors } from './processors/admin-ha.js';
import { ConsumerManager } from './client/consumer-manager.js';
import { ProducerManager } from './client/producer-manager.js';
import { RebalanceLockManager } from './client/rebalance-lock-manager.js';
import type { BrokerContext, BrokerStats } from './context.js';
import { PullRequestHoldService } from './long-polling/pull-request-hold-service.js';
import { plainAclHook } from './acl/acl-hook.js';
import { setupAuth } from './auth/auth-setup.js';
import { PlainAclManager } from './acl/plain-acl-manager.js';
import { BrokerMetrics } from './metrics/broker-metrics.js';
import { metricsHandler, rpcMetricsHook, startHttpEndpoint } from './metrics/metrics-server.js';
import { NamesrvRegistration } from './namesrv-registration.js';
import type { WebConsole } from './web/console-server.js';
import { ConsumerOffsetManager } from './offset/consumer-offset-manager.js';
import { aclAdminProcessors } from './processors/acl-admin.js';
import { authAdminProcessors } from './processors/auth-admin.js';
import { adminBrokerProcessors } from './processors/admin-broker.js';
import { adminConsumerRelayProcessors } from './processors/admin-consumer-relay.js';
import { adminGroupProcessors } from './processors/admin-group.js';
import { adminStatsProcessors } from './processors/admin-stats.js';
import { adminColdDataProcessors } from './processors/admin-cold-data.js';
import { adminTransactionProcessors } from './processors/admin-transaction.js';
import { adminStoreProcessors } from './processors/admin-store.js';
import { adminOffsetProcessors } from './processors/admin-offset.js';
import { adminTopicProcessors } from './processors/admin-topic.js';
import { clientManageProcessors } from './processors/client-manage.js';
import { consumerListProcessors } from './processors/consumer-list.js';
import { consumerOffsetProcessors } from './processors/consumer-offset.js';
import { endTransactionProcessors } from './processors/end-transaction.js';
import { lockProcessors } from './processors/lock.js';
import { withNameChecks } from './processors/name-checks.js';
import { pullMessageProcessors } from './processors/pull-message.js';
import { ackMessageProcessors } from './processors/ack-message.js';
import { changeInvisibleProcessors } from './processors/change-invisible.js';
import { popMessageProcessors } from './processors/pop-message.js';
import { popNotificationProcessors } from './processors/pop-notification.js';
import { namesrvRouteFetcher, queryAssignmentProcessors } from './processors/query-assignment.js';
import { AssignmentService } from './pop/assignment-service.js';
import { PopService } from './pop/pop-service.js';
import { PopInflightCounter } from './pop/pop-inflight.js';
import { queryMessageProcessors } from './processors/query-message.js';
import { sendBackProcessors } from './processors/send-back.js';
import { sendReplyProcessors } from './processors/send-reply.js';
import { sendMessageProcessors } from './processors/send-message.js';
import { recallMessageProcessors } from './processors/recall-message.js';
import { parseMessageDelayLevel } from './schedule/delay-levels.js';
import { ScheduleMessageService } from './schedule/schedule-message-service.js';
import { SubscriptionGroupManager } from './subscription/subscription-group-manager.js';
import { TimerMessageService } from './timer/timer-message-service.js';
import { TopicConfigManager } from './topic/topic-config-manager.js';
import { TransactionCheckService } from './transaction/transaction-check-service.js';
import { TransactionalMessageService } from './transaction/transactional-message-service.js';
import { SAMPLE_INTERVAL_MS as STATS_SAMPLE_INTERVAL_MS, StatsItems } from './stats-items.js';
import { timerCheckpointPath } from './timer/timer-checkpoint.js';
import { saveFileAtomicSync } from '../common/table-file.js';

export interface Broker {
  start(): Promise<void>;
  shutdown(): Promise<void>;
  brokerAddr(): string;
  readonly port: number;
  /** The HA port bound (0 before start). */
  readonly haPort: number;
  /** The gRPC (5.x client) endpoint's port; −1 when grpcServerPort is −1. */
  readonly grpcPort: number;
  readonly context: BrokerContext;
  /** POP consumption (pop, ack, change invisible time, dead letters), for every transport. */
  readonly pop: PopService;
  /** ACL 1.0 state when aclEnable is on. */
  readonly acl: PlainAclManager | undefined;
  /** The Prometheus endpoint's port when metricsExporterType=PROM. */
  metricsPort(): number | undefined;
  /** The admin web page's port when adminWebPort >= 0. */
  webConsolePort(): number | undefined;
}

/** How often the ACL file is checked for changes (Java AclFileWatchService compares digests on a timer too). */
const ACL_FILE_WATCH_INTERVAL_MS = 1000;

export interface BrokerOptions {
  /** DLedger mode: how the group member is built (default: ours over its file store). */
  dledgerNodeFactory?: DLedgerNodeFactory;
}

/** The composition root (Java BrokerController): builds managers, store and processors; owns timers. */
export function createBroker(config: BrokerConfig, logger: Logger, options: BrokerOptions = {}): Broker {
  const log = logger.child({ component: 'broker' });
  prepareRoleConfig(config);
  const dispatcher = new RequestDispatcher(log);
  const server = new RemotingServer(log, dispatcher, undefined, bufferLimitsOf(config));
  const client = new RemotingClient(log, undefined, clientTlsOptions(config));
  let boundPort = config.listenPort;
  // Asked on every send (the stored storeHost): one string per (ip, port), not a new one per call.
  let addrCache = { ip: '', port: -1, addr: '' };
  const brokerAddr = () => {
    if (addrCache.ip !== config.brokerIP1 || addrCache.port !== boundPort) {
      addrCache = { ip: config.brokerIP1, port: boundPort, addr: `${config.brokerIP1}:${boundPort}` };
    }
    return addrCache.addr;
  };

  // DLedger mode (enableDLegerCommitLog): the commit log is the group's Raft log; no HA port (DefaultMessageStore).
  // Its modules are loaded by loadDLedgerMode (dledger-loader.ts), awaited by whoever creates the broker.
  const dledger = config.enableDLegerCommitLog ? dledgerMode().createDLedgerParts(config, log, options.dledgerNodeFactory) : undefined;
  // The store takes its keys (STORE_SCHEMA) from the broker's config; runtime changes reach it via updateConfig.
  const messageStore = createMessageStore(pick(STORE_SCHEMA, config), log.child({ component: 'store' }), undefined, dledger?.commitLogFactory);
  const store: MessageStore = messageStore;
  // Replication: every broker listens on the HA port; a slave links to its master's (src/ha).
  const haLog = log.child({ component: 'ha' });
  const haService = dledger ? undefined : new HaService(messageStore.commitLog, config, haLog);
  const haClient = dledger ? undefined : new HaClient(messageStore.commitLog, config, haLog);

  let registration: NamesrvRegistration | undefined;
  const topicConfigManager = new TopicConfigManager(config, log, () => void registration?.registerAll());
  let slaveSync: SlaveSynchronize | undefined;
  let lastTimerCheckpoint: Buffer | undefined;
  registration = new NamesrvRegistration(config, client, topicConfigManager, brokerAddr, log, {
    // DLedger mode registers the address it would have (Java getHAServerAddr) though nothing listens there.
    haServerAddr: () => `${config.brokerIP2 || config.brokerIP1}:${haService ? haService.port : config.haListenPort || boundPort + 1}`,
    // Java BrokerController.handleRegisterBrokerResult: the master's HA address (unless haMasterAddress pins it)
    // and, always, the master address metadata is synced from (none while the nameserver knows no live master).
    onResult: (r) => {
      haClient?.updateMasterAddress(r.haServerAddr);
      if (slaveSync) slaveSync.masterAddr = r.masterAddr ?? null;
    },
  });
  const subscriptionGroupManager = new SubscriptionGroupManager(config, log);
  const consumerOffsetManager = new ConsumerOffsetManager(config, log);
  const consumerManager = new ConsumerManager(config, log, subscriptionGroupManager);
  const producerManager = new ProducerManager(log);
  const rebalanceLockManager = new RebalanceLockManager(config);
  const pullRequestHoldService = new PullRequestHoldService(log);
  const coldData = new ColdDataFlowControl(config);
  const scheduleMessageService = new ScheduleMessageService(
    config.storePathRootDir,
    parseMessageDelayLevel(config.messageDelayLevel),
    store,
    log.child({ component: 'schedule' }),
  );
  const timerMessageService = new TimerMessageService(config, store, log.child({ component: 'timer' }));
  const transactionalMessageService = new TransactionalMessageService({
    config,
    store,
    topicConfigManager,
    consumerOffsetManager,
    brokerAddr,
    logger: log.child({ component: 'transaction' }),
  });
  const transactionCheckService = new TransactionCheckService({
    tx: transactionalMessageService,
    producerManager,
    topicConfigManager,
    brokerName: () => config.brokerName,
    logger: log.child({ component: 'transaction-check' }),
    onDiscarded: (topic, bornTimestampMs) => stats.metrics?.transactionFinished(topic, 'discard', bornTimestampMs),
  });
  slaveSync = new SlaveSynchronize({
    config, client, logger: log.child({ component: 'slave-sync' }), topics: topicConfigManager, offsets: consumerOffsetManager,
    groups: subscriptionGroupManager, schedule: scheduleMessageService, selfAddr: brokerAddr,
    // Kept as Java's config/timercheck: taken over by the timer service if this store is ever started as a master.
    onTimerCheckpoint: (body) => {
      const page = Buffer.alloc(4096);
      body.copy(page, 0, 0, Math.min(body.length, 56));
      if (lastTimerCheckpoint?.equals(page)) return;
      lastTimerCheckpoint = page;
      saveFileAtomicSync(timerCheckpointPath(config.storePathRootDir), page);
    },
  });
  const roleSwitch = new BrokerRoleSwitch({
    config, store: messageStore, ha: haService, haClient, slaveSync, schedule: scheduleMessageService, timer: timerMessageService,
    transactionCheck: transactionCheckService, registerAll: (o) => registration.registerAll(o), logger: log,
    dledger: dledger !== undefined,
    // pop is built below; role changes come only after start
    popRevive: dledger ? { start: () => pop.revive.start(), shutdown: () => pop.revive.shutdown() } : undefined,
  });
  const roleHandler = dledger
    ? new DLedgerRoleChangeHandler({
      config, commitLog: messageStore.commitLog as DLedgerCommitLog, store: messageStore, roleSwitch, logger: log.child({ component: 'dledger-role' }),
    })
    : undefined;
  const stats: BrokerStats = { msgPutTotal: 0, msgGetTotal: 0, items: new StatsItems() };
  setInterval(() => stats.items.sample(), STATS_SAMPLE_INTERVAL_MS).unref();

  const startTimeMs = Date.now();
  const ctx: BrokerContext = {
    config,
    logger: log,
    store,
    topicConfigManager,
    subscriptionGroupManager,
    consumerOffsetManager,
    consumerManager,
    producerManager,
    rebalanceLockManager,
    pullRequestHoldService,
    coldData,
    scheduleMessageService,
    timerMessageService,
    transactionalMessageService,
    brokerAddr,
    registerBrokerAll: () => registration.registerAll(),
    registerTopic: (tc) => registration.registerTopic(tc),
    stats,
    startTimeMs,
    popInflight: new PopInflightCounter(startTimeMs),
    ha: {
      // Java DefaultHAService.getRuntimeInfo: a slave shows its link to the master, a master its slaves' links.
      runtimeInfo: () => {
        const isSlave = config.brokerRole === 'SLAVE';
        const links = haService ? haService.connectionInfo() : { haConnectionInfo: [], inSyncSlaveNums: 0, masterCommitLogMaxOffset: store.getMaxPhyOffset() };
        return {
          haClientRuntimeInfo: isSlave && haClient ? haClient.info() : { activated: false, lastReadTimestamp: 0, lastWriteTimestamp: 0, masterFlushOffset: 0, maxOffset: 0, transferredByteInSecond: 0 },
          haConnectionInfo: isSlave ? [] : links.haConnectionInfo,
          inSyncSlaveNums: isSlave ? 0 : links.inSyncSlaveNums,
          master: !isSlave,
          masterCommitLogMaxOffset: isSlave ? 0 : links.masterCommitLogMaxOffset,
        };
      },
    },
  };

  const pop = new PopService(ctx);
  const assignments = new AssignmentService(ctx, namesrvRouteFetcher(client, () => config.namesrvAddr));

  // Every request family the broker serves, by transport-independent table (Java BrokerController.registerProcessor).
  const processorTables: ProcessorTable[] = [
    adminHaProcessors(ctx),
    sendMessageProcessors(ctx),
    recallMessageProcessors(ctx),
    pullMessageProcessors(ctx),
    popMessageProcessors(pop),
    ackMessageProcessors(pop),
    changeInvisibleProcessors(pop),
    popNotificationProcessors(pop),
    queryAssignmentProcessors(assignments),
    queryMessageProcessors(ctx),
    sendBackProcessors(ctx),
    sendReplyProcessors(ctx),
    endTransactionProcessors(ctx),
    consumerOffsetProcessors(ctx),
    clientManageProcessors(ctx),
    consumerListProcessors(ctx),
    lockProcessors(ctx),
    adminTopicProcessors(ctx),
    adminGroupProcessors(ctx),
    adminStoreProcessors(ctx),
    adminColdDataProcessors(ctx, coldData),
    adminTransactionProcessors(ctx),
    adminStatsProcessors(ctx),
    adminOffsetProcessors(ctx),
    adminConsumerRelayProcessors(ctx),
    adminBrokerProcessors(ctx),
  ];
  const aclFile = path.resolve(config.rocketmqHome, config['rocketmq.acl.plain.file']);
  const acl = config.aclEnable ? new PlainAclManager(aclFile, log.child({ component: 'acl' })) : undefined;
  processorTables.push(aclAdminProcessors(ctx, acl));
  const auth = setupAuth(config, log.child({ component: 'auth' }));
  processorTables.push(authAdminProcessors(ctx, auth?.store));
  // What the role refuses (role-gate.ts) sits in front of the processors it concerns.
  for (const table of processorTables) dispatcher.registerTable(gateByRole(config, withNameChecks(table)));
  // A single message's body cut by socket chunks goes to the commit log as those pieces (no join copy).
  dispatcher.keepBodyParts([RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2]);
  // A 4.9.8 slave counts replicated messages as puts (its store statistics; 5.3.3 counts only sends).
  store.onDispatch(() => {
    if (config.brokerRole === 'SLAVE' && config.haSemantics === '4.9.8') stats.msgPutTotal++;
  });
  let metrics: BrokerMetrics | undefined;
  let metricsServer: import('node:http').Server | undefined;
  let webConsole: WebConsole | undefined;
  if (config.metricsExporterType === 'PROM') {
    metrics = new BrokerMetrics(ctx, (qid) => pop.revive.behind(qid));
    stats.metrics = metrics;
    timerMessageService.events = metrics;
    dispatcher.addHook(rpcMetricsHook(metrics));
  } else if (config.metricsExporterType !== 'DISABLE') {
    log.warn({ metricsExporterType: config.metricsExporterType }, 'metrics exporter not supported (only PROM); metrics are off');
  }
  // access control after the metrics hook, so refused requests are timed and counted too (NO_PERMISSION ...)
  if (acl) dispatcher.addHook(plainAclHook(acl, log.child({ component: 'acl' })));
  if (auth) dispatcher.addHook(auth.hook);
  // The gRPC endpoint for 5.x clients (the official proxy's MessagingService), a second transport onto the services.
  const grpcBindPort = grpcPortToBind(config);
  const grpc = grpcBindPort >= 0 ? new GrpcEndpoint({ ctx, dispatcher, pop, logger: log.child({ component: 'grpc' }) }) : undefined;

  let started = false;

  return {
    context: ctx,
    pop,
    acl,
    webConsolePort: () => webConsole?.port,
    metricsPort: () => (metricsServer?.address() as import('node:net').AddressInfo | null)?.port,
    brokerAddr,
    get port() {
      return boundPort;
    },
    get haPort() {
      return haService?.port ?? 0;
    },
    get grpcPort() {
      return grpc?.port ?? -1;
    },
    async start() {
      if (acl) {
        try {
          acl.load();
        } catch (err) {
          throw new ConfigError(`aclEnable: ${aclFile}: ${(err as Error).message}`);
        }
        acl.watch(ACL_FILE_WATCH_INTERVAL_MS);
      }
      await auth?.start();
      // bound first: a port in use stops start-up before the store opens
      if (metrics) {
        metricsServer = await startHttpEndpoint(
          { portKey: 'metricsPromExporterPort', host: config.metricsPromExporterHost, port: config.metricsPromExporterPort },
          metricsHandler(metrics),
          log,
        );
        log.info({ addr: metricsServer.address() }, 'Prometheus metrics endpoint listening');
      }
      topicConfigManager.load();
      subscriptionGroupManager.load();
      consumerOffsetManager.load();
      scheduleMessageService.load();
      pop.load();
      assignments.modes.load();
      store.onDispatch(pullRequestHoldService.onDispatch);
      store.onDispatch(pop.onDispatch);
      store.onDispatch(scheduleMessageService.onDispatch);
      store.onDispatch(timerMessageService.onDispatch);
      timerMessageService.load();
      // in DLedger mode the node starts at the end of this (peer port, elections); its role events wait for roleHandler.open()
      await store.start();
      // haListenPort 0: listenPort + 1 (Java 5.3.3), or a free port when listenPort is 0 too.
      if (haService) await haService.listen(config.haListenPort || (config.listenPort > 0 ? config.listenPort + 1 : 0));
      transactionalMessageService.start();
      // DLedger mode: no role services and no registration at start; the first role change brings them.
      if (!dledger) await roleSwitch.applyRole(config.brokerRole, { register: false });
      pop.start();
      coldData.start();
      topicConfigManager.persist();
      const tlsMode = config['tls.server.mode'];
      if (tlsMode !== 'disabled') server.useTls(new TlsAcceptor(tlsMode, createServerTlsContext(config), config, log));
      boundPort = await server.listen(config.listenPort);
      if (config.listenPort > 2 && config.fastListenPort !== -1) {
        const vipPort = config.fastListenPort || config.listenPort - 2;
        if (!(await server.listenAlso(vipPort))) log.warn({ port: vipPort }, 'could not bind the VIP channel port; clients with vipChannelEnabled=true need it');
      }
      if (grpc) {
        await grpc.listen(grpcBindPort).catch((err: Error) => {
          throw new Error(`grpcServerPort ${grpcBindPort}: ${err.message}`);
        });
      }
      if (config.adminWebPort >= 0) {
        // loaded only when on (off by default)
        const { startWebConsole } = await import('./web/console-server.js');
        webConsole = await startWebConsole(ctx, client, log.child({ component: 'web' }));
      }
      consumerOffsetManager.startPersisting(config.flushConsumerOffsetInterval);
      started = true;
      roleHandler?.open();
      await registration.start({ registerNow: !dledger });
      log.info({ addr: brokerAddr(), store: config.storePathRootDir }, 'broker started');
      // the gRPC port is bound; its grpc-js server is made once the caller is done starting (or by a first client)
      grpc?.warmUp();
    },
    async shutdown() {
      if (!started) return;
      started = false;
      await registration.unregisterAll();
      pullRequestHoldService.shutdown();
      coldData.shutdown();
      await pop.shutdown();
      await roleHandler?.stop();
      await roleSwitch.stopAll();
      await haService?.close();
      consumerManager.shutdown();
      await grpc?.shutdown();
      await server.close();
      await client.close();
      await acl?.close();
      await auth?.store.close();
      if (metricsServer) await new Promise((r) => metricsServer!.close(r));
      await webConsole?.close();
      await consumerOffsetManager.close();
      await assignments.modes.saved();
      await subscriptionGroupManager.saved(); // a save in flight uses the same temp file
      await topicConfigManager.saved();
      subscriptionGroupManager.persist();
      topicConfigManager.persist();
      await store.shutdown();
      log.info('broker stopped');
    },
  };
}
