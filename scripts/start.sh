#!/usr/bin/env bash
# Serves the built demo site (dist-site/) on localhost and prints its URL.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-4173}
echo "dp-quantiles demo: http://127.0.0.1:$port/  (Ctrl-C to stop)"
exec npx vite preview --config web/site/vite.config.ts --host 127.0.0.1 --port "$port" --strictPort
