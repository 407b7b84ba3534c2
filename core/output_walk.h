// Walkers over one exact-exponential problem's outputs
// (exponential_quantile.h), outward from the target: what the exact draws list
// as items. Internal to the core; a header of its own so the tests can check
// the walks alone.
//
// SegmentBandWalker: the atom-aware form's grid points in bands, the
// points whose floor(y) lies in a range the caller gives (one value: they
// share it), each one item of the draw. BandWalker: the split form's ranks
// (every output with r records before it, RankOutputs) in such bands of
// ranks, sized by their edges (RankEdges); OutputsOfRank: one rank's
// outputs, for the accepted one.
#ifndef DPQ_CORE_OUTPUT_WALK_H_
#define DPQ_CORE_OUTPUT_WALK_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/bits.h"
#include "core/exponential_quantile.h"
#include "core/runs.h"

namespace dpq {

// The runs holding a problem's ranks [lo, hi): [first, end). `single`:
// every one of them holds one of the problem's records (as many runs as
// records; each holds at least one), so record i's run is first + i, found
// without a search or a count read (continuous data: most problems).
struct RunRange {
  size_t first = 0;
  size_t end = 0;
  bool single = false;
};

inline RunRange ProblemRuns(const QuantileProblem& p) {
  if (p.count() == 0) return {};
  // Runs narrowed to the problem's ranks (AQ's nodes): all of them, checked
  // at both ends in O(1).
  const Runs& r = p.runs;
  const double lo = static_cast<double>(p.lo);
  const double last = static_cast<double>(p.hi - 1);
  const size_t first = r.ends[0] > lo ? 0 : r.RunOfRank(p.lo);
  const size_t end =
      r.ends[r.size - 1] > last && (r.size == 1 || !(r.ends[r.size - 2] > last))
          ? r.size
          : r.RunOfRank(p.hi - 1) + 1;
  return {first, end, end - first == p.count()};
}

// The run of `range` holding the problem's record `record` (0-based, below
// n), searched outward from `hint` by doubling steps, then by halving: O(1)
// reads near the hint, O(log) at worst.
inline size_t RunOfRecord(const QuantileProblem& p, RunRange range,
                          uint64_t record, size_t hint) {
  if (range.single) return range.first + static_cast<size_t>(record);
  const uint64_t rank = p.lo + record;
  const double* ends = p.runs.ends;
  // The first run whose cumulative count exceeds the rank: in
  // [range.first, range.end), and at the last run at the latest.
  hint = std::min(std::max(hint, range.first), range.end - 1);
  // A run holds at least one record, so the answer is at most
  // rank + 1 - ends[hint] runs above the hint, or, below it, at least
  // hint - (ends[hint] - rank) + 1: the search starts at that bound, which
  // is the answer itself where the runs in between hold one record each
  // (on fine grids, most). The hints alone were 2-7 runs off in half the
  // calls of a small release.
  const auto at = static_cast<uint64_t>(ends[hint]);
  if (at > rank) {
    const uint64_t back = at - rank - 1;
    hint = back < hint - range.first ? hint - static_cast<size_t>(back)
                                     : range.first;
  } else {
    const uint64_t ahead = rank - at + 1;
    hint = ahead < range.end - 1 - hint ? hint + static_cast<size_t>(ahead)
                                        : range.end - 1;
  }
  const auto rank_value = static_cast<double>(rank);
  size_t low = range.first;
  size_t high = range.end - 1;
  if (ends[hint] > rank_value) {  // at or below the hint
    high = hint;
    for (size_t step = 1; high - low >= step; step *= 2) {
      if (!(ends[high - step] > rank_value)) {
        low = high - step + 1;
        break;
      }
      high -= step;
    }
  } else {  // above it
    low = hint + 1;
    for (size_t step = 1; high - low >= step; step *= 2) {
      if (ends[low + step - 1] > rank_value) {
        high = low + step - 1;
        break;
      }
      low += step;
    }
  }
  return static_cast<size_t>(
      std::upper_bound(ends + low, ends + high, rank_value) - ends);
}

// Sub-gap h of a point holding c >= 1 records among K sub-points: the
// sub-points (SubGapBound(h), SubGapBound(h + 1)], h of the records before
// each.
inline uint64_t SubGapSize(uint64_t c, uint64_t k, uint64_t h) {
  return static_cast<uint64_t>(SubGapBound(c, k, h + 1) - SubGapBound(c, k, h));
}

// The outputs of rank r of the split form: every sub-point after record
// r - 1's and up to record r's, in (point, sub-point) order. Between two
// runs: the top sub-gap of record r - 1's point (`low_size` = sub-points x
// weight), the empty points between them (K sub-points each) and the lowest
// sub-gap of record r's point (`high_size`); inside an atom, one sub-gap of
// its point (`high` only).
struct RankOutputs {
  int64_t low_point = 0;
  uint64_t low_size = 0;  // below 2^64: K <= 2^32, weights below 2^32
  int64_t gap_first = 0;
  int64_t gap_last = -1;
  uint64_t gap_mass = 0;  // the empty points' base mass
  int64_t high_point = 0;
  uint64_t high_size = 0;
  size_t run = 0;  // record r's run (the range's end at r = n)

