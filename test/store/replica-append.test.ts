// A slave's commit log built from a master's bytes (CommitLogPort.readForReplica → appendReplicated): frames cut
// anywhere, records dispatched only when complete, files rolled at the master's BLANKs, bad frames refused whole.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DefaultMessageStore } from '../../src/store/index.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

let root: string;
const stores: DefaultMessageStore[] = [];

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  for (const s of stores.splice(0)) await s.shutdown();
  await removeDir(root);
});

async function open(name: string, extra: Parameters<typeof openStore>[1] = {}): Promise<DefaultMessageStore> {
  const s = await openStore(path.join(root, name), extra);
  stores.push(s);
  return s;
}

/** Deterministic frame sizes: 1, 2, 3, ... bytes up to `max`, cycling (covers cuts at every header field). */
function* cuts(max: number): Generator<number> {
  for (let n = 1; ; n = (n % max) + 1) yield n;
}

/** Ships everything the master wrote to the slave in frames of the given sizes (as the HA master would). */
async function ship(master: DefaultMessageStore, slave: DefaultMessageStore, sizes: Iterator<number>, from?: number): Promise<void> {
  let at = from ?? slave.commitLog.appendOffset;
  while (at < master.commitLog.writtenOffset) {
    const chunk = await master.commitLog.readForReplica(at, sizes.next().value as number);
    expect(chunk).not.toBeNull();
    const refused = slave.commitLog.appendReplicated(at, chunk!);
    expect(refused).toBeUndefined();
    at += chunk!.length;
  }
  await slave.commitLog.drain();
}

function fileBytes(store: DefaultMessageStore, from: number, to: number): Buffer {
  const dir = store.config.storePathCommitLog;
  const size = store.config.mappedFileSizeCommitLog;
  const parts: Buffer[] = [];
  for (let at = from; at < to; ) {
    const fileStart = at - (at % size);
    const file = path.join(dir, String(fileStart).padStart(20, '0'));
    const end = Math.min(to, fileStart + size);
    parts.push(fs.readFileSync(file).subarray(at - fileStart, end - fileStart));
    at = end;
  }
  return Buffer.concat(parts);
}

