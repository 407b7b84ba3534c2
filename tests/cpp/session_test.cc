#include "core/session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

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

TEST(SessionTest, ZcdpConversionRoundsUpWhateverItsSign) {
  // With little rho and a large delta, epsilon(alpha) is negative at its
  // best alpha (about -0.07 here): rounding "up" by a relative factor would
  // move it down. The conversion is then 0, which is valid: (epsilon,
  // delta)-DP with epsilon < 0 implies (0, delta)-DP.
  EXPECT_EQ(ZcdpToApproxEpsilon(1e-6, 0.5), 0);
  // Elsewhere it is never below the formula at the alpha it used, evaluated
  // in long double (11 more bits), nor below 0.
  int cases = 0;
  for (double rho = 1e-6; rho < 10; rho *= 1.7) {
    for (double delta : {1e-12, 1e-9, 1e-5, 1e-3, 0.1, 0.4, 0.9}) {
      double alpha_used = 0;
      const double epsilon = ZcdpToApproxEpsilon(rho, delta, &alpha_used);
      ASSERT_GE(epsilon, 0);
      if (alpha_used == 0) continue;  // the common bound was smaller
      const long double alpha = alpha_used;
      const long double at_alpha =
          alpha * rho + (std::log(1 / static_cast<long double>(delta)) +
                         alpha * std::log1p(-1 / alpha) - std::log(alpha - 1)) /
                            (alpha - 1);
      ASSERT_GE(static_cast<long double>(epsilon), at_alpha)
          << rho << " " << delta;
      ++cases;
    }
  }
  EXPECT_GT(cases, 100);
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

// Charges `parts` in order to a fresh session of `total`; true when all fit.
bool AllFit(const PrivacyBudget& total,
            const std::vector<PrivacyBudget>& parts) {
  PrivacySession session =
      PrivacySession::Create(total, Neighbouring::kAddRemove).value();
  for (const PrivacyBudget& part : parts) {
    if (!session.Charge(part, Neighbouring::kAddRemove).ok()) return false;
  }
  return true;
}

std::vector<PrivacyBudget> Pure(std::vector<double> epsilons) {
  std::vector<PrivacyBudget> parts;
  for (double e : epsilons) parts.push_back(PrivacyBudget::Pure(e));
  return parts;
}

TEST(SessionTest, ChargesAreValidCostsOnly) {
  // A replayed ledger's charge of -0.5 once counted as 0 (budget given
  // back): every charge must be positive, finite amounts of its own kind,
  // with k >= 1 exactly when per person; the session is unchanged.
  PrivacySession session =
      PrivacySession::Create(PrivacyBudget::Approx(2, 1e-6),
                             Neighbouring::kAddRemove)
          .value();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const PrivacyBudget bad[] = {
      PrivacyBudget::Pure(-0.5),
      PrivacyBudget::Pure(0),
      PrivacyBudget::Pure(inf),
      PrivacyBudget::Pure(nan),
      PrivacyBudget::Approx(0.1, 0),
      PrivacyBudget::Approx(0.1, 1),
      PrivacyBudget::Approx(-1, 1e-9),
      PrivacyBudget::Zcdp(-0.01),
      PrivacyBudget{PrivacyBudget::Kind::kPure, 0.1, 0, 0.2},
      PrivacyBudget{PrivacyBudget::Kind::kZcdp, 0.1, 0, 0.2},
  };
  for (const PrivacyBudget& cost : bad) {
    EXPECT_EQ(session.Charge(cost, Neighbouring::kAddRemove).code(),
              StatusCode::kInvalidPrivacy)
        << cost.epsilon << " " << cost.delta << " " << cost.rho;
  }
  EXPECT_EQ(
      session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemove, 2)
          .code(),
      StatusCode::kInvalidPrivacy);
  EXPECT_EQ(
      session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemoveUser, 0)
          .code(),
      StatusCode::kInvalidPrivacy);
  EXPECT_EQ(session.releases(), 0);
  EXPECT_TRUE(
      session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemove).ok());
  EXPECT_TRUE(
      session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemoveUser, 3)
          .ok());
}

