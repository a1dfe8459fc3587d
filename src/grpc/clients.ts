// gRPC clients by client id: their raw Settings, the merged Settings the server answers (Java proxy
// grpc/v2/common/GrpcClientSettingsManager), their channel (GrpcChannelManager), and their registration with the
// broker's producer and consumer managers, so mqadmin lists them beside remoting clients.
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { ClientIdentity } from '../broker/client/consumer-manager.js';
import type { SubscriptionData } from '../broker/client/types.js';
import type { BrokerContext } from '../broker/context.js';
import { buildSubscriptionData } from '../broker/filter/tag-filter.js';
import { GrpcClientChannel } from './client-channel.js';
import type { CallContext } from './call-context.js';
import { GrpcStatusError } from './status.js';
import { fromMillis } from './validators.js';

/** A decoded apache.rocketmq.v2.Settings (proto-loader objects; see proto.ts for the options). */
export type Settings = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** MQVersion.Version.V5_3_3.ordinal(): the proxy cannot parse `5.2.0` and registers its own version. */
export const GRPC_CLIENT_VERSION_ORDINAL = 479;
/** Java GrpcClientSettingsManager: every 5 s, consumer Settings without a live channel in their group go. */
const SETTINGS_PURGE_INTERVAL_MS = 5000;
/** Java CustomizedRetryPolicy's default ladder (ms). */
const DEFAULT_CUSTOMIZED_BACKOFF_MS = [
  1000, 5000, 10_000, 30_000, 60_000, 120_000, 180_000, 240_000, 300_000, 360_000, 420_000, 480_000, 540_000, 600_000,
  1_200_000, 1_800_000, 3_600_000, 7_200_000,
];
/** Java ExponentialRetryPolicy defaults. */
const DEFAULT_EXPONENTIAL = { initial: 5000, max: 7_200_000, multiplier: 2 };

export class GrpcClients {
  private readonly settings = new Map<string, Settings>();
  private readonly channels = new Map<string, GrpcClientChannel>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly ctx: BrokerContext,
    private readonly config: BrokerConfig,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => this.purgeConsumerSettings(), SETTINGS_PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  shutdown(): void {
    clearInterval(this.timer);
    for (const ch of [...this.channels.values()]) ch.close();
    this.channels.clear();
  }

  channelOf(clientId: string): GrpcClientChannel | undefined {
    return this.channels.get(clientId);
  }

  /** Java GrpcChannelManager.createChannel: one channel per client id, kept across Telemetry reconnects. */
  channelFor(cc: CallContext): GrpcClientChannel {
    let ch = this.channels.get(cc.clientId);
    if (!ch || ch.isClosed) {
      ch = new GrpcClientChannel(cc.clientId, cc.peer);
      this.channels.set(cc.clientId, ch);
      const created = ch;
      ch.onClose(() => {
        if (this.channels.get(cc.clientId) === created) this.channels.delete(cc.clientId);
      });
    }
    return ch;
  }

  identity(cc: CallContext): ClientIdentity {
    return { clientId: cc.clientId, language: cc.language || 'OTHER', version: GRPC_CLIENT_VERSION_ORDINAL };
  }

  rawSettings(clientId: string): Settings | undefined {
    return this.settings.get(clientId);
  }

  /** Java updateClientSettings: consumer Settings are first laid over the defaults, so unset fields are filled. */
  storeSettings(clientId: string, s: Settings): void {
    if (s.subscription) {
      const defaults = this.mergeSubscription({ subscription: {}, backoff_policy: {} }, undefined);
      s = mergeOnto(defaults, s);
    }
    this.settings.set(clientId, s);
  }

  removeSettings(clientId: string): Settings | undefined {
    const s = this.settings.get(clientId);
    this.settings.delete(clientId);
    return s;
  }

  /** Java getClientSettings: the stored Settings with the server's overrides (producer, consumer group, metric). */
  mergedSettings(clientId: string): Settings | undefined {
    const raw = this.settings.get(clientId);
    if (!raw) return undefined;
    let s: Settings;
    if (raw.publishing) s = this.mergeProducer(raw);
    else if (raw.subscription) {
      const group = this.ctx.subscriptionGroupManager.get(String(raw.subscription.group?.name ?? ''));
      s = group ? this.mergeSubscription(raw, group) : structuredClone(raw);
    } else s = structuredClone(raw);
    s.metric = { on: false };
    return s;
  }

  private mergeProducer(raw: Settings): Settings {
    const c = this.config;
    const s = structuredClone(raw);
    s.backoff_policy = {
      ...(s.backoff_policy ?? {}),
      max_attempts: c.grpcClientProducerMaxAttempts,
      exponential_backoff: {
        initial: fromMillis(c.grpcClientProducerBackoffInitialMillis),
        max: fromMillis(c.grpcClientProducerBackoffMaxMillis),
        multiplier: c.grpcClientProducerBackoffMultiplier,
      },
      customized_backoff: null,
      strategy: 'exponential_backoff',
    };
    s.publishing = { ...s.publishing, validate_message_type: c.enableTopicMessageTypeCheck, max_body_size: c.maxMessageSize };
    return s;
  }

