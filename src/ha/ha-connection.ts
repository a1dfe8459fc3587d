// The master's side of one slave's HA link (Java HAConnection / 5.3.3 DefaultHAConnection: ReadSocketService +
// WriteSocketService). Reads the slave's offset reports, decides once where to start, then ships the commit log in
// frames of at most haTransferBatchSize bytes, never across a file, as soon as bytes are written (Java polls every
// 100 ms), with a heartbeat frame after haSendHeartbeatInterval of silence.
//
// Ours is stricter than Java on what a slave reports (Java trusts every value): a negative or out-of-range offset,
// a first report beyond our log's end or below its start, an ack that goes backwards or past what we sent all close
// the link with a log line, and never count as acks (brief §1.9). An official slave never sends any of these unless
// its log is not a copy of ours.
import type net from 'node:net';
import type { Logger } from 'pino';
import { encodeFrameHeader, FRAME_HEADER_BYTES, ReportReader } from './protocol.js';
import type { HaConfig, ReplicatedLog } from './types.js';

export interface ConnectionOwner {
  readonly log: ReplicatedLog;
  readonly config: HaConfig;
  readonly logger: Logger;
  /** A validated ack (the slave holds everything below `offset`). */
  onAck(conn: HaConnection, offset: number): void;
  onClosed(conn: HaConnection): void;
}

/** Bytes read from the log at once for a slave, shipped as frames of haTransferBatchSize. */
const READ_AHEAD_BYTES = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/** Where an empty slave starts: the start of the master's last file (Java WriteSocketService.run). */
export function startForEmptySlave(maxOffset: number, fileSize: number): number {
  return Math.max(0, maxOffset - (maxOffset % fileSize));
}

export class HaConnection {
  /** `ip:port` of the slave's socket. */
  readonly remoteAddress: string;
  readonly remoteHost: string;
  /** The first report (where the slave asked to start); -1 until it arrived. */
  requestOffset = -1;
  /** The latest validated report (Java slaveAckOffset); -1 until the first. */
  ackOffset = -1;
  /** The next offset to ship (Java nextTransferFromWhere); -1 until the first report. */
  nextTransferOffset = -1;
  lastReadMs = Date.now();
  lastWriteMs = Date.now();
  /** Bytes shipped in the last whole second and the running one (haStatus transferredByteInSecond). */
  private bytesThisSecond = 0;
  bytesLastSecond = 0;
  private secondStartMs = Date.now();
  closed = false;
  private readonly reports = new ReportReader();
  /** Wakes the sender when bytes were written, a report arrived or the link closed. */
  private wake: (() => void) | null = null;

