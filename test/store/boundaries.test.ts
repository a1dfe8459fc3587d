// The store's module boundaries: code outside src/store enters it only through src/store/index.ts, and no
// store module imports, directly or through others, one that imports it back.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
const STORE = path.join(SRC, 'store');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/g;

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(p));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Relative imports of a file (type-only ones too), as absolute .ts paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts')));
}

/** Each cycle as its files in import order (one per strongly connected component with more than one file). */
function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((d) => files.includes(d))]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        scc.push(path.relative(SRC, w));
      } while (w !== v);
      if (scc.length > 1) found.push(scc);
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

/**
 * The DLedger data files (src/ha/dledger/store) are a store of their own: they may use the store's stateless leaf
 * modules — the record codec and the file I/O wrapper — without the facade (whose imports, pino among them, a
 * crash-test child transpiled outside the repo cannot resolve). Nothing else.
 */
const LEAF_USERS = path.join(SRC, 'ha', 'dledger', 'store');
const LEAVES = new Set([path.join(STORE, 'record.ts'), path.join(STORE, 'io.ts')]);

describe('store boundaries', () => {
  it('is entered only through src/store/index.ts', () => {
    const door = path.join(STORE, 'index.ts');
    const outside = tsFiles(SRC).filter((f) => !f.startsWith(STORE + path.sep));
    const allowed = (f: string, d: string): boolean => d === door || (f.startsWith(LEAF_USERS + path.sep) && LEAVES.has(d));
    const leaks = outside.flatMap((f) =>
      importsOf(f).filter((d) => d.startsWith(STORE + path.sep) && !allowed(f, d)).map((d) => `${path.relative(SRC, f)} -> ${path.relative(SRC, d)}`));
    expect(leaks).toEqual([]);
  });

  it('has no import cycle among its modules', () => {
    expect(cycles(tsFiles(STORE))).toEqual([]);
  });
});
