#!/usr/bin/env node
// Mixed DLedger groups (issue #14 test 2): one group of three brokers, some ours and some official Apache RocketMQ
// brokers (5.3.3 or 4.9.8) with enableDLegerCommitLog, one nameserver of ours, every peer link through a TCP proxy
// (compat/lib/dledger-group.mjs). Rows per official version V:
//   dledger:ours+2xV   our broker as n2 beside two official members
//   dledger:2xours+V   two of ours (n0, n1) beside one official member (n2)
// A stock ali-ons producer sends unique bodies one at a time all through the row (every SEND_OK recorded). Both
// kinds lead and both kinds' leaders die: for the kind of the first leader and then the other kind, the leader is
// made one of that kind (LEADERSHIP_TRANSFER asked of the current leader when it is not), sends go through it, and
// it is killed with kill -9 (whoever is elected next, of either kind, is noted; the killed member restarts on its
// store once sends succeed again). Then, with the group quiet and every member at the same committed position:
//   - every acknowledged message where its SEND_OK put it on the master, no queue offset acknowledged twice,
//     acknowledgements in queue-offset order (compat/lib/dledger-check.mjs checkGroup);
//   - the three members' DLedger data files (dledger-nX/data) byte-identical up to the committed position;
//   - every queue pulled from every member (slaveReadEnable=true) gives the master's records byte for byte, and
//     offset msgIds viewed on every member give the master's bytes (compareReads).
// All members use mappedFileSizeCommitLog=1 MiB (the DLedger data file size; a group's members must agree), so the
// data crosses file ends.
//
//   node compat/dledger-compat.mjs [--versions=5.3.3,4.9.8] [--shapes=ours+2x,2xours+] [--repeat=1]
//        [--sends=300] [--json=FILE] [--log-dir=DIR] [--keep]   (stores are kept when a row fails)
//
// Run `npm run build` first. Exit 0 when every row passed, 1 otherwise, 2 on usage errors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DLedgerGroup, IDS, isMemberKind } from './lib/dledger-group.mjs';
import { checkGroup, compareReads } from './lib/dledger-check.mjs';
import { startSender } from './lib/dledger-sender.mjs';
import { DLEDGER_SHAPES, dledgerRowName } from './lib/ha-cases.mjs';
import { sleep, waitFor } from './lib/ha-tools.mjs';
import { guardProcess, parseFlags, sayer } from './lib/script-args.mjs';

const TOPIC = 'DLedgerCompatTopic';
const QUEUES = 4;
/** Bounds for a group that does not come up or recover (JVM start-ups on a loaded 2-core box). */
const START_TIMEOUT_MS = 240_000;
const RECOVER_TIMEOUT_MS = 120_000;
const say = sayer('dledger-compat');

function parseArgs(argv) {
  const o = parseFlags('dledger-compat', argv, { versions: '5.3.3,4.9.8', shapes: Object.keys(DLEDGER_SHAPES).join(','), repeat: '1', sends: '300', json: '', logDir: '', keep: false });
  const versions = o.versions.split(',').map((s) => s.trim()).filter(Boolean);
  const shapes = o.shapes.split(',').map((s) => s.trim()).filter(Boolean);
  const repeat = Number(o.repeat);
  const sends = Number(o.sends);
  if (!versions.every((v) => v !== 'ours' && isMemberKind(v)) || !shapes.every((s) => s in DLEDGER_SHAPES) || !(repeat >= 1) || !(sends >= 1)) {
    console.error(`dledger-compat: --versions official versions (x.y.z, default 5.3.3,4.9.8), --shapes from ${Object.keys(DLEDGER_SHAPES).join(',')}, --repeat and --sends counts`);
    process.exit(2);
  }
  const rows = [];
  for (const v of versions) for (const s of shapes) for (let i = 0; i < repeat; i++) rows.push({ name: dledgerRowName(s, v), kinds: DLEDGER_SHAPES[s](v) });
  return { ...o, rows, sends };
}

const side = (kind) => (kind === 'ours' ? 'ours' : 'official');

/** A master in the route, every member registered, and `oks` SEND_OKs after `since`. */
async function recovered(group, sender, since, oks = 5) {
  await waitFor(async () => {
    const route = await group.route();
    const addrs = Object.values(route);
    return route['0'] !== undefined && IDS.every((id) => addrs.includes(group.addr(id))) && sender.okSince(since) >= oks;
  }, RECOVER_TIMEOUT_MS, 'a master, three registered members and sends succeeding', 200);
}

