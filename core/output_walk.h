// Walkers over one exact-exponential problem's outputs
// (exponential_quantile.h), outward from the target: what the exact draws list
// as items. Internal to the core; a header of its own so the tests can check
// the walks alone.
//
// SegmentWalker (the atom-aware form): segments, each a run of empty grid
// points between two occupied points, or one occupied point.
// RankWalker (the split form): ranks, each every output with r records
// before it (RankOutputs).
#ifndef DPQ_CORE_OUTPUT_WALK_H_
#define DPQ_CORE_OUTPUT_WALK_H_

#include <cstddef>
#include <cstdint>

#include "core/bits.h"
#include "core/exponential_quantile.h"
#include "core/runs.h"

namespace dpq {

// A piece of the output range with one formula for its mass: empty grid
// points [first, last] (records == 0) standing for rank `below`, or one
// occupied point `first` holding `records` records above `below` others.
struct Segment {
  int64_t first = 0;
  int64_t last = 0;
  uint64_t below = 0;
  uint64_t records = 0;
  uint64_t mass = 0;  // the base measure's mass of [first, last]
};

// The runs holding a problem's ranks [lo, hi): [first, end).
struct RunRange {
  size_t first = 0;
  size_t end = 0;
};

inline RunRange ProblemRuns(const QuantileProblem& p) {
  if (p.count() == 0) return {};
  return {p.runs.RunOfRank(p.lo), p.runs.RunOfRank(p.hi - 1) + 1};
}

// Walks the segments of a problem outward from one run of its records.
// Upward segments start at `next_point` with runs [run, range.end) still
// ahead; downward ones end at `next_point` with runs [range.first, run)
// still ahead. Ranks are kept as it goes: one read of a run's end and
// point per run.
class SegmentWalker {
 public:
  SegmentWalker(const QuantileProblem& problem, RunRange range, bool upward,
                size_t run, int64_t next_point)
      : p_(problem),
        range_(range),
        upward_(upward),
        run_(run),
        next_point_(next_point),
        below_(p_.Local(p_.runs.before(run))),
        edge_(problem.measure.Prefix(upward ? next_point : next_point + 1)),
        end_(problem.measure.Prefix(upward ? problem.last_point + 1
                                           : problem.first_point)) {}

  bool done() const {
    return upward_ ? next_point_ > p_.last_point : next_point_ < p_.first_point;
  }
  // The base measure's mass of the points not yet walked (from the prefix
  // at the walker's edge, kept as segments are taken).
  uint64_t mass_left() const { return upward_ ? end_ - edge_ : edge_ - end_; }
  // The rank every remaining output is at least this far from: the rank of
  // the next gap, nearest to the target of all that remain.
  uint64_t next_rank() const { return below_; }

  // The next segment (possibly an empty gap of size 0, which has no mass).
  Segment Next() {
    Segment s = Take();
    if (s.records > 0) {  // one point: its weight, which is cheaper
      s.mass = p_.measure.Weight(s.first);
      edge_ = upward_ ? edge_ + s.mass : edge_ - s.mass;
    } else if (s.first <= s.last) {  // contiguous: one prefix each
      const uint64_t far = p_.measure.Prefix(upward_ ? s.last + 1 : s.first);
      s.mass = upward_ ? far - edge_ : edge_ - far;
      edge_ = far;
    }
    return s;
  }

 private:
  Segment Take() {
    Segment s;
    if (upward_) {
      // The gap up to the next run's point, then that point.
      const int64_t gap_end =
          run_ < range_.end ? p_.runs.point(run_) - 1 : p_.last_point;
      if (gap_ && next_point_ <= gap_end) {
        s.first = next_point_;
        s.last = gap_end;
        s.below = below_;
        next_point_ = gap_end + 1;
        gap_ = false;
        return s;
      }
      gap_ = true;
      if (run_ >= range_.end) {  // nothing left: an empty final gap
        next_point_ = p_.last_point + 1;
        s.first = 1;
        s.last = 0;
        return s;
      }
      s.first = s.last = gap_end + 1;
      s.below = below_;
      below_ = p_.Local(static_cast<uint64_t>(p_.runs.ends[run_]));
      s.records = below_ - s.below;
      ++run_;
      next_point_ = s.first + 1;
      return s;
    }
    const int64_t gap_start =
        run_ > range_.first ? p_.runs.point(run_ - 1) + 1 : p_.first_point;
    if (gap_ && gap_start <= next_point_) {
      s.first = gap_start;
      s.last = next_point_;
      s.below = below_;
      next_point_ = gap_start - 1;
      gap_ = false;
      return s;
    }
    gap_ = true;
    if (run_ <= range_.first) {
      next_point_ = p_.first_point - 1;
      s.first = 1;
      s.last = 0;
      return s;
    }
    --run_;
    s.first = s.last = gap_start - 1;
    const uint64_t above = below_;
    below_ = p_.Local(p_.runs.before(run_));
    s.below = below_;
    s.records = above - below_;
    next_point_ = s.first - 1;
    return s;
  }

