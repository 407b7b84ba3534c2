#include "core/exact_exponential.h"

#include <algorithm>
#include <cmath>

namespace dpq {
namespace {

constexpr Uint128 kFractionMask =
    (Uint128{1} << kExponentFractionBits) - Uint128{1};

// x * m for a little-endian limb vector x: two more limbs.
Fixed MultiplyBy128(const Fixed& x, Uint128 m) {
  Fixed low = x;
  low.push_back(0);
  low.push_back(0);
  Fixed high = low;
  MultiplySmall(&low, static_cast<uint64_t>(m));
  MultiplySmall(&high, static_cast<uint64_t>(m >> 64));
  // high << 64
  for (size_t i = high.size(); i-- > 1;) high[i] = high[i - 1];
  high[0] = 0;
  AddFixed(&low, high, false);
  return low;
}

// floor(x / 2^shift); *inexact says whether bits were dropped.
Fixed ShiftRight(const Fixed& x, int shift, bool* inexact) {
  const size_t limbs = static_cast<size_t>(shift / 64);
  const int bits = shift % 64;
  *inexact = false;
  for (size_t i = 0; i < std::min(limbs, x.size()); ++i) {
    if (x[i] != 0) *inexact = true;
  }
  if (bits != 0 && limbs < x.size() &&
      (x[limbs] & ((uint64_t{1} << bits) - 1)) != 0) {
    *inexact = true;
  }
  Fixed out(x.size(), 0);
  for (size_t i = 0; i + limbs < x.size(); ++i) {
    uint64_t v = x[i + limbs] >> bits;
    if (bits != 0 && i + limbs + 1 < x.size()) {
      v |= x[i + limbs + 1] << (64 - bits);
    }
    out[i] = v;
  }
  return out;
}

void AddOne(Fixed* x) {
  for (uint64_t& limb : *x) {
    if (++limb != 0) return;
  }
}

// *q = x / d rounded up; `back` is scratch.
void DivideCeil(const Fixed& x, uint64_t d, Fixed* q, Fixed* back) {
  *q = x;
  DivideSmall(q, d);
  *back = *q;
  MultiplySmall(back, d);
  if (*back != x) AddOne(q);
}

// Bit i (0 = the 2^-1 digit) of a fraction held in `limbs` limbs.
int FractionBit(const Fixed& x, size_t limbs, size_t i) {
  const size_t from_bottom = limbs * 64 - 1 - i;
  return static_cast<int>((x[from_bottom / 64] >> (from_bottom % 64)) & 1);
}

// gamma = fraction 2^-84 ln 2 bracketed as [low, high] 2^-(64 limbs).
struct Bracket {
  Uint128 fraction = 0;
  size_t limbs = 0;
  Fixed low;
  Fixed high;

  void Compute(size_t new_limbs) {
    if (new_limbs == 2) {
      ComputeTwoLimbs();
    } else {
      ComputeGeneral(new_limbs);
    }
  }

  void ComputeGeneral(size_t new_limbs) {
    limbs = new_limbs;
    static const Fixed kLn2Two = Ln2Digits(2);  // the usual precision, once
    const Fixed ln2 = limbs == 2 ? kLn2Two : Ln2Digits(static_cast<int>(limbs));
    // ln 2 2^P in [L, L + 2): fraction L <= gamma 2^(P + 84) < fraction L
    // + 2 fraction.
    Fixed product = MultiplyBy128(ln2, fraction);
    bool inexact = false;
    low = ShiftRight(product, kExponentFractionBits, &inexact);
    Fixed twice(product.size(), 0);
    twice[0] = static_cast<uint64_t>(fraction << 1);
    twice[1] = static_cast<uint64_t>(fraction >> 63);
    AddFixed(&product, twice, false);
    high = ShiftRight(product, kExponentFractionBits, &inexact);
    if (inexact) AddOne(&high);
    low.resize(limbs);  // gamma < 1: the upper limbs are zero
    high.resize(limbs + 1);
  }

