#!/usr/bin/env node
// Store durability benchmark (not a test). Needs `npm run build` first.
//
// 1. recovery: fills a store through the real server (`node dist/main.js start`, raw SEND_MESSAGE over loopback),
//    SIGKILLs it while sends are still in flight, restarts it on the same store and reports the time to the
//    ready line and the store's own recovery figures (ms, bytes scanned). With --full-rescan it then removes
//    the checkpoint and the consume queues and restarts once more: the worst case, every byte re-read and
//    every consume-queue entry rebuilt.
// 2. flush: SYNC_FLUSH vs ASYNC_FLUSH send throughput and latency, through the store API in this process and
//    through the server.
//
//   node bench/store-recovery.mjs                       # 2 GiB store, 1 GiB commit-log files (Java defaults)
//   node bench/store-recovery.mjs --size=512MiB --full-rescan
//   node bench/store-recovery.mjs --only=flush --seconds=5
//
// Options: --size=2GiB  --segment=1GiB  --body=4096  --inflight=64  --fill-mode=ASYNC_FLUSH|SYNC_FLUSH
//          --full-rescan  --only=recovery|flush  --seconds=3 (per flush run)  --concurrency=1,16,64  --keep
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
if (!fs.existsSync(path.join(DIST, 'main.js'))) {
  process.stderr.write('dist/main.js is missing: run `npm run build` first\n');
  process.exit(2);
}
const imp = (p) => import(pathToFileURL(path.join(DIST, p)).href);
const { RemotingClient } = await imp('remoting/client.js');
const { createRequest } = await imp('remoting/command.js');
const { RequestCode } = await imp('common/request-code.js');
const { createMessageStore } = await imp('store/index.js');
const pino = (await import('pino')).default;

const argv = process.argv.slice(2);
const flag = (n) => argv.includes(`--${n}`);
const opt = (n, d) => argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? d;
if (flag('help')) {
  process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 18).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
  process.exit(0);
}
function bytes(s) {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|K|M|G)?$/i.exec(s);
  if (!m) throw new Error(`bad size ${s}`);
  const unit = { b: 1, kib: 1024, k: 1024, mib: 1 << 20, m: 1 << 20, gib: 1 << 30, g: 1 << 30 }[(m[2] ?? 'b').toLowerCase()];
  return Math.round(Number(m[1]) * unit);
}
const SIZE = bytes(opt('size', '2GiB'));
const SEGMENT = bytes(opt('segment', '1GiB'));
const BODY = Number(opt('body', '4096'));
const INFLIGHT = Number(opt('inflight', '64'));
const FILL_MODE = opt('fill-mode', 'ASYNC_FLUSH');
const SECONDS = Number(opt('seconds', '3'));
const CONCURRENCY = opt('concurrency', '1,16,64').split(',').map(Number);
const ONLY = opt('only', '');
const KEEP = flag('keep');
const TOPIC = 'BenchRecovery';
const log = (s) => process.stderr.write(`${s}\n`);
const mib = (b) => (b / (1 << 20)).toFixed(1);
const silent = pino({ level: 'silent' });
const results = { machine: { cpus: os.cpus().length, load: os.loadavg().map((l) => l.toFixed(1)).join(' ') } };

// ------------------------------------------------------------------ server process

function startServer(storeDir, mode, extra = []) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [
    path.join(DIST, 'main.js'), 'start', `--storePathRootDir=${storeDir}`, '--listenPort=0', '--namesrvPort=0',
    '--brokerIP1=127.0.0.1', `--flushDiskType=${mode}`, `--mappedFileSizeCommitLog=${SEGMENT}`, ...extra,
  ], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RMQ_LOG_LEVEL: 'info' } });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const s = { child, exited, recovery: null };
    let out = '';
    let errTail = '';
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      errTail = (errTail + chunk).slice(-8000);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        if (line.includes('recovering commit log')) {
          // the server's own progress (percent and rate) while it re-reads and re-dispatches
          try {
            const p = JSON.parse(line);
            log(`    server recovering: ${p.percent}% of the files (${p.ofMiB} MiB, the last one not full), ${p.MiBps} MiB/s, ${p.records} records`);
          } catch { /* ignore */ }
        }
        if (line.includes('message store: recovered')) {
          try { s.recovery = JSON.parse(line); } catch { /* ignore */ }
        }
      }
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /rocketmq-ts ready: namesrv (\S+), broker (\S+) /.exec(out);
      if (m && !s.brokerAddr) {
        s.namesrvAddr = m[1];
        s.brokerAddr = m[2];
        s.readyMs = Math.round(performance.now() - t0);
        // stdout and stderr are separate pipes: the recovery log line may still be on its way
        const waitStart = Date.now();
        const poll = () => (s.recovery || Date.now() - waitStart > 2000 ? resolve(s) : setTimeout(poll, 20));
        poll();
      }
    });
    exited.then(({ code, signal }) => {
      if (!s.brokerAddr) reject(new Error(`server exited (${code ?? signal}) before ready:\n${errTail}`));
    });
  });
}

