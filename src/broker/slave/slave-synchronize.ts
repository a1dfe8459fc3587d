// A slave copies its master's metadata (Java broker/slave/SlaveSynchronize + the schedule in BrokerController):
// topics (GET_ALL_TOPIC_CONFIG 21, the master's VIP port), consumer offsets (43), delay offsets (45), subscription
// groups (201), and with 5.3.3 semantics the timer checkpoint (GET_TIMER_CHECK_POINT 60, VIP port). The master's
// address is the one the nameserver's register answer names (masterAddr); while it names none, nothing is synced
// and nothing is cleared.
//
// Schedule (haSemantics): 5.3.3 looks every 3 s from 10 s after start and syncs everything once 60 s have passed
// since the last full round (the first ≈ 60 s after start), the timer checkpoint at every look; 4.9.8 syncs
// everything 3 s after start and then every 10 s. slaveSyncAllIntervalMs > 0 replaces both with a fixed period.
import type { BrokerConfig } from '../../common/config.js';
import { parseFastjson } from '../../common/fastjson.js';
import type { Logger } from '../../common/logger.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import type { RemotingClient } from '../../remoting/client.js';
import { createRequest } from '../../remoting/command.js';
import type { ConsumerOffsetManager } from '../offset/consumer-offset-manager.js';
import type { ScheduleMessageService } from '../schedule/schedule-message-service.js';
import type { SubscriptionGroupManager } from '../subscription/subscription-group-manager.js';
import type { TopicConfigManager } from '../topic/topic-config-manager.js';

/** Java BrokerOuterAPI: every sync request waits this long. */
const SYNC_TIMEOUT_MS = 3000;
const V533 = { firstLookMs: 10_000, lookEveryMs: 3000, fullEveryMs: 60_000 };
const V498 = { firstMs: 3000, everyMs: 10_000 };
/** 5.3.3 DLedgerRoleChangeHandler.handleSlaveSynchronize: every 3 s the timer checkpoint, everything when 10 s passed. */
const V533_DLEDGER = { firstLookMs: 3000, lookEveryMs: 3000, fullEveryMs: 10_000 };

export interface SlaveSyncDeps {
  config: BrokerConfig;
  client: RemotingClient;
  logger: Logger;
  topics: TopicConfigManager;
  offsets: ConsumerOffsetManager;
  groups: SubscriptionGroupManager;
  schedule: ScheduleMessageService;
  /** Java TimerCheckpoint bytes from the master (the slave keeps them for a later promotion). */
  onTimerCheckpoint?: (body: Buffer) => void;
  /** This broker's own address (a master address equal to it is skipped, as Java does). */
  selfAddr: () => string;
}

/** `ip:port` → the VIP channel `ip:port-2` (Java MixAll.brokerVIPChannel). */
export function vipAddress(addr: string): string {
  const i = addr.lastIndexOf(':');
  return `${addr.slice(0, i)}:${Number(addr.slice(i + 1)) - 2}`;
}

export class SlaveSynchronize {
  masterAddr: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastFullMs = Date.now();
  private running: Promise<void> | null = null;
  /** Completed full rounds and failed requests (logs, haStatus, tests). */
  readonly stats = { rounds: 0, failures: 0 };
  /** `master#code` a master answered REQUEST_CODE_NOT_SUPPORTED (a 4.9.x master and the 5.x-only codes): not asked again. */
  private readonly unsupported = new Set<string>();

  constructor(private readonly d: SlaveSyncDeps) {}

  /**
   * `dledger`: the schedule a DLedger role change starts (4.9.8 uses its usual one; 5.3.3's handler looks every 3 s and
   * syncs everything once 10 s passed since the last full round, counted across role changes).
   */
  start(mode: 'classic' | 'dledger' = 'classic'): void {
    if (this.timer) return;
    const c = this.d.config;
    if (mode === 'classic') this.lastFullMs = Date.now();
    if (c.slaveSyncAllIntervalMs > 0) this.schedule(c.slaveSyncAllIntervalMs, () => this.syncAll());
    else if (c.haSemantics === '4.9.8') this.schedule(V498.firstMs, () => this.syncAll(), V498.everyMs);
    else if (mode === 'dledger') this.schedule(V533_DLEDGER.firstLookMs, () => this.look533(V533_DLEDGER.fullEveryMs), V533_DLEDGER.lookEveryMs);
    else this.schedule(V533.firstLookMs, () => this.look533(V533.fullEveryMs), V533.lookEveryMs);
  }

