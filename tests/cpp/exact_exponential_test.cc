// The exact exponential-mechanism sampler, tested on its random bits: a
// scripted source enumerates every bit string a trial can read (depth-first,
// extending a prefix only when the trial read past it), so each outcome's
// probability is known exactly up to the mass of the prefixes cut off at the
// depth limit. An exact sampler's outcome probabilities must then bracket the
// ideal ones; a floating-point sampler's cannot, wherever its rounding moves
// a probability by more than the cut-off mass.
#include "core/exact_exponential.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "core/exponential_quantile.h"
#include "core/random.h"
#include "tests/cpp/enumerate.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

using testing::Enumerate;
using testing::Enumeration;
using testing::kSanitized;

TEST(ExactExponentialTest, Ln2DigitsAreCertified) {
  // floor(ln 2 2^256) from Python's decimal at 120 digits.
  const std::vector<uint64_t> expected = {
      0x8a0d175b8baafa2bULL, 0x40f343267298b62dULL, 0xc9e3b39803f2f6afULL,
      0xb17217f7d1cf79abULL};
  const std::vector<uint64_t> digits = Ln2Digits(4);
  ASSERT_EQ(digits.size(), 4u);
  // L is floor(ln 2 2^256) or one below it.
  std::vector<uint64_t> plus_one = digits;
  for (uint64_t& limb : plus_one) {
    if (++limb != 0) break;
  }
  EXPECT_TRUE(digits == expected || plus_one == expected);
  // Two limbs are the top of four.
  const std::vector<uint64_t> two = Ln2Digits(2);
  EXPECT_TRUE(two[1] == expected[3]);
  EXPECT_LE(expected[2] - two[0], 1u);
}

// The 32-bit path of MultiplyWide and PowerOfTwo is what WebAssembly runs
// (this test runs there too); the reference is the compiler's 128-bit
// arithmetic.
TEST(ExactExponentialTest, WideHelpersAgreeWithPlainUint128) {
  const uint64_t edges[] = {0,
                            1,
                            2,
                            0xFFFFFFFFu,
                            uint64_t{1} << 32,
                            (uint64_t{1} << 32) + 1,
                            uint64_t{1} << 63,
                            ~uint64_t{0} - 1,
                            ~uint64_t{0}};
  std::vector<uint64_t> values(std::begin(edges), std::end(edges));
  SeededRandom rng(5);
  for (int i = 0; i < 2000; ++i) {
    values.push_back(rng.NextUint64() >> (rng.NextUint64() % 64));
  }
  for (uint64_t a : values) {
    for (size_t j = 0; j < values.size(); j += 7) {
      const uint64_t b = values[j];
      ASSERT_TRUE(MultiplyWide(a, b) == static_cast<Uint128>(a) * b)
          << a << " * " << b;
    }
  }
  for (int k = 0; k < 128; ++k) {
    EXPECT_TRUE(PowerOfTwo(k) == Uint128{1} << k) << k;
  }
  // DivideSmall's 64-bit path (divisors below 2^32) and its 128-bit one,
  // against 128-bit division of a two-limb number; MultiplySmall back.
  const uint64_t divisors[] = {1,
                               2,
                               3,
                               7,
                               1000003,
                               0xFFFFFFFFu,
                               uint64_t{1} << 32,
                               (uint64_t{1} << 32) + 1,
                               ~uint64_t{0}};
  for (int i = 0; i < 3000; ++i) {
    const uint64_t low = values[static_cast<size_t>(i) % values.size()];
    const uint64_t high = rng.NextUint64() >> (rng.NextUint64() % 64);
    const uint64_t d = i < 9 * 50
                           ? divisors[i % 9]
                           : (rng.NextUint64() >> (rng.NextUint64() % 64)) | 1;
    const Uint128 x = (static_cast<Uint128>(high) << 64) | low;
    Fixed f = {low, high};
    DivideSmall(&f, d);
    const Uint128 q = x / d;
    ASSERT_EQ(f[0], static_cast<uint64_t>(q))
        << low << " " << high << " / " << d;
    ASSERT_EQ(f[1], static_cast<uint64_t>(q >> 64));
    Fixed g = {static_cast<uint64_t>(q), static_cast<uint64_t>(q >> 64)};
    MultiplySmall(&g, d);
    const Uint128 back = q * d;
    ASSERT_EQ(g[0], static_cast<uint64_t>(back));
    ASSERT_EQ(g[1], static_cast<uint64_t>(back >> 64));
  }
}