  static Uint128 Scale(uint64_t mass, uint64_t k, int k_shift) {
    return k_shift >= 0 ? ShiftLeftWide(mass, k_shift) : MultiplyWide(mass, k);
  }
  Uint128 Size(uint64_t k, int k_shift) const {
    return Scale(gap_mass, k, k_shift) + low_size + high_size;
  }
  // The point of the output at `offset` < Size(), in order: a uniform
  // offset draws each output by its weight.
  int64_t Locate(Uint128 offset, const PointMeasure& measure, uint64_t k,
                 int k_shift) const {
    if (offset < low_size) return low_point;
    offset -= low_size;
    if (offset >= Scale(gap_mass, k, k_shift)) return high_point;
    const auto mass_offset =
        static_cast<uint64_t>(k_shift >= 0 ? offset >> k_shift : offset / k);
    return measure.PointAt(gap_first, gap_last, mass_offset);
  }
};

// The outputs of rank r in [0, n] (n >= 1 records): one sub-gap of an
// atom when records r - 1 and r share a point, else the top sub-gap of
// record r - 1's point, the empty points after it and the lowest sub-gap
// of record r's point (no sub-gap below rank 0 or above rank n). Two run
// reads: what an accepted rank needs; `hint` is a run near record r's.
inline RankOutputs OutputsOfRank(const QuantileProblem& p, RunRange range,
                                 uint64_t k, uint64_t r, size_t hint) {
  RankOutputs o;
  const uint64_t n = p.count();
  size_t j = range.end;  // record r's run (none at r = n)
  o.run = j;
  uint64_t prefix_high = 0;
  o.gap_last = p.last_point;
  if (r == n) {
    prefix_high = p.measure.Prefix(p.last_point + 1);
  } else {
    j = RunOfRecord(p, range, r, hint);
    o.run = j;
    const uint64_t below = range.single ? r : p.Local(p.runs.before(j));
    const uint64_t c =
        range.single ? 1
                     : p.Local(static_cast<uint64_t>(p.runs.ends[j])) - below;
    o.high_point = p.runs.point(j);
    if (r > below) {  // inside the atom
      o.gap_last = -1;
      o.high_size =
          SubGapSize(c, k, r - below) * p.measure.Weight(o.high_point);
      return o;
    }
    const PrefixWeight at = p.measure.PrefixAndWeight(o.high_point);
    o.high_size = static_cast<uint64_t>(SubGapBound(c, k, 1) + 1) * at.weight;
    o.gap_last = o.high_point - 1;
    prefix_high = at.prefix;
  }
  uint64_t prefix_low = 0;
  o.gap_first = p.first_point;
  if (r == 0) {
    prefix_low = p.measure.Prefix(p.first_point);
  } else {  // record r - 1 ends the run before j
    const size_t i = j - 1;
    const uint64_t below = range.single ? r - 1 : p.Local(p.runs.before(i));
    const uint64_t c =
        range.single ? 1
                     : p.Local(static_cast<uint64_t>(p.runs.ends[i])) - below;
    o.low_point = p.runs.point(i);
    const PrefixWeight at = p.measure.PrefixAndWeight(o.low_point);
    const uint64_t weight = at.weight;
    o.low_size = (k - 1 - static_cast<uint64_t>(SubGapBound(c, k, c))) * weight;
    o.gap_first = o.low_point + 1;
    prefix_low = at.prefix + weight;
  }
  o.gap_mass = prefix_high - prefix_low;
  return o;
}

// Where a rank's outputs start in (point, sub-point) order, as base mass
// before it: Prefix at its point, and that point's sub-points before it
// times the point's weight. The outputs of ranks [a, b] are those between
// the edges of a and b + 1, so a band of ranks is sized by two edges
// (EdgeSpan), however many ranks and runs it crosses.
struct RankEdge {
  uint64_t prefix = 0;
  uint64_t inside = 0;
};

// The sub-points' mass (K per point's weight) from edge `from` to edge
// `to` at or after it: exact, as RankOutputs::Size is (the prefix
// difference is exact modulo 2^64 and below it).
inline Uint128 EdgeSpan(RankEdge from, RankEdge to, uint64_t k, int k_shift) {
  return RankOutputs::Scale(to.prefix - from.prefix, k, k_shift) + to.inside -
         from.inside;
}

// The edges of one problem's ranks 0..n + 1 (n + 1: the end of the range).
class RankEdges {
 public:
  RankEdges(const QuantileProblem& problem, RunRange range, uint64_t k)
      : p_(&problem),
        range_(range),
        k_(k),
        k_shift_(SubPointShift(k)),
        first_{problem.measure.Prefix(problem.first_point), 0},
        end_{problem.measure.Prefix(problem.last_point + 1), 0} {}

