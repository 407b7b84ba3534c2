#include "core/prepare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/decimal.h"
#include "core/random.h"
#include "core/runs.h"

namespace dpq {
namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(ValidateBoundsTest, RejectsNonFiniteUnorderedAndOverflowingBounds) {
  EXPECT_TRUE(ValidateBounds(0, 1).ok());
  EXPECT_TRUE(ValidateBounds(-1e300, 1e300).ok());
  for (auto [lower, upper] :
       std::vector<std::pair<double, double>>{{kNan, 1},
                                              {0, kNan},
                                              {-kInf, 1},
                                              {0, kInf},
                                              {1, 1},
                                              {2, 1},
                                              {-1.7e308, 1.7e308}}) {
    const Status status = ValidateBounds(lower, upper);
    EXPECT_EQ(status.code(), StatusCode::kInvalidBounds)
        << lower << " " << upper;
    EXPECT_NE(status.message().find("lower"), std::string::npos);
  }
}

TEST(ValidateQuantilesTest, RejectsEmptyOutOfRangeAndTooMany) {
  const std::vector<double> good = {0.5, 0.1, 0.9, 0.5};
  EXPECT_TRUE(ValidateQuantiles(good.data(), good.size()).ok());
  EXPECT_EQ(ValidateQuantiles(nullptr, 0).code(),
            StatusCode::kInvalidQuantiles);
  for (double bad : {0.0, 1.0, -0.1, 1.5, kNan, kInf}) {
    const std::vector<double> quantiles = {0.5, bad};
    const Status status = ValidateQuantiles(quantiles.data(), 2);
    EXPECT_EQ(status.code(), StatusCode::kInvalidQuantiles) << bad;
    EXPECT_NE(status.message().find("quantiles[1]"), std::string::npos);
  }
  const std::vector<double> many(kMaxQuantiles + 1, 0.5);
  EXPECT_EQ(ValidateQuantiles(many.data(), many.size()).code(),
            StatusCode::kTooLarge);
}

TEST(ValidateRecordCountTest, RejectsTooManyRecords) {
  EXPECT_TRUE(ValidateRecordCount(kMaxRecords).ok());
  EXPECT_EQ(ValidateRecordCount(kMaxRecords + 1).code(), StatusCode::kTooLarge);
}

TEST(ClampAndSortTest, NamesTheFirstNonFiniteValue) {
  for (double bad : {kNan, kInf, -kInf}) {
    std::vector<double> values = {1, 2, bad, 3, kNan};
    const Status status = ClampAndSort(values.data(), values.size(), 0, 10);
    EXPECT_EQ(status.code(), StatusCode::kNonFiniteValue);
    EXPECT_NE(status.message().find("index 2"), std::string::npos)
        << status.message();
  }
}

TEST(ClampAndSortTest, ClampsToTheBoundsAndSorts) {
  std::vector<double> values = {5, -3, 12, 0, 10, 7};
  ASSERT_TRUE(ClampAndSort(values.data(), values.size(), 0, 10).ok());
  EXPECT_EQ(values, (std::vector<double>{0, 0, 5, 7, 10, 10}));
}

TEST(OutputGridTest, CellsAreMonotoneAndPointsStayInBounds) {
  const OutputGrid grid = OutputGrid::ForBounds(-3.5, 1e6);
  SeededRandom rng(5);
  std::vector<double> values = {-3.5, 1e6, -3.4999999999, 0, 999999.99999};
  for (int i = 0; i < 10000; ++i) {
    values.push_back(-3.5 + UniformDouble(rng) * (1e6 + 3.5));
  }
  std::sort(values.begin(), values.end());
  int64_t previous = 0;
  for (double x : values) {
    const int64_t cell = grid.CellOf(x);
    ASSERT_GE(cell, previous);
    ASSERT_LT(cell, grid.steps());
    // The cell's left point is at or below x, up to rounding of ValueAt.
    ASSERT_LE(grid.ValueAt(cell), x + 1e-9);
    previous = cell;
  }
  EXPECT_EQ(grid.CellOf(-3.5), 0);
  EXPECT_EQ(grid.CellOf(1e6), grid.steps() - 1);
  EXPECT_EQ(grid.ValueAt(0), -3.5);
  EXPECT_EQ(grid.ValueAt(grid.steps()), 1e6);
  double last = -kInf;
  for (int64_t j = 0; j <= grid.steps(); j += grid.steps() / 1024) {
    const double value = grid.ValueAt(j);
    ASSERT_GE(value, last);
    ASSERT_GE(value, -3.5);
    ASSERT_LE(value, 1e6);
    last = value;
  }
}

TEST(OutputGridTest, PointsSplitValuesExactlyAsCellsDo) {
  // x < ValueAt(j) exactly when CellOf(x) < j, on grids fine and coarse.
  SeededRandom rng(8);
  for (auto [lower, upper] :
       std::vector<std::pair<double, double>>{{0, 1},
                                              {-100, 100},
                                              {1e6, 1e6 + 1},
                                              {-1e300, 1e300},
                                              {0, 1e-300},
                                              {3, 3.0000000001}}) {
    const OutputGrid grid = OutputGrid::ForBounds(lower, upper);
    ASSERT_GE(grid.steps(), 1);
    for (int i = 0; i < 20000; ++i) {
      const int64_t j = 1 + static_cast<int64_t>(UniformInteger(
                                rng, static_cast<uint64_t>(grid.steps() - 1)));
      ASSERT_LT(grid.ValueAt(j - 1), grid.ValueAt(j)) << lower << " " << j;
      // Values at, just below and just above the point.
      const double v = grid.ValueAt(j);
      for (double x :
           {v, std::nextafter(v, -INFINITY), std::nextafter(v, INFINITY),
            lower + (upper - lower) * UniformDouble(rng)}) {
        if (x < lower || x > upper) continue;
        ASSERT_EQ(x < grid.ValueAt(j), grid.CellOf(x) < j)
            << lower << " " << upper << " x " << x << " j " << j;
      }
    }
  }
}

TEST(FloorProductTest, IsTheExactFloorOfTheRealProduct) {
  // (1/3 as a double) * 3 rounds up to 1.0 but is exactly below 1.
  EXPECT_EQ(std::floor((1.0 / 3.0) * 3.0), 1.0);
  EXPECT_EQ(FloorProduct(1.0 / 3.0, 3), 0);
  EXPECT_EQ(FloorProduct(0.5, 10), 5);
  EXPECT_EQ(FloorProduct(1.0, 7), 7);
  EXPECT_EQ(FloorProduct(0.0, 7), 0);
  SeededRandom rng(6);
  for (int i = 0; i < 100000; ++i) {
    const double q = UniformDouble(rng);
    const int64_t n = static_cast<int64_t>(UniformInteger(rng, 1u << 31));
    const int64_t f = FloorProduct(q, n);
    const double nd = static_cast<double>(n);
    // fma rounds once, so the sign of q n - f is exact.
    ASSERT_GE(std::fma(q, nd, -static_cast<double>(f)), 0.0);
    ASSERT_LT(std::fma(q, nd, -static_cast<double>(f + 1)), 0.0);
  }
}

TEST(FloorProductTest, ReadsStoredDecimalsExactly) {
  EXPECT_EQ(FloorProduct(0.29, 100), 28);  // 0.29 is stored just below 0.29
  EXPECT_EQ(FloorProduct(0.5, 11), 5);
}

TEST(OutputGridTest, PointOfIsTheNearestPointAndReachesUpper) {
  const OutputGrid grid(0, 10, 5);  // points 0, 2, 4, 6, 8, 10
  EXPECT_EQ(grid.PointOf(0), 0);
  EXPECT_EQ(grid.PointOf(2.9), 1);
  EXPECT_EQ(grid.PointOf(3.0), 1);  // a tie goes down
  EXPECT_EQ(grid.PointOf(3.1), 2);
  EXPECT_EQ(grid.PointOf(9.5), 5);
  EXPECT_EQ(grid.PointOf(10), 5);  // the upper bound is a point of its own
  // Monotone on a fine grid too.
  const OutputGrid fine = OutputGrid::ForBounds(-1, 3);
  SeededRandom rng(10);
  std::vector<double> xs;
  for (int i = 0; i < 10000; ++i) xs.push_back(-1 + 4 * UniformDouble(rng));
  xs.push_back(3);
  std::sort(xs.begin(), xs.end());
  int64_t previous = 0;
  for (double x : xs) {
    const int64_t j = fine.PointOf(x);
    ASSERT_GE(j, previous);
    ASSERT_LE(std::fabs(fine.ValueAt(j) - x),
              std::fabs(fine.ValueAt(std::min(j + 1, fine.steps())) - x));
    ASSERT_LE(std::fabs(fine.ValueAt(j) - x),
              std::fabs(fine.ValueAt(std::max<int64_t>(j - 1, 0)) - x));
    previous = j;
  }
  EXPECT_EQ(fine.PointOf(3), fine.steps());
}

TEST(OutputGridTest, DefaultGridsHoldRoundValuesExactly) {
  // [-20, 120]: multiples of 10^-3 (1.4 million steps would be too many at
  // 10^-4).
  OutputGrid grid = OutputGrid::Default(-20, 120);
  EXPECT_EQ(grid.resolution(), 1e-3);
  EXPECT_EQ(grid.steps(), 140000);
  EXPECT_EQ(grid.ValueAt(0), -20);
  EXPECT_EQ(grid.ValueAt(grid.steps()), 120);
  for (double v : {0.0, 0.3, 40.0, 37.5, 119.999}) {
    EXPECT_EQ(grid.ValueAt(grid.PointOf(v)), v) << v;
  }
  // Bounds that are not multiples end the grid; the multiples sit between.
  grid = OutputGrid::Default(-0.33, 0.77);
  EXPECT_EQ(grid.ValueAt(0), -0.33);
  EXPECT_EQ(grid.ValueAt(1), -0.32999);  // multiples of 10^-5
  EXPECT_EQ(grid.ValueAt(grid.steps()), 0.77);
  EXPECT_EQ(grid.ValueAt(grid.PointOf(0.5)), 0.5);
  // Strictly increasing and at most 2^20 steps, for ranges small and large.
  for (auto [lower, upper] :
       std::vector<std::pair<double, double>>{{0, 1},
                                              {0, 60},
                                              {-5e-9, 7e-9},
                                              {0, 1e12},
                                              {1e15, 1e15 + 1},
                                              {0, 1.7976931348623157e308},
                                              {-1e300, 1e300}}) {
    const OutputGrid g = OutputGrid::Default(lower, upper);
    EXPECT_LE(g.steps(), kDefaultGridSteps) << lower << " " << upper;
    EXPECT_GE(g.steps(), 1);
    const std::set<int64_t> points = {0, 1, g.steps() / 3, g.steps() - 1,
                                      g.steps()};
    double previous = -HUGE_VAL;
    for (int64_t j : points) {
      EXPECT_GT(g.ValueAt(j), previous) << lower << " " << upper << " " << j;
      previous = g.ValueAt(j);
    }
  }
}

TEST(OutputGridTest, GridsAtTheExtremesOfDoublesStayFiniteAndFast) {
  // Subnormal bounds (found by fuzz_stream: a 2^52-step grid over 8 doubles
  // made CellOf walk for hours) and bounds near the largest double.
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double max = std::numeric_limits<double>::max();
  ASSERT_LE(OutputGrid::ForBounds(0, 8 * tiny).steps(), 2);
  for (auto [lower, upper] :
       std::vector<std::pair<double, double>>{{0, 8 * tiny},
                                              {-3 * tiny, 5 * tiny},
                                              {0, 1e-310},
                                              {0, max},
                                              {1e300, max}}) {
    const OutputGrid grid = OutputGrid::ForBounds(lower, upper);
    EXPECT_GE(grid.steps(), 1);
    // Every step spans at least 4 ulps, so points are distinct doubles.
    EXPECT_LT(grid.ValueAt(grid.steps() - 1), grid.ValueAt(grid.steps()));
    EXPECT_EQ(grid.CellOf(upper), grid.steps() - 1);
    EXPECT_EQ(grid.PointOf(upper), grid.steps());
  }
}

TEST(OutputGridTest, StepGridsReleaseMultiplesOfTheStep) {
  StatusOr<OutputGrid> grid = OutputGrid::WithStep(0, 100, 1);
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid.value().steps(), 100);
  for (int64_t j = 0; j <= 100; ++j) EXPECT_EQ(grid.value().ValueAt(j), j);
  EXPECT_EQ(grid.value().PointOf(40), 40);
  EXPECT_EQ(grid.value().PointOf(39.6), 40);
  // A step that does not divide the range: the last point is upper.
  grid = OutputGrid::WithStep(0, 10, 3);
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid.value().steps(), 4);
  EXPECT_EQ(grid.value().ValueAt(3), 9);
  EXPECT_EQ(grid.value().ValueAt(4), 10);
  // Decimal steps whose ratio rounds near a whole number.
  grid = OutputGrid::WithStep(1, 5, 0.1);
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid.value().steps(), 40);
  grid = OutputGrid::WithStep(1, 5, 4);  // the range itself: 1 step
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid.value().steps(), 1);
  // Wider than the range: every value would be a bound (step 1000 on
  // [0, 100] released 0).
  grid = OutputGrid::WithStep(0, 100, 1000);
  ASSERT_FALSE(grid.ok());
  EXPECT_EQ(grid.status().code(), StatusCode::kInvalidOption);
  EXPECT_NE(grid.status().message().find("wider than"), std::string::npos);
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL, 1e-300}) {
    const StatusOr<OutputGrid> rejected = OutputGrid::WithStep(0, 1, bad);
    ASSERT_FALSE(rejected.ok()) << bad;
    EXPECT_EQ(rejected.status().code(), StatusCode::kInvalidOption);
    EXPECT_NE(rejected.status().message().find("step"), std::string::npos);
  }
  // Finer than doubles resolve near 1e15.
  EXPECT_FALSE(OutputGrid::WithStep(1e15, 1e15 + 1, 1e-3).ok());
}

