// Quorum commit on the leader (D/DLedgerEntryPusher.QuorumAckChecker, waitAck, protocol/dledger.md §3.6):
// per-term watermarks (every member starts at −1 when a term's map is made), the commit index = the watermarks
// sorted descending at position floor(n/2) — with no check of the entry's term, so inherited entries of earlier
// terms commit as soon as a majority holds them, as 0.3.1.2 does — and one pending ack per appended index that
// settles SUCCESS on quorum, WAIT_QUORUM_ACK_TIMEOUT after maxWaitAckTimeMs, TERM_CHANGED when the term moves on.
import type { Logger } from 'pino';
import { DLedgerResponseCode } from './codes.js';
import type { MemberState } from './member-state.js';
import type { DLedgerAppendResult, DLedgerEntry, DLedgerStorePort } from './types.js';

interface PendingAck {
  readonly index: number;
  readonly pos: number;
  readonly createdMs: number;
  done: boolean;
  readonly resolve: (r: DLedgerAppendResult) => void;
}

/** How often the checker runs without a wake-up (timeouts, the 1 s sweep); Java polls every 1 ms. */
const CHECK_INTERVAL_MS = 20;
const SWEEP_INTERVAL_MS = 1000;

export class QuorumTracker {
  private readonly watermarks = new Map<number, Map<string, number>>();
  private readonly pending = new Map<number, Map<number, PendingAck>>();
  private lastQuorumIndex = -1;
  private lastSweepMs = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private wakeScheduled = false;

  constructor(
    private readonly ms: MemberState,
    private readonly store: DLedgerStorePort,
    private readonly maxWaitAckTimeMs: number,
    private readonly maxPendingRequestsNum: number,
    /** Moves the store's committed index (and tells the listeners). */
    private readonly advanceCommit: (index: number) => void,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.check(), CHECK_INTERVAL_MS);
  }

  stop(): void {
    clearInterval(this.timer);
    this.failAll(DLedgerResponseCode.TERM_CHANGED);
  }

  private marksOf(term: number): Map<string, number> {
    let m = this.watermarks.get(term);
    if (!m) {
      m = new Map();
      for (const id of this.ms.peers.keys()) m.set(id, -1);
      this.watermarks.set(term, m);
    }
    return m;
  }

  private pendingOf(term: number): Map<number, PendingAck> {
    let m = this.pending.get(term);
    if (!m) {
      m = new Map();
      this.pending.set(term, m);
    }
    return m;
  }

  updatePeerWaterMark(term: number, peerId: string, index: number): void {
    const m = this.marksOf(term);
    if ((m.get(peerId) ?? -1) < index) m.set(peerId, index);
  }

  getPeerWaterMark(term: number, peerId: string): number {
    return this.marksOf(term).get(peerId) ?? -1;
  }

  /** DLedgerEntryPusher.isPendingFull: more than maxPendingRequestsNum acks waiting in this term. */
  isPendingFull(term: number): boolean {
    return this.pendingOf(term).size > this.maxPendingRequestsNum;
  }

  /** waitAck: the leader's own watermark moves to the entry, and an ack waits for the quorum. */
  waitAck(entry: DLedgerEntry): Promise<DLedgerAppendResult> {
    this.updatePeerWaterMark(entry.term, this.ms.selfId, entry.index);
    const pending = this.pendingOf(entry.term);
    return new Promise((resolve) => {
      const old = pending.get(entry.index);
      if (old && !old.done) old.resolve({ code: DLedgerResponseCode.TERM_CHANGED, index: old.index, pos: old.pos });
      pending.set(entry.index, { index: entry.index, pos: entry.pos, createdMs: Date.now(), done: false, resolve });
      this.wakeup();
    });
  }

  /** Runs the checker soon (coalesced): after acks and appends. */
  wakeup(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.check();
    });
  }

  /** Settles every waiting ack with `code` (the node stopped, or stepped down as leader). */
  failAll(code: number): void {
    for (const m of this.pending.values()) {
      for (const p of m.values()) settle(p, code);
    }
    this.pending.clear();
  }

  /** One pass of QuorumAckChecker.doWork. */
  check(): void {
    if (this.ms.role !== 'LEADER') return;
    try {
      this.checkAsLeader();
    } catch (err) {
      this.logger.error({ err }, 'dledger quorum check failed');
    }
  }

  private checkAsLeader(): void {
    const term = this.ms.currTerm;
    const responses = this.pendingOf(term);
    const marks = this.marksOf(term);
    for (const [t, m] of this.pending) {
      if (t === term) continue;
      for (const p of m.values()) settle(p, DLedgerResponseCode.TERM_CHANGED);
      this.pending.delete(t);
    }
    for (const t of this.watermarks.keys()) if (t !== term) this.watermarks.delete(t);

    const sorted = [...marks.values()].sort((a, b) => b - a);
    const quorumIndex = sorted[Math.floor(sorted.length / 2)]!;
    if (quorumIndex >= 0) this.advanceCommit(quorumIndex);

    let acked = 0;
    let gap = false;
    for (let i = quorumIndex; i > this.lastQuorumIndex; i--) {
      const p = responses.get(i);
      if (!p) {
        gap = true;
        break;
      }
      responses.delete(i);
      settle(p, DLedgerResponseCode.SUCCESS);
      acked++;
    }
    const now = Date.now();
    if (acked === 0) {
      // Waits older than maxWaitAckTimeMs, oldest first (D/DLedgerEntryPusher.checkResponseFuturesTimeout). Java
      // starts at quorum+1 and stops at the first index without a wait — so a new leader whose inherited tail has
      // no waits never times out its own; ours starts at the oldest wait. A timed-out ack stays counted for
      // pending-full until the quorum passes it, as in Java.
      for (const p of responses.values()) {
        if (p.done) continue;
        if (now - p.createdMs < this.maxWaitAckTimeMs) break;
        settle(p, DLedgerResponseCode.WAIT_QUORUM_ACK_TIMEOUT);
      }
    }
    if (now - this.lastSweepMs > SWEEP_INTERVAL_MS || gap) {
      this.updatePeerWaterMark(term, this.ms.selfId, this.store.endIndex);
      for (const [i, p] of responses) {
        if (i > quorumIndex) continue;
        responses.delete(i);
        settle(p, DLedgerResponseCode.SUCCESS);
      }
      this.lastSweepMs = now;
    }
    this.lastQuorumIndex = quorumIndex;
  }

  /** Acks waiting in the current term (for tests and metrics). */
  get pendingCount(): number {
    return this.pending.get(this.ms.currTerm)?.size ?? 0;
  }
}

function settle(p: PendingAck, code: number): void {
  if (p.done) return;
  p.done = true;
  p.resolve({ code, index: p.index, pos: p.pos });
}
