import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { FLAG_ONEWAY, type RemotingCommand, isResponse } from './command.js';
import { FrameDecoder } from './frame-decoder.js';
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

/** One TCP peer: frames in, commands out, with backpressure both ways. Used by server and client sides. */
export class Connection implements ClientChannel {
  readonly id = nextConnectionId++;
  readonly remoteAddress: string;
  private readonly decoder = new FrameDecoder();
  private readonly pending = new Map<number, PendingRequest>();
  private readonly closeListeners: Array<(conn: Connection) => void> = [];
  private inFlight = 0;
  private paused = false;
  private closed = false;
  /** Free-form per-connection state for the layers above (client id, etc.). */
  readonly attributes = new Map<string, unknown>();
  /** Handed to every request of this connection (one object, not one per request). */
  readonly requestContext: RequestContext = { channel: this };

  constructor(
    readonly socket: Socket,
    private readonly onRequest: (conn: Connection, cmd: RemotingCommand) => void,
    private readonly logger: Logger,
    private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  ) {
    this.remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`.replace(/^::ffff:/, '');
    socket.setNoDelay(true);
    if (limits.idleTimeoutMs > 0) {
      socket.setTimeout(limits.idleTimeoutMs, () => {
        this.logger.info({ peer: this.remoteAddress }, 'closing idle connection');
        this.close();
      });
    }
    const frames: RemotingCommand[] = [];
    socket.on('data', (chunk: Buffer) => {
      frames.length = 0;
      try {
        this.decoder.push(chunk, frames);
      } catch (err) {
        this.logger.warn({ peer: this.remoteAddress, err: (err as Error).message }, 'malformed frame, closing connection');
        this.close();
        return;
      }
      for (const cmd of frames) this.handle(cmd);
    });
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
    if (this.inFlight >= this.limits.maxInFlightRequests && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    this.onRequest(this, cmd);
  }

  /** The layer above calls this once per request it finished (answered or not). */
  requestDone(): void {
    this.inFlight--;
    if (this.paused && this.inFlight < this.limits.maxInFlightRequests / 2) {
      this.paused = false;
      this.socket.resume();
    }
  }

  /** Writes a command; returns false if the connection is closed. */
  write(cmd: RemotingCommand): boolean {
    if (this.closed || this.socket.destroyed) return false;
    if (this.socket.writableLength > this.limits.maxPendingWriteBytes) {
      this.logger.warn({ peer: this.remoteAddress, bytes: this.socket.writableLength }, 'peer does not read, closing');
      this.close();
      return false;
    }
    const parts = encodeFrame(cmd);
    this.socket.cork();
    for (const p of parts) this.socket.write(p);
    process.nextTick(uncork, this.socket);
    return true;
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

function uncork(socket: Socket): void {
  socket.uncork();
}
