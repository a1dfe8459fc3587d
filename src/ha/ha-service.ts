// The HA port's listening side (Java HAService.AcceptSocketService / 5.3.3 DefaultHAService): every classic broker
// listens, slaves included (Java does too); one HaConnection per slave link. Keeps the acks the SYNC_MASTER waits
// (replica-wait.ts) are settled by, and the runtime view GET_BROKER_HA_STATUS (907) reports.
import net from 'node:net';
import type { Logger } from 'pino';
import { type ConnectionOwner, HaConnection } from './ha-connection.js';
import { type AckView, ReplicaWaits } from './replica-wait.js';
import type { HaConfig, ReplicatedLog } from './types.js';

/** One slave link as GET_BROKER_HA_STATUS shows it (Java HARuntimeInfo.HAConnectionRuntimeInfo). */
export interface HaConnectionInfo {
  addr: string;
  slaveAckOffset: number;
  diff: number;
  inSync: boolean;
  transferredByteInSecond: number;
  transferFromWhere: number;
}

export class HaService implements AckView, ConnectionOwner {
  readonly connections = new Set<HaConnection>();
  /** Highest validated ack of any slave (4.9.8 push2SlaveMaxOffset; never lowered). */
  maxAckOffset = 0;
  readonly waits: ReplicaWaits;
  private server: net.Server | null = null;
  private housekeeping: NodeJS.Timeout | null = null;
  private boundPort = 0;
  private lagLogTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly log: ReplicatedLog,
    readonly config: HaConfig,
    readonly logger: Logger,
  ) {
    this.waits = new ReplicaWaits(config, this);
    log.onWrittenOffset(() => {
      for (const c of this.connections) c.wakeUp();
    });
  }

  /** Binds the HA port on every interface (Java binds the wildcard address); 0 picks a free one. */
  async listen(port: number): Promise<number> {
    const server = net.createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.logger.error({ err }, 'HA: listening socket error'));
    this.server = server;
    this.boundPort = (server.address() as net.AddressInfo).port;
    this.housekeeping = setInterval(() => {
      const now = Date.now();
      for (const c of this.connections) c.housekeep(now);
    }, 1000);
    this.housekeeping.unref();
    // Java BrokerController.printMasterAndSlaveDiff: the lag, once a minute, while a slave is linked.
    this.lagLogTimer = setInterval(() => {
      if (this.connections.size > 0) {
        this.logger.info({ lagBytes: this.log.writtenOffset - this.maxAckOffset, slaves: this.connections.size }, 'HA: slave fall behind master');
      }
    }, 60_000);
    this.lagLogTimer.unref();
    this.logger.info({ port: this.boundPort }, 'HA: listening');
    return this.boundPort;
  }

  get port(): number {
    return this.boundPort;
  }

  private accept(socket: net.Socket): void {
    const host = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    if (this.config.haOneConnectionPerSlaveHost) {
      for (const c of this.connections) {
        if (c.remoteHost === host) {
          // The HA port carries no slave id: a second link from one host is a second slave with the same identity
          // or a stale link of a reconnected one; either way it must not count twice. The live one stays.
          this.logger.warn({ slave: `${host}:${socket.remotePort}`, existing: c.remoteAddress },
            'HA: refusing a second link from a host that already has one (haOneConnectionPerSlaveHost)');
          socket.destroy();
          return;
        }
      }
    }
    const conn = new HaConnection(socket, this);
    this.connections.add(conn);
    this.logger.info({ slave: conn.remoteAddress, links: this.connections.size }, 'HA: slave linked');
  }

  // ---- ConnectionOwner

  onAck(_conn: HaConnection, offset: number): void {
    if (offset > this.maxAckOffset) this.maxAckOffset = offset;
    this.waits.onAcksChanged();
  }

  onClosed(conn: HaConnection): void {
    this.connections.delete(conn);
  }

  // ---- AckView

  get linkCount(): number {
    return this.connections.size;
  }

  linksAckedAtLeast(offset: number): number {
    let n = 0;
    for (const c of this.connections) if (c.ackOffset >= offset) n++;
    return n;
  }

  // ----

  /** Turns the replica stage on (SYNC_MASTER) or off. */
  setSyncMaster(on: boolean): void {
    this.log.setReplicaWait(on ? this.waits.wait : null);
  }

  /** Java DefaultHAService.getRuntimeInfo, master part. */
  connectionInfo(): { masterCommitLogMaxOffset: number; inSyncSlaveNums: number; haConnectionInfo: HaConnectionInfo[] } {
    const max = this.log.writtenOffset;
    let inSync = 0;
    const haConnectionInfo: HaConnectionInfo[] = [];
    for (const c of this.connections) {
      const ack = Math.max(0, c.ackOffset);
      const isInSync = max - ack < this.config.haMaxGapNotInSync;
      if (isInSync) inSync++;
      haConnectionInfo.push({
        addr: c.remoteAddress, slaveAckOffset: ack, diff: max - ack, inSync: isInSync,
        transferredByteInSecond: c.bytesLastSecond, transferFromWhere: Math.max(0, c.nextTransferOffset),
      });
    }
    return { masterCommitLogMaxOffset: max, inSyncSlaveNums: inSync, haConnectionInfo };
  }

  /** Closes every slave link (a role change to SLAVE keeps listening, as Java does). */
  closeLinks(reason: string): void {
    for (const c of [...this.connections]) c.close(reason, 'info');
  }

  async close(): Promise<void> {
    if (this.housekeeping) clearInterval(this.housekeeping);
    if (this.lagLogTimer) clearInterval(this.lagLogTimer);
    this.housekeeping = this.lagLogTimer = null;
    this.setSyncMaster(false);
    this.waits.close();
    this.closeLinks('the broker is shutting down');
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
