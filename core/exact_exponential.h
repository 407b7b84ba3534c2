// Exact sampling from weights size * 2^-y, the form every exponential
// mechanism of the core is put in (exponential_quantile.h, dp_exp_gk.h).
//
// A mechanism asks for P(o) proportional to size(o) exp(-s d(o)) with a
// public rate s (epsilon over twice the sensitivity) and a distance d(o) >= 0
// that is a dyadic rational. It is run instead with the base-two rate
// r = M 2^-64 <= s / ln 2 (M an integer, rounded down), so that
//   weight(o) = size(o) 2^-y(o),   y(o) = min(r d(o), 2^40),
// an exact dyadic rational for every output. Using r ln 2 <= s only makes the
// mechanism more private, and capping y at 2^40 (weights below 2^-2^40) is
// capping the utility at a public constant, which never increases its
// sensitivity. So the guarantee proved for rate s holds for what is sampled.
//
// The sampler never rounds (Ilvento 2020 makes the same point for the base-2
// exponential mechanism; the construction here is ours):
//  1. Proposal. Output o has the dyadic proposal weight 2^a(o) with
//     a = ceil(log2 size) - floor(y) >= log2 weight. A table of such weights
//     is drawn from with integer arithmetic (DyadicTable): an entry far below
//     the largest (a < top - 64) is proposed as if it weighed 2^(top - 64)
//     and then kept with probability 2^(a - top + 64), a run of zero bits.
//  2. Acceptance, in independent exact trials whose product is
//     weight / 2^a: size / 2^ceil(log2 size) (a rational), and
//     2^-frac(y), by comparing a lazily drawn uniform with the digits of
//     2^-frac(y) until they differ: its leading digits from a
//     floating-point value with a proven error bound (the digits every
//     value within the bound shares), the rest, about once in 2^40 trials,
//     from the series of exp(-frac(y) ln 2) with certified digits of ln 2,
//     refined as far as the uniform needs (so never rounded).
//     (Until version 0.2, Canonne, Kamath and Steinke's Algorithm 1, whose
//     coins Bernoulli(frac(y) ln 2 / k) divided 128-bit brackets by k.)
//  3. A rejected proposal is drawn again. Each round returns o with
//     probability proportional to 2^a(o) weight(o) / 2^a(o) = weight(o).
// Parts of the output range that are not worth listing (far tails) enter the
// table as one entry whose dyadic weight bounds the sum of their proposal
// weights from above; when drawn, the part is listed and drawn from in the
// same way, with the bound's unused remainder counting as a rejection. The
// support therefore never depends on the data.
#ifndef DPQ_CORE_EXACT_EXPONENTIAL_H_
#define DPQ_CORE_EXACT_EXPONENTIAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/bits.h"

namespace dpq {

// Fraction bits of an exponent y.
constexpr int kExponentFractionBits = 84;
// The cap on y (weights below 2^-2^40 are all treated as 2^-2^40). Part of
// the mechanism's definition; privacy-neutral (see above).
constexpr uint64_t kMaxWholeExponent = uint64_t{1} << 40;

// y = whole + fraction 2^-84, fraction < 2^84.
struct Exponent {
  uint64_t whole = 0;
  Uint128 fraction = 0;
  double Value() const;  // y as a double (for likelihoods and tests)
};

// The base-two rate r = M 2^-64 used for a rate s (see above).
class BaseTwoRate {
 public:
  // The largest M 2^-64 <= s / ln 2 that the rounding below certifies; s must
  // be finite and >= 0. Rates above 2^40 use 2^40.
  explicit BaseTwoRate(double s);
  // y = min(r d, 2^40) for d = distance 2^-20 (distance in 2^-20 units).
  // Inline: every listed output asks for one. A multiplier below 2^64 (any
  // rate below 2^20 bits per rank) times a 64-bit distance cannot overflow
  // 128 bits, so only larger ones take the checked path.
  Exponent ExponentFor(uint64_t distance) const {
    if ((multiplier_ >> 64) != 0) return WideExponentFor(distance);
    const Uint128 product =
        MultiplyWide(static_cast<uint64_t>(multiplier_), distance);
    Exponent e;
    if ((product >> kExponentFractionBits) >= kMaxWholeExponent) {
      e.whole = kMaxWholeExponent;
      return e;
    }
    e.whole = static_cast<uint64_t>(product >> kExponentFractionBits);
    e.fraction = product & ((Uint128{1} << kExponentFractionBits) - 1);
    return e;
  }
  // floor(y) alone: what a listing reads (no fraction formed).
  uint64_t WholeFor(uint64_t distance) const {
    if ((multiplier_ >> 64) != 0) return WideExponentFor(distance).whole;
    const auto whole = static_cast<uint64_t>(
        MultiplyWide(static_cast<uint64_t>(multiplier_), distance) >>
        kExponentFractionBits);
    return whole < kMaxWholeExponent ? whole : kMaxWholeExponent;
  }
  // r ln 2: the rate actually applied (<= s), in nats per unit of distance.
  double NaturalRate() const;
  Uint128 multiplier() const { return multiplier_; }

