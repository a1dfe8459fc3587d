// A member's Raft state (D/MemberState, protocol/dledger.md §2.1): role, current term and vote (persisted in the
// store's currterm file before any reply depends on them), known leader, the peers and their liveness as the
// leader's heartbeats last saw it, and the leadership-transfer marks.
import type { DLedgerRole, DLedgerStorePort } from './types.js';

export class MemberState {
  role: DLedgerRole = 'CANDIDATE';
  private term: number;
  private voteFor: string | null;
  /** Known leader (self when leader), null while none. */
  leaderId: string | null = null;
  /** Highest term seen in the group (raised by larger terms in requests and replies). */
  knownMaxTermInGroup = -1;
  /** Peer id → reachable per the last heartbeat round (leader only; cleared on election). */
  readonly liveTable = new Map<string, boolean>();
  /** Leader only: the member leadership is being handed to; appends are refused meanwhile. */
  transferee: string | null = null;
  /** Transferee only: the term it campaigns in to take leadership (−1 none). */
  termToTakeLeadership = -1;

  constructor(
    readonly group: string,
    readonly selfId: string,
    readonly peers: ReadonlyMap<string, string>,
    private readonly store: DLedgerStorePort,
  ) {
    const saved = store.persistedTerm;
    this.term = saved.currTerm;
    this.voteFor = saved.voteLeader === '' ? null : saved.voteLeader;
  }

  get currTerm(): number {
    return this.term;
  }

  get currVoteFor(): string | null {
    return this.voteFor;
  }

  get ledgerEndIndex(): number {
    return this.store.endIndex;
  }

  get ledgerEndTerm(): number {
    return this.store.endTerm;
  }

  get peerSize(): number {
    return this.peers.size;
  }

  /** MemberState.isQuorum: n ≥ floor(peers / 2) + 1. */
  isQuorum(n: number): boolean {
    return n >= Math.floor(this.peers.size / 2) + 1;
  }

  isPeerMember(id: string | null): boolean {
    return id !== null && this.peers.has(id);
  }

  /** Grants the vote of the current term and persists it before the caller replies. */
  setVoteFor(candidate: string): void {
    this.voteFor = candidate;
    this.persist();
  }

  /** MemberState.nextTerm: the known maximum if larger, else term + 1; the vote is cleared and persisted. */
  nextTerm(): number {
    if (this.role !== 'CANDIDATE') throw new Error(`nextTerm as ${this.role}`);
    this.term = this.knownMaxTermInGroup > this.term ? this.knownMaxTermInGroup : this.term + 1;
    this.voteFor = null;
    this.persist();
    return this.term;
  }

  changeToLeader(term: number): void {
    if (term !== this.term) throw new Error(`changeToLeader(${term}) in term ${this.term}`);
    this.role = 'LEADER';
    this.leaderId = this.selfId;
    this.liveTable.clear();
  }

  changeToFollower(term: number, leaderId: string): void {
    if (term !== this.term) throw new Error(`changeToFollower(${term}) in term ${this.term}`);
    this.role = 'FOLLOWER';
    this.leaderId = leaderId;
    this.transferee = null;
  }

  /** The current term is not raised here (only known max); the candidate routine does it, persisting. */
  changeToCandidate(term: number): void {
    if (term < this.term) throw new Error(`changeToCandidate(${term}) in term ${this.term}`);
    if (term > this.knownMaxTermInGroup) this.knownMaxTermInGroup = term;
    this.role = 'CANDIDATE';
    this.leaderId = null;
    this.transferee = null;
  }

  private persist(): void {
    this.store.persistTerm(this.term, this.voteFor);
  }
}
