// The side-by-side table printed at the end of `npm run bench` (also stored as `report` in the JSON).
import { median, sendMetrics } from './scenarios.mjs';

const KiB = 1024;

export const fmt = (v, d = 0) => (v === undefined || v === null || Number.isNaN(v) ? '-' : Number(v).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

function table(rows, header) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  const line = (r) => r.map((c, i) => (i < 2 ? String(c ?? '').padEnd(w[i]) : String(c ?? '').padStart(w[i]))).join('  ');
  return [line(header), w.map((x) => '-'.repeat(x)).join('  '), ...rows.map(line)].join('\n');
}

const mib = (kb) => (kb ? kb / 1024 : undefined);

/** The rows about each server as a whole: [label, metric, decimals, (server result) => value]. */
const SERVER_METRICS = [
  ['start-up (empty store)', 'ready line ms', 0, (s) => s.readyMs],
  ['', 'first send OK ms', 0, (s) => s.firstSendMs],
  ['idle server', 'CPU cores used', 3, (s) => s.idleCpus],
  ['memory (all server processes)', 'idle RSS MiB', 1, (s) => mib(s.idleMem?.rss)],
  ['', 'idle RssAnon MiB', 1, (s) => mib(s.idleMem?.anon)],
  ['', 'peak RSS load MiB', 1, (s) => mib(s.loadMem?.rss)],
  ['', 'peak RssAnon load MiB', 1, (s) => mib(s.loadMem?.anon)],
];

/**
 * The lines under a table: the other processes' CPU over every run, then each server's start error and each
 * scenario it skipped or failed. `groups`: the server results of one run, or of each round (`label` prefixed).
 */
function footer(groups, cpus) {
  const out = [];
  const others = [];
  for (const g of groups) for (const s of g.servers) for (const sc of Object.values(s.scenarios ?? {})) for (const r of sc.runs ?? []) others.push(r.cpu?.otherCpus);
  const bg = median(others);
  out.push('');
  out.push(`background CPU used by other processes during the runs: median ${fmt(bg, 2)} of ${cpus} cores` +
    (bg > 0.2 ? '  -> NOISY: other work competed for the CPUs; compare ratios with care' : ''));
  for (const g of groups) {
    const pre = g.label ?? '';
    for (const s of g.servers) if (s.error) out.push(`${pre}${s.name}: ${s.error} (log ${s.logFile})`);
    for (const s of g.servers) {
      for (const [id, sc] of Object.entries(s.scenarios ?? {})) {
        if (sc.skipped) out.push(`${pre}${s.name} ${id}: skipped: ${sc.skipped}`);
        else if (sc.error) out.push(`${pre}${s.name} ${id}: ${sc.error}`);
      }
    }
  }
  return out;
}

const throughputOf = (sr) => median((sr?.runs ?? []).map((r) => r.throughput));

/** The figures of one scenario, one row each: official, ours, ours/official. */
function scenarioRows(sc, so, su, hasO, hasU) {
  const rows = [];
  const ratio = (a, b) => (a === undefined || b === undefined || !b ? '-' : `${(a / b).toFixed(2)}x`);
  const cell = (has, sr, v, d) => {
    if (!has) return '';
    if (sr?.skipped) return 'SKIP';
    if (!sr?.runs?.length) return 'FAIL';
    return fmt(v, d);
  };
  const metrics = sc.metrics ?? sendMetrics(sc.size >= 16 * KiB);
  let first = true;
  for (const [m, get, d] of metrics) {
    const a = so?.runs?.length ? get(so) : undefined;
    const b = su?.runs?.length ? get(su) : undefined;
    rows.push([first ? sc.label : '', m, cell(hasO, so, a, d), cell(hasU, su, b, d), ratio(b, a)]);
    first = false;
  }
  const errs = (sr) => (sr?.runs ?? []).reduce((a, r) => a + (r.errors ?? 0), 0);
  if (errs(so) || errs(su)) rows.push(['', 'send/consume errors', hasO ? errs(so) : '', hasU ? errs(su) : '', '']);
  return rows;
}

