import zlib from 'node:zlib';
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { RequestCode } from '../common/request-code.js';
import { ResponseCode } from '../common/response-code.js';
import { createRequest } from '../remoting/command.js';
import type { RemotingClient } from '../remoting/client.js';
import type { DataVersion } from './data-version.js';
import { type TopicConfig, isReadable, isWriteable, newTopicConfig } from './topic/topic-config.js';
import type { TopicConfigManager } from './topic/topic-config-manager.js';

/** The topic part of a REGISTER_BROKER body (Java TopicConfigSerializeWrapper). */
interface TopicsWrapper {
  topicConfigTable: Record<string, TopicConfig>;
  dataVersion: DataVersion;
}

/**
 * The topics as registered: a broker that is not both readable and writable (brokerPermission, e.g. 4 to drain it)
 * registers every topic with that permission instead of its own, so routes stop sending to it (or reading from
 * it). Java BrokerController.registerBrokerAll / registerIncrementBrokerData.
 */
export function topicsAsRegistered(topics: Iterable<TopicConfig>, brokerPermission: number): Record<string, TopicConfig> {
  const restricted = !isWriteable(brokerPermission) || !isReadable(brokerPermission);
  const out: Record<string, TopicConfig> = {};
  for (const tc of topics) {
    out[tc.topicName] = restricted
      ? { ...newTopicConfig(tc.topicName, tc.readQueueNums, brokerPermission), writeQueueNums: tc.writeQueueNums }
      : tc;
  }
  return out;
}

