import type { Logger } from '../../common/logger.js';
import type { ClientChannel } from '../../remoting/dispatcher.js';
import { CHANNEL_EXPIRED_TIMEOUT_MS, CLIENT_SCAN_INTERVAL_MS, type ClientIdentity } from './consumer-manager.js';
import type { ClientChannelInfo } from './types.js';

/** Java MixAll.CLIENT_INNER_PRODUCER_GROUP: every Java client heartbeats it; registered like any group (as Java). */
export const CLIENT_INNER_PRODUCER_GROUP = 'CLIENT_INNER_PRODUCER';

export interface ProducerManagerOptions {
  channelExpiredTimeoutMs?: number;
  /** 0 disables the periodic scan. */
  scanIntervalMs?: number;
  now?: () => number;
}

/**
 * Producer groups → connections, fed by heartbeats (Java: broker/client/ProducerManager.java). Used for
 * GET_PRODUCER_CONNECTION_LIST and to pick a channel for transaction check-backs.
 */
export class ProducerManager {
  private readonly groupChannelTable = new Map<string, Map<ClientChannel, ClientChannelInfo>>();
  private readonly clientChannelTable = new Map<string, ClientChannel>();
  private readonly watched = new WeakSet<ClientChannel>();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly expiredTimeoutMs: number;
  private readonly now: () => number;
  private counter = 0;

  constructor(
    private readonly logger: Logger,
    options: ProducerManagerOptions = {},
  ) {
    this.expiredTimeoutMs = options.channelExpiredTimeoutMs ?? CHANNEL_EXPIRED_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    const interval = options.scanIntervalMs ?? CLIENT_SCAN_INTERVAL_MS;
    if (interval > 0) {
      this.timer = setInterval(() => this.scanNotActiveChannel(), interval);
      this.timer.unref();
    }
  }

  shutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  registerProducer(group: string, channel: ClientChannel, client: ClientIdentity): void {
    if (channel.isClosed) return;
    let channels = this.groupChannelTable.get(group);
    if (!channels) {
      channels = new Map();
      this.groupChannelTable.set(group, channels);
    }
    this.watch(channel);
    const found = channels.get(channel);
    if (found) {
      found.lastUpdateTimestamp = this.now();
      return;
    }
    channels.set(channel, { channel, ...client, lastUpdateTimestamp: this.now() });
    this.clientChannelTable.set(client.clientId, channel);
    this.logger.info({ group, clientId: client.clientId, peer: channel.remoteAddress }, 'new producer connected');
  }

  unregisterProducer(group: string, channel: ClientChannel, clientId?: string): void {
    const channels = this.groupChannelTable.get(group);
    if (!channels) return;
    const old = channels.get(channel);
    channels.delete(channel);
    const id = old?.clientId ?? clientId;
    if (id !== undefined && this.clientChannelTable.get(id) === channel) this.clientChannelTable.delete(id);
    if (old) this.logger.info({ group, clientId: old.clientId }, 'producer unregistered');
    if (channels.size === 0) this.groupChannelTable.delete(group);
  }

  doChannelCloseEvent(channel: ClientChannel): void {
    for (const [group, channels] of [...this.groupChannelTable]) {
      const info = channels.get(channel);
      if (!info) continue;
      channels.delete(channel);
      if (this.clientChannelTable.get(info.clientId) === channel) this.clientChannelTable.delete(info.clientId);
      this.logger.info({ group, clientId: info.clientId, peer: channel.remoteAddress }, 'producer channel closed');
      // Java keeps empty groups until the next scan; dropping them now keeps listings honest.
      if (channels.size === 0) this.groupChannelTable.delete(group);
    }
  }

  scanNotActiveChannel(): void {
    const now = this.now();
    const toClose: ClientChannel[] = [];
    for (const [group, channels] of [...this.groupChannelTable]) {
      for (const [channel, info] of [...channels]) {
        if (now - info.lastUpdateTimestamp <= this.expiredTimeoutMs) continue;
        channels.delete(channel);
        if (this.clientChannelTable.get(info.clientId) === channel) this.clientChannelTable.delete(info.clientId);
        this.logger.warn({ group, clientId: info.clientId, peer: channel.remoteAddress }, 'producer channel expired (no heartbeat)');
        toClose.push(channel);
      }
      if (channels.size === 0) this.groupChannelTable.delete(group);
    }
    for (const c of toClose) {
      try {
        c.close();
      } catch (err) {
        this.logger.debug({ err }, 'closing expired producer channel failed');
      }
    }
  }

  /** The connections of a group (GET_PRODUCER_CONNECTION_LIST), or undefined when nobody of it is connected. */
  getGroupChannels(group: string): ReadonlyMap<ClientChannel, ClientChannelInfo> | undefined {
    return this.groupChannelTable.get(group);
  }

  groupNames(): string[] {
    return [...this.groupChannelTable.keys()];
  }

  /**
   * A live channel of the group for a transaction check-back: round-robin, skipping closed connections
   * (Java getAvailableChannel: round-robin over active, writable channels).
   */
  getAvailableChannel(group: string): ClientChannel | undefined {
    const channels = this.groupChannelTable.get(group);
    if (!channels || channels.size === 0) return undefined;
    const list = [...channels.keys()];
    this.counter = (this.counter + 1) & 0x7fffffff;
    const start = this.counter % list.length;
    for (let i = 0; i < list.length; i++) {
      const c = list[(start + i) % list.length];
      if (!c.isClosed) return c;
    }
    return undefined;
  }

  /** The channel a client id last registered a producer on. */
  findChannel(clientId: string): ClientChannel | undefined {
    return this.clientChannelTable.get(clientId);
  }

  private watch(channel: ClientChannel): void {
    if (this.watched.has(channel)) return;
    this.watched.add(channel);
    channel.onClose((c) => this.doChannelCloseEvent(c));
  }
}
