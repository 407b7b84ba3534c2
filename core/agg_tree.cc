#include "core/agg_tree.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace dpq {
namespace {

int64_t Leaves(const AggTreeShape& shape) {
  int64_t leaves = 1;
  for (int level = 0; level < shape.height; ++level) {
    leaves *= shape.branching;
    if (leaves > kMaxTreeLeaves) return kMaxTreeLeaves + 1;
  }
  return leaves;
}

}  // namespace

Status ValidateAggTreeShape(const AggTreeShape& shape) {
  if (shape.branching < 2 || shape.branching > 1024) {
    return Status(StatusCode::kInvalidOption,
                  "branching must be a whole number from 2 to 1024, got " +
                      std::to_string(shape.branching));
  }
  if (shape.height < 1 || shape.height > 24) {
    return Status(StatusCode::kInvalidOption,
                  "height must be a whole number from 1 to 24, got " +
                      std::to_string(shape.height));
  }
  if (Leaves(shape) > kMaxTreeLeaves) {
    return Status(StatusCode::kInvalidOption,
                  "branching^height is above the 2^22 leaves supported");
  }
  return Status::Ok();
}

std::vector<std::vector<int64_t>> AggTreeCounts(const double* values,
                                                size_t count, double lower,
                                                double upper,
                                                const AggTreeShape& shape) {
  const int64_t leaves = Leaves(shape);
  std::vector<std::vector<int64_t>> levels(shape.height);
  levels[0].assign(leaves, 0);
  for (size_t i = 0; i < count; ++i) {
    const double fraction = (values[i] - lower) / (upper - lower);
    const double leaf = std::floor(fraction * static_cast<double>(leaves));
    const int64_t index =
        leaf < 0 ? 0
                 : std::min<int64_t>(leaves - 1, static_cast<int64_t>(leaf));
    ++levels[0][index];
  }
  for (int level = 1; level < shape.height; ++level) {
    const std::vector<int64_t>& below = levels[level - 1];
    levels[level].assign(below.size() / shape.branching, 0);
    for (size_t j = 0; j < below.size(); ++j) {
      levels[level][j / shape.branching] += below[j];
    }
  }
  return levels;
}

StatusOr<CountNoise> AggTreeNoise(const AggTreeShape& shape,
                                  const PrivacyBudget& budget) {
  // Each of the h levels gets 1/h of the budget at sensitivity 1.
  PrivacyBudget share = budget;
  share.epsilon /= shape.height;
  share.rho /= shape.height;
  return CountNoiseFor(share);
}

StatusOr<std::vector<double>> ReleaseAggTree(
    const double* values, size_t count, double lower, double upper,
    const std::vector<double>& quantiles, const AggTreeShape& shape,
    const PrivacyBudget& budget, RandomSource& rng) {
  StatusOr<CountNoise> noise = AggTreeNoise(shape, budget);
  if (!noise.ok()) return noise.status();
  std::vector<std::vector<int64_t>> levels =
      AggTreeCounts(values, count, lower, upper, shape);
  // Noisy counts, negatives clamped to 0 (post-processing) for the descent.
  std::vector<std::vector<double>> noisy(levels.size());
  for (size_t level = 0; level < levels.size(); ++level) {
    noisy[level].resize(levels[level].size());
    for (size_t j = 0; j < levels[level].size(); ++j) {
      const int64_t c = levels[level][j] + noise.value().Sample(rng);
      noisy[level][j] = static_cast<double>(std::max<int64_t>(c, 0));
    }
  }
  const int top = shape.height - 1;
  double total = 0;
  for (double c : noisy[top]) total += c;

  const double leaves = static_cast<double>(noisy[0].size());
  std::vector<double> out;
  out.reserve(quantiles.size());
  for (double q : quantiles) {
    double remaining = q * total;
    size_t first = 0;  // first child of the current node on this level
    size_t chosen = 0;
    for (int level = top; level >= 0; --level) {
      const size_t children = level == top
                                  ? noisy[top].size()
                                  : static_cast<size_t>(shape.branching);
      chosen = first + children - 1;
      for (size_t j = first; j < first + children; ++j) {
        if (remaining <= noisy[level][j]) {
          chosen = j;
          break;
        }
        remaining -= noisy[level][j];
      }
      remaining = std::min(remaining, noisy[level][chosen]);
      first = chosen * shape.branching;
    }
    const double leaf_count = noisy[0][chosen];
    const double inside = leaf_count > 0 ? remaining / leaf_count : 0;
    const double fraction =
        (static_cast<double>(chosen) + std::min(std::max(inside, 0.0), 1.0)) /
        leaves;
    out.push_back(
        std::min(std::max(lower + (upper - lower) * fraction, lower), upper));
  }
  return out;
}

}  // namespace dpq
