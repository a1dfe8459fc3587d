// The transferee's parked reply to LEADERSHIP_TRANSFER (D/DLedgerLeaderElector.TakeLeadershipTask, §2.8): settled
// on the next role change that decides it — leader in the target term → SUCCESS; follower → TAKE_LEADERSHIP_FAILED;
// a higher term → EXPIRED_TERM; candidate of an older term → INTERNAL_ERROR.
import type { Logger } from 'pino';
import { DLedgerResponseCode } from './codes.js';
import type { MemberState } from './member-state.js';
import { type LeadershipTransferResponse, baseDefaults } from './protocol.js';
import type { DLedgerRole } from './types.js';

export class TakeLeadership {
  private resolve: ((res: LeadershipTransferResponse) => void) | null = null;

  constructor(
    private readonly ms: MemberState,
    private readonly logger: Logger,
  ) {}

  /** Parks the reply of a take-leadership request; a previous unsettled one is dropped (Java overwrites it). */
  park(): Promise<LeadershipTransferResponse> {
    return new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  check(term: number, role: DLedgerRole): void {
    const target = this.ms.termToTakeLeadership;
    if (target === -1 || this.resolve === null) return;
    let code: number;
    if (term > target) code = DLedgerResponseCode.EXPIRED_TERM;
    else if (term === target) {
      if (role === 'LEADER') code = DLedgerResponseCode.SUCCESS;
      else if (role === 'FOLLOWER') code = DLedgerResponseCode.TAKE_LEADERSHIP_FAILED;
      else return;
    } else {
      code = role === 'FOLLOWER' ? DLedgerResponseCode.TAKE_LEADERSHIP_FAILED : DLedgerResponseCode.INTERNAL_ERROR;
    }
    const resolve = this.resolve;
    this.resolve = null;
    this.ms.termToTakeLeadership = -1;
    this.logger.info({ term, role, code }, 'dledger: take-leadership finished');
    resolve({ ...baseDefaults(), code, term });
  }

  /** Settles a parked reply on shutdown. */
  cancel(): void {
    const resolve = this.resolve;
    this.resolve = null;
    resolve?.({ ...baseDefaults(), code: DLedgerResponseCode.INTERNAL_ERROR, term: this.ms.currTerm });
  }
}
