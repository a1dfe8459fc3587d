import path from 'node:path';
import type { BrokerConfig } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';
import { type DataVersion, dataVersionOf, newDataVersion } from '../data-version.js';

const TOPIC_GROUP_SEPARATOR = '@';

/**
 * Committed consumer offsets, `<topic>@<group>` → queueId → next offset to consume, persisted as
 * `<store>/config/consumerOffset.json` every flushConsumerOffsetInterval (Java ConsumerOffsetManager).
 */
export class ConsumerOffsetManager {
  readonly table = new Map<string, Map<number, number>>();
  /**
   * 5.x ConsumerOffsetManager.dataVersion (a 5.3.3 slave fails its sync without one in GET_ALL_CONSUMER_OFFSET):
   * the counter moves with every change (Java: every consumerOffsetUpdateVersionStep commits).
   */
  dataVersion: DataVersion = newDataVersion();
  /**
   * 5.x pullOffsetTable: the nextBeginOffset of the group's latest pull per queue, whatever its status (found,
   * nothing new, offset moved), committed or not. In memory only (Java does not persist it); GET_CONSUME_STATS
   * reports it as pullOffset.
   */
  private readonly pullTable = new Map<string, Map<number, number>>();
  private readonly file: TableFile;

  constructor(config: BrokerConfig, logger: Logger) {
    this.file = new TableFile(path.join(config.storePathRootDir, 'config', 'consumerOffset.json'), () => this.encode(), logger, 'consumer offsets');
  }

  load(): void {
    const data = this.file.load() as OffsetWrapper | undefined;
    this.putAll(data?.offsetTable);
    if (data?.dataVersion && typeof data.dataVersion === 'object') this.dataVersion = dataVersionOf(data.dataVersion);
  }

  private putAll(table: OffsetWrapper['offsetTable']): void {
    for (const [key, queues] of Object.entries(table ?? {})) {
      if (!queues || typeof queues !== 'object') continue;
      let m = this.table.get(key);
      if (!m) {
        m = new Map<number, number>();
        this.table.set(key, m);
      }
      for (const [qid, off] of Object.entries(queues)) {
        const q = Number(qid);
        const o = Number(off);
        if (Number.isInteger(q) && Number.isSafeInteger(o)) m.set(q, o);
      }
    }
  }

  /**
   * A slave takes its master's offsets (Java SlaveSynchronize.syncConsumerOffset): every key the master has
   * overwrites ours (no version check, nothing removed), the master's dataVersion is taken over, the file written.
   */
  mergeFromMaster(wrapper: OffsetWrapper): void {
    this.putAll(wrapper.offsetTable);
    if (wrapper.dataVersion && typeof wrapper.dataVersion === 'object') this.dataVersion = dataVersionOf(wrapper.dataVersion);
    this.file.request();
  }

  commitOffset(group: string, topic: string, queueId: number, offset: number): void {
    const key = topic + TOPIC_GROUP_SEPARATOR + group;
    let m = this.table.get(key);
    if (!m) {
      m = new Map();
      this.table.set(key, m);
    }
    m.set(queueId, offset);
    this.dataVersion.counter++;
    this.file.changed();
  }

  /** Java 5.x commitPullOffset: called for every pull the broker answered from the store. */
  commitPullOffset(group: string, topic: string, queueId: number, offset: number): void {
    const key = topic + TOPIC_GROUP_SEPARATOR + group;
    let m = this.pullTable.get(key);
    if (!m) {
      m = new Map();
      this.pullTable.set(key, m);
    }
    m.set(queueId, offset);
  }

  /** Java 5.x queryPullOffset: the latest pull's next offset, else the committed offset, else -1. */
  queryPullOffset(group: string, topic: string, queueId: number): number {
    return this.pullTable.get(topic + TOPIC_GROUP_SEPARATOR + group)?.get(queueId) ?? this.queryOffset(group, topic, queueId);
  }

  /** The committed offset, or -1 when none. */
  queryOffset(group: string, topic: string, queueId: number): number {
    return this.table.get(topic + TOPIC_GROUP_SEPARATOR + group)?.get(queueId) ?? -1;
  }

  queryOffsets(group: string, topic: string): Map<number, number> | undefined {
    return this.table.get(topic + TOPIC_GROUP_SEPARATOR + group);
  }

  /** Java cloneOffset: dest's offsets for the topic become a copy of src's (nothing happens when src has none). */
  cloneOffset(srcGroup: string, destGroup: string, topic: string): void {
    const src = this.table.get(topic + TOPIC_GROUP_SEPARATOR + srcGroup);
    if (!src) return;
    this.table.set(topic + TOPIC_GROUP_SEPARATOR + destGroup, new Map(src));
    this.file.changed();
  }

  /** Groups with offsets for a topic. */
  whichGroupByTopic(topic: string): string[] {
    const out: string[] = [];
    for (const key of this.table.keys()) {
      const i = key.indexOf(TOPIC_GROUP_SEPARATOR);
      if (key.slice(0, i) === topic) out.push(key.slice(i + 1));
    }
    return out;
  }

  /** Topics a group has offsets for. */
  whichTopicByGroup(group: string): string[] {
    const out: string[] = [];
    for (const key of this.table.keys()) {
      const i = key.indexOf(TOPIC_GROUP_SEPARATOR);
      if (key.slice(i + 1) === group) out.push(key.slice(0, i));
    }
    return out;
  }

  removeGroup(group: string): void {
    for (const t of [this.table, this.pullTable]) {
      for (const key of [...t.keys()]) {
        if (key.slice(key.indexOf(TOPIC_GROUP_SEPARATOR) + 1) === group) t.delete(key);
      }
    }
    this.file.changed();
  }

  removeTopic(topic: string): void {
    for (const t of [this.table, this.pullTable]) {
      for (const key of [...t.keys()]) {
        if (key.slice(0, key.indexOf(TOPIC_GROUP_SEPARATOR)) === topic) t.delete(key);
      }
    }
    this.file.changed();
  }

  /** Java's layout: int-keyed maps are written with bare numeric keys (fastjson); 5.x adds dataVersion. */
  encode(): string {
    const lines: string[] = [];
    for (const [key, queues] of this.table) {
      const inner = [...queues].map(([q, o]) => `${q}:${o}`).join(',');
      lines.push(`\t\t${JSON.stringify(key)}:{${inner}}`);
    }
    const dv = this.dataVersion;
    return `{\n\t"dataVersion":{"counter":${dv.counter},"stateVersion":${dv.stateVersion},"timestamp":${dv.timestamp}},` +
      `\n\t"offsetTable":{\n${lines.join(',\n')}\n\t}\n}`;
  }

  /** Saves every flushConsumerOffsetInterval while offsets changed (Java's scheduled persist), off the event loop. */
  startPersisting(intervalMs: number): void {
    this.file.saveEvery(intervalMs);
  }

  /** Shutdown: waits for a save in flight, then writes synchronously. */
  close(): Promise<void> {
    return this.file.close();
  }
}

/** consumerOffset.json and the GET_ALL_CONSUMER_OFFSET body (Java ConsumerOffsetSerializeWrapper). */
interface OffsetWrapper {
  offsetTable?: Record<string, Record<string, unknown> | null>;
  dataVersion?: Partial<Record<keyof DataVersion, unknown>>;
}
