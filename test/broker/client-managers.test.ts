import { describe, expect, it } from 'vitest';
import { ConsumerManager, type ConsumerRegistration } from '../../src/broker/client/consumer-manager.js';
import { ProducerManager } from '../../src/broker/client/producer-manager.js';
import { RebalanceLockManager } from '../../src/broker/client/rebalance-lock-manager.js';
import { PopInflightCounter } from '../../src/broker/pop/pop-inflight.js';
import { MAX_SUB_VERSION_WAITERS } from '../../src/broker/client/subscription-version-waits.js';
import type { SubscriptionData } from '../../src/broker/client/types.js';
import { SubscriptionGroupManager, newSubscriptionGroupConfig } from '../../src/broker/subscription/subscription-group-manager.js';
import { BROKER_SCHEMA, defaults } from '../../src/common/config.js';
import { FakeConnection, logger, tempDir } from './helpers.js';

const config = { ...defaults(BROKER_SCHEMA), storePathRootDir: tempDir() };

const sub = (topic: string, subVersion = 1): SubscriptionData => ({
  topic,
  subString: '*',
  expressionType: 'TAG',
  tagsSet: [],
  codeSet: [],
  subVersion,
  classFilterMode: false,
});

const reg = (topics: string[], messageModel = 'CLUSTERING', subVersion = 1): ConsumerRegistration => ({
  consumeType: 'CONSUME_PASSIVELY',
  messageModel,
  consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
  subscriptions: topics.map((t) => sub(t, subVersion)),
});

const client = (clientId: string) => ({ clientId, language: 'JAVA', version: 409 });

function consumerManager(options: { now?: () => number; groups?: SubscriptionGroupManager } = {}) {
  return new ConsumerManager(config, logger, options.groups, { scanIntervalMs: 0, now: options.now });
}

