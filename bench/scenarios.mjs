// The scenarios of `npm run bench`: what the Java driver (compat/bench) is asked to do for each, and which figures
// the report shows. A scenario marked `fresh` runs on a server of its own with an empty store (started after the
// shared one stopped); `restart` then also measures start-up on that store after a clean stop and after kill -9.

const KiB = 1024;

/** Median of the numbers among xs (undefined when there are none). */
export function median(xs) {
  const a = xs.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((x, y) => x - y);
  if (!a.length) return undefined;
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
}

/** Median over a scenario's runs of fn(run). */
const med = (fn) => (sr) => median((sr?.runs ?? []).map((r) => { try { return fn(r); } catch { return undefined; } }));
const lat = (k) => med((r) => (r.lat?.n ? r.lat[k] : undefined));
const phase = (name, k = 'durationMs') => (sr) => sr?.phases?.find((p) => p.name === name)?.[k];
const MiB = (kb) => (kb === undefined ? undefined : kb / 1024);

const THROUGHPUT = ['msg/s', med((r) => r.throughput), 0];
const MBPS = ['MB/s', med((r) => r.mbps), 1];
const CPU_PER_MSG = ['server CPU us/msg', med((r) => r.cpu?.usPerMsg), 1];
/** The kernel's part of the row above (system calls, page faults, the loopback TCP work done in them). */
const SYS_PER_MSG = ['  of it in the kernel us/msg', med((r) => r.cpu?.sysUsPerMsg), 1];
const FIRST = ['first delivery after ms', med((r) => r.firstMs), 0];

export function sendMetrics(large) {
  return [THROUGHPUT, ...(large ? [MBPS] : []), ['p50 ms', lat('p50'), 2], ['p99 ms', lat('p99'), 2], ['max ms', lat('max'), 1], CPU_PER_MSG, SYS_PER_MSG];
}

const CONSUME_METRICS = [THROUGHPUT, CPU_PER_MSG, SYS_PER_MSG, FIRST];

const COLD_METRICS = [
  THROUGHPUT, MBPS, CPU_PER_MSG, SYS_PER_MSG, FIRST,
  ['backlog MiB resident before the drop', med((r) => r.cold?.residentBeforeBytes / 1048576), 0],
  ['backlog MiB resident after the drop', med((r) => r.cold?.residentAfterBytes / 1048576), 0],
  ['prefill s', (sr) => phase('prefill')(sr) / 1000, 1],
];

const FILTER_METRICS = [
  ['delivered msg/s', med((r) => r.throughput), 0],
  ['backlog scanned msg/s', med((r) => r.scannedPerSec), 0],
  // the time the brief asks for: from the consumer's start until every matching message was delivered
  ['all matches delivered after s', med((r) => (r.scannedPerSec ? r.backlog / r.scannedPerSec : undefined)), 2],
  ['server CPU us/delivered msg', med((r) => r.cpu?.usPerMsg), 1],
  ['server CPU us/backlog msg', med((r) => (r.backlog ? (r.cpu.serverCpuMs * 1000) / r.backlog : undefined)), 2],
  ['  of it in the kernel us/backlog msg', med((r) => (r.backlog && r.cpu.serverSysMs !== undefined ? (r.cpu.serverSysMs * 1000) / r.backlog : undefined)), 2],
  FIRST,
];

const TOPICS_METRICS = [
  ['create + route all topics s', (sr) => phase('create')(sr) / 1000, 1],
  THROUGHPUT, ['p99 ms', lat('p99'), 2], CPU_PER_MSG,
  ['RSS at run end MiB', med((r) => MiB(r.mem?.rss)), 1],
  ['restart after clean stop: ready ms', (sr) => sr?.restarts?.clean?.readyMs, 0],
  ['  first send OK ms', (sr) => sr?.restarts?.clean?.firstSendMs, 0],
  ['restart after kill -9: ready ms', (sr) => sr?.restarts?.crash?.readyMs, 0],
  ['  first send OK ms', (sr) => sr?.restarts?.crash?.firstSendMs, 0],
];

const NAMESRV_METRICS = [
  ['lookups/s', med((r) => r.throughput), 0],
  ['p50 ms', lat('p50'), 2], ['p99 ms', lat('p99'), 2],
  ['nameserver CPU us/lookup', med((r) => r.cpu?.usPerMsg), 1],
  ['register 10 brokers ms', phase('register'), 0],
];

const CONNS_METRICS = [
  ['sent msg/s', med((r) => r.throughput), 0],
  ['delivered %', med((r) => (r.count ? (100 * r.delivered) / r.count : undefined)), 1],
  ['send p50 ms', lat('p50'), 2], ['send p99 ms', lat('p99'), 2],
  ['send->deliver p99 ms', med((r) => (r.e2e?.n ? r.e2e.p99 : undefined)), 2],
  ['server CPU cores', med((r) => r.cpu?.serverCpus), 3],
  CPU_PER_MSG,
  ['RSS at run end MiB', med((r) => MiB(r.mem?.rss)), 1],
  ['  RssAnon MiB', med((r) => MiB(r.mem?.anon)), 1],
  ['server open fds', med((r) => r.fds), 0],
  ['connect all clients s', (sr) => phase('connect')(sr) / 1000, 1],
];

