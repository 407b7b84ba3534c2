// The single-quantile exponential mechanism (AQ paper, Appendix A; Smith 2011)
// on the public output grid of prepare.h, in two forms that share a sampler.
//
// Records are grid points (prepare.h maps each value to its nearest point).
// For quantile q of n records the target rank is the real number t = q n.
//
// Atom-aware form (SamplePoint). Output: a grid point v in
// [first_point, last_point]. v stands for every rank in
// [a_v, b_v] = [#{x : point(x) < v}, #{x : point(x) <= v}], and its utility is
//   u(X, v) = -dist(t, [a_v, b_v]) = -max(a_v - t, 0, t - b_v).
// A point between records has a_v = b_v (the classic gap utility); a point
// holding an atom of c records covers c + 1 ranks, so a target inside an
// atom releases the atom's own value.
//
// Split form (SampleSplit), for AQ's inner nodes, which must cut the records
// in two. Each grid point has K = sub_points equal sub-points, and the c
// records at an occupied point sit at fixed sub-points spread evenly over
// it: the h-th (h = 1..c) at floor((2h - 1) K / (2c)) (SubGapBound). Records
// at one point are equal, so which of them sits where does not matter; only
// how many lie before a sub-point does, and that is a public function of c.
// Output: a sub-point (v, s); its rank r is the number of records before it
// in (point, sub-point) order, its utility
//   u(X, (v, s)) = -|r - t|.
// Released: v; the r records before (v, s) form the left part. So an atom is
// cut where the target falls inside it, and AQ's two halves stay disjoint.
// (Until version 0.3 each record drew a uniform sub-point at random, which
// needs one draw per record; the fixed spread costs nothing per record, so
// a run of 10^12 counted rows is cut as cheaply as one record.)
//
// Guarantee (both forms): epsilon-DP under add/remove-one-record neighbours,
// hence epsilon-bounded-range and epsilon^2/8-zCDP. Proof: adding a record x
// moves t by exactly q. It moves a_v and b_v (or r) by 0 or 1: by 1 exactly
// for the outputs above x (for the atom-aware form, b_v also at
// v = point(x)). So a_v - t, t - b_v and r - t each move by -q or 1 - q, and
// every utility moves by at most Delta = max(q, 1 - q) (a max or an
// absolute value of terms that each move by at most Delta moves by at most
// Delta). P(output) proportional to exp(epsilon u / (2 Delta)) is then
// epsilon-DP (McSherry and Talwar 2007). In the split form, at x's own point
// v the count c grows to c + 1 and every record there moves to its new
// sub-point: the records before sub-point s, min(c, ceil(s c / K + 1/2) - 1),
// grow by 0 or 1 (s / K < 1 adds less than 1 inside the ceiling), so r moves
// by 0 or 1 there too, and the left part (those records) gains x's copy or
// the right part does, never both: AQ's children stay neighbours (aq.h).
// Removing a record is the same pair read backwards. Every output o also
// carries a public base weight w(o) (PointMeasure, point_measure.h; a sub-point
// that of its point): P(o) is proportional to w(o) exp(epsilon u / (2 Delta)),
// and since w(o) is the same on both neighbours it cancels from the ratio of
// o's probabilities, so the bound holds for any measure that does not
// depend on the records.
//
// Exactly as sampled: the target is q n rounded to a multiple of 2^-20
// (ScaledTarget; off by under 2^-20), so every distance is an exact dyadic
// rational, and adding a record moves the target by q plus under 2^-19: the
// sensitivity is at most Delta + 2^-19 <= Delta (1 + 2^-18). The mechanism
// uses Delta (1 + 2^-16) (QuantileSensitivity), which covers it. The rate
// epsilon / (2 Delta (1 + 2^-16)) is then replaced by the base-two rate of
// exact_exponential.h (never larger) and weights are size 2^-y with y capped
// at 2^40: a utility capped at a public constant, of no larger sensitivity.
//
// Ranks are exact integers up to 2^53 - 1 (counted rows), so the target
// q n 2^20 is formed exactly in 128 bits (ScaledTarget), and a distance is
// capped at kMaxScaledDistance: the utility is -min(distance, 2^43 ranks), a
// cap at a public constant, which keeps the sensitivity (min with a
// constant is 1-Lipschitz) and changes nothing below 8.8 10^12 ranks.
//
// Sampling is exact (exact_exponential.h): no floating-point number decides
// anything (where a band ends is guessed in floating point, and any end is
// exact: BandReach in output_walk.h); an item's size is its outputs' total
// integer base mass, its proposal that size times 2^-W (W its least
// floor(y)), and a drawn band returns a point with probability its weight
// over the band's mass (the table's uniform names the band and an integer
// below its mass at once, located by PointMeasure::PointAt or the ranks'
// edges). Items are bands: outputs whose
// weight exponent y has one whole part floor(y) near the target, and past
// kExactBandBits bits a whole part in a range of 2, 4, 8, ... (output_walk.h).
// The atom-aware form's are stretches of grid points (gaps and occupied
// points). The split form's are stretches of ranks, the outputs with r records
// before them sharing one utility (between runs the top sub-gap of the lower
// point, the empty points between and the lowest sub-gap of the upper point;
// inside an atom one sub-gap), sized by the edges of their first rank and the
// one after their last. The drawn output is then accepted with 2^-(y - W), W
// the band's least floor(y): floor(y) - W zero bits, then a 2^-frac(y) trial.
// Items are listed outward from the target; once everything left in a direction
// is bounded 2^20 below the largest item, the rest is one group with a dyadic
// bound on its weight, listed only if drawn (about once in 2^20 draws), so an
// atom costs what its ranks near the target cost, whatever its size. The
// support never depends on the data.
#ifndef DPQ_CORE_EXPONENTIAL_QUANTILE_H_
#define DPQ_CORE_EXPONENTIAL_QUANTILE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/bits.h"
#include "core/point_measure.h"
#include "core/random.h"
#include "core/runs.h"

