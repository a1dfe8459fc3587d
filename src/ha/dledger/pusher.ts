// The leader's per-follower dispatcher (D/DLedgerEntryPusher.EntryDispatcher, protocol/dledger.md §3.1–§3.4):
// COMPARE (walk back until the follower holds the same entry) → TRUNCATE (cut the follower there) → APPEND (one
// entry per push, or with enableBatchPush batches of ≥ 4096 bytes; pipelined, at most 1000 pushes in flight) with
// COMMIT keep-alives when caught up. Driven by wake-ups (appends, replies) and a short timer instead of a thread
// polling every millisecond.
import type { Logger } from 'pino';
import { limited } from '../../common/log-limiter.js';
import { DLedgerRequestCode, DLedgerResponseCode, type PushType, dledgerCodeName } from './codes.js';
import type { MemberState } from './member-state.js';
import type { PeerRpcClient } from './peer-rpc.js';
import {
  type PushEntryRequest,
  type PushEntryResponse,
  baseDefaults,
  decodePushEntryResponse,
  encodePushEntryRequest,
} from './protocol.js';
import type { QuorumTracker } from './quorum.js';
import type { DLedgerEntry, DLedgerStorePort } from './types.js';

/** EntryDispatcher.maxPendingSize. */
export const MAX_PENDING_PUSHES = 1000;
/** Ours: bytes of entries in flight to one follower (Java bounds only the count; 1000 × 4 MiB would be 4 GiB). */
export const MAX_IN_FLIGHT_PUSH_BYTES = 32 * 1024 * 1024;
/** A COMMIT push keeps an idle follower's commit index fresh this often (EntryDispatcher.doCommit). */
const COMMIT_KEEPALIVE_MS = 1000;
/** After a failed COMPARE/TRUNCATE the dispatcher waits this long (EntryDispatcher.doWork's catch). */
const ERROR_BACKOFF_MS = 500;
const TICK_MS = 100;
/** DLedgerConfig.maxBatchPushSize: a batch push is sent once its entries reach this many bytes. */
export const MAX_BATCH_PUSH_BYTES = 4096;

interface PendingPush {
  readonly sentMs: number;
  /** Entries in the push (1 unless batched). */
  readonly count: number;
}

class PushError extends Error {}

