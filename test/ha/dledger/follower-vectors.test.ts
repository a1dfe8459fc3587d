// One of our nodes as a follower, probed over TCP by a raw peer playing leader n2: the probes of table §1.7 of
// protocol/dledger.md (sent to an official 5.3.3 follower in term 1 with leader n2) get the same answers, the
// captured push replies of §1.5 come back byte for byte, and our stricter checks (pitfalls 11, 12) hold.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/common/logger.js';
import { DLedgerRequestCode } from '../../../src/ha/dledger/codes.js';
import { DLedgerNode } from '../../../src/ha/dledger/node.js';
import { type PushEntryRequest, encodePushEntryRequest } from '../../../src/ha/dledger/protocol.js';
import type { DLedgerEntry } from '../../../src/ha/dledger/types.js';
import { MemoryDLedgerStore } from '../../helpers/memory-dledger-store.js';
import { GROUP, nodeConfig, waitFor } from './cluster.js';
import { RawPeer, freePorts } from './raw-peer.js';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const BODY = Buffer.alloc(242, 0x5a);
function entry(index: number, term = 1): DLedgerEntry {
  return { magic: 1, size: 290, index, term, pos: index * 290, channel: 0, chainCrc: 0, bodyCrc: 0, body: BODY };
}

function push(over: Partial<PushEntryRequest>): string {
  return encodePushEntryRequest({
    code: 200, group: GROUP, leaderId: 'n2', localId: 'n2', remoteId: 'n1', term: 1, commitIndex: -1, type: 'APPEND', entry: null, batchEntry: [], ...over,
  }).toString();
}

const j = (o: object): string => JSON.stringify(o);

/** Our n1 in a group n0, n1, n2 whose n0 and n2 addresses are closed ports; the raw peer plays n2. */
async function follower(fastFailover = false): Promise<{ node: DLedgerNode; store: MemoryDLedgerStore; peer: RawPeer; n2Port: number }> {
  const [p0, p1, p2] = await freePorts(3);
  const peers = `n0-127.0.0.1:${p0};n1-127.0.0.1:${p1};n2-127.0.0.1:${p2}`;
  const store = new MemoryDLedgerStore();
  store.loadSync(0);
  const node = new DLedgerNode(nodeConfig('n1', peers, { fastFailoverOnLeaderReset: fastFailover }), store, silentLogger(), { bindHost: '127.0.0.1' });
  await node.start();
  closers.push(() => node.stop());
  const peer = await RawPeer.connect(p1!);
  closers.push(() => peer.close());
  // n2 asks for a vote in term 1: the node (term 0) answers TERM_NOT_READY with its old term and moves to term 1.
  const first = await peer.request(DLedgerRequestCode.VOTE, j({ group: GROUP, leaderId: 'n2', localId: 'n2', remoteId: 'n1', term: 1, ledgerEndIndex: -1, ledgerEndTerm: -1 }));
  expect(RawPeer.text(first)).toBe('{"code":200,"group":"RaftNode00","leaderId":"n2","localId":"n2","remoteId":"n1","term":0,"voteResult":"REJECT_TERM_NOT_READY"}');
  await waitFor('term 1', () => node.currTerm === 1);
  const granted = await peer.request(DLedgerRequestCode.VOTE, j({ group: GROUP, leaderId: 'n2', localId: 'n2', remoteId: 'n1', term: 1, ledgerEndIndex: -1, ledgerEndTerm: -1 }));
  expect(RawPeer.text(granted)).toContain('"voteResult":"ACCEPT"');
  const hb = await peer.request(DLedgerRequestCode.HEART_BEAT, j({ group: GROUP, leaderId: 'n2', localId: 'n2', remoteId: 'n1', term: 1 }));
  expect(RawPeer.text(hb)).toBe('{"code":200,"term":-1}');
  expect(node.role).toBe('FOLLOWER');
  return { node, store, peer, n2Port: p2! };
}