TEST(SortDistinctQuantilesTest, DeduplicatesAndMapsBack) {
  const std::vector<double> quantiles = {0.9, 0.1, 0.5, 0.1};
  const SortedQuantiles sorted = SortDistinctQuantiles(quantiles.data(), 4);
  EXPECT_EQ(sorted.distinct, (std::vector<double>{0.1, 0.5, 0.9}));
  EXPECT_EQ(sorted.index_of_input, (std::vector<size_t>{2, 0, 1, 0}));
  // Strictly increasing (the shortcut), and nearly so: an equal pair, one
  // pair out of order.
  for (const std::vector<double>& input :
       std::vector<std::vector<double>>{{0.1, 0.5, 0.9},
                                        {0.1, 0.5, 0.5, 0.9},
                                        {0.1, 0.6, 0.5, 0.9},
                                        {0.25}}) {
    const SortedQuantiles s = SortDistinctQuantiles(input.data(), input.size());
    std::vector<double> expected = input;
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()),
                   expected.end());
    EXPECT_EQ(s.distinct, expected);
    ASSERT_EQ(s.index_of_input.size(), input.size());
    for (size_t i = 0; i < input.size(); ++i) {
      EXPECT_EQ(s.distinct[s.index_of_input[i]], input[i]);
    }
  }
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