export class EntryDispatcher {
  private type: PushType = 'COMPARE';
  private compareIndex = -1;
  private writeIndex = -1;
  private term = -1;
  private leaderId: string | null = null;
  /** First index → pushes without a reply (pendingMap / batchPendingMap). */
  private readonly pendingMap = new Map<number, PendingPush>();
  /** The batch being filled (batch mode), and its bytes. */
  private batch: DLedgerEntry[] = [];
  private batchBytes = 0;
  private inFlightBytes = 0;
  private lastPushCommitMs = -1;
  private lastCheckLeakMs = Date.now();
  private running = false;
  private wakeRequested = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly peerId: string,
    private readonly peerAddr: string,
    private readonly ms: MemberState,
    private readonly store: DLedgerStorePort,
    private readonly rpc: PeerRpcClient,
    private readonly quorum: QuorumTracker,
    private readonly maxPushTimeOutMs: number,
    private readonly enableBatchPush: boolean,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wakeup(), TICK_MS);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Runs the dispatcher soon; a wake-up while it runs makes it run again. */
  wakeup(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.running = true;
    setImmediate(() => void this.run());
  }

  private async run(): Promise<void> {
    try {
      do {
        this.wakeRequested = false;
        await this.doWork();
      } while (this.wakeRequested && !this.stopped);
    } finally {
      this.running = false;
    }
  }

  private async doWork(): Promise<void> {
    if (!this.checkAndFreshState()) return;
    try {
      if (this.type === 'APPEND') this.doAppend();
      else await this.doCompare();
    } catch (err) {
      limited(this.logger).warn(`dledger-push-${this.peerId}`,
        { peer: this.peerId, err: (err as Error).message, writeIndex: this.writeIndex, compareIndex: this.compareIndex },
        'dledger push failed, comparing again');
      this.changeState(-1, 'COMPARE');
      await sleep(ERROR_BACKOFF_MS);
    }
  }

  /** Not leader → idle; a new term or leader → start over with COMPARE. */
  private checkAndFreshState(): boolean {
    if (this.ms.role !== 'LEADER' || this.stopped) return false;
    if (this.term !== this.ms.currTerm || this.leaderId !== this.ms.leaderId) {
      this.term = this.ms.currTerm;
      this.leaderId = this.ms.selfId;
      this.changeState(-1, 'COMPARE');
    }
    return true;
  }

  private changeState(index: number, target: PushType): void {
    switch (target) {
      case 'APPEND':
        this.compareIndex = -1;
        this.quorum.updatePeerWaterMark(this.term, this.peerId, index);
        this.quorum.wakeup();
        this.writeIndex = index + 1;
        this.batch = [];
        this.batchBytes = 0;
        break;
      case 'COMPARE':
        if (this.type === 'APPEND') {
          this.compareIndex = -1;
          this.pendingMap.clear();
        }
        break;
      case 'TRUNCATE':
        this.compareIndex = -1;
        break;
      default:
        break;
    }
    this.type = target;
  }

  private buildPush(entry: DLedgerEntry | null, type: PushType, batchEntry: DLedgerEntry[] = []): PushEntryRequest {
    return {
      ...baseDefaults(),
      group: this.ms.group,
      remoteId: this.peerId,
      leaderId: this.leaderId,
      localId: this.ms.selfId,
      term: this.term,
      commitIndex: this.store.committedIndex,
      type,
      entry,
      batchEntry,
    };
  }

  /** A synchronous step (COMPARE, TRUNCATE): the reply, or a PushError when there is none. */
  private async pushAndWait(req: PushEntryRequest): Promise<PushEntryResponse> {
    const body = await this.rpc.call(this.peerAddr, DLedgerRequestCode.PUSH, encodePushEntryRequest(req));
    if (!body) throw new PushError(`no answer to ${req.type} at ${req.entry?.index}`);
    return decodePushEntryResponse(body);
  }

  // ---- COMPARE / TRUNCATE (doCompare, doTruncate) ----------------------------------------------------------------

  private async doCompare(): Promise<void> {
    for (;;) {
      if (!this.checkAndFreshState()) return;
      if (this.type !== 'COMPARE' && this.type !== 'TRUNCATE') return;
      const begin = this.store.beginIndex;
      const end = this.store.endIndex;
      if (this.compareIndex === -1 && end === -1) return; // an empty leader pushes nothing (pitfall 14)
      if (this.compareIndex === -1 || this.compareIndex > end || this.compareIndex < begin) this.compareIndex = end;
      const entry = this.store.get(this.compareIndex);
      if (!entry) throw new PushError(`no entry at compareIndex ${this.compareIndex}`);
      const term = this.term;
      const res = await this.pushAndWait(this.buildPush(entry, 'COMPARE'));
      if (this.term !== term || !this.checkAndFreshState()) return;
      if (res.code !== DLedgerResponseCode.SUCCESS && res.code !== DLedgerResponseCode.INCONSISTENT_STATE) {
        throw new PushError(`COMPARE at ${this.compareIndex} answered ${dledgerCodeName(res.code)}`);
      }
      const leaderBegin = this.store.beginIndex;
      const leaderEnd = this.store.endIndex;
      let truncateIndex = -1;
      if (res.code === DLedgerResponseCode.SUCCESS) {
        if (this.compareIndex === res.endIndex) {
          this.changeState(this.compareIndex, 'APPEND');
          return;
        }
        truncateIndex = this.compareIndex;
      } else if (res.endIndex < leaderBegin || res.beginIndex > leaderEnd) {
        truncateIndex = leaderBegin; // no overlap: the follower starts over at our first entry
      } else if (this.compareIndex < res.beginIndex) {
        truncateIndex = leaderBegin;
      } else if (this.compareIndex > res.endIndex) {
        this.compareIndex = res.endIndex;
      } else {
        this.compareIndex--;
      }
      if (this.compareIndex < leaderBegin) truncateIndex = leaderBegin;
      if (truncateIndex !== -1) {
        this.changeState(truncateIndex, 'TRUNCATE');
        await this.doTruncate(truncateIndex);
        return;
      }
    }
  }

  private async doTruncate(truncateIndex: number): Promise<void> {
    const entry = this.store.get(truncateIndex);
    if (!entry) throw new PushError(`no entry at truncateIndex ${truncateIndex}`);
    this.logger.info({ peer: this.peerId, truncateIndex, pos: entry.pos }, 'dledger: truncating follower');
    const term = this.term;
    const res = await this.pushAndWait(this.buildPush(entry, 'TRUNCATE'));
    if (this.term !== term || !this.checkAndFreshState()) return;
    if (res.code !== DLedgerResponseCode.SUCCESS) throw new PushError(`TRUNCATE at ${truncateIndex} answered ${dledgerCodeName(res.code)}`);
    this.lastPushCommitMs = Date.now();
    this.changeState(truncateIndex, 'APPEND');
  }

  // ---- APPEND / COMMIT (doAppend, doBatchAppend, doCommit, doCheck(Batch)AppendResponse) ------------------------

  private doAppend(): void {
    for (;;) {
      if (!this.checkAndFreshState() || this.type !== 'APPEND') return;
      if (this.writeIndex > this.store.endIndex) {
        if (this.batch.length > 0) this.sendBatch();
        this.doCommit();
        this.doCheckAppendResponse();
        return;
      }
      if (this.pendingMap.size >= MAX_PENDING_PUSHES || Date.now() - this.lastCheckLeakMs > 1000) {
        const mark = this.quorum.getPeerWaterMark(this.term, this.peerId);
        for (const [first, p] of this.pendingMap) {
          const last = first + p.count - 1;
          if (this.enableBatchPush ? last <= mark : last < mark) this.pendingMap.delete(first);
        }
        this.lastCheckLeakMs = Date.now();
      }
      if (this.pendingMap.size >= MAX_PENDING_PUSHES || this.inFlightBytes >= MAX_IN_FLIGHT_PUSH_BYTES) {
        this.doCheckAppendResponse();
        return;
      }
      const entry = this.entryForAppend(this.writeIndex);
      if (!entry) return;
      if (this.enableBatchPush) {
        this.batch.push(entry);
        this.batchBytes += entry.size;
        if (this.batchBytes >= MAX_BATCH_PUSH_BYTES) this.sendBatch();
      } else {
        this.send([entry]);
      }
      this.writeIndex++;
    }
  }

  /** The entry at `index`, or null when it is gone (below our begin: compare again). */
  private entryForAppend(index: number): DLedgerEntry | null {
    const entry = this.store.get(index);
    if (entry) return entry;
    if (index < this.store.beginIndex) {
      this.changeState(-1, 'COMPARE');
      this.wakeup();
      return null;
    }
    throw new PushError(`no entry at writeIndex ${index}`);
  }

  private sendBatch(): void {
    const entries = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    this.send(entries);
  }

  /** Pushes entries (one, or a batch in batch mode) without waiting for the reply. */
  private send(entries: DLedgerEntry[]): void {
    const req = this.enableBatchPush ? this.buildPush(null, 'APPEND', entries) : this.buildPush(entries[0]!, 'APPEND');
    let bytes = 0;
    for (const e of entries) bytes += e.size;
    this.pendingMap.set(entries[0]!.index, { sentMs: Date.now(), count: entries.length });
    this.inFlightBytes += bytes;
    void this.rpc.call(this.peerAddr, DLedgerRequestCode.PUSH, encodePushEntryRequest(req)).then((body) => {
      this.inFlightBytes -= bytes;
      this.onAppendReply(body);
    });
    this.lastPushCommitMs = Date.now();
  }

  private onAppendReply(body: Buffer | null): void {
    if (!body || this.stopped) return;
    let res: PushEntryResponse;
    try {
      res = decodePushEntryResponse(body);
    } catch (err) {
      this.logger.warn({ peer: this.peerId, err: (err as Error).message }, 'dledger: unreadable push reply');
      return;
    }
    if (res.code === DLedgerResponseCode.SUCCESS) {
      if (res.index === null) return;
      this.pendingMap.delete(res.index);
      // Filed under the term the reply carries (the request's), pitfall 4; a batch acks its last index.
      this.quorum.updatePeerWaterMark(res.term, this.peerId, res.count === 0 ? res.index : res.index + res.count - 1);
      this.quorum.wakeup();
      this.wakeup();
    } else if (res.code === DLedgerResponseCode.INCONSISTENT_STATE) {
      this.logger.info({ peer: this.peerId, index: res.index, term: res.term }, 'dledger: follower inconsistent, comparing');
      this.changeState(-1, 'COMPARE');
      this.wakeup();
    } else {
      this.logger.debug({ peer: this.peerId, code: dledgerCodeName(res.code), index: res.index }, 'dledger: push refused');
    }
  }

  private doCommit(): void {
    if (Date.now() - this.lastPushCommitMs <= COMMIT_KEEPALIVE_MS) return;
    void this.rpc.call(this.peerAddr, DLedgerRequestCode.PUSH, encodePushEntryRequest(this.buildPush(null, 'COMMIT')));
    this.lastPushCommitMs = Date.now();
  }

  /** Re-sends the push after the follower's watermark when it has waited longer than maxPushTimeOutMs. */
  private doCheckAppendResponse(): void {
    const next = this.quorum.getPeerWaterMark(this.term, this.peerId) + 1;
    const p = this.pendingMap.get(next);
    if (p === undefined || Date.now() - p.sentMs <= this.maxPushTimeOutMs) return;
    this.logger.debug({ peer: this.peerId, index: next, count: p.count }, 'dledger: re-pushing');
    const entries: DLedgerEntry[] = [];
    for (let i = next; i < next + p.count; i++) {
      const e = this.entryForAppend(i);
      if (!e) return;
      entries.push(e);
    }
    this.send(entries);
  }

  /** For tests and status: where this dispatcher stands. */
  get state(): { type: PushType; writeIndex: number; pending: number } {
    return { type: this.type, writeIndex: this.writeIndex, pending: this.pendingMap.size };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
