import path from 'node:path';
import type { BrokerConfig } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';
import { type DataVersion, bumpDataVersion, dataVersionEquals, dataVersionOf, newDataVersion } from '../data-version.js';

/**
 * Java SubscriptionGroupConfig (remoting/protocol/subscription/SubscriptionGroupConfig.java), with the names
 * fastjson writes. `subscriptionDataSet` (5.x) is kept as given and omitted when absent.
 */
export interface SubscriptionGroupConfig {
  attributes: Record<string, string>;
  brokerId: number;
  consumeBroadcastEnable: boolean;
  consumeEnable: boolean;
  consumeFromMinEnable: boolean;
  consumeMessageOrderly: boolean;
  consumeTimeoutMinute: number;
  groupName: string;
  /** 5.x GroupRetryPolicy; default `{"type":"CUSTOMIZED"}`. Kept as an opaque object. */
  groupRetryPolicy: Record<string, unknown>;
  groupSysFlag: number;
  notifyConsumerIdsChangedEnable: boolean;
  retryMaxTimes: number;
  retryQueueNums: number;
  subscriptionDataSet?: unknown[];
  whichBrokerWhenConsumeSlowly: number;
}

/** Built-in groups, all with default settings (Java SubscriptionGroupManager.init; names from MixAll). */
export const BUILT_IN_GROUPS: readonly string[] = [
  'TOOLS_CONSUMER',
  'FILTERSRV_CONSUMER',
  'SELF_TEST_C_GROUP',
  'CID_ONS-HTTP-PROXY',
  'CID_ONSAPI_PULL',
  'CID_ONSAPI_PERMISSION',
  'CID_ONSAPI_OWNER',
  'CID_RMQ_SYS_TRANS', // 5.x only
];

/** Java MixAll.CID_RMQ_SYS_PREFIX: such groups are auto-created even when autoCreateSubscriptionGroup=false. */
export const CID_RMQ_SYS_PREFIX = 'CID_RMQ_SYS_';

const GROUP_PATTERN = /^[%|a-zA-Z0-9_-]+$/;
/** Java PermName.INDEX_PERM_READ: the bit of a forbiddenTable value that denies reading. */
const PERM_INDEX_READ = 2;
/** Java TopicValidator.GROUP_MAX_LENGTH (retry/DLQ topic names are built from it). */
export const GROUP_MAX_LENGTH = 120;

/** Java TopicValidator.validateGroup: an error remark, or undefined when the name is fine. */
export function validateGroupName(group: string | undefined): string | undefined {
  if (!group || group.trim() === '') return 'The specified group is blank.';
  if (!GROUP_PATTERN.test(group)) {
    return `The specified group: ${group}, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`;
  }
  if (group.length > GROUP_MAX_LENGTH) return `The specified group: ${group}, is longer than group max length: ${GROUP_MAX_LENGTH}`;
  return undefined;
}

export function newSubscriptionGroupConfig(groupName: string): SubscriptionGroupConfig {
  return {
    attributes: {},
    brokerId: 0,
    consumeBroadcastEnable: true,
    consumeEnable: true,
    consumeFromMinEnable: true,
    consumeMessageOrderly: false,
    consumeTimeoutMinute: 15,
    groupName,
    groupRetryPolicy: { type: 'CUSTOMIZED' },
    groupSysFlag: 0,
    notifyConsumerIdsChangedEnable: true,
    retryMaxTimes: 16,
    retryQueueNums: 1,
    whichBrokerWhenConsumeSlowly: 1,
  };
}

/** Largest retryQueueNums we accept (Java has no limit; a retry topic with this many queues is already absurd). */
export const MAX_RETRY_QUEUE_NUMS = 1024;

/**
 * Builds a config from an untrusted object (file, fastjson body, Go/JS JSON): unknown keys ignored, numbers and
 * booleans accepted as strings (fastjson is lenient), missing fields take Java's defaults.
 * Throws Error with a remark naming the field when a value cannot be used.
 */
