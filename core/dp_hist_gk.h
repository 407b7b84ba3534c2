// DPHistGK (Alabi, Ben-Eliezer and Chaturvedi, "Bounded Space Differentially
// Private Quantiles", Algorithm 3): a histogram of equal-width bins of
// [lower, upper] filled from a GK sketch's tuples, noisy counts, negative
// counts set to 0, quantiles read off the noisy CDF.
//
// Filling bins from tuples puts each tuple's g in the bin of its value. In a
// plain GK sketch that is not the bin's true count: a merge across a bin edge
// moves counts between bins, by up to 2 alpha n, and one changed value can
// change such merges anywhere, so the paper's sensitivity-2 argument (Lemma
// 4.12) does not hold for it. Our sketch never merges across the edges of its
// bins (gk_sketch.h), so the tuples of a bin carry exactly its count, and the
// argument holds.
//
// Guarantee: each value is in one bin, so the count vector has sensitivity 1
// under add/remove-one-value neighbours: exact discrete Laplace noise of
// scale 1 / epsilon is epsilon-DP, exact discrete Gaussian of variance
// 1 / (2 rho) is rho-zCDP. Quantile targets use the noisy total, not n, so n
// stays private. All m quantiles come from the one noisy histogram.
#ifndef DPQ_CORE_DP_HIST_GK_H_
#define DPQ_CORE_DP_HIST_GK_H_

#include <cstdint>
#include <vector>

#include "core/gk_sketch.h"
#include "core/privacy.h"
#include "core/random.h"
#include "core/status.h"

namespace dpq {

// Exact counts of `bins` equal bins from the sketch's tuples; `bins` must
// divide the sketch's own bins (a coarsening).
std::vector<int64_t> HistGkCounts(const GkSketch& sketch, int64_t bins);

// One value per quantile (ascending), non-decreasing.
StatusOr<std::vector<double>> ReleaseHistGk(
    const GkSketch& sketch, const std::vector<double>& quantiles, int64_t bins,
    const PrivacyBudget& budget, RandomSource& rng);

}  // namespace dpq

#endif  // DPQ_CORE_DP_HIST_GK_H_
