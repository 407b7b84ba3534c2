// DPExpGK (Alabi, Ben-Eliezer and Chaturvedi, "Bounded Space Differentially
// Private Quantiles", Algorithms 1 and 2): the exponential mechanism on a GK
// sketch, with the utility of Definition 4.6, sampled by the Gumbel-max trick
// in one pass over the sketch.
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
// distinct tuple value is a candidate of one point. Gumbel-max picks a
// candidate, then a uniform point inside it.
//
// Guarantee: epsilon-DP under REPLACE-ONE neighbours with n public, as in the
// paper (Lemma 4.7, swap DP). Every tuple keeps g + delta <= C with
// C = max(1, floor(2 alpha n)), so each sketch rank is within C of the true
// rank (Lemma 4.3) and replacing a value moves true ranks by at most 2
// (Claim 4.8): Delta_u = 2 C + 2 <= 4 alpha n + 2 (for 2 alpha n >= 1; with
// C = 1 the sketch is exact). Several quantiles: epsilon / m each (basic
// composition), or sqrt(8 rho / m) each for rho-zCDP.
#ifndef DPQ_CORE_DP_EXP_GK_H_
#define DPQ_CORE_DP_EXP_GK_H_

#include <cstdint>
#include <vector>

#include "core/gk_sketch.h"
#include "core/random.h"

namespace dpq {

// A run of grid points [first_point, first_point + points) with one utility.
struct ExpGkCandidate {
  int64_t first_point = 0;
  int64_t points = 0;
  double log_weight = 0;  // log(points) + epsilon u / (2 Delta_u)
};

// The utility's sensitivity for a sketch of n values: 2 C + 2.
double ExpGkSensitivity(const GkSketch& sketch);

// Every candidate of a flushed sketch, in increasing point order. The sampler
// and the privacy tests use this one function.
std::vector<ExpGkCandidate> ExpGkCandidates(const GkSketch& sketch, double q,
                                            double epsilon);

// One draw: Gumbel-max over the candidates, then a uniform point inside.
int64_t SampleExpGk(const GkSketch& sketch, double q, double epsilon,
                    RandomSource& rng);

}  // namespace dpq

#endif  // DPQ_CORE_DP_EXP_GK_H_
