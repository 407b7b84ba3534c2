#include "core/aq.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "core/exponential_quantile.h"
#include "core/prepare.h"
#include "core/random.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

TEST(AqTest, LevelsAreFloorLog2PlusOne) {
  EXPECT_EQ(ApproximateQuantilesLevels(1), 1);
  EXPECT_EQ(ApproximateQuantilesLevels(2), 2);
  EXPECT_EQ(ApproximateQuantilesLevels(3), 2);
  EXPECT_EQ(ApproximateQuantilesLevels(4), 3);
  EXPECT_EQ(ApproximateQuantilesLevels(7), 3);
  EXPECT_EQ(ApproximateQuantilesLevels(8), 4);
  EXPECT_EQ(ApproximateQuantilesLevels(1000), 10);
}

std::vector<double> UniformQuantiles(size_t m) {
  std::vector<double> quantiles;
  for (size_t i = 1; i <= m; ++i) quantiles.push_back(i / (m + 1.0));
  return quantiles;
}

// Rank error as in the paper: | #{x < v} - floor(q n) |.
int64_t RankError(const std::vector<double>& sorted, double q, double v) {
  const int64_t below =
      std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
  return std::llabs(below -
                    FloorProduct(q, static_cast<int64_t>(sorted.size())));
}

TEST(AqTest, LargeEpsilonReleasesTheTrueQuantiles) {
  // 10,000 distinct points, eps = 10^4: rank error <= 1 for every quantile.
  SeededRandom rng(21);
  std::vector<double> values;
  for (int i = 0; i < 10000; ++i)
    values.push_back(-50 + 100 * UniformDouble(rng));
  std::sort(values.begin(), values.end());
  const OutputGrid grid = OutputGrid::ForBounds(-100, 100);
  std::vector<double> cells = values;
  ConvertToCells(cells.data(), cells.size(), grid);
  for (size_t m : {1, 2, 3, 10, 99, 1000}) {
    const std::vector<double> quantiles = UniformQuantiles(m);
    const double epsilon_per_level = 1e4 / ApproximateQuantilesLevels(m);
    const std::vector<int64_t> points =
        SampleApproximateQuantiles(cells.data(), cells.size(), grid.steps(),
                                   quantiles, epsilon_per_level, rng);
    for (size_t i = 0; i < m; ++i) {
      EXPECT_LE(RankError(values, quantiles[i], grid.ValueAt(points[i])), 1)
          << "m " << m << " q " << quantiles[i];
    }
  }
}

std::vector<std::vector<int64_t>> AllOutputs(int64_t steps, size_t m) {
  return testing::AllNonDecreasingTuples(steps, m);
}

