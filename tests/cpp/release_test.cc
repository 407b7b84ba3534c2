#include "core/release.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/aq.h"
#include "core/decimal.h"
#include "core/prepare.h"
#include "core/random.h"
#include "core/step_look.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

ReleaseRequest BasicRequest() {
  ReleaseRequest request;
  request.lower = 0;
  request.upper = 100;
  request.quantiles = {0.25, 0.5, 0.75};
  request.epsilon = 1.0;
  return request;
}

std::vector<double> Data(size_t n, uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<double> data;
  for (size_t i = 0; i < n; ++i) data.push_back(100 * UniformDouble(rng));
  return data;
}

using testing::Release;

TEST(ReleaseTest, ReleasesOrderedValuesInsideTheBounds) {
  ReleaseRequest request = BasicRequest();
  std::vector<double> out;
  StatusOr<ReleaseReport> report = Release(Data(1000, 1), request, &out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  // The default first looks for a step (continuous data: none), then runs
  // AQ on the rest.
  EXPECT_EQ(report.value().method, "aq");
  EXPECT_EQ(report.value().levels, 2);
  EXPECT_DOUBLE_EQ(report.value().step_look_spent.epsilon, kStepLookShare);
  EXPECT_TRUE(std::isnan(report.value().step_look_step));
  // Two levels share what the first look leaves of that rest.
  const double rest = 1 - kStepLookShare;
  EXPECT_DOUBLE_EQ(report.value().mechanism_epsilon,
                   rest * (1 - kAqLookShare) / 2);
  EXPECT_DOUBLE_EQ(report.value().look_spent.epsilon, rest * kAqLookShare);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  for (double v : out) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 100);
  }
}

TEST(ReleaseTest, ReturnsValuesInTheCallersOrderAndRepeatsAgree) {
  ReleaseRequest request = BasicRequest();
  request.quantiles = {0.9, 0.1, 0.5, 0.1};
  request.epsilon = 1e4;
  request.seed = 7;
  std::vector<double> out;
  ASSERT_TRUE(Release(Data(5000, 2), request, &out).ok());
  EXPECT_LT(out[1], out[2]);
  EXPECT_LT(out[2], out[0]);
  EXPECT_EQ(out[1], out[3]);
  EXPECT_NEAR(out[0], 90, 2);
  EXPECT_NEAR(out[1], 10, 2);
}

TEST(ReleaseTest, SeedReproducesAndZcdpWorks) {
  ReleaseRequest request = BasicRequest();
  request.seed = 99;
  std::vector<double> a, b, c;
  ASSERT_TRUE(Release(Data(500, 3), request, &a).ok());
  ASSERT_TRUE(Release(Data(500, 3), request, &b).ok());
  EXPECT_EQ(a, b);
  request.epsilon.reset();
  request.rho = 0.5;
  StatusOr<ReleaseReport> report = Release(Data(500, 3), request, &c);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.value().spent.kind, PrivacyBudget::Kind::kZcdp);
  const double rest = 0.5 * (1 - kStepLookShare);
  EXPECT_DOUBLE_EQ(report.value().step_look_spent.rho, 0.5 * kStepLookShare);
  EXPECT_DOUBLE_EQ(report.value().mechanism_epsilon,
                   std::sqrt(8 * rest * (1 - kAqLookShare) / 2));
  EXPECT_DOUBLE_EQ(report.value().look_spent.rho, rest * kAqLookShare);
}

TEST(ReleaseTest, ASeededReleaseSaysItIsNotPrivate) {
  ReleaseRequest request = BasicRequest();
  std::vector<double> out;
  StatusOr<ReleaseReport> report = Release(Data(100, 3), request, &out);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report.value().seeded);
  request.seed = 9;
  report = Release(Data(100, 3), request, &out);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report.value().seeded);
}

TEST(ReleaseTest, BoundsNearTheLargestDoubleKeepAFineGrid) {
  // [0, MAX] once gave a one-step grid: every release was a bound.
  const double max = std::numeric_limits<double>::max();
  for (auto [lower, upper] : std::vector<std::pair<double, double>>{
           {0, max}, {-max / 2, max / 2}, {1e300, max}}) {
    ReleaseRequest request = BasicRequest();
    request.lower = lower;
    request.upper = upper;
    request.quantiles = {0.5};
    request.epsilon = 1e4;
    const double middle = lower + (upper - lower) / 3;
    std::vector<double> data(101, middle);
    for (int i = 0; i < 50; ++i) data[i] = lower + (upper - lower) / 4;
    // The atom-aware mechanisms land on the atom's grid point, within the
    // default grid's resolution of 2^-20 of the range.
    for (const char* method : {"aq", "appindexp"}) {
      request.method = method;
      std::vector<double> out;
      ASSERT_TRUE(Release(data, request, &out).ok()) << method;
      EXPECT_NEAR(out[0], middle, (upper - lower) / 1048576) << method;
    }
    // JointExp scores gaps: somewhere between the two groups, not a bound.
    request.method = "jointexp";
    std::vector<double> out;
    ASSERT_TRUE(Release(data, request, &out).ok());
    EXPECT_GE(out[0], lower + (upper - lower) / 4);
    EXPECT_LE(out[0], middle * (1 + 1e-9));
    EXPECT_GE(OutputGrid::ForBounds(lower, upper).steps(), int64_t{1} << 40);
  }
}

