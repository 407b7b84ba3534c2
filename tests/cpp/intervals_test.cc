#include "core/intervals.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "core/exponential_quantile.h"
#include "core/release.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

// The true sample quantile the intervals are for: the (floor(q n) + 1)-th
// smallest clamped value.
double TrueQuantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const auto k = static_cast<size_t>(std::floor(q * values.size()));
  return values[std::min(k, values.size() - 1)];
}

// Dataset d of the coverage test: four shapes, three sizes.
std::vector<double> Dataset(int d, RandomSource& rng) {
  const size_t n = d % 3 == 0 ? 30 : d % 3 == 1 ? 200 : 1000;
  std::vector<double> values;
  for (size_t i = 0; i < n; ++i) {
    const double u = UniformDouble(rng);
    switch ((d / 3) % 4) {
      case 0:  // uniform on [20, 60]
        values.push_back(20 + 40 * u);
        break;
      case 1:  // half the values at 40 (an atom), the rest uniform
        values.push_back(u < 0.5 ? 40 : 100 * UniformDouble(rng));
        break;
      case 2:  // heavy right tail, some above the upper bound (clamped)
        values.push_back(5 / std::max(u, 1e-9));
        break;
      default:  // integers 0..5
        values.push_back(std::floor(6 * u));
        break;
    }
  }
  return values;
}

TEST(IntervalsTest, CoverTheTrueQuantileAtLeastAtTheNominalRate) {
  // 1,200 simulated datasets, three quantiles each, at 90% and 50%.
  SeededRandom data_rng(17);
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  for (double confidence : {0.9, 0.5}) {
    std::vector<int> covered(quantiles.size(), 0);
    std::vector<double> widths;
    const int datasets = 1200;
    for (int d = 0; d < datasets; ++d) {
      const std::vector<double> values = Dataset(d, data_rng);
      ReleaseRequest request;
      request.lower = 0;
      request.upper = 100;
      request.quantiles = quantiles;
      request.epsilon = d % 2 == 0 ? 1.0 : 4.0;
      request.confidence = confidence;
      request.seed = 1000 + d;
      if (d % 5 == 0) request.options = {{"step", 1.0}};
      std::vector<double> copy = values;
      std::vector<double> out(quantiles.size());
      const StatusOr<ReleaseReport> report =
          ReleaseQuantiles(copy.data(), copy.size(), request, out.data());
      ASSERT_TRUE(report.ok()) << report.status().message();
      ASSERT_TRUE(report.value().has_intervals);
      std::vector<double> clamped = values;
      for (double& x : clamped) x = std::min(std::max(x, 0.0), 100.0);
      for (size_t j = 0; j < quantiles.size(); ++j) {
        const double low = report.value().interval_low[j];
        const double high = report.value().interval_high[j];
        ASSERT_LE(low, out[j]);
        ASSERT_GE(high, out[j]);
        const double truth = TrueQuantile(clamped, quantiles[j]);
        if (low <= truth && truth <= high) ++covered[j];
        if (values.size() == 1000 && request.epsilon == 4.0) {
          widths.push_back(high - low);
        }
      }
    }
    for (size_t j = 0; j < quantiles.size(); ++j) {
      EXPECT_GE(covered[j], confidence * datasets)
          << "q " << quantiles[j] << " at " << confidence;
    }
    // Not vacuous: at n = 1,000 and epsilon = 4 the median width is a small
    // part of the range [0, 100].
    std::nth_element(widths.begin(), widths.begin() + widths.size() / 2,
                     widths.end());
    std::printf(
        "confidence %.2f: median width %.2f of 100 at n = 1000, "
        "epsilon = 4; coverage %d %d %d of %d\n",
        confidence, widths[widths.size() / 2], covered[0], covered[1],
        covered[2], datasets);
    EXPECT_LT(widths[widths.size() / 2], 30);
  }
}

TEST(IntervalsTest, SpendTheirShareAndTheValuesTheRest) {
  std::vector<double> data(500);
  for (size_t i = 0; i < data.size(); ++i) data[i] = i % 100;
  ReleaseRequest request;
  request.lower = 0;
  request.upper = 100;
  request.quantiles = {0.25, 0.5, 0.75};
  request.epsilon = 2;
  request.confidence = 0.95;
  std::vector<double> out(3);
  std::vector<double> copy = data;
  StatusOr<ReleaseReport> report =
      ReleaseQuantiles(copy.data(), copy.size(), request, out.data());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.value().spent.epsilon, 2);
  EXPECT_DOUBLE_EQ(report.value().interval_spent.epsilon, 0.5);
  // AQ's two levels share 1.5; six brackets share 0.5.
  EXPECT_DOUBLE_EQ(report.value().mechanism_epsilon, 0.75);
  EXPECT_DOUBLE_EQ(report.value().interval_epsilon, 0.5 / 6);
  // zCDP: rho splits the same way.
  request.epsilon.reset();
  request.rho = 1;
  request.interval_share = 0.5;
  copy = data;
  report = ReleaseQuantiles(copy.data(), copy.size(), request, out.data());
  ASSERT_TRUE(report.ok());
  EXPECT_DOUBLE_EQ(report.value().interval_spent.rho, 0.5);
  EXPECT_NEAR(report.value().interval_epsilon, std::sqrt(8 * 0.5 / 6), 1e-12);
}

