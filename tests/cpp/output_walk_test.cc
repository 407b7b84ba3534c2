#include "core/output_walk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/exact_exponential.h"
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

// The output at sub-point position `g` of [first, last] in (point,
// sub-point) order (K sub-points of a point's weight each) and its rank by
// the definition (exponential_quantile.h): the records below its point and
// those of its point whose fixed sub-point lies below its sub-point.
std::pair<int64_t, uint64_t> OutputAt(const QuantileProblem& p, uint64_t k,
                                      Uint128 g) {
  for (int64_t v = p.first_point; v <= p.last_point; ++v) {
    const Uint128 size = MultiplyWide(p.measure.Weight(v), k);
    if (g >= size) {
      g -= size;
      continue;
    }
    const auto s = static_cast<int64_t>(g / p.measure.Weight(v));
    const uint64_t below = p.Below(v);
    const uint64_t c = p.AtOrBelow(v) - below;
    uint64_t before = 0;
    while (before < c && SubGapBound(c, k, before + 1) < s) ++before;
    return {v, below + before};
  }
  return {p.last_point + 1, 0};
}

// Every sub-point of [first, last] lies in exactly one rank: the edges'
// spans are the ranks' sizes and add up to K times the base mass, and an
// offset into a rank's outputs locates a point whose sub-point there has
// that rank by the definition (sampled offsets: the first, the last, and
// random ones).
TEST(OutputWalkTest, RunOfRecordFindsTheRunFromEveryHint) {
  // Runs of one record and of several, on slices of their ranks: from any
  // hint (in the range or not) the search gives the run holding the
  // record, as a binary search over all runs does.
  SeededRandom rng(31);
  for (int trial = 0; trial < 400; ++trial) {
    const Case c = RandomCase(rng, 0);
    const QuantileProblem& p = c.problem;
    if (p.count() == 0) continue;
    const RunRange range = ProblemRuns(p);
    for (uint64_t record = 0; record < p.count(); ++record) {
      const size_t expected = p.runs.RunOfRank(p.lo + record);
      for (size_t hint = 0; hint <= p.runs.size + 1; ++hint) {
        ASSERT_EQ(RunOfRecord(p, range, record, hint), expected)
            << "trial " << trial << " record " << record << " hint " << hint;
      }
    }
  }
}

TEST(OutputWalkTest, RankEdgesSizeAndLocateEveryRanksOutputs) {
  SeededRandom rng(11);
  int cases = 0;
  int single = 0;  // ranges of one record a run (read without counts)
  for (int trial = 0; trial < 300; ++trial) {
    for (uint64_t k : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4},
                       uint64_t{1} << 32}) {
      const Case c = RandomCase(rng, trial % 3);
      const QuantileProblem& p = c.problem;
      const RunRange range = ProblemRuns(p);
      single += range.single ? 1 : 0;
      const RankEdges edges(p, range, k);
      const uint64_t n = p.count();
      const int shift = SubPointShift(k);
      size_t hint = range.first + rng.NextUint64() % (range.end - range.first);
      const RankEdge start = edges.At(0, &hint);
      Uint128 total = 0;
      for (uint64_t r = 0; r <= n; ++r) {
        hint = range.first + rng.NextUint64() % (range.end - range.first);
        const RankEdge low = edges.At(r, &hint);
        const RankEdge high = edges.At(r + 1, &hint);
        const RankOutputs o = OutputsOfRank(
            p, range, k, r,
            range.first + rng.NextUint64() % (range.end - range.first));
        const Uint128 size = o.Size(k, shift);
        ASSERT_TRUE(edges.Span(low, high) == size) << r;
        ASSERT_TRUE(edges.Span(start, low) == total) << r;
        if (size > 0 && k <= 4) {
          for (const Uint128 offset :
               {Uint128{0}, size - 1,
                static_cast<Uint128>(rng.NextUint64()) % size}) {
            const auto [point, rank] = OutputAt(p, k, total + offset);
            EXPECT_EQ(o.Locate(offset, p.measure, k, shift), point) << r;
            EXPECT_EQ(rank, r);
          }
        }
        total += size;
      }
      EXPECT_TRUE(total ==
                  MultiplyWide(p.measure.Mass(p.first_point, p.last_point), k));
      ++cases;
    }
  }
  EXPECT_EQ(cases, 1500);
  // Both ways of reading a run: by its counts, and as record i's (first + i).
  EXPECT_GT(single, 300);
  EXPECT_LT(single, 1200);
}

// floor(y) as the draws compute it, with guesses that are the exact answer
// (`exact`: the last rank on that side whose floor(y) is `whole`) or at
// random (where bands end changes, the exponent bound must not).
struct TestWeights {
  const QuantileProblem* p;
  BaseTwoRate rate;
  SeededRandom* rng;
  bool exact = false;
  int64_t Whole(uint64_t low, uint64_t high) const {
    return static_cast<int64_t>(rate.WholeFor(p->ScaledDistance(low, high)));
  }
  uint64_t target_rank() const {
    return static_cast<uint64_t>(p->ScaledTarget() >> kTargetFractionBits);
  }
  uint64_t Guess(int64_t whole, bool upward) const {
    if (!exact) return rng->NextUint64() % (p->count() + 3);
    // From the target outward, y only grows: the last rank at or below
    // `whole` before the first past it.
    const uint64_t n = p->count();
    uint64_t r = std::min(n, target_rank());
    if (upward) {
      while (r < n && Whole(r + 1, r + 1) <= whole) ++r;
    } else {
      while (r > 0 && Whole(r - 1, r - 1) <= whole) --r;
    }
    return r;
  }
};