TEST(ReleaseTest, HugeEpsilonGivesTheTrueMedianForEveryMethod) {
  // Once JointExp, HSJointExp and inverse sensitivity returned about 0 here
  // for epsilon >= 10^20.
  std::vector<double> data;
  for (int i = 0; i <= 100; ++i) data.push_back(i);
  for (double epsilon : {1e3, 1e20, 1e100, 1e300}) {
    for (const std::string& method : ReleaseMethods()) {
      ReleaseRequest request = BasicRequest();
      request.method = method;
      request.quantiles = {0.5};
      request.epsilon = epsilon;
      std::vector<double> out;
      ASSERT_TRUE(Release(data, request, &out).ok()) << method;
      EXPECT_NEAR(out[0], 50, 1.01) << method << " " << epsilon;
    }
  }
}

TEST(ReleaseTest, ClampsValuesOutsideTheBounds) {
  // Values outside [0, 100] release exactly as the bounds themselves would.
  ReleaseRequest request = BasicRequest();
  request.seed = 5;
  std::vector<double> outside = Data(300, 6), clamped;
  outside[0] = -1e9;
  outside[1] = 1e300;
  outside[2] = 100.5;
  clamped = outside;
  clamped[0] = 0;
  clamped[1] = clamped[2] = 100;
  std::vector<double> a, b;
  ASSERT_TRUE(Release(outside, request, &a).ok());
  ASSERT_TRUE(Release(clamped, request, &b).ok());
  EXPECT_EQ(a, b);
}

TEST(ReleaseTest, EveryBadInputHasItsCode) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::function<void(ReleaseRequest&, std::vector<double>&)> edit;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {[&](ReleaseRequest&, std::vector<double>& d) { d[3] = nan; },
       StatusCode::kNonFiniteValue},
      {[&](ReleaseRequest&, std::vector<double>& d) {
         d[0] = std::numeric_limits<double>::infinity();
       },
       StatusCode::kNonFiniteValue},
      {[&](ReleaseRequest& r, std::vector<double>&) { r.lower = 200; },
       StatusCode::kInvalidBounds},
      {[&](ReleaseRequest& r, std::vector<double>&) { r.upper = nan; },
       StatusCode::kInvalidBounds},
      {[&](ReleaseRequest& r, std::vector<double>&) { r.epsilon = 0; },
       StatusCode::kInvalidPrivacy},
      {[&](ReleaseRequest& r, std::vector<double>&) { r.rho = 1; },
       StatusCode::kInvalidPrivacy},
      {[&](ReleaseRequest& r, std::vector<double>&) { r.epsilon.reset(); },
       StatusCode::kInvalidPrivacy},
      {[&](ReleaseRequest& r, std::vector<double>&) { r.quantiles = {}; },
       StatusCode::kInvalidQuantiles},
      {[&](ReleaseRequest& r, std::vector<double>&) {
         r.quantiles = {0.5, 1};
       },
       StatusCode::kInvalidQuantiles},
      {[&](ReleaseRequest& r, std::vector<double>&) { r.method = "median"; },
       StatusCode::kUnknownMethod},
      {[&](ReleaseRequest& r, std::vector<double>&) {
         r.options = {{"branching", 4}};
       },
       StatusCode::kInvalidOption},
  };
  for (const Case& c : cases) {
    ReleaseRequest request = BasicRequest();
    std::vector<double> data = Data(100, 4);
    c.edit(request, data);
    std::vector<double> out(request.quantiles.size());
    StatusOr<ReleaseReport> report =
        ReleaseQuantiles(data.data(), data.size(), request, out.data());
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.status().code(), c.code) << report.status().message();
    EXPECT_FALSE(report.status().message().empty());
  }
}

TEST(ReleaseTest, UnknownMethodListsTheAvailableOnes) {
  ReleaseRequest request = BasicRequest();
  request.method = "nope";
  std::vector<double> out;
  StatusOr<ReleaseReport> report = Release(Data(10, 5), request, &out);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("'aq'"), std::string::npos);
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

const std::vector<std::string> kAllMethods = {
    "aq",      "jointexp", "inverse-sensitivity", "hs-jointexp", "appindexp",
    "aggtree", "tree-cdf"};

TEST(ReleaseMethodsTest, EveryMethodIsListedAndReleasesOrderedValues) {
  EXPECT_EQ(ReleaseMethods(), kAllMethods);
  for (const std::string& method : kAllMethods) {
    for (bool zcdp : {false, true}) {
      ReleaseRequest request = BasicRequest();
      request.method = method;
      request.quantiles = {0.9, 0.1, 0.5, 0.3};
      if (zcdp) {
        request.epsilon.reset();
        request.rho = 0.5;
      }
      std::vector<double> out;
      StatusOr<ReleaseReport> report = Release(Data(2000, 7), request, &out);
      ASSERT_TRUE(report.ok()) << method << ": " << report.status().message();
      EXPECT_EQ(report.value().method, method);
      EXPECT_EQ(report.value().neighbouring,
                method == "inverse-sensitivity" ? "replace-one" : "add-remove");
      EXPECT_LE(out[1], out[3]) << method;
      EXPECT_LE(out[3], out[2]) << method;
      EXPECT_LE(out[2], out[0]) << method;
      for (double v : out) {
        EXPECT_GE(v, 0);
        EXPECT_LE(v, 100);
      }
    }
  }
}