  // Compute(2), the usual precision (every trial starts there), in 128-bit
  // words and without allocating: the same low and high limb for limb.
  void ComputeTwoLimbs() {
    static const Fixed kLn2Two = Ln2Digits(2);
    limbs = 2;
    const uint64_t l0 = kLn2Two[0];
    const uint64_t l1 = kLn2Two[1];
    const auto f0 = static_cast<uint64_t>(fraction);
    const auto f1 = static_cast<uint64_t>(fraction >> 64);  // < 2^20
    auto lo = [](Uint128 x) { return static_cast<uint64_t>(x); };
    auto hi = [](Uint128 x) { return static_cast<uint64_t>(x >> 64); };
    // P = (l1 2^64 + l0)(f1 2^64 + f0) in four limbs p[0..3].
    const Uint128 t0 = MultiplyWide(l0, f0);
    const Uint128 t1 = MultiplyWide(l0, f1);
    const Uint128 t2 = MultiplyWide(l1, f0);
    const Uint128 t3 = MultiplyWide(l1, f1);
    uint64_t p[4];
    p[0] = lo(t0);
    const Uint128 c1 = static_cast<Uint128>(hi(t0)) + lo(t1) + lo(t2);
    p[1] = lo(c1);
    const Uint128 c2 = static_cast<Uint128>(hi(c1)) + hi(t1) + hi(t2) + lo(t3);
    p[2] = lo(c2);
    p[3] = hi(c2) + hi(t3);  // P < 2^212: no carry out
    // floor(x / 2^84) of four limbs, and whether bits were dropped.
    auto shifted = [](const uint64_t* x, uint64_t out[3]) {
      out[0] = (x[1] >> 20) | (x[2] << 44);
      out[1] = (x[2] >> 20) | (x[3] << 44);
      out[2] = x[3] >> 20;
      return x[0] != 0 || (x[1] & ((uint64_t{1} << 20) - 1)) != 0;
    };
    uint64_t r[3];
    shifted(p, r);
    low.resize(2);
    low[0] = r[0];
    low[1] = r[1];
    // + 2 fraction (below 2^85), then rounded up.
    const Uint128 twice = fraction << 1;
    const Uint128 s0 = static_cast<Uint128>(p[0]) + lo(twice);
    const Uint128 s1 = static_cast<Uint128>(p[1]) + hi(twice) + hi(s0);
    const Uint128 s2 = static_cast<Uint128>(p[2]) + hi(s1);
    const uint64_t q[4] = {lo(s0), lo(s1), lo(s2), p[3] + hi(s2)};
    const bool inexact = shifted(q, r);
    high.resize(3);
    high[0] = r[0];
    high[1] = r[1];
    high[2] = r[2];
    if (inexact) AddOne(&high);
  }
};

// floor(x / d) of a 128-bit fraction [x1 x0] and whether it dropped a
// remainder, d < 2^32: 64-bit steps of 32 bits (no 128-bit division, a
// call in WebAssembly).
uint64_t DivideTwoLimbs(uint64_t x1, uint64_t x0, uint64_t d, uint64_t* q0,
                        bool* inexact) {
  uint64_t r = 0;
  uint64_t q[2];
  const uint64_t x[2] = {x0, x1};
  for (int i = 1; i >= 0; --i) {
    const uint64_t high = (r << 32) | (x[i] >> 32);
    const uint64_t low = ((high % d) << 32) | (x[i] & 0xFFFFFFFFu);
    q[i] = ((high / d) << 32) | (low / d);
    r = low % d;
  }
  *q0 = q[0];
  *inexact = r != 0;
  return q[1];
}

// The first pass of BelowGammaOver on a two-limb bracket (the usual one),
// 32 digits of U at a time, reading exactly the digits the digit-by-digit
// pass reads (up to the deciding one): 1 (U < a), 0 (U >= b), or -1 (U's
// first 128 digits lie in [a, b), pushed to `drawn` for the longer
// bracket). The bracket's integer limb is 0 and k < 2^32.
int FirstPassTwoLimbs(BitReader& bits, const Bracket& gamma, uint64_t k,
                      std::vector<uint8_t>* drawn) {
  uint64_t a[2];
  uint64_t b[2];
  bool inexact = false;
  a[1] = DivideTwoLimbs(gamma.low[1], gamma.low[0], k, &a[0], &inexact);
  b[1] = DivideTwoLimbs(gamma.high[1], gamma.high[0], k, &b[0], &inexact);
  // ceil(high / k): one more when a remainder was dropped; 2^128 (b >= 1,
  // impossible as gamma < ln 2 + 2^-100) would leave U below b.
  bool b_at_least_one = false;
  if (inexact && ++b[0] == 0 && ++b[1] == 0) b_at_least_one = true;
  int versus_a = 0;  // as in BelowGammaOver
  int versus_b = 0;
  uint32_t read[4];
  for (int c = 0; c < 4; ++c) {
    const int shift = c % 2 == 0 ? 32 : 0;
    const auto digits_a = static_cast<uint32_t>(a[1 - c / 2] >> shift);
    const auto digits_b = static_cast<uint32_t>(b[1 - c / 2] >> shift);
    const auto u = static_cast<uint32_t>(bits.Peek(32));
    if (!bits.healthy()) return 0;
    // The first digit where U leaves a (or b), and U's digit there.
    int decide = 32;
    bool below = false;
    if (versus_a == 0 && u != digits_a) {
      const int at = __builtin_clz(u ^ digits_a);
      if (((u >> (31 - at)) & 1) == 0) {
        decide = at;
        below = true;
      }
    }
    if (versus_b == 0 && !b_at_least_one && u != digits_b) {
      const int at = __builtin_clz(u ^ digits_b);
      if (((u >> (31 - at)) & 1) != 0 && at < decide) {
        decide = at;
        below = false;
      }
    }
    if (decide < 32) {
      bits.Consume(decide + 1);
      return below ? 1 : 0;
    }
    if (versus_a == 0 && u != digits_a) versus_a = 1;
    if (versus_b == 0 && !b_at_least_one && u != digits_b) versus_b = -1;
    bits.Consume(32);
    read[c] = u;
  }
  if (versus_b == 0 && !b_at_least_one) return 0;  // U >= b
  for (const uint32_t u : read) {
    for (int i = 31; i >= 0; --i) {
      drawn->push_back(static_cast<uint8_t>((u >> i) & 1));
    }
  }
  return -1;
}

// U < gamma / k for a fresh uniform U read lazily: U's digits are compared
// with those of floor(low / k) and ceil(high / k); when U falls between
// them the bracket is recomputed with twice the digits. `word_pass` takes
// the usual two-limb first pass 32 digits at a time (the same digits, the
// same answer; a test compares the two).
bool BelowGammaOver(BitReader& bits, Bracket* gamma, uint64_t k,
                    bool word_pass) {
  // Scratch kept between calls (this runs for every acceptance trial):
  // assignments reuse its capacity instead of allocating.
  static thread_local std::vector<uint8_t> drawn;
  static thread_local Fixed a;
  static thread_local Fixed b;
  static thread_local Fixed back;
  drawn.clear();
  if (word_pass && gamma->limbs == 2 && gamma->high[2] == 0 && k >> 32 == 0) {
    const int first = FirstPassTwoLimbs(bits, *gamma, k, &drawn);
    if (first >= 0) return first == 1;
    gamma->Compute(4);
  }
  while (bits.healthy()) {
    a = gamma->low;
    DivideSmall(&a, k);
    DivideCeil(gamma->high, k, &b, &back);
    // b >= 1 (impossible, as gamma < ln 2 + 2^-100) would leave U below b.
    const bool b_at_least_one = b[gamma->limbs] != 0;
    const size_t digits = gamma->limbs * 64;
    int versus_a = 0;  // U's prefix against a's: -1 below, 0 equal, 1 above
    int versus_b = 0;
    for (size_t i = 0; i < digits; ++i) {
      if (i == drawn.size()) {
        drawn.push_back(static_cast<uint8_t>(bits.Bit()));
        if (!bits.healthy()) return false;
      }
      const int u = drawn[i];
      if (versus_a == 0) {
        const int bit = FractionBit(a, gamma->limbs, i);
        if (u != bit) versus_a = u < bit ? -1 : 1;
      }
      if (versus_b == 0 && !b_at_least_one) {
        const int bit = FractionBit(b, gamma->limbs, i);
        if (u != bit) versus_b = u < bit ? -1 : 1;
      }
      if (versus_a < 0) return true;   // U < a <= gamma / k
      if (versus_b > 0) return false;  // U > b >= gamma / k
    }
    if (versus_b == 0 && !b_at_least_one) return false;  // U >= b
    gamma->Compute(gamma->limbs * 2);  // U in [a, b): more digits
  }
  return false;
}

}  // namespace

std::pair<std::vector<uint64_t>, std::vector<uint64_t>> LnTwoBracketForTest(
    Uint128 fraction, bool two_limb_path) {
  Bracket b;
  b.fraction = fraction;
  if (two_limb_path) {
    b.ComputeTwoLimbs();
  } else {
    b.ComputeGeneral(2);
  }
  return {b.low, b.high};
}

double Exponent::Value() const {
  return static_cast<double>(whole) +
         std::ldexp(static_cast<double>(fraction), -kExponentFractionBits);
}

BaseTwoRate::BaseTwoRate(double s) {
  if (!(s > 0)) return;
  // s log2(e) (1 - 2^-50), each of the three roundings at most 2^-53
  // relative: below s / ln 2, so r ln 2 < s.
  // (Powers of two as constant factors, not ldexp: exact here, with no
  // range to leave, and no libm call per draw in WebAssembly.)
  const double r = s * 1.4426950408889634 * (1.0 - 0x1p-50);
  if (r >= 0x1p40) {
    multiplier_ = Uint128{1} << 104;
    return;
  }
  const double scaled = r * 0x1p64;  // exact, below 2^104
  const double high = std::floor(scaled * 0x1p-64);
  const double low = std::floor(scaled - high * 0x1p64);  // exact
  multiplier_ = (static_cast<Uint128>(static_cast<uint64_t>(high)) << 64) +
                static_cast<uint64_t>(low);
}

Exponent BaseTwoRate::WideExponentFor(uint64_t distance) const {
  // r d = M distance 2^-84, so y's 84 fraction bits are M distance's lowest.
  Exponent e;
  Uint128 product = 0;
  if (__builtin_mul_overflow(multiplier_, static_cast<Uint128>(distance),
                             &product) ||
      (product >> kExponentFractionBits) >= kMaxWholeExponent) {
    e.whole = kMaxWholeExponent;
    return e;
  }
  e.whole = static_cast<uint64_t>(product >> kExponentFractionBits);
  e.fraction = product & kFractionMask;
  return e;
}

double BaseTwoRate::NaturalRate() const {
  return std::ldexp(static_cast<double>(multiplier_), -64) * 0.6931471805599453;
}

std::vector<uint64_t> Ln2Digits(int limbs) {
  // ln 2 = sum_k 1 / (k 2^k) with W = 64 (limbs + 1) bits: each of the W
  // floored terms is at most one unit low and the rest of the series is
  // below one unit, so ln 2 2^W is in [S, S + W + 1]; dropping the guard
  // limb, ln 2 2^(64 limbs) is in [L, L + 2).
  const size_t size = static_cast<size_t>(limbs) + 2;
  const uint64_t w = 64 * (static_cast<uint64_t>(limbs) + 1);
  Fixed power(size, 0);
  power[size - 1] = 1;  // 2^W
  Fixed sum(size, 0);
  for (uint64_t k = 1; k <= w; ++k) {
    DivideSmall(&power, 2);
    Fixed term = power;
    DivideSmall(&term, k);
    AddFixed(&sum, term, false);
  }
  return Fixed(sum.begin() + 1, sum.begin() + 1 + limbs);
}

bool BernoulliTwoToMinus(BitReader& bits, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    if (bits.Bit() || !bits.healthy()) return false;
  }
  return true;
}

