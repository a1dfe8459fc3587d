#!/usr/bin/env node
// Server cost per message for a fixed amount of work, to judge an optimisation without a quiet machine: starts
// `node DIST/main.js start` on a temporary store, sends WARMUP then MESSAGES requests of one shape over one
// connection with a fixed number in flight (SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE frames as the Java 4.9.8 client
// builds them: JSON header, V2 letter fields, UNIQ_KEY and WAIT properties), and reports the server's CPU time
// (/proc utime+stime) per message over the measured part. With several --dist directories the builds take turns
// (A B A B ...) so load from other processes hits both alike; medians per build are printed.
//
// --callgrind runs the server under `valgrind --tool=callgrind` with instrumentation switched on only for the
// measured part (callgrind_control): instructions per message, which do not depend on other load (the server is
// then ~50x slower, so every turn finds the whole window of requests waiting: the figure is the saturated case).
//
//   node bench/cpu-per-msg.mjs --shape=batch16 --dist=/work/main/dist,dist --rounds=5
//   node bench/cpu-per-msg.mjs --shape=size64k --callgrind --messages=3000
//
// Options: --shape=sync1k|async1k|batch16|size64k|sync4k  --messages=N (20000; batches count 16 each)
//          --warmup=N (5000)  --inflight=N (16; async1k 256)  --rounds=N (3)  --dist=DIR[,DIR...] (dist)
//          --callgrind  --args="--key=value ..." (extra server flags)  --cpu-prof=DIR (server under --cpu-prof)  --json
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CLK_TCK, procTicks } from './proc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (n, d) => argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? d;
const flag = (n) => argv.includes(`--${n}`);
if (flag('help')) {
  process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 20).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
  process.exit(0);
}

const SHAPES = {
  sync1k: { size: 1024, batch: 1, inflight: 16 },
  sync4k: { size: 4096, batch: 1, inflight: 16 },
  async1k: { size: 1024, batch: 1, inflight: 256 },
  batch16: { size: 1024, batch: 16, inflight: 16 },
  size64k: { size: 65536, batch: 1, inflight: 16 },
  // nameserver: 10 brokers registered with 1,000 topics each (REGISTER_BROKER as a Java broker sends it), then
  // GET_ROUTEINFO_BY_TOPIC for random topics
  route: { size: 0, batch: 1, inflight: 64, route: true },
};
const shapeName = opt('shape', 'sync1k');
const shape = SHAPES[shapeName];
if (!shape) throw new Error(`unknown --shape ${shapeName} (${Object.keys(SHAPES).join(', ')})`);
const inflight = Number(opt('inflight', shape.inflight));
const messages = Number(opt('messages', 20000));
const warmup = Number(opt('warmup', 5000));
const rounds = Number(opt('rounds', 3));
const dists = opt('dist', 'dist').split(',').map((d) => path.resolve(ROOT, d));
const callgrind = flag('callgrind');
const extraArgs = opt('args', '').split(/\s+/).filter(Boolean);
const profileDir = opt('cpu-prof');
const TOPIC = 'BenchCpu';
const QUEUES = 8;

// ------------------------------------------------------------------ frames (Java 4.9.8 client shapes)

