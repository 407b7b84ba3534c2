#include "core/exponential_quantile.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/exact_exponential.h"

namespace dpq {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.6931471805599453;

double LogAdd(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegativeInfinity) return a;
  return a + std::log1p(std::exp(b - a));
}

// The end of the run of `cell` that starts at index `begin` of cells[0, n):
// galloping, so a run of length r costs O(log r), not O(log n).
size_t RunEnd(const double* cells, size_t begin, size_t n, double cell) {
  size_t step = 1;
  size_t known = begin;  // cells[known] == cell
  while (known + step < n && cells[known + step] == cell) {
    known += step;
    step *= 2;
  }
  return static_cast<size_t>(
      std::upper_bound(cells + known, cells + std::min(n, known + step), cell) -
      cells);
}

// The start of the run of `cell` that ends just before index `end`.
size_t RunStart(const double* cells, size_t end, double cell) {
  size_t step = 1;
  size_t known = end - 1;  // cells[known] == cell
  while (known >= step && cells[known - step] == cell) {
    known -= step;
    step *= 2;
  }
  const size_t from = known >= step ? known - step : 0;
  return static_cast<size_t>(
      std::lower_bound(cells + from, cells + known, cell) - cells);
}

// A piece of the output range with one formula for its mass: empty grid
// points [first, last] (records == 0) standing for rank `below`, or one
// occupied point `first` holding `records` records above `below` others.
struct Segment {
  int64_t first = 0;
  int64_t last = 0;
  size_t below = 0;
  size_t records = 0;
  uint64_t mass = 0;  // the base measure's mass of [first, last]
};

// Walks the segments of a problem from one record index outward. Upward
// segments start at `next_point` with records [index, n) still ahead;
// downward ones end at `next_point` with records [0, index) still ahead.
class SegmentWalker {
 public:
  SegmentWalker(const QuantileProblem& problem, bool upward, size_t index,
                int64_t next_point)
      : p_(problem),
        upward_(upward),
        index_(index),
        next_point_(next_point),
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
  size_t next_rank() const { return index_; }

  // The next segment (possibly an empty gap of size 0, which has no mass).
  Segment Next() {
    Segment s = Take();
    if (s.first <= s.last) {  // segments are contiguous: one prefix each
      const uint64_t far = p_.measure.Prefix(upward_ ? s.last + 1 : s.first);
      s.mass = upward_ ? far - edge_ : edge_ - far;
      edge_ = far;
    }
    return s;
  }

 private:
  Segment Take() {
    Segment s;
    const size_t n = p_.count;
    if (upward_) {
      // The gap up to the next record's point, then that point.
      const int64_t gap_end = index_ < n
                                  ? static_cast<int64_t>(p_.cells[index_]) - 1
                                  : p_.last_point;
      if (gap_ && next_point_ <= gap_end) {
        s.first = next_point_;
        s.last = gap_end;
        s.below = index_;
        next_point_ = gap_end + 1;
        gap_ = false;
        return s;
      }
      gap_ = true;
      if (index_ >= n) {  // nothing left: an empty final gap
        next_point_ = p_.last_point + 1;
        s.first = 1;
        s.last = 0;
        return s;
      }
      const double cell = p_.cells[index_];
      const size_t end = RunEnd(p_.cells, index_, n, cell);
      s.first = s.last = static_cast<int64_t>(cell);
      s.below = index_;
      s.records = end - index_;
      index_ = end;
      next_point_ = s.first + 1;
      return s;
    }
    const int64_t gap_start =
        index_ > 0 ? static_cast<int64_t>(p_.cells[index_ - 1]) + 1
                   : p_.first_point;
    if (gap_ && gap_start <= next_point_) {
      s.first = gap_start;
      s.last = next_point_;
      s.below = index_;
      next_point_ = gap_start - 1;
      gap_ = false;
      return s;
    }
    gap_ = true;
    if (index_ == 0) {
      next_point_ = p_.first_point - 1;
      s.first = 1;
      s.last = 0;
      return s;
    }
    const double cell = p_.cells[index_ - 1];
    const size_t start = RunStart(p_.cells, index_, cell);
    s.first = s.last = static_cast<int64_t>(cell);
    s.below = start;
    s.records = index_ - start;
    index_ = start;
    next_point_ = s.first - 1;
    return s;
  }