TEST(ExactExponentialTest, TwoToMinusFractionIsExactOnEveryBitString) {
  // The trial as released (a 2^-40 window around the double), with a
  // window of 2^-3 (the series takes over after a few digits, often), and
  // with the series' digits alone.
  const Uint128 one = Uint128{1} << kExponentFractionBits;
  for (const int window : {kTwoToMinusWindowBits, 3, 0}) {
    for (Uint128 fraction :
         {Uint128{0}, Uint128{1}, one / 2, one / 3, one - 1, one / 1000,
          (one / 7) * 5, Uint128{0x123456789abcdefULL} << 20}) {
      const Enumeration e = Enumerate(
          [&](BitReader& bits) {
            return BernoulliTwoToMinusFractionForTest(bits, fraction, window)
                       ? 1
                       : 0;
          },
          26);
      const double f =
          std::ldexp(static_cast<double>(fraction), -kExponentFractionBits);
      const double p = std::exp2(-f);
      const double t = e.mass.count(1) ? e.mass.at(1) : 0;
      const double n = e.mass.count(0) ? e.mass.at(0) : 0;
      if (!kSanitized) EXPECT_LT(e.unresolved, 1e-4) << f;  // a real bracket
      EXPECT_LE(t, p + 1e-15) << f << " window " << window;
      EXPECT_GE(t + e.unresolved, p - 1e-15) << f << " window " << window;
      EXPECT_LE(n, 1 - p + 1e-15) << f;
      EXPECT_GE(n + e.unresolved, 1 - p - 1e-15) << f;
    }
  }
}

// A random fraction of 20 to 84 bits (never 0).
Uint128 RandomFraction(SeededRandom& rng) {
  return ((static_cast<Uint128>(rng.NextUint64()) << 64 | rng.NextUint64()) >>
          (44 + rng.NextUint64() % 65)) |
         1;
}

// The double lies within 2^-kTwoToMinusDoubleErrorBits of 2^-f (the bound
// the header proves) on 10^5 fractions and at the ends of the range: its
// value times 2^64 against 2^-f's first 64 certified digits.
TEST(ExactExponentialTest, TwoToMinusDoubleIsWithinItsBound) {
  static_assert(kTwoToMinusWindowBits <= kTwoToMinusDoubleErrorBits);
  const Uint128 one = Uint128{1} << kExponentFractionBits;
  std::vector<Uint128> fractions = {
      1, 2, one - 1, one / 2, one - (one >> 20), one >> 40};
  SeededRandom rng(41);
  for (int i = 0; i < 100000; ++i) fractions.push_back(RandomFraction(rng));
  std::vector<uint64_t> words;
  double worst = 0;
  for (const Uint128 fraction : fractions) {
    ASSERT_GE(TwoToMinusDigitsForTest(fraction, 2, &words), 64);
    const double d = TwoToMinusDouble(fraction);
    const auto scaled = static_cast<Uint128>(static_cast<uint64_t>(d * 0x1p63))
                        << 1;
    // 2^-f 2^64 lies in [words[0], words[0] + 1).
    const Uint128 digits = words[0];
    const double off = scaled >= digits
                           ? ApproximateDouble(scaled - digits)
                           : ApproximateDouble(digits - scaled) + 1;
    worst = std::max(worst, off);
  }
  EXPECT_LE(worst, std::ldexp(1.0, 64 - kTwoToMinusDoubleErrorBits));
  EXPECT_GT(worst, 0);  // a double, not the digits themselves
}