TEST(IntervalsTest, BadOptionsAreTypedErrors) {
  std::vector<double> data = {1, 2, 3};
  std::vector<double> out(1);
  ReleaseRequest request;
  request.lower = 0;
  request.upper = 10;
  request.quantiles = {0.5};
  request.epsilon = 1;
  for (double bad : {0.0, 1.0, -0.5, 1.5, std::nan("")}) {
    request.confidence = bad;
    EXPECT_EQ(
        ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
        StatusCode::kInvalidOption);
  }
  request.confidence = 0.9;
  for (double bad : {0.0, 1.0, 2.0, std::nan("")}) {
    request.interval_share = bad;
    EXPECT_EQ(
        ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
        StatusCode::kInvalidOption);
  }
  request.confidence.reset();
  request.interval_share = 0.5;
  EXPECT_EQ(
      ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
      StatusCode::kInvalidOption);
}

// Exact privacy of the brackets: with phantoms (public) added as the release
// adds them, each bracket is an exponential mechanism whose output
// probabilities move by at most e^epsilon_each when a record is added, and
// nearly that much somewhere (the two compose to 2 epsilon_each).
TEST(IntervalsTest, BracketsArePrivateExactly) {
  const int64_t steps = 1 << 20;
  double worst = 0;
  for (const auto& setting :
       std::vector<std::pair<double, double>>{{0.5, 2}, {0.5, 8}, {0.2, 8}}) {
    // Plain locals: lambdas cannot capture structured bindings in C++17.
    const double q = setting.first;
    const double epsilon_each = setting.second;
    const double t = IntervalRankOffset(epsilon_each, q, steps, 0.9);
    const size_t below = BracketPhantoms(t, 1 - q);
    const size_t above = BracketPhantoms(t, q);
    ASSERT_GT(below, 0u);
    ASSERT_GT(above, 0u);
    // log P(bracket = point) for the lower and the upper bracket.
    auto log_probabilities = [&](const std::vector<double>& cells,
                                 int64_t point) {
      std::vector<double> down(below, 0.0);
      down.insert(down.end(), cells.begin(), cells.end());
      std::vector<double> up = cells;
      up.insert(up.end(), above, static_cast<double>(steps));
      QuantileProblem lower{down.data(), down.size(), 0, steps, q};
      QuantileProblem upper{up.data(), up.size(), 0, steps, q};
      return std::pair<double, double>(
          PointLogProbability(lower, epsilon_each, point),
          PointLogProbability(upper, epsilon_each, point));
    };
    // Far apart on a large grid: the normalizer is then dominated by the
    // empty stretches, where the bound is nearly attained.
    const std::vector<double> points = {0, 5, 1000, 500000, double(steps)};
    const std::vector<int64_t> outputs = testing::PiecePoints(points, steps);
    // Enough records that the brackets' targets fall among them, not among
    // the phantoms: four at each point, plus up to two more.
    std::vector<double> base;
    for (double c : points) base.insert(base.end(), 4, c);
    testing::ForEachMultiset(points, 2, [&](const std::vector<double>& extra) {
      std::vector<double> x = base;
      x.insert(x.end(), extra.begin(), extra.end());
      std::sort(x.begin(), x.end());
      for (double added : points) {
        std::vector<double> neighbour = x;
        neighbour.push_back(added);
        std::sort(neighbour.begin(), neighbour.end());
        for (int64_t j : outputs) {
          const auto a = log_probabilities(x, j);
          const auto b = log_probabilities(neighbour, j);
          for (double ratio :
               {std::fabs(a.first - b.first), std::fabs(a.second - b.second)}) {
            EXPECT_LE(ratio, epsilon_each + 1e-9);
            worst = std::max(worst, ratio / epsilon_each);
          }
        }
      }
    });
  }
  EXPECT_GT(worst, 0.9);
}

}  // namespace
}  // namespace dpq
