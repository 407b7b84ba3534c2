// The single-quantile exponential mechanism (AQ paper, Appendix A; Smith 2011)
// on the public output grid of prepare.h.
//
// Guarantee: epsilon-DP under add/remove-one-record neighbours.
// Output: a grid point j in [first_point, last_point]. Utility
//   u(X, j) = -| #{x in X : cell(x) < j} - TargetRank(q, |X|) |,
// with TargetRank(q, n) = floor(q n) up to rounding (prepare.h). Adding or
// removing one record moves the count by 0 or 1 and the target by 0 or 1 in
// the same direction, so the sensitivity of u is 1 and P(j) proportional to
// exp(epsilon u / 2) is epsilon-DP (McSherry and Talwar 2007): numerator and
// normaliser each move by at most a factor exp(epsilon / 2).
//
// All grid points between two consecutive records share one utility, so the
// mechanism first picks a gap k (k records below it) with probability
// proportional to size_k * exp(-epsilon |k - t| / 2), then a uniform point
// inside it. Duplicate records make empty gaps, which have probability zero.
#ifndef DPQ_CORE_EXPONENTIAL_QUANTILE_H_
#define DPQ_CORE_EXPONENTIAL_QUANTILE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/random.h"

namespace dpq {

// One instance of the mechanism: sorted record cells and the allowed points.
// Every cell must lie in [first_point, last_point - 1].
struct GapProblem {
  const double* cells = nullptr;  // sorted cells as exact integer doubles
  size_t count = 0;               // number of records, n
  int64_t first_point = 0;        // lowest allowed output point
  int64_t last_point = 0;         // highest allowed output point (inclusive)
  int64_t target = 0;             // t = TargetRank(q, n), about floor(q n)

  // Grid points in gap k (k in [0, n]): those with exactly k records below.
  double GapSize(size_t k) const;
  // The lowest grid point of gap k.
  int64_t GapStart(size_t k) const;
  // The gap holding grid point `point`: the number of records below it.
  size_t GapOf(int64_t point) const;
};

// The problem for quantile q in [0, 1] of `count` sorted cells.
GapProblem MakeGapProblem(const double* cells, size_t count,
                          int64_t first_point, int64_t last_point, double q);

// Exact reference: log P(gap k) for k = 0..n, by log-sum-exp over
// log(size_k) - epsilon |k - t| / 2. -inf for empty gaps. The privacy tests and
// the AQ likelihood use it; the sampler below must match it.
std::vector<double> GapLogProbabilities(const GapProblem& problem,
                                        double epsilon);

// Exact log P(output == point); -inf outside [first_point, last_point].
double PointLogProbability(const GapProblem& problem, double epsilon,
                           int64_t point);

// Draws from the mechanism in O(n) multiply-adds and O(n / band) logs.
//
// Gaps are grouped into bands of consecutive distances |k - t| (each band
// spans a factor of at most e^-30 in exp(-epsilon d / 2)). A band's mass is a
// plain sum of size_k * exp(-epsilon (d_k - d_band) / 2), which cannot
// underflow because sizes are whole numbers >= 1 and the factor is >= e^-30;
// its log mass adds -epsilon d_band / 2 in log space. The band is drawn by
// Gumbel-max over log masses, the gap inside it by inverse CDF. This is the
// exact distribution: P(band) P(gap | band) = size_k exp(-epsilon d_k / 2) / Z.
class ExponentialQuantileSampler {
 public:
  explicit ExponentialQuantileSampler(double epsilon);

  int64_t SamplePoint(const GapProblem& problem, RandomSource& rng) const;

 private:
  double half_epsilon_;
  std::vector<double> decay_;  // decay_[i] = exp(-epsilon i / 2), one band long
};

}  // namespace dpq

#endif  // DPQ_CORE_EXPONENTIAL_QUANTILE_H_
