#!/usr/bin/env node
// A seeded fault schedule for a DLedger group of our brokers (issue #14): a nameserver and three
// `node dist/main.js broker` members of one group (temp stores, 127.0.0.1, free ports; every peer link through a
// pausable TCP proxy), a stock ali-ons producer sending unique bodies one at a time and recording every SEND_OK
// (queue id, queue offset, msgId), and --faults faults drawn from the seed, one after another, each followed by a
// wait until the group has a master, all three members are registered and sends succeed again:
//   kill       kill -9 of a member, then (after a drawn delay) a restart on its store
//   stall      SIGSTOP of a member for a drawn time, then SIGCONT (to the others it is partitioned; TCP stays open)
//   partition  every peer link to and from a member paused for a drawn time, then resumed (clients still reach it)
// Whether the leader or a follower is hit is drawn; which member that is depends on the run (the seed replays the
// schedule, not the elections). After the schedule: a master, every member at the leader's committed position,
// then the checker (compat/lib/dledger-check.mjs): every acknowledged message readable from the master at its queue
// and offset with its body (and at the position its msgId names), no offset acknowledged twice, acknowledgements in
// queue-offset order, and the three members' dledger-nX/data files byte-identical up to the committed position.
//
//   node compat/dledger-faults.mjs [--seed=N] [--faults=20] [--kinds=kill,stall,partition] [--json=FILE]
//        [--members=ours,ours,ours] [--senders=ali-ons,go] [--log-dir=DIR] [--keep]
// --senders: the stock producers sending at the same time (default ali-ons; go: github.com/apache/rocketmq-client-go/v2
// with default settings, compat/go-client built on first use; java / java5 / java@V: the Java DefaultMQProducer with
// default settings on rocketmq-client 4.9.8 / 5.3.3 / V, compat/jclient built by Maven on first use); a fault has
// recovered once every sender has 5 new SEND_OKs, and the checker covers every sender's acknowledgements.
// --members: the kind of n0, n1, n2 (ours, 5.3.3, 4.9.8: official brokers through official.sh), e.g.
// --members=5.3.3,5.3.3,5.3.3 runs the same schedule on an all-official group (failover times side by side).
//   npm run dledger:faults -- --seed=7                 (builds first)
// Quick seeded run (about 1-2 min, meant to join `npm test` later): node compat/dledger-faults.mjs --seed=1 --faults=4
//
// Run `npm run build` first. Prints a row per fault and a summary; exit 0 when the checker passed, 1 otherwise
// (with the seed to replay), 2 on bad arguments.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DLedgerGroup, IDS, isMemberKind } from './lib/dledger-group.mjs';
import { checkGroup } from './lib/dledger-check.mjs';
import { startSender } from './lib/dledger-sender.mjs';
import { startSender as startGoSender } from './lib/go-client.mjs';
import { javaClasspath, javaClientVersion, startJavaSender } from './lib/java-client.mjs';
import { rng, sleep, waitFor } from './lib/ha-tools.mjs';
import { guardProcess, parseFlags, sayer, seedOf } from './lib/script-args.mjs';

const TOPIC = 'DLedgerFaultTopic';
const QUEUES = 4;
const KINDS = ['kill', 'stall', 'partition'];
const SENDERS = ['ali-ons', 'go'];
/** Bounds for a group that does not recover (a deadline only bounds a broken server). */
const RECOVER_TIMEOUT_MS = 120_000;
const say = sayer('dledger-faults');

function parseArgs(argv) {
  const o = parseFlags('dledger-faults', argv, { seed: '', faults: '20', kinds: KINDS.join(','), members: 'ours,ours,ours', senders: 'ali-ons', json: '', logDir: '', keep: false });
  const kinds = o.kinds.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = kinds.filter((k) => !KINDS.includes(k));
  const members = o.members.split(',').map((s) => s.trim());
  const faults = Number(o.faults);
  const senders = [...new Set(o.senders.split(',').map((s) => s.trim()).filter(Boolean))];
  if (bad.length || !kinds.length || !Number.isInteger(faults) || faults < 0 || members.length !== IDS.length || !members.every(isMemberKind) ||
    !senders.length || !senders.every((x) => SENDERS.includes(x) || javaClientVersion(x))) {
    console.error(`dledger-faults: --kinds from ${KINDS.join(',')}, --faults a count, --members ${IDS.length} of ours or an official version (x.y.z), --senders from ${SENDERS.join(',')},java,java5,java@V ` +
      `(got ${o.kinds}, ${o.faults}, ${o.members}, ${o.senders})`);
    process.exit(2);
  }
  return { ...o, kinds, members, faults, senders, seed: seedOf(o.seed) };
}

