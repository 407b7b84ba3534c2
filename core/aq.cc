#include "core/aq.h"

#include <limits>

#include "core/exponential_quantile.h"

namespace dpq {
namespace {

// The recursion of Algorithm 1, shared by the sampler and the likelihood.
// `choose(problem, index)` returns the point for quantile `index`, or a value
// outside the problem's range to stop descending.
template <typename Choose>
class AqRecursion {
 public:
  AqRecursion(const std::vector<double>& quantiles, Choose& choose)
      : quantiles_(quantiles), choose_(choose) {}

  // Quantiles [begin, end) on records `cells[0, count)` and points
  // [first_point, last_point]; `low` and `high` are the original quantiles at
  // the subproblem's ends (0 and 1 at the root).
  void Run(size_t begin, size_t end, double low, double high,
           int64_t first_point, int64_t last_point, const double* cells,
           size_t count) {
    if (begin >= end) return;
    const size_t middle = begin + (end - begin + 1) / 2 - 1;
    // Rescaling from the originals, not level by level, avoids compounding
    // rounding: (q - low) / (high - low) is the paper's repeated rescaling.
    const double rescaled = (quantiles_[middle] - low) / (high - low);
    const GapProblem problem =
        MakeGapProblem(cells, count, first_point, last_point, rescaled);
    const int64_t point = choose_(problem, middle);
    if (point < first_point || point > last_point) return;
    const size_t below = problem.GapOf(point);
    Run(begin, middle, low, quantiles_[middle], first_point, point, cells,
        below);
    Run(middle + 1, end, quantiles_[middle], high, point, last_point,
        cells + below, count - below);
  }

 private:
  const std::vector<double>& quantiles_;
  Choose& choose_;
};

template <typename Choose>
void RunAq(const double* cells, size_t count, int64_t steps,
           const std::vector<double>& quantiles, Choose& choose) {
  AqRecursion<Choose> recursion(quantiles, choose);
  recursion.Run(0, quantiles.size(), 0.0, 1.0, 0, steps, cells, count);
}

}  // namespace

int ApproximateQuantilesLevels(size_t distinct_quantiles) {
  int levels = 0;
  for (size_t m = distinct_quantiles; m > 0; m /= 2) ++levels;
  return levels;
}

std::vector<int64_t> SampleApproximateQuantiles(
    const double* cells, size_t count, int64_t steps,
    const std::vector<double>& quantiles, double epsilon_per_level,
    RandomSource& rng) {
  std::vector<int64_t> points(quantiles.size(), 0);
  const ExponentialQuantileSampler sampler(epsilon_per_level);
  auto choose = [&](const GapProblem& problem, size_t index) {
    points[index] = sampler.SamplePoint(problem, rng);
    return points[index];
  };
  RunAq(cells, count, steps, quantiles, choose);
  return points;
}

double ApproximateQuantilesLogProbability(const double* cells, size_t count,
                                          int64_t steps,
                                          const std::vector<double>& quantiles,
                                          double epsilon_per_level,
                                          const std::vector<int64_t>& points) {
  double log_probability = 0;
  auto choose = [&](const GapProblem& problem, size_t index) {
    log_probability +=
        PointLogProbability(problem, epsilon_per_level, points[index]);
    return points[index];
  };
  RunAq(cells, count, steps, quantiles, choose);
  return log_probability;
}

}  // namespace dpq