 private:
  Exponent WideExponentFor(uint64_t distance) const;

  Uint128 multiplier_ = 0;  // M
};

// One output group of an exact draw: `size` outputs (>= 1) of weight
// 2^-exponent each.
struct ExactWeight {
  Uint128 size = 1;
  Exponent exponent;
  // ceil(log2 size) - floor(y): the proposal's dyadic exponent.
  int64_t ProposalExponent() const {
    return static_cast<int64_t>(CeilLog2(size)) -
           static_cast<int64_t>(exponent.whole);
  }
};

// True with probability 2^-(fraction 2^-84), fraction < 2^84: the acceptance
// trial of step 2 above. Exposed for the tests, which enumerate its bits.
bool BernoulliTwoToMinusFraction(BitReader& bits, Uint128 fraction);
// The trial's first 8 or 9 digits come from a table of stretches of f
// (exact_exponential.cc), the next from TwoToMinusDouble, which lies within
// 2^-kTwoToMinusDoubleErrorBits of 2^-f: the Taylor polynomial of degree
// 15 leaves below 0.7^16 / 16! < 2^-52; Horner's 30 roundings in double,
// with coefficients rounded to the nearest, below 31 2^-53 sum_k z^k / k!
// < 2^-46 (z < ln 2); the rounding of f (2^-51 relative) and of f ln 2
// (2^-52 relative) move z by below 2^-50 and exp(-z) by as much. The
// trial takes the digits shared by all values within 2^-kTwoToMinusWindow
// Bits of the double, a window 2^6 times the bound. Exactness-relevant
// (a window narrower than the error would round 2^-f): the tests check
// the bound on 10^5 values against the certified digits. A wider window
// costs only speed (the exact series takes over about once in 2^(w - 1)
// trials).
constexpr int kTwoToMinusDoubleErrorBits = 46;
constexpr int kTwoToMinusWindowBits = 40;
// 2^-f for f = fraction 2^-84 in [0, 1), in double (no library exp2: the
// error bound above is for this arithmetic).
double TwoToMinusDouble(Uint128 fraction);
// The trial with a window of 2^-window_bits around the double (<= 0: the
// exact series' digits from the first): the tests widen the window so
// that the hand-over to the series runs often, and compare both paths.
bool BernoulliTwoToMinusFractionForTest(BitReader& bits, Uint128 fraction,
                                        int window_bits);
// The certain leading digits of 2^-f at `limbs` (>= 2) limbs of the series
// (first digit highest in words[0]): how many. For the tests.
int TwoToMinusDigitsForTest(Uint128 fraction, int limbs,
                            std::vector<uint64_t>* words);
// True with probability size / 2^ceil(log2 size).
bool BernoulliSizeShare(BitReader& bits, Uint128 size);
// ln 2 2^(64 limbs) lies in [L, L + 2) for the returned L (limbs
// little-endian).
std::vector<uint64_t> Ln2Digits(int limbs);
// For the tests: the two-limb bracket [low, high] 2^-128 of gamma =
// fraction 2^-84 ln 2 that the exact series starts from, by the general
// limb arithmetic or by the 128-bit path it takes.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> LnTwoBracketForTest(
    Uint128 fraction, bool two_limb_path);

// Dyadic proposal weights 2^a_i, drawn exactly (step 1 above).
class DyadicTable {
 public:
  // How far below the largest weight an entry still gets its exact share
  // of units; lower ones are rounded up to one unit and thinned. Any value
  // is exact; tests lower it. Not privacy-relevant.
  static constexpr int kDefaultHeadroom = 64;

  void Reset(int headroom = kDefaultHeadroom);
  void Add(int64_t exponent);
  void Reserve(size_t entries) { exponents_.reserve(entries); }
  // Builds the prefix sums; call after the last Add.
  void Finish();
  // The same with another headroom than Reset's.
  void Finish(int headroom) {
    headroom_ = headroom;
    Finish();
  }
  size_t size() const { return exponents_.size(); }

  // An entry i with probability units_i / 2^ceil(log2 total units), else
  // kNone (below 1/2): proportional to its weight (after Thin) whenever
  // one is drawn. A caller draws again or rejects its round; a rejected
  // round reads no more bits.
  size_t Draw(BitReader& bits) const;
  // An entry i with probability units_i 2^unit / 2^cap, else npos (the
  // rest of 2^cap): for a part whose weights are bounded by 2^cap in total.
  static constexpr size_t kNone = ~size_t{0};
  size_t DrawWithin(BitReader& bits, int64_t cap) const;
  // The thinning of step 1 for entry i: always true unless i was rounded up.
  bool Thin(BitReader& bits, size_t i) const;

 private:
  // Up to this many entries an entry is found by counting, not searching
  // (EntryAt). Not privacy-relevant: the same entry either way.
  static constexpr size_t kCountedEntries = 32;
  size_t EntryAt(Uint128 v) const;

