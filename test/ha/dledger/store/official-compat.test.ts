// A DLedger store directory moves both ways between the official broker and our store (issue #14):
//  1. an official 5.3.3 broker runs as a one-member DLedger group (elects itself), stores messages sent with the
//     stock mqadmin, and stops;
//  2. our DLedgerFileStore loads its dledger-n0 directory: every entry decodes, positions, indexes and terms are
//     consistent, every body is a commit-log record with PHYSICALOFFSET = pos + 48, currterm and checkpoint read;
//  3. we append records of our own (PHYSICALOFFSET = pos + 48 written by the append hook, the term from currterm,
//     queue offsets continuing the official ones), raise currterm, close;
//  4. the official broker starts on that directory again: mqadmin printMsg reads our messages back through it
//     (queue offsets and commit-log offsets as we wrote them), it takes our currterm, and a message sent to it
//     lands after ours — which our store reads once more.
// Runs with RMQ_DLEDGER_OFFICIAL=1 (`npm run test:dledger-official`; 2 min 21 s on the 2-core box, plus the first
// download of the official and mqadmin jars through official.sh / mqadmin/run.sh): two official broker JVMs and
// five mqadmin JVMs, like the Java/Go/mqadmin suites kept out of test:server. Skipped without java on the PATH.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../src/common/logger.js';
import { DLedgerFileStore } from '../../../../src/ha/dledger/store/file-store.js';
import { decodeRecord, encodeRecord, RecordPos, writeInt64, type DecodedRecord } from '../../../../src/store/record.js';
import { runScript, tail } from '../../../helpers/compat.js';
import { makeMessage } from '../../../store/helpers.js';
import { tempDir } from './helpers.js';

const ENABLED = process.env.RMQ_DLEDGER_OFFICIAL === '1';
const HAVE_JAVA = ENABLED && spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
const VERSION = '5.3.3';
const GROUP = 'RaftNode00';
const TOPIC = 'DlStoreTopic';
/** official.sh writes mappedFileSizeCommitLog=67108864: the DLedger data file size. */
const DATA_FILE_BYTES = 67_108_864;
const STEP_TIMEOUT_MS = 300_000;

if (!ENABLED) console.log('official-compat (DLedger store): skipped, set RMQ_DLEDGER_OFFICIAL=1 (npm run test:dledger-official)');
else if (!HAVE_JAVA) console.log('official-compat (DLedger store): skipped, no java on the PATH');

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '0.0.0.0', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** Nameserver N, broker B (B−2, B+1 free too) and DLedger peer port P, all below 32768. */
async function pickPorts(): Promise<{ ns: number; broker: number; peer: number }> {
  for (let i = 0; i < 200; i++) {
    const ns = 20000 + Math.floor(Math.random() * 5000);
    const broker = ns + 1000 + Math.floor(Math.random() * 5000);
    const peer = broker + 10;
    const all = [ns, broker - 2, broker, broker + 1, peer];
    let ok = true;
    for (const p of all) if (ok && !(await portFree(p))) ok = false;
    if (ok) return { ns, broker, peer };
  }
  throw new Error('no free ports below 32768');
}

