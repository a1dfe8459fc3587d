// The DLedger commit log (src/ha/dledger/dledger-commit-log.ts) under the real store facade, over the test node
// (test/helpers/dledger-test-node.ts): appends as entries, offsets pos + 48, only committed entries dispatched (on a
// leader and a follower), the DLedger outcome of every put (4.9.8 and 5.3.3), recovery of the consume queues.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { putResultToResponse } from '../../../src/broker/processors/put-status.js';
import { ResponseCode } from '../../../src/common/response-code.js';
import { DLedgerCommitLog, dledgerCommitLogFactory } from '../../../src/ha/dledger/dledger-commit-log.js';
import { DLEDGER_ENTRY_HEADER_BYTES, DLedgerCode } from '../../../src/ha/dledger/types.js';
import { createMessageStore, decodeRecord, type DefaultMessageStore, type PutResult } from '../../../src/store/index.js';
import { LaidOutMemoryStore, TestDLedgerNode } from '../../helpers/dledger-test-node.js';
import { makeMessage, makeTempDir, removeDir } from '../../store/helpers.js';

const FILE_BYTES = 4096;
const CONFIG = { mappedFileSizeCommitLog: FILE_BYTES, mappedFileSizeConsumeQueue: 200, flushIntervalConsumeQueue: 50 };

let root: string;
const open: DefaultMessageStore[] = [];

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  for (const s of open.splice(0)) await s.shutdown();
  await removeDir(root);
});

async function openDLedger(
  mem: LaidOutMemoryStore, opts: { semantics?: '4.9.8' | '5.3.3'; leader?: boolean; master?: boolean; dir?: string } = {},
) {
  const node = new TestDLedgerNode(mem, 'n0', 'G', opts.leader ?? true);
  const store = createMessageStore({ storePathRootDir: opts.dir ?? root, ...CONFIG }, undefined, undefined,
    dledgerCommitLogFactory({ node, semantics: opts.semantics ?? '5.3.3' }));
  await store.start();
  open.push(store);
  const log = store.commitLog as DLedgerCommitLog;
  if (opts.master ?? opts.leader ?? true) log.setMasterReady(true);
  return { store, node, log };
}

async function shutdown(store: DefaultMessageStore): Promise<void> {
  open.splice(open.indexOf(store), 1);
  await store.shutdown();
}

function bodies(res: { records: Buffer[] }): string[] {
  return res.records.map((r) => decodeRecord(r).body.toString());
}