TEST(ReleaseMethodsTest, LargeEpsilonGivesTheTrueQuantilesWhereThatHolds) {
  // Exponential-mechanism methods find the exact rank; the tree methods are
  // limited by their cells and are checked in tree_test.cc.
  std::vector<double> data = Data(3000, 8);
  std::vector<double> sorted = data;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& method :
       {"aq", "jointexp", "inverse-sensitivity", "hs-jointexp", "appindexp"}) {
    ReleaseRequest request = BasicRequest();
    request.method = method;
    request.epsilon = 1e5;
    request.quantiles = {0.1, 0.5, 0.9};
    request.seed = 3;
    std::vector<double> out;
    ASSERT_TRUE(Release(data, request, &out).ok()) << method;
    for (size_t j = 0; j < 3; ++j) {
      const int64_t below =
          std::lower_bound(sorted.begin(), sorted.end(), out[j]) -
          sorted.begin();
      const int64_t target = static_cast<int64_t>(request.quantiles[j] * 3000);
      EXPECT_LE(std::llabs(below - target), 1)
          << method << " q " << request.quantiles[j];
    }
  }
}

// Mixed(p, delta) of Lalanne et al. Section 6.1: an atom of mass p at 1/2,
// the rest uniform on [0, 1/2 - delta] and [1/2 + delta, 1].
std::vector<double> Mixed(size_t n, double p, double delta, SeededRandom& rng) {
  std::vector<double> data;
  for (size_t i = 0; i < n; ++i) {
    const double u = UniformDouble(rng);
    if (u < p) {
      data.push_back(0.5);
    } else {
      const double v = UniformDouble(rng) * (0.5 - delta);
      data.push_back(UniformDouble(rng) < 0.5 ? v : 1 - v);
    }
  }
  return data;
}

TEST(ReleaseMethodsTest, HsJointExpBeatsJointExpOnAnAtomFiveFold) {
  // The paper's failure case: Mixed(0.5, 0.25), n = 2000, m = 8, eps = 1,
  // sup-norm error against the population quantiles, averaged over runs.
  const std::vector<double> quantiles = {1 / 9.0, 2 / 9.0, 3 / 9.0, 4 / 9.0,
                                         5 / 9.0, 6 / 9.0, 7 / 9.0, 8 / 9.0};
  auto population = [](double p) {  // F^-1 of Mixed(0.5, 0.25)
    return p < 0.25 ? p : (p <= 0.75 ? 0.5 : p);
  };
  SeededRandom data_rng(9);
  double error[2] = {0, 0};
  const int runs = 20;
  for (int run = 0; run < runs; ++run) {
    const std::vector<double> data = Mixed(2000, 0.5, 0.25, data_rng);
    for (int smoothed = 0; smoothed < 2; ++smoothed) {
      ReleaseRequest request;
      request.lower = 0;
      request.upper = 1;
      request.quantiles = quantiles;
      request.epsilon = 1;
      request.method = smoothed ? "hs-jointexp" : "jointexp";
      request.seed = 100 + run;
      std::vector<double> out;
      ASSERT_TRUE(Release(data, request, &out).ok());
      double sup = 0;
      for (size_t j = 0; j < quantiles.size(); ++j) {
        sup = std::max(sup, std::fabs(out[j] - population(quantiles[j])));
      }
      error[smoothed] += sup / runs;
    }
  }
  EXPECT_GT(error[0], 5 * error[1])
      << "JointExp " << error[0] << " HSJointExp " << error[1];
}

TEST(ReleaseMethodsTest, HsJointExpKeepsItsAtomAdvantageUnderAStep) {
  // 55% zeros, the rest on a 0.1 grid in (0, 10], deciles, epsilon 1: a
  // step must not turn HSJointExp into JointExp (the jitter must still
  // spread the atom). Mean rank error, ties counted, over 20 seeds.
  SeededRandom data_rng(5);
  std::vector<double> data;
  for (int i = 0; i < 1000; ++i) {
    data.push_back(
        UniformDouble(data_rng) < 0.55
            ? 0
            : static_cast<double>(
                  1 + static_cast<int>(UniformDouble(data_rng) * 100)) /
                  10);
  }
  std::sort(data.begin(), data.end());
  std::vector<double> quantiles;
  for (int i = 1; i <= 10; ++i) quantiles.push_back(i / 11.0);
  auto rank_error = [&](double q, double v) {
    const auto target = static_cast<int64_t>(q * data.size());
    const int64_t below =
        std::lower_bound(data.begin(), data.end(), v) - data.begin();
    const int64_t at_or_below =
        std::upper_bound(data.begin(), data.end(), v) - data.begin();
    return static_cast<double>(
        std::max({below - target, int64_t{0}, target - at_or_below}));
  };
  double error[3] = {0, 0, 0};  // HSJointExp, HSJointExp step 0.1, JointExp
  const int runs = 20;
  for (int run = 0; run < runs; ++run) {
    for (int variant = 0; variant < 3; ++variant) {
      ReleaseRequest request;
      request.lower = 0;
      request.upper = 10;
      request.quantiles = quantiles;
      request.epsilon = 1;
      request.method = variant == 2 ? "jointexp" : "hs-jointexp";
      if (variant > 0) request.options = {{"step", 0.1}};
      request.seed = 200 + run;
      std::vector<double> out;
      ASSERT_TRUE(Release(data, request, &out).ok());
      for (size_t j = 0; j < quantiles.size(); ++j) {
        if (variant > 0) {  // on the step's grid
          EXPECT_EQ(out[j], std::round(out[j] * 10) / 10) << out[j];
        }
        error[variant] += rank_error(quantiles[j], out[j]) / runs;
      }
    }
  }
  std::printf(
      "rank error summed over 10 deciles: HSJointExp %.1f, with "
      "step 0.1 %.1f, JointExp step 0.1 %.1f\n",
      error[0], error[1], error[2]);
  EXPECT_LE(error[1], 1.5 * error[0]);
  EXPECT_GT(error[2], 3 * error[1]);
}

