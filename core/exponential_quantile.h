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
// in two. Each grid point has K = sub_points equal sub-points; every record
// draws an independent uniform sub-point of its own point (a jitter by public
// randomness, as in HSJointExp). Output: a sub-point (v, s); its rank r is the
// number of records before it in (point, sub-point) order, its utility
//   u(X, (v, s)) = -|r - t|.
// Released: v; the r records before (v, s) form the left part. So an atom is
// cut where the target falls inside it, and AQ's two halves stay disjoint.
//
// Guarantee (both forms): epsilon-DP under add/remove-one-record neighbours,
// hence epsilon-bounded-range and epsilon^2/8-zCDP. Proof: adding a record x
// moves t by exactly q. It moves a_v and b_v (or r) by 0 or 1: by 1 exactly
// for the outputs above x (for the split form, for every sub-point after x's;
// for the atom-aware form, b_v also at v = point(x)). So a_v - t, t - b_v and
// r - t each move by -q or 1 - q, and every utility moves by at most
// Delta = max(q, 1 - q) (a max or an absolute value of terms that each move
// by at most Delta moves by at most Delta). P(output) proportional to
// exp(epsilon u / (2 Delta)) is then epsilon-DP (McSherry and Talwar 2007).
// The split form's jitter is per-record public randomness: for every jitter
// of the common records the ratio bound holds, so it holds for the mixture.
// Removing a record is the same pair read backwards.
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
// Sampling is exact (exact_exponential.h): no floating-point number decides
// anything. Outputs are grouped into segments (a run of empty grid points
// between two occupied points, or one occupied point, or in the split form
// one sub-gap of an occupied point), each an item of the draw. Segments are
// listed outward from the target; once everything left in a direction is
// bounded 2^40 below the largest item, the rest is one group with a dyadic
// bound on its weight, listed only if drawn (about once in 2^40 draws). The
// split form's sub-points are independent uniform integers of [0, K): for
// an atom, drawn for its records when it is listed; for a point holding one
// record, whose two sub-gaps are listed as one item, drawn only when that
// item is first proposed (a record's sub-point matters only where the cut
// is made). Sub-gaps of a large atom far from the target are grouped the
// same way. The support never depends on the data.
#ifndef DPQ_CORE_EXPONENTIAL_QUANTILE_H_
#define DPQ_CORE_EXPONENTIAL_QUANTILE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/bits.h"
#include "core/random.h"

namespace dpq {

// Relative safety margin on the sensitivity for the rounding of the target
// (see above). Privacy-relevant.
constexpr double kSensitivitySafety = 1.0 + 1.0 / 65536.0;
// Fraction bits of the target q n (see above). Privacy-relevant: the margin
// above assumes at most 2^-19 of movement from its rounding.
constexpr int kTargetFractionBits = 20;
// Sub-points per grid point in the split form (at most 2^32). Any public K is
// private; a large one makes the jitter effectively continuous. Not
// privacy-relevant.
constexpr uint64_t kSplitSubPoints = uint64_t{1} << 32;

// The sensitivity the mechanism uses for quantile q in [0, 1]:
// max(q, 1 - q) (1 + 2^-16). Privacy-relevant.
double QuantileSensitivity(double q);

// One instance: the sorted record points and the allowed output points.
// Every record point lies in [first_point, last_point].
struct QuantileProblem {
  const double* cells = nullptr;  // sorted record points, exact integer doubles
  size_t count = 0;               // n
  int64_t first_point = 0;        // lowest allowed output point
  int64_t last_point = 0;         // highest allowed output point (inclusive)
  double quantile = 0.5;          // q in [0, 1]; the target rank is q n

  // Records at points below `point`, and at or below it.
  size_t Below(int64_t point) const;
  size_t AtOrBelow(int64_t point) const;
  // The target q n in units of 2^-20, rounded (see above).
  uint64_t ScaledTarget() const;
  // The utility's distance for an output standing for ranks [low, high]:
  // dist(target, [low, high]), exactly, in units of 2^-20 and as a double.
  uint64_t ScaledDistance(size_t low, size_t high) const;
  double Distance(size_t low, size_t high) const;
};

// A released point and, for the split form, how many records (in sorted
// order) go to the left part.
struct SplitPoint {
  int64_t point = 0;
  size_t split = 0;
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

  // How far below the largest item (in bits) a direction or a far part of
  // an atom is grouped instead of listed. Any value is exact; 40 lists little
  // and expands a group about once in 2^40 draws. Tests lower it to exercise
  // the groups. Not privacy-relevant.
  void set_tail_margin_bits(int bits) { tail_margin_bits_ = bits; }
  // DyadicTable's headroom (exact_exponential.h); tests lower it to exercise
  // the thinning. Not privacy-relevant.
  void set_headroom(int bits) { headroom_ = bits; }

  // One proposal-and-acceptance round on a fresh draw (its setup, the split
  // form's jitter, read from `setup`), reading `round`: the output if
  // accepted. For the tests that enumerate a round's random bits.
  std::optional<SplitPoint> RoundForTest(const QuantileProblem& problem,
                                         bool split, RandomSource& setup,
                                         BitReader& round) const;

 private:
  template <bool kSplit>
  SplitPoint Sample(const QuantileProblem& problem, RandomSource& rng) const;

  double epsilon_;
  uint64_t sub_points_;
  int tail_margin_bits_ = 40;
  int headroom_ = 64;
};

// log P(SamplePoint returns `point`), by summing every segment (the exact
// weights, summed in floating point); -inf outside [first_point,
// last_point]. For the privacy tests and AQ's likelihood.
double PointLogProbability(const QuantileProblem& problem, double epsilon,
                           int64_t point);

// Exact distribution of the split form by enumerating all K^n jitters: maps
// (point, sub-point) to its probability if `by_sub_point`, else
// (point, split). Exponential in n: small problems in tests only.
std::map<std::pair<int64_t, uint64_t>, double> SplitProbabilities(
    const QuantileProblem& problem, double epsilon, uint64_t sub_points,
    bool by_sub_point);

}  // namespace dpq

#endif  // DPQ_CORE_EXPONENTIAL_QUANTILE_H_