describe('DLedger commit log: appends', () => {
  it('stores each message as one entry whose record says PHYSICALOFFSET = pos + 48, and reads it back by that offset', async () => {
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store } = await openDLedger(mem);
    const puts: PutResult[] = [];
    // ~150-byte entries: the 4 KiB files fill and end with DLedger blanks
    for (let i = 0; i < 80; i++) puts.push(await store.putMessage(makeMessage('T', i % 2, `body-${i}`, { tags: 'A', keys: `k${i}` })));
    expect(puts.every((p) => p.status === 'PUT_OK')).toBe(true);
    expect(mem.endIndex).toBe(79);
    expect(mem.dataFiles.length).toBeGreaterThan(2);
    for (let i = 0; i < 80; i++) {
      const entry = mem.get(i)!;
      expect(puts[i]!.commitLogOffset).toBe(entry.pos + DLEDGER_ENTRY_HEADER_BYTES);
      const rec = decodeRecord(entry.body);
      expect(rec.commitLogOffset).toBe(entry.pos + DLEDGER_ENTRY_HEADER_BYTES);
      expect([rec.queueId, rec.queueOffset]).toEqual([i % 2, Math.floor(i / 2)]);
      expect(puts[i]!.queueOffset).toBe(Math.floor(i / 2));
    }
    // the consume queues hold inner-record offsets; pulls and lookups read the records there
    const q0 = await store.getQueueEntries('T', 0, 0, 100);
    expect(q0.map((e) => e.commitLogOffset)).toEqual(puts.filter((_, i) => i % 2 === 0).map((p) => p.commitLogOffset));
    // a pull takes at most 32 records (maxTransferCountOnMessageInMemory)
    const pulled = [...bodies(await store.getMessage('T', 1, 0, 100, 1 << 20)), ...bodies(await store.getMessage('T', 1, 32, 100, 1 << 20))];
    expect(pulled).toEqual(Array.from({ length: 40 }, (_, i) => `body-${2 * i + 1}`));
    expect(decodeRecord((await store.lookMessageByOffset(puts[33]!.commitLogOffset))!).body.toString()).toBe('body-33');
    expect((await store.queryMessage('T', 'k7', 10, 0, Date.now() + 1000)).records).toHaveLength(1);
    // max = end of the last committed entry (a header start, no +48); min = the first entry's start
    expect(store.getMaxPhyOffset()).toBe(mem.committedPos);
    expect(store.getMaxPhyOffset()).toBe(mem.get(79)!.pos + mem.get(79)!.size);
    expect(store.getMinPhyOffset()).toBe(0);
  });

  it('a batch is one entry per message with consecutive queue offsets', async () => {
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store } = await openDLedger(mem);
    await store.putMessage(makeMessage('B', 0, 'first'));
    const put = await store.putMessages([0, 1, 2].map((i) => makeMessage('B', 0, `batch-${i}`)));
    expect(put.status).toBe('PUT_OK');
    expect(put.messageCount).toBe(3);
    expect(put.queueOffset).toBe(1);
    expect(put.commitLogOffsets).toEqual([1, 2, 3].map((i) => mem.get(i)!.pos + DLEDGER_ENTRY_HEADER_BYTES));
    expect(bodies(await store.getMessage('B', 0, 0, 32, 1 << 20))).toEqual(['first', 'batch-0', 'batch-1', 'batch-2']);
    const tx = await store.putMessages([makeMessage('B', 0, 'x', { sysFlag: 0x4 }), makeMessage('B', 0, 'y', { sysFlag: 0x4 })]);
    expect(tx.status).toBe('MESSAGE_ILLEGAL');
    expect(mem.endIndex).toBe(3);
  });

  it('dispatches only committed entries, in log order, and answers the put once its entry is committed and dispatched', async () => {
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store, node } = await openDLedger(mem);
    node.autoCommit = false;
    const p1 = store.putMessage(makeMessage('C', 0, 'one'));
    const p2 = store.putMessage(makeMessage('C', 0, 'two'));
    let answered = 0;
    void p1.then(() => answered++);
    void p2.then(() => answered++);
    await new Promise((r) => setTimeout(r, 100));
    // appended with queue offsets 0 and 1, nothing committed: nothing to read, the log's end has not moved
    expect(mem.endIndex).toBe(1);
    expect([decodeRecord(mem.get(0)!.body).queueOffset, decodeRecord(mem.get(1)!.body).queueOffset]).toEqual([0, 1]);
    expect(answered).toBe(0);
    expect(store.getMaxOffsetInQueue('C', 0)).toBe(0);
    expect(store.getMaxPhyOffset()).toBe(0);
    expect((await store.getMessage('C', 0, 0, 32, 1 << 20)).records).toHaveLength(0);
    node.commitUpTo(0);
    expect((await p1).status).toBe('PUT_OK');
    expect(store.getMaxOffsetInQueue('C', 0)).toBe(1);
    expect(bodies(await store.getMessage('C', 0, 0, 32, 1 << 20))).toEqual(['one']);
    expect(answered).toBe(1);
    node.commitUpTo(1);
    expect((await p2).status).toBe('PUT_OK');
    expect(bodies(await store.getMessage('C', 0, 0, 32, 1 << 20))).toEqual(['one', 'two']);
  });

  it('a follower refuses puts, keeps pushed entries undispatched until the commit index passes them', async () => {
    // entries as a leader (another member) writes them: its hook set PHYSICALOFFSET, positions follow its files
    const leaderMem = new LaidOutMemoryStore(FILE_BYTES);
    const leaderDir = await makeTempDir();
    const leader = await openDLedger(leaderMem, { dir: leaderDir });
    for (let i = 0; i < 30; i++) await leader.store.putMessage(makeMessage('F', 0, `f-${i}`));
    await shutdown(leader.store);
    await removeDir(leaderDir);

    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store, node } = await openDLedger(mem, { leader: false });
    node.becomeFollower('n1', 1);
    expect((await store.putMessage(makeMessage('F', 0, 'no'))).status).toBe('OS_PAGE_CACHE_BUSY');
    expect(mem.endIndex).toBe(-1);
    for (let i = 0; i < 30; i++) node.receive(leaderMem.get(i)!);
    expect(mem.writePos).toBe(leaderMem.writePos);
    await new Promise((r) => setTimeout(r, 50));
    expect(store.getMaxOffsetInQueue('F', 0)).toBe(0);
    node.commitUpTo(19);
    await waitUntil(() => store.getMaxOffsetInQueue('F', 0) === 20);
    node.commitUpTo(29);
    await waitUntil(() => store.getMaxOffsetInQueue('F', 0) === 30);
    expect(bodies(await store.getMessage('F', 0, 0, 64, 1 << 20))).toEqual(Array.from({ length: 30 }, (_, i) => `f-${i}`));
    expect(store.getMaxPhyOffset()).toBe(leaderMem.committedPos);
  });
});