// A random problem and quantile, and a rate (0.005 to 20 nats per rank).
Case RandomWeighted(SeededRandom& rng, int trial, double* rate) {
  Case c = RandomCase(rng, trial % 3);
  const double qs[] = {0, 0.1, 0.5, 0.93, 1};
  c.problem.quantile = qs[rng.NextUint64() % 5];
  const double rates[] = {0.005, 0.05, 0.3, 1, 20};
  *rate = rates[rng.NextUint64() % 5];
  return c;
}

// The split form's bands, walked up from floor(t) and down from below it
// as the draw does, each as wide as the walk asks (1 to 8 bits of
// floor(y)): together they hold every rank once; each band's ranks have
// floor(y) at least the whole the walk is told and the band records (what
// keeps a draw exact, wherever bands end); with exact guesses they have
// it below whole + width and the band ends only where the next rank's is
// past it; its size is its ranks' and its edge its first rank's; and
// before each step the bound on what is left covers it, and every rank
// left is at least as far from the target as the next one.
TEST(OutputWalkTest, BandsPartitionTheRanksAndShareTheirExponent) {
  SeededRandom rng(13);
  for (int trial = 0; trial < 1500; ++trial) {
    double rate = 0;
    const Case c = RandomWeighted(rng, trial, &rate);
    const QuantileProblem& p = c.problem;
    const TestWeights weights{&p, BaseTwoRate(rate), &rng, trial % 4 < 2};
    const uint64_t k = trial % 2 == 0 ? 2 : uint64_t{1} << 32;
    const RunRange range = ProblemRuns(p);
    const RankEdges edges(p, range, k);
    const int shift = SubPointShift(k);
    const uint64_t n = p.count();
    std::vector<Uint128> sizes;
    for (uint64_t r = 0; r <= n; ++r) {
      sizes.push_back(
          OutputsOfRank(p, range, k, r, range.first + r % 3).Size(k, shift));
    }
    size_t hint = range.first;
    const RankEdge zero = edges.At(0, &hint);
    std::vector<int> seen(n + 1, 0);
    const uint64_t start = std::min(n, weights.target_rank());
    for (const bool upward : {true, false}) {
      if (!upward && start == 0) break;
      const uint64_t from = upward ? start : start - 1;
      BandWalker<TestWeights> walker(weights, edges, n, upward, from);
      // Ranks without outputs at the start are stepped over at once.
      for (uint64_t r = std::min(from, walker.next_rank());
           r <= std::max(from, walker.next_rank()); ++r) {
        if (r == walker.next_rank()) continue;
        ++seen[r];
        ASSERT_TRUE(sizes[r] == 0) << "stepped over a rank with outputs";
      }
      while (!walker.done()) {
        const uint64_t next = walker.next_rank();
        Uint128 left = 0;
        for (uint64_t r = 0; r <= n; ++r) {
          if (upward ? r >= next : r <= next) left += sizes[r];
          // (Rank floor(t), listed first of all, may be farther than the
          // rank above it; every later one is the nearest of what is left.)
          if ((upward ? r > next : r < next) && !(upward && next == start)) {
            ASSERT_GE(weights.Whole(r, r), weights.Whole(next, next));
          }
        }
        ASSERT_GE(PowerOfTwo(static_cast<int>(walker.SizeBitsLeft())), left);
        bool listed = false;
        RankBand got;
        const int64_t whole = weights.Whole(next, next);
        const int64_t width = int64_t{1} << (rng.NextUint64() % 4);
        walker.Next(whole, width,
                    [&](const RankBand& band, int64_t size_bits, uint64_t low,
                        uint64_t high) {
                      listed = true;
                      got = band;
                      ASSERT_EQ(low, band.first);
                      ASSERT_EQ(high, band.last);
                      ASSERT_EQ(band.whole, whole);
                      ASSERT_EQ(size_bits,
                                static_cast<int64_t>(CeilLog2(band.size)));
                    });
        // The step took the ranks from `next` to where the walker is now:
        // the band, then ranks without outputs, stepped over.
        const uint64_t first = upward          ? next
                               : walker.done() ? 0
                                               : walker.next_rank() + 1;
        const uint64_t last =
            upward ? walker.done() ? n : walker.next_rank() - 1 : next;
        ASSERT_LE(first, last);
        // The walker stands on a rank with outputs (rank n may have none).
        if (!walker.done() && walker.next_rank() != n) {
          ASSERT_TRUE(sizes[walker.next_rank()] > 0) << walker.next_rank();
        }
        if (!listed) {  // an empty band (rank n alone): no sub-point
          ASSERT_EQ(next, n);
          for (uint64_t r = first; r <= last; ++r) {
            ++seen[r];
            ASSERT_TRUE(sizes[r] == 0);
          }
          continue;
        }
        ASSERT_TRUE(sizes[next] > 0 || next == n) << next;
        ASSERT_EQ(upward ? got.first : got.last, next);
        Uint128 size = 0;
        for (uint64_t r = first; r <= last; ++r) {
          ++seen[r];
          if (r < got.first || r > got.last) {
            ASSERT_TRUE(sizes[r] == 0) << "stepped over a rank with outputs";
            continue;
          }
          size += sizes[r];
          ASSERT_GE(weights.Whole(r, r), whole) << r;
          if (weights.exact) ASSERT_LT(weights.Whole(r, r), whole + width) << r;
        }
        // Maximal: the next rank out (but after floor(t), a band alone) is
        // past the band's floor(y).
        const bool beyond_exists = upward ? got.last < n : got.first > 0;
        if (weights.exact && beyond_exists && !(upward && next == start)) {
          const uint64_t beyond = upward ? got.last + 1 : got.first - 1;
          ASSERT_GE(weights.Whole(beyond, beyond), whole + width) << beyond;
        }
        ASSERT_TRUE(got.size == size);
        size_t h = got.run;
        ASSERT_TRUE(edges.Span(zero, got.edge) ==
                    edges.Span(zero, edges.At(got.first, &h)));
      }
    }
    for (uint64_t r = 0; r <= n; ++r) ASSERT_EQ(seen[r], 1) << r;
  }
}

