#include "core/intervals.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/agg_tree.h"
#include "core/aq.h"
#include "core/discrete_noise.h"
#include "core/exponential_quantile.h"
#include "core/plan.h"
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

// The release of coverage dataset d over [0, 100]: epsilon 1 and 4 in turn,
// a step of 1 on every fifth.
ReleaseRequest CoverageRequest(int d, const std::vector<double>& quantiles,
                               double confidence, uint64_t seed) {
  ReleaseRequest request;
  request.lower = 0;
  request.upper = 100;
  request.quantiles = quantiles;
  request.epsilon = d % 2 == 0 ? 1.0 : 4.0;
  request.confidence = confidence;
  request.seed = seed;
  if (d % 5 == 0) request.options = {{"step", 1.0}};
  return request;
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
      ReleaseRequest request =
          CoverageRequest(d, quantiles, confidence, 1000 + d);
      std::vector<double> out;
      const StatusOr<ReleaseReport> report =
          testing::Release(values, request, &out);
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

TEST(IntervalsTest, ManyQuantilesGetNarrowMonotoneIntervalsFromOneTree) {
  // Nine deciles of n = 10,000 from N(50, 10) in [0, 100], epsilon 1, 90%:
  // brackets split the intervals' share 18 ways (mean width 11.4); one noisy
  // tree serves them all. Each interval covers its decile at least 90% of
  // the time, the lows and highs never decrease with q, and with
  // `simultaneous` all nine hold together at least 90% of the time.
  const std::vector<double> quantiles = {0.1, 0.2, 0.3, 0.4, 0.5,
                                         0.6, 0.7, 0.8, 0.9};
  const int runs = 150;
  for (const bool simultaneous : {false, true}) {
    SeededRandom data_rng(23);
    std::vector<int> covered(quantiles.size(), 0);
    int all_covered = 0;
    double width = 0;
    for (int run = 0; run < runs; ++run) {
      std::vector<double> values;
      for (int i = 0; i < 10000; ++i) {
        const double u = std::max(UniformDouble(data_rng), 1e-300);
        const double v = UniformDouble(data_rng);
        values.push_back(50 + 10 * std::sqrt(-2 * std::log(u)) *
                                  std::cos(6.283185307 * v));
      }
      ReleaseRequest request;
      request.lower = 0;
      request.upper = 100;
      request.quantiles = quantiles;
      request.epsilon = 1;
      request.confidence = 0.9;
      request.interval_simultaneous = simultaneous;
      request.seed = 5000 + run;
      std::vector<double> out;
      const StatusOr<ReleaseReport> report =
          testing::Release(values, request, &out);
      ASSERT_TRUE(report.ok()) << report.status().message();
      EXPECT_EQ(report.value().interval_method, "tree");
      EXPECT_EQ(report.value().interval_simultaneous, simultaneous);
      bool all = true;
      for (size_t j = 0; j < quantiles.size(); ++j) {
        const double low = report.value().interval_low[j];
        const double high = report.value().interval_high[j];
        if (j > 0) {
          ASSERT_GE(low, report.value().interval_low[j - 1]);
          ASSERT_GE(high, report.value().interval_high[j - 1]);
        }
        const double truth = TrueQuantile(values, quantiles[j]);
        const bool in = low <= truth && truth <= high;
        covered[j] += in ? 1 : 0;
        all = all && in;
        width += (high - low) / (runs * static_cast<double>(quantiles.size()));
      }
      all_covered += all ? 1 : 0;
    }
    std::printf(
        "%s: mean width %.2f; covered %d of %d together, each at "
        "least %d\n",
        simultaneous ? "simultaneous" : "each", width, all_covered, runs,
        *std::min_element(covered.begin(), covered.end()));
    for (size_t j = 0; j < quantiles.size(); ++j) {
      EXPECT_GE(covered[j], 0.9 * runs) << quantiles[j];
    }
    if (simultaneous) {
      EXPECT_GE(all_covered, 0.9 * runs);
    } else {
      EXPECT_LE(width, 3.0);
    }
  }
}

// The population q-quantile of Dataset(d)'s distribution, clamped to
// [0, 100]: inf{x : F(x) >= q}.
double PopulationQuantile(int d, double q) {
  switch ((d / 3) % 4) {
    case 0:
      return 20 + 40 * q;
    case 1:  // F = x / 200 below 40, jumps from 0.2 to 0.7 at 40
      return q <= 0.2 ? 200 * q : q <= 0.7 ? 40 : 40 + 200 * (q - 0.7);
    case 2:  // F = 1 - 5 / x from 5
      return std::min(5 / (1 - q), 100.0);
    default:  // F(k) = (k + 1) / 6 on 0..5
      return std::ceil(6 * q - 1e-12) - 1;
  }
}

TEST(IntervalsTest, PopulationIntervalsCoverThePopulationQuantile) {
  // 1,200 simulated datasets drawn afresh, at 90%: the interval must hold
  // the distribution's quantile, not only the sample's.
  SeededRandom data_rng(23);
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  const double confidence = 0.9;
  const int datasets = 1200;
  std::vector<int> covered(quantiles.size(), 0);
  std::vector<int> covered_sample(quantiles.size(), 0);
  std::vector<double> widths;
  std::vector<double> sample_widths;
  for (int d = 0; d < datasets; ++d) {
    const std::vector<double> values = Dataset(d, data_rng);
    ReleaseRequest request =
        CoverageRequest(d, quantiles, confidence, 5000 + d);
    request.interval = "population";
    std::vector<double> out;
    const StatusOr<ReleaseReport> report =
        testing::Release(values, request, &out);
    ASSERT_TRUE(report.ok()) << report.status().message();
    ASSERT_TRUE(report.value().interval_population);
    // The count's share of the intervals' quarter of the budget.
    EXPECT_NEAR(report.value().interval_count_spent.epsilon,
                request.epsilon.value() * 0.25 * kPopulationCountShare, 1e-12);
    // The same data, sample intervals: population ones are wider.
    request.interval = "sample";
    std::vector<double> sample_out;
    const StatusOr<ReleaseReport> sample =
        testing::Release(values, request, &sample_out);
    ASSERT_TRUE(sample.ok());
    std::vector<double> clamped = values;
    for (double& x : clamped) x = std::min(std::max(x, 0.0), 100.0);
    for (size_t j = 0; j < quantiles.size(); ++j) {
      const double low = report.value().interval_low[j];
      const double high = report.value().interval_high[j];
      ASSERT_LE(low, out[j]);
      ASSERT_GE(high, out[j]);
      const double truth = PopulationQuantile(d, quantiles[j]);
      if (low <= truth && truth <= high) ++covered[j];
      // Sample intervals are not made for this; counted for the record.
      if (sample.value().interval_low[j] <= truth &&
          truth <= sample.value().interval_high[j]) {
        ++covered_sample[j];
      }
      if (values.size() == 1000 && request.epsilon == 4.0) {
        widths.push_back(high - low);
        sample_widths.push_back(sample.value().interval_high[j] -
                                sample.value().interval_low[j]);
      }
    }
  }
  for (size_t j = 0; j < quantiles.size(); ++j) {
    EXPECT_GE(covered[j], confidence * datasets) << "q " << quantiles[j];
  }
  std::sort(widths.begin(), widths.end());
  std::sort(sample_widths.begin(), sample_widths.end());
  std::printf(
      "population, confidence 0.90: coverage %d %d %d of %d (sample "
      "intervals: %d %d %d); median width %.2f of 100 at n = 1000, "
      "epsilon = 4 (sample: %.2f)\n",
      covered[0], covered[1], covered[2], datasets, covered_sample[0],
      covered_sample[1], covered_sample[2], widths[widths.size() / 2],
      sample_widths[sample_widths.size() / 2]);
  EXPECT_LT(widths[widths.size() / 2], 30);
  EXPECT_GE(widths[widths.size() / 2], sample_widths[widths.size() / 2]);
}

TEST(IntervalsTest, PopulationIntervalsOfManyQuantilesComeFromTheTree) {
  // Nine deciles: the tree is narrower than 18 brackets, and its
  // thresholds move out by the same sampling offsets. 400 datasets of the
  // four shapes, at 90%: each decile's population value is held at least
  // at the nominal rate.
  SeededRandom data_rng(29);
  std::vector<double> quantiles;
  for (int i = 1; i <= 9; ++i) quantiles.push_back(i / 10.0);
  const double confidence = 0.9;
  const int datasets = 400;
  std::vector<int> covered(quantiles.size(), 0);
  for (int d = 0; d < datasets; ++d) {
    const std::vector<double> values = Dataset(d, data_rng);
    ReleaseRequest request =
        CoverageRequest(d, quantiles, confidence, 9000 + d);
    request.interval = "population";
    std::vector<double> out;
    const StatusOr<ReleaseReport> report =
        testing::Release(values, request, &out);
    ASSERT_TRUE(report.ok()) << report.status().message();
    ASSERT_EQ(report.value().interval_method, "tree");
    ASSERT_TRUE(report.value().interval_population);
    for (size_t j = 0; j < quantiles.size(); ++j) {
      const double low = report.value().interval_low[j];
      const double high = report.value().interval_high[j];
      ASSERT_LE(low, out[j]);
      ASSERT_GE(high, out[j]);
      if (j > 0) ASSERT_GE(low, report.value().interval_low[j - 1]);
      const double truth = PopulationQuantile(d, quantiles[j]);
      if (low <= truth && truth <= high) ++covered[j];
    }
  }
  for (size_t j = 0; j < quantiles.size(); ++j) {
    EXPECT_GE(covered[j], confidence * datasets) << "q " << quantiles[j];
  }
  std::printf("population deciles from the tree, 90%%: covered");
  for (int c : covered) std::printf(" %d", c);
  std::printf(" of %d\n", datasets);
  // Where sampling error dominates (n = 20,000, epsilon 8), intervals for
  // the sample alone miss the population's deciles more than 10% of the
  // time: the sampling offsets are what holds them.
  std::vector<int> held(quantiles.size(), 0);
  std::vector<int> held_by_sample(quantiles.size(), 0);
  const int large = 200;
  for (int d = 0; d < large; ++d) {
    std::vector<double> values(20000);
    for (double& x : values) x = 20 + 40 * UniformDouble(data_rng);
    ReleaseRequest request;
    request.lower = 0;
    request.upper = 100;
    request.quantiles = quantiles;
    request.epsilon = 8;
    request.confidence = confidence;
    request.seed = 7000 + d;
    for (const char* kind : {"population", "sample"}) {
      request.interval = kind;
      std::vector<double> out;
      const StatusOr<ReleaseReport> report =
          testing::Release(values, request, &out);
      ASSERT_TRUE(report.ok()) << report.status().message();
      ASSERT_EQ(report.value().interval_method, "tree");
      for (size_t j = 0; j < quantiles.size(); ++j) {
        const double truth = 20 + 40 * quantiles[j];
        if (report.value().interval_low[j] <= truth &&
            truth <= report.value().interval_high[j]) {
          ++(std::string(kind) == "population" ? held : held_by_sample)[j];
        }
      }
    }
  }
  int sample_short = 0;
  for (size_t j = 0; j < quantiles.size(); ++j) {
    EXPECT_GE(held[j], confidence * large) << "q " << quantiles[j];
    if (held_by_sample[j] < confidence * large) ++sample_short;
  }
  EXPECT_GT(sample_short, 0);
  std::printf("n = 20000, epsilon 8: population held");
  for (int c : held) std::printf(" %d", c);
  std::printf(" of %d; sample intervals", large);
  for (int c : held_by_sample) std::printf(" %d", c);
  std::printf("\n");
}

TEST(IntervalsTest, SamplingOffsetsBoundTheBinomialTails) {
  // Exact binomial tails: P(Bin(n, q) <= q n - s_lo) and P(Bin(n, q) >= q n
  // + s_hi) are each at most beta_half, and the offsets grow with n.
  for (double q : {0.05, 0.3, 0.5, 0.9}) {
    double previous_lo = 0;
    double previous_hi = 0;
    for (int n : {1, 5, 20, 100, 400, 2000}) {
      const double beta_half = 0.025;
      const double lo = SamplingOffsetBelow(q, n, beta_half);
      const double hi = SamplingOffsetAbove(q, n, beta_half);
      EXPECT_GE(lo, previous_lo);
      EXPECT_GE(hi, previous_hi);
      previous_lo = lo;
      previous_hi = hi;
      double below = 0;
      double above = 0;
      for (int k = 0; k <= n; ++k) {
        const double log_pmf = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) -
                               std::lgamma(n - k + 1.0) + k * std::log(q) +
                               (n - k) * std::log1p(-q);
        if (k <= q * n - lo) below += std::exp(log_pmf);
        if (k >= q * n + hi) above += std::exp(log_pmf);
      }
      // At the cap (q n below, (1 - q) n above) the bracket is the bound
      // itself and cannot miss: no tail to check.
      if (lo < q * n) EXPECT_LE(below, beta_half) << q << " " << n;
      if (hi < (1 - q) * n) EXPECT_LE(above, beta_half) << q << " " << n;
      // Not vacuous at n = 2000: within 1.6 times the normal approximation.
      if (n == 2000) {
        const double normal = 1.96 * std::sqrt(n * q * (1 - q));
        EXPECT_LT(lo, 1.6 * normal + 3) << q;
        EXPECT_LT(hi, 1.6 * normal + 3) << q;
      }
    }
  }
}

