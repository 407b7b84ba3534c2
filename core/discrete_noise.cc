#include "core/discrete_noise.h"

#include <cmath>
#include <numeric>
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
                  std::string(what) + " " + FormatNumber(value) +
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
  // Lowest terms: the same value, and small integers keep the samplers in
  // 64-bit arithmetic (4 / 1 rather than 2^40 / 2^38 for a scale of 4).
  const uint64_t divisor = std::gcd(r.numerator, r.denominator);
  r.numerator /= divisor;
  r.denominator /= divisor;
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

namespace {

// Random bits one at a time from 64-bit words: the samplers below compare
// uniforms with probabilities lazily, bit by bit, and need about two bits per
// Bernoulli trial instead of a whole word.
class BitReader {
 public:
  explicit BitReader(RandomSource& rng) : rng_(rng) {}
  bool Bit() {
    if (left_ == 0) {
      word_ = rng_.NextUint64();
      healthy_ = rng_.healthy();
      left_ = 64;
    }
    const bool bit = (word_ & 1) != 0;
    word_ >>= 1;
    --left_;
    return bit;
  }
  uint64_t Bits(int count) {
    uint64_t value = 0;
    for (int i = 0; i < count; ++i) value = (value << 1) | (Bit() ? 1 : 0);
    return value;
  }
  // The source's health as of the last word read: loops stop on it without
  // a virtual call per bit.
  bool healthy() const { return healthy_; }
  RandomSource& source() { return rng_; }

 private:
  RandomSource& rng_;
  uint64_t word_ = 0;
  int left_ = 0;
  bool healthy_ = true;
};

// Uniform in [0, bound), bound >= 1: rejection on the fewest bits that hold
// bound - 1 (exact; fewer than two rounds on average).
Uint128 Uniform(BitReader& bits, Uint128 bound) {
  if (bound <= 1) return 0;
  if (bound > ~uint64_t{0}) return UniformInteger128(bits.source(), bound);
  const uint64_t b = static_cast<uint64_t>(bound);
  int width = 0;
  while (width < 64 && ((b - 1) >> width) != 0) ++width;
  uint64_t value;
  do {
    value = bits.Bits(width);
  } while (value >= b && bits.healthy());
  return value % b;
}

// True with probability numerator / denominator: a uniform U in [0, 1) is
// compared with p = numerator / denominator one binary digit at a time, each
// digit of p from exact long division. `Word` holds 2 denominator.
template <typename Word>
bool BernoulliDigits(BitReader& bits, Word remainder, Word denominator) {
  while (bits.healthy()) {
    remainder <<= 1;
    const bool p_bit = remainder >= denominator;
    if (p_bit) remainder -= denominator;
    const bool u_bit = bits.Bit();
    if (u_bit != p_bit) return p_bit;  // U's digit 0 where p's is 1: U < p
    if (remainder == 0) return false;  // p's digits end: U >= p
  }
  return false;
}

// denominator <= 2^127; 64-bit words when it fits in 63 bits (WASM emulates
// 128-bit arithmetic).
bool Bernoulli(BitReader& bits, Uint128 numerator, Uint128 denominator) {
  if (numerator == 0) return false;
  if (numerator >= denominator) return true;
  if (denominator < (Uint128{1} << 63)) {
    return BernoulliDigits<uint64_t>(bits, static_cast<uint64_t>(numerator),
                                     static_cast<uint64_t>(denominator));
  }
  return BernoulliDigits<Uint128>(bits, numerator, denominator);
}

// True with probability exp(-numerator / denominator). `Word` must hold
// denominator * (the loop's k): uint64_t for the discrete Laplace's
// denominators below 2^40, Uint128 for the discrete Gaussian's.
template <typename Word>
bool ExpMinus(BitReader& bits, Word numerator, Word denominator) {
  // gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) * exp(-(gamma mod 1)); stop
  // at the first failure, so the loop is short whatever floor(gamma) is.
  while (numerator > denominator) {
    if (!ExpMinus<Word>(bits, 1, 1)) return false;
    numerator -= denominator;
  }
  // gamma in [0, 1]: the smallest K with Bernoulli(gamma / K) = 0 is odd with
  // probability exp(-gamma) (CKS 2020, Algorithm 1).
  Word k = 1;
  while (numerator >= denominator * k ||
         (numerator > 0 &&
          BernoulliDigits<Word>(bits, numerator, denominator * k))) {
    ++k;
    if (!bits.healthy()) break;
  }
  return k % 2 == 1;
}

int64_t DiscreteLaplace(BitReader& bits, const Rational& scale) {
  // P(x) proportional to exp(-|x| s / t) with scale = t / s (CKS Algorithm 2).
  const uint64_t t = scale.numerator;
  const uint64_t s = scale.denominator;
  while (bits.healthy()) {
    const uint64_t u = static_cast<uint64_t>(Uniform(bits, t));
    if (!ExpMinus<uint64_t>(bits, u, t)) continue;
    uint64_t v = 0;
    while (ExpMinus<uint64_t>(bits, 1, 1) && bits.healthy()) ++v;
    // x = u + t v is exponential in x / t; v > 2^23 has probability below
    // e^-8000000 and is redrawn so that x fits 64 bits.
    if (v > (uint64_t{1} << 23)) continue;
    const uint64_t x = u + t * v;
    const uint64_t y = x / s;
    const bool negative = bits.Bit();
    if (negative && y == 0) continue;
    return negative ? -static_cast<int64_t>(y) : static_cast<int64_t>(y);
  }
  return 0;
}

int64_t DiscreteGaussian(BitReader& bits, const Rational& variance) {
  // CKS Algorithm 3: discrete Laplace proposals with scale t = floor(sigma)+1,
  // accepted with probability exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2)).
  const uint64_t num = variance.numerator;
  const uint64_t den = variance.denominator;
  const uint64_t t =
      static_cast<uint64_t>(std::floor(std::sqrt(variance.Value()))) + 1;
  const Rational proposal{t, 1};
  while (bits.healthy()) {
    const int64_t y = DiscreteLaplace(bits, proposal);
    const uint64_t magnitude = static_cast<uint64_t>(y < 0 ? -y : y);
    // |y| above 2^34 has probability below exp(-2^13) here; redrawn so that
    // the numerator below fits 128 bits.
    if (magnitude > (uint64_t{1} << 34)) continue;
    // gamma = (|y| den t - num)^2 / (2 num den t^2), all in integers.
    const Uint128 scaled = static_cast<Uint128>(magnitude) * den * t;
    const Uint128 difference = scaled >= num ? scaled - num : num - scaled;
    const Uint128 numerator = difference * difference;
    const Uint128 denominator = static_cast<Uint128>(2) * num * den * t * t;
    if (ExpMinus<Uint128>(bits, numerator, denominator)) return y;
  }
  return 0;
}

}  // namespace

