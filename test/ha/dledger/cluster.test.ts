// Three of our DLedger nodes in one process over real TCP on 127.0.0.1: election, replication, commit by quorum,
// failover, rejoin with truncation of a divergent tail, and a minority that cannot commit.
import { afterEach, describe, expect, it } from 'vitest';
import { DLedgerResponseCode } from '../../../src/ha/dledger/codes.js';
import type { DLedgerNode } from '../../../src/ha/dledger/node.js';
import { encodeEntry } from '../../helpers/memory-dledger-store.js';
import { FAST_TIMING, TestGroup, waitFor } from './cluster.js';

let group: TestGroup | undefined;
afterEach(async () => {
  await group?.stopAll();
  group = undefined;
});

function body(tag: string, n: number): Buffer {
  return Buffer.from(`${tag}-${n}-${'x'.repeat(n % 50)}`);
}

/** Appends `count` entries on the leader and waits for every ack. */
async function appendAll(leader: DLedgerNode, tag: string, count: number): Promise<number[]> {
  const acks = [];
  for (let i = 0; i < count; i++) {
    const { appended, acked } = leader.append(body(tag, i));
    expect(appended).not.toBeNull();
    acks.push(acked);
  }
  const results = await Promise.all(acks);
  for (const r of results) expect(r.code).toBe(DLedgerResponseCode.SUCCESS);
  return results.map((r) => r.index);
}

/** The entries' bytes of a store, index by index. */
function logBytes(group: TestGroup, id: string): string[] {
  return group.stores.get(id)!.all().map((e) => encodeEntry(e).toString('hex'));
}

