import { defineConfig } from 'vitest/config';

// The benchmarks that drive the built demo in Chromium (npm run bench): not
// tests, so `npm test` does not run them.
export default defineConfig({
  test: {
    include: ['bench/**/*.bench-run.ts'],
    testTimeout: 900_000,
    fileParallelism: false,
  },
});