describe('ConsumerManager', () => {
  it('registers a group from a heartbeat and answers lookups', () => {
    const cm = consumerManager();
    const a = new FakeConnection('10.0.0.1:1');
    expect(cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T', '%RETRY%G']))).toBe(true);
    const info = cm.getConsumerGroupInfo('G');
    expect(info?.messageModel).toBe('CLUSTERING');
    expect(info?.channels.get(a.asConnection)?.clientId).toBe('c1');
    expect(cm.getAllClientIds('G')).toEqual(['c1']);
    expect(cm.findSubscriptionData('G', 'T')?.subString).toBe('*');
    expect(cm.groupsByTopic('T')).toEqual(['G']);
    expect(cm.groupsByTopic('other')).toEqual([]);
    expect(cm.findChannel('G', 'c1')?.channel).toBe(a.asConnection);
    // a repeated heartbeat changes nothing
    expect(cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T', '%RETRY%G']))).toBe(false);
    cm.shutdown();
  });

  it('notifies every member when a client joins or leaves, not on plain heartbeats', () => {
    const cm = consumerManager();
    const a = new FakeConnection();
    const b = new FakeConnection();
    cm.registerConsumer('G', a.asConnection, client('a'), reg(['T']));
    expect(a.notifications()).toEqual(['G']);
    cm.registerConsumer('G', b.asConnection, client('b'), reg(['T']));
    expect(a.notifications()).toEqual(['G', 'G']);
    expect(b.notifications()).toEqual(['G']);
    cm.registerConsumer('G', a.asConnection, client('a'), reg(['T']));
    expect(a.notifications().length).toBe(2);
    // the sent command is a oneway request with the group header
    const cmd = a.sent[0];
    expect(cmd.flag & 2).toBe(2);
    expect(cmd.extFields).toEqual({ consumerGroup: 'G' });

    b.close();
    expect(cm.getAllClientIds('G')).toEqual(['a']);
    expect(a.notifications().length).toBe(3);
    a.close();
    expect(cm.getConsumerGroupInfo('G')).toBeUndefined();
  });

  it('notifies on subscription changes and on unregister', () => {
    const cm = consumerManager();
    const a = new FakeConnection();
    const b = new FakeConnection();
    cm.registerConsumer('G', a.asConnection, client('a'), reg(['T']));
    cm.registerConsumer('G', b.asConnection, client('b'), reg(['T']));
    a.sent.length = 0;
    expect(cm.registerConsumer('G', a.asConnection, client('a'), reg(['T', 'U']))).toBe(true);
    expect(a.notifications()).toEqual(['G']);
    // a newer subVersion replaces the subscription without a notification (Java)
    expect(cm.registerConsumer('G', a.asConnection, client('a'), reg(['T', 'U'], 'CLUSTERING', 5))).toBe(false);
    expect(cm.findSubscriptionData('G', 'T')?.subVersion).toBe(5);
    // dropped topic
    expect(cm.registerConsumer('G', a.asConnection, client('a'), reg(['T'], 'CLUSTERING', 5))).toBe(true);
    expect(cm.findSubscriptionData('G', 'U')).toBeUndefined();
    a.sent.length = 0;
    cm.unregisterConsumer('G', b.asConnection);
    expect(a.notifications()).toEqual(['G']);
    expect(cm.getAllClientIds('G')).toEqual(['a']);
  });

  it('respects notifyConsumerIdsChangedEnable and broadcasting', () => {
    const groups = new SubscriptionGroupManager(config, logger);
    groups.table.set('Q', { ...newSubscriptionGroupConfig('Q'), notifyConsumerIdsChangedEnable: false });
    const cm = consumerManager({ groups });
    const a = new FakeConnection();
    const b = new FakeConnection();
    cm.registerConsumer('Q', a.asConnection, client('a'), reg(['T']));
    cm.registerConsumer('Q', b.asConnection, client('b'), reg(['T']));
    b.close();
    expect(a.notifications()).toEqual([]);

    const c = new FakeConnection();
    const d = new FakeConnection();
    cm.registerConsumer('B', c.asConnection, client('c'), reg(['T'], 'BROADCASTING'));
    cm.registerConsumer('B', d.asConnection, client('d'), reg(['T'], 'BROADCASTING'));
    expect(c.notifications()).toEqual([]);
  });

  it('expires channels without heartbeat for 120 s, closes them and tells the others', () => {
    let now = 1_000_000;
    const cm = consumerManager({ now: () => now });
    const a = new FakeConnection();
    const b = new FakeConnection();
    cm.registerConsumer('G', a.asConnection, client('a'), reg(['T']));
    now += 60_000;
    cm.registerConsumer('G', b.asConnection, client('b'), reg(['T']));
    a.sent.length = 0;
    b.sent.length = 0;
    now += 60_001; // a: 120 001 ms since its heartbeat; b: 60 001 ms
    cm.scanNotActiveChannel();
    expect(a.isClosed).toBe(true);
    expect(b.isClosed).toBe(false);
    expect(cm.getAllClientIds('G')).toEqual(['b']);
    expect(b.notifications()).toEqual(['G']);
    expect(a.notifications()).toEqual([]);
    now += 120_000;
    cm.scanNotActiveChannel();
    expect(cm.getConsumerGroupInfo('G')).toBeUndefined();
  });

  it('ignores registrations on a connection that is already closed', () => {
    const cm = consumerManager();
    const a = new FakeConnection();
    a.close();
    expect(cm.registerConsumer('G', a.asConnection, client('a'), reg(['T']))).toBe(false);
    expect(cm.getConsumerGroupInfo('G')).toBeUndefined();
  });

  it('holds a pull naming a newer subscription version until the heartbeat with it, else answers undefined', async () => {
    const cm = consumerManager();
    const a = new FakeConnection('10.0.0.1:1');
    cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T'], 'CLUSTERING', 100));
    // known already: at once
    expect((await cm.waitForSubVersion('G', 'T', 100, 1000))?.subVersion).toBe(100);
    // newer: answered by the heartbeat that brings it (not by one that brings an older version)
    const waiting = cm.waitForSubVersion('G', 'T', 200, 5000);
    expect(cm.subVersionWaiting).toBe(1);
    cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T'], 'CLUSTERING', 150));
    expect(cm.subVersionWaiting).toBe(1);
    cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T'], 'CLUSTERING', 200));
    expect((await waiting)?.subVersion).toBe(200);
    expect(cm.subVersionWaiting).toBe(0);
    // no heartbeat in time: undefined after the wait, and nothing left behind
    const t0 = Date.now();
    expect(await cm.waitForSubVersion('G', 'T', 300, 50)).toBeUndefined();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(cm.subVersionWaiting).toBe(0);
    // shutdown answers the waiting ones
    const atShutdown = cm.waitForSubVersion('G', 'T', 400, 60_000);
    cm.shutdown();
    expect(await atShutdown).toBeUndefined();
    expect(cm.subVersionWaiting).toBe(0);
  });

  it('bounds the pulls waiting for a subscription version', async () => {
    const cm = consumerManager();
    const a = new FakeConnection('10.0.0.1:1');
    cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T'], 'CLUSTERING', 1));
    const held = Array.from({ length: MAX_SUB_VERSION_WAITERS }, () => cm.waitForSubVersion('G', 'T', 2, 60_000));
    expect(cm.subVersionWaiting).toBe(MAX_SUB_VERSION_WAITERS);
    // one more is answered at once
    expect(await cm.waitForSubVersion('G', 'T', 2, 60_000)).toBeUndefined();
    cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T'], 'CLUSTERING', 2));
    expect((await Promise.all(held)).every((s) => s?.subVersion === 2)).toBe(true);
    expect(cm.subVersionWaiting).toBe(0);
    cm.shutdown();
  });
});

describe('ConsumerManager compensation (groups known from pulls and pops)', () => {
  it('keeps a pulled subscription for subscriptionExpiredTimeout after its last use, and the group while it has one', () => {
    let now = 1_000_000;
    const cm = consumerManager({ now: () => now });
    cm.compensateBasicConsumerInfo('G', 'CONSUME_PASSIVELY', 'CLUSTERING');
    cm.compensateSubscribeData('G', 'T1', sub('T1'));
    cm.compensateSubscribeData('G', 'T2', sub('T2'));
    expect(cm.getConsumerGroupInfo('G')).toBeUndefined(); // not a heartbeat group
    expect(cm.getConsumerGroupInfo('G', true)?.consumeType).toBe('CONSUME_PASSIVELY');
    now += config.subscriptionExpiredTimeout - 1;
    cm.compensateSubscribeData('G', 'T2', sub('T2')); // used again
    now += 2;
    cm.removeExpiredCompensation();
    expect([...(cm.getConsumerGroupInfo('G', true)?.subscriptions.keys() ?? [])]).toEqual(['T2']);
    now += config.subscriptionExpiredTimeout;
    cm.removeExpiredCompensation();
    expect(cm.getConsumerGroupInfo('G', true)).toBeUndefined();
    expect(cm.findSubscriptionData('G', 'T2')).toBeUndefined();
  });

  it('prefers the heartbeat group to the compensated one', () => {
    const cm = consumerManager();
    cm.compensateBasicConsumerInfo('G', 'CONSUME_POP', 'CLUSTERING');
    const a = new FakeConnection('10.0.0.1:1');
    cm.registerConsumer('G', a.asConnection, client('c1'), reg(['T']));
    expect(cm.getConsumerGroupInfo('G', true)?.consumeType).toBe('CONSUME_PASSIVELY');
    expect(cm.getCompensatedGroupInfo('G')?.consumeType).toBe('CONSUME_POP');
  });
});

describe('PopInflightCounter', () => {
  it('counts pops per queue, lowers on acks and revives of pops since the start, clears by queue, topic and group', () => {
    const c = new PopInflightCounter(1000);
    c.increment('T', 'G', 0, 3);
    c.increment('T', 'G', 1, 2);
    c.increment('T', 'H', 0, 1);
    c.increment('U', 'G', 0, 4);
    c.decrement('T', 'G', 0, 999, 1); // popped before this start: not counted, so not lowered
    expect(c.get('T', 'G', 0)).toBe(3);
    c.decrement('T', 'G', 0, 1000, 2);
    expect(c.get('T', 'G', 0)).toBe(1);
    c.decrement('T', 'G', 0, 1500, 5); // never below 0
    expect(c.get('T', 'G', 0)).toBe(0);
    c.increment('T', 'G', 0, 0);
    expect(c.get('T', 'G', 0)).toBe(0);
    c.clear('T', 'G', 1);
    expect(c.get('T', 'G', 1)).toBe(0);
    c.clearGroup('G');
    expect(c.get('U', 'G', 0)).toBe(0);
    expect(c.get('T', 'H', 0)).toBe(1);
    c.clearTopic('T');
    expect(c.get('T', 'H', 0)).toBe(0);
  });
});

describe('ProducerManager', () => {
  it('tracks producer groups and drops closed connections', () => {
    const pm = new ProducerManager(logger, { scanIntervalMs: 0 });
    const a = new FakeConnection('1.1.1.1:1');
    const b = new FakeConnection('2.2.2.2:2');
    pm.registerProducer('P', a.asConnection, client('a'));
    pm.registerProducer('P', b.asConnection, client('b'));
    pm.registerProducer('CLIENT_INNER_PRODUCER', a.asConnection, client('a'));
    expect(pm.getGroupChannels('P')?.size).toBe(2);
    expect(pm.findChannel('a')).toBe(a.asConnection);
    a.close();
    expect(pm.getGroupChannels('P')?.size).toBe(1);
    expect(pm.getGroupChannels('CLIENT_INNER_PRODUCER')).toBeUndefined();
    expect(pm.findChannel('a')).toBeUndefined();
    expect(pm.getAvailableChannel('P')).toBe(b.asConnection);
    pm.unregisterProducer('P', b.asConnection, 'b');
    expect(pm.getGroupChannels('P')).toBeUndefined();
    expect(pm.getAvailableChannel('P')).toBeUndefined();
  });

  it('round-robins available channels and skips closed ones', () => {
    const pm = new ProducerManager(logger, { scanIntervalMs: 0 });
    const conns = [new FakeConnection(), new FakeConnection(), new FakeConnection()];
    conns.forEach((c, i) => pm.registerProducer('P', c.asConnection, client(`c${i}`)));
    const picked = new Set([0, 1, 2, 3, 4, 5].map(() => pm.getAvailableChannel('P')));
    expect(picked.size).toBe(3);
    conns[0].isClosed = true; // closed but the close event not yet seen
    conns[1].isClosed = true;
    for (let i = 0; i < 5; i++) expect(pm.getAvailableChannel('P')).toBe(conns[2].asConnection);
  });

  it('expires producers without heartbeat', () => {
    let now = 0;
    const pm = new ProducerManager(logger, { scanIntervalMs: 0, now: () => now });
    const a = new FakeConnection();
    pm.registerProducer('P', a.asConnection, client('a'));
    now = 120_001;
    pm.scanNotActiveChannel();
    expect(pm.getGroupChannels('P')).toBeUndefined();
    expect(a.isClosed).toBe(true);
  });
});

describe('RebalanceLockManager', () => {
  const mq = (queueId: number) => ({ brokerName: 'b', queueId, topic: 'T' });

  it('grants free queues, refuses queues held by others, renews own locks', () => {
    let now = 0;
    const cfg = { lockMaxLiveTimeMills: 60_000 };
    const lm = new RebalanceLockManager(cfg, logger, () => now);
    expect(lm.tryLockBatch('G', [mq(0), mq(1)], 'c1')).toEqual([mq(0), mq(1)]);
    expect(lm.tryLockBatch('G', [mq(1), mq(2)], 'c2')).toEqual([mq(2)]);
    expect(lm.isLocked('G', mq(1), 'c1')).toBe(true);
    expect(lm.isLocked('G', mq(1), 'c2')).toBe(false);
    expect(lm.isLockedByAnyone('G')).toBe(true);
    expect(lm.isLockedByAnyone('other')).toBe(false);
    // other groups are independent
    expect(lm.tryLockBatch('H', [mq(1)], 'c2')).toEqual([mq(1)]);

    now = 50_000;
    expect(lm.tryLockBatch('G', [mq(0)], 'c1')).toEqual([mq(0)]); // renews mq 0 only
    now = 60_001;
    // mq 1 (c1, last renewed at 0) expired: c2 takes it; mq 0 (renewed at 50 000) still c1's
    expect(lm.tryLockBatch('G', [mq(0), mq(1)], 'c2')).toEqual([mq(1)]);
    expect(lm.isLocked('G', mq(1), 'c2')).toBe(true);
    expect(lm.isLocked('G', mq(1), 'c1')).toBe(false);
  });

  it('unlocks only the caller’s queues and follows config changes', () => {
    let now = 0;
    const cfg = { lockMaxLiveTimeMills: 60_000 };
    const lm = new RebalanceLockManager(cfg, logger, () => now);
    lm.tryLockBatch('G', [mq(0), mq(1)], 'c1');
    lm.unlockBatch('G', [mq(0), mq(1)], 'c2');
    expect(lm.isLocked('G', mq(0), 'c1')).toBe(true);
    lm.unlockBatch('G', [mq(0)], 'c1');
    expect(lm.isLocked('G', mq(0), 'c1')).toBe(false);
    expect(lm.tryLockBatch('G', [mq(0)], 'c2')).toEqual([mq(0)]);
    cfg.lockMaxLiveTimeMills = 1000;
    now = 1001;
    expect(lm.isLockedByAnyone('G')).toBe(false);
    lm.removeExpired();
    expect(lm.tryLockBatch('G', [mq(1)], 'c3')).toEqual([mq(1)]);
  });
});
