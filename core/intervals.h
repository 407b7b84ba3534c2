// Confidence intervals for released quantiles (docs/algorithms/intervals.md).
//
// For quantile q of n records, the true sample quantile is x_(k), the k-th
// smallest record, k = floor(q n) + 1 (what truth.ts and the experiments
// compare against). For each q two more single-quantile exponential
// mechanisms (exponential_quantile.h, atom-aware form, sampled exactly) draw
// a lower bracket aimed t ranks below the target and an upper bracket aimed
// t ranks above it, on a public interval grid of G = steps + 1 points:
//   low  <= x_(k)  with probability >= 1 - beta / 2,
//   high >= x_(k)  with probability >= 1 - beta / 2,
// beta = 1 - confidence, over the mechanism's randomness, for every dataset.
// The interval reported is [min(low, value), max(high, value)], which holds
// the released value too and covers at least as often.
//
// The offset. Records are mapped down (lower bracket) or up (upper bracket)
// to grid points, so a point v of the lower problem stands for ranks
// a_v = #{x < value(v)}, and of the upper one b_v = #{x <= value(v)}. The
// lower bracket runs on the records plus P = ceil(t / (1 - q)) public
// phantom records at the lower bound; its target q (n + P) is, in the
// records' own ranks, q n - (1 - q) P <= q n - t, and the lower bound stands
// for every rank from 0 to P + (records at it), so some point always has
// distance 0 (weight 1). A point with a_v >= k, the only ones that would
// miss, is at distance > t, so its weight is below 2^{-r t}, r the base-two
// rate the sampler uses; there are at most G of them. So
//   P(miss) <= G e^{-rate t} <= beta / 2  for  t = (ln G + ln(2 / beta)) /
//   rate,
// rate = r ln 2. The upper bracket is the mirror image: ceil(t / q) phantom
// records at the upper bound. (Phantoms are public: adding a record to the
// data adds one to the mechanism's input, so each bracket is epsilon-DP
// exactly as the single-quantile mechanism is.) When a bracket would need
// more than kMaxIntervalPhantoms phantoms, it is the bound itself: always
// right, and no mechanism runs.
//
// Population intervals ("population"). If the n records are i.i.d. draws
// from a distribution F (after clamping) with q-quantile xi = inf{x : F(x)
// >= q}, then #{x <= xi} is at least Binomial(n, q) and #{x < xi} at most it
// (stochastically), and by Chernoff's bound (KL form)
//   P(#{x <= xi} < q n - s_lo(n)) <= beta_s / 2,
//   P(#{x < xi} >= q n + s_hi(n)) <= beta_s / 2,
// where s_lo(n) solves n KL(q - s/n || q) = ln(2 / beta_s) (s_lo = q n when
// even n KL(0 || q) is smaller), s_hi likewise with q + s/n. Both grow with
// n: n KL(q - s/n || q) = s (KL(q - y || q) / y) at y = s / n, and KL / y
// increases with y (KL convex in y, 0 at 0). n is private, so a noisy count
// (discrete Laplace or Gaussian, kPopulationCountShare of the intervals'
// budget) gives N >= n with probability >= 1 - beta_n (its tail bound), and
// the brackets aim t + s_lo(N) and t + s_hi(N) ranks off: the phantom
// argument above with x_(k) replaced by xi (a point above xi has a_v >=
// #{x <= xi}; one below has b_v <= #{x < xi}). With beta_m for the
// mechanisms, failure <= beta_n + beta_s + beta_m = beta; the split is
// kPopulationBetaShares. The sampling offsets are about 1.4 times what a
// normal approximation gives: the price of a bound that holds for every n.
// The count composes with the brackets (basic composition, or zCDP's sum).
//
// Guarantee: the 2 m' brackets (m' distinct quantiles) split the interval
// budget as m' pairs of exponential mechanisms (privacy.h,
// ExponentialMechanismEpsilonPerPart), add/remove one record; the release
// composes them with the values' share (release.cc).
//
// Tree intervals (sample intervals, many quantiles). Brackets split the
// budget 2m' ways, so their width grows with m'. Instead the whole share
// buys one noisy tree of counts over the interval grid (AggTree's
// mechanism, agg_tree.h: h levels, each (share / h)-DP or -zCDP), and every
// quantile's interval is post-processing of it. Records map down to grid
// points (pi(x) = the last point <= x); P(j) = #{pi(x) <= j}, P^(j) its
// noisy prefix (at most (b - 1) h + 1 nodes), N^ = P^(G) for n = P(G).
// Envelopes make P^ monotone: Hi(j) = max_{i <= j} P^(i), Lo(j) = min_{i >=
// j} P^(i). For quantile q and offset t:
//   low  = point j, the first with Hi(j) > q N^ - t (the last point if none);
//   high = point j + 1, for the first j with Lo(j) >= q N^ + t (the last
//          point if none).
// If low > x_(k), the point j' = pi(x_(k)) < j has P(j') >= k > q n and
// P^(j') <= Hi(j') <= q N^ - t; if high < x_(k), the last point j* with
// point j* + 1 < x_(k) has P(j*) <= k - 1 <= q n and P^(j*) >= Lo(j*) >= q
// N^ + t. Both j' and j* depend on the data only, so each miss needs the
// error e(j) = (P^(j) - q N^) - (P(j) - q n) beyond t at one fixed point: a
// sum of independent noises with coefficients 1, 1 - q and -q, whose tail a
// Chernoff bound gives (exact moment generating function of the discrete
// Laplace; the discrete Gaussian is sigma-subgaussian, CKS 2020), taken
// over every point's coefficients. No union over the grid and no split over
// the quantiles: the width stays about the same for any m'. The plan picks
// the tree when its offsets are smaller than the brackets' (public).
//
// Simultaneous coverage: beta / m' per quantile (a union bound), so all m'
// intervals hold at once with probability >= confidence.
#ifndef DPQ_CORE_INTERVALS_H_
#define DPQ_CORE_INTERVALS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/agg_tree.h"
#include "core/discrete_noise.h"
#include "core/prepare.h"
#include "core/privacy.h"
#include "core/random.h"
#include "core/runs.h"
#include "core/status.h"

