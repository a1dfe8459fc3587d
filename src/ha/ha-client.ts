// The slave's side of the HA link (Java HAClient / 5.3.3 DefaultHAClient): connects to the master's HA port,
// reports the end of its log, appends the frames the master ships, reports again once they are written, heartbeats.
// Follows 5.3.3 where the versions differ: the first report goes out at once, a master silent for
// haHousekeepingInterval is dropped, and after any failure the next attempt waits 5 s.
//
// Stricter than Java (whose slave appends whatever arrives): a frame that does not start at our log's end, that
// crosses our file end or does not continue our records is refused whole (CommitLogPort.appendReplicated), logged,
// and the link is closed — never a corrupted log. The check that an empty slave accepts any first offset is Java's.
import net from 'node:net';
import type { Logger } from 'pino';
import { encodeReport, FrameReader, MAX_FRAME_BODY_BYTES } from './protocol.js';
import type { HaConfig, ReplicatedLog } from './types.js';

/** Java: the slave waits 5 s after a failed connect (both) and after a dropped link (5.3.3 closeMasterAndWait). */
export const RECONNECT_DELAY_MS = 5000;
/** Java RemotingHelper.connect: a blocking connect with a 5 s timeout. */
const CONNECT_TIMEOUT_MS = 5000;
/** Java HA_ADDRESS_MIN_LENGTH: a shorter haMasterAddress counts as unset. */
export const HA_ADDRESS_MIN_LENGTH = 6;

/** The slave's link as GET_BROKER_HA_STATUS shows it (Java HARuntimeInfo.HAClientRuntimeInfo). */
export interface HaClientInfo {
  masterAddr: string | null;
  transferredByteInSecond: number;
  maxOffset: number;
  lastReadTimestamp: number;
  lastWriteTimestamp: number;
  masterFlushOffset: number;
  activated: boolean;
}

export class HaClient {
  private masterAddress: string | null = null;
  private socket: net.Socket | null = null;
  private connected = false;
  private running = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private tick: NodeJS.Timeout | null = null;
  private paused = false;
  private reportedOffset = -1;
  lastReadMs = 0;
  lastWriteMs = 0;
  private bytesThisSecond = 0;
  private bytesLastSecond = 0;
  /** Links made and frames taken, for logs and tests. */
  readonly stats = { connects: 0, frames: 0, refusedFrames: 0 };

  constructor(
    private readonly log: ReplicatedLog,
    private readonly config: HaConfig,
    private readonly logger: Logger,
    private readonly reconnectDelayMs = RECONNECT_DELAY_MS,
  ) {
    log.onWrittenOffset((written) => {
      // The first report of a link is also where the master starts: only once everything appended is written.
      if (this.connected && written > this.reportedOffset && (this.reportedOffset >= 0 || written === this.log.appendOffset)) {
        this.report(written);
      }
      if (this.paused && this.log.canAccept(this.config.haTransferBatchSize)) {
        this.paused = false;
        this.socket?.resume();
      }
    });
  }

  /** Starts linking (at once when the master's address is known). */
  start(): void {
    if (this.running) return;
    this.running = true;
    const configured = this.config.haMasterAddress;
    if (configured.length >= HA_ADDRESS_MIN_LENGTH) this.masterAddress = configured;
    this.tick = setInterval(() => this.onTick(), 1000);
    this.tick.unref();
    this.connectSoon(0);
  }

  /** Whether haMasterAddress pins the address (then register answers do not change it; Java updateMasterHAServerAddrPeriodically). */
  get pinned(): boolean {
    return this.config.haMasterAddress.length >= HA_ADDRESS_MIN_LENGTH;
  }

  /** The master's HA address from a register answer; a live link stays on the old one until it ends (as Java). */
  updateMasterAddress(addr: string | undefined): void {
    if (!addr || this.pinned || addr === this.masterAddress) return;
    this.logger.info({ from: this.masterAddress, to: addr }, 'HA: master address changed');
    this.masterAddress = addr;
    if (this.running && !this.socket && !this.retryTimer) this.connectSoon(0);
  }

  get address(): string | null {
    return this.masterAddress;
  }

  get isConnected(): boolean {
    return this.connected;
  }

  private connectSoon(delayMs: number): void {
    if (!this.running || this.socket || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delayMs);
    this.retryTimer.unref();
  }

