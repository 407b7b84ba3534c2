#include "core/intervals.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/discrete_noise.h"
#include "core/exact_exponential.h"
#include "core/exponential_quantile.h"

namespace dpq {
namespace {

constexpr size_t kNoPhantoms = std::numeric_limits<size_t>::max();

size_t Phantoms(double t, double share) {
  const size_t count = BracketPhantoms(t, share);
  return count == 0 ? kNoPhantoms : count;
}

// KL(a || q) between Bernoulli(a) and Bernoulli(q), a in [0, 1].
double BernoulliKl(double a, double q) {
  double kl = 0;
  if (a > 0) kl += a * std::log(a / q);
  if (a < 1) kl += (1 - a) * std::log((1 - a) / (1 - q));
  return kl;
}

// The smallest s in [0, room] with n KL(q + sign s / n || q) >= level, or
// room when none: bisection, returning the end where the bound holds (with
// a relative margin for the logs' rounding), plus one rank.
double ChernoffOffset(double q, double n, double beta_half, double sign,
                      double room) {
  const double level = -std::log(beta_half) * (1 + 1e-9);
  auto holds = [&](double s) {
    const double a = std::min(std::max(q + sign * s / n, 0.0), 1.0);
    return n * BernoulliKl(a, q) >= level;
  };
  if (!holds(room)) return room;
  double low = 0;
  double high = room;
  for (int i = 0; i < 200 && high - low > 1e-9 * (1 + high); ++i) {
    const double mid = (low + high) / 2;
    (holds(mid) ? high : low) = mid;
  }
  return std::min(high + 1, room);
}

}  // namespace

size_t BracketPhantoms(double t, double share) {
  // + 1 absorbs the rounding of share and of the division.
  const double count = std::ceil(t / share) + 1;
  return count <= static_cast<double>(kMaxIntervalPhantoms)
             ? static_cast<size_t>(count)
             : 0;
}

Status ValidateConfidence(double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    return Status(StatusCode::kInvalidOption,
                  "confidence must be a number strictly between 0 and 1 "
                  "(e.g. 0.95), got " +
                      FormatNumber(confidence));
  }
  return Status::Ok();
}

Status ValidateIntervalShare(double share) {
  if (!(share > 0 && share < 1)) {
    return Status(StatusCode::kInvalidOption,
                  "intervalShare (the part of the budget the intervals "
                  "spend) must be strictly between 0 and 1, got " +
                      FormatNumber(share));
  }
  return Status::Ok();
}

StatusOr<bool> ParseIntervalKind(const std::string& kind) {
  if (kind == "sample") return false;
  if (kind == "population") return true;
  return Status(StatusCode::kInvalidOption,
                "interval must be 'sample' (the quantile of these records) or "
                "'population' (of the distribution they are drawn from), got "
                "'" +
                    kind + "'");
}

double SamplingOffsetBelow(double q, double n, double beta_half) {
  if (!(n > 0)) return 0;
  // Below q n - q n = 0 no rank is possible: s = q n always suffices.
  return ChernoffOffset(q, n, beta_half, -1, q * n);
}

double SamplingOffsetAbove(double q, double n, double beta_half) {
  if (!(n > 0)) return 0;
  return ChernoffOffset(q, n, beta_half, 1, (1 - q) * n);
}

StatusOr<double> NoisyCountUpperBound(size_t count, const PrivacyBudget& share,
                                      double beta, RandomSource& rng) {
  StatusOr<CountNoise> noise = CountNoiseFor(share);
  if (!noise.ok()) return noise.status();
  const double noisy = static_cast<double>(count) +
                       static_cast<double>(noise.value().Sample(rng));
  // Tail bounds: P(Z <= -c) <= e^{-c / b} for the discrete Laplace of scale
  // b, and <= e^{-c^2 / (2 sigma^2)} for the discrete Gaussian (CKS 2020:
  // it is sigma-subgaussian). Taken 1e-9 wider and one more, against
  // rounding.
  const double log_inverse = -std::log(beta) * (1 + 1e-9);
  const double parameter = noise.value().parameter.Value() * (1 + 1e-12);
  const double tail = noise.value().kind == CountNoise::Kind::kLaplace
                          ? parameter * log_inverse
                          : std::sqrt(2 * parameter * log_inverse);
  return noisy + std::ceil(tail) + 1;
}

