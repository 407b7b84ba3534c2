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

#include "core/discrete_noise.h"
#include "core/exponential_quantile.h"
#include "core/privacy.h"
#include "core/random.h"
#include "core/status.h"

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
// AQ's first look (docs/algorithms/aq.md): where the records lie, from a
// noisy histogram at a small share of the budget. A node with a public
// bound for an end that has no reach to go by (the root; a child of a node
// between both bounds) or holds a large share of the quantile mass draws
// from binned weights over its points instead of the endpoint shells
// (aq.cc, Node::Problem). A bin weighs 2^floor(noisy count / s) (s the
// noise's scale, or its standard deviation; at least 1, at most
// 2^kMostBinWeightBits), and where some bins are found (a noisy count of at
// least kAqLookFoundScales s) every bin gains kAqLookLiftBits bits, less
// kAqLookDecayBits for each bin it lies beyond the found span: the empty
// stretch between a loose bound and the data weighs little, and the less
// the farther it lies. Only base measures change: the release's guarantee
// is what it was (any public measure), composed with the histogram's; a
// poor look costs accuracy, never privacy, and never moves a target rank.
struct AqLook {
  bool found = false;  // a look was taken (its weights apply)
  BinnedWeights weights;
  // The bins from the first to the last whose noisy count passed
  // kAqLookFoundScales s, or -1 for none: what the release reports.
  int first_found = -1;
  int last_found = -1;
  // The first and last of the `spread` bins below (the fewest counted bins
  // holding kAqLookSpreadMass of the counted mass), or -1: where most of the
  // values lie. On values spread over the bounds it reaches past the found
  // span (few bins there pass five scales); a lone stray bin past two
  // scales (an empty bin's noise, about once in 15) holds too little of the
  // mass to widen it. Reported beside the found span.
  int first_seen = -1;
  int last_seen = -1;
  // With a found span: the factor on the endpoint shells of every node
  // beside a public bound (PointMeasure::WithFactor), 2^kAqLookShellBits
  // inside the span, one bit less a bin beyond it (at least 1).
  BinnedWeights shell_factor;
  // The fewest bins that hold kAqLookSpreadMass of the counted mass (the
  // bins whose noisy count passed kAqLookCountedScales scales), 0 when none
  // passed: how widely the records spread over the bounds, which the
  // default reads to pick its method (methods.h, AutoSpreadPicksTree).
  int spread = 0;
  // The counted mass, and the part of it in bins that did not pass
  // kAqLookFoundScales: records the look saw but could not place the found
  // span's ends by.
  int64_t counted = 0;
  int64_t faint = 0;
};
// A bin is found when its noisy count is at least this many noise scales
// (standard deviations): an empty bin's discrete Laplace noise gets there
// about once in 300, so a stray bin seldom stretches the span. Public; not
// privacy-relevant (any function of the noisy counts is post-processing).
constexpr double kAqLookFoundScales = 5;
// The spread (AqLook::spread): bins past kAqLookCountedScales noise scales
// (an empty bin's noise passes 2 about once in 15, and then holds little of
// the mass) and the fewest of them that hold kAqLookSpreadMass of the
// counted mass. Public; not privacy-relevant (post-processing).
constexpr double kAqLookCountedScales = 2;
constexpr double kAqLookSpreadMass = 0.9;
// With some bin found, every bin's weight gains this many bits, and a bin
// d bins outside the found span loses kAqLookDecayBits d of them (no fewer
// than 0 left): an empty bin next to the data weighs half of what it did,
// one 8 bins off 2^-8. One bit a bin rather than two: two pulled long thin
// tails (Adult hours' top, precipitation) into the found span, which
// raised their far releases and rank error (docs/algorithms/aq.md). Fewer
// lift bits where the grid has so many points that the masses would pass
// 2^63 (AqLookFromCounts). Public; not privacy-relevant.
constexpr int kAqLookLiftBits = 16;
constexpr int kAqLookDecayBits = 1;
// The decay past the found span also multiplies the endpoint shells of the
// nodes beside a public bound, which the bins do not reach (their parents'
// cuts say where their records lie): a factor of 2^kAqLookShellBits inside
// the span, one bit less a bin beyond it, so the empty stretch between the
// data and a loose bound weighs up to 16 times less at every depth. Four
// bits rather than six or eight: more pulled the upper quantiles of
// columns with long thin tails (Adult hours in [0, 100], precipitation)
// further inward (docs/algorithms/aq.md). Public; not privacy-relevant.
constexpr int kAqLookShellBits = 4;
static_assert(kAqLookShellBits <= kMostFactorBits, "a measure's factor");
// Bins of the look, equal over the release grid's points. Public; not
// privacy-relevant (any number of bins: a record is in one).
constexpr int kAqLookBins = 16;
static_assert(kAqLookBins <= kMostBins, "BinnedWeights holds the bins");
// Up to this many runs, the look's counts come from one pass over the runs
// rather than a search per bin edge (the same counts). 4,096 rather than
// 256: in WebAssembly the pass was still the faster at 900 and 3,800 runs
// (grouped releases of 1,000 and 250 groups 5-6% faster, one call at
// n = 1,000 1-2%). Not privacy-relevant.
constexpr size_t kAqLookWalkedRuns = 4096;
// The look's share of AQ's budget by default (option `look`), and the most
// a caller may give it. Public.
constexpr double kAqLookShare = 0.05;
constexpr double kMaxAqLookShare = 0.5;
// The default share for a request of at most kAqTailQuantiles distinct
// quantiles with one within kAqTailMass of 0 or 1 (p1, [p1, p99]): such a
// release rests on the look, and twice the share halved the releases with
// a value far from the data on thin tails at about the same rank error
// (docs/algorithms/aq.md). Public: from the quantiles alone.
constexpr double kAqTailLookShare = 0.1;
constexpr size_t kAqTailQuantiles = 2;
constexpr double kAqTailMass = 0.05;
// The default share for these (distinct) quantiles.
double DefaultAqLookShare(const std::vector<double>& quantiles);
// The look's plan for a method budget and share: the histogram's noise (at
// `share` of the budget, SplitBudget) and the rest for the quantiles; they
// compose in sequence to at most the budget. `noise_scale` is the Laplace
// noise's scale or the Gaussian's standard deviation.
struct AqLookPlan {
  PrivacyBudget share;  // the histogram's
  CountNoise noise;
  double noise_scale = 0;
  PrivacyBudget rest;
};
StatusOr<AqLookPlan> PlanAqLook(const PrivacyBudget& budget, double share);
// The records of `runs` in each of `bins` equal bins over [0, points - 1]
// (BinnedWeights' edges): the histogram the look adds noise to.
std::vector<int64_t> AqLookCounts(const Runs& runs, int64_t points, int bins);
// log P(the look's histogram is `noisy` | runs), exactly (the noise's pmf
// per bin), for the privacy tests.
double AqLookLogProbability(const Runs& runs, int64_t points,
                            const CountNoise& noise,
                            const std::vector<int64_t>& noisy);
// The look from noisy counts (at most kMostBins) whose noise has scale (or
// standard deviation) `noise_scale` > 0.
AqLook AqLookFromCounts(const std::vector<int64_t>& noisy, double noise_scale,
                        int64_t points);
// The same into `look` (every field set; no copy of it).
void AqLookFromCounts(const std::vector<int64_t>& noisy, double noise_scale,
                      int64_t points, AqLook* look);

std::vector<int64_t> SampleApproximateQuantiles(
    const Runs& runs, int64_t steps, const std::vector<double>& quantiles,
    double epsilon, AqBudgetSplit split, RandomSource& rng,
    uint64_t sub_points = kSplitSubPoints, const AqLook& look = AqLook());

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
                                          uint64_t sub_points,
                                          const AqLook& look = AqLook());

}  // namespace dpq

#endif  // DPQ_CORE_AQ_H_
