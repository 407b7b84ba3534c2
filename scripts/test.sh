#!/usr/bin/env bash
# Every test: the core natively and as WASM under Node (GoogleTest), the
# package on the real WASM module (Vitest), the CLI, the packed tarball and
# Chromium. Runs every step, then prints one summary line.
set -uo pipefail
cd "$(dirname "$0")/.."
results=test-results
rm -rf "$results" && mkdir -p "$results"

# Each step's wall time, for where the suite's time goes (printed again at
# the end). Steps may run in two lanes at once, so failures and times go to
# files rather than shell variables.
step() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  if ! "$@"; then echo "$name" >>"$results/failed-steps"; fi
  echo "$name: $((SECONDS - start)) s" >>"$results/timings"
}

# The core under AddressSanitizer and UndefinedBehaviorSanitizer (any report
# aborts), then each libFuzzer target for 30 s from the committed corpus (a
# crash, leak, sanitizer report or a unit over 10 s fails the step).
sanitize_build() {
  CXX=clang++-14 cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDPQ_SANITIZE=ON -DDPQ_FUZZ=ON -DDPQ_BUILD_BENCHMARKS=OFF >/dev/null &&
    cmake --build build/sanitize -j"$(nproc)"
}
# Built beside the rest: the builds' links, wasm-opt and the site's bundling
# leave a core idle for about a minute. (Stale build folders go first, so
# that build.sh removes none under the sanitizer build.)
bash scripts/fresh-build-dirs.sh
step "sanitizer build" sanitize_build >"$results/sanitize-build.log" 2>&1 &
sanitize_pid=$!
step build bash scripts/build.sh all
step format clang-format --dry-run --Werror core/*.h core/*.cc wasm/*.h wasm/*.cc \
  tests/cpp/*.h tests/cpp/*.cc tests/fuzz/*.h tests/fuzz/*.cc bench/*.cc
# The mutants (npm run mutants, too slow for here) still name code that
# exists: each one's text occurs once.
step "mutant texts" node scripts/mutants.mjs --check
wait "$sanitize_pid"
cat "$results/sanitize-build.log"

# clang-tidy counts the warnings it suppresses in system headers on stderr;
# keep only real findings in the log.
lint() {
  clang-tidy --quiet -p build/native core/*.cc 2> >(grep -v 'warnings generated' >&2) &&
    lint_wasm
}
# The bindings against Emscripten's sysroot (em++'s implicit includes).
lint_wasm() {
  local sysroot=/usr/share/emscripten/cache/sysroot/include
  clang-tidy --quiet -p build/wasm wasm/*.cc \
    --extra-arg=--target=wasm32-unknown-emscripten \
    --extra-arg=-isystem"$sysroot/compat" \
    --extra-arg=-isystem"$sysroot/c++/v1" --extra-arg=-isystem"$sysroot" \
    --extra-arg=-D__EMSCRIPTEN__ 2> >(grep -v 'warnings generated' >&2)
}
# The sanitizer run in two shards, one a lane. (The bit-string enumerations
# go 8 bits less deep here: under the sanitizers a sampler round runs
# hundreds of times slower.)
sanitized_tests() {
  env UBSAN_OPTIONS=print_stacktrace=1 GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX="$1" \
    build/sanitize/dpq_core_tests --gtest_output=json:"$results/gtest-sanitize-$1.json"
}
fuzz() {
  local target=$1 scratch
  scratch=$(mktemp -d)
  build/sanitize/"$target" "$scratch" tests/fuzz/corpus/"$target" \
    -max_total_time=30 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$results/$target-" -print_final_stats=1 2>"$results/$target.log"
  local status=$?
  grep -E '^(Done|stat::number_of_executed_units)' "$results/$target.log"
  [ $status -eq 0 ] || tail -40 "$results/$target.log"
  rm -rf "$scratch"
  return $status
}

# After the builds every step runs on one core, so two lanes share the
# machine's two; each lane holds about half of the work (lint alone is a
# third of it). No test asserts a wall time, so a shared core only slows.
lane_a() {
  step lint lint
  step "core tests (ASan + UBSan), shard 1 of 2" sanitized_tests 0
  step "fuzz release entry points and option parsing" fuzz fuzz_release
}
lane_b() {
  step "core tests (native)" build/native/dpq_core_tests \
    --gtest_output=json:"$results/gtest-native.json"
  step "core tests (WASM in Node)" node --no-experimental-fetch \
    build/wasm/dpq_core_tests.cjs --gtest_output=json:"$results/gtest-wasm.json"
  step "test types" npx tsc -p tests/tsconfig.json
  step "site types" npx tsc -p web/site/tsconfig.json
  step "package, CLI and browser tests (Vitest)" npx vitest run \
    --reporter=default --reporter=json --outputFile.json="$results/vitest.json"
  step "core tests (ASan + UBSan), shard 2 of 2" sanitized_tests 1
  step "fuzz sketch deserialization and streams" fuzz fuzz_stream
}
echo "== two lanes: lint, sanitizer shard 1, fuzz 1 | core tests, types, Vitest, sanitizer shard 2, fuzz 2"
lane_a >"$results/lane-a.log" 2>&1 &
lane_a_pid=$!
lane_b 2>&1 | tee "$results/lane-b.log"
wait "$lane_a_pid"
echo "== lane a's output"
cat "$results/lane-a.log"

echo "== time by step"
cat "$results/timings"
failed=0
node scripts/test-summary.mjs "$results" || failed=1
if [ -s "$results/failed-steps" ]; then
  echo "failed steps: $(paste -sd, "$results/failed-steps")"
  exit 1
fi
exit $failed
