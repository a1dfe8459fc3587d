// The grpc-js side of the gRPC endpoint: the grpc.Server with the MessagingService handlers and the connection
// injectors the endpoint's TCP listener hands sockets to. Loaded by server.ts with a dynamic import, after the
// port is bound (start-up does not wait for @grpc/grpc-js, protobufjs and the .proto parse).
import * as grpc from '@grpc/grpc-js';
import type { PopService } from '../broker/pop/pop-service.js';
import { heartbeat, notifyClientTermination, telemetry } from './client-rpcs.js';
import { ackMessage, changeInvisibleDuration, forwardMessageToDeadLetterQueue, receiveMessage } from './consume-rpcs.js';
import { patchGrpcJsDeadline } from './grpc-js-deadline.js';
import { messagingServiceDefinition } from './proto.js';
import { recallMessage } from './recall-rpc.js';
import { queryAssignment, queryRoute } from './route-rpcs.js';
import { sendMessageRpc } from './send-rpcs.js';
import { type GrpcServices, type Msg, unary } from './services.js';
import type { ServerKeyPair } from './tls.js';
import { TransactionIndex, endTransaction } from './transaction-rpcs.js';

const SERVICE = 'apache.rocketmq.v2.MessagingService';

type Injector = ReturnType<grpc.Server['createConnectionInjector']>;

export interface MessagingServer {
  /** Plaintext HTTP/2 (h2c) connections; undefined when grpcTlsMode is enforcing. */
  readonly plain: Injector | undefined;
  /** TLS connections; undefined when grpcTlsMode is disabled. Its secure context (the TLS server) is made on first use. */
  secure(): Injector | undefined;
  forceShutdown(): void;
}

export function createMessagingServer(s: GrpcServices, pop: PopService, keyPair: ServerKeyPair | undefined): MessagingServer {
  patchGrpcJsDeadline();
  const { config } = s;
  const idle = config.grpcClientIdleTimeMills;
  const server = new grpc.Server({
    'grpc.max_receive_message_length': config.grpcMaxInboundMessageSize,
    'grpc.max_send_message_length': -1,
    ...(idle > 0 ? { 'grpc.max_connection_idle_ms': idle } : {}),
  });
  server.addService(messagingServiceDefinition(), handlers(s, pop));
  const mode = config.grpcTlsMode;
  const plain = mode !== 'enforcing' ? server.createConnectionInjector(grpc.ServerCredentials.createInsecure()) : undefined;
  let secure: Injector | undefined;
  return {
    plain,
    secure() {
      if (!secure && keyPair) {
        // ~40 ms: Node's TLS server context (the default CA store is loaded into it), wanted only once a TLS peer comes
        secure = server.createConnectionInjector(
          grpc.ServerCredentials.createSsl(null, [{ private_key: keyPair.keyPem, cert_chain: keyPair.certPem }], false),
        );
      }
      return secure;
    },
    forceShutdown: () => server.forceShutdown(),
  };
}

function handlers(s: GrpcServices, pop: PopService): grpc.UntypedServiceImplementation {
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
    // ReceiveMessage, AckMessage, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue (the broker's POP); RecallMessage.
    ReceiveMessage: receiveMessage(s, pop),
    AckMessage: unary(s, 'AckMessage', ackMessage(s, pop)),
    ChangeInvisibleDuration: unary(s, 'ChangeInvisibleDuration', changeInvisibleDuration(s, pop)),
    ForwardMessageToDeadLetterQueue: unary(s, 'ForwardMessageToDeadLetterQueue', forwardMessageToDeadLetterQueue(s, pop)),
    RecallMessage: unary(s, 'RecallMessage', recallMessage(s)),
  };
  return impl;
}