  const QuantileProblem& p_;
  bool upward_;
  size_t index_;
  int64_t next_point_;
  uint64_t edge_;    // Prefix at the walked side's edge
  uint64_t end_;     // Prefix at the far end of the direction
  bool gap_ = true;  // the next segment is the gap (then the point after it)
};

// dist(target, [low, high]) in units of 2^-20 (target in those units).
uint64_t ScaledDistanceFrom(uint64_t target, size_t low, size_t high) {
  const uint64_t lo = static_cast<uint64_t>(low) << kTargetFractionBits;
  const uint64_t hi = static_cast<uint64_t>(high) << kTargetFractionBits;
  if (target < lo) return lo - target;
  if (target > hi) return target - hi;
  return 0;
}

// One output group of an exact draw: grid points [first, last] standing for
// one rank (a gap), one occupied point (atom form), one sub-gap of an
// occupied point (split form; first == last), or, in the split form, both
// sub-gaps of a point holding one record (span 1, a "pair").
// Kept small (48 bytes): a draw lists hundreds of them. The exponent is
// recomputed from the ranks when the item is drawn.
struct Item {
  int64_t first = 0;
  int64_t last = 0;
  uint64_t low = 0;     // the ranks it stands for: [low, low + span]; in the
  uint32_t span = 0;    // split form, low is the records before the output
  uint32_t scaled = 0;  // size = count K (a gap of the split form) or count
  // A pair's size is K and this holds its record's sub-point plus one once
  // drawn (0 before).
  uint64_t count = 0;
  int64_t proposal = 0;  // its weight's ProposalExponent()
};

struct Pool;

// p_h of an occupied point's sorted sub-points (p_0 = -1, p_(c+1) = K - 1):
// sub-gap h, with h of the point's records before it, holds (p_h, p_(h+1)].
// `sorted` holds the point's c sub-points.
int64_t SubPointBound(const uint32_t* sorted, size_t c, uint64_t sub_points,
                      size_t h) {
  if (h == 0) return -1;
  if (h > c) return static_cast<int64_t>(sub_points) - 1;
  return static_cast<int64_t>(sorted[h - 1]);
}

// Outputs not worth listing yet, with a dyadic bound 2^cap on the sum of
// their proposal weights: the rest of a direction (from where its walker
// stopped), or sub-gaps [h_first, h_last] of one occupied point.
struct Group {
  int64_t cap = 0;
  std::optional<SegmentWalker> walker;
  int64_t point = 0;
  size_t below = 0;
  size_t jitter = 0;   // where the point's sorted sub-points start (arena)
  size_t records = 0;  // how many there are
  size_t h_first = 0;
  size_t h_last = 0;
  std::unique_ptr<Pool> pool;  // listed when first drawn
};

struct Pool {
  std::vector<Item> items;
  std::vector<Group> groups;
  DyadicTable table;  // items, then groups
  int64_t top = std::numeric_limits<int64_t>::min();

  void Note(int64_t exponent) { top = std::max(top, exponent); }
};

}  // namespace

struct DrawScratch {
  Pool top;
  // Every atom's sorted sub-points, end to end (Group::jitter indexes it).
  std::vector<uint32_t> jitter_arena;
};