async function createTopic(client, brokerAddr) {
  const res = await client.request(brokerAddr, createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
    topic: TOPIC, defaultTopic: 'TBW102', readQueueNums: '8', writeQueueNums: '8', perm: '6',
    topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
  }), 10_000);
  if (res.code !== 0) throw new Error(`create topic: ${res.code} ${res.remark}`);
}

let sendSeq = 0;
function sendRequest(body) {
  const i = sendSeq++;
  return createRequest(RequestCode.SEND_MESSAGE, {
    producerGroup: 'PG_bench', topic: TOPIC, defaultTopic: 'TBW102', defaultTopicQueueNums: '8', queueId: String(i % 8),
    sysFlag: '0', bornTimestamp: String(Date.now()), flag: '0', properties: `UNIQ_KEY\u0001B${i}\u0002`,
    reconsumeTimes: '0', unitMode: 'false', batch: 'false',
  }, body);
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;
}

/**
 * Sends with `inflight` requests outstanding until `until()` says stop; returns counts and latencies (ms).
 * Failed sends (the server died) are counted, not thrown.
 */
async function sendLoad(client, brokerAddr, body, inflight, until) {
  const lat = [];
  let ok = 0;
  let failed = 0;
  const worker = async () => {
    while (!until(ok)) {
      const t = performance.now();
      try {
        const res = await client.request(brokerAddr, sendRequest(body), 30_000);
        if (res.code === 0) {
          ok++;
          lat.push(performance.now() - t);
        } else failed++;
      } catch {
        failed++;
        return;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inflight }, worker));
  return { ok, failed, seconds: (performance.now() - t0) / 1000, lat: lat.sort((a, b) => a - b) };
}

// ------------------------------------------------------------------ 1. recovery

async function recoveryBench() {
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-bench-recovery-'));
  const body = Buffer.alloc(BODY, 0x61);
  const perMsg = BODY + 91 + TOPIC.length + 20;
  const target = Math.ceil(SIZE / perMsg);
  log(`recovery: filling ${mib(SIZE)} MiB (${target} x ${BODY} B) through the server (${FILL_MODE}, ${mib(SEGMENT)} MiB files) in ${storeDir}`);
  let server = await startServer(storeDir, FILL_MODE);
  const client = new RemotingClient(silent);
  try {
    await createTopic(client, server.brokerAddr);
    let lastReport = performance.now();
    const fillStart = lastReport;
    const fill = await sendLoad(client, server.brokerAddr, body, INFLIGHT, (ok) => {
      if (performance.now() - lastReport > 5000) {
        lastReport = performance.now();
        const secs = (lastReport - fillStart) / 1000;
        log(`  ${ok}/${target} sent (${((ok * 100) / target).toFixed(0)}%, ${(ok / secs).toFixed(0)} msg/s, ${mib((ok * BODY) / secs)} MiB/s)`);
      }
      return ok >= target;
    });
    const fillMBps = (fill.ok * perMsg) / (1 << 20) / fill.seconds;
    log(`  filled: ${fill.ok} msgs in ${fill.seconds.toFixed(1)} s (${fillMBps.toFixed(1)} MiB/s)`);
    // Keep sending while the kill lands, so the tail may be torn mid-write.
    let stop = false;
    const tail = sendLoad(client, server.brokerAddr, body, INFLIGHT, () => stop);
    await new Promise((r) => setTimeout(r, 300));
    server.child.kill('SIGKILL');
    await server.exited;
    stop = true;
    await tail;
    const storeBytes = dirBytes(path.join(storeDir, 'commitlog'));
    server = await startServer(storeDir, FILL_MODE);
    const rec = server.recovery ?? {};
    log(`  after kill -9: ready in ${server.readyMs} ms; recovery ${rec.durationMs} ms, ${mib(rec.bytesScanned ?? 0)} MiB scanned, abnormal=${rec.abnormal}`);
    results.recovery = {
      storeMiB: Number(mib(SIZE)), segmentMiB: Number(mib(SEGMENT)), fillMsgs: fill.ok, fillMiBps: Number(fillMBps.toFixed(1)),
      fillP50ms: Number(percentile(fill.lat, 0.5).toFixed(2)), fillP99ms: Number(percentile(fill.lat, 0.99).toFixed(2)),
      commitLogFilesMiB: Number(mib(storeBytes)), afterKill: { readyMs: server.readyMs, ...pick(rec) },
    };
    if (flag('full-rescan')) {
      server.child.kill('SIGKILL');
      await server.exited;
      fs.rmSync(path.join(storeDir, 'checkpoint'), { force: true });
      fs.rmSync(path.join(storeDir, 'consumequeue'), { recursive: true, force: true });
      fs.rmSync(path.join(storeDir, 'index'), { recursive: true, force: true });
      server = await startServer(storeDir, FILL_MODE);
      const full = server.recovery ?? {};
      log(`  full rescan (no checkpoint, consume queues and index rebuilt): ready in ${server.readyMs} ms; recovery ${full.durationMs} ms, ${mib(full.bytesScanned ?? 0)} MiB scanned, ${full.rebuilt} entries rebuilt`);
      results.recovery.fullRescan = { readyMs: server.readyMs, ...pick(full) };
    }
  } finally {
    await client.close();
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    if (!KEEP) fs.rmSync(storeDir, { recursive: true, force: true });
  }
}

