#include "core/hs_joint_exp.h"

#include <algorithm>
#include <cmath>

namespace dpq {

double JitterMargin(JitterKind kind, double sigma) {
  return kind == JitterKind::kUniform ? sigma * std::sqrt(3.0) : 5 * sigma;
}

void Jitter(double* values, size_t count, double lower, double upper,
            JitterKind kind, double sigma, RandomSource& rng) {
  const double margin = JitterMargin(kind, sigma);
  const double low = lower - margin;
  const double high = upper + margin;
  for (size_t i = 0; i < count; ++i) {
    double noise;
    if (kind == JitterKind::kUniform) {
      noise = (2 * UniformDouble(rng) - 1) * margin;
    } else {
      // Box-Muller. The jitter needs no exactness: privacy comes from
      // JointExp, which is DP for every value of the noise.
      const double radius = std::sqrt(-2 * std::log(UniformOpenDouble(rng)));
      noise = sigma * radius * std::cos(6.283185307179586 * UniformDouble(rng));
    }
    values[i] = std::min(std::max(values[i] + noise, low), high);
  }
}

}  // namespace dpq
