#include "core/exponential_quantile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/exact_exponential.h"
#include "core/output_walk.h"

namespace dpq {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.6931471805599453;

double LogAdd(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegativeInfinity) return a;
  return a + std::log1p(std::exp(b - a));
}

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
  // The target in ranks, rounded to a double (for guesses only).
  double target_ranks() const {
    return (narrow_ ? static_cast<double>(narrow_target_)
                    : ApproximateDouble(target_)) /
           static_cast<double>(uint64_t{1} << kTargetFractionBits);
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

// Entries of one draw's table: the items listed (Entry), and the parts not
// worth listing yet as groups with a dyadic bound 2^cap on the sum of their
// proposal weights, each the rest of a direction from where its walker
// stopped, listed into a pool of its own when first drawn.
template <typename Entry, typename Walker>
struct Pool {
  struct Group {
    int64_t cap = 0;
    size_t entry = 0;  // its index in the table
    Walker walker;
    std::unique_ptr<Pool> pool;
  };
  static constexpr int64_t kNoTop = SizedTable::kNoTop;

  std::vector<Entry> items;  // by table index (a group's slot unused)
  std::vector<Group> groups;
  SizedTable table;

  void Clear() {
    items.clear();
    groups.clear();
    table.Reset();
  }
  // The largest dyadic bound (ceil(log2 size) - floor(y)) of an entry:
  // what the walk's margins compare.
  int64_t top() const { return table.top(); }
  // An item of `size` outputs whose proposal is 2^-whole each
  // (`size_bits`: ceil(log2 size)).
  DPQ_HOT_INLINE void Add(const Entry& entry, Uint128 size, int64_t whole,
                          int64_t size_bits) {
    items.push_back(entry);
    table.Add(size, -whole, size_bits);
  }
  void AddGroup(int64_t cap, const Walker& walker) {
    groups.push_back({cap, items.size(), walker, nullptr});
    items.emplace_back();
    table.Add(1, cap, 0);
  }
  // An item and an offset below its size, with probability proportional to
  // its outputs' proposal (or, in a group's pool, to it over 2^cap);
  // nullptr for the rest and for a thinned draw. A drawn group is listed
  // by `expand` first.
  template <typename Expand>
  const Entry* Draw(BitReader& bits, bool capped, int64_t cap,
                    const Expand& expand, Uint128* offset) {
    if (table.size() == 0) return nullptr;
    const SizedTable::Drawn d =
        capped ? table.DrawWithin(bits, cap) : table.Draw(bits);
    if (d.entry == SizedTable::kNone) return nullptr;
    for (Group& group : groups) {
      if (group.entry != d.entry) continue;
      if (!group.pool) {
        group.pool = std::make_unique<Pool>();
        expand(group.walker, group.pool.get());
      }
      return group.pool->Draw(bits, true, group.cap, expand, offset);
    }
    *offset = d.offset;
    return &items[d.entry];
  }
};

// Walks outward from the target, listing into a pool while the outputs can
// matter: once a bound on all that is left of a direction lies `margin`
// bits below the pool's top, the rest is one group. A Walker gives done(),
// next_rank() (the rank nearest the target of all it has left: every
// output left is at least as far), SizeBitsLeft() (ceil(log2) of a bound on
// the sizes left), and Next(whole, list), which lists its next piece
// through list(entry, ceil(log2 size), low, high) for outputs standing for
// ranks [low, high] (or lists nothing if the piece is empty) and moves on.
// Every output of a piece has the floor(y) of the next rank, `whole`.
//
// Proof that a group's cap bounds its proposal weights (size 2^-floor(y)
// an item, at most 2^a, a = ceil(log2 size) - floor(y)): with S the sizes
// left and y0 the next rank's exponent, an item weighs at most
// size 2^-floor(y0), so the items sum to at most S 2^-floor(y0). Listed
// when drawn, a group's pool holds some of those items, summing to
// L > 2^(top - 1) (top: their largest a; an item weighs above half its
// bound), and at most one nested group, formed only with cap + margin <
// top (margin >= 0), so at most 2^(top - 1) < L; the table's rounding adds
// below one unit an entry, 2^(top - headroom) <= 2^(top - 1) < L in all
// (SizedTable's units are 2^(top - headroom), and ListGroup adds log2 of
// the entries to a headroom >= 1). The pool's total is below 3 L <=
// 3 S 2^-floor(y0) < 2^(ceil(log2 S) + 2 - floor(y0)), within the cap.
constexpr int kGroupCapBits = 4;

// 1 / (the rate M 2^-64 in bits per rank), rounded (for guesses only).
double RanksPerBit(Uint128 multiplier) {
  if (multiplier == 0) return std::numeric_limits<double>::infinity();
  return 0x1p64 / ApproximateDouble(multiplier);
}

// The base-two exponent of the outputs standing for ranks [low, high]:
// what the listing and the rounds of a draw read.
class DrawWeights {
 public:
  DrawWeights(const QuantileProblem& problem, double epsilon, int skew = 0)
      : p_(problem),
        rate_(epsilon / (2 * QuantileSensitivity(problem.quantile))),
        distance_(problem),
        target_(distance_.target_ranks()),
        ranks_per_bit_(RanksPerBit(rate_.multiplier())),
        skew_(skew) {}

  const QuantileProblem& problem() const { return p_; }
  uint64_t target_rank() const { return distance_.rank(); }
  Exponent At(uint64_t low, uint64_t high) const {
    return rate_.ExponentFor(distance_(low, high));
  }
  // At(low, high).whole, as an exponent of the table.
  int64_t Whole(uint64_t low, uint64_t high) const {
    return static_cast<int64_t>(rate_.WholeFor(distance_(low, high)));
  }
  // A guess (floating point; where bands end, which any guess keeps exact:
  // BandReach) at the last rank on one side of the target (above it if
  // `upward`) whose floor(y) is `whole`: y = |r - t| / ranks_per_bit stays
  // below whole + 1 there. Moved outward by `skew` ranks (tests).
  uint64_t Guess(int64_t whole, bool upward) const {
    const double reach = static_cast<double>(whole + 1) * ranks_per_bit_;
    const double guess = upward ? std::ceil(target_ + reach) - 1 + skew_
                                : std::floor(target_ - reach) + 1 - skew_;
    if (!(guess > 0)) return 0;
    if (guess >= 0x1p63) return uint64_t{1} << 63;
    return static_cast<uint64_t>(guess);
  }

 private:
  const QuantileProblem& p_;
  BaseTwoRate rate_;
  TargetDistance distance_;
  double target_;         // t, rounded
  double ranks_per_bit_;  // 1 / (the base-two rate per rank), rounded
  int skew_;
};

// How the walk's settings reach it: the group margin, the bits of floor(y)
// listed one band each before bands widen, the table's headroom, and how
// far bands' ends are moved from the guess (tests).
struct WalkSettings {
  int margin = 0;
  int exact_bits = 0;
  int headroom = 0;
  int skew = 0;
};

// The width (in bits of floor(y)) of a band whose nearest rank lies `d`
// bits past the walk's first: 1 for the first `exact_bits` bits, then
// d - exact_bits + 2 (2, 4, 8, ... bits: a band at d holds about its
// distance's worth of bits, so its proposal, 2^-floor(y) for each of its
// outputs, exceeds their weight by a share of the total that halves with
// each band, while the walk lists O(log) bands where it listed one per bit).
int64_t BandWidth(int64_t d, int exact_bits) {
  return d < exact_bits ? 1 : d - exact_bits + 2;
}

// An item's outputs' total size: its ranks' sub-points, or its points'
// base mass.
Uint128 OutputsOf(const RankBand& band) { return band.size; }
Uint128 OutputsOf(const PointBand& band) { return band.mass; }

template <typename Entry, typename Walker>
void Walk(const DrawWeights& weights, const WalkSettings& settings,
          Pool<Entry, Walker>* pool, Walker walker) {
  // What is left only shrinks: its first bound, compared first, spares
  // computing the bound near the target.
  const int64_t most_bits = walker.SizeBitsLeft() + kGroupCapBits;
  const int margin = settings.margin;
  int64_t first = Pool<Entry, Walker>::kNoTop;
  while (!walker.done()) {
    const uint64_t rank = walker.next_rank();
    const int64_t near = weights.Whole(rank, rank);
    const int64_t top = pool->top();
    if (top != Pool<Entry, Walker>::kNoTop && most_bits - near + margin < top) {
      const int64_t cap = walker.SizeBitsLeft() + kGroupCapBits - near;
      if (cap + margin < top) {
        pool->AddGroup(cap, walker);
        return;
      }
    }
    if (first == Pool<Entry, Walker>::kNoTop) first = near;
    // Every item a walker lists has its nearest rank, the next one, the
    // least floor(y) of its outputs (output_walk.h; its tests check it).
    walker.Next(near, BandWidth(near - first, settings.exact_bits),
                [&](const Entry& entry, int64_t size_bits, uint64_t, uint64_t) {
                  pool->Add(entry, OutputsOf(entry), near, size_bits);
                });
  }
}

// Lists a drawn group (the rest of a walk) into its own pool, with log2 of
// its entries more headroom, so the units' rounding adds below
// 2^(top - headroom) in all (the proof above).
template <typename Entry, typename Walker>
void ListGroup(const DrawWeights& weights, const WalkSettings& settings,
               const Walker& walker, Pool<Entry, Walker>* pool) {
  Walk(weights, settings, pool, walker);
  pool->table.Finish(settings.headroom +
                     BitWidth(static_cast<Uint128>(pool->items.size())));
}

// The acceptance of an output of a band whose proposal took floor(y) as
// `band_whole`: 2^-(y - band_whole), as whole - band_whole zero bits and
// the 2^-frac(y) trial.
bool AcceptBelow(BitReader& bits, int64_t band_whole, const Exponent& y) {
  const auto whole = static_cast<int64_t>(y.whole);
  return BernoulliTwoToMinus(bits, static_cast<uint64_t>(whole - band_whole)) &&
         BernoulliTwoToMinusFraction(bits, y.fraction);
}

// ---- The atom-aware form: an item per band of points. ----

using PointBands = SegmentBandWalker<DrawWeights>;
using PointPool = Pool<PointBand, PointBands>;

// ---- The split form: an item per band of ranks. ----

using Bands = BandWalker<DrawWeights>;
using RankPool = Pool<RankBand, Bands>;

}  // namespace

