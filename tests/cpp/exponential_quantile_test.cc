#include "core/exponential_quantile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "core/prepare.h"
#include "core/random.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

double LogSumExp(const std::vector<double>& logs) {
  double top = -INFINITY;
  for (double x : logs) top = std::max(top, x);
  double sum = 0;
  for (double x : logs) sum += std::exp(x - top);
  return top + std::log(sum);
}

// Every multiset of up to `max_size` values drawn from `values`.
void ForEachMultiset(const std::vector<double>& values, size_t max_size,
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

TEST(ExponentialQuantileTest, GapProbabilitiesEqualThePaperFormula) {
  // Appendix A: P(gap k) proportional to (x_k - x_{k-1}) exp(-eps |k - t| / 2)
  // with x_0 = a, x_{n+1} = b. Dyadic values make the grid cells exact.
  const double lower = 0, upper = 1, epsilon = 1.3;
  const std::vector<double> values = {0.125, 0.25, 0.3125, 0.5, 0.5, 0.875};
  const OutputGrid grid = OutputGrid::ForBounds(lower, upper);
  std::vector<double> cells = values;
  ConvertToCells(cells.data(), cells.size(), grid);
  for (double q : {0.1, 0.5, 0.6, 0.99}) {
    const GapProblem problem =
        MakeGapProblem(cells.data(), cells.size(), 0, grid.steps(), q);
    const int64_t t = static_cast<int64_t>(std::floor(q * values.size()));
    ASSERT_EQ(TargetRank(q, values.size()), t);
    ASSERT_EQ(problem.target, t);
    std::vector<double> formula;
    for (size_t k = 0; k <= values.size(); ++k) {
      const double left = k == 0 ? lower : values[k - 1];
      const double right = k == values.size() ? upper : values[k];
      const double length = right - left;
      formula.push_back(length > 0 ? std::log(length) -
                                         epsilon *
                                             std::fabs(static_cast<double>(k) -
                                                       static_cast<double>(t)) /
                                             2
                                   : -INFINITY);
    }
    const double normaliser = LogSumExp(formula);
    const std::vector<double> exact = GapLogProbabilities(problem, epsilon);
    ASSERT_EQ(exact.size(), formula.size());
    for (size_t k = 0; k < exact.size(); ++k) {
      if (std::isinf(formula[k])) {
        EXPECT_TRUE(std::isinf(exact[k]) && exact[k] < 0) << "gap " << k;
        continue;
      }
      // The grid adds one point to the first gap: relative 2^-49 here.
      EXPECT_NEAR(exact[k], formula[k] - normaliser, 1e-12) << "gap " << k;
    }
    EXPECT_NEAR(LogSumExp(exact), 0.0, 1e-12);
  }
}

// The privacy check: for every neighbouring pair (X, X + {x}) of small
// datasets, every output point's exact probability moves by at most e^eps.
// `cell_values` must be sorted: multisets are built in their order.
void CheckPrivacyOnGrid(const std::vector<double>& cell_values, int64_t steps,
                        size_t max_size) {
  ASSERT_TRUE(std::is_sorted(cell_values.begin(), cell_values.end()));
  double worst_ratio = 0;
  for (double epsilon : {0.1, 1.0, 4.0}) {
    for (double q : {0.05, 0.25, 0.5, 0.75, 0.95}) {
      ForEachMultiset(cell_values, max_size, [&](const std::vector<double>& x) {
        for (double added : cell_values) {
          std::vector<double> neighbour = x;
          neighbour.push_back(added);
          std::sort(neighbour.begin(), neighbour.end());
          const GapProblem small =
              MakeGapProblem(x.data(), x.size(), 0, steps, q);
          const GapProblem large =
              MakeGapProblem(neighbour.data(), neighbour.size(), 0, steps, q);
          const std::vector<double> small_gaps =
              GapLogProbabilities(small, epsilon);
          const std::vector<double> large_gaps =
              GapLogProbabilities(large, epsilon);
          // Probabilities are constant between record cells, so these points
          // cover every piece of the output range.
          std::vector<int64_t> points = {0, steps};
          for (double c : cell_values) {
            points.push_back(static_cast<int64_t>(c));
            points.push_back(static_cast<int64_t>(c) + 1);
          }
          for (int64_t j : points) {
            const size_t ks = small.GapOf(j), kl = large.GapOf(j);
            const double log_small =
                small_gaps[ks] - std::log(small.GapSize(ks));
            const double log_large =
                large_gaps[kl] - std::log(large.GapSize(kl));
            const double ratio = std::fabs(log_small - log_large);
            ASSERT_LE(ratio, epsilon + 1e-12)
                << "point " << j << " q " << q << " eps " << epsilon;
            worst_ratio = std::max(worst_ratio, ratio / epsilon);
          }
        }
      });
    }
  }
  // The bound is nearly attained: a check that cannot fail would not get here.
  EXPECT_GT(worst_ratio, 0.9);
}

TEST(ExponentialQuantileTest, PrivacyRatioBoundedOnEveryPointOfASmallGrid) {
  // All multisets of <= 4 records on 6 cells, plus one record, steps = 12.
  CheckPrivacyOnGrid({0, 2, 4, 7, 9, 11}, 12, 4);
}

TEST(ExponentialQuantileTest, PrivacyRatioBoundedOnTheProductionGrid) {
  const int64_t steps = kMaxGridSteps;
  CheckPrivacyOnGrid({0, 3, 1e9, steps / 2.0 + 1, 2.5e15, steps - 1.0}, steps,
                     3);
}

// Draws `draws` points and compares their frequencies with the exact
// probabilities over every point of a small grid.
void CheckSamplerMatchesExact(const std::vector<double>& cells, int64_t steps,
                              double q, double epsilon, uint64_t seed) {
  const GapProblem problem =
      MakeGapProblem(cells.data(), cells.size(), 0, steps, q);
  std::vector<double> probabilities;
  for (int64_t j = 0; j <= steps; ++j) {
    probabilities.push_back(std::exp(PointLogProbability(problem, epsilon, j)));
  }
  const ExponentialQuantileSampler sampler(epsilon);
  SeededRandom rng(seed);
  const int draws = 100000;
  std::vector<double> counts(steps + 1, 0);
  for (int i = 0; i < draws; ++i) {
    const int64_t j = sampler.SamplePoint(problem, rng);
    ASSERT_GE(j, 0);
    ASSERT_LE(j, steps);
    ASSERT_GT(probabilities[j], 0) << "drew an impossible point " << j;
    counts[j] += 1;
  }
  double df;
  const double statistic =
      testing::ChiSquare(counts, probabilities, draws, &df);
  EXPECT_LT(statistic, testing::ChiSquareCritical(df))
      << "q " << q << " eps " << epsilon << " df " << df;
}

TEST(ExponentialQuantileTest, SamplerMatchesExactProbabilities) {
  // Duplicates (empty gaps), records at both ends, one band and many bands
  // (eps = 20 gives bands of one or two gaps).
  const std::vector<double> cells = {0, 2, 2, 5, 9, 9, 9, 14, 15};
  uint64_t seed = 100;
  for (double epsilon : {0.01, 0.7, 3.0, 20.0}) {
    for (double q : {0.1, 0.5, 0.8}) {
      CheckSamplerMatchesExact(cells, 16, q, epsilon, ++seed);
    }
  }
}

TEST(ExponentialQuantileTest, SamplerMatchesExactWithManyBands) {
  // 60 records at eps = 0.9: bands of 66 gaps, and eps = 8: bands of 7.
  std::vector<double> cells;
  for (int i = 0; i < 60; ++i) cells.push_back(2 * i + (i % 3 == 0 ? 1 : 0));
  CheckSamplerMatchesExact(cells, 130, 0.3, 0.9, 7);
  CheckSamplerMatchesExact(cells, 130, 0.5, 8.0, 8);
}

TEST(ExponentialQuantileTest, NoRecordsGivesAUniformPoint) {
  const GapProblem problem = MakeGapProblem(nullptr, 0, 0, 9, 0.5);
  for (int64_t j = 0; j <= 9; ++j) {
    EXPECT_NEAR(PointLogProbability(problem, 1.0, j), std::log(0.1), 1e-12);
  }
  CheckSamplerMatchesExact({}, 9, 0.5, 1.0, 11);
}

TEST(ExponentialQuantileTest, AllEqualRecordsWork) {
  const std::vector<double> cells(50, 7);
  CheckSamplerMatchesExact(cells, 12, 0.5, 2.0, 12);
}

TEST(ExponentialQuantileTest, HugeAtomGivesNoNanAndNoBias) {
  // 10^4 copies of one value plus a few others, on the production grid, up to
  // an epsilon where every weight underflows in linear space.
  std::vector<double> cells(10000, 1e12);
  for (double c : {5.0, 7e11, 3e12, 4e15}) cells.push_back(c);
  std::sort(cells.begin(), cells.end());
  const int64_t steps = kMaxGridSteps;
  for (double epsilon : {0.01, 1.0, 100.0, 1e4}) {
    const GapProblem problem =
        MakeGapProblem(cells.data(), cells.size(), 0, steps, 0.5);
    const std::vector<double> logs = GapLogProbabilities(problem, epsilon);
    for (double p : logs) ASSERT_FALSE(std::isnan(p));
    EXPECT_NEAR(LogSumExp(logs), 0.0, 1e-9);
    // The atom's inner gaps are empty; the two gaps beside it hold the mass.
    const ExponentialQuantileSampler sampler(epsilon);
    SeededRandom rng(13);
    int below = 0, above = 0;
    for (int i = 0; i < 2000; ++i) {
      const int64_t j = sampler.SamplePoint(problem, rng);
      ASSERT_GE(j, 0);
      ASSERT_LE(j, steps);
      const size_t k = problem.GapOf(j);
      ASSERT_TRUE(std::isfinite(logs[k])) << "drew an empty gap";
      below += j <= 1e12;
      above += j > 1e12;
    }
    if (epsilon >= 100) {
      // Gaps 2 (just below the atom) and 10002 (just above) are both 5000
      // ranks from the target and hold all the mass, split by their widths.
      const double p_below = std::exp(logs[2]);
      const double p_above = std::exp(logs[10002]);
      EXPECT_NEAR(p_below + p_above, 1.0, 1e-9);
      EXPECT_NEAR(below / 2000.0, p_below, 0.05);
    }
    EXPECT_EQ(below + above, 2000);
  }
}

}  // namespace
}  // namespace dpq
