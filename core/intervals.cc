#include "core/intervals.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/exact_exponential.h"
#include "core/exponential_quantile.h"

namespace dpq {
namespace {

constexpr size_t kNoPhantoms = std::numeric_limits<size_t>::max();

size_t Phantoms(double t, double share) {
  const size_t count = BracketPhantoms(t, share);
  return count == 0 ? kNoPhantoms : count;
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

Brackets SampleBrackets(const double* sorted, size_t count,
                        const OutputGrid& grid,
                        const std::vector<double>& quantiles, double epsilon,
                        double confidence, RandomSource& rng) {
  const int64_t steps = grid.steps();
  const size_t m = quantiles.size();
  std::vector<size_t> below(m);
  std::vector<size_t> above(m);
  size_t most_below = 0;
  size_t most_above = 0;
  for (size_t j = 0; j < m; ++j) {
    const double q = quantiles[j];
    const double t = IntervalRankOffset(epsilon, q, steps, confidence);
    below[j] = Phantoms(t, 1 - q);
    above[j] = Phantoms(t, q);
    if (below[j] != kNoPhantoms) most_below = std::max(most_below, below[j]);
    if (above[j] != kNoPhantoms) most_above = std::max(most_above, above[j]);
  }
  // Lower problem: phantoms at point 0, then the records mapped down. Upper
  // problem: the records mapped up, then phantoms at the last point. Each
  // bracket reads the part with its own number of phantoms.
  std::vector<double> down(most_below + count, 0.0);
  std::vector<double> up(count + most_above, static_cast<double>(steps));
  for (size_t i = 0; i < count; ++i) {
    down[most_below + i] = static_cast<double>(grid.FloorPointOf(sorted[i]));
    up[i] = static_cast<double>(grid.CeilPointOf(sorted[i]));
  }
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
      problem.cells = down.data() + (most_below - below[j]);
      problem.count = count + below[j];
      brackets.low.push_back(grid.ValueAt(sampler.SamplePoint(problem, rng)));
    }
    if (above[j] == kNoPhantoms) {
      brackets.high.push_back(grid.upper());
    } else {
      problem.cells = up.data();
      problem.count = count + above[j];
      brackets.high.push_back(grid.ValueAt(sampler.SamplePoint(problem, rng)));
    }
  }
  return brackets;
}

}  // namespace dpq
