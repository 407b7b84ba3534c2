#include "core/dp_hist_gk.h"

#include <algorithm>

#include "core/discrete_noise.h"
#include "core/tree_cdf.h"

namespace dpq {

std::vector<int64_t> HistGkCounts(const GkSketch& sketch, int64_t bins) {
  const int64_t group = sketch.bins() / bins;
  std::vector<int64_t> counts(bins, 0);
  for (const GkTuple& tuple : sketch.tuples()) {
    counts[sketch.BinOf(tuple.value) / group] += static_cast<int64_t>(tuple.g);
  }
  return counts;
}

StatusOr<std::vector<double>> ReleaseHistGk(
    const GkSketch& sketch, const std::vector<double>& quantiles, int64_t bins,
    const PrivacyBudget& budget, RandomSource& rng) {
  StatusOr<CountNoise> noise = CountNoiseFor(budget);
  if (!noise.ok()) return noise.status();
  std::vector<double> cdf;
  double total = 0;
  for (int64_t count : HistGkCounts(sketch, bins)) {
    total += static_cast<double>(
        std::max<int64_t>(0, count + noise.value().Sample(rng)));
    cdf.push_back(total);
  }
  return QuantilesFromCdf(cdf, total, sketch.lower(), sketch.upper(),
                          quantiles);
}

}  // namespace dpq