export function report(result, SCENARIOS, CFG) {
  const off = result.servers.official;
  const ours = result.servers.ours;
  const ratio = (a, b) => (a === undefined || b === undefined || !b ? '-' : `${(a / b).toFixed(2)}x`);
  const rows = [];
  for (const sc of SCENARIOS) rows.push(...scenarioRows(sc, off?.scenarios?.[sc.id], ours?.scenarios?.[sc.id], Boolean(off), Boolean(ours)));
  for (const [label, metric, d, get] of SERVER_METRICS) {
    const a = off ? get(off) : undefined;
    const b = ours ? get(ours) : undefined;
    rows.push([label, metric, fmt(a, d), fmt(b, d), ratio(b, a)]);
  }

  const out = [];
  out.push('');
  out.push(`rocketmq-ts vs official Apache RocketMQ ${CFG.officialVersion} — ${result.date}, ${result.machine.cpus} CPUs, ${fmt(result.machine.memMiB)} MiB RAM, ${result.mode} mode`);
  const heap = off?.heapArgs ? `broker ${off.heapArgs.broker}, namesrv ${off.heapArgs.namesrv}` : `broker ${CFG.brokerJvm}, namesrv ${CFG.namesrvJvm}`;
  out.push(`official: compat/official/official.sh (ASYNC_FLUSH, default 1 GiB commitlog files, enablePropertyFilter=true; broker.properties in the JSON); JVM: ${CFG.officialJvmProfile}: ${heap}`);
  out.push(`ours: node ${process.version} dist/main.js start (defaults + ${result.oursFixedArgs.join(' ')}${CFG.oursArgs.length ? ` ${CFG.oursArgs.join(' ')}` : ''})${CFG.profile ? ' UNDER --cpu-prof (slower than normal)' : ''}`);
  out.push(`load: stock Java client 4.9.8 (compat/bench), ${CFG.runs} run(s) x ${CFG.seconds}s after ${CFG.warmup}s warm-up per scenario, medians; ratio = ours / official (throughput: higher is better; latency, CPU, memory, start-up: lower is better)`);
  out.push('');
  out.push(table(rows, ['scenario', 'metric', 'official', 'ours', 'ours/official']));

  if (result.limits) {
    const L = result.limits;
    const lrows = [];
    for (const sc of SCENARIOS) {
      if (!sc.limit) continue;
      const lim = L.tcp.find((t) => t.kind === sc.limit.kind && t.size === sc.limit.size && (t.conc ?? 0) === (sc.limit.conc ?? 0));
      if (!lim) continue;
      const limMsgs = lim.msgsPerSec * (sc.limit.per ?? 1);
      const o = throughputOf(off?.scenarios?.[sc.id]);
      const u = throughputOf(ours?.scenarios?.[sc.id]);
      const what = lim.kind === 'sink' ? `loopback stream, ${sc.size / KiB} KiB frames` : `loopback req/resp, ${lim.conc} in flight, ${lim.size / KiB} KiB`;
      const share = (t) => (t ? `${((100 * t) / limMsgs).toFixed(1)}%` : '-');
      const diskShare = (t) => (sc.mode === 'send' && t ? `${((100 * t * sc.size) / (L.disk.mbps * 1e6)).toFixed(1)}%` : '-');
      lrows.push([sc.label, `${what}: ${fmt(limMsgs)} msg/s`, share(o), share(u), diskShare(o), diskShare(u)]);
    }
    out.push('');
    out.push(`physical limits on this machine: disk ${fmt(L.disk.mbps, 0)} MB/s sequential write+fdatasync (${L.disk.fsType}, ${L.disk.dir}); loopback RTT p50 ${fmt(L.tcp.find((t) => t.kind === 'echo' && t.conc === 1)?.p50Ms, 3)} ms (1 KiB, 1 in flight)`);
    out.push(table(lrows, ['scenario', 'TCP limit', 'official % TCP', 'ours % TCP', 'official % disk', 'ours % disk']));
  }
  out.push(...footer([{ servers: [off, ours].filter(Boolean) }], result.machine.cpus));
  return out.join('\n');
}

/**
 * The table of a `--rounds=N` run: per metric the median over the rounds of each server's figure, the median of
 * the rounds' ratios (not the ratio of the medians: each round's pair ran minutes apart, under one machine state),
 * and every round's ratio, marked `o` where the official broker ran first in that round and `u` where ours did.
 */
export function roundsReport(result, SCENARIOS, CFG) {
  const rounds = result.rounds;
  const rows = [];
  const line = (label, metric, d, get) => {
    const o = rounds.map((r) => (r.servers.official ? get(r.servers.official) : undefined));
    const u = rounds.map((r) => (r.servers.ours ? get(r.servers.ours) : undefined));
    const ratios = rounds.map((_, i) => (o[i] !== undefined && u[i] !== undefined && o[i] ? u[i] / o[i] : undefined));
    const m = median(ratios);
    const each = rounds.map((r, i) => `${ratios[i] === undefined ? '-' : ratios[i].toFixed(2)}${r.order[0] === 'official' ? 'o' : 'u'}`).join(' ');
    rows.push([label, metric, fmt(median(o), d), fmt(median(u), d), m === undefined ? '-' : `${m.toFixed(2)}x`, each]);
  };
  for (const sc of SCENARIOS) {
    let first = true;
    for (const [metric, get, d] of sc.metrics ?? sendMetrics(sc.size >= 16 * KiB)) {
      line(first ? sc.label : '', metric, d, (s) => {
        const sr = s.scenarios?.[sc.id];
        return sr?.runs?.length ? get(sr) : undefined;
      });
      first = false;
    }
  }
  for (const [label, metric, d, get] of SERVER_METRICS) line(label, metric, d, get);

  const out = [];
  out.push('');
  out.push(`rocketmq-ts vs official Apache RocketMQ ${CFG.officialVersion} — ${result.date}, ${result.machine.cpus} CPUs, ${fmt(result.machine.memMiB)} MiB RAM, ${result.mode} mode, ${rounds.length} rounds taking turns`);
  out.push(`each round: ${CFG.runs} run(s) x ${CFG.seconds}s after ${CFG.warmup}s warm-up per scenario and server, medians (the rounds' own tables are in the JSON)`);
  out.push('figures: median over the rounds; ratio = median of the rounds\' ours/official; rounds: each round\'s ratio, o = official ran first, u = ours ran first');
  out.push('');
  out.push(table(rows, ['scenario', 'metric', 'official', 'ours', 'ours/official', 'rounds']));
  out.push(...footer(rounds.map((r) => ({ label: `round ${r.round} `, servers: Object.values(r.servers) })), result.machine.cpus));
  return out.join('\n');
}
