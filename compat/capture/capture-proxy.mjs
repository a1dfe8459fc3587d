#!/usr/bin/env node
// TCP capture proxy for the RocketMQ remoting protocol (plain Node, no dependencies).
//
//   node capture-proxy.mjs --out frames.jsonl \
//        --map ns=127.0.0.1:21878>127.0.0.1:21876 \
//        --map broker=127.0.0.1:22921>127.0.0.1:22911 \
//        [--rewrite ns:127.0.0.1:22911=127.0.0.1:22921]
//
// Every --map NAME=LISTEN>TARGET listens on LISTEN (must be a loopback address) and forwards each accepted
// connection to TARGET (loopback only). Each complete frame seen in either direction
//   [int32 length][int32 serType<<24 | headerLen][header][body]
// is appended to --out as one JSON line:
//   {"t":"ISO time","ms":epochMs,"map":"ns","conn":3,"dir":"c2s"|"s2c","peer":"127.0.0.1:50312",
//    "target":"127.0.0.1:21876","serType":0,"code":105,"flag":0,"opaque":7,"header":{...}|null,
//    "bodyLength":0,"frameHex":"..."}
// (`header` is the decoded JSON header; for binary ROCKETMQ headers the fixed fields are decoded.)
//
// --rewrite MAP:FROM=TO replaces the ASCII string FROM by TO (same byte length required, so frame lengths stay
// valid) in server->client frames of that map before forwarding; the capture records the ORIGINAL frame. Used to
// point clients at a broker proxy through the route data a nameserver returns.
// Prints "capture-proxy ready" once all listeners are up. Stops on SIGTERM/SIGINT.
import net from 'node:net';
import fs from 'node:fs';

const args = process.argv.slice(2);
const maps = [];
const rewrites = new Map();
let out = null;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--out') out = args[++i];
  else if (a === '--map') {
    const m = /^([\w-]+)=([\d.]+):(\d+)>([\d.]+):(\d+)$/.exec(args[++i] ?? '');
    if (!m) usage(`bad --map ${args[i]}`);
    maps.push({ name: m[1], lhost: m[2], lport: +m[3], thost: m[4], tport: +m[5] });
  } else if (a === '--rewrite') {
    const m = /^([\w-]+):([^=]+)=(.+)$/.exec(args[++i] ?? '');
    if (!m) usage(`bad --rewrite ${args[i]}`);
    if (Buffer.byteLength(m[2]) !== Buffer.byteLength(m[3])) usage('--rewrite FROM and TO must have the same length');
    if (!rewrites.has(m[1])) rewrites.set(m[1], []);
    rewrites.get(m[1]).push([Buffer.from(m[2]), Buffer.from(m[3])]);
  } else usage(`unknown argument ${a}`);
}
if (!out || maps.length === 0) usage('need --out and at least one --map');
for (const m of maps) {
  if (!m.lhost.startsWith('127.') || !m.thost.startsWith('127.')) usage('only loopback addresses (127.0.0.0/8) are allowed');
}

function usage(msg) {
  process.stderr.write(`capture-proxy: ${msg}\n`);
  process.exit(2);
}

const sink = fs.createWriteStream(out, { flags: 'a' });
let connSeq = 0;

function decodeHeader(frame) {
  const hl = frame.readUInt32BE(4) & 0xffffff;
  const serType = frame[4];
  const header = frame.subarray(8, 8 + hl);
  const info = { serType, code: null, flag: null, opaque: null, header: null, bodyLength: frame.length - 8 - hl };
  if (serType === 0) {
    try {
      const h = JSON.parse(header.toString('utf8'));
      Object.assign(info, { code: h.code, flag: h.flag, opaque: h.opaque, header: h });
    } catch {
      /* not JSON: leave undecoded */
    }
  } else if (serType === 1 && header.length >= 13) {
    info.code = header.readInt16BE(0);
    info.opaque = header.readInt32BE(5);
    info.flag = header.readInt32BE(9);
    info.header = { code: info.code, language: header[2], version: header.readInt16BE(3), opaque: info.opaque, flag: info.flag };
  }
  return info;
}

function record(map, conn, dir, peer, frame) {
  const now = new Date();
  const line = {
    t: now.toISOString(),
    ms: now.getTime(),
    map: map.name,
    conn,
    dir,
    peer,
    target: `${map.thost}:${map.tport}`,
    ...decodeHeader(frame),
    frameHex: frame.toString('hex'),
  };
  sink.write(JSON.stringify(line) + '\n');
}

function rewrite(map, frame) {
  const rules = rewrites.get(map.name);
  if (!rules) return frame;
  let f = frame;
  for (const [from, to] of rules) {
    let idx = f.indexOf(from);
    if (idx < 0) continue;
    f = Buffer.from(f);
    while (idx >= 0) {
      to.copy(f, idx);
      idx = f.indexOf(from, idx + to.length);
    }
  }
  return f;
}

/** Splits a byte stream into frames; calls onFrame(frame) per complete frame; returns the push function. */
function framer(onFrame) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 4) {
      const len = buf.readUInt32BE(0);
      if (buf.length < 4 + len) break;
      onFrame(buf.subarray(0, 4 + len));
      buf = buf.subarray(4 + len);
    }
  };
}

const servers = [];
let pending = maps.length;
for (const map of maps) {
  const server = net.createServer((client) => {
    const conn = ++connSeq;
    const peer = `${client.remoteAddress}:${client.remotePort}`;
    const upstream = net.connect({ host: map.thost, port: map.tport });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    // client -> server: record and forward frame by frame (keeps ordering; bytes are unchanged)
    const c2s = framer((f) => {
      record(map, conn, 'c2s', peer, f);
      upstream.write(f);
    });
    const s2c = framer((f) => {
      record(map, conn, 's2c', peer, f);
      client.write(rewrite(map, f));
    });
    client.on('data', c2s);
    upstream.on('data', s2c);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', close);
    upstream.on('error', close);
  });
  server.on('error', (e) => {
    process.stderr.write(`capture-proxy: ${map.name} ${map.lhost}:${map.lport}: ${e.message}\n`);
    process.exit(1);
  });
  server.listen(map.lport, map.lhost, () => {
    if (--pending === 0) process.stdout.write(`capture-proxy ready (${maps.map((m) => `${m.name} ${m.lhost}:${m.lport}>${m.thost}:${m.tport}`).join(', ')})\n`);
  });
  servers.push(server);
}

function stop() {
  for (const s of servers) s.close();
  sink.end(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
