// The MessagingService protos, loaded at run time from the rocketmq-client-nodejs package (a dependency): they are
// the protos the clients ship (rocketmq-apis v2.1.2, a superset of what Java 5.0.2 … 5.2.0 send), and loading them
// from the package keeps proto source text out of this repository.
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

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
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cached: grpc.ServiceDefinition | undefined;

/** The `apache.rocketmq.v2.MessagingService` definition (loaded once). */
export function messagingServiceDefinition(): grpc.ServiceDefinition {
  if (cached) return cached;
  const root = protoRoot();
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { ...LOADER_OPTIONS, includeDirs: [root] });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    apache: { rocketmq: { v2: { MessagingService: grpc.ServiceClientConstructor } } };
  };
  cached = pkg.apache.rocketmq.v2.MessagingService.service;
  return cached;
}

/** A client constructor for the same service (tests and tools speak raw gRPC with it). */
export function messagingServiceClient(): grpc.ServiceClientConstructor {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { ...LOADER_OPTIONS, includeDirs: [protoRoot()] });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    apache: { rocketmq: { v2: { MessagingService: grpc.ServiceClientConstructor } } };
  };
  return pkg.apache.rocketmq.v2.MessagingService;
}
