import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { createMessageStore, type DefaultMessageStore, type StoreConfigInput } from '../../src/store/index.js';
import type { MessageToStore } from '../../src/store/types.js';
import { javaStringHashCode } from '../../src/common/java-hash.js';

export async function makeTempDir(): Promise<string> {
  return fs.promises.mkdtemp(path.join(os.tmpdir(), 'rmq-store-test-'));
}

export async function removeDir(dir: string): Promise<void> {
  await fs.promises.rm(dir, { recursive: true, force: true });
}

/** Small files so that rollover, BLANK records and several CQ files happen with little data. */
export const TINY: StoreConfigInput = {
  mappedFileSizeCommitLog: 4096,
  mappedFileSizeConsumeQueue: 200,
  flushIntervalCommitLog: 50,
  flushIntervalConsumeQueue: 50,
};

export async function openStore(root: string, extra: StoreConfigInput = {}): Promise<DefaultMessageStore> {
  const store = createMessageStore({ storePathRootDir: root, ...TINY, ...extra });
  await store.start();
  return store;
}

const IPV4 = Buffer.from([127, 0, 0, 1]);

export function makeMessage(
  topic: string,
  queueId: number,
  body: Buffer | string,
  opts: { tags?: string; keys?: string; props?: Record<string, string>; bornHost?: Buffer; storeHost?: Buffer; sysFlag?: number } = {},
): MessageToStore {
  const props: Record<string, string> = { ...(opts.props ?? {}) };
  if (opts.tags) props.TAGS = opts.tags;
  if (opts.keys) props.KEYS = opts.keys;
  let propertiesString = '';
  for (const [k, v] of Object.entries(props)) propertiesString += `${k}\u0001${v}\u0002`;
  return {
    topic,
    queueId,
    flag: 0,
    body: typeof body === 'string' ? Buffer.from(body) : body,
    propertiesString,
    tagsCode: opts.tags ? javaStringHashCode(opts.tags) : 0,
    sysFlag: opts.sysFlag ?? 0,
    bornTimestamp: 1700000000000,
    bornHost: { ip: opts.bornHost ?? IPV4, port: 54321 },
    storeHost: { ip: opts.storeHost ?? IPV4, port: 10911 },
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

/** Deterministic pseudo-random generator (tests must be reproducible). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** Transpiles src/<dir>/**.ts to plain JS under outDir (no type checking), for child processes the test kills. */
function transpileTree(srcDir: string, outDir: string): void {
  for (const entry of fs.readdirSync(srcDir, { withFileTypes: true })) {
    const from = path.join(srcDir, entry.name);
    if (entry.isDirectory()) {
      transpileTree(from, path.join(outDir, entry.name));
    } else if (entry.name.endsWith('.ts')) {
      const out = ts.transpileModule(fs.readFileSync(from, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      });
      fs.mkdirSync(outDir, { recursive: true });
      fs.writeFileSync(path.join(outDir, entry.name.replace(/\.ts$/, '.js')), out.outputText);
    }
  }
}

/**
 * A temp directory holding the store and common modules (and `extraTrees` of src/) as plain JS plus `child.mjs` =
 * `childSource` (which imports them as './store/...'), for crash tests that SIGKILL a storing process. Returns the
 * directory.
 */
export function buildStoreChild(
  prefix: string,
  childSource: string,
  extraModules: readonly string[] = [],
  extraTrees: readonly string[] = [],
): string {
  const repo = path.resolve(import.meta.dirname, '../..');
  const build = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  // More src/ directories the child needs (e.g. 'ha'), as ./<dir>/...
  for (const dir of ['store', 'common', ...extraTrees]) transpileTree(path.join(repo, 'src', dir), path.join(build, dir));
  // Self-contained helper modules (repo-relative .ts paths), each as ./<basename>.js next to child.mjs.
  for (const rel of extraModules) {
    const out = ts.transpileModule(fs.readFileSync(path.join(repo, rel), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    fs.writeFileSync(path.join(build, path.basename(rel).replace(/\.ts$/, '.js')), out.outputText);
  }
  fs.writeFileSync(path.join(build, 'child.mjs'), childSource);
  return build;
}