// The released trial, the trial with a 2^-3 window (handing over to the
// series after a few digits) and the series alone read the same digits
// and agree, on digits that follow 2^-f's for 0 to 200 digits and then go
// their own way: each stops at the first digit that differs from 2^-f's.
// A window narrower than the double's error takes wrong digits for
// certain, and there the paths part.
TEST(ExactExponentialTest, EveryPathReadsTheDigitsOfTwoToMinusF) {
  SeededRandom rng(23);
  int handed_over = 0;
  int narrow_wrong = 0;
  std::vector<uint64_t> words;
  const int trials = kSanitized ? 2000 : 20000;
  for (int trial = 0; trial < trials; ++trial) {
    const Uint128 fraction = RandomFraction(rng);
    const int certain = TwoToMinusDigitsForTest(fraction, 4, &words);
    ASSERT_GE(certain, 220);
    auto digit_of_p = [&](int i) {
      return static_cast<int>((words[i / 64] >> (63 - i % 64)) & 1);
    };
    std::vector<int> digits;
    const int follow = static_cast<int>(rng.NextUint64() % 201);
    for (int i = 0; i < follow; ++i) digits.push_back(digit_of_p(i));
    while (digits.size() < 1024) {
      digits.push_back(static_cast<int>(rng.NextUint64() & 1));
    }
    int agree = 0;
    while (digits[agree] == digit_of_p(agree)) ++agree;
    ASSERT_LT(agree, certain);
    const bool below = digits[agree] < digit_of_p(agree);
    // -1: the trial the samplers call.
    for (const int window : {-1, kTwoToMinusWindowBits, 3, 0, 58}) {
      testing::ScriptedSource source(digits);
      BitReader bits(source);
      const bool got = window < 0 ? BernoulliTwoToMinusFraction(bits, fraction)
                                  : BernoulliTwoToMinusFractionForTest(
                                        bits, fraction, window);
      if (window == 58) {  // narrower than the error: not a digit of 2^-f
        narrow_wrong +=
            got != below || bits.consumed() != static_cast<uint64_t>(agree + 1)
                ? 1
                : 0;
        continue;
      }
      ASSERT_EQ(got, below) << trial << " window " << window;
      ASSERT_EQ(bits.consumed(), static_cast<uint64_t>(agree + 1))
          << trial << " window " << window;
    }
    if (agree >= kTwoToMinusWindowBits) ++handed_over;
  }
  EXPECT_GT(handed_over, trials / 20);
  EXPECT_GT(narrow_wrong, trials / 100);
}

TEST(ExactExponentialTest, SizeShareAndZeroRunsAreExact) {
  for (uint64_t size : {1, 2, 3, 5, 6, 7, 1000, 4097}) {
    const Enumeration e = Enumerate(
        [&](BitReader& bits) { return BernoulliSizeShare(bits, size) ? 1 : 0; },
        24);
    const double p = static_cast<double>(size) /
                     std::ldexp(1.0, CeilLog2(static_cast<Uint128>(size)));
    const double t = e.mass.count(1) ? e.mass.at(1) : 0;
    EXPECT_LE(t, p + 1e-15);
    EXPECT_GE(t + e.unresolved, p - 1e-15);
    if (!kSanitized) EXPECT_LT(e.unresolved, 1e-6);
  }
  const Enumeration e = Enumerate(
      [](BitReader& bits) { return BernoulliTwoToMinus(bits, 5) ? 1 : 0; }, 8);
  EXPECT_EQ(e.mass.at(1), 1.0 / 32);
  EXPECT_EQ(e.unresolved, 0);
}

