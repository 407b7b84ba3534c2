// Exact discrete Laplace and discrete Gaussian samplers (Canonne, Kamath and
// Steinke, "The Discrete Gaussian for Differential Privacy", 2020), with
// integer arithmetic only: no floating-point inverse CDF, whose rounding
// leaks (Mironov 2012). Noise parameters are rationals; the helpers below pick
// a rational at least as large as the scale a mechanism asks for, so the noise
// is never smaller than the privacy analysis assumes.
#ifndef DPQ_CORE_DISCRETE_NOISE_H_
#define DPQ_CORE_DISCRETE_NOISE_H_

#include <cstdint>
#include <vector>

#include "core/bits.h"
#include "core/privacy.h"
#include "core/random.h"
#include "core/status.h"

namespace dpq {

// A positive rational numerator / denominator.
struct Rational {
  uint64_t numerator = 1;
  uint64_t denominator = 1;
  double Value() const {
    return static_cast<double>(numerator) / static_cast<double>(denominator);
  }
};

// Largest discrete Laplace scale and discrete Gaussian variance supported:
// beyond them the integer arithmetic below could overflow. Counts are at
// most 2^31, so larger noise would release nothing anyway. Privacy-relevant
// only in that a request above them is refused, never weakened.
constexpr double kMaxLaplaceScale = 1099511627776.0;      // 2^40
constexpr double kMaxGaussianVariance = 1099511627776.0;  // 2^40

// The smallest rational >= scale whose numerator stays below 2^40, or
// INVALID_PRIVACY when the scale is not finite, not > 0 or above the limit.
StatusOr<Rational> LaplaceScaleAtLeast(double scale);
// The same for a discrete Gaussian variance sigma^2.
StatusOr<Rational> GaussianVarianceAtLeast(double variance);

// Uniform integer in [0, bound), bound >= 1.
Uint128 UniformInteger128(RandomSource& rng, Uint128 bound);
// True with probability numerator / denominator (numerator <= denominator).
bool BernoulliRational(RandomSource& rng, Uint128 numerator,
                       Uint128 denominator);
// True with probability exp(-numerator / denominator).
bool BernoulliExpMinus(RandomSource& rng, Uint128 numerator,
                       Uint128 denominator);

// The leading binary digits of exp(-numerator / denominator) for
// 0 < numerator <= denominator, all certain: the series is summed in fixed
// point with `limbs` 64-bit limbs under a proven error bound, and the digits
// kept are those both ends of the bound share (about 64 limbs - 8 of them).
// No digits when the ratio is out of range or exp(-gamma) is too close to 1
// for this precision.
struct ExpMinusDigits {
  uint64_t numerator = 0;
  uint64_t denominator = 1;
  std::vector<uint64_t> words;  // first digit (2^-1) highest in words[0]
  int count = 0;                // how many digits are certain
};
ExpMinusDigits ExpMinusLeadingDigits(uint64_t numerator, uint64_t denominator,
                                     int limbs);
// Beyond this precision (2^16 bits; reached with probability below 2^-65000)
// a comparison gives up and answers false.
constexpr int kMaxExpMinusLimbs = 1024;
// True with probability exp(-numerator / denominator), 0 <= n <= d, by
// comparing a lazily drawn uniform with those digits (the fast sampler of
// CountNoise::AddTo; exposed for its tests).
bool BernoulliExpMinusByDigits(RandomSource& rng, uint64_t numerator,
                               uint64_t denominator);

// P(x) proportional to exp(-|x| / scale) on the integers (CKS Algorithm 2,
// or by whole steps for a large numerator: CountNoise::AddTo).
int64_t SampleDiscreteLaplace(RandomSource& rng, const Rational& scale);
// The whole-step sampler's parts, for its tests (scales t / s from 1 to
// 4,096, any numerator). Count: K = #{y in [1, b] : U < exp(-y s / t)}, b =
// floor(t / s), for one uniform U read from `rng`, comparing U's first
// `top_bits` digits at once (raised until the powers' leading digits
// differ: *top_bits_used); fewer than the default 32 drive the path where
// U's digits tie with one power's. *consumed: the digits it read. Sample: a
// whole discrete Laplace draw at that width (the table kept per thread).
uint64_t WholeStepCountForTest(const Rational& scale, int top_bits,
                               RandomSource& rng, int* top_bits_used,
                               uint64_t* consumed);
int64_t WholeStepSampleForTest(const Rational& scale, int top_bits,
                               RandomSource& rng);
// P(x) proportional to exp(-x^2 / (2 variance)) on the integers.
int64_t SampleDiscreteGaussian(RandomSource& rng, const Rational& variance);

// Noise for one level of counts of sensitivity 1, given that level's share of
// the budget: pure epsilon gives a discrete Laplace of scale >= 1 / epsilon
// (epsilon-DP); rho gives a discrete Gaussian of variance >= 1 / (2 rho)
// (rho-zCDP, CKS 2020 Theorem 14).
struct CountNoise {
  enum class Kind { kLaplace, kGaussian };
  Kind kind = Kind::kLaplace;
  Rational parameter;  // the scale (Laplace) or the variance (Gaussian)

  int64_t Sample(RandomSource& rng) const;
  // Adds independent noise to every count, sharing random words between
  // draws (6, 10, 17 bits a draw at scales 1, 4, 10). Laplace noise with a
  // scale numerator up to 4,096 takes the table-driven path (the trials of
  // BernoulliExpMinusByDigits; the same distribution, several times faster);
  // a larger numerator with a scale from 1 to 4,096 draws by whole steps
  // (WholeStepTable in discrete_noise.cc; Sample and SampleDiscreteLaplace
  // too); other scales with a numerator up to 2^16 take the table for
  // batches of more than 16 counts.
  void AddTo(std::vector<int64_t>* counts, RandomSource& rng) const;
  double Pmf(int64_t x) const;
};
// `share` must be kPure or kZcdp.
StatusOr<CountNoise> CountNoiseFor(const PrivacyBudget& share);

// Exact probability mass functions, for the tests and the privacy checks.
double DiscreteLaplacePmf(int64_t x, double scale);
double DiscreteGaussianPmf(int64_t x, double variance);

}  // namespace dpq

#endif  // DPQ_CORE_DISCRETE_NOISE_H_
