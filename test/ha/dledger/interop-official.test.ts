// Interop with the official DLedger 0.3.1.2 inside two official Apache RocketMQ 5.3.3 brokers (protocol/dledger.md
// §7.1): one of our nodes (in-memory store) joins their group as n2. It follows the official leader and receives a
// message sent through it with the stock mqadmin; then the official leader is killed with SIGKILL, our node takes
// over (fast failover, or a leadership transfer from the official survivor if that one won), and the official
// follower accepts our pushes: our appends are acknowledged by its quorum and its broker dispatches the records.
//
// About 100 s on a 2-core box (two JVM brokers start one after the other). Runs only when asked
// (RMQ_DLEDGER_OFFICIAL=1 or DLEDGER_INTEROP=1; it fetches the official jars with Maven if compat/.cache lacks them):
// `npm run test:dledger-official` runs it with the store's move-both-ways test, `npm run test:dledger-interop` alone.
// In the default suite it would run or skip depending on whether an earlier compat run left the jars cached. Frames the official members
// send to our node go through the capture proxy (compat/capture/capture-proxy.mjs); DLEDGER_CAPTURE=FILE keeps them
// (protocol/vectors/dledger-official-*.json were extracted from such a file by compat/capture/extract-dledger-vectors.mjs).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../../../src/common/logger.js';
import { DLedgerRequestCode, DLedgerResponseCode } from '../../../src/ha/dledger/codes.js';
import { DLedgerNode } from '../../../src/ha/dledger/node.js';
import { PeerRpcClient } from '../../../src/ha/dledger/peer-rpc.js';
import { decodeBase, encodeLeadershipTransferRequest } from '../../../src/ha/dledger/protocol.js';
import { DLEDGER_ENTRY_HEADER_BYTES } from '../../../src/ha/dledger/types.js';
import { RemotingClient } from '../../../src/remoting/client.js';
import { createRequest } from '../../../src/remoting/command.js';
import { RecordPos, decodeRecord, encodeRecord } from '../../../src/store/record.js';
import { MemoryDLedgerStore } from '../../helpers/memory-dledger-store.js';
import { runScript, tail } from '../../helpers/compat.js';
import { GROUP, nodeConfig, waitFor } from './cluster.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const OFFICIAL = 'compat/official/official.sh';
const hasJava = spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
const asked = process.env.DLEDGER_INTEROP === '1' || process.env.RMQ_DLEDGER_OFFICIAL === '1';
const skipReason = !asked
  ? '(skipped: set RMQ_DLEDGER_OFFICIAL=1 — npm run test:dledger-official)'
  : !hasJava
    ? '(skipped: java is not on the PATH)'
    : null;

const logger = process.env.DLEDGER_INTEROP_LOG ? createLogger(process.env.DLEDGER_INTEROP_LOG) : silentLogger();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // best effort: every process must go, whatever failed before
    }
  }
}, 120_000);

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '0.0.0.0', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** `n` distinct free ports below 32768 (official.sh's advice), each with its neighbours ±2 free too. */
async function pickPorts(n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const p = 20000 + Math.floor(Math.random() * 11000);
    if (out.some((q) => Math.abs(q - p) < 4)) continue;
    let ok = true;
    for (const q of [p - 2, p - 1, p, p + 1]) if (!(await portFree(q))) ok = false;
    if (ok) out.push(p);
  }
  return out;
}

/** A standard commit-log record for `topic`/queue 0 (the body a broker appends as one DLedger entry). */
function record(topic: string, body: string, queueOffset: number): Buffer {
  const ip = Buffer.from([127, 0, 0, 1]);
  return encodeRecord({
    topic, queueId: 0, flag: 0, body: Buffer.from(body), propertiesString: '', tagsCode: 0, sysFlag: 0,
    bornTimestamp: Date.now(), bornHost: { ip, port: 40000 }, storeHost: { ip, port: 10911 }, reconsumeTimes: 0, preparedTransactionOffset: 0,
  }, queueOffset, 0, Date.now());
}

/** The broker's append hook (S/dledger/DLedgerCommitLog): PHYSICALOFFSET = entry pos + 48. */
function physicalOffsetHook(entryBytes: Buffer, pos: number): void {
  entryBytes.writeBigInt64BE(BigInt(pos + DLEDGER_ENTRY_HEADER_BYTES), DLEDGER_ENTRY_HEADER_BYTES + RecordPos.PHYSICAL_OFFSET);
}