  std::vector<int64_t> exponents_;
  std::vector<Uint128> prefix_;  // prefix_[i]: units of entries [0, i]
  int64_t unit_ = 0;             // log2 of one unit
  int headroom_ = kDefaultHeadroom;
};

// Proposal weights size_i 2^e_i (size_i >= 1), each drawn with an offset
// below its size: entry i and offset o with probability 2^e_i / C, C one
// constant for all, else none. The weight is kept in units of
// 2^(top - headroom) (2^top bounds every weight): exactly where a unit is
// at most 2^e_i, else as ceil(size_i 2^e_i / unit) units, and an offset
// drawn there has its low digits drawn apart and is rejected at or past
// the size (which thins the rounding). So a band of a draw is proposed by
// its size, not by its size rounded up to a power of two, and one uniform
// names both the band and the output in it.
class SizedTable {
 public:
  static constexpr size_t kNone = ~size_t{0};
  struct Drawn {
    size_t entry = kNone;
    Uint128 offset = 0;
  };

  // top() before any Add.
  static constexpr int64_t kNoTop = std::numeric_limits<int64_t>::min();

  void Reset() {
    sizes_.clear();
    exponents_.clear();
    prefix_.clear();
    top_ = kNoTop;
  }
  // `size_bits`: ceil(log2 size), which the caller has.
  DPQ_HOT_INLINE void Add(Uint128 size, int64_t exponent, int64_t size_bits) {
    sizes_.push_back(size);
    exponents_.push_back(exponent);
    top_ = std::max(top_, size_bits + exponent);
  }
  // Builds the units, of 2^(top - headroom) with 2^top the largest bound
  // 2^(ceil(log2 size) + e); call after the last Add. A headroom (>= 1)
  // past 61 - log2(entries) is lowered to it, so that every count of units
  // stays in 64 bits (128-bit arithmetic is emulated in WebAssembly): past 2^19
  // entries at the draws' headroom, and the draws' group bound holds up to
  // 2^30 (exponential_quantile.cc), more than a heap holds. Any headroom
  // is exact.
  void Finish(int headroom);
  size_t size() const { return sizes_.size(); }
  // The largest bound's exponent, ceil(log2 size) + e.
  int64_t top() const { return top_; }

  // As above, or entry kNone (below 1/2).
  Drawn Draw(BitReader& bits) const;
  // Entry i and offset o with probability 2^(e_i - cap), else kNone: for a
  // part whose weights, with their units' rounding, sum to at most 2^cap.
  Drawn DrawWithin(BitReader& bits, int64_t cap) const;

 private:
  Drawn At(BitReader& bits, uint64_t v) const;

  std::vector<Uint128> sizes_;
  std::vector<int64_t> exponents_;
  std::vector<uint64_t> prefix_;  // prefix_[i]: units of entries [0, i]
  int64_t top_ = kNoTop;          // 2^top_ >= every weight
  int64_t unit_ = 0;              // log2 of one unit
};

// True with probability 2^-count (count zero bits in a row).
bool BernoulliTwoToMinus(BitReader& bits, uint64_t count);

// Draws from weights given by natural logarithms computed in floating point
// (the joint mechanisms' dynamic program, joint_exp.h): entry i has the
// weight w_i = f_i 2^k_i with k_i = floor(z_i), f_i = exp2(z_i - k_i) in
// [1, 2] and z_i = log_weights[i] log2(e), all three as the doubles compute
// them. Draw returns i with probability exactly w_i / sum_j w_j: the top bits
// of each weight are exact power-of-two entries of a DyadicTable (so no
// weight underflows, however small), the rest a proposal kept by exact digit
// comparison. -inf entries weigh 0; at least one must be finite. Relative to
// exp(log_weights[i]), w_i is off by at most 2^-52 (|z_i| + 2) in log space,
// given exp2 within 2 ulps (joint_exp.h counts it). Holds its scratch, so
// one object serves many draws.
class LogWeightDraw {
 public:
  // Most entries near the top drawn as several exact pieces (Draw); more
  // are one proposal each. Memory only: any value is exact. Not
  // privacy-relevant.
  static constexpr size_t kMostSplitEntries = 4096;
  // The most bytes a draw over `entries` weights holds: three per-entry
  // arrays, and the pieces with their table entries (exact reservations).
  static double ScratchBytes(double entries);

  size_t Draw(const std::vector<double>& log_weights, BitReader& bits,
              int headroom = DyadicTable::kDefaultHeadroom);

 private:
  struct Piece {
    size_t index;
    uint64_t keep;  // kept with probability keep / scale
    uint64_t scale;
  };
  DyadicTable table_;
  std::vector<Piece> pieces_;
  std::vector<int64_t> exponents_;
  std::vector<uint64_t> mantissas_;
  std::vector<size_t> indices_;
};

}  // namespace dpq

#endif  // DPQ_CORE_EXACT_EXPONENTIAL_H_
