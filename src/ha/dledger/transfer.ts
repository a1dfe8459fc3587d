// Leadership transfer and the preferred leader (D/DLedgerServer.handleLeadershipTransfer, checkPreferredLeader and
// D/DLedgerLeaderElector.handleLeadershipTransfer / handleTakeLeadership; protocol/dledger.md §2.8).
import type { Logger } from 'pino';
import { DLedgerRequestCode, DLedgerResponseCode } from './codes.js';
import type { Elector } from './elector.js';
import type { MemberState } from './member-state.js';
import type { PeerRpcClient } from './peer-rpc.js';
import {
  type LeadershipTransferRequest,
  type LeadershipTransferResponse,
  baseDefaults,
  copyBase,
  decodeBase,
  encodeLeadershipTransferRequest,
} from './protocol.js';
import type { QuorumTracker } from './quorum.js';
import type { DLedgerStorePort } from './types.js';

/** DLedgerConfig.maxLeadershipTransferWaitIndex: a transferee further behind is refused (FALL_BEHIND_TOO_MUCH). */
export const MAX_LEADERSHIP_TRANSFER_WAIT_INDEX = 1000;
/** DLedgerConfig.leadershipTransferWaitTimeout: how long a transferee waits to catch up. */
export const LEADERSHIP_TRANSFER_WAIT_TIMEOUT_MS = 1000;
/** DLedgerServer's checkPreferredLeader period. */
export const PREFERRED_LEADER_CHECK_INTERVAL_MS = 1000;

