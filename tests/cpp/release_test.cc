#include "core/release.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "core/random.h"

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

StatusOr<ReleaseReport> Release(std::vector<double> data,
                                const ReleaseRequest& request,
                                std::vector<double>* out) {
  out->assign(request.quantiles.size(), std::nan(""));
  return ReleaseQuantiles(data.data(), data.size(), request, out->data());
}

TEST(ReleaseTest, ReleasesOrderedValuesInsideTheBounds) {
  ReleaseRequest request = BasicRequest();
  std::vector<double> out;
  StatusOr<ReleaseReport> report = Release(Data(1000, 1), request, &out);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report.value().method, "aq");
  EXPECT_EQ(report.value().levels, 2);
  EXPECT_DOUBLE_EQ(report.value().epsilon_per_level, 0.5);
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
  EXPECT_DOUBLE_EQ(report.value().epsilon_per_level, std::sqrt(8 * 0.5 / 2));
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