namespace {

// The exact draw of exact_exponential.h for one problem: the outputs near
// the target listed (built on construction; the split form draws its jitter
// then), and one proposal-and-acceptance round at a time.
template <bool kSplit>
class QuantileDraw {
 public:
  QuantileDraw(const QuantileProblem& problem, double epsilon,
               uint64_t sub_points, int margin, int headroom, BitReader& setup,
               DrawScratch* scratch)
      : p_(problem),
        rate_(epsilon / (2 * QuantileSensitivity(problem.quantile))),
        sub_points_(sub_points),
        margin_(margin),
        headroom_(headroom),
        bits_(&setup),
        target_(problem.ScaledTarget()),
        jitter_arena_(scratch->jitter_arena),
        top_(scratch->top) {
    // The previous draw's buffers, emptied (their capacity kept).
    top_.items.clear();
    top_.groups.clear();
    top_.top = std::numeric_limits<int64_t>::min();
    jitter_arena_.clear();
    // The run holding the record of rank floor(q n) (clamped) holds the
    // target: above it distances grow with the rank, below it they grow as
    // the rank falls.
    const size_t n = p_.count;
    const size_t start = std::min<size_t>(
        n - 1, static_cast<size_t>(target_ >> kTargetFractionBits));
    const double cell = p_.cells[start];
    const int64_t point = static_cast<int64_t>(cell);
    const size_t begin = p_.Below(point);
    const size_t end = RunEnd(p_.cells, begin, n, cell);
    Segment run;
    run.first = run.last = point;
    run.below = begin;
    run.records = end - begin;
    run.mass = p_.measure.Weight(point);
    // Room for every segment (two per record and an end gap), up to a few
    // thousand, before the first: growing the list copies it.
    top_.items.reserve(std::min<size_t>(2 * n + 8, 4096));
    Emit(&top_, run, false);
    SegmentWalker up(p_, true, end, point + 1);
    SegmentWalker down(p_, false, begin, point - 1);
    Walk(&top_, &up, false);
    Walk(&top_, &down, false);
    Finish(&top_, headroom_);
  }

  // One round, reading `bits`: true with *out set when the proposal is
  // accepted.
  bool Round(BitReader& bits, SplitPoint* out) {
    bits_ = &bits;
    Item* item = DrawFrom(&top_, false, 0);
    if (item == nullptr) return false;
    if (Pair(*item)) return RoundOnPair(item, out);
    if (!BernoulliSizeShare(*bits_, Size(*item)) ||
        !BernoulliTwoToMinusFraction(
            *bits_, ExponentAt(item->low, item->low + item->span).fraction)) {
      return false;
    }
    out->point = item->first;
    if (item->last > item->first) {  // a gap: a point by its weight
      out->point = p_.measure.PointAt(
          item->first, item->last,
          static_cast<uint64_t>(UniformBits(*bits_, item->count)));
    }
    out->split = static_cast<size_t>(item->low);
    return true;
  }

 private:
  // The exponent of an output standing for ranks [low, high]
  // (QuantileProblem::ScaledDistance with the target computed once).
  Exponent ExponentAt(size_t low, size_t high) const {
    return rate_.ExponentFor(ScaledDistanceFrom(target_, low, high));
  }

  // Split form: both sub-gaps of a one-record point, listed as one item
  // whose exponent is the nearer rank's (the smaller of the two).
  static bool Pair(const Item& item) { return kSplit && item.span == 1; }

  // An item's outputs' base mass, and whether each output is a point's K
  // sub-points (a gap of the split form, or a pair) rather than one output.
  uint64_t BaseMass(const Item& item) const {
    return Pair(item) ? p_.measure.Weight(item.first) : item.count;
  }
  static bool Scaled(const Item& item) {
    return Pair(item) || item.scaled != 0;
  }
  // The item's size: its base mass, times K if scaled.
  Uint128 Size(const Item& item) const {
    return static_cast<Uint128>(BaseMass(item)) *
           (Scaled(item) ? sub_points_ : 1);
  }
  // ceil(log2 size) for a base mass, times K if `scaled`. With K = 2^k
  // (always, but in tests) k is added, ceil(log2(x 2^k)) = ceil(log2 x) + k,
  // so no 128-bit product (emulated in WebAssembly) is formed.
  int64_t SizeBits(uint64_t mass, bool scaled) const {
    if (sub_point_shift_ < 0) {
      return CeilLog2(static_cast<Uint128>(mass) * (scaled ? sub_points_ : 1));
    }
    return CeilLog2Of64(mass) + (scaled ? sub_point_shift_ : 0);
  }

