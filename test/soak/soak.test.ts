// A short soak in `npm test` (2 minutes, 2,000 msg/s): RSS, open descriptors and send p99 must not grow between the
// first and the last third after a 30 s warm-up. Long runs: `npm run soak -- --minutes=60` (5,000 msg/s), which
// writes soak-results/soak-<time>.json and .png. RMQ_SOAK_MINUTES / RMQ_SOAK_RATE override here.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSoak } from './run.js';

const minutes = Number(process.env.RMQ_SOAK_MINUTES ?? 2);
const rate = Number(process.env.RMQ_SOAK_RATE ?? 2000);

describe('soak', () => {
  it(`keeps RSS, descriptors and latency flat under mixed traffic (${minutes} min at ${rate} msg/s)`, async () => {
    const result = await runSoak({
      minutes, rate, sampleEveryMs: 3000, warmupMs: 30_000, outDir: path.resolve(import.meta.dirname, '../../soak-results'),
      main: process.env.RMQ_SOAK_MAIN,
      // A short run: a tail cache that fills within the warm-up (at its 64 MiB default it would still be filling
      // through the run at this rate, which looks like growth). Long runs use the defaults.
      serverArgs: minutes <= 5 ? [`--commitLogTailCacheBytes=${16 * 1024 * 1024}`] : [],
    });
    console.log(`soak: ${JSON.stringify({ totals: result.totals, growth: result.growth, json: result.jsonFile, png: result.pngFile })}`);
    expect(result.problems).toEqual([]);
    expect(result.totals.acked).toBeGreaterThan(0);
    expect(result.totals.retryConsumed).toBeGreaterThan(0);
  }, minutes * 60_000 + 180_000);
});
