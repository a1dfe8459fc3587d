import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { RemotingCommand } from './command.js';
import { Connection, DEFAULT_CONNECTION_LIMITS } from './connection.js';

/** Outgoing connections (broker → nameserver), one per address, reconnected on demand. */
export class RemotingClient {
  private readonly connections = new Map<string, Promise<Connection>>();
  private closed = false;

  constructor(
    private readonly logger: Logger,
    private readonly connectTimeoutMs = 3000,
    /** TLS for every connection (Java TlsSystemConfig.tlsEnable on the client side, e.g. BrokerOuterAPI). */
    private readonly tlsOptions?: tls.ConnectionOptions,
  ) {}

  async request(addr: string, cmd: RemotingCommand, timeoutMs: number): Promise<RemotingCommand> {
    const conn = await this.connect(addr);
    return conn.request(cmd, timeoutMs);
  }

  async oneway(addr: string, cmd: RemotingCommand): Promise<void> {
    const conn = await this.connect(addr);
    conn.sendOneway(cmd);
  }

  private connect(addr: string): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('client closed'));
    const existing = this.connections.get(addr);
    if (existing) return existing;
    const idx = addr.lastIndexOf(':');
    const host = addr.slice(0, idx);
    const port = Number(addr.slice(idx + 1));
    const p = new Promise<Connection>((resolve, reject) => {
      const socket = this.tlsOptions ? tls.connect({ ...this.tlsOptions, host, port }) : net.connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect to ${addr} timed out`));
      }, this.connectTimeoutMs);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once(this.tlsOptions ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        const conn = new Connection(
          socket,
          (c) => c.requestDone(), // servers do not send us requests on these links
          this.logger,
          { ...DEFAULT_CONNECTION_LIMITS, idleTimeoutMs: 0 },
        );
        conn.onClose(() => {
          if (this.connections.get(addr) === p) this.connections.delete(addr);
        });
        resolve(conn);
      });
    });
    this.connections.set(addr, p);
    p.catch(() => {
      if (this.connections.get(addr) === p) this.connections.delete(addr);
    });
    return p;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.connections.values()) {
      p.then((c) => c.close(), () => undefined);
    }
    this.connections.clear();
  }
}
