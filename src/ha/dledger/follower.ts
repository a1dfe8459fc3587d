// The follower's push handler (D/DLedgerEntryPusher.EntryHandler, protocol/dledger.md §3.5): APPENDs are parked
// by first index and written in index order; COMPARE/TRUNCATE/COMMIT are queued and run first, in arrival order.
// Stricter than 0.3.1.2 (pitfalls 11, 12): every push must carry our current term and known leader — a stale
// COMMIT is answered 200 and ignored as the official node does, any other mismatch is refused in the official
// shape — and a parked APPEND that cannot be written within 1 s is answered 406 and dropped, not kept forever.
import type { Logger } from 'pino';
import { DLedgerResponseCode } from './codes.js';
import type { MemberState } from './member-state.js';
import { type PushEntryRequest, type PushEntryResponse, baseDefaults, pushCount, pushFirstIndex, pushLastIndex } from './protocol.js';
import { DLEDGER_ENTRY_HEADER_BYTES, type DLedgerEntry, type DLedgerStorePort } from './types.js';

interface Parked {
  readonly req: PushEntryRequest;
  readonly resolve: (res: PushEntryResponse | null) => void;
  readonly arrivedMs: number;
}

/** EntryHandler's queue of COMPARE/TRUNCATE/COMMIT (ArrayBlockingQueue 1024); beyond → PUSH_REQUEST_IS_FULL. */
const MAX_QUEUED = 1024;
/** Ours: parked APPENDs per follower (the leader keeps ≤ 1000 in flight); beyond → PUSH_REQUEST_IS_FULL. */
const MAX_PARKED_APPENDS = 2048;
/** A parked APPEND older than this is answered 406 when it still cannot be written (TimeoutFuture(1000)). */
const PARKED_TIMEOUT_MS = 1000;

/** DLedgerEntry.equals: size, magic, index, term, channel, pos and body bytes. */
export function sameEntry(a: DLedgerEntry, b: DLedgerEntry | null): boolean {
  if (!b) return false;
  return a.size === b.size && a.magic === b.magic && a.index === b.index && a.term === b.term && a.channel === b.channel &&
    a.pos === b.pos && a.body.equals(b.body);
}

/** The entry as the follower writes it: size recomputed from the body, as DLedgerEntryCoder.encode does. */
function normalized(e: DLedgerEntry): DLedgerEntry {
  const size = DLEDGER_ENTRY_HEADER_BYTES + e.body.length;
  return e.size === size ? e : { ...e, size };
}

