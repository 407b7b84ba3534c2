// Random bits read lazily, and the small fixed-point arithmetic the exact
// samplers share (discrete_noise.cc, exact_exponential.cc). Internal to the
// core: every function here is exact, none rounds.
#ifndef DPQ_CORE_BITS_H_
#define DPQ_CORE_BITS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/random.h"

// Inlines a small function on the draws' hot paths. The WebAssembly build
// left these calls in place (binaryen's inliner weighs size); inlined, a
// release of n = 1,000, m = 120 takes 3-4% less time there. Only where an
// A/B in one process showed it (RankEdges::At, for one, got slower).
#define DPQ_HOT_INLINE __attribute__((always_inline))

namespace dpq {

__extension__ typedef unsigned __int128 Uint128;

// a b, exactly. On 64-bit hosts the compiler's one wide multiply; in 32-bit
// WebAssembly, where a 128-bit product is a call to a general 128 x 128
// routine, four 32 x 32-bit products.
inline Uint128 MultiplyWide(uint64_t a, uint64_t b) {
#if UINTPTR_MAX > 0xFFFFFFFFu
  return static_cast<Uint128>(a) * b;
#else
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32;
  const uint64_t b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  // Below 3 2^32: no carry is lost.
  const uint64_t middle =
      (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  const uint64_t high = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
  const uint64_t low = (middle << 32) | (p00 & 0xFFFFFFFFu);
  return (static_cast<Uint128>(high) << 64) | low;
#endif
}

// 2^k for 0 <= k < 128, without a variable 128-bit shift (a call in
// WebAssembly).
inline Uint128 PowerOfTwo(int k) {
  return k < 64 ? static_cast<Uint128>(uint64_t{1} << k)
                : static_cast<Uint128>(uint64_t{1} << (k - 64)) << 64;
}

// x 2^s as 128 bits, 0 <= s < 64, from 64-bit shifts (WebAssembly calls a
// helper for a 128-bit shift by a variable count).
inline Uint128 ShiftLeftWide(uint64_t x, int s) {
  if (s == 0) return x;
  return (static_cast<Uint128>(x >> (64 - s)) << 64) | (x << s);
}

// x 2^-s as 128 bits, 0 <= s < 128, from 64-bit shifts.
inline Uint128 ShiftRightWide(Uint128 x, int s) {
  const auto high = static_cast<uint64_t>(x >> 64);
  const auto low = static_cast<uint64_t>(x);
  if (s == 0) return x;
  if (s >= 64) return high >> (s - 64);
  return (static_cast<Uint128>(high >> s) << 64) | (low >> s) |
         (high << (64 - s));
}

// x rounded to a double, near enough for estimates (not correctly rounded;
// no 128-bit conversion, a helper call in WebAssembly).
inline double ApproximateDouble(Uint128 x) {
  return static_cast<double>(static_cast<uint64_t>(x >> 64)) * 0x1p64 +
         static_cast<double>(static_cast<uint64_t>(x));
}

// Bits needed to hold x (0 for 0).
inline int BitWidth(Uint128 x) {
  const uint64_t high = static_cast<uint64_t>(x >> 64);
  if (high != 0) return 128 - __builtin_clzll(high);
  const uint64_t low = static_cast<uint64_t>(x);
  return low == 0 ? 0 : 64 - __builtin_clzll(low);
}

// The set bits of x.
inline int PopCount(uint64_t x) { return __builtin_popcountll(x); }

// ceil(log2 x) for x >= 1.
inline int CeilLog2(Uint128 x) { return x <= 1 ? 0 : BitWidth(x - 1); }
// The same for 64 bits, without 128-bit arithmetic (emulated in
// WebAssembly).
inline int CeilLog2Of64(uint64_t x) {
  return x <= 1 ? 0 : 64 - __builtin_clzll(x - 1);
}

// Random bits from 64-bit words, in order, most significant first. The
// exact samplers compare uniforms with probabilities lazily; Peek/Consume let
// them compare up to 32 bits at once and consume only up to the first
// differing bit, so a Bernoulli trial still uses about two bits, not a word.
// Bits peeked but not consumed were never used by any decision: they stay
// fresh for the next one, also after the reader is gone (the source keeps
// them, SpareBits). No bit is skipped, so a scripted source is read exactly
// as written (the tests rely on it).
class BitReader {
 public:
  static constexpr int kMaxPeek = 32;
  explicit BitReader(RandomSource& rng)
      : rng_(rng), s_(rng.spare_bits()), healthy_(rng.healthy()) {}
  // The next `count` bits (0..kMaxPeek) as an integer, first bit highest.
  DPQ_HOT_INLINE uint64_t Peek(int count) {
    if (s_.left < count) Refill(count);
    return count == 0 ? 0 : s_.high >> (64 - count);
  }
  DPQ_HOT_INLINE void Consume(int count) {
    s_.high = count == 64 ? 0 : s_.high << count;
    s_.left -= count;
    consumed_ += static_cast<uint64_t>(count);
    if (consumed_ > limit_) healthy_ = false;
  }
  bool Bit() {
    const bool bit = Peek(1) != 0;
    Consume(1);
    return bit;
  }
  DPQ_HOT_INLINE uint64_t Bits(int count) {
    const uint64_t value = Peek(count);
    Consume(count);
    return value;
  }
  // Bits consumed so far, and a limit past which the reader reports itself
  // unhealthy, so that samplers stop: the tests enumerate a sampler's
  // decision tree one bit string at a time.
  uint64_t consumed() const { return consumed_; }
  void set_limit(uint64_t limit) { limit_ = limit; }
  // The source's health as of the last word read: loops stop on it without
  // a virtual call per bit.
  bool healthy() const { return healthy_; }
  RandomSource& source() { return rng_; }

 private:
  // Moves bits from the next word behind the `left` unread ones of high.
  // Unused bits of high and low are always 0.
  void Refill(int count) {
    while (s_.left < count) {
      if (s_.low_left == 0) {
        s_.low = rng_.NextUint64();
        healthy_ = healthy_ && rng_.healthy();
        s_.low_left = 64;
      }
      const int take = std::min(64 - s_.left, s_.low_left);
      s_.high |= s_.left == 0 ? s_.low : s_.low >> s_.left;
      s_.low = take == 64 ? 0 : s_.low << take;
      s_.low_left -= take;
      s_.left += take;
    }
  }

  RandomSource& rng_;
  SpareBits& s_;  // the source's unread bits
  bool healthy_;
  uint64_t consumed_ = 0;
  uint64_t limit_ = ~uint64_t{0};
};

// UniformBits past 32 bits (below): out of line, so that the usual short
// draw stays inline in its callers.
[[gnu::noinline]] inline Uint128 UniformWideBits(BitReader& bits, Uint128 bound,
                                                 int width) {
  // In 64 bits below 2^63 (the same bits read; a bound of 2^64 would not
  // fit).
  if (width < 2 * BitReader::kMaxPeek) {
    const uint64_t b = static_cast<uint64_t>(bound);
    const int rest = width - BitReader::kMaxPeek;
    uint64_t value;
    do {
      value = bits.Bits(BitReader::kMaxPeek) << rest;
      value |= bits.Bits(rest);
    } while (value >= b && bits.healthy());
    return value < b ? value : 0;
  }
  // The first `width` bits as one integer, in two 64-bit halves: the same
  // value as shifting each 32-bit read into a 128-bit one, without its
  // variable 128-bit shifts (helper calls in WebAssembly).
  // 1..64 (width <= 128; the min says so to the static analyzer, which
  // otherwise follows a read of more than 32 bits).
  const int high_width = std::min(width - 64, 64);
  Uint128 value;
  do {
    uint64_t high = 0;
    if (high_width > BitReader::kMaxPeek) {
      high = bits.Bits(BitReader::kMaxPeek)
             << (high_width - BitReader::kMaxPeek);
      high |= bits.Bits(high_width - BitReader::kMaxPeek);
    } else {
      high = bits.Bits(high_width);
    }
    uint64_t low = bits.Bits(BitReader::kMaxPeek) << 32;
    low |= bits.Bits(BitReader::kMaxPeek);
    value = (static_cast<Uint128>(high) << 64) | low;
  } while (value >= bound && bits.healthy());
  return value < bound ? value : 0;
}

// Uniform in [0, bound), bound >= 1: rejection on the fewest bits that hold
// bound - 1 (exact; fewer than two rounds on average), every bit through the
// reader (up to 32 at a time).
inline Uint128 UniformBits(BitReader& bits, Uint128 bound) {
  if (bound <= 1) return 0;
  const Uint128 top = bound - 1;
  const uint64_t high = static_cast<uint64_t>(top >> 64);
  const int width = high != 0
                        ? 128 - __builtin_clzll(high)
                        : 64 - __builtin_clzll(static_cast<uint64_t>(top));
  if (width <= BitReader::kMaxPeek) {
    const uint64_t b = static_cast<uint64_t>(bound);
    uint64_t value;
    do {
      value = bits.Bits(width);
    } while (value >= b && bits.healthy());
    return value < b ? value : 0;  // >= b only from an unhealthy source
  }
  return UniformWideBits(bits, bound, width);
}

// UniformBits for a 64-bit bound: the same bits read and the same value,
// in 64-bit arithmetic and inline (the noise samplers' uniforms; the
// 128-bit one is a call with two-word arithmetic in WebAssembly).
DPQ_HOT_INLINE inline uint64_t UniformBits(BitReader& bits, uint64_t bound) {
  if (bound <= 1) return 0;
  const int width = 64 - __builtin_clzll(bound - 1);
  if (width > BitReader::kMaxPeek) {
    return static_cast<uint64_t>(
        UniformWideBits(bits, static_cast<Uint128>(bound), width));
  }
  uint64_t value;
  do {
    value = bits.Bits(width);
  } while (value >= bound && bits.healthy());
  return value < bound ? value : 0;
}

// UniformBits(bits, 2^width) for width in [0, 128], without its bound's
// arithmetic (128-bit in WebAssembly) or rejection test: the same bits
// read, in the same order, and the same value.
DPQ_HOT_INLINE inline Uint128 UniformPowerOfTwoBits(BitReader& bits,
                                                    int width) {
  if (width <= BitReader::kMaxPeek) return bits.Bits(width);
  if (width <= 2 * BitReader::kMaxPeek) {
    const int rest = width - BitReader::kMaxPeek;
    const uint64_t high = bits.Bits(BitReader::kMaxPeek) << rest;
    return high | bits.Bits(rest);
  }
  return UniformWideBits(bits, PowerOfTwo(width), width);
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
inline bool BernoulliBits(BitReader& bits, Uint128 numerator,
                          Uint128 denominator) {
  if (numerator == 0) return false;
  if (numerator >= denominator) return true;
  if (denominator < (Uint128{1} << 63)) {
    return BernoulliDigits<uint64_t>(bits, static_cast<uint64_t>(numerator),
                                     static_cast<uint64_t>(denominator));
  }
  return BernoulliDigits<Uint128>(bits, numerator, denominator);
}

// Fixed-point numbers (ExpMinusLeadingDigits, the 2^-f trial's series):
// little-endian 64-bit limbs, the last one the integer part, the others the
// fraction.
using Fixed = std::vector<uint64_t>;

inline bool IsZero(const Fixed& x) {
  for (uint64_t limb : x) {
    if (limb != 0) return false;
  }
  return true;
}

// x *= m, exact (the callers keep the integer part below 2^64).
inline void MultiplySmall(Fixed* x, uint64_t m) {
  uint64_t carry = 0;
  for (uint64_t& limb : *x) {
    const Uint128 product = MultiplyWide(limb, m) + carry;
    limb = static_cast<uint64_t>(product);
    carry = static_cast<uint64_t>(product >> 64);
  }
}

// x = floor(x / d): at most one unit of the last place below x / d.
inline void DivideSmall(Fixed* x, uint64_t d) {
  if (d >> 32 == 0) {
    // Two 64-bit steps per limb (the remainder stays below d < 2^32): no
    // 128-bit division, a call in WebAssembly.
    uint64_t r = 0;
    for (size_t i = x->size(); i-- > 0;) {
      const uint64_t high = (r << 32) | ((*x)[i] >> 32);
      const uint64_t q_high = high / d;
      const uint64_t low = ((high % d) << 32) | ((*x)[i] & 0xFFFFFFFFu);
      (*x)[i] = (q_high << 32) | (low / d);
      r = low % d;
    }
    return;
  }
  Uint128 remainder = 0;
  for (size_t i = x->size(); i-- > 0;) {
    const Uint128 current = (remainder << 64) | (*x)[i];
    (*x)[i] = static_cast<uint64_t>(current / d);
    remainder = current % d;
  }
}

// x += y or x -= y; false on a carry or borrow out of the integer limb.
inline bool AddFixed(Fixed* x, const Fixed& y, bool subtract) {
  uint64_t carry = 0;
  for (size_t i = 0; i < x->size(); ++i) {
    const uint64_t a = (*x)[i];
    const uint64_t b = y[i];
    if (subtract) {
      const uint64_t difference = a - b - carry;
      carry = (a < b || (a == b && carry != 0)) ? 1 : 0;
      (*x)[i] = difference;
    } else {
      const uint64_t sum = a + b + carry;
      carry = (sum < a || (sum == a && carry != 0)) ? 1 : 0;
      (*x)[i] = sum;
    }
  }
  return carry == 0;
}

// Irrational numbers (2^-f, exp(-gamma)) are compared with a lazily drawn
// uniform U in [0, 1) by their binary digits: the first digit where U
// differs decides (U's 0 where the number has 1 means U is below it), so a
// comparison reads about two bits. The digits come as `count` certain ones
// in words, first digit highest (the last word's low bits unused).

// The fraction digits that `low` and `high` share (fixed point, `limbs`
// fraction limbs): what every number between them begins with, into
// *words; returns how many.
inline int SharedLeadingDigits(const Fixed& low, const Fixed& high,
                               size_t limbs, std::vector<uint64_t>* words) {
  words->clear();
  int count = 0;
  for (size_t i = limbs; i-- > 0;) {
    if (low[i] == high[i]) {
      words->push_back(low[i]);
      count += 64;
      continue;
    }
    const int shared = __builtin_clzll(low[i] ^ high[i]);
    if (shared > 0) {
      words->push_back(low[i] & (~uint64_t{0} << (64 - shared)));
      count += shared;
    }
    break;
  }
  return count;
}

// U's digits against `take` expected ones that differ somewhere (first
// digit highest): consumes through the first that differs and answers 1
// if U's is the 0 there (U below), else 0.
DPQ_HOT_INLINE inline int DecideAtDifference(BitReader& bits, uint64_t expected,
                                             uint64_t drawn, int take) {
  const int decide = __builtin_clzll(expected ^ drawn) - (64 - take);
  bits.Consume(decide + 1);
  return expected > drawn ? 1 : 0;
}

// CompareDigits past its inline first step: every digit left.
[[gnu::noinline]] inline int CompareRemainingDigits(BitReader& bits,
                                                    const uint64_t* words,
                                                    int count, int position) {
  while (position < count) {
    const int offset = position % 64;
    const int take =
        std::min({BitReader::kMaxPeek, count - position, 64 - offset});
    const uint64_t expected = (words[position / 64] << offset) >> (64 - take);
    const uint64_t drawn = bits.Peek(take);
    if (!bits.healthy()) return 0;
    if (expected != drawn)
      return DecideAtDifference(bits, expected, drawn, take);
    bits.Consume(take);
    position += take;
  }
  return -1;
}

// U's next digits against digits [position, count) of `words`, up to 32
// at a time, consuming only up to the deciding one: 1 if U falls below the
// number they begin, 0 if above, -1 if all agree (all consumed; also 0 on
// an unhealthy source). Inline: up to 32 digits from a word's start, which
// decide but about once in 2^32, or once in 2^count for fewer (the
// discrete Laplace's trials and the 2^-f trial run it for every draw).
DPQ_HOT_INLINE inline int CompareDigits(BitReader& bits, const uint64_t* words,
                                        int count, int position) {
  if (position % 64 == 0 && count > position) {
    const int take = std::min(BitReader::kMaxPeek, count - position);
    const uint64_t expected = words[position / 64] >> (64 - take);
    const uint64_t drawn = bits.Peek(take);
    if (expected != drawn && bits.healthy()) {
      return DecideAtDifference(bits, expected, drawn, take);
    }
  }
  return CompareRemainingDigits(bits, words, count, position);
}

}  // namespace dpq

#endif  // DPQ_CORE_BITS_H_
