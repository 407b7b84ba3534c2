#include "core/exponential_quantile.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/prepare.h"

namespace dpq {
namespace {

// A band spans at most this much log weight from its nearest to its farthest
// gap, so its linear-space sum loses nothing to underflow. Sampling-only.
constexpr double kBandLogSpan = 30.0;
// Longest band, bounding the decay table's memory. Sampling-only.
constexpr size_t kMaxBandWidth = 4096;
// A band whose log mass is this far below the best band's cannot win the
// Gumbel-max draw: a Gumbel from a 53-bit uniform lies in [-3.7, 36.8]. So
// skipping it changes no output; it only saves time. Sampling-only.
constexpr double kNegligibleLogMass = 64.0;

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

// One band: gaps in [begin, end) visited in `step` direction from `nearest`,
// at distance base + i from the target for the i-th gap visited.
struct Band {
  size_t nearest = 0;
  size_t length = 0;
  int direction = 1;  // +1: towards larger k, -1: towards smaller k
  double mass = 0;    // sum of size_k * decay[i]
};

double BandMass(const GapProblem& problem, const std::vector<double>& decay,
                size_t nearest, size_t length, int direction) {
  double mass = 0;
  if (direction > 0) {
    for (size_t i = 0; i < length; ++i) {
      mass += problem.GapSize(nearest + i) * decay[i];
    }
  } else {
    for (size_t i = 0; i < length; ++i) {
      mass += problem.GapSize(nearest - i) * decay[i];
    }
  }
  return mass;
}

}  // namespace

double GapProblem::GapSize(size_t k) const {
  if (count == 0) return static_cast<double>(last_point - first_point + 1);
  if (k == 0) return cells[0] - static_cast<double>(first_point) + 1;
  if (k == count) return static_cast<double>(last_point) - cells[count - 1];
  return cells[k] - cells[k - 1];
}

int64_t GapProblem::GapStart(size_t k) const {
  if (k == 0) return first_point;
  return static_cast<int64_t>(cells[k - 1]) + 1;
}

size_t GapProblem::GapOf(int64_t point) const {
  const double p = static_cast<double>(point);
  return static_cast<size_t>(std::lower_bound(cells, cells + count, p) - cells);
}

GapProblem MakeGapProblem(const double* cells, size_t count,
                          int64_t first_point, int64_t last_point, double q) {
  GapProblem problem;
  problem.cells = cells;
  problem.count = count;
  problem.first_point = first_point;
  problem.last_point = last_point;
  problem.target = TargetRank(q, static_cast<int64_t>(count));
  return problem;
}

std::vector<double> GapLogProbabilities(const GapProblem& problem,
                                        double epsilon) {
  const size_t gaps = problem.count + 1;
  std::vector<double> log_weights(gaps);
  double max_log_weight = kNegativeInfinity;
  for (size_t k = 0; k < gaps; ++k) {
    const double size = problem.GapSize(k);
    const double distance =
        std::fabs(static_cast<double>(k) - static_cast<double>(problem.target));
    log_weights[k] =
        size > 0 ? std::log(size) - epsilon * distance / 2 : kNegativeInfinity;
    max_log_weight = std::max(max_log_weight, log_weights[k]);
  }
  double sum = 0;
  for (double w : log_weights) sum += std::exp(w - max_log_weight);
  const double log_total = max_log_weight + std::log(sum);
  for (double& w : log_weights) w -= log_total;
  return log_weights;
}

double PointLogProbability(const GapProblem& problem, double epsilon,
                           int64_t point) {
  if (point < problem.first_point || point > problem.last_point) {
    return kNegativeInfinity;
  }
  const size_t k = problem.GapOf(point);
  return GapLogProbabilities(problem, epsilon)[k] -
         std::log(problem.GapSize(k));
}

ExponentialQuantileSampler::ExponentialQuantileSampler(double epsilon)
    : half_epsilon_(epsilon / 2) {
  const double width = std::floor(kBandLogSpan / half_epsilon_);
  const size_t band_width =
      width >= static_cast<double>(kMaxBandWidth)
          ? kMaxBandWidth
          : std::max<size_t>(1, static_cast<size_t>(width));
  decay_.resize(band_width);
  for (size_t i = 0; i < band_width; ++i) {
    decay_[i] = std::exp(-half_epsilon_ * static_cast<double>(i));
  }
}

int64_t ExponentialQuantileSampler::SamplePoint(const GapProblem& problem,
                                                RandomSource& rng) const {
  const size_t n = problem.count;
  const size_t target = static_cast<size_t>(problem.target);
  const size_t width = decay_.size();
  // Every band's mass is at most the number of allowed points times its decay.
  const double log_points = std::log(
      static_cast<double>(problem.last_point - problem.first_point + 1));

  Band best;
  double best_key = kNegativeInfinity;
  double max_log_mass = kNegativeInfinity;
  auto consider = [&](size_t nearest, size_t length, int direction,
                      size_t distance) {
    const double mass = BandMass(problem, decay_, nearest, length, direction);
    if (!(mass > 0)) return;
    const double log_mass =
        std::log(mass) - half_epsilon_ * static_cast<double>(distance);
    max_log_mass = std::max(max_log_mass, log_mass);
    const double key = log_mass + Gumbel(rng);
    if (key > best_key) {
      best_key = key;
      best = Band{nearest, length, direction, mass};
    }
  };
  auto negligible = [&](size_t distance) {
    return log_points - half_epsilon_ * static_cast<double>(distance) <
           max_log_mass - kNegligibleLogMass;
  };

  // Gaps target, target + 1, ...: distance 0, 1, ...
  for (size_t distance = 0; target + distance <= n; distance += width) {
    if (negligible(distance)) break;
    consider(target + distance, std::min(width, n + 1 - target - distance), +1,
             distance);
  }
  // Gaps target - 1, target - 2, ...: distance 1, 2, ...
  for (size_t distance = 1; distance <= target; distance += width) {
    if (negligible(distance)) break;
    consider(target - distance, std::min(width, target - distance + 1), -1,
             distance);
  }

  // Inverse CDF inside the chosen band.
  const double threshold = UniformDouble(rng) * best.mass;
  double cumulative = 0;
  size_t chosen = best.nearest;
  for (size_t i = 0; i < best.length; ++i) {
    const size_t k = best.direction > 0 ? best.nearest + i : best.nearest - i;
    const double weight = problem.GapSize(k) * decay_[i];
    if (weight > 0) {
      chosen = k;  // a rounding shortfall falls back to the last non-empty gap
      cumulative += weight;
      if (cumulative > threshold) break;
    }
  }
  const uint64_t size = static_cast<uint64_t>(problem.GapSize(chosen));
  return problem.GapStart(chosen) +
         static_cast<int64_t>(UniformInteger(rng, size));
}

}  // namespace dpq