export class FollowerHandler {
  private readonly appends = new Map<number, Parked>();
  private readonly queue: Parked[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: MemberState,
    private readonly store: DLedgerStorePort,
    /** Moves the store's committed index (and tells the listeners). */
    private readonly advanceCommit: (index: number) => void,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.checkAbnormal(), PARKED_TIMEOUT_MS);
  }

  stop(): void {
    clearInterval(this.timer);
    for (const p of this.appends.values()) p.resolve(null);
    this.appends.clear();
    for (const p of this.queue.splice(0)) p.resolve(null);
  }

  /** EntryHandler.buildResponse: the request's group and term, its first index and count (not for COMMIT). */
  buildResponse(req: PushEntryRequest, code: number): PushEntryResponse {
    const commit = req.type === 'COMMIT';
    return {
      ...baseDefaults(),
      group: req.group,
      code,
      term: req.term,
      index: commit ? null : pushFirstIndex(req),
      count: commit ? 0 : pushCount(req),
      beginIndex: this.store.beginIndex,
      endIndex: this.store.endIndex,
    };
  }

  /** Whether the push comes from the leader we follow, in our term. */
  private fromOurLeader(req: PushEntryRequest): boolean {
    return req.term === this.ms.currTerm && req.leaderId !== null && req.leaderId === this.ms.leaderId;
  }

  /**
   * handlePush, after the node checked remoteId and group. Resolves the reply, or null for none. Throws
   * UnexpectedArgument (→ 411 in the base-copy shape) for a push without its entry; a type this version does not
   * know must be refused by the caller before (the official node answers remoting SYSTEM_ERROR).
   */
  handlePush(req: PushEntryRequest): Promise<PushEntryResponse | null> {
    return new Promise((resolve) => {
      const parked: Parked = { req, resolve, arrivedMs: Date.now() };
      if (req.type === 'APPEND') this.parkAppend(parked);
      else this.enqueue(parked);
      this.drain();
    });
  }

  private parkAppend(p: Parked): void {
    const req = p.req;
    if (this.ms.role !== 'FOLLOWER') {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.NOT_FOLLOWER)); // Java leaves it unanswered (pitfall 13)
      return;
    }
    if (!this.fromOurLeader(req)) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.INCONSISTENT_STATE));
      return;
    }
    const first = pushFirstIndex(req);
    if (pushLastIndex(req) <= this.store.endIndex) {
      p.resolve(this.buildResponse(req, this.alreadyHeld(req) ? DLedgerResponseCode.SUCCESS : DLedgerResponseCode.INCONSISTENT_STATE));
      return;
    }
    if (this.appends.has(first)) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.REPEATED_PUSH));
      return;
    }
    if (this.appends.size >= MAX_PARKED_APPENDS) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.PUSH_REQUEST_IS_FULL));
      return;
    }
    this.appends.set(first, p);
  }

  private enqueue(p: Parked): void {
    if (p.req.type !== 'COMMIT' && this.fromOurLeader(p.req)) {
      // A COMPARE/TRUNCATE from our leader drops the parked APPENDs unanswered, as EntryHandler.handlePush does:
      // the leader has forgotten them.
      for (const a of this.appends.values()) a.resolve(null);
      this.appends.clear();
    }
    if (this.queue.length >= MAX_QUEUED) {
      p.resolve(this.buildResponse(p.req, DLedgerResponseCode.PUSH_REQUEST_IS_FULL));
      return;
    }
    this.queue.push(p);
  }

  /** EntryHandler.doWork until nothing can be done: queued requests first, then the APPEND at end + 1. */
  drain(): void {
    if (this.ms.role !== 'FOLLOWER') {
      for (const p of this.queue.splice(0)) p.resolve(this.buildResponse(p.req, DLedgerResponseCode.NOT_FOLLOWER));
      for (const p of this.appends.values()) p.resolve(this.buildResponse(p.req, DLedgerResponseCode.NOT_FOLLOWER));
      this.appends.clear();
      return;
    }
    for (;;) {
      const q = this.queue.shift();
      if (q) {
        if (q.req.type === 'COMPARE') this.doCompare(q);
        else if (q.req.type === 'TRUNCATE') this.doTruncate(q);
        else this.doCommit(q);
        continue;
      }
      const next = this.store.endIndex + 1;
      const p = this.appends.get(next);
      if (!p) return;
      this.appends.delete(next);
      this.doAppend(p);
    }
  }

  private doAppend(p: Parked): void {
    const req = p.req;
    if (!this.fromOurLeader(req)) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.INCONSISTENT_STATE));
      return;
    }
    const entries = req.batchEntry.length > 0 ? req.batchEntry : [req.entry!];
    try {
      for (const e of entries) {
        if (e.index !== this.store.endIndex + 1) throw new Error(`index ${e.index} after end ${this.store.endIndex}`);
        this.store.appendAsFollower(normalized(e));
      }
    } catch (err) {
      this.logger.warn({ index: pushFirstIndex(req), err: (err as Error).message }, 'dledger: follower append refused');
      p.resolve(this.buildResponse(req, DLedgerResponseCode.INCONSISTENT_STATE));
      return;
    }
    p.resolve(this.buildResponse(req, DLedgerResponseCode.SUCCESS));
    this.updateCommitted(req);
  }

  private doCompare(p: Parked): void {
    const req = p.req;
    const entry = req.entry!;
    const ok = this.fromOurLeader(req) && sameEntry(entry, this.store.get(entry.index));
    p.resolve(this.buildResponse(req, ok ? DLedgerResponseCode.SUCCESS : DLedgerResponseCode.INCONSISTENT_STATE));
  }

  private doTruncate(p: Parked): void {
    const req = p.req;
    const entry = normalized(req.entry!);
    if (!this.fromOurLeader(req)) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.INCONSISTENT_STATE));
      return;
    }
    try {
      const end = this.store.truncate(entry);
      if (end !== entry.index) throw new Error(`truncate at ${entry.index} left end ${end}`);
    } catch (err) {
      this.logger.warn({ index: entry.index, err: (err as Error).message }, 'dledger: truncate refused');
      p.resolve(this.buildResponse(req, DLedgerResponseCode.INCONSISTENT_STATE));
      return;
    }
    this.logger.info({ index: entry.index, pos: entry.pos }, 'dledger: truncated to the leader');
    p.resolve(this.buildResponse(req, DLedgerResponseCode.SUCCESS));
    this.updateCommitted(req);
  }

  private doCommit(p: Parked): void {
    const req = p.req;
    if (req.term < this.ms.currTerm) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.SUCCESS)); // stale: answered and ignored, as 0.3.1.2
      return;
    }
    if (req.term !== this.ms.currTerm) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.INCONSISTENT_TERM));
      return;
    }
    if (!this.fromOurLeader(req)) {
      p.resolve(this.buildResponse(req, DLedgerResponseCode.INCONSISTENT_LEADER));
      return;
    }
    this.updateCommitted(req);
    p.resolve(this.buildResponse(req, DLedgerResponseCode.SUCCESS));
  }

  /** updateCommittedIndex(request.term, request.commitIndex), capped at our end (DLedgerMmapFileStore). */
  private updateCommitted(req: PushEntryRequest): void {
    if (!this.fromOurLeader(req)) return;
    const end = this.store.endIndex;
    if (req.commitIndex < 0 || end < 0) return;
    const index = Math.min(req.commitIndex, end);
    if (index <= this.store.committedIndex || index < this.store.beginIndex) return;
    this.advanceCommit(index);
  }

  /** Whether every entry of an APPEND at or below our end equals what we hold (a lost ack). */
  private alreadyHeld(req: PushEntryRequest): boolean {
    const entries = req.batchEntry.length > 0 ? req.batchEntry : [req.entry!];
    return entries.every((e) => sameEntry(normalized(e), this.store.get(e.index)));
  }

  /**
   * EntryHandler.checkAbnormalFuture, every second: parked APPENDs now at or below our end are answered by
   * comparison; if the next index is not parked, the oldest timed-out one is answered 406 (so the leader compares
   * again) and dropped (ours; Java keeps it, pitfall 12).
   */
  private checkAbnormal(): void {
    if (this.ms.role !== 'FOLLOWER' || this.appends.size === 0) return;
    const end = this.store.endIndex;
    const now = Date.now();
    let oldest: Parked | null = null;
    for (const [first, p] of this.appends) {
      if (pushLastIndex(p.req) <= end) {
        this.appends.delete(first);
        p.resolve(this.buildResponse(p.req, this.alreadyHeld(p.req) ? DLedgerResponseCode.SUCCESS : DLedgerResponseCode.INCONSISTENT_STATE));
        continue;
      }
      if (first === end + 1) return;
      if (now - p.arrivedMs >= PARKED_TIMEOUT_MS && (oldest === null || first < pushFirstIndex(oldest.req))) oldest = p;
    }
    if (oldest) {
      this.appends.delete(pushFirstIndex(oldest.req));
      oldest.resolve(this.buildResponse(oldest.req, DLedgerResponseCode.INCONSISTENT_STATE));
    }
  }
}
