// Helpers shared by the core tests.
#ifndef DPQ_TESTS_CPP_TEST_UTIL_H_
#define DPQ_TESTS_CPP_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/release.h"
#include "core/runs.h"

namespace dpq::testing {

// ReleaseQuantiles on a copy of `data` (it sorts its input), with *out
// sized to the quantiles and filled with NaN first.
inline StatusOr<ReleaseReport> Release(std::vector<double> data,
                                       const ReleaseRequest& request,
                                       std::vector<double>* out) {
  out->assign(request.quantiles.size(), std::nan(""));
  return ReleaseQuantiles(data.data(), data.size(), request, out->data());
}

// The runs of sorted record points (the prepared form every mechanism
// reads). A temporary lives to the end of the call it is passed to.
inline RunsStore RunsOf(const std::vector<double>& sorted_points) {
  return RunsStore::FromSortedPoints(sorted_points);
}

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

// Every non-decreasing m-tuple of the integers 0..steps: the whole output
// space of a joint mechanism on a small grid.
inline std::vector<std::vector<int64_t>> AllNonDecreasingTuples(int64_t steps,
                                                                size_t m) {
  std::vector<std::vector<int64_t>> tuples;
  std::vector<int64_t> current;
  std::function<void(int64_t)> extend = [&](int64_t from) {
    if (current.size() == m) {
      tuples.push_back(current);
      return;
    }
    for (int64_t j = from; j <= steps; ++j) {
      current.push_back(j);
      extend(j);
      current.pop_back();
    }
  };
  extend(0);
  return tuples;
}

// Calls f on every multiset of up to `max_size` values drawn from `values`
// (the empty one first): the small datasets of the exact privacy tests.
inline void ForEachMultiset(
    const std::vector<double>& values, size_t max_size,
    const std::function<void(const std::vector<double>&)>& f) {
  std::vector<double> current;
  std::function<void(size_t)> extend = [&](size_t from) {
    f(current);
    if (current.size() == max_size) return;
    for (size_t i = from; i < values.size(); ++i) {
      current.push_back(values[i]);
      extend(i);
      current.pop_back();
    }
  };
  extend(0);
}

// One grid point of every piece on which a single-quantile mechanism's
// output probability is constant, for records at `cells`: the ends and the
// points next to every record point.
inline std::vector<int64_t> PiecePoints(const std::vector<double>& cells,
                                        int64_t steps) {
  std::vector<int64_t> points = {0, steps};
  for (double c : cells) {
    for (int64_t d : {-1, 0, 1}) {
      const int64_t j = static_cast<int64_t>(c) + d;
      if (j >= 0 && j <= steps) points.push_back(j);
    }
  }
  return points;
}

}  // namespace dpq::testing

#endif  // DPQ_TESTS_CPP_TEST_UTIL_H_
