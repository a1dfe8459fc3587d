import path from 'node:path';
import type { BrokerConfig } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';
import { internString } from '../../common/intern.js';
import { type DataVersion, bumpDataVersion, dataVersionEquals, dataVersionOf, newDataVersion } from '../data-version.js';
import { Perm, SystemTopic, type TopicConfig, isInherited, newTopicConfig } from './topic-config.js';

/** Topic table persisted as `<store>/config/topics.json` (Java: broker/topic/TopicConfigManager.java). */
export class TopicConfigManager {
  readonly table = new Map<string, TopicConfig>();
  dataVersion: DataVersion = newDataVersion();
  private readonly file: TableFile;
  private readonly systemTopics = new Set<string>();

  constructor(
    private readonly config: BrokerConfig,
    private readonly logger: Logger,
    /** Called after a change that the nameservers must learn about. */
    private readonly onChange: () => void = () => undefined,
  ) {
    this.file = new TableFile(
      path.join(config.storePathRootDir, 'config', 'topics.json'), () => JSON.stringify(this.wrapper(), null, '\t'), this.logger, 'topics',
    );
  }

  load(): void {
    this.addSystemTopics();
    const data = this.file.load() as
      | { topicConfigTable?: Record<string, Partial<TopicConfig>>; dataVersion?: Partial<DataVersion> }
      | undefined;
    if (!data) return;
    this.putAllFrom(data.topicConfigTable);
    if (data.dataVersion) this.dataVersion = dataVersionOf(data.dataVersion);
  }

  private putAllFrom(table: Record<string, Partial<TopicConfig>> | undefined): void {
    for (const [name, tc] of Object.entries(table ?? {})) {
      if (!tc || typeof tc !== 'object') continue;
      const base = newTopicConfig(name, Number(tc.readQueueNums ?? 16));
      this.table.set(name, {
        ...base,
        writeQueueNums: Number(tc.writeQueueNums ?? base.readQueueNums),
        perm: Number(tc.perm ?? base.perm),
        topicFilterType: String(tc.topicFilterType ?? 'SINGLE_TAG'),
        topicSysFlag: Number(tc.topicSysFlag ?? 0),
        order: Boolean(tc.order ?? false),
        attributes: (tc.attributes as Record<string, string>) ?? {},
      });
    }
  }

  /**
   * A slave takes its master's table (Java SlaveSynchronize.syncTopicConfig): when the master's dataVersion differs
   * from ours, the table is replaced, the version taken over and the file written. Returns whether it changed.
   */
  replaceFromMaster(wrapper: { topicConfigTable?: Record<string, Partial<TopicConfig>>; dataVersion?: Partial<DataVersion> }): boolean {
    if (!wrapper.dataVersion || !wrapper.topicConfigTable) return false;
    const version = dataVersionOf(wrapper.dataVersion);
    if (dataVersionEquals(version, this.dataVersion)) return false;
    this.table.clear();
    this.putAllFrom(wrapper.topicConfigTable);
    this.dataVersion = version;
    this.file.request();
    return true;
  }

  private addSystemTopics(): void {
    const c = this.config;
    const add = (name: string, queues: number, perm: number = Perm.READ | Perm.WRITE) => {
      this.table.set(name, newTopicConfig(name, queues, perm));
      this.systemTopics.add(name);
    };
    add(SystemTopic.SELF_TEST, 1);
    if (c.autoCreateTopicEnable) add(SystemTopic.AUTO_CREATE_TOPIC_KEY, c.defaultTopicQueueNums, Perm.INHERIT | Perm.READ | Perm.WRITE);
    add(SystemTopic.BENCHMARK, 1024);
    add(c.brokerClusterName, 16, c.clusterTopicEnable ? Perm.INHERIT | Perm.READ | Perm.WRITE : Perm.INHERIT);
    add(c.brokerName, 1, c.brokerTopicEnable ? Perm.INHERIT | Perm.READ | Perm.WRITE : Perm.INHERIT);
    add(SystemTopic.OFFSET_MOVED_EVENT, 1);
    add(SystemTopic.SCHEDULE_TOPIC, 18);
    if (c.traceTopicEnable) add(c.msgTraceTopicName, 1);
    add(`${c.brokerClusterName}_REPLY_TOPIC`, 1);
    if (c.timerWheelEnable) add(SystemTopic.TIMER_TOPIC, 1);
    // POP checkpoints and acks (Java PopAckConstants.buildClusterReviveTopic)
    add(`${SystemTopic.REVIVE_LOG_PREFIX}${c.brokerClusterName}`, c.reviveQueueNum);
  }