describe.skipIf(skipReason !== null)(`interop with official DLedger members (5.3.3) ${skipReason ?? ''}`, () => {
  it('follows an official leader, takes over when it dies, and official followers accept our pushes', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dledger-interop-'));
    cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const [ns0, ns1, b0, b1, p0, p1, p2, x2] = await pickPorts(8);
    const dirs = [path.join(tmp, 'n0'), path.join(tmp, 'n1')];
    const brokerPorts = [b0!, b1!];
    // The official members reach n2 through the capture proxy (x2); our node reaches them directly, so a dead
    // leader's port refuses connections (what the fast failover checks).
    const officialPeers = `n0-127.0.0.1:${p0};n1-127.0.0.1:${p1};n2-127.0.0.1:${x2}`;
    const ourPeers = `n0-127.0.0.1:${p0};n1-127.0.0.1:${p1};n2-127.0.0.1:${p2}`;
    const captureFile = process.env.DLEDGER_CAPTURE ?? path.join(tmp, 'frames.jsonl');
    const proxy = spawn(process.execPath, [path.join(ROOT, 'compat/capture/capture-proxy.mjs'), '--out', captureFile,
      '--map', `n2=127.0.0.1:${x2}>127.0.0.1:${p2}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanups.push(() => proxy.kill('SIGTERM'));
    await new Promise<void>((resolve) => proxy.stdout!.on('data', (b: Buffer) => b.toString().includes('ready') && resolve()));

    // Our n2 first (it stays a candidate alone), then the official members one at a time.
    const store = new MemoryDLedgerStore(67_108_864); // official.sh's mappedFileSizeCommitLog
    store.loadSync(0);
    const node = new DLedgerNode(nodeConfig('n2', ourPeers, { fastFailoverOnLeaderReset: true }), store, logger, { bindHost: '127.0.0.1' });
    await node.start();
    cleanups.push(() => node.stop());
    const started = Date.now();
    for (const i of [0, 1]) {
      cleanups.push(() => runScript(OFFICIAL, ['stop', dirs[i]!], 60_000));
      const res = await runScript(OFFICIAL, ['start', '5.3.3', dirs[i]!, String([ns0, ns1][i]), String(brokerPorts[i])], 300_000, {
        OFFICIAL_BROKER_NAMESRV: i === 0 ? `127.0.0.1:${ns0}` : `127.0.0.1:${ns1};127.0.0.1:${ns0}`,
        OFFICIAL_BROKER_EXTRA: [`brokerName=${GROUP}`, 'enableDLegerCommitLog=true', `dLegerGroup=${GROUP}`,
          `dLegerPeers=${officialPeers}`, `dLegerSelfId=n${i}`].join('\n'),
      });
      expect(res.code, tail(res.output)).toBe(0);
    }
    console.log(`[interop] official members up after ${Math.round((Date.now() - started) / 1000)} s`);

    // 1. Our node follows an official leader. Ours started first, so it may have won the first election with n0:
    //    then it hands leadership to n0 (LEADERSHIP_TRANSFER to an official transferee).
    await waitFor('a leader in the group', () => node.role === 'LEADER' || (node.role === 'FOLLOWER' && node.leaderId !== null), 60_000);
    if (node.role === 'LEADER') {
      console.log('[interop] our node won the first election; transferring to n0');
      expect(await node.transferLeadership('n0')).toBe(DLedgerResponseCode.SUCCESS);
    }
    const officialLeader = await waitFor('our node following an official leader', () =>
      node.role === 'FOLLOWER' && (node.leaderId === 'n0' || node.leaderId === 'n1') ? node.leaderId : null, 60_000);
    const li = officialLeader === 'n0' ? 0 : 1;
    const leaderBroker = `127.0.0.1:${brokerPorts[li]}`;

    // 2. A message sent through the official leader with the stock mqadmin reaches our log and commits there.
    const mq = { MQADMIN_VERSION: '5.3.3' };
    const topic = `DLedgerInterop${process.pid}`;
    const created = await runScript('compat/mqadmin/run.sh', ['updateTopic', '-b', leaderBroker, '-t', topic, '-r', '1', '-w', '1'], 120_000, mq);
    expect(created.output, tail(created.output)).toMatch(/success/i);
    // Two messages: the first reaches a fresh follower through COMPARE → TRUNCATE(0), the second as an APPEND push.
    for (const text of ['hello-from-official', 'hello-again-from-official']) {
      const sent = await runScript('compat/mqadmin/run.sh', ['sendMessage', '-n', `127.0.0.1:${ns0}`, '-t', topic, '-p', text], 120_000, mq);
      expect(sent.output, tail(sent.output)).toMatch(/SEND_OK/);
    }
    const received = await waitFor('both official messages in our log, committed', () => {
      const ours = store.all().filter((e) => decodeRecord(e.body).topic === topic);
      const last = ours[ours.length - 1];
      return ours.length === 2 && store.committedIndex >= last!.index ? ours : null;
    }, 30_000);
    expect(received.map((e) => decodeRecord(e.body).body.toString())).toEqual(['hello-from-official', 'hello-again-from-official']);
    for (const e of received) expect(decodeRecord(e.body).commitLogOffset).toBe(e.pos + DLEDGER_ENTRY_HEADER_BYTES);

    // 3. The official leader dies (SIGKILL); our node takes over, directly or by transfer from the survivor.
    const killedAt = Date.now();
    const pid = Number(fs.readFileSync(path.join(dirs[li]!, 'broker.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    const survivor = li === 0 ? 'n1' : 'n0';
    const next = await waitFor('a new leader', () => (node.role === 'LEADER' ? 'n2' : node.role === 'FOLLOWER' && node.leaderId === survivor ? survivor : null), 60_000);
    console.log(`[interop] ${next} leads ${Date.now() - killedAt} ms after the kill`);
    if (next !== 'n2') {
      const rpc = new PeerRpcClient(silentLogger());
      cleanups.push(() => rpc.close());
      const body = await rpc.call(`127.0.0.1:${survivor === 'n0' ? p0 : p1}`, DLedgerRequestCode.LEADERSHIP_TRANSFER, encodeLeadershipTransferRequest({
        code: 200, group: GROUP, leaderId: survivor, localId: survivor, remoteId: survivor, term: node.currTerm,
        transferId: survivor, transfereeId: 'n2', takeLeadershipLedgerIndex: 0,
      }), 10_000);
      expect(body && decodeBase(body).code).toBe(DLedgerResponseCode.SUCCESS);
      await waitFor('our node leading after the transfer', () => node.role === 'LEADER', 30_000);
    }

    // 4. Our appends (standard records) are acknowledged by the official follower and dispatched by its broker.
    const topic2 = `${topic}Ours`;
    const acks = [];
    for (let i = 0; i < 3; i++) {
      const { appended, acked } = node.append(record(topic2, `hello-from-ours-${i}`, i), physicalOffsetHook);
      expect(appended).not.toBeNull();
      acks.push(acked);
    }
    for (const a of await Promise.all(acks)) expect(a.code).toBe(DLedgerResponseCode.SUCCESS);
    const followerBroker = `127.0.0.1:${brokerPorts[1 - li]}`;
    const remote = new RemotingClient(silentLogger());
    cleanups.push(() => remote.close());
    await waitFor('the official follower dispatching our three records', async () => {
      const res = await remote.request(followerBroker, createRequest(30, { topic: topic2, queueId: '0' }), 5000);
      return res.code === 0 && res.extFields.offset === '3';
    }, 30_000);
    const first = store.all().find((e) => decodeRecord(e.body).topic === topic2)!;
    const view = await remote.request(followerBroker, createRequest(33, { offset: String(first.pos + DLEDGER_ENTRY_HEADER_BYTES) }), 5000);
    expect(view.code).toBe(0);
    expect(decodeRecord(view.body!).body.toString()).toBe('hello-from-ours-0');
    const checkpoint = path.join(dirs[1 - li]!, 'store', `dledger-${survivor}`, 'checkpoint');
    await waitFor('the official follower persisting our commit index', () =>
      fs.existsSync(checkpoint) && new RegExp(`committedIndex=${store.committedIndex}\\b`).test(fs.readFileSync(checkpoint, 'utf8')), 15_000);
    console.log(`[interop] frames the official members sent us: ${captureFile}`);
  }, 900_000);
});
