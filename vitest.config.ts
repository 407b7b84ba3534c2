import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/ts/**/*.test.ts', 'tests/e2e/**/*.test.ts'],
    // The site tests share one page and run in order.
    sequence: { concurrent: false },
    testTimeout: 60_000,
    // The suites load one WASM module each; run files one at a time so the
    // heap measurements see no neighbours.
    fileParallelism: false,
  },
});
