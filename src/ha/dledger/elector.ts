// Leader election and heartbeats (D/DLedgerLeaderElector, protocol/dledger.md §2). A 10 ms maintainer timer runs
// the routine of the current role, like the Java StateMaintainer thread; a vote or heartbeat round in flight holds
// the routine (the Java thread blocks on its latch) without blocking the event loop.
import type { Logger } from 'pino';
import type { ClientChannel } from '../../remoting/dispatcher.js';
import { DLedgerRequestCode, DLedgerResponseCode, type VoteResult } from './codes.js';
import type { MemberState } from './member-state.js';
import { type PeerRpcClient, connectionRefused } from './peer-rpc.js';
import {
  type HeartBeatRequest,
  type HeartBeatResponse,
  type VoteRequest,
  type VoteResponse,
  baseDefaults,
  copyBase,
  decodeBase,
  decodeVoteResponse,
  encodeBase,
  encodeVoteRequest,
} from './protocol.js';
import { TakeLeadership } from './take-leadership.js';
import type { DLedgerNodeConfig, DLedgerRole } from './types.js';

/** D/protocol/VoteResponse.ParseResult. */
type ParseResult = 'WAIT_TO_REVOTE' | 'REVOTE_IMMEDIATELY' | 'PASSED' | 'WAIT_TO_VOTE_NEXT';

const MAINTAIN_INTERVAL_MS = 10;
/** DLedgerConfig.minTakeLeadershipVoteIntervalMs / maxTakeLeadershipVoteIntervalMs. */
const MIN_TAKE_LEADERSHIP_VOTE_INTERVAL_MS = 30;
const MAX_TAKE_LEADERSHIP_VOTE_INTERVAL_MS = 100;
/** How long the fast-failover probe waits for the leader's port to refuse (ours). */
const LEADER_PROBE_TIMEOUT_MS = 1000;

type ElectorTiming = Pick<
  DLedgerNodeConfig,
  'heartBeatTimeIntervalMs' | 'maxHeartBeatLeak' | 'minVoteIntervalMs' | 'maxVoteIntervalMs' | 'preferredLeaderIds' | 'fastFailoverOnLeaderReset'
>;

export type RoleChangeHook = (role: DLedgerRole, term: number, leaderId: string | null) => void;

export class Elector {
  private lastLeaderHeartBeatTime = -1;
  private lastSendHeartBeatTime = -1;
  private lastSuccHeartBeatTime = -1;
  private nextTimeToRequestVote = -1;
  needIncreaseTermImmediately = false;
  private lastParseResult: ParseResult = 'WAIT_TO_REVOTE';
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private stopped = false;
  /** The inbound link the current leader's heartbeats arrive on (fast failover, pitfall 21). */
  private leaderLink: ClientChannel | null = null;
  readonly takeLeadership: TakeLeadership;

