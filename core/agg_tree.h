// AggTree: a b-ary tree of noisy counts over equal-width leaves of
// [lower, upper] (Dwork, Naor, Pitassi and Rothblum 2010; Chan, Shi and Song
// 2011; the AQ paper's baseline, Section 4.1).
//
// The tree has b^h leaves and h levels of nodes below the root; each node
// holds the count of records in its range. A record is in exactly one node
// per level, so the h levels together have L1 sensitivity h and L2
// sensitivity sqrt(h) under add/remove-one-record neighbours.
// Guarantee: every node gets exact discrete Laplace noise of scale h / epsilon
// (epsilon-DP: each level is (epsilon / h)-DP, basic composition), or exact
// discrete Gaussian noise of variance h / (2 rho) (rho-zCDP: each level is
// (rho / h)-zCDP, zCDP composition). Everything after the noise is
// post-processing of the noisy counts:
//  - aggregation (default 'honaker', as the AQ paper's AggTree): bottom-up,
//    each node's count is combined with the sum of its children's estimates
//    by inverse variance (Honaker 2015; Hay et al. 2010), then top-down each
//    family of siblings is shifted equally so it sums to its parent's final
//    estimate. The counts become consistent and have the least variance of
//    any linear unbiased estimate. 'none' keeps the raw noisy counts and
//    draws a node's noise only when the descent looks at it.
//  - descent: from the root, a quantile q is located among the children's
//    counts (negatives read as 0), and rescaled inside the child it falls in
//    (q' = (q total - counts before) / the child's count), as dp_multiq's
//    tree does; inside the leaf, linear interpolation. Where the largest of
//    the root's children passes kAggTreeTrimScales noise scales, the span
//    grows out from it (below); a quantile that falls in a child before the
//    span goes to its start, and one after it to its end; the counts stay
//    as they are, so quantiles inside the span do not move. With bounds far
//    wider than the data, the stretch beside it is noise, which alone reaches a
//    small quantile's share (p1 of 1,000 records is 10) in some of its nodes.
//
// On a public step grid (the `step` option, or `buckets`, whose records sit
// on the bucket edges) the leaves are the grid's points
// instead: a record counts in the leaf of its nearest point (as every grid
// mechanism maps it), the tree has at least steps + 1 leaves, and the
// release is the point of the leaf the descent ends in, with no
// interpolation, so an atom at a point is released as itself. Leaves past
// the last point hold no record by construction (public), and the descent
// reads them as empty. The mapping is public, so the guarantee is the same.
#ifndef DPQ_CORE_AGG_TREE_H_
#define DPQ_CORE_AGG_TREE_H_

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

// Tree shape. Defaults: 16^4 = 65,536 leaves. Privacy-relevant only through
// h, which sets the noise scale; any valid shape is private.
struct AggTreeShape {
  int branching = 16;
  int height = 4;
  bool aggregate = true;  // Honaker aggregation; post-processing only
};

// Most leaves a tree may have (memory). Not privacy-relevant.
// Also bounds the work: every node gets exact noise, about 1 s at 2^21
// leaves of a binary tree (4 million nodes). Public.
constexpr int64_t kMaxTreeLeaves = int64_t{1} << 21;
// The descent's trim (above): the span starts at the largest of the root's
// children and takes in a neighbour whose count passes kAggTreeTrimScales
// noise scales (the scale of one node's noise, or its standard deviation);
// beyond a child that does not, a child joins only past
// kAggTreeTrimGapScales. Children outside the span take no quantile. An
// empty node passes 4 Laplace scales about once in 110 and 8 once in
// 6,000: with a dozen empty children beside the data, a span taking every
// child past 4 scales reached a noise child far from the data in one
// release in ten. Measured natively (n = 1,000, epsilon = 1, 120
// quantiles, the default after its step look found the step; share of
// releases with a value more than 10% of the range off): Adult age in
// [-100, 100] 27% (no trim) -> 7.5% (every child past 4 scales) -> 2%,
// Seattle wind in [0, 20] 43% -> 8.5% -> 2.5%. A sparse tail beyond a
// child below 4 scales is cut off unless it passes 8: a second mode of
// fewer than 8 scales' records beyond an empty child is read as noise.
// Post-processing: not privacy-relevant.
constexpr double kAggTreeTrimScales = 4;
constexpr double kAggTreeTrimGapScales = 8;

