#include "core/output_walk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/random.h"
#include "core/runs.h"

namespace dpq {
namespace {

// A problem over random runs (atoms among them), on a slice of their ranks
// as AQ's nodes read them, with the uniform or a shell measure.
struct Case {
  RunsStore store;
  QuantileProblem problem;
};

Case RandomCase(SeededRandom& rng, int measure) {
  std::vector<std::pair<int64_t, uint64_t>> runs;
  int64_t point = static_cast<int64_t>(rng.NextUint64() % 3);
  const int size = 1 + static_cast<int>(rng.NextUint64() % 8);
  for (int i = 0; i < size; ++i) {
    const uint64_t roll = rng.NextUint64() % 4;
    runs.push_back({point, roll == 0 ? 1 + rng.NextUint64() % 5 : 1});
    point += 1 + static_cast<int64_t>(rng.NextUint64() % 4);
  }
  Case c;
  c.store = RunsStore::FromPairs(runs);
  const Runs view = c.store.view();
  const uint64_t total = std::max<uint64_t>(view.total(), 1);  // >= 1 run
  uint64_t lo = rng.NextUint64() % total;
  uint64_t hi = lo + 1 + rng.NextUint64() % (total - lo);
  int64_t first = view.point(view.RunOfRank(lo));
  int64_t last = view.point(view.RunOfRank(hi - 1));
  if (rng.NextUint64() % 2 == 0) {  // the whole, with room at the ends
    lo = 0;
    hi = total;
    first = 0;
    last = point + 2;
  }
  c.problem = {view, lo, hi, first, last, 0.5};
  if (measure == 1)
    c.problem.measure = PointMeasure::Shells(first, last, 16, 1);
  if (measure == 2) {
    c.problem.measure = PointMeasure::Shells(first, last, 1, 16, 0, 2, 2, 0);
  }
  return c;
}

// Every sub-point of [first, last] lies in exactly one rank: upward from
// rank 0 the sizes add up to K times the base mass, downward from n they
// come in the reverse order and agree; a walker started at any rank sees
// that rank's outputs as the full walks do; and at every step the bound on
// what is left covers what is left.
TEST(OutputWalkTest, RanksPartitionTheSubPointsWhicheverWayWalked) {
  SeededRandom rng(11);
  int cases = 0;
  for (int trial = 0; trial < 300; ++trial) {
    for (uint64_t k : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4},
                       uint64_t{1} << 32}) {
      const Case c = RandomCase(rng, trial % 3);
      const QuantileProblem& p = c.problem;
      const RunRange range = ProblemRuns(p);
      const uint64_t n = p.count();
      const int shift = SubPointShift(k);
      std::vector<Uint128> up;
      std::vector<int> bits_left;
      RankWalker walker(p, range, k, true, 0);
      while (!walker.done()) {
        ASSERT_EQ(walker.next_rank(), up.size());
        up.push_back(walker.Outputs().Size(k, shift));
        bits_left.push_back(static_cast<int>(walker.SizeBitsLeft()));
        walker.Next([](uint64_t, int64_t, uint64_t, uint64_t) {});
      }
      ASSERT_EQ(up.size(), n + 1);
      Uint128 total = 0;
      for (const Uint128 s : up) total += s;
      Uint128 above = total;
      for (uint64_t r = 0; r <= n; ++r) {
        EXPECT_GE(PowerOfTwo(bits_left[r]), above) << r;
        above -= up[r];
      }
      EXPECT_TRUE(total ==
                  MultiplyWide(p.measure.Mass(p.first_point, p.last_point), k));
      RankWalker down(p, range, k, false, n);
      Uint128 left = total;
      for (uint64_t r = n + 1; r-- > 0;) {
        ASSERT_FALSE(down.done());
        ASSERT_EQ(down.next_rank(), r);
        EXPECT_TRUE(down.Outputs().Size(k, shift) == up[r]) << r;
        EXPECT_GE(PowerOfTwo(static_cast<int>(down.SizeBitsLeft())), left);
        left -= up[r];
        down.Next([](uint64_t, int64_t, uint64_t, uint64_t) {});
      }
      EXPECT_TRUE(down.done());
      for (uint64_t r = 0; r <= n; ++r) {
        const RankWalker at(p, range, k, true, r);
        EXPECT_TRUE(at.Outputs().Size(k, shift) == up[r]) << r;
        if (r < n) {
          const RankWalker below(p, range, k, false, r);
          EXPECT_TRUE(below.Outputs().Size(k, shift) == up[r]) << r;
        }
      }
      ++cases;
    }
  }
  EXPECT_EQ(cases, 1500);
}

// Segments (the atom-aware form's items) cover [first, last] once, with
// their masses, from any starting run outward in both directions.
TEST(OutputWalkTest, SegmentsCoverTheRangeOnce) {
  SeededRandom rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const Case c = RandomCase(rng, trial % 3);
    const QuantileProblem& p = c.problem;
    const RunRange range = ProblemRuns(p);
    const size_t run =
        range.first +
        rng.NextUint64() % std::max<size_t>(range.end - range.first, 1);
    const int64_t point = p.runs.point(run);
    uint64_t mass = p.measure.Weight(point);
    int64_t points = 1;
    for (const bool upward : {true, false}) {
      SegmentWalker walker(p, range, upward, upward ? run + 1 : run,
                           upward ? point + 1 : point - 1);
      EXPECT_EQ(walker.mass_left(),
                upward ? p.measure.Mass(point + 1, p.last_point)
                       : p.measure.Mass(p.first_point, point - 1));
      while (!walker.done()) {
        const Segment s = walker.Next();
        if (s.first > s.last) continue;
        EXPECT_EQ(s.mass, p.measure.Mass(s.first, s.last));
        mass += s.mass;
        points += s.last - s.first + 1;
      }
    }
    EXPECT_EQ(points, p.last_point - p.first_point + 1);
    EXPECT_EQ(mass, p.measure.Mass(p.first_point, p.last_point));
  }
}

}  // namespace
}  // namespace dpq
