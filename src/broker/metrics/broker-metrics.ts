// Prometheus metrics with the official 5.x broker's names and labels (Java broker/metrics/BrokerMetricsManager,
// BrokerMetricsConstant, remoting/metrics/RemotingMetricsManager), so dashboards built for it work unchanged:
// messages and bytes in/out, message size, RPC latency per request/response code, consumer lag / latency /
// in-flight / queueing time / ready messages, connections,
// topic / group counts, broker permission, dead letters, transactions (commits, rollbacks, finish latency, half
// messages), POP revive counts and lag, timer messages, and the store's flush / dispatch lag and message reserve time. Exposed by metrics-server.ts when metricsExporterType=PROM.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Counter, Histogram, Registry } from 'prom-client';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import type { BrokerContext, BrokerMetricsSink } from '../context.js';
import type { ReviveBehind } from '../pop/revive-service.js';
import type { TimerEvents } from '../timer/timer-message-service.js';
import { type ConsumerLagRow, consumerLagRows } from './consumer-lag.js';

/** Java BrokerMetricsManager.registerMetricsView: message size buckets 1 KiB, 4 KiB, 512 KiB, 1, 2, 4 MiB. */
const MESSAGE_SIZE_BUCKETS = [1024, 4096, 512 * 1024, 1024 * 1024, 2 * 1024 * 1024, 4 * 1024 * 1024];
/**
 * Java BrokerMetricsManager commitLatencyBuckets: 5 s, 1 min, 10 min, 1 h, 12 h, 24 h. The official broker records
 * the finish latency in seconds into this histogram, whose unit says ms (and so does its exported name); kept as is,
 * so the same dashboards read both.
 */
const FINISH_LATENCY_BUCKETS_S = [5, 60, 600, 3600, 43200, 86400];
/** Java DefaultStoreMetricsManager: timer message delay buckets in seconds (1 min, 10 min, 1 h, 12 h, 1 day, 3 days). */
const DELAY_BUCKETS_S = [60, 600, 3600, 43200, 86400, 259200];
/** Java BrokerMetricsManager createTimeBuckets: topic and group creation times, 10 ms … 5 s. */
const CREATE_TIME_BUCKETS_MS = [10, 100, 1000, 3000, 5000];
/** Java RemotingMetricsManager: RPC latency buckets in ms (as the official 5.3.3 broker exposes them). */
const RPC_LATENCY_BUCKETS_MS = [1, 3, 5, 7, 10, 100, 1000, 2000, 3000];

/** Java RemotingHelper.getRequestCodeDesc / getResponseCodeDesc: the constant's name in lower case, else the number. */
function codeNames(table: Record<string, number>): Map<number, string> {
  const m = new Map<number, string>();
  for (const [name, code] of Object.entries(table)) if (!m.has(code)) m.set(code, name.toLowerCase());
  return m;
}
const REQUEST_NAMES = codeNames(RequestCode);
const RESPONSE_NAMES = codeNames(ResponseCode);

const COMMON = ['otel_scope_name', 'cluster', 'node_type', 'node_id'] as const;

/** Java MessageConst property names that decide the message_type label (BrokerMetricsManager.getMessageType). */
function messageTypeOf(properties: string): string {
  const has = (name: string) => properties.startsWith(`${name}\u0001`) || properties.includes(`\u0002${name}\u0001`);
  const tran = /(?:^|\u0002)TRAN_MSG\u0001([^\u0002]*)/.exec(properties);
  if (tran && tran[1].toLowerCase() === 'true') return 'transaction';
  if (has('__SHARDINGKEY')) return 'fifo';
  if (has('__STARTDELIVERTIME') || has('DELAY') || has('TIMER_DELIVER_MS') || has('TIMER_DELAY_SEC') || has('TIMER_DELAY_MS')) return 'delay';
  return 'normal';
}