TEST(ReleaseMethodsTest, EveryNewOptionsBadValuesAreErrors) {
  struct Case {
    const char* method;
    std::vector<std::pair<std::string, double>> numbers;
    std::vector<std::pair<std::string, std::string>> texts;
  };
  const std::vector<Case> cases = {
      {"aggtree", {{"branching", 1}}, {}},
      {"aggtree", {{"branching", 2.5}}, {}},
      {"aggtree", {{"height", 0}}, {}},
      {"aggtree", {{"branching", 1024}, {"height", 24}}, {}},
      {"tree-cdf", {{"cells", 1000}}, {}},
      {"tree-cdf", {{"cells", 1}}, {}},
      {"tree-cdf", {}, {{"budget", "optimal"}}},
      {"tree-cdf", {{"budget", 1}}, {}},
      {"hs-jointexp", {}, {{"jitter", "laplace"}}},
      {"hs-jointexp", {{"scale", -1}}, {}},
      {"hs-jointexp", {{"scale", NAN}}, {}},
      {"hs-jointexp", {{"scale", 1e308}}, {}},
      {"appindexp", {{"delta", 0}}, {}},
      {"appindexp", {{"delta", 1}}, {}},
      {"jointexp", {{"delta", 1e-6}}, {}},
      {"aq", {}, {{"jitter", "uniform"}}},
      {"aq", {{"step", 0}}, {}},
      {"aq", {{"step", -1}}, {}},
      {"aq", {{"step", NAN}}, {}},
      {"aq", {{"step", INFINITY}}, {}},
      {"appindexp", {{"step", 1e-300}}, {}},
      {"jointexp", {{"step", -2}}, {}},
      // A step grid with more points than a tree may have leaves, or a
      // given shape with fewer leaves than points.
      {"aggtree", {{"step", 1e-5}}, {}},
      {"aggtree", {{"step", 1}, {"branching", 2}, {"height", 2}}, {}},
      {"aggtree", {{"step", 0.01}, {"height", 1}}, {}},
      {"tree-cdf", {{"step", 1}}, {}},
      // The default takes no option but the step.
      {"auto", {{"branching", 4}}, {}},
      {"auto", {}, {{"aggregation", "none"}}},
  };
  for (const Case& c : cases) {
    ReleaseRequest request = BasicRequest();
    request.method = c.method;
    request.options = c.numbers;
    request.text_options = c.texts;
    std::vector<double> out;
    StatusOr<ReleaseReport> report = Release(Data(100, 10), request, &out);
    ASSERT_FALSE(report.ok()) << c.method;
    EXPECT_EQ(report.status().code(), StatusCode::kInvalidOption)
        << c.method << ": " << report.status().message();
  }
  // delta goes with epsilon only.
  ReleaseRequest request = BasicRequest();
  request.method = "appindexp";
  request.epsilon.reset();
  request.rho = 1;
  request.options = {{"delta", 1e-6}};
  std::vector<double> out;
  EXPECT_EQ(Release(Data(100, 11), request, &out).status().code(),
            StatusCode::kInvalidOption);
  // Joint mechanisms read at most their public record cap: a table they
  // could not hold for 100,000 records is read through a subset.
  request = BasicRequest();
  request.method = "jointexp";
  request.quantiles.assign(200, 0.5);
  for (size_t i = 0; i < 200; ++i) request.quantiles[i] = (i + 1) / 201.0;
  StatusOr<ReleaseReport> capped = Release(Data(100000, 12), request, &out);
  ASSERT_TRUE(capped.ok()) << capped.status().message();
  EXPECT_LT(capped.value().record_cap, 100000u);
}

// 1,000 whole numbers, half of them 40, the rest spread over [0, 100].
std::vector<double> HalfOnForty(uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<double> data;
  for (int i = 0; i < 1000; ++i) {
    data.push_back(i % 2 ? 40 : std::floor(101 * UniformDouble(rng)));
  }
  return data;
}

