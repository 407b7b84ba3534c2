#include "core/privacy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace
}  // namespace dpq