TEST(ExactExponentialTest, DyadicTableDrawsEachEntryByItsWeight) {
  // Entries far below the top are rounded up to one unit and thinned; with
  // headroom 3 that is every entry below 2^2.
  const std::vector<int64_t> exponents = {5, 3, 3, 2, 0, -1, -4};
  DyadicTable table;
  table.Reset(3);
  for (int64_t e : exponents) table.Add(e);
  table.Finish();
  auto check = [&](const Enumeration& e, double scale) {
    if (!kSanitized) EXPECT_LT(e.unresolved, 1e-5);
    for (size_t i = 0; i < exponents.size(); ++i) {
      const double got = e.mass.count(static_cast<int64_t>(i))
                             ? e.mass.at(static_cast<int64_t>(i))
                             : 0;
      const double want = std::ldexp(scale, static_cast<int>(exponents[i]));
      EXPECT_LE(got, want + 1e-15) << i;
      EXPECT_GE(got + e.unresolved, want - 1e-15) << i;
    }
  };
  // Draw then Thin: probability 2^a_i / (2^ceil(log2 units) 2^unit), the
  // same constant for every entry (the rest: none drawn).
  const Enumeration drawn = Enumerate(
      [&](BitReader& bits) -> int64_t {
        const size_t i = table.Draw(bits);
        if (i == DyadicTable::kNone) return -1;
        return table.Thin(bits, i) ? static_cast<int64_t>(i) : -1;
      },
      24);
  double units = 0;
  for (int64_t e : exponents)
    units += std::ldexp(1.0, static_cast<int>(std::max<int64_t>(e - 2, 0)));
  check(drawn, 1.0 / (std::exp2(std::ceil(std::log2(units))) * 4));
  // DrawWithin a cap of 2^8: probability 2^(a_i - 8), the rest nothing.
  const Enumeration within = Enumerate(
      [&](BitReader& bits) -> int64_t {
        const size_t i = table.DrawWithin(bits, 8);
        if (i == DyadicTable::kNone) return -1;
        return table.Thin(bits, i) ? static_cast<int64_t>(i) : -1;
      },
      24);
  check(within, std::ldexp(1.0, -8));
}

TEST(ExactExponentialTest, SizedTableDrawsEachOutputByItsWeight) {
  // Entries of size s and exponent e: each of an entry's s offsets comes
  // with probability 2^e / C, one C for all. With headroom 4 the top entry
  // spans 2^4 units; the others are kept exactly (a unit at most 2^e) or
  // rounded up, their offsets' low digits drawn apart and thinned.
  const std::vector<std::pair<uint64_t, int64_t>> entries = {
      {5, 3}, {3, 2}, {1, 4}, {7, 0}, {6, -1}, {2, -3}, {9, -6}, {1, -9}};
  SizedTable table;
  for (const auto& [size, exponent] : entries) {
    table.Add(size, exponent, CeilLog2(static_cast<Uint128>(size)));
  }
  table.Finish(4);
  auto outcome = [](const SizedTable::Drawn& d) -> int64_t {
    if (d.entry == SizedTable::kNone) return -1;
    return static_cast<int64_t>(d.entry) * 100 + static_cast<int64_t>(d.offset);
  };
  auto check = [&](const Enumeration& e, double scale) {
    if (!kSanitized) EXPECT_LT(e.unresolved, 1e-5);
    for (const auto& [key, mass] : e.mass) {
      if (key < 0) continue;
      const auto i = static_cast<size_t>(key / 100);
      ASSERT_LT(i, entries.size()) << key;
      ASSERT_LT(static_cast<uint64_t>(key % 100), entries[i].first) << key;
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      for (uint64_t o = 0; o < entries[i].first; ++o) {
        const int64_t key = static_cast<int64_t>(i * 100 + o);
        const double got = e.mass.count(key) ? e.mass.at(key) : 0;
        const double want =
            std::ldexp(scale, static_cast<int>(entries[i].second));
        EXPECT_LE(got, want + 1e-15) << i << " " << o;
        EXPECT_GE(got + e.unresolved, want - 1e-15) << i << " " << o;
      }
    }
  };
  // Draw: 2^e / (2^ceil(log2 units) 2^unit), unit = top - 4 = 2^(6 - 4)
  // (the largest bound 2^(ceil(log2 5) + 3)).
  double units = 0;
  for (const auto& [size, exponent] : entries) {
    const double exact =
        static_cast<double>(size) * std::ldexp(1.0, exponent - 2);
    units += std::ceil(exact);
  }
  check(
      Enumerate([&](BitReader& bits) { return outcome(table.Draw(bits)); }, 28),
      1.0 / (std::exp2(std::ceil(std::log2(units))) * 4));
  // DrawWithin a cap of 2^9: 2^(e - 9).
  check(Enumerate(
            [&](BitReader& bits) { return outcome(table.DrawWithin(bits, 9)); },
            28),
        std::ldexp(1.0, -9));
}

