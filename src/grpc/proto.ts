// The MessagingService protos, loaded at run time from the rocketmq-client-nodejs package (a dependency): they are
// the protos the clients ship (rocketmq-apis v2.1.2, a superset of what Java 5.0.2 … 5.2.0 send), and loading them
// from the package keeps proto source text out of this repository.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);

/** Where the client package keeps `apache/rocketmq/v2/*.proto`. */
export function protoRoot(): string {
  return path.join(path.dirname(require.resolve('rocketmq-client-nodejs/package.json')), 'proto');
}

/**
 * keepCase: field names as in the proto and the Java sources; longs as Number (every int64 here — offsets, seconds —
 * stays below 2^53); enums as names; defaults on (proto3 `optional` fields keep their presence regardless); oneofs
 * adds the name of the set case (`command`, `pub_sub`, `content`, `strategy`).
 */
export const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cached: grpc.ServiceDefinition | undefined;

/** proto-loader's include-path resolution: a relative import is looked up under `root`. */
function loadRoot(root: string): protobuf.Root {
  const r = new protobuf.Root();
  r.resolvePath = (origin, target) => {
    if (path.isAbsolute(target)) return target;
    const inRoot = path.join(root, target);
    return fs.existsSync(inRoot) ? inRoot : protobuf.util.path.resolve(origin, target);
  };
  r.loadSync('apache/rocketmq/v2/service.proto', { keepCase: LOADER_OPTIONS.keepCase });
  r.resolveAll();
  return r;
}

/** fromObject + encode, as proto-loader's serializer. */
function serializer(type: protobuf.Type): grpc.serialize<unknown> {
  return (arg) => {
    if (Array.isArray(arg)) throw new Error(`Failed to serialize message: expected object with ${type.name} structure, got array instead`);
    return Buffer.from(type.encode(type.fromObject(arg as Record<string, unknown>)).finish());
  };
}

/** decode + toObject with LOADER_OPTIONS, as proto-loader's deserializer. */
function deserializer(type: protobuf.Type): grpc.deserialize<unknown> {
  return (buf) => type.toObject(type.decode(buf), LOADER_OPTIONS as protobuf.IConversionOptions);
}

/**
 * The `apache.rocketmq.v2.MessagingService` definition (loaded once). Built from the protobufjs root as
 * proto-loader builds it (same paths, stream flags, (de)serializers, originalName), without the descriptor
 * protos proto-loader also encodes for every type (reflection data the server never reads; a third of the
 * load's time at start-up).
 */
export function messagingServiceDefinition(): grpc.ServiceDefinition {
  if (cached) return cached;
  const service = loadRoot(protoRoot()).lookupService('apache.rocketmq.v2.MessagingService');
  const def: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methodsArray) {
    const req = m.resolvedRequestType!;
    const res = m.resolvedResponseType!;
    def[m.name] = {
      path: `/apache.rocketmq.v2.MessagingService/${m.name}`,
      requestStream: !!m.requestStream,
      responseStream: !!m.responseStream,
      requestSerialize: serializer(req),
      requestDeserialize: deserializer(req),
      responseSerialize: serializer(res),
      responseDeserialize: deserializer(res),
      originalName: m.name.charAt(0).toLowerCase() + m.name.slice(1),
    };
  }
  cached = def;
  return cached;
}

/** A client constructor for the same service (tests and tools speak raw gRPC with it). */
export function messagingServiceClient(): grpc.ServiceClientConstructor {
  return grpc.makeClientConstructor(messagingServiceDefinition(), 'apache.rocketmq.v2.MessagingService');
}