namespace dpq {

// Relative safety margin on the sensitivity for the rounding of the target
// (see above). Privacy-relevant.
constexpr double kSensitivitySafety = 1.0 + 1.0 / 65536.0;
// Fraction bits of the target q n (see above). Privacy-relevant: the margin
// above assumes at most 2^-19 of movement from its rounding.
constexpr int kTargetFractionBits = 20;
// Sub-points per grid point in the split form (at most 2^32). Any public K is
// private; a large one lets a cut fall between any two records of an atom
// up to 2^32 records. Not privacy-relevant.
constexpr uint64_t kSplitSubPoints = uint64_t{1} << 32;
// The draws' table headroom (SizedTable, exact_exponential.h): an item is
// kept in units of 2^(top - 24), rounded up where a unit is more than one
// output's proposal, and an offset there is thinned. Any headroom is
// exact; a draw has at most a few hundred items, so the rounding adds
// below 2^-16 of the total (a round rejected that much more often), and
// the table's uniform fits one 32-bit read instead of 64 bits and more.
// Not privacy-relevant.
constexpr int kDrawHeadroom = 24;
// A draw lists the outputs whose floor(y) lies within this many bits of
// the nearest one's (on each side of the target) one band per bit, then
// bands 2, 4, 8, ... bits wide, whose outputs are accepted with
// 2^-(y - the band's least floor(y)): a draw lists O(log) items for the
// rest instead of one per bit, at the price of rounds rejected for the
// outputs past a band's first bit. Two rather than four (measured, n =
// 1,000, m = 120: 8.9 items a split draw instead of 11.1, 3.4 rounds
// instead of 2.9, 4% less time a release in WebAssembly, 3% natively);
// one rather than two (WebAssembly, in one process: grouped releases of
// nine deciles 2% faster at 1,000 and 10,000 groups, one call 1% to 3%
// faster at m = 1 and 9, the same at m = 120; none: 1% faster).
// Any value is exact. Not privacy-relevant.
constexpr int kExactBandBits = 1;
// The cap on a distance in units of 2^-20: 2^63, i.e. 2^43 ranks (see
// above). Public; any cap is private.
constexpr uint64_t kMaxScaledDistance = uint64_t{1} << 63;

// The split form's fixed sub-points: the last sub-point of sub-gap h - 1 of
// a point holding c >= 1 records among K sub-points, so that sub-gap h
// (h of the point's records before it, h = 0..c) holds the sub-points
// (SubGapBound(h), SubGapBound(h + 1)]: -1 for h = 0, K - 1 for h > c, and
// floor((2h - 1) K / (2c)) (the h-th record's sub-point) otherwise.
int64_t SubGapBound(uint64_t c, uint64_t sub_points, uint64_t h);
// log2 K when K is a power of two (always, but in tests), else -1: sizes
// are then scaled by K with a shift.
inline int SubPointShift(uint64_t sub_points) {
  return (sub_points & (sub_points - 1)) == 0 ? CeilLog2Of64(sub_points) : -1;
}

// The sensitivity the mechanism uses for quantile q in [0, 1]:
// max(q, 1 - q) (1 + 2^-16). Privacy-relevant.
double QuantileSensitivity(double q);

// One instance: records given as runs and the allowed output points. The
// records are the ranks [lo, hi) of `runs` (AQ's nodes read one slice of
// the release's runs each); every one lies in [first_point, last_point].
struct QuantileProblem {
  Runs runs;
  uint64_t lo = 0;
  uint64_t hi = 0;
  int64_t first_point = 0;  // lowest allowed output point
  int64_t last_point = 0;   // highest allowed output point (inclusive)
  double quantile = 0.5;    // q in [0, 1]; the target rank is q n
  // The base measure over [first_point, last_point] (public).
  PointMeasure measure = PointMeasure();

