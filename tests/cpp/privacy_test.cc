#include "core/privacy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/agg_tree.h"
#include "core/decimal.h"
#include "core/discrete_noise.h"
#include "core/random.h"
#include "core/tree_cdf.h"

namespace dpq {
namespace {

TEST(PrivacyBudgetTest, AcceptsExactlyOnePositiveFiniteBudget) {
  StatusOr<PrivacyBudget> pure = MakePrivacyBudget(1.5, std::nullopt);
  ASSERT_TRUE(pure.ok());
  EXPECT_EQ(pure.value().kind, PrivacyBudget::Kind::kPure);
  EXPECT_EQ(pure.value().epsilon, 1.5);
  StatusOr<PrivacyBudget> zcdp = MakePrivacyBudget(std::nullopt, 0.25);
  ASSERT_TRUE(zcdp.ok());
  EXPECT_EQ(zcdp.value().kind, PrivacyBudget::Kind::kZcdp);
  EXPECT_EQ(zcdp.value().rho, 0.25);
}

TEST(PrivacyBudgetTest, RejectsMissingBothAndBadValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (auto [epsilon, rho] :
       std::vector<std::pair<std::optional<double>, std::optional<double>>>{
           {std::nullopt, std::nullopt},
           {1.0, 1.0},
           {0.0, std::nullopt},
           {-1.0, std::nullopt},
           {nan, std::nullopt},
           {inf, std::nullopt},
           {std::nullopt, 0.0},
           {std::nullopt, -0.5},
           {std::nullopt, nan},
           {std::nullopt, inf}}) {
    StatusOr<PrivacyBudget> budget = MakePrivacyBudget(epsilon, rho);
    EXPECT_FALSE(budget.ok());
    EXPECT_EQ(budget.status().code(), StatusCode::kInvalidPrivacy);
    EXPECT_FALSE(budget.status().message().empty());
  }
}

TEST(PrivacyBudgetTest, ExponentialMechanismSplits) {
  EXPECT_DOUBLE_EQ(
      ExponentialMechanismEpsilonPerPart(PrivacyBudget::Pure(1.0), 4), 0.25);
  // rho / L per level at epsilon^2 / 8 each: epsilon = sqrt(8 rho / L).
  const double epsilon =
      ExponentialMechanismEpsilonPerPart(PrivacyBudget::Zcdp(0.5), 4);
  EXPECT_DOUBLE_EQ(epsilon, 1.0);
  EXPECT_DOUBLE_EQ(4 * epsilon * epsilon / 8, 0.5);
}

// a / b <= c exactly (b, c > 0): fma gives the sign of a - b c exactly.
bool AtMostQuotient(double c, double a, double b) {
  return std::fma(-c, b, a) >= 0;
}

// x + y <= a exactly: TwoSum gives the exact sum as s + error.
bool SumAtMost(double x, double y, double a) {
  const double sum = x + y;
  const double y_part = sum - x;
  const double error = (x - (sum - y_part)) + (y - y_part);
  return sum < a || (sum == a && error <= 0);
}

TEST(DirectedRoundingTest, SharesRoundDownAndScalesUp) {
  for (double epsilon : {1.0 / 3.0, 0.1, 0.7, 1e-7, 3.0, 1e300}) {
    for (int parts : {3, 7, 10, 24}) {
      const double share = DivideDown(epsilon, parts);
      EXPECT_TRUE(AtMostQuotient(share, epsilon, parts)) << epsilon << parts;
      EXPECT_GT(share, 0.999999 * epsilon / parts);
      const double root = SqrtDown(epsilon);
      EXPECT_LE(std::fma(root, root, -epsilon), 0);
    }
    const double scale = ReciprocalUp(epsilon);
    EXPECT_GE(std::fma(scale, epsilon, -1.0), 0) << epsilon;
  }
  // Remainders round down: d <= a - b exactly, and a path of shares and
  // remainders, as AQ's per-path split takes them, never sums above the
  // whole: each step's share plus what is left is at most what was left.
  for (double a : {1.0, 0.1, 0.7, 1e-7, 3.0}) {
    for (double b : {a / 3, a / 7, a * 0.999, 1e-17 * a, 0.0}) {
      const double d = SubtractDown(a, b);
      EXPECT_TRUE(SumAtMost(d, b, a)) << a << " " << b;
      EXPECT_GE(d, 0);
      EXPECT_GT(d, (a - b) - 4e-16 * a);
    }
    double left = a;
    for (int height = 7; height >= 1; --height) {
      const double share = DivideDown(left, height);
      const double rest = SubtractDown(left, share);
      EXPECT_TRUE(SumAtMost(share, rest, left)) << a << " " << height;
      left = rest;
    }
  }
  // The case the review found: fl(1 / fl(1/3)) is exactly 3, below the scale
  // 1 / fl(1/3) that epsilon = fl(1/3) needs.
  EXPECT_EQ(1 / (1.0 / 3.0), 3.0);
  EXPECT_GT(ReciprocalUp(1.0 / 3.0), 3.0);
}

TEST(DirectedRoundingTest, EverySignRoundsTheSafeWay) {
  // Negative operands: rounding "down" by moving toward 0 would go up. Each
  // result is checked exactly (fma, TwoSum) against the exact value, over
  // values where the correctly rounded result falls on either side.
  int down_moved = 0;
  for (double a : {-1.0, -0.1, -0.7, -1e-7, -3.0, 1.0, 0.3}) {
    for (double b : {3.0, 7.0, 0.1, -3.0, -0.7, 10.0}) {
      const double q = DivideDown(a, b);
      const double q_error = std::fma(q, b, -a);  // (q - a / b) b
      EXPECT_TRUE(b > 0 ? q_error <= 0 : q_error >= 0) << a << " / " << b;
      down_moved += q != a / b;
      const double p = MultiplyDown(a, b);
      EXPECT_GE(std::fma(a, b, -p), 0) << a << " * " << b;
      const double u = MultiplyUp(a, b);
      EXPECT_LE(std::fma(a, b, -u), 0) << a << " * " << b;
      // d <= a - b exactly: d + b <= a, by TwoSum of d and b.
      const double d = SubtractDown(a, b);
      EXPECT_TRUE(SumAtMost(d, b, a)) << a << " - " << b;
      const double sum = AddUp(a, b);
      EXPECT_FALSE(SumAtMost(a, b, std::nextafter(sum, -INFINITY)))
          << a << " + " << b;
    }
    const double r = ReciprocalUp(a);
    const double r_error = std::fma(r, a, -1.0);  // (r - 1 / a) a
    EXPECT_TRUE(a > 0 ? r_error >= 0 : r_error <= 0) << "1 / " << a;
  }
  EXPECT_GT(down_moved, 5);  // the cases do reach the correction
  EXPECT_GE(RoundUpUlps(-0.1, 1), -0.1);
  EXPECT_GT(RoundUpUlps(-0.1, 1), -0.1);
}

// The doubles mechanisms run with never exceed the decimals written.
// ProductMinus has the sign of the exact a b - c (fma's), and is 0 only
// when that is: for c at and a few ulps either side of fl(a b), on random
// factors of every magnitude the split covers and past it (fma's side),
// with zeros, signs, subnormals and products that are exact.
TEST(DirectedRoundingTest, ProductMinusHasTheExactSign) {
  SeededRandom rng(3);
  auto sign = [](double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; };
  auto factor = [&]() {
    const double mantissa = 1 + UniformDouble(rng);
    const int exponent = static_cast<int>(UniformInteger(rng, 1000)) - 500;
    const double x = std::ldexp(mantissa, exponent);
    return UniformInteger(rng, 2) == 0 ? x : -x;
  };
  std::vector<std::pair<double, double>> pairs = {
      {0, 3},
      {3, 0},
      {0.1, 10},
      {1.0 / 3, 3},
      {0.2, 5},
      {0.7, 0.7},
      {1e-320, 1e10},
      {0x1p-450, 0x1p-450},
      {0x1p450, 3},
      {-0.2, 0.25},
      {9007199254740991.0, 9007199254740991.0}};
  for (int i = 0; i < 200000; ++i) pairs.emplace_back(factor(), factor());
  int checked = 0;
  for (const auto& [a, b] : pairs) {
    const double p = a * b;
    if (!std::isfinite(p)) continue;
    double up = p;
    double down = p;
    for (int k = 0; k < 3; ++k) {
      for (double c : {up, down, -up}) {
        const double expected = std::fma(a, b, -c);
        const double got = ProductMinus(a, b, c);
        ASSERT_EQ(sign(got), sign(expected))
            << std::hexfloat << a << " " << b << " " << c;
        ++checked;
      }
      up = std::nextafter(up, HUGE_VAL);
      down = std::nextafter(down, -HUGE_VAL);
    }
    // Far from the product, and a divisor's check as DivideDown makes it.
    ASSERT_EQ(sign(ProductMinus(a, b, 3 * p)), sign(std::fma(a, b, -3 * p)));
    if (b != 0) {
      const double q = a / b;
      ASSERT_EQ(sign(ProductMinus(q, b, a)), sign(std::fma(q, b, -a)))
          << std::hexfloat << a << " " << b;
    }
  }
  EXPECT_GT(checked, 1500000);
}

TEST(DirectedRoundingTest, MechanismsRunAtOrBelowTheDecimalsWritten) {
  for (double x : {0.2, 0.1, 0.3, 0.7, 0.8, 0.9, 1.0, 2.7, 1e-9, 0.05, 1.1,
                   1e-5, 0.123456789}) {
    const PrivacyBudget running =
        AtOrBelowWritten(PrivacyBudget::Approx(x, x / 10));
    EXPECT_LE(Decimal::Exact(running.epsilon), Decimal::Written(x)) << x;
    EXPECT_LE(Decimal::Exact(running.delta), Decimal::Written(x / 10)) << x;
    // And it is the largest such double.
    EXPECT_LT(Decimal::Written(x),
              Decimal::Exact(std::nextafter(running.epsilon, 1e300)))
        << x;
    EXPECT_LE(Decimal::Exact(AtOrBelowWritten(PrivacyBudget::Zcdp(x)).rho),
              Decimal::Written(x));
  }
  EXPECT_EQ(AtOrBelowWritten(PrivacyBudget::Pure(0.2)).epsilon,
            std::nextafter(0.2, 0.0));
  EXPECT_EQ(AtOrBelowWritten(PrivacyBudget::Pure(0.3)).epsilon, 0.3);
}

// num / den >= 1 / epsilon exactly, i.e. num epsilon >= den.
bool ScaleAtLeastReciprocal(const Rational& r, double epsilon) {
  const double n = static_cast<double>(r.numerator);
  const double product = n * epsilon;
  const double error = std::fma(n, epsilon, -product);
  const double d = static_cast<double>(r.denominator);
  return product > d || (product == d && error >= 0);
}

TEST(DirectedRoundingTest, CountNoiseIsNeverBelowTheExactScale) {
  for (double epsilon : {1.0 / 3.0, 0.1, 0.7, 2.0 / 3.0, 1.0 / 7.0}) {
    const StatusOr<CountNoise> noise =
        CountNoiseFor(PrivacyBudget::Pure(epsilon));
    ASSERT_TRUE(noise.ok());
    EXPECT_TRUE(ScaleAtLeastReciprocal(noise.value().parameter, epsilon))
        << epsilon;
    // AggTree's levels: each gets a share rounded down, hence a scale up.
    AggTreeShape shape;
    shape.height = 3;
    const StatusOr<CountNoise> level =
        AggTreeNoise(shape, PrivacyBudget::Pure(epsilon));
    ASSERT_TRUE(level.ok());
    EXPECT_TRUE(ScaleAtLeastReciprocal(level.value().parameter,
                                       epsilon / 3 * (1 - 1e-15)));
  }
  // The tree CDF's level shares add up to at most the budget.
  for (double epsilon : {1.0 / 3.0, 0.7}) {
    for (TreeBudgetSplit split :
         {TreeBudgetSplit::kUniform, TreeBudgetSplit::kMinVariance}) {
      TreeCdfShape shape;
      shape.cells = 1 << 10;
      shape.split = split;
      const std::vector<PrivacyBudget> shares =
          TreeCdfLevelBudgets(shape, PrivacyBudget::Pure(epsilon));
      long double sum = 0;
      for (const PrivacyBudget& share : shares) sum += share.epsilon;
      EXPECT_LE(sum, static_cast<long double>(epsilon));
    }
  }
}

}  // namespace
}  // namespace dpq