  // A pair's smaller exponent: of rank low or of rank low + 1 (not of the
  // interval between them, which a target between the ranks would make 0
  // and every round a near-certain rejection at large epsilon).
  Exponent PairExponent(const Item& item) const {
    // The exponent grows with the distance: one product for the nearer.
    const size_t low = static_cast<size_t>(item.low);
    return rate_.ExponentFor(
        std::min(ScaledDistanceFrom(target_, low, low),
                 ScaledDistanceFrom(target_, low + 1, low + 1)));
  }

  // The round after a pair was proposed (weight 2^a, a = ceil(log2 K) -
  // floor(y_min)). The record's sub-point p is drawn the first time the pair
  // is (lazily: a record's jitter matters only where the cut is made), then
  // a uniform sub-point s of the K: sub-gap h = [s > p] (h records before
  // it, size p + 1 or K - 1 - p), so h has probability size_h / K. Accepted
  // with probability K 2^-y_h / 2^a = 2^-(y_h - floor(y_min)): as for every
  // item, sub-gap h is returned with probability size_h 2^-y_h / 2^a.
  bool RoundOnPair(Item* item, SplitPoint* out) {
    if (item->count == 0) {
      item->count = static_cast<uint64_t>(UniformBits(*bits_, sub_points_)) + 1;
    }
    const uint64_t position = item->count - 1;
    const uint64_t s = static_cast<uint64_t>(UniformBits(*bits_, sub_points_));
    const size_t h = s > position ? 1 : 0;
    if (!BernoulliSizeShare(*bits_, Size(*item))) return false;
    const uint64_t floor_min = PairExponent(*item).whole;
    const Exponent y = ExponentAt(item->low + h, item->low + h);
    // 2^-(y.whole - floor_min): that many zero bits in a row.
    for (uint64_t left = y.whole - floor_min; left > 0;) {
      const int take =
          static_cast<int>(std::min<uint64_t>(left, BitReader::kMaxPeek));
      if (bits_->Bits(take) != 0) return false;
      left -= static_cast<uint64_t>(take);
    }
    if (!BernoulliTwoToMinusFraction(*bits_, y.fraction)) return false;
    out->point = item->first;
    out->split = static_cast<size_t>(item->low + h);
    return true;
  }

  // An item for ranks [low, high] (high = low but for the atom form's
  // occupied points) of base mass `count`, times K if `scaled`.
  void AddItem(Pool* pool, int64_t first, int64_t last, size_t low, size_t high,
               uint64_t count, bool scaled) {
    Item item{first,
              last,
              static_cast<uint64_t>(low),
              static_cast<uint32_t>(high - low),
              scaled ? 1u : 0u,
              count,
              0};
    // ExactWeight::ProposalExponent: ceil(log2 size) - floor(y).
    const Exponent y = Pair(item) ? PairExponent(item) : ExponentAt(low, high);
    item.proposal =
        SizeBits(BaseMass(item), Scaled(item)) - static_cast<int64_t>(y.whole);
    pool->Note(item.proposal);
    pool->items.push_back(item);
  }

  void AddGroup(Pool* pool, Group group) {
    pool->Note(group.cap);
    pool->groups.push_back(std::move(group));
  }

