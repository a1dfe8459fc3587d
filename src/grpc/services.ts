// What the RPC handlers reach: the broker's context and dispatcher, the gRPC client registry, the endpoint's own
// address. Handlers never touch sockets; they return responses (or write stream items) built from these.
import type * as grpc from '@grpc/grpc-js';
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { BrokerContext } from '../broker/context.js';
import type { RequestDispatcher } from '../remoting/dispatcher.js';
import { type CallContext, callContext, requireClientId } from './call-context.js';
import type { GrpcClients } from './clients.js';
import { type Status, errorStatus } from './status.js';

export interface GrpcServices {
  ctx: BrokerContext;
  config: BrokerConfig;
  logger: Logger;
  dispatcher: RequestDispatcher;
  clients: GrpcClients;
  /** The port the endpoint is bound to (advertised in routes). */
  port(): number;
}

// Decoded proto-loader objects; fields as named in the .proto files.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Msg = Record<string, any>;

export type UnaryHandler = (req: Msg, cc: CallContext) => Promise<Msg> | Msg;

/**
 * A unary RPC as the proxy answers it (Java GrpcMessagingApplication): the client id is required, and every failure
 * — a GrpcStatusError or anything unexpected — is the response's status with gRPC status OK.
 */
export function unary(s: GrpcServices, name: string, handler: UnaryHandler): grpc.handleUnaryCall<Msg, Msg> {
  return (call, callback) => {
    const cc = callContext(call);
    const fail = (err: unknown) => {
      const st: Status = errorStatus(err);
      if (st.code === 'INTERNAL_SERVER_ERROR') s.logger.warn({ rpc: name, clientId: cc.clientId, err }, 'gRPC request failed');
      callback(null, { status: st });
    };
    try {
      requireClientId(cc);
      const res = handler(call.request, cc);
      if (res instanceof Promise) res.then((r) => callback(null, r), fail);
      else callback(null, res);
    } catch (err) {
      fail(err);
    }
  };
}
