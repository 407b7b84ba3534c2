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

// Words from a script, then `fill` forever: drives the samplers' bit paths.
class ScriptedSource final : public RandomSource {
 public:
  ScriptedSource(std::vector<uint64_t> words, uint64_t fill)
      : words_(std::move(words)), fill_(fill) {}
  uint64_t NextUint64() override {
    return next_ < words_.size() ? words_[next_++] : fill_;
  }

 private:
  std::vector<uint64_t> words_;
  uint64_t fill_;
  size_t next_ = 0;
};

TEST(DiscreteNoiseTest, ExpMinusDigitsAreCertain) {
  // exp(-n/d) * 2^256, from Python's decimal module at 120 digits.
  const struct {
    uint64_t n, d;
    uint64_t words[4];
  } cases[] = {
      {1,
       1,
       {0x5e2d58d8b3bcdf1a, 0xbadec7829054f90d, 0xda9805aab56c7733,
        0x3024b9d0a507daed}},
      {1,
       4,
       {0xc75f7cf564105743, 0x415cbc9d6368f3b9, 0x6071095abeaf430d,
        0xbc067f714a3c1787}},
      {3,
       7,
       {0xa6c4b5c76ed590fa, 0x515b4c45aec303f4, 0x8a4e6ed9ba579db0,
        0x51ab796e1b2f187c}},
      {1,
       uint64_t{1} << 40,
       {0xffffffffff000000, 0x00007fffffffffd5, 0x555555555fffffff,
        0xfffdddddddddde38}},
  };
  for (const auto& c : cases) {
    for (int limbs : {2, 4, 8}) {
      const ExpMinusDigits digits = ExpMinusLeadingDigits(c.n, c.d, limbs);
      // Nearly all the precision is certain (the error bound is a few
      // hundred units of the last place).
      EXPECT_GE(digits.count, 64 * limbs - 20) << c.n << "/" << c.d;
      for (int bit = 0; bit < std::min(digits.count, 256); ++bit) {
        const int word = bit / 64;
        const int shift = 63 - bit % 64;
        ASSERT_EQ((digits.words[word] >> shift) & 1,
                  (c.words[word] >> shift) & 1)
            << c.n << "/" << c.d << " digit " << bit << " limbs " << limbs;
      }
    }
  }
  // Out of range: no digits, so a comparison could never decide wrongly.
  EXPECT_EQ(ExpMinusLeadingDigits(5, 4, 2).count, 0);
  EXPECT_EQ(ExpMinusLeadingDigits(0, 4, 2).count, 0);
}

TEST(DiscreteNoiseTest, ExpMinusComparisonIsExactOnEveryPrefix) {
  // The sampler compares a uniform U with exp(-gamma). Script U's first 12
  // bits through all 4096 values, with the rest all 0 (the smallest U of the
  // prefix) and all 1 (the largest): exactly the prefixes entirely below
  // exp(-gamma) must say true with both tails, the one prefix holding it
  // only with the 0 tail. So P(true) is within 2^-12 of exp(-gamma) on the
  // real sampler, not on a formula.
  for (auto [n, d] : std::vector<std::pair<uint64_t, uint64_t>>{
           {1, 1}, {1, 4}, {3, 7}, {5, 16}, {999, 1000}}) {
    const double p = std::exp(-static_cast<double>(n) / d);
    const int below = static_cast<int>(std::floor(p * 4096));
    int with_zeros = 0;
    int with_ones = 0;
    for (uint64_t prefix = 0; prefix < 4096; ++prefix) {
      ScriptedSource zeros({prefix << 52}, 0);
      ScriptedSource ones({(prefix << 52) | ((uint64_t{1} << 52) - 1)},
                          ~uint64_t{0});
      with_zeros += BernoulliExpMinusByDigits(zeros, n, d);
      with_ones += BernoulliExpMinusByDigits(ones, n, d);
    }
    EXPECT_EQ(with_ones, below) << n << "/" << d;
    EXPECT_EQ(with_zeros, below + 1) << n << "/" << d;
  }
}

TEST(DiscreteNoiseTest, ExpMinusComparisonRefinesPastItsDigits) {
  // U equal to exp(-1/4) on its first 1,024 digits (far past the 120 or so
  // computed at first): the comparison must recompute with more precision,
  // and the digits after decide. Then 0s: U < exp(-1/4); 1s: U > it.
  const ExpMinusDigits fine = ExpMinusLeadingDigits(1, 4, 32);
  ASSERT_GE(fine.count, 1024);
  const std::vector<uint64_t> prefix(fine.words.begin(),
                                     fine.words.begin() + 16);
  ScriptedSource zeros(prefix, 0);
  ScriptedSource ones(prefix, ~uint64_t{0});
  EXPECT_TRUE(BernoulliExpMinusByDigits(zeros, 1, 4));
  EXPECT_FALSE(BernoulliExpMinusByDigits(ones, 1, 4));
  // Shorter precisions agree with the longer one where they are certain.
  const ExpMinusDigits coarse = ExpMinusLeadingDigits(1, 4, 2);
  for (int bit = 0; bit < coarse.count; ++bit) {
    ASSERT_EQ((coarse.words[bit / 64] >> (63 - bit % 64)) & 1,
              (fine.words[bit / 64] >> (63 - bit % 64)) & 1);
  }
}

