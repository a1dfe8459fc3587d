// The HA link between two real stores in this process, over TCP on 127.0.0.1: our master (HaService) and our
// slave (HaClient); SYNC_MASTER waits in both official flavours; peers that send garbage.
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BROKER_SCHEMA, defaults } from '../../src/common/config.js';
import { HaClient } from '../../src/ha/ha-client.js';
import { HaService } from '../../src/ha/ha-service.js';
import { encodeFrameHeader, encodeReport, FrameReader, MAX_FRAME_BODY_BYTES } from '../../src/ha/protocol.js';
import type { HaConfig } from '../../src/ha/types.js';
import type { DefaultMessageStore } from '../../src/store/index.js';
import { makeMessage, makeTempDir, openStore, removeDir } from '../store/helpers.js';
import { waitFor } from '../helpers/server.js';

let root: string;
const cleanups: Array<() => Promise<void> | void> = [];

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await removeDir(root);
});

/** A logger whose lines the test can read. */
function capturingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

function haConfig(extra: Partial<HaConfig> = {}): HaConfig {
  return { ...defaults(BROKER_SCHEMA), mappedFileSizeCommitLog: 4096, ...extra };
}

async function store(name: string, extra: Parameters<typeof openStore>[1] = {}): Promise<DefaultMessageStore> {
  const s = await openStore(path.join(root, name), extra);
  cleanups.push(() => s.shutdown());
  return s;
}

async function masterWith(config: HaConfig, logger = pino({ level: 'silent' })) {
  const log = await store('master', { brokerRole: config.brokerRole });
  const ha = new HaService(log.commitLog, config, logger);
  const port = await ha.listen(0);
  cleanups.push(() => ha.close());
  if (config.brokerRole === 'SYNC_MASTER') ha.setSyncMaster(true);
  return { store: log, ha, port };
}

async function slaveOf(port: number, name = 'slave', logger = pino({ level: 'silent' })) {
  const log = await store(name, { brokerRole: 'SLAVE' });
  const client = new HaClient(log.commitLog, haConfig({ haMasterAddress: `127.0.0.1:${port}` }), logger, 100);
  client.start();
  cleanups.push(() => client.stop());
  return { store: log, client };
}

/** A raw TCP peer: resolves when the other side closes. */
function rawPeer(port: number): { socket: net.Socket; closed: Promise<void>; received: Buffer[] } {
  const socket = net.connect({ host: '127.0.0.1', port });
  const received: Buffer[] = [];
  socket.on('data', (d) => received.push(d));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  cleanups.push(() => void socket.destroy());
  return { socket, closed, received };
}

