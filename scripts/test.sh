#!/usr/bin/env bash
# Every test: the core natively and as WASM under Node (GoogleTest), the
# package on the real WASM module (Vitest), the CLI, the packed tarball and
# Chromium. Runs every step, then prints one summary line.
set -uo pipefail
cd "$(dirname "$0")/.."
results=test-results
rm -rf "$results" && mkdir -p "$results"
failed_steps=()

step() {
  local name=$1
  shift
  echo "== $name"
  if ! "$@"; then failed_steps+=("$name"); fi
}

step build bash scripts/build.sh all
step format clang-format --dry-run --Werror core/*.h core/*.cc wasm/*.cc \
  tests/cpp/*.h tests/cpp/*.cc bench/*.cc
# clang-tidy counts the warnings it suppresses in system headers on stderr;
# keep only real findings in the log.
lint() {
  clang-tidy --quiet -p build/native core/*.cc 2> >(grep -v 'warnings generated' >&2)
}
step lint lint
step "core tests (native)" build/native/dpq_core_tests \
  --gtest_output=json:"$results/gtest-native.json"
step "core tests (WASM in Node)" node --no-experimental-fetch \
  build/wasm/dpq_core_tests.cjs --gtest_output=json:"$results/gtest-wasm.json"
step "test types" npx tsc -p tests/tsconfig.json
step "site types" npx tsc -p web/site/tsconfig.json
step "package, CLI and browser tests (Vitest)" npx vitest run \
  --reporter=default --reporter=json --outputFile.json="$results/vitest.json"

node scripts/test-summary.mjs "$results" || failed_steps+=(summary)
if [ ${#failed_steps[@]} -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]}"
  exit 1
fi
