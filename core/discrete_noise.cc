#include "core/discrete_noise.h"

#include <cmath>
#include <string>

namespace dpq {
namespace {

constexpr uint64_t kTwoTo40 = uint64_t{1} << 40;

Uint128 Random128(RandomSource& rng) {
  return (static_cast<Uint128>(rng.NextUint64()) << 64) | rng.NextUint64();
}

// The largest power of two d <= limit with value * d <= 2^40, at least 1.
uint64_t DenominatorFor(double value, uint64_t limit) {
  uint64_t denominator = 1;
  while (denominator * 2 <= limit &&
         value * static_cast<double>(denominator * 2) <=
             static_cast<double>(kTwoTo40)) {
    denominator *= 2;
  }
  return denominator;
}

StatusOr<Rational> AtLeast(const char* what, double value, double limit,
                           uint64_t denominator_limit) {
  if (!std::isfinite(value) || !(value > 0)) {
    return Status(StatusCode::kInvalidPrivacy,
                  std::string(what) + " must be finite and > 0");
  }
  if (value > limit) {
    return Status(StatusCode::kInvalidPrivacy,
                  std::string(what) + " " + std::to_string(value) +
                      " is above the supported 2^40: the budget is too small "
                      "for this mechanism's exact noise");
  }
  Rational r;
  r.denominator = DenominatorFor(value, denominator_limit);
  // ceil in floating point, then fix any rounding so that r >= value exactly:
  // r.numerator / r.denominator is exact in double (both below 2^53).
  r.numerator = static_cast<uint64_t>(
      std::ceil(value * static_cast<double>(r.denominator)));
  while (r.Value() < value) ++r.numerator;
  if (r.numerator == 0) r.numerator = 1;
  return r;
}

}  // namespace

StatusOr<Rational> LaplaceScaleAtLeast(double scale) {
  return AtLeast("discrete Laplace scale", scale, kMaxLaplaceScale,
                 uint64_t{1} << 40);
}

StatusOr<Rational> GaussianVarianceAtLeast(double variance) {
  // Keeps (|Y| denominator t)^2 within 128 bits in SampleDiscreteGaussian.
  const double t = std::floor(std::sqrt(variance)) + 1;
  uint64_t limit = uint64_t{1} << 29;
  while (limit > 1 && static_cast<double>(limit) * t > 536870912.0) limit /= 2;
  return AtLeast("discrete Gaussian variance", variance, kMaxGaussianVariance,
                 limit);
}

Uint128 UniformInteger128(RandomSource& rng, Uint128 bound) {
  if (bound <= 1) return 0;  // callers pass bound >= 1
  const Uint128 max = ~static_cast<Uint128>(0);
  const Uint128 limit = max - max % bound;
  Uint128 value;
  do {
    value = Random128(rng);
  } while (value >= limit && rng.healthy());
  return value % bound;
}

bool BernoulliRational(RandomSource& rng, Uint128 numerator,
                       Uint128 denominator) {
  return UniformInteger128(rng, denominator) < numerator;
}

bool BernoulliExpMinus(RandomSource& rng, Uint128 numerator,
                       Uint128 denominator) {
  // gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) * exp(-(gamma mod 1)); stop
  // at the first failure, so the loop is short whatever floor(gamma) is.
  while (numerator > denominator) {
    if (!BernoulliExpMinus(rng, 1, 1)) return false;
    numerator -= denominator;
  }
  // gamma in [0, 1]: the smallest K with Bernoulli(gamma / K) = 0 is odd with
  // probability exp(-gamma) (CKS 2020, Algorithm 1).
  uint64_t k = 1;
  while (BernoulliRational(rng, numerator, denominator * k)) {
    ++k;
    if (!rng.healthy()) break;
  }
  return k % 2 == 1;
}

int64_t SampleDiscreteLaplace(RandomSource& rng, const Rational& scale) {
  // P(x) proportional to exp(-|x| s / t) with scale = t / s (CKS Algorithm 2).
  const uint64_t t = scale.numerator;
  const uint64_t s = scale.denominator;
  while (rng.healthy()) {
    const uint64_t u = static_cast<uint64_t>(UniformInteger128(rng, t));
    if (!BernoulliExpMinus(rng, u, t)) continue;
    uint64_t v = 0;
    while (BernoulliExpMinus(rng, 1, 1) && rng.healthy()) ++v;
    // x = u + t v is exponential in x / t; v > 2^23 has probability below
    // e^-8000000 and is redrawn so that x fits 64 bits.
    if (v > (uint64_t{1} << 23)) continue;
    const uint64_t x = u + t * v;
    const uint64_t y = x / s;
    const bool negative = BernoulliRational(rng, 1, 2);
    if (negative && y == 0) continue;
    return negative ? -static_cast<int64_t>(y) : static_cast<int64_t>(y);
  }
  return 0;
}

int64_t SampleDiscreteGaussian(RandomSource& rng, const Rational& variance) {
  // CKS Algorithm 3: discrete Laplace proposals with scale t = floor(sigma)+1,
  // accepted with probability exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2)).
  const uint64_t num = variance.numerator;
  const uint64_t den = variance.denominator;
  const uint64_t t =
      static_cast<uint64_t>(std::floor(std::sqrt(variance.Value()))) + 1;
  const Rational proposal{t, 1};
  while (rng.healthy()) {
    const int64_t y = SampleDiscreteLaplace(rng, proposal);
    const uint64_t magnitude = static_cast<uint64_t>(y < 0 ? -y : y);
    // |y| above 2^34 has probability below exp(-2^13) here; redrawn so that
    // the numerator below fits 128 bits.
    if (magnitude > (uint64_t{1} << 34)) continue;
    // gamma = (|y| den t - num)^2 / (2 num den t^2), all in integers.
    const Uint128 scaled = static_cast<Uint128>(magnitude) * den * t;
    const Uint128 difference = scaled >= num ? scaled - num : num - scaled;
    const Uint128 numerator = difference * difference;
    const Uint128 denominator = static_cast<Uint128>(2) * num * den * t * t;
    if (BernoulliExpMinus(rng, numerator, denominator)) return y;
  }
  return 0;
}

int64_t CountNoise::Sample(RandomSource& rng) const {
  return kind == Kind::kLaplace ? SampleDiscreteLaplace(rng, parameter)
                                : SampleDiscreteGaussian(rng, parameter);
}

double CountNoise::Pmf(int64_t x) const {
  return kind == Kind::kLaplace ? DiscreteLaplacePmf(x, parameter.Value())
                                : DiscreteGaussianPmf(x, parameter.Value());
}

StatusOr<CountNoise> CountNoiseFor(const PrivacyBudget& share) {
  CountNoise noise;
  if (share.kind == PrivacyBudget::Kind::kZcdp) {
    noise.kind = CountNoise::Kind::kGaussian;
    StatusOr<Rational> variance = GaussianVarianceAtLeast(1 / (2 * share.rho));
    if (!variance.ok()) return variance.status();
    noise.parameter = variance.value();
    return noise;
  }
  if (share.kind != PrivacyBudget::Kind::kPure) {
    return Status(StatusCode::kInvalidPrivacy,
                  "count noise takes pure epsilon or rho");
  }
  StatusOr<Rational> scale = LaplaceScaleAtLeast(1 / share.epsilon);
  if (!scale.ok()) return scale.status();
  noise.parameter = scale.value();
  return noise;
}

double DiscreteLaplacePmf(int64_t x, double scale) {
  const double r = std::exp(-1.0 / scale);
  return (1 - r) / (1 + r) *
         std::exp(-std::fabs(static_cast<double>(x)) / scale);
}

double DiscreteGaussianPmf(int64_t x, double variance) {
  // Normaliser summed outward until terms vanish in double precision.
  double normaliser = 1;
  for (int64_t k = 1;; ++k) {
    const double term =
        2 * std::exp(-static_cast<double>(k) * k / (2 * variance));
    normaliser += term;
    if (term < 1e-18 * normaliser) break;
  }
  return std::exp(-static_cast<double>(x) * x / (2 * variance)) / normaliser;
}

}  // namespace dpq