  const QuantileProblem& p_;
  RunRange range_;
  bool upward_;
  size_t run_;
  int64_t next_point_;
  uint64_t below_;   // the problem's records below the next gap
  uint64_t edge_;    // Prefix at the walked side's edge
  uint64_t end_;     // Prefix at the far end of the direction
  bool gap_ = true;  // the next segment is the gap (then the point after it)
};

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

  static Uint128 Scale(uint64_t mass, uint64_t k, int k_shift) {
    return k_shift >= 0 ? static_cast<Uint128>(mass) << k_shift
                        : MultiplyWide(mass, k);
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

// Walks the split form's ranks outward from one, upward or downward, a run
// at a time: a run's point, count, weight and prefix mass are read once,
// and a run of one record is one rank. A rank's size is the same integer
// whichever way it is reached (masses are differences of the same
// prefixes, exact modulo 2^64 and below it).
class RankWalker {
 public:
  // Next to list: rank `from` in [0, n] (n, the problem's records, >= 1).
  RankWalker(const QuantileProblem& problem, RunRange range, uint64_t k,
             bool upward, uint64_t from)
      : p_(&problem),
        range_(range),
        k_(k),
        k_shift_(SubPointShift(k)),
        upward_(upward),
        rank_(from),
        far_(problem.measure.Prefix(upward ? problem.last_point + 1
                                           : problem.first_point)) {
    const uint64_t n = problem.count();
    if (upward) {
      run_ = from == n ? range.end : problem.runs.RunOfRank(problem.lo + from);
      if (run_ < range.end) {
        run_view_ = Read(run_);
        h_ = from - run_view_.below;
      }
      if (h_ == 0) {  // between runs: the point below, if any
        if (run_ > range.first) {
          PassUpward(Read(run_ - 1));
        } else {
          part_point_ = problem.first_point - 1;
          edge_ = problem.measure.Prefix(problem.first_point);
        }
      }
      return;
    }
    if (from == 0) {
      at_start_ = true;
      PassDownward(Read(range.first));
      return;
    }
    run_ = problem.runs.RunOfRank(problem.lo + from - 1);
    run_view_ = Read(run_);
    h_ = from - run_view_.below;  // 1..c
    if (h_ == run_view_.count) {  // between runs: the point above, if any
      if (run_ + 1 < range.end) {
        PassDownward(Read(run_ + 1));
      } else {
        part_point_ = problem.last_point + 1;
        edge_ = problem.measure.Prefix(problem.last_point + 1);
      }
    }
  }

  bool done() const { return done_; }
  uint64_t next_rank() const { return rank_; }

  // The outputs of the next rank.
  RankOutputs Outputs() const {
    const RunView& r = run_view_;
    RankOutputs o;
    if (InsideRun()) {
      o.high_point = r.point;
      o.high_size = SubGapSize(r.count, k_, h_) * r.weight;
      return o;
    }
    if (upward_) {
      o.low_point = part_point_;
      o.low_size = part_;
      o.gap_first = part_point_ + 1;
      if (run_ < range_.end) {
        o.gap_last = r.point - 1;
        o.gap_mass = r.prefix - edge_;
        o.high_point = r.point;
        o.high_size = Lowest(r.count) * r.weight;
      } else {
        o.gap_last = p_->last_point;
        o.gap_mass = far_ - edge_;
      }
      return o;
    }
    o.high_point = part_point_;
    o.high_size = part_;
    o.gap_last = part_point_ - 1;
    if (at_start_) {
      o.gap_first = p_->first_point;
      o.gap_mass = edge_ - far_;
    } else {
      o.low_point = r.point;
      o.low_size = Highest(r.count) * r.weight;
      o.gap_first = r.point + 1;
      o.gap_mass = edge_ - (r.prefix + r.weight);
    }
    return o;
  }

  // ceil(log2) of a bound on the sizes of every rank not yet listed: the
  // part at the walked edge and K sub-points of every point beyond it (of
  // the current run's point too, inside a run).
  int64_t SizeBitsLeft() const {
    const RunView& r = run_view_;
    uint64_t part = part_;
    uint64_t mass = upward_ ? far_ - edge_ : edge_ - far_;
    if (InsideRun()) {
      part = 0;
      mass = upward_ ? far_ - r.prefix : r.prefix + r.weight - far_;
    }
    return CeilLog2(RankOutputs::Scale(mass, k_, k_shift_) + part);
  }

  // Lists the next rank (if it holds any sub-point) and moves on.
  template <typename List>
  void Next(const List& list) {
    const Uint128 size = Outputs().Size(k_, k_shift_);
    if (size > 0) list(rank_, CeilLog2(size), rank_, rank_);
    if (upward_) {
      if (run_ >= range_.end) {
        done_ = true;
        return;
      }
      ++rank_;
      if (++h_ == run_view_.count) {
        PassUpward(run_view_);
        if (++run_ < range_.end) run_view_ = Read(run_);
        h_ = 0;
      }
      return;
    }
    if (at_start_) {
      done_ = true;
      return;
    }
    --rank_;
    if (--h_ == 0) {
      PassDownward(run_view_);
      if (run_ > range_.first) {
        run_view_ = Read(--run_);
        h_ = run_view_.count;
      } else {
        at_start_ = true;
      }
    }
  }

 private:
  struct RunView {
    int64_t point = 0;
    uint64_t below = 0;  // the problem's records below the run, and in it
    uint64_t count = 0;
    uint64_t weight = 0;  // the point's, and Prefix at it
    uint64_t prefix = 0;
  };
  RunView Read(size_t i) const {
    RunView r;
    r.point = p_->runs.point(i);
    r.below = p_->Local(p_->runs.before(i));
    r.count = p_->Local(static_cast<uint64_t>(p_->runs.ends[i])) - r.below;
    r.weight = p_->measure.Weight(r.point);
    r.prefix = p_->measure.Prefix(r.point);
    return r;
  }
  // Whether the next rank is one sub-gap inside run_ (not between runs).
  bool InsideRun() const {
    return upward_ ? run_ < range_.end && h_ > 0
                   : !at_start_ && h_ < run_view_.count;
  }
  // Upward past run r: its top sub-gap opens the next rank.
  void PassUpward(const RunView& r) {
    part_point_ = r.point;
    part_ = Highest(r.count) * r.weight;
    edge_ = r.prefix + r.weight;
  }
  // Downward past run r: its lowest sub-gap closes the next rank.
  void PassDownward(const RunView& r) {
    part_point_ = r.point;
    part_ = Lowest(r.count) * r.weight;
    edge_ = r.prefix;
  }
  // A point's lowest and highest sub-gaps (kept for one record, the usual
  // run: SubGapBound divides).
  uint64_t Lowest(uint64_t c) const {
    return c == 1 ? lowest_of_one_
                  : static_cast<uint64_t>(SubGapBound(c, k_, 1) + 1);
  }
  uint64_t Highest(uint64_t c) const {
    return c == 1 ? highest_of_one_
                  : k_ - 1 - static_cast<uint64_t>(SubGapBound(c, k_, c));
  }

  const QuantileProblem* p_;
  RunRange range_;
  uint64_t k_;
  int k_shift_;  // log2 K when K is a power of two (always, but in tests)
  uint64_t lowest_of_one_ = static_cast<uint64_t>(SubGapBound(1, k_, 1) + 1);
  uint64_t highest_of_one_ =
      k_ - 1 - static_cast<uint64_t>(SubGapBound(1, k_, 1));
  bool upward_;
  uint64_t rank_;
  uint64_t far_;  // Prefix at the far end of the direction
  size_t run_ = 0;
  RunView run_view_;
  uint64_t h_ = 0;  // the next rank's sub-gap of run_ (InsideRun)
  // Between runs: the point walked past, its part of the next rank
  // (sub-points x weight), and Prefix at the gap's walked edge.
  int64_t part_point_ = 0;
  uint64_t part_ = 0;
  uint64_t edge_ = 0;
  bool at_start_ = false;  // downward: the next rank is 0
  bool done_ = false;
};

}  // namespace dpq

#endif  // DPQ_CORE_OUTPUT_WALK_H_