// The trials start from a two-limb bracket of gamma computed in 128-bit
// words; it equals the general limb arithmetic's, limb for limb, at the
// ends of the range, at powers of two and at 20,000 random fractions.
TEST(ExactExponentialTest, TwoLimbBracketEqualsTheGeneralOne) {
  std::vector<Uint128> fractions = {1,
                                    2,
                                    3,
                                    (Uint128{1} << 84) - 1,
                                    (Uint128{1} << 83),
                                    (Uint128{1} << 64),
                                    (Uint128{1} << 64) - 1};
  for (int b = 0; b < 84; ++b) fractions.push_back(Uint128{1} << b);
  SeededRandom rng(17);
  for (int i = 0; i < 20000; ++i) {
    const Uint128 f =
        (static_cast<Uint128>(rng.NextUint64()) << 64 | rng.NextUint64()) >>
        (44 + rng.NextUint64() % 80);
    fractions.push_back(f == 0 ? 1 : f);
  }
  for (const Uint128 f : fractions) {
    const auto general = LnTwoBracketForTest(f, false);
    const auto fast = LnTwoBracketForTest(f, true);
    ASSERT_EQ(fast.first, general.first);
    ASSERT_EQ(fast.second, general.second);
    ASSERT_EQ(fast.first.size(), 2u);
    ASSERT_EQ(fast.second.size(), 3u);
  }
}

// One round of the quantile sampler, enumerated: every output's probability
// is a common constant times its ideal probability. The split form with K
// sub-points a point: (point, split) by SplitProbabilities (the records'
// sub-points are fixed, so nothing else is drawn).
void CheckRoundIsExact(const std::vector<double>& cells, int64_t steps,
                       double q, double epsilon, bool split, int margin,
                       int headroom, size_t depth,
                       PointMeasure measure = PointMeasure(),
                       double max_unresolved = 0.03, uint64_t k = 1,
                       int exact_bits = kExactBandBits, int skew = 0) {
  const RunsStore runs = testing::RunsOf(cells);
  QuantileProblem problem = QuantileProblem::Whole(runs.view(), steps, q);
  problem.measure = measure;
  ExponentialQuantileSampler sampler(epsilon, k);
  sampler.set_tail_margin_bits(margin);
  sampler.set_headroom(headroom);
  sampler.set_exact_band_bits(exact_bits);
  sampler.set_band_end_skew(skew);
  const Enumeration e = Enumerate(
      [&](BitReader& bits) -> int64_t {
        const auto out = sampler.RoundForTest(problem, split, bits);
        if (!out.has_value()) return -1;
        return split ? out->point * 1000 + static_cast<int64_t>(out->split)
                     : out->point;
      },
      depth);
  std::map<int64_t, double> ideal;
  if (split) {
    for (const auto& [output, p] :
         SplitProbabilities(problem, epsilon, k, false)) {
      ideal[output.first * 1000 + static_cast<int64_t>(output.second)] += p;
    }
  } else {
    for (int64_t v = 0; v <= steps; ++v) {
      ideal[v] = std::exp(PointLogProbability(problem, epsilon, v));
    }
  }
  double accepted = 0;
  for (const auto& [outcome, mass] : e.mass) {
    if (outcome >= 0) {
      ASSERT_TRUE(ideal.count(outcome)) << outcome;
      accepted += mass;
    }
  }
  if (!kSanitized) {
    ASSERT_LT(e.unresolved, max_unresolved * accepted) << e.leaves;
    ASSERT_GT(accepted, 0.05);
  }
  // P(round gives o) = c p(o) with c in [accepted, accepted + unresolved].
  for (const auto& [outcome, p] : ideal) {
    const double got = e.mass.count(outcome) ? e.mass.at(outcome) : 0;
    EXPECT_LE(got, (accepted + e.unresolved) * p + 1e-12)
        << "output " << outcome << " q " << q;
    EXPECT_GE(got + e.unresolved, accepted * p - 1e-12)
        << "output " << outcome << " q " << q;
  }
}

// The split form with K > 1 on records at distinct points (each record's
// sub-point fixed at floor(K / 2)): a rank's item holds the top sub-gap of
// one point, the empty points after it and the lowest sub-gap of the next.
// A round, enumerated over every bit string, gives output (v, r) with
// probability proportional to its sub-points' weight times 2^-y(r).
void CheckRankRoundIsExact(const std::vector<double>& cells, int64_t steps,
                           double q, double epsilon, uint64_t k, int margin,
                           size_t depth, PointMeasure measure = PointMeasure(),
                           int headroom = 2, double max_unresolved = 0.03,
                           int exact_bits = kExactBandBits) {
  CheckRoundIsExact(cells, steps, q, epsilon, true, margin, headroom, depth,
                    measure, max_unresolved, k, exact_bits);
}