Uint128 UniformInteger128(RandomSource& rng, Uint128 bound) {
  if (bound <= 1) return 0;  // callers pass bound >= 1
  // Native 64-bit rejection when the bound fits (WASM emulates 128 bits).
  if (bound <= ~uint64_t{0}) {
    return UniformInteger(rng, static_cast<uint64_t>(bound));
  }
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
  BitReader bits(rng);
  return Bernoulli(bits, numerator, denominator);
}

bool BernoulliExpMinus(RandomSource& rng, Uint128 numerator,
                       Uint128 denominator) {
  BitReader bits(rng);
  return ExpMinus<Uint128>(bits, numerator, denominator);
}

int64_t SampleDiscreteLaplace(RandomSource& rng, const Rational& scale) {
  BitReader bits(rng);
  return DiscreteLaplace(bits, scale);
}

int64_t SampleDiscreteGaussian(RandomSource& rng, const Rational& variance) {
  BitReader bits(rng);
  return DiscreteGaussian(bits, variance);
}

int64_t CountNoise::Sample(RandomSource& rng) const {
  return kind == Kind::kLaplace ? SampleDiscreteLaplace(rng, parameter)
                                : SampleDiscreteGaussian(rng, parameter);
}

void CountNoise::AddTo(std::vector<int64_t>* counts, RandomSource& rng) const {
  BitReader bits(rng);
  for (int64_t& count : *counts) {
    count += kind == Kind::kLaplace ? DiscreteLaplace(bits, parameter)
                                    : DiscreteGaussian(bits, parameter);
  }
}

double CountNoise::Pmf(int64_t x) const {
  return kind == Kind::kLaplace ? DiscreteLaplacePmf(x, parameter.Value())
                                : DiscreteGaussianPmf(x, parameter.Value());
}

StatusOr<CountNoise> CountNoiseFor(const PrivacyBudget& share) {
  CountNoise noise;
  if (share.kind == PrivacyBudget::Kind::kZcdp) {
    noise.kind = CountNoise::Kind::kGaussian;
    // 2 rho is exact; the variance is rounded up from the exact 1 / (2 rho).
    StatusOr<Rational> variance =
        GaussianVarianceAtLeast(ReciprocalUp(2 * share.rho));
    if (!variance.ok()) return variance.status();
    noise.parameter = variance.value();
    return noise;
  }
  if (share.kind != PrivacyBudget::Kind::kPure) {
    return Status(StatusCode::kInvalidPrivacy,
                  "count noise takes pure epsilon or rho");
  }
  // Rounded up from the exact 1 / epsilon: fl(1 / fl(1/3)) is exactly 3,
  // below 1 / fl(1/3).
  StatusOr<Rational> scale = LaplaceScaleAtLeast(ReciprocalUp(share.epsilon));
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
