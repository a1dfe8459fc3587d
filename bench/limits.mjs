// "Physical limits" of this machine for bench.mjs: loopback TCP (request/response at a given concurrency and
// request size, and one-way streaming) and the sequential write rate of a filesystem (write + fdatasync).
//
//   node bench/limits.mjs                       # prints all limits (as bench.mjs measures them) as JSON
//   node bench/limits.mjs serve                 # (internal) echo + sink server in its own process
//   node bench/limits.mjs client '<spec json>'  # (internal) one client measurement in its own process
//
// The TCP tests model the RocketMQ wire pattern: one connection, CONC requests of SIZE bytes outstanding, each
// answered by a 64-byte frame (a send and its SEND_OK). Server and client are separate processes, so both cores
// are used, as with broker + client JVM.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const REPLY = 64;

// ------------------------------------------------------------------ server (child process)

function serve() {
  const replyFrame = Buffer.alloc(REPLY);
  replyFrame.writeUInt32BE(REPLY - 4, 0);
  let replies = Buffer.concat(Array.from({ length: 1024 }, () => replyFrame));
  const echo = net.createServer((sock) => {
    sock.setNoDelay(true);
    const hdr = Buffer.alloc(4);
    let hdrGot = 0;
    let remaining = 0;
    sock.on('data', (chunk) => {
      let off = 0;
      let n = 0;
      while (off < chunk.length) {
        if (remaining === 0) {
          while (hdrGot < 4 && off < chunk.length) hdr[hdrGot++] = chunk[off++];
          if (hdrGot < 4) break;
          hdrGot = 0;
          remaining = hdr.readUInt32BE(0);
          if (remaining === 0) { n++; continue; }
        }
        const take = Math.min(remaining, chunk.length - off);
        off += take;
        remaining -= take;
        if (remaining === 0) n++;
      }
      if (n > 0) {
        while (n * REPLY > replies.length) replies = Buffer.concat([replies, replies]);
        sock.write(replies.subarray(0, n * REPLY));
      }
    });
    sock.on('error', () => {});
  });
  const sink = net.createServer((sock) => {
    let bytes = 0;
    let first = 0n;
    let last = 0n;
    sock.on('data', (chunk) => {
      const now = process.hrtime.bigint();
      if (first === 0n) first = now;
      last = now;
      bytes += chunk.length;
    });
    sock.on('end', () => sock.end(JSON.stringify({ bytes, ns: Number(last - first) })));
    sock.on('error', () => {});
  });
  echo.listen(0, '127.0.0.1', () => {
    sink.listen(0, '127.0.0.1', () => {
      process.stdout.write(`${JSON.stringify({ echo: echo.address().port, sink: sink.address().port })}\n`);
    });
  });
}

// ------------------------------------------------------------------ client (child process)

function client(spec) {
  const { kind, port, size, ms } = spec;
  const frame = Buffer.alloc(4 + size);
  frame.writeUInt32BE(size, 0);
  crypto.randomFillSync(frame, 4);
  const sock = net.connect(port, '127.0.0.1');
  sock.setNoDelay(true);
  const done = (r) => {
    process.stdout.write(`${JSON.stringify({ ...spec, ...r })}\n`);
    sock.destroy();
    process.exit(0);
  };
  if (kind === 'sink') {
    const per = Math.max(1, Math.floor((256 * 1024) / frame.length));
    const big = Buffer.concat(Array.from({ length: per }, () => frame));
    let end = 0;
    let answer = '';
    const pump = () => {
      while (Date.now() < end) {
        if (!sock.write(big)) return;
      }
      sock.end();
    };
    sock.on('connect', () => { end = Date.now() + ms; pump(); });
    sock.on('drain', pump);
    sock.on('data', (d) => { answer += d; });
    sock.on('end', () => {
      const { bytes, ns } = JSON.parse(answer);
      const secs = ns / 1e9;
      done({ msgsPerSec: bytes / frame.length / secs, mbps: bytes / secs / 1e6, seconds: secs });
    });
    return;
  }
  // echo: CONC requests outstanding on one connection, replies arrive in order
  const conc = spec.conc;
  let framesBuf = Buffer.concat(Array.from({ length: Math.min(conc, 64) }, () => frame));
  const sent = new Float64Array(1 << 20);
  let head = 0;
  let tail = 0;
  let outstanding = 0;
  let completed = 0;
  let carry = 0;
  let stopAt = 0;
  let startAt = 0;
  let lastAt = 0;
  const lat = [];
  const send = (k) => {
    const now = performance.now();
    for (let i = 0; i < k; i++) { sent[tail] = now; tail = (tail + 1) & (sent.length - 1); }
    outstanding += k;
    while (k > 0) {
      const m = Math.min(k, framesBuf.length / frame.length);
      sock.write(framesBuf.subarray(0, m * frame.length));
      k -= m;
    }
  };
  sock.on('connect', () => {
    startAt = performance.now();
    stopAt = startAt + ms;
    if (conc > 64) framesBuf = Buffer.concat(Array.from({ length: conc }, () => frame));
    send(conc);
  });
  sock.on('data', (d) => {
    const now = performance.now();
    const total = carry + d.length;
    const n = Math.floor(total / REPLY);
    carry = total % REPLY;
    for (let i = 0; i < n; i++) {
      if (now <= stopAt) lat.push(now - sent[head]);
      head = (head + 1) & (sent.length - 1);
    }
    outstanding -= n;
    if (now <= stopAt) { completed += n; lastAt = now; send(n); }
    else if (outstanding === 0) {
      lat.sort((a, b) => a - b);
      const p = (q) => lat.length ? lat[Math.min(lat.length - 1, Math.ceil(q * lat.length) - 1)] : 0;
      const secs = (lastAt - startAt) / 1000;
      done({ msgsPerSec: completed / secs, mbps: (completed * size) / secs / 1e6, seconds: secs, p50Ms: p(0.5), p99Ms: p(0.99) });
    }
  });
}