describe.skipIf(!HAVE_JAVA)(`DLedger store directories move both ways with the official ${VERSION} broker`, () => {
  let dir: string;
  let ports: { ns: number; broker: number; peer: number };
  let running = false;
  const baseDir = () => path.join(dir, 'store', `dledger-n0`);
  const env = () => ({
    OFFICIAL_BROKER_EXTRA: [
      `brokerName=${GROUP}`,
      'enableDLegerCommitLog=true',
      `dLegerGroup=${GROUP}`,
      `dLegerPeers=n0-127.0.0.1:${ports.peer}`,
      'dLegerSelfId=n0',
      // Our entries reach the log while the broker is down and without consume-queue entries (building those is
      // the broker's part, not the store's); after a clean shutdown 5.3.3 would resume its dispatch at the
      // committed end (DefaultMessageStore.start: reput from getConfirmOffset) and never index them. This 5.3.3
      // key makes it resume at the end of its consume queues instead.
      'recheckReputOffsetFromCq=true',
    ].join('\n'),
  });
  const ns = () => `127.0.0.1:${ports.ns}`;

  async function official(cmd: 'start' | 'stop'): Promise<void> {
    const args = cmd === 'start' ? ['start', VERSION, dir, String(ports.ns), String(ports.broker)] : ['stop', dir];
    const r = await runScript('compat/official/official.sh', args, STEP_TIMEOUT_MS, env());
    if (r.code !== 0 || (cmd === 'start' && !/^ready ns=/m.test(r.output))) {
      throw new Error(`official.sh ${cmd} failed (${r.code}):\n${tail(r.output)}\n${brokerLogTail()}`);
    }
    running = cmd === 'start';
  }

  function brokerLogTail(): string {
    const f = path.join(dir, 'home', 'logs', 'rocketmqlogs', 'broker_default.log');
    return fs.existsSync(f) ? tail(fs.readFileSync(f, 'utf8'), 40) : '';
  }

  async function mqadmin(args: string[]): Promise<string> {
    const r = await runScript('compat/mqadmin/run.sh', args, 120_000, { MQADMIN_VERSION: VERSION });
    if (r.code !== 0 || /Exception|command failed/.test(r.output)) throw new Error(`mqadmin ${args[0]} failed:\n${tail(r.output)}`);
    return r.output;
  }

  function openOurs(): DLedgerFileStore {
    const s = new DLedgerFileStore({ baseDir: baseDir(), dataFileBytes: DATA_FILE_BYTES }, silentLogger());
    s.loadSync(0);
    return s;
  }

  /** Every entry of the log: consecutive, where the blank rule puts it, terms not going back, a record inside. */
  function checkLog(s: DLedgerFileStore): { records: (DecodedRecord & { index: number; pos: number; term: number })[] } {
    expect(s.beginIndex).toBe(0);
    const records = [];
    let pos = s.minOffset;
    let term = -1;
    for (let i = 0; i <= s.endIndex; i++) {
      const e = s.get(i)!;
      if (e.size + 8 > DATA_FILE_BYTES - (pos % DATA_FILE_BYTES)) pos += DATA_FILE_BYTES - (pos % DATA_FILE_BYTES);
      expect([e.index, e.pos, e.magic, e.channel, e.chainCrc, e.bodyCrc]).toEqual([i, pos, 1, 0, 0, 0]);
      expect(e.term).toBeGreaterThanOrEqual(term);
      const rec = decodeRecord(e.body);
      expect(rec.totalSize).toBe(e.body.length);
      expect(rec.commitLogOffset, `PHYSICALOFFSET of entry ${i}`).toBe(e.pos + 48);
      records.push({ ...rec, index: i, pos: e.pos, term: e.term });
      term = e.term;
      pos += e.size;
    }
    expect(s.writePos).toBe(pos);
    return { records };
  }

  const officialBodies = ['official-0', 'official-1', 'official-2'];
  let officialTerm = -1;
  let oursTerm = -1;
  const ours: { body: string; queueId: number; queueOffset: number; pos: number }[] = [];

  beforeAll(async () => {
    dir = tempDir('rmq-dledger-official-');
    ports = await pickPorts();
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    if (running) await official('stop').catch(() => {});
    if (process.env.RMQ_KEEP_DIRS) console.log(`official-compat: kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }, STEP_TIMEOUT_MS);

  it('the official broker writes a DLedger store', async () => {
    await official('start');
    await mqadmin(['updateTopic', '-n', ns(), '-b', `127.0.0.1:${ports.broker}`, '-t', TOPIC, '-r', '2', '-w', '2']);
    for (const [i, body] of officialBodies.entries()) {
      const out = await mqadmin(['sendMessage', '-n', ns(), '-t', TOPIC, '-p', body, '-k', `key-${i}`, '-c', 'TagO', '-b', GROUP, '-i', String(i % 2)]);
      expect(out).toMatch(/SEND_OK/);
    }
    await official('stop');
    officialWrote = true;
  }, STEP_TIMEOUT_MS * 2);

  let officialWrote = false;
  it('our store loads it: entries, positions, index, terms, records, currterm and checkpoint', () => {
    expect(officialWrote, 'the previous step failed').toBe(true);
    const s = openOurs();
    const { records } = checkLog(s);
    expect(records.map((r) => r.body.toString())).toEqual(expect.arrayContaining(officialBodies));
    expect(s.committedIndex).toBe(s.endIndex); // a one-member group commits everything; its checkpoint says so
    expect(s.committedPos).toBe(s.writePos);
    const t = s.persistedTerm;
    expect(t.voteLeader).toBe('n0');
    expect(t.currTerm).toBeGreaterThanOrEqual(s.endTerm);
    officialTerm = t.currTerm;

    // Append our own records: queue offsets continue the official ones, PHYSICALOFFSET from the hook.
    const nextOffset = [0, 1].map((q) => 1 + Math.max(-1, ...records.filter((r) => r.topic === TOPIC && r.queueId === q).map((r) => r.queueOffset)));
    const storeHost = Buffer.from([127, 0, 0, 1]);
    for (let i = 0; i < 6; i++) {
      const queueId = i % 2;
      const queueOffset = nextOffset[queueId]!++;
      const body = `ours-${i}`;
      const msg = makeMessage(TOPIC, queueId, body, { tags: 'TagU', keys: `ours-key-${i}`, storeHost });
      msg.storeHost.port = ports.broker;
      const record = encodeRecord(msg, queueOffset, 0, Date.now());
      const e = s.appendAsLeader(record, t.currTerm, (bytes, pos) => writeInt64(bytes, 48 + RecordPos.PHYSICAL_OFFSET, pos + 48));
      ours.push({ body, queueId, queueOffset, pos: e.pos });
    }
    s.updateCommittedIndex(s.endIndex);
    oursTerm = t.currTerm + 5;
    s.persistTerm(oursTerm, 'n0');
    checkLog(s);
    s.close();
    expect(fs.readFileSync(path.join(baseDir(), 'currterm'), 'utf8')).toBe(`voteLeader=n0\ncurrTerm=${oursTerm}\n`);
    expect(fs.readFileSync(path.join(baseDir(), 'checkpoint'), 'utf8')).toMatch(/^committedIndex=(\d+)\nendIndex=\1\n$/);
  });

  let servedOurs = false;
  it('the official broker starts on it again and serves our messages', async () => {
    expect(ours.length, 'the previous step failed').toBe(6);
    await official('start');
    try {
      await readBackThroughOfficial();
    } finally {
      await official('stop');
    }
    servedOurs = true;
  }, STEP_TIMEOUT_MS * 2);

  async function readBackThroughOfficial(): Promise<void> {
    const out = await mqadmin(['printMsg', '-n', ns(), '-t', TOPIC, '-d', 'true']);
    const lines = out.split('\n').filter((l) => l.startsWith('MSGID:'));
    const seen = new Map<string, { queueId: number; queueOffset: number; commitLogOffset: number }>();
    for (const l of lines) {
      const body = /BODY: (.*)$/.exec(l)![1]!.trim();
      seen.set(body, {
        queueId: Number(/queueId=(\d+)/.exec(l)![1]),
        queueOffset: Number(/queueOffset=(\d+)/.exec(l)![1]),
        commitLogOffset: Number(/commitLogOffset=(\d+)/.exec(l)![1]),
      });
    }
    for (const b of officialBodies) expect(seen.has(b), `${b} in\n${out}`).toBe(true);
    for (const o of ours) {
      expect(seen.get(o.body), `${o.body} in\n${out}`).toEqual({ queueId: o.queueId, queueOffset: o.queueOffset, commitLogOffset: o.pos + 48 });
    }
    const more = await mqadmin(['sendMessage', '-n', ns(), '-t', TOPIC, '-p', 'official-after', '-b', GROUP, '-i', '0']);
    expect(more).toMatch(/SEND_OK/);
  }

  it('our store reads what the official broker appended after our entries, in the term it took from our currterm', () => {
    expect(servedOurs, 'the previous step failed').toBe(true);
    const s = openOurs();
    const { records } = checkLog(s);
    const last = records[records.length - 1]!;
    expect(last.body.toString()).toBe('official-after');
    expect(last.pos).toBeGreaterThan(ours[ours.length - 1]!.pos);
    expect(last.term).toBeGreaterThanOrEqual(oursTerm);
    expect(s.persistedTerm.currTerm).toBeGreaterThanOrEqual(oursTerm);
    expect(oursTerm).toBeGreaterThan(officialTerm);
    s.close();
  });
});