  // All of `runs`, over the points 0..steps.
  static QuantileProblem Whole(const Runs& runs, int64_t steps, double q) {
    return {runs, 0, runs.total(), 0, steps, q};
  }

  uint64_t count() const { return hi - lo; }  // n
  // The problem's records at points below `point`, and at or below it.
  uint64_t Below(int64_t point) const { return Local(runs.Below(point)); }
  uint64_t AtOrBelow(int64_t point) const {
    return Local(runs.AtOrBelow(point));
  }
  // A rank of `runs` as one of the problem's (clamped to [lo, hi]).
  uint64_t Local(uint64_t rank) const {
    return std::min(std::max(rank, lo), hi) - lo;
  }
  // The target q n in units of 2^-20: the exact product, rounded to the
  // nearest integer (see above).
  Uint128 ScaledTarget() const;
  // The utility's distance for an output standing for ranks [low, high]:
  // dist(target, [low, high]) in units of 2^-20, capped at
  // kMaxScaledDistance, and as a double.
  uint64_t ScaledDistance(uint64_t low, uint64_t high) const;
  double Distance(uint64_t low, uint64_t high) const;
};

// A released point and, for the split form, how many records (in sorted
// order) go to the left part.
struct SplitPoint {
  int64_t point = 0;
  uint64_t split = 0;
  // The split form's run (an index into the problem's runs) holding the
  // record of local rank `split`, the right part's first; runs.size when
  // split = n. What AQ's children narrow their runs by, without a search.
  size_t run = 0;
};

class ExponentialQuantileSampler {
 public:
  // `epsilon` is the mechanism's; `sub_points` is K of the split form (tests
  // use tiny ones to enumerate the jitter exactly).
  explicit ExponentialQuantileSampler(double epsilon,
                                      uint64_t sub_points = kSplitSubPoints);

  // The atom-aware form.
  int64_t SamplePoint(const QuantileProblem& problem, RandomSource& rng) const;
  // The split form.
  SplitPoint SampleSplit(const QuantileProblem& problem,
                         RandomSource& rng) const;

  // How far below the largest item (in bits) the rest of a direction is
  // grouped instead of listed. Any value is exact; 20 expands a group about
  // once in 2^20 draws (a release of 100 quantiles once in 10^4), which
  // lists the next 20 bits' worth, and lists half the ranks 40 did where a
  // node has more of them than that. Tests lower it to exercise the groups.
  // Not privacy-relevant.
  void set_tail_margin_bits(int bits) { tail_margin_bits_ = bits; }
  // SizedTable's headroom (exact_exponential.h); tests lower it to exercise
  // the thinning. Not privacy-relevant.
  void set_headroom(int bits) { headroom_ = bits; }
  // The bits of floor(y) next to the target listed one band each before
  // bands widen (kExactBandBits); tests lower it to 0 so that small problems
  // have wide bands. Any value is exact. Not privacy-relevant.
  void set_exact_band_bits(int bits) { exact_band_bits_ = bits; }
  // Moves where bands end this many ranks outward from the floating-point
  // guess (inward if negative). Any end is exact (BandReach in
  // output_walk.h); tests move them to show it. Not privacy-relevant.
  void set_band_end_skew(int ranks) { band_end_skew_ = ranks; }

  // One proposal-and-acceptance round on a fresh draw, reading `round`: the
  // output if accepted. For the tests that enumerate a round's random bits.
  std::optional<SplitPoint> RoundForTest(const QuantileProblem& problem,
                                         bool split, BitReader& round) const;

 private:
  template <bool kSplit>
  SplitPoint Sample(const QuantileProblem& problem, RandomSource& rng) const;

  double epsilon_;
  uint64_t sub_points_;
  int tail_margin_bits_ = 20;
  int headroom_ = kDrawHeadroom;
  int exact_band_bits_ = kExactBandBits;
  int band_end_skew_ = 0;
};

// log P(SamplePoint returns `point`), by summing every segment (the exact
// weights, summed in floating point); -inf outside [first_point,
// last_point]. For the privacy tests and AQ's likelihood.
double PointLogProbability(const QuantileProblem& problem, double epsilon,
                           int64_t point);

// Exact distribution of the split form over every sub-point of every
// output point (a sum over (point, sub-point) in floating point): maps
// (point, sub-point) to its probability if `by_sub_point`, else
// (point, split). O(points K): small problems in tests only.
std::map<std::pair<int64_t, uint64_t>, double> SplitProbabilities(
    const QuantileProblem& problem, double epsilon, uint64_t sub_points,
    bool by_sub_point);

}  // namespace dpq

#endif  // DPQ_CORE_EXPONENTIAL_QUANTILE_H_