const SYSTEM_GROUP_PREFIXES = ['cid_rmqsys_', 'gid_rmqsys_', 'cid_sys_rmq_'];
/** Java TopicValidator.isSystemTopic (the rmq_sys_ prefix and the named system topics). */
function isSystemTopic(ctx: BrokerContext, topic: string): boolean {
  return topic.startsWith('rmq_sys_') || topic === 'TBW102' || topic === 'SCHEDULE_TOPIC_XXXX' || topic === 'RMQ_SYS_TRANS_HALF_TOPIC'
    || topic === 'RMQ_SYS_TRACE_TOPIC' || topic === ctx.config.brokerClusterName || topic === ctx.config.brokerName;
}
/** Java BrokerMetricsManager.isSystem: a system topic or a system group (MixAll.isSysConsumerGroup). */
function isSystem(ctx: BrokerContext, topic: string, group: string): boolean {
  return isSystemTopic(ctx, topic) || SYSTEM_GROUP_PREFIXES.some((p) => group.toLowerCase().startsWith(p));
}
const isRetryOrDlq = (topic: string) => topic.startsWith('%RETRY%') || topic.startsWith('%DLQ%');

const require = createRequire(import.meta.url);
/** prom-client is loaded when metrics are on, not at every start-up (its module load is ~65 ms of a start). */
const promClient = (): typeof import('prom-client') => require('prom-client') as typeof import('prom-client');

export class BrokerMetrics implements BrokerMetricsSink, TimerEvents {
  readonly registry: Registry;
  private readonly messagesIn: Counter;
  private readonly messagesOut: Counter;
  private readonly throughputIn: Counter;
  private readonly throughputOut: Counter;
  private readonly messageSize: Histogram;
  private readonly rpcLatency: Histogram;
  private readonly sendToDlq: Counter;
  private readonly commits: Counter;
  private readonly rollbacks: Counter;
  private readonly finishLatency: Histogram;
  /** The consumer lag rows of the scrape under way: its five consumer gauges share one calculation. */
  private lagRows: Promise<ConsumerLagRow[]> | undefined;
  private readonly timerEnqueues: Counter;
  private readonly timerDequeues: Counter;
  private readonly timerDelay: Histogram;
  /** Timer messages taken in and not yet out, per real topic, counted since this start. */
  private readonly timingCounts = new Map<string, number>();
  /** Half messages not yet committed, rolled back or discarded, per real topic, counted since this start. */
  private readonly halfCounts = new Map<string, number>();
  private readonly topicCreateTime: Histogram;
  private readonly groupCreateTime: Histogram;
  private readonly popRevivePuts: Counter;
  private readonly popReviveReads: Counter;
  private readonly popReviveRetries: Counter;