TEST(StepTest, IntegerDataWithStepOneReleasesIntegersAndTheAtomItself) {
  // Half the records on 40, the rest integers spread over [0, 100]: with
  // step 1 every release is an integer and the median is exactly 40.
  for (const char* method : {"aq", "appindexp", "jointexp",
                             "inverse-sensitivity", "hs-jointexp", "aggtree"}) {
    int exact_medians = 0;
    for (uint64_t trial = 0; trial < 100; ++trial) {
      const std::vector<double> data = HalfOnForty(1000 + trial);
      ReleaseRequest request = BasicRequest();
      request.method = method;
      request.quantiles = {0.1, 0.5, 0.9};
      request.options = {{"step", 1}};
      request.seed = 2000 + trial;
      std::vector<double> out;
      StatusOr<ReleaseReport> report = Release(data, request, &out);
      ASSERT_TRUE(report.ok()) << method << report.status().message();
      for (double v : out) ASSERT_EQ(v, std::round(v)) << method;
      exact_medians += out[1] == 40;
    }
    // The single-quantile mechanisms release the atom itself; JointExp and
    // its kin score gaps only and reach it less often.
    // AggTree on the step grid counts the atom's point itself.
    if (std::string(method) == "aq" || std::string(method) == "appindexp" ||
        std::string(method) == "aggtree") {
      EXPECT_GE(exact_medians, 95) << method;
    }
  }
  // The AQ median alone (m = 1) at eps = 1, as a user would ask for it.
  int exact = 0;
  for (uint64_t trial = 0; trial < 100; ++trial) {
    const std::vector<double> data = HalfOnForty(3000 + trial);
    ReleaseRequest request = BasicRequest();
    request.quantiles = {0.5};
    request.options = {{"step", 1}};
    std::vector<double> out;
    ASSERT_TRUE(Release(data, request, &out).ok());
    exact += out[0] == 40;
  }
  EXPECT_GE(exact, 95);
}

TEST(StepTest, TheDefaultPicksATreeOnlyForCoarseGridsAndManyQuantiles) {
  ReleaseRequest request = BasicRequest();  // epsilon 1 on [0, 100]
  auto pick = [&](std::optional<double> step, size_t m) {
    request.options.clear();
    if (step.has_value()) request.options = {{"step", *step}};
    request.quantiles.clear();
    for (size_t i = 1; i <= m; ++i) {
      request.quantiles.push_back(static_cast<double>(i) / (m + 1));
    }
    return ResolveMethod(request).value();
  };
  // No step: the step look (step_look.h), which picks by the same rule on
  // the step it finds.
  EXPECT_EQ(pick(std::nullopt, 120), "auto");
  // Up to kAutoSmallGrid points: m >= 4, or m >= 2 all in the outer 5%.
  EXPECT_EQ(pick(1, 3), "aq");  // 101 points
  EXPECT_EQ(pick(1, 4), "aggtree");
  EXPECT_EQ(pick(100.0 / 255, 4), "aggtree");  // 256 points
  EXPECT_EQ(pick(100.0 / 256, 4), "aq");       // 257 points: m >= 10.7
  EXPECT_EQ(pick(100.0 / 256, 11), "aggtree");
  request.options = {{"step", 1}};
  request.quantiles = {0.01, 0.99};
  EXPECT_EQ(ResolveMethod(request).value(), "aggtree");
  request.quantiles = {0.95, 0.99};
  EXPECT_EQ(ResolveMethod(request).value(), "aggtree");
  request.quantiles = {0.05, 0.9};
  EXPECT_EQ(ResolveMethod(request).value(), "aq");
  request.quantiles = {0.01};
  EXPECT_EQ(ResolveMethod(request).value(), "aq");
  EXPECT_EQ(pick(0.2, 20), "aq");  // 501 points: m >= 20.9
  EXPECT_EQ(pick(0.2, 21), "aggtree");
  EXPECT_EQ(pick(1e-4, 120), "aq");  // 10^6 + 1 points: m >= 41,667
  // Bad quantiles are left to the method to report.
  request.options = {{"step", 1}};
  request.quantiles = std::vector<double>(10, NAN);
  EXPECT_EQ(ResolveMethod(request).value(), "aq");
  std::vector<double> out;
  EXPECT_EQ(Release(Data(100, 3), request, &out).status().code(),
            StatusCode::kInvalidQuantiles);
  // Repeated quantiles count once.
  request.quantiles = std::vector<double>(20, 0.5);
  EXPECT_EQ(ResolveMethod(request).value(), "aq");
  // zCDP: points <= 128 and m >= 40 (the small grid's rule is for epsilon).
  request.epsilon.reset();
  request.rho = 0.5;
  EXPECT_EQ(pick(1, 39), "aq");
  EXPECT_EQ(pick(1, 40), "aggtree");
  EXPECT_EQ(pick(100.0 / 127, 120), "aggtree");  // 128 points
  EXPECT_EQ(pick(100.0 / 128, 120), "aq");       // 129 points
  // A named method is kept; the report names the one that ran.
  request.method = "jointexp";
  EXPECT_EQ(ResolveMethod(request).value(), "jointexp");
  request = BasicRequest();
  request.options = {{"step", 1}};
  request.quantiles.clear();
  for (int i = 1; i <= 30; ++i) request.quantiles.push_back(i / 31.0);
  StatusOr<ReleaseReport> report = Release(HalfOnForty(5), request, &out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report.value().method, "aggtree");
  EXPECT_EQ(report.value().resolution, 1);
  for (double v : out) EXPECT_EQ(v, std::round(v));
}

TEST(StepTest, AStepThatDoesNotDivideTheRangeEndsAtUpper) {
  ReleaseRequest request = BasicRequest();
  request.lower = 0;
  request.upper = 10;
  request.options = {{"step", 3}};
  request.quantiles = {0.99};
  request.epsilon = 1e4;
  std::vector<double> data(100, 10.0);  // all at the upper bound
  std::vector<double> out;
  ASSERT_TRUE(Release(data, request, &out).ok());
  EXPECT_EQ(out[0], 10);
  data.assign(100, 6.4);  // nearest point 6
  ASSERT_TRUE(Release(data, request, &out).ok());
  EXPECT_EQ(out[0], 6);
}

