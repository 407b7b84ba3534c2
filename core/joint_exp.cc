#include "core/joint_exp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "core/exponential_quantile.h"

namespace dpq {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
// See the forward pass. Sampling-exactness is unaffected: e^-60 relative is
// below double precision. Not privacy-relevant.
constexpr double kNegligibleTerm = 60.0;

// log(e^a + e^b) without overflow; -inf is the empty sum.
double LogAdd(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegativeInfinity) return a;
  return a + std::log1p(std::exp(b - a));
}

// Index drawn with probability proportional to exp(log_weights[i]).
size_t SampleLogWeights(const std::vector<double>& log_weights,
                        RandomSource& rng) {
  double top = kNegativeInfinity;
  for (double w : log_weights) top = std::max(top, w);
  double total = 0;
  for (double w : log_weights) total += std::exp(w - top);
  const double threshold = UniformDouble(rng) * total;
  double cumulative = 0;
  size_t last = 0;
  for (size_t i = 0; i < log_weights.size(); ++i) {
    if (log_weights[i] == kNegativeInfinity) continue;
    last = i;
    cumulative += std::exp(log_weights[i] - top);
    if (cumulative > threshold) return i;
  }
  return last;  // rounding shortfall: the last possible index
}

// log-sum-exp of a sliding window (first in, first out) with two stacks:
// amortised O(1) per push, pop and query, and no subtraction, so no
// cancellation.
class SlidingLogSum {
 public:
  void Push(double value) {
    back_.push_back(value);
    back_sum_ = LogAdd(back_sum_, value);
  }
  void Pop() {
    if (front_sums_.empty()) {
      // Reverse the back stack so its oldest element is on top, each entry
      // holding the log-sum of itself and everything newer.
      double sum = kNegativeInfinity;
      for (size_t j = back_.size(); j-- > 0;) {
        sum = LogAdd(sum, back_[j]);
        front_sums_.push_back(sum);
      }
      back_.clear();
      back_sum_ = kNegativeInfinity;
    }
    front_sums_.pop_back();
  }
  double Sum() const {
    return LogAdd(front_sums_.empty() ? kNegativeInfinity : front_sums_.back(),
                  back_sum_);
  }

 private:
  std::vector<double> front_sums_;
  std::vector<double> back_;
  double back_sum_ = kNegativeInfinity;
};

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

JointKernel JointExpKernel(size_t count, const std::vector<double>& quantiles,
                           double epsilon) {
  JointKernel kernel;
  const double n = static_cast<double>(count);
  double previous = 0;
  double smallest_share = 1;
  for (double q : quantiles) {
    kernel.targets.push_back(n * (q - previous));
    smallest_share = std::min(smallest_share, q - previous);
    previous = q;
  }
  kernel.targets.push_back(n * (1 - previous));
  smallest_share = std::min(smallest_share, 1 - previous);
  // exp(epsilon u / (2 Delta)) with u = -1/2 sum |...| and
  // Delta = (1 - smallest share) (1 + 2^-16); see the header.
  kernel.slope = epsilon / (4 * (1 - smallest_share) * kSensitivitySafety);
  return kernel;
}

Status CheckJointSize(size_t count, size_t quantiles) {
  const double entries =
      static_cast<double>(quantiles) * (static_cast<double>(count) + 1);
  if (entries > static_cast<double>(kMaxJointTableEntries)) {
    return Status(StatusCode::kTooLarge,
                  "joint mechanisms need m x (n + 1) <= 2^24 table entries; "
                  "got " +
                      std::to_string(quantiles) + " quantiles and " +
                      std::to_string(count) +
                      " values. Use 'aq', which has no such limit");
  }
  if (entries * static_cast<double>(quantiles) >
      static_cast<double>(kMaxJointWork)) {
    return Status(StatusCode::kTooLarge,
                  "joint mechanisms take m^2 x (n + 1) steps, at most 2^29 "
                  "(about 2 s); got " +
                      std::to_string(quantiles) + " quantiles and " +
                      std::to_string(count) +
                      " values. Use 'aq', or fewer quantiles");
  }
  return Status::Ok();
}

std::vector<double> JointSampler::RunLogCounts(size_t i) const {
  const double size = gaps_problem_.GapSize(i);
  std::vector<double> counts(m_ + 1, kNegativeInfinity);
  if (size <= 0) return counts;
  counts[1] = std::log(size);
  for (size_t len = 2; len <= m_; ++len) {
    counts[len] =
        counts[len - 1] + std::log((size + static_cast<double>(len) - 1) /
                                   static_cast<double>(len));
  }
  return counts;
}

