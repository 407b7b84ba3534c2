// HSJointExp: JointExp on jittered data (Lalanne, Gastaud, Grislain, Garivier
// and Gribonval, "Private Quantiles Estimation in the Presence of Atoms",
// Section 5, Section 6.2).
//
// Every record gets independent noise w_i: uniform on [-sigma sqrt 3,
// sigma sqrt 3] or Gaussian with standard deviation sigma (clamped to
// [lower - 5 sigma, upper + 5 sigma], the paper's projection); JointExp then
// runs on the widened range and its outputs are clamped back to
// [lower, upper]. The jitter gives atoms (many equal values) gaps of positive
// width, which JointExp needs to place outputs on them.
//
// Guarantee: epsilon-DP under add/remove neighbours. Proposition 4 of the
// paper: for i.i.d. noise (a permutation-invariant distribution), couple the
// noise of the common records; the jittered datasets are then neighbours, so
// JointExp's guarantee holds for every draw of the noise and hence on
// average. The projection and the final clamp are post-processing. This
// needs sigma to be public and independent of the data: the default below
// uses only the public bounds.
//
// Default sigma = 2^-20 (upper - lower). The paper's rule for an atom
// (Section 5.2), sigma ~ e^(-n epsilon / 48) of the range, falls below double
// precision once n epsilon > ~700, and it would make n public. 2^-20 of the
// range is the smallest jitter that still spreads up to 2^31 equal records
// over distinct points of the output grid, and it moves quantiles by at most
// sigma sqrt 3 (uniform).
#ifndef DPQ_CORE_HS_JOINT_EXP_H_
#define DPQ_CORE_HS_JOINT_EXP_H_

#include <cstddef>

#include "core/random.h"

namespace dpq {

enum class JitterKind { kUniform, kGaussian };

// Default jitter standard deviation as a fraction of upper - lower.
// Privacy-neutral (any public sigma is private); accuracy only.
constexpr double kDefaultJitterFraction = 1.0 / 1048576.0;  // 2^-20

// How far the range widens on each side for `kind` and `sigma`.
double JitterMargin(JitterKind kind, double sigma);

// Adds the jitter to every value in place and clamps to the widened range
// [lower - margin, upper + margin].
void Jitter(double* values, size_t count, double lower, double upper,
            JitterKind kind, double sigma, RandomSource& rng);

}  // namespace dpq

#endif  // DPQ_CORE_HS_JOINT_EXP_H_
