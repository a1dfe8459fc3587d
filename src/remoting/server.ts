import net from 'node:net';
import type { Logger } from 'pino';
import { type RemotingCommand, isOneway } from './command.js';
import { BufferBudget, type BufferLimits, DEFAULT_BUFFER_LIMITS } from './buffer-budget.js';
import { Connection, type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from './connection.js';
import type { RequestDispatcher } from './dispatcher.js';
import type { TlsAcceptor } from './tls.js';

/** The TCP transport: accepts connections, hands their requests to a RequestDispatcher, writes the answers. */
export class RemotingServer {
  private readonly connections = new Set<Connection>();
  private readonly connectionListeners: Array<(c: Connection) => void> = [];
  private server: net.Server | undefined;
  private readonly extraServers: net.Server[] = [];
  private tls: TlsAcceptor | undefined;
  /** Partial frames and unsent answers of every connection on every port of this server, together. */
  readonly budget: BufferBudget;

  constructor(
    private readonly logger: Logger,
    readonly dispatcher: RequestDispatcher,
    private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    bufferLimits: BufferLimits = DEFAULT_BUFFER_LIMITS,
  ) {
    this.budget = new BufferBudget(bufferLimits, logger);
  }

  /** TLS on every port this server listens on (tls.server.mode permissive / enforcing); before listen(). */
  useTls(acceptor: TlsAcceptor): void {
    this.tls = acceptor;
  }

  onConnection(listener: (c: Connection) => void): void {
    this.connectionListeners.push(listener);
  }

  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    const server = net.createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.logger.error({ err }, 'server socket error'));
    return (server.address() as net.AddressInfo).port;
  }

  /**
   * Serves the same processors on one more port (the broker's VIP channel at listenPort − 2, which Java clients
   * up to 4.4 use by default). Resolves false when the port cannot be bound.
   */
  async listenAlso(port: number, host = '0.0.0.0'): Promise<boolean> {
    const extra = net.createServer((socket) => this.accept(socket));
    const ok = await new Promise<boolean>((resolve) => {
      extra.once('error', () => resolve(false));
      extra.listen(port, host, () => resolve(true));
    });
    if (ok) {
      extra.on('error', (err) => this.logger.error({ err }, 'server socket error'));
      this.extraServers.push(extra);
    }
    return ok;
  }

  get port(): number {
    return (this.server?.address() as net.AddressInfo | null)?.port ?? 0;
  }

  private accept(socket: net.Socket): void {
    if (this.tls) this.tls.accept(socket, (s) => this.serve(s));
    else this.serve(socket);
  }

  private serve(socket: net.Socket): void {
    const conn = new Connection(socket, (c, cmd) => this.dispatch(c, cmd), this.logger, this.limits, this.budget, true);
    this.connections.add(conn);
    conn.onClose((c) => this.connections.delete(c));
    for (const l of this.connectionListeners) l(conn);
  }

  private dispatch(conn: Connection, req: RemotingCommand): void {
    const result = this.dispatcher.dispatch(req, conn.requestContext);
    if (result instanceof Promise) result.then((res) => this.reply(conn, req, res));
    else this.reply(conn, req, result);
  }

  private reply(conn: Connection, req: RemotingCommand, res: RemotingCommand | null): void {
    conn.requestDone();
    if (res === null) return;
    if (isOneway(req)) {
      res.onWritten?.(); // dropped: its buffers are free
      return;
    }
    res.opaque = req.opaque;
    conn.write(res);
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const c of this.connections) c.close();
    this.budget.stop();
    const all = [...(server ? [server] : []), ...this.extraServers.splice(0)];
    await Promise.all(all.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