export function parseNamesrvAddrs(value: string): string[] {
  return value
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** What a nameserver answers a registering slave about its master (Java RegisterBrokerResult). */
export interface RegisterResult {
  /** The master's HA address (`brokerIP2:haListenPort`), when the nameserver knows a live master of the group. */
  haServerAddr?: string;
  /** The master's `brokerIP1:listenPort`. */
  masterAddr?: string;
}

export interface RegistrationHooks {
  /** `brokerIP2:haListenPort` as registered (default brokerIP2 or brokerIP1 : listenPort + 1). */
  haServerAddr?: () => string;
  /** The first answer of each round (completion order, as Java 5.3.3 takes the first non-null result). */
  onResult?: (result: RegisterResult) => void;
}

/** DLedger mode: the first periodic registration comes this long after start (Java BrokerController's initial delay). */
export const FIRST_PERIODIC_REGISTRATION_MS = 10_000;

/**
 * Broker → nameserver registration (Java BrokerOuterAPI.registerBrokerAll): every nameserver, in parallel,
 * at start, every registerNameServerPeriod and after topic changes; UNREGISTER_BROKER on shutdown. One registration
 * runs at a time (Java's registerBrokerAll is synchronized), in the order they were asked for.
 */
export class NamesrvRegistration {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  /** The registration that follows the one in flight (asked for meanwhile); shared by everyone who asked. */
  private followUp: Promise<void> | undefined;
  /** Whether the follow-up is oneway: only when every request it stands for was. */
  private followUpOneway = true;
  /** Set by unregisterAll: no registration starts after it. */
  private stopped = false;

  constructor(
    private readonly config: BrokerConfig,
    private readonly client: RemotingClient,
    private readonly topics: TopicConfigManager,
    private readonly brokerAddr: () => string,
    private readonly logger: Logger,
    private readonly hooks: RegistrationHooks = {},
  ) {}

  /**
   * Registers now and every registerNameServerPeriod. DLedger mode (`registerNow` false): nothing at start; the
   * periodic registration begins 10 s later (Java BrokerController.start registers at once only without DLedger).
   */
  start(opts: { registerNow: boolean } = { registerNow: true }): Promise<void> {
    const periodic = () => {
      this.timer = setInterval(() => void this.registerAll(), this.config.registerNameServerPeriod);
      this.timer.unref();
    };
    if (opts.registerNow) {
      periodic();
      return this.registerAll();
    }
    this.timer = setTimeout(() => {
      periodic();
      void this.registerAll();
    }, Math.min(FIRST_PERIODIC_REGISTRATION_MS, this.config.registerNameServerPeriod));
    this.timer.unref();
    return Promise.resolve();
  }

  /**
   * Registers with every nameserver. The promise settles after a registration that started after this call (so it
   * carries every change made before it). Bursts coalesce: one registration runs at a time, and one more follows,
   * shared by every call made while the first was in flight. `oneway` (a DLedger role change, Java
   * registerBrokerAll(.., oneway=true, ..)): the requests are sent without waiting for answers, so nothing is
   * learned from them (a new follower learns its master at the next periodic registration).
   */
  registerAll(opts: { oneway?: boolean } = {}): Promise<void> {
    const oneway = opts.oneway === true;
    if (this.inFlight) {
      if (!this.followUp) {
        this.followUpOneway = oneway;
        this.followUp = this.inFlight.then(() => {
          this.followUp = undefined;
          return this.registerNow(this.followUpOneway);
        });
      } else if (!oneway) {
        this.followUpOneway = false;
      }
      return this.followUp;
    }
    return this.registerNow(oneway);
  }

  /**
   * Registers one created or changed topic (Java registerIncrementBrokerData, which UPDATE_AND_CREATE_TOPIC uses):
   * the body carries that topic and the table's data version only, so neither the broker nor the nameservers go
   * through every topic for each one an admin creates (with 3,000 topics a full registration took 80-90 ms of the
   * event loop). Nameservers add or update the topics of a body and drop none, and the next periodic
   * registration carries the whole table. Runs after the registration in flight or queued, as Java's are serial.
   */
  registerTopic(tc: TopicConfig): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const wrapper: TopicsWrapper = {
      topicConfigTable: topicsAsRegistered([tc], this.config.brokerPermission),
      // as of this change: a later one (bumped before this body is sent) must still look new to the nameservers
      dataVersion: { ...this.topics.dataVersion },
    };
    const before = this.followUp ?? this.inFlight;
    const run = (before ? before.catch(() => undefined) : Promise.resolve()).then(() =>
      this.stopped ? undefined : this.doRegister(false, wrapper),
    );
    const tracked: Promise<void> = run.finally(() => {
      if (this.inFlight === tracked) this.inFlight = undefined;
    });
    // later registerAll calls queue behind it (its body was taken now; theirs carry everything after it)
    if (!this.followUp) this.inFlight = tracked;
    return tracked;
  }

  private registerNow(oneway = false): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const run = this.doRegister(oneway).finally(() => {
      if (this.inFlight === run) this.inFlight = undefined;
    });
    this.inFlight = run;
    return run;
  }

  private fullWrapper(): TopicsWrapper {
    const all = this.topics.wrapper();
    const permission = this.config.brokerPermission;
    if (isWriteable(permission) && isReadable(permission)) return all;
    return { topicConfigTable: topicsAsRegistered(Object.values(all.topicConfigTable), permission), dataVersion: all.dataVersion };
  }

  private async doRegister(oneway: boolean, wrapper: TopicsWrapper = this.fullWrapper()): Promise<void> {
    const addrs = parseNamesrvAddrs(this.config.namesrvAddr);
    if (addrs.length === 0) return;
    const body = Buffer.from(JSON.stringify({ filterServerList: [], topicConfigSerializeWrapper: wrapper }), 'utf8');
    // Java UtilAll.crc32 clears the sign bit; the official namesrv compares against that.
    const crc = zlib.crc32(body) & 0x7fffffff;
    const haServerAddr = this.hooks.haServerAddr?.() ?? `${this.config.brokerIP2 || this.config.brokerIP1}:${this.config.listenPort + 1}`;
    let answered = false;
    await Promise.all(
      addrs.map(async (addr) => {
        const req = createRequest(
          RequestCode.REGISTER_BROKER,
          {
            brokerAddr: this.brokerAddr(),
            brokerId: String(this.config.brokerId),
            brokerName: this.config.brokerName,
            clusterName: this.config.brokerClusterName,
            haServerAddr,
            compressed: 'false',
            bodyCrc32: String(crc),
          },
          body,
        );
        try {
          if (oneway) {
            await this.client.oneway(addr, req);
            return;
          }
          const res = await this.client.request(addr, req, this.config.registerBrokerTimeoutMills);
          if (res.code !== ResponseCode.SUCCESS) {
            this.logger.warn({ addr, code: res.code, remark: res.remark }, 'register broker refused');
          } else if (!answered) {
            answered = true;
            this.hooks.onResult?.({ haServerAddr: res.extFields.haServerAddr, masterAddr: res.extFields.masterAddr });
          }
        } catch (err) {
          this.logger.warn({ addr, err: (err as Error).message }, 'register broker failed');
        }
      }),
    );
  }

  async unregisterAll(): Promise<void> {
    if (this.timer) {
      clearInterval(this.timer);
      clearTimeout(this.timer);
    }
    this.timer = undefined;
    this.stopped = true;
    await this.inFlight?.catch(() => undefined);
    await this.followUp?.catch(() => undefined);
    await Promise.all(
      parseNamesrvAddrs(this.config.namesrvAddr).map(async (addr) => {
        const req = createRequest(RequestCode.UNREGISTER_BROKER, {
          brokerAddr: this.brokerAddr(),
          brokerId: String(this.config.brokerId),
          brokerName: this.config.brokerName,
          clusterName: this.config.brokerClusterName,
        });
        try {
          await this.client.request(addr, req, 3000);
        } catch (err) {
          this.logger.warn({ addr, err: (err as Error).message }, 'unregister broker failed');
        }
      }),
    );
  }
}
