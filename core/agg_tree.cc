#include "core/agg_tree.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

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
                  "branching^height is above the 2^21 leaves supported (each "
                  "node's exact noise costs time)");
  }
  return Status::Ok();
}

std::vector<std::vector<int64_t>> AggTreeCounts(const double* values,
                                                size_t count, double lower,
                                                double upper,
                                                const AggTreeShape& shape,
                                                const double* weights) {
  const int64_t leaves = Leaves(shape);
  std::vector<std::vector<int64_t>> levels(shape.height);
  levels[0].assign(leaves, 0);
  for (size_t i = 0; i < count; ++i) {
    const double fraction = (values[i] - lower) / (upper - lower);
    const double leaf = std::floor(fraction * static_cast<double>(leaves));
    const int64_t index =
        leaf < 0 ? 0
                 : std::min<int64_t>(leaves - 1, static_cast<int64_t>(leaf));
    levels[0][index] +=
        weights == nullptr ? 1 : static_cast<int64_t>(weights[i]);
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
  share.epsilon = DivideDown(share.epsilon, shape.height);
  share.rho = DivideDown(share.rho, shape.height);
  return CountNoiseFor(share);
}

namespace {}  // namespace

std::vector<std::vector<double>> HonakerAggregate(
    std::vector<std::vector<double>> noisy, int branching) {
  const size_t b = static_cast<size_t>(branching);
  std::vector<std::vector<double>>& estimate = noisy;
  // Bottom-up. variance: of the level below's estimates, in units of one
  // node's noise variance. A node mixes its own count (variance 1) with its
  // children's sum (variance b variance).
  double variance = 1;
  for (size_t level = 1; level < estimate.size(); ++level) {
    const double children_variance = static_cast<double>(b) * variance;
    const double own_weight = children_variance / (1 + children_variance);
    for (size_t j = 0; j < estimate[level].size(); ++j) {
      double children = 0;
      for (size_t c = j * b; c < (j + 1) * b; ++c) {
        children += estimate[level - 1][c];
      }
      estimate[level][j] =
          own_weight * estimate[level][j] + (1 - own_weight) * children;
    }
    variance = children_variance / (1 + children_variance);
  }
  // Top-down: siblings share their parent's residual equally (equal
  // variances). The root is not measured: its estimate is its children's sum.
  for (size_t level = estimate.size() - 1; level-- > 0;) {
    for (size_t parent = 0; parent < estimate[level + 1].size(); ++parent) {
      double sum = 0;
      for (size_t c = parent * b; c < (parent + 1) * b; ++c) {
        sum += estimate[level][c];
      }
      const double shift =
          (estimate[level + 1][parent] - sum) / static_cast<double>(b);
      for (size_t c = parent * b; c < (parent + 1) * b; ++c) {
        estimate[level][c] += shift;
      }
    }
  }
  return estimate;
}

namespace {

// The raw noisy counts, each node's noise drawn the first time the descent
// reads it (the noise of nodes never read is never needed).
class LazyNoisyCounts {
 public:
  LazyNoisyCounts(const std::vector<std::vector<int64_t>>* exact,
                  const CountNoise* noise, RandomSource* rng)
      : exact_(exact), noise_(noise), rng_(rng), drawn_(exact->size()) {
    for (size_t level = 0; level < exact->size(); ++level) {
      drawn_[level].assign((*exact)[level].size(), kNotDrawn);
    }
  }
  double At(size_t level, size_t j) {
    double& value = drawn_[level][j];
    if (value == kNotDrawn) {
      value = static_cast<double>((*exact_)[level][j] + noise_->Sample(*rng_));
    }
    return value;
  }

 private:
  static constexpr double kNotDrawn = -1e300;
  const std::vector<std::vector<int64_t>>* exact_;
  const CountNoise* noise_;
  RandomSource* rng_;
  std::vector<std::vector<double>> drawn_;
};

}  // namespace

StatusOr<std::vector<double>> ReleaseAggTree(
    const double* values, size_t count, double lower, double upper,
    const std::vector<double>& quantiles, const AggTreeShape& shape,
    const PrivacyBudget& budget, RandomSource& rng, const double* weights) {
  StatusOr<CountNoise> noise = AggTreeNoise(shape, budget);
  if (!noise.ok()) return noise.status();
  const std::vector<std::vector<int64_t>> exact =
      AggTreeCounts(values, count, lower, upper, shape, weights);
  std::vector<std::vector<double>> aggregated;
  if (shape.aggregate) {
    aggregated.resize(exact.size());
    for (size_t level = 0; level < exact.size(); ++level) {
      std::vector<int64_t> noisy = exact[level];
      noise.value().AddTo(&noisy, rng);
      aggregated[level].assign(noisy.begin(), noisy.end());
    }
    aggregated = HonakerAggregate(std::move(aggregated), shape.branching);
  }
  LazyNoisyCounts lazy(&exact, &noise.value(), &rng);
  auto count_at = [&](size_t level, size_t j) {
    const double c = shape.aggregate ? aggregated[level][j] : lazy.At(level, j);
    return std::max(c, 0.0);  // the descent reads negatives as empty
  };

  const size_t top = static_cast<size_t>(shape.height - 1);
  const size_t b = static_cast<size_t>(shape.branching);
  const double leaves = static_cast<double>(exact[0].size());
  std::vector<double> out;
  out.reserve(quantiles.size());
  for (double q : quantiles) {
    double local = q;  // the quantile inside the current node
    size_t first = 0;  // its first child
    size_t chosen = 0;
    for (size_t level = top + 1; level-- > 0;) {
      const size_t children = level == top ? exact[top].size() : b;
      double total = 0;
      for (size_t j = first; j < first + children; ++j) {
        total += count_at(level, j);
      }
      if (!(total > 0)) {
        // Nothing measured below: spread q evenly over the children.
        const double position = local * static_cast<double>(children);
        const size_t k = std::min(children - 1, static_cast<size_t>(position));
        chosen = first + k;
        local = position - static_cast<double>(k);
      } else {
        const double target = local * total;
        double before = 0;
        chosen = first + children - 1;
        for (size_t j = first; j < first + children; ++j) {
          const double c = count_at(level, j);
          if (c > 0 && before + c >= target) {
            chosen = j;
            break;
          }
          before += c;
        }
        const double c = count_at(level, chosen);
        local = c > 0 ? (target - before) / c : 0;
      }
      local = std::min(std::max(local, 0.0), 1.0);
      first = chosen * b;
    }
    const double fraction = (static_cast<double>(chosen) + local) / leaves;
    out.push_back(
        std::min(std::max(lower + (upper - lower) * fraction, lower), upper));
  }
  return out;
}

}  // namespace dpq
