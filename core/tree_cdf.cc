#include "core/tree_cdf.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace dpq {
namespace {

int Levels(const TreeCdfShape& shape) {
  int k = 0;
  while ((int64_t{1} << k) < shape.cells) ++k;
  return k + 1;  // cells .. root
}

}  // namespace

Status ValidateTreeCdfShape(const TreeCdfShape& shape) {
  if (shape.cells < 2 || shape.cells > kMaxTreeCdfCells ||
      (shape.cells & (shape.cells - 1)) != 0) {
    return Status(StatusCode::kInvalidOption,
                  "cells must be a power of two from 2 to 2^21, got " +
                      std::to_string(shape.cells));
  }
  return Status::Ok();
}

std::vector<PrivacyBudget> TreeCdfLevelBudgets(const TreeCdfShape& shape,
                                               const PrivacyBudget& budget) {
  const int levels = Levels(shape);
  std::vector<double> weights(levels, 1.0);
  if (shape.split == TreeBudgetSplit::kMinVariance) {
    const bool pure = budget.kind == PrivacyBudget::Kind::kPure;
    for (int l = 0; l < levels; ++l) {
      const double w = l + 1 == levels ? 1.0 / 3 : 0.5;
      weights[l] = pure ? std::cbrt(w) : std::sqrt(w);
    }
  }
  double total = 0;
  for (double w : weights) total += w;
  // The sum of at most 23 terms is within 23 ulps of exact: raising it by far
  // more keeps the shares' exact sum at most the budget.
  total *= 1 + 1e-13;
  std::vector<PrivacyBudget> shares(levels, budget);
  for (int l = 0; l < levels; ++l) {
    // Each share rounded down, so the shares never add up above the budget.
    shares[l].epsilon =
        DivideDown(MultiplyDown(budget.epsilon, weights[l]), total);
    shares[l].rho = DivideDown(MultiplyDown(budget.rho, weights[l]), total);
  }
  return shares;
}

namespace {

// A value's cell: floor((value - lower) / (upper - lower) cells), clamped.
// Never decreases with the value (monotone rounded steps).
size_t CellOf(double value, double lower, double upper,
              const TreeCdfShape& shape) {
  const double cell = std::floor((value - lower) / (upper - lower) *
                                 static_cast<double>(shape.cells));
  return cell < 0 ? 0
                  : static_cast<size_t>(std::min<int64_t>(
                        shape.cells - 1, static_cast<int64_t>(cell)));
}

// Every level from the cells' counts.
std::vector<std::vector<int64_t>> LevelsFromCells(std::vector<int64_t> cells,
                                                  const TreeCdfShape& shape) {
  const int levels = Levels(shape);
  std::vector<std::vector<int64_t>> counts(levels);
  counts[0] = std::move(cells);
  for (int l = 1; l < levels; ++l) {
    counts[l].assign(counts[l - 1].size() / 2, 0);
    for (size_t j = 0; j < counts[l - 1].size(); ++j) {
      counts[l][j / 2] += counts[l - 1][j];
    }
  }
  return counts;
}

}  // namespace

std::vector<std::vector<int64_t>> TreeCdfCounts(const double* values,
                                                size_t count, double lower,
                                                double upper,
                                                const TreeCdfShape& shape,
                                                const double* weights) {
  std::vector<int64_t> cells(static_cast<size_t>(shape.cells), 0);
  for (size_t i = 0; i < count; ++i) {
    cells[CellOf(values[i], lower, upper, shape)] +=
        weights == nullptr ? 1 : static_cast<int64_t>(weights[i]);
  }
  return LevelsFromCells(std::move(cells), shape);
}

std::vector<std::vector<int64_t>> TreeCdfCounts(const Runs& runs,
                                                const OutputGrid& release_grid,
                                                double lower, double upper,
                                                const TreeCdfShape& shape) {
  std::vector<int64_t> cells(static_cast<size_t>(shape.cells), 0);
  CountRunsByLeaf(
      runs, cells.size(),
      [&](size_t i) {
        return CellOf(release_grid.ValueAt(runs.point(i)), lower, upper, shape);
      },
      cells.data());
  return LevelsFromCells(std::move(cells), shape);
}
std::vector<double> IsotonicRegression(const std::vector<double>& values) {
  // Blocks of pooled values: their mean and size; merge while decreasing.
  std::vector<double> sums;
  std::vector<size_t> sizes;
  for (double v : values) {
    sums.push_back(v);
    sizes.push_back(1);
    while (sums.size() > 1 && sums[sums.size() - 2] / sizes[sizes.size() - 2] >
                                  sums.back() / sizes.back()) {
      sums[sums.size() - 2] += sums.back();
      sizes[sizes.size() - 2] += sizes.back();
      sums.pop_back();
      sizes.pop_back();
    }
  }
  std::vector<double> fitted;
  fitted.reserve(values.size());
  for (size_t b = 0; b < sums.size(); ++b) {
    fitted.insert(fitted.end(), sizes[b], sums[b] / sizes[b]);
  }
  return fitted;
}