export function parseSubscriptionGroupConfig(raw: unknown, nameHint?: string): SubscriptionGroupConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('subscription group config must be a JSON object');
  const o = raw as Record<string, unknown>;
  const groupName = o.groupName === undefined || o.groupName === null ? nameHint : String(o.groupName);
  if (!groupName) throw new Error('subscription group config has no groupName');
  const c = newSubscriptionGroupConfig(groupName);
  const bool = (key: keyof SubscriptionGroupConfig): void => {
    const v = o[key];
    if (v === undefined || v === null) return;
    if (typeof v === 'boolean') (c as unknown as Record<string, unknown>)[key] = v;
    else if (typeof v === 'string' && /^(true|false)$/i.test(v)) (c as unknown as Record<string, unknown>)[key] = v.toLowerCase() === 'true';
    else if (typeof v === 'number') (c as unknown as Record<string, unknown>)[key] = v !== 0;
    else throw new Error(`${key}: expected true or false, got ${JSON.stringify(v)}`);
  };
  const int = (key: keyof SubscriptionGroupConfig, min: number, max: number): void => {
    const v = o[key];
    if (v === undefined || v === null || v === '') return;
    const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v.trim()) : Number.NaN;
    if (!Number.isInteger(n)) throw new Error(`${key}: expected an integer, got ${JSON.stringify(v)}`);
    if (n < min || n > max) throw new Error(`${key}: ${n} is out of range [${min}, ${max}]`);
    (c as unknown as Record<string, unknown>)[key] = n;
  };
  bool('consumeEnable');
  bool('consumeFromMinEnable');
  bool('consumeBroadcastEnable');
  bool('consumeMessageOrderly');
  bool('notifyConsumerIdsChangedEnable');
  int('retryQueueNums', 0, MAX_RETRY_QUEUE_NUMS);
  int('retryMaxTimes', -1, 2147483647);
  int('brokerId', 0, Number.MAX_SAFE_INTEGER);
  int('whichBrokerWhenConsumeSlowly', 0, Number.MAX_SAFE_INTEGER);
  int('groupSysFlag', -2147483648, 2147483647);
  int('consumeTimeoutMinute', 0, 2147483647);
  if (o.groupRetryPolicy && typeof o.groupRetryPolicy === 'object' && !Array.isArray(o.groupRetryPolicy)) {
    c.groupRetryPolicy = o.groupRetryPolicy as Record<string, unknown>;
  }
  if (Array.isArray(o.subscriptionDataSet)) c.subscriptionDataSet = o.subscriptionDataSet;
  if (o.attributes && typeof o.attributes === 'object' && !Array.isArray(o.attributes)) {
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.attributes as Record<string, unknown>)) {
      if (v !== undefined && v !== null) attrs[k] = String(v);
    }
    c.attributes = attrs;
  }
  return c;
}

/** fastjson writes bean properties sorted by name; the interface lists them in that order already. */
function sortedGroupConfig(c: SubscriptionGroupConfig): SubscriptionGroupConfig {
  const out: SubscriptionGroupConfig = {
    attributes: c.attributes,
    brokerId: c.brokerId,
    consumeBroadcastEnable: c.consumeBroadcastEnable,
    consumeEnable: c.consumeEnable,
    consumeFromMinEnable: c.consumeFromMinEnable,
    consumeMessageOrderly: c.consumeMessageOrderly,
    consumeTimeoutMinute: c.consumeTimeoutMinute,
    groupName: c.groupName,
    groupRetryPolicy: c.groupRetryPolicy,
    groupSysFlag: c.groupSysFlag,
    notifyConsumerIdsChangedEnable: c.notifyConsumerIdsChangedEnable,
    retryMaxTimes: c.retryMaxTimes,
    retryQueueNums: c.retryQueueNums,
    whichBrokerWhenConsumeSlowly: c.whichBrokerWhenConsumeSlowly,
  };
  if (c.subscriptionDataSet) {
    // keep fastjson's alphabetical order: subscriptionDataSet sorts before whichBrokerWhenConsumeSlowly
    const { whichBrokerWhenConsumeSlowly, ...rest } = out;
    return { ...rest, subscriptionDataSet: c.subscriptionDataSet, whichBrokerWhenConsumeSlowly };
  }
  return out;
}

/** The JSON of one group, as GET_SUBSCRIPTIONGROUP_CONFIG and the tables carry it. */
export function encodeSubscriptionGroupConfig(c: SubscriptionGroupConfig): string {
  return JSON.stringify(sortedGroupConfig(c));
}