/** kill -9 of the leader; the new master (whoever), the first SEND_OK after the kill, then the restart. */
async function killLeader(group, sender, leaderId) {
  const old = group.addr(leaderId);
  const failed0 = sender.failedAt.length;
  // times count from the kill command (for an official member that includes official.sh's start-up); SEND_OKs count
  // only for sends begun once the process is gone (official.sh kill returns after SIGKILL, ours after the exit)
  const t0 = Date.now();
  await group.kill(leaderId);
  const goneAt = Date.now();
  let next = null;
  await waitFor(async () => {
    const m = await group.masterAddr();
    next = m && m !== old ? group.idOf(m) : null;
    return next !== null;
  }, RECOVER_TIMEOUT_MS, `a new master after kill -9 of ${leaderId}`, 100);
  const newMasterMs = Date.now() - t0;
  await waitFor(() => sender.acked.some((a) => a.sentAt > goneAt), RECOVER_TIMEOUT_MS, 'a SEND_OK after the kill', 100);
  const firstOkMs = sender.acked.find((a) => a.sentAt > goneAt).at - t0;
  const failedSends = sender.failedAt.length - failed0;
  const restartAt = Date.now();
  await group.restart(leaderId);
  await recovered(group, sender, restartAt);
  return { killed: leaderId, next, newMasterMs, firstOkMs, failedSends, restartMs: Date.now() - restartAt };
}