// RowsToRuns(values) against clamping, sorting, mapping and run-length
// encoding one step at a time.
void ExpectStepByStep(std::vector<double> values, const OutputGrid& grid) {
  const size_t n = values.size();
  std::vector<double> expected = values;
  ASSERT_TRUE(
      ClampAndSort(expected.data(), n, grid.lower(), grid.upper()).ok());
  std::vector<double> sorted = expected;
  ConvertToPoints(expected.data(), n, grid);
  std::vector<double> expected_ends(n + 1);
  const size_t size = RunLengthEncode(expected.data(), n, expected_ends.data());
  expected.resize(size);
  expected_ends.resize(size);
  for (std::vector<double>* input : {&values, &sorted}) {
    std::vector<double> ends(n + 1);
    StatusOr<Runs> runs = RowsToRuns(input->data(), n, grid, ends.data());
    ASSERT_TRUE(runs.ok()) << runs.status().message();
    ASSERT_EQ(runs.value().size, size)
        << "steps " << grid.steps() << " n " << n;
    EXPECT_EQ(
        std::vector<double>(runs.value().points, runs.value().points + size),
        expected)
        << "steps " << grid.steps() << " n " << n
        << (input == &sorted ? " (sorted input)" : "");
    EXPECT_EQ(std::vector<double>(runs.value().ends, runs.value().ends + size),
              expected_ends)
        << "steps " << grid.steps() << " n " << n;
  }
}

