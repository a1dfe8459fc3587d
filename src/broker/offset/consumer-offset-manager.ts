import path from 'node:path';
import type { BrokerConfig } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import { loadConfigFile, saveConfigFile, saveConfigFileAsync } from '../config-file.js';

const TOPIC_GROUP_SEPARATOR = '@';

/**
 * Committed consumer offsets, `<topic>@<group>` → queueId → next offset to consume, persisted as
 * `<store>/config/consumerOffset.json` every flushConsumerOffsetInterval (Java ConsumerOffsetManager).
 */
export class ConsumerOffsetManager {
  readonly table = new Map<string, Map<number, number>>();
  /**
   * 5.x pullOffsetTable: the nextBeginOffset of the group's latest pull per queue, whatever its status (found,
   * nothing new, offset moved), committed or not. In memory only (Java does not persist it); GET_CONSUME_STATS
   * reports it as pullOffset.
   */
  private readonly pullTable = new Map<string, Map<number, number>>();
  private readonly file: string;
  private dirty = false;

  constructor(
    config: BrokerConfig,
    private readonly logger: Logger,
  ) {
    this.file = path.join(config.storePathRootDir, 'config', 'consumerOffset.json');
  }

  load(): void {
    const data = loadConfigFile(this.file) as { offsetTable?: Record<string, Record<string, unknown>> } | undefined;
    for (const [key, queues] of Object.entries(data?.offsetTable ?? {})) {
      const m = new Map<number, number>();
      for (const [qid, off] of Object.entries(queues ?? {})) m.set(Number(qid), Number(off));
      this.table.set(key, m);
    }
  }

  commitOffset(group: string, topic: string, queueId: number, offset: number): void {
    const key = topic + TOPIC_GROUP_SEPARATOR + group;
    let m = this.table.get(key);
    if (!m) {
      m = new Map();
      this.table.set(key, m);
    }
    m.set(queueId, offset);
    this.dirty = true;
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
    this.dirty = true;
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
    this.dirty = true;
  }

  removeTopic(topic: string): void {
    for (const t of [this.table, this.pullTable]) {
      for (const key of [...t.keys()]) {
        if (key.slice(0, key.indexOf(TOPIC_GROUP_SEPARATOR)) === topic) t.delete(key);
      }
    }
    this.dirty = true;
  }

  /** Java's layout: int-keyed maps are written with bare numeric keys (fastjson). */
  encode(): string {
    const lines: string[] = [];
    for (const [key, queues] of this.table) {
      const inner = [...queues].map(([q, o]) => `${q}:${o}`).join(',');
      lines.push(`\t\t${JSON.stringify(key)}:{${inner}}`);
    }
    return `{\n\t"offsetTable":{\n${lines.join(',\n')}\n\t}\n}`;
  }

  private persisting: Promise<void> | undefined;

  /** The periodic save (every flushConsumerOffsetInterval): off the event loop, one at a time. */
  persistAsync(): Promise<void> {
    if (!this.dirty || this.persisting) return this.persisting ?? Promise.resolve();
    this.dirty = false;
    this.persisting = saveConfigFileAsync(this.file, this.encode())
      .catch((err) => {
        this.dirty = true;
        this.logger.error({ err, file: this.file }, 'failed to persist consumer offsets');
      })
      .finally(() => {
        this.persisting = undefined;
      });
    return this.persisting;
  }

  /** Synchronous save (shutdown). */
  persist(force = false): void {
    if (!this.dirty && !force) return;
    this.dirty = false;
    try {
      saveConfigFile(this.file, this.encode());
    } catch (err) {
      this.dirty = true;
      this.logger.error({ err, file: this.file }, 'failed to persist consumer offsets');
    }
  }
}