function pick(rec) {
  return { recoveryMs: rec.durationMs, bytesScanned: rec.bytesScanned, rebuilt: rec.rebuilt, abnormal: rec.abnormal };
}

function dirBytes(dir) {
  let n = 0;
  for (const f of fs.readdirSync(dir)) n += fs.statSync(path.join(dir, f)).blocks * 512;
  return n;
}

// ------------------------------------------------------------------ 2. flush modes

async function storeApiRun(mode, concurrency) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-bench-flush-'));
  const store = createMessageStore({ storePathRootDir: root, flushDiskType: mode, mappedFileSizeCommitLog: 256 << 20 }, silent);
  await store.start();
  const ip = Buffer.from([127, 0, 0, 1]);
  const body = Buffer.alloc(1024, 0x62);
  const lat = [];
  let n = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const worker = async (w) => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const r = await store.putMessage({
        topic: 'Flush', queueId: w % 8, flag: 0, body, propertiesString: `UNIQ_KEY\u0001F${n}\u0002`, tagsCode: 0, sysFlag: 0,
        bornTimestamp: Date.now(), bornHost: { ip, port: 1 }, storeHost: { ip, port: 10911 }, reconsumeTimes: 0,
        preparedTransactionOffset: 0,
      });
      if (r.status === 'PUT_OK') {
        n++;
        lat.push(performance.now() - t);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const seconds = (performance.now() - t0) / 1000;
  const fsyncs = store.stats.commitLogFsyncCalls;
  await store.shutdown();
  fs.rmSync(root, { recursive: true, force: true });
  lat.sort((a, b) => a - b);
  return row('store API', mode, concurrency, n, seconds, lat, { fsyncs });
}

async function serverRun(mode, concurrency) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-bench-flush-'));
  const server = await startServer(root, mode, ['--mappedFileSizeCommitLog=268435456']);
  const client = new RemotingClient(silent);
  try {
    await createTopic(client, server.brokerAddr);
    const deadline = performance.now() + SECONDS * 1000;
    const r = await sendLoad(client, server.brokerAddr, Buffer.alloc(1024, 0x63), concurrency, () => performance.now() > deadline);
    return row('server', mode, concurrency, r.ok, r.seconds, r.lat, {});
  } finally {
    await client.close();
    server.child.kill('SIGTERM');
    await server.exited;
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function row(via, mode, concurrency, n, seconds, lat, extra) {
  return {
    via, mode, concurrency, msgs: n, msgPerSec: Math.round(n / seconds), MiBps: Number(((n * 1024) / (1 << 20) / seconds).toFixed(1)),
    p50ms: Number(percentile(lat, 0.5).toFixed(3)), p99ms: Number(percentile(lat, 0.99).toFixed(3)), ...extra,
  };
}

async function flushBench() {
  log(`flush: SYNC_FLUSH vs ASYNC_FLUSH, 1 KiB messages, ${SECONDS} s per run, concurrency ${CONCURRENCY.join('/')}`);
  const rows = [];
  for (const via of [storeApiRun, serverRun]) {
    for (const mode of ['SYNC_FLUSH', 'ASYNC_FLUSH']) {
      for (const c of CONCURRENCY) {
        const r = await via(mode, c);
        log(`  ${r.via} ${mode} x${c}: ${r.msgPerSec} msg/s, p50 ${r.p50ms} ms, p99 ${r.p99ms} ms`);
        rows.push(r);
      }
    }
  }
  results.flush = rows;
}

if (ONLY !== 'flush') await recoveryBench();
if (ONLY !== 'recovery') await flushBench();
if (results.recovery) {
  console.log('recovery after kill -9');
  const { afterKill: _a, fullRescan: _f, ...fill } = results.recovery;
  console.table([fill]);
  console.table({ afterKill: results.recovery.afterKill, ...(results.recovery.fullRescan ? { fullRescan: results.recovery.fullRescan } : {}) });
}
if (results.flush) {
  console.log('send throughput / latency');
  console.table(results.flush);
}
console.log(JSON.stringify(results));
