// ApproximateQuantiles (Kaplan, Schnapp, Stemmer, ICML 2022, Algorithm 1).
//
// Releases m quantiles by recursion: draw the middle quantile with the
// single-quantile exponential mechanism, split the records at the drawn point,
// rescale the remaining quantiles to each side and recurse. Reads the runs
// (runs.h): each node is a range of ranks of them, so nothing is copied and
// nothing is done per record; a node visits the runs near its target
// (far fewer where epsilon is large). Recursion depth O(log m).
//
// Atoms. A node with quantiles on either side must cut its records in two,
// so it draws with the split form of exponential_quantile.h: its records
// sit at fixed sub-points inside their grid point, and an atom that holds
// the target is cut near the target rank, so both halves get the share of
// the atom their rescaled quantiles expect (a quartile below a median that
// fell inside an atom still finds the atom's records). A leaf (one quantile)
// cuts nothing and draws with the atom-aware form, whose occupied points
// score the whole rank interval they stand for.
//
// Guarantee: with per-level epsilon e, AQ is (L e)-DP, and with
// e = sqrt(8 rho / L) it is rho-zCDP, for L = floor(log2 m) + 1 levels, under
// add/remove-one-record neighbours (paper, Lemma 3.1 and Section 3.3). Proof:
// the subproblems of one level hold disjoint records (each record lies on
// one side of every cut), so a record added or removed changes the input of
// one mechanism per level; each mechanism is e-DP (exponential_quantile.h),
// hence e-bounded-range and e^2/8-zCDP (Cesar and Rogers 2021); the L levels
// compose (basic composition, resp. additive zCDP composition). The rescaled
// quantile of a subproblem depends only on public quantiles, never on record
// counts.
//
// The sub-points of the split form are fixed, not drawn: the c records at a
// point sit at sub-points spread evenly over it (exponential_quantile.h,
// SubGapBound), a public function of c. Adding a record at the point moves
// the count of records before each sub-point by 0 or 1, so it moves each
// split form's utility by at most its sensitivity and sends the new copy to
// exactly one side: the two children are neighbours of their counterparts
// (one of them gains a record, the other is unchanged), which is all the
// path argument below needs. (Until version 0.3 each record drew its
// sub-point at random, per node; the proof then fixed every draw by a
// coupling. Nothing is drawn now, so a run of any count costs one segment.)
//
// Per path (pure epsilon-DP): a record is used only by the nodes on one
// root-to-node path, so what must stay within epsilon is the sum along each
// path, not L times the largest epsilon of a level. A node gets an equal
// share of the budget its ancestors left, over the levels of its own
// subtree: e_v = (epsilon - sum of its ancestors' e) / (floor(log2 m_v) + 1)
// for the m_v quantiles below it. A full subtree gets epsilon / L at every
// node, as per level; a shallower one (m not 2^L - 1: a leaf one level above
// the deepest, say) gets the rest of its path, up to twice as much. Proof:
// fix every node's output (its point and, for a cut, its sub-point); the
// transcript's probability is the product of the nodes' probabilities of
// their outputs given the earlier ones, and with one record x added only the
// nodes whose input holds x change, which are the nodes of one path (each
// cut sends x to one side, above); each such factor changes by at most
// e^(e_v) (exponential_quantile.h), so the whole by at most e^(sum on the
// path) <= e^epsilon, pointwise, which survives summing over the
// transcripts that release the same points. Rounding: each share
// is rounded down and each remainder too (DivideDown, SubtractDown), so every
// path sums to at most epsilon. Under zCDP AQ keeps the per-level split,
// whose proof is the composition above.
#ifndef DPQ_CORE_AQ_H_
#define DPQ_CORE_AQ_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/exponential_quantile.h"
#include "core/random.h"

namespace dpq {

// Recursion levels for m distinct quantiles: floor(log2 m) + 1.
int ApproximateQuantilesLevels(size_t distinct_quantiles);

// How AQ spreads its budget over the nodes. kPerLevel: every node runs with
// the given epsilon (the paper's split; what zCDP composes). kPerPath: the
// given epsilon is the whole pure-DP budget, shared along each path (above).
enum class AqBudgetSplit { kPerLevel, kPerPath };

// Draws one grid point per quantile. `runs` are the records on a grid with
// points 0..steps; `quantiles` strictly increasing in (0, 1); `epsilon`
// every node's epsilon (kPerLevel) or the total (kPerPath); `sub_points` the
// split form's sub-points per point (tests use tiny ones). Returns the
// points in the order of `quantiles`, non-decreasing. O(m (runs near each
// target)): nothing is done per record.
std::vector<int64_t> SampleApproximateQuantiles(
    const Runs& runs, int64_t steps, const std::vector<double>& quantiles,
    double epsilon, AqBudgetSplit split, RandomSource& rng,
    uint64_t sub_points = kSplitSubPoints);

// The epsilons of the nodes on every root-to-leaf path of a release of m
// quantiles, as the sampler gives them (from the quantiles' count and the
// budget only): what must add up to at most epsilon per path. For tests.
std::vector<std::vector<double>> ApproximateQuantilesPathEpsilons(
    size_t distinct_quantiles, double epsilon, AqBudgetSplit split);

// Exact log-probability that SampleApproximateQuantiles returns `points`,
// summing over the cuts inner nodes may make (SplitProbabilities): tiny
// problems, for tests.
double ApproximateQuantilesLogProbability(const Runs& runs, int64_t steps,
                                          const std::vector<double>& quantiles,
                                          double epsilon, AqBudgetSplit split,
                                          const std::vector<int64_t>& points,
                                          uint64_t sub_points);

}  // namespace dpq

#endif  // DPQ_CORE_AQ_H_