TEST(ExactExponentialTest, RankRoundIsExactOnEveryBitString) {
  const std::vector<double> cells = {0, 2, 5, 9, 14, 16};
  CheckRankRoundIsExact(cells, 16, 0.5, 0.7, 2, 64, 24);
  CheckRankRoundIsExact(cells, 16, 0.3, 3.0, 4, 1, 24);
  CheckRankRoundIsExact(cells, 16, 0.7, 3.0, 2, 64, 24);
  // A far sub-gap several bits below the near one: the run of zero bits.
  CheckRankRoundIsExact(cells, 16, 0.5, 4.0, 2, 64, 25);
  // Small epsilon: bands of several ranks, one item each.
  CheckRankRoundIsExact(cells, 16, 0.5, 0.2, 2, 64, 24);
  CheckRankRoundIsExact(cells, 16, 0.1, 0.3, 4, 64, 24);
  CheckRankRoundIsExact({0, 3, 3, 3, 3, 3, 4, 9}, 12, 0.8, 0.1, 4, 64, 24);
  // Wide bands from the start (2, 4, 8 bits of floor(y)): an output's
  // acceptance 2^-(y - the band's least floor(y)) reads its whole part's
  // zero bits, with groups (margin 1) and without.
  for (int margin : {64, 1}) {
    CheckRankRoundIsExact(cells, 16, 0.5, 3.0, 2, margin, 24, PointMeasure(), 2,
                          0.03, 0);
    CheckRankRoundIsExact(cells, 16, 0.3, 1.5, 4, margin, 24, PointMeasure(), 1,
                          0.03, 0);
    CheckRankRoundIsExact({0, 3, 3, 3, 3, 3, 4, 9}, 12, 0.8, 2.0, 4, margin, 24,
                          PointMeasure(), 2, 0.03, 0);
  }
}

TEST(ExactExponentialTest, RoundIsExactWhereverBandsEnd) {
  // Bands ended short of the guess or past it (ranks whose floor(y) is
  // past the band's width, accepted with more zero bits): the same law,
  // both forms, bands of one rank and of several, with groups and without.
  const std::vector<double> cells = {0, 2, 2, 5, 9, 9, 9, 14, 16};
  for (const int skew : {-2, -1, 1, 3}) {
    for (const bool split : {false, true}) {
      CheckRoundIsExact(cells, 16, 0.5, 0.2, split, 64, 2, 24, PointMeasure(),
                        0.03, 2, kExactBandBits, skew);
      CheckRoundIsExact(cells, 16, 0.3, 1.5, split, 1, 2, 24, PointMeasure(),
                        0.03, 2, 0, skew);
    }
    CheckRoundIsExact({0, 3, 3, 3, 3, 3, 4, 9}, 12, 0.8, 0.3, true, 64, 2, 24,
                      PointMeasure(), 0.03, 4, kExactBandBits, skew);
  }
}