// The radix and counting paths give exactly the runs of clamping, sorting,
// mapping and encoding, on every kind of grid, below and above the radix
// threshold and the digit width's, in one, two and three passes (the sorted
// keys must end where the runs are written behind them), counted in one
// bucket or many (grids of at most 2 points a record), sorted or not, with
// atoms, values on and beyond both bounds, and on a narrow cluster (the keys'
// high digits all equal).
TEST(RowsToRunsTest, IsClampingSortingMappingEncodingExactly) {
  SeededRandom rng(5);
  std::vector<OutputGrid> grids = {
      OutputGrid::Default(-20, 120), OutputGrid::Default(0, 1e-300),
      OutputGrid(0, 1, 7), OutputGrid(-3, 3, 4096, 6.0 / 4096),
      // 32 bits: three passes of 11 (one of 32 bits at most 2^32 - 2).
      OutputGrid(0, 1, (int64_t{1} << 32) - 2),
      // 23 bits: three passes of 8 at 200 records.
      OutputGrid(0, 1, int64_t{1} << 22),
      // 17 bits: at 100,000 records (at most 2 points a record) the keys
      // go to 64 buckets by their high 6 bits, and the low 11 are counted.
      OutputGrid(0, 1, 100000)};
  // At least 2^32 - 1 steps: the std::sort path.
  grids.push_back(OutputGrid(0, 1, (int64_t{1} << 32) - 1));
  grids.push_back(OutputGrid::ForBounds(0, 1));
  ASSERT_GT(grids.back().steps(), int64_t{1} << 32);
  for (const OutputGrid& grid : grids) {
    // Under 4,096: digits of as many bits as the count has; 4,096 on: 11.
    for (size_t n : {size_t{0}, size_t{1}, kRadixMinRecords - 1,
                     kRadixMinRecords, size_t{200}, size_t{1000}, size_t{4095},
                     size_t{4096}, size_t{100000}}) {
      std::vector<double> spread(n);
      std::vector<double> cluster(n);
      const double range = grid.upper() - grid.lower();
      for (size_t i = 0; i < n; ++i) {
        const double u = UniformDouble(rng);
        spread[i] = i % 9 == 0   ? grid.lower()
                    : i % 9 == 1 ? grid.upper()
                    : i % 9 == 2 ? grid.lower() + range / 3
                    : i % 9 == 3 ? grid.lower() - range
                    : i % 9 == 4 ? grid.upper() + 2 * range
                                 : grid.lower() + u * range;
        cluster[i] = grid.lower() + range * (0.5 + 1e-4 * UniformDouble(rng));
      }
      ExpectStepByStep(spread, grid);
      ExpectStepByStep(cluster, grid);
    }
  }
}

