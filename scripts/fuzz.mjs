#!/usr/bin/env node
// npm run fuzz -- --seed=N --minutes=M: the fuzzer (test/fuzz) for as long as asked, through vitest.
import { spawnSync } from 'node:child_process';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--(\w+)=(.*)$/.exec(a);
  if (!m) {
    console.error(`unexpected argument ${a} (use --seed=N --minutes=M)`);
    process.exit(2);
  }
  return [m[1], m[2]];
}));
const seed = args.seed ?? String(Math.floor(Math.random() * 2 ** 31));
const minutes = args.minutes ?? '5';
console.log(`fuzz: seed ${seed}, ${minutes} minute(s)`);
const r = spawnSync('npx', ['vitest', 'run', 'test/fuzz/fuzz.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, RMQ_FUZZ_SEED: seed, RMQ_FUZZ_MINUTES: minutes },
});
process.exit(r.status ?? 1);
