import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { MessageStore } from '../store/index.js';
import type { ColdDataFlowControl } from './coldctr/cold-data-flow-control.js';
import type { ConsumerManager } from './client/consumer-manager.js';
import type { ProducerManager } from './client/producer-manager.js';
import type { RebalanceLockManager } from './client/rebalance-lock-manager.js';
import type { PullRequestHoldService } from './long-polling/pull-request-hold-service.js';
import type { ConsumerOffsetManager } from './offset/consumer-offset-manager.js';
import type { ScheduleMessageService } from './schedule/schedule-message-service.js';
import type { SubscriptionGroupManager } from './subscription/subscription-group-manager.js';
import type { TimerMessageService } from './timer/timer-message-service.js';
import type { TopicConfig } from './topic/topic-config.js';
import type { TopicConfigManager } from './topic/topic-config-manager.js';
import type { TransactionalMessageService } from './transaction/transactional-message-service.js';
import type { StatsItems } from './stats-items.js';
import type { PopInflightCounter } from './pop/pop-inflight.js';

/** Everything a broker processor may reach. Processors never touch sockets or files directly. */
export interface BrokerContext {
  config: BrokerConfig;
  logger: Logger;
  store: MessageStore;
  topicConfigManager: TopicConfigManager;
  subscriptionGroupManager: SubscriptionGroupManager;
  consumerOffsetManager: ConsumerOffsetManager;
  consumerManager: ConsumerManager;
  producerManager: ProducerManager;
  rebalanceLockManager: RebalanceLockManager;
  pullRequestHoldService: PullRequestHoldService;
  /** Cold-data flow control (coldDataFlowControlEnable); absent in contexts built for unit tests. */
  coldData?: ColdDataFlowControl;
  scheduleMessageService: ScheduleMessageService;
  /** 5.x timer messages; absent in contexts built without a store (unit tests). */
  timerMessageService?: TimerMessageService;
  transactionalMessageService: TransactionalMessageService;
  /** `brokerIP1:listenPort`, the address clients reach us at (also the STOREHOST of records). */
  brokerAddr(): string;
  /** Registers with every nameserver now (after topic changes); resolves when all have answered or failed. */
  registerBrokerAll(): Promise<void>;
  /** Registers one created or changed topic only (Java registerIncrementBrokerData); absent: registerBrokerAll. */
  registerTopic?(tc: TopicConfig): Promise<void>;
  /** Counters for GET_BROKER_RUNTIME_INFO. */
  stats: BrokerStats;
  /** Replication's state for GET_BROKER_HA_STATUS (907); absent in contexts built without HA (unit tests). */
  ha?: BrokerHaView;
  startTimeMs: number;
  /** Popped messages not yet acked or revived (the consumer lag metrics); absent in contexts built for unit tests. */
  popInflight?: PopInflightCounter;
}

export interface BrokerStats {
  msgPutTotal: number;
  msgGetTotal: number;
  /** Puts and gets per topic, group and cluster over the last minute, hour and day (Java BrokerStatsManager). */
  items: StatsItems;
  /** Prometheus metrics (metricsExporterType=PROM); absent when off. */
  metrics?: BrokerMetricsSink;
}

/** What the send and pull paths report to the metrics (Java BrokerMetricsManager counters). */
export interface BrokerMetricsSink {
  /** A stored send: the producer's properties string decides message_type. */
  messagesStored(topic: string, properties: string, count: number, wroteBytes: number): void;
  messagesPulled(topic: string, group: string, count: number, bytes: number): void;
  /** Messages a POP handed out; `topic` is the requested one, `retry` whether they came from its retry topic. */
  messagesPopped(topic: string, group: string, retry: boolean, count: number, bytes: number): void;
  /** A consumer's send-back that goes to the group's dead-letter queue (originTopic: the message's own topic). */
  deadLettered(originTopic: string, group: string): void;
  /** A half (prepared) message stored for `topic` (its real topic). */
  halfMessageStored(topic: string): void;
  /**
   * A half message of `topic` that left the check: committed or rolled back by an END_TRANSACTION, or discarded
   * (checked too often, moved to TRANS_CHECK_MAX_TIME_TOPIC). `bornTimestampMs` is the half message's.
   */
  transactionFinished(topic: string, outcome: 'commit' | 'rollback' | 'discard', bornTimestampMs: number): void;
  /** A POP checkpoint or ack put to the revive topic (`status`: the store's PutStatus, or UNKNOWN_ERROR). */
  popRevivePut(group: string, topic: string, type: 'CK' | 'ACK', status: string): void;
  /** A checkpoint or ack (batch acks too) the revive service read from revive queue `reviveQueueId`. */
  popReviveRead(group: string, topic: string, type: 'CK' | 'ACK', reviveQueueId: number): void;
  /** A message of a checkpoint of `topic` put again on its retry topic by the revive service. */
  popReviveRetried(group: string, topic: string, status: string): void;
}

/** What admin requests see of replication (Java HARuntimeInfo). */
export interface BrokerHaView {
  runtimeInfo(): Record<string, unknown>;
}
