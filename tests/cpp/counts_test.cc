// The counts path: releasing from bucket counts is releasing the bucketed
// records, bit for bit, for every method.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/agg_tree.h"
#include "core/prepare.h"
#include "core/random.h"
#include "core/release.h"
#include "core/tree_cdf.h"

namespace dpq {
namespace {

// Records away from bucket edges (so any engine's floor agrees), with an
// atom, values clamped at both ends, and a gap.
std::vector<double> Records(double lower, double width, size_t buckets,
                            uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<double> values;
  for (int i = 0; i < 400; ++i) {
    const double u = UniformDouble(rng);
    const auto bucket = static_cast<double>(
        i % 5 == 0 ? buckets / 3 : UniformInteger(rng, buckets / 2));
    values.push_back(lower + (bucket + 0.1 + 0.8 * u) * width);
  }
  values.push_back(lower - 50);  // clamped up
  values.push_back(lower + static_cast<double>(buckets) * width + 7);  // down
  return values;
}

// counts[i] by the formula a database uses: floor((x - lower) / w), clamped.
std::vector<double> Counts(const std::vector<double>& values, double lower,
                           double width, size_t buckets) {
  std::vector<double> counts(buckets, 0);
  for (double x : values) {
    const double b = std::floor((x - lower) / width);
    counts[static_cast<size_t>(
        std::min(std::max(b, 0.0), static_cast<double>(buckets - 1)))] += 1;
  }
  return counts;
}

struct Case {
  std::string method;
  std::vector<std::pair<std::string, double>> options;
  std::vector<std::pair<std::string, std::string>> text_options;
};

TEST(CountsTest, EveryMethodReleasesTheSameBitForBit) {
  const std::vector<Case> cases = {
      {"aq", {}, {}},
      {"jointexp", {}, {}},
      {"inverse-sensitivity", {}, {}},
      {"hs-jointexp", {}, {}},
      {"hs-jointexp", {}, {{"jitter", "gaussian"}}},
      {"appindexp", {}, {}},
      {"appindexp", {{"delta", 1e-6}}, {}},
      {"aggtree", {}, {}},
      {"tree-cdf", {}, {}},
  };
  ASSERT_EQ(ReleaseMethods().size(), 7u);  // a new method joins this test
  for (const auto& shape : std::vector<std::pair<double, size_t>>{
           {1.0, 100}, {2.5, 37}, {0.001, 5000}}) {
    const double lower = -10;
    const double width = shape.first;
    const size_t buckets = shape.second;
    const double upper = lower + width * static_cast<double>(buckets);
    const std::vector<double> values = Records(lower, width, buckets, 7);
    const std::vector<double> counts = Counts(values, lower, width, buckets);
    for (const Case& c : cases) {
      for (int variant = 0; variant < 3; ++variant) {
        ReleaseRequest request;
        request.lower = lower;
        request.upper = upper;
        request.quantiles = {0.9, 0.1, 0.5, 0.5};
        request.method = c.method;
        request.options = c.options;
        request.text_options = c.text_options;
        request.seed = 42 + variant;
        if (variant == 1) {
          request.rho = 0.5;
        } else {
          request.epsilon = 2;
        }
        if (c.method == "appindexp" && !c.options.empty()) {
          request.rho.reset();
          request.epsilon = 2;
        }
        if (variant == 2) {
          request.confidence = 0.9;
          if (c.method != "inverse-sensitivity")
            request.interval = "population";
        }
        std::vector<double> copy = values;
        std::vector<double> raw_out(4);
        ReleaseRequest raw = request;
        raw.buckets = static_cast<double>(buckets);
        const StatusOr<ReleaseReport> from_raw =
            ReleaseQuantiles(copy.data(), copy.size(), raw, raw_out.data());
        std::vector<double> counts_out(4);
        const StatusOr<ReleaseReport> from_counts = ReleaseFromCounts(
            counts.data(), counts.size(), request, counts_out.data());
        const std::string what = c.method + " variant " +
                                 std::to_string(variant) + " buckets " +
                                 std::to_string(buckets);
        ASSERT_TRUE(from_raw.ok()) << what << from_raw.status().message();
        ASSERT_TRUE(from_counts.ok()) << what << from_counts.status().message();
        for (size_t i = 0; i < 4; ++i) {
          // Bit for bit: equal doubles, not merely close.
          EXPECT_EQ(raw_out[i], counts_out[i]) << what << " quantile " << i;
        }
        EXPECT_EQ(from_raw.value().interval_low,
                  from_counts.value().interval_low)
            << what;
        EXPECT_EQ(from_raw.value().interval_high,
                  from_counts.value().interval_high)
            << what;
        // Grid methods release bucket edges, and so does AggTree, whose
        // leaves are the buckets.
        if (c.method != "tree-cdf") {
          for (double v : counts_out) {
            const double k = std::round((v - lower) / width);
            EXPECT_NEAR(v, lower + k * width, 1e-9 * width) << what;
          }
        }
      }
    }
  }
}

// The default method (AQ) at epsilon = 1 over [lower, upper].
ReleaseRequest CountsRequest(double lower, double upper,
                             std::vector<double> quantiles) {
  ReleaseRequest request;
  request.lower = lower;
  request.upper = upper;
  request.quantiles = std::move(quantiles);
  request.epsilon = 1;
  return request;
}

TEST(CountsTest, IntegerCountsReleaseAnAtomAsItself) {
  // Hours per week as a database would group them: 0..99 in buckets of 1,
  // half the rows at 40.
  std::vector<double> counts(100, 3);
  counts[40] = 300;
  const ReleaseRequest request = CountsRequest(0, 100, {0.5});
  int exact = 0;
  for (int trial = 0; trial < 20; ++trial) {
    double out = 0;
    ASSERT_TRUE(
        ReleaseFromCounts(counts.data(), counts.size(), request, &out).ok());
    if (out == 40) ++exact;
    EXPECT_EQ(out, std::floor(out));
  }
  EXPECT_GE(exact, 19);
}

TEST(CountsTest, AggTreeAndTheDefaultReleaseBucketEdgesFromCounts) {
  // Hours per week in buckets of 1, half the rows at 40: AggTree's leaves
  // are the buckets, so it releases edges and the atom as itself.
  std::vector<double> counts(100, 3);
  counts[40] = 300;
  ReleaseRequest request = CountsRequest(0, 100, {0.5});
  request.method = "aggtree";
  int exact = 0;
  for (int trial = 0; trial < 100; ++trial) {
    double out = 0;
    const StatusOr<ReleaseReport> report =
        ReleaseFromCounts(counts.data(), counts.size(), request, &out);
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report.value().resolution, 1);
    EXPECT_EQ(out, std::floor(out));
    if (out == 40) ++exact;
  }
  EXPECT_GE(exact, 95);
  // The default picks AggTree on the buckets' grid for many quantiles
  // (m >= 4 on at most kAutoSmallGrid points, under epsilon), and AQ for
  // few, as on rows with the same buckets: same method, same values.
  std::vector<double> values;
  for (size_t i = 0; i < counts.size(); ++i) {
    values.insert(values.end(), static_cast<size_t>(counts[i]),
                  static_cast<double>(i) + 0.5);
  }
  for (const size_t m : {size_t{1}, size_t{3}, size_t{4}, size_t{20}}) {
    ReleaseRequest chosen = CountsRequest(0, 100, {});
    for (size_t i = 1; i <= m; ++i) {
      chosen.quantiles.push_back(static_cast<double>(i) /
                                 static_cast<double>(m + 1));
    }
    chosen.seed = 11;
    std::vector<double> from_counts(m);
    const StatusOr<ReleaseReport> report = ReleaseFromCounts(
        counts.data(), counts.size(), chosen, from_counts.data());
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report.value().method, m >= 4 ? "aggtree" : "aq") << m;
    ReleaseRequest raw = chosen;
    raw.buckets = 100;
    std::vector<double> copy = values;
    std::vector<double> from_rows(m);
    const StatusOr<ReleaseReport> rows =
        ReleaseQuantiles(copy.data(), copy.size(), raw, from_rows.data());
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    EXPECT_EQ(rows.value().method, report.value().method) << m;
    EXPECT_EQ(from_rows, from_counts) << m;
    for (double v : from_counts) EXPECT_EQ(v, std::floor(v)) << m;
  }
  // A given shape with fewer leaves than the buckets' points is a typed
  // error that says why, and the next release works.
  ReleaseRequest small = request;
  small.options = {{"branching", 2}, {"height", 3}};
  double none = 0;
  const StatusOr<ReleaseReport> refused =
      ReleaseFromCounts(counts.data(), counts.size(), small, &none);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidOption);
  EXPECT_NE(refused.status().message().find("bucket grid"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(
      ReleaseFromCounts(counts.data(), counts.size(), request, &none).ok());
  // Past 2^21 - 1 buckets AggTree keeps its equal leaves (interpolated).
  const auto fine = static_cast<size_t>(kMaxTreeLeaves);
  std::vector<double> many(fine, 0);
  many[fine / 2] = 5000;
  request.upper = static_cast<double>(fine);
  double out = 0;
  const StatusOr<ReleaseReport> equal =
      ReleaseFromCounts(many.data(), many.size(), request, &out);
  ASSERT_TRUE(equal.ok()) << equal.status().message();
  EXPECT_EQ(equal.value().resolution, 0);
  EXPECT_NEAR(out, static_cast<double>(fine / 2), 64);
}

TEST(CountsTest, EveryMethodReleasesFromCountsOfAnySize) {
  // A warehouse's GROUP BY: 10^15 rows in 1,000 buckets of [0, 1000), far
  // beyond what records in memory could hold. Every method reads the
  // non-empty buckets as runs, so nothing is expanded; the joint methods
  // read a uniform subset of their public record cap.
  std::vector<double> counts(1000, 0);
  for (size_t i = 0; i < counts.size(); ++i) {
    counts[i] = i < 500 ? 1.6e12 : 4e11;  // 10^15 rows, 4/5 below 500
  }
  for (const char* method :
       {"auto", "aq", "appindexp", "aggtree", "tree-cdf", "jointexp",
        "hs-jointexp", "inverse-sensitivity"}) {
    ReleaseRequest request = CountsRequest(0, 1000, {0.25, 0.5, 0.9});
    request.method = method;
    request.seed = 3;
    const bool joint = std::string(method).find("joint") != std::string::npos ||
                       std::string(method) == "inverse-sensitivity";
    // (A lower cap keeps the sanitizer run short; the default is millions.)
    if (joint) request.options = {{"maxRecords", 100000}};
    std::vector<double> out(3);
    const StatusOr<ReleaseReport> report =
        ReleaseFromCounts(counts.data(), counts.size(), request, out.data());
    ASSERT_TRUE(report.ok()) << method << report.status().message();
    // The counts are uniform inside [0, 500) and [500, 1000), and at these
    // counts the noise is negligible: the true quantiles to a bucket. A
    // subset of 10^5 adds its sampling error, sqrt(q (1 - q) / 10^5) over
    // the density of a bucket: 0.9, 1.0 and 2.4 buckets; 5 of them.
    EXPECT_NEAR(out[0], 0.25 / 0.8 * 500, joint ? 4.5 : 1) << method;
    EXPECT_NEAR(out[1], 0.5 / 0.8 * 500, joint ? 5 : 1) << method;
    EXPECT_NEAR(out[2], 500 + (0.9 - 0.8) / 0.2 * 500, joint ? 12 : 1)
        << method;
  }
  // Past 2^53 - 1 rows in all: TOO_LARGE, for every method.
  ReleaseRequest tree = CountsRequest(0, 1000, {0.5});
  double one = 0;
  for (const char* method : {"aq", "tree-cdf"}) {
    tree.method = method;
    const std::vector<double> past = {9007199254740991.0, 1};  // 2^53
    EXPECT_EQ(ReleaseFromCounts(past.data(), 2, tree, &one).status().code(),
              StatusCode::kTooLarge);
    const std::vector<double> at = {9007199254740990.0, 1};  // 2^53 - 1
    EXPECT_TRUE(ReleaseFromCounts(at.data(), 2, tree, &one).ok());
  }
  // The weighted edges give the trees the same cell counts as the records.
  const std::vector<double> values = {0.5, 0.5, 3.5, 7.2, 7.9, 7.9, 7.9};
  const std::vector<double> edges = {0, 3, 7};
  const std::vector<double> weights = {2, 1, 4};
  AggTreeShape shape;
  shape.branching = 2;
  shape.height = 3;
  EXPECT_EQ(AggTreeCounts(values.data(), values.size(), 0, 8, shape),
            AggTreeCounts(edges.data(), 3, 0, 8, shape, weights.data()));
  TreeCdfShape cdf;
  cdf.cells = 8;
  EXPECT_EQ(TreeCdfCounts(values.data(), values.size(), 0, 8, cdf),
            TreeCdfCounts(edges.data(), 3, 0, 8, cdf, weights.data()));
}

TEST(CountsTest, EveryMethodReleasesFromTheLargestTotals) {
  // Work is bounded by public parameters: at 10^14, 9 10^15 and 2^53 - 1
  // rows a release costs what it costs at 10^6 (the joint methods: what
  // their record cap costs). Until 0.5, AQ's split draws listed bands of
  // ranks that held no sub-point (more records at a point than its 2^32
  // sub-points) and never accepted a round: ten buckets of 3 10^12 rows
  // ran for minutes. Ten equal buckets (thirds), and an age-like histogram
  // (quartiles and p99): at these counts the noise is below a bucket.
  const std::vector<double> totals = {1e14, 9e15, 9007199254740991.0};
  for (const double total : totals) {
    std::vector<double> flat(10, std::floor(total / 10));
    flat[9] = total - 9 * flat[0];
    std::vector<double> ages(100, 0);
    double weight_sum = 0;
    for (int i = 17; i <= 90; ++i) {
      weight_sum += std::exp(-0.5 * std::pow((i - 38) / 13.0, 2));
    }
    double given = 0;
    for (int i = 17; i <= 90; ++i) {
      ages[i] = std::floor(std::exp(-0.5 * std::pow((i - 38) / 13.0, 2)) /
                           weight_sum * total);
      given += ages[i];
    }
    ages[38] += total - given;
    struct Shape {
      const std::vector<double>* counts;
      double upper;
      std::vector<double> quantiles;
    };
    const Shape shapes[] = {{&flat, 10, {1.0 / 3, 2.0 / 3}},
                            {&ages, 100, {0.25, 0.5, 0.75, 0.99}}};
    for (const Shape& shape : shapes) {
      for (const std::string& method : ReleaseMethods()) {
        ReleaseRequest request = CountsRequest(0, shape.upper, shape.quantiles);
        request.method = method;
        request.seed = 11;
        // (The joint methods' subset of their cap is what they read at any
        // total; a smaller cap keeps the sanitizer run short.)
        const bool joint = method.find("joint") != std::string::npos ||
                           method == "inverse-sensitivity";
        if (joint) request.options = {{"maxRecords", 65536}};
        std::vector<double> out(shape.quantiles.size());
        const StatusOr<ReleaseReport> report = ReleaseFromCounts(
            shape.counts->data(), shape.counts->size(), request, out.data());
        ASSERT_TRUE(report.ok()) << method << ": " << report.status().message();
        for (size_t j = 0; j < out.size(); ++j) {
          // The true quantile's bucket, from the cumulative counts.
          double below = 0;
          size_t bucket = 0;
          while (below + (*shape.counts)[bucket] <=
                 shape.quantiles[j] * total) {
            below += (*shape.counts)[bucket++];
          }
          const double width =
              shape.upper / static_cast<double>(shape.counts->size());
          // (The joint methods' subset of 65,536 moves a p99 on the thin
          // tail by a few buckets.)
          EXPECT_NEAR(out[j], (static_cast<double>(bucket) + 0.5) * width,
                      (joint ? 8 : 1.5) * width)
              << method << " at " << total
              << " rows, q = " << shape.quantiles[j];
        }
      }
    }
  }
}

TEST(CountsTest, BadCountsAndOptionsAreTypedErrors) {
  const ReleaseRequest request = CountsRequest(0, 10, {0.5});
  double out = 0;
  // Also just below 2^52 (the largest non-whole doubles) and just past
  // 2^53 (whole, but no longer exact in a double's sum).
  for (double bad : {-1.0, 1.5, std::nan(""), HUGE_VAL, 1e300,
                     4503599627370495.5, 9007199254740994.0}) {
    const std::vector<double> counts = {1, bad, 2};
    const StatusOr<ReleaseReport> report =
        ReleaseFromCounts(counts.data(), counts.size(), request, &out);
    EXPECT_EQ(report.status().code(), StatusCode::kInvalidCounts);
    EXPECT_NE(report.status().message().find("counts[1]"), std::string::npos);
  }
  const std::vector<double> counts = {1, 2, 3};
  // Whose rows: unknown.
  const std::vector<uint32_t> users = {0, 1, 2};
  ReleaseRequest per_person = request;
  per_person.users = users.data();
  per_person.max_contributions = 1;
  EXPECT_EQ(
      ReleaseFromCounts(counts.data(), 3, per_person, &out).status().code(),
      StatusCode::kInvalidOption);
  // The buckets are the grid: no step, no other number of buckets.
  ReleaseRequest step = request;
  step.options = {{"step", 1.0}};
  EXPECT_EQ(ReleaseFromCounts(counts.data(), 3, step, &out).status().code(),
            StatusCode::kInvalidOption);
  ReleaseRequest other = request;
  other.buckets = 4;
  EXPECT_EQ(ReleaseFromCounts(counts.data(), 3, other, &out).status().code(),
            StatusCode::kInvalidOption);
  EXPECT_EQ(ReleaseFromCounts(counts.data(), 0, request, &out).status().code(),
            StatusCode::kInvalidOption);
  // Too many buckets for the bounds' doubles.
  ReleaseRequest tiny = request;
  tiny.lower = 1;
  tiny.upper = 1 + 1e-12;
  std::vector<double> many(1 << 20, 1);
  EXPECT_EQ(
      ReleaseFromCounts(many.data(), many.size(), tiny, &out).status().code(),
      StatusCode::kInvalidOption);
  // Every method reads the counts as runs: 4 10^9 rows release as easily
  // as 4; past 2^53 - 1 in all, TOO_LARGE (an input check, the owner's).
  const std::vector<double> huge = {4e9, 1};
  EXPECT_TRUE(ReleaseFromCounts(huge.data(), 2, request, &out).ok());
  const std::vector<double> past = {9007199254740990.0, 2};
  EXPECT_EQ(ReleaseFromCounts(past.data(), 2, request, &out).status().code(),
            StatusCode::kTooLarge);
  // All zero: a release from no records, like the raw path's.
  const std::vector<double> zeros = {0, 0, 0};
  EXPECT_TRUE(ReleaseFromCounts(zeros.data(), 3, request, &out).ok());
  // Raw path: buckets with step, or not whole.
  std::vector<double> data = {1, 2, 3};
  ReleaseRequest raw = step;
  raw.buckets = 3;
  EXPECT_EQ(ReleaseQuantiles(data.data(), 3, raw, &out).status().code(),
            StatusCode::kInvalidOption);
  raw = request;
  raw.buckets = 2.5;
  EXPECT_EQ(ReleaseQuantiles(data.data(), 3, raw, &out).status().code(),
            StatusCode::kInvalidOption);
}

}  // namespace
}  // namespace dpq
