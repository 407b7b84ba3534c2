// JointExp (Gillenwater, Joseph and Kulesza 2021, as defined in Section 2.3 of
// Lalanne, Gastaud, Grislain, Garivier and Gribonval, "Private Quantiles
// Estimation in the Presence of Atoms"): one exponential mechanism over all
// non-decreasing m-tuples of output points.
//
// Output space: non-decreasing m-tuples of points of the public grid
// (prepare.h). Utility: u = -1/2 sum_{j=0..m} |d_j - n (p_{j+1} - p_j)|,
// with d_j the number of records between output j - 1 and output j (p_0 = 0,
// p_{m+1} = 1). Adding a record to interval i moves d_i by 1 and every
// target n w_j (w_j = p_{j+1} - p_j, summing to 1) by w_j, so the sum moves by
// at most (1 - w_i) + sum_{j != i} w_j = 2 (1 - w_i), and u by at most
// 1 - min_j w_j. Replacing a record moves two d_j by 1 and no target: u moves
// by at most 1.
//
// Record cap (JointRecordCap): the tables, the work and the certified
// rounding below grow with n, so each release has a public cap K on the
// records it reads, from m, the grid and epsilon only; data with more than K
// records is read through a uniformly random subset of K (SampleRunPoints).
// Refusing such data instead would answer "n > K" for free (docs/
// refusals.md). Under add/remove, x' = x plus one record: when n < K nothing
// is subsampled (an addition); when n >= K the subsets can be coupled so that
// they are equal or differ by one replaced record (with probability K /
// (n + 1) the added record is kept, displacing a uniformly random other; the
// rest of the time the subsets are equal). So the mechanism on the subset
// needs a sensitivity covering both: Delta = 1. Guarantee: P(tuple)
// proportional to exp(epsilon u / (2 Delta)) with Delta = 1, on at most K
// records, is epsilon-DP under add/remove neighbours: for each coupled pair
// of subsets the exact ratio is at most e^epsilon pointwise, so it is for
// the mixture over the coupling. And (epsilon^2 / 8)-zCDP, but not "hence":
// epsilon-DP alone gives epsilon^2 / 2. Each coupled pair is an exponential
// mechanism on neighbouring inputs, so epsilon-bounded-range, hence
// D_alpha <= alpha epsilon^2 / 8 between its two outputs (Cesar and Rogers
// 2021); the releases are mixtures of those pairs with the same weights,
// and Renyi divergence is jointly quasi-convex (van Erven and Harremoes
// 2014, Theorem 13: D_alpha of the mixtures is at most the largest D_alpha
// of the pairs), so the bound holds for the mixtures. The kernel uses Delta (1
// + 2^-16): the targets and the DP's sums round by far less than 2^-20 in all
// (m (n + 1) <= 2^24). The cost against the add/remove sensitivity 1 - min w,
// which a mechanism without a cap could use: a factor 1 / (1 - min w) in
// epsilon, 2 for one median, 1.11 for nine deciles, under 1.01 from m = 100.
//
// Sampling by dynamic programming over (quantile, gap) in log space: the
// tuples with quantile j in gap i form blocks whose number of tuples is a
// product of multiset counts C(size + k - 1, k) over the gaps holding k
// outputs. Forward: F(e, i), the log mass of the first e + 1 outputs with the
// last in gap i; a run of outputs s..e sharing gap i is summed explicitly
// (O(m^2 n)); transitions between gaps use the kernel's split at its target
// into a prefix log-sum-exp and a sliding window (O(mn) in all, no
// subtraction). Backward: draw the last gap, the start of its run, the gap
// before, ..., then a uniform multiset of points inside each gap.
// Memory: two m x (n + 1) tables of doubles.
//
// Floating point, and why the guarantee still holds. The tables are doubles,
// so the sampler's step probabilities are not the mechanism's exactly. Each
// backward step draws exactly from the weights the doubles give
// (LogWeightDraw: integer arithmetic, no underflow), and every log-weight a
// step draws from is within a certified E of its exact value
// (JointRoundingBound), so the probability Q(x) of any output tuple is
// within exp(+-2 T E) of the mechanism's P(x), T <= 2m + 1 steps. The kernel
// is built for epsilon' = epsilon - JointRoundingReserve(epsilon); P is
// epsilon'-DP and epsilon'-bounded-range, so Q's privacy loss and its range
// stay below epsilon' + 8 T E, which CheckJointRounding keeps below epsilon:
// for every coupled pair Q is epsilon-DP and epsilon-bounded-range, so the
// release is epsilon-DP and (epsilon^2 / 8)-zCDP (through the mixture as
// above), for every output, not only up to rounding. Assumption: the C
// library's exp, log, log1p and exp2 are within 2 ulps (glibc documents 1-2;
// musl, which Emscripten compiles, under 1; MathLibraryIsWithinTwoUlps tests it
// on each build).
#ifndef DPQ_CORE_JOINT_EXP_H_
#define DPQ_CORE_JOINT_EXP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/bits.h"
#include "core/exact_exponential.h"
#include "core/random.h"
#include "core/status.h"