struct DrawScratch {
  PointPool points;
  RankPool ranks;
};

namespace {

// The atom-aware form's exact draw (exact_exponential.h): the run holding
// the target's point alone, then bands of points outward
// (SegmentBandWalker), then rounds. A band is proposed by its mass, an
// integer, times 2^-W, W the band's least floor(y) (SizedTable): a round
// draws a band and a uniform offset below its mass at once, which falls on
// each point by its weight (PointMeasure::PointAt); the point is then
// accepted with 2^-(y - W) (AcceptBelow). So a round returns point v with
// probability proportional to 2^-W w(v) 2^-(y(v) - W) = w(v) 2^-y(v).
class PointDraw {
 public:
  PointDraw(const QuantileProblem& problem, double epsilon,
            uint64_t /*sub_points*/, const WalkSettings& settings,
            DrawScratch* scratch)
      : weights_(problem, epsilon, settings.skew),
        settings_(settings),
        top_(scratch->points) {
    top_.Clear();
    const QuantileProblem& p = problem;
    // The run holding the record of rank floor(q n) (clamped) holds the
    // target: above it distances grow with the rank, below it they grow as
    // the rank falls.
    const uint64_t start =
        std::min<uint64_t>(p.count() - 1, weights_.target_rank());
    const RunRange range = ProblemRuns(p);
    const size_t run =
        range.single ? range.first + start : p.runs.RunOfRank(p.lo + start);
    const int64_t point = p.runs.point(run);
    const uint64_t below = range.single ? start : p.Local(p.runs.before(run));
    const uint64_t records =
        range.single ? 1
                     : p.Local(static_cast<uint64_t>(p.runs.ends[run])) - below;
    const uint64_t mass = p.measure.Weight(point);
    const int64_t whole = weights_.Whole(below, below + records);
    top_.Add(PointBand{point, point, mass, whole, run, run + 1}, mass, whole,
             CeilLog2Of64(mass));
    Walk(weights_, settings_, &top_,
         PointBands(weights_, p, range, true, run + 1, point + 1));
    Walk(weights_, settings_, &top_,
         PointBands(weights_, p, range, false, run, point - 1));
    top_.table.Finish(settings_.headroom);
  }