  // The items of one segment. In the split form an occupied point draws its
  // records' sub-points and lists the sub-gaps outward from the one nearest
  // the target while they can matter (unless `all`); the rest on each side
  // becomes a group.
  void Emit(Pool* pool, const Segment& s, bool all) {
    if (s.records == 0) {
      AddItem(pool, s.first, s.last, s.below, s.below, s.mass, kSplit);
      return;
    }
    const uint64_t weight = s.mass;  // one point's
    if (!kSplit) {
      AddItem(pool, s.first, s.first, s.below, s.below + s.records, weight,
              false);
      return;
    }
    // Independent uniform sub-points, sorted: sub-gap h (h records of the
    // point before it) holds sub-points (p_h, p_(h+1)], with p_0 = -1 and
    // p_(c+1) = K - 1.
    const size_t c = s.records;
    if (c == 1) {  // a pair: its sub-point is drawn only if it is proposed
      AddItem(pool, s.first, s.first, s.below, s.below + 1, 0, false);
      return;
    }
    // In the draw's one arena: no allocation per atom.
    const size_t stored = jitter_arena_.size();
    jitter_arena_.resize(stored + c);
    uint32_t* sorted = jitter_arena_.data() + stored;  // stable in this call
    for (size_t j = 0; j < c; ++j) {
      sorted[j] = sub_points_ == (uint64_t{1} << 32)
                      ? static_cast<uint32_t>(bits_->Bits(32))
                      : static_cast<uint32_t>(UniformBits(*bits_, sub_points_));
    }
    std::sort(sorted, sorted + c);
    auto bound = [&](size_t h) {
      return SubPointBound(sorted, c, sub_points_, h);
    };
    auto add = [&](size_t h) {
      const int64_t size = bound(h + 1) - bound(h);
      if (size > 0) {
        AddItem(pool, s.first, s.first, s.below + h, s.below + h,
                static_cast<uint64_t>(size) * weight, false);
      }
    };
    const uint64_t target_rank = target_ >> kTargetFractionBits;
    const size_t nearest = static_cast<size_t>(std::min<uint64_t>(
        c, target_rank > s.below ? target_rank - s.below : 0));
    add(nearest);
    // Sub-gaps [0, low) and (high, c] are still to place.
    size_t low = nearest;
    size_t high = nearest;
    auto group = [&](size_t first, size_t last, size_t near) {
      const Uint128 total =
          static_cast<Uint128>(bound(last + 1) - bound(first)) * weight;
      Group g;
      g.cap = CeilLog2(total) + 2 -
              static_cast<int64_t>(
                  ExponentAt(s.below + near, s.below + near).whole);
      g.point = s.first;
      g.below = s.below;
      g.jitter = stored;
      g.records = c;
      g.h_first = first;
      g.h_last = last;
      return g;
    };
    while (low > 0) {
      if (bound(low) - bound(0) == 0) break;  // nothing left below
      Group g = group(0, low - 1, low - 1);
      if (!all && g.cap + margin_ < pool->top) {
        AddGroup(pool, std::move(g));
        break;
      }
      --low;
      add(low);
    }
    while (high < c) {
      if (bound(c + 1) - bound(high + 1) == 0) break;
      Group g = group(high + 1, c, high + 1);
      if (!all && g.cap + margin_ < pool->top) {
        AddGroup(pool, std::move(g));
        break;
      }
      ++high;
      add(high);
    }
  }

  // Segments from `walker` on; unless `all`, stops where everything left
  // is bounded below the pool's top by the margin and leaves it as a group.
  // Proof of the bound: each item left weighs 2^a < 2 size 2^-floor(y_next)
  // and each point group's cap is below 8 (its size) 2^-floor(y_next); the
  // sizes (base masses) sum to `left`; rounding up to units at most doubles
  // the sum.
  void Walk(Pool* pool, SegmentWalker* walker, bool all) {
    while (!walker->done()) {
      if (!all) {
        const size_t rank = walker->next_rank();
        const int64_t cap = SizeBits(walker->mass_left(), kSplit) + 4 -
                            static_cast<int64_t>(ExponentAt(rank, rank).whole);
        if (cap + margin_ < pool->top) {
          Group g;
          g.cap = cap;
          g.walker.emplace(*walker);
          AddGroup(pool, std::move(g));
          return;
        }
      }
      const Segment s = walker->Next();
      if (s.first > s.last) continue;
      Emit(pool, s, all);
    }
  }

  static void Finish(Pool* pool, int headroom) {
    pool->table.Reset(headroom);
    pool->table.Reserve(pool->items.size() + pool->groups.size());
    for (const Item& item : pool->items) pool->table.Add(item.proposal);
    for (const Group& group : pool->groups) pool->table.Add(group.cap);
    pool->table.Finish();
  }