namespace dpq {

// Sorted record points and the output points [first_point, last_point]
// split into gaps: gap k holds the points with exactly k records below them.
// A point holding records lies above none of them, so it opens the gap of
// the records below it.
struct GapProblem {
  const double* cells = nullptr;  // sorted record points as exact integers
  size_t count = 0;
  int64_t first_point = 0;
  int64_t last_point = 0;

  // Grid points in gap k (k in [0, n]); 0 for a gap between equal records.
  double GapSize(size_t k) const;
  // The lowest grid point of gap k.
  int64_t GapStart(size_t k) const;
  // The gap holding `point`: the number of records below it.
  size_t GapOf(int64_t point) const;
};

// Largest epsilon the joint mechanisms run with; a larger budget runs as
// this one. At 2^20 every tuple but the best already weighs below
// exp(-2^18) relative (underflow: the release is the mode either way), and
// the DP's sums of slope-sized terms (slope * m * n <= 2^38 with the table
// cap) stay exact to 2^-14 in log space; at 10^20 they did not, and JointExp
// released 0 for data whose median is 50. Running with less epsilon than
// given is still private for the epsilon given. Privacy-relevant (safe side).
constexpr double kMaxJointEpsilon = 1048576.0;  // 2^20

// Most steps of the forward pass, m^2 (n + 1): about 2 s here (m = 4096,
// n = 1023 once took 17 s). It sets the record cap with the table's and the
// rounding's limits (JointRecordCap). Not privacy-relevant.
constexpr double kMaxJointWork = 536870912.0;  // 2^29

// Largest m x (n + 1) table a joint sampler may build (two of them are
// built). Memory only; not privacy-relevant.
constexpr size_t kMaxJointTableEntries = size_t{1} << 24;

// The record cap a joint release uses unless `maxRecords` asks for another
// (up to JointRecordCap, the limits'): at most 2^20. Work and memory follow
// the cap, so a release over any number of records, up to 2^53 - 1 counted
// rows, costs what one over 2^20 records costs (the limits alone allowed
// 1.6 10^7 for one median: 0.9 s natively, HSJointExp 5 s, against 34 and
// 210 ms at 10^6). Public, like every cap (header comment); not
// privacy-relevant.
constexpr size_t kDefaultJointRecords = size_t{1} << 20;

// The most heap a JointSampler on `records` records and `quantiles`
// quantiles allocates, building and sampling: its two tables (16 m (n + 1)
// bytes), the sliding windows' stacks (for m > 1: at most n + m entries in all,
// each held in a grown vector, its reversed copy and the reversal's scratch: 32
// bytes), the backward pass's weights per gap and LogWeightDraw's scratch
// over them (LogWeightDraw::ScratchBytes), and per-quantile state.
double JointSamplerBytes(size_t records, size_t quantiles);

// The log-weight of d records falling between consecutive outputs: interval
// j (0..m) contributes -slope * |d - targets[j]|. Constants that do not
// depend on the tuple are dropped: they cancel in the normalisation.
struct JointKernel {
  double slope = 0;
  std::vector<double> targets;  // m + 1 entries

