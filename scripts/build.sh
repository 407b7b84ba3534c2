#!/usr/bin/env bash
# Builds the project.
#   build.sh package  the WASM module and the TypeScript package (dist/)
#   build.sh site     the package, then the demo site (dist-site/)
#   build.sh all      also the native core, its tests and benchmarks, and the
#                     core tests compiled to WASM
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
jobs=$(nproc)

# Debian's emscripten finds its acorn only through NODE_PATH when node is not
# Debian's nodejs.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

# A build folder configured from another checkout (this one copied or
# moved) is configured afresh.
bash scripts/fresh-build-dirs.sh

if [ "$what" = all ]; then
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/native -j"$jobs"
fi

emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ "$what" = all ]; then
  cmake --build build/wasm -j"$jobs"
else
  cmake --build build/wasm -j"$jobs" --target dpq_module
fi

mkdir -p dist/generated
cp build/wasm/dpq_module.mjs dist/generated/dpq_module.mjs
cp web/src/generated/dpq_module.d.mts dist/generated/dpq_module.d.mts
npx tsc -p tsconfig.json
chmod +x dist/cli.js

if [ "$what" = site ] || [ "$what" = all ]; then
  node scripts/extract-datasets.mjs
  npx vite build --config web/site/vite.config.ts --logLevel warn
  node scripts/site-docs.mjs
fi