namespace dpq {

// Most steps of the interval grid (coarser grid, smaller ln G). Public; not
// privacy-relevant.
constexpr int64_t kIntervalGridSteps = 4096;
// Most phantom records one bracket may use. Public; not privacy-relevant.
constexpr size_t kMaxIntervalPhantoms = size_t{1} << 20;
// The default share of a release's budget the intervals spend.
constexpr double kDefaultIntervalShare = 0.25;

// Population intervals: the share of the intervals' budget the noisy count
// spends, and how beta = 1 - confidence is split between the count (beta_n),
// sampling (beta_s) and the mechanisms (beta_m). Public; not
// privacy-relevant (coverage-relevant: they must sum to at most 1).
constexpr double kPopulationCountShare = 0.05;
constexpr double kPopulationCountBeta = 0.1;
constexpr double kPopulationSamplingBeta = 0.5;
constexpr double kPopulationMechanismBeta = 0.4;

// confidence in (0, 1); share in (0, 1); interval "sample" or "population".
Status ValidateConfidence(double confidence);
Status ValidateIntervalShare(double share);
// True for "population", false for "sample"; INVALID_OPTION otherwise.
StatusOr<bool> ParseIntervalKind(const std::string& kind);

// Chernoff offsets of the header for quantile q and n (> 0) records, each
// side failing with probability at most beta_half; rounded up (never
// smaller than the exact solution).
double SamplingOffsetBelow(double q, double n, double beta_half);
double SamplingOffsetAbove(double q, double n, double beta_half);

// N: the count plus noise for `share` (pure or zCDP, sensitivity 1) plus
// the noise's tail bound at beta, so N >= count with probability >= 1 -
// beta. Private with `share`.
StatusOr<double> NoisyCountUpperBound(size_t count, const PrivacyBudget& share,
                                      double beta, RandomSource& rng);

// The interval grid: the release grid when it has at most
// kIntervalGridSteps steps, else a decimal grid over the bounds with at most
// that many.
OutputGrid IntervalGrid(const OutputGrid& release_grid);

// The rank offset t of the header for quantile q, with each bracket an
// `epsilon`-DP mechanism on a grid of `steps` steps.
double IntervalRankOffset(double epsilon, double q, int64_t steps,
                          double confidence);

// Phantom records a bracket at rank offset t uses, for share 1 - q (lower)
// or q (upper): ceil(t / share) + 1, or 0 when over kMaxIntervalPhantoms
// (the bracket is then the bound itself).
size_t BracketPhantoms(double t, double share);

// Brackets for each of the distinct ascending `quantiles`, as values of
// `grid` (the intervals' grid), from the records: `runs` on `release_grid`
// (each run's value its point's, weighed by its count). With `confidence`
// the mechanisms' share (1 - beta_m). `extra_below` and `extra_above` (one
// per quantile, or empty for none) widen the offsets by that many ranks
// (population intervals' sampling offsets). O(runs + m): nothing per
// record.
struct Brackets {
  std::vector<double> low;
  std::vector<double> high;
};
Brackets SampleBrackets(const Runs& runs, const OutputGrid& release_grid,
                        const OutputGrid& grid,
                        const std::vector<double>& quantiles, double epsilon,
                        double confidence, RandomSource& rng,
                        const std::vector<double>& extra_below,
                        const std::vector<double>& extra_above);

// Tree intervals (above): the tree's shape over `grid`'s points, and the
// rank offset t for each of `quantiles` at failure probability beta_half per
// side, given the noise every node gets. Public.
StatusOr<AggTreeShape> IntervalTreeShape(const OutputGrid& grid);
std::vector<double> TreeIntervalOffsets(const AggTreeShape& shape,
                                        const OutputGrid& grid,
                                        const CountNoise& noise,
                                        const std::vector<double>& quantiles,
                                        double beta_half);

// The tree's exact counts: level 0 (a leaf per grid point, records mapped
// down, then empty leaves up to b^h) to level h - 1 (the root's children).
// A record is in one node per level: adding one changes one count per
// level by one (the privacy tests check it with the noise).
std::vector<std::vector<int64_t>> IntervalTreeCounts(
    const Runs& runs, const OutputGrid& release_grid, const OutputGrid& grid,
    const AggTreeShape& shape);

// Tree intervals for the distinct ascending `quantiles`, as values of
// `grid`, from `runs` on `release_grid`: one noisy tree, every node with
// `noise`; each low aims `low_offsets[i]` ranks below its target, each high
// `high_offsets[i]` above (the tree's offset t, plus for population
// intervals the sampling offsets).
Brackets TreeIntervals(const Runs& runs, const OutputGrid& release_grid,
                       const OutputGrid& grid, const AggTreeShape& shape,
                       const CountNoise& noise,
                       const std::vector<double>& quantiles,
                       const std::vector<double>& low_offsets,
                       const std::vector<double>& high_offsets,
                       RandomSource& rng);

}  // namespace dpq

#endif  // DPQ_CORE_INTERVALS_H_
