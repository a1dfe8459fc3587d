// The peer port's transport: replies carry header code 200 and flag 1 with the JSON body; frames cut at every byte
// are reassembled; garbage closes that connection only; unknown codes answer 3, handler failures 1 (pitfall 18).
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/common/logger.js';
import { DLedgerRequestCode } from '../../../src/ha/dledger/codes.js';
import { DLedgerBodyError } from '../../../src/ha/dledger/json.js';
import { PeerRpcClient, PeerRpcServer, connectionRefused, parsePeers } from '../../../src/ha/dledger/peer-rpc.js';
import { decodeBase, encodeBase } from '../../../src/ha/dledger/protocol.js';
import { FLAG_RESPONSE } from '../../../src/remoting/command.js';
import { RawPeer, freePorts } from './raw-peer.js';

const logger = silentLogger();
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function echoServer(): Promise<PeerRpcServer> {
  const server = new PeerRpcServer(logger);
  server.handle(DLedgerRequestCode.HEART_BEAT, (body) => {
    const req = decodeBase(body);
    return encodeBase({ ...req, code: 200, term: req.term + 1 });
  });
  server.handle(DLedgerRequestCode.PULL, () => {
    throw new DLedgerBodyError('not served');
  });
  server.handle(DLedgerRequestCode.PUSH, () => null);
  await server.listen(0, '127.0.0.1');
  closers.push(() => server.close());
  return server;
}

describe('DLedger peer RPC transport', () => {
  it('answers with header code 200, flag 1 and the JSON body, also for a frame cut at every byte', async () => {
    const server = await echoServer();
    const peer = await RawPeer.connect(server.port);
    closers.push(() => peer.close());
    const res = await peer.request(DLedgerRequestCode.HEART_BEAT, '{"group":"g","term":4}', { chunkBytes: 1 });
    expect(res.code).toBe(200);
    expect(res.flag & FLAG_RESPONSE).toBe(FLAG_RESPONSE);
    expect(RawPeer.text(res)).toBe('{"code":200,"group":"g","term":5}');
  });

  it('answers an unknown code with 3 and a handler failure with 1, both without a body', async () => {
    const server = await echoServer();
    const peer = await RawPeer.connect(server.port);
    closers.push(() => peer.close());
    const unknown = await peer.request(51006, '{}');
    expect(unknown.code).toBe(3);
    expect(unknown.remark).toBe(' request type 51006 not supported');
    expect(unknown.body).toBeUndefined();
    const failed = await peer.request(DLedgerRequestCode.PULL, '{}');
    expect(failed.code).toBe(1);
    expect(failed.body).toBeUndefined();
    const bad = await peer.request(DLedgerRequestCode.HEART_BEAT, '{"term":');
    expect(bad.code).toBe(1);
  });

  it('closes a connection that sends garbage and keeps serving the others; a half frame just waits', async () => {
    const server = await echoServer();
    const good = await RawPeer.connect(server.port);
    const half = await RawPeer.connect(server.port);
    const bad = await RawPeer.connect(server.port);
    closers.push(() => good.close(), () => half.close(), () => bad.close());
    half.write(Buffer.from([0, 0, 0, 40, 0, 0])); // 6 bytes of a 44-byte frame
    bad.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await bad.closed;
    const res = await good.request(DLedgerRequestCode.HEART_BEAT, '{"term":1}');
    expect(RawPeer.text(res)).toBe('{"code":200,"term":2}');
    expect(half.isClosed).toBe(false);
  });

  it('the client gets the body back, and null for no answer, a refused port or a remoting error', async () => {
    const server = await echoServer();
    const client = new PeerRpcClient(logger);
    closers.push(() => client.close());
    const addr = `127.0.0.1:${server.port}`;
    const body = await client.call(addr, DLedgerRequestCode.HEART_BEAT, encodeBase({ code: 200, group: 'g', leaderId: null, localId: null, remoteId: null, term: 1 }));
    expect(decodeBase(body!).term).toBe(2);
    expect(await client.call(addr, DLedgerRequestCode.PULL, Buffer.from('{}'))).toBeNull();
    const started = Date.now();
    expect(await client.call(addr, DLedgerRequestCode.PUSH, Buffer.from('{}'), 300)).toBeNull(); // never answered
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const [closedPort] = await freePorts(1);
    expect(await client.call(`127.0.0.1:${closedPort}`, DLedgerRequestCode.HEART_BEAT, Buffer.from('{}'))).toBeNull();
    expect(await connectionRefused(`127.0.0.1:${closedPort}`, 1000)).toBe(true);
    expect(await connectionRefused(addr, 1000)).toBe(false);
  });

  it('parses dLegerPeers like MemberState: id before the first dash', () => {
    expect([...parsePeers('n0-127.0.0.1:40911;n1-localhost:40912;')]).toEqual([['n0', '127.0.0.1:40911'], ['n1', 'localhost:40912']]);
    expect(() => parsePeers('n0:1')).toThrow();
  });
});
