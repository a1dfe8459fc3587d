// The structure-aware fuzzer against the real server (test/fuzz/run.ts). In `npm test`: about a minute with a
// fixed seed. Long runs: `npm run fuzz -- --seed=N --minutes=M` (RMQ_FUZZ_SEED / RMQ_FUZZ_MINUTES here).
// A failure prints the seed and the frames involved as hex, and writes them to fuzz-results/.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFuzz } from './run.js';

const seed = Number(process.env.RMQ_FUZZ_SEED ?? 1616);
const minutes = Number(process.env.RMQ_FUZZ_MINUTES ?? 1);

describe('fuzzing the remoting frame, both header encodings, every code\'s fields and bodies', () => {
  it(`answers every frame with a remark or a close, without crash, stall, loss or hole (seed ${seed})`, async () => {
    const report = await runFuzz({
      seed, durationMs: minutes * 60_000, artifactDir: path.resolve(import.meta.dirname, '../../fuzz-results'),
    });
    const { failures, ...summary } = report;
    console.log(`fuzz seed ${seed}: ${JSON.stringify(summary)}`);
    expect(failures, `seed ${seed}: replay with npm run fuzz -- --seed=${seed}`).toEqual([]);
    expect(report.frames).toBeGreaterThan(100);
    expect(report.answered).toBeGreaterThan(0);
  }, minutes * 60_000 + 180_000);
});
