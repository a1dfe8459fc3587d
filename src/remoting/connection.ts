import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { limited } from '../common/log-limiter.js';
import type { BudgetedConnection, BufferBudget } from './buffer-budget.js';
import { FLAG_ONEWAY, type RemotingCommand, isResponse } from './command.js';
import { FrameDecoder, MAX_FRAME_BYTES } from './frame-decoder.js';
import { encodeFrame } from './header-codec.js';
import type { ClientChannel, RequestContext } from './dispatcher.js';

export interface ConnectionLimits {
  /** Java drops connections idle for 120 s (NettyServerConfig.serverChannelMaxIdleTimeSeconds). */
  idleTimeoutMs: number;
  /** Requests being processed at once before we stop reading from the socket. */
  maxInFlightRequests: number;
  /** Bytes queued for writing before the peer is considered stuck and dropped. */
  maxPendingWriteBytes: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  idleTimeoutMs: 120_000,
  maxInFlightRequests: 4096,
  maxPendingWriteBytes: 256 * 1024 * 1024,
};

interface PendingRequest {
  resolve(cmd: RemotingCommand): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

let nextConnectionId = 1;

/** Why reading from the socket is paused (bits): too many requests in flight; the peer does not read our answers. */
const PAUSED_IN_FLIGHT = 1;
const PAUSED_UNWRITABLE = 2;

/**
 * Room a task let through by whenWritable reserves until it is done: about one pull answer (Java
 * maxTransferBytesOnMessageInMemory), so a burst of pulls read at once does not all pass the check.
 */
const GRANT_RESERVE_BYTES = 256 * 1024;

/** A view into an allocation at least this large counts as pinning all of it while it waits in the socket. */
const PINNING_ALLOCATION_BYTES = 64 * 1024;

/**
 * One TCP peer: frames in, commands out, with backpressure both ways. Used by server and client sides. On a server
 * with a BufferBudget its partial frame and unsent output are counted server-wide; above the high-water mark it
 * is not writable: reading stops (Java 5.x turns autoRead off) and pulls wait for it to drain (whenWritable).
 */
export class Connection implements ClientChannel, BudgetedConnection {
  readonly id = nextConnectionId++;
  readonly remoteAddress: string;
  private readonly decoder: FrameDecoder;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly closeListeners: Array<(conn: Connection) => void> = [];
  private inFlight = 0;
  private paused = 0;
  private closed = false;
  // BudgetedConnection: what the budget last counted for this connection, and since when.
  inboundBytes = 0;
  outboundBytes = 0;
  partialSinceMs = 0;
  stalledSinceMs = 0;
  /** Bytes of the allocations the unsent views keep alive (tail-cache chunks), since the socket was last empty. */
  private pinnedBytes = 0;
  /** Tasks waiting for the connection to take answers (parked pulls), oldest first from `waitingHead`. */
  private waiting: Array<(done: () => void) => void> = [];
  private waitingHead = 0;
  /** Tasks let through whose answers are not handed over yet (each reserves GRANT_RESERVE_BYTES). */
  private granted = 0;
  private pumping = false;
  private readonly afterWriteBound = (): void => this.afterWrite();
  /** The socket is corked and afterWrite is queued for this tick's writes (one per tick, not one per write). */
  private corked = false;
  /** Free-form per-connection state for the layers above (client id, etc.). */
  readonly attributes = new Map<string, unknown>();
  /** Handed to every request of this connection (one object, not one per request). */
  readonly requestContext: RequestContext = { channel: this };

