// The apache.rocketmq.v2.MessagingService endpoint inside the broker process (what the official rocketmq-proxy
// serves on 8081). One TCP port carries TLS and plaintext HTTP/2, told apart by the first byte as the proxy's
// ProxyAndTlsProtocolNegotiator does (a TLS handshake record starts 0x16; h2c starts with the "PRI" preface).
// The port is bound at start; the grpc-js server behind it (messaging-server.ts: @grpc/grpc-js, protobufjs, the
// .proto parse, ~150 ms of CPU) is loaded once start-up is done (warmUp) or by the first connection, whichever is first.
import net from 'node:net';
import tls from 'node:tls';
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { BrokerContext } from '../broker/context.js';
import type { RequestDispatcher } from '../remoting/dispatcher.js';
import type { PopService } from '../broker/pop/pop-service.js';
import { GrpcClients } from './clients.js';
import type { MessagingServer } from './messaging-server.js';
import type { GrpcServices } from './services.js';
import { type ServerKeyPair, loadServerKeyPair } from './tls.js';

const TLS_HANDSHAKE = 0x16;
/** A connection that sends nothing for this long before its first byte is dropped (Netty's handshake timeout). */
const FIRST_BYTE_TIMEOUT_MS = 10_000;

export interface GrpcEndpointDeps {
  ctx: BrokerContext;
  dispatcher: RequestDispatcher;
  pop: PopService;
  logger: Logger;
}

/** The port to bind: grpcServerPort, except that the default follows listenPort=0 (several servers on one host). */
export function grpcPortToBind(c: BrokerConfig): number {
  if (c.listenPort === 0 && c.grpcServerPort === 8081) return 0;
  return c.grpcServerPort;
}

export class GrpcEndpoint {
  private readonly tcp: net.Server;
  private readonly clients: GrpcClients;
  private readonly services: GrpcServices;
  private readonly keyPair: ServerKeyPair | undefined;
  private server: MessagingServer | undefined;
  private loading: Promise<MessagingServer> | undefined;
  private closed = false;
  private boundPort = -1;
  private readonly sockets = new Set<net.Socket>();
  readonly certPath: string | undefined;

  constructor(private readonly deps: GrpcEndpointDeps) {
    const { ctx } = deps;
    const config = ctx.config;
    const log = deps.logger;
    this.clients = new GrpcClients(ctx, config, log);
    this.services = { ctx, config, logger: log, dispatcher: deps.dispatcher, clients: this.clients, port: () => this.boundPort };

    const mode = config.grpcTlsMode;
    if (mode !== 'disabled') {
      // the certificate (a generated one is written now, for clients to be pointed at) and its check happen at
      // start as before; the TLS server itself is made by the first TLS connection
      const kp = loadServerKeyPair(config);
      checkKeyPair(kp);
      this.keyPair = kp;
      this.certPath = kp.certPath;
    }
    this.tcp = net.createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.on('error', (err) => log.debug({ err: err.message }, 'gRPC connection error'));
      socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
      // Peek with 'readable' + read() + unshift(): a 'data' peek breaks the HTTP/2 session grpc-js builds on it.
      socket.once('readable', () => {
        const head: Buffer | null = socket.read();
        if (!head) {
          socket.destroy();
          return;
        }
        socket.unshift(head);
        socket.setTimeout(0);
        const isTls = head[0] === TLS_HANDSHAKE;
        if (this.server) {
          this.inject(this.server, socket, isTls);
          return;
        }
        // the grpc-js side is still loading: the bytes wait in the socket's buffer (HTTP/2 reads them from there)
        this.messagingServer().then(
          (server) => this.inject(server, socket, isTls),
          (err: Error) => {
            log.error({ err }, 'gRPC server could not be created');
            socket.destroy();
          },
        );
      });
    });
  }

  get port(): number {
    return this.boundPort;
  }

  /** Binds (host 0.0.0.0, as the proxy does) and returns the port. */
  listen(port: number, host = '0.0.0.0'): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.tcp.once('error', onError);
      this.tcp.listen(port, host, () => {
        this.tcp.off('error', onError);
        this.boundPort = (this.tcp.address() as net.AddressInfo).port;
        resolve(this.boundPort);
      });
    });
  }

  /**
   * Loads the grpc-js side in the background once the caller's start-up is done (a macrotask later), so the first
   * client does not wait for it and start-up does not either.
   */
  warmUp(): void {
    setImmediate(() => {
      if (this.closed) return;
      this.messagingServer().catch((err: Error) => this.deps.logger.error({ err }, 'gRPC server could not be created'));
    });
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    this.clients.shutdown();
    // close() calls back once every connection has ended: end them first, or a client that stays connected
    // (or keeps reconnecting) holds the broker's shutdown for ever
    const closed = new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    const server = this.server ?? (await this.loading?.catch(() => undefined));
    server?.forceShutdown();
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private messagingServer(): Promise<MessagingServer> {
    this.loading ??= import('./messaging-server.js').then(
      (m) => (this.server = m.createMessagingServer(this.services, this.deps.pop, this.keyPair)),
    );
    return this.loading;
  }

  private inject(server: MessagingServer, socket: net.Socket, isTls: boolean): void {
    if (socket.destroyed) return;
    const injector = isTls ? server.secure() : server.plain;
    if (!injector) {
      const mode = this.services.config.grpcTlsMode;
      this.deps.logger.debug({ peer: socket.remoteAddress, mode }, `${isTls ? 'TLS' : 'plaintext'} connection refused by grpcTlsMode`);
      socket.destroy();
      return;
    }
    injector.injectConnection(socket);
  }
}

/**
 * What the TLS server would refuse at its creation, thrown at start as before (a key that is not PEM, a key that
 * does not match the certificate, GRPC_SSL_CIPHER_SUITES naming no cipher): a context without the CA store (the
 * server asks for no client certificate) costs ~2 ms, the server's own one ~40 ms when grpc-js reads
 * GRPC_DEFAULT_SSL_ROOTS_FILE_PATH into it.
 */
function checkKeyPair(kp: ServerKeyPair): void {
  tls.createSecureContext({ cert: kp.certPem, key: kp.keyPem, ca: [], ciphers: process.env.GRPC_SSL_CIPHER_SUITES });
}