TEST(StepTest, SanitizeTakesAStep) {
  SanitizeRequest request;
  request.lower = 0;
  request.upper = 100;
  request.epsilon = 1;
  request.size = 50;
  request.step = 5;
  std::vector<double> data = Data(1000, 40);
  std::vector<double> out(50);
  ASSERT_TRUE(
      SanitizeSample(data.data(), data.size(), request, out.data()).ok());
  for (double v : out) EXPECT_EQ(std::fmod(v, 5), 0) << v;
  request.step = -5;
  EXPECT_EQ(SanitizeSample(data.data(), data.size(), request, out.data())
                .status()
                .code(),
            StatusCode::kInvalidOption);
}

TEST(ReleaseMethodsTest, WorkIsBoundedFromPublicParameters) {
  // AppIndExp with delta: the optimal composition is O(m^2) per bisection
  // step; m = 4000 once took 12 s, m = 2^20 would take days.
  ReleaseRequest request = BasicRequest();
  request.method = "appindexp";
  request.options = {{"delta", 1e-6}};
  request.quantiles.clear();
  for (int i = 1; i <= 1025; ++i) request.quantiles.push_back(i / 1026.0);
  std::vector<double> out;
  StatusOr<ReleaseReport> report = Release(Data(100, 21), request, &out);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kTooLarge);
  EXPECT_NE(report.status().message().find("1024"), std::string::npos);
  request.quantiles.resize(1024);
  EXPECT_TRUE(Release(Data(100, 21), request, &out).ok());
  // JointExp: m = 4096, n = 1023 fits the table but took 17 s.
  request = BasicRequest();
  request.method = "jointexp";
  request.quantiles.clear();
  for (int i = 1; i <= 4096; ++i) request.quantiles.push_back(i / 4097.0);
  report = Release(Data(1023, 23), request, &out);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kTooLarge);
  EXPECT_NE(report.status().message().find("2^29"), std::string::npos);
  // Trees: every node gets exact noise; 2^22 leaves took 2.3 s natively.
  for (const auto& [method, options] : std::vector<
           std::pair<std::string, std::vector<std::pair<std::string, double>>>>{
           {"aggtree", {{"branching", 2}, {"height", 22}}},
           {"tree-cdf", {{"cells", 4194304}}}}) {
    request = BasicRequest();
    request.method = method;
    request.options = options;
    EXPECT_EQ(Release(Data(5, 22), request, &out).status().code(),
              StatusCode::kInvalidOption)
        << method;
  }
}

TEST(ReleaseMethodsTest, ApproximateDpSpendsEpsilonAndDelta) {
  ReleaseRequest request = BasicRequest();
  request.method = "appindexp";
  request.options = {{"delta", 1e-6}};
  request.quantiles = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  std::vector<double> out;
  StatusOr<ReleaseReport> report = Release(Data(1000, 13), request, &out);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.value().spent.kind, PrivacyBudget::Kind::kApprox);
  EXPECT_EQ(report.value().spent.delta, 1e-6);
  EXPECT_GT(report.value().mechanism_epsilon, 1.0 / 9);
}

TEST(SanitizeTest, ReleasesASortedSampleTrackingTheData) {
  std::vector<double> data = Data(5000, 14);
  SanitizeRequest request;
  request.lower = 0;
  request.upper = 100;
  request.epsilon = 1e4;
  request.size = 200;
  request.seed = 4;
  std::vector<double> out(200);
  std::vector<double> copy = data;
  StatusOr<ReleaseReport> report =
      SanitizeSample(copy.data(), copy.size(), request, out.data());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report.value().method, "sanitize");
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  std::sort(data.begin(), data.end());
  // Every synthetic point sits at its share of the data.
  for (size_t i = 0; i < 200; i += 20) {
    const double share = (i + 1) / 201.0;
    const int64_t below =
        std::lower_bound(data.begin(), data.end(), out[i]) - data.begin();
    EXPECT_LE(std::llabs(below - static_cast<int64_t>(share * 5000)), 2);
  }
  EXPECT_EQ(SanitizeSize(std::nullopt).value(), kDefaultSanitizeSize);
  EXPECT_EQ(SanitizeSize(0.0).status().code(), StatusCode::kInvalidOption);
  EXPECT_EQ(SanitizeSize(2.5).status().code(), StatusCode::kInvalidOption);
  EXPECT_EQ(SanitizeSize(1e7).status().code(), StatusCode::kInvalidOption);
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