// A non-finite value is named by its index on both paths, wherever it is.
TEST(RowsToRunsTest, NamesTheFirstNonFiniteValue) {
  const OutputGrid grid = OutputGrid::Default(0, 10);
  for (size_t n : {size_t{5}, size_t{5000}}) {
    for (double bad : {kNan, kInf, -kInf}) {
      for (size_t at : {size_t{0}, size_t{2}, n - 1}) {
        std::vector<double> values(n, 3);
        values[at] = bad;
        if (at + 1 < n) values[n - 1] = kNan;
        std::vector<double> ends(n);
        const StatusOr<Runs> runs =
            RowsToRuns(values.data(), n, grid, ends.data());
        ASSERT_FALSE(runs.ok());
        EXPECT_EQ(runs.status().code(), StatusCode::kNonFiniteValue);
        EXPECT_NE(
            runs.status().message().find("index " + std::to_string(at) + " "),
            std::string::npos)
            << runs.status().message();
      }
    }
  }
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

// Step grids' points are the doubles nearest lower + k step in decimal, so
// they print as what they are: 2.9 with step 0.1, not 2.9000000000000004.
TEST(OutputGridTest, StepGridPointsAreTheirDecimals) {
  const OutputGrid tenths = OutputGrid::WithStep(0, 10, 0.1).value();
  EXPECT_EQ(tenths.ValueAt(29), 2.9);
  EXPECT_EQ(tenths.ValueAt(48), 4.8);
  EXPECT_EQ(tenths.ValueAt(51), 5.1);
  const OutputGrid cents = OutputGrid::WithStep(-3, 7, 0.01).value();
  EXPECT_EQ(cents.ValueAt(318), 0.18);
  EXPECT_EQ(cents.ValueAt(300), 0);
  EXPECT_EQ(cents.ValueAt(1), -2.99);
  // Every point of a few grids: the decimal lower + k step, read back.
  for (const auto& [lower, upper, step] :
       std::vector<std::tuple<double, double, double>>{{0, 10, 0.1},
                                                       {-3, 7, 0.01},
                                                       {-20, 120, 0.5},
                                                       {1.5, 2.5, 0.001},
                                                       {-0.3, 0.3, 0.03}}) {
    const OutputGrid grid = OutputGrid::WithStep(lower, upper, step).value();
    const Decimal low = Decimal::Written(std::fabs(lower));
    const Decimal width = Decimal::Written(step);
    for (int64_t k = 0; k < grid.steps(); ++k) {
      const Decimal moved = width.TimesInteger(static_cast<uint32_t>(k));
      // lower + k step, signed, as a decimal string.
      std::string text;
      if (lower >= 0) {
        text = low.Plus(moved).ToString();
      } else if (low <= moved) {
        text = moved.Minus(low).ToString();
      } else {
        text = "-" + low.Minus(moved).ToString();
      }
      ASSERT_EQ(grid.ValueAt(k), std::strtod(text.c_str(), nullptr))
          << lower << " " << step << " " << k;
    }
    // And the grid still maps each point to itself.
    for (int64_t k = 0; k <= grid.steps(); ++k) {
      ASSERT_EQ(grid.PointOf(grid.ValueAt(k)), k);
    }
  }
}

}  // namespace
}  // namespace dpq