  void Expand(Group* group) {
    group->pool = std::make_unique<Pool>();
    Pool* pool = group->pool.get();
    if (group->walker.has_value()) {
      Walk(pool, &*group->walker, true);
    } else {
      const uint32_t* sorted = jitter_arena_.data() + group->jitter;
      const size_t c = group->records;
      const uint64_t weight = p_.measure.Weight(group->point);
      for (size_t h = group->h_first; h <= group->h_last; ++h) {
        const int64_t size = SubPointBound(sorted, c, sub_points_, h + 1) -
                             SubPointBound(sorted, c, sub_points_, h);
        if (size > 0) {
          AddItem(pool, group->point, group->point, group->below + h,
                  group->below + h, static_cast<uint64_t>(size) * weight,
                  false);
        }
      }
    }
    // Extra headroom of log2(entries) keeps the units' rounding within the
    // factor 2 the caps allow for.
    const size_t entries = pool->items.size() + pool->groups.size();
    Finish(pool, headroom_ + BitWidth(static_cast<Uint128>(entries)));
  }

  // An item with probability proportional to its proposal weight (or, from
  // a group, to its weight over 2^cap; nullptr for the rest and for a
  // thinned entry).
  Item* DrawFrom(Pool* pool, bool capped, int64_t cap) {
    if (pool->table.size() == 0) return nullptr;
    const size_t e =
        capped ? pool->table.DrawWithin(*bits_, cap) : pool->table.Draw(*bits_);
    if (e == DyadicTable::kNone || !pool->table.Thin(*bits_, e)) return nullptr;
    if (e < pool->items.size()) return &pool->items[e];
    Group& group = pool->groups[e - pool->items.size()];
    if (!group.pool) Expand(&group);
    return DrawFrom(group.pool.get(), true, group.cap);
  }

  const QuantileProblem& p_;
  BaseTwoRate rate_;
  uint64_t sub_points_;
  // log2 K when K is a power of two (always, but in tests), else -1.
  int sub_point_shift_ =
      (sub_points_ & (sub_points_ - 1)) == 0 ? CeilLog2Of64(sub_points_) : -1;
  int margin_;
  int headroom_;
  BitReader* bits_;
  uint64_t target_;  // ScaledTarget()
  // Every atom's sorted sub-points, end to end (Group::jitter indexes it).
  std::vector<uint32_t>& jitter_arena_;
  Pool& top_;
};

}  // namespace

double QuantileSensitivity(double q) {
  return std::max(q, 1 - q) * kSensitivitySafety;
}

PointMeasure PointMeasure::Shells(int64_t first, int64_t last,
                                  uint32_t first_weight, uint32_t last_weight) {
  PointMeasure m;
  m.first_ = first;
  m.last_ = last;
  // (points == 0 only when last < first; the analyzer cannot tell.)
  const uint64_t points = static_cast<uint64_t>(last - first) + 1;
  if (last < first || points == 0 || (first_weight == 0 && last_weight == 0)) {
    return m;
  }
  m.first_weight_ = first_weight;
  m.last_weight_ = last_weight;
  m.whole_ = BitWidth(points) - 1;
  m.top_ = std::min(m.whole_, kMostShellBits);
  m.shift_ = m.whole_ - m.top_;
  // A fifth flat: U M = (c_first + c_last) E / 4. No overflow: E <= 54
  // 2^52 < 2^57.76 (at most K + 2 <= 54 shells of mass 2^K), the end
  // weights are at most 16 each, so the product is below 2^62.76 and the
  // total mass, 5/4 of it, below 2^63.1; M is at least 1 and at most
  // 2^52 + 1.
  const uint64_t ends = m.first_weight_ + m.last_weight_;
  m.side_total_ = m.SideMass(static_cast<int64_t>(points));
  const uint64_t shells = ends * m.side_total_;
  m.flat_ = std::max<uint64_t>(1, shells / (kShellsToFlat * points));
  return m;
}