  uint64_t k() const { return k_; }
  int k_shift() const { return k_shift_; }
  // The edge of rank r in [0, n + 1]. `run` is a hint (a run near the
  // answer, any in range otherwise) and receives the run read.
  RankEdge At(uint64_t r, size_t* run) const {
    if (r == 0) return first_;
    if (r > p_->count()) return end_;
    // Record r - 1 is the h-th (h >= 1) of its run: the edge follows its
    // sub-point.
    const size_t j = RunOfRecord(*p_, range_, r - 1, *run);
    *run = j;
    const int64_t point = p_->runs.point(j);
    uint64_t sub = one_;
    if (!range_.single) {
      const uint64_t below = p_->Local(p_->runs.before(j));
      const uint64_t c =
          p_->Local(static_cast<uint64_t>(p_->runs.ends[j])) - below;
      if (c != 1)
        sub = static_cast<uint64_t>(SubGapBound(c, k_, r - below) + 1);
    }
    const PrefixWeight at = p_->measure.PrefixAndWeight(point);
    return {at.prefix, at.weight * sub};
  }
  Uint128 Span(RankEdge from, RankEdge to) const {
    return EdgeSpan(from, to, k_, k_shift_);
  }
  // The nearest rank to r in [0, n], toward higher ranks if `upward`, else
  // lower, whose outputs are not empty: r itself, but inside an atom of
  // more records than sub-points (c > K: counted rows past 2^32 at one
  // point), where the records share sub-points and most ranks hold none.
  // A walk that let an empty rank set a band's least floor(y) proposed the
  // band 2^(y - floor(y)) above its outputs' weight: at 10^13 rows a point
  // the nearest output lay hundreds of bits down and no round accepted.
  // `run` is a hint and receives the run read. O(1) but for one search.
  uint64_t Occupied(uint64_t r, bool upward, size_t* run) const {
    const uint64_t n = p_->count();
    if (n <= k_ || r == 0 || r >= n) return r;
    const size_t j = RunOfRecord(*p_, range_, r, *run);
    *run = j;
    const uint64_t below = p_->Local(p_->runs.before(j));
    const uint64_t c =
        p_->Local(static_cast<uint64_t>(p_->runs.ends[j])) - below;
    const uint64_t h = r - below;     // rank r's outputs: sub-gap h of run j
    if (h == 0 || c <= k_) return r;  // sub-gaps of c <= K are never empty
    const auto s = static_cast<uint64_t>(SubGapBound(c, k_, h));
    if (static_cast<uint64_t>(SubGapBound(c, k_, h + 1)) > s) return r;
    // Sub-gaps h' with SubGapBound(h') = s, i.e. 2c s <= (2h' - 1) K <
    // 2c (s + 1), are empty but the last: upward, the last such h' is
    // floor(ceil(2c (s + 1) / K) / 2) (at most c: rank below + c is the
    // next run's first, never empty); downward, the first is
    // floor((ceil(2c s / K) + 2) / 2), and the rank before it is occupied.
    const Uint128 twice = static_cast<Uint128>(c) * 2;
    if (upward) {
      const Uint128 bound = (twice * (s + 1) + (k_ - 1)) / k_;
      return below + std::min<uint64_t>(c, static_cast<uint64_t>(bound / 2));
    }
    const Uint128 bound = (twice * s + (k_ - 1)) / k_;
    return below + static_cast<uint64_t>((bound + 2) / 2) - 1;
  }

