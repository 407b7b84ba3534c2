#include "core/discrete_noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/random.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

// Chi-square of draws against an exact pmf on [-k, k], tails pooled.
template <typename Draw, typename Pmf>
void CheckPmf(Draw draw, Pmf pmf, int64_t k, const char* what) {
  const int draws = 100000;
  std::vector<double> counts(2 * k + 3, 0), probabilities(2 * k + 3, 0);
  for (int i = 0; i < draws; ++i) {
    const int64_t x = draw();
    const size_t cell = x < -k ? 0 : (x > k ? 2 * k + 2 : x + k + 1);
    counts[cell] += 1;
  }
  double inside = 0;
  for (int64_t x = -k; x <= k; ++x) {
    probabilities[x + k + 1] = pmf(x);
    inside += pmf(x);
  }
  probabilities[0] = probabilities[2 * k + 2] = (1 - inside) / 2;
  double df;
  const double statistic =
      testing::ChiSquare(counts, probabilities, draws, &df);
  EXPECT_LT(statistic, testing::ChiSquareCritical(df)) << what;
}

TEST(DiscreteNoiseTest, BernoulliExpMinusHasTheRightFrequency) {
  SeededRandom rng(81);
  for (auto [a, b] : std::vector<std::pair<int, int>>{
           {0, 1}, {3, 10}, {1, 1}, {5, 2}, {40, 7}}) {
    const int draws = 100000;
    int hits = 0;
    for (int i = 0; i < draws; ++i) hits += BernoulliExpMinus(rng, a, b);
    const double p = std::exp(-static_cast<double>(a) / b);
    const double sd = std::sqrt(p * (1 - p) / draws) + 1e-12;
    EXPECT_NEAR(static_cast<double>(hits) / draws, p, 5 * sd + 1e-9)
        << a << "/" << b;
  }
}

TEST(DiscreteNoiseTest, RationalsAreAtLeastTheRequestAndClose) {
  for (double x : {1e-9, 0.001, 0.3, 1.0, 1.0 / 3, 7.5, 12345.678, 1e9}) {
    const StatusOr<Rational> scale = LaplaceScaleAtLeast(x);
    ASSERT_TRUE(scale.ok());
    EXPECT_GE(scale.value().Value(), x);
    EXPECT_LE(scale.value().Value(), x * (1 + 1e-6) + 1e-11) << x;
    const StatusOr<Rational> variance = GaussianVarianceAtLeast(x);
    ASSERT_TRUE(variance.ok());
    EXPECT_GE(variance.value().Value(), x);
  }
  EXPECT_EQ(LaplaceScaleAtLeast(2e12).status().code(),
            StatusCode::kInvalidPrivacy);
  EXPECT_EQ(LaplaceScaleAtLeast(0).status().code(),
            StatusCode::kInvalidPrivacy);
  EXPECT_EQ(GaussianVarianceAtLeast(NAN).status().code(),
            StatusCode::kInvalidPrivacy);
}

TEST(DiscreteNoiseTest, DiscreteLaplaceMatchesItsPmf) {
  SeededRandom rng(82);
  for (double scale : {0.4, 1.0, 2.7, 40.0}) {
    const Rational r = LaplaceScaleAtLeast(scale).value();
    CheckPmf([&] { return SampleDiscreteLaplace(rng, r); },
             [&](int64_t x) { return DiscreteLaplacePmf(x, r.Value()); },
             static_cast<int64_t>(6 * scale) + 2, "laplace");
  }
}

TEST(DiscreteNoiseTest, DiscreteGaussianMatchesItsPmf) {
  SeededRandom rng(83);
  for (double variance : {0.2, 1.0, 6.5, 400.0}) {
    const Rational r = GaussianVarianceAtLeast(variance).value();
    CheckPmf([&] { return SampleDiscreteGaussian(rng, r); },
             [&](int64_t x) { return DiscreteGaussianPmf(x, r.Value()); },
             static_cast<int64_t>(5 * std::sqrt(variance)) + 2, "gaussian");
  }
}

TEST(DiscreteNoiseTest, CountNoiseMeetsItsGuarantee) {
  // Pure: a count moved by 1 changes every output's probability by at most
  // e^epsilon.
  for (double epsilon : {0.1, 1.0, 3.0}) {
    const CountNoise noise =
        CountNoiseFor(PrivacyBudget::Pure(epsilon)).value();
    for (int64_t y = -200; y <= 200; ++y) {
      const double ratio = std::log(noise.Pmf(y) / noise.Pmf(y - 1));
      ASSERT_LE(std::fabs(ratio), epsilon + 1e-12);
    }
  }
  // zCDP: the Renyi divergence of order alpha between the noise and the noise
  // shifted by 1 is at most alpha rho.
  for (double rho : {0.05, 0.5, 2.0}) {
    const CountNoise noise = CountNoiseFor(PrivacyBudget::Zcdp(rho)).value();
    for (double alpha : {1.5, 2.0, 5.0, 20.0}) {
      // log pmf(y) = -y^2 / (2 v) - log Z, in closed form so that no
      // underflowed pmf turns into 0 * infinity.
      const double v = noise.parameter.Value();
      const double log_z = -std::log(noise.Pmf(0));
      const int64_t reach =
          static_cast<int64_t>(10 * std::sqrt(v) * alpha) + 10;
      std::vector<double> exponents;
      double top = -INFINITY;
      for (int64_t y = -reach; y <= reach; ++y) {
        const double yy = static_cast<double>(y);
        exponents.push_back(
            -(alpha * yy * yy + (1 - alpha) * (yy - 1) * (yy - 1)) / (2 * v) -
            log_z);
        top = std::max(top, exponents.back());
      }
      double sum = 0;
      for (double e : exponents) sum += std::exp(e - top);
      const double divergence = (top + std::log(sum)) / (alpha - 1);
      EXPECT_LE(divergence, alpha * rho + 1e-9) << rho << " " << alpha;
      EXPECT_GT(divergence, 0.5 * alpha * rho) << "not vacuous";
    }
  }
}

}  // namespace
}  // namespace dpq