  /** `reviveBehind`: how far each revive queue is behind (the POP revive gauges; none without it). */
  constructor(private readonly ctx: BrokerContext, reviveBehind?: (reviveQueueId: number) => ReviveBehind) {
    const { Counter, Gauge, Histogram, Registry } = promClient();
    const r = (this.registry = new Registry());
    const cfg = ctx.config;
    // Java LABEL_MAP: every series carries cluster, node_type=broker, node_id=brokerName (and the OpenTelemetry
    // exporter adds otel_scope_name).
    r.setDefaultLabels({ otel_scope_name: 'broker-meter', cluster: cfg.brokerClusterName, node_type: 'broker', node_id: cfg.brokerName });
    const labels = (...names: string[]) => [...COMMON, ...names];
    this.messagesIn = new Counter({ name: 'rocketmq_messages_in_total', help: 'Total number of incoming messages', labelNames: labels('topic', 'message_type', 'is_system'), registers: [r] });
    // is_retry only on POP's samples (Java PopMessageProcessor adds it; pulls do not)
    this.messagesOut = new Counter({ name: 'rocketmq_messages_out_total', help: 'Total number of outgoing messages', labelNames: labels('topic', 'consumer_group', 'is_system', 'is_retry'), registers: [r] });
    this.throughputIn = new Counter({ name: 'rocketmq_throughput_in_total', help: 'Total traffic of incoming messages', labelNames: labels('topic', 'message_type', 'is_system'), registers: [r] });
    this.throughputOut = new Counter({ name: 'rocketmq_throughput_out_total', help: 'Total traffic of outgoing messages', labelNames: labels('topic', 'consumer_group', 'is_system', 'is_retry'), registers: [r] });
    this.messageSize = new Histogram({ name: 'rocketmq_message_size', help: 'Incoming messages size', labelNames: labels('topic', 'message_type', 'is_system'), buckets: MESSAGE_SIZE_BUCKETS, registers: [r] });
    this.rpcLatency = new Histogram({
      // OpenTelemetry's Prometheus exporter appends the unit: the official broker exposes this name
      name: 'rocketmq_rpc_latency_milliseconds',
      help: 'Rpc latency',
      labelNames: labels('protocol_type', 'request_code', 'response_code', 'is_long_polling', 'result'),
      buckets: RPC_LATENCY_BUCKETS_MS,
      registers: [r],
    });
    this.sendToDlq = new Counter({ name: 'rocketmq_send_to_dlq_messages_total', help: 'Consumer send to DLQ messages', labelNames: labels('consumer_group', 'topic', 'is_system'), registers: [r] });
    this.commits = new Counter({ name: 'rocketmq_commit_messages_total', help: 'Total number of commit messages', labelNames: labels('topic'), registers: [r] });
    this.rollbacks = new Counter({ name: 'rocketmq_rollback_messages_total', help: 'Total number of rollback messages', labelNames: labels('topic'), registers: [r] });
    this.finishLatency = new Histogram({
      name: 'rocketmq_finish_message_latency_milliseconds', help: 'Transaction finish latency', labelNames: labels('topic'), buckets: FINISH_LATENCY_BUCKETS_S, registers: [r],
    });
    const halfCounts = this.halfCounts;
    new Gauge({ name: 'rocketmq_half_messages', help: 'Half messages of all topics', labelNames: labels('topic'), registers: [r], collect() {
      this.reset();
      for (const [topic, n] of halfCounts) this.set({ topic }, n);
    } });
    // Java DefaultStoreMetricsManager: bytes written but not yet flushed / not yet in the consume queues, and the
    // age of the oldest message in the commit log.
    const storeLabels = { storage_type: 'local', storage_medium: 'disk' };
    new Gauge({ name: 'rocketmq_storage_flush_behind_bytes', help: 'Broker flush behind bytes', labelNames: labels('storage_type', 'storage_medium'), registers: [r], collect() {
      this.set(storeLabels, ctx.store.flushBehindBytes());
    } });
    new Gauge({ name: 'rocketmq_storage_dispatch_behind_bytes', help: 'Broker dispatch behind bytes', labelNames: labels('storage_type', 'storage_medium'), registers: [r], collect() {
      this.set(storeLabels, ctx.store.dispatchBehindBytes());
    } });
    new Gauge({ name: 'rocketmq_storage_message_reserve_time_milliseconds', help: 'Broker message reserve time', labelNames: labels('storage_type', 'storage_medium'), registers: [r], async collect() {
      this.reset();
      const earliest = await ctx.store.getCommitLogEarliestTime().catch(() => -1);
      if (earliest > 0) this.set(storeLabels, Date.now() - earliest); // Java records nothing for an empty log
    } });
    // Java DefaultStoreMetricsManager's timer series (with the store's labels)
    const storeLabelNames = ['storage_type', 'storage_medium'];
    this.timerEnqueues = new Counter({ name: 'rocketmq_timer_enqueue_total', help: 'Total number of timer enqueue', labelNames: labels(...storeLabelNames, 'topic'), registers: [r] });
    this.timerDequeues = new Counter({ name: 'rocketmq_timer_dequeue_total', help: 'Total number of timer dequeue', labelNames: labels(...storeLabelNames, 'topic'), registers: [r] });
    this.timerDelay = new Histogram({
      name: 'rocketmq_delay_message_latency_seconds', help: 'Timer message set latency distribution', labelNames: labels(...storeLabelNames, 'topic'), buckets: DELAY_BUCKETS_S, registers: [r],
    });
    const timingCounts = this.timingCounts;
    new Gauge({ name: 'rocketmq_timing_messages', help: 'Current message number in timing', labelNames: labels(...storeLabelNames, 'topic'), registers: [r], collect() {
      this.reset();
      for (const [topic, n] of timingCounts) this.set({ ...storeLabels, topic }, n);
    } });
    const timer = ctx.timerMessageService;
    if (timer) {
      new Gauge({ name: 'rocketmq_timer_enqueue_lag', help: 'Timer enqueue messages lag', labelNames: labels(...storeLabelNames), registers: [r], collect() {
        this.set(storeLabels, timer.enqueueBehind());
      } });
      new Gauge({ name: 'rocketmq_timer_dequeue_lag', help: 'Timer dequeue messages lag', labelNames: labels(...storeLabelNames), registers: [r], collect() {
        this.set(storeLabels, timer.dequeueBehind().messages);
      } });
      new Gauge({ name: 'rocketmq_timer_enqueue_latency_milliseconds', help: 'Timer enqueue latency', labelNames: labels(...storeLabelNames), registers: [r], collect() {
        this.set(storeLabels, timer.enqueueBehindMillis());
      } });
      new Gauge({ name: 'rocketmq_timer_dequeue_latency_milliseconds', help: 'Timer dequeue latency', labelNames: labels(...storeLabelNames), registers: [r], collect() {
        this.set(storeLabels, timer.dequeueBehind().millis);
      } });
    }
    // Java AdminBrokerProcessor: how long UPDATE_AND_CREATE_TOPIC(_LIST) / _SUBSCRIPTIONGROUP(_LIST) took, refused
    // ones included (invocation_status=failure).
    this.topicCreateTime = new Histogram({
      name: 'rocketmq_topic_create_execution_time_milliseconds', help: 'The distribution of create topic time',
      labelNames: labels('invocation_status', 'is_system'), buckets: CREATE_TIME_BUCKETS_MS, registers: [r],
    });
    this.groupCreateTime = new Histogram({
      name: 'rocketmq_consumer_group_create_execution_time_milliseconds', help: 'The distribution of create subscription time',
      labelNames: labels('invocation_status'), buckets: CREATE_TIME_BUCKETS_MS, registers: [r],
    });
    // Java PopMetricsManager. Its buffer series are those of PopBufferMergeService, which ours does not have: each
    // checkpoint and ack goes to the revive topic at once, so the two buffer gauges are 0, and the buffer's scan
    // time histogram has no samples to show (left out).
    this.popRevivePuts = new Counter({
      name: 'rocketmq_pop_revive_in_message_total', help: 'Total number of put message to revive topic',
      labelNames: labels('consumer_group', 'topic', 'revive_message_type', 'put_status'), registers: [r],
    });
    this.popReviveReads = new Counter({
      name: 'rocketmq_pop_revive_out_message_total', help: 'Total number of get message from revive topic',
      labelNames: labels('consumer_group', 'topic', 'queue_id', 'revive_message_type'), registers: [r],
    });
    this.popReviveRetries = new Counter({
      name: 'rocketmq_pop_revive_retry_messages_total', help: 'Total number of put message to pop retry topic',
      labelNames: labels('consumer_group', 'topic', 'put_status'), registers: [r],
    });
    new Gauge({ name: 'rocketmq_pop_offset_buffer_size', help: 'Time number of buffered offset', labelNames: [...COMMON], registers: [r], collect() {
      this.set(0);
    } });
    new Gauge({ name: 'rocketmq_pop_checkpoint_buffer_size', help: 'The number of buffered checkpoint', labelNames: [...COMMON], registers: [r], collect() {
      this.set(0);
    } });
    if (reviveBehind) {
      // one sample per revive queue; Java's unit "milliseconds" on the lag, which counts records, is kept in the name
      const reviveGauge = (name: string, help: string, value: (b: ReviveBehind) => number) =>
        new Gauge({ name, help, labelNames: labels('queue_id'), registers: [r], collect() {
          for (let qid = 0; qid < cfg.reviveQueueNum; qid++) this.set({ queue_id: String(qid) }, value(reviveBehind(qid)));
        } });
      reviveGauge('rocketmq_pop_revive_lag_milliseconds', 'The processing lag of revive topic', (b) => b.messages);
      reviveGauge('rocketmq_pop_revive_latency_milliseconds', 'The processing latency of revive topic', (b) => b.millis);
    }
    new Gauge({ name: 'rocketmq_broker_permission', help: 'Broker permission', labelNames: [...COMMON], registers: [r], collect() {
      this.set(cfg.brokerPermission);
    } });
    new Gauge({ name: 'rocketmq_topic_number', help: 'Active topic number', labelNames: [...COMMON], registers: [r], collect() {
      this.set(ctx.topicConfigManager.table.size);
    } });
    new Gauge({ name: 'rocketmq_consumer_group_number', help: 'Active subscription group number', labelNames: [...COMMON], registers: [r], collect() {
      this.set(ctx.subscriptionGroupManager.table.size);
    } });
    // Java ConsumerLagCalculator (consumer-lag.ts): one calculation per scrape feeds the five gauges.
    const rowsOfThisScrape = () => (this.lagRows ??= consumerLagRows(ctx));
    const lagGauge = (name: string, help: string, value: (row: ConsumerLagRow, nowMs: number) => number) =>
      new Gauge({ name, help, labelNames: labels('consumer_group', 'topic', 'is_retry', 'is_system'), registers: [r], async collect() {
        this.reset();
        const now = Date.now();
        for (const row of await rowsOfThisScrape()) {
          const system = isSystem(ctx, row.topic, row.group);
          this.set({ consumer_group: row.group, topic: row.topic, is_retry: String(row.isRetry), is_system: String(system) }, value(row, now));
        }
      } });
    lagGauge('rocketmq_consumer_lag_messages', 'Consumer lag messages', (row) => row.lag);
    lagGauge('rocketmq_consumer_lag_latency_milliseconds', 'Consumer lag time', (row, now) => (row.earliestUnconsumedMs > 0 ? now - row.earliestUnconsumedMs : 0));
    lagGauge('rocketmq_consumer_inflight_messages', 'Consumer inflight messages', (row) => row.inflight);
    lagGauge('rocketmq_consumer_queueing_latency_milliseconds', 'Consumer queueing time', (row, now) => (row.earliestUnpulledMs > 0 ? now - row.earliestUnpulledMs : 0));
    lagGauge('rocketmq_consumer_ready_messages', 'Consumer ready messages', (row) => row.available);
    new Gauge({ name: 'rocketmq_consumer_connections', help: 'Consumer connections', labelNames: labels('consumer_group', 'protocol_type'), registers: [r], collect() {
      this.reset();
      for (const group of ctx.consumerManager.groupNames()) {
        const n = ctx.consumerManager.getConsumerGroupInfo(group)?.channels.size ?? 0;
        if (n > 0) this.set({ consumer_group: group, protocol_type: 'remoting' }, n);
      }
    } });
    // Java DefaultStoreMetricsManager: used bytes of the partition holding storePathRootDir
    new Gauge({ name: 'rocketmq_storage_size_bytes', help: 'Broker storage size', labelNames: labels('storage_type', 'storage_medium'), registers: [r], async collect() {
      try {
        const st = await fs.promises.statfs(cfg.storePathRootDir);
        this.set({ storage_type: 'local', storage_medium: 'disk' }, (st.blocks - st.bfree) * st.bsize);
      } catch {
        // directory gone: no sample, as Java skips it
      }
    } });
    new Gauge({ name: 'rocketmq_producer_connections', help: 'Producer connections', labelNames: labels('protocol_type'), registers: [r], collect() {
      let n = 0;
      for (const group of ctx.producerManager.groupNames()) n += ctx.producerManager.getGroupChannels(group)?.size ?? 0;
      this.set({ protocol_type: 'remoting' }, n);
    } });
  }