TEST(ExactExponentialTest, QuantileRoundIsExactOnEveryBitString) {
  // Small margins and headroom push mass into groups (listed when drawn)
  // and into thinned entries, so every path of the sampler is enumerated.
  const std::vector<double> cells = {0, 2, 2, 5, 9, 9, 9, 14, 16};
  for (bool split : {false, true}) {
    CheckRoundIsExact(cells, 16, 0.3, 0.7, split, 64, 2, 24);
    CheckRoundIsExact(cells, 16, 0.5, 2.0, split, 1, 2, 24);
    CheckRoundIsExact(cells, 16, 0.8, 0.2, split, 0, 1, 24);
  }
  CheckRoundIsExact({3, 3, 3, 3, 3, 3}, 7, 0.5, 1.5, true, 0, 1, 24);
  // Small epsilon: bands of many ranks and points (an atom, wide gaps),
  // listed, grouped (margin 0) and thinned.
  const std::vector<double> spread = {0, 1, 4, 4, 4, 7, 12, 13, 20, 31};
  for (bool split : {false, true}) {
    for (int margin : {64, 0}) {
      CheckRoundIsExact(spread, 40, 0.4, 0.15, split, margin, 2, 24);
      CheckRoundIsExact(spread, 40, 0.9, 0.05, split, margin, 1, 24);
    }
    CheckRoundIsExact(spread, 40, 0.3, 0.1, split, 1, 2, 22,
                      PointMeasure::Shells(0, 40, 16, 1), 0.3);
    // Wide bands from the start, listed and grouped, on a uniform and a
    // shell measure.
    for (int margin : {64, 1}) {
      CheckRoundIsExact(spread, 40, 0.4, 1.5, split, margin, 2, 24,
                        PointMeasure(), 0.03, 1, 0);
      CheckRoundIsExact(cells, 16, 0.3, 2.5, split, margin, 2, 24,
                        PointMeasure(), 0.03, 1, 0);
      CheckRoundIsExact(spread, 40, 0.7, 1.0, split, margin, 2, 22,
                        PointMeasure::Shells(0, 40, 16, 1), 0.3, 1, 0);
    }
  }
}

TEST(ExactExponentialTest, WeightedRoundsAreExactOnEveryBitString) {
  // The endpoint-shell base measure: gaps draw their point by weight, items
  // and groups carry masses, ranks their sub-points' weights. Weights read more
  // bits a round (a gap's point, odd sizes), so up to a fifth of the mass is
  // left unresolved at this depth; every outcome is still bounded on both
  // sides, and SamplerMatchesExactWithAShellMeasure adds the chi-square test.
  const std::vector<double> cells = {0, 3, 3};
  for (const auto& [first, last] :
       std::vector<std::pair<uint32_t, uint32_t>>{{4, 1}, {1, 4}}) {
    const PointMeasure measure = PointMeasure::Shells(0, 5, first, last);
    for (bool split : {false, true}) {
      CheckRoundIsExact(cells, 5, 0.3, 0.7, split, 64, 4, 22, measure, 0.3);
      CheckRoundIsExact(cells, 5, 0.8, 0.2, split, 0, 4, 22, measure, 0.3);
    }
    CheckRankRoundIsExact({0, 3}, 5, 0.5, 0.7, 2, 64, 22, measure, 4, 0.3);
    CheckRankRoundIsExact({1, 3}, 5, 0.3, 1.0, 2, 1, 22, measure, 4, 0.3);
  }
}

// The weight LogWeightDraw gives a log-weight: f 2^k from z = l log2(e).
double ConvertedWeight(double log_weight, int shift) {
  const double z = log_weight * 1.4426950408889634;
  const double whole = std::floor(z);
  return std::ldexp(std::exp2(z - whole), static_cast<int>(whole) + shift);
}

TEST(ExactExponentialTest, LogWeightDrawIsExactOnEveryBitString) {
  // Weights as the doubles give them, -inf never drawn; a shift of every
  // log-weight by -2000 (each weight below 2^-2885, zero as a double) leaves
  // the draw's probabilities unchanged up to the conversion's rounding; and
  // with headroom 2, entries far below the top take the one-proposal path.
  struct Case {
    std::vector<double> logs;
    double shift;
    int headroom;
  };
  const std::vector<double> base = {0.0, -0.3, -HUGE_VAL, -2.5, 0.7};
  for (const Case& c : {Case{base, 0, 8}, Case{base, -2000, 8},
                        Case{{0.0, -4.0, -HUGE_VAL, -5.0, 0.2}, 0, 2}}) {
    std::vector<double> logs = c.logs;
    for (double& l : logs) l += c.shift;
    LogWeightDraw draw;
    const Enumeration e = Enumerate(
        [&](BitReader& bits) -> int64_t {
          return static_cast<int64_t>(draw.Draw(logs, bits, c.headroom));
        },
        24);
    // Rounds are rejected where the table's total just passes a power of
    // two (its uniform draw is by rejection): some mass stays unresolved,
    // and every outcome is still bracketed.
    if (!kSanitized) EXPECT_LT(e.unresolved, 0.1);
    // 2885 bits of scale brought back inside doubles' range.
    const int back = c.shift == 0 ? 0 : 2885;
    double total = 0;
    for (double l : logs) {
      if (l > -HUGE_VAL) total += ConvertedWeight(l, back);
    }
    EXPECT_EQ(e.mass.count(2), 0u);
    for (size_t i = 0; i < logs.size(); ++i) {
      if (i == 2) continue;
      const double want = ConvertedWeight(logs[i], back) / total;
      const double got = e.mass.count(static_cast<int64_t>(i))
                             ? e.mass.at(static_cast<int64_t>(i))
                             : 0;
      EXPECT_LE(got, want * (1 + 1e-12)) << i << " shift " << c.shift;
      EXPECT_GE(got + e.unresolved, want * (1 - 1e-12))
          << i << " shift " << c.shift;
      // The converted weight is exp(l) to within 2^-52 (|z| + 2) in log
      // space.
      const double exact = std::exp(c.logs[i]);
      EXPECT_NEAR(ConvertedWeight(c.logs[i], 0), exact, exact * 1e-15);
    }
  }
}

