import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConsumerManager } from '../../src/broker/client/consumer-manager.js';
import { ProducerManager } from '../../src/broker/client/producer-manager.js';
import { RebalanceLockManager } from '../../src/broker/client/rebalance-lock-manager.js';
import type { BrokerContext } from '../../src/broker/context.js';
import { ConsumerOffsetManager } from '../../src/broker/offset/consumer-offset-manager.js';
import { SubscriptionGroupManager } from '../../src/broker/subscription/subscription-group-manager.js';
import { TopicConfigManager } from '../../src/broker/topic/topic-config-manager.js';
import { BROKER_SCHEMA, type BrokerConfig, defaults } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import type { RemotingCommand } from '../../src/remoting/command.js';
import { FLAG_ONEWAY } from '../../src/remoting/command.js';
import type { ClientChannel, Processor, ProcessorTable } from '../../src/remoting/dispatcher.js';
import type { MessageStore } from '../../src/store/types.js';
import { StatsItems } from '../../src/broker/stats-items.js';

export const logger = silentLogger();

export function tempDir(prefix = 'broker'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `rmqts-${prefix}-`));
}

/** A client channel that records what the broker sends it. */
export class FakeConnection implements ClientChannel {
  readonly id = 0;
  isClosed = false;
  readonly sent: RemotingCommand[] = [];
  readonly attributes = new Map<string, unknown>();
  private readonly listeners: Array<(c: ClientChannel) => void> = [];
  constructor(readonly remoteAddress = '10.0.0.5:50000') {}
  onClose(l: (c: ClientChannel) => void): void {
    this.listeners.push(l);
  }
  sendOneway(cmd: RemotingCommand): boolean {
    if (this.isClosed) return false;
    cmd.flag |= FLAG_ONEWAY;
    this.sent.push(cmd);
    return true;
  }
  write(cmd: RemotingCommand): boolean {
    this.sent.push(cmd);
    return !this.isClosed;
  }
  request(_cmd: RemotingCommand, _timeoutMs: number): Promise<RemotingCommand> {
    return Promise.reject(new Error('not supported by FakeConnection'));
  }
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const l of this.listeners) l(this);
  }
  get asConnection(): ClientChannel {
    return this;
  }
  /** NOTIFY_CONSUMER_IDS_CHANGED requests received so far, by group. */
  notifications(): string[] {
    return this.sent.filter((c) => c.code === 40).map((c) => c.extFields.consumerGroup);
  }
}

/** Collects registered processors so tests can call them directly. */
export class FakeServer {
  readonly processors = new Map<number, Processor>();
  register(code: number, p: Processor): void {
    this.processors.set(code, p);
  }
  registerTable(table: ProcessorTable): void {
    for (const [c, p] of table) this.register(c, p);
  }
  async call(code: number, req: Partial<RemotingCommand>, connection: FakeConnection = new FakeConnection()): Promise<RemotingCommand> {
    const p = this.processors.get(code);
    if (!p) throw new Error(`no processor for ${code}`);
    const cmd: RemotingCommand = { code, language: 'JAVA', version: 409, opaque: 1, flag: 0, extFields: {}, ...req };
    const res = await p(cmd, { channel: connection });
    if (!res) throw new Error(`processor ${code} returned no response`);
    return res;
  }
}

/** An in-memory store stub: per-queue min/max offsets and store times (time of offset n = base + n). */
export class FakeStore {
  readonly queues = new Map<string, { min: number; max: number; baseTime: number }>();
  readonly deleted: string[] = [];
  minPhy = 0;
  maxPhy = 0;
  records = new Map<number, Buffer>();
  setQueue(topic: string, queueId: number, min: number, max: number, baseTime = 1_700_000_000_000): void {
    this.queues.set(`${topic}/${queueId}`, { min, max, baseTime });
  }
  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.queues.get(`${topic}/${queueId}`)?.max ?? 0;
  }
  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.queues.get(`${topic}/${queueId}`)?.min ?? 0;
  }
  async getMessageStoreTimestamp(topic: string, queueId: number, offset: number): Promise<number> {
    const q = this.queues.get(`${topic}/${queueId}`);
    if (!q || offset < q.min || offset >= q.max) return -1;
    return q.baseTime + offset;
  }
  async deleteTopic(topic: string): Promise<void> {
    this.deleted.push(topic);
    for (const k of [...this.queues.keys()]) if (k.startsWith(`${topic}/`)) this.queues.delete(k);
  }
  getMinPhyOffset(): number {
    return this.minPhy;
  }
  getMaxPhyOffset(): number {
    return this.maxPhy;
  }
  async lookMessageByOffset(offset: number): Promise<Buffer | null> {
    return this.records.get(offset) ?? null;
  }
  earliestTime = -1;
  async getCommitLogEarliestTime(): Promise<number> {
    return this.earliestTime;
  }
}

export interface TestContext {
  ctx: BrokerContext;
  config: BrokerConfig;
  store: FakeStore;
  server: FakeServer;
  registrations: number;
  dir: string;
}

export function makeContext(overrides: Partial<BrokerConfig> = {}): TestContext {
  const dir = tempDir();
  const config: BrokerConfig = { ...defaults(BROKER_SCHEMA), brokerName: 'broker-a', storePathRootDir: dir, ...overrides };
  const store = new FakeStore();
  const topicConfigManager = new TopicConfigManager(config, logger);
  topicConfigManager.load();
  const subscriptionGroupManager = new SubscriptionGroupManager(config, logger);
  const consumerOffsetManager = new ConsumerOffsetManager(config, logger);
  const consumerManager = new ConsumerManager(config, logger, subscriptionGroupManager, { scanIntervalMs: 0 });
  const producerManager = new ProducerManager(logger, { scanIntervalMs: 0 });
  const rebalanceLockManager = new RebalanceLockManager(config, logger);
  const t: TestContext = {
    config,
    store,
    server: new FakeServer(),
    registrations: 0,
    dir,
    ctx: undefined as unknown as BrokerContext,
  };
  t.ctx = {
    config,
    logger,
    store: store as unknown as MessageStore,
    topicConfigManager,
    subscriptionGroupManager,
    consumerOffsetManager,
    consumerManager,
    producerManager,
    rebalanceLockManager,
    pullRequestHoldService: undefined as never,
    scheduleMessageService: undefined as never,
    transactionalMessageService: undefined as never,
    brokerAddr: () => '127.0.0.1:10911',
    registerBrokerAll: async () => {
      t.registrations++;
    },
    stats: { msgPutTotal: 0, msgGetTotal: 0, items: new StatsItems() },
    startTimeMs: Date.now() - 1000,
  };
  return t;
}

/** A Java-fastjson-style heartbeat body (sorted keys, compact). */
export function javaHeartbeat(
  clientID: string, group: string, topics: string[], producerGroups: string[] = [], subVersion = 1700000000000,
): Buffer {
  const subs = topics.map(
    (topic) =>
      `{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":${subVersion},"tagsSet":[],"topic":"${topic}"}`,
  );
  const consumers = group
    ? `[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"${group}","messageModel":"CLUSTERING","subscriptionDataSet":[${subs.join(',')}],"unitMode":false}]`
    : '[]';
  const producers = producerGroups.map((g) => `{"groupName":"${g}"}`).join(',');
  return Buffer.from(`{"clientID":"${clientID}","consumerDataSet":${consumers},"producerDataSet":[${producers}]}`);
}
