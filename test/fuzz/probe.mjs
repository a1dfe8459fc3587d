// Loaded into the fuzzed server (node --import): reports event-loop stalls on stderr as JSON log lines, with the
// CPU time the process used meanwhile (a busy loop uses it all; a loop starved by other processes does not).
const TICK_MS = 20;
let last = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const now = performance.now();
  const gapMs = now - last - TICK_MS;
  const cpu = process.cpuUsage(lastCpu);
  if (gapMs > 50) {
    process.stderr.write(`${JSON.stringify({ msg: 'FUZZPROBE stall', gapMs: Math.round(gapMs), cpuMs: Math.round((cpu.user + cpu.system) / 1000), at: Date.now() })}\n`);
  }
  last = now;
  lastCpu = process.cpuUsage();
}, TICK_MS).unref();
