#!/usr/bin/env node
// Start-to-ready of the embeddable server (startServer(): nameserver + broker in this process, ports 0, a new
// temporary store), measured N times after one warm-up start; prints min / median / p90 / max and the shares of the
// nameserver and the broker. `npm run build` first.
//
//   node bench/embedded-start.mjs [--runs=20]
import { performance } from 'node:perf_hooks';
import { startBroker, startNamesrv } from '../dist/index.js';

const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 20);
const total = [];
const ns = [];
const broker = [];
for (let i = 0; i <= runs; i++) {
  const t0 = performance.now();
  const n = await startNamesrv();
  const t1 = performance.now();
  const b = await startBroker({ namesrvAddr: n.addr });
  const t2 = performance.now();
  await b.stop();
  await n.stop();
  if (i === 0) continue; // warm-up: module loading and JIT
  total.push(t2 - t0);
  ns.push(t1 - t0);
  broker.push(t2 - t1);
  process.stderr.write(`\rembedded start ${i}/${runs}: ${(t2 - t0).toFixed(1)} ms   `);
}
process.stderr.write('\n');
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const fmt = (xs) => `min ${q(xs, 0).toFixed(1)}  median ${q(xs, 0.5).toFixed(1)}  p90 ${q(xs, 0.9).toFixed(1)}  max ${q(xs, 1).toFixed(1)} ms`;
console.log(`startServer() to ready, ${runs} runs after a warm-up (node ${process.version}):`);
console.log(`  total     ${fmt(total)}`);
console.log(`  namesrv   ${fmt(ns)}`);
console.log(`  broker    ${fmt(broker)}`);
