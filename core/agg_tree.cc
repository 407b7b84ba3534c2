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

StatusOr<AggTreeShape> AggTreeShapeForPoints(int64_t points, int64_t branching,
                                             int64_t height, bool aggregate) {
  if (points > kMaxTreeLeaves) {
    return Status(StatusCode::kInvalidOption,
                  "step gives " + std::to_string(points) +
                      " grid points; aggtree with a step has one leaf per "
                      "point and takes at most 2^21 (a coarser step, or no "
                      "step)");
  }
  // The fewest levels b leaves per node need for `points` leaves.
  auto levels_for = [points](int64_t b) {
    int64_t h = 1;
    for (int64_t leaves = b; leaves < points; leaves *= b) ++h;
    return h;
  };
  // The smallest branching whose h-th power covers `points`.
  auto branching_for = [points](int64_t h) {
    int64_t b = std::max<int64_t>(
        2, static_cast<int64_t>(
               std::floor(std::pow(static_cast<double>(points), 1.0 / h))));
    while (true) {
      int64_t leaves = 1;
      for (int64_t l = 0; l < h && leaves < points; ++l) leaves *= b;
      if (leaves >= points) return b;
      ++b;
    }
  };
  AggTreeShape shape;
  shape.aggregate = aggregate;
  if (branching == 0 && height == 0) {
    // More levels only where the fewest would overshoot the leaf limit.
    height = levels_for(16);
    branching = branching_for(height);
    while (std::pow(static_cast<double>(branching), height) >
           static_cast<double>(kMaxTreeLeaves)) {
      branching = branching_for(++height);
    }
  } else if (height == 0) {
    height = levels_for(branching);
  } else if (branching == 0) {
    branching = branching_for(height);
  }
  if (branching > 1024 || height > 24) {
    return Status(StatusCode::kInvalidOption,
                  "height " + std::to_string(height) + " needs branching " +
                      std::to_string(branching) +
                      " for the grid's points (the step's or the buckets'); "
                      "branching is at most 1024");
  }
  shape.branching = static_cast<int>(branching);
  shape.height = static_cast<int>(height);
  Status status = ValidateAggTreeShape(shape);
  if (!status.ok()) return status;
  if (Leaves(shape) < points) {
    return Status(StatusCode::kInvalidOption,
                  "branching^height (" + std::to_string(Leaves(shape)) +
                      " leaves) is below the grid's " + std::to_string(points) +
                      " points (aggtree has one leaf per point of a step or "
                      "bucket grid)");
  }
  return shape;
}

namespace {

// The leaf of a value: its point on the leaf grid, or its equal-width leaf
// over [lower, upper]. Non-decreasing in the value (each step is a rounded
// monotone operation), which the search over runs below relies on.
int64_t LeafOf(double value, double lower, double upper, int64_t leaves,
               const OutputGrid* grid) {
  if (grid != nullptr) {
    return std::min<int64_t>(leaves - 1, grid->PointOf(value));
  }
  const double fraction = (value - lower) / (upper - lower);
  const double leaf = std::floor(fraction * static_cast<double>(leaves));
  return leaf < 0 ? 0
                  : std::min<int64_t>(leaves - 1, static_cast<int64_t>(leaf));
}

// Every level from the leaves' counts.
std::vector<std::vector<int64_t>> LevelsFromLeaves(std::vector<int64_t> leaves,
                                                   const AggTreeShape& shape) {
  std::vector<std::vector<int64_t>> levels(shape.height);
  levels[0] = std::move(leaves);
  for (int level = 1; level < shape.height; ++level) {
    const std::vector<int64_t>& below = levels[level - 1];
    levels[level].assign(below.size() / shape.branching, 0);
    for (size_t j = 0; j < below.size(); ++j) {
      levels[level][j / shape.branching] += below[j];
    }
  }
  return levels;
}

}  // namespace