TEST(FormatNumberTest, ShortestExactAndPlainWherePlainIsShort) {
  // Messages quote numbers back exactly, readably: "10", not "1e+01".
  EXPECT_EQ(FormatNumber(10), "10");
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(-0.0), "-0");  // an epsilon of -0 is quoted as given
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(-0.25), "-0.25");
  EXPECT_EQ(FormatNumber(123456.789), "123456.789");
  EXPECT_EQ(FormatNumber(9007199254740992.0), "9007199254740992");
  // As JavaScript's String(x) writes them: plain from 1e-6 to 1e21, no
  // padded exponents (a message once held 1e-06 beside 0.000002).
  EXPECT_EQ(FormatNumber(1e16), "10000000000000000");
  EXPECT_EQ(FormatNumber(1e21), "1e+21");
  EXPECT_EQ(FormatNumber(1e-6), "0.000001");
  EXPECT_EQ(FormatNumber(2e-6), "0.000002");
  EXPECT_EQ(FormatNumber(1.5e-7), "1.5e-7");
  EXPECT_EQ(FormatNumber(-1.25e-300), "-1.25e-300");
  EXPECT_EQ(FormatNumber(1e300), "1e+300");
  EXPECT_EQ(FormatNumber(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(FormatNumber(5e-324), "5e-324");
  // Every double reads back exactly.
  SeededRandom rng(2);
  for (int i = 0; i < 20000; ++i) {
    double x;
    const uint64_t bits = rng.NextUint64();
    std::memcpy(&x, &bits, 8);
    if (!std::isfinite(x)) continue;
    ASSERT_EQ(std::strtod(FormatNumber(x).c_str(), nullptr), x)
        << FormatNumber(x);
  }
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

// A release's mechanisms together never run above the decimal its caller
// wrote: fl(0.2) is above one fifth, so epsilon 0.2 must reach the
// mechanisms as at most the double below it, and every split of it (levels,
// parts, the intervals' share, the per-person division) rounds down from
// there. Checked exactly in decimal.
TEST(ReleaseTest, NoMechanismRunsAboveTheDecimalWritten) {
  struct Case {
    const char* method;
    int parts;  // mechanisms in sequence on the same records, for m = 3
  };
  const std::vector<double> data = Data(200, 5);
  int checked = 0;
  std::set<std::string> interval_methods;
  for (double epsilon : {0.2, 0.1, 0.7, 0.9, 2.7, 1e-3, 0.3}) {
    for (const Case& c :
         {Case{"aq", 2}, Case{"appindexp", 3}, Case{"jointexp", 1},
          Case{"hs-jointexp", 1}, Case{"inverse-sensitivity", 1}}) {
      for (int k : {0, 3}) {
        // Intervals of three quantiles (the tree) and of one (brackets).
        for (int intervals : {0, 3, 1}) {
          if (k > 0 && std::string(c.method) == "inverse-sensitivity") continue;
          ReleaseRequest request = BasicRequest();
          request.method = c.method;
          request.epsilon = epsilon;
          request.seed = 1;
          std::vector<uint32_t> users(data.size());
          for (size_t i = 0; i < users.size(); ++i) users[i] = i % 50;
          if (k > 0) {
            request.users = users.data();
            request.max_contributions = k;
          }
          if (intervals > 0) {
            request.confidence = 0.9;
            request.interval_share = 0.3;
          }
          if (intervals == 1) request.quantiles = {0.5};
          std::vector<double> out;
          StatusOr<ReleaseReport> report = Release(data, request, &out);
          ASSERT_TRUE(report.ok()) << c.method << report.status().message();
          // AQ's mechanism_epsilon is its root's (levels = 2 at m = 3; per
          // path a leaf gets what the root left); one quantile is one
          // mechanism for every method.
          Decimal used = Decimal::Exact(report.value().mechanism_epsilon)
                             .TimesInteger(intervals == 1 ? 1 : c.parts);
          if (intervals > 0) {
            interval_methods.insert(report.value().interval_method);
            ASSERT_GT(report.value().interval_parts, 0);
            used = used.Plus(Decimal::Exact(report.value().interval_epsilon)
                                 .TimesInteger(static_cast<uint32_t>(
                                     report.value().interval_parts)));
          }
          if (k > 0) used = used.TimesInteger(static_cast<uint32_t>(k));
          EXPECT_LE(used, Decimal::Written(epsilon))
              << c.method << " epsilon " << epsilon << " k " << k
              << " intervals " << intervals << ": " << used.ToString();
          ++checked;
        }
      }
    }
  }
  // Both ways of drawing intervals were checked.
  EXPECT_EQ(interval_methods, (std::set<std::string>{"brackets", "tree"}));
  EXPECT_GT(checked, 100);
}

// The same under rho, and with population intervals (whose noisy count
// takes part of the intervals' share) under both kinds: what every
// mechanism runs with adds up to at most the decimal written. An epsilon-DP
// exponential mechanism is epsilon^2 / 8-zCDP; a tree level's noise reports
// its rho.
TEST(ReleaseTest, NoMechanismRunsAboveTheDecimalWrittenUnderRhoOrPopulation) {
  const std::vector<double> data = Data(200, 5);
  const Decimal eighth = *Decimal::Parse("0.125");
  auto squared = [&](double e) {
    return Decimal::Exact(e).Times(Decimal::Exact(e)).Times(eighth);
  };
  std::set<std::string> interval_methods;
  int checked = 0;
  for (const bool rho : {true, false}) {
    for (double amount : {0.2, 0.1, 0.7, 2.7, 1e-3, 0.3}) {
      for (const char* method : {"aq", "jointexp"}) {
        for (int intervals : {0, 3, 1}) {
          for (const bool population : {false, true}) {
            if (!rho && !population) continue;  // the test above
            if (intervals == 0 && population) continue;
            ReleaseRequest request = BasicRequest();
            request.method = method;
            request.epsilon.reset();
            (rho ? request.rho : request.epsilon) = amount;
            request.seed = 1;
            if (intervals > 0) {
              request.confidence = 0.9;
              request.interval_share = 0.3;
              if (population) request.interval = "population";
            }
            if (intervals == 1) request.quantiles = {0.5};
            std::vector<double> out;
            StatusOr<ReleaseReport> report = Release(data, request, &out);
            ASSERT_TRUE(report.ok()) << method << report.status().message();
            const ReleaseReport& r = report.value();
            // AQ under rho runs every level at one epsilon; under epsilon
            // its root's is the smallest, and a path sums to at most its
            // levels' (the test above); jointexp is one mechanism.
            const int parts =
                std::string(method) == "aq" && intervals != 1 ? r.levels : 1;
            Decimal used;
            if (rho) {
              used = squared(r.mechanism_epsilon).TimesInteger(parts);
            } else {
              used = Decimal::Exact(r.mechanism_epsilon).TimesInteger(parts);
            }
            if (intervals > 0) {
              interval_methods.insert(r.interval_method);
              const auto n = static_cast<uint32_t>(r.interval_parts);
              if (!rho) {
                used = used.Plus(
                    Decimal::Exact(r.interval_epsilon).TimesInteger(n));
              } else if (r.interval_method == "tree") {
                used =
                    used.Plus(Decimal::Exact(r.interval_rho).TimesInteger(n));
              } else {
                used = used.Plus(squared(r.interval_epsilon).TimesInteger(n));
              }
              if (population) {
                ASSERT_TRUE(r.interval_population);
                used = used.Plus(
                    Decimal::Exact(rho ? r.interval_count_spent.rho
                                       : r.interval_count_spent.epsilon));
              }
            }
            EXPECT_LE(used, Decimal::Written(amount))
                << method << (rho ? " rho " : " epsilon ") << amount
                << " intervals " << intervals << " population " << population
                << ": " << used.ToString();
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(interval_methods, (std::set<std::string>{"brackets", "tree"}));
  EXPECT_GT(checked, 60);
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

// The joint methods' size limits depend on n, so they are met by a public
// record cap and a uniform subset, never by a refusal (that would answer
// "n > limit" for free): 400 quantiles on 4,321 values release, with the
// same cap as on 10 values.
TEST(ReleaseTest, JointMethodsCapRecordsPubliclyInsteadOfRefusing) {
  // (HSJointExp samples on the finest grid even under a step, where its
  // rounding fits fewer quantiles.)
  for (const auto& [method, m] :
       std::vector<std::pair<std::string, int>>{{"jointexp", 400},
                                                {"inverse-sensitivity", 400},
                                                {"hs-jointexp", 250}}) {
    ReleaseRequest request = BasicRequest();
    request.method = method;
    request.quantiles.clear();
    for (int i = 1; i <= m; ++i) request.quantiles.push_back(i / (m + 1.0));
    request.seed = 3;
    // (On the default grid of 2^20 steps the rounding of 400 quantiles is
    // already too much for epsilon's reserve with no records at all.)
    request.options = {{"step", 1}};
    request.epsilon = 8;
    std::vector<size_t> caps;
    for (size_t n : {10, 4321}) {
      std::vector<double> out;
      StatusOr<ReleaseReport> report = Release(Data(n, 9), request, &out);
      ASSERT_TRUE(report.ok()) << method << " " << report.status().message();
      EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
      caps.push_back(report.value().record_cap);
    }
    EXPECT_EQ(caps[0], caps[1]) << method;
    EXPECT_LT(caps[1], 4321u) << method;  // so 4,321 values were subsampled
    EXPECT_GT(caps[1], 100u) << method;
  }
  // maxRecords lowers the cap (public), and is checked against it.
  ReleaseRequest request = BasicRequest();
  request.method = "jointexp";
  request.options = {{"maxRecords", 50}};
  request.seed = 4;
  std::vector<double> out;
  StatusOr<ReleaseReport> report = Release(Data(1000, 2), request, &out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report.value().record_cap, 50u);
  request.options = {{"maxRecords", 1e12}};
  report = Release(Data(10, 2), request, &out);
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidOption);
  EXPECT_NE(report.status().message().find("maxRecords must be a whole number "
                                           "from 1 to"),
            std::string::npos);
  // A subset of 50 of 1,000 uniform values still finds the quartiles
  // roughly (epsilon 1000: the subset's own quartiles).
  request.options = {{"maxRecords", 50}};
  request.epsilon = 1000;
  report = Release(Data(1000, 2), request, &out);
  ASSERT_TRUE(report.ok());
  EXPECT_NEAR(out[1], 50, 20);
  // Too many quantiles for the tables is a public refusal naming m only.
  request.quantiles.assign(1 << 20, 0.5);
  for (size_t i = 0; i < request.quantiles.size(); ++i)
    request.quantiles[i] = (i + 1.0) / (request.quantiles.size() + 1.0);
  request.options.clear();
  report = Release(Data(10, 2), request, &out);
  EXPECT_EQ(report.status().code(), StatusCode::kTooLarge);
  EXPECT_NE(report.status().message().find("1048576 distinct quantiles are too "
                                           "many"),
            std::string::npos)
      << report.status().message();
}

}  // namespace
}  // namespace dpq
