// The gRPC endpoint's keys (Java proxy/config/ProxyConfig names and defaults unless noted), part of the broker's
// schema (common/config.ts). The endpoint reads them at start; none is live.
import type { Schema } from '../common/config-schema.js';

export const GRPC_SCHEMA = {
  // 8081 as the official proxy; 0 picks a free port; -1 turns the endpoint off. With listenPort=0 (tests, several
  // servers on one host) the default 8081 is taken as 0 too.
  grpcServerPort: { type: 'int', default: 8081, min: -1, max: 65535 },
  // Largest gRPC frame accepted (grpc-js defaults to 4 MiB, less than a 4 MiB body plus its envelope); bodies over
  // maxMessageSize are refused in-band with MESSAGE_BODY_TOO_LARGE.
  grpcMaxInboundMessageSize: { type: 'int', default: 130 * 1024 * 1024, min: 1024 },
  // The gRPC port's TLS (the proxy reads JVM property tls.server.mode): permissive serves TLS and plaintext on the
  // one port, told apart by the first byte; enforcing refuses plaintext; disabled refuses TLS.
  grpcTlsMode: { type: 'enum', default: 'permissive', values: ['disabled', 'permissive', 'enforcing'] },
  // true: a self-signed certificate (SANs 127.0.0.1, localhost, brokerIP1), kept in
  // {storePathRootDir}/config/tls/grpc.{crt,key} and reused; false: tlsCertPath / tlsKeyPath (PEM, PKCS#8 key).
  tlsTestModeEnable: { type: 'bool', default: true },
  tlsCertPath: { type: 'string', default: '' },
  tlsKeyPath: { type: 'string', default: '' },
  grpcClientIdleTimeMills: { type: 'int', default: 120_000, min: 0 },
  enableTopicMessageTypeCheck: { type: 'bool', default: true },
  maxUserPropertySize: { type: 'int', default: 16 * 1024, min: 0 },
  userPropertyMaxNum: { type: 'int', default: 128, min: 0 },
  maxMessageGroupSize: { type: 'int', default: 64, min: 0 },
  maxDelayTimeMills: { type: 'int', default: 86_400_000, min: 0 },
  maxTransactionRecoverySecond: { type: 'int', default: 3600, min: 0 },
  grpcClientProducerMaxAttempts: { type: 'int', default: 3, min: 1 },
  grpcClientProducerBackoffInitialMillis: { type: 'int', default: 10, min: 0 },
  grpcClientProducerBackoffMaxMillis: { type: 'int', default: 1000, min: 0 },
  grpcClientProducerBackoffMultiplier: { type: 'int', default: 2, min: 1 },
  grpcClientConsumerMinLongPollingTimeoutMillis: { type: 'int', default: 5000, min: 0 },
  grpcClientConsumerMaxLongPollingTimeoutMillis: { type: 'int', default: 20_000, min: 0 },
  grpcClientConsumerLongPollingBatchSize: { type: 'int', default: 32, min: 1, max: 32 },
  defaultInvisibleTimeMills: { type: 'int', default: 60_000, min: 1000 },
  minInvisibleTimeMillsForRecv: { type: 'int', default: 10_000, min: 0 },
  maxInvisibleTimeMills: { type: 'int', default: 43_200_000, min: 1000 },
  enableProxyAutoRenew: { type: 'bool', default: true },
  // Answers to relayed admin requests (thread stacks, consume-directly) are awaited this long.
  grpcProxyRelayRequestTimeoutInSeconds: { type: 'int', default: 5, min: 1 },
} as const satisfies Schema;
