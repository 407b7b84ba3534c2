// ApproximateQuantiles (Kaplan, Schnapp, Stemmer, ICML 2022, Algorithm 1).
//
// Releases m quantiles by recursion: draw the middle quantile with the
// single-quantile exponential mechanism, split the records at the drawn point,
// rescale the remaining quantiles to each side and recurse. Runs in
// O(n log m) after the sort, recursion depth O(log m), with no copy of the
// records: each side is a contiguous range of the sorted cells.
//
// Guarantee: with per-level epsilon e, AQ is (L e)-DP, and with
// e = sqrt(8 rho / L) it is rho-zCDP, for L = floor(log2 m) + 1 levels, under
// add/remove-one-record neighbours (paper, Lemma 3.1 and Section 3.3). Proof:
// the subproblems of one level hold disjoint records, so a record added or
// removed changes the input of one mechanism per level; each mechanism is
// e-DP (exponential_quantile.h), hence e-bounded-range and e^2/8-zCDP
// (Cesar and Rogers 2021); the L levels compose (basic composition, resp.
// additive zCDP composition). The rescaled quantile of a subproblem depends
// only on public quantiles and earlier outputs, never on record counts.
#ifndef DPQ_CORE_AQ_H_
#define DPQ_CORE_AQ_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/random.h"

namespace dpq {

// Recursion levels for m distinct quantiles: floor(log2 m) + 1.
int ApproximateQuantilesLevels(size_t distinct_quantiles);

// Draws one grid point per quantile. `cells` are the sorted record cells of a
// grid with `steps` steps; `quantiles` strictly increasing in (0, 1);
// `epsilon_per_level` the exponential mechanism's epsilon at every level.
// Returns the points in the order of `quantiles`, non-decreasing.
std::vector<int64_t> SampleApproximateQuantiles(
    const double* cells, size_t count, int64_t steps,
    const std::vector<double>& quantiles, double epsilon_per_level,
    RandomSource& rng);

// Exact log-probability that SampleApproximateQuantiles returns `points`,
// following the same recursion. For the privacy tests.
double ApproximateQuantilesLogProbability(const double* cells, size_t count,
                                          int64_t steps,
                                          const std::vector<double>& quantiles,
                                          double epsilon_per_level,
                                          const std::vector<int64_t>& points);

}  // namespace dpq

#endif  // DPQ_CORE_AQ_H_