TEST(SessionTest, BudgetsAddUpAsTheDecimalsWritten) {
  // Each sum is exactly the total in decimal, though not in binary (0.2 +
  // 0.8 is 1.0000000000000002 in doubles; ten 0.1 are 1 + 5.6e-17 exactly).
  const PrivacyBudget one = PrivacyBudget::Pure(1);
  EXPECT_TRUE(AllFit(one, Pure({0.2, 0.8})));
  EXPECT_TRUE(AllFit(one, Pure({0.1, 0.9})));
  EXPECT_TRUE(AllFit(one, Pure({0.7, 0.2, 0.1})));
  EXPECT_TRUE(AllFit(one, Pure(std::vector<double>(10, 0.1))));
  EXPECT_TRUE(AllFit(PrivacyBudget::Pure(3), Pure({0.1, 0.2, 2.7})));
  EXPECT_TRUE(AllFit(PrivacyBudget::Zcdp(1),
                     {PrivacyBudget::Zcdp(0.3), PrivacyBudget::Zcdp(0.7)}));
  EXPECT_TRUE(AllFit(
      PrivacyBudget::Approx(1, 1e-6),
      {PrivacyBudget::Approx(0.2, 3e-7), PrivacyBudget::Approx(0.8, 7e-7)}));
  // 10^-9 more is refused.
  EXPECT_FALSE(AllFit(one, Pure({0.2, 0.800000001})));
  EXPECT_FALSE(AllFit(one, Pure({0.1, 0.900000001})));
  EXPECT_FALSE(AllFit(one, Pure({0.7, 0.2, 0.100000001})));
  std::vector<double> tenths(9, 0.1);
  tenths.push_back(0.100000001);
  EXPECT_FALSE(AllFit(one, Pure(tenths)));
  EXPECT_FALSE(AllFit(PrivacyBudget::Pure(3), Pure({0.1, 0.2, 2.700000001})));
  EXPECT_FALSE(
      AllFit(PrivacyBudget::Zcdp(1),
             {PrivacyBudget::Zcdp(0.3), PrivacyBudget::Zcdp(0.700000001)}));
  EXPECT_FALSE(AllFit(PrivacyBudget::Approx(1, 1e-6),
                      {PrivacyBudget::Approx(0.2, 3e-7),
                       PrivacyBudget::Approx(0.8, 7.00000001e-7)}));
  // And even 10^-17 more: the comparison is exact.
  EXPECT_FALSE(AllFit(one, Pure({0.2, 0.8, 1e-17})));

  // The ledger prints as written, and the refusal names the exact sums.
  PrivacySession session =
      PrivacySession::Create(one, Neighbouring::kAddRemove).value();
  ASSERT_TRUE(
      session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemove).ok());
  ASSERT_TRUE(
      session.Charge(PrivacyBudget::Pure(0.2), Neighbouring::kAddRemove).ok());
  EXPECT_EQ(session.SpentText(), "epsilon = 0.3");
  EXPECT_EQ(session.Spent().epsilon, 0.3);
  EXPECT_EQ(session.Remaining().epsilon, 0.7);
  const Status over = session.Charge(PrivacyBudget::Pure(0.700000001),
                                     Neighbouring::kAddRemove);
  EXPECT_EQ(over.code(), StatusCode::kBudgetExceeded);
  EXPECT_NE(over.message().find("it would make epsilon = 1.000000001"),
            std::string::npos)
      << over.message();
  ASSERT_TRUE(
      session.Charge(PrivacyBudget::Pure(0.7), Neighbouring::kAddRemove).ok());
  EXPECT_EQ(session.Spent().epsilon, 1);
  EXPECT_EQ(session.Remaining().epsilon, 0);
}

TEST(SessionTest, GroupPrivacyChargesExactMultiples) {
  // An add-remove release in a replace-one session counts twice: 2 x 0.1
  // five times is exactly 1.
  PrivacySession session =
      PrivacySession::Create(PrivacyBudget::Pure(1), Neighbouring::kReplaceOne)
          .value();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        session.Charge(PrivacyBudget::Pure(0.1), Neighbouring::kAddRemove).ok())
        << i;
  }
  EXPECT_EQ(session.Spent().epsilon, 1);
  EXPECT_FALSE(
      session.Check(PrivacyBudget::Pure(1e-12), Neighbouring::kAddRemove).ok());
  // rho four times over: 4 x 0.025 x 10 is 1.
  PrivacySession zcdp =
      PrivacySession::Create(PrivacyBudget::Zcdp(1), Neighbouring::kReplaceOne)
          .value();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        zcdp.Charge(PrivacyBudget::Zcdp(0.025), Neighbouring::kAddRemove).ok());
  }
  EXPECT_EQ(zcdp.Spent().rho, 1);
  // (epsilon, delta) twice over: 2 epsilon and (1 + e^epsilon) delta (group
  // privacy for two records), rounded up; the next delta fits exactly what
  // is left below the total, and not more.
  PrivacySession approx = PrivacySession::Create(PrivacyBudget::Approx(1, 1e-6),
                                                 Neighbouring::kReplaceOne)
                              .value();
  ASSERT_TRUE(
      approx.Charge(PrivacyBudget::Approx(0.1, 2e-7), Neighbouring::kAddRemove)
          .ok());
  const double grown = 2e-7 * (1 + std::exp(0.1));
  EXPECT_EQ(approx.Spent().epsilon, 0.2);
  EXPECT_GE(approx.Spent().delta, grown);
  EXPECT_LE(approx.Spent().delta, grown * (1 + 1e-12));
  // A pure release in a zCDP session is epsilon^2 / 2, exactly: 0.2^2 / 2 =
  // 0.02, fifty of them make 1.
  PrivacySession squares =
      PrivacySession::Create(PrivacyBudget::Zcdp(1), Neighbouring::kAddRemove)
          .value();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(
        squares.Charge(PrivacyBudget::Pure(0.2), Neighbouring::kAddRemove).ok())
        << i;
  }
  EXPECT_FALSE(
      squares.Check(PrivacyBudget::Zcdp(1e-15), Neighbouring::kAddRemove).ok());
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
