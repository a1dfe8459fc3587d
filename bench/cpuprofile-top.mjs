// Top functions by self time in a V8 .cpuprofile (as written by `node --cpu-prof`).
//
//   node bench/cpuprofile-top.mjs FILE.cpuprofile [N]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** → { totalMs, top: [{ fn, where, selfMs, selfPct, totalMs, totalPct }], byFile: [{ file, selfMs, selfPct }] } */
export function topFunctions(file, n = 25, root = process.cwd()) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map(prof.nodes.map((x) => [x.id, x]));
  const parent = new Map();
  for (const x of prof.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const self = new Map();
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i];
    self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
  }
  const short = (url) => {
    if (!url) return '';
    let u = url.replace(/^file:\/\//, '');
    if (u.startsWith(root)) u = path.relative(root, u);
    return u;
  };
  const keyOf = (x) => {
    const cf = x.callFrame;
    return `${cf.functionName || '(anonymous)'}\u0000${short(cf.url)}:${cf.lineNumber + 1}`;
  };
  let total = 0;
  const bySelf = new Map();
  const byTotal = new Map();
  const byFile = new Map();
  for (const [id, us] of self) {
    total += us;
    const x = nodes.get(id);
    const k = keyOf(x);
    bySelf.set(k, (bySelf.get(k) ?? 0) + us);
    const f = short(x.callFrame.url) || x.callFrame.functionName;
    byFile.set(f, (byFile.get(f) ?? 0) + us);
    // inclusive: count each distinct function once per sample stack
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = keyOf(nodes.get(cur));
      if (seen.has(kk)) continue;
      seen.add(kk);
      byTotal.set(kk, (byTotal.get(kk) ?? 0) + us);
    }
  }
  const pct = (us) => (total ? (100 * us) / total : 0);
  const top = [...bySelf.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => {
      const [fn, where] = k.split('\u0000');
      const t = byTotal.get(k) ?? us;
      return { fn, where, selfMs: us / 1000, selfPct: pct(us), totalMs: t / 1000, totalPct: pct(t) };
    });
  const files = [...byFile.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)
    .map(([f, us]) => ({ file: f, selfMs: us / 1000, selfPct: pct(us) }));
  return { totalMs: total / 1000, top, byFile: files };
}

export function formatTop(r) {
  const lines = [`  CPU profile: ${(r.totalMs / 1000).toFixed(1)} s sampled; top functions by self time (total = incl. callees)`];
  lines.push(`  ${'self%'.padStart(6)} ${'total%'.padStart(6)}  function  (location)`);
  for (const t of r.top) lines.push(`  ${t.selfPct.toFixed(1).padStart(6)} ${t.totalPct.toFixed(1).padStart(6)}  ${t.fn}  (${t.where})`);
  lines.push('  by file (self%):');
  for (const f of r.byFile) lines.push(`  ${f.selfPct.toFixed(1).padStart(6)}  ${f.file}`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, n] = process.argv.slice(2);
  if (!file) { process.stderr.write('usage: node bench/cpuprofile-top.mjs FILE.cpuprofile [N]\n'); process.exit(2); }
  process.stdout.write(`${formatTop(topFunctions(file, Number(n ?? 25)))}\n`);
}
