// Entry point for browsers and Web Workers: secure randomness from
// crypto.getRandomValues.
import { wrapModule } from './api.js';
import type { DpQuantiles } from './types.js';
import { DpQuantilesError } from './errors.js';
import createDpqModule from './generated/dpq_module.mjs';

export * from './index.js';

/**
 * Loads the WebAssembly module once; call the returned object's methods
 * synchronously afterwards. Randomness comes from crypto.getRandomValues.
 */
export async function loadDpQuantiles(): Promise<DpQuantiles> {
  const crypto = globalThis.crypto;
  if (crypto === undefined || typeof crypto.getRandomValues !== 'function') {
    throw new DpQuantilesError(
      'ENTROPY_UNAVAILABLE',
      'crypto.getRandomValues is not available; private releases need a secure random source',
    );
  }
  const module = await createDpqModule({
    dpqFillRandom: (bytes) => {
      crypto.getRandomValues(bytes);
    },
  });
  return wrapModule(module);
}
