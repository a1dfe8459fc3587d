// What every RPC knows about its caller, from the x-mq-* headers the 5.x clients send (Java proxy
// grpc/pipeline/ContextInitPipeline and grpc/interceptor/HeaderInterceptor).
import type * as grpc from '@grpc/grpc-js';
import { GrpcStatusError } from './status.js';

export interface CallContext {
  /** x-mq-client-id: `host@pid@index@base36`; keys Settings and the client's channel. */
  clientId: string;
  /** x-mq-language as sent (`JAVA`, `HTTP` from Node, `GO`); any value is accepted and kept for listings. */
  language: string;
  /** x-mq-client-version, e.g. `5.2.0`. */
  clientVersion: string;
  namespace: string;
  /** `ip:port` of the peer. */
  peer: string;
  /** Absolute deadline (ms since the epoch), Infinity when the client set none. */
  deadlineMs: number;
}

function header(md: grpc.Metadata, key: string): string {
  const v = md.get(key)[0];
  return v === undefined ? '' : String(v);
}

/** `ip:port` from grpc-js's peer string (`1.2.3.4:5`, `[::1]:5`, `::ffff:1.2.3.4:5`). */
export function peerAddress(peer: string): string {
  return peer.replace(/^\[?::ffff:/, '').replace(/^\[(.*)\]:(\d+)$/, '$1:$2');
}

export function callContext(call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>): CallContext {
  const md = call.metadata;
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  return {
    clientId: header(md, 'x-mq-client-id'),
    language: header(md, 'x-mq-language'),
    clientVersion: header(md, 'x-mq-client-version'),
    namespace: header(md, 'x-mq-namespace'),
    peer: peerAddress(call.getPeer()),
    deadlineMs: Number.isFinite(deadlineMs) ? deadlineMs : Infinity,
  };
}

/** Java GrpcMessagingApplication.validateContext: every RPC needs a client id. */
export function requireClientId(cc: CallContext): void {
  if (cc.clientId.trim() === '') throw new GrpcStatusError('CLIENT_ID_REQUIRED', 'client id cannot be empty');
}
