#!/usr/bin/env node
// Retention side by side: the official broker and ours, started with the same settings (64 KiB commit-log files,
// fileReservedTime=0, every hour a deleteWhen hour, clean-up every second), get the same 400 messages on one
// queue. Once each has deleted every commit-log file but the one being written, the same probes run against both:
// GET_MIN_OFFSET, a pull at 0 and just below the min (PULL_OFFSET_MOVED with the min as the next offset), a pull
// at the min (the first kept message), SEARCH_OFFSET_BY_TIMESTAMP for time 0. Every answer must match the other
// server's, and both must match what the sends imply (the min is the first message of the last file).
//
//   node compat/retention-diff.mjs [--version=5.3.3] [--json=FILE] [--log-dir=DIR] [--keep]
//
// Run `npm run build` first (raw frames go through dist/remoting). Exit 0 when both agree, 1 otherwise.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OfficialServer, OursServer, children, killTree, pickPorts, usedPorts } from './lib/servers.mjs';
import { guardProcess } from './lib/script-args.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const { RemotingClient } = await dist('remoting/client.js');
const { createRequest } = await dist('remoting/command.js');
const { silentLogger } = await dist('common/logger.js');
const { decodeRecord } = await dist('store/record.js');

export const CASE_NAME = 'retention:offset-moved';
const FILE_BYTES = 65536;
const MESSAGES = 400;
const BODY_BYTES = 1024;
const TOPIC = 'RetentionDiffTopic';
const SETTINGS = {
  mappedFileSizeCommitLog: FILE_BYTES,
  fileReservedTime: 0,
  deleteWhen: Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0')).join(';'),
  cleanResourceInterval: 1000,
};
// Official 5.x reads these from offset msgIds of the send answers: [ip 4][port 4][commit-log offset 8], hex.
const phyOffsetOf = (msgId) => Number(BigInt(`0x${msgId.slice(16, 32)}`));

function parseArgs(argv) {
  const o = { version: '5.3.3', json: '', logDir: '', keep: false };
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    const key = m?.[1].replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!m || !(key in o)) {
      console.error(`retention-diff: unexpected argument ${a}`);
      process.exit(2);
    }
    o[key] = typeof o[key] === 'boolean' ? m[2] !== 'false' : (m[2] ?? '');
  }
  return o;
}

const say = (msg) => console.log(`[retention-diff ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function request(client, addr, code, header, body) {
  return client.request(addr, createRequest(code, header, body), 15_000);
}

async function send(client, addr, i) {
  const res = await request(client, addr, 10, {
    producerGroup: 'PG_retention', topic: TOPIC, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0',
    sysFlag: '0', bornTimestamp: String(Date.now()), flag: '0', properties: `KEYS\u0001r${i}\u0002`,
    reconsumeTimes: '0', unitMode: 'false', batch: 'false',
  }, Buffer.alloc(BODY_BYTES, 0x61 + (i % 26)));
  if (res.code !== 0) throw new Error(`send #${i}: code ${res.code} ${res.remark ?? ''}`);
  return { queueOffset: Number(res.extFields.queueOffset), phyOffset: phyOffsetOf(res.extFields.msgId) };
}

async function minOffset(client, addr) {
  const res = await request(client, addr, 31, { topic: TOPIC, queueId: '0' });
  return res.code === 0 ? Number(res.extFields.offset) : -res.code;
}

async function pull(client, addr, queueOffset) {
  const res = await request(client, addr, 11, {
    consumerGroup: 'GID_retention', topic: TOPIC, queueId: '0', queueOffset: String(queueOffset), maxMsgNums: '1',
    sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
  });
  const f = res.extFields ?? {};
  const out = { code: res.code, nextBeginOffset: Number(f.nextBeginOffset), minOffset: Number(f.minOffset), maxOffset: Number(f.maxOffset) };
  if (res.code === 0 && res.body?.length) {
    const r = decodeRecord(res.body, 0);
    out.first = { queueOffset: r.queueOffset, key: /(?:^|\u0002)KEYS\u0001([^\u0002]*)/.exec(r.propertiesString)?.[1] ?? null, bodyBytes: r.body.length };
  }
  return out;
}

/** Sends, waits until the log's min reaches the file holding the last message, probes. */
async function probe(server, log) {
  const addr = `127.0.0.1:${server.ports.broker}`;
  const client = new RemotingClient(silentLogger());
  try {
    const sent = [];
    for (let i = 0; i < MESSAGES; i++) sent.push(await send(client, addr, i));
    const lastFile = Math.floor(sent[sent.length - 1].phyOffset / FILE_BYTES) * FILE_BYTES;
    const expectedMin = sent.findIndex((s) => s.phyOffset >= lastFile);
    log(`${server.label}: ${MESSAGES} sent, last file starts at ${lastFile}: min should become ${expectedMin}`);
    // The event waited for: the clean-up has moved the queue's min to the first message of the last file.
    const deadline = Date.now() + 90_000;
    let min = await minOffset(client, addr);
    while (min < expectedMin && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      min = await minOffset(client, addr);
    }
    const search = await request(client, addr, 29, { topic: TOPIC, queueId: '0', timestamp: '0' });
    return {
      expectedMin,
      getMinOffset: min,
      pullAtZero: await pull(client, addr, 0),
      pullBelowMin: await pull(client, addr, Math.max(0, min - 1)),
      pullAtMin: await pull(client, addr, min),
      searchOffsetAtTimeZero: search.code === 0 ? Number(search.extFields.offset) : `code ${search.code}`,
    };
  } finally {
    await client.close();
  }
}