/**
 * Subscription groups, persisted as `<store>/config/subscriptionGroup.json`
 * (Java: broker/subscription/SubscriptionGroupManager.java).
 */
export class SubscriptionGroupManager {
  readonly table = new Map<string, SubscriptionGroupConfig>();
  /**
   * 5.x forbiddenTable: group → topic → permission bits the group is denied on the topic (PermName indexes; only
   * the read bit is set by UPDATE_AND_GET_GROUP_FORBIDDEN). Kept on the master (Java's slaves do not sync it).
   */
  readonly forbidden = new Map<string, Map<string, number>>();
  dataVersion: DataVersion = newDataVersion();
  private readonly file: TableFile;

  constructor(
    private readonly config: BrokerConfig,
    private readonly logger: Logger,
  ) {
    this.file = new TableFile(
      path.join(config.storePathRootDir, 'config', 'subscriptionGroup.json'), () => this.encode(), this.logger, 'subscription groups',
    );
    this.addBuiltInGroups();
  }

  private addBuiltInGroups(): void {
    for (const name of BUILT_IN_GROUPS) this.table.set(name, newSubscriptionGroupConfig(name));
  }

  /** Loads the file (or its .bak); entries found there replace the built-in defaults. */
  load(): void {
    const data = this.file.load() as
      | { subscriptionGroupTable?: Record<string, unknown>; forbiddenTable?: unknown; dataVersion?: Partial<Record<keyof DataVersion, unknown>> }
      | undefined;
    if (!data || typeof data !== 'object') return;
    this.loadForbidden(data.forbiddenTable);
    for (const [name, raw] of Object.entries(data.subscriptionGroupTable ?? {})) {
      try {
        const cfg = parseSubscriptionGroupConfig(raw, name);
        this.table.set(name, cfg);
      } catch (err) {
        this.logger.warn({ group: name, err: (err as Error).message, file: this.file.file }, 'skipping bad subscription group entry');
      }
    }
    const dv = data.dataVersion;
    if (dv && typeof dv === 'object') {
      this.dataVersion = {
        stateVersion: Number(dv.stateVersion ?? 0) || 0,
        timestamp: Number(dv.timestamp ?? Date.now()) || Date.now(),
        counter: Number(dv.counter ?? 0) || 0,
      };
    }
  }

  /**
   * A slave takes its master's groups (Java SlaveSynchronize.syncSubscriptionGroupConfig): replaced when the
   * master's dataVersion differs from ours. Returns whether it changed.
   */
  replaceFromMaster(wrapper: { subscriptionGroupTable?: Record<string, unknown>; dataVersion?: Partial<Record<keyof DataVersion, unknown>> }): boolean {
    if (!wrapper.dataVersion || !wrapper.subscriptionGroupTable) return false;
    const version = dataVersionOf(wrapper.dataVersion);
    if (dataVersionEquals(version, this.dataVersion)) return false;
    const next = new Map<string, SubscriptionGroupConfig>();
    for (const [name, raw] of Object.entries(wrapper.subscriptionGroupTable)) {
      try {
        next.set(name, parseSubscriptionGroupConfig(raw, name));
      } catch (err) {
        this.logger.warn({ group: name, err: (err as Error).message }, 'master sync: skipping bad subscription group entry');
      }
    }
    this.table.clear();
    for (const [name, cfg] of next) this.table.set(name, cfg);
    this.dataVersion = version;
    this.file.request();
    return true;
  }

  /** The group's config, without auto-creation. */
  get(group: string): SubscriptionGroupConfig | undefined {
    return this.table.get(group);
  }

  /**
   * The group's config; created with defaults (and persisted) when absent and autoCreateSubscriptionGroup is on
   * or the group is a `CID_RMQ_SYS_` group. Invalid names are never created (Java 5.x).
   */
  findSubscriptionGroupConfig(group: string): SubscriptionGroupConfig | undefined {
    const existing = this.table.get(group);
    if (existing) return existing;
    if (!this.config.autoCreateSubscriptionGroup && !group.startsWith(CID_RMQ_SYS_PREFIX)) return undefined;
    if (validateGroupName(group) !== undefined) return undefined;
    const cfg = newSubscriptionGroupConfig(group);
    this.table.set(group, cfg);
    this.logger.info({ group }, 'auto-created subscription group');
    this.changed();
    return cfg;
  }

