// DPExpGK (Alabi, Ben-Eliezer and Chaturvedi, "Bounded Space Differentially
// Private Quantiles", Algorithms 1 and 2): the exponential mechanism on a GK
// sketch, with the utility of Definition 4.6, sampled exactly
// (exact_exponential.h) in one pass over the sketch.
//
// Our data are real numbers in [lower, upper], summarised as cells of the
// public output grid (prepare.h); the output universe is the grid's points
// 0..steps, each a possible release. For a point x the sketch gives the rank
// interval [r_lo(x), r_hi(x)] of Definition 4.1 (r_lo: the largest prefix sum
// of g over tuples below x; r_hi: the smallest prefix sum plus delta over
// tuples above x; formal tuples at -inf and +inf with ranks 0 and n + 1), and
// u(x) = -distance(ceil(q n), [r_lo(x), r_hi(x)]).
//
// Continuous version: all points strictly between two consecutive distinct
// tuple values share one interval, so each such run is one candidate whose
// weight is its number of grid points (the gap's length in grid steps, as in
// AQ's single-quantile mechanism) times exp(epsilon u / (2 Delta_u)); each
// distinct tuple value is a candidate of one point. The exact draw of
// exact_exponential.h picks a candidate (weights in base two, never at a
// larger rate), then a uniform point inside it.
//
// Guarantee: epsilon-DP under REPLACE-ONE neighbours with n public, as in the
// paper (swap DP), with sensitivity Delta_u = C where every tuple keeps
// g + delta <= C = max(1, floor(2 alpha n)) (gk_sketch.h). The paper's bound
// is 2 C + 2 (Lemma 4.7 with Claim 4.8); this one is up to four times
// sharper. Proof sketch: fix a grid point x and let A = #{values < x},
// B = #{values <= x}. Each tuple's element sits at a sorted position p with
// r_min <= p <= r_max = r_min + delta, and g + delta <= C. Then:
//  - r_lo(x) = r_min of the last tuple below x (0 if none) is at most A, and
//    the first tuple at or above x has its element at position >= A + 1 and
//    r_max <= r_lo(x) + C, so r_lo(x) is in [A - C + 1, A];
//  - r_hi(x) = the smallest r_max over tuples above x (n + 1 if none) is at
//    least B + 1, and the first of them has r_max <= r_min(previous) + C <=
//    B + C, so r_hi(x) is in [B + 1, B + C]. (B - A is x's multiplicity in
//    the data. It need not be 0 for a point between two tuple values: the
//    sketch keeps only some values, and x may equal one it dropped. Nothing
//    below assumes B = A.)
// Replacing one value moves A and B by at most 1 each, so each end, which
// stays within C - 1 of A (r_lo) or of B (r_hi), moves by at most
// (C - 1) + 1 = C, whatever the two sketches look like; the distance
// from the fixed target ceil(q n) to [r_lo, r_hi] is 1-Lipschitz in the ends,
// so u(x) moves by at most C. The exponential mechanism over the grid points
// with exp(epsilon u / (2 C)) is epsilon-DP. With C = 1 the sketch is exact
// and this is the atom-aware single-quantile mechanism at sensitivity 1.
// Several quantiles: epsilon / m each (basic composition), or
// sqrt(8 rho / m) each for rho-zCDP.
#ifndef DPQ_CORE_DP_EXP_GK_H_
#define DPQ_CORE_DP_EXP_GK_H_

#include <cstdint>
#include <vector>

#include "core/exact_exponential.h"
#include "core/gk_sketch.h"
#include "core/random.h"

namespace dpq {

// A run of grid points [first_point, first_point + points) with one utility.
struct ExpGkCandidate {
  int64_t first_point = 0;
  int64_t points = 0;
  double log_weight = 0;  // log(points) - exponent ln 2 (for the tests)
  // Each point's weight is 2^-exponent: epsilon |u| / (2 Delta_u) in the
  // base-two form of exact_exponential.h (never a larger rate).
  Exponent exponent;
};

// The utility's sensitivity for a sketch of n values: C (see above).
double ExpGkSensitivity(const GkSketch& sketch);

// Every candidate of a flushed sketch, in increasing point order. The sampler
// and the privacy tests use this one function.
std::vector<ExpGkCandidate> ExpGkCandidates(const GkSketch& sketch, double q,
                                            double epsilon);

// One exact draw over the candidates, then a uniform point inside.
int64_t SampleExpGk(const GkSketch& sketch, double q, double epsilon,
                    RandomSource& rng);

}  // namespace dpq

#endif  // DPQ_CORE_DP_EXP_GK_H_