describe('a group of three of our nodes', () => {
  it('elects one leader, replicates and commits on all, fails over and brings the old leader back', async () => {
    group = new TestGroup(['n0', 'n1', 'n2']);
    await group.init();
    const committed = new Map<string, number>();
    await group.startAll();
    for (const n of group.running()) n.onCommitted((i) => committed.set(n.selfId, i));

    const leader = await waitFor('a leader all agree on', () => group!.agreedLeader());
    const indexes = await appendAll(leader, 'a', 20);
    expect(indexes).toEqual([...Array(20).keys()]);
    await waitFor('commit index 19 on all three', () => group!.running().every((n) => n.store.committedIndex === 19));
    expect(committed.get('n0')).toBe(19);
    const reference = logBytes(group, leader.selfId);
    for (const id of group.ids) expect(logBytes(group, id)).toEqual(reference);

    // The leader stops: the other two elect a new one in a higher term and go on committing.
    const oldId = leader.selfId;
    const oldTerm = leader.currTerm;
    await group.stop(oldId);
    const next = await waitFor('a new leader among two', () => group!.agreedLeader());
    expect(next.selfId).not.toBe(oldId);
    expect(next.currTerm).toBeGreaterThan(oldTerm);
    await appendAll(next, 'b', 10);

    // The old leader restarts on its store, follows, and receives the ten entries it missed.
    await group.start(oldId);
    await waitFor('all three agree again', () => group!.agreedLeader());
    await waitFor('the old leader caught up', () => group!.stores.get(oldId)!.committedIndex === 29);
    expect(logBytes(group, oldId)).toEqual(logBytes(group, next.selfId));
    expect(group.twoLeaderTerms()).toEqual([]);
  });

  it('a leader cut off from the majority cannot commit; its uncommitted tail is cut when it rejoins', async () => {
    // Heartbeats every 1.5 s: the lone leader steps down only after 4.5 s without a quorum, after its acks time out.
    group = new TestGroup(['n0', 'n1', 'n2'], { ...FAST_TIMING, heartBeatTimeIntervalMs: 1500 });
    await group.init();
    await group.startAll();
    const leader = await waitFor('a leader', () => group!.agreedLeader());
    await appendAll(leader, 'a', 5);
    await waitFor('commit 4 everywhere', () => group!.running().every((n) => n.store.committedIndex === 4));

    // Both followers stop: the leader alone still appends, but no append is acknowledged (502 after 2.5 s).
    const others = group.ids.filter((id) => id !== leader.selfId);
    for (const id of others) await group.stop(id);
    const started = Date.now();
    const lone = [0, 1, 2].map((i) => leader.append(body('lost', i)));
    expect(lone.every((a) => a.appended !== null)).toBe(true);
    const results = await Promise.all(lone.map((a) => a.acked));
    const waitedMs = Date.now() - started;
    for (const r of results) expect(r.code).toBe(DLedgerResponseCode.WAIT_QUORUM_ACK_TIMEOUT);
    expect(waitedMs).toBeGreaterThanOrEqual(2500);
    expect(leader.store.committedIndex).toBe(4);
    expect(leader.store.endIndex).toBe(7);

    // The old leader goes away; the two others come back, elect, and commit different entries at 5..9.
    const oldId = leader.selfId;
    await group.stop(oldId);
    for (const id of others) await group.start(id);
    const next = await waitFor('a leader among the two', () => group!.agreedLeader());
    await appendAll(next, 'b', 5);

    // The old leader rejoins with entries 5..7 of its own term: they are truncated and replaced.
    await group.start(oldId);
    await waitFor('the old leader follows', () => group!.agreedLeader());
    await waitFor('the old leader holds the new log', () => group!.stores.get(oldId)!.committedIndex === 9);
    expect(logBytes(group, oldId)).toEqual(logBytes(group, next.selfId));
    expect(group.stores.get(oldId)!.all().map((e) => e.body.toString().split('-')[0])).toEqual([...'aaaaabbbbb']);
    expect(group.twoLeaderTerms()).toEqual([]);
  });

  it('replicates in batch pushes with enableBatchPush, a returning follower included', async () => {
    group = new TestGroup(['n0', 'n1', 'n2'], { ...FAST_TIMING, enableBatchPush: true });
    await group.init();
    await group.startAll();
    const leader = await waitFor('a leader', () => group!.agreedLeader());
    const lagging = group.ids.find((id) => id !== leader.selfId)!;
    await group.stop(lagging);
    await appendAll(leader, 'a', 200);
    const back = await group.start(lagging);
    let batches = 0;
    const handlePush = back.follower.handlePush.bind(back.follower);
    back.follower.handlePush = (req) => {
      if (req.batchEntry.length > 1) batches++;
      return handlePush(req);
    };
    await appendAll(leader, 'b', 5);
    await waitFor('all committed 204', () => group!.running().every((n) => n.store.committedIndex === 204));
    expect(batches).toBeGreaterThan(0);
    for (const id of group.ids) expect(logBytes(group, id)).toEqual(logBytes(group, leader.selfId));
  });

  it('agrees on entry positions across data-file ends (1 KiB files: an entry that does not fit starts the next)', async () => {
    group = new TestGroup(['n0', 'n1', 'n2'], FAST_TIMING, undefined, 1024);
    await group.init();
    await group.startAll();
    const leader = await waitFor('a leader', () => group!.agreedLeader());
    await appendAll(leader, 'f', 40);
    await waitFor('all committed 39', () => group!.running().every((n) => n.store.committedIndex === 39));
    const entries = group.stores.get(leader.selfId)!.all();
    const crossings = entries.filter((e, i) => i > 0 && e.pos !== entries[i - 1]!.pos + entries[i - 1]!.size);
    expect(crossings.length).toBeGreaterThan(1);
    for (const e of crossings) expect(e.pos % 1024).toBe(0);
    for (const e of entries) expect(Math.floor(e.pos / 1024)).toBe(Math.floor((e.pos + e.size + 7) / 1024));
    for (const id of group.ids) expect(logBytes(group, id)).toEqual(logBytes(group, leader.selfId));
  });

  it('refuses appends on followers and when its pending acks are full', async () => {
    group = new TestGroup(['n0', 'n1', 'n2'], { ...FAST_TIMING, maxPendingRequestsNum: 2 });
    await group.init();
    await group.startAll();
    const leader = await waitFor('a leader', () => group!.agreedLeader());
    const follower = group.running().find((n) => n !== leader)!;
    const refused = follower.append(Buffer.from('x'));
    expect(refused.appended).toBeNull();
    expect(await refused.acked).toEqual({ code: DLedgerResponseCode.NOT_LEADER, index: -1, pos: -1 });

    for (const id of group.ids.filter((i) => i !== leader.selfId)) await group.stop(id);
    const waits = [0, 1, 2].map((i) => leader.append(body('p', i)));
    expect(waits.every((w) => w.appended !== null)).toBe(true);
    const full = leader.append(body('p', 3)); // 3 pending > maxPendingRequestsNum 2
    expect(full.appended).toBeNull();
    expect((await full.acked).code).toBe(DLedgerResponseCode.LEADER_PENDING_FULL);
    await Promise.all(waits.map((w) => w.acked));
  });

  it('hands leadership over on request and to a preferred leader', async () => {
    group = new TestGroup(['n0', 'n1', 'n2'], { ...FAST_TIMING, preferredLeaderIds: ['n2'] });
    await group.init();
    await group.startAll();
    const leader = await waitFor('n2 leads (preferred)', () => {
      const l = group!.agreedLeader();
      return l?.selfId === 'n2' ? l : null;
    }, 30_000);
    await appendAll(leader, 'a', 3);
    // n2 is preferred, so a transfer away from it comes back to it; the transfer itself must succeed first.
    const code = await leader.transferLeadership('n0');
    expect(code).toBe(DLedgerResponseCode.SUCCESS);
    await waitFor('n2 leads again', () => group!.agreedLeader()?.selfId === 'n2', 30_000);
    expect(group.events.some((e) => e.id === 'n0' && e.role === 'LEADER')).toBe(true);
    expect(group.twoLeaderTerms()).toEqual([]);
  });
});