  /** The Prometheus text of every series, computed now. */
  scrape(): Promise<string> {
    this.lagRows = undefined;
    return this.registry.metrics();
  }

  /** A stored send (SendMessageProcessor: retry and DLQ topics are not counted). */
  messagesStored(topic: string, properties: string, count: number, wroteBytes: number): void {
    if (isRetryOrDlq(topic) || count <= 0) return;
    const labels = { topic, message_type: messageTypeOf(properties), is_system: String(isSystemTopic(this.ctx, topic)) };
    this.messagesIn.inc(labels, count);
    this.throughputIn.inc(labels, wroteBytes);
    this.messageSize.observe(labels, Math.floor(wroteBytes / count));
  }

  /** Messages handed to a consumer (DefaultPullMessageResultHandler: not for retry / DLQ topics). */
  messagesPulled(topic: string, group: string, count: number, bytes: number): void {
    if (isRetryOrDlq(topic) || count <= 0) return;
    const system = isSystem(this.ctx, topic, group);
    const labels = { topic, consumer_group: group, is_system: String(system) };
    this.messagesOut.inc(labels, count);
    this.throughputOut.inc(labels, bytes);
  }

  /** PopMessageProcessor: every popped message counts (retry ones too, under the requested topic). */
  messagesPopped(topic: string, group: string, retry: boolean, count: number, bytes: number): void {
    if (count <= 0) return;
    const system = isSystem(this.ctx, topic, group);
    const labels = { topic, consumer_group: group, is_system: String(system), is_retry: String(retry) };
    this.messagesOut.inc(labels, count);
    this.throughputOut.inc(labels, bytes);
  }