  // One round, reading `bits`: true with *out set when the proposal is
  // accepted.
  bool Round(BitReader& bits, SplitPoint* out) {
    Uint128 drawn = 0;
    const PointBand* band = top_.Draw(
        bits, false, 0,
        [&](const PointBands& w, PointPool* pool) {
          ListGroup(weights_, settings_, w, pool);
        },
        &drawn);
    if (band == nullptr) return false;
    const auto offset = static_cast<uint64_t>(drawn);  // below the mass
    const QuantileProblem& p = weights_.problem();
    const int64_t point =
        band->first == band->last
            ? band->first
            : p.measure.PointAt(band->first, band->last, offset);
    // The point's records: the band's runs hold every one at its points.
    const double* points = p.runs.points;
    const auto at = static_cast<double>(point);
    const size_t j = static_cast<size_t>(
        std::lower_bound(points + band->run_first, points + band->run_end, at) -
        points);
    const uint64_t below = p.Local(p.runs.before(j));
    const uint64_t at_or_below =
        j < band->run_end && points[j] == at
            ? p.Local(static_cast<uint64_t>(p.runs.ends[j]))
            : below;
    if (!AcceptBelow(bits, band->whole, weights_.At(below, at_or_below))) {
      return false;
    }
    out->point = point;
    out->split = below;
    return true;
  }