TEST(IntervalsTest, SpendTheirShareAndTheValuesTheRest) {
  std::vector<double> data(500);
  for (size_t i = 0; i < data.size(); ++i) data[i] = i % 100;
  ReleaseRequest request;
  request.lower = 0;
  request.upper = 100;
  request.quantiles = {0.5};
  request.epsilon = 2;
  request.confidence = 0.95;
  request.method = "aq";  // (the default would first look for a step)
  std::vector<double> out(3);
  std::vector<double> copy = data;
  StatusOr<ReleaseReport> report =
      ReleaseQuantiles(copy.data(), copy.size(), request, out.data());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.value().spent.epsilon, 2);
  EXPECT_DOUBLE_EQ(report.value().interval_spent.epsilon, 0.5);
  // One quantile: two brackets share 0.5 (narrower than a tree here); the
  // value gets 1.5.
  EXPECT_EQ(report.value().interval_method, "brackets");
  // (AQ's first look takes its share of the value's 1.5.)
  EXPECT_DOUBLE_EQ(report.value().mechanism_epsilon, 1.5 * (1 - kAqLookShare));
  EXPECT_DOUBLE_EQ(report.value().interval_epsilon, 0.5 / 2);
  // Three quantiles: one tree spends the same share; AQ's two levels share
  // 1.5.
  request.quantiles = {0.25, 0.5, 0.75};
  copy = data;
  report = ReleaseQuantiles(copy.data(), copy.size(), request, out.data());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.value().interval_method, "tree");
  EXPECT_DOUBLE_EQ(report.value().interval_spent.epsilon, 0.5);
  EXPECT_DOUBLE_EQ(report.value().mechanism_epsilon,
                   1.5 * (1 - kAqLookShare) / 2);
  // Its levels, each at the reported epsilon, compose to at most the share.
  EXPECT_GT(report.value().interval_parts, 0);
  EXPECT_LE(report.value().interval_epsilon * report.value().interval_parts,
            0.5);
  // zCDP: rho splits the same way.
  request.quantiles = {0.5};
  request.epsilon.reset();
  request.rho = 1;
  request.interval_share = 0.5;
  copy = data;
  report = ReleaseQuantiles(copy.data(), copy.size(), request, out.data());
  ASSERT_TRUE(report.ok());
  EXPECT_DOUBLE_EQ(report.value().interval_spent.rho, 0.5);
  EXPECT_NEAR(report.value().interval_epsilon, std::sqrt(8 * 0.5 / 2), 1e-12);
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
  request.interval_share.reset();
  request.interval = "population";
  EXPECT_EQ(
      ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
      StatusCode::kInvalidOption);
  request.confidence = 0.9;
  request.interval = "populace";
  EXPECT_EQ(
      ReleaseQuantiles(data.data(), 3, request, out.data()).status().code(),
      StatusCode::kInvalidOption);
  // Several records per person are not independent draws.
  request.interval = "population";
  const std::vector<uint32_t> users = {0, 0, 1};
  request.users = users.data();
  request.max_contributions = 2;
  const StatusOr<ReleaseReport> per_person =
      ReleaseQuantiles(data.data(), 3, request, out.data());
  EXPECT_EQ(per_person.status().code(), StatusCode::kInvalidOption);
  EXPECT_NE(per_person.status().message().find("independent"),
            std::string::npos);
  request.max_contributions = 1;
  EXPECT_TRUE(ReleaseQuantiles(data.data(), 3, request, out.data()).ok());
}

