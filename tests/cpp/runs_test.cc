#include "core/runs.h"

#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace dpq
