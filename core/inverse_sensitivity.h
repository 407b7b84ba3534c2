// The inverse-sensitivity mechanism for m quantiles (Asi and Duchi 2020), in
// the closed form of Lalanne et al., "Private Quantiles Estimation in the
// Presence of Atoms", Corollary 2 and Appendix A.
//
// Neighbouring relation: REPLACING one record; the number of records n is
// public, as in that paper (its utility is the number of records to change,
// at fixed n, for the tuple to be the exact empirical quantiles).
// Utility: -u = 1/2 sum_{j=0..m} |delta_j| + sum_{j=0..m-1} [delta_j >= 0],
// delta_j = d_j - tau_j, tau_j = ceil(n p_{j+1}) - ceil(n p_j), d_j the records
// between outputs j - 1 and j. For whole delta, 1/2 |delta| + [delta >= 0] =
// 1/2 |delta + 1| + 1/2: the mechanism is JointExp's with targets tau_j - 1
// (tau_m for the last interval), so it reuses JointSampler. Moving one record
// between intervals changes two delta_j by 1, each term by 1/2: sensitivity
// 1. Guarantee: exp(epsilon u / 2) is epsilon-DP under replace-one
// neighbours; it is NOT add/remove DP (adding a record moves every tau_j).
#ifndef DPQ_CORE_INVERSE_SENSITIVITY_H_
#define DPQ_CORE_INVERSE_SENSITIVITY_H_

#include <cstddef>
#include <vector>

#include "core/joint_exp.h"

namespace dpq {

JointKernel InverseSensitivityKernel(size_t count,
                                     const std::vector<double>& quantiles,
                                     double epsilon);

}  // namespace dpq

#endif  // DPQ_CORE_INVERSE_SENSITIVITY_H_