std::vector<std::vector<int64_t>> AggTreeCounts(
    const double* values, size_t count, double lower, double upper,
    const AggTreeShape& shape, const double* weights, const OutputGrid* grid) {
  const int64_t leaves = Leaves(shape);
  std::vector<int64_t> counts(static_cast<size_t>(leaves), 0);
  for (size_t i = 0; i < count; ++i) {
    counts[static_cast<size_t>(
        LeafOf(values[i], lower, upper, leaves, grid))] +=
        weights == nullptr ? 1 : static_cast<int64_t>(weights[i]);
  }
  return LevelsFromLeaves(std::move(counts), shape);
}

std::vector<std::vector<int64_t>> AggTreeCounts(const Runs& runs,
                                                const OutputGrid& release_grid,
                                                double lower, double upper,
                                                const AggTreeShape& shape,
                                                const OutputGrid* grid) {
  const int64_t leaves = Leaves(shape);
  std::vector<int64_t> counts(static_cast<size_t>(leaves), 0);
  CountRunsByLeaf(
      runs, counts.size(),
      [&](size_t i) {
        return static_cast<size_t>(LeafOf(release_grid.ValueAt(runs.point(i)),
                                          lower, upper, leaves, grid));
      },
      counts.data());
  return LevelsFromLeaves(std::move(counts), shape);
}

PrivacyBudget AggTreeLevelBudget(const AggTreeShape& shape,
                                 const PrivacyBudget& budget) {
  // Each of the h levels gets 1/h of the budget at sensitivity 1.
  PrivacyBudget share = budget;
  share.epsilon = DivideDown(share.epsilon, shape.height);
  share.rho = DivideDown(share.rho, shape.height);
  return share;
}

