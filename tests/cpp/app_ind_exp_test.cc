#include "core/app_ind_exp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/prepare.h"
#include "core/privacy.h"
#include "core/random.h"

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

TEST(AppIndExpTest, LargeEpsilonReleasesTheTrueQuantiles) {
  SeededRandom rng(91);
  std::vector<double> values;
  for (int i = 0; i < 5000; ++i) values.push_back(UniformDouble(rng));
  std::sort(values.begin(), values.end());
  const OutputGrid grid = OutputGrid::ForBounds(0, 1);
  std::vector<double> cells = values;
  ConvertToPoints(cells.data(), cells.size(), grid);
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  const auto points = SampleAppIndExp(cells.data(), cells.size(), grid.steps(),
                                      quantiles, 1e4, rng);
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