// log P(lower bracket = point) and log P(upper bracket = point): each
// bracket is the exponential mechanism for q on the records `cells` with
// `below` phantoms at point 0 (lower) or `above` at `steps` (upper).
std::pair<double, double> BracketLogProbabilities(
    const std::vector<double>& cells, size_t below, size_t above, int64_t steps,
    double q, double epsilon_each, int64_t point) {
  std::vector<double> down(below, 0.0);
  down.insert(down.end(), cells.begin(), cells.end());
  std::vector<double> up = cells;
  up.insert(up.end(), above, static_cast<double>(steps));
  const RunsStore down_runs = testing::RunsOf(down);
  const RunsStore up_runs = testing::RunsOf(up);
  const QuantileProblem lower =
      QuantileProblem::Whole(down_runs.view(), steps, q);
  const QuantileProblem upper =
      QuantileProblem::Whole(up_runs.view(), steps, q);
  return {PointLogProbability(lower, epsilon_each, point),
          PointLogProbability(upper, epsilon_each, point)};
}

TEST(IntervalsTest, TreeIntervalsArePrivateExactly) {
  // The tree intervals are post-processing of the noisy tree counts, so
  // the counts' output distribution is what must be private: for every
  // pair of neighbouring datasets (one record added) on a small grid, and
  // every noisy count vector in a window around them, the exact probability
  // ratio under the noise the plan uses (AggTreeNoise for the share) is at
  // most e^epsilon, and some pair reaches it (so a noise scale 10% smaller
  // fails). Binary trees of three and four levels.
  const OutputGrid grid(0, 7, 7);
  for (const int height : {3, 4}) {  // 8 points need 2^3 leaves
    const AggTreeShape shape{2, height, false};
    for (const double epsilon : {0.5, 2.0}) {
      StatusOr<CountNoise> noise =
          AggTreeNoise(shape, PrivacyBudget::Pure(epsilon));
      ASSERT_TRUE(noise.ok());
      double worst = 0;
      for (const std::vector<double>& base :
           std::vector<std::vector<double>>{{}, {1, 1, 5}, {0, 3, 6, 7}}) {
        for (double added = 0; added <= 7; added += 1) {
          std::vector<double> larger = base;
          larger.push_back(added);
          std::sort(larger.begin(), larger.end());
          const RunsStore small_runs = testing::RunsOf(base);
          const RunsStore large_runs = testing::RunsOf(larger);
          const auto a =
              IntervalTreeCounts(small_runs.view(), grid, grid, shape);
          const auto b =
              IntervalTreeCounts(large_runs.view(), grid, grid, shape);
          // Per node, the log ratio is largest at the worst noisy count;
          // the nodes' noises are independent, so the worst output adds
          // the worst node of each term (a window of +-3 around each).
          double log_ratio = 0;
          for (size_t level = 0; level < a.size(); ++level) {
            for (size_t i = 0; i < a[level].size(); ++i) {
              double node = 0;
              for (int64_t out = a[level][i] - 3; out <= a[level][i] + 3;
                   ++out) {
                node = std::max(
                    node,
                    std::fabs(std::log(noise.value().Pmf(out - a[level][i])) -
                              std::log(noise.value().Pmf(out - b[level][i]))));
              }
              log_ratio += node;
            }
          }
          ASSERT_LE(log_ratio, epsilon * (1 + 1e-9));
          worst = std::max(worst, log_ratio / epsilon);
        }
      }
      EXPECT_GT(worst, 0.99) << height << " " << epsilon;
    }
  }
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
      return BracketLogProbabilities(cells, below, above, steps, q,
                                     epsilon_each, point);
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

// Exact privacy of a population interval: the output is (N, low, high), N
// the count's upper bound and the brackets' phantoms a function of N. Its
// probability is P(noise = N - tail - n) P(low | N) P(high | N); adding a
// record moves its log by at most epsilon_count + 2 epsilon_each.
TEST(IntervalsTest, PopulationIntervalsArePrivateExactly) {
  const int64_t steps = 1 << 20;
  const double q = 0.5;
  const double epsilon_count = 1;
  const double epsilon_each = 8;
  const double beta = 0.5;
  StatusOr<CountNoise> noise =
      CountNoiseFor(PrivacyBudget::Pure(epsilon_count));
  ASSERT_TRUE(noise.ok());
  const double t = IntervalRankOffset(epsilon_each, q, steps,
                                      1 - kPopulationMechanismBeta * beta);
  const double beta_half = kPopulationSamplingBeta * beta / 2;
  const std::vector<double> points = {0, 5, 1000, 500000, double(steps)};
  const std::vector<int64_t> outputs = testing::PiecePoints(points, steps);
  // log P(low = i), log P(high = j) given N, for records `cells`.
  auto bracket_logs = [&](const std::vector<double>& cells, double bound,
                          int64_t point) {
    const size_t below =
        BracketPhantoms(t + SamplingOffsetBelow(q, bound, beta_half), 1 - q);
    const size_t above =
        BracketPhantoms(t + SamplingOffsetAbove(q, bound, beta_half), q);
    return BracketLogProbabilities(cells, below, above, steps, q, epsilon_each,
                                   point);
  };
  std::vector<double> x;
  for (double c : points) x.insert(x.end(), 4, c);
  const double n = static_cast<double>(x.size());
  // N = n + Z + tail: the tail is public, so shifting N by it changes
  // nothing; take N = n + Z + 1 for every Z in a window.
  double most = 0;
  double count_most = 0;
  for (double added : points) {
    std::vector<double> neighbour = x;
    neighbour.push_back(added);
    std::sort(neighbour.begin(), neighbour.end());
    for (int64_t z = -12; z <= 12; ++z) {
      const double bound = n + static_cast<double>(z) + 1;
      const double count_log =
          std::log(noise.value().Pmf(z)) - std::log(noise.value().Pmf(z - 1));
      double up_low = -1e300, down_low = -1e300;
      double up_high = -1e300, down_high = -1e300;
      for (int64_t j : outputs) {
        const auto a = bracket_logs(x, bound, j);
        const auto b = bracket_logs(neighbour, bound, j);
        up_low = std::max(up_low, a.first - b.first);
        down_low = std::max(down_low, b.first - a.first);
        up_high = std::max(up_high, a.second - b.second);
        down_high = std::max(down_high, b.second - a.second);
      }
      // The worst output with this N, in each direction.
      const double total = epsilon_count + 2 * epsilon_each;
      EXPECT_LE(count_log + up_low + up_high, total + 1e-9);
      EXPECT_LE(-count_log + down_low + down_high, total + 1e-9);
      // Tight in each part: the count's ratio is its epsilon, and some
      // bracket output nearly reaches epsilon_each.
      count_most = std::max(count_most, std::fabs(count_log) / epsilon_count);
      most = std::max(most, std::max({up_low, down_low, up_high, down_high}) /
                                epsilon_each);
    }
  }
  EXPECT_GT(count_most, 0.99);
  EXPECT_GT(most, 0.9);
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

// The tree the plan draws is noised for the level budget the release
// reports (which the release test adds up against the decimal written), and
// the levels compose to at most the intervals' share.
TEST(IntervalsTest, TheTreesNoiseIsTheReportedLevelBudgets) {
  ReleaseRequest request;
  request.method = "aq";
  request.lower = 0;
  request.upper = 100;
  request.epsilon = 0.7;
  request.confidence = 0.9;
  request.interval_share = 0.3;
  for (int i = 1; i <= 9; ++i) request.quantiles.push_back(i / 10.0);
  StatusOr<ReleasePlan> plan = PlanRelease(request, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(plan.value().intervals.has_value());
  const IntervalPlan& intervals = *plan.value().intervals;
  ASSERT_TRUE(intervals.tree);
  StatusOr<CountNoise> expected = CountNoiseFor(intervals.tree_level);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(intervals.tree_noise.parameter.numerator,
            expected.value().parameter.numerator);
  EXPECT_EQ(intervals.tree_noise.parameter.denominator,
            expected.value().parameter.denominator);
  EXPECT_LE(intervals.tree_level.epsilon * intervals.tree_shape.height,
            0.7 * 0.3);
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

// The tree's offsets keep only the coefficient triples no other one bounds,
// and are cached per thread: every grid point's own Chernoff bound (its
// triple, minimised over lambda by a scan here) is still at most the
// offset, and a second call gives the same offsets.
TEST(IntervalsTest, TreeOffsetsBoundEveryPointsOwnChernoffBound) {
  const OutputGrid grid(0, 100, 200);
  const AggTreeShape shape = IntervalTreeShape(grid).value();
  const CountNoise noise =
      AggTreeNoise(shape, PrivacyBudget::Pure(0.3)).value();
  const std::vector<double> quantiles = {0.1, 0.5, 0.93};
  const double beta_half = 0.025;
  const std::vector<double> offsets =
      TreeIntervalOffsets(shape, grid, noise, quantiles, beta_half);
  EXPECT_EQ(TreeIntervalOffsets(shape, grid, noise, quantiles, beta_half),
            offsets);
  // Point j's noisy prefix: leaf j and, at each level, the siblings before
  // its ancestor (intervals.md); the total is the last point's.
  auto nodes = [&](int64_t j) {
    std::set<std::pair<int, int64_t>> out = {{0, j}};
    int64_t index = j;
    for (int level = 0; level < shape.height; ++level) {
      for (int64_t i = index - index % shape.branching; i < index; ++i) {
        out.insert({level, i});
      }
      index /= shape.branching;
    }
    return out;
  };
  const auto total = nodes(grid.steps());
  const double scale = noise.parameter.Value();
  const double p = std::exp(-1 / scale);
  auto log_mgf = [&](double u) {
    return 2 * std::log1p(-p) - std::log1p(-p * std::exp(u)) -
           std::log1p(-p * std::exp(-u));
  };
  for (size_t k = 0; k < quantiles.size(); ++k) {
    const double q = quantiles[k];
    double worst = 0;
    for (int64_t j = 0; j <= grid.steps(); ++j) {
      const auto mine = nodes(j);
      int only = 0;
      int both = 0;
      for (const auto& node : mine) (total.count(node) > 0 ? both : only)++;
      const int total_only = static_cast<int>(total.size()) - both;
      double best = std::numeric_limits<double>::infinity();
      for (int s = 1; s < 2000; ++s) {
        const double lambda = s / 2000.0 / scale;
        best = std::min(
            best, (only * log_mgf(lambda) + both * log_mgf(lambda * (1 - q)) +
                   total_only * log_mgf(lambda * q) - std::log(beta_half)) /
                      lambda);
      }
      worst = std::max(worst, best);
    }
    // The offset is a valid bound for the worst point (within the scan's
    // resolution), and not far above it.
    EXPECT_GE(offsets[k], worst * (1 - 1e-3)) << q;
    EXPECT_LE(offsets[k], worst * 1.05 + 1) << q;
  }
}

}  // namespace
}  // namespace dpq
