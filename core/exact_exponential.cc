#include "core/exact_exponential.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

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

// ---- 2^-f by its digits: the acceptance trial of step 2 ----
// U < 2^-f for a uniform U in [0, 1) read lazily: U's digits are compared
// with those of 2^-f, and the first digit where they differ decides (U's 0
// where 2^-f has 1 means U < 2^-f), so a trial reads about two bits. 2^-f
// (f = fraction 2^-84 in (0, 1)) is irrational, so its digits never end
// and a difference comes with probability 1. Its leading digits come
// first from a floating-point value with a proven error (TwoToMinusDouble:
// every digit that all values within the error share is certain), and
// only when U agrees with all of those (probability about 2^-40) from the
// series of exp(-f ln 2) in exact limb arithmetic, with twice the digits
// each time they run out. Every digit compared is a digit of 2^-f itself,
// so both sources decide alike, digit for digit.

// floor(a x / 2^(64 limbs)) for a of limbs + 1 limbs (the top one whole)
// and a fraction x of `limbs` limbs (little-endian): limbs + 1 limbs.
Fixed MultiplyByFraction(const Fixed& a, const uint64_t* x, size_t limbs) {
  Fixed product(a.size() + limbs, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < limbs; ++j) {
      // At most (2^64 - 1)^2 + 2 (2^64 - 1) = 2^128 - 1: no overflow.
      const Uint128 t = MultiplyWide(a[i], x[j]) + product[i + j] + carry;
      product[i + j] = static_cast<uint64_t>(t);
      carry = static_cast<uint64_t>(t >> 64);
    }
    product[i + limbs] = carry;
  }
  return Fixed(product.begin() + static_cast<std::ptrdiff_t>(limbs),
               product.end());
}

// exp(-x) for a fraction x < 1 of `limbs` limbs, as sum_k (-x)^k / k! in
// fixed point with one whole limb, and *error, a bound in units of the
// last place (ulps). Each term is floored twice per step (the product and
// the division by k), so it is at most e_k <= e_(k-1) x / k + 2 <= 4 ulps
// below the exact term (e_0 = 0, x < 1); the series stops at the first
// term that floors to 0 (exact term below 5 ulps, which bounds the rest of
// the alternating tail). So exp(-x) is within 4 (K + 1) + 5 ulps of the sum
// of K terms. The partial sums stay in [1 - x, 1]: nothing borrows.
Fixed ExpMinusSeries(const uint64_t* x, size_t limbs, uint64_t* error) {
  Fixed term(limbs + 1, 0);
  term[limbs] = 1;
  Fixed sum = term;
  uint64_t terms = 0;
  for (uint64_t k = 1;; ++k) {
    term = MultiplyByFraction(term, x, limbs);
    DivideSmall(&term, k);
    if (IsZero(term)) break;
    ++terms;
    AddFixed(&sum, term, k % 2 == 1);
  }
  *error = 4 * (terms + 1) + 5;
  return sum;
}

// The certain leading digits of 2^-f = exp(-gamma) at `limbs` limbs (>= 2):
// gamma lies in [low, high] (Bracket), so 2^-f lies in [exp(-high) - e,
// exp(-low) + e] by the series; the digits both ends share are its own.
// First digit highest in (*words)[0]; returns how many.
int TwoToMinusCertainDigits(Uint128 fraction, size_t limbs,
                            std::vector<uint64_t>* words) {
  words->clear();  // (when no digit is certain)
  Bracket gamma;
  gamma.fraction = fraction;
  gamma.Compute(limbs);
  if (gamma.high[limbs] != 0) return 0;  // gamma < ln 2 + 2^-100: never
  uint64_t error = 0;
  Fixed upper = ExpMinusSeries(gamma.low.data(), limbs, &error);
  Fixed bound(limbs + 1, 0);
  bound[0] = error;
  AddFixed(&upper, bound, false);
  Fixed lower = ExpMinusSeries(gamma.high.data(), limbs, &error);
  bound[0] = error;
  if (!AddFixed(&lower, bound, true) || lower[limbs] != 0) return 0;
  // 2^-f < 1 - 2^-86 (1 - exp(-gamma) > gamma / 2, gamma >= 2^-84 ln 2):
  // an upper end at or past 1 lowers to 1 - 2^-(64 limbs), still above it.
  if (upper[limbs] != 0) {
    upper.assign(limbs + 1, ~uint64_t{0});
    upper[limbs] = 0;
  }
  return SharedLeadingDigits(lower, upper, limbs, words);
}

