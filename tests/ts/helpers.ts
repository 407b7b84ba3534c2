// Shared by the TypeScript tests.
import { expect } from 'vitest';

import { DpQuantilesError } from '../../dist/node.js';

/** n values in [0, 100) from a fixed LCG: test data, not the library's randomness. */
export function lcgData(n: number, seed: number): Float64Array {
  const out = new Float64Array(n);
  let state = seed >>> 0;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = (state / 4294967296) * 100;
  }
  return out;
}

/** The DpQuantilesError code `fn` throws, or 'no error'. */
export function errorCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DpQuantilesError);
    return (error as DpQuantilesError).code;
  }
  return 'no error';
}
