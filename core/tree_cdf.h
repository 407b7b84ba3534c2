// The binary-tree CDF made monotone by isotonic regression (Manohar,
// "Privately Releasing Quantiles", Harvard Privacy Tools poster).
//
// A binary tree over 2^k equal cells of [lower, upper]: levels 0 (the cells)
// to k (the root), every node the count of records in its range. A record is
// in one node per level, so under add/remove-one-record neighbours each
// level's count vector has L1 and L2 sensitivity 1.
// Guarantee: level l gets exact discrete Laplace noise of scale 1 / epsilon_l
// with sum of epsilon_l = epsilon (epsilon-DP, basic composition over levels),
// or exact discrete Gaussian noise of variance 1 / (2 rho_l) with sum of
// rho_l = rho (rho-zCDP). Everything after the noise is post-processing: the
// noisy CDF at each cell boundary from the O(k) nodes of its dyadic
// decomposition, L2 isotonic regression (pool adjacent violators), clipping
// to [0, n_hat] with n_hat the noisy root, and quantiles read off by linear
// interpolation between boundaries.
//
// Budget across levels: "uniform" splits it evenly; "min-variance" (the
// poster's future-work item) minimises the expected squared error of
// CDF(x) - q n_hat averaged over boundaries x and quantiles q: a level below
// the root enters half of the boundaries' decompositions (weight 1/2), the
// root enters every target as n_hat (weight E[q^2] = 1/3). Minimising
// sum w_l Var_l subject to the budget gives epsilon_l proportional to
// w_l^(1/3) (Laplace variance ~ 2 / epsilon_l^2) and rho_l proportional to
// w_l^(1/2) (Gaussian variance 1 / (2 rho_l)).
#ifndef DPQ_CORE_TREE_CDF_H_
#define DPQ_CORE_TREE_CDF_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/discrete_noise.h"
#include "core/prepare.h"
#include "core/privacy.h"
#include "core/random.h"
#include "core/runs.h"
#include "core/status.h"

namespace dpq {

enum class TreeBudgetSplit { kUniform, kMinVariance };

struct TreeCdfShape {
  int64_t cells = 1024;  // a power of two; default 2^10. Privacy-relevant
                         // only through the number of levels it implies.
  TreeBudgetSplit split = TreeBudgetSplit::kUniform;
};

// Most cells: about 1 s of exact noise for the 4 million nodes. Public.
constexpr int64_t kMaxTreeCdfCells = int64_t{1} << 21;

// cells a power of two in [2, kMaxTreeCdfCells].
Status ValidateTreeCdfShape(const TreeCdfShape& shape);

// The budget share of each level 0..k (they sum to the budget).
std::vector<PrivacyBudget> TreeCdfLevelBudgets(const TreeCdfShape& shape,
                                               const PrivacyBudget& budget);

// Exact node counts, level 0 (cells) to level k (root). With `weights`,
// value i stands for weights[i] records (whole, summing to at most
// 2^53 - 1: the counts path's bucket edges); else for one.
std::vector<std::vector<int64_t>> TreeCdfCounts(
    const double* values, size_t count, double lower, double upper,
    const TreeCdfShape& shape, const double* weights = nullptr);
// The same from runs on `release_grid`.
std::vector<std::vector<int64_t>> TreeCdfCounts(const Runs& runs,
                                                const OutputGrid& release_grid,
                                                double lower, double upper,
                                                const TreeCdfShape& shape);

// The L2-closest non-decreasing vector (pool adjacent violators, O(n)).
std::vector<double> IsotonicRegression(const std::vector<double>& values);

// The noisy CDF at boundaries 1..2^k from noisy node counts (levels 0..k),
// by dyadic decomposition; before isotonic regression. For the tests.
std::vector<double> DyadicPrefixSums(
    const std::vector<std::vector<double>>& noisy_levels);

// Reads quantiles (ascending) off a non-decreasing CDF over equal cells of
// [lower, upper]: cdf[x] counts cells 0..x, `total` is the count the
// quantiles refer to. Linear interpolation inside the cell where q * total
// is reached. Post-processing; shared with DPHistGK.
std::vector<double> QuantilesFromCdf(const std::vector<double>& cdf,
                                     double total, double lower, double upper,
                                     const std::vector<double>& quantiles);

// One value per quantile (ascending in (0, 1)), non-decreasing.
StatusOr<std::vector<double>> ReleaseTreeCdf(
    const double* values, size_t count, double lower, double upper,
    const std::vector<double>& quantiles, const TreeCdfShape& shape,
    const PrivacyBudget& budget, RandomSource& rng,
    const double* weights = nullptr);
// The same from runs on `release_grid` (each run its point's value, weighed
// by its count): what a release reads.
StatusOr<std::vector<double>> ReleaseTreeCdf(
    const Runs& runs, const OutputGrid& release_grid, double lower,
    double upper, const std::vector<double>& quantiles,
    const TreeCdfShape& shape, const PrivacyBudget& budget, RandomSource& rng);

}  // namespace dpq

#endif  // DPQ_CORE_TREE_CDF_H_
