import { type BrokerConfig, bufferLimitsOf, pick } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { RemotingClient } from '../remoting/client.js';
import { type ProcessorTable, RequestDispatcher } from '../remoting/dispatcher.js';
import { RemotingServer } from '../remoting/server.js';
import { STORE_SCHEMA, createMessageStore, type MessageStore } from '../store/index.js';
import { ConsumerManager } from './client/consumer-manager.js';
import { ProducerManager } from './client/producer-manager.js';
import { RebalanceLockManager } from './client/rebalance-lock-manager.js';
import type { BrokerContext, BrokerStats } from './context.js';
import { PullRequestHoldService } from './long-polling/pull-request-hold-service.js';
import { NamesrvRegistration } from './namesrv-registration.js';
import { ConsumerOffsetManager } from './offset/consumer-offset-manager.js';
import { adminBrokerProcessors } from './processors/admin-broker.js';
import { adminConsumerRelayProcessors } from './processors/admin-consumer-relay.js';
import { adminGroupProcessors } from './processors/admin-group.js';
import { adminOffsetProcessors } from './processors/admin-offset.js';
import { adminTopicProcessors } from './processors/admin-topic.js';
import { clientManageProcessors } from './processors/client-manage.js';
import { consumerListProcessors } from './processors/consumer-list.js';
import { consumerOffsetProcessors } from './processors/consumer-offset.js';
import { endTransactionProcessors } from './processors/end-transaction.js';
import { lockProcessors } from './processors/lock.js';
import { withNameChecks } from './processors/name-checks.js';
import { pullMessageProcessors } from './processors/pull-message.js';
import { queryMessageProcessors } from './processors/query-message.js';
import { sendBackProcessors } from './processors/send-back.js';
import { sendReplyProcessors } from './processors/send-reply.js';
import { sendMessageProcessors } from './processors/send-message.js';
import { parseMessageDelayLevel } from './schedule/delay-levels.js';
import { ScheduleMessageService } from './schedule/schedule-message-service.js';
import { SubscriptionGroupManager } from './subscription/subscription-group-manager.js';
import { TimerMessageService } from './timer/timer-message-service.js';
import { TopicConfigManager } from './topic/topic-config-manager.js';
import { TransactionCheckService } from './transaction/transaction-check-service.js';
import { TransactionalMessageService } from './transaction/transactional-message-service.js';
import { SAMPLE_INTERVAL_MS as TOPIC_PUT_SAMPLE_INTERVAL_MS, TopicPutStats } from './topic-put-stats.js';

export interface Broker {
  start(): Promise<void>;
  shutdown(): Promise<void>;
  brokerAddr(): string;
  readonly port: number;
  readonly context: BrokerContext;
}

/** The composition root (Java BrokerController): builds managers, store and processors; owns timers. */
export function createBroker(config: BrokerConfig, logger: Logger): Broker {
  const log = logger.child({ component: 'broker' });
  const dispatcher = new RequestDispatcher(log);
  const server = new RemotingServer(log, dispatcher, undefined, bufferLimitsOf(config));
  const client = new RemotingClient(log);
  let boundPort = config.listenPort;
  // Asked on every send (the stored storeHost): one string per (ip, port), not a new one per call.
  let addrCache = { ip: '', port: -1, addr: '' };
  const brokerAddr = () => {
    if (addrCache.ip !== config.brokerIP1 || addrCache.port !== boundPort) {
      addrCache = { ip: config.brokerIP1, port: boundPort, addr: `${config.brokerIP1}:${boundPort}` };
    }
    return addrCache.addr;
  };

  // The store takes its keys (STORE_SCHEMA) from the broker's config; runtime changes reach it via updateConfig.
  const store: MessageStore = createMessageStore(pick(STORE_SCHEMA, config), log.child({ component: 'store' }));

  let registration: NamesrvRegistration | undefined;
  const topicConfigManager = new TopicConfigManager(config, log, () => void registration?.registerAll());
  registration = new NamesrvRegistration(config, client, topicConfigManager, brokerAddr, log);
  const subscriptionGroupManager = new SubscriptionGroupManager(config, log);
  const consumerOffsetManager = new ConsumerOffsetManager(config, log);
  const consumerManager = new ConsumerManager(config, log, subscriptionGroupManager);
  const producerManager = new ProducerManager(log);
  const rebalanceLockManager = new RebalanceLockManager(config);
  const pullRequestHoldService = new PullRequestHoldService(log);
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
  });
  const stats: BrokerStats = { msgPutTotal: 0, msgGetTotal: 0, topicPuts: new TopicPutStats() };
  setInterval(() => stats.topicPuts.sample(), TOPIC_PUT_SAMPLE_INTERVAL_MS).unref();

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
    scheduleMessageService,
    timerMessageService,
    transactionalMessageService,
    brokerAddr,
    registerBrokerAll: () => registration.registerAll(),
    stats,
    startTimeMs: Date.now(),
  };

  // Every request family the broker serves, by transport-independent table (Java BrokerController.registerProcessor).
  const processorTables: ProcessorTable[] = [
    sendMessageProcessors(ctx),
    pullMessageProcessors(ctx),
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
    adminOffsetProcessors(ctx),
    adminConsumerRelayProcessors(ctx),
    adminBrokerProcessors(ctx),
  ];
  for (const table of processorTables) dispatcher.registerTable(withNameChecks(table));

  let started = false;

  return {
    context: ctx,
    brokerAddr,
    get port() {
      return boundPort;
    },
    async start() {
      topicConfigManager.load();
      subscriptionGroupManager.load();
      consumerOffsetManager.load();
      scheduleMessageService.load();
      store.onDispatch(pullRequestHoldService.onDispatch);
      store.onDispatch(scheduleMessageService.onDispatch);
      store.onDispatch(timerMessageService.onDispatch);
      timerMessageService.load();
      await store.start();
      scheduleMessageService.start();
      // Java creates the TimerMessageStore only with timerWheelEnable; slaves do not dequeue.
      if (config.timerWheelEnable && config.brokerRole !== 'SLAVE') await timerMessageService.start();
      transactionalMessageService.start();
      if (config.brokerRole !== 'SLAVE') transactionCheckService.start();
      topicConfigManager.persist();
      boundPort = await server.listen(config.listenPort);
      if (config.listenPort > 2 && config.fastListenPort !== -1) {
        const vipPort = config.fastListenPort || config.listenPort - 2;
        if (!(await server.listenAlso(vipPort))) log.warn({ port: vipPort }, 'could not bind the VIP channel port; clients with vipChannelEnabled=true need it');
      }
      consumerOffsetManager.startPersisting(config.flushConsumerOffsetInterval);
      started = true;
      await registration.start();
      log.info({ addr: brokerAddr(), store: config.storePathRootDir }, 'broker started');
    },
    async shutdown() {
      if (!started) return;
      started = false;
      await registration.unregisterAll();
      pullRequestHoldService.shutdown();
      await scheduleMessageService.shutdown();
      await timerMessageService.shutdown();
      await transactionCheckService.shutdown();
      consumerManager.shutdown();
      await server.close();
      await client.close();
      await consumerOffsetManager.close();
      await subscriptionGroupManager.saved(); // a save in flight uses the same temp file
      await topicConfigManager.saved();
      subscriptionGroupManager.persist();
      topicConfigManager.persist();
      await store.shutdown();
      log.info('broker stopped');
    },
  };
}
