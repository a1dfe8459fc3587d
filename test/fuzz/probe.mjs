// Loaded into the fuzzed server (node --import): reports event-loop stalls on stderr as JSON log lines, with the
// CPU time the event-loop thread used meanwhile (a busy loop uses it all; a loop starved by other processes does
// not). Only that thread counts: the process total also holds the GC's helper threads and the libuv pool's
// writes and fsyncs, which on a loaded machine made a starved loop look busy (fresh-clone run, load 12: a 119 ms
// gap with 138 ms of process CPU and no frame sent around it). Linux reads it from /proc/thread-self/stat;
// elsewhere the process total stands in.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

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

let last = performance.now();
let lastCpuMs = loopThreadCpuMs();
setInterval(() => {
  const now = performance.now();
  const gapMs = now - last - TICK_MS;
  const cpuMs = loopThreadCpuMs();
  if (gapMs > 50) {
    process.stderr.write(`${JSON.stringify({ msg: 'FUZZPROBE stall', gapMs: Math.round(gapMs), cpuMs: Math.round(cpuMs - lastCpuMs), at: Date.now() })}\n`);
  }
  last = now;
  lastCpuMs = cpuMs;
}, TICK_MS).unref();