OutputGrid IntervalGrid(const OutputGrid& release_grid) {
  if (release_grid.steps() <= kIntervalGridSteps) return release_grid;
  return OutputGrid::Default(release_grid.lower(), release_grid.upper(),
                             kIntervalGridSteps);
}

double IntervalRankOffset(double epsilon, double q, int64_t steps,
                          double confidence) {
  // The rate the sampler applies (never above epsilon / (2 Delta)), taken a
  // hair lower so that rounding here can only widen the interval.
  const double rate =
      BaseTwoRate(epsilon / (2 * QuantileSensitivity(q))).NaturalRate() *
      (1 - 1e-12);
  const double points = static_cast<double>(steps) + 1;
  const double beta_half = (1 - confidence) / 2;
  // + 1: the target's rounding to 2^-20 and slack for the logs.
  return (std::log(points) - std::log(beta_half)) / rate + 1;
}

Brackets SampleBrackets(const Runs& runs, const OutputGrid& release_grid,
                        const OutputGrid& grid,
                        const std::vector<double>& quantiles, double epsilon,
                        double confidence, RandomSource& rng,
                        const std::vector<double>& extra_below,
                        const std::vector<double>& extra_above) {
  const int64_t steps = grid.steps();
  const size_t m = quantiles.size();
  const uint64_t count = runs.total();
  std::vector<uint64_t> below(m);
  std::vector<uint64_t> above(m);
  uint64_t most_below = 0;
  uint64_t most_above = 0;
  for (size_t j = 0; j < m; ++j) {
    const double q = quantiles[j];
    const double t = IntervalRankOffset(epsilon, q, steps, confidence);
    below[j] = Phantoms(t + (extra_below.empty() ? 0 : extra_below[j]), 1 - q);
    above[j] = Phantoms(t + (extra_above.empty() ? 0 : extra_above[j]), q);
    if (below[j] != kNoPhantoms) most_below = std::max(most_below, below[j]);
    if (above[j] != kNoPhantoms) most_above = std::max(most_above, above[j]);
  }
  // Lower problem: phantoms at point 0, then the records mapped down. Upper
  // problem: the records mapped up, then phantoms at the last point. As runs
  // (the maps are monotone, so runs stay in order; equal points merge); each
  // bracket reads the ranks holding its own phantoms and the records.
  std::vector<std::pair<int64_t, uint64_t>> down;
  std::vector<std::pair<int64_t, uint64_t>> up;
  auto add = [](std::vector<std::pair<int64_t, uint64_t>>* to, int64_t point,
                uint64_t records) {
    if (records == 0) return;
    if (!to->empty() && to->back().first == point) {
      to->back().second += records;
    } else {
      to->push_back({point, records});
    }
  };
  add(&down, 0, most_below);
  for (size_t i = 0; i < runs.size; ++i) {
    const double value = release_grid.ValueAt(runs.point(i));
    add(&down, grid.FloorPointOf(value), runs.count(i));
    add(&up, grid.CeilPointOf(value), runs.count(i));
  }
  add(&up, steps, most_above);
  const RunsStore down_runs = RunsStore::FromPairs(down);
  const RunsStore up_runs = RunsStore::FromPairs(up);
  const ExponentialQuantileSampler sampler(epsilon);
  Brackets brackets;
  for (size_t j = 0; j < m; ++j) {
    QuantileProblem problem;
    problem.first_point = 0;
    problem.last_point = steps;
    problem.quantile = quantiles[j];
    if (below[j] == kNoPhantoms) {
      brackets.low.push_back(grid.lower());
    } else {
      problem.runs = down_runs.view();
      problem.lo = most_below - below[j];
      problem.hi = most_below + count;
      brackets.low.push_back(grid.ValueAt(sampler.SamplePoint(problem, rng)));
    }
    if (above[j] == kNoPhantoms) {
      brackets.high.push_back(grid.upper());
    } else {
      problem.runs = up_runs.view();
      problem.lo = 0;
      problem.hi = count + above[j];
      brackets.high.push_back(grid.ValueAt(sampler.SamplePoint(problem, rng)));
    }
  }
  return brackets;
}

}  // namespace dpq