 private:
  DrawWeights weights_;
  WalkSettings settings_;
  PointPool& top_;
};

// The split form's exact draw: the ranks near the target listed in bands
// (BandWalker), then rounds. A band is proposed by its size, an integer,
// times 2^-W, W the band's least floor(y) (SizedTable): a round draws a
// band and a uniform offset below its size at once, which falls on each
// output by its weight and names the output's rank (by the ranks' edges)
// and its point (RankOutputs::Locate); the output is then accepted with
// 2^-(y - W) (AcceptBelow). So a round returns output o with probability
// proportional to 2^-W w(o) 2^-(y(o) - W) = w(o) 2^-y(o).
class SplitDraw {
 public:
  SplitDraw(const QuantileProblem& problem, double epsilon, uint64_t sub_points,
            const WalkSettings& settings, DrawScratch* scratch)
      : weights_(problem, epsilon, settings.skew),
        range_(ProblemRuns(problem)),
        edges_(problem, range_, sub_points),
        settings_(settings),
        top_(scratch->ranks) {
    top_.Clear();
    // Rank floor(q n) first (the nearest to the target from below, and the
    // pool's top to start with), then each direction outward.
    const uint64_t n = problem.count();
    const uint64_t start = std::min<uint64_t>(n, weights_.target_rank());
    Walk(weights_, settings_, &top_, Bands(weights_, edges_, n, true, start));
    if (start > 0) {
      Walk(weights_, settings_, &top_,
           Bands(weights_, edges_, n, false, start - 1));
    }
    top_.table.Finish(settings_.headroom);
  }

  bool Round(BitReader& bits, SplitPoint* out) {
    Uint128 offset = 0;
    const RankBand* band = top_.Draw(
        bits, false, 0,
        [&](const Bands& w, RankPool* pool) {
          ListGroup(weights_, settings_, w, pool);
        },
        &offset);
    if (band == nullptr) return false;
    // The band's rank whose outputs hold the offset: the last with its
    // edge at or before it. Searched from where the offset's share of the
    // band points (the ranks' sizes are alike more often than not: two or
    // three edges read where halving read log2 of the band's width).
    uint64_t rank = band->first;
    Uint128 before = 0;  // the band's outputs before `rank`'s
    size_t run = band->run;
    if (band->last > band->first) {
      const uint64_t width = band->last - band->first;
      const double share =
          ApproximateDouble(offset) / ApproximateDouble(band->size);
      const auto guess = static_cast<uint64_t>(std::min(
          share * static_cast<double>(width + 1), static_cast<double>(width)));
      // The last edge found at or before the offset is usually the
      // answer's: kept, not read again.
      uint64_t kept = 0;
      Uint128 kept_span = 0;
      rank += LastSame(width, guess, [&](uint64_t i) {
        const Uint128 span =
            edges_.Span(band->edge, edges_.At(band->first + i, &run));
        if (span > offset) return false;
        kept = i;
        kept_span = span;
        return true;
      });
      if (rank > band->first) {
        before = rank - band->first == kept
                     ? kept_span
                     : edges_.Span(band->edge, edges_.At(rank, &run));
      }
    }
    if (!AcceptBelow(bits, band->whole, weights_.At(rank, rank))) {
      return false;
    }
    const QuantileProblem& p = weights_.problem();
    const RankOutputs o = OutputsOfRank(p, range_, edges_.k(), rank, run);
    out->point =
        o.Locate(offset - before, p.measure, edges_.k(), edges_.k_shift());
    out->split = rank;
    out->run = o.run;
    return true;
  }