int64_t PointMeasure::PointAt(int64_t from, int64_t to, uint64_t offset) const {
  if (uniform()) return from + static_cast<int64_t>(offset);
  // Piece by piece: the weight is constant between shell boundaries (of
  // either end), so each piece is found, and skipped or entered, in O(1);
  // a gap crosses few of them.
  int64_t p = from;
  while (p < to) {
    // The last point of p's shell from the first end (shells 0..shift_
    // are one piece), and of its shell from the last end.
    const int k_first =
        std::max(BitWidth(static_cast<uint64_t>(p - first_) + 1) - 1, shift_);
    const int64_t first_end = first_ + (int64_t{2} << k_first) - 2;
    const int k_last =
        std::max(BitWidth(static_cast<uint64_t>(last_ - p) + 1) - 1, 0);
    const int64_t last_end =
        k_last <= shift_ ? last_ : last_ - (int64_t{1} << k_last) + 1;
    const int64_t end = std::min({to, first_end, last_end});
    const uint64_t weight = Weight(p);
    const uint64_t points = static_cast<uint64_t>(end - p) + 1;
    if (offset / weight < points)
      return p + static_cast<int64_t>(offset / weight);
    offset -= points * weight;
    p = end + 1;
  }
  return to;
}

size_t QuantileProblem::Below(int64_t point) const {
  return static_cast<size_t>(
      std::lower_bound(cells, cells + count, static_cast<double>(point)) -
      cells);
}

size_t QuantileProblem::AtOrBelow(int64_t point) const {
  return static_cast<size_t>(
      std::upper_bound(cells, cells + count, static_cast<double>(point)) -
      cells);
}

uint64_t QuantileProblem::ScaledTarget() const {
  // q n 2^20 with one rounding of the product (below 2^51, so off by at most
  // 1/4) and one to the nearest integer.
  const double scaled =
      quantile * std::ldexp(static_cast<double>(count), kTargetFractionBits);
  return static_cast<uint64_t>(std::nearbyint(std::max(0.0, scaled)));
}

uint64_t QuantileProblem::ScaledDistance(size_t low, size_t high) const {
  return ScaledDistanceFrom(ScaledTarget(), low, high);
}

double QuantileProblem::Distance(size_t low, size_t high) const {
  return std::ldexp(static_cast<double>(ScaledDistance(low, high)),
                    -kTargetFractionBits);
}

ExponentialQuantileSampler::ExponentialQuantileSampler(double epsilon,
                                                       uint64_t sub_points)
    : epsilon_(epsilon),
      sub_points_(std::min<uint64_t>(kSplitSubPoints,
                                     std::max<uint64_t>(1, sub_points))) {}

ExponentialQuantileSampler::~ExponentialQuantileSampler() = default;

ExponentialQuantileSampler::ExponentialQuantileSampler(
    const ExponentialQuantileSampler& other)
    : epsilon_(other.epsilon_),
      sub_points_(other.sub_points_),
      tail_margin_bits_(other.tail_margin_bits_),
      headroom_(other.headroom_) {}

int64_t ExponentialQuantileSampler::SamplePoint(const QuantileProblem& problem,
                                                RandomSource& rng) const {
  return Sample<false>(problem, rng).point;
}

SplitPoint ExponentialQuantileSampler::SampleSplit(
    const QuantileProblem& problem, RandomSource& rng) const {
  return Sample<true>(problem, rng);
}

template <bool kSplit>
SplitPoint ExponentialQuantileSampler::Sample(const QuantileProblem& problem,
                                              RandomSource& rng) const {
  BitReader bits(rng);
  if (problem.count == 0) {  // every point by its weight alone
    const uint64_t mass =
        problem.measure.Mass(problem.first_point, problem.last_point);
    return {
        problem.measure.PointAt(problem.first_point, problem.last_point,
                                static_cast<uint64_t>(UniformBits(bits, mass))),
        0};
  }
  if (scratch_ == nullptr) scratch_ = std::make_unique<DrawScratch>();
  QuantileDraw<kSplit> draw(problem, epsilon_, sub_points_, tail_margin_bits_,
                            headroom_, bits, scratch_.get());
  SplitPoint out;
  while (bits.healthy()) {
    if (draw.Round(bits, &out)) return out;
  }
  return {problem.first_point, 0};
}

