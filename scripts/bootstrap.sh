#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks for building and testing:
# system packages through apt-get (as root), npm packages through npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v em++ >/dev/null || missing+=(emscripten)
command -v clang-format >/dev/null || missing+=(clang-format)
command -v clang-tidy >/dev/null || missing+=(clang-tidy)
# The sanitizer build and the libFuzzer targets use Debian's clang 14.
command -v clang++-14 >/dev/null || missing+=(clang-14)
compgen -G '/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' \
  >/dev/null || missing+=(libclang-rt-14-dev)
[ -d /usr/src/googletest/googletest ] || missing+=(googletest)
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
[ -f /usr/include/benchmark/benchmark.h ] || missing+=(libbenchmark-dev)
# The browser tests drive Debian's Chromium; Playwright cannot download one.
command -v chromium >/dev/null || missing+=(chromium)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing ${missing[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  echo "bootstrap: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -f node_modules/.package-lock.json ] ||
  [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
