import type { BrokerConfig } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import type { ClientChannel } from '../../remoting/dispatcher.js';
import { notifyConsumerIdsChanged } from './broker-to-client.js';
import { SubscriptionVersionWaits } from './subscription-version-waits.js';
import type { ClientChannelInfo, ConsumerGroupInfo, SubscriptionData } from './types.js';

/** Java ConsumerManager.CHANNEL_EXPIRED_TIMEOUT: a channel with no heartbeat for this long is dropped. */
export const CHANNEL_EXPIRED_TIMEOUT_MS = 120_000;
/** Java ClientHousekeepingService scans every 10 s. */
export const CLIENT_SCAN_INTERVAL_MS = 10_000;

/** What a heartbeat tells us about the sending client. */
export interface ClientIdentity {
  clientId: string;
  /** LanguageCode name from the request header (JAVA, GO, ...). */
  language: string;
  /** MQVersion ordinal from the request header. */
  version: number;
}

/** One ConsumerData entry of a heartbeat, already normalised. */
export interface ConsumerRegistration {
  consumeType: string;
  messageModel: string;
  consumeFromWhere: string;
  subscriptions: SubscriptionData[];
}

/** The part of SubscriptionGroupManager this manager reads. */
export interface GroupConfigLookup {
  get(group: string): { notifyConsumerIdsChangedEnable: boolean } | undefined;
}

export interface ConsumerManagerOptions {
  channelExpiredTimeoutMs?: number;
  /** 0 disables the periodic scan (tests call scanNotActiveChannel() themselves). */
  scanIntervalMs?: number;
  /** Sends NOTIFY_CONSUMER_IDS_CHANGED to one channel; defaults to the real oneway sender. */
  notify?: (channel: ClientChannel, group: string) => void;
  now?: () => number;
}

/**
 * Consumer groups and the connections in them, fed by heartbeats (Java: broker/client/ConsumerManager.java and
 * ConsumerGroupInfo.java). Whenever a clustering group's membership or subscriptions change, every remaining
 * member gets NOTIFY_CONSUMER_IDS_CHANGED (40) so it rebalances at once.
 */
export class ConsumerManager {
  private readonly table = new Map<string, ConsumerGroupInfo>();
  /**
   * Groups seen through pops (and their subscriptions) rather than heartbeats: a POP consumer behind a proxy never
   * heartbeats here (Java consumerCompensationTable). Not listed as connections; used for subscription lookups.
   */
  private readonly compensation = new Map<string, ConsumerGroupInfo>();
  /** When each compensated subscription (group -> topic) was last used: it expires subscriptionExpiredTimeout later. */
  private readonly compensationSeenMs = new Map<string, Map<string, number>>();
  private readonly watched = new WeakSet<ClientChannel>();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly expiredTimeoutMs: number;
  private readonly notifyFn: (channel: ClientChannel, group: string) => void;
  private readonly isNotifyEnabled: (group: string) => boolean;
  private readonly now: () => number;
  private readonly subVersionWaits = new SubscriptionVersionWaits((group, topic) => this.findSubscriptionData(group, topic));
  /** Subscription versions taken from a member's own report (adoptSubscriptionVersion). */
  private subVersionsAdopted = 0;

  /**
   * @param config broker config (subscriptionExpiredTimeout, read at each scan)
   * @param groupConfigs where a group's notifyConsumerIdsChangedEnable is read (no auto-creation); a group
   *   without config is notified.
   */
  constructor(
    private readonly config: BrokerConfig,
    private readonly logger: Logger,
    groupConfigs?: GroupConfigLookup,
    options: ConsumerManagerOptions = {},
  ) {
    this.expiredTimeoutMs = options.channelExpiredTimeoutMs ?? CHANNEL_EXPIRED_TIMEOUT_MS;
    this.notifyFn = options.notify ?? notifyConsumerIdsChanged;
    this.isNotifyEnabled = (group) => groupConfigs?.get(group)?.notifyConsumerIdsChangedEnable ?? true;
    this.now = options.now ?? Date.now;
    const interval = options.scanIntervalMs ?? CLIENT_SCAN_INTERVAL_MS;
    if (interval > 0) {
      this.timer = setInterval(() => {
        this.scanNotActiveChannel();
        this.removeExpiredCompensation();
      }, interval);
      this.timer.unref();
    }
  }

  shutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.subVersionWaits.close();
  }

  /**
   * The group's subscription of the topic at `subVersion` or newer: now, or from a heartbeat within timeoutMs (see
   * subscription-version-waits.ts); undefined if none came.
   */
  waitForSubVersion(group: string, topic: string, subVersion: number, timeoutMs: number): Promise<SubscriptionData | undefined> {
    return this.subVersionWaits.wait(group, topic, subVersion, timeoutMs);
  }

  /** Pulls waiting for a newer subscription version now, and how many were answered or refused so far. */
  get subVersionWaiting(): number {
    return this.subVersionWaits.size;
  }

  get subVersionWaitStats(): { answered: number; refused: number; adopted: number } {
    return { answered: this.subVersionWaits.answered, refused: this.subVersionWaits.refused, adopted: this.subVersionsAdopted };
  }

  /** The group of the heartbeats, or with fromCompensation the one known from pulls and pops only. */
  getConsumerGroupInfo(group: string, fromCompensation = false): ConsumerGroupInfo | undefined {
    return this.table.get(group) ?? (fromCompensation ? this.compensation.get(group) : undefined);
  }

  /** The group's subscription of a topic: from heartbeats, else from pops (Java findSubscriptionData(g, t, true)). */
  findSubscriptionData(group: string, topic: string): SubscriptionData | undefined {
    return this.table.get(group)?.subscriptions.get(topic) ?? this.compensation.get(group)?.subscriptions.get(topic);
  }

  /** Java compensateBasicConsumerInfo: a group that consumes without heartbeats (POP). */
  compensateBasicConsumerInfo(group: string, consumeType: string, messageModel: string): void {
    const info = this.compensatedGroup(group);
    info.consumeType = consumeType;
    info.messageModel = messageModel;
  }

  /** Java compensateSubscribeData: the subscription a pull or pop (or proxy) used. */
  compensateSubscribeData(group: string, topic: string, sub: SubscriptionData): void {
    this.compensatedGroup(group).subscriptions.set(topic, sub);
    let seen = this.compensationSeenMs.get(group);
    if (!seen) this.compensationSeenMs.set(group, (seen = new Map()));
    seen.set(topic, this.now());
  }

  /** Java removeExpireConsumerGroupInfo: compensated subscriptions unused for subscriptionExpiredTimeout go. */
  removeExpiredCompensation(): void {
    const now = this.now();
    for (const [group, seen] of this.compensationSeenMs) {
      const info = this.compensation.get(group);
      for (const [topic, at] of seen) {
        if (now - at <= (this.config.subscriptionExpiredTimeout ?? 600_000)) continue;
        seen.delete(topic);
        info?.subscriptions.delete(topic);
      }
      if (seen.size === 0) {
        this.compensationSeenMs.delete(group);
        if (!info || info.subscriptions.size === 0) this.compensation.delete(group);
      }
    }
  }

  /** The compensation entry of a group (its consume type and pop subscriptions), if any. */
  getCompensatedGroupInfo(group: string): ConsumerGroupInfo | undefined {
    return this.compensation.get(group);
  }

  private compensatedGroup(group: string): ConsumerGroupInfo {
    let info = this.compensation.get(group);
    if (!info) {
      info = {
        groupName: group, consumeType: 'CONSUME_POP', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        channels: new Map(), subscriptions: new Map(), lastUpdateTimestamp: this.now(),
      };
      this.compensation.set(group, info);
    }
    return info;
  }

  findSubscriptionDataCount(group: string): number {
    return this.table.get(group)?.subscriptions.size ?? 0;
  }

  /** The group's member on this connection (the one it heartbeats on), if any. */
  memberOnChannel(group: string, channel: ClientChannel): ClientChannelInfo | undefined {
    return this.table.get(group)?.channels.get(channel);
  }

  /**
   * Takes a newer subscription version a member reported outside a heartbeat (subscription-refresh.ts) when the
   * expression is the one held: only the version moved. Wakes the pulls waiting for it; returns the subscription
   * now held, or undefined when nothing was taken.
   */
  adoptSubscriptionVersion(group: string, channel: ClientChannel, reported: SubscriptionData): SubscriptionData | undefined {
    const info = this.table.get(group);
    if (!info?.channels.has(channel)) return undefined;
    const held = info.subscriptions.get(reported.topic);
    if (!held || held.expressionType !== reported.expressionType || held.subString !== reported.subString) return undefined;
    if (reported.subVersion <= held.subVersion) return undefined;
    const taken = { ...held, subVersion: reported.subVersion };
    info.subscriptions.set(reported.topic, taken);
    this.subVersionsAdopted++;
    this.logger.info(
      { group, topic: reported.topic, subVersion: reported.subVersion, clientId: info.channels.get(channel)?.clientId },
      'subscription version taken from the consumer: no heartbeat brought it',
    );
    this.subVersionWaits.wake(group);
    return taken;
  }

  findChannel(group: string, clientId: string): ClientChannelInfo | undefined {
    const info = this.table.get(group);
    if (!info) return undefined;
    for (const ch of info.channels.values()) if (ch.clientId === clientId) return ch;
    return undefined;
  }

  getAllClientIds(group: string): string[] {
    const info = this.table.get(group);
    return info ? [...info.channels.values()].map((c) => c.clientId) : [];
  }

  /** Groups whose current subscriptions include the topic (Java queryTopicConsumeByWho). */
  groupsByTopic(topic: string): string[] {
    const out: string[] = [];
    for (const [group, info] of this.table) if (info.subscriptions.has(topic)) out.push(group);
    return out;
  }

  groupNames(): string[] {
    return [...this.table.keys()];
  }

  /**
   * Registers (or refreshes) one channel of a group from a heartbeat. Returns true when the group changed
   * (new member, or a topic added/removed). `notifyEnabled` overrides the group config lookup (the heartbeat
   * processor has the config at hand); `updateSubscription=false` keeps the known subscriptions (heartbeat v2).
   */
  registerConsumer(
    group: string,
    channel: ClientChannel,
    client: ClientIdentity,
    data: ConsumerRegistration,
    options: { notifyEnabled?: boolean; updateSubscription?: boolean } = {},
  ): boolean {
    if (channel.isClosed) return false;
    const now = this.now();
    let info = this.table.get(group);
    if (!info) {
      info = {
        groupName: group,
        consumeType: data.consumeType,
        messageModel: data.messageModel,
        consumeFromWhere: data.consumeFromWhere,
        channels: new Map(),
        subscriptions: new Map(),
        lastUpdateTimestamp: now,
      };
      this.table.set(group, info);
    }
    this.watch(channel);

    info.consumeType = data.consumeType;
    info.messageModel = data.messageModel;
    info.consumeFromWhere = data.consumeFromWhere;
    let channelAdded = false;
    const old = info.channels.get(channel);
    if (!old || old.clientId !== client.clientId) {
      if (old) this.logger.error({ group, old: old.clientId, new: client.clientId }, 'consumer channel re-registered with another clientId');
      info.channels.set(channel, { channel, ...client, lastUpdateTimestamp: now });
      if (!old) {
        channelAdded = true;
        this.logger.info({ group, clientId: client.clientId, peer: channel.remoteAddress, messageModel: data.messageModel }, 'new consumer connected');
      }
    } else {
      old.lastUpdateTimestamp = now;
      old.language = client.language;
      old.version = client.version;
    }
    info.lastUpdateTimestamp = now;

    const subsChanged = options.updateSubscription === false ? false : this.updateSubscriptions(info, data.subscriptions);
    const changed = channelAdded || subsChanged;
    if (changed && (options.notifyEnabled ?? this.isNotifyEnabled(group))) this.notifyGroup(info);
    this.subVersionWaits.wake(group);
    return changed;
  }

  /** Java ConsumerGroupInfo.updateSubscription: add new topics, take newer subVersions, drop topics no longer sent. */
  private updateSubscriptions(info: ConsumerGroupInfo, subs: SubscriptionData[]): boolean {
    let changed = false;
    const seen = new Set<string>();
    for (const sub of subs) {
      seen.add(sub.topic);
      const old = info.subscriptions.get(sub.topic);
      if (!old) {
        info.subscriptions.set(sub.topic, sub);
        changed = true;
        this.logger.info({ group: info.groupName, topic: sub.topic, subString: sub.subString }, 'subscription added');
      } else if (sub.subVersion > old.subVersion) {
        info.subscriptions.set(sub.topic, sub);
      }
    }
    for (const topic of [...info.subscriptions.keys()]) {
      if (!seen.has(topic)) {
        info.subscriptions.delete(topic);
        changed = true;
        this.logger.warn({ group: info.groupName, topic }, 'subscription removed');
      }
    }
    return changed;
  }

  /** UNREGISTER_CLIENT for a consumer group (client shutdown). */
  unregisterConsumer(group: string, channel: ClientChannel, notifyEnabled?: boolean): void {
    const info = this.table.get(group);
    if (!info) return;
    const old = info.channels.get(channel);
    if (!old) return;
    info.channels.delete(channel);
    this.logger.info({ group, clientId: old.clientId }, 'consumer unregistered');
    this.afterRemoval(info, notifyEnabled);
  }

  /** A channel closed: drop it from every group it was in. Returns true if it was in any. */
  doChannelCloseEvent(channel: ClientChannel): boolean {
    let removed = false;
    for (const info of [...this.table.values()]) {
      const ch = info.channels.get(channel);
      if (!ch) continue;
      info.channels.delete(channel);
      removed = true;
      this.logger.info({ group: info.groupName, clientId: ch.clientId, peer: channel.remoteAddress }, 'consumer channel closed');
      this.afterRemoval(info);
    }
    return removed;
  }

  /** Drops channels without a heartbeat for channelExpiredTimeoutMs and closes their connections (Java does too). */
  scanNotActiveChannel(): void {
    const now = this.now();
    const expired: Array<[ConsumerGroupInfo, ClientChannelInfo]> = [];
    for (const info of this.table.values()) {
      for (const ch of info.channels.values()) {
        if (now - ch.lastUpdateTimestamp > this.expiredTimeoutMs) expired.push([info, ch]);
      }
    }
    const touched = new Set<ConsumerGroupInfo>();
    for (const [info, ch] of expired) {
      if (info.channels.get(ch.channel) !== ch) continue;
      info.channels.delete(ch.channel);
      touched.add(info);
      this.logger.warn({ group: info.groupName, clientId: ch.clientId, peer: ch.channel.remoteAddress }, 'consumer channel expired (no heartbeat)');
    }
    for (const info of touched) this.afterRemoval(info);
    for (const [, ch] of expired) {
      try {
        ch.channel.close();
      } catch (err) {
        this.logger.debug({ err }, 'closing expired consumer channel failed');
      }
    }
  }

  private afterRemoval(info: ConsumerGroupInfo, notifyEnabled?: boolean): void {
    if (info.channels.size === 0 && this.table.get(info.groupName) === info) {
      this.table.delete(info.groupName);
      this.logger.info({ group: info.groupName }, 'consumer group has no channel left, removed');
      return;
    }
    if (notifyEnabled ?? this.isNotifyEnabled(info.groupName)) this.notifyGroup(info);
  }

  /** Broadcasting consumers do not rebalance, so they are not told (Java 5.x ConsumerManager). */
  private notifyGroup(info: ConsumerGroupInfo): void {
    if (info.messageModel === 'BROADCASTING') return;
    for (const channel of info.channels.keys()) {
      try {
        this.notifyFn(channel, info.groupName);
      } catch (err) {
        this.logger.warn({ err, group: info.groupName }, 'notify consumer ids changed failed');
      }
    }
  }

  private watch(channel: ClientChannel): void {
    if (this.watched.has(channel)) return;
    this.watched.add(channel);
    channel.onClose((c) => this.doChannelCloseEvent(c));
  }
}
