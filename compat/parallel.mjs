#!/usr/bin/env node
// Runs several compat/runner.mjs matrices at the same time and waits for all of them.
//
//   node compat/parallel.mjs -- --server=ours -- --server=official --official-version=5.3.3 --clients=java4,java5,go
//
// Each `--` starts the arguments of one runner. Their progress lines stream with a prefix naming the run ([ours],
// [official-5.3.3]); each final matrix is printed whole, without the prefix, when its run ends. Exit code 0 only
// when every run exited 0. SIGINT/SIGTERM are passed on to the runners, which stop their servers themselves.
//
// Why: the matrices against ours and against the official server share nothing but the machine, and most of their
// time is spent waiting on clients, JVM starts and the scenarios' own waits, so side by side they take about as
// long as the longer one (npm test). Maven is serialised by compat/lib/mvn-locked; ports are picked at random below
// 32768 and checked free by each runner; stores and results have their own names per run.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { children, run } from './lib/servers.mjs';

// COMPAT_PARALLEL_RUNNER: another script in runner.mjs's place (test/compat/parallel.test.ts)
const RUNNER = process.env.COMPAT_PARALLEL_RUNNER ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'runner.mjs');

/** Splits `-- a b -- c d` into [[a, b], [c, d]]. */
export function splitRuns(argv) {
  const runs = [];
  for (const a of argv) {
    if (a === '--') runs.push([]);
    else if (runs.length === 0) throw new Error(`argument '${a}' before the first '--'`);
    else runs.at(-1).push(a);
  }
  if (runs.length === 0 || runs.some((r) => r.length === 0)) throw new Error('usage: parallel.mjs -- RUNNER ARGS -- RUNNER ARGS ...');
  return runs;
}

/** The prefix of a run: its --server value, plus the official version where one is given. */
export function runLabel(args, index) {
  const server = args.find((a) => a.startsWith('--server='))?.slice('--server='.length) ?? 'ours';
  const version = args.find((a) => a.startsWith('--official-version='))?.slice('--official-version='.length);
  return server === 'official' && version ? `official-${version}` : `${server}${index > 0 && server === 'ours' ? `-${index}` : ''}`;
}

function main() {
  let runs;
  try {
    runs = splitRuns(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
  const started = Date.now();
  const outcomes = runs.map(async (args, i) => {
    const label = runLabel(args, i);
    let matrix = null; // the final report, printed whole when the run ends
    const onLine = (line, stream) => {
      if (line === null) return; // run()'s end of output
      if (matrix === null && stream === 'out' && line.startsWith('== compat matrix')) matrix = [];
      if (matrix !== null && stream === 'out') matrix.push(line);
      else (stream === 'out' ? process.stdout : process.stderr).write(`[${label}] ${line}\n`);
    };
    const { code } = await run(process.execPath, [RUNNER, ...args], { onLine });
    if (matrix) process.stdout.write(`\n${matrix.join('\n')}\n`);
    process.stdout.write(`[${label}] runner.mjs ${args.join(' ')}: exit ${code} after ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    return code === 0;
  });
  // the runners run in process groups of their own (run()); each stops its servers on SIGINT/SIGTERM
  const forward = (sig) => { for (const c of children) if (c.exitCode === null) c.kill(sig); };
  process.on('SIGINT', () => forward('SIGINT'));
  process.on('SIGTERM', () => forward('SIGTERM'));
  Promise.all(outcomes).then((ok) => process.exit(ok.every(Boolean) ? 0 : 1));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