TEST(ExactExponentialTest, BaseTwoRateNeverExceedsTheRate) {
  for (double s : {1e-12, 0.001, 0.25, 0.5, 1.0, 3.7, 1e6, 1e12, 1e300}) {
    const BaseTwoRate rate(s);
    EXPECT_LE(rate.NaturalRate(), s) << s;
    if (s < 1e11) {  // below the 2^40 cap: only M's floor (2^-64) is lost
      EXPECT_GT(rate.NaturalRate(), s * (1 - 1e-9) - std::ldexp(1.0, -64)) << s;
    }
    // Exponents are exact: M d 2^-84, capped at 2^40.
    const Exponent e = rate.ExponentFor(uint64_t{3} << 20);
    const double y =
        std::ldexp(static_cast<double>(rate.multiplier()), -64) * 3;
    EXPECT_NEAR(e.Value(), std::min(y, std::ldexp(1.0, 40)), 1e-9 * y + 1e-300);
  }
  EXPECT_EQ(BaseTwoRate(0).ExponentFor(12345).Value(), 0);
}

// Rates of a bit a rank and more (M at or above 2^64) take ExponentFor's
// wide path: its whole part and fraction against the product M d formed
// here, capped at 2^40, bit for bit, up to distances where the product
// leaves 128 bits. (A rewrite of that path in two 64-bit products was
// checked with this test; it measured no faster and was not kept.)
TEST(ExactExponentialTest, WideExponentsAreTheExactProduct) {
  SeededRandom rng(41);
  int wide = 0;
  int capped = 0;
  for (int i = 0; i < 20000; ++i) {
    // s from 0.7 nats a rank (M just above 2^64) to past the 2^40 cap.
    const double s = 0.7 * std::ldexp(1.0, static_cast<int>(i % 48));
    const BaseTwoRate rate(s);
    if ((rate.multiplier() >> 64) == 0) continue;
    ++wide;
    const int bits = 1 + static_cast<int>(rng.NextUint64() % 64);
    const uint64_t distance =
        bits == 64 ? rng.NextUint64() : rng.NextUint64() >> (64 - bits);
    Uint128 product = 0;
    Exponent expected;
    if (__builtin_mul_overflow(rate.multiplier(),
                               static_cast<Uint128>(distance), &product) ||
        (product >> kExponentFractionBits) >= kMaxWholeExponent) {
      expected.whole = kMaxWholeExponent;
      ++capped;
    } else {
      expected.whole = static_cast<uint64_t>(product >> kExponentFractionBits);
      expected.fraction = product & ((Uint128{1} << kExponentFractionBits) - 1);
    }
    const Exponent e = rate.ExponentFor(distance);
    ASSERT_EQ(e.whole, expected.whole) << s << " " << distance;
    ASSERT_TRUE(e.fraction == expected.fraction) << s << " " << distance;
    ASSERT_EQ(rate.WholeFor(distance), expected.whole);
  }
  EXPECT_GT(wide, 15000);
  EXPECT_GT(capped, 1000);
  EXPECT_LT(capped, wide - 1000);
}

}  // namespace
}  // namespace dpq
