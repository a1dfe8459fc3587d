// A memory cgroup per server for the cold-backlog scenario. drop_caches leaves the pages a process has mapped, so the
// official broker (commit log written and read through mmap) stayed warm while ours (read/write) went cold. Reclaim
// inside a memory cgroup unmaps and drops mapped file pages too: cgroup v1 `memory.force_empty`, v2 `memory.reclaim`.
// Without swap only file pages go (the JVM heap and node's heap stay). Root only; elsewhere the caller falls back to
// drop_caches and reports what stayed resident.
import fs from 'node:fs';
import path from 'node:path';

/** This process's memory cgroup directory and its kind, or undefined when there is none we can use. */
function ownMemoryCgroup() {
  let lines;
  try {
    lines = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const v1 = lines.map((l) => l.split(':')).find((p) => p.length >= 3 && p[1].split(',').includes('memory'));
  if (v1 && fs.existsSync('/sys/fs/cgroup/memory')) {
    return { kind: 'v1', dir: path.join('/sys/fs/cgroup/memory', v1.slice(2).join(':')) };
  }
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2) {
    for (const mount of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
      const dir = path.join(mount, v2.slice(3));
      try {
        if (fs.readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) return { kind: 'v2', dir };
      } catch { /* not this mount */ }
    }
  }
  return undefined;
}

/**
 * Creates a child memory cgroup named `name` under this process's. → { add(pid), reclaim(), remove(), dir } or
 * { refused: reason }.
 */
export function createMemoryCgroup(name) {
  if (process.platform !== 'linux') return { refused: `not Linux (${process.platform})` };
  const own = ownMemoryCgroup();
  if (!own) return { refused: 'no memory cgroup controller found in /proc/self/cgroup' };
  const dir = path.join(own.dir, name);
  const reclaimFile = path.join(dir, own.kind === 'v1' ? 'memory.force_empty' : 'memory.reclaim');
  try {
    fs.mkdirSync(dir);
  } catch (e) {
    if (e.code !== 'EEXIST') return { refused: `cannot create ${dir} (${e.code})` };
  }
  if (!fs.existsSync(reclaimFile)) {
    try { fs.rmdirSync(dir); } catch { /* keep going */ }
    return { refused: `${reclaimFile} does not exist (memory controller not enabled for child cgroups)` };
  }
  return {
    dir,
    kind: own.kind,
    /** Moves a process (all its threads) into the cgroup; pages it touches from now on are charged here. */
    add(pid) {
      fs.writeFileSync(path.join(dir, 'cgroup.procs'), `${pid}\n`);
    },
    /** Reclaims what can be reclaimed (file pages, mapped or not). Returns undefined or the reason it failed. */
    reclaim() {
      try {
        // v2 answers EAGAIN when it could not reclaim the whole amount asked for, which is expected (heaps stay)
        fs.writeFileSync(reclaimFile, own.kind === 'v1' ? '0\n' : `${64 * 1024 ** 3}\n`);
      } catch (e) {
        if (e.code !== 'EAGAIN') return `${reclaimFile}: ${e.message}`;
      }
      return undefined;
    },
    /** Removes the cgroup; its processes must be gone (a leftover one is moved back to the parent first). */
    remove() {
      try {
        const left = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
        for (const pid of left) {
          try { fs.writeFileSync(path.join(own.dir, 'cgroup.procs'), `${pid}\n`); } catch { /* gone */ }
        }
        fs.rmdirSync(dir);
      } catch { /* already gone */ }
    },
  };
}
