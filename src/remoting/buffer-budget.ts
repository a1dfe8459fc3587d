// The server-wide memory budget for what peers make the server hold: bytes of partial inbound frames and bytes
// written but not yet taken by the kernel (a peer that does not read). The official broker bounds neither in
// total: Netty's write-buffer water marks (NettyServerConfig writeBufferHighWaterMark / LowWaterMark, 5.x) only
// turn a channel unwritable — 5.x then stops reading it (NettyServerHandler.channelWritabilityChanged) and, with
// enableNetWorkFlowControl, drops pulls on it — and serverSocketSndBufSize / RcvBufSize size the kernel's buffers.
// Here: a connection above writeBufferHighWaterMark is not writable (pulls wait, reading stops until it drains);
// past remotingBufferBudgetBytes in total the connection stalled longest is closed, be it one holding a partial
// frame or one not reading; and a frame once started must be whole within frameReadTimeoutMillis.
import type { Logger } from 'pino';
import { limited } from '../common/log-limiter.js';
import { SlabPool } from './frame-decoder.js';

/** Read each time they are used (the broker hands in getters over its live config). */
export interface BufferLimits {
  /** Partial inbound frames plus unsent outbound bytes, all connections together (ours). */
  readonly budgetBytes: number;
  /** A connection with more unsent bytes than this is not writable (Java/Netty writeBufferHighWaterMark). */
  readonly highWaterMarkBytes: number;
  /** A frame must arrive whole within this long of its first byte (ours; Java has only the 120 s idle timeout). */
  readonly frameReadTimeoutMs: number;
}

export const DEFAULT_BUFFER_LIMITS: BufferLimits = {
  budgetBytes: 256 * 1024 * 1024,
  highWaterMarkBytes: 1024 * 1024,
  frameReadTimeoutMs: 60_000,
};

/** What the budget needs of a connection. */
export interface BudgetedConnection {
  readonly remoteAddress: string;
  /** Bytes of its partial frame / unsent output as last accounted. */
  inboundBytes: number;
  outboundBytes: number;
  /** When its partial frame started / its output stopped draining (ms, Date.now). */
  partialSinceMs: number;
  stalledSinceMs: number;
  /** Its unsent bytes now (the accounted value can be stale: a socket drains without telling until it is empty). */
  measureOutbound(): number;
  close(): void;
}

const SWEEP_INTERVAL_MS = 1000;

export class BufferBudget {
  /** Totals over all connections. */
  inboundBytes = 0;
  outboundBytes = 0;
  /** Connections closed by the budget or the frame deadline (for tests and stats). */
  closedOverBudget = 0;
  closedFrameTimeout = 0;
  /** Connections holding a partial frame / unsent output, oldest first (insertion order). */
  private readonly partial = new Set<BudgetedConnection>();
  private readonly stalled = new Set<BudgetedConnection>();
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Pieces for large partial frames: a dropped frame's come back at once instead of waiting for the GC. */
  readonly slabs = new SlabPool();

  constructor(
    readonly limits: BufferLimits,
    private readonly logger: Logger,
  ) {}

  get totalBytes(): number {
    return this.inboundBytes + this.outboundBytes;
  }

  /** Whether the budget is spent: then only connections with nothing unsent are writable. */
  get overBudget(): boolean {
    return this.inboundBytes + this.outboundBytes > this.limits.budgetBytes;
  }

  /** A connection's partial frame is now `bytes` long (0: none). */
  setInbound(conn: BudgetedConnection, bytes: number): void {
    this.inboundBytes += bytes - conn.inboundBytes;
    if (bytes > 0 && conn.inboundBytes === 0) {
      conn.partialSinceMs = Date.now();
      this.partial.add(conn);
      this.ensureSweep();
    } else if (bytes === 0 && conn.inboundBytes > 0) {
      this.partial.delete(conn);
    }
    conn.inboundBytes = bytes;
    if (bytes > 0 && this.overBudget) this.enforce();
  }

  /** A connection now holds `bytes` unsent (0: drained). */
  setOutbound(conn: BudgetedConnection, bytes: number): void {
    this.outboundBytes += bytes - conn.outboundBytes;
    if (bytes > 0 && conn.outboundBytes === 0) {
      conn.stalledSinceMs = Date.now();
      this.stalled.add(conn);
      this.ensureSweep();
    } else if (bytes === 0 && conn.outboundBytes > 0) {
      this.stalled.delete(conn);
    }
    conn.outboundBytes = bytes;
    if (bytes > 0 && this.overBudget) this.enforce();
  }

  /** setOutbound without enforcing (the sweep enforces once, after measuring every connection). */
  private setOutboundQuiet(conn: BudgetedConnection, bytes: number): void {
    this.outboundBytes += bytes - conn.outboundBytes;
    if (bytes === 0) this.stalled.delete(conn);
    conn.outboundBytes = bytes;
  }

  /** A connection closed: its bytes leave the totals. */
  release(conn: BudgetedConnection): void {
    this.setInbound(conn, 0);
    this.setOutbound(conn, 0);
  }

  /** Closes the connection stalled longest (partial frame or unsent output) until the totals fit the budget. */
  enforce(): void {
    while (this.overBudget) {
      const p = first(this.partial);
      const s = first(this.stalled);
      const victim = !s || (p && p.partialSinceMs <= s.stalledSinceMs) ? p : s;
      if (!victim) return;
      this.closedOverBudget++;
      limited(this.logger).warn('buffer-budget', {
        peer: victim.remoteAddress, partialFrameBytes: victim.inboundBytes, unsentBytes: victim.outboundBytes,
        totalBytes: this.totalBytes, budgetBytes: this.limits.budgetBytes,
      }, 'remoting buffer budget spent: closing the connection stalled longest');
      this.release(victim);
      victim.close();
    }
  }

  private ensureSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** Frame deadlines, and the budget again after re-measuring what the stalled connections hold. */
  sweep(now = Date.now()): void {
    for (const conn of this.stalled) this.setOutboundQuiet(conn, conn.measureOutbound());
    for (const conn of this.partial) {
      if (now - conn.partialSinceMs < this.limits.frameReadTimeoutMs) break; // oldest first: the rest are younger
      this.closedFrameTimeout++;
      limited(this.logger).warn('frame-read-timeout', {
        peer: conn.remoteAddress, partialFrameBytes: conn.inboundBytes, timeoutMs: this.limits.frameReadTimeoutMs,
      }, 'frame not complete within frameReadTimeoutMillis, closing connection');
      this.release(conn);
      conn.close();
    }
    if (this.overBudget) this.enforce();
    if (this.partial.size === 0 && this.stalled.size === 0 && this.sweepTimer) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }

  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }
}

function first<T>(set: Set<T>): T | undefined {
  for (const v of set) return v;
  return undefined;
}
