#include "core/session.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/release.h"
#include "core/stream.h"

namespace dpq {
namespace {

TEST(SessionTest, ZcdpConversionIsTheMinimumOverAlpha) {
  // Minimum of epsilon(alpha) over a fine grid of alpha - 1 = e^(t / 1000),
  // computed separately in Python, and the common bound.
  const struct {
    double rho, delta, minimum, common;
  } cases[] = {
      {0.5, 1e-5, 4.728387062209639, 5.298525912188081},
      {0.1, 1e-6, 2.1419390420286315, 2.4507880004767997},
      {2.0, 1e-9, 14.150147946837542, 14.875796157736083},
      {0.005, 1e-5, 0.3752612368472485, 0.48485259121880814},
  };
  for (const auto& c : cases) {
    const double epsilon = ZcdpToApproxEpsilon(c.rho, c.delta);
    EXPECT_GE(epsilon, c.minimum * (1 - 1e-7)) << c.rho;
    EXPECT_LE(epsilon, c.minimum * (1 + 1e-9)) << c.rho;
    EXPECT_LT(epsilon, c.common);
  }
  EXPECT_EQ(ZcdpToApproxEpsilon(0, 1e-5), 0);
}

TEST(SessionTest, PureEpsilonsAddAndOverspendingIsRefused) {
  PrivacySession session =
      PrivacySession::Create(PrivacyBudget::Pure(3), Neighbouring::kAddRemove)
          .value();
  EXPECT_TRUE(
      session.Charge(PrivacyBudget::Pure(1), Neighbouring::kAddRemove).ok());
  EXPECT_TRUE(
      session.Charge(PrivacyBudget::Pure(1.5), Neighbouring::kAddRemove).ok());
  const Status over =
      session.Charge(PrivacyBudget::Pure(1), Neighbouring::kAddRemove);
  EXPECT_EQ(over.code(), StatusCode::kBudgetExceeded);
  EXPECT_NE(over.message().find("epsilon = 2.5 of epsilon = 3 spent in 2 "
                                "releases"),
            std::string::npos)
      << over.message();
  EXPECT_EQ(session.Spent().epsilon, 2.5);
  EXPECT_EQ(session.Remaining().epsilon, 0.5);
  EXPECT_EQ(session.releases(), 2);
  EXPECT_TRUE(
      session.Charge(PrivacyBudget::Pure(0.5), Neighbouring::kAddRemove).ok());
  EXPECT_EQ(session.Spent().epsilon, 3);
}

TEST(SessionTest, SumsRoundUpSoTenTenthsDoNotFitInOne) {
  // 10 fl(0.1) is 1 + 5.6e-17 exactly: the tenth release would spend more
  // than the total, and the session says so rather than rounding it away.
  PrivacySession session =
      PrivacySession::Create(PrivacyBudget::Pure(1), Neighbouring::kAddRemove)
          .value();
  for (int i = 0; i < 9; ++i) {
    ASSERT_TRUE(
        session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemove)
            .ok());
  }
  const Status tenth =
      session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemove);
  EXPECT_EQ(tenth.code(), StatusCode::kBudgetExceeded);
  EXPECT_NE(tenth.message().find("binary"), std::string::npos)
      << tenth.message();
  EXPECT_GE(session.Spent().epsilon, 0.9);
}

TEST(SessionTest, ZcdpSessionsCountPureReleasesAsHalfEpsilonSquared) {
  PrivacySession session =
      PrivacySession::Create(PrivacyBudget::Zcdp(1), Neighbouring::kAddRemove)
          .value();
  ASSERT_TRUE(
      session.Charge(PrivacyBudget::Pure(1), Neighbouring::kAddRemove).ok());
  ASSERT_TRUE(
      session.Charge(PrivacyBudget::Zcdp(0.25), Neighbouring::kAddRemove).ok());
  EXPECT_EQ(session.Spent().rho, 0.75);
  EXPECT_EQ(
      session.Charge(PrivacyBudget::Zcdp(0.3), Neighbouring::kAddRemove).code(),
      StatusCode::kBudgetExceeded);
  EXPECT_EQ(
      session.Charge(PrivacyBudget::Approx(0.1, 1e-9), Neighbouring::kAddRemove)
          .code(),
      StatusCode::kInvalidPrivacy);
}