bool BernoulliSizeShare(BitReader& bits, Uint128 size) {
  const int b = CeilLog2(size);
  if (size == (Uint128{1} << b)) return true;
  return BernoulliBits(bits, size, Uint128{1} << b);
}

bool BernoulliTwoToMinusFraction(BitReader& bits, Uint128 fraction) {
  return BernoulliTwoToMinusFractionForTest(bits, fraction, true);
}

bool BernoulliTwoToMinusFractionForTest(BitReader& bits, Uint128 fraction,
                                        bool word_pass) {
  if (fraction == 0) return true;
  // 2^-f = exp(-gamma), gamma = f ln 2 in (0, ln 2): the smallest k with
  // Bernoulli(gamma / k) = 0 is odd with probability exp(-gamma) (CKS 2020,
  // Algorithm 1).
  // Kept per thread: its limbs are reused, so a trial allocates nothing.
  static thread_local Bracket gamma;
  gamma.fraction = fraction;
  gamma.Compute(2);
  uint64_t k = 1;
  while (bits.healthy() && BelowGammaOver(bits, &gamma, k, word_pass)) ++k;
  return k % 2 == 1;
}

void DyadicTable::Reset(int headroom) {
  exponents_.clear();
  prefix_.clear();
  headroom_ = headroom;
}

