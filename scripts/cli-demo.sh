#!/usr/bin/env bash
# The CLI on built-in real data: private quantiles of Seattle's daily
# weather 2012-2015 (vega-datasets), printed next to the true ones.
set -euo pipefail
cd "$(dirname "$0")/.."
data=node_modules/vega-datasets/data/seattle-weather.csv

echo "# Daily maximum temperature (°C), bounds [-20, 50], epsilon = 1"
node dist/cli.js "$data" --column temp_max --lower -20 --upper 50 \
  --epsilon 1 --quantiles 0.1,0.25,0.5,0.75,0.9 --show-true
echo "# Daily precipitation (mm), bounds [0, 100], rho = 0.5 (zCDP)"
node dist/cli.js "$data" --column precipitation --lower 0 --upper 100 \
  --rho 0.5 --quantiles 0.5,0.75,0.9,0.95,0.99 --show-true
