#!/usr/bin/env node
// What one GiB written to a file costs this machine's kernel, by the way the commit log could write it: the CPU the
// broker pays per byte before any of its own code runs. Three modes, each writing --gib GiB in --write-kib pieces from
// one reused buffer through the thread pool (as the commit log's large batches go):
//   fresh      buffered writes into a new file: every page-cache page is new memory. On a VM whose balloon reports
//              free pages to the host (virtio-balloon F_REPORTING), memory freed a moment ago (a deleted store, a
//              dropped cache) comes back only through the host, and the first touch of each page is the cost;
//   overwrite  buffered writes over the same file again: the page-cache pages exist, only the copy is paid;
//   direct     O_DIRECT writes: no page-cache copy (the buffer must be 4 KiB aligned; found by probing).
// Prints wall MB/s and user / system CPU ms per GiB (process.cpuUsage: all threads). The file sits in --dir.
//
//   node bench/write-cost.mjs [--dir=/tmp] [--gib=1] [--write-kib=300] [--pause-ms=5000] [--rounds=2]
//
// --pause-ms waits after deleting a file before the next fresh round (free page reporting runs about every 2 s).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const opt = (n, d) => process.argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? d;
const dir = opt('dir', os.tmpdir());
const totalBytes = Math.round(Number(opt('gib', 1)) * 2 ** 30);
const writeBytes = Math.max(4096, Math.round(Number(opt('write-kib', 300)) / 4) * 4096);
const pauseMs = Number(opt('pause-ms', 5000));
const rounds = Number(opt('rounds', 2));
const file = path.join(dir, `write-cost-${process.pid}.bin`);

function writeAt(fd, buf, pos) {
  return new Promise((resolve, reject) => fs.write(fd, buf, 0, buf.length, pos, (e, n) => (e ? reject(e) : resolve(n))));
}

/** A view of `raw` whose address is 4 KiB aligned: the first offset an O_DIRECT write accepts. */
function alignedView(fd, raw, length) {
  for (let off = 0; off < 4096; off += 8) {
    try {
      fs.writeSync(fd, raw, off, length, 0);
      return raw.subarray(off, off + length);
    } catch (e) {
      if (e.code !== 'EINVAL') throw e;
    }
  }
  throw new Error('no 4 KiB aligned view found (O_DIRECT unsupported here?)');
}

async function run(mode) {
  if (mode !== 'overwrite') fs.rmSync(file, { force: true });
  const direct = mode === 'direct' ? fs.constants.O_DIRECT : 0;
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | direct);
  try {
    const raw = Buffer.alloc(writeBytes + 4096, 0x5a);
    const buf = direct ? alignedView(fd, raw, writeBytes) : raw.subarray(0, writeBytes);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let pos = 0; pos < totalBytes; pos += writeBytes) await writeAt(fd, buf, pos);
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    const perGiB = 2 ** 30 / totalBytes / 1000;
    return { mode, mbPerS: totalBytes / 1e6 / seconds, userMsPerGiB: cpu.user * perGiB, sysMsPerGiB: cpu.system * perGiB };
  } finally {
    fs.closeSync(fd);
  }
}

const reporting = (() => {
  try {
    for (const d of fs.readdirSync('/sys/bus/virtio/devices')) {
      const base = `/sys/bus/virtio/devices/${d}`;
      if (fs.readFileSync(`${base}/device`, 'utf8').trim() !== '0x0005') continue;
      return fs.readFileSync(`${base}/features`, 'utf8')[5] === '1' ? 'yes' : 'no';
    }
  } catch {}
  return 'no balloon device';
})();
console.log(`write cost: ${(totalBytes / 2 ** 30).toFixed(2)} GiB in ${writeBytes / 1024} KiB writes to ${dir}; ` +
  `free page reporting to the host: ${reporting}`);
try {
  for (let r = 1; r <= rounds; r++) {
    for (const mode of ['fresh', 'overwrite', 'direct']) {
      const res = await run(mode);
      console.log(`  round ${r} ${mode.padEnd(9)} ${res.mbPerS.toFixed(0).padStart(5)} MB/s   user ${res.userMsPerGiB.toFixed(0).padStart(4)} ms/GiB   ` +
        `system ${res.sysMsPerGiB.toFixed(0).padStart(5)} ms/GiB`);
    }
    fs.rmSync(file, { force: true });
    if (r < rounds) await sleep(pauseMs);
  }
} finally {
  fs.rmSync(file, { force: true });
}