void DyadicTable::Add(int64_t exponent) { exponents_.push_back(exponent); }

void DyadicTable::Finish() {
  // Appended, not resized: a resize would zero what the loop overwrites
  // (a memset call per draw in WebAssembly); the capacity stays.
  prefix_.clear();
  if (exponents_.empty()) return;
  prefix_.reserve(exponents_.size());  // exactly: no doubling growth
  const int64_t top = *std::max_element(exponents_.begin(), exponents_.end());
  unit_ = top - headroom_;
  Uint128 total = 0;
  for (const int64_t exponent : exponents_) {
    const int64_t above = exponent - unit_;
    total += PowerOfTwo(above > 0 ? static_cast<int>(above) : 0);
    prefix_.push_back(total);
  }
}

size_t DyadicTable::Draw(BitReader& bits) const {
  const Uint128 total = prefix_.back();
  const Uint128 v = UniformBits(bits, PowerOfTwo(CeilLog2(total)));
  if (v >= total) return kNone;
  return static_cast<size_t>(
      std::upper_bound(prefix_.begin(), prefix_.end(), v) - prefix_.begin());
}

size_t DyadicTable::DrawWithin(BitReader& bits, int64_t cap) const {
  // A uniform integer below 2^(cap - unit) (the caller's proof keeps the
  // total below it): its high bits must be zero, its low `width` bits below
  // the total.
  const Uint128 total = prefix_.back();
  const int width = BitWidth(total);
  const int64_t span = cap - unit_;
  if (span > width &&
      !BernoulliTwoToMinus(bits, static_cast<uint64_t>(span - width))) {
    return kNone;
  }
  const Uint128 v = UniformBits(bits, Uint128{1} << width);
  if (v >= total) return kNone;
  return static_cast<size_t>(
      std::upper_bound(prefix_.begin(), prefix_.end(), v) - prefix_.begin());
}