 private:
  const QuantileProblem* p_;
  RunRange range_;
  uint64_t k_;
  int k_shift_;
  uint64_t one_ = static_cast<uint64_t>(SubGapBound(1, k_, 1) + 1);
  RankEdge first_;
  RankEdge end_;
};

// A band of the split form's ranks [first, last] whose floor(y) lies in
// [whole, whole + width) (by the guess: BandReach): one item of a draw. `edge`
// is first's edge, `run` a run near it, `size` the band's outputs' total size,
// `whole` the least floor(y) of its ranks (its proposal's). (Largest member
// first: 64 bytes in WebAssembly, where a band of 80 bytes, with padding, was
// copied into the draw's list by a memcpy call.)
struct RankBand {
  Uint128 size = 0;
  RankEdge edge;
  uint64_t first = 0;
  uint64_t last = 0;
  int64_t whole = 0;
  size_t run = 0;
};

// The largest i in [0, limit] with same(i), given same(0) and that same is
// true up to some index and false after it; `guess` is where to start.
// O(1) calls when the guess is right or off by one, O(log) otherwise.
template <typename Same>
uint64_t LastSame(uint64_t limit, uint64_t guess, const Same& same) {
  uint64_t low = std::min(guess, limit);  // same(low) once settled
  uint64_t high = limit + 1;              // not same, or past the limit
  if (same(low)) {
    for (uint64_t step = 1; low < limit; step *= 2) {
      const uint64_t probe = limit - low > step ? low + step : limit;
      if (!same(probe)) {
        high = probe;
        break;
      }
      low = probe;
    }
  } else {
    high = low;
    low = 0;
    for (uint64_t step = 1; high - low > step; step *= 2) {
      if (same(high - step)) {
        low = high - step;
        break;
      }
      high -= step;
    }
  }
  while (high - low > 1) {
    const uint64_t mid = low + (high - low) / 2;
    if (same(mid)) {
      low = mid;
    } else {
      high = mid;
    }
  }
  return low;
}

// How many ranks past `a` (toward higher ranks if `upward`, at most
// `limit`) a band starting at `a` reaches: the farthest whose floor(y) is
// below `end` by the weights' floating-point guess, taken as it is. Any
// reach is exact: a band's proposal takes the least floor(y) of its ranks,
// its nearest's, which bounds every rank's past it (y grows outward), so
// where a band ends decides only how many items and rounds a draw takes.
// The guess is the exact answer but where y lands within rounding of a
// whole number (the benchmark's seeded releases are bit for bit those of
// an exact search), which spared two or more exact evaluations a band.
template <typename Weights>
uint64_t BandReach(const Weights& w, uint64_t a, uint64_t limit, int64_t end,
                   bool upward) {
  const uint64_t guess = w.Guess(end - 1, upward);
  return std::min(
      upward ? (guess > a ? guess - a : 0) : (guess < a ? a - guess : 0),
      limit);
}

// Walks the split form's ranks outward from one in bands (RankBand): the
// ranks next to each other whose floor(y) lies in [whole, whole + width)
// (width 1: they share it) as the guess has them (BandReach), so a band's
// proposal, size 2^-whole, covers each output's weight and an
// output's acceptance is 2^-(y - whole), while a draw lists about one item
// per `width` bits of weight instead of one per rank. Weights gives
// Whole(low, high) (floor(y) of the nearest of ranks [low, high]),
// target_rank() (floor of the target t) and Guess(whole, upward): any
// rank, best the last on that side with that floor(y) (a floating-point
// guess; a wrong one changes the bands, not the draw's law).
// Past the target, y only grows with the distance on each side; rank
// floor(t) is a band alone (the next rank up may be nearer to t). Ranks
// without outputs are stepped over (RankEdges::Occupied), so a band's
// nearest rank, whose floor(y) is its `whole`, always holds outputs.
template <typename Weights>
class BandWalker {
 public:
  // Next to list: rank `from` in [0, n]; upward from floor(t), or
  // downward from below it.
  BandWalker(const Weights& weights, const RankEdges& edges, uint64_t n,
             bool upward, uint64_t from)
      : w_(&weights), e_(&edges), n_(n), upward_(upward), rank_(from) {
    edge_ = edges.At(upward ? from : from + 1, &run_);
    end_ = edges.At(upward ? n + 1 : 0, &run_);
    // Empty ranks share their edges, so edge_ stands for the occupied one.
    rank_ = edges.Occupied(from, upward, &run_);
  }