describe('our follower answers as the official 5.3.3 follower did', () => {
  it('takes its first entries by COMPARE → TRUNCATE → APPEND and commits by COMMIT (captured replies)', async () => {
    const { node, store, peer } = await follower();
    const cmp = await peer.request(DLedgerRequestCode.PUSH, push({ type: 'COMPARE', entry: entry(0), commitIndex: 0 }));
    expect(RawPeer.text(cmp)).toBe('{"beginIndex":-1,"code":406,"count":1,"endIndex":-1,"group":"RaftNode00","index":0,"term":1}');
    const tr = await peer.request(DLedgerRequestCode.PUSH, push({ type: 'TRUNCATE', entry: entry(0), commitIndex: -1 }));
    expect(RawPeer.text(tr)).toBe('{"beginIndex":0,"code":200,"count":1,"endIndex":0,"group":"RaftNode00","index":0,"term":1}');
    await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(1), commitIndex: 0 }), { chunkBytes: 97 });
    const a2 = await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(2), commitIndex: 0 }));
    expect(RawPeer.text(a2)).toBe('{"beginIndex":0,"code":200,"count":1,"endIndex":2,"group":"RaftNode00","index":2,"term":1}');
    expect(store.committedIndex).toBe(0);
    const commit = await peer.request(DLedgerRequestCode.PUSH, push({ type: 'COMMIT', commitIndex: 2 }));
    expect(RawPeer.text(commit)).toBe('{"beginIndex":0,"code":200,"count":0,"endIndex":2,"group":"RaftNode00","term":1}');
    expect(store.committedIndex).toBe(2);
    expect(store.all().map((e) => e.pos)).toEqual([0, 290, 580]);
    expect(node.store.get(1)!.body.equals(BODY)).toBe(true);
  });

  it('answers the probes of table §1.7', async () => {
    const { node, peer } = await follower();
    await peer.request(DLedgerRequestCode.PUSH, push({ type: 'TRUNCATE', entry: entry(0) }));
    await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(1) }));
    await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(2), commitIndex: 2 }));
    const base = { group: GROUP, localId: 'n2', remoteId: 'n1' };
    const ask = async (code: number, body: object | string): Promise<string> =>
      RawPeer.text(await peer.request(code, typeof body === 'string' ? body : j(body)));

    const meta = await ask(DLedgerRequestCode.METADATA, base);
    expect(meta).toMatch(/^\{"code":200,"group":"RaftNode00","leaderId":"n2","peers":\{"n0":.*\},"term":-1\}$/);
    expect(JSON.parse(meta)).toEqual({ code: 200, group: GROUP, leaderId: 'n2', peers: Object.fromEntries(node.peers), term: -1 });
    expect(await ask(DLedgerRequestCode.VOTE, { ...base, leaderId: 'zz', localId: 'zz', term: 1e12 })).toContain('"term":1,"voteResult":"REJECT_UNKNOWN_LEADER"');
    expect(await ask(DLedgerRequestCode.VOTE, { ...base, leaderId: 'n0', localId: 'n0', term: 1e12, ledgerEndIndex: -1, ledgerEndTerm: -1 }))
      .toContain('"term":1,"voteResult":"REJECT_EXPIRED_LEDGER_TERM"');
    expect(node.currTerm).toBe(1);
    expect(await ask(DLedgerRequestCode.VOTE, { ...base, leaderId: 'n0', localId: 'n0', term: 1, ledgerEndIndex: 2, ledgerEndTerm: 1 }))
      .toContain('"voteResult":"REJECT_ALREADY_HAS_LEADER"');
    expect(await ask(DLedgerRequestCode.VOTE, { ...base, leaderId: 'n0', localId: 'n0', term: 0, ledgerEndIndex: 2, ledgerEndTerm: 1 }))
      .toContain('"term":1,"voteResult":"REJECT_EXPIRED_VOTE_TERM"');
    expect(await ask(DLedgerRequestCode.HEART_BEAT, { ...base, leaderId: 'n2', term: 0 })).toBe('{"code":403,"term":1}');
    expect(await ask(DLedgerRequestCode.HEART_BEAT, { ...base, leaderId: 'n0', term: 1 })).toBe('{"code":409,"term":-1}');
    expect(await ask(DLedgerRequestCode.HEART_BEAT, { ...base, leaderId: 'zz', term: 1 })).toBe('{"code":401,"term":1}');
    expect(await ask(DLedgerRequestCode.HEART_BEAT, { ...base, leaderId: 'n1', term: 1 })).toBe('{"code":402,"term":1}');
    expect(await ask(DLedgerRequestCode.GET, { ...base, leaderId: 'n2', term: 1, beginIndex: 0 }))
      .toBe('{"code":404,"entries":[],"group":"RaftNode00","leaderId":"n2","localId":"n2","remoteId":"n1","term":1}');
    expect(await ask(DLedgerRequestCode.APPEND, { ...base, leaderId: 'n2', term: 1, body: 'AAEC' }))
      .toBe('{"code":404,"group":"RaftNode00","index":-1,"leaderId":"n2","localId":"n2","pos":-1,"remoteId":"n1","term":1}');
    const pull = await peer.request(DLedgerRequestCode.PULL, j({ ...base, beginIndex: 0 }));
    expect([pull.code, pull.body]).toEqual([1, undefined]);
    expect(await ask(DLedgerRequestCode.LEADERSHIP_TRANSFER, { ...base, term: 1, transferId: 'n0', transfereeId: 'n2' })).toBe('{"code":411,"term":1}');
    expect(await ask(DLedgerRequestCode.PUSH, push({ type: 'COMMIT', term: 0, commitIndex: 2 })))
      .toBe('{"beginIndex":0,"code":200,"count":0,"endIndex":2,"group":"RaftNode00","term":0}');
    const snap = await peer.request(DLedgerRequestCode.PUSH, push({ type: 'APPEND' }).replace('"type":"APPEND"', '"type":"INSTALL_SNAPSHOT"'));
    expect([snap.code, snap.body]).toEqual([1, undefined]);
    expect(await ask(DLedgerRequestCode.PUSH, push({ type: 'COMPARE' })))
      .toBe('{"beginIndex":0,"code":411,"count":0,"endIndex":0,"group":"RaftNode00","leaderId":"n2","localId":"n2","remoteId":"n1","term":1}');
    expect(await ask(DLedgerRequestCode.PUSH, push({ entry: entry(3, 0), term: 0 })))
      .toBe('{"beginIndex":0,"code":406,"count":1,"endIndex":2,"group":"RaftNode00","index":3,"term":0}');
    const invalid = await peer.request(DLedgerRequestCode.VOTE, '{"term":');
    expect(invalid.code).toBe(1);
    const unknown = await peer.request(12345, '{}');
    expect([unknown.code, unknown.remark]).toEqual([3, ' request type 12345 not supported']);
    expect(await ask(DLedgerRequestCode.VOTE, { group: GROUP, leaderId: 'n0', localId: 'n1', remoteId: 'n7', term: 5 }))
      .toBe('{"code":401,"group":"RaftNode00","leaderId":"n2","localId":"n1","remoteId":"n7","term":5,"voteResult":"UNKNOWN"}');
    expect(node.store.endIndex).toBe(2);
    expect(node.role).toBe('FOLLOWER');
  });

  it('answers a push past a gap 406 within about a second and drops it (pitfall 12)', async () => {
    const { store, peer } = await follower();
    await peer.request(DLedgerRequestCode.PUSH, push({ type: 'TRUNCATE', entry: entry(0) }));
    const started = Date.now();
    const gap = await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(5) }), { timeoutMs: 4000 });
    expect(RawPeer.text(gap)).toBe('{"beginIndex":0,"code":406,"count":1,"endIndex":0,"group":"RaftNode00","index":5,"term":1}');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    // Filling the gap later writes 1..4 only: the dropped 5 is not appended behind the leader's back.
    for (let i = 1; i <= 4; i++) await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(i) }));
    expect(store.endIndex).toBe(4);
  });

  it('ignores a COMMIT or APPEND that is not from its leader in its term (pitfall 11)', async () => {
    const { store, peer } = await follower();
    await peer.request(DLedgerRequestCode.PUSH, push({ type: 'TRUNCATE', entry: entry(0) }));
    await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(1), commitIndex: 0 }));
    expect(store.committedIndex).toBe(0);
    const stray = await peer.request(DLedgerRequestCode.PUSH, push({ type: 'COMMIT', term: 2, leaderId: 'n0', localId: 'n0', commitIndex: 1 }));
    expect(JSON.parse(RawPeer.text(stray)).code).toBe(407);
    const other = await peer.request(DLedgerRequestCode.PUSH, push({ type: 'COMMIT', leaderId: 'n0', localId: 'n0', commitIndex: 1 }));
    expect(JSON.parse(RawPeer.text(other)).code).toBe(409);
    const append = await peer.request(DLedgerRequestCode.PUSH, push({ entry: entry(2), leaderId: 'n0', localId: 'n0' }));
    expect(JSON.parse(RawPeer.text(append)).code).toBe(406);
    expect(store.committedIndex).toBe(0);
    expect(store.endIndex).toBe(1);
  });
});

describe('fast failover on a leader reset (fastFailoverOnLeaderReset, pitfall 21)', () => {
  it('campaigns at once when the leader link closes and the leader port refuses', async () => {
    const { node, peer } = await follower(true);
    const started = Date.now();
    peer.close();
    await waitFor('a campaign in term 2', () => node.currTerm === 2, 5000);
    // Without the extension the follower waits for 3 heartbeats of 2 s.
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('stays a follower when the link closes but the leader port still accepts connections', async () => {
    const { node, peer, n2Port } = await follower(true);
    const alive = net.createServer((s) => s.on('error', () => undefined));
    await new Promise<void>((r) => alive.listen(n2Port, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => alive.close(() => r())));
    peer.close();
    await new Promise((r) => setTimeout(r, 1500)); // the probe connects (or gives up after 1 s)
    expect(node.role).toBe('FOLLOWER');
    expect(node.currTerm).toBe(1);
  });
});
