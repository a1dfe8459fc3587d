// The vote and heartbeat rules of D/DLedgerLeaderElector (protocol/dledger.md §2.4, §2.5, pitfalls 8–10), as unit
// tests on the elector's handlers: the order of the checks, the terms answered, and persistence before replying.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/common/logger.js';
import { DLedgerResponseCode } from '../../../src/ha/dledger/codes.js';
import { Elector } from '../../../src/ha/dledger/elector.js';
import { MemberState } from '../../../src/ha/dledger/member-state.js';
import { PeerRpcClient } from '../../../src/ha/dledger/peer-rpc.js';
import type { HeartBeatRequest, VoteRequest } from '../../../src/ha/dledger/protocol.js';
import type { DLedgerRole } from '../../../src/ha/dledger/types.js';
import { MemoryDLedgerStore } from '../../helpers/memory-dledger-store.js';
import { FAST_TIMING } from './cluster.js';

const PEERS = new Map([['n0', '127.0.0.1:1'], ['n1', '127.0.0.1:2'], ['n2', '127.0.0.1:3']]);

/** An elector for n1 (never started: no timers, no calls) over a store with `entries` entries of `entryTerm`. */
function setup(opts: { currTerm?: number; voteFor?: string | null; entries?: number; entryTerm?: number; preferred?: string[] } = {}) {
  const store = new MemoryDLedgerStore();
  store.loadSync(0);
  for (let i = 0; i < (opts.entries ?? 0); i++) store.appendAsLeader(Buffer.from(`e${i}`), opts.entryTerm ?? 1);
  store.persistedTerm = { currTerm: opts.currTerm ?? 1, voteLeader: opts.voteFor ?? null };
  const ms = new MemberState('g', 'n1', PEERS, store);
  const roles: Array<[DLedgerRole, number]> = [];
  const elector = new Elector(ms, new PeerRpcClient(silentLogger()), { ...FAST_TIMING, preferredLeaderIds: opts.preferred ?? [], fastFailoverOnLeaderReset: false },
    silentLogger(), (role, term) => roles.push([role, term]));
  return { store, ms, elector, roles };
}

function vote(over: Partial<VoteRequest>): VoteRequest {
  return { code: 200, group: 'g', leaderId: 'n0', localId: 'n0', remoteId: 'n1', term: 1, ledgerEndIndex: 2, ledgerEndTerm: 1, ...over };
}

function beat(over: Partial<HeartBeatRequest>): HeartBeatRequest {
  return { code: 200, group: 'g', leaderId: 'n2', localId: 'n2', remoteId: 'n1', term: 1, ...over };
}

