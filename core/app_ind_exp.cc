#include "core/app_ind_exp.h"

#include <algorithm>

#include "core/exponential_quantile.h"

namespace dpq {

std::vector<int64_t> SampleAppIndExp(const Runs& runs, int64_t steps,
                                     const std::vector<double>& quantiles,
                                     double epsilon_each, RandomSource& rng) {
  const ExponentialQuantileSampler sampler(epsilon_each);
  std::vector<int64_t> points;
  points.reserve(quantiles.size());
  for (double q : quantiles) {
    points.push_back(
        sampler.SamplePoint(QuantileProblem::Whole(runs, steps, q), rng));
  }
  std::sort(points.begin(), points.end());
  return points;
}

}  // namespace dpq
