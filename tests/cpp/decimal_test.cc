#include "core/decimal.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "core/random.h"

namespace dpq {
namespace {

Decimal D(const char* text) { return *Decimal::Parse(text); }

TEST(DecimalTest, WrittenIsWhatJavaScriptPrints) {
  EXPECT_EQ(Decimal::Written(0.2).ToString(), "0.2");
  EXPECT_EQ(Decimal::Written(0.1 + 0.2).ToString(), "0.30000000000000004");
  EXPECT_EQ(Decimal::Written(1).ToString(), "1");
  EXPECT_EQ(Decimal::Written(1e-7).ToString(), "1e-7");
  EXPECT_EQ(Decimal::Written(1.5e21).ToString(), "1.5e+21");
  EXPECT_EQ(Decimal::Written(123456789012345680000.0).ToString(),
            "123456789012345680000");
  EXPECT_EQ(Decimal::Written(5e-324).ToString(), "5e-324");
  EXPECT_EQ(Decimal::Written(DBL_MAX).ToString(), "1.7976931348623157e+308");
  EXPECT_EQ(Decimal::Written(0.000001).ToString(), "0.000001");
  EXPECT_EQ(Decimal::Written(2.9000000000000004).ToString(),
            "2.9000000000000004");
  EXPECT_TRUE(Decimal::Written(0).IsZero());
}

TEST(DecimalTest, WrittenReadsBackAndIsShortest) {
  // Random doubles over many magnitudes: the decimal reads back as the
  // double, and no decimal with one digit fewer does (checked against the
  // correctly rounded one, the nearest of that length, and its neighbours).
  SeededRandom rng(7);
  for (int i = 0; i < 20000; ++i) {
    const double x =
        std::ldexp(1 + UniformDouble(rng),
                   static_cast<int>(UniformInteger(rng, 200)) - 100);
    const Decimal written = Decimal::Written(x);
    const std::string text = written.ToString();
    ASSERT_EQ(std::strtod(text.c_str(), nullptr), x) << text;
    ASSERT_EQ(written.Nearest(), x);
    char shorter[48];
    std::string significant;
    for (char c : text) {
      if (c == 'e') break;
      if (c >= '0' && c <= '9' && !(significant.empty() && c == '0'))
        significant.push_back(c);
    }
    while (significant.back() == '0') significant.pop_back();
    const int digits = static_cast<int>(significant.size());
    if (digits > 1) {
      std::snprintf(shorter, sizeof(shorter), "%.*e", digits - 2, x);
      ASSERT_NE(std::strtod(shorter, nullptr), x) << text << " " << shorter;
    }
  }
}

TEST(DecimalTest, BudgetsAddUpAsWritten) {
  const Decimal one = Decimal::Integer(1);
  EXPECT_EQ(Decimal::Written(0.2).Plus(Decimal::Written(0.8)), one);
  EXPECT_EQ(Decimal::Written(0.1).Plus(Decimal::Written(0.9)), one);
  EXPECT_EQ(Decimal::Written(0.7)
                .Plus(Decimal::Written(0.2))
                .Plus(Decimal::Written(0.1)),
            one);
  Decimal ten_tenths;
  for (int i = 0; i < 10; ++i)
    ten_tenths = ten_tenths.Plus(Decimal::Written(0.1));
  EXPECT_EQ(ten_tenths, one);
  EXPECT_EQ(Decimal::Written(0.1)
                .Plus(Decimal::Written(0.2))
                .Plus(Decimal::Written(2.7)),
            Decimal::Integer(3));
  // Their doubles do not.
  EXPECT_LT(one, Decimal::Exact(0.1).TimesInteger(10));
  EXPECT_LT(one,
            Decimal::Written(0.2).Plus(Decimal::Written(0.8)).Plus(D("1e-9")));
}

TEST(DecimalTest, ExactIsTheDoublesValue) {
  EXPECT_EQ(Decimal::Exact(0.1).ToString(),
            "0.1000000000000000055511151231257827021181583404541015625");
  EXPECT_EQ(Decimal::Exact(0.5).ToString(), "0.5");
  EXPECT_EQ(Decimal::Exact(1024).ToString(), "1024");
  EXPECT_EQ(Decimal::Exact(std::ldexp(1.0, 70)).ToString(),
            "1.180591620717411303424e+21");
  EXPECT_EQ(Decimal::Exact(std::ldexp(1.0, 60)).ToString(),
            "1152921504606846976");
  EXPECT_LT(Decimal::Written(0.2), Decimal::Exact(0.2));  // fl(0.2) > 1/5
  EXPECT_LT(Decimal::Exact(0.3), Decimal::Written(0.3));  // fl(0.3) < 3/10
}

TEST(DecimalTest, DownAndUpBracketTheDecimal) {
  // 0.2: its double is above one fifth, so a mechanism runs with the next
  // double below; 0.3's double is below 3/10 and is used as is.
  EXPECT_EQ(D("0.2").Down(), std::nextafter(0.2, 0.0));
  EXPECT_EQ(D("0.2").Up(), 0.2);
  EXPECT_EQ(D("0.3").Down(), 0.3);
  EXPECT_EQ(D("0.3").Up(), std::nextafter(0.3, 1.0));
  EXPECT_EQ(D("0.5").Down(), 0.5);
  EXPECT_EQ(D("0.5").Up(), 0.5);
  EXPECT_EQ(D("1e400").Down(), DBL_MAX);
  EXPECT_TRUE(std::isinf(D("1e400").Up()));
  EXPECT_EQ(D("1e-400").Down(), 0);
  EXPECT_EQ(D("1e-400").Up(), 5e-324);
  SeededRandom rng(11);
  for (int i = 0; i < 5000; ++i) {
    const double x =
        std::ldexp(1 + UniformDouble(rng),
                   static_cast<int>(UniformInteger(rng, 100)) - 50);
    const Decimal written = Decimal::Written(x);
    const double down = written.Down();
    const double up = written.Up();
    ASSERT_LE(Decimal::Exact(down), written);
    ASSERT_LT(written, Decimal::Exact(std::nextafter(down, INFINITY)));
    ASSERT_LE(written, Decimal::Exact(up));
    ASSERT_LT(Decimal::Exact(std::nextafter(up, 0.0)), written);
    ASSERT_TRUE(down == x || down == std::nextafter(x, 0.0));
  }
}

TEST(DecimalTest, ArithmeticAndOrder) {
  EXPECT_EQ(D("0.3").Minus(D("0.1")), D("0.2"));
  EXPECT_EQ(D("1").Minus(D("1")), Decimal());
  EXPECT_EQ(D("0.2").Times(D("0.2")), D("0.04"));
  EXPECT_EQ(D("1.5").TimesInteger(4), D("6"));
  EXPECT_EQ(D("1e300").Plus(D("1e-300")).Minus(D("1e300")), D("1e-300"));
  EXPECT_LT(D("0.999999999999999999999"), D("1"));
  EXPECT_LT(D("1"), D("1.000000000000000000001"));
  EXPECT_LT(D("99"), D("100"));
  EXPECT_EQ(D("00012.50e1").ToString(), "125");
  EXPECT_EQ(D("1000000000000000000000").ToString(), "1e+21");
  EXPECT_EQ(D("0.0000001").ToString(), "1e-7");
  EXPECT_EQ(D("1.0000000000000000000001").ToString(17), "1.0000000000000001");
  EXPECT_EQ(D("0.99999999999999999999").ToString(5), "1");
  EXPECT_FALSE(Decimal::Parse("").has_value());
  EXPECT_FALSE(Decimal::Parse("-1").has_value());
  EXPECT_FALSE(Decimal::Parse("1e").has_value());
  EXPECT_FALSE(Decimal::Parse("1.2.3").has_value());
  EXPECT_FALSE(Decimal::Parse("1e999999").has_value());
  EXPECT_FALSE(Decimal::Parse("0x10").has_value());
  EXPECT_FALSE(Decimal::Parse(".").has_value());
}

}  // namespace
}  // namespace dpq