  bool done() const { return done_; }
  uint64_t next_rank() const { return rank_; }
  // ceil(log2) of the sizes of every rank not yet listed (their total).
  int64_t SizeBitsLeft() const {
    return CeilLog2(upward_ ? e_->Span(edge_, end_) : e_->Span(end_, edge_));
  }

  // Lists the next band (if it holds any sub-point) and moves on; `whole`
  // is floor(y) of next_rank(), which the caller has computed, and the
  // band takes the ranks with floor(y) below whole + width (width >= 1) by
  // the guess (BandReach).
  template <typename List>
  void Next(int64_t whole, int64_t width, const List& list) {
    const uint64_t a = rank_;
    size_t run = run_;
    const int64_t end = whole + width;
    if (upward_) {
      uint64_t last = a;
      if (a > w_->target_rank() && a < n_) {
        last = a + BandReach(*w_, a, n_ - a, end, true);
      }
      const RankEdge next = e_->At(last + 1, &run);
      const Uint128 size = e_->Span(edge_, next);
      if (size > 0) {
        list(RankBand{size, edge_, a, last, whole, run_}, CeilLog2(size), a,
             last);
      }
      edge_ = next;
      run_ = run;
      if (last == n_) {
        done_ = true;
      } else {
        rank_ = e_->Occupied(last + 1, true, &run_);
      }
      return;
    }
    uint64_t first = a;
    if (a > 0) first = a - BandReach(*w_, a, a, end, false);
    const RankEdge low = e_->At(first, &run);
    const Uint128 size = e_->Span(low, edge_);
    if (size > 0) {
      list(RankBand{size, low, first, a, whole, run}, CeilLog2(size), first, a);
    }
    edge_ = low;
    run_ = run;
    if (first == 0) {
      done_ = true;
    } else {
      rank_ = e_->Occupied(first - 1, false, &run_);
    }
  }

