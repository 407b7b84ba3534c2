#include "core/discrete_noise.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
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
    // Three digits: the magnitude is the point (the budget runs a hair
    // below its decimal, so the exact scale has many).
    char magnitude[32];
    std::snprintf(magnitude, sizeof(magnitude), "%.3g", value);
    return Status(StatusCode::kInvalidPrivacy,
                  std::string(what) + " " + magnitude +
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

// U < exp(-gamma) for a uniform U in [0, 1) read lazily from `bits`: U's
// digits are compared with the certain digits of exp(-gamma) (bits.h's
// CompareDigits), and only up to the first difference are consumed. When
// all the certain digits agree (probability 2^-100 or less) they are
// recomputed with twice the precision and the comparison goes on: exact,
// since exp(-gamma) is irrational for rational gamma > 0 and never has a
// last digit.
bool BelowExpMinusSlow(BitReader& bits, const ExpMinusDigits& digits,
                       int position) {
  ExpMinusDigits finer;
  int limbs = static_cast<int>(digits.words.size()) + 1;
  while (bits.healthy()) {
    limbs *= 2;
    if (limbs > kMaxExpMinusLimbs) return false;  // probability < 2^-65000
    finer = ExpMinusLeadingDigits(digits.numerator, digits.denominator, limbs);
    const int decided =
        CompareDigits(bits, finer.words.data(), finer.count, position);
    if (decided >= 0) return decided == 1;
    position = std::max(position, finer.count);
  }
  return false;
}

// The common case inline: the certain digits decide (the first 32 but
// about once in 2^32).
inline bool BelowExpMinus(BitReader& bits, const ExpMinusDigits& digits) {
  const int decided = CompareDigits(bits, digits.words.data(), digits.count, 0);
  if (decided >= 0) return decided == 1;
  return BelowExpMinusSlow(bits, digits, digits.count);
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

// P(x) proportional to exp(-|x| s / t) with scale = t / s (CKS Algorithm 2),
// given two exact trials: residue(u) true with probability exp(-u / t) for
// 0 < u < t, and one() true with probability exp(-1).
template <typename ResidueTrial, typename OneTrial>
int64_t DiscreteLaplaceWith(BitReader& bits, const Rational& scale,
                            ResidueTrial residue, OneTrial one) {
  const uint64_t t = scale.numerator;
  const uint64_t s = scale.denominator;
  while (bits.healthy()) {
    const uint64_t u = static_cast<uint64_t>(UniformBits(bits, t));
    if (u != 0 && !residue(u)) continue;
    uint64_t v = 0;
    while (one() && bits.healthy()) ++v;
    // x = u + t v is exponential in x / t; v > 2^23 has probability below
    // e^-8000000 and is redrawn so that x fits 64 bits.
    if (v > (uint64_t{1} << 23)) continue;
    const uint64_t y = (u + t * v) / s;
    const bool negative = bits.Bit();
    if (negative && y == 0) continue;
    return negative ? -static_cast<int64_t>(y) : static_cast<int64_t>(y);
  }
  return 0;
}

int64_t DiscreteLaplace(BitReader& bits, const Rational& scale) {
  return DiscreteLaplaceWith(
      bits, scale,
      [&](uint64_t u) { return ExpMinus<uint64_t>(bits, u, scale.numerator); },
      [&] { return ExpMinus<uint64_t>(bits, 1, 1); });
}

// DiscreteLaplace with its Bernoulli(exp(-u / t)) trials done by
// BelowExpMinus on digits computed once per u (and once for exp(-1)): same
// distribution, several times faster for the thousands of draws of a tree.
// For scale numerators t up to kTableLimit (the digits of each u are built
// when first needed).
class LaplaceTable {
 public:
  static constexpr uint64_t kTableLimit = uint64_t{1} << 16;
  explicit LaplaceTable(const Rational& scale)
      : scale_(scale),
        residues_(scale.numerator),
        one_(ExpMinusLeadingDigits(1, 1, 2)) {}

  int64_t Sample(BitReader& bits) {
    return DiscreteLaplaceWith(
        bits, scale_,
        [&](uint64_t u) { return BelowExpMinus(bits, Residue(u)); },
        [&] { return BelowExpMinus(bits, one_); });
  }

 private:
  const ExpMinusDigits& Residue(uint64_t u) {
    ExpMinusDigits& digits = residues_[u];
    if (digits.count == 0)
      digits = ExpMinusLeadingDigits(u, scale_.numerator, 2);
    return digits;
  }

  Rational scale_;
  std::vector<ExpMinusDigits> residues_;
  ExpMinusDigits one_;
};

// The table of the scale CountNoise::AddTo drew with last, kept per thread
// for scales up to kCachedTableLimit (a few hundred KiB at most): a grouped
// release's first looks (16 draws a group, one scale) build each digit once
// instead of drawing each trial by its series. The digits are constants of
// the public scale, so keeping them shares nothing about any data.
constexpr uint64_t kCachedTableLimit = 4096;

LaplaceTable& CachedLaplaceTable(const Rational& scale) {
  static thread_local std::unique_ptr<LaplaceTable> table;
  static thread_local Rational cached;
  if (table == nullptr || cached.numerator != scale.numerator ||
      cached.denominator != scale.denominator) {
    table = std::make_unique<LaplaceTable>(scale);
    cached = scale;
  }
  return *table;
}

// A discrete Laplace draw by whole steps, for scales t / s >= 1 whose
// numerator t is too large for LaplaceTable (a budget a hair below its
// decimal makes t near 2^40, and each of CKS's t residues would then need
// its own series). The magnitude is geometric: P(|Y| >= y) = a^y with
// a = exp(-s / t). With b = floor(t / s), a uniform U gives
// K = #{y in [1, b] : U < a^y}, so P(K >= y) = a^y for y <= b. K < b is the
// magnitude's remainder r below b; K = b (U < a^b, probability a^b) adds a
// whole step v and draws again with a fresh U, which is exact by the
// geometric's memorylessness: P(r + b v) = a^(b v) (a^r - a^(r + 1)), the
// law of the discrete Laplace's magnitude. The sign is drawn as in CKS.
// Every a^y has y s / t <= 1, so its digits are certain to any precision
// (ExpMinusLeadingDigits). U is compared with all b of them at once by its
// first `top_bits` digits: the a^y differ by at least a^b (1 - a) > 2^-14
// (b <= 4096), so at 32 digits their leading digits are distinct, at most
// one can tie with U's, and that one is decided by the rest of its digits
// (BelowExpMinus). A draw reads 1 / (1 - a^b) uniforms (1.6 past a scale
// of 10, at most 2.6), 5 digits each at a scale of 20, and no trial is
// retried (the rejection of r it replaces took about 3 trials and 1.5
// rounds).
class WholeStepTable {
 public:
  // The most whole steps b (scales below 4,097). Not privacy-relevant.
  static constexpr uint64_t kLimit = 4096;
  // U's digits compared at once (at most BitReader::kMaxPeek). Any width
  // at which the a^y's leading digits differ is exact; tests narrow it to
  // drive the ties. Not privacy-relevant.
  static constexpr int kTopBits = 32;
  static bool Fits(const Rational& scale) {
    return scale.numerator > kCachedTableLimit &&
           scale.numerator >= scale.denominator &&
           scale.numerator / scale.denominator <= kLimit;
  }
  explicit WholeStepTable(const Rational& scale, int top_bits = kTopBits)
      : scale_(scale),
        steps_(scale.numerator / scale.denominator),
        residues_(steps_ + 1),
        tops_(steps_ + 1, 0) {
    // a^y's first 32 digits: from a bracket of a^y carried from a's
    // certain digits by products rounded outward (y of them, 2^-128 each,
    // on a's 2^-100 or so: about 95 digits certain at b = 4,096), where
    // its ends share them, else from a^y's own series (about once in
    // 2^60). A series for each y took 3 ms at b = 4,096.
    std::vector<uint64_t> leading(steps_ + 1, ~uint64_t{0});
    const ExpMinusDigits& a = Residue(1, 2);
    const int certain = std::min(a.count, 128);
    Uint128 low = 0;
    for (size_t w = 0; w < 2 && w < a.words.size(); ++w) {
      low |= static_cast<Uint128>(a.words[w]) << (64 * (1 - w));
    }
    const Uint128 step_low = low;
    const Uint128 step_high = low + (Uint128{1} << (128 - certain));
    Uint128 high = step_high;
    for (uint64_t y = 1; y <= steps_; ++y) {
      if (y > 1) {
        low = MultiplyHigh(low, step_low, false);
        high = MultiplyHigh(high, step_high, true);
      }
      leading[y] = certain >= 64 && (low >> 96) == (high >> 96)
                       ? static_cast<uint64_t>(low >> 64)
                       : Leading(y);
    }
    // The narrowest width from `top_bits` up at which no two tie.
    top_bits_ = std::max(1, std::min(top_bits, BitReader::kMaxPeek));
    for (;; ++top_bits_) {
      bool distinct = true;
      for (uint64_t y = 1; y <= steps_; ++y) {
        tops_[y] = leading[y] >> (64 - top_bits_);
        distinct = distinct && (y == 1 || tops_[y] < tops_[y - 1]);
      }
      if (distinct || top_bits_ == BitReader::kMaxPeek) break;
    }
    // guide_[j]: the a^y whose leading digits are at least U's can be for
    // any U in bucket j (its first guide bits): where the count starts.
    int guide_bits = 1;
    while (guide_bits < top_bits_ && (uint64_t{1} << guide_bits) < 2 * steps_) {
      ++guide_bits;
    }
    guide_shift_ = top_bits_ - guide_bits;
    guide_.assign(size_t{1} << guide_bits, 0);
    uint64_t k = steps_;
    for (size_t j = 0; j < guide_.size(); ++j) {
      const uint64_t bucket_end = static_cast<uint64_t>(j + 1) << guide_shift_;
      while (k > 0 && tops_[k] < bucket_end) --k;
      guide_[j] = k;
    }
  }

  const Rational& scale() const { return scale_; }
  int top_bits() const { return top_bits_; }

  int64_t Sample(BitReader& bits) {
    while (bits.healthy()) {
      uint64_t v = 0;
      uint64_t r = Count(bits);
      while (r == steps_ && bits.healthy()) {
        ++v;
        r = Count(bits);
      }
      // v > 2^23 has probability below e^-4000000 (a^b below e^-1/2);
      // redrawn so that y fits 64 bits.
      if (v > (uint64_t{1} << 23)) continue;
      const uint64_t y = r + steps_ * v;
      const bool negative = bits.Bit();
      if (negative && y == 0) continue;
      return negative ? -static_cast<int64_t>(y) : static_cast<int64_t>(y);
    }
    return 0;
  }

  // K = #{y in [1, b] : U < a^y} for a fresh uniform U, reading only the
  // digits that decide it.
  uint64_t Count(BitReader& bits) {
    const uint64_t u = bits.Peek(top_bits_);
    // tops_ falls with y: the count is where it passes below u.
    uint64_t k = guide_[u >> guide_shift_];
    while (k < steps_ && tops_[k + 1] > u) ++k;
    if (k < steps_ && tops_[k + 1] == u) {
      // The one tie: the rest of a^(k + 1)'s digits decide (all consumed).
      return BelowExpMinus(bits, Residue(k + 1, 2)) ? k + 1 : k;
    }
    // Decided by u's first digits where it differs from its two
    // neighbours (a^0 = 1 exceeds every U): the rest are not read.
    int used = 0;
    if (k > 0) used = Differs(u, tops_[k]);
    if (k < steps_) used = std::max(used, Differs(u, tops_[k + 1]));
    bits.Consume(used);
    return k;
  }

 private:
  // How many leading digits of two different top_bits-digit numbers are
  // read to tell them apart.
  int Differs(uint64_t u, uint64_t top) const {
    return __builtin_clzll(u ^ top) - (64 - top_bits_) + 1;
  }
  // floor(x y / 2^128), or its ceiling if `up`: 128-bit fractions.
  static Uint128 MultiplyHigh(Uint128 x, Uint128 y, bool up) {
    const auto x0 = static_cast<uint64_t>(x);
    const auto x1 = static_cast<uint64_t>(x >> 64);
    const auto y0 = static_cast<uint64_t>(y);
    const auto y1 = static_cast<uint64_t>(y >> 64);
    const Uint128 p00 = MultiplyWide(x0, y0);
    const Uint128 p01 = MultiplyWide(x0, y1);
    const Uint128 p10 = MultiplyWide(x1, y0);
    const Uint128 mid =
        (p00 >> 64) + static_cast<uint64_t>(p01) + static_cast<uint64_t>(p10);
    const Uint128 high =
        MultiplyWide(x1, y1) + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    const bool rest =
        static_cast<uint64_t>(mid) != 0 || static_cast<uint64_t>(p00) != 0;
    return up && rest ? high + 1 : high;
  }
  // a^y's first 64 digits, of which the first 32 at least are certain (one
  // limb gives about 55).
  uint64_t Leading(uint64_t y) {
    for (int limbs = 1; limbs <= kMaxExpMinusLimbs; limbs *= 2) {
      const ExpMinusDigits& digits = Residue(y, limbs);
      if (digits.count >= BitReader::kMaxPeek) return digits.words[0];
    }
    return 0;  // not reached: y s <= t
  }
  // a^y's digits (y s / t <= 1), built when first needed at `limbs` limbs
  // or more.
  const ExpMinusDigits& Residue(uint64_t y, int limbs) {
    ExpMinusDigits& digits = residues_[y];
    if (static_cast<int>(digits.words.size()) < limbs) {
      digits = ExpMinusLeadingDigits(y * scale_.denominator, scale_.numerator,
                                     limbs);
    }
    return digits;
  }

  Rational scale_;
  uint64_t steps_;
  std::vector<ExpMinusDigits> residues_;
  std::vector<uint64_t> tops_;  // a^y's first top_bits_ digits
  std::vector<uint64_t> guide_;
  int top_bits_ = kTopBits;
  int guide_shift_ = 0;
};

// The whole-step tables of the last four scales drawn with, per thread: a
// release draws with up to four (the step look, the first look, a tree's
// levels, the intervals), a grouped one each of them thousands of times.
// A table holds at most b + 1 digit strings of about 64 bytes each as
// built (WebAssembly): a few KiB at a scale of 20, at most about 1 MiB for
// all four at the largest scales. The digits are constants of public
// scales: keeping them shares nothing about any data.
WholeStepTable& CachedWholeStepTable(const Rational& scale) {
  constexpr size_t kKept = 4;
  static thread_local std::array<std::unique_ptr<WholeStepTable>, kKept> kept;
  static thread_local size_t next = 0;
  for (std::unique_ptr<WholeStepTable>& table : kept) {
    if (table != nullptr && table->scale().numerator == scale.numerator &&
        table->scale().denominator == scale.denominator) {
      return *table;
    }
  }
  std::unique_ptr<WholeStepTable>& slot = kept[next];
  next = (next + 1) % kKept;
  slot = std::make_unique<WholeStepTable>(scale);
  return *slot;
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

ExpMinusDigits ExpMinusLeadingDigits(uint64_t numerator, uint64_t denominator,
                                     int limbs) {
  // exp(-g) = sum_k (-g)^k / k! in fixed point with `limbs` fraction limbs.
  // Each term is floored twice per step, so it is at most 4 units of the last
  // place (ulps) below the exact term (error e_k <= e_(k-1) g / k + 2 <= 4);
  // the series stops at the first term that floors to 0 (exact term < 5
  // ulps, which bounds the rest of the alternating tail). So the exact value
  // is within 4 (K + 1) + 5 ulps of the sum for K terms.
  ExpMinusDigits out;
  out.numerator = numerator;
  out.denominator = denominator;
  const size_t size = static_cast<size_t>(limbs) + 1;
  Fixed term(size, 0);
  term[size - 1] = 1;
  Fixed sum = term;
  uint64_t terms = 0;
  bool healthy = numerator > 0 && numerator <= denominator;
  for (uint64_t k = 1; healthy; ++k) {
    MultiplySmall(&term, numerator);
    DivideSmall(&term, denominator);
    DivideSmall(&term, k);
    if (IsZero(term)) break;
    ++terms;
    healthy = AddFixed(&sum, term, k % 2 == 1);
  }
  Fixed error(size, 0);
  error[0] = 4 * (terms + 1) + 5;
  Fixed low = sum;
  Fixed high = sum;
  if (!healthy || !AddFixed(&low, error, true) ||
      !AddFixed(&high, error, false) || low[size - 1] != 0 ||
      high[size - 1] != 0) {
    return out;  // no certain digits (gamma out of range, or too close to 0)
  }
  // The certain digits: those low and high share.
  out.count = SharedLeadingDigits(low, high, size - 1, &out.words);
  return out;
}

bool BernoulliExpMinusByDigits(RandomSource& rng, uint64_t numerator,
                               uint64_t denominator) {
  if (numerator == 0) return true;
  BitReader bits(rng);
  return BelowExpMinus(bits, ExpMinusLeadingDigits(numerator, denominator, 2));
}

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
  return BernoulliBits(bits, numerator, denominator);
}

bool BernoulliExpMinus(RandomSource& rng, Uint128 numerator,
                       Uint128 denominator) {
  BitReader bits(rng);
  return ExpMinus<Uint128>(bits, numerator, denominator);
}

int64_t SampleDiscreteLaplace(RandomSource& rng, const Rational& scale) {
  BitReader bits(rng);
  if (WholeStepTable::Fits(scale)) {
    return CachedWholeStepTable(scale).Sample(bits);
  }
  return DiscreteLaplace(bits, scale);
}

namespace {

// The tests' table: the last scale and width asked for, per thread.
WholeStepTable& WholeStepTableForTest(const Rational& scale, int top_bits) {
  static thread_local std::unique_ptr<WholeStepTable> table;
  static thread_local int requested = 0;
  if (table == nullptr || table->scale().numerator != scale.numerator ||
      table->scale().denominator != scale.denominator ||
      requested != top_bits) {
    table = std::make_unique<WholeStepTable>(scale, top_bits);
    requested = top_bits;
  }
  return *table;
}

}  // namespace

uint64_t WholeStepCountForTest(const Rational& scale, int top_bits,
                               RandomSource& rng, int* top_bits_used,
                               uint64_t* consumed) {
  WholeStepTable& table = WholeStepTableForTest(scale, top_bits);
  *top_bits_used = table.top_bits();
  BitReader bits(rng);
  const uint64_t count = table.Count(bits);
  *consumed = bits.consumed();
  return count;
}

int64_t WholeStepSampleForTest(const Rational& scale, int top_bits,
                               RandomSource& rng) {
  BitReader bits(rng);
  return WholeStepTableForTest(scale, top_bits).Sample(bits);
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
  if (kind == Kind::kLaplace && parameter.numerator <= kCachedTableLimit) {
    LaplaceTable& table = CachedLaplaceTable(parameter);
    for (int64_t& count : *counts) count += table.Sample(bits);
    return;
  }
  if (kind == Kind::kLaplace && WholeStepTable::Fits(parameter)) {
    WholeStepTable& table = CachedWholeStepTable(parameter);
    for (int64_t& count : *counts) count += table.Sample(bits);
    return;
  }
  if (kind == Kind::kLaplace && counts->size() > 16 &&
      parameter.numerator <= LaplaceTable::kTableLimit) {
    LaplaceTable table(parameter);
    for (int64_t& count : *counts) count += table.Sample(bits);
    return;
  }
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
