#include "core/dp_exp_gk.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/prepare.h"

namespace dpq {

double ExpGkSensitivity(const GkSketch& sketch) {
  return static_cast<double>(sketch.Capacity());
}

std::vector<ExpGkCandidate> ExpGkCandidates(const GkSketch& sketch, double q,
                                            double epsilon) {
  const std::vector<GkTuple>& tuples = sketch.tuples();
  const size_t s = tuples.size();
  const uint64_t n = sketch.count();
  const double target =
      static_cast<double>(CeilProduct(q, static_cast<int64_t>(n)));
  const double scale = epsilon / (2 * ExpGkSensitivity(sketch));
  // prefix[i]: sum of g over the first i tuples; lowest_upper[i]: the
  // smallest prefix + delta over tuples i.. (n + 1 past the end).
  std::vector<double> prefix(s + 1, 0), lowest_upper(s + 1);
  for (size_t i = 0; i < s; ++i) {
    prefix[i + 1] = prefix[i] + static_cast<double>(tuples[i].g);
  }
  lowest_upper[s] = static_cast<double>(n) + 1;
  for (size_t i = s; i-- > 0;) {
    lowest_upper[i] =
        std::min(lowest_upper[i + 1],
                 prefix[i + 1] + static_cast<double>(tuples[i].delta));
  }
  std::vector<ExpGkCandidate> candidates;
  auto add = [&](int64_t first, int64_t points, double low, double high) {
    if (points <= 0) return;
    const double distance =
        target < low ? low - target : (target > high ? target - high : 0);
    candidates.push_back(
        {first, points,
         std::log(static_cast<double>(points)) - scale * distance});
  };
  int64_t next_point = 0;  // the first grid point not yet covered
  size_t i = 0;
  while (i < s) {
    // Tuples [i, j) share one value.
    size_t j = i;
    while (j < s && tuples[j].value == tuples[i].value) ++j;
    const int64_t value = tuples[i].value;
    add(next_point, value - next_point, prefix[i], lowest_upper[i]);
    add(value, 1, prefix[i], lowest_upper[j]);
    next_point = value + 1;
    i = j;
  }
  add(next_point, sketch.steps() + 1 - next_point, prefix[s],
      static_cast<double>(n) + 1);
  return candidates;
}

int64_t SampleExpGk(const GkSketch& sketch, double q, double epsilon,
                    RandomSource& rng) {
  const std::vector<ExpGkCandidate> candidates =
      ExpGkCandidates(sketch, q, epsilon);
  double best_key = -std::numeric_limits<double>::infinity();
  const ExpGkCandidate* best = &candidates.front();
  for (const ExpGkCandidate& candidate : candidates) {
    const double key = candidate.log_weight + Gumbel(rng);
    if (key > best_key) {
      best_key = key;
      best = &candidate;
    }
  }
  return best->first_point + static_cast<int64_t>(UniformInteger(
                                 rng, static_cast<uint64_t>(best->points)));
}

}  // namespace dpq
