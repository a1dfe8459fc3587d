// The server-wide buffer budget at the transport: a frame must be whole within its deadline, the oldest partial
// frame is dropped past the budget, and a peer that does not read gets no more answers buffered than the
// high-water mark (what waits for it, waits as a request) until it reads again.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { type RemotingCommand, createRequest, createResponse } from '../../src/remoting/command.js';
import { RequestDispatcher } from '../../src/remoting/dispatcher.js';
import { FrameDecoder } from '../../src/remoting/frame-decoder.js';
import { encodeFrame } from '../../src/remoting/header-codec.js';
import { RemotingServer } from '../../src/remoting/server.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../src/remoting/connection.js';

const MiB = 1024 * 1024;
let server: RemotingServer | undefined;
const sockets: net.Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
});

async function start(limits: { budgetBytes: number; highWaterMarkBytes: number; frameReadTimeoutMs: number }, dispatcher = new RequestDispatcher(silentLogger())): Promise<number> {
  server = new RemotingServer(silentLogger(), dispatcher, DEFAULT_CONNECTION_LIMITS, limits);
  return server.listen(0, '127.0.0.1');
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
    sockets.push(s);
  });
}

const closed = (s: net.Socket) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

/** The first `bytes` of a frame declaring `total` bytes after its length field. */
function partialFrame(total: number, bytes: number): Buffer {
  const b = Buffer.alloc(bytes, 0x20);
  b.writeInt32BE(total, 0);
  return b;
}

describe('remoting buffer budget', () => {
  it('closes a connection whose frame is not whole within frameReadTimeoutMs', async () => {
    const port = await start({ budgetBytes: 64 * MiB, highWaterMarkBytes: MiB, frameReadTimeoutMs: 300 });
    const stalled = await connect(port);
    const healthy = await connect(port);
    stalled.write(partialFrame(1000, 100));
    await closed(stalled);
    expect(server!.budget.closedFrameTimeout).toBe(1);
    expect(server!.budget.inboundBytes).toBe(0);
    expect(healthy.destroyed).toBe(false);
  });

  it('drops the oldest partial frame when the budget is spent, and counts what each holds', async () => {
    const port = await start({ budgetBytes: 16 * MiB, highWaterMarkBytes: MiB, frameReadTimeoutMs: 60_000 });
    const first = await connect(port);
    const second = await connect(port);
    const sendAll = (s: net.Socket, b: Buffer) => new Promise<void>((resolve) => s.write(b, () => resolve()));
    await sendAll(first, partialFrame(12 * MiB, 10 * MiB));
    // Wait until the server holds all of it (its data events are the event we wait for).
    while (server!.budget.inboundBytes < 10 * MiB) await new Promise((r) => setImmediate(r));
    await sendAll(second, partialFrame(12 * MiB, 8 * MiB)).catch(() => undefined);
    await closed(first);
    expect(server!.budget.closedOverBudget).toBe(1);
    while (server!.budget.inboundBytes < 8 * MiB) await new Promise((r) => setImmediate(r));
    expect(second.destroyed).toBe(false);
    expect(server!.budget.inboundBytes).toBe(8 * MiB);
  });

  it('parks answers for a peer that does not read; they all arrive once it reads', async () => {
    const dispatcher = new RequestDispatcher(silentLogger());
    let answered = 0;
    const body = Buffer.alloc(256 * 1024, 7);
    // Like a pull: the answer is only produced once the channel can take it.
    dispatcher.register(2000, (_req, ctx) => new Promise<RemotingCommand>((resolve) => {
      ctx.channel.whenWritable!((done) => {
        answered++;
        resolve(createResponse(0, undefined, {}, body));
        done();
      });
    }));
    const port = await start({ budgetBytes: 256 * MiB, highWaterMarkBytes: MiB, frameReadTimeoutMs: 60_000 }, dispatcher);
    const s = await connect(port);
    s.pause();
    const requests = 300;
    s.write(Buffer.concat(Array.from({ length: requests }, () => Buffer.concat(encodeFrame(createRequest(2000))))));
    // Wait until the server has stopped answering: the kernel buffers are full and the rest are parked.
    let last = -1;
    while (answered !== last) {
      last = answered;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(answered).toBeLessThan(requests);
    // What waits in memory for this peer: at most the high-water mark and the answer that crossed it.
    expect(server!.budget.outboundBytes).toBeLessThanOrEqual(MiB + 2 * body.length);
    // Reading again: every answer arrives.
    const decoder = new FrameDecoder();
    const got: RemotingCommand[] = [];
    s.on('data', (chunk) => decoder.push(chunk, got));
    s.resume();
    while (got.length < requests) await new Promise((r) => setTimeout(r, 20));
    expect(got.every((c) => c.body?.length === body.length)).toBe(true);
    expect(answered).toBe(requests);
  });
});