// Past this many limbs (2^14 digits; reached with probability below
// 2^-16000) a trial gives up and answers false. Not privacy-relevant.
constexpr size_t kMostDigitLimbs = 256;

// The trial once U's first `position` digits are known to be 2^-f's: the
// rest from the exact series' certain digits.
bool BelowTwoToMinusByDigits(BitReader& bits, Uint128 fraction, int position) {
  std::vector<uint64_t> words;
  for (size_t limbs = 2; limbs <= kMostDigitLimbs && bits.healthy();
       limbs *= 2) {
    const int count = TwoToMinusCertainDigits(fraction, limbs, &words);
    const int decided = CompareDigits(bits, words.data(), count, position);
    if (decided >= 0) return decided == 1;
    position = std::max(position, count);
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

double TwoToMinusDouble(Uint128 fraction) {
  // 1 / k! rounded to the nearest double, k = 0..15.
  static constexpr double kInverseFactorials[] = {
      0x1.0000000000000p+0,  0x1.0000000000000p+0,  0x1.0000000000000p-1,
      0x1.5555555555555p-3,  0x1.5555555555555p-5,  0x1.1111111111111p-7,
      0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16,
      0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
      0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33, 0x1.93974a8c07c9dp-37,
      0x1.ae7f3e733b81fp-41};
  // -z = -f ln 2 in (-ln 2, 0], then exp(-z) by its Taylor polynomial of
  // degree 15 in Horner's form (see kTwoToMinusDoubleErrorBits).
  const double f = ApproximateDouble(fraction) * 0x1p-84;
  const double minus_z = -(f * 0.6931471805599453);
  double sum = kInverseFactorials[15];
  for (int k = 14; k >= 0; --k) sum = sum * minus_z + kInverseFactorials[k];
  return sum;
}

namespace {

// The trial from digit `position` on, U's digits before it having agreed
// with 2^-f's: the double's digits (a window of 2^-window_bits, <= 0 for
// none), then the series'.
bool TwoToMinusFrom(BitReader& bits, Uint128 fraction, int window_bits,
                    int position) {
  if (window_bits <= 0) {
    return BelowTwoToMinusByDigits(bits, fraction, position);
  }
  // d 2^64 exactly (d >= 1/4 has no digits below 2^-55, and d <= 1: the
  // last Horner step adds 1 to a negative term). 2^-f lies within 2^-w of
  // d, so its first 64 digits lie in [d 2^64 - 2^(64 - w), min(d 2^64 +
  // 2^(64 - w), 2^64 - 1)] (2^-f < 1), and the digits both ends share are
  // its own.
  const double d = TwoToMinusDouble(fraction);
  const Uint128 scaled = static_cast<Uint128>(static_cast<uint64_t>(d * 0x1p63))
                         << 1;
  const Uint128 window = Uint128{1} << (64 - window_bits);
  const auto low = static_cast<uint64_t>(scaled - window);
  const Uint128 most = (Uint128{1} << 64) - 1;
  const auto high =
      static_cast<uint64_t>(scaled + window > most ? most : scaled + window);
  const int certain = low == high ? 64 : __builtin_clzll(low ^ high);
  if (certain > position) {
    const int decided = CompareDigits(bits, &low, certain, position);
    if (decided >= 0) return decided == 1;
    position = certain;
  }
  return BelowTwoToMinusByDigits(bits, fraction, position);
}

// The first digits shared by every 2^-f with f in one of 2^8 equal
// stretches of [0, 1) (f's first 8 bits): 8 or 9 of them, which decide a
// trial but about once in 300 (a comparison reads about two digits), with
// no polynomial. From the double's bounds at the stretch's ends (2^-f
// falls with f), each widened by 2^-kTwoToMinusDoubleErrorBits: an
// interval holding every such 2^-f, whose ends' shared digits every
// number in it shares. Exactness-relevant as the window above is.
constexpr int kTwoToMinusStretchBits = 8;
struct TwoToMinusStretch {
  uint64_t digits = 0;  // first digit highest
  int count = 0;
};

std::array<TwoToMinusStretch, size_t{1} << kTwoToMinusStretchBits>
TwoToMinusStretches() {
  std::array<TwoToMinusStretch, size_t{1} << kTwoToMinusStretchBits> out{};
  const int shift = kExponentFractionBits - kTwoToMinusStretchBits;
  const Uint128 error = Uint128{1} << (64 - kTwoToMinusDoubleErrorBits);
  const Uint128 most = (Uint128{1} << 64) - 1;
  auto scaled = [](double d) {
    return static_cast<Uint128>(static_cast<uint64_t>(d * 0x1p63)) << 1;
  };
  for (size_t j = 0; j < out.size(); ++j) {
    // 2^-f for f at the stretch's start (the largest; below 1 but at f =
    // 0, which the trial takes before) and at its end (0.5 exactly at 1).
    const Uint128 top =
        j == 0 ? most
               : std::min(most, scaled(TwoToMinusDouble(Uint128{j} << shift)) +
                                    error);
    const Uint128 bottom =
        j + 1 == out.size()
            ? Uint128{1} << 63
            : scaled(TwoToMinusDouble(Uint128{j + 1} << shift)) - error;
    const auto low = static_cast<uint64_t>(bottom);
    const auto high = static_cast<uint64_t>(top);
    const int count =
        std::min(__builtin_clzll(low ^ high), BitReader::kMaxPeek);
    out[j] = {count == 0 ? 0 : low & (~uint64_t{0} << (64 - count)), count};
  }
  return out;
}

}  // namespace

bool BernoulliTwoToMinusFraction(BitReader& bits, Uint128 fraction) {
  if (fraction == 0) return true;
  static const auto stretches = TwoToMinusStretches();
  const TwoToMinusStretch& stretch = stretches[static_cast<size_t>(
      fraction >> (kExponentFractionBits - kTwoToMinusStretchBits))];
  const int decided = CompareDigits(bits, &stretch.digits, stretch.count, 0);
  if (decided >= 0) return decided == 1;
  return TwoToMinusFrom(bits, fraction, kTwoToMinusWindowBits, stretch.count);
}

bool BernoulliTwoToMinusFractionForTest(BitReader& bits, Uint128 fraction,
                                        int window_bits) {
  if (fraction == 0) return true;
  return TwoToMinusFrom(bits, fraction, window_bits, 0);
}

int TwoToMinusDigitsForTest(Uint128 fraction, int limbs,
                            std::vector<uint64_t>* words) {
  return TwoToMinusCertainDigits(fraction, static_cast<size_t>(limbs), words);
}

namespace {

// The tables' DrawWithin: a uniform integer below 2^span (the caller's
// proof keeps the total, of `width` bits, below it) whose high bits must
// be zero, read as span - width zero bits (false if one is not), then its
// low `width` bits into *v.
bool UniformWithinCap(BitReader& bits, int64_t span, int width, Uint128* v) {
  if (span > width &&
      !BernoulliTwoToMinus(bits, static_cast<uint64_t>(span - width))) {
    return false;
  }
  *v = UniformPowerOfTwoBits(bits, width);
  return true;
}

}  // namespace

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

size_t DyadicTable::EntryAt(Uint128 v) const {
  // The first entry whose prefix passes v. A draw's few entries (totals
  // below 2^64): the count of prefixes at or below v, one comparison an
  // entry and no branch (a binary search's branches go either way at
  // random); a search otherwise.
  if (prefix_.size() <= kCountedEntries && (prefix_.back() >> 64) == 0) {
    const auto low = static_cast<uint64_t>(v);
    size_t count = 0;
    for (const Uint128& prefix : prefix_) {
      count += static_cast<uint64_t>(prefix) <= low ? 1 : 0;
    }
    return count;
  }
  return static_cast<size_t>(
      std::upper_bound(prefix_.begin(), prefix_.end(), v) - prefix_.begin());
}

size_t DyadicTable::Draw(BitReader& bits) const {
  const Uint128 total = prefix_.back();
  const Uint128 v = UniformPowerOfTwoBits(bits, CeilLog2(total));
  if (v >= total) return kNone;
  return EntryAt(v);
}

size_t DyadicTable::DrawWithin(BitReader& bits, int64_t cap) const {
  // A uniform integer below 2^(cap - unit), kept below the total.
  const Uint128 total = prefix_.back();
  Uint128 v = 0;
  if (!UniformWithinCap(bits, cap - unit_, BitWidth(total), &v) || v >= total) {
    return kNone;
  }
  return EntryAt(v);
}

bool DyadicTable::Thin(BitReader& bits, size_t i) const {
  const int64_t e = exponents_[i];
  return e >= unit_ ||
         BernoulliTwoToMinus(bits, static_cast<uint64_t>(unit_ - e));
}

void SizedTable::Finish(int headroom) {
  prefix_.clear();
  if (sizes_.empty()) return;
  prefix_.reserve(sizes_.size());
  // An entry is at most 2^headroom units (size <= 2^ceil(log2 size)), so
  // the total stays below 2^62.
  headroom = std::max(
      1,
      std::min(headroom, 61 - BitWidth(static_cast<uint64_t>(sizes_.size()))));
  unit_ = top_ - headroom;
  uint64_t total = 0;
  for (size_t i = 0; i < sizes_.size(); ++i) {
    const int64_t shift = exponents_[i] - unit_;
    const Uint128 size = sizes_[i];
    // Exact: size 2^shift <= 2^headroom (so the size is below 2^64).
    // Rounded up: ceil(size 2^shift) = floor((size - 1) 2^shift) + 1, in
    // 64 bits where the size fits them.
    uint64_t units = 1;
    if (shift >= 0) {
      units = static_cast<uint64_t>(size) << shift;
    } else if (shift > -64 && (size >> 64) == 0) {
      units = ((static_cast<uint64_t>(size) - 1) >> -shift) + 1;
    } else if (shift > -128) {
      units = static_cast<uint64_t>(
                  ShiftRightWide(size - 1, static_cast<int>(-shift))) +
              1;
    }
    total += units;
    prefix_.push_back(total);
  }
}

SizedTable::Drawn SizedTable::At(BitReader& bits, uint64_t v) const {
  // The first entry whose prefix passes v (counted among a draw's few
  // entries, one comparison each and no branch; else searched), and v's
  // place u among its units.
  size_t i = 0;
  if (prefix_.size() <= 32) {
    for (const uint64_t prefix : prefix_) i += prefix <= v ? 1 : 0;
  } else {
    i = static_cast<size_t>(
        std::upper_bound(prefix_.begin(), prefix_.end(), v) - prefix_.begin());
  }
  const uint64_t u = i == 0 ? v : v - prefix_[i - 1];
  const Uint128 size = sizes_[i];
  const int64_t shift = exponents_[i] - unit_;
  if (shift >= 0) return {i, u >> shift};  // 2^shift units an offset
  // A unit spans 2^-shift offsets: u's, then the low digits, kept below
  // the size. From 128 digits on u is 0 (one unit): the digits above the
  // size's width must all be zero.
  const uint64_t below = static_cast<uint64_t>(-shift);
  Uint128 offset = 0;
  if (below >= 128) {
    const int width = BitWidth(size);
    if (!BernoulliTwoToMinus(bits, below - static_cast<uint64_t>(width))) {
      return {};
    }
    offset = UniformPowerOfTwoBits(bits, width);
  } else {
    // u 2^below < size < 2^128.
    const auto s = static_cast<int>(below);
    const Uint128 high = s < 64 ? ShiftLeftWide(u, s)
                                : static_cast<Uint128>(u << (s - 64)) << 64;
    offset = high | UniformPowerOfTwoBits(bits, s);
  }
  if (offset >= size) return {};
  return {i, offset};
}

SizedTable::Drawn SizedTable::Draw(BitReader& bits) const {
  const uint64_t total = prefix_.back();
  const auto v =
      static_cast<uint64_t>(UniformPowerOfTwoBits(bits, CeilLog2Of64(total)));
  if (v >= total) return {};
  return At(bits, v);
}

SizedTable::Drawn SizedTable::DrawWithin(BitReader& bits, int64_t cap) const {
  // A uniform integer below 2^(cap - unit), kept below the total.
  const uint64_t total = prefix_.back();
  Uint128 v = 0;
  if (!UniformWithinCap(bits, cap - unit_, 64 - __builtin_clzll(total), &v) ||
      v >= total) {
    return {};
  }
  return At(bits, static_cast<uint64_t>(v));
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