bool DyadicTable::Thin(BitReader& bits, size_t i) const {
  const int64_t e = exponents_[i];
  return e >= unit_ ||
         BernoulliTwoToMinus(bits, static_cast<uint64_t>(unit_ - e));
}

double LogWeightDraw::ScratchBytes(double entries) {
  // Per entry: an exponent, a mantissa and an index; per piece: the piece
  // and the table's exponent and prefix.
  const double per_entry = 16 + sizeof(size_t);
  const double per_piece = sizeof(Piece) + 8 + 16;
  return per_entry * entries +
         per_piece * (entries + 9.0 * static_cast<double>(kMostSplitEntries));
}

size_t LogWeightDraw::Draw(const std::vector<double>& log_weights,
                           BitReader& bits, int headroom) {
  constexpr double kLog2E = 1.4426950408889634;  // log2(e), rounded
  // Weight i is M 2^(k - 52), M = f 2^52 in [2^52, 2^53]. Near the top, one
  // exact power-of-two entry per set bit of M from 2^45 up, and the rest,
  // R 2^(k - 52) with R = M mod 2^45, proposed as 2^(k - 7) and kept with
  // probability R / 2^45: a round is then rejected with probability below
  // 2^-7, not up to 1/2 as with one proposal 2^(k + 1). Far below the top
  // (where the table rounds entries up to one unit anyway), one proposal
  // 2^(k + 1) kept with probability M / 2^53.
  constexpr int kLowBits = 45;
  constexpr uint64_t kWhole = uint64_t{1} << kLowBits;
  constexpr uint64_t kHalfScale = uint64_t{1} << 53;
  exponents_.clear();
  mantissas_.clear();
  indices_.clear();
  // Exact sizes, not doubling growth: the joint sampler's heap budget
  // (JointSamplerBytes) counts them.
  exponents_.reserve(log_weights.size());
  mantissas_.reserve(log_weights.size());
  indices_.reserve(log_weights.size());
  int64_t top = INT64_MIN;
  for (size_t i = 0; i < log_weights.size(); ++i) {
    if (!(log_weights[i] > -HUGE_VAL)) continue;  // weight 0
    const double z = log_weights[i] * kLog2E;
    const double whole = std::floor(z);
    // z - whole is exact (Sterbenz); f in [1, 2], so f 2^52 is an integer.
    mantissas_.push_back(
        static_cast<uint64_t>(std::ldexp(std::exp2(z - whole), 52)));
    exponents_.push_back(static_cast<int64_t>(whole));
    indices_.push_back(i);
    top = std::max(top, exponents_.back() + 1);
  }
  if (indices_.empty()) return 0;
  pieces_.clear();
  table_.Reset(headroom);
  const int64_t deep = top - headroom;
  // Up to 10 pieces an entry near the top, for at most kMostSplitEntries
  // of them; past that many, every entry is one proposal (rounds rejected
  // up to half the time, an O(log) table draw each): the pieces stay
  // within entries + 9 kMostSplitEntries, whatever the weights.
  size_t near_top = 0;
  for (const int64_t k : exponents_) near_top += k + 1 >= deep ? 1 : 0;
  const bool split = near_top <= kMostSplitEntries;
  const size_t pieces = indices_.size() + (split ? 9 * near_top : 0);
  pieces_.reserve(pieces);
  table_.Reserve(pieces);
  for (size_t j = 0; j < indices_.size(); ++j) {
    const int64_t k = exponents_[j];
    const uint64_t mantissa = mantissas_[j];
    if (k + 1 < deep || !split) {
      table_.Add(k + 1);
      pieces_.push_back({indices_[j], mantissa, kHalfScale});
      continue;
    }
    for (int b = 53; b >= kLowBits; --b) {
      if (((mantissa >> b) & 1) == 0) continue;
      table_.Add(k + b - 52);
      pieces_.push_back({indices_[j], kWhole, kWhole});
    }
    const uint64_t rest = mantissa & (kWhole - 1);
    if (rest != 0) {
      table_.Add(k + kLowBits - 52);
      pieces_.push_back({indices_[j], rest, kWhole});
    }
  }
  table_.Finish();
  while (bits.healthy()) {
    const size_t e = table_.Draw(bits);
    if (e == DyadicTable::kNone) continue;
    const Piece& p = pieces_[e];
    if (table_.Thin(bits, e) &&
        (p.keep == p.scale || BernoulliBits(bits, p.keep, p.scale))) {
      return p.index;
    }
  }
  return indices_.front();  // an unhealthy source: the caller reports it
}

}  // namespace dpq
