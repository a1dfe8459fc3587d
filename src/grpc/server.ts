// The apache.rocketmq.v2.MessagingService endpoint inside the broker process (what the official rocketmq-proxy
// serves on 8081). One TCP port carries TLS and plaintext HTTP/2, told apart by the first byte as the proxy's
// ProxyAndTlsProtocolNegotiator does (a TLS handshake record starts 0x16; h2c starts with the "PRI" preface).
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { BrokerContext } from '../broker/context.js';
import type { RequestDispatcher } from '../remoting/dispatcher.js';
import type { PopService } from '../broker/pop/pop-service.js';
import { heartbeat, notifyClientTermination, telemetry } from './client-rpcs.js';
import { ackMessage, changeInvisibleDuration, forwardMessageToDeadLetterQueue, receiveMessage } from './consume-rpcs.js';
import { GrpcClients } from './clients.js';
import { patchGrpcJsDeadline } from './grpc-js-deadline.js';
import { messagingServiceDefinition } from './proto.js';
import { recallMessage } from './recall-rpc.js';
import { queryAssignment, queryRoute } from './route-rpcs.js';
import { sendMessageRpc } from './send-rpcs.js';
import { type GrpcServices, type Msg, unary } from './services.js';
import { loadServerKeyPair } from './tls.js';
import { TransactionIndex, endTransaction } from './transaction-rpcs.js';

const TLS_HANDSHAKE = 0x16;
/** A connection that sends nothing for this long before its first byte is dropped (Netty's handshake timeout). */
const FIRST_BYTE_TIMEOUT_MS = 10_000;
const SERVICE = 'apache.rocketmq.v2.MessagingService';

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
  private readonly server: grpc.Server;
  private readonly tcp: net.Server;
  private readonly clients: GrpcClients;
  private boundPort = -1;
  private readonly sockets = new Set<net.Socket>();
  readonly certPath: string | undefined;

  constructor(private readonly deps: GrpcEndpointDeps) {
    patchGrpcJsDeadline();
    const { ctx } = deps;
    const config = ctx.config;
    const log = deps.logger;
    this.clients = new GrpcClients(ctx, config, log);
    const idle = config.grpcClientIdleTimeMills;
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': config.grpcMaxInboundMessageSize,
      'grpc.max_send_message_length': -1,
      ...(idle > 0 ? { 'grpc.max_connection_idle_ms': idle } : {}),
    });
    const services: GrpcServices = {
      ctx, config, logger: log, dispatcher: deps.dispatcher, clients: this.clients, port: () => this.boundPort,
    };
    this.server.addService(messagingServiceDefinition(), this.handlers(services));

    const mode = config.grpcTlsMode;
    const plain = mode !== 'enforcing' ? this.server.createConnectionInjector(grpc.ServerCredentials.createInsecure()) : undefined;
    let secure: ReturnType<grpc.Server['createConnectionInjector']> | undefined;
    if (mode !== 'disabled') {
      const kp = loadServerKeyPair(config);
      this.certPath = kp.certPath;
      secure = this.server.createConnectionInjector(
        grpc.ServerCredentials.createSsl(null, [{ private_key: kp.keyPem, cert_chain: kp.certPem }], false),
      );
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
        const injector = head[0] === TLS_HANDSHAKE ? secure : plain;
        if (!injector) {
          log.debug({ peer: socket.remoteAddress, mode }, `${head[0] === TLS_HANDSHAKE ? 'TLS' : 'plaintext'} connection refused by grpcTlsMode`);
          socket.destroy();
          return;
        }
        injector.injectConnection(socket);
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

  async shutdown(): Promise<void> {
    this.clients.shutdown();
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    this.server.forceShutdown();
    for (const s of this.sockets) s.destroy();
  }

  private handlers(s: GrpcServices): grpc.UntypedServiceImplementation {
    const tx = new TransactionIndex(s);
    const unimplemented = (method: string, text = `Method ${SERVICE}/${method} is unimplemented`) =>
      ({ code: grpc.status.UNIMPLEMENTED, details: text });
    const impl: grpc.UntypedServiceImplementation = {
      QueryRoute: unary(s, 'QueryRoute', queryRoute(s)),
      Heartbeat: unary(s, 'Heartbeat', heartbeat(s)),
      SendMessage: unary(s, 'SendMessage', sendMessageRpc(s, tx)),
      QueryAssignment: unary(s, 'QueryAssignment', queryAssignment(s)),
      EndTransaction: unary(s, 'EndTransaction', endTransaction(s, tx)),
      NotifyClientTermination: unary(s, 'NotifyClientTermination', notifyClientTermination(s)),
      Telemetry: telemetry(s, (ch) => tx.watch(ch)),
      // The official proxy (5.3.3) leaves these to grpc-java's default, whose texts these are.
      PullMessage: (call: grpc.ServerWritableStream<Msg, Msg>) => call.emit('error', unimplemented('PullMessage')),
      UpdateOffset: (_c: unknown, cb: grpc.sendUnaryData<Msg>) => cb(unimplemented('UpdateOffset')),
      GetOffset: (_c: unknown, cb: grpc.sendUnaryData<Msg>) => cb(unimplemented('GetOffset')),
      QueryOffset: (_c: unknown, cb: grpc.sendUnaryData<Msg>) => cb(unimplemented('QueryOffset')),
      SyncLiteSubscription: (_c: unknown, cb: grpc.sendUnaryData<Msg>) =>
        cb(unimplemented('SyncLiteSubscription', `Method not found: ${SERVICE}/SyncLiteSubscription`)),
      ...this.consumptionHandlers(s),
    };
    return impl;
  }

  /** ReceiveMessage, AckMessage, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue (the broker's POP); RecallMessage. */
  private consumptionHandlers(s: GrpcServices): grpc.UntypedServiceImplementation {
    const { pop } = this.deps;
    return {
      ReceiveMessage: receiveMessage(s, pop),
      AckMessage: unary(s, 'AckMessage', ackMessage(s, pop)),
      ChangeInvisibleDuration: unary(s, 'ChangeInvisibleDuration', changeInvisibleDuration(s, pop)),
      ForwardMessageToDeadLetterQueue: unary(s, 'ForwardMessageToDeadLetterQueue', forwardMessageToDeadLetterQueue(s, pop)),
      RecallMessage: unary(s, 'RecallMessage', recallMessage(s)),
    };
  }
}