std::optional<SplitPoint> ExponentialQuantileSampler::RoundForTest(
    const QuantileProblem& problem, bool split, RandomSource& setup,
    BitReader& round) const {
  BitReader setup_bits(setup);
  DrawScratch scratch;
  SplitPoint out;
  bool accepted;
  if (split) {
    QuantileDraw<true> draw(problem, epsilon_, sub_points_, tail_margin_bits_,
                            headroom_, setup_bits, &scratch);
    accepted = draw.Round(round, &out);
  } else {
    QuantileDraw<false> draw(problem, epsilon_, sub_points_, tail_margin_bits_,
                             headroom_, setup_bits, &scratch);
    accepted = draw.Round(round, &out);
  }
  if (!accepted) return std::nullopt;
  return out;
}

double PointLogProbability(const QuantileProblem& problem, double epsilon,
                           int64_t point) {
  if (point < problem.first_point || point > problem.last_point) {
    return kNegativeInfinity;
  }
  const BaseTwoRate rate(epsilon / (2 * QuantileSensitivity(problem.quantile)));
  // log of exp(utility rate) alone (the base measure apart).
  auto log_weight = [&](int64_t v) {
    return -kLn2 * rate.ExponentFor(problem.ScaledDistance(
                                        problem.Below(v), problem.AtOrBelow(v)))
                       .Value();
  };
  // Every segment, bottom to top.
  SegmentWalker walker(problem, true, 0, problem.first_point);
  double normaliser = kNegativeInfinity;
  while (!walker.done()) {
    const Segment s = walker.Next();
    if (s.first > s.last) continue;
    const auto mass = static_cast<double>(s.mass);
    normaliser = LogAdd(normaliser, std::log(mass) + log_weight(s.first));
  }
  return std::log(static_cast<double>(problem.measure.Weight(point))) +
         log_weight(point) - normaliser;
}

std::map<std::pair<int64_t, uint64_t>, double> SplitProbabilities(
    const QuantileProblem& problem, double epsilon, uint64_t sub_points,
    bool by_sub_point) {
  const BaseTwoRate rate(epsilon / (2 * QuantileSensitivity(problem.quantile)));
  const size_t n = problem.count;
  std::map<std::pair<int64_t, uint64_t>, double> result;
  std::vector<uint64_t> jitter(n, 0);
  double jitters =
      std::pow(static_cast<double>(sub_points), static_cast<double>(n));
  std::function<void(size_t)> each = [&](size_t i) {
    if (i < n) {
      for (uint64_t s = 0; s < sub_points; ++s) {
        jitter[i] = s;
        each(i + 1);
      }
      return;
    }
    // One jitter: the plain exponential mechanism over every sub-point.
    std::vector<std::pair<std::pair<int64_t, uint64_t>, double>> outputs;
    double top = kNegativeInfinity;
    for (int64_t v = problem.first_point; v <= problem.last_point; ++v) {
      for (uint64_t s = 0; s < sub_points; ++s) {
        size_t rank = 0;
        for (size_t r = 0; r < n; ++r) {
          const double cell = problem.cells[r];
          rank += cell < static_cast<double>(v) ||
                  (cell == static_cast<double>(v) && jitter[r] < s);
        }
        const double log_weight =
            std::log(static_cast<double>(problem.measure.Weight(v))) -
            kLn2 * rate.ExponentFor(problem.ScaledDistance(rank, rank)).Value();
        top = std::max(top, log_weight);
        outputs.push_back({{v, by_sub_point ? s : rank}, log_weight});
      }
    }
    double total = 0;
    for (const auto& o : outputs) total += std::exp(o.second - top);
    for (const auto& o : outputs) {
      result[o.first] += std::exp(o.second - top) / total / jitters;
    }
  };
  each(0);
  return result;
}

}  // namespace dpq