  constructor(
    readonly socket: Socket,
    private readonly onRequest: (conn: Connection, cmd: RemotingCommand) => void,
    private readonly logger: Logger,
    private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    /** The server-wide budget (server connections); none on client links. */
    private readonly budget?: BufferBudget,
    /** Requests cut by socket chunks keep their body as pieces (server connections; see RequestDispatcher). */
    keepBodyParts = false,
  ) {
    this.remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`.replace(/^::ffff:/, '');
    this.decoder = new FrameDecoder(MAX_FRAME_BYTES, budget?.slabs, keepBodyParts);
    socket.setNoDelay(true);
    if (limits.idleTimeoutMs > 0) {
      socket.setTimeout(limits.idleTimeoutMs, () => {
        limited(this.logger).info('idle-close', { peer: this.remoteAddress }, 'closing idle connection');
        this.close();
      });
    }
    const frames: RemotingCommand[] = [];
    socket.on('data', (chunk: Buffer) => {
      frames.length = 0;
      try {
        this.decoder.push(chunk, frames);
      } catch (err) {
        limited(this.logger).warn('malformed-frame', { peer: this.remoteAddress, err: (err as Error).message },
          'malformed frame, closing connection');
        this.close();
        return;
      }
      if (this.budget) {
        const partial = this.decoder.bufferedBytes;
        if (partial !== this.inboundBytes) this.budget.setInbound(this, partial);
        if (this.closed) return; // the budget closed it
      }
      for (const cmd of frames) this.handle(cmd);
    });
    socket.on('drain', () => this.onDrain());
    socket.on('error', (err) => this.logger.debug({ peer: this.remoteAddress, err: err.message }, 'socket error'));
    socket.on('close', () => this.onClosed());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  onClose(listener: (conn: Connection) => void): void {
    this.closeListeners.push(listener);
  }

  private handle(cmd: RemotingCommand): void {
    if (isResponse(cmd)) {
      const p = this.pending.get(cmd.opaque);
      if (p) {
        this.pending.delete(cmd.opaque);
        clearTimeout(p.timer);
        p.resolve(cmd);
      }
      return;
    }
    this.inFlight++;
    if (this.inFlight >= this.limits.maxInFlightRequests) this.pause(PAUSED_IN_FLIGHT);
    this.onRequest(this, cmd);
  }

  private pause(reason: number): void {
    if (this.paused === 0) this.socket.pause();
    this.paused |= reason;
  }

  private unpause(reason: number): void {
    if ((this.paused & reason) === 0) return;
    this.paused &= ~reason;
    if (this.paused === 0 && !this.closed) this.socket.resume();
  }

  /** The layer above calls this once per request it finished (answered or not). */
  requestDone(): void {
    this.inFlight--;
    if (this.inFlight < this.limits.maxInFlightRequests / 2) this.unpause(PAUSED_IN_FLIGHT);
  }

  /**
   * Whether answers can be written without piling up (Netty Channel.isWritable): unsent bytes within the
   * high-water mark, and — while the server's budget is spent — none that still wait for a drain.
   */
  get writable(): boolean {
    if (this.closed) return false;
    if (this.socket.writableLength > this.highWaterMarkBytes && this.socket.writableNeedDrain) return false;
    return !(this.budget?.overBudget && this.socket.writableNeedDrain);
  }

  private get highWaterMarkBytes(): number {
    return this.budget ? this.budget.limits.highWaterMarkBytes : Infinity;
  }

  /** Writable, counting what the tasks let through and not done yet will write. */
  private canGrant(): boolean {
    if (!this.writable) return false;
    return this.granted === 0 || this.socket.writableLength + this.granted * GRANT_RESERVE_BYTES <= this.highWaterMarkBytes;
  }

  /**
   * Runs `task` once the connection can take its answer (at once if it can), or once it closed. The task calls
   * `done` when its answer is handed over (or not needed); until then it reserves room, so a burst of pulls read
   * in one chunk passes a few at a time. The others wait here, as requests, not as buffered answers.
   */
  whenWritable(task: (done: () => void) => void): void {
    if (this.closed) {
      task(noop);
      return;
    }
    this.waiting.push(task);
    this.pump();
  }

  /** Lets waiting tasks through while there is room. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.waitingHead < this.waiting.length && (this.closed || this.canGrant())) {
        const task = this.waiting[this.waitingHead]!;
        this.waiting[this.waitingHead++] = noop;
        if (this.waitingHead === this.waiting.length) {
          this.waiting = [];
          this.waitingHead = 0;
        } else if (this.waitingHead > 1024 && this.waitingHead * 2 > this.waiting.length) {
          this.waiting = this.waiting.slice(this.waitingHead);
          this.waitingHead = 0;
        }
        this.grant(task);
      }
    } finally {
      this.pumping = false;
    }
  }

  private grant(task: (done: () => void) => void): void {
    if (this.closed) {
      task(noop);
      return;
    }
    this.granted++;
    let finished = false;
    // The room is given back after this turn of the loop: the answer is written by then, so the next grant sees it
    // in writableLength.
    const done = (): void => {
      if (finished) return;
      finished = true;
      setImmediate(this.releaseGrantBound);
    };
    try {
      task(done);
    } catch (err) {
      done();
      this.logger.error({ err }, 'writable task failed');
    }
  }

  private readonly releaseGrantBound = (): void => {
    this.granted--;
    this.pump();
  };

  /** Writes a command; returns false if the connection is closed. */
  write(cmd: RemotingCommand): boolean {
    if (this.closed || this.socket.destroyed) {
      cmd.onWritten?.();
      return false;
    }
    const unsent = this.socket.writableLength;
    if (unsent > this.limits.maxPendingWriteBytes) {
      limited(this.logger).warn('not-reading', { peer: this.remoteAddress, bytes: unsent }, 'peer does not read, closing');
      this.close();
      cmd.onWritten?.();
      return false;
    }
    let parts = encodeFrame(cmd);
    if (this.budget) {
      if (unsent > 0 && cmd.bodyParts && cmd.bodyParts.length > 0) {
        // Behind a backlog the answer waits in memory: one exact copy rather than views that keep whole
        // tail-cache chunks alive for as long as the peer does not read (parts[0] is the length fields and header).
        parts = [parts[0]!, Buffer.concat(parts.slice(1))];
      } else {
        this.pinnedBytes += pinnedBytesOf(parts);
      }
    }
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(this.afterWriteBound);
    }
    const last = parts.length - 1;
    for (let i = 0; i < last; i++) this.socket.write(parts[i]!);
    // The callback runs once the frame is with the kernel, or with an error when the socket is destroyed first.
    if (cmd.onWritten) this.socket.write(parts[last]!, cmd.onWritten);
    else this.socket.write(parts[last]!);
    return true;
  }

  /** After the tick's writes went to the kernel: count what it did not take, stop reading past the high-water mark. */
  private afterWrite(): void {
    this.corked = false;
    this.socket.uncork();
    if (!this.budget || this.closed) return;
    const unsent = this.measureOutbound();
    if (unsent !== this.outboundBytes) this.budget.setOutbound(this, unsent);
    if (this.socket.writableLength > this.highWaterMarkBytes && this.socket.writableNeedDrain) this.pause(PAUSED_UNWRITABLE);
  }

  /** Unsent bytes, counting the allocations their views keep alive; 0 once the kernel took everything. */
  measureOutbound(): number {
    const unsent = this.socket.writableLength;
    if (unsent === 0) {
      this.pinnedBytes = 0;
      return 0;
    }
    return Math.max(unsent, this.pinnedBytes);
  }

  private onDrain(): void {
    this.pinnedBytes = 0;
    if (this.budget && this.outboundBytes !== 0) this.budget.setOutbound(this, 0);
    this.unpause(PAUSED_UNWRITABLE);
    this.pump();
  }

  /** Sends a request and waits for its response (server-initiated requests, broker→namesrv). */
  request(cmd: RemotingCommand, timeoutMs: number): Promise<RemotingCommand> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error(`connection to ${this.remoteAddress} is closed`));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(cmd.opaque);
        reject(new Error(`request code ${cmd.code} to ${this.remoteAddress} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(cmd.opaque, { resolve, reject, timer });
      if (!this.write(cmd)) {
        clearTimeout(timer);
        this.pending.delete(cmd.opaque);
        reject(new Error(`connection to ${this.remoteAddress} is closed`));
      }
    });
  }

  sendOneway(cmd: RemotingCommand): boolean {
    cmd.flag |= FLAG_ONEWAY;
    return this.write(cmd);
  }

  close(): void {
    if (this.closed) return;
    this.socket.destroy();
    this.onClosed();
  }

  private onClosed(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.budget) {
      this.decoder.release();
      this.budget.release(this);
    }
    this.pump();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(`connection to ${this.remoteAddress} closed`));
    }
    this.pending.clear();
    for (const l of this.closeListeners) {
      try {
        l(this);
      } catch (err) {
        this.logger.error({ err }, 'close listener failed');
      }
    }
  }
}

function noop(): void {}

/**
 * Bytes the parts keep alive while they wait unsent: a view into a large allocation (a tail-cache chunk, a read
 * buffer) pins all of it; consecutive views into one allocation count it once.
 */
function pinnedBytesOf(parts: readonly Buffer[]): number {
  let total = 0;
  let last: ArrayBufferLike | null = null;
  for (const p of parts) {
    const ab = p.buffer;
    if (ab === last) continue;
    last = ab;
    total += ab.byteLength >= PINNING_ALLOCATION_BYTES && ab.byteLength > p.byteLength ? ab.byteLength : p.byteLength;
  }
  return total;
}
