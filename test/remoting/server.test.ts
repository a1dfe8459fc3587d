import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { HeaderError, type RemotingCommand, createRequest, createResponse } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { FrameDecoder } from '../../src/remoting/frame-decoder.js';
import { encodeFrame } from '../../src/remoting/header-codec.js';
import { RequestDispatcher } from '../../src/remoting/dispatcher.js';
import { RemotingServer } from '../../src/remoting/server.js';
import type { Connection } from '../../src/remoting/connection.js';

describe('remoting server', () => {
  let server: RemotingServer;
  let client: RemotingClient;
  let addr: string;
  let onewayCount = 0;
  /** Calls of the onWritten of answers to request 1005. */
  let written = 0;
  let onWritten: () => void = () => {};

  beforeEach(async () => {
    written = 0;
    const dispatcher = new RequestDispatcher(silentLogger());
    server = new RemotingServer(silentLogger(), dispatcher);
    dispatcher.register(1000, (req) => createResponse(0, undefined, { echo: req.extFields.v ?? '' }, req.body));
    dispatcher.register(1001, () => {
      throw new HeaderError('the custom field <topic> is null');
    });
    dispatcher.register(1002, async () => {
      throw new Error('boom');
    });
    dispatcher.register(1003, () => {
      onewayCount++;
      return createResponse(0);
    });
    dispatcher.register(1004, () => new Promise((r) => setTimeout(() => r(createResponse(0, 'late')), 50)));
    dispatcher.register(1005, () => {
      const res = createResponse(0);
      res.bodyParts = [Buffer.from('part-1;'), Buffer.from('part-2')];
      res.onWritten = () => {
        written++;
        onWritten();
      };
      return res;
    });
    const port = await server.listen(0, '127.0.0.1');
    addr = `127.0.0.1:${port}`;
    client = new RemotingClient(silentLogger());
  });
  afterEach(async () => {
    await client.close();
    await server.close();
  });

  it('echoes opaque, sets the response flag and answers JSON', async () => {
    const req = createRequest(1000, { v: 'x' }, Buffer.from('body'));
    const res = await client.request(addr, req, 2000);
    expect(res.opaque).toBe(req.opaque);
    expect(res.flag & 1).toBe(1);
    expect(res.extFields.echo).toBe('x');
    expect(res.body?.toString()).toBe('body');
  });

  it('copies an answer\'s body parts when it waits behind unsent bytes: the memory they viewed may be reused', async () => {
    const accepted = new Promise<Connection>((resolve) => server.onConnection(resolve));
    const sock = net.connect(Number(addr.split(':')[1]), '127.0.0.1');
    sock.pause(); // the peer does not read: answers pile up unsent
    const conn = await accepted;
    let backlog = 0;
    while (conn.socket.writableLength === 0 && backlog < 64) {
      conn.write(createResponse(0, undefined, {}, Buffer.alloc(4 * 1024 * 1024, 1)));
      backlog++;
      await new Promise((r) => setImmediate(r)); // the frame is uncorked and handed to the kernel
    }
    expect(conn.socket.writableLength).toBeGreaterThan(0);
    const source = Buffer.alloc(256 * 1024, 0xaa); // as a tail-cache chunk: the answer holds views into it
    const res = createResponse(0);
    res.bodyParts = [source.subarray(0, 1000), source.subarray(5000, 7000)];
    expect(conn.write(res)).toBe(true);
    source.fill(0xee); // reused for other records once write() returned
    const decoder = new FrameDecoder();
    const got: RemotingCommand[] = [];
    const all = new Promise<void>((resolve) => sock.on('data', (chunk) => {
      decoder.push(chunk, got);
      if (got.length === backlog + 1) resolve();
    }));
    sock.resume();
    await all;
    expect(got[backlog]!.body!.equals(Buffer.alloc(3000, 0xaa))).toBe(true);
    sock.destroy();
  });

  it('tells an answer once its frame is written (the pull path then frees the memory its parts view)', async () => {
    const told = new Promise<void>((resolve) => { onWritten = resolve; });
    const res = await client.request(addr, createRequest(1005), 2000);
    expect(res.body?.toString()).toBe('part-1;part-2');
    await told;
    await client.request(addr, createRequest(1000), 2000); // one more round trip: still told once
    expect(written).toBe(1);
  });

  it('tells an answer once when it is dropped: connection closed before, oneway request', async () => {
    const accepted = new Promise<Connection>((resolve) => server.onConnection(resolve));
    const sock = net.connect(Number(addr.split(':')[1]), '127.0.0.1');
    const conn = await accepted;
    const dropped = new Promise<void>((resolve) => { onWritten = resolve; });
    const oneway = createRequest(1005);
    oneway.flag |= 2;
    sock.write(Buffer.concat(encodeFrame(oneway)));
    await dropped;
    expect(written).toBe(1);
    conn.close();
    const late = createResponse(0);
    let told = 0;
    late.onWritten = () => told++;
    expect(conn.write(late)).toBe(false);
    expect(told).toBe(1);
    sock.destroy();
  });

  it('tells every answer exactly once when the connection closes with frames unsent or in flight', async () => {
    const accepted = new Promise<Connection>((resolve) => server.onConnection(resolve));
    const sock = net.connect(Number(addr.split(':')[1]), '127.0.0.1');
    sock.pause(); // the peer does not read: frames stay in the kernel, in flight and in the socket's buffer
    const conn = await accepted;
    const calls: number[] = [];
    const write = (i: number, bytes: number) => {
      const res = createResponse(0);
      res.bodyParts = [Buffer.alloc(bytes, i)];
      res.onWritten = () => calls.push(i);
      expect(conn.write(res)).toBe(true);
    };
    let n = 0;
    while (conn.socket.writableLength === 0 && n < 64) {
      write(n++, 4 * 1024 * 1024);
      await new Promise((r) => setImmediate(r));
    }
    expect(conn.socket.writableLength).toBeGreaterThan(0);
    for (let k = 0; k < 3; k++) write(n++, 1024); // queued behind the unsent bytes
    const closed = new Promise((resolve) => conn.socket.once('close', resolve));
    conn.close();
    await closed;
    while (calls.length < n) await new Promise((r) => setImmediate(r)); // bounded by the test timeout
    await new Promise((r) => setImmediate(r));
    expect(calls.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    sock.destroy();
  });

  it('answers an unknown code with REQUEST_CODE_NOT_SUPPORTED and a remark', async () => {
    const res = await client.request(addr, createRequest(4242), 2000);
    expect(res.code).toBe(3);
    expect(res.remark).toBe(' request type 4242 not supported');
  });

  it('maps a missing header field and a processor failure to SYSTEM_ERROR with a remark', async () => {
    const a = await client.request(addr, createRequest(1001), 2000);
    expect(a.code).toBe(1);
    expect(a.remark).toContain('<topic>');
    const b = await client.request(addr, createRequest(1002), 2000);
    expect(b.code).toBe(1);
    expect(b.remark).toMatch(/internal error handling request code 1002; the broker logged it as errorId \d+/);
    expect(b.remark).not.toContain('boom');
  });

  it('never answers a oneway request', async () => {
    const before = onewayCount;
    const sock = net.connect(Number(addr.split(':')[1]), '127.0.0.1');
    const decoder = new FrameDecoder();
    const got: RemotingCommand[] = [];
    sock.on('data', (chunk) => decoder.push(chunk, got));
    const oneway = createRequest(1003);
    oneway.flag = 2;
    const normal = createRequest(1004);
    sock.write(Buffer.concat([...encodeFrame(oneway), ...encodeFrame(normal)]));
    await new Promise((r) => setTimeout(r, 300));
    sock.destroy();
    expect(onewayCount).toBe(before + 1);
    expect(got.map((c) => c.opaque)).toEqual([normal.opaque]);
  });

  it('closes only the connection that sent a malformed frame', async () => {
    const good = await client.request(addr, createRequest(1000, { v: 'a' }), 2000);
    expect(good.code).toBe(0);
    const sock = net.connect(Number(addr.split(':')[1]), '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const closed = new Promise((r) => sock.once('close', r));
    sock.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await closed;
    const again = await client.request(addr, createRequest(1000, { v: 'b' }), 2000);
    expect(again.extFields.echo).toBe('b');
  });

  it('answers binary-header requests with a JSON response', async () => {
    // A ROCKETMQ-serialized request: code 1000, language JAVA, version 401, opaque 77, no ext fields.
    const header = Buffer.alloc(21);
    header.writeInt16BE(1000, 0);
    header.writeUInt8(0, 2);
    header.writeInt16BE(401, 3);
    header.writeInt32BE(77, 5);
    header.writeInt32BE(0, 9);
    header.writeInt32BE(0, 13);
    header.writeInt32BE(0, 17);
    const prefix = Buffer.alloc(8);
    prefix.writeInt32BE(4 + header.length, 0);
    prefix.writeInt32BE((1 << 24) | header.length, 4);
    const sock = net.connect(Number(addr.split(':')[1]), '127.0.0.1');
    const decoder = new FrameDecoder();
    const got: RemotingCommand[] = [];
    const res = new Promise<RemotingCommand>((resolve) =>
      sock.on('data', (chunk) => {
        decoder.push(chunk, got);
        if (got.length) resolve(got[0]);
      }),
    );
    sock.write(Buffer.concat([prefix, header]));
    const cmd = await res;
    expect(cmd.opaque).toBe(77);
    expect(cmd.code).toBe(0);
    sock.destroy();
  });

  it('pipelines many requests on one connection', async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => client.request(addr, createRequest(1000, { v: String(i) }), 5000)),
    );
    expect(results.map((r) => r.extFields.echo)).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
  });
});