describe('replicated appends', () => {
  it('rebuilds the log byte for byte and the queues and index entry for entry, whatever the frame cuts', async () => {
    const IPV6 = Buffer.from('20010db8000000000000000000000001', 'hex');
    const master = await open('master');
    const slave = await open('slave', { brokerRole: 'SLAVE' });
    for (let i = 0; i < 120; i++) {
      // every fifth with IPv6 hosts: the header fields before the body move (sysFlag BORNHOST_V6 / STOREHOSTADDRESS_V6)
      const v6 = i % 5 === 4 ? { bornHost: IPV6, storeHost: IPV6 } : {};
      const r = await master.putMessage(makeMessage(`T${i % 3}`, i % 2, `body-${i}-${'x'.repeat(i * 7)}`, { keys: `k${i}`, tags: `t${i % 4}`, ...v6 }));
      expect(r.status).toBe('PUT_OK');
    }
    // 4 KiB files: the master rolled several times (BLANK + padding shipped as they are).
    expect(master.commitLog.files.length).toBeGreaterThan(3);
    await ship(master, slave, cuts(97));
    const end = master.commitLog.writtenOffset;
    expect(slave.commitLog.writtenOffset).toBe(end);
    expect(fileBytes(slave, 0, end).equals(fileBytes(master, 0, end))).toBe(true);
    for (const topic of ['T0', 'T1', 'T2']) {
      for (const q of [0, 1]) {
        expect(slave.getMaxOffsetInQueue(topic, q)).toBe(master.getMaxOffsetInQueue(topic, q));
        expect(await slave.getQueueEntries(topic, q, 0, 1000)).toEqual(await master.getQueueEntries(topic, q, 0, 1000));
      }
    }
    const q = await slave.queryMessage('T1', 'k7', 32, 0, Date.now() + 1000);
    expect(q.records.map((r) => r.toString('latin1'))).toEqual(
      (await master.queryMessage('T1', 'k7', 32, 0, Date.now() + 1000)).records.map((r) => r.toString('latin1')),
    );
  });

  it('dispatches a record only once all of it arrived', async () => {
    const master = await open('master');
    const slave = await open('slave', { brokerRole: 'SLAVE' });
    const r = await master.putMessage(makeMessage('P', 0, 'a'.repeat(300)));
    const all = (await master.commitLog.readForReplica(0, 1 << 20))!;
    expect(all.length).toBe(r.wroteBytes);
    expect(slave.commitLog.appendReplicated(0, all.subarray(0, 200))).toBeUndefined();
    await slave.commitLog.drain();
    expect(slave.commitLog.writtenOffset).toBe(200);
    expect(slave.getMaxOffsetInQueue('P', 0)).toBe(0);
    expect(slave.commitLog.appendReplicated(200, all.subarray(200))).toBeUndefined();
    await slave.commitLog.drain();
    expect(slave.getMaxOffsetInQueue('P', 0)).toBe(1);
    const got = await slave.getMessage('P', 0, 0, 32, 1 << 20);
    expect(got.records[0]!.equals(all)).toBe(true);
  });

  it('an empty slave starts at the start of the file the master ships first; queues start at their offsets', async () => {
    const master = await open('master');
    for (let i = 0; i < 60; i++) await master.putMessage(makeMessage('E', 0, `m${i}-${'y'.repeat(100)}`));
    const end = master.commitLog.writtenOffset;
    const size = master.config.mappedFileSizeCommitLog;
    const lastFile = end - (end % size);
    expect(lastFile).toBeGreaterThan(0);
    const slave = await open('slave', { brokerRole: 'SLAVE' });
    expect(slave.commitLog.appendReplicated(lastFile + 8, Buffer.alloc(8))?.refused).toMatch(/file start/);
    await ship(master, slave, cuts(501), lastFile);
    expect(slave.commitLog.minOffset).toBe(lastFile);
    const firstQueued = (await master.getQueueEntries('E', 0, 0, 1000)).find((e) => e.commitLogOffset >= lastFile)!;
    expect(slave.getMinOffsetInQueue('E', 0)).toBe(firstQueued.queueOffset);
    expect(slave.getMaxOffsetInQueue('E', 0)).toBe(60);
    const got = await slave.getMessage('E', 0, firstQueued.queueOffset, 32, 1 << 20);
    expect(got.status).toBe('FOUND');
  });

  it('refuses frames that do not continue its log, and appends nothing of them', async () => {
    const master = await open('master');
    const slave = await open('slave', { brokerRole: 'SLAVE' });
    for (let i = 0; i < 3; i++) await master.putMessage(makeMessage('R', 0, `r${i}`));
    const all = (await master.commitLog.readForReplica(0, 1 << 20))!;
    const first = all.readInt32BE(0);
    expect(slave.commitLog.appendReplicated(0, all.subarray(0, first))).toBeUndefined();
    // Not at our end.
    expect(slave.commitLog.appendReplicated(first + 1, all.subarray(first + 1))?.refused).toMatch(/ends at/);
    // Garbage where a record must start.
    expect(slave.commitLog.appendReplicated(first, Buffer.alloc(64, 0x41))?.refused).toMatch(/no record/);
    // A record that claims another position (the master's log diverged from ours).
    const moved = Buffer.from(all.subarray(first));
    moved.writeBigInt64BE(BigInt(first + 16), 28);
    expect(slave.commitLog.appendReplicated(first, moved)?.refused).toMatch(/says it is at/);
    // A frame in parts (as TCP cut it) whose second part is bad: nothing of the first part is taken either.
    const second = all.readInt32BE(first);
    const badTail = Buffer.from(all.subarray(first + 40, first + second + 8));
    badTail.writeUInt32BE(0x41414141, second - 40 + 4); // the next record's magic code
    expect(slave.commitLog.appendReplicated(first, [all.subarray(first, first + 40), badTail])?.refused).toMatch(/no record/);
    expect(slave.commitLog.appendOffset).toBe(first);
    // Past our file end (another mappedFileSizeCommitLog).
    expect(slave.commitLog.appendReplicated(first, Buffer.alloc(5000))?.refused).toMatch(/file end/);
    expect(slave.commitLog.appendOffset).toBe(first);
    // The right bytes are still taken afterwards, in parts cut anywhere.
    const rest = all.subarray(first);
    expect(slave.commitLog.appendReplicated(first, [rest.subarray(0, 3), rest.subarray(3, 50), rest.subarray(50)])).toBeUndefined();
    await slave.commitLog.drain();
    expect(slave.getMaxOffsetInQueue('R', 0)).toBe(3);
  });

  it('a slave refuses puts of its own; promoted, it drops a record received in part and appends after its last whole one', async () => {
    const master = await open('master');
    const slave = await open('slave', { brokerRole: 'SLAVE' });
    expect((await slave.putMessage(makeMessage('S', 0, 'x'))).status).toBe('SERVICE_NOT_AVAILABLE');
    await master.putMessage(makeMessage('S', 0, 'one'));
    const second = await master.putMessage(makeMessage('S', 0, 'two'));
    const all = (await master.commitLog.readForReplica(0, 1 << 20))!;
    expect(slave.commitLog.appendReplicated(0, all.subarray(0, second.commitLogOffset + 10))).toBeUndefined();
    await slave.commitLog.drain();
    await slave.setBrokerRole('ASYNC_MASTER');
    expect(slave.commitLog.appendOffset).toBe(second.commitLogOffset);
    const own = await slave.putMessage(makeMessage('S', 0, 'own'));
    expect([own.status, own.commitLogOffset, own.queueOffset]).toEqual(['PUT_OK', second.commitLogOffset, 1]);
    const got = await slave.getMessage('S', 0, 0, 32, 1 << 20);
    expect(got.records.map((r) => r.length)).toEqual([second.commitLogOffset, own.wroteBytes]);
  });

  it('survives a restart with a record received in part (recovery cuts it) and goes on from there', async () => {
    const master = await open('master');
    for (let i = 0; i < 5; i++) await master.putMessage(makeMessage('C', 0, `c${i}`));
    const all = (await master.commitLog.readForReplica(0, 1 << 20))!;
    const slaveDir = path.join(root, 'slave2');
    let slave = await openStore(slaveDir, { brokerRole: 'SLAVE' });
    expect(slave.commitLog.appendReplicated(0, all.subarray(0, all.length - 7))).toBeUndefined();
    await slave.shutdown();
    slave = await openStore(slaveDir, { brokerRole: 'SLAVE' });
    stores.push(slave);
    expect(slave.getMaxOffsetInQueue('C', 0)).toBe(4);
    const at = slave.commitLog.appendOffset;
    expect(at).toBe(all.length - all.readInt32BE(0));
    expect(slave.commitLog.appendReplicated(at, all.subarray(at))).toBeUndefined();
    await slave.commitLog.drain();
    expect(slave.getMaxOffsetInQueue('C', 0)).toBe(5);
  });
});