async function runRow(row, index, tmp, logDir, sends) {
  const checks = [];
  const check = (ok, what) => {
    checks.push(`${ok ? 'ok' : 'FAIL'} ${what}`);
    say(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) throw new Error(what);
  };
  const slug = `${index}-${row.name.replace(/\W+/g, '_')}`;
  const rowDir = path.join(tmp, slug);
  fs.mkdirSync(path.join(logDir, slug), { recursive: true });
  const group = new DLedgerGroup(rowDir, path.join(logDir, slug), { kinds: row.kinds });
  const figures = { kinds: Object.fromEntries(IDS.map((id) => [id, group.kindOf(id)])), leaders: [], transfers: [], kills: [] };
  let sender = null;
  const t0 = Date.now();
  try {
    say(`starting ${IDS.map((id) => `${id}=${group.kindOf(id)}`).join(' ')}`);
    await group.start();
    await waitFor(async () => {
      const addrs = Object.values(await group.route());
      return (await group.masterAddr()) !== null && IDS.every((id) => addrs.includes(group.addr(id)));
    }, START_TIMEOUT_MS, 'a master and two slaves in the nameserver', 500);
    figures.startMs = Date.now() - t0;
    const first = group.idOf(await group.masterAddr());
    figures.leaders.push(`${first}(${group.kindOf(first)})`);
    check(true, `group up after ${figures.startMs} ms, ${first} (${group.kindOf(first)}) leads`);
    await group.createTopic(TOPIC, QUEUES, RECOVER_TIMEOUT_MS);
    check(true, `${TOPIC} on every member`);
    await waitFor(async () => (await group.remote.route(group.nsAddr, TOPIC)) !== null, RECOVER_TIMEOUT_MS, `a route for ${TOPIC}`);
    sender = startSender(group.nsAddr, TOPIC, 'PG_dledger_compat', `dlc${index}`);

    for (const want of [side(group.kindOf(first)), side(group.kindOf(first)) === 'ours' ? 'official' : 'ours']) {
      let leader = group.idOf(await group.masterAddr());
      if (side(group.kindOf(leader)) !== want) {
        const target = IDS.find((id) => side(group.kindOf(id)) === want);
        const at = Date.now();
        let code = null;
        // the leader refuses while its transferee is more than 1000 entries behind or it is still taking over
        await waitFor(async () => (code = await group.transfer(leader, target)) === 200, 60_000, `LEADERSHIP_TRANSFER ${leader} → ${target}`, 1000);
        await waitFor(async () => (await group.masterAddr()) === group.addr(target), RECOVER_TIMEOUT_MS, `${target} as master in the route`);
        figures.transfers.push({ from: leader, to: target, ms: Date.now() - at });
        check(code === 200, `leadership transferred ${leader} (${group.kindOf(leader)}) → ${target} (${group.kindOf(target)}) in ${Date.now() - at} ms`);
        leader = target;
        figures.leaders.push(`${target}(${group.kindOf(target)})`);
      }
      const since = Date.now();
      await waitFor(() => sender.okSince(since) >= sends, RECOVER_TIMEOUT_MS, `${sends} SEND_OKs through ${leader}`, 100);
      check((await group.masterAddr()) === group.addr(leader), `${sends} messages sent through ${leader} (${group.kindOf(leader)}) as master in ${Date.now() - since} ms`);
      const k = await killLeader(group, sender, leader);
      figures.kills.push({ ...k, killedKind: group.kindOf(k.killed), nextKind: group.kindOf(k.next) });
      figures.leaders.push(`${k.next}(${group.kindOf(k.next)})`);
      check(true, `kill -9 of ${leader} (${group.kindOf(leader)}): ${k.next} (${group.kindOf(k.next)}) master after ${k.newMasterMs} ms, ` +
        `first SEND_OK after ${k.firstOkMs} ms, ${k.failedSends} failed sends; ${leader} back and registered ${k.restartMs} ms after its restart`);
    }
    const since = Date.now();
    await waitFor(() => sender.okSince(since) >= 50, RECOVER_TIMEOUT_MS, '50 SEND_OKs after the last restart', 100);
    sender.sending = false;
    await sender.done;
    const ledSides = new Set(figures.leaders.map((l) => side(l.replace(/^.*\((.*)\)$/, '$1'))));
    check(ledSides.size === 2, `both kinds led: ${figures.leaders.join(' → ')}`);

    // quiet: a master and every member at its committed position (twice in a row, a second apart)
    const { master, committedPos } = await group.waitSettled(RECOVER_TIMEOUT_MS);
    const result = await checkGroup(group, master, TOPIC, QUEUES, sender.acked, committedPos);
    Object.assign(figures, result.figures, { sent: sender.tried, failedSends: sender.failedAt.length });
    check(result.failures.length === 0, `checker: ${sender.acked.length} acknowledged of ${sender.tried} sent, ${result.figures.stored} stored, ` +
      `committed position ${committedPos}, data files ${result.figures.compared}${result.failures.length ? `: ${result.failures.slice(0, 5).join('; ')}` : ''}`);
    const reads = await compareReads(group, master, TOPIC, QUEUES, sender.acked);
    figures.topicNotExistRetries = reads.figures.topicNotExist;
    check(reads.failures.length === 0, `reads from every member: ${reads.figures.records} records by queue offset and ${reads.figures.views} msgIds, the master's bytes on all three` +
      `${reads.figures.topicNotExist ? ` (${reads.figures.topicNotExist} pulls repeated after an official slave's TOPIC_NOT_EXIST)` : ''}` +
      `${reads.failures.length ? `: ${reads.failures.slice(0, 5).join('; ')}` : ''}`);
    return { status: 'PASS', reason: '', checks, figures };
  } catch (e) {
    return { status: 'FAIL', reason: String(e.message).split('\n')[0], checks, figures };
  } finally {
    if (sender) {
      sender.sending = false;
      await Promise.race([sender.done, sleep(10_000)]);
    }
    await group.stop();
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-dledger-compat-'));
  const logDir = o.logDir || path.join(tmp, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  guardProcess('dledger-compat');
  say(`logs in ${logDir}`);
  const results = [];
  for (const [i, row] of o.rows.entries()) {
    say(`== ${row.name}`);
    const t0 = Date.now();
    const r = await runRow(row, i + 1, tmp, logDir, o.sends);
    const seconds = +((Date.now() - t0) / 1000).toFixed(1);
    results.push({ name: row.name, status: r.status, reason: r.reason, seconds, checks: r.checks, figures: r.figures });
    say(`${r.status} ${row.name} (${seconds}s)${r.reason ? `: ${r.reason}` : ''}`);
    say(`  figures ${JSON.stringify(r.figures)}`);
  }
  if (o.json) fs.writeFileSync(o.json, `${JSON.stringify({ results }, null, 2)}\n`);
  // a failed row's stores stay for a look (the official brokers' own logs are in them: STORE/home/logs/rocketmqlogs)
  if (!o.keep && results.every((r) => r.status === 'PASS')) fs.rmSync(tmp, { recursive: true, force: true });
  else say(`kept ${tmp}`);
  process.exit(results.every((r) => r.status === 'PASS') ? 0 : 1);
}

main().catch((e) => {
  console.error(`dledger-compat: ${e.stack ?? e}`);
  process.exitCode = 1;
  throw e; // the guard stops every server and exits 1
});