async function waitUntil(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('DLedger commit log: outcomes (protocol/dledger.md §5.6)', () => {
  const cases: Array<{ how: 'refuse' | 'ack'; code: number; v498: [string, number, string]; v533: [string, number, string] }> = [
    { how: 'refuse', code: DLedgerCode.NOT_LEADER, v498: ['OS_PAGE_CACHE_BUSY', 1, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'], v533: ['OS_PAGE_CACHE_BUSY', 2, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'] },
    { how: 'refuse', code: DLedgerCode.LEADER_PENDING_FULL, v498: ['OS_PAGE_CACHE_BUSY', 1, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'], v533: ['OS_PAGE_CACHE_BUSY', 2, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'] },
    { how: 'refuse', code: DLedgerCode.LEADER_TRANSFERRING, v498: ['OS_PAGE_CACHE_BUSY', 1, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'], v533: ['OS_PAGE_CACHE_BUSY', 2, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'] },
    { how: 'refuse', code: DLedgerCode.DISK_FULL, v498: ['OS_PAGE_CACHE_BUSY', 1, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'], v533: ['OS_PAGE_CACHE_BUSY', 2, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'] },
    { how: 'ack', code: DLedgerCode.WAIT_QUORUM_ACK_TIMEOUT, v498: ['OS_PAGE_CACHE_BUSY', 1, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'], v533: ['IN_SYNC_REPLICAS_NOT_ENOUGH', 1, 'in-sync replicas not enough'] },
    { how: 'ack', code: DLedgerCode.LEADER_PENDING_FULL, v498: ['OS_PAGE_CACHE_BUSY', 1, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'], v533: ['OS_PAGE_CACHE_BUSY', 2, '[PC_SYNCHRONIZED]broker busy, start flow control for a while'] },
    { how: 'ack', code: DLedgerCode.INCONSISTENT_LEADER, v498: ['SERVICE_NOT_AVAILABLE', 14, ''], v533: ['SERVICE_NOT_AVAILABLE', 14, ''] },
    { how: 'ack', code: DLedgerCode.NOT_LEADER, v498: ['SERVICE_NOT_AVAILABLE', 14, ''], v533: ['SERVICE_NOT_AVAILABLE', 14, ''] },
    { how: 'ack', code: DLedgerCode.DISK_FULL, v498: ['SERVICE_NOT_AVAILABLE', 14, ''], v533: ['SERVICE_NOT_AVAILABLE', 14, ''] },
    { how: 'ack', code: DLedgerCode.TERM_CHANGED, v498: ['UNKNOWN_ERROR', 1, 'UNKNOWN_ERROR'], v533: ['UNKNOWN_ERROR', 1, 'UNKNOWN_ERROR'] },
    { how: 'ack', code: DLedgerCode.INTERNAL_ERROR, v498: ['UNKNOWN_ERROR', 1, 'UNKNOWN_ERROR'], v533: ['UNKNOWN_ERROR', 1, 'UNKNOWN_ERROR'] },
  ];
  for (const semantics of ['4.9.8', '5.3.3'] as const) {
    it(`maps every DLedger outcome as the official ${semantics} broker, taking queue offsets only for appended entries`, async () => {
      const mem = new LaidOutMemoryStore(FILE_BYTES);
      const { store, node } = await openDLedger(mem, { semantics });
      let nextQueueOffset = 0;
      for (const c of cases) {
        if (c.how === 'refuse') node.refuseNext(c.code);
        else node.failNextAck(c.code);
        const endBefore = mem.endIndex;
        const res = await store.putMessage(makeMessage('M', 0, `${c.how}-${c.code}`));
        const [status, code, remark] = semantics === '4.9.8' ? c.v498 : c.v533;
        expect(res.status, `${c.how} ${c.code}`).toBe(status);
        const response = putResultToResponse(res, semantics);
        expect(response.code, `${c.how} ${c.code}`).toBe(code);
        if (remark) expect(response.remark).toBe(remark);
        // refused before the append: nothing written, no offset taken; written: the offset is used (§8.16)
        expect(mem.endIndex).toBe(c.how === 'refuse' ? endBefore : endBefore + 1);
        if (c.how === 'ack') expect(decodeRecord(mem.get(mem.endIndex)!.body).queueOffset).toBe(nextQueueOffset++);
      }
      const ok = await store.putMessage(makeMessage('M', 0, 'ok'));
      expect([ok.status, ok.queueOffset, putResultToResponse(ok, semantics).code]).toEqual(['PUT_OK', nextQueueOffset, ResponseCode.SUCCESS]);
    });
  }

  it('refuses puts on a leader whose broker is not master yet (queue offsets not rebuilt), and a batch the node cut', async () => {
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store, node, log } = await openDLedger(mem, { master: false });
    expect(node.role).toBe('LEADER');
    expect((await store.putMessage(makeMessage('R', 0, 'early'))).status).toBe('OS_PAGE_CACHE_BUSY');
    expect(mem.endIndex).toBe(-1);
    log.setMasterReady(true);
    // the node refuses the second entry of a batch: the first stays (it will commit), its queue offset is kept
    node.refuseNext(DLedgerCode.LEADER_PENDING_FULL, 1);
    expect((await store.putMessages([makeMessage('R', 0, 'a'), makeMessage('R', 0, 'b')])).status).toBe('OS_PAGE_CACHE_BUSY');
    expect(mem.endIndex).toBe(0);
    const next = await store.putMessage(makeMessage('R', 0, 'c'));
    expect([next.status, next.queueOffset]).toEqual(['PUT_OK', 1]);
    expect(bodies(await store.getMessage('R', 0, 0, 32, 1 << 20))).toEqual(['a', 'c']);
  });
});

describe('DLedger commit log: recovery', () => {
  it('restarts on the same data: queues kept, a lost consume-queue directory rebuilt from committed entries only', async () => {
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const first = await openDLedger(mem);
    for (let i = 0; i < 40; i++) await first.store.putMessage(makeMessage('R', i % 3, `r-${i}`, { keys: `key-${i}` }));
    // two more entries reach the log but not the quorum (the leader is cut off, then steps down)
    first.node.autoCommit = false;
    const lost = [first.store.putMessage(makeMessage('R', 0, 'uncommitted-a')), first.store.putMessage(makeMessage('R', 0, 'uncommitted-b'))];
    await waitUntil(() => mem.endIndex === 41);
    first.node.becomeFollower('n1');
    expect((await Promise.all(lost)).map((r) => r.status)).toEqual(['UNKNOWN_ERROR', 'UNKNOWN_ERROR']);
    await shutdown(first.store);
    expect([mem.committedIndex, mem.endIndex]).toEqual([39, 41]);

    const second = await openDLedger(mem, { master: false });
    expect([0, 1, 2].map((q) => second.store.getMaxOffsetInQueue('R', q))).toEqual([14, 13, 13]);
    await shutdown(second.store);

    fs.rmSync(path.join(root, 'consumequeue'), { recursive: true });
    fs.rmSync(path.join(root, 'index'), { recursive: true });
    const third = await openDLedger(mem, { master: false });
    expect([0, 1, 2].map((q) => third.store.getMaxOffsetInQueue('R', q))).toEqual([14, 13, 13]);
    expect(bodies(await third.store.getMessage('R', 0, 0, 32, 1 << 20))).toEqual(Array.from({ length: 14 }, (_, i) => `r-${3 * i}`));
    expect((await third.store.queryMessage('R', 'key-38', 10, 0, Date.now() + 1000)).records).toHaveLength(1);
    // the tail commits later (a new leader holds it): dispatched then, with the queue offsets it was written with
    third.node.commitUpTo(41);
    await waitUntil(() => third.store.getMaxOffsetInQueue('R', 0) === 16);
    expect(bodies(await third.store.getMessage('R', 0, 14, 32, 1 << 20))).toEqual(['uncommitted-a', 'uncommitted-b']);
  });

  it('a new leader becomes ready only once its whole log is committed and dispatched; gives up when it stops leading', async () => {
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store, node, log } = await openDLedger(mem);
    await store.putMessage(makeMessage('L', 0, 'one'));
    node.autoCommit = false;
    void store.putMessage(makeMessage('L', 0, 'two'));
    await waitUntil(() => mem.endIndex === 1);
    node.becomeCandidate();
    node.becomeLeader();
    let ready: boolean | undefined;
    void log.waitLeaderCaughtUp().then((v) => (ready = v));
    await new Promise((r) => setTimeout(r, 250));
    expect(ready).toBeUndefined();
    node.commitUpTo(1);
    await waitUntil(() => ready !== undefined);
    expect(ready).toBe(true);
    expect(log.dispatchBehindBytes).toBe(0);
    expect(store.getMaxOffsetInQueue('L', 0)).toBe(2);

    node.autoCommit = false;
    log.setMasterReady(true);
    void store.putMessage(makeMessage('L', 0, 'three'));
    await waitUntil(() => mem.endIndex === 2);
    node.becomeCandidate();
    node.becomeLeader();
    const pending = log.waitLeaderCaughtUp();
    node.becomeFollower('n1');
    expect(await pending).toBe(false);
  });
});

describe('DLedger commit log: migration from a classic commit log (§5.4)', () => {
  it('keeps the classic files for reads, seals them with a BLANK and continues offsets and queues in DLedger entries', async () => {
    const classic = createMessageStore({ storePathRootDir: root, ...CONFIG });
    await classic.start();
    const before: PutResult[] = [];
    for (let i = 0; i < 45; i++) before.push(await classic.putMessage(makeMessage('Mig', i % 2, `classic-${i}`, { keys: `ck-${i}` })));
    const classicEnd = classic.getMaxPhyOffset();
    await classic.shutdown();
    expect(classicEnd % FILE_BYTES).not.toBe(0);
    const divided = classicEnd - (classicEnd % FILE_BYTES) + FILE_BYTES;
    // the files holding data, and the preallocated next one (empty)
    const onDisk = fs.readdirSync(path.join(root, 'commitlog')).sort();
    const classicFiles = onDisk.filter((f) => Number(f) < divided);
    expect(classicFiles.length).toBeGreaterThan(1);
    expect(onDisk.length).toBe(classicFiles.length + 1);

    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const first = await openDLedger(mem);
    const log = first.store.commitLog as DLedgerCommitLog;
    expect(log.dividedOffset).toBe(divided);
    expect(first.store.getMinPhyOffset()).toBe(0);
    // the classic log now ends with BLANK (size = bytes left, magic 0xCBD43194) at its old written end
    const lastFile = fs.readFileSync(path.join(root, 'commitlog', classicFiles[classicFiles.length - 1]!));
    expect(Number(classicFiles[classicFiles.length - 1])).toBe(divided - FILE_BYTES);
    const at = classicEnd % FILE_BYTES;
    expect([lastFile.readInt32BE(at), lastFile.readUInt32BE(at + 4)]).toEqual([FILE_BYTES - at, 0xcbd43194]);
    // no classic file at or beyond the divide (the preallocated next one is gone)
    expect(fs.readdirSync(path.join(root, 'commitlog')).map(Number).every((o) => o < divided)).toBe(true);

    const after: PutResult[] = [];
    for (let i = 45; i < 60; i++) after.push(await first.store.putMessage(makeMessage('Mig', i % 2, `dledger-${i}`, { keys: `dk-${i}` })));
    expect(after.every((p) => p.status === 'PUT_OK')).toBe(true);
    expect(mem.get(0)!.pos).toBe(divided);
    expect(after[0]!.commitLogOffset).toBe(divided + DLEDGER_ENTRY_HEADER_BYTES);
    // queue 1 had 22 classic messages (1, 3, .., 43), queue 0 had 23; message 45 goes to queue 1
    expect(after[0]!.queueOffset).toBe(22);
    const expected = (q: number) => Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 2 === q).map((i) => (i < 45 ? `classic-${i}` : `dledger-${i}`));
    const readAll = async (store: DefaultMessageStore, q: number) => [
      ...bodies(await store.getMessage('Mig', q, 0, 32, 1 << 20)), ...bodies(await store.getMessage('Mig', q, 32, 32, 1 << 20)),
    ];
    expect(await readAll(first.store, 0)).toEqual(expected(0));
    expect(await readAll(first.store, 1)).toEqual(expected(1));
    expect(decodeRecord((await first.store.lookMessageByOffset(before[7]!.commitLogOffset))!).body.toString()).toBe('classic-7');
    // retention sees the classic files first, then the DLedger ones
    expect(log.files.map((f) => f.fromOffset)).toEqual([...classicFiles.map(Number), ...mem.dataFiles.map((f) => f.fromOffset)]);
    await shutdown(first.store);

    // both logs on disk now: a restart reads the classic files without recovering them, and a lost consume-queue
    // directory is rebuilt from both
    fs.rmSync(path.join(root, 'consumequeue'), { recursive: true });
    const second = await openDLedger(mem);
    expect((second.store.commitLog as DLedgerCommitLog).dividedOffset).toBe(divided);
    expect(await readAll(second.store, 0)).toEqual(expected(0));
    expect(await readAll(second.store, 1)).toEqual(expected(1));
    expect((await second.store.queryMessage('Mig', 'ck-3', 10, 0, Date.now() + 1000)).records).toHaveLength(1);
    const next = await second.store.putMessage(makeMessage('Mig', 0, 'dledger-60'));
    expect([next.status, next.queueOffset]).toEqual(['PUT_OK', 30]);
  });

  it('retention deletes the classic files first, then DLedger data files, never the newest; queues follow the min', async () => {
    const classic = createMessageStore({ storePathRootDir: root, ...CONFIG });
    await classic.start();
    for (let i = 0; i < 45; i++) await classic.putMessage(makeMessage('Ret', 0, `classic-${i}`));
    await classic.shutdown();
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store, log } = await openDLedger(mem);
    for (let i = 0; i < 90; i++) await store.putMessage(makeMessage('Ret', 0, `dledger-${i}`));
    const classicCount = log.files.length - mem.dataFiles.length;
    const dataBefore = mem.dataFiles.length;
    expect(classicCount).toBeGreaterThan(1);
    expect(dataBefore).toBeGreaterThan(2);
    expect(classicCount + dataBefore - 1).toBeLessThanOrEqual(10); // deleteFileBatchMax
    // every file expired; the disk is fine: what retention does when the hour comes
    store.cleaner.env = { ...store.cleaner.env, fileMtimeMs: async () => 0 };
    const deleted = await store.cleaner.deleteExpiredCommitLogFiles(3600_000, false);
    expect(deleted).toBe(classicCount + dataBefore - 1);
    expect(mem.dataFiles).toHaveLength(1);
    expect(fs.readdirSync(path.join(root, 'commitlog'))).toEqual([]);
    expect(log.files.map((f) => f.fromOffset)).toEqual(mem.dataFiles.map((f) => f.fromOffset));
    expect(store.getMinPhyOffset()).toBe(mem.minOffset);
    // the queue's min moved past everything deleted; what is left reads from there
    const min = store.getMinOffsetInQueue('Ret', 0);
    const first = decodeRecord((await store.getMessage('Ret', 0, min, 1, 1 << 20)).records[0]!);
    expect(first.commitLogOffset).toBeGreaterThanOrEqual(mem.minOffset);
    expect(first.body.toString()).toBe(`dledger-${min - 45}`);
    expect(mem.get(mem.endIndex)).not.toBeNull();
  });

  it('drops classic files that hold no data and starts the DLedger log at their start', async () => {
    fs.mkdirSync(path.join(root, 'commitlog'), { recursive: true });
    fs.writeFileSync(path.join(root, 'commitlog', '00000000000000000000'), Buffer.alloc(FILE_BYTES));
    const mem = new LaidOutMemoryStore(FILE_BYTES);
    const { store, log } = await openDLedger(mem);
    expect(fs.readdirSync(path.join(root, 'commitlog'))).toEqual([]);
    expect(log.dividedOffset).toBe(-1);
    const put = await store.putMessage(makeMessage('E', 0, 'first'));
    expect(put.commitLogOffset).toBe(DLEDGER_ENTRY_HEADER_BYTES);
  });
});