TEST(AqTest, ExactOutputDistributionSumsToOne) {
  const std::vector<double> cells = {1, 1, 3, 6};
  const std::vector<double> quantiles = {0.25, 0.5, 0.75};
  double total = 0;
  for (const auto& output : AllOutputs(8, 3)) {
    total += std::exp(ApproximateQuantilesLogProbability(
        cells.data(), cells.size(), 8, quantiles, 0.8, output));
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
}

// The privacy check for AQ: every output of a small grid, for every
// neighbouring pair (X, X + {x}) of small datasets, has probability ratio
// <= e^eps, eps the total over all levels. m = 3 has 2 levels, m = 4 and 5
// have 3, so a recursion deeper than the budget split would fail here.
void CheckAqPrivacy(const std::vector<double>& quantiles, int64_t steps,
                    const std::vector<double>& cell_values, size_t max_size,
                    double min_worst_ratio) {
  const auto outputs = AllOutputs(steps, quantiles.size());
  double worst_ratio = 0;
  for (double epsilon : {0.5, 2.0}) {
    const double per_level =
        epsilon / ApproximateQuantilesLevels(quantiles.size());
    std::vector<double> x;
    std::function<void(size_t)> each = [&](size_t from) {
      for (double added : cell_values) {
        std::vector<double> neighbour = x;
        neighbour.push_back(added);
        std::sort(neighbour.begin(), neighbour.end());
        for (const auto& output : outputs) {
          const double a = ApproximateQuantilesLogProbability(
              x.data(), x.size(), steps, quantiles, per_level, output);
          const double b = ApproximateQuantilesLogProbability(
              neighbour.data(), neighbour.size(), steps, quantiles, per_level,
              output);
          ASSERT_FALSE(std::isnan(a) || std::isnan(b));
          ASSERT_EQ(std::isinf(a), std::isinf(b));
          if (std::isinf(a)) continue;
          ASSERT_LE(std::fabs(a - b), epsilon + 1e-9);
          worst_ratio = std::max(worst_ratio, std::fabs(a - b) / epsilon);
        }
      }
      if (x.size() == max_size) return;
      for (size_t i = from; i < cell_values.size(); ++i) {
        x.push_back(cell_values[i]);
        each(i);
        x.pop_back();
      }
    };
    each(0);
  }
  // Not vacuous: some output comes close to the bound.
  EXPECT_GT(worst_ratio, min_worst_ratio);
}

TEST(AqTest, PrivacyRatioBoundedForThreeQuantiles) {
  CheckAqPrivacy({0.25, 0.5, 0.75}, 9, {0, 2, 4, 6, 8}, 3, 0.5);
  CheckAqPrivacy({0.1, 0.3, 0.9}, 9, {0, 2, 4, 6, 8}, 3, 0.5);
}

TEST(AqTest, PrivacyRatioBoundedForThreeLevels) {
  CheckAqPrivacy({0.2, 0.4, 0.6, 0.8}, 6, {0, 2, 5}, 2, 0.4);
  CheckAqPrivacy({0.1, 0.2, 0.5, 0.7, 0.9}, 5, {0, 2, 4}, 2, 0.4);
}

TEST(AqTest, SamplerMatchesTheExactJointDistribution) {
  const int64_t steps = 7;
  const std::vector<double> cells = {0, 2, 2, 3, 5, 6};
  const std::vector<double> quantiles = {0.2, 0.5, 0.7};
  const auto outputs = AllOutputs(steps, 3);
  std::map<std::vector<int64_t>, size_t> index;
  std::vector<double> probabilities;
  for (const auto& output : outputs) {
    index[output] = probabilities.size();
    probabilities.push_back(std::exp(ApproximateQuantilesLogProbability(
        cells.data(), cells.size(), steps, quantiles, 1.2, output)));
  }
  SeededRandom rng(31);
  const int draws = 100000;
  std::vector<double> counts(outputs.size(), 0);
  for (int i = 0; i < draws; ++i) {
    const auto points = SampleApproximateQuantiles(cells.data(), cells.size(),
                                                   steps, quantiles, 1.2, rng);
    auto it = index.find(points);
    ASSERT_NE(it, index.end()) << "output is not non-decreasing";
    counts[it->second] += 1;
  }
  double df;
  const double statistic =
      testing::ChiSquare(counts, probabilities, draws, &df);
  EXPECT_LT(statistic, testing::ChiSquareCritical(df)) << "df " << df;
}

TEST(AqTest, EdgeSizesGiveOrderedPointsInRange) {
  SeededRandom rng(41);
  const int64_t steps = kMaxGridSteps;
  for (size_t n : {0, 1, 5}) {
    std::vector<double> cells;
    for (size_t i = 0; i < n; ++i) cells.push_back(7e14 * (i + 1));
    for (size_t m : {1, 2, 1000}) {
      const auto points = SampleApproximateQuantiles(
          cells.data(), n, steps, UniformQuantiles(m), 1.0, rng);
      ASSERT_EQ(points.size(), m);
      EXPECT_TRUE(std::is_sorted(points.begin(), points.end()));
      EXPECT_GE(points.front(), 0);
      EXPECT_LE(points.back(), steps);
    }
  }
}

}  // namespace
}  // namespace dpq
