// Loaded into the fuzzed server (node --import): reports event-loop stalls on stderr as JSON log lines, with the
// CPU time the event-loop thread used meanwhile (a busy loop uses it all; a loop starved by other processes does
// not). Only that thread counts: the process total also holds the GC's helper threads and the libuv pool's
// writes and fsyncs, which on a loaded machine made a starved loop look busy (fresh-clone run, load 12: a 119 ms
// gap with 138 ms of process CPU and no frame sent around it). Linux reads it from /proc/thread-self/stat;
// elsewhere the process total stands in. GC pauses in the gap are reported apart (gcMs, from the 'gc' performance
// entries): a collection that the machine's load stretched is not a request that blocked the loop.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

const TICK_MS = 20;
let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // getconf missing: Linux's USER_HZ is 100 everywhere we run
}

/** CPU milliseconds of the calling (event-loop) thread, or of the process where /proc is not there. */
function loopThreadCpuMs() {
  try {
    const stat = fs.readFileSync('/proc/thread-self/stat', 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond; // utime + stime (fields 14, 15)
  } catch {
    const cpu = process.cpuUsage();
    return (cpu.user + cpu.system) / 1000;
  }
}

/** Recent GC pauses as [start, end] on the performance clock (entries arrive a little after the pause). */
const gcPauses = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push([e.startTime, e.startTime + e.duration]);
  while (gcPauses.length > 256) gcPauses.shift();
}).observe({ entryTypes: ['gc'] });

/** Milliseconds of GC pause inside [from, to]. */
function gcMsIn(from, to) {
  let ms = 0;
  for (const [a, b] of gcPauses) ms += Math.max(0, Math.min(b, to) - Math.max(a, from));
  return ms;
}

let last = performance.now();
let lastCpuMs = loopThreadCpuMs();
setInterval(() => {
  const now = performance.now();
  const gapMs = now - last - TICK_MS;
  const cpuMs = loopThreadCpuMs();
  if (gapMs > 50) {
    const from = last;
    const stall = { msg: 'FUZZPROBE stall', gapMs: Math.round(gapMs), cpuMs: Math.round(cpuMs - lastCpuMs), at: Date.now() };
    // reported a tick later, once the GC entries of the gap have been delivered
    setTimeout(() => {
      process.stderr.write(`${JSON.stringify({ ...stall, gcMs: Math.round(gcMsIn(from, now)) })}\n`);
    }, TICK_MS).unref();
  }
  last = now;
  lastCpuMs = cpuMs;
}, TICK_MS).unref();
