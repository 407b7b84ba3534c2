#!/usr/bin/env bash
# The CLI on built-in real data: private quantiles of Seattle's daily
# weather 2012-2015 (vega-datasets), printed next to the true ones.
set -euo pipefail
cd "$(dirname "$0")/.."
data=node_modules/vega-datasets/data/seattle-weather.csv

# Both are recorded to 0.1, so --step 0.1: the values print as the data
# does (an atom like 0 mm of rain as exactly 0).
echo "# Daily maximum temperature (°C), bounds [-20, 50], step 0.1, epsilon = 1"
node dist/cli.js "$data" --column temp_max --lower -20 --upper 50 --step 0.1 \
  --epsilon 1 --quantiles 0.1,0.25,0.5,0.75,0.9 --show-true
echo "# Daily precipitation (mm), bounds [0, 100], step 0.1, rho = 0.5 (zCDP)"
node dist/cli.js "$data" --column precipitation --lower 0 --upper 100 --step 0.1 \
  --rho 0.5 --quantiles 0.5,0.75,0.9,0.95,0.99 --show-true
echo "# Maximum temperature by weather, public keys, epsilon = 1 for all five"
node dist/cli.js "$data" --column temp_max --lower -20 --upper 50 --step 0.1 \
  --epsilon 1 --quantiles 0.5 --group-by weather --keys drizzle,fog,rain,snow,sun