  constructor(
    private readonly socket: net.Socket,
    private readonly owner: ConnectionOwner,
  ) {
    this.remoteHost = (socket.remoteAddress ?? '?').replace(/^::ffff:/, '');
    this.remoteAddress = `${this.remoteHost}:${socket.remotePort ?? 0}`;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.lastReadMs = Date.now();
      this.reports.push(chunk, this.onReport);
    });
    socket.on('error', (err) => this.close(`socket error: ${err.message}`, 'info'));
    socket.on('close', () => this.close('the slave closed the link', 'info'));
    void this.transferLoop();
  }

  private readonly onReport = (offset: number): boolean => {
    const { log, logger } = this.owner;
    if (!(offset >= 0)) {
      this.close(`bad offset report ${Number.isNaN(offset) ? '(out of range)' : offset}`, 'warn');
      return false;
    }
    if (this.requestOffset < 0) {
      const max = log.writtenOffset;
      if (offset > max) {
        this.close(`the slave's log ends at ${offset}, beyond this master's end ${max}: it is not a copy of this log`, 'warn');
        return false;
      }
      if (offset > 0 && offset < log.minOffset) {
        this.close(`the slave's log ends at ${offset}, before this master's oldest byte ${log.minOffset} (retention): wipe the slave's store`, 'warn');
        return false;
      }
      this.requestOffset = offset;
      this.nextTransferOffset = offset === 0 ? startForEmptySlave(max, this.owner.config.mappedFileSizeCommitLog) : offset;
      logger.info({ slave: this.remoteAddress, reported: offset, startAt: this.nextTransferOffset }, 'HA: slave asked for the log');
    } else {
      if (offset < this.ackOffset) {
        this.close(`the slave's ack went back from ${this.ackOffset} to ${offset}`, 'warn');
        return false;
      }
      if (offset > this.nextTransferOffset) {
        this.close(`the slave acks ${offset}, but only bytes up to ${this.nextTransferOffset} were sent`, 'warn');
        return false;
      }
    }
    // A first report of 0 (an empty slave) is an ack of nothing; the slave's log then starts where we start it.
    const grew = offset > this.ackOffset;
    this.ackOffset = offset;
    if (grew) this.owner.onAck(this, offset);
    this.wakeUp();
    return true;
  };

  /** New bytes were written (or something else the sender waits for happened). */
  wakeUp(): void {
    const w = this.wake;
    if (w) {
      this.wake = null;
      w();
    }
  }

  private waitForWake(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, timeoutMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async transferLoop(): Promise<void> {
    const { log, config } = this.owner;
    try {
      while (!this.closed) {
        const heartbeatIn = config.haSendHeartbeatInterval - (Date.now() - this.lastWriteMs);
        if (this.nextTransferOffset < 0) {
          // Nothing is sent before the first report (Java sleeps 10 ms in a loop).
          await this.waitForWake(1000);
          continue;
        }
        if (this.nextTransferOffset >= log.writtenOffset) {
          if (heartbeatIn <= 0) {
            await this.sendFrames(this.nextTransferOffset, EMPTY, 1); // a heartbeat
            continue;
          }
          await this.waitForWake(heartbeatIn);
          continue;
        }
        // Read ahead, ship frames of at most haTransferBatchSize: one read per 32 KiB frame (a thread-pool round trip
        // for a slave catching up on older bytes) was the limit of a catch-up.
        const batch = config.haTransferBatchSize;
        const body = await log.readForReplica(this.nextTransferOffset, Math.max(batch, READ_AHEAD_BYTES));
        if (this.closed) return;
        if (body === null) {
          this.close(`offset ${this.nextTransferOffset} is no longer in this log (retention deleted it before the slave got it)`, 'warn');
          return;
        }
        if (body.length === 0) continue;
        const from = this.nextTransferOffset;
        this.nextTransferOffset += body.length;
        await this.sendFrames(from, body, batch);
      }
    } catch (err) {
      this.close(`transfer failed: ${(err as Error).message}`, 'warn');
    }
  }

  /**
   * Writes `body` (the log from offset `from`) as whole frames of at most `frameBytes` each (header then bytes; an
   * empty body is one heartbeat frame); waits for the socket to drain when its buffer is full.
   */
  private sendFrames(from: number, body: Buffer, frameBytes: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.socket.cork();
    let ok = true;
    let at = 0;
    do {
      const n = Math.min(frameBytes, body.length - at);
      ok = this.socket.write(encodeFrameHeader(from + at, n)) && ok;
      if (n > 0) ok = this.socket.write(body.subarray(at, at + n)) && ok;
      at += n;
    } while (at < body.length);
    this.socket.uncork();
    const now = Date.now();
    this.lastWriteMs = now;
    this.countBytes(now, body.length + FRAME_HEADER_BYTES * Math.max(1, Math.ceil(body.length / frameBytes)));
    if (ok && this.socket.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  private countBytes(now: number, n: number): void {
    if (now - this.secondStartMs >= 1000) {
      this.bytesLastSecond = now - this.secondStartMs < 2000 ? this.bytesThisSecond : 0;
      this.bytesThisSecond = 0;
      this.secondStartMs = now;
    }
    this.bytesThisSecond += n;
  }

  /** Called every second by the service: closes a link silent for longer than haHousekeepingInterval. */
  housekeep(now: number): void {
    if (this.closed) return;
    if (now - this.lastReadMs > this.owner.config.haHousekeepingInterval) {
      this.close(`no report from the slave for ${now - this.lastReadMs} ms`, 'warn');
    }
    if (now - this.secondStartMs >= 2000) this.countBytes(now, 0);
  }

  close(reason: string, level: 'info' | 'warn'): void {
    if (this.closed) return;
    this.closed = true;
    this.owner.logger[level]({ slave: this.remoteAddress, ackOffset: this.ackOffset, reason }, 'HA: slave link closed');
    this.socket.destroy();
    this.wakeUp();
    this.owner.onClosed(this);
  }
}