  constructor(
    private readonly ms: MemberState,
    private readonly rpc: PeerRpcClient,
    private readonly timing: ElectorTiming,
    private readonly logger: Logger,
    private readonly onRoleChange: RoleChangeHook,
  ) {
    this.takeLeadership = new TakeLeadership(ms, logger);
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), MAINTAIN_INTERVAL_MS);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private tick(): void {
    if (this.busy || this.stopped) return;
    this.busy = true;
    this.maintainState().then(
      () => {
        this.busy = false;
      },
      (err: unknown) => {
        this.busy = false;
        this.logger.error({ err }, 'dledger elector routine failed');
      },
    );
  }

  private async maintainState(): Promise<void> {
    if (this.ms.role === 'LEADER') await this.maintainAsLeader();
    else if (this.ms.role === 'FOLLOWER') this.maintainAsFollower();
    else await this.maintainAsCandidate();
  }

  // ---- role changes (changeRoleToLeader / Candidate / Follower) ---------------------------------------------------

  changeRoleToLeader(term: number): void {
    if (this.stopped) return;
    if (this.ms.currTerm !== term || this.ms.role !== 'CANDIDATE') {
      this.logger.warn({ term, currTerm: this.ms.currTerm }, 'dledger: skip becoming leader');
      return;
    }
    this.ms.changeToLeader(term);
    this.lastSendHeartBeatTime = -1;
    this.logger.info({ term }, 'dledger: elected leader');
    this.roleChanged(term, 'LEADER');
  }

  changeRoleToCandidate(term: number): void {
    if (term < this.ms.currTerm || this.stopped) return;
    const was = this.ms.role;
    this.ms.changeToCandidate(term);
    if (was !== 'CANDIDATE') this.logger.info({ term, was }, 'dledger: candidate');
    this.leaderLink = null;
    this.roleChanged(term, 'CANDIDATE');
  }

  changeRoleToFollower(term: number, leaderId: string): void {
    this.lastParseResult = 'WAIT_TO_REVOTE';
    this.ms.changeToFollower(term, leaderId);
    this.lastLeaderHeartBeatTime = Date.now();
    this.logger.info({ term, leaderId }, 'dledger: follower');
    this.roleChanged(term, 'FOLLOWER');
  }

  private roleChanged(term: number, role: DLedgerRole): void {
    this.takeLeadership.check(term, role);
    this.onRoleChange(role, term, this.ms.leaderId);
  }

  // ---- serving votes and heartbeats ----------------------------------------------------------------------------

  /** handleVote (§2.4), in the official order: membership, ledger, term, vote; persists before answering. */
  handleVote(req: VoteRequest, self: boolean): VoteResponse {
    const ms = this.ms;
    const answer = (voteResult: VoteResult, term = ms.currTerm): VoteResponse => ({ ...copyBase(req), term, voteResult });
    if (!ms.isPeerMember(req.leaderId)) return answer('REJECT_UNKNOWN_LEADER');
    if (!self && req.leaderId === ms.selfId) return answer('REJECT_UNEXPECTED_LEADER');
    if (req.ledgerEndTerm < ms.ledgerEndTerm) return answer('REJECT_EXPIRED_LEDGER_TERM');
    if (req.ledgerEndTerm === ms.ledgerEndTerm && req.ledgerEndIndex < ms.ledgerEndIndex) return answer('REJECT_SMALL_LEDGER_END_INDEX');
    if (req.term < ms.currTerm) return answer('REJECT_EXPIRED_VOTE_TERM');
    if (req.term === ms.currTerm) {
      const vote = ms.currVoteFor;
      if (vote !== null && vote !== req.leaderId) {
        return answer(ms.leaderId !== null ? 'REJECT_ALREADY_HAS_LEADER' : 'REJECT_ALREADY_VOTED');
      }
    } else {
      // A larger term steps even a leader down; the term itself is raised by the candidate routine.
      const old = ms.currTerm;
      this.changeRoleToCandidate(req.term);
      this.needIncreaseTermImmediately = true;
      return answer('REJECT_TERM_NOT_READY', old);
    }
    if (req.term < ms.ledgerEndTerm) return answer('REJECT_TERM_SMALL_THAN_LEDGER', ms.ledgerEndTerm);
    if (!self && this.isTakingLeadership() && req.ledgerEndTerm === ms.ledgerEndTerm && ms.ledgerEndIndex >= req.ledgerEndIndex) {
      return answer('REJECT_TAKING_LEADERSHIP');
    }
    ms.setVoteFor(req.leaderId!);
    return answer('ACCEPT');
  }

  /** handleHeartBeat (§2.5). `channel` is the inbound link it came on (watched by the fast-failover extension). */
  handleHeartBeat(req: HeartBeatRequest, channel: ClientChannel | null): HeartBeatResponse {
    const ms = this.ms;
    const reply = (code: number, term: number): HeartBeatResponse => ({ ...baseDefaults(), code, term });
    if (!ms.isPeerMember(req.leaderId)) return reply(DLedgerResponseCode.UNKNOWN_MEMBER, ms.currTerm);
    if (req.leaderId === ms.selfId) return reply(DLedgerResponseCode.UNEXPECTED_MEMBER, ms.currTerm);
    if (req.term < ms.currTerm) return reply(DLedgerResponseCode.EXPIRED_TERM, ms.currTerm);
    if (req.term === ms.currTerm) {
      if (ms.leaderId === null) {
        this.changeRoleToFollower(req.term, req.leaderId!);
      } else if (req.leaderId !== ms.leaderId) {
        this.logger.error({ term: req.term, leader: ms.leaderId, other: req.leaderId }, 'dledger: two leaders in one term');
        return reply(DLedgerResponseCode.INCONSISTENT_LEADER, -1);
      }
      this.lastLeaderHeartBeatTime = Date.now();
      if (channel) this.watchLeaderLink(channel);
      return reply(DLedgerResponseCode.SUCCESS, -1);
    }
    this.changeRoleToCandidate(req.term);
    this.needIncreaseTermImmediately = true;
    return reply(DLedgerResponseCode.TERM_NOT_READY, -1);
  }

  // ---- leader: heartbeats --------------------------------------------------------------------------------------

  private async maintainAsLeader(): Promise<void> {
    if (Date.now() - this.lastSendHeartBeatTime <= this.timing.heartBeatTimeIntervalMs) return;
    if (this.ms.role !== 'LEADER') return;
    const term = this.ms.currTerm;
    const leaderId = this.ms.leaderId!;
    this.lastSendHeartBeatTime = Date.now();
    await this.sendHeartbeats(term, leaderId);
  }

  private async sendHeartbeats(term: number, leaderId: string): Promise<void> {
    const ms = this.ms;
    let all = 1;
    let succ = 1;
    let notReady = 0;
    let maxTerm = -1;
    let inconsistentLeader = false;
    let release!: () => void;
    const latch = new Promise<void>((resolve) => {
      release = resolve;
    });
    for (const [id, addr] of ms.peers) {
      if (id === ms.selfId) continue;
      const req: HeartBeatRequest = { ...baseDefaults(), group: ms.group, localId: ms.selfId, remoteId: id, leaderId, term };
      void this.rpc.call(addr, DLedgerRequestCode.HEART_BEAT, encodeBase(req)).then((body) => {
        let res: HeartBeatResponse | null = null;
        try {
          res = body ? decodeBase(body) : null;
        } catch {
          res = null;
        }
        const code = res ? res.code : DLedgerResponseCode.NETWORK_ERROR;
        if (code === DLedgerResponseCode.SUCCESS) succ++;
        else if (code === DLedgerResponseCode.EXPIRED_TERM) maxTerm = res!.term;
        else if (code === DLedgerResponseCode.INCONSISTENT_LEADER) inconsistentLeader = true;
        else if (code === DLedgerResponseCode.TERM_NOT_READY) notReady++;
        ms.liveTable.set(id, code !== DLedgerResponseCode.NETWORK_ERROR);
        all++;
        if (ms.isQuorum(succ) || ms.isQuorum(succ + notReady) || all === ms.peerSize) release();
      });
    }
    if (ms.peerSize === 1) release();
    await this.await(latch, this.timing.heartBeatTimeIntervalMs);
    if (ms.isQuorum(succ)) {
      this.lastSuccHeartBeatTime = Date.now();
      return;
    }
    this.logger.info({ term, all, succ, notReady, maxTerm, inconsistentLeader }, 'dledger: heartbeat round without quorum');
    if (ms.role !== 'LEADER' || ms.currTerm !== term) return;
    if (ms.isQuorum(succ + notReady)) this.lastSendHeartBeatTime = -1;
    else if (maxTerm > term) this.changeRoleToCandidate(maxTerm);
    else if (inconsistentLeader) this.changeRoleToCandidate(term);
    else if (Date.now() - this.lastSuccHeartBeatTime > this.timing.maxHeartBeatLeak * this.timing.heartBeatTimeIntervalMs) {
      this.changeRoleToCandidate(term);
    }
  }

  // ---- follower -------------------------------------------------------------------------------------------------

  private maintainAsFollower(): void {
    const silentMs = Date.now() - this.lastLeaderHeartBeatTime;
    if (silentMs > this.timing.maxHeartBeatLeak * this.timing.heartBeatTimeIntervalMs) {
      this.logger.info({ leaderId: this.ms.leaderId, silentMs }, 'dledger: heartbeat timeout');
      this.changeRoleToCandidate(this.ms.currTerm);
    }
  }

  /**
   * Fast failover (our extension, pitfall 21): when the link the leader's heartbeats arrive on closes and the
   * leader's peer port then refuses a connection, campaign at once in a higher term instead of waiting for the
   * heartbeat timeout. A link that closes while the port still accepts changes nothing.
   */
  private watchLeaderLink(channel: ClientChannel): void {
    if (!this.timing.fastFailoverOnLeaderReset || this.leaderLink === channel) return;
    this.leaderLink = channel;
    channel.onClose(() => {
      // The same link may have carried several terms of one leader: judge by the state when it closes.
      if (this.leaderLink !== channel || this.stopped || this.ms.role !== 'FOLLOWER') return;
      this.leaderLink = null;
      const leaderId = this.ms.leaderId;
      const term = this.ms.currTerm;
      const addr = leaderId === null ? undefined : this.ms.peers.get(leaderId);
      if (!addr) return;
      void connectionRefused(addr, LEADER_PROBE_TIMEOUT_MS).then((refused) => {
        const same = this.ms.role === 'FOLLOWER' && this.ms.leaderId === leaderId && this.ms.currTerm === term;
        if (!refused || !same || this.stopped) return;
        this.logger.info({ leaderId, term }, 'dledger: leader link closed and its port refuses connections, campaigning now');
        this.changeRoleToCandidate(term);
        this.lastParseResult = 'WAIT_TO_VOTE_NEXT';
        this.nextTimeToRequestVote = -1;
      });
    });
  }

  // ---- candidate ------------------------------------------------------------------------------------------------

  private isTakingLeadership(): boolean {
    const ids = this.timing.preferredLeaderIds;
    return ids.length > 0 && this.ms.termToTakeLeadership === this.ms.currTerm && ids.includes(this.ms.selfId);
  }

  private nextVoteTime(): number {
    if (this.isTakingLeadership()) {
      return Date.now() + MIN_TAKE_LEADERSHIP_VOTE_INTERVAL_MS + randomInt(MAX_TAKE_LEADERSHIP_VOTE_INTERVAL_MS - MIN_TAKE_LEADERSHIP_VOTE_INTERVAL_MS);
    }
    return Date.now() + this.timing.minVoteIntervalMs + randomInt(this.timing.maxVoteIntervalMs - this.timing.minVoteIntervalMs);
  }

  private async maintainAsCandidate(): Promise<void> {
    const ms = this.ms;
    if (Date.now() < this.nextTimeToRequestVote && !this.needIncreaseTermImmediately) return;
    if (ms.role !== 'CANDIDATE') return;
    let term: number;
    if (this.lastParseResult === 'WAIT_TO_VOTE_NEXT' || this.needIncreaseTermImmediately) {
      const prev = ms.currTerm;
      term = ms.nextTerm();
      this.logger.info({ from: prev, to: term }, 'dledger: term increased');
      this.lastParseResult = 'WAIT_TO_REVOTE';
    } else {
      term = ms.currTerm;
    }
    const ledgerEndIndex = ms.ledgerEndIndex;
    const ledgerEndTerm = ms.ledgerEndTerm;
    if (this.needIncreaseTermImmediately) {
      this.nextTimeToRequestVote = this.nextVoteTime();
      this.needIncreaseTermImmediately = false;
      return;
    }
    const result = await this.voteRound(term, ledgerEndIndex, ledgerEndTerm);
    this.lastParseResult = result;
    if (result === 'PASSED') this.changeRoleToLeader(term);
  }

  private async voteRound(term: number, ledgerEndIndex: number, ledgerEndTerm: number): Promise<ParseResult> {
    const ms = this.ms;
    let knownMaxTerm = term;
    let all = 0;
    let valid = 0;
    let accepted = 0;
    let notReady = 0;
    let biggerLedger = 0;
    let alreadyHasLeader = false;
    let release!: () => void;
    const latch = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tally = (res: VoteResponse | null): void => {
      const result = res?.voteResult ?? 'UNKNOWN';
      if (result !== 'UNKNOWN') valid++;
      if (result === 'ACCEPT') accepted++;
      else if (result === 'REJECT_ALREADY_HAS_LEADER') alreadyHasLeader = true;
      else if (result === 'REJECT_TERM_SMALL_THAN_LEDGER' || result === 'REJECT_EXPIRED_VOTE_TERM') {
        if (res!.term > knownMaxTerm) knownMaxTerm = res!.term;
      } else if (result === 'REJECT_EXPIRED_LEDGER_TERM' || result === 'REJECT_SMALL_LEDGER_END_INDEX') biggerLedger++;
      else if (result === 'REJECT_TERM_NOT_READY') notReady++;
      all++;
      if (alreadyHasLeader || ms.isQuorum(accepted) || ms.isQuorum(accepted + notReady) || all === ms.peerSize) release();
    };
    for (const [id, addr] of ms.peers) {
      const req: VoteRequest = {
        ...baseDefaults(),
        group: ms.group,
        leaderId: ms.selfId,
        localId: ms.selfId,
        remoteId: id,
        term,
        ledgerEndIndex,
        ledgerEndTerm,
      };
      if (id === ms.selfId) {
        tally(this.handleVote(req, true));
        continue;
      }
      void this.rpc.call(addr, DLedgerRequestCode.VOTE, encodeVoteRequest(req)).then((body) => {
        let res: VoteResponse | null = null;
        try {
          res = body ? decodeVoteResponse(body) : null;
        } catch {
          res = null;
        }
        tally(res);
      });
    }
    await this.await(latch, this.timing.heartBeatTimeIntervalMs + randomInt(this.timing.maxVoteIntervalMs));
    let result: ParseResult;
    if (knownMaxTerm > term) {
      result = 'WAIT_TO_VOTE_NEXT';
      this.nextTimeToRequestVote = this.nextVoteTime();
      this.changeRoleToCandidate(knownMaxTerm);
    } else if (alreadyHasLeader) {
      result = 'WAIT_TO_REVOTE';
      this.nextTimeToRequestVote = this.nextVoteTime() + this.timing.heartBeatTimeIntervalMs * this.timing.maxHeartBeatLeak;
    } else if (!ms.isQuorum(valid)) {
      result = 'WAIT_TO_REVOTE';
      this.nextTimeToRequestVote = this.nextVoteTime();
    } else if (!ms.isQuorum(valid - biggerLedger)) {
      result = 'WAIT_TO_REVOTE';
      this.nextTimeToRequestVote = this.nextVoteTime() + this.timing.maxVoteIntervalMs;
    } else if (ms.isQuorum(accepted)) {
      result = 'PASSED';
    } else if (ms.isQuorum(accepted + notReady)) {
      result = 'REVOTE_IMMEDIATELY';
    } else {
      result = 'WAIT_TO_VOTE_NEXT';
      this.nextTimeToRequestVote = this.nextVoteTime();
    }
    this.logger.debug({ term, all, valid, accepted, notReady, biggerLedger, alreadyHasLeader, knownMaxTerm, result }, 'dledger: vote round');
    return result;
  }

  /** Waits for the latch or `ms`, whichever first (CountDownLatch.await with a timeout). */
  private async await(latch: Promise<void>, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([latch, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }
}

function randomInt(bound: number): number {
  return bound <= 0 ? 0 : Math.floor(Math.random() * bound);
}