StatusOr<CountNoise> AggTreeNoise(const AggTreeShape& shape,
                                  const PrivacyBudget& budget) {
  return CountNoiseFor(AggTreeLevelBudget(shape, budget));
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

namespace {

// The release from the exact level counts.
StatusOr<std::vector<double>> ReleaseFromLevels(
    const std::vector<std::vector<int64_t>>& exact, double lower, double upper,
    const std::vector<double>& quantiles, const AggTreeShape& shape,
    const PrivacyBudget& budget, RandomSource& rng, const OutputGrid* grid) {
  StatusOr<CountNoise> noise = AggTreeNoise(shape, budget);
  if (!noise.ok()) return noise.status();

  const size_t b = static_cast<size_t>(shape.branching);
  // On a step grid, the first leaf past its last point; nodes from there on
  // hold no record by construction (public): their counts are known to be
  // 0, so aggregation takes 0 for them and the descent reads them as empty.
  size_t past_grid = exact[0].size();
  if (grid != nullptr) {
    past_grid = std::min(past_grid, static_cast<size_t>(grid->steps()) + 1);
  }
  std::vector<size_t> leaves_below(exact.size(), 1);  // leaves per node
  for (size_t level = 1; level < exact.size(); ++level) {
    leaves_below[level] = leaves_below[level - 1] * b;
  }
  auto off_grid = [&](size_t level, size_t j) {
    return j * leaves_below[level] >= past_grid;
  };
  std::vector<std::vector<double>> aggregated;
  if (shape.aggregate) {
    aggregated.resize(exact.size());
    for (size_t level = 0; level < exact.size(); ++level) {
      std::vector<int64_t> noisy = exact[level];
      noise.value().AddTo(&noisy, rng);
      aggregated[level].assign(noisy.begin(), noisy.end());
      for (size_t j = 0; j < noisy.size(); ++j) {
        if (off_grid(level, j)) aggregated[level][j] = 0;
      }
    }
    aggregated = HonakerAggregate(std::move(aggregated), shape.branching);
  }
  LazyNoisyCounts lazy(&exact, &noise.value(), &rng);
  auto count_at = [&](size_t level, size_t j) {
    if (off_grid(level, j)) return 0.0;
    const double c = shape.aggregate ? aggregated[level][j] : lazy.At(level, j);
    return std::max(c, 0.0);  // the descent reads negatives as empty
  };

  const size_t top = static_cast<size_t>(shape.height - 1);
  const double leaves = static_cast<double>(exact[0].size());
  // The trim's threshold: kAggTreeTrimScales of one node's noise scale.
  const double parameter = noise.value().parameter.Value();
  const double trim =
      kAggTreeTrimScales * (noise.value().kind == CountNoise::Kind::kLaplace
                                ? parameter
                                : std::sqrt(parameter));
  // The trim (agg_tree.h): the span grows out from the largest of the
  // root's children, over neighbours that pass the trim's scales and, past
  // a child that does not, only to children passing the gap's scales; the
  // same for every quantile. (Read in the order the descent reads them, so
  // a lazy draw of their noise draws as before.)
  const size_t roots = exact[top].size();
  const double gap_trim = trim * (kAggTreeTrimGapScales / kAggTreeTrimScales);
  std::vector<double> root_counts(roots);
  size_t largest = 0;
  for (size_t j = 0; j < roots; ++j) {
    root_counts[j] = count_at(top, j);
    if (root_counts[j] > root_counts[largest]) largest = j;
  }
  size_t span_first = 0;
  size_t span_last = roots - 1;
  if (root_counts[largest] >= trim) {
    span_first = largest;
    span_last = largest;
    for (size_t j = largest; j-- > 0;) {
      if (root_counts[j] >= (j + 1 == span_first ? trim : gap_trim)) {
        span_first = j;
      }
    }
    for (size_t j = largest + 1; j < roots; ++j) {
      if (root_counts[j] >= (j == span_last + 1 ? trim : gap_trim)) {
        span_last = j;
      }
    }
  }
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
        // Nothing measured below: spread q evenly over the children (those
        // on the grid).
        size_t on_grid = children;
        while (on_grid > 1 && off_grid(level, first + on_grid - 1)) {
          --on_grid;
        }
        const double position = local * static_cast<double>(on_grid);
        const size_t k = std::min(on_grid - 1, static_cast<size_t>(position));
        chosen = first + k;
        local = position - static_cast<double>(k);
      } else {
        const double target = local * total;
        double before = 0;
        chosen = first + children;  // unset
        size_t last_positive = first;
        for (size_t j = first; j < first + children; ++j) {
          const double c = count_at(level, j);
          if (c > 0) last_positive = j;
          if (c > 0 && before + c >= target) {
            chosen = j;
            break;
          }
          before += c;
        }
        // Rounding kept the sum below the target: the last counted child.
        if (chosen == first + children) {
          chosen = last_positive;
          before -= count_at(level, chosen);
        }
        const double c = count_at(level, chosen);
        local = c > 0 ? (target - before) / c : 0;
      }
      // A quantile beyond the span goes to its nearest end; the counts and
      // targets stay as they were, so quantiles inside it do not move.
      if (level == top && chosen < span_first) {
        chosen = span_first;
        local = 0;
      } else if (level == top && chosen > span_last) {
        chosen = span_last;
        local = 1;
      }
      local = std::min(std::max(local, 0.0), 1.0);
      first = chosen * b;
    }
    if (grid != nullptr) {
      // The leaf's own point: no interpolation inside it.
      out.push_back(grid->ValueAt(std::min(
          static_cast<int64_t>(chosen), static_cast<int64_t>(past_grid) - 1)));
      continue;
    }
    const double fraction = (static_cast<double>(chosen) + local) / leaves;
    out.push_back(
        std::min(std::max(lower + (upper - lower) * fraction, lower), upper));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<double>> ReleaseAggTree(
    const double* values, size_t count, double lower, double upper,
    const std::vector<double>& quantiles, const AggTreeShape& shape,
    const PrivacyBudget& budget, RandomSource& rng, const double* weights,
    const OutputGrid* grid) {
  return ReleaseFromLevels(
      AggTreeCounts(values, count, lower, upper, shape, weights, grid), lower,
      upper, quantiles, shape, budget, rng, grid);
}

StatusOr<std::vector<double>> ReleaseAggTree(
    const Runs& runs, const OutputGrid& release_grid, double lower,
    double upper, const std::vector<double>& quantiles,
    const AggTreeShape& shape, const PrivacyBudget& budget, RandomSource& rng,
    const OutputGrid* grid) {
  return ReleaseFromLevels(
      AggTreeCounts(runs, release_grid, lower, upper, shape, grid), lower,
      upper, quantiles, shape, budget, rng, grid);
}

}  // namespace dpq
