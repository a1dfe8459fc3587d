#!/usr/bin/env node
// Finds import cycles among the TypeScript files under a directory (default: src/) and prints every one.
// Dependency-free on purpose: it reads relative specifiers from `import`/`export ... from`, side-effect imports
// and dynamic `import('...')`, with comments and string contents ignored.
//
// Type-only imports (`import type`, `export type ... from`, `import { type X }`) count as edges: they vanish
// from the emitted JavaScript, but they still couple the two modules (one cannot be read, moved or tested
// without the other), and issue #12 asks for no import circles at all. Cycles that need a type-only edge are
// marked so a reader knows they cannot fail at run time.
//
// Usage: node scripts/import-cycles.mjs [dir]   — exits 1 when a cycle exists, 0 otherwise.
// As a module: findImportCycles(dir) → { files, cycles: [{ files: [...], typeOnly: bool }] }.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Most cycles listed; elementary cycles can grow exponentially with the size of a tangle. */
const MAX_CYCLES = 2000;

function listSources(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSources(p));
    else if (/\.(ts|mts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The source with comments blanked and string/template contents replaced by spaces (quotes kept). */
function blankCommentsAndStrings(src) {
  let out = '';
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      while (i < n && src[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '"' || c === "'" || c === '`') {
      // Strings keep their text (specifiers live there); templates are blanked (no specifier lives there).
      let j = i + 1;
      while (j < n && src[j] !== c) j += src[j] === '\\' ? 2 : 1;
      const body = src.slice(i + 1, j);
      out += c + (c === '`' ? body.replace(/[^\n]/g, ' ') : body) + c;
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const STATIC_IMPORT = /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([^;'"]*?\sfrom\s*)?(['"])([^'"\n]+)\4/g;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/** Relative specifiers of one file: [{ spec, typeOnly }]. */
export function importsOf(source) {
  const text = blankCommentsAndStrings(source);
  const out = [];
  for (const m of text.matchAll(STATIC_IMPORT)) {
    const [, kind, typeKw, clause = '', , spec] = m;
    // `export { a }` without `from` has no specifier; `export const x = 'y'` is not matched (no `from`).
    if (kind === 'export' && !clause) continue;
    let typeOnly = Boolean(typeKw);
    const braces = /^\s*\{([^}]*)\}\s*from\s*$/.exec(clause);
    if (!typeOnly && braces) {
      const names = braces[1].split(',').map((s) => s.trim()).filter(Boolean);
      typeOnly = names.length > 0 && names.every((s) => s.startsWith('type '));
    }
    out.push({ spec, typeOnly });
  }
  for (const m of text.matchAll(DYNAMIC_IMPORT)) out.push({ spec: m[2], typeOnly: false });
  return out.filter((i) => i.spec.startsWith('.'));
}

function resolveSpec(fromFile, spec, known) {
  const base = path.resolve(path.dirname(fromFile), spec);
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.mts`, `${stem}.tsx`, path.join(base, 'index.ts')]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

/** Tarjan's strongly connected components (iterative). */
function stronglyConnected(nodes, edges) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work = [[root, 0]];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      const targets = [...(edges.get(v)?.keys() ?? [])];
      if (i < targets.length) {
        frame[1]++;
        const w = targets[i];
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v), index.get(w)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const scc = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        out.push(scc);
      }
    }
  }
  return out;
}

/** Elementary cycles inside one component, each starting at its smallest file (a simple DFS per start node). */
function cyclesIn(scc, edges, limit) {
  const members = [...scc].sort();
  const rank = new Map(members.map((f, i) => [f, i]));
  const cycles = [];
  for (const start of members) {
    const startRank = rank.get(start);
    const pathNodes = [start];
    const onPath = new Set([start]);
    const iters = [[...(edges.get(start)?.keys() ?? [])].filter((w) => rank.get(w) >= startRank).sort()];
    while (iters.length > 0 && cycles.length < limit) {
      const it = iters[iters.length - 1];
      if (it.length === 0) {
        iters.pop();
        onPath.delete(pathNodes.pop());
        continue;
      }
      const w = it.shift();
      if (w === start) {
        cycles.push([...pathNodes]);
      } else if (!onPath.has(w)) {
        pathNodes.push(w);
        onPath.add(w);
        iters.push([...(edges.get(w)?.keys() ?? [])].filter((x) => rank.get(x) >= startRank).sort());
      }
    }
  }
  return cycles;
}

export function findImportCycles(dir) {
  const root = path.resolve(dir);
  const files = listSources(root);
  const known = new Set(files);
  /** file → (target → typeOnly) ; an edge is type-only when every import between the two is. */
  const edges = new Map();
  for (const file of files) {
    const targets = new Map();
    for (const { spec, typeOnly } of importsOf(fs.readFileSync(file, 'utf8'))) {
      const target = resolveSpec(file, spec, known);
      if (!target || target === file) continue;
      targets.set(target, (targets.get(target) ?? true) && typeOnly);
    }
    edges.set(file, targets);
  }
  const cycles = [];
  for (const scc of stronglyConnected(files, edges)) {
    if (scc.length < 2) continue;
    for (const c of cyclesIn(scc, edges, MAX_CYCLES - cycles.length)) {
      const typeOnly = c.some((f, i) => edges.get(f).get(c[(i + 1) % c.length]) === true);
      cycles.push({ files: c.map((f) => path.relative(root, f).split(path.sep).join('/')), typeOnly });
    }
  }
  cycles.sort((a, b) => a.files.join(' ').localeCompare(b.files.join(' ')));
  return { files: files.length, cycles, truncated: cycles.length >= MAX_CYCLES };
}

/** One line per cycle: `a.ts -> b.ts -> a.ts`. */
export function formatCycle(cycle) {
  return [...cycle.files, cycle.files[0]].join(' -> ');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const { files, cycles, truncated } = findImportCycles(dir);
  for (const c of cycles) console.log(`${formatCycle(c)}${c.typeOnly ? '   (through a type-only import)' : ''}`);
  console.log(`${files} files, ${cycles.length}${truncated ? '+' : ''} import cycle(s)`);
  process.exitCode = cycles.length > 0 ? 1 : 0;
}