let opaque = 1;
function frame(code, extFields, body) {
  const header = Buffer.from(JSON.stringify({ code, extFields, flag: 0, language: 'JAVA', opaque: opaque++, serializeTypeCurrentRPC: 'JSON', version: 409 }));
  const prefix = Buffer.allocUnsafe(8);
  prefix.writeInt32BE(4 + header.length + (body?.length ?? 0), 0);
  prefix.writeInt32BE(header.length, 4);
  return body ? [prefix, header, body] : [prefix, header];
}
let uniq = 0;
const uniqKey = () => `7F0000011F2C18B4AAC2${(uniq++).toString(16).toUpperCase().padStart(12, '0')}`;
function props() {
  return `UNIQ_KEY\u0001${uniqKey()}\u0002WAIT\u0001true\u0002`;
}
const BODY = Buffer.alloc(shape.size, 7);
const ROUTE_TOPICS = 1000;
const ROUTE_BROKERS = 10;
function registerRequest(b) {
  const table = [];
  for (let t = 0; t < ROUTE_TOPICS; t++) {
    table.push(`"BenchRoute_${t}":{"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"BenchRoute_${t}","topicSysFlag":0,"writeQueueNums":8}`);
  }
  const body = Buffer.from(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"timestamp":${Date.now()}},"topicConfigTable":{${table.join(',')}}}}`);
  return frame(103, { brokerAddr: `127.0.0.1:${20911 + 10 * b}`, brokerId: '0', brokerName: `bench-broker-${b}`, clusterName: 'BenchCluster', haServerAddr: `127.0.0.1:${20912 + 10 * b}`, compressed: 'false', bodyCrc32: '0' }, body);
}
function sendRequest(i) {
  if (shape.route) return frame(105, { topic: `BenchRoute_${(i * 7919) % ROUTE_TOPICS}` });
  const ext = { a: 'bench_cpu_pg', b: TOPIC, c: 'TBW102', d: String(QUEUES), e: String(i % QUEUES), f: '0', g: String(Date.now()), h: '0', j: '0', k: 'false', m: 'false' };
  if (shape.batch === 1) return frame(310, { ...ext, i: props() }, BODY);
  // MessageDecoder.encodeMessages: TOTALSIZE MAGIC BODYCRC FLAG BODYLEN BODY PROPLEN PROPS per message
  const parts = [];
  for (let k = 0; k < shape.batch; k++) {
    const p = Buffer.from(props());
    const m = Buffer.allocUnsafe(20 + BODY.length + 2 + p.length);
    m.writeInt32BE(m.length, 0);
    m.writeInt32BE(0, 4);
    m.writeInt32BE(0, 8);
    m.writeInt32BE(0, 12);
    m.writeInt32BE(BODY.length, 16);
    BODY.copy(m, 20);
    m.writeInt16BE(p.length, 20 + BODY.length);
    p.copy(m, 22 + BODY.length);
    parts.push(m);
  }
  return frame(320, { ...ext, m: 'true' }, Buffer.concat(parts));
}

/** Sends `count` requests keeping `inflight` outstanding; resolves with the number answered SUCCESS. */
function drive(sock, count) {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let done = 0;
    let ok = 0;
    let buf = Buffer.alloc(0);
    const pump = () => {
      while (sent < count && sent - done < inflight) {
        for (const p of sendRequest(sent)) sock.write(p);
        sent++;
      }
    };
    const onData = (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const len = buf.readInt32BE(0);
        const hl = buf.readInt32BE(4) & 0xffffff;
        const h = JSON.parse(buf.toString('utf8', 8, 8 + hl));
        if (h.code === 0) ok++;
        else if (ok === 0 && done === 0) process.stderr.write(`  first answer: code ${h.code} ${h.remark ?? ''}\n`);
        buf = buf.subarray(4 + len);
        done++;
      }
      if (done === count) {
        sock.off('data', onData);
        resolve(ok);
      } else pump();
    };
    sock.on('data', onData);
    sock.once('error', reject);
    pump();
  });
}

// ------------------------------------------------------------------ one measurement

/**
 * Instructions spent in V8's compilers (TurboFan, Maglev, Sparkplug, the parser and bytecode generator) in one
 * callgrind file: code still tiering up during the measured part, which differs between builds for reasons that
 * have nothing to do with the cost per message.
 */
function jitInstructions(file) {
  const out = execFileSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  let sum = 0;
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
    if (!m) continue;
    if (/v8::internal::(compiler|maglev|baseline|interpreter)::|v8::internal::(Compiler|Parser|PreParser|Scanner|AstValueFactory|ParserBase|BytecodeGenerator|Pipeline|OptimizedCompilationInfo)|Turbofan|v8::internal::wasm::/.test(m[2])) {
      sum += Number(m[1].replace(/,/g, ''));
    }
  }
  return sum;
}

async function measure(dist) {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-cpu-'));
  const cgOut = path.join(store, 'callgrind.out');
  const nodeArgs = [path.join(dist, 'main.js'), 'start', '--namesrvPort=0', '--listenPort=0', `--storePathRootDir=${store}`, ...extraArgs];
  const child = callgrind
    ? spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${cgOut}`, process.execPath,
      // optimise on the main thread, as soon as a function is hot: under valgrind the background compiler runs so
      // slowly that a warm-up of thousands of messages still ends in baseline code
      '--no-concurrent-recompilation', ...nodeArgs], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : []), ...nodeArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.resume();
  const ready = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.on('line', (l) => { if (/rocketmq-ts ready/.test(l)) resolve(l); });
    child.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const port = Number((shape.route ? /namesrv 127\.0\.0\.1:(\d+)/ : /broker 127\.0\.0\.1:(\d+)/).exec(ready)[1]);
  const connect = async () => {
    const c = net.connect(port, '127.0.0.1');
    c.setNoDelay(true);
    await new Promise((r) => c.once('connect', r));
    return c;
  };
  const sock = await connect();
  const registrars = [];
  if (shape.route) {
    // each fake broker on its own connection (closing it would unregister the broker)
    for (let b = 0; b < ROUTE_BROKERS; b++) {
      const c = await connect();
      registrars.push(c);
      await new Promise((resolve) => {
        c.once('data', resolve);
        for (const part of registerRequest(b)) c.write(part);
      });
    }
  }
  const perReq = shape.batch;
  await drive(sock, Math.ceil(warmup / perReq));
  const requests = Math.ceil(messages / perReq);
  let ir;
  let irMain;
  let irJit;
  const t0 = performance.now();
  const c0 = procTicks(child.pid);
  if (callgrind) execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' });
  const ok = await drive(sock, requests);
  if (callgrind) execFileSync('callgrind_control', ['-i', 'off', String(child.pid)], { stdio: 'ignore' });
  const c1 = procTicks(child.pid);
  const wallMs = performance.now() - t0;
  sock.destroy();
  for (const c of registrars) c.destroy();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  if (callgrind) {
    // one file per thread (-01 is the main thread: the event loop, where a single-threaded server's time goes)
    const files = fs.readdirSync(store).filter((f) => f.startsWith('callgrind.out')).sort();
    ir = 0;
    for (const f of files) {
      const n = Number(/^totals:\s+(\d+)/m.exec(fs.readFileSync(path.join(store, f), 'utf8'))?.[1] ?? 0);
      ir += n;
      if (f.endsWith('-01')) {
        irMain = n;
        irJit = jitInstructions(path.join(store, f));
      }
    }
    if (flag('keep')) process.stderr.write(`  callgrind files: ${files.map((f) => path.join(store, f)).join(' ')}\n`);
  }
  if (!flag('keep')) fs.rmSync(store, { recursive: true, force: true });
  const msgs = requests * perReq;
  return { dist, ok: ok * perReq, msgs, wallMs, usPerMsg: ((c1 - c0) * 1e6) / CLK_TCK / msgs, msgsPerSec: (msgs * 1000) / wallMs, ...(ir ? { irPerMsg: ir / msgs, irMainPerMsg: irMain / msgs, irMainNoJitPerMsg: (irMain - irJit) / msgs } : {}) };
}