/** The schedule drawn from the seed: kind, leader or follower, which follower, how long, the pause before it. */
function schedule(seed, count, kinds) {
  const random = rng(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    const kind = kinds[Math.floor(random() * kinds.length)];
    const leader = random() < 0.5;
    const follower = random() < 0.5 ? 0 : 1;
    const downMs = Math.round(kind === 'kill' ? 200 + random() * 3000 : 1000 + random() * 9000);
    const gapMs = Math.round(300 + random() * 2000);
    out.push({ kind, leader, follower, downMs, gapMs });
  }
  return out;
}

/** A master in the route, every member registered, and 5 SEND_OKs after `since` for every sender. */
async function recovered(group, senders, since) {
  await waitFor(async () => {
    const route = await group.route();
    const addrs = Object.values(route);
    return route['0'] !== undefined && IDS.every((id) => addrs.includes(group.addr(id))) && senders.every((s) => s.okSince(since) >= 5);
  }, RECOVER_TIMEOUT_MS, `a master, three registered members and sends succeeding again (SEND_OKs since: ${senders.map((s) => s.name).join('/')})`, 200)
    .catch((e) => {
      throw new Error(`${e.message}: ${senders.map((s) => s.okSince(since)).join('/')}`);
    });
}

async function runFault(group, senders, f, index) {
  await sleep(f.gapMs);
  const master = await group.masterAddr();
  const leaderId = group.idOf(master);
  const followers = IDS.filter((id) => id !== leaderId);
  const target = f.leader && leaderId ? leaderId : followers[f.follower];
  const wasLeader = target === leaderId;
  const t0 = Date.now();
  const failed0 = senders.map((s) => s.failedAt.length);
  const row = { index, fault: `${f.kind} ${target} (${wasLeader ? 'leader' : 'follower'})`, downMs: f.downMs, newMasterMs: null, firstOkMs: null };
  let watching = true;
  const watch = (async () => {
    while (watching && row.newMasterMs === null) {
      const m = await group.masterAddr().catch(() => null);
      if (m && m !== master) row.newMasterMs = Date.now() - t0;
      else await sleep(100);
    }
  })();
  let goneAt = t0;
  if (f.kind === 'kill') {
    await group.kill(target);
    goneAt = Date.now(); // official.sh kill returns after the SIGKILL (its own start-up takes a moment)
    await sleep(f.downMs);
    await group.restart(target);
  } else if (f.kind === 'stall') {
    group.stall(target);
    await sleep(f.downMs);
    group.resume(target);
  } else {
    group.partition(target);
    await sleep(f.downMs);
    group.heal(target);
  }
  const endAt = Date.now();
  let error = null;
  try {
    await recovered(group, senders, endAt);
  } catch (e) {
    error = e.message;
  }
  watching = false;
  await watch;
  // the first SEND_OK of a send that began after the fault did (not one already under way; after a kill, once the
  // process was gone)
  const firstOks = senders.map((s) => {
    const a = s.acked.find((x) => x.sentAt > goneAt);
    return a ? a.at - t0 : null;
  });
  row.firstOkMs = firstOks.every((v) => v !== null) ? Math.min(...firstOks) : null;
  row.failedSends = senders.reduce((n, s, i) => n + s.failedAt.length - failed0[i], 0);
  if (senders.length > 1) {
    row.bySender = Object.fromEntries(senders.map((s, i) => [s.name, { firstOkMs: firstOks[i], failedSends: s.failedAt.length - failed0[i] }]));
  }
  row.recoveredMs = Date.now() - t0;
  row.error = error;
  return row;
}

const cell = (v, w) => String(v ?? '-').padEnd(w);

