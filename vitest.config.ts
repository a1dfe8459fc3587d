import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration suites start real servers and JVMs; on a 2-core machine they run one file at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
  },
});
