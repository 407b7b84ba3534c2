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

RunRange RunsOf(const QuantileProblem& p) {
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

// dist(target, [low, high]) in units of 2^-20 (target in those units),
// capped at kMaxScaledDistance.
uint64_t ScaledDistanceFrom(Uint128 target, uint64_t low, uint64_t high) {
  const Uint128 lo = static_cast<Uint128>(low) << kTargetFractionBits;
  const Uint128 hi = static_cast<Uint128>(high) << kTargetFractionBits;
  Uint128 distance = 0;
  if (target < lo) distance = lo - target;
  if (target > hi) distance = target - hi;
  return distance > kMaxScaledDistance ? kMaxScaledDistance
                                       : static_cast<uint64_t>(distance);
}

// Problems of fewer than 2^43 records (every one that is not counted rows
// past 8.8 10^12) keep targets and ranks in 64 bits: the same distances
// without 128-bit arithmetic, which WebAssembly emulates.
constexpr uint64_t kNarrowRecords = uint64_t{1} << 43;

// The distance function of one problem, in 64 bits where they suffice.
class TargetDistance {
 public:
  explicit TargetDistance(const QuantileProblem& problem)
      : target_(problem.ScaledTarget()),
        narrow_(problem.count() < kNarrowRecords),
        narrow_target_(static_cast<uint64_t>(target_)) {}

  uint64_t operator()(uint64_t low, uint64_t high) const {
    if (!narrow_) return ScaledDistanceFrom(target_, low, high);
    // Below 2^63: no cap, no overflow.
    const uint64_t lo = low << kTargetFractionBits;
    const uint64_t hi = high << kTargetFractionBits;
    if (narrow_target_ < lo) return lo - narrow_target_;
    if (narrow_target_ > hi) return narrow_target_ - hi;
    return 0;
  }
  // The rank of the target, floor(q n).
  uint64_t rank() const {
    return static_cast<uint64_t>(target_ >> kTargetFractionBits);
  }

 private:
  Uint128 target_;
  bool narrow_;
  uint64_t narrow_target_;
};

// One output group of an exact draw: grid points [first, last] standing for
// one rank (a gap), one occupied point (atom form), one sub-gap of an
// occupied point (split form; first == last), or, in the split form, both
// sub-gaps of a point holding one record (a "pair"). The exponent is
// recomputed from the ranks when the item is drawn.
struct Item {
  int64_t first = 0;
  int64_t last = 0;
  uint64_t low = 0;   // the ranks it stands for: [low, low + span]; in the
  uint64_t span = 0;  // split form, low is the records before the output
  // Base mass: the points' (a gap, an atom-form point) or a sub-gap's
  // (sub-points x the point's weight). A gap of the split form counts each
  // point's K sub-points: size = count K. A pair's size is K x its point's
  // weight, which count holds (its record's sub-point is floor(K / 2)).
  uint64_t count = 0;
  int64_t proposal = 0;  // its weight's ProposalExponent()
  bool scaled = false;   // a gap of the split form
  bool pair = false;
};

struct Pool;

// Outputs not worth listing yet, with a dyadic bound 2^cap on the sum of
// their proposal weights: the rest of a direction (from where its walker
// stopped), or sub-gaps [h_first, h_last] of one occupied point.
struct Group {
  int64_t cap = 0;
  std::optional<SegmentWalker> walker;
  int64_t point = 0;
  uint64_t below = 0;
  uint64_t records = 0;  // the point's
  uint64_t h_first = 0;
  uint64_t h_last = 0;
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
};

namespace {

// The base-two exponent of each output and the sizes of the outputs' items:
// what both the listing and the rounds of a draw read.
class DrawWeights {
 public:
  DrawWeights(const QuantileProblem& problem, double epsilon,
              uint64_t sub_points)
      : p_(problem),
        rate_(epsilon / (2 * QuantileSensitivity(problem.quantile))),
        distance_(problem),
        sub_points_(sub_points) {}

  const QuantileProblem& problem() const { return p_; }
  uint64_t sub_points() const { return sub_points_; }
  uint64_t target_rank() const { return distance_.rank(); }

  // The exponent of an output standing for ranks [low, high]. The last
  // one is kept: a walk asks for a gap's rank to decide whether to go on,
  // then lists the gap.
  Exponent At(uint64_t low, uint64_t high) const {
    if (low != last_low_ || high != last_high_) {
      last_low_ = low;
      last_high_ = high;
      last_ = rate_.ExponentFor(distance_(low, high));
    }
    return last_;
  }
  // A pair's smaller exponent: of rank low or of rank low + 1 (not of the
  // interval between them, which a target between the ranks would make 0
  // and every round a near-certain rejection at large epsilon).
  Exponent Pair(const Item& item) const {
    return rate_.ExponentFor(std::min(distance_(item.low, item.low),
                                      distance_(item.low + 1, item.low + 1)));
  }
  // Whether each of an item's outputs is a point's K sub-points (a gap of
  // the split form, or a pair) rather than one output.
  static bool Scaled(const Item& item) { return item.pair || item.scaled; }
  // The item's size: its base mass (count), times K if scaled.
  Uint128 Size(const Item& item) const {
    return static_cast<Uint128>(item.count) * (Scaled(item) ? sub_points_ : 1);
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

 private:
  const QuantileProblem& p_;
  BaseTwoRate rate_;
  TargetDistance distance_;
  uint64_t sub_points_;
  mutable uint64_t last_low_ = 1;  // At's last question (none yet: low > high)
  mutable uint64_t last_high_ = 0;
  mutable Exponent last_;
  // log2 K when K is a power of two (always, but in tests), else -1.
  int sub_point_shift_ =
      (sub_points_ & (sub_points_ - 1)) == 0 ? CeilLog2Of64(sub_points_) : -1;
};

// The outputs near the target, listed into pools as items (the draw's
// candidates) with the rest of each direction, and the far sub-gaps of
// large atoms, as groups listed only when drawn.
template <bool kSplit>
class OutputListing {
 public:
  OutputListing(const DrawWeights& weights, int margin, int headroom)
      : w_(weights),
        p_(weights.problem()),
        margin_(margin),
        headroom_(headroom) {}

  // Lists the top pool: the run holding the target's rank first, then
  // outward in both directions while the outputs can matter.
  void ListTop(Pool* top) const {
    top->items.clear();
    top->groups.clear();
    top->top = std::numeric_limits<int64_t>::min();
    // The run holding the record of rank floor(q n) (clamped) holds the
    // target: above it distances grow with the rank, below it they grow as
    // the rank falls.
    const uint64_t n = p_.count();
    const uint64_t start = std::min<uint64_t>(n - 1, w_.target_rank());
    const size_t run = p_.runs.RunOfRank(p_.lo + start);
    const RunRange range = RunsOf(p_);
    const int64_t point = p_.runs.point(run);
    Segment s;
    s.first = s.last = point;
    s.below = p_.Local(p_.runs.before(run));
    s.records = p_.Local(static_cast<uint64_t>(p_.runs.ends[run])) - s.below;
    s.mass = p_.measure.Weight(point);
    // Room for a few thousand items before the first growth copies them.
    top->items.reserve(static_cast<size_t>(
        std::min<uint64_t>(2 * (range.end - range.first) + 8, 4096)));
    Emit(top, s, false);
    SegmentWalker up(p_, range, true, run + 1, point + 1);
    SegmentWalker down(p_, range, false, run, point - 1);
    Walk(top, &up, false);
    Walk(top, &down, false);
    Finish(top, headroom_);
  }

  // Lists a group's outputs into a pool of its own.
  void Expand(Group* group) const {
    group->pool = std::make_unique<Pool>();
    Pool* pool = group->pool.get();
    if (group->walker.has_value()) {
      Walk(pool, &*group->walker, true);
    } else {
      const uint64_t weight = p_.measure.Weight(group->point);
      for (uint64_t h = group->h_first; h <= group->h_last; ++h) {
        AddSubGap(pool, group->point, group->below, group->records, h, weight);
      }
    }
    // Extra headroom of log2(entries) keeps the units' rounding within the
    // factor 2 the caps allow for.
    const size_t entries = pool->items.size() + pool->groups.size();
    Finish(pool, headroom_ + BitWidth(static_cast<Uint128>(entries)));
  }

 private:
  // An item for ranks [low, low + span] of base mass `count` (times K if
  // `scaled`), built in place: a release lists thousands.
  void AddItem(Pool* pool, int64_t first, int64_t last, uint64_t low,
               uint64_t span, uint64_t count, bool scaled, bool pair) const {
    pool->items.emplace_back();
    Item& item = pool->items.back();
    item.first = first;
    item.last = last;
    item.low = low;
    item.span = span;
    item.count = count;
    item.scaled = scaled;
    item.pair = pair;
    // ExactWeight::ProposalExponent: ceil(log2 size) - floor(y).
    const Exponent y = pair ? w_.Pair(item) : w_.At(low, low + span);
    item.proposal =
        w_.SizeBits(item.count, scaled || pair) - static_cast<int64_t>(y.whole);
    pool->Note(item.proposal);
  }

  // Sub-gap h of an occupied point (c records, `below` before it), if it
  // holds any sub-point.
  void AddSubGap(Pool* pool, int64_t point, uint64_t below, uint64_t c,
                 uint64_t h, uint64_t weight) const {
    const uint64_t k = w_.sub_points();
    const int64_t size = SubGapBound(c, k, h + 1) - SubGapBound(c, k, h);
    if (size <= 0) return;
    AddItem(pool, point, point, below + h, 0,
            static_cast<uint64_t>(size) * weight, false, false);
  }

  void AddGroup(Pool* pool, Group group) const {
    pool->Note(group.cap);
    pool->groups.push_back(std::move(group));
  }

  // The items of one segment. In the split form an occupied point lists its
  // sub-gaps outward from the one nearest the target while they can matter
  // (unless `all`); the rest on each side becomes a group.
  void Emit(Pool* pool, const Segment& s, bool all) const {
    if (s.records == 0) {  // a gap: each point K sub-points in the split form
      AddItem(pool, s.first, s.last, s.below, 0, s.mass, kSplit, false);
      return;
    }
    if (!kSplit) {  // the atom-aware form: one output for all its ranks
      AddItem(pool, s.first, s.first, s.below, s.records, s.mass, false, false);
      return;
    }
    const uint64_t c = s.records;
    const uint64_t k = w_.sub_points();
    if (c == 1) {
      // A pair: both sub-gaps in one item, of its point's weight; its
      // record's sub-point is SubGapBound(1, K, 1) = floor(K / 2).
      AddItem(pool, s.first, s.first, s.below, 1, s.mass, false, true);
      return;
    }
    const uint64_t weight = s.mass;  // one point's
    auto bound = [&](uint64_t h) { return SubGapBound(c, k, h); };
    const uint64_t target = w_.target_rank();
    const uint64_t nearest =
        std::min<uint64_t>(c, target > s.below ? target - s.below : 0);
    AddSubGap(pool, s.first, s.below, c, nearest, weight);
    // Sub-gaps [0, low) and (high, c] are still to place.
    uint64_t low = nearest;
    uint64_t high = nearest;
    auto group = [&](uint64_t first, uint64_t last, uint64_t near) {
      const Uint128 total =
          static_cast<Uint128>(bound(last + 1) - bound(first)) * weight;
      Group g;
      g.cap = CeilLog2(total) + 2 -
              static_cast<int64_t>(w_.At(s.below + near, s.below + near).whole);
      g.point = s.first;
      g.below = s.below;
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
      AddSubGap(pool, s.first, s.below, c, low, weight);
    }
    while (high < c) {
      if (bound(c + 1) - bound(high + 1) == 0) break;
      Group g = group(high + 1, c, high + 1);
      if (!all && g.cap + margin_ < pool->top) {
        AddGroup(pool, std::move(g));
        break;
      }
      ++high;
      AddSubGap(pool, s.first, s.below, c, high, weight);
    }
  }

  // Segments from `walker` on; unless `all`, stops where everything left
  // is bounded below the pool's top by the margin and leaves it as a group.
  // Proof of the bound: each item left weighs 2^a < 2 size 2^-floor(y_next)
  // and each point group's cap is below 8 (its size) 2^-floor(y_next); the
  // sizes (base masses) sum to `left`; rounding up to units at most doubles
  // the sum.
  void Walk(Pool* pool, SegmentWalker* walker, bool all) const {
    while (!walker->done()) {
      if (!all) {
        const uint64_t rank = walker->next_rank();
        const int64_t cap = w_.SizeBits(walker->mass_left(), kSplit) + 4 -
                            static_cast<int64_t>(w_.At(rank, rank).whole);
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

  const DrawWeights& w_;
  const QuantileProblem& p_;
  int margin_;
  int headroom_;
};

// The exact draw of exact_exponential.h for one problem: the outputs near
// the target listed (OutputListing), then one proposal-and-acceptance round
// at a time: choose an item by its proposal weight (DrawFrom), and accept it
// with the probability its true weight leaves (Round; RoundOnPair for a
// pair's two sub-gaps).
template <bool kSplit>
class QuantileDraw {
 public:
  QuantileDraw(const QuantileProblem& problem, double epsilon,
               uint64_t sub_points, int margin, int headroom,
               DrawScratch* scratch)
      : weights_(problem, epsilon, sub_points),
        listing_(weights_, margin, headroom),
        top_(scratch->top) {
    listing_.ListTop(&top_);
  }

  // One round, reading `bits`: true with *out set when the proposal is
  // accepted.
  bool Round(BitReader& bits, SplitPoint* out) {
    bits_ = &bits;
    Item* item = DrawFrom(&top_, false, 0);
    if (item == nullptr) return false;
    if (item->pair) return RoundOnPair(*item, out);
    if (!BernoulliSizeShare(*bits_, weights_.Size(*item)) ||
        !BernoulliTwoToMinusFraction(
            *bits_, weights_.At(item->low, item->low + item->span).fraction)) {
      return false;
    }
    out->point = item->first;
    if (item->last > item->first) {  // a gap: a point by its weight
      const QuantileProblem& p = weights_.problem();
      out->point = p.measure.PointAt(
          item->first, item->last,
          static_cast<uint64_t>(UniformBits(*bits_, item->count)));
    }
    out->split = item->low;
    return true;
  }

 private:
  // The round after a pair was proposed (weight 2^a, a = ceil(log2 K) -
  // floor(y_min)): a uniform sub-point s of the K; sub-gap h = [s > p] for
  // the record's sub-point p (h records before it, size p + 1 or K - 1 - p),
  // so h has probability size_h / K. Accepted with probability
  // K 2^-y_h / 2^a = 2^-(y_h - floor(y_min)): as for every item, sub-gap h
  // is returned with probability size_h 2^-y_h / 2^a.
  bool RoundOnPair(const Item& item, SplitPoint* out) {
    const uint64_t position = weights_.sub_points() >> 1;
    const uint64_t s =
        static_cast<uint64_t>(UniformBits(*bits_, weights_.sub_points()));
    const uint64_t h = s > position ? 1 : 0;
    if (!BernoulliSizeShare(*bits_, weights_.Size(item))) return false;
    const uint64_t floor_min = weights_.Pair(item).whole;
    const Exponent y = weights_.At(item.low + h, item.low + h);
    // 2^-(y.whole - floor_min): that many zero bits in a row.
    for (uint64_t left = y.whole - floor_min; left > 0;) {
      const int take =
          static_cast<int>(std::min<uint64_t>(left, BitReader::kMaxPeek));
      if (bits_->Bits(take) != 0) return false;
      left -= static_cast<uint64_t>(take);
    }
    if (!BernoulliTwoToMinusFraction(*bits_, y.fraction)) return false;
    out->point = item.first;
    out->split = item.low + h;
    return true;
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
    if (!group.pool) listing_.Expand(&group);
    return DrawFrom(group.pool.get(), true, group.cap);
  }

  DrawWeights weights_;
  OutputListing<kSplit> listing_;
  Pool& top_;
  BitReader* bits_ = nullptr;
};

}  // namespace

double QuantileSensitivity(double q) {
  return std::max(q, 1 - q) * kSensitivitySafety;
}

PointMeasure PointMeasure::Shells(int64_t first, int64_t last,
                                  uint32_t first_weight, uint32_t last_weight,
                                  int first_reach, int last_reach,
                                  int first_drop, int last_drop) {
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
  // Shells 0..shift_ are one piece (PointAt): a reach starts past them.
  m.first_reach_ = first_reach < 0 ? -1 : std::max(first_reach, m.shift_);
  m.last_reach_ = last_reach < 0 ? -1 : std::max(last_reach, m.shift_);
  if (m.first_reach_ >= 0) m.first_drop_ = first_drop;
  if (m.last_reach_ >= 0) m.last_drop_ = last_drop;
  m.last_total_ =
      m.SideMass(static_cast<int64_t>(points), m.last_reach_, m.last_drop_);
  if (m.first_reach_ >= 0 || m.last_reach_ >= 0) {
    // The decaying shells are the point: no flat part spread over the
    // stretch they leave (1, so every weight stays positive).
    m.flat_ = 1;
    return m;
  }
  // A fifth flat: U M = (c_first + c_last) E / 4. No overflow: E <= 54
  // 2^52 < 2^57.76 (at most K + 2 <= 54 shells of mass 2^K), the end
  // weights are at most 16 each, so the product is below 2^62.76 and the
  // total mass, 5/4 of it, below 2^63.1; M is at least 1 and at most
  // 2^52 + 1.
  const uint64_t ends = m.first_weight_ + m.last_weight_;
  const uint64_t shells = ends * m.last_total_;
  m.flat_ = std::max<uint64_t>(1, shells / (kShellsToFlat * points));
  return m;
}

uint64_t PointMeasure::ReachedSideMass(int64_t cells, int reach,
                                       int drop) const {
  // Shell k holds the distances [2^k - 1, 2^(k+1) - 2], each of weight
  // ShellWeight; past the reach the weights fall to 0 and so does the rest.
  const auto x = static_cast<uint64_t>(cells);
  uint64_t total = 0;
  for (int k = 0; k <= whole_ + 1; ++k) {
    const uint64_t start = (uint64_t{1} << k) - 1;
    if (start >= x) break;
    const uint64_t weight =
        ShellWeight(static_cast<int64_t>(start), reach, drop);
    if (weight == 0) break;
    const uint64_t end = std::min(x, (uint64_t{2} << k) - 1);
    total += (end - start) * weight;
  }
  return total;
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

int64_t SubGapBound(uint64_t c, uint64_t sub_points, uint64_t h) {
  if (h == 0) return -1;
  if (h > c) return static_cast<int64_t>(sub_points) - 1;
  // floor((2h - 1) K / (2c)): in 64 bits while (2h - 1) K fits, else 128.
  const uint64_t odd = 2 * h - 1;
  if (odd <= (~uint64_t{0}) / sub_points) {
    return static_cast<int64_t>(odd * sub_points / (2 * c));
  }
  return static_cast<int64_t>(MultiplyWide(odd, sub_points) /
                              static_cast<Uint128>(2 * c));
}

Uint128 QuantileProblem::ScaledTarget() const {
  const uint64_t n = count();
  if (!(quantile > 0) || n == 0) return 0;
  // q = m 2^(e - 53) with m a 53-bit integer, so q n 2^20 = m n 2^(e - 33):
  // the exact product in 128 bits (below 2^106), then a right shift by
  // 33 - e >= 32 (q <= 1 gives e <= 1), rounded to the nearest.
  int exponent = 0;
  const double fraction = std::frexp(quantile, &exponent);
  const auto mantissa = static_cast<uint64_t>(std::ldexp(fraction, 53));
  const Uint128 product = MultiplyWide(mantissa, n);
  const int shift = 33 - exponent;
  if (shift >= 128) return 0;
  return (product + (static_cast<Uint128>(1) << (shift - 1))) >> shift;
}

uint64_t QuantileProblem::ScaledDistance(uint64_t low, uint64_t high) const {
  return ScaledDistanceFrom(ScaledTarget(), low, high);
}

double QuantileProblem::Distance(uint64_t low, uint64_t high) const {
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
  if (problem.count() == 0) {  // every point by its weight alone
    const uint64_t mass =
        problem.measure.Mass(problem.first_point, problem.last_point);
    return {
        problem.measure.PointAt(problem.first_point, problem.last_point,
                                static_cast<uint64_t>(UniformBits(bits, mass))),
        0};
  }
  if (scratch_ == nullptr) scratch_ = std::make_unique<DrawScratch>();
  QuantileDraw<kSplit> draw(problem, epsilon_, sub_points_, tail_margin_bits_,
                            headroom_, scratch_.get());
  SplitPoint out;
  while (bits.healthy()) {
    if (draw.Round(bits, &out)) return out;
  }
  return {problem.first_point, 0};
}

std::optional<SplitPoint> ExponentialQuantileSampler::RoundForTest(
    const QuantileProblem& problem, bool split, BitReader& round) const {
  DrawScratch scratch;
  SplitPoint out;
  bool accepted;
  if (split) {
    QuantileDraw<true> draw(problem, epsilon_, sub_points_, tail_margin_bits_,
                            headroom_, &scratch);
    accepted = draw.Round(round, &out);
  } else {
    QuantileDraw<false> draw(problem, epsilon_, sub_points_, tail_margin_bits_,
                             headroom_, &scratch);
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
  const RunRange range = RunsOf(problem);
  SegmentWalker walker(problem, range, true, range.first, problem.first_point);
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
  // The plain exponential mechanism over every sub-point: the rank of
  // (v, s) is the records below v plus those of v's records whose fixed
  // sub-point is below s.
  std::vector<std::pair<std::pair<int64_t, uint64_t>, double>> outputs;
  double top = kNegativeInfinity;
  for (int64_t v = problem.first_point; v <= problem.last_point; ++v) {
    const uint64_t below = problem.Below(v);
    const uint64_t c = problem.AtOrBelow(v) - below;
    for (uint64_t s = 0; s < sub_points; ++s) {
      uint64_t before = 0;
      while (before < c &&
             SubGapBound(c, sub_points, before + 1) < static_cast<int64_t>(s)) {
        ++before;
      }
      const uint64_t rank = below + before;
      const double log_weight =
          std::log(static_cast<double>(problem.measure.Weight(v))) -
          kLn2 * rate.ExponentFor(problem.ScaledDistance(rank, rank)).Value();
      top = std::max(top, log_weight);
      outputs.push_back({{v, by_sub_point ? s : rank}, log_weight});
    }
  }
  double total = 0;
  for (const auto& o : outputs) total += std::exp(o.second - top);
  std::map<std::pair<int64_t, uint64_t>, double> result;
  for (const auto& o : outputs)
    result[o.first] += std::exp(o.second - top) / total;
  return result;
}

}  // namespace dpq