  isSystemTopic(topic: string): boolean {
    return this.systemTopics.has(topic);
  }

  get(topic: string): TopicConfig | undefined {
    return this.table.get(topic);
  }

  /**
   * Adds or replaces a topic. `callerRegisters`: the caller registers the change itself (UPDATE_AND_CREATE_TOPIC
   * sends just that topic, Java registerIncrementBrokerData), so no full registration is asked for here.
   */
  upsert(tc: TopicConfig, opts: { callerRegisters?: boolean } = {}): void {
    tc.topicName = internString(tc.topicName); // the object sends look the store's maps up with (checkMessage)
    this.table.set(tc.topicName, tc);
    this.changed(opts.callerRegisters !== true);
  }

  delete(topic: string): boolean {
    const existed = this.table.delete(topic);
    if (existed) this.changed();
    return existed;
  }

  /**
   * Topic auto-creation on send (Java createTopicInSendMessageMethod): needs the default topic with the INHERIT
   * bit; queues = min(client's request, default topic's write queues); perm = default perm without INHERIT.
   */
  createTopicInSendMessageMethod(topic: string, defaultTopic: string, clientQueueNums: number, topicSysFlag: number): TopicConfig | undefined {
    const existing = this.table.get(topic);
    if (existing) return existing;
    const def = this.table.get(defaultTopic);
    if (!def) {
      this.logger.warn({ topic, defaultTopic }, 'create topic: default topic does not exist');
      return undefined;
    }
    if (defaultTopic === SystemTopic.AUTO_CREATE_TOPIC_KEY && !this.config.autoCreateTopicEnable) return undefined;
    if (!isInherited(def.perm)) {
      this.logger.warn({ topic, defaultTopic, perm: def.perm }, 'create topic: default topic has no INHERIT permission');
      return undefined;
    }
    const queues = Math.max(1, Math.min(clientQueueNums > 0 ? clientQueueNums : def.writeQueueNums, def.writeQueueNums));
    const tc = newTopicConfig(topic, queues, def.perm & ~Perm.INHERIT);
    tc.topicSysFlag = topicSysFlag;
    tc.topicFilterType = def.topicFilterType;
    this.logger.info({ topic, queues }, 'auto-created topic');
    this.upsert(tc);
    return tc;
  }

  /** Retry/DLQ topics are created on demand with a fixed queue count (Java createTopicInSendMessageBackMethod). */
  createTopicIfAbsent(topic: string, queues: number, perm: number, topicSysFlag = 0): TopicConfig {
    const existing = this.table.get(topic);
    if (existing) return existing;
    const tc = newTopicConfig(topic, queues, perm);
    tc.topicSysFlag = topicSysFlag;
    this.upsert(tc);
    return tc;
  }

  private changed(register = true): void {
    bumpDataVersion(this.dataVersion);
    this.file.request();
    if (register) this.onChange();
  }

  /** The JSON Java writes for topics.json and GET_ALL_TOPIC_CONFIG / register bodies. */
  wrapper(): { topicConfigTable: Record<string, TopicConfig>; dataVersion: DataVersion } {
    return { topicConfigTable: Object.fromEntries(this.table), dataVersion: this.dataVersion };
  }

  /** Synchronous save (start-up; shutdown after saved()). Changes are otherwise saved off the event loop. */
  persist(): void {
    this.file.saveSync();
  }

  /** Resolves once every change so far is on disk (or its save failed, which is logged). */
  saved(): Promise<void> {
    return this.file.idle();
  }
}