export class LeadershipTransfer {
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly ms: MemberState,
    private readonly store: DLedgerStorePort,
    private readonly elector: Elector,
    private readonly quorum: QuorumTracker,
    private readonly rpc: PeerRpcClient,
    private readonly preferredLeaderIds: readonly string[],
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.preferredLeaderIds.length > 0) {
      this.timer = setInterval(() => void this.checkPreferredLeader(), PREFERRED_LEADER_CHECK_INTERVAL_MS);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.elector.takeLeadership.cancel();
  }

  private fallBehind(peerId: string): number {
    return this.store.endIndex - this.quorum.getPeerWaterMark(this.ms.currTerm, peerId);
  }

  /**
   * A LEADERSHIP_TRANSFER request after the remoteId/group checks: to the leader (transferId = self), to the
   * transferee (transfereeId = self), or to neither (UNEXPECTED_ARGUMENT). Errors come back in the base-copy shape.
   */
  async handle(req: LeadershipTransferRequest): Promise<LeadershipTransferResponse> {
    const ms = this.ms;
    const fail = (code: number): LeadershipTransferResponse => ({ ...copyBase(req), code, leaderId: ms.leaderId });
    if (req.transferId === ms.selfId) {
      if (!ms.isPeerMember(req.transfereeId)) return fail(DLedgerResponseCode.UNKNOWN_MEMBER);
      if (ms.currTerm !== req.term) return fail(DLedgerResponseCode.INCONSISTENT_TERM);
      if (ms.role !== 'LEADER') return fail(DLedgerResponseCode.NOT_LEADER);
      if (this.fallBehind(req.transfereeId!) >= MAX_LEADERSHIP_TRANSFER_WAIT_INDEX) return fail(DLedgerResponseCode.FALL_BEHIND_TOO_MUCH);
      return this.transferAsLeader(req.term, req.transfereeId!);
    }
    if (req.transfereeId === ms.selfId) {
      if (req.transferId !== ms.leaderId) return fail(DLedgerResponseCode.INCONSISTENT_LEADER);
      // Waits (in 10 ms steps, 1 s at most) for our log to reach the leader's end; Java blocks a thread here.
      const started = Date.now();
      while (req.takeLeadershipLedgerIndex > ms.ledgerEndIndex) {
        if (Date.now() - started > LEADERSHIP_TRANSFER_WAIT_TIMEOUT_MS) return fail(DLedgerResponseCode.TAKE_LEADERSHIP_FAILED);
        await sleep(10);
      }
      return this.takeLeadership(req);
    }
    return { ...baseDefaults(), code: DLedgerResponseCode.UNEXPECTED_ARGUMENT, term: ms.currTerm };
  }

  /** The leader's side (DLedgerLeaderElector.handleLeadershipTransfer): appends are refused until it resolves. */
  async transferAsLeader(term: number, transfereeId: string): Promise<LeadershipTransferResponse> {
    const ms = this.ms;
    const answer = (code: number): LeadershipTransferResponse => ({ ...baseDefaults(), code, term: ms.currTerm });
    if (ms.currTerm !== term) return answer(DLedgerResponseCode.INCONSISTENT_TERM);
    if (ms.role !== 'LEADER') return answer(DLedgerResponseCode.NOT_LEADER);
    if (ms.transferee !== null) return answer(DLedgerResponseCode.LEADER_TRANSFERRING);
    ms.transferee = transfereeId;
    const req: LeadershipTransferRequest = {
      ...baseDefaults(),
      group: ms.group,
      leaderId: ms.leaderId,
      localId: ms.selfId,
      remoteId: transfereeId,
      term,
      takeLeadershipLedgerIndex: ms.ledgerEndIndex,
      transferId: ms.selfId,
      transfereeId,
    };
    this.logger.info({ transfereeId, term, index: req.takeLeadershipLedgerIndex }, 'dledger: transferring leadership');
    const body = await this.rpc.call(ms.peers.get(transfereeId)!, DLedgerRequestCode.LEADERSHIP_TRANSFER, encodeLeadershipTransferRequest(req));
    let res: LeadershipTransferResponse;
    try {
      res = body ? decodeBase(body) : answer(DLedgerResponseCode.NETWORK_ERROR);
    } catch {
      res = answer(DLedgerResponseCode.NETWORK_ERROR);
    }
    if (res.code !== DLedgerResponseCode.SUCCESS || (ms.currTerm === term && ms.transferee !== null)) ms.transferee = null;
    return res;
  }

  /** The transferee's side (handleTakeLeadership): campaign in term + 1 at once; the reply waits for the outcome. */
  private takeLeadership(req: LeadershipTransferRequest): Promise<LeadershipTransferResponse> {
    const ms = this.ms;
    if (ms.currTerm !== req.term) {
      return Promise.resolve({ ...baseDefaults(), code: DLedgerResponseCode.INCONSISTENT_TERM, term: ms.currTerm });
    }
    ms.termToTakeLeadership = req.term + 1;
    const parked = this.elector.takeLeadership.park();
    this.elector.changeRoleToCandidate(req.term + 1);
    this.elector.needIncreaseTermImmediately = true;
    return parked;
  }

  /** DLedgerServer.checkPreferredLeader: a leader not in the preferred list hands over to the closest live one. */
  private async checkPreferredLeader(): Promise<void> {
    const ms = this.ms;
    if (this.checking || ms.role !== 'LEADER' || ms.transferee !== null) return;
    if (this.preferredLeaderIds.includes(ms.selfId)) return;
    const candidates = this.preferredLeaderIds.filter((id) => ms.isPeerMember(id) && ms.liveTable.get(id) === true);
    if (candidates.length === 0) return;
    let best = candidates[0]!;
    let bestBehind = Number.MAX_SAFE_INTEGER;
    for (const id of candidates) {
      const behind = this.fallBehind(id);
      if (behind < bestBehind) {
        bestBehind = behind;
        best = id;
      }
    }
    if (bestBehind >= MAX_LEADERSHIP_TRANSFER_WAIT_INDEX) return;
    this.checking = true;
    try {
      const res = await this.transferAsLeader(ms.currTerm, best);
      this.logger.info({ transfereeId: best, code: res.code }, 'dledger: preferred-leader transfer finished');
    } finally {
      this.checking = false;
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
