import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/ts/**/*.test.ts', 'tests/e2e/**/*.test.ts'],
    testTimeout: 60_000,
    // The suites load one WASM module each; run files one at a time so the
    // heap measurements see no neighbours.
    fileParallelism: false,
  },
});
