// The gRPC port's certificate: configured files (tlsCertPath / tlsKeyPath), or with tlsTestModeEnable a
// self-signed one kept under the store so that clients which verify certificates can be pointed at it.
import fs from 'node:fs';
import path from 'node:path';
import type { BrokerConfig } from '../common/config.js';
import { ConfigError } from '../common/config-schema.js';
import { generateSelfSignedCert } from './self-signed-cert.js';

export interface ServerKeyPair {
  certPem: Buffer;
  keyPem: Buffer;
  certPath: string;
  keyPath: string;
}

/** Where the generated certificate lives: {storePathRootDir}/config/tls/grpc.{crt,key}. */
export function generatedCertPaths(storePathRootDir: string): { certPath: string; keyPath: string } {
  const dir = path.join(storePathRootDir, 'config', 'tls');
  return { certPath: path.join(dir, 'grpc.crt'), keyPath: path.join(dir, 'grpc.key') };
}

function read(key: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${key}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export function loadServerKeyPair(c: BrokerConfig): ServerKeyPair {
  if (!c.tlsTestModeEnable) {
    if (!c.tlsCertPath) throw new ConfigError('tlsCertPath: required when tlsTestModeEnable is false');
    if (!c.tlsKeyPath) throw new ConfigError('tlsKeyPath: required when tlsTestModeEnable is false');
    return { certPem: read('tlsCertPath', c.tlsCertPath), keyPem: read('tlsKeyPath', c.tlsKeyPath), certPath: c.tlsCertPath, keyPath: c.tlsKeyPath };
  }
  const { certPath, keyPath } = generatedCertPaths(c.storePathRootDir);
  if (fs.existsSync(certPath) && fs.existsSync(keyPath)) {
    return { certPem: fs.readFileSync(certPath), keyPem: fs.readFileSync(keyPath), certPath, keyPath };
  }
  const gen = generateSelfSignedCert(['127.0.0.1', 'localhost', c.brokerIP1, '::1']);
  fs.mkdirSync(path.dirname(certPath), { recursive: true });
  fs.writeFileSync(keyPath, gen.keyPem, { mode: 0o600 });
  fs.writeFileSync(certPath, gen.certPem);
  return { certPem: Buffer.from(gen.certPem), keyPem: Buffer.from(gen.keyPem), certPath, keyPath };
}