describe('vote handling, in the official order', () => {
  it('refuses a non-member candidate whatever its term, without any state change', () => {
    const { elector, ms, store } = setup({ entries: 3 });
    const res = elector.handleVote(vote({ leaderId: 'zz', term: 1e12 }), false);
    expect(res).toMatchObject({ voteResult: 'REJECT_UNKNOWN_LEADER', term: 1, leaderId: 'zz', remoteId: 'n1' });
    expect(ms.currTerm).toBe(1);
    expect(ms.role).toBe('CANDIDATE');
    expect(store.termWrites).toEqual([]);
  });

  it('refuses a request naming this member as candidate', () => {
    const { elector } = setup();
    expect(elector.handleVote(vote({ leaderId: 'n1' }), false).voteResult).toBe('REJECT_UNEXPECTED_LEADER');
  });

  it('checks the ledger before the term: a stale log with a huge term raises nothing (pitfall 8)', () => {
    const { elector, ms, roles } = setup({ entries: 3, entryTerm: 1 });
    const res = elector.handleVote(vote({ term: 1e12, ledgerEndIndex: -1, ledgerEndTerm: -1 }), false);
    expect(res).toMatchObject({ voteResult: 'REJECT_EXPIRED_LEDGER_TERM', term: 1 });
    expect(ms.knownMaxTermInGroup).toBe(-1);
    expect(roles).toEqual([]);
    expect(elector.handleVote(vote({ term: 5, ledgerEndIndex: 1, ledgerEndTerm: 1 }), false).voteResult).toBe('REJECT_SMALL_LEDGER_END_INDEX');
  });

  it('refuses an older term with our current term', () => {
    const { elector } = setup({ currTerm: 4, entries: 3 });
    expect(elector.handleVote(vote({ term: 3 }), false)).toMatchObject({ voteResult: 'REJECT_EXPIRED_VOTE_TERM', term: 4 });
  });

  it('in the same term: grants once (persisted first), repeats for the same candidate, refuses others', () => {
    const { elector, store, ms } = setup({ entries: 3 });
    expect(elector.handleVote(vote({}), false)).toMatchObject({ voteResult: 'ACCEPT', term: 1 });
    expect(store.persistedTerm).toEqual({ currTerm: 1, voteLeader: 'n0' });
    expect(elector.handleVote(vote({}), false).voteResult).toBe('ACCEPT');
    expect(elector.handleVote(vote({ leaderId: 'n2', localId: 'n2' }), false).voteResult).toBe('REJECT_ALREADY_VOTED');
    ms.leaderId = 'n0';
    expect(elector.handleVote(vote({ leaderId: 'n2', localId: 'n2' }), false).voteResult).toBe('REJECT_ALREADY_HAS_LEADER');
  });

  it('a larger term from a good log steps even a leader down and answers TERM_NOT_READY with the old term', () => {
    const { elector, ms, roles } = setup({ entries: 3 });
    ms.changeToLeader(1);
    const res = elector.handleVote(vote({ term: 7 }), false);
    expect(res).toMatchObject({ voteResult: 'REJECT_TERM_NOT_READY', term: 1 });
    expect(ms.role).toBe('CANDIDATE');
    expect(ms.currTerm).toBe(1); // raised later by the candidate routine
    expect(ms.knownMaxTermInGroup).toBe(7);
    expect(elector.needIncreaseTermImmediately).toBe(true);
    expect(roles).toEqual([['CANDIDATE', 7]]);
  });

  it('refuses a term below our last entry term with that term', () => {
    const { elector } = setup({ currTerm: 2, entries: 1, entryTerm: 5 });
    expect(elector.handleVote(vote({ term: 2, ledgerEndIndex: 0, ledgerEndTerm: 5 }), false))
      .toMatchObject({ voteResult: 'REJECT_TERM_SMALL_THAN_LEDGER', term: 5 });
  });

  it('a transferee taking leadership refuses an equal log but votes for itself', () => {
    const { elector, ms } = setup({ currTerm: 3, entries: 3, preferred: ['n1'] });
    ms.termToTakeLeadership = 3;
    expect(elector.handleVote(vote({ term: 3 }), false).voteResult).toBe('REJECT_TAKING_LEADERSHIP');
    expect(elector.handleVote(vote({ term: 3, leaderId: 'n1', localId: 'n1' }), true).voteResult).toBe('ACCEPT');
  });

  it('the answer copies the request base fields (group, ids, code)', () => {
    const { elector } = setup({ entries: 3 });
    const res = elector.handleVote(vote({ localId: 'n0', remoteId: 'n1', group: 'g', code: 200 }), false);
    expect(res).toMatchObject({ group: 'g', localId: 'n0', remoteId: 'n1', leaderId: 'n0', code: 200 });
  });
});

describe('heartbeat handling', () => {
  it('answers the refusals of table §1.7 with the official codes and terms', () => {
    const { elector, ms } = setup({ currTerm: 1 });
    expect(elector.handleHeartBeat(beat({ leaderId: 'zz' }), null)).toMatchObject({ code: DLedgerResponseCode.UNKNOWN_MEMBER, term: 1 });
    expect(elector.handleHeartBeat(beat({ leaderId: 'n1' }), null)).toMatchObject({ code: DLedgerResponseCode.UNEXPECTED_MEMBER, term: 1 });
    expect(elector.handleHeartBeat(beat({ term: 0 }), null)).toMatchObject({ code: DLedgerResponseCode.EXPIRED_TERM, term: 1 });
    expect(ms.role).toBe('CANDIDATE');
  });

  it('makes a candidate follow the sender of its term, then refuses another leader of that term', () => {
    const { elector, ms, roles } = setup({ currTerm: 1 });
    expect(elector.handleHeartBeat(beat({}), null)).toMatchObject({ code: 200, term: -1 });
    expect(ms.role).toBe('FOLLOWER');
    expect(ms.leaderId).toBe('n2');
    expect(roles).toEqual([['FOLLOWER', 1]]);
    expect(elector.handleHeartBeat(beat({ leaderId: 'n0', localId: 'n0' }), null)).toMatchObject({ code: DLedgerResponseCode.INCONSISTENT_LEADER, term: -1 });
  });

  it('a larger term turns a follower into a candidate that must raise its term first (TERM_NOT_READY)', () => {
    const { elector, ms } = setup({ currTerm: 1 });
    elector.handleHeartBeat(beat({}), null);
    expect(elector.handleHeartBeat(beat({ term: 2 }), null)).toMatchObject({ code: DLedgerResponseCode.TERM_NOT_READY, term: -1 });
    expect(ms.role).toBe('CANDIDATE');
    expect(ms.currTerm).toBe(1);
    expect(elector.needIncreaseTermImmediately).toBe(true);
  });
});
