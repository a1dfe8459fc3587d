#!/usr/bin/env node
// npm run soak -- --minutes=60 [--rate=5000]: the soak (test/soak) for as long as asked, through vitest; the JSON
// and PNG land in soak-results/.
import { spawnSync } from 'node:child_process';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--(\w+)=(.*)$/.exec(a);
  if (!m) {
    console.error(`unexpected argument ${a} (use --minutes=M --rate=N)`);
    process.exit(2);
  }
  return [m[1], m[2]];
}));
const minutes = args.minutes ?? '60';
const rate = args.rate ?? '5000';
console.log(`soak: ${minutes} minute(s) at ${rate} msg/s`);
const r = spawnSync('npx', ['vitest', 'run', 'test/soak/soak.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, RMQ_SOAK_MINUTES: minutes, RMQ_SOAK_RATE: rate },
});
process.exit(r.status ?? 1);
