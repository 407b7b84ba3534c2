import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vite';

// A folder of static files with relative paths: it works from any static
// host, a sub-path, or opened offline from a local server.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  build: {
    outDir: fileURLToPath(new URL('../../dist-site', import.meta.url)),
    emptyOutDir: true,
    // The WASM module is inlined in one file (SINGLE_FILE); no warnings for it.
    chunkSizeWarningLimit: 2000,
  },
  worker: { format: 'es' },
});