  /** Java mergeSubscriptionData(settings, groupConfig); `group` undefined = the defaults of a new group config. */
  private mergeSubscription(raw: Settings, group: { consumeMessageOrderly: boolean; retryMaxTimes: number; groupRetryPolicy: Record<string, unknown> } | undefined): Settings {
    const c = this.config;
    const s = structuredClone(raw);
    s.subscription = {
      ...s.subscription,
      receive_batch_size: c.grpcClientConsumerLongPollingBatchSize,
      long_polling_timeout: fromMillis(c.grpcClientConsumerMaxLongPollingTimeoutMillis),
      fifo: group?.consumeMessageOrderly ?? false,
    };
    const policy = group?.groupRetryPolicy ?? { type: 'CUSTOMIZED' };
    const backoff: Settings = { ...(s.backoff_policy ?? {}), max_attempts: (group?.retryMaxTimes ?? 16) + 1 };
    if (String(policy.type).toUpperCase() === 'EXPONENTIAL') {
      const e = { ...DEFAULT_EXPONENTIAL, ...((policy.exponentialRetryPolicy as object | undefined) ?? {}) };
      backoff.exponential_backoff = { initial: fromMillis(Number(e.initial)), max: fromMillis(Number(e.max)), multiplier: Number(e.multiplier) };
      backoff.customized_backoff = null;
      backoff.strategy = 'exponential_backoff';
    } else {
      const custom = policy.customizedRetryPolicy as { next?: number[] } | undefined;
      const next = Array.isArray(custom?.next) ? custom.next.map(Number) : DEFAULT_CUSTOMIZED_BACKOFF_MS;
      backoff.customized_backoff = { next: next.map(fromMillis) };
      backoff.exponential_backoff = null;
      backoff.strategy = 'customized_backoff';
    }
    s.backoff_policy = backoff;
    return s;
  }

  /** Java ClientActivity.registerProducer: producer group = the topic (check-backs look for it there). */
  registerProducer(cc: CallContext, topic: string): GrpcClientChannel {
    const ch = this.channelFor(cc);
    this.ctx.producerManager.registerProducer(topic, ch, this.identity(cc));
    return ch;
  }

  /** Java ClientActivity.registerConsumer: CLUSTERING, CONSUME_FROM_LAST_OFFSET, SIMPLE → ACTIVELY, PUSH → PASSIVELY. */
  registerConsumer(cc: CallContext, group: string, clientType: string, entries: Settings[], updateSubscription: boolean): GrpcClientChannel {
    const ch = this.channelFor(cc);
    const subscriptions = updateSubscription ? entries.map(subscriptionOf) : [];
    this.ctx.consumerManager.registerConsumer(
      group, ch, this.identity(cc),
      {
        consumeType: clientType === 'SIMPLE_CONSUMER' ? 'CONSUME_ACTIVELY' : 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        subscriptions,
      },
      { updateSubscription },
    );
    return ch;
  }

  /** Java NotifyClientTermination: the channel goes, and with it the client's registrations. */
  terminate(clientId: string): void {
    this.channels.get(clientId)?.close();
  }

  private purgeConsumerSettings(): void {
    for (const [clientId, s] of [...this.settings]) {
      const type = String(s.client_type ?? '');
      if (type !== 'PUSH_CONSUMER' && type !== 'SIMPLE_CONSUMER') continue;
      const group = String(s.subscription?.group?.name ?? '');
      if (!this.ctx.consumerManager.findChannel(group, clientId)) {
        this.settings.delete(clientId);
        this.logger.info({ clientId, group }, 'removed settings of a gRPC consumer no longer connected');
      }
    }
  }
}

/** Java FilterAPI.build from a SubscriptionEntry; a bad expression is ILLEGAL_FILTER_EXPRESSION. */
export function subscriptionOf(entry: Settings): SubscriptionData {
  const topic = String(entry.topic?.name ?? '');
  const type = entry.expression?.type === 'SQL' ? 'SQL92' : 'TAG';
  const expression = String(entry.expression?.expression ?? '');
  if (type === 'SQL92' && expression.trim() === '') throw new GrpcStatusError('ILLEGAL_FILTER_EXPRESSION', 'expression format is not correct');
  return buildSubscriptionData(topic, expression, type);
}

/** protobuf mergeFrom for plain objects: set fields of `over` replace those of `base`; messages merge deeply. */
function mergeOnto(base: Settings, over: Settings): Settings {
  const out: Settings = structuredClone(base);
  for (const [k, v] of Object.entries(over)) {
    if (v === null || v === undefined) continue;
    const b = out[k];
    if (b && typeof b === 'object' && !Array.isArray(b) && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v)) {
      out[k] = mergeOnto(b, v as Settings);
    } else {
      out[k] = structuredClone(v);
    }
  }
  return out;
}
