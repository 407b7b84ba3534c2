// Helpers shared by the core tests.
#ifndef DPQ_TESTS_CPP_TEST_UTIL_H_
#define DPQ_TESTS_CPP_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace dpq::testing {

// Upper critical value of the chi-square distribution with `df` degrees of
// freedom at tail probability 1e-6 (Wilson-Hilferty). A seeded sampler that
// matches its exact distribution stays below it; a wrong one does not.
inline double ChiSquareCritical(double df) {
  const double z = 4.753;  // standard normal upper 1e-6 quantile
  const double a = 2.0 / (9.0 * df);
  const double c = 1.0 - a + z * std::sqrt(a);
  return df * c * c * c;
}

// Pearson statistic of `counts` against `probabilities` (summing to 1) over
// `draws`, pooling cells whose expectation is below 5 into one. Returns the
// statistic and sets `df`.
inline double ChiSquare(const std::vector<double>& counts,
                        const std::vector<double>& probabilities, double draws,
                        double* df) {
  double statistic = 0;
  double pooled_expected = 0;
  double pooled_observed = 0;
  int cells = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = probabilities[i] * draws;
    if (expected < 5) {
      pooled_expected += expected;
      pooled_observed += counts[i];
      continue;
    }
    statistic += (counts[i] - expected) * (counts[i] - expected) / expected;
    ++cells;
  }
  if (pooled_expected > 0) {
    statistic += (pooled_observed - pooled_expected) *
                 (pooled_observed - pooled_expected) /
                 std::max(pooled_expected, 1e-300);
    ++cells;
  }
  *df = cells - 1;
  return statistic;
}

}  // namespace dpq::testing

#endif  // DPQ_TESTS_CPP_TEST_UTIL_H_