// branching in [2, 1024], height in [1, 24], at most kMaxTreeLeaves leaves.
Status ValidateAggTreeShape(const AggTreeShape& shape);

// The shape of a tree over a step grid's `points` (steps + 1) leaves, from
// the options given (0: not given). Neither: the fewest levels with
// branching up to 16, then the smallest branching that covers the points
// (101 points: 11^2 leaves), since the noise scale grows with the levels and
// wasted leaves only add noise. Only branching: the fewest levels it needs.
// Only height: the smallest branching. Both: as given. INVALID_OPTION when
// the points need more than kMaxTreeLeaves leaves or the given shape has
// fewer leaves than points. Public: depends on the options and grid only.
StatusOr<AggTreeShape> AggTreeShapeForPoints(int64_t points, int64_t branching,
                                             int64_t height, bool aggregate);

// Exact node counts, level 0 (leaves) to level h - 1 (the root's children),
// leaf index floor((x - lower) / (upper - lower) * leaves) clamped, or with
// a step `grid` the nearest point grid->PointOf(x). With `weights`, value i
// stands for weights[i] records (whole, their sum at most 2^53 - 1: the
// counts path's bucket edges); else for one.
std::vector<std::vector<int64_t>> AggTreeCounts(
    const double* values, size_t count, double lower, double upper,
    const AggTreeShape& shape, const double* weights = nullptr,
    const OutputGrid* grid = nullptr);
// The same from runs on `release_grid`.
std::vector<std::vector<int64_t>> AggTreeCounts(
    const Runs& runs, const OutputGrid& release_grid, double lower,
    double upper, const AggTreeShape& shape, const OutputGrid* grid = nullptr);

// Each level's share of `budget`: every record is in one node per level, so
// the levels compose to at most `budget` (each rounded down).
PrivacyBudget AggTreeLevelBudget(const AggTreeShape& shape,
                                 const PrivacyBudget& budget);
// The noise every node gets for `budget` (kPure or kZcdp): CountNoiseFor
// its level's share.
StatusOr<CountNoise> AggTreeNoise(const AggTreeShape& shape,
                                  const PrivacyBudget& budget);

// Honaker aggregation of noisy node counts (levels as in AggTreeCounts, every
// node with the same noise variance): the least-variance linear unbiased
// estimates, consistent (each parent the sum of its children). Post-
// processing only.
std::vector<std::vector<double>> HonakerAggregate(
    std::vector<std::vector<double>> noisy, int branching);

// One value per quantile (any quantiles in (0, 1), ascending), non-decreasing.
// `weights` as for AggTreeCounts: the tree reads nothing but node counts,
// so weighted edges release exactly what their expanded records would.
// With a step `grid` (at most as many points as leaves: the caller's
// check), values are its points.
StatusOr<std::vector<double>> ReleaseAggTree(
    const double* values, size_t count, double lower, double upper,
    const std::vector<double>& quantiles, const AggTreeShape& shape,
    const PrivacyBudget& budget, RandomSource& rng,
    const double* weights = nullptr, const OutputGrid* grid = nullptr);
// The same from runs on `release_grid` (runs.h): each run is its point's
// value, weighed by its count; what a release reads.
StatusOr<std::vector<double>> ReleaseAggTree(
    const Runs& runs, const OutputGrid& release_grid, double lower,
    double upper, const std::vector<double>& quantiles,
    const AggTreeShape& shape, const PrivacyBudget& budget, RandomSource& rng,
    const OutputGrid* grid = nullptr);

}  // namespace dpq

#endif  // DPQ_CORE_AGG_TREE_H_