const median = (xs) => { const a = [...xs].sort((x, y) => x - y); return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2; };
const results = [];
process.stderr.write(`cpu-per-msg: ${shapeName} (${shape.size} B x ${shape.batch}), ${messages} msgs after ${warmup}, ${inflight} in flight, ${rounds} rounds${callgrind ? ', callgrind' : ''}; load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
for (let r = 0; r < rounds; r++) {
  for (const d of dists) {
    const m = await measure(d);
    results.push(m);
    process.stderr.write(`  round ${r + 1} ${path.relative(ROOT, d) || d}: ${m.usPerMsg.toFixed(2)} us/msg CPU, ${m.msgsPerSec.toFixed(0)} msg/s${m.irPerMsg ? `, instructions/msg: ${m.irMainNoJitPerMsg.toFixed(0)} main thread without V8's compilers (${m.irMainPerMsg.toFixed(0)} with them, ${m.irPerMsg.toFixed(0)} all threads)` : ''}${m.ok < m.msgs ? `, ${m.msgs - m.ok} NOT OK` : ''}\n`);
  }
}
const summary = dists.map((d) => {
  const mine = results.filter((m) => m.dist === d);
  return { dist: d, usPerMsg: median(mine.map((m) => m.usPerMsg)), msgsPerSec: median(mine.map((m) => m.msgsPerSec)), ...(callgrind ? { irPerMsg: median(mine.map((m) => m.irPerMsg)), irMainPerMsg: median(mine.map((m) => m.irMainPerMsg)), irMainNoJitPerMsg: median(mine.map((m) => m.irMainNoJitPerMsg)) } : {}) };
});
for (const s of summary) process.stdout.write(`${shapeName} ${path.relative(ROOT, s.dist) || s.dist}: median ${s.usPerMsg.toFixed(2)} us/msg CPU${s.irPerMsg ? `, instructions/msg ${s.irMainNoJitPerMsg.toFixed(0)} main thread without V8's compilers (${s.irMainPerMsg.toFixed(0)} with, ${s.irPerMsg.toFixed(0)} all threads)` : ''}, ${s.msgsPerSec.toFixed(0)} msg/s\n`);
if (flag('json')) process.stdout.write(`${JSON.stringify({ shape: shapeName, inflight, messages, results, summary })}\n`);