/**
 * The answer with queue offsets written relative to the expected min ("min+1"): record sizes differ by a few
 * bytes between the servers (ours adds a UNIQ_KEY to sends without one), so the last file starts at another
 * message on each.
 */
function relative(r) {
  const rel = (n) => (typeof n === 'number' ? `min${n - r.expectedMin >= 0 ? '+' : ''}${n - r.expectedMin}` : n);
  const walk = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => {
    if (v && typeof v === 'object') return [k, walk(v)];
    if (k === 'key' && typeof v === 'string') return [k, `r(${rel(Number(v.slice(1)))})`];
    return [k, /offset|min$/i.test(k) && k !== 'maxOffset' ? rel(v) : v];
  }));
  return walk(r);
}

/** Differences between the two answers and from what the sends imply. */
export function compare(official, ours) {
  const problems = [];
  const flat = (o, prefix = '') => Object.entries(o).flatMap(([k, v]) => (v && typeof v === 'object'
    ? flat(v, `${prefix}${k}.`) : [[`${prefix}${k}`, v]]));
  const a = new Map(flat(relative(official)));
  const b = new Map(flat(relative(ours)));
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    if (a.get(k) !== b.get(k)) problems.push(`${k}: official ${JSON.stringify(a.get(k))}, ours ${JSON.stringify(b.get(k))}`);
  }
  for (const [who, r] of [['official', official], ['ours', ours]]) {
    if (r.getMinOffset !== r.expectedMin) problems.push(`${who}: min ${r.getMinOffset}, expected ${r.expectedMin}`);
    if (r.pullAtZero.code !== 21 || r.pullAtZero.nextBeginOffset !== r.expectedMin) {
      problems.push(`${who}: a pull at 0 answered ${r.pullAtZero.code} next ${r.pullAtZero.nextBeginOffset}, not 21 (PULL_OFFSET_MOVED) next ${r.expectedMin}`);
    }
    if (r.pullAtMin.first?.queueOffset !== r.expectedMin) problems.push(`${who}: a pull at the min did not return message #${r.expectedMin}`);
  }
  return problems;
}

async function main() {
  // the runner's Ctrl-C reaches this script as SIGTERM: stop both servers (the official JVMs outlive the script)
  guardProcess('retention-diff');
  const opts = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-retention-'));
  const logDir = opts.logDir || path.join(tmp, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const official = new OfficialServer(opts.version, tmp, logDir, {
    name: `official-${opts.version}-retention`,
    extra: Object.entries(SETTINGS).map(([k, v]) => `${k}=${v}`).join('\n'),
  });
  const ours = new OursServer(tmp, logDir, { name: 'ours-retention', extraArgs: Object.entries(SETTINGS).map(([k, v]) => `--${k}=${v}`) });
  const t0 = Date.now();
  let result;
  try {
    await official.prepare();
    official.ports = await pickPorts();
    ours.ports = await pickPorts(usedPorts(official.ports));
    await Promise.all([official.start(), ours.start()]);
    const [a, b] = await Promise.all([probe(official, say), probe(ours, say)]);
    fs.writeFileSync(path.join(logDir, 'retention-diff.json'), `${JSON.stringify({ official: a, ours: b }, null, 2)}\n`);
    const problems = compare(a, b);
    for (const p of problems) say(`DIFF ${p}`);
    say(`official: ${JSON.stringify(a)}`);
    say(`ours:     ${JSON.stringify(b)}`);
    result = { name: CASE_NAME, version: opts.version, status: problems.length ? 'FAIL' : 'PASS', reason: problems.join('; ') };
  } catch (e) {
    result = { name: CASE_NAME, version: opts.version, status: 'FAIL', reason: String(e?.message ?? e).split('\n')[0] };
    say(`ERROR ${e?.stack ?? e}`);
  } finally {
    await Promise.allSettled([official.stop(), ours.stop()]);
    for (const c of children) killTree(c, 'SIGKILL');
    if (!opts.keep) fs.rmSync(path.join(tmp), { recursive: true, force: true, maxRetries: 3 });
  }
  result.seconds = +((Date.now() - t0) / 1000).toFixed(1);
  say(`${result.status} ${CASE_NAME}${result.reason ? `: ${result.reason}` : ''} (${result.seconds}s)`);
  if (opts.json) fs.writeFileSync(opts.json, `${JSON.stringify({ results: [result] }, null, 2)}\n`);
  process.exit(result.status === 'PASS' ? 0 : 1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