std::vector<double> DyadicPrefixSums(
    const std::vector<std::vector<double>>& noisy_levels) {
  const int64_t cells = static_cast<int64_t>(noisy_levels[0].size());
  const int top = static_cast<int>(noisy_levels.size()) - 1;
  std::vector<double> prefix(cells);
  for (int64_t x = 1; x <= cells; ++x) {
    // [0, x) is the union of one node per set bit of x, largest first.
    double sum = 0;
    int64_t start = 0;
    for (int l = top; l >= 0; --l) {
      if (x & (int64_t{1} << l)) {
        sum += noisy_levels[l][start >> l];
        start += int64_t{1} << l;
      }
    }
    prefix[x - 1] = sum;
  }
  return prefix;
}

namespace {

StatusOr<std::vector<double>> ReleaseFromCounts(
    const std::vector<std::vector<int64_t>>& counts, double lower, double upper,
    const std::vector<double>& quantiles, const TreeCdfShape& shape,
    const PrivacyBudget& budget, RandomSource& rng) {
  const std::vector<PrivacyBudget> shares = TreeCdfLevelBudgets(shape, budget);
  std::vector<CountNoise> noise;
  for (const PrivacyBudget& share : shares) {
    StatusOr<CountNoise> level_noise = CountNoiseFor(share);
    if (!level_noise.ok()) return level_noise.status();
    noise.push_back(level_noise.value());
  }
  std::vector<std::vector<double>> noisy(counts.size());
  for (size_t l = 0; l < counts.size(); ++l) {
    for (int64_t c : counts[l]) {
      noisy[l].push_back(static_cast<double>(c + noise[l].Sample(rng)));
    }
  }
  const double total = std::max(0.0, noisy.back()[0]);
  std::vector<double> cdf = IsotonicRegression(DyadicPrefixSums(noisy));
  for (double& v : cdf) v = std::min(std::max(v, 0.0), total);

  return QuantilesFromCdf(cdf, total, lower, upper, quantiles);
}

}  // namespace

std::vector<double> QuantilesFromCdf(const std::vector<double>& cdf,
                                     double total, double lower, double upper,
                                     const std::vector<double>& quantiles) {
  const double width = (upper - lower) / static_cast<double>(cdf.size());
  std::vector<double> out;
  size_t x = 0;  // quantiles ascend, so the search resumes where it stopped
  for (double q : quantiles) {
    const double target = q * total;
    while (x + 1 < cdf.size() && cdf[x] < target) ++x;
    const double before = x == 0 ? 0 : cdf[x - 1];
    const double step = cdf[x] - before;
    const double inside =
        step > 0 ? std::min(std::max((target - before) / step, 0.0), 1.0) : 0;
    const double value = lower + width * (static_cast<double>(x) + inside);
    out.push_back(std::min(std::max(value, lower), upper));
  }
  return out;
}

StatusOr<std::vector<double>> ReleaseTreeCdf(
    const double* values, size_t count, double lower, double upper,
    const std::vector<double>& quantiles, const TreeCdfShape& shape,
    const PrivacyBudget& budget, RandomSource& rng, const double* weights) {
  return ReleaseFromCounts(
      TreeCdfCounts(values, count, lower, upper, shape, weights), lower, upper,
      quantiles, shape, budget, rng);
}

StatusOr<std::vector<double>> ReleaseTreeCdf(
    const Runs& runs, const OutputGrid& release_grid, double lower,
    double upper, const std::vector<double>& quantiles,
    const TreeCdfShape& shape, const PrivacyBudget& budget, RandomSource& rng) {
  return ReleaseFromCounts(
      TreeCdfCounts(runs, release_grid, lower, upper, shape), lower, upper,
      quantiles, shape, budget, rng);
}

}  // namespace dpq