TEST(SessionTest, ApproximateSessionsMixEveryKind) {
  // Hand-computed totals. (epsilon, delta) parts add; a pure part adds.
  PrivacySession mixed = PrivacySession::Create(PrivacyBudget::Approx(2, 1e-6),
                                                Neighbouring::kAddRemove)
                             .value();
  ASSERT_TRUE(
      mixed.Charge(PrivacyBudget::Pure(0.5), Neighbouring::kAddRemove).ok());
  ASSERT_TRUE(
      mixed.Charge(PrivacyBudget::Approx(0.5, 1e-7), Neighbouring::kAddRemove)
          .ok());
  EXPECT_EQ(mixed.Spent().epsilon, 1);
  EXPECT_EQ(mixed.Spent().delta, 1e-7);

  // zCDP parts add their rho and convert once with the delta left:
  // rho 0.25 + 0.25 = 0.5 at delta 1e-5 is epsilon 4.7284.
  PrivacySession zcdp = PrivacySession::Create(PrivacyBudget::Approx(5, 1e-5),
                                               Neighbouring::kAddRemove)
                            .value();
  ASSERT_TRUE(
      zcdp.Charge(PrivacyBudget::Zcdp(0.25), Neighbouring::kAddRemove).ok());
  ASSERT_TRUE(
      zcdp.Charge(PrivacyBudget::Zcdp(0.25), Neighbouring::kAddRemove).ok());
  EXPECT_NEAR(zcdp.Spent().epsilon, 4.728387062209639, 1e-6);
  EXPECT_LE(zcdp.Spent().delta, 1e-5);
  EXPECT_EQ(
      zcdp.Charge(PrivacyBudget::Zcdp(0.1), Neighbouring::kAddRemove).code(),
      StatusCode::kBudgetExceeded);

  // 100 pure releases of 0.1: added they make 10 (and a little more), folded
  // into zCDP as 100 * 0.005 = 0.5 they make 4.7284 at delta 1e-5.
  PrivacySession many = PrivacySession::Create(PrivacyBudget::Approx(6, 1e-5),
                                               Neighbouring::kAddRemove)
                            .value();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(
        many.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemove).ok())
        << i;
  }
  EXPECT_NEAR(many.Spent().epsilon, 4.728387062209639, 1e-6);
}

TEST(SessionTest, NeighbouringRelationsComposeSoundly) {
  // Replace-one sessions count an add-remove release twice over.
  PrivacySession replace =
      PrivacySession::Create(PrivacyBudget::Pure(3), Neighbouring::kReplaceOne)
          .value();
  ASSERT_TRUE(
      replace.Charge(PrivacyBudget::Pure(1), Neighbouring::kAddRemove).ok());
  ASSERT_TRUE(
      replace.Charge(PrivacyBudget::Pure(1), Neighbouring::kReplaceOne).ok());
  EXPECT_EQ(replace.Spent().epsilon, 3);
  PrivacySession rho =
      PrivacySession::Create(PrivacyBudget::Zcdp(1), Neighbouring::kReplaceOne)
          .value();
  ASSERT_TRUE(
      rho.Charge(PrivacyBudget::Zcdp(0.25), Neighbouring::kAddRemove).ok());
  EXPECT_EQ(rho.Spent().rho, 1);
  // An add-remove session cannot hold a replace-one release.
  PrivacySession add =
      PrivacySession::Create(PrivacyBudget::Pure(3), Neighbouring::kAddRemove)
          .value();
  EXPECT_EQ(
      add.Charge(PrivacyBudget::Pure(1), Neighbouring::kReplaceOne).code(),
      StatusCode::kInvalidPrivacy);
  EXPECT_EQ(add.releases(), 0);
  // Kinds that do not compose, and bad totals.
  EXPECT_EQ(
      add.Charge(PrivacyBudget::Zcdp(0.1), Neighbouring::kAddRemove).code(),
      StatusCode::kInvalidPrivacy);
  for (const PrivacyBudget& bad :
       {PrivacyBudget::Pure(0), PrivacyBudget::Pure(INFINITY),
        PrivacyBudget::Zcdp(-1), PrivacyBudget::Approx(1, 1),
        PrivacyBudget::Approx(1, 0)}) {
    EXPECT_EQ(
        PrivacySession::Create(bad, Neighbouring::kAddRemove).status().code(),
        StatusCode::kInvalidPrivacy);
  }
}

