#!/usr/bin/env node
// Micro-benchmark of the put hot path: decoding a SEND_MESSAGE_V2 header (readSendHeader: the numeric fields as
// Java parses them) and store.putMessage (validation, record encoding, queue offsets) on ASYNC_FLUSH, 1 KiB bodies.
// Prints ns/op, bytes allocated per op (heap growth without a GC in between, best of several rounds) and puts/s.
//   node --expose-gc bench/put-path.mjs [--dist=dist] [--seconds=3]
// Compare two builds: run it once with --dist=<other checkout>/dist.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const dist = path.resolve(args.dist ?? 'dist');
const seconds = Number(args.seconds ?? 3);
if (typeof global.gc !== 'function') {
  console.error('run with node --expose-gc');
  process.exit(2);
}

const { readSendHeader } = await import(pathToFileURL(path.join(dist, 'broker/processors/send-message.js')).href);
const { createMessageStore } = await import(pathToFileURL(path.join(dist, 'store/index.js')).href);

const header = {
  code: 310, language: 'JAVA', version: 399, opaque: 1, flag: 0,
  extFields: {
    a: 'PG_bench', b: 'BenchTopic', c: 'TBW102', d: '4', e: '3', f: '0', g: '1764626400123', h: '0',
    i: 'TAGS\u0001t\u0002KEYS\u0001k1\u0002UNIQ_KEY\u00017F0000010001AAAA0000000000000001\u0002', j: '0', k: 'false', l: '16',
  },
};

/** Bytes of heap allocated per call of fn: heap growth over n calls right after a full GC (median of 9 rounds). */
function bytesPerOp(fn, n) {
  const rounds = [];
  for (let round = 0; round < 9; round++) {
    global.gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < n; i++) fn();
    rounds.push((process.memoryUsage().heapUsed - before) / n);
  }
  rounds.sort((a, b) => a - b);
  return Math.max(0, rounds[4]);
}

function nsPerOp(fn, n) {
  for (let i = 0; i < n; i++) fn(); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t0) / n;
}

let sink;
const decode = () => {
  sink = readSendHeader(header);
};
const decodeNs = nsPerOp(decode, 2_000_000);
const decodeBytes = bytesPerOp(decode, 2_000);

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-putbench-'));
const store = createMessageStore({ storePathRootDir: root, mappedFileSizeCommitLog: 256 * 1024 * 1024, messageIndexEnable: false });
await store.start();
const ip = Buffer.from([127, 0, 0, 1]);
const body = Buffer.alloc(1024, 7);
const message = (i) => ({
  topic: 'BenchTopic', queueId: i & 7, flag: 0, body, propertiesString: 'TAGS\u0001t\u0002', tagsCode: 116, sysFlag: 0,
  bornTimestamp: 1764626400123, bornHost: { ip, port: 1 }, storeHost: { ip, port: 10911 }, reconsumeTimes: 0,
  preparedTransactionOffset: 0,
});
let puts = 0;
let stop = false;
const worker = async () => {
  while (!stop) {
    const r = await store.putMessage(message(puts));
    if (r.status !== 'PUT_OK') throw new Error(r.status);
    puts++;
  }
};
const warm = Date.now() + 1000;
await Promise.all(Array.from({ length: 64 }, async () => {
  while (Date.now() < warm) await store.putMessage(message(0));
}));
const t0 = performance.now();
const workers = Array.from({ length: 64 }, worker);
await new Promise((r) => setTimeout(r, seconds * 1000));
stop = true;
await Promise.all(workers);
const putsPerSec = Math.round(puts / ((performance.now() - t0) / 1000));
await store.shutdown();
fs.rmSync(root, { recursive: true, force: true });

const out = {
  dist, node: process.version, decodeNsPerOp: Math.round(decodeNs), decodeBytesPerOp: Math.round(decodeBytes),
  putsPerSec, putConcurrency: 64, bodyBytes: 1024,
};
console.log(JSON.stringify(out));
void sink;
