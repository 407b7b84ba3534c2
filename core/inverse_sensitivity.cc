#include "core/inverse_sensitivity.h"

#include "core/prepare.h"

namespace dpq {

JointKernel InverseSensitivityKernel(size_t count,
                                     const std::vector<double>& quantiles,
                                     double epsilon) {
  JointKernel kernel;
  kernel.slope = epsilon / 4;
  const int64_t n = static_cast<int64_t>(count);
  int64_t previous = 0;  // ceil(n p_0), p_0 = 0
  for (double q : quantiles) {
    const int64_t rank = CeilProduct(q, n);
    kernel.targets.push_back(static_cast<double>(rank - previous - 1));
    previous = rank;
  }
  kernel.targets.push_back(static_cast<double>(n - previous));
  return kernel;
}

}  // namespace dpq
