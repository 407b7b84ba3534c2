#include "core/app_ind_exp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/exponential_quantile.h"
#include "core/prepare.h"
#include "core/privacy.h"
#include "core/random.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

// The generalized-randomized-response delta at shift t, maximised over a fine
// grid of t: DDR 2020 prove the maximum sits at one of the k + 1 points the
// formula tries, so the formula must match this brute force.
double BruteForceDelta(double e, int k, double epsilon) {
  double worst = 0;
  for (int step = 0; step <= 20000; ++step) {
    const double t = e * step / 20000.0;
    const double p = (std::exp(-t) - std::exp(-e)) / (1 - std::exp(-e));
    double sum = 0;
    for (int i = 0; i <= k; ++i) {
      const double loss = k * t - i * e;
      if (loss <= epsilon) continue;
      const double binomial =
          std::exp(std::lgamma(k + 1.0) - std::lgamma(i + 1.0) -
                   std::lgamma(k - i + 1.0));
      sum += binomial * std::pow(p, k - i) * std::pow(1 - p, i) *
             (std::exp(loss) - std::exp(epsilon));
    }
    worst = std::max(worst, sum);
  }
  return worst;
}

TEST(OptimalCompositionTest, MatchesABruteForceMaximumOverShifts) {
  for (int k : {1, 2, 3, 5, 10}) {
    for (double e : {0.1, 0.5, 1.0}) {
      for (double epsilon : {0.5, 1.0, 2.0}) {
        const double formula =
            OptimalExponentialCompositionDelta(e, k, epsilon);
        const double brute = BruteForceDelta(e, k, epsilon);
        EXPECT_GE(formula, brute - 1e-12) << k << " " << e << " " << epsilon;
        EXPECT_NEAR(formula, brute, 1e-6 + 1e-3 * brute);
      }
    }
  }
}

TEST(OptimalCompositionTest, BasicCompositionCostsNoDelta) {
  for (int k : {1, 4, 50}) {
    EXPECT_EQ(OptimalExponentialCompositionDelta(1.0 / k, k, 1.0), 0.0);
  }
}

TEST(OptimalCompositionTest, PerPartEpsilonBeatsBasicAndMeetsDelta) {
  for (int k : {2, 10, 120}) {
    const PrivacyBudget budget = PrivacyBudget::Approx(1.0, 1e-6);
    const double e = ExponentialMechanismEpsilonPerPart(budget, k);
    EXPECT_GE(e, 1.0 / k);
    EXPECT_LE(OptimalExponentialCompositionDelta(e, k, 1.0), 1e-6);
    if (k >= 10) EXPECT_GT(e, 1.5 / k) << "the delta should buy something";
  }
}

// The (epsilon, delta) of k independent atom-aware exponential mechanisms,
// measured on their actual joint output distribution: for neighbouring
// datasets, delta(epsilon) = sum over tuples of max(0, P(o) - e^eps P'(o)),
// both directions. Returns the larger.
double ActualDelta(const std::vector<double>& x, const std::vector<double>& y,
                   const std::vector<double>& quantiles, int64_t steps,
                   double e, double epsilon) {
  std::vector<std::vector<double>> px, py;  // per quantile, per point
  const RunsStore x_runs = testing::RunsOf(x);
  const RunsStore y_runs = testing::RunsOf(y);
  for (double q : quantiles) {
    px.emplace_back();
    py.emplace_back();
    for (int64_t j = 0; j <= steps; ++j) {
      px.back().push_back(std::exp(PointLogProbability(
          QuantileProblem::Whole(x_runs.view(), steps, q), e, j)));
      py.back().push_back(std::exp(PointLogProbability(
          QuantileProblem::Whole(y_runs.view(), steps, q), e, j)));
    }
  }
  double delta_xy = 0, delta_yx = 0;
  std::vector<int64_t> o(quantiles.size(), 0);
  for (;;) {
    double a = 1, b = 1;
    for (size_t i = 0; i < o.size(); ++i) {
      a *= px[i][o[i]];
      b *= py[i][o[i]];
    }
    delta_xy += std::max(0.0, a - std::exp(epsilon) * b);
    delta_yx += std::max(0.0, b - std::exp(epsilon) * a);
    size_t i = 0;
    while (i < o.size() && ++o[i] > steps) o[i++] = 0;
    if (i == o.size()) break;
  }
  return std::max(delta_xy, delta_yx);
}

TEST(AppIndExpTest, ApproximateDpHoldsOnActualOutputDistributions) {
  // k = 3 mechanisms at the per-part epsilon the optimal composition picks
  // for (1, 0.05): every neighbouring pair of small datasets stays within
  // delta. The same pairs at twice that per-part epsilon (whose composition
  // bound exceeds delta) do exceed it, so the check can fail.
  const std::vector<double> quantiles = {0.25, 0.5, 0.75};
  const double epsilon = 1, delta = 0.05;
  const double e = ExponentialMechanismEpsilonPerPart(
      PrivacyBudget::Approx(epsilon, delta), 3);
  ASSERT_GT(e, epsilon / 3);
  const int64_t steps = 6;
  double worst = 0, worst_too_large = 0;
  const std::vector<std::vector<double>> datasets = {
      {}, {3}, {0, 6}, {2, 2, 4}, {0, 0, 0}, {1, 3, 5}, {6, 6, 6}};
  for (const auto& x : datasets) {
    for (double added : {0.0, 3.0, 6.0}) {
      std::vector<double> y = x;
      y.push_back(added);
      std::sort(y.begin(), y.end());
      const double d = ActualDelta(x, y, quantiles, steps, e, epsilon);
      EXPECT_LE(d, delta + 1e-12);
      worst = std::max(worst, d);
      worst_too_large = std::max(
          worst_too_large, ActualDelta(x, y, quantiles, steps, 2 * e, epsilon));
    }
  }
  EXPECT_GT(worst, 0.0);
  EXPECT_GT(worst_too_large, delta);
}

TEST(AppIndExpTest, LargeEpsilonReleasesTheTrueQuantiles) {
  SeededRandom rng(91);
  std::vector<double> values;
  for (int i = 0; i < 5000; ++i) values.push_back(UniformDouble(rng));
  std::sort(values.begin(), values.end());
  const OutputGrid grid = OutputGrid::ForBounds(0, 1);
  std::vector<double> cells = values;
  ConvertToPoints(cells.data(), cells.size(), grid);
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  const auto points = SampleAppIndExp(testing::RunsOf(cells).view(),
                                      grid.steps(), quantiles, 1e4, rng);
  ASSERT_TRUE(std::is_sorted(points.begin(), points.end()));
  for (size_t j = 0; j < 3; ++j) {
    const int64_t below = std::lower_bound(values.begin(), values.end(),
                                           grid.ValueAt(points[j])) -
                          values.begin();
    EXPECT_LE(std::llabs(below - FloorProduct(quantiles[j], 5000)), 1);
  }
}

}  // namespace
}  // namespace dpq
