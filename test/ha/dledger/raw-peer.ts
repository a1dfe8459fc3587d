// A raw DLedger peer for tests: writes remoting frames to a peer port and reads the answers with their headers
// (codes, remarks, flags), so tests can see exactly what went over the wire.
import net from 'node:net';
import { type RemotingCommand, createRequest } from '../../../src/remoting/command.js';
import { FrameDecoder } from '../../../src/remoting/frame-decoder.js';
import { encodeFrame } from '../../../src/remoting/header-codec.js';

export class RawPeer {
  private readonly decoder = new FrameDecoder();
  private readonly waiting = new Map<number, (cmd: RemotingCommand) => void>();
  readonly closed: Promise<void>;
  isClosed = false;

  private constructor(readonly socket: net.Socket) {
    const frames: RemotingCommand[] = [];
    socket.on('data', (chunk: Buffer) => {
      frames.length = 0;
      this.decoder.push(chunk, frames);
      for (const f of frames) this.waiting.get(f.opaque)?.(f);
    });
    this.closed = new Promise((resolve) => socket.on('close', () => {
      this.isClosed = true;
      resolve();
    }));
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => resolve(new RawPeer(s)));
      s.once('error', reject);
    });
  }

  /** Sends a request (optionally cut into pieces of `chunkBytes`) and waits for its answer. */
  async request(code: number, body: Buffer | string, opts: { chunkBytes?: number; timeoutMs?: number } = {}): Promise<RemotingCommand> {
    const cmd = createRequest(code, {}, typeof body === 'string' ? Buffer.from(body) : body);
    const bytes = Buffer.concat(encodeFrame(cmd));
    const answer = new Promise<RemotingCommand>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to code ${code} within ${opts.timeoutMs ?? 5000} ms`)), opts.timeoutMs ?? 5000);
      this.waiting.set(cmd.opaque, (res) => {
        clearTimeout(timer);
        this.waiting.delete(cmd.opaque);
        resolve(res);
      });
    });
    if (opts.chunkBytes) {
      for (let i = 0; i < bytes.length; i += opts.chunkBytes) {
        this.socket.write(bytes.subarray(i, i + opts.chunkBytes));
        await new Promise((r) => setImmediate(r));
      }
    } else {
      this.socket.write(bytes);
    }
    return answer;
  }

  /** The answer body as text ('' when none). */
  static text(res: RemotingCommand): string {
    return res.body ? res.body.toString('utf8') : '';
  }

  write(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Free TCP ports on 127.0.0.1 (bound with port 0 and released), for dLegerPeers lists that need them up front. */
export async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    servers.push(s);
    ports.push((s.address() as net.AddressInfo).port);
  }
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}