TEST(DiscreteNoiseTest, BulkLaplaceNoiseMatchesItsPmf) {
  // CountNoise::AddTo's table-driven path (the trees' noise).
  SeededRandom rng(84);
  for (double scale : {1.0, 4.0, 40.0 / 3, 0.4}) {
    const Rational r = LaplaceScaleAtLeast(scale).value();
    CountNoise noise;
    noise.parameter = r;
    std::vector<int64_t> batch;
    size_t used = 0;
    CheckPmf(
        [&] {
          if (used == batch.size()) {
            batch.assign(1000, 0);
            noise.AddTo(&batch, rng);
            used = 0;
          }
          return batch[used++];
        },
        [&](int64_t x) { return DiscreteLaplacePmf(x, r.Value()); },
        static_cast<int64_t>(6 * scale) + 2, "bulk laplace");
  }
  // Short batches (a first look's 16 counts) use the per-thread table of
  // the last scale: two scales in turn replace it at every batch, and each
  // still draws its own PMF.
  const Rational twenty = LaplaceScaleAtLeast(20).value();
  const Rational small = LaplaceScaleAtLeast(2.5).value();
  std::vector<int64_t> from_twenty;
  std::vector<int64_t> from_small;
  for (int round = 0; round < 100000 / 16 + 1; ++round) {
    for (const bool first : {true, false}) {
      CountNoise noise;
      noise.parameter = first ? twenty : small;
      std::vector<int64_t> batch(16, 0);
      noise.AddTo(&batch, rng);
      auto& into = first ? from_twenty : from_small;
      into.insert(into.end(), batch.begin(), batch.end());
    }
  }
  for (const bool first : {true, false}) {
    const std::vector<int64_t>& drawn = first ? from_twenty : from_small;
    const Rational r = first ? twenty : small;
    size_t used = 0;
    CheckPmf([&] { return drawn[used++ % drawn.size()]; },
             [&](int64_t x) { return DiscreteLaplacePmf(x, r.Value()); },
             static_cast<int64_t>(6 * r.Value()) + 2, "short batches");
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

TEST(DiscreteNoiseTest, LargeNumeratorScalesDrawTheirPmf) {
  // Scales whose exact rational has a numerator near 2^40 (a budget a hair
  // below its decimal) draw by whole steps (WholeStepTable): single draws
  // and batches, five scales in turn so that the per-thread tables are
  // replaced (four are kept), each against its own PMF.
  SeededRandom rng(85);
  const std::vector<double> scales = {1 + 1e-9, 1.7, 40.0 / 3, 2.5 + 1e-9,
                                      27.4};
  std::vector<Rational> rationals;
  for (double scale : scales) {
    rationals.push_back(LaplaceScaleAtLeast(scale).value());
    ASSERT_GT(rationals.back().numerator, uint64_t{1} << 30) << scale;
  }
  std::vector<std::vector<int64_t>> single(scales.size());
  std::vector<std::vector<int64_t>> batched(scales.size());
  for (int round = 0; round < 100000 / 2; ++round) {
    for (size_t i = 0; i < scales.size(); ++i) {
      single[i].push_back(SampleDiscreteLaplace(rng, rationals[i]));
      CountNoise noise;
      noise.parameter = rationals[i];
      std::vector<int64_t> batch(2, 0);
      noise.AddTo(&batch, rng);
      batched[i].insert(batched[i].end(), batch.begin(), batch.end());
      single[i].push_back(noise.Sample(rng));
    }
  }
  for (size_t i = 0; i < scales.size(); ++i) {
    const double value = rationals[i].Value();
    for (const std::vector<int64_t>* drawn : {&single[i], &batched[i]}) {
      size_t used = 0;
      CheckPmf([&] { return (*drawn)[used++ % drawn->size()]; },
               [&](int64_t x) { return DiscreteLaplacePmf(x, value); },
               static_cast<int64_t>(6 * value) + 2, "whole steps");
    }
  }
}

TEST(DiscreteNoiseTest, WholeStepCountIsExactOnEveryPrefix) {
  // The whole-step count K = #{y in [1, b] : U < a^y}, a = exp(-s / t), on
  // every 14-digit prefix of U with the rest all 0 (the prefix's least U)
  // and all 1 (its greatest): a^y is irrational, so exactly floor(a^y
  // 2^14) prefixes lie wholly below it (K >= y with both tails) and one
  // more holds it (K >= y with the 0 tail only). At the default width and
  // at the narrowest whose powers' digits differ, where U's digits often
  // tie with one power's and the rest of its digits decide. And the digits
  // a count reads decide it: the same K with those digits and any tail.
  constexpr int kPrefix = 14;
  const std::vector<Rational> scales = {
      {17, 10}, {5, 2}, {41, 2}, {10000, 3}, {40961, 10}};
  for (const Rational& scale : scales) {
    const uint64_t b = scale.numerator / scale.denominator;
    for (int requested : {32, 1}) {
      std::vector<int> below_zeros(b + 2, 0);
      std::vector<int> below_ones(b + 2, 0);
      int width = 0;
      int ties = 0;
      for (uint64_t prefix = 0; prefix < (uint64_t{1} << kPrefix); ++prefix) {
        const uint64_t head = prefix << (64 - kPrefix);
        uint64_t read = 0;
        ScriptedSource zeros({head}, 0);
        const uint64_t k0 =
            WholeStepCountForTest(scale, requested, zeros, &width, &read);
        ScriptedSource ones({head | (~uint64_t{0} >> kPrefix)}, ~uint64_t{0});
        uint64_t read_ones = 0;
        const uint64_t k1 =
            WholeStepCountForTest(scale, requested, ones, &width, &read_ones);
        ASSERT_LE(k0, b);
        ASSERT_GE(k0, k1);
        for (uint64_t y = 1; y <= k0; ++y) ++below_zeros[y];
        for (uint64_t y = 1; y <= k1; ++y) ++below_ones[y];
        if (read > static_cast<uint64_t>(width)) ++ties;
        // The digits read, then all 1: the same count.
        if (read < 64) {
          const uint64_t kept =
              read == 0 ? 0 : head >> (64 - read) << (64 - read);
          ScriptedSource tail({kept | (~uint64_t{0} >> read)}, ~uint64_t{0});
          uint64_t again = 0;
          ASSERT_EQ(
              WholeStepCountForTest(scale, requested, tail, &width, &again), k0)
              << scale.numerator << "/" << scale.denominator << " " << prefix;
        }
      }
      const double a = std::exp(-static_cast<double>(scale.denominator) /
                                static_cast<double>(scale.numerator));
      for (uint64_t y = 1; y <= b; ++y) {
        const auto whole = static_cast<int>(
            std::floor(std::pow(a, static_cast<double>(y)) * (1 << kPrefix)));
        ASSERT_EQ(below_ones[y], whole)
            << scale.numerator << "/" << scale.denominator << " y " << y;
        ASSERT_EQ(below_zeros[y], whole + 1)
            << scale.numerator << "/" << scale.denominator << " y " << y;
      }
      if (requested == 32) {
        EXPECT_EQ(width, 32);
      } else {
        EXPECT_LT(width, 32);
        EXPECT_GT(ties, 0) << scale.numerator << "/" << scale.denominator;
      }
    }
  }
}

TEST(DiscreteNoiseTest, WholeStepPowersCarryTheSeriesDigits) {
  // The table's first 32 digits of each a^y (carried by bracketed
  // products) against a^y's own series: a uniform whose first 32 digits
  // are the series' counts y (a tie, decided by the rest of the digits),
  // one a unit below counts y, one a unit above counts y - 1. A wrong
  // digit of any power miscounts one of them.
  for (const Rational& scale :
       std::vector<Rational>{{41, 2}, {10000, 3}, {40961, 10}}) {
    const uint64_t b = scale.numerator / scale.denominator;
    for (uint64_t y = 1; y <= b; ++y) {
      const ExpMinusDigits digits =
          ExpMinusLeadingDigits(y * scale.denominator, scale.numerator, 2);
      ASSERT_GE(digits.count, 64);
      const uint64_t top = digits.words[0] >> 32;
      int width = 0;
      uint64_t read = 0;
      ScriptedSource at({top << 32}, 0);
      ASSERT_EQ(WholeStepCountForTest(scale, 32, at, &width, &read), y);
      ASSERT_GT(read, 32u);
      ScriptedSource below({((top - 1) << 32) | 0xffffffff}, ~uint64_t{0});
      ASSERT_EQ(WholeStepCountForTest(scale, 32, below, &width, &read), y);
      ScriptedSource above({(top + 1) << 32}, 0);
      ASSERT_EQ(WholeStepCountForTest(scale, 32, above, &width, &read), y - 1)
          << scale.numerator << "/" << scale.denominator << " y " << y;
    }
  }
}

TEST(DiscreteNoiseTest, WholeStepTiesDrawThePmf) {
  // Whole draws at the narrowest width, where ties are frequent: each
  // scale against its own PMF.
  SeededRandom rng(86);
  for (const Rational& scale :
       std::vector<Rational>{{17, 10}, {5, 2}, {40, 3}, {137, 5}}) {
    CheckPmf([&] { return WholeStepSampleForTest(scale, 1, rng); },
             [&](int64_t x) { return DiscreteLaplacePmf(x, scale.Value()); },
             static_cast<int64_t>(6 * scale.Value()) + 2, "whole-step ties");
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