 private:
  const Weights* w_;
  const RankEdges* e_;
  uint64_t n_;
  bool upward_;
  uint64_t rank_;
  size_t run_ = 0;
  RankEdge edge_;  // upward: rank_'s edge; downward: rank_ + 1's
  RankEdge end_;   // the far end's edge
  bool done_ = false;
};

// A band of the atom-aware form's outputs: the grid points [first, last]
// (gaps and occupied points) whose floor(y) lies in [whole, whole + width)
// by the guess (BandReach), with their base mass and the least floor(y),
// `whole`. One item of a draw.
struct PointBand {
  int64_t first = 0;
  int64_t last = 0;
  uint64_t mass = 0;
  int64_t whole = 0;
  // The runs at its points, [run_first, run_end): a drawn point's records
  // are searched among them, not among all runs.
  size_t run_first = 0;
  size_t run_end = 0;
};

// Walks the atom-aware form's outputs outward from the run holding the
// target in bands (PointBand), as BandWalker does the split form's ranks:
// the points whose nearest rank lies in ranks [a, e] of one band are
// contiguous (upward: up to the point of the run holding record e;
// downward: down to that of record e - 1's run), so a band's mass is one
// prefix difference. Every rank of what is left lies beyond the target
// from the start run, so y grows with the distance there.
template <typename Weights>
class SegmentBandWalker {
 public:
  // Upward: the points from `next_point`, the runs [run, range.end) ahead;
  // downward: the points up to `next_point`, the runs [range.first, run)
  // ahead.
  SegmentBandWalker(const Weights& weights, const QuantileProblem& problem,
                    RunRange range, bool upward, size_t run, int64_t next_point)
      : w_(&weights),
        p_(&problem),
        range_(range),
        upward_(upward),
        run_(run),
        next_point_(next_point),
        rank_(range.single ? run - range.first
                           : problem.Local(problem.runs.before(run))),
        edge_(problem.measure.Prefix(upward ? next_point : next_point + 1)),
        end_(problem.measure.Prefix(upward ? problem.last_point + 1
                                           : problem.first_point)) {}

  bool done() const {
    return upward_ ? next_point_ > p_->last_point
                   : next_point_ < p_->first_point;
  }
  uint64_t next_rank() const { return rank_; }
  int64_t SizeBitsLeft() const {
    return CeilLog2Of64(upward_ ? end_ - edge_ : edge_ - end_);
  }

  // Lists the next band and moves on; `whole` is floor(y) of next_rank(),
  // and the band takes the points with floor(y) below whole + width by the
  // guess (BandReach).
  template <typename List>
  void Next(int64_t whole, int64_t width, const List& list) {
    const uint64_t n = p_->count();
    const uint64_t a = rank_;
    const int64_t end = whole + width;
    if (upward_) {
      uint64_t e = a;
      if (a < n) e = a + BandReach(*w_, a, n - a, end, true);
      int64_t last = p_->last_point;
      const size_t run_first = run_;
      size_t run_end = range_.end;
      if (e < n) {
        run_ = RunOfRecord(*p_, range_, e, run_);
        last = p_->runs.point(run_);
        run_end = run_ + 1;
      }
      const uint64_t far = p_->measure.Prefix(last + 1);
      list(PointBand{next_point_, last, far - edge_, whole, run_first, run_end},
           CeilLog2Of64(far - edge_), a, e);
      edge_ = far;
      next_point_ = last + 1;
      if (e < n) {
        rank_ = range_.single
                    ? run_ + 1 - range_.first
                    : p_->Local(static_cast<uint64_t>(p_->runs.ends[run_]));
        ++run_;
      }
      return;
    }
    uint64_t e = a;
    if (a > 0) e = a - BandReach(*w_, a, a, end, false);
    int64_t first = p_->first_point;
    const size_t run_end = run_;
    if (e > 0) {
      run_ = RunOfRecord(*p_, range_, e - 1, run_ - 1);
      first = p_->runs.point(run_);
    }
    const size_t run_first = e > 0 ? run_ : range_.first;
    const uint64_t near = p_->measure.Prefix(first);
    list(PointBand{first, next_point_, edge_ - near, whole, run_first, run_end},
         CeilLog2Of64(edge_ - near), e, a);
    edge_ = near;
    next_point_ = first - 1;
    if (e > 0) {
      rank_ = range_.single ? run_ - range_.first
                            : p_->Local(p_->runs.before(run_));
    }
  }

 private:
  const Weights* w_;
  const QuantileProblem* p_;
  RunRange range_;
  bool upward_;
  size_t run_;          // upward: the next run; downward: the one above
  int64_t next_point_;  // the next point to walk
  uint64_t rank_;       // the rank of the next gap, nearest the target
  uint64_t edge_;       // Prefix at the walked side's edge
  uint64_t end_;        // Prefix at the far end of the direction
};

}  // namespace dpq

#endif  // DPQ_CORE_OUTPUT_WALK_H_