  private schedule(firstMs: number, fn: () => Promise<void>, everyMs = firstMs): void {
    const run = () => {
      this.timer = setTimeout(run, this.d.config.slaveSyncAllIntervalMs || everyMs);
      this.timer.unref();
      if (!this.running) this.running = fn().finally(() => (this.running = null));
    };
    this.timer = setTimeout(run, firstMs);
    this.timer.unref();
  }

  /** 5.3.3 BrokerController: every 3 s the timer checkpoint, and everything once 60 s passed since the last round. */
  private async look533(fullEveryMs: number): Promise<void> {
    if (this.d.config.timerWheelEnable) await this.syncTimerCheckPoint();
    if (Date.now() - this.lastFullMs > fullEveryMs) {
      this.lastFullMs = Date.now();
      await this.syncAll();
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private usableMaster(): string | null {
    const m = this.masterAddr;
    return m && m !== this.d.selfAddr() ? m : null;
  }

  /** One full round (Java syncAll); each item on its own, a failure is logged and the others still run. */
  async syncAll(): Promise<void> {
    await this.item('topics', RequestCode.GET_ALL_TOPIC_CONFIG, true, (o) => {
      if (this.d.topics.replaceFromMaster(o as Parameters<TopicConfigManager['replaceFromMaster']>[0])) {
        this.d.logger.info({ master: this.masterAddr, topics: this.d.topics.table.size }, 'slave sync: topics taken from the master');
      }
    });
    await this.item('consumer offsets', RequestCode.GET_ALL_CONSUMER_OFFSET, false, (o) => {
      this.d.offsets.mergeFromMaster(o as Parameters<ConsumerOffsetManager['mergeFromMaster']>[0]);
    });
    await this.item('delay offsets', RequestCode.GET_ALL_DELAY_OFFSET, false, (o) => {
      this.d.schedule.replaceFromMaster(o as { offsetTable?: Record<string, unknown> });
    });
    await this.item('subscription groups', RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, false, (o) => {
      if (this.d.groups.replaceFromMaster(o as Parameters<SubscriptionGroupManager['replaceFromMaster']>[0])) {
        this.d.logger.info({ master: this.masterAddr, groups: this.d.groups.table.size }, 'slave sync: subscription groups taken from the master');
      }
    });
    this.stats.rounds++;
  }

  /** 5.3.3 syncTimerCheckPoint (VIP port): the master's timer progress, kept for a later promotion. */
  async syncTimerCheckPoint(): Promise<void> {
    const master = this.usableMaster();
    if (!master || !this.d.onTimerCheckpoint) return;
    const body = await this.fetch(master, RequestCode.GET_TIMER_CHECK_POINT, true, 'timer checkpoint');
    if (body && body.length >= 32) this.d.onTimerCheckpoint(body);
  }

  private async item(what: string, code: number, vip: boolean, apply: (o: unknown) => void): Promise<void> {
    const master = this.usableMaster();
    if (!master) return;
    const body = await this.fetch(master, code, vip, what);
    if (!body) return;
    try {
      apply(parseFastjson(body.toString('utf8')));
    } catch (err) {
      this.stats.failures++;
      this.d.logger.warn({ master, what, err: (err as Error).message }, 'slave sync: the master\'s answer could not be applied');
    }
  }

  /** One request; the VIP port first when Java uses it, the main port if that cannot be reached (ours may run without it). */
  private async fetch(master: string, code: number, vip: boolean, what: string): Promise<Buffer | null> {
    if (this.unsupported.has(`${master}#${code}`)) return null;
    const addrs = vip ? [vipAddress(master), master] : [master];
    for (let i = 0; i < addrs.length; i++) {
      try {
        const res = await this.d.client.request(addrs[i]!, createRequest(code, {}), SYNC_TIMEOUT_MS);
        if (res.code === ResponseCode.REQUEST_CODE_NOT_SUPPORTED) {
          this.unsupported.add(`${master}#${code}`);
          this.d.logger.info({ master, what, code }, 'slave sync: the master does not serve this (a 4.9.x master); not asked again');
          return null;
        }
        if (res.code !== ResponseCode.SUCCESS) {
          this.stats.failures++;
          this.d.logger.warn({ master, what, code: res.code, remark: res.remark }, 'slave sync: the master refused');
          return null;
        }
        return res.body ?? null;
      } catch (err) {
        if (i + 1 < addrs.length) continue;
        this.stats.failures++;
        this.d.logger.warn({ master, what, err: (err as Error).message }, 'slave sync: request failed');
      }
    }
    return null;
  }
}
