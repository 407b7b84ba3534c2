#!/usr/bin/env bash
# Benchmarks: Google Benchmark natively, then WASM through the package in
# Node, the CLI through its bin, and the demo in Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh all
mkdir -p build/bench
build/native/dpq_bench --benchmark_format=json --benchmark_out=build/bench/native.json \
  --benchmark_out_format=json --benchmark_format=console
node --no-experimental-fetch build/wasm/dpq_wasm_sort_bench.cjs >build/bench/wasm-sort.json
node bench/wasm-bench.mjs build/bench/native.json build/bench/wasm-sort.json
node bench/groups-bench.mjs
node bench/cli-bench.mjs
# The demo's large-file streaming in Chromium (the built site).
npx vitest run --config bench/vitest.config.ts
echo
echo "Sketch size against n (generated on the fly):"
build/native/dpq_gk_space
