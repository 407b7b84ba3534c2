#include "core/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/bits.h"
#include "tests/cpp/test_util.h"

namespace dpq {
namespace {

TEST(SeededRandomTest, ChaChaBlockMatchesRfc8439TestVector) {
  // RFC 8439, section 2.3.2.
  std::array<uint32_t, 8> key;
  for (int i = 0; i < 8; ++i) {
    key[i] = static_cast<uint32_t>(4 * i) |
             (static_cast<uint32_t>(4 * i + 1) << 8) |
             (static_cast<uint32_t>(4 * i + 2) << 16) |
             (static_cast<uint32_t>(4 * i + 3) << 24);
  }
  const std::array<uint32_t, 16> block =
      SeededRandom::Block(key, 1, {0x09000000, 0x4a000000, 0x00000000});
  const std::array<uint32_t, 16> expected = {
      0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033,
      0x9aaa2204, 0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
      0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
  EXPECT_EQ(block, expected);
}

TEST(SeededRandomTest, SameSeedSameStreamOtherSeedOtherStream) {
  SeededRandom a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.NextUint64();
    EXPECT_EQ(x, b.NextUint64());
    EXPECT_NE(x, c.NextUint64());
  }
}

TEST(SecureRandomTest, DeliversDistinctValuesAndStaysHealthy) {
  SecureRandom rng;
  std::vector<uint64_t> values;
  for (int i = 0; i < 200; ++i)
    values.push_back(rng.NextUint64());  // > 1 refill
  EXPECT_TRUE(rng.healthy());
  std::sort(values.begin(), values.end());
  EXPECT_EQ(std::unique(values.begin(), values.end()), values.end());
}

TEST(UniformTest, DoublesStayInRangeWithTheRightMean) {
  SeededRandom rng(1);
  double sum = 0;
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) {
    const double u = UniformDouble(rng);
    const double v = UniformOpenDouble(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_GT(v, 0.0);
    ASSERT_LT(v, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / draws, 0.5, 0.005);
}

// A source that returns one fixed word: the extreme draws, scripted.
class ConstantSource final : public RandomSource {
 public:
  explicit ConstantSource(uint64_t word) : word_(word) {}
  uint64_t NextUint64() override { return word_; }

 private:
  uint64_t word_;
};

TEST(UniformTest, OpenDoublesAreInsideZeroOneAtTheExtremes) {
  // All-ones words made the 53-bit version round to exactly 1, and its log
  // to 0 (an infinite Gumbel in the old sampler).
  ConstantSource top(~uint64_t{0});
  ConstantSource bottom(0);
  EXPECT_LT(UniformOpenDouble(top), 1.0);
  EXPECT_EQ(UniformOpenDouble(top), 1.0 - std::ldexp(1.0, -53));
  EXPECT_EQ(UniformOpenDouble(bottom), std::ldexp(1.0, -53));
  EXPECT_TRUE(std::isfinite(std::log(UniformOpenDouble(bottom))));
}

TEST(UniformTest, IntegersAreUniform) {
  SeededRandom rng(2);
  EXPECT_EQ(UniformInteger(rng, 1), 0u);
  const int bound = 7;
  const double draws = 70000;
  std::vector<double> counts(bound, 0);
  for (int i = 0; i < draws; ++i) {
    const uint64_t k = UniformInteger(rng, bound);
    ASSERT_LT(k, static_cast<uint64_t>(bound));
    counts[k] += 1;
  }
  double df;
  const double statistic = testing::ChiSquare(
      counts, std::vector<double>(bound, 1.0 / bound), draws, &df);
  EXPECT_LT(statistic, testing::ChiSquareCritical(df));
  // A bound above 2^63 exercises the rejection step.
  const uint64_t huge = (uint64_t{1} << 63) + 12345;
  for (int i = 0; i < 1000; ++i) ASSERT_LT(UniformInteger(rng, huge), huge);
}

// UniformBits reads the fewest bits that hold bound - 1, most significant
// first, and rejects values at or past the bound: the same values and the
// same bits as a bit-by-bit reading, at every width (one word or two, up
// to and past 2^64, a high half of up to 32 bits and past it, to 128
// bits), and a bound of 2^64 exactly (whose low word is 0)
// terminates.
TEST(UniformTest, UniformBitsReadsTheFewestBitsBelowEveryBound) {
  const Uint128 two64 = Uint128{1} << 64;
  for (const Uint128 bound :
       {Uint128{1}, Uint128{2}, Uint128{3}, Uint128{1} << 32,
        (Uint128{1} << 32) + 1, (Uint128{1} << 33) - 1, (Uint128{3} << 40) + 5,
        Uint128{1} << 63, (Uint128{1} << 63) + 1, two64 - 1, two64, two64 + 1,
        (Uint128{1} << 65) + 1, Uint128{1} << 96, (Uint128{1} << 96) + 1,
        (Uint128{1} << 100) + 7, ~Uint128{0}}) {
    SeededRandom a(9);
    SeededRandom b(9);
    BitReader fast(a);
    BitReader slow(b);
    const int width = bound <= 1 ? 0 : BitWidth(bound - 1);
    for (int i = 0; i < 300; ++i) {
      const Uint128 value = UniformBits(fast, bound);
      ASSERT_TRUE(value < bound);
      Uint128 expected;
      do {
        expected = 0;
        for (int bit = 0; bit < width; ++bit) {
          expected = (expected << 1) | slow.Bits(1);
        }
      } while (expected >= bound);
      ASSERT_TRUE(value == expected) << "width " << width << " draw " << i;
      ASSERT_EQ(fast.consumed(), slow.consumed()) << "width " << width;
    }
    // The 64-bit form reads the same bits for the same values, and the
    // power-of-two form the same as the general one at 2^width.
    if (bound <= two64 - 1) {
      SeededRandom c(9);
      SeededRandom d(9);
      BitReader narrow(c);
      BitReader wide(d);
      for (int i = 0; i < 300; ++i) {
        const uint64_t value =
            UniformBits(narrow, static_cast<uint64_t>(bound));
        ASSERT_TRUE(value == UniformBits(wide, bound)) << "draw " << i;
        ASSERT_EQ(narrow.consumed(), wide.consumed());
      }
    }
    if (width < 128) {
      SeededRandom c(9);
      SeededRandom d(9);
      BitReader power(c);
      BitReader general(d);
      for (int i = 0; i < 300; ++i) {
        ASSERT_TRUE(UniformPowerOfTwoBits(power, width) ==
                    UniformBits(general, PowerOfTwo(width)))
            << "width " << width << " draw " << i;
        ASSERT_EQ(power.consumed(), general.consumed());
      }
    }
  }
}

}  // namespace
}  // namespace dpq
