#include "core/runs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/random.h"

namespace dpq {
namespace {

std::vector<std::pair<double, double>> Pairs(const Runs& runs) {
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < runs.size; ++i) {
    out.push_back({runs.points[i], static_cast<double>(runs.count(i))});
  }
  return out;
}

TEST(RunsTest, RunLengthEncodeCompactsInPlace) {
  using P = std::vector<std::pair<double, double>>;
  for (const auto& [points, expected] :
       std::vector<std::pair<std::vector<double>, P>>{
           {{}, {}},
           {{4}, {{4, 1}}},
           {{2, 2, 2}, {{2, 3}}},
           {{1, 2, 3}, {{1, 1}, {2, 1}, {3, 1}}},
           {{0, 0, 5, 7, 7, 7, 9}, {{0, 2}, {5, 1}, {7, 3}, {9, 1}}}}) {
    std::vector<double> data = points;
    std::vector<double> ends(data.size() + 1);
    const size_t size = RunLengthEncode(data.data(), data.size(), ends.data());
    const Runs runs{data.data(), ends.data(), size};
    EXPECT_EQ(Pairs(runs), expected);
    EXPECT_EQ(runs.total(), points.size());
  }
}

TEST(RunsTest, CountsAreRunsOfTheirOccupiedBuckets) {
  const std::vector<double> counts = {0, 3, 0, 0, 1e15, 2, 0};
  StatusOr<RunsStore> store = RunsStore::FromCounts(counts.data(), 7);
  ASSERT_TRUE(store.ok());
  const Runs runs = store.value().view();
  EXPECT_EQ(Pairs(runs), (std::vector<std::pair<double, double>>{
                             {1, 3}, {4, 1e15}, {5, 2}}));
  EXPECT_EQ(runs.total(), 1000000000000005u);
  // Ranks and points.
  EXPECT_EQ(runs.RunOfRank(0), 0u);
  EXPECT_EQ(runs.RunOfRank(2), 0u);
  EXPECT_EQ(runs.RunOfRank(3), 1u);
  EXPECT_EQ(runs.RunOfRank(1000000000000002u), 1u);
  EXPECT_EQ(runs.RunOfRank(1000000000000003u), 2u);
  EXPECT_EQ(runs.Below(4), 3u);
  EXPECT_EQ(runs.AtOrBelow(4), 1000000000000003u);
  EXPECT_EQ(runs.Below(0), 0u);
  EXPECT_EQ(runs.AtOrBelow(6), runs.total());
  const std::vector<double> zeros = {0, 0};
  StatusOr<RunsStore> none = RunsStore::FromCounts(zeros.data(), 2);
  EXPECT_EQ(none.value().view().size, 0u);
}

TEST(RunsTest, CountsBecomeRunsInPlaceAsInArraysOfTheirOwn) {
  // Several blocks, occupied buckets at random, counts up to 2^40.
  SeededRandom rng(7);
  std::vector<double> counts(5000, 0);
  for (double& c : counts) {
    if (UniformInteger(rng, 3) == 0) {
      c = static_cast<double>(UniformInteger(rng, uint64_t{1} << 40));
    }
  }
  StatusOr<RunsStore> store = RunsStore::FromCounts(counts.data(), 5000);
  ASSERT_TRUE(store.ok());
  std::vector<double> scratch = counts, points(counts.size());
  StatusOr<Runs> in_place =
      CountsToRuns(scratch.data(), 5000, points.data(), scratch.data());
  ASSERT_TRUE(in_place.ok());
  EXPECT_EQ(Pairs(in_place.value()), Pairs(store.value().view()));
  double total = 0;
  for (double c : counts) total += c;
  EXPECT_EQ(static_cast<double>(in_place.value().total()), total);

  // A bad count is named from a later block, though earlier ones are
  // already overwritten.
  scratch = counts;
  scratch[3000] = 2.5;
  StatusOr<Runs> bad =
      CountsToRuns(scratch.data(), 5000, points.data(), scratch.data());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidCounts);
  EXPECT_NE(bad.status().message().find("counts[3000]"), std::string::npos);
  // The position, never the value (docs/refusals.md).
  EXPECT_EQ(bad.status().message().find("2.5"), std::string::npos);
}

TEST(RunsTest, CountsPastTwoToThe53AreRefused) {
  std::vector<double> points(4096);
  // 2^53 - 1 in all fits; 2^53 does not.
  std::vector<double> at = {4503599627370496.0, 4503599627370495.0};
  EXPECT_TRUE(CountsToRuns(at.data(), 2, points.data(), at.data()).ok());
  std::vector<double> past = {4503599627370496.0, 4503599627370496.0};
  EXPECT_EQ(
      CountsToRuns(past.data(), 2, points.data(), past.data()).status().code(),
      StatusCode::kTooLarge);
  // 2^11 counts of 2^53: 2^64 in all (which a 64-bit integer total would
  // wrap to 0).
  std::vector<double> wrap(2048, 9007199254740992.0);
  const StatusOr<Runs> wrapped =
      CountsToRuns(wrap.data(), wrap.size(), points.data(), wrap.data());
  EXPECT_EQ(wrapped.status().code(), StatusCode::kTooLarge);
  EXPECT_EQ(wrapped.status().message().find("2048"), std::string::npos);
}

}  // namespace
}  // namespace dpq
