// TLS on the remoting ports (Java remoting/netty/TlsSystemConfig, TlsHelper, NettyRemotingServer.TlsModeHandler):
// `tls.server.mode` disabled | permissive | enforcing. Permissive looks at a connection's first byte — a TLS
// handshake record (0x16) gets TLS, anything else is served plain on the same port; enforcing closes plain peers.
// Keys keep the official names (system properties in Java) and may come from `tls.config.file` as in Java.
import fs from 'node:fs';
import type net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { Logger } from 'pino';
import { ConfigError, type Schema } from '../common/config-schema.js';

export const TLS_SCHEMA = {
  // Java's default is permissive with a self-signed test certificate (tls.test.mode.enable); ours is disabled, and
  // TLS needs tls.server.certPath / keyPath.
  'tls.server.mode': { type: 'enum', default: 'disabled', values: ['disabled', 'permissive', 'enforcing'] },
  // A properties file with the tls.server.* keys (Java reads it at this default path if it exists).
  'tls.config.file': { type: 'string', default: '/etc/rocketmq/tls.properties' },
  'tls.server.certPath': { type: 'string', default: '' },
  'tls.server.keyPath': { type: 'string', default: '' },
  'tls.server.keyPassword': { type: 'string', default: '' },
  'tls.server.trustCertPath': { type: 'string', default: '' },
  // none | optional | require: ask for a client certificate.
  'tls.server.need.client.auth': { type: 'enum', default: 'none', values: ['none', 'optional', 'require'] },
  // Verify the client certificate against trustCertPath.
  'tls.server.authClient': { type: 'bool', default: false },
  // Client side (the broker's connections to nameservers): use TLS; verify the server against trustCertPath.
  'tls.enable': { type: 'bool', default: false },
  'tls.client.authServer': { type: 'bool', default: false },
  'tls.client.trustCertPath': { type: 'string', default: '' },
} as const satisfies Schema;

export type TlsMode = 'disabled' | 'permissive' | 'enforcing';

export interface TlsConfig {
  'tls.server.mode': TlsMode;
  'tls.config.file': string;
  'tls.server.certPath': string;
  'tls.server.keyPath': string;
  'tls.server.keyPassword': string;
  'tls.server.trustCertPath': string;
  'tls.server.need.client.auth': string;
  'tls.server.authClient': boolean;
  'tls.enable': boolean;
  'tls.client.authServer': boolean;
  'tls.client.trustCertPath': string;
}

/** Client-side TLS options (Java: trust any server unless tls.client.authServer, as its test mode does). */
export function clientTlsOptions(c: TlsConfig): tls.ConnectionOptions | undefined {
  if (!c['tls.enable']) return undefined;
  const ca = c['tls.client.trustCertPath'] ? readKeyFile('tls.client.trustCertPath', c['tls.client.trustCertPath']) : undefined;
  return { rejectUnauthorized: c['tls.client.authServer'], ca };
}

/** Java's TLS handshake record type: the first byte a TLS client sends (Netty SslHandler.isEncrypted). */
const TLS_HANDSHAKE = 0x16;
/** Java Netty SslHandler's default handshake timeout. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

function readKeyFile(key: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${key}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The server's TLS context from the config; ConfigError naming the key for a missing or unreadable file. */
export function createServerTlsContext(c: TlsConfig): tls.SecureContext {
  if (!c['tls.server.certPath']) throw new ConfigError(`tls.server.certPath: required when tls.server.mode is ${c['tls.server.mode']}`);
  if (!c['tls.server.keyPath']) throw new ConfigError(`tls.server.keyPath: required when tls.server.mode is ${c['tls.server.mode']}`);
  const cert = readKeyFile('tls.server.certPath', c['tls.server.certPath']);
  const key = readKeyFile('tls.server.keyPath', c['tls.server.keyPath']);
  const ca = c['tls.server.trustCertPath'] ? readKeyFile('tls.server.trustCertPath', c['tls.server.trustCertPath']) : undefined;
  try {
    return tls.createSecureContext({ cert, key, ca, passphrase: c['tls.server.keyPassword'] || undefined });
  } catch (err) {
    throw new ConfigError(`tls.server.certPath: ${c['tls.server.certPath']} / tls.server.keyPath: ${c['tls.server.keyPath']}: ${(err as Error).message}`);
  }
}

/** Accepts raw TCP connections for a RemotingServer: hands on plain sockets, or TLS sockets once the handshake is done. */
export class TlsAcceptor {
  constructor(
    private readonly mode: TlsMode,
    private readonly context: tls.SecureContext,
    private readonly config: TlsConfig,
    private readonly logger: Logger,
  ) {}

  accept(socket: net.Socket, serve: (s: net.Socket) => void): void {
    const peer = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`.replace(/^::ffff:/, '');
    if (this.mode === 'enforcing') {
      this.handshake(socket, socket, peer, serve);
      return;
    }
    // permissive: look at the first chunk, then either replay it into TLS or serve the socket plain; a peer that
    // sends nothing is closed after the handshake timeout (no Connection, and so no idle timer, exists yet)
    const silent = setTimeout(() => {
      this.logger.warn({ peer, tlsMode: this.mode }, 'no data from a new connection, closing it');
      socket.destroy();
    }, HANDSHAKE_TIMEOUT_MS);
    socket.once('close', () => clearTimeout(silent));
    socket.once('data', (first: Buffer) => {
      clearTimeout(silent);
      socket.pause();
      if (first[0] === TLS_HANDSHAKE) {
        this.handshake(replaying(socket, first), socket, peer, serve);
      } else {
        socket.unshift(first);
        serve(socket);
        socket.resume();
      }
    });
    socket.once('error', () => socket.destroy());
  }

  private handshake(transport: net.Socket | Duplex, raw: net.Socket, peer: string, serve: (s: net.Socket) => void): void {
    const needAuth = this.config['tls.server.need.client.auth'];
    const secure = new tls.TLSSocket(transport as net.Socket, {
      isServer: true,
      secureContext: this.context,
      requestCert: needAuth !== 'none',
      rejectUnauthorized: needAuth === 'require' || this.config['tls.server.authClient'],
    });
    // A TLS socket over a replaying stream has no peer address of its own: keep the raw socket's.
    Object.defineProperty(secure, 'remoteAddress', { value: raw.remoteAddress });
    Object.defineProperty(secure, 'remotePort', { value: raw.remotePort });
    const timer = setTimeout(() => fail(new Error(`no TLS handshake within ${HANDSHAKE_TIMEOUT_MS} ms`)), HANDSHAKE_TIMEOUT_MS);
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.logger.warn({ peer, err: err.message, tlsMode: this.mode }, 'TLS handshake failed, closing connection');
      secure.destroy();
      raw.destroy();
    };
    secure.once('error', fail);
    secure.once('secure', () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      secure.off('error', fail);
      serve(secure);
    });
  }
}

/** A duplex over `socket` that first yields `first` (already read to sniff the protocol), then the rest. */
function replaying(socket: net.Socket, first: Buffer): Duplex {
  const d = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk: Buffer, _enc, cb) {
      socket.write(chunk, cb);
    },
    final(cb) {
      socket.end();
      cb();
    },
    destroy(err, cb) {
      socket.destroy();
      cb(err);
    },
  });
  d.push(first);
  socket.on('data', (c: Buffer) => {
    if (!d.push(c)) socket.pause();
  });
  socket.on('end', () => d.push(null));
  socket.on('close', () => d.destroy());
  socket.on('error', (e) => d.destroy(e));
  return d;
}