describe('HA link: our master, our slave', () => {
  it('copies the log byte for byte from offset 0 across file rolls, and queues follow', async () => {
    const m = await masterWith(haConfig());
    const s = await slaveOf(m.port);
    await waitFor(() => m.ha.linkCount === 1 && s.client.isConnected, 5000, 'the link');
    for (let i = 0; i < 150; i++) await m.store.putMessage(makeMessage('H', i % 3, `m${i}-${'z'.repeat(i % 50)}`, { keys: `k${i}` }));
    const end = m.store.commitLog.writtenOffset;
    await waitFor(() => s.store.commitLog.writtenOffset === end, 10_000, 'the slave to catch up');
    const a = await m.store.commitLog.readForReplica(0, 4096);
    const b = await s.store.commitLog.readForReplica(0, 4096);
    expect(b!.equals(a!)).toBe(true);
    for (const q of [0, 1, 2]) expect(await s.store.getQueueEntries('H', q, 0, 200)).toEqual(await m.store.getQueueEntries('H', q, 0, 200));
    expect(m.ha.connectionInfo().haConnectionInfo[0]).toMatchObject({ slaveAckOffset: end, diff: 0, inSync: true });
  });

  it('ships frames of at most haTransferBatchSize, contiguous, whatever it read at once', async () => {
    const m = await masterWith(haConfig({ haTransferBatchSize: 100 }));
    for (let i = 0; i < 40; i++) await m.store.putMessage(makeMessage('F', 0, `f${i}-${'q'.repeat(70)}`));
    const end = m.store.commitLog.writtenOffset;
    const peer = rawPeer(m.port);
    peer.socket.write(encodeReport(0));
    const frames: Array<{ offset: number; body: Buffer }> = [];
    const reader = new FrameReader(MAX_FRAME_BODY_BYTES, (reason) => frames.push({ offset: -1, body: Buffer.from(reason) }));
    peer.socket.on('data', (d: Buffer) => reader.push(d, { onHeader: () => true, onFrame: (offset, body) => (frames.push({ offset, body: Buffer.concat(body) }), true) }));
    const from = end - (end % 4096); // an empty slave starts at the start of the last file
    expect(end - from).toBeGreaterThan(1000);
    await waitFor(() => frames.reduce((n, f) => n + f.body.length, 0) >= end - from, 10_000, 'the last file');
    let next = from;
    for (const f of frames) {
      expect(f.offset).toBe(next);
      expect(f.body.length).toBeLessThanOrEqual(100);
      next += f.body.length;
    }
    expect(next).toBe(end);
    expect(frames.length).toBeGreaterThanOrEqual(Math.ceil((end - from) / 100));
    expect(Buffer.concat(frames.map((f) => f.body)).equals((await m.store.commitLog.readForReplica(from, end - from))!)).toBe(true);
  });

  it('an empty slave starts at the start of the master\'s last file', async () => {
    const m = await masterWith(haConfig());
    for (let i = 0; i < 80; i++) await m.store.putMessage(makeMessage('L', 0, `x${i}-${'y'.repeat(90)}`));
    const end = m.store.commitLog.writtenOffset;
    const s = await slaveOf(m.port);
    await waitFor(() => s.store.commitLog.writtenOffset === end, 10_000, 'the slave to catch up');
    expect(s.store.commitLog.minOffset).toBe(end - (end % 4096));
  });

  it('SYNC_MASTER (5.3.3, inSyncReplicas=2): SEND_OK only once the slave has the bytes', async () => {
    const m = await masterWith(haConfig({ brokerRole: 'SYNC_MASTER', inSyncReplicas: 2, slaveTimeout: 5000 }));
    const s = await slaveOf(m.port);
    await waitFor(() => m.ha.linkCount === 1, 5000, 'the link');
    for (let i = 0; i < 20; i++) {
      const r = await m.store.putMessage(makeMessage('S', 0, `sync-${i}`));
      expect(r.status).toBe('PUT_OK');
      expect(s.store.commitLog.writtenOffset).toBeGreaterThanOrEqual(r.commitLogOffset + r.wroteBytes);
    }
    // WAIT=false does not wait for the slave (answered once written).
    s.client.stop();
    await waitFor(() => m.ha.linkCount === 0, 5000, 'the link to end');
    const noWait = await m.store.putMessage({ ...makeMessage('S', 0, 'nowait'), waitStoreMsgOK: false });
    expect(noWait.status).toBe('PUT_OK');
  });

  it('SYNC_MASTER without a slave: 5.3.3 answers FLUSH_SLAVE_TIMEOUT after slaveTimeout (stored), 4.9.8 SLAVE_NOT_AVAILABLE at once', async () => {
    const config = haConfig({ brokerRole: 'SYNC_MASTER', inSyncReplicas: 2, slaveTimeout: 300 });
    const m = await masterWith(config);
    const t0 = Date.now();
    const r = await m.store.putMessage(makeMessage('T', 0, 'alone'));
    const waited = Date.now() - t0;
    expect(r.status).toBe('FLUSH_SLAVE_TIMEOUT');
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(m.store.getMaxOffsetInQueue('T', 0)).toBe(1);
    config.inSyncReplicas = 1; // 5.3.3 default: no wait at all
    expect((await m.store.putMessage(makeMessage('T', 0, 'default'))).status).toBe('PUT_OK');
    config.haSemantics = '4.9.8';
    const t1 = Date.now();
    const r2 = await m.store.putMessage(makeMessage('T', 0, 'old'));
    expect(r2.status).toBe('SLAVE_NOT_AVAILABLE');
    expect(Date.now() - t1).toBeLessThan(250);
  });

  it('4.9.8 semantics: a linked slave acks, a silent one gives FLUSH_SLAVE_TIMEOUT', async () => {
    const config = haConfig({ brokerRole: 'SYNC_MASTER', haSemantics: '4.9.8', slaveTimeout: 400 });
    const m = await masterWith(config);
    const s = await slaveOf(m.port);
    await waitFor(() => m.ha.linkCount === 1, 5000, 'the link');
    expect((await m.store.putMessage(makeMessage('O', 0, 'acked'))).status).toBe('PUT_OK');
    // A peer that links but never reports again: the master's only link is now silent.
    s.client.stop();
    await waitFor(() => m.ha.linkCount === 0, 5000, 'the link to end');
    const silent = rawPeer(m.port);
    silent.socket.write(encodeReport(m.store.commitLog.writtenOffset));
    await waitFor(() => m.ha.linkCount === 1, 5000, 'the silent link');
    const r = await m.store.putMessage(makeMessage('O', 0, 'unacked'));
    expect(r.status).toBe('FLUSH_SLAVE_TIMEOUT');
  });
});

