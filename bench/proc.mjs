// Process and machine figures from /proc (CPU ticks, memory, open descriptors), free ports, and spawning helpers
// shared by bench.mjs and servers.mjs.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';

export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU ticks of a process in user mode and in the kernel (utime, stime: /proc/PID/stat fields 14, 15); 0 when gone. */
export function procTicksSplit(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { user: Number(f[11]), sys: Number(f[12]) };
  } catch { return { user: 0, sys: 0 }; }
}
export function procTicks(pid) {
  const t = procTicksSplit(pid);
  return t.user + t.sys;
}
export function machineTicks() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return { busy: user + nice + system + irq + softirq + (steal || 0), all: user + nice + system + idle + iowait + irq + softirq + (steal || 0) };
}
function procMem(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0);
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
  } catch { return { rss: 0, anon: 0, file: 0 }; }
}
/** VmRSS / RssAnon / RssFile of the processes together, KiB. */
export function memOf(pids) {
  const m = { rss: 0, anon: 0, file: 0 };
  for (const p of pids) { const x = procMem(p); m.rss += x.rss; m.anon += x.anon; m.file += x.file; }
  return m;
}
/** Open file descriptors (files and sockets) of the processes together. */
export function fdsOf(pids) {
  let n = 0;
  for (const p of pids) { try { n += fs.readdirSync(`/proc/${p}/fd`).length; } catch { /* gone */ } }
  return n;
}
export function snapshot(serverPids, driverPid) {
  const split = serverPids.map(procTicksSplit);
  return {
    t: performance.now(),
    server: split.reduce((a, x) => a + x.user + x.sys, 0),
    serverSys: split.reduce((a, x) => a + x.sys, 0),
    driver: driverPid ? procTicks(driverPid) : 0,
    machine: machineTicks(),
  };
}
export function alive(pid) {
  return fs.existsSync(`/proc/${pid}`);
}

function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
export async function pickPorts() {
  for (let i = 0; i < 200; i++) {
    const base = 12000 + Math.floor(Math.random() * 1250) * 16; // below the ephemeral range (32768+), as official.sh advises
    const ns = base;
    const broker = base + 8;
    const all = [ns, broker, broker - 2, broker + 1];
    let ok = true;
    for (const p of all) if (!(await portFree(p))) { ok = false; break; }
    if (ok) return { ns, broker };
  }
  throw new Error('no free ports');
}

/** Spawns a process and resolves at the first stdout line matching RE (rejects if it exits first / times out). */
export function spawnUntil(cmd, args, opts, re, timeoutMs, onLine) {
  const p = spawn(cmd, args, opts);
  const ready = new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: p.stdout });
    let done = false;
    const timer = setTimeout(() => { if (!done) { done = true; reject(new Error(`${path.basename(cmd)}: not ready after ${timeoutMs / 1000}s`)); } }, timeoutMs);
    rl.on('line', (line) => {
      onLine?.(line);
      if (!done && re.test(line)) { done = true; clearTimeout(timer); resolve(line); }
    });
    p.on('exit', (code, sig) => { if (!done) { done = true; clearTimeout(timer); reject(new Error(`${path.basename(cmd)} exited (${code ?? sig}) before it was ready`)); } });
  });
  return { proc: p, ready };
}
export function waitExit(p, ms) {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.once('exit', () => { clearTimeout(t); resolve(true); });
  });
}
/** Resolves once none of the pids is alive (polls /proc), false after ms. */
export async function waitGone(pids, ms) {
  const end = performance.now() + ms;
  while (pids.some(alive)) {
    if (performance.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}