// ------------------------------------------------------------------ API for bench.mjs

function childJson(args, onSpawn) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [SELF, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    let resolved = false;
    p.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0 && !resolved) { resolved = true; resolve({ proc: p, value: JSON.parse(buf.slice(0, nl)) }); }
    });
    p.on('exit', (code) => { if (!resolved) reject(new Error(`limits.mjs ${args[0]} exited with ${code}`)); });
    onSpawn?.(p);
  });
}

/** specs: [{kind:'echo', conc, size} | {kind:'sink', size}] → the same objects with msgsPerSec, mbps (, p50Ms, p99Ms). */
export async function tcpLimits(specs, ms, onResult) {
  const { proc: server, value: ports } = await childJson(['serve']);
  const out = [];
  try {
    for (const s of specs) {
      const spec = { ...s, ms, port: s.kind === 'sink' ? ports.sink : ports.echo };
      const { value } = await childJson(['client', JSON.stringify(spec)]);
      delete value.port;
      out.push(value);
      onResult?.(value);
    }
  } finally {
    server.kill('SIGTERM');
  }
  return out;
}

/** Sequential write of MIB MiB in 1 MiB writes + one fdatasync, in DIR (the stores' filesystem). */
export function diskLimit(dir, mib) {
  fs.mkdirSync(dir, { recursive: true });
  const f = path.join(dir, `bench-disk-test-${process.pid}.bin`);
  const buf = crypto.randomBytes(1 << 20);
  const fd = fs.openSync(f, 'w');
  const t0 = process.hrtime.bigint();
  try {
    for (let i = 0; i < mib; i++) fs.writeSync(fd, buf);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  fs.unlinkSync(f);
  let fsType = '?';
  try { fsType = execFileSync('df', ['-T', dir], { encoding: 'utf8' }).trim().split('\n').pop().split(/\s+/)[1]; } catch { /* ignore */ }
  return { dir, fsType, bytes: mib * (1 << 20), seconds: secs, mbps: (mib * (1 << 20)) / secs / 1e6 };
}

// ------------------------------------------------------------------ CLI

const [mode, arg] = process.argv.slice(2);
if (process.argv[1] === SELF) {
  if (mode === 'serve') serve();
  else if (mode === 'client') client(JSON.parse(arg));
  else {
    const specs = [
      { kind: 'echo', conc: 1, size: 1024 }, { kind: 'echo', conc: 16, size: 1024 }, { kind: 'echo', conc: 64, size: 1024 },
      { kind: 'echo', conc: 256, size: 1024 }, { kind: 'echo', conc: 16, size: 16384 }, { kind: 'echo', conc: 16, size: 65536 },
      { kind: 'sink', size: 1024 },
    ];
    const tcp = await tcpLimits(specs, 2000);
    const disk = diskLimit(process.env.TMPDIR ?? '/tmp', 256);
    process.stdout.write(`${JSON.stringify({ tcp, disk }, null, 2)}\n`);
  }
}