describe('HA port: bad input closes the link with a log line and never touches the log', () => {
  it('master: negative, huge, beyond-the-end, backwards and unsent acks; a second link from one host', async () => {
    const { logger, lines } = capturingLogger();
    const m = await masterWith(haConfig(), logger);
    await m.store.putMessage(makeMessage('B', 0, 'one'));
    const end = m.store.commitLog.writtenOffset;
    const cases: Array<[string, Buffer[], RegExp]> = [
      ['negative', [encodeReport(-1)], /bad offset report -1/],
      ['huge', [Buffer.from('7fffffffffffffff', 'hex')], /out of range/],
      ['beyond the end', [encodeReport(end + 100)], /beyond this master's end/],
      ['backwards', [encodeReport(end), encodeReport(10)], /went back/],
      ['unsent', [encodeReport(0), encodeReport(end + 8)], /only bytes up to/],
    ];
    for (const [name, reports, reason] of cases) {
      const p = rawPeer(m.port);
      for (const r of reports) p.socket.write(r);
      await p.closed;
      expect(lines.some((l) => l.msg === 'HA: slave link closed' && reason.test(String(l.reason))), name).toBe(true);
    }
    expect(m.store.commitLog.writtenOffset).toBe(end);
    expect(m.ha.maxAckOffset).toBeLessThanOrEqual(end);
    // Two links from one host: the second is refused, the first stays.
    const first = rawPeer(m.port);
    first.socket.write(encodeReport(end));
    await waitFor(() => m.ha.linkCount === 1, 5000, 'the first link');
    const second = rawPeer(m.port);
    await second.closed;
    expect(lines.some((l) => /second link from a host/.test(String(l.msg)))).toBe(true);
    expect(m.ha.linkCount).toBe(1);
  });

  it('slave: a master shipping another offset, garbage, or bytes of another log is dropped; the log stays as it was', async () => {
    const { logger, lines } = capturingLogger();
    // A fake master that answers the first report with the given bytes.
    const replies: Buffer[] = [];
    const server = net.createServer((sock) => {
      sock.on('error', () => undefined);
      sock.once('data', () => sock.write(replies.shift() ?? Buffer.alloc(0)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as net.AddressInfo).port;
    // Seed the slave with one real record at 0.
    const m = await store('seed');
    await m.putMessage(makeMessage('G', 0, 'seed'));
    const seed = (await m.commitLog.readForReplica(0, 4096))!;
    const s = await slaveOf(port, 'slave', logger);
    expect(s.store.commitLog.appendReplicated(0, seed)).toBeUndefined();
    await s.store.commitLog.drain();
    const end = seed.length;
    const frame = (offset: number, body: Buffer) => Buffer.concat([encodeFrameHeader(offset, body.length), body]);
    // The last reply is a record of another log: it says it sits at 0, the slave would put it at `end`.
    replies.push(frame(end + 4, Buffer.alloc(8)), frame(end, Buffer.alloc(200, 0x5a)), frame(end, seed));
    for (const reason of [/ships offset/, /no record/, /says it is at/]) {
      await waitFor(() => lines.some((l) => reason.test(String(l.reason))), 20_000, `a log line matching ${reason}`);
    }
    expect(s.store.commitLog.appendOffset).toBe(end);
    expect(s.store.getMaxOffsetInQueue('G', 0)).toBe(1);
    expect(s.client.stats.refusedFrames).toBe(2);
  });
});