  deadLettered(originTopic: string, group: string): void {
    const system = isSystem(this.ctx, originTopic, group);
    this.sendToDlq.inc({ consumer_group: group, topic: originTopic, is_system: String(system) });
  }

  timerEnqueued(realTopic: string, delaySeconds: number): void {
    const labels = { storage_type: 'local', storage_medium: 'disk', topic: realTopic };
    this.timerEnqueues.inc(labels);
    this.timerDelay.observe(labels, Math.max(0, delaySeconds));
    this.timingCounts.set(realTopic, (this.timingCounts.get(realTopic) ?? 0) + 1);
  }

  timerDequeued(realTopic: string): void {
    this.timerDequeues.inc({ storage_type: 'local', storage_medium: 'disk', topic: realTopic });
    // counted since this start: a message taken in before it finds no count to lower
    const n = this.timingCounts.get(realTopic);
    if (n !== undefined) this.timingCounts.set(realTopic, Math.max(0, n - 1));
  }

  halfMessageStored(topic: string): void {
    this.halfCounts.set(topic, (this.halfCounts.get(topic) ?? 0) + 1);
  }

  transactionFinished(topic: string, outcome: 'commit' | 'rollback' | 'discard', bornTimestampMs: number): void {
    // Counted since this start: an END for a half message stored before it finds no count to lower.
    this.halfCounts.set(topic, Math.max(0, (this.halfCounts.get(topic) ?? 0) - 1));
    if (outcome === 'commit') {
      this.commits.inc({ topic });
      this.finishLatency.observe({ topic }, Math.floor((Date.now() - bornTimestampMs) / 1000));
    } else if (outcome === 'rollback') {
      this.rollbacks.inc({ topic });
    }
  }