 private:
  DrawWeights weights_;
  RunRange range_;
  RankEdges edges_;
  WalkSettings settings_;
  RankPool& top_;
};

}  // namespace

double QuantileSensitivity(double q) {
  return std::max(q, 1 - q) * kSensitivitySafety;
}

int64_t SubGapBound(uint64_t c, uint64_t sub_points, uint64_t h) {
  if (h == 0) return -1;
  if (h > c) return static_cast<int64_t>(sub_points) - 1;
  // floor((2h - 1) K / (2c)): in 64 bits while (2h - 1) K fits, else 128.
  // K is a power of two but in tests: a shift then, no division (nor a
  // 128-bit product, which WebAssembly emulates) to find whether it fits.
  const uint64_t odd = 2 * h - 1;
  if (const int shift = SubPointShift(sub_points); shift >= 0) {
    if (shift == 0 || (odd >> (64 - shift)) == 0) {
      return static_cast<int64_t>((odd << shift) / (2 * c));
    }
  } else if (odd <= (~uint64_t{0}) / sub_points) {
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
  // m and e from q's bits (frexp and ldexp are libm calls in WebAssembly):
  // a normal q is (2^52 + f) 2^(E - 1075) with E its biased exponent, so
  // e = E - 1022; a subnormal one f 2^-1074 (e = -1021, any shift past 128
  // gives 0 either way).
  uint64_t bits = 0;
  std::memcpy(&bits, &quantile, sizeof(bits));
  const auto biased = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t fraction_bits = bits & ((uint64_t{1} << 52) - 1);
  const uint64_t mantissa =
      biased == 0 ? fraction_bits : fraction_bits | (uint64_t{1} << 52);
  const int exponent = biased == 0 ? -1021 : biased - 1022;
  const Uint128 product = MultiplyWide(mantissa, n);
  const int shift = 33 - exponent;
  if (shift >= 128) return 0;
  return ShiftRightWide(product + PowerOfTwo(shift - 1), shift);
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
  // Buffers kept per thread, across samplers and releases (a draw ends
  // before the next one starts), so a release allocates none of them.
  static thread_local DrawScratch scratch;
  std::conditional_t<kSplit, SplitDraw, PointDraw> draw(
      problem, epsilon_, sub_points_,
      WalkSettings{tail_margin_bits_, exact_band_bits_, headroom_,
                   band_end_skew_},
      &scratch);
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
    SplitDraw draw(problem, epsilon_, sub_points_,
                   WalkSettings{tail_margin_bits_, exact_band_bits_, headroom_,
                                band_end_skew_},
                   &scratch);
    accepted = draw.Round(round, &out);
  } else {
    PointDraw draw(problem, epsilon_, sub_points_,
                   WalkSettings{tail_margin_bits_, exact_band_bits_, headroom_,
                                band_end_skew_},
                   &scratch);
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
  // log of exp(utility rate) for outputs standing for ranks [low, high]
  // (the base measure apart).
  auto log_weight = [&](uint64_t low, uint64_t high) {
    return -kLn2 * rate.ExponentFor(problem.ScaledDistance(low, high)).Value();
  };
  // Every segment, bottom to top: the empty points below each run (its
  // records' rank), then the run's point.
  double normaliser = kNegativeInfinity;
  auto add = [&](int64_t first, int64_t last, uint64_t low, uint64_t high) {
    if (first > last) return;
    const auto mass = static_cast<double>(problem.measure.Mass(first, last));
    normaliser = LogAdd(normaliser, std::log(mass) + log_weight(low, high));
  };
  const RunRange range = ProblemRuns(problem);
  int64_t next = problem.first_point;
  uint64_t below = 0;
  for (size_t i = range.first; i < range.end; ++i) {
    const int64_t at = problem.runs.point(i);
    const uint64_t above =
        problem.Local(static_cast<uint64_t>(problem.runs.ends[i]));
    add(next, at - 1, below, below);
    add(at, at, below, above);
    below = above;
    next = at + 1;
  }
  add(next, problem.last_point, below, below);
  return std::log(static_cast<double>(problem.measure.Weight(point))) +
         log_weight(problem.Below(point), problem.AtOrBelow(point)) -
         normaliser;
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