  private connect(): void {
    const addr = this.masterAddress;
    if (!this.running || this.socket || !addr) return;
    const i = addr.lastIndexOf(':');
    const host = addr.slice(0, i);
    const port = Number(addr.slice(i + 1));
    if (!host || !(port > 0 && port < 65536)) {
      this.logger.warn({ addr }, 'HA: bad master address');
      return;
    }
    const socket = net.connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    const timer = setTimeout(() => socket.destroy(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    const frames = new FrameReader(MAX_FRAME_BODY_BYTES, (reason) => this.drop(socket, reason, 'warn'));
    socket.once('connect', () => {
      clearTimeout(timer);
      this.connected = true;
      this.stats.connects++;
      this.lastReadMs = Date.now();
      this.reportedOffset = -1;
      this.logger.info({ master: addr, offset: this.log.writtenOffset }, 'HA: linked to the master');
      // Appends still on their way to the file: the first report waits for them (see the written listener).
      if (this.log.appendOffset === this.log.writtenOffset) this.report(this.log.writtenOffset);
    });
    socket.on('data', (chunk: Buffer) => {
      this.lastReadMs = Date.now();
      this.bytesThisSecond += chunk.length;
      frames.push(chunk, {
        onHeader: (offset) => {
          const mine = this.log.appendOffset;
          // Java checks only a non-empty slave (an empty one takes whatever the master starts it at).
          if (mine !== 0 && offset !== mine) {
            this.drop(socket, `the master ships offset ${offset}, this log ends at ${mine}`, 'warn');
            return false;
          }
          return true;
        },
        onFrame: (offset, body) => {
          if (body.length === 0) return true;
          const refused = this.log.appendReplicated(offset, body);
          const bytes = body.reduce((n, b) => n + b.length, 0);
          if (refused) {
            this.stats.refusedFrames++;
            this.drop(socket, `frame at ${offset} (${bytes} bytes) refused: ${refused.refused}`, 'error');
            return false;
          }
          this.stats.frames++;
          if (!this.paused && !this.log.canAccept(this.config.haTransferBatchSize)) {
            // The disk is behind: stop reading until the writer catches up (the master then waits on TCP).
            this.paused = true;
            socket.pause();
          }
          return true;
        },
      });
    });
    socket.on('error', (err) => this.drop(socket, err.message, this.connected ? 'warn' : 'info'));
    socket.on('close', () => {
      clearTimeout(timer);
      this.drop(socket, 'closed by the master', 'info');
    });
  }

  private report(offset: number): void {
    const s = this.socket;
    if (!s || !this.connected) return;
    s.write(encodeReport(offset));
    this.reportedOffset = offset;
    this.lastWriteMs = Date.now();
  }

  private onTick(): void {
    const now = Date.now();
    this.bytesLastSecond = this.bytesThisSecond;
    this.bytesThisSecond = 0;
    const s = this.socket;
    if (!s) {
      this.connectSoon(0);
      return;
    }
    if (!this.connected) return;
    if (now - this.lastReadMs > this.config.haHousekeepingInterval) {
      this.drop(s, `nothing from the master for ${now - this.lastReadMs} ms`, 'warn');
      return;
    }
    // Java repeats its last report; the end of what is written now is at least that.
    if (this.reportedOffset >= 0 && now - this.lastWriteMs > this.config.haSendHeartbeatInterval) {
      this.report(Math.max(this.reportedOffset, this.log.writtenOffset));
    }
  }

  /** Ends the link (once) and tries again after the reconnect delay. */
  private drop(socket: net.Socket, reason: string, level: 'info' | 'warn' | 'error'): void {
    if (this.socket !== socket) return;
    this.socket = null;
    const wasConnected = this.connected;
    this.connected = false;
    this.paused = false;
    socket.destroy();
    if (wasConnected || level !== 'info') this.logger[level]({ master: this.masterAddress, reason }, 'HA: link to the master closed');
    this.connectSoon(this.reconnectDelayMs);
  }

  info(): HaClientInfo {
    return {
      masterAddr: this.masterAddress, transferredByteInSecond: this.bytesLastSecond, maxOffset: this.log.writtenOffset,
      lastReadTimestamp: this.lastReadMs, lastWriteTimestamp: this.lastWriteMs, masterFlushOffset: 0, activated: false,
    };
  }

  stop(): void {
    this.running = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.tick) clearInterval(this.tick);
    this.retryTimer = this.tick = null;
    const s = this.socket;
    if (s) {
      this.socket = null;
      this.connected = false;
      s.destroy();
    }
  }
}