  popRevivePut(group: string, topic: string, type: 'CK' | 'ACK', status: string): void {
    this.popRevivePuts.inc({ consumer_group: group, topic, revive_message_type: type, put_status: status });
  }

  popReviveRead(group: string, topic: string, type: 'CK' | 'ACK', reviveQueueId: number): void {
    this.popReviveReads.inc({ consumer_group: group, topic, queue_id: String(reviveQueueId), revive_message_type: type });
  }

  popReviveRetried(group: string, topic: string, status: string): void {
    this.popReviveRetries.inc({ consumer_group: group, topic, put_status: status });
  }

  /**
   * An answered admin request that creates or updates topics or groups, timed as Java times it (whole ms);
   * `firstTopic`: the topic of a topic request (of a list, its first: Java tests the names joined with ';').
   */
  adminCreateTimed(requestCode: number, success: boolean, elapsedMs: number, firstTopic: string | undefined): void {
    const invocation_status = success ? 'success' : 'failure';
    const ms = Math.floor(elapsedMs);
    if (requestCode === RequestCode.UPDATE_AND_CREATE_TOPIC || requestCode === RequestCode.UPDATE_AND_CREATE_TOPIC_LIST) {
      const topic = firstTopic ?? '';
      // a list's joined names are a system topic only by the rmq_sys_ prefix
      const system = requestCode === RequestCode.UPDATE_AND_CREATE_TOPIC ? isSystemTopic(this.ctx, topic) : topic.startsWith('rmq_sys_');
      this.topicCreateTime.observe({ invocation_status, is_system: String(system) }, ms);
    } else if (requestCode === RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP || requestCode === RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST) {
      this.groupCreateTime.observe({ invocation_status }, ms);
    }
  }

  rpc(requestCode: number, responseCode: number | undefined, latencyMs: number, oneway: boolean, longPolling: boolean): void {
    this.rpcLatency.observe(
      {
        protocol_type: 'remoting',
        request_code: REQUEST_NAMES.get(requestCode) ?? String(requestCode),
        response_code: responseCode === undefined ? 'success' : (RESPONSE_NAMES.get(responseCode) ?? String(responseCode)),
        is_long_polling: String(longPolling),
        result: oneway ? 'oneway' : 'success',
      },
      latencyMs,
    );
  }
}