// The atom-aware form's bands, walked up and down from the target's run
// as the draw does, each as wide as the walk asks (1 to 8 bits of
// floor(y)): with that run's point they cover [first, last] once, each
// with its mass, every point of a band has floor(y) at least its whole
// (and, with exact guesses, below whole + width, the band ending only
// where the next point's is past it), the bound on what is left covers
// it, and every point left is at least as far from the target as the next
// rank.
TEST(OutputWalkTest, PointBandsCoverTheRangeOnceAndShareTheirExponent) {
  SeededRandom rng(14);
  for (int trial = 0; trial < 1500; ++trial) {
    double rate = 0;
    const Case c = RandomWeighted(rng, trial, &rate);
    const QuantileProblem& p = c.problem;
    const TestWeights weights{&p, BaseTwoRate(rate), &rng, trial % 4 < 2};
    const RunRange range = ProblemRuns(p);
    const uint64_t start = std::min(p.count() - 1, weights.target_rank());
    const size_t run = p.runs.RunOfRank(p.lo + start);
    const int64_t point = p.runs.point(run);
    std::vector<int> seen(
        static_cast<size_t>(p.last_point - p.first_point + 1));
    seen[static_cast<size_t>(point - p.first_point)] = 1;
    auto whole_of = [&](int64_t v) {
      return weights.Whole(p.Below(v), p.AtOrBelow(v));
    };
    for (const bool upward : {true, false}) {
      SegmentBandWalker<TestWeights> walker(weights, p, range, upward,
                                            upward ? run + 1 : run,
                                            upward ? point + 1 : point - 1);
      while (!walker.done()) {
        const int64_t near =
            weights.Whole(walker.next_rank(), walker.next_rank());
        uint64_t left = 0;
        for (int64_t v = p.first_point; v <= p.last_point; ++v) {
          if (seen[static_cast<size_t>(v - p.first_point)] == 0 &&
              (upward ? v > point : v < point)) {
            left += p.measure.Weight(v);
            ASSERT_GE(whole_of(v), near) << v;
          }
        }
        ASSERT_GE(PowerOfTwo(static_cast<int>(walker.SizeBitsLeft())),
                  static_cast<Uint128>(left));
        const int64_t width = int64_t{1} << (rng.NextUint64() % 4);
        int64_t beyond = 0;  // the first point past the band
        walker.Next(
            near, width,
            [&](const PointBand& band, int64_t size_bits, uint64_t low,
                uint64_t high) {
              ASSERT_LE(band.first, band.last);
              ASSERT_EQ(band.mass, p.measure.Mass(band.first, band.last));
              ASSERT_EQ(band.whole, near);
              ASSERT_EQ(size_bits, CeilLog2Of64(band.mass));
              ASSERT_EQ(weights.Whole(low, high), near);
              // Its runs: exactly those at its points.
              ASSERT_EQ(band.run_first, p.runs.FirstAtOrAbove(band.first));
              ASSERT_EQ(band.run_end, p.runs.FirstAbove(band.last));
              for (int64_t v = band.first; v <= band.last; ++v) {
                ++seen[static_cast<size_t>(v - p.first_point)];
                ASSERT_GE(whole_of(v), near) << v;
                if (weights.exact) ASSERT_LT(whole_of(v), near + width) << v;
              }
              beyond = upward ? band.last + 1 : band.first - 1;
            });
        if (weights.exact && beyond >= p.first_point &&
            beyond <= p.last_point) {
          ASSERT_GE(whole_of(beyond), near + width) << beyond;
        }
      }
    }
    for (const int s : seen) ASSERT_EQ(s, 1);
  }
}

}  // namespace
}  // namespace dpq