function printTable(rows) {
  const per = (r, k) => (r.bySender ? Object.values(r.bySender).map((v) => v[k] ?? '-').join('/') : r[k]);
  say(`  ${cell('#', 3)} ${cell('fault', 24)} ${cell('down ms', 8)} ${cell('new master ms', 14)} ${cell('first ok ms', 14)} ${cell('failed sends', 13)} recovered ms` +
    `${rows[0]?.bySender ? `   (per sender: ${Object.keys(rows[0].bySender).join('/')})` : ''}`);
  for (const r of rows) {
    say(`  ${cell(r.index, 3)} ${cell(r.fault, 24)} ${cell(r.downMs, 8)} ${cell(r.newMasterMs, 14)} ${cell(per(r, 'firstOkMs'), 14)} ${cell(per(r, 'failedSends'), 13)} ${r.recoveredMs}${r.error ? `  NOT RECOVERED: ${r.error}` : ''}`);
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-dledger-faults-'));
  const logDir = o.logDir || path.join(tmp, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const group = new DLedgerGroup(tmp, logDir, { kinds: o.members });
  guardProcess('dledger-faults', () => group.resumeAll());
  const plan = schedule(o.seed, o.faults, o.kinds);
  const replay = `--seed=${o.seed} --faults=${o.faults} --kinds=${o.kinds.join(',')} --members=${o.members.join(',')} --senders=${o.senders.join(',')}`;
  say(`seed ${o.seed} (replay with ${replay}); logs in ${logDir}`);
  const t0 = Date.now();
  await group.start();
  await waitFor(async () => {
    const addrs = Object.values(await group.route());
    return (await group.masterAddr()) !== null && IDS.every((id) => addrs.includes(group.addr(id)));
  }, 2 * RECOVER_TIMEOUT_MS, 'a master and two slaves in the nameserver'); // official JVMs start slowly
  // the topic on every member, so whichever is elected serves it
  await group.createTopic(TOPIC, QUEUES, RECOVER_TIMEOUT_MS);
  await waitFor(async () => (await group.remote.route(group.nsAddr, TOPIC)) !== null, RECOVER_TIMEOUT_MS, `a route for ${TOPIC}`);
  say(`group up in ${Date.now() - t0} ms, master ${group.idOf(await group.masterAddr())}; ${plan.length} faults`);
  const senders = [];
  for (const name of o.senders) {
    let s;
    if (name === 'go') s = startGoSender(group.nsAddr, TOPIC, 'PG_dledger_faults_go', 'dlf-go', { logDir });
    else if (name === 'ali-ons') s = startSender(group.nsAddr, TOPIC, 'PG_dledger_faults', 'dlf');
    else s = startJavaSender(await javaClasspath(javaClientVersion(name)), tmp, group.nsAddr, TOPIC, `PG_dledger_faults_${name}`, `dlf-${name}`);
    s.name = name;
    senders.push(s);
  }
  await waitFor(() => senders.every((s) => s.acked.length >= 50 || s.error), 2 * RECOVER_TIMEOUT_MS, 'the first 50 SEND_OKs of every sender');
  for (const s of senders) if (s.error) throw new Error(`sender ${s.name}: ${s.error}`);

  const rows = [];
  for (const [i, f] of plan.entries()) {
    const row = await runFault(group, senders, f, i + 1);
    rows.push(row);
    say(`fault ${row.index}/${plan.length}: ${row.fault} ${row.downMs} ms; new master ${row.newMasterMs ?? '-'} ms, first SEND_OK ${row.firstOkMs ?? '-'} ms, ` +
      `${row.failedSends} failed sends, recovered after ${row.recoveredMs} ms${row.bySender ? ` ${JSON.stringify(row.bySender)}` : ''}${row.error ? ` NOT RECOVERED: ${row.error}` : ''}`);
  }
  await Promise.all(senders.map((s) => s.stop()));
  const acked = senders.flatMap((s) => s.acked.map((a) => ({ ...a, sender: s.name })));
  const tried = senders.reduce((n, s) => n + s.tried, 0);

  // quiet: a master and every member at its committed position (twice in a row, a second apart)
  let master = null;
  let committedPos = -1;
  let settleError = null;
  try {
    ({ master, committedPos } = await group.waitSettled(RECOVER_TIMEOUT_MS));
  } catch (e) {
    settleError = e.message;
  }
  const failures = rows.filter((r) => r.error).map((r) => `fault ${r.index} (${r.fault}) did not recover: ${r.error}`);
  let figures = {};
  if (settleError) failures.push(`after the schedule: ${settleError}`);
  else {
    const result = await checkGroup(group, master, TOPIC, QUEUES, acked, committedPos);
    failures.push(...result.failures);
    figures = result.figures;
  }
  await group.stop();

  say(`faults (seed ${o.seed}):`);
  printTable(rows);
  const failedSends = rows.reduce((n, r) => n + r.failedSends, 0);
  const changes = rows.filter((r) => r.newMasterMs !== null).length;
  const kills = rows.filter((r) => r.fault.startsWith('kill') && r.fault.endsWith('(leader)') && r.newMasterMs !== null).map((r) => r.newMasterMs).sort((a, b) => a - b);
  say(`${failures.length ? 'FAIL' : 'PASS'} seed ${o.seed}: ${rows.length} faults, ${acked.length} acknowledged of ${tried} sent ` +
    `(${failedSends} failed sends), ${changes} master changes; leader kills: new master after ${kills.length ? `${kills[0]}-${kills.at(-1)} ms ` +
    `(median ${kills[(kills.length - 1) >> 1]} ms)` : '-'}; ${JSON.stringify(figures)}, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  for (const s of senders.filter((x) => x.failuresByError && x.failedAt.length)) say(`  ${s.name} sender, failed sends by error: ${JSON.stringify(s.failuresByError)}`);
  for (const f of failures) say(`  FAIL ${f}`);
  if (failures.length) say(`replay: node compat/dledger-faults.mjs ${replay}`);
  if (o.json) fs.writeFileSync(o.json, `${JSON.stringify({ seed: o.seed, faults: o.faults, kinds: o.kinds, members: o.members, senders: o.senders, rows, figures, failures }, null, 2)}\n`);
  if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else say(`kept ${tmp}`);
  process.exit(failures.length ? 1 : 0);
}

main().catch(async (e) => {
  console.error(`dledger-faults: ${e.stack ?? e}`);
  process.exitCode = 1;
  throw e; // the guard stops every server and exits 1
});
