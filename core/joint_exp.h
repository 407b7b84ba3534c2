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
// Delta = 1 - min_j w_j (max(q, 1 - q) for one quantile, as for the single
// mechanism). Guarantee: P(tuple) proportional to exp(epsilon u / (2 Delta))
// is epsilon-DP under add/remove neighbours, hence (epsilon^2 / 8)-zCDP
// (bounded range). The kernel uses Delta (1 + 2^-16): the targets and the
// DP's sums round by far less than 2^-20 in all (m (n + 1) <= 2^24).
// (Replacing a record moves two d_j by 1 and no target: sensitivity 1, which
// inverse_sensitivity.h uses.)
//
// Sampling is exact by dynamic programming over (quantile, gap) in log space:
// the tuples with quantile j in gap i form blocks whose number of tuples is a
// product of multiset counts C(size + k - 1, k) over the gaps holding k
// outputs. Forward: F(e, i), the log mass of the first e + 1 outputs with the
// last in gap i; a run of outputs s..e sharing gap i is summed explicitly
// (O(m^2 n)); transitions between gaps use the kernel's split at its target
// into a prefix log-sum-exp and a sliding window (O(mn) in all, no
// subtraction). Backward: draw the last gap, the start of its run, the gap
// before, ..., then a uniform multiset of points inside each gap.
// Memory: two m x (n + 1) tables of doubles.
#ifndef DPQ_CORE_JOINT_EXP_H_
#define DPQ_CORE_JOINT_EXP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

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
// n = 1023 once took 17 s). Like the table cap it depends on n, so the
// error is for the data owner. Not privacy-relevant.
constexpr double kMaxJointWork = 536870912.0;  // 2^29

// Largest m x (n + 1) table a joint sampler may build (two of them are
// built). Memory only; not privacy-relevant.
constexpr size_t kMaxJointTableEntries = size_t{1} << 24;

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

// JointExp's kernel: slope epsilon / (4 Delta), targets n (p_{j+1} - p_j).
JointKernel JointExpKernel(size_t count, const std::vector<double>& quantiles,
                           double epsilon);

// TOO_LARGE when m x (n + 1) exceeds kMaxJointTableEntries or
// m^2 x (n + 1) exceeds kMaxJointWork.
Status CheckJointSize(size_t count, size_t quantiles);

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