JointSampler::JointSampler(const double* cells, size_t count, int64_t steps,
                           JointKernel kernel)
    : gaps_(count + 1),
      m_(kernel.targets.size() - 1),
      kernel_(std::move(kernel)) {
  gaps_problem_.cells = cells;
  gaps_problem_.count = count;
  gaps_problem_.first_point = 0;
  gaps_problem_.last_point = steps;

  zero_prefix_.assign(m_, 0);
  for (size_t e = 1; e < m_; ++e) {
    zero_prefix_[e] = zero_prefix_[e - 1] + kernel_.LogWeight(e, 0);
  }
  forward_.assign(m_ * gaps_, kNegativeInfinity);
  run_start_.assign(m_ * gaps_, kNegativeInfinity);

  // Gaps in increasing order: B(s, i) needs F(s - 1, i') for i' < i only.
  // The kernel of output s rises with the number d of records since output
  // s - 1 up to d = width_s (its target's floor) and falls after: a sliding
  // window over the last width_s gaps and a running prefix before them.
  const double slope = kernel_.slope;
  std::vector<size_t> widths(m_, 0);
  for (size_t s = 1; s < m_; ++s) {
    const double target = kernel_.targets[s];
    widths[s] = target >= 1 ? static_cast<size_t>(std::floor(target)) : 0;
  }
  std::vector<SlidingLogSum> windows(m_);
  std::vector<double> scratch(m_);
  std::vector<double> prefixes(m_, kNegativeInfinity);
  for (size_t i = 0; i < gaps_; ++i) {
    const double x = static_cast<double>(i);
    run_start_[i * m_] = kernel_.LogWeight(0, x);  // output 0 after i records
    for (size_t s = 1; s < m_; ++s) {
      const size_t width = widths[s];
      if (i >= width + 1) {
        const size_t leaving = i - width - 1;
        prefixes[s] =
            LogAdd(prefixes[s], Forward(s - 1, leaving) +
                                    slope * static_cast<double>(leaving));
      }
      if (width > 0 && i >= 1) {
        windows[s].Push(Forward(s - 1, i - 1) - slope * (x - 1));
        if (i >= width + 1) windows[s].Pop();
      }
      const double target = kernel_.targets[s];
      double total = slope * (target - x) + prefixes[s];
      if (width > 0)
        total = LogAdd(total, slope * (x - target) + windows[s].Sum());
      run_start_[i * m_ + s] = total - zero_prefix_[s];
    }

    // F(e, i): outputs s..e share gap i for some s <= e.
    const std::vector<double> counts = RunLogCounts(i);
    std::vector<double>& terms = scratch;
    if (counts[1] == kNegativeInfinity) continue;  // empty gap
    for (size_t e = 0; e < m_; ++e) {
      double top = kNegativeInfinity;
      for (size_t s = 0; s <= e; ++s) {
        terms[s] = RunStart(s, i) + counts[e - s + 1];
        top = std::max(top, terms[s]);
      }
      if (top == kNegativeInfinity) continue;
      // Terms below e^-kNegligibleTerm of the largest cannot change the sum
      // in double precision (m of them add < 2^-60 relative); skipping their
      // exp() changes no result and saves most of the time.
      double sum = 0;
      for (size_t s = 0; s <= e; ++s) {
        if (terms[s] > top - kNegligibleTerm) sum += std::exp(terms[s] - top);
      }
      forward_[i * m_ + e] = zero_prefix_[e] + top + std::log(sum);
    }
  }

  double total = kNegativeInfinity;
  for (size_t i = 0; i < gaps_; ++i) {
    total = LogAdd(total,
                   Forward(m_ - 1, i) +
                       kernel_.LogWeight(m_, static_cast<double>(count - i)));
  }
  log_normaliser_ = total;
}

std::vector<int64_t> JointSampler::Sample(RandomSource& rng) const {
  const size_t count = gaps_ - 1;
  std::vector<double> weights(gaps_);
  for (size_t i = 0; i < gaps_; ++i) {
    weights[i] = Forward(m_ - 1, i) +
                 kernel_.LogWeight(m_, static_cast<double>(count - i));
  }
  size_t gap = SampleLogWeights(weights, rng);
  std::vector<int64_t> points(m_);
  size_t e = m_ - 1;
  while (true) {
    // Which outputs s..e share this gap.
    const std::vector<double> counts = RunLogCounts(gap);
    std::vector<double> starts(e + 1);
    for (size_t s = 0; s <= e; ++s) {
      starts[s] = RunStart(s, gap) + counts[e - s + 1];
    }
    const size_t s = SampleLogWeights(starts, rng);
    // A uniform non-decreasing (e - s + 1)-tuple of the gap's points: a
    // uniform subset of size k of size + k - 1 slots ("stars and bars").
    const uint64_t k = e - s + 1;
    const uint64_t slots =
        static_cast<uint64_t>(gaps_problem_.GapSize(gap)) + k - 1;
    std::set<uint64_t> chosen;
    for (uint64_t j = slots - k; j < slots; ++j) {  // Floyd's algorithm
      const uint64_t t = UniformInteger(rng, j + 1);
      chosen.insert(chosen.count(t) ? j : t);
    }
    uint64_t r = 0;
    for (uint64_t slot : chosen) {
      points[s + r] =
          gaps_problem_.GapStart(gap) + static_cast<int64_t>(slot - r);
      ++r;
    }
    if (s == 0) break;
    // The gap of output s - 1, before this one.
    std::vector<double> before(gap);
    for (size_t i = 0; i < gap; ++i) {
      before[i] = Forward(s - 1, i) +
                  kernel_.LogWeight(s, static_cast<double>(gap - i));
    }
    gap = SampleLogWeights(before, rng);
    e = s - 1;
  }
  return points;
}

double JointSampler::LogProbability(const std::vector<int64_t>& points) const {
  if (points.size() != m_) return kNegativeInfinity;
  double utility = 0;
  size_t previous_gap = 0;
  for (size_t j = 0; j < m_; ++j) {
    if (points[j] < 0 || points[j] > gaps_problem_.last_point ||
        (j > 0 && points[j] < points[j - 1])) {
      return kNegativeInfinity;
    }
    const size_t gap = gaps_problem_.GapOf(points[j]);
    utility += kernel_.LogWeight(j, static_cast<double>(gap - previous_gap));
    previous_gap = gap;
  }
  utility +=
      kernel_.LogWeight(m_, static_cast<double>(gaps_ - 1 - previous_gap));
  return utility - log_normaliser_;
}

}  // namespace dpq