/** Every scenario, for this run's settings (CFG from bench.mjs). */
export function allScenarios(CFG) {
  const filterArgs = { size: KiB, threads: 8, prefill: CFG.filterMsgs, prefillBatch: 16, prefillSeconds: CFG.prefillSeconds * 2, tags: 8, warmup: CFG.quick ? 0 : CFG.warmup };
  const coldMsgs = Math.round(CFG.coldBytes / (4 * KiB));
  return [
    { id: 'sync1', label: 'sync send 1 KiB, 1 thread', mode: 'send', size: KiB, args: { send: 'sync', threads: 1, size: KiB }, limit: { kind: 'echo', conc: 1, size: KiB } },
    { id: 'sync16', label: 'sync send 1 KiB, 16 threads', mode: 'send', size: KiB, args: { send: 'sync', threads: 16, size: KiB }, limit: { kind: 'echo', conc: 16, size: KiB } },
    { id: 'sync64', label: 'sync send 1 KiB, 64 threads', mode: 'send', size: KiB, args: { send: 'sync', threads: 64, size: KiB }, limit: { kind: 'echo', conc: 64, size: KiB } },
    { id: 'async', label: `async send 1 KiB, ${CFG.asyncInflight} in flight`, mode: 'send', size: KiB, args: { send: 'async', threads: 1, size: KiB, inflight: CFG.asyncInflight }, limit: { kind: 'echo', conc: CFG.asyncInflight, size: KiB } },
    { id: 'batch16', label: 'batch send 16 x 1 KiB, 16 threads', mode: 'send', size: KiB, args: { send: 'batch', threads: 16, size: KiB, batch: 16 }, limit: { kind: 'echo', conc: 16, size: 16 * KiB, per: 16 } },
    { id: 'size64k', label: 'sync send 64 KiB, 16 threads', mode: 'send', size: 64 * KiB, args: { send: 'sync', threads: 16, size: 64 * KiB }, limit: { kind: 'echo', conc: 16, size: 64 * KiB } },
    { id: 'consume', label: 'push consume 1 KiB, 16 queues (drain backlog)', mode: 'consume', size: KiB, metrics: CONSUME_METRICS, args: { size: KiB, threads: 16, prefill: CFG.consumeMsgs, prefillSeconds: CFG.prefillSeconds, warmup: CFG.quick ? 0 : CFG.warmup }, limit: { kind: 'sink', size: KiB } },
    { id: 'e2e', label: `send->deliver 1 KiB at ${CFG.e2eRate} msg/s`, mode: 'e2e', size: KiB, args: { size: KiB, threads: 4, rate: CFG.e2eRate }, limit: null },
    {
      id: 'filter-tag', label: `tag filter 1 in 8 (push consume, ${fmtCount(CFG.filterMsgs)} x 1 KiB backlog)`, mode: 'consume', size: KiB,
      metrics: FILTER_METRICS, args: { ...filterArgs, subscribe: 't0' }, limit: null,
    },
    {
      id: 'filter-sql', label: `SQL92 filter 1 in 8 (push consume, ${fmtCount(CFG.filterMsgs)} x 1 KiB backlog)`, mode: 'consume', size: KiB,
      metrics: FILTER_METRICS, args: { ...filterArgs, sql: "k = 0 AND region IN ('eu', 'us')" }, limit: null,
    },
    {
      id: 'namesrv', label: `route lookups, ${CFG.nsTopics} topics x ${CFG.nsBrokers} brokers, ${CFG.nsConnections} connections`, mode: 'namesrv', size: 0,
      metrics: NAMESRV_METRICS, cpu: 'namesrv', limit: null,
      args: { brokers: CFG.nsBrokers, topics: CFG.nsTopics, connections: CFG.nsConnections, threads: 4 },
    },
    {
      id: 'conns1k', label: `${fmtCount(CFG.connsProducers + CFG.connsConsumers + CFG.connsIdle)} clients (${CFG.connsProducers} producers, ${CFG.connsConsumers} consumers, ${CFG.connsIdle} idle) at ${fmtCount(CFG.connsRate)} msg/s`,
      mode: 'conns', size: KiB, metrics: CONNS_METRICS, limit: null, jvm: ['-Xss256k'], budgetSeconds: 400,
      args: { producers: CFG.connsProducers, consumers: CFG.connsConsumers, idle: CFG.connsIdle, rate: CFG.connsRate, queues: CFG.connsConsumers, size: KiB },
    },
    {
      id: 'cold', label: `cold backlog: ${fmtBytes(CFG.coldBytes)} of 4 KiB, page cache dropped, push consume from offset 0`, mode: 'consume', size: 4 * KiB,
      metrics: COLD_METRICS, fresh: true, cold: true, limit: null, budgetSeconds: CFG.coldPrefillSeconds + CFG.runs * 600 + 120,
      args: { size: 4 * KiB, threads: 8, prefill: coldMsgs, prefillBatch: 16, prefillSeconds: CFG.coldPrefillSeconds, cold: true, stallSeconds: 60 },
    },
    {
      id: 'topics2k', label: `${fmtCount(CFG.topics)} topics x 8 queues, sync send 1 KiB round-robin, 16 threads`, mode: 'topics', size: KiB,
      metrics: TOPICS_METRICS, fresh: true, restart: true, limit: null, budgetSeconds: 900,
      args: { topics: CFG.topics, queues: 8, threads: 16, size: KiB },
    },
  ];
}

function fmtCount(n) {
  return Number(n).toLocaleString('en-US');
}

function fmtBytes(b) {
  return b >= 1024 ** 3 ? `${+(b / 1024 ** 3).toFixed(2)} GiB` : `${+(b / 1024 ** 2).toFixed(0)} MiB`;
}
