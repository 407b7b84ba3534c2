#!/usr/bin/env bash
# A build folder configured from another checkout (this one copied or
# moved) names that checkout's sources in its CMake cache, and CMake then
# refuses to configure it ("does not match the source ... used to generate
# cache"): remove such a folder so that it is configured afresh. Run from
# the checkout's root.
set -euo pipefail
for dir in build/native build/wasm build/sanitize build/perf; do
  cache=$dir/CMakeCache.txt
  if [ -f "$cache" ] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$PWD" "$cache"; then
    echo "build: $dir was configured for another folder; configuring it afresh"
    rm -rf "$dir"
  fi
done
