// Entry point for Node.js (>= 18): secure randomness from node:crypto, which
// Node 18 does not expose as globalThis.crypto.
import { webcrypto } from 'node:crypto';

import { wrapModule } from './api.js';
import type { DpQuantiles } from './types.js';
import createDpqModule from './generated/dpq_module.mjs';

export * from './index.js';

/**
 * Loads the WebAssembly module once; call the returned object's methods
 * synchronously afterwards. Randomness comes from the operating system's
 * cryptographically secure generator.
 */
export async function loadDpQuantiles(): Promise<DpQuantiles> {
  const module = await createDpqModule({
    dpqFillRandom: (bytes) => {
      webcrypto.getRandomValues(bytes);
    },
  });
  return wrapModule(module);
}