  private loadForbidden(raw: unknown): void {
    if (!raw || typeof raw !== 'object') return;
    for (const [group, topics] of Object.entries(raw as Record<string, unknown>)) {
      if (!topics || typeof topics !== 'object') continue;
      for (const [topic, bits] of Object.entries(topics as Record<string, unknown>)) {
        if (Number.isInteger(bits) && (bits as number) > 0) this.forbiddenBits(group, true).set(topic, bits as number);
      }
    }
  }

  private forbiddenBits(group: string, create: true): Map<string, number>;
  private forbiddenBits(group: string, create: false): Map<string, number> | undefined;
  private forbiddenBits(group: string, create: boolean): Map<string, number> | undefined {
    let m = this.forbidden.get(group);
    if (!m && create) this.forbidden.set(group, (m = new Map()));
    return m;
  }

  /** Java getForbidden(group, topic, INDEX_PERM_READ). */
  isReadForbidden(group: string, topic: string): boolean {
    if (this.forbidden.size === 0) return false;
    return ((this.forbidden.get(group)?.get(topic) ?? 0) & (1 << PERM_INDEX_READ)) !== 0;
  }

  /**
   * Java updateForbidden(group, topic, INDEX_PERM_READ, forbid). Clearing the last bit removes only this topic's
   * entry (Java removes the group's whole map then, which also lifts its other topics' bans).
   */
  setReadForbidden(group: string, topic: string, forbid: boolean): void {
    const old = this.forbidden.get(group)?.get(topic) ?? 0;
    const next = forbid ? old | (1 << PERM_INDEX_READ) : old & ~(1 << PERM_INDEX_READ);
    if (next === old) return;
    if (next > 0) {
      this.forbiddenBits(group, true).set(topic, next);
    } else {
      const m = this.forbiddenBits(group, false);
      m?.delete(topic);
      if (m && m.size === 0) this.forbidden.delete(group);
    }
    this.logger.info({ group, topic, old, forbidden: next }, 'group forbidden changed');
    this.changed();
  }

  /** UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: replaces the whole config. */
  updateSubscriptionGroupConfig(cfg: SubscriptionGroupConfig): void {
    const old = this.table.get(cfg.groupName);
    this.table.set(cfg.groupName, cfg);
    this.logger.info({ group: cfg.groupName, created: !old }, old ? 'updated subscription group' : 'created subscription group');
    this.changed();
  }

  /** Java disableConsume: used when a group must stop consuming (bumps the version; persisted on the next change). */
  disableConsume(group: string): void {
    const cfg = this.table.get(group);
    if (!cfg) return;
    cfg.consumeEnable = false;
    bumpDataVersion(this.dataVersion);
  }

  deleteSubscriptionGroupConfig(group: string): boolean {
    const existed = this.table.delete(group);
    if (existed) {
      this.logger.info({ group }, 'deleted subscription group');
      this.changed();
    } else {
      this.logger.warn({ group }, 'delete subscription group: no such group');
    }
    return existed;
  }

  private changed(): void {
    bumpDataVersion(this.dataVersion);
    this.file.request();
  }

  /**
   * The JSON Java writes for the file and for GET_ALL_SUBSCRIPTIONGROUP_CONFIG (SubscriptionGroupWrapper; 5.x adds
   * the `forbiddenTable`, which 4.9.x readers ignore).
   */
  encode(): string {
    const groups: string[] = [];
    for (const [name, cfg] of this.table) groups.push(`${JSON.stringify(name)}:${encodeSubscriptionGroupConfig(cfg)}`);
    const dv = this.dataVersion;
    return (
      `{"dataVersion":{"counter":${dv.counter},"stateVersion":${dv.stateVersion},"timestamp":${dv.timestamp}},` +
      `"forbiddenTable":${this.encodeForbidden()},"subscriptionGroupTable":{${groups.join(',')}}}`
    );
  }

  private encodeForbidden(): string {
    const out: Record<string, Record<string, number>> = {};
    for (const [group, topics] of this.forbidden) out[group] = Object.fromEntries(topics);
    return JSON.stringify(out);
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