  double LogWeight(size_t interval, double d) const {
    const double gap = d - targets[interval];
    return -slope * (gap < 0 ? -gap : gap);
  }
};

// JointExp's kernel: slope epsilon / (4 Delta), Delta = 1 (1 + 2^-16),
// targets n (p_{j+1} - p_j).
JointKernel JointExpKernel(size_t count, const std::vector<double>& quantiles,
                           double epsilon);

// TOO_LARGE when m x (n + 1) exceeds kMaxJointTableEntries or
// m^2 x (n + 1) exceeds kMaxJointWork. Only JointRecordCap asks it about
// data (its message names neither n nor m).
Status CheckJointSize(size_t count, size_t quantiles);

// The kernel a joint mechanism uses for `count` records (JointExp's or
// inverse sensitivity's, at the kernel's epsilon).
using JointKernelFor = std::function<JointKernel(size_t count)>;

// The most records a joint mechanism reads (see the header comment), from
// public parameters only: the largest K <= kMaxRecords for which
// CheckJointSize and CheckJointRounding pass at K records with `quantiles`
// quantiles on a grid of `steps` steps, the kernel `kernel_for(K)` and the
// mechanism's `epsilon`; 0 when not even no records pass (too many
// quantiles for the tables). Binary search: every check grows with n.
size_t JointRecordCap(size_t quantiles, int64_t steps, double epsilon,
                      const JointKernelFor& kernel_for);

// The part of a joint mechanism's epsilon kept back for rounding (see
// above): epsilon / 256, and for epsilon below 2^-12 up to 2^-20 (at most
// half of epsilon), where the log-counts' rounding no longer shrinks with
// epsilon. Privacy-relevant.
double JointRoundingReserve(double epsilon);

// A certified bound, in natural-log units, on |computed - exact| for every
// log-weight the sampler draws from, for `count` records, a grid of `steps`
// steps and `kernel`. Derivation: every intermediate of the forward pass has
// magnitude at most B = 2 (L + ln(n + 2) + s (4n + 3 S + 4)) + 64, with
// L = (m + 1) ln(steps + m + 2) (log of the number of partial tuples),
// s the slope and S = sum |targets| + m + 1; every rounding event (an
// operation on doubles of that size, or one call of exp, log, log1p, exp2)
// moves a value by at most rho = 2^-52 (B + 256), and log-sum-exp is
// 1-Lipschitz in the largest input error, so errors add along the longest
// chain of events: 2 K + 5m + 36 per quantile (the running prefix and window
// sums are blocked, K = ceil(sqrt(n + 2)) terms to a block, so a term
// reaches them through at most 2 K + 4 log-adds; the run counts' m terms; the
// run sum) over m + 2 levels, plus m e^-60 per level for the terms the
// forward pass skips.
double JointRoundingBound(size_t count, int64_t steps,
                          const JointKernel& kernel);
// B above.
double JointMagnitudeBound(size_t count, int64_t steps,
                           const JointKernel& kernel);

// TOO_LARGE unless 8 (2m + 1) JointRoundingBound(n + 1, ...) <=
// JointRoundingReserve(epsilon), epsilon the mechanism's (the kernel is
// built for epsilon - JointRoundingReserve(epsilon)). The bound grows like
// epsilon m^2 n^1.5, so the limit hardly depends on epsilon: about
// n <= 6.7 10^6 for one quantile, 1.06 10^6 for ten, 2.2 10^4 for 120 (the
// table's own limit is m (n + 1) <= 2^24); below epsilon 10^-3 the log
// counts' rounding lowers it for tens of quantiles. Evaluated at n + 1 so
// that it covers both neighbours; JointRecordCap keeps n where it passes.
Status CheckJointRounding(size_t count, int64_t steps,
                          const JointKernel& kernel, double epsilon);

class JointSampler {
 public:
  // `cells` sorted record cells of a grid with `steps` steps; the kernel has
  // one target per interval (m + 1). Call CheckJointSize first.
  JointSampler(const double* cells, size_t count, int64_t steps,
               JointKernel kernel);

  // log of the total weight of every tuple.
  double LogNormaliser() const { return log_normaliser_; }
  // Draws one tuple of grid points, non-decreasing.
  std::vector<int64_t> Sample(RandomSource& rng) const;
  // The same from a bit reader; tests enumerate its bit strings with a
  // small `headroom` (exact_exponential.h; any value is exact).
  std::vector<int64_t> Sample(
      BitReader& bits, int headroom = DyadicTable::kDefaultHeadroom) const;
  // F(e, i), for the tests of the rounding bound.
  double LogMass(size_t e, size_t i) const { return Forward(e, i); }
  // The largest magnitude of a finite entry of the tables, for the test of
  // JointMagnitudeBound.
  double LargestTableMagnitude() const;
  // Exact log P(tuple): utility minus the log normaliser; -inf for tuples
  // outside the output space. For the tests.
  double LogProbability(const std::vector<int64_t>& points) const;

 private:
  // Gap-major tables: the forward pass reads all outputs of one gap together.
  double Forward(size_t e, size_t i) const { return forward_[i * m_ + e]; }
  double RunStart(size_t s, size_t i) const { return run_start_[i * m_ + s]; }
  // log C(size_i + len - 1, len) for len = 1..m.
  std::vector<double> RunLogCounts(size_t i) const;

  GapProblem gaps_problem_;
  size_t gaps_;
  size_t m_;
  JointKernel kernel_;
  std::vector<double> zero_prefix_;  // sum of LogWeight(j, 0), j = 1..e
  std::vector<double> forward_;      // F(e, i)
  std::vector<double> run_start_;    // B(s, i) - zero_prefix_[s]
  double log_normaliser_ = 0;
};

}  // namespace dpq

#endif  // DPQ_CORE_JOINT_EXP_H_