namespace dpq {
namespace {

// PointOf's shortcut on decimal grids answers what comparing values does,
// also a few ulps from the rounded points' midpoints (where the shortcut
// must step aside) and from the points themselves, on default and step
// grids near 0, far from it and with wide strides. With the slack 2^4
// times smaller this fails (the errors seen reach about half the bound's
// 2^-53 X; the slack is 2^-50 X).
// Decimal grids (default and `step`) whose shortcut the tests below check:
// bounds that are multiples and not, near 0 and far from it, and two whose
// points are too far from 0 for their spacing to have a shortcut at all
// (+-1e300 and [1e15, 1e15 + 1]).
std::vector<OutputGrid> DecimalGrids() {
  std::vector<OutputGrid> grids = {OutputGrid::Default(0, 100),
                                   OutputGrid::Default(-20, 120),
                                   OutputGrid::Default(-0.33, 0.77),
                                   OutputGrid::Default(0.30000000000000004, 7),
                                   OutputGrid::Default(-5e-9, 7e-9),
                                   OutputGrid::Default(0, 1e12),
                                   OutputGrid::Default(1e15, 1e15 + 1),
                                   OutputGrid::Default(123456.7, 123457.9),
                                   OutputGrid::Default(1e9, 1e9 + 100),
                                   OutputGrid::Default(-1e300, 1e300)};
  for (const auto& [lower, upper, step] :
       std::vector<std::tuple<double, double, double>>{{0, 10, 0.1},
                                                       {-3, 7, 0.01},
                                                       {1.5, 2.5, 0.001},
                                                       {-0.3, 0.3, 0.03},
                                                       {-20, 120, 0.7},
                                                       {1e9, 1e9 + 50, 0.25}}) {
    grids.push_back(OutputGrid::WithStep(lower, upper, step).value());
  }
  return grids;
}

TEST(OutputGridTest, PointOfShortcutMatchesComparingValues) {
  SeededRandom rng(11);
  const std::vector<OutputGrid> grids = DecimalGrids();
  int64_t checked = 0;
  for (const OutputGrid& grid : grids) {
    auto check = [&](double x) {
      if (!(x >= grid.lower() && x <= grid.upper())) return;
      ASSERT_EQ(grid.PointOf(x), grid.PointOfByValues(x))
          << std::setprecision(17) << grid.lower() << " " << grid.upper() << " "
          << x;
      ++checked;
    };
    const int64_t steps = grid.steps();
    for (int i = 0; i < 4000; ++i) {
      const int64_t j = i < 40 ? i % 4 + (i < 20 ? 0 : steps - 4)
                               : static_cast<int64_t>(UniformInteger(
                                     rng, static_cast<uint64_t>(steps)));
      const double here = grid.ValueAt(j);
      const double next = grid.ValueAt(j + 1);
      for (double x :
           {here, next, here + (next - here) / 2, here * 0.5 + next * 0.5,
            here + UniformDouble(rng) * (next - here)}) {
        double up = x;
        double down = x;
        for (int k = 0; k < 12; ++k) {
          check(up);
          check(down);
          up = std::nextafter(up, HUGE_VAL);
          down = std::nextafter(down, -HUGE_VAL);
        }
      }
    }
  }
  EXPECT_GT(checked, 1000000);
}

TEST(OutputGridTest, PointOfShortcutRefusesValuesOutsideTheBounds) {
  // RowsToRuns asks the shortcut before it checks or clamps a value: it
  // must say nothing of values below lower or above upper (a value just
  // beyond a bound, a step beyond, far beyond), nor of NaN and the
  // infinities, on grids whose bounds are points (multiples) and not.
  const std::vector<OutputGrid> grids = DecimalGrids();
  int with_shortcut = 0;
  for (const OutputGrid& grid : grids) {
    const double lower = grid.lower();
    const double upper = grid.upper();
    const double spacing = grid.ValueAt(2) - grid.ValueAt(1);
    int64_t point = 0;
    // Inside: the shortcut holds somewhere (else this test says nothing).
    with_shortcut +=
        grid.shortcut().Nearest(grid.ValueAt(grid.steps() / 2), &point) ? 1 : 0;
    std::vector<double> outside = {NAN, -INFINITY, INFINITY, -1e308, 1e308};
    for (double gap :
         {spacing / 2, spacing, 1.5 * spacing, 3 * spacing, 1e6 * spacing}) {
      outside.push_back(lower - gap);
      outside.push_back(upper + gap);
    }
    double below = lower;
    double above = upper;
    for (int k = 0; k < 64; ++k) {
      below = std::nextafter(below, -INFINITY);
      above = std::nextafter(above, INFINITY);
      outside.push_back(below);
      outside.push_back(above);
    }
    for (double x : outside) {
      if (x >= lower && x <= upper) continue;
      ASSERT_FALSE(grid.shortcut().Nearest(x, &point))
          << std::setprecision(17) << lower << " " << upper << " x " << x;
    }
  }
  // All but the two DecimalGrids says have none.
  EXPECT_EQ(with_shortcut, static_cast<int>(grids.size()) - 2);
}

}  // namespace
}  // namespace dpq