TEST(SessionTest, ReleasesAreRefusedBeforeTheDataIsRead) {
  PrivacySession session =
      PrivacySession::Create(PrivacyBudget::Approx(2, 1e-6),
                             Neighbouring::kAddRemove)
          .value();
  ReleaseRequest request;
  request.lower = 0;
  request.upper = 10;
  request.quantiles = {0.5};
  request.epsilon = 1.5;
  std::vector<double> data = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  double out[1];
  ASSERT_TRUE(
      ReleaseQuantiles(data.data(), data.size(), request, out, &session).ok());
  EXPECT_EQ(session.Spent().epsilon, 1.5);
  // Too much: refused before the data is read, so a NaN in it goes unseen
  // and nothing is clamped or sorted.
  std::vector<double> bad = {20, NAN, -5};
  const std::vector<double> copy = bad;
  request.epsilon = 1;
  const StatusOr<ReleaseReport> refused =
      ReleaseQuantiles(bad.data(), bad.size(), request, out, &session);
  EXPECT_EQ(refused.status().code(), StatusCode::kBudgetExceeded);
  EXPECT_EQ(bad[0], copy[0]);
  EXPECT_EQ(bad[2], copy[2]);
  EXPECT_EQ(session.releases(), 1);
  // AppIndExp with delta spends (epsilon, delta).
  request.epsilon = 0.25;
  request.method = "appindexp";
  request.options = {{"delta", 1e-7}};
  ASSERT_TRUE(
      ReleaseQuantiles(data.data(), data.size(), request, out, &session).ok());
  EXPECT_EQ(session.Spent().epsilon, 1.75);
  EXPECT_EQ(session.Spent().delta, 1e-7);
  // A replace-one method cannot spend from an add-remove session.
  request.method = "inverse-sensitivity";
  request.options.clear();
  EXPECT_EQ(ReleaseQuantiles(data.data(), data.size(), request, out, &session)
                .status()
                .code(),
            StatusCode::kInvalidPrivacy);
  // A failed release spends nothing.
  request.method = "aq";
  request.lower = 5;
  request.upper = 1;
  EXPECT_EQ(ReleaseQuantiles(data.data(), data.size(), request, out, &session)
                .status()
                .code(),
            StatusCode::kInvalidBounds);
  EXPECT_EQ(session.releases(), 2);
  // Streams: DPHistGK charges; DPExpGK is replace-one.
  StreamOptions options;
  options.lower = 0;
  options.upper = 10;
  options.alpha = 0.01;
  QuantileStream stream = QuantileStream::Create(options).value();
  ASSERT_TRUE(stream.Push(data.data(), data.size()).ok());
  StreamReleaseRequest stream_request;
  stream_request.quantiles = {0.5};
  stream_request.epsilon = 0.25;
  stream_request.method = "hist-gk";
  ASSERT_TRUE(stream.Release(stream_request, out, &session).ok());
  EXPECT_EQ(session.Spent().epsilon, 2);
  EXPECT_EQ(stream.Release(stream_request, out, &session).status().code(),
            StatusCode::kBudgetExceeded);
  stream_request.method = "exp-gk";
  stream_request.epsilon = 1e-3;
  EXPECT_EQ(stream.Release(stream_request, out, &session).status().code(),
            StatusCode::kInvalidPrivacy);
}

}  // namespace
}  // namespace dpq
