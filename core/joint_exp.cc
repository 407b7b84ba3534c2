#include "core/joint_exp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "core/bits.h"
#include "core/exact_exponential.h"
#include "core/exponential_quantile.h"
#include "core/prepare.h"

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

// Running log-sum-exp whose rounding grows like 2 sqrt(N), not N: values
// add into a block of `block` of them, and full blocks into the total, so
// any input reaches the sum through at most block + N / block + 1 log-adds
// (the chain JointRoundingBound counts).
class BlockedLogSum {
 public:
  explicit BlockedLogSum(size_t block = 1) : block_size_(block) {}
  void Add(double value) {
    block_ = LogAdd(block_, value);
    if (++in_block_ == block_size_) {
      total_ = LogAdd(total_, block_);
      block_ = kNegativeInfinity;
      in_block_ = 0;
    }
  }
  double Sum() const { return LogAdd(total_, block_); }
  void Clear() {
    total_ = block_ = kNegativeInfinity;
    in_block_ = 0;
  }

 private:
  size_t block_size_;
  size_t in_block_ = 0;
  double block_ = kNegativeInfinity;
  double total_ = kNegativeInfinity;
};

// log-sum-exp of a sliding window (first in, first out) with two stacks:
// amortised O(1) per push, pop and query, and no subtraction, so no
// cancellation. Both stacks' sums are blocked as in BlockedLogSum.
class SlidingLogSum {
 public:
  explicit SlidingLogSum(size_t block = 1)
      : block_size_(block), back_sum_(block) {}
  void Push(double value) {
    back_.push_back(value);
    back_sum_.Add(value);
  }
  void Pop() {
    if (front_sums_.empty()) Reverse();
    front_sums_.pop_back();
  }
  double Sum() const {
    return LogAdd(front_sums_.empty() ? kNegativeInfinity : front_sums_.back(),
                  back_sum_.Sum());
  }

 private:
  // Moves the back stack to the front, its oldest element on top, each entry
  // holding the log-sum of itself and everything newer: within its block
  // (a chain of at most block_size_), then with the blocks after it (one
  // more chain of at most size / block_size_).
  void Reverse() {
    const size_t size = back_.size();
    if (size == 0) return;
    std::vector<double> within(size);
    for (size_t j = size; j-- > 0;) {
      const bool block_end = j + 1 == size || (j + 1) % block_size_ == 0;
      within[j] = block_end ? back_[j] : LogAdd(within[j + 1], back_[j]);
    }
    front_sums_.assign(size, kNegativeInfinity);
    double after = kNegativeInfinity;  // the blocks after j's
    for (size_t start = (size - 1) / block_size_ * block_size_ + block_size_;
         start >= block_size_;) {
      start -= block_size_;
      const size_t end = std::min(start + block_size_, size);
      for (size_t j = start; j < end; ++j) {
        front_sums_[size - 1 - j] = LogAdd(within[j], after);
      }
      after = LogAdd(after, within[start]);
    }
    back_.clear();
    back_sum_.Clear();
  }

  size_t block_size_;
  std::vector<double> front_sums_;
  std::vector<double> back_;
  BlockedLogSum back_sum_;
};

// The block size of the forward pass's running sums for n records.
size_t BlockFor(size_t count) {
  return static_cast<size_t>(
      std::ceil(std::sqrt(static_cast<double>(count) + 2)));
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

JointKernel JointExpKernel(size_t count, const std::vector<double>& quantiles,
                           double epsilon) {
  JointKernel kernel;
  const double n = static_cast<double>(count);
  double previous = 0;
  for (double q : quantiles) {
    kernel.targets.push_back(n * (q - previous));
    previous = q;
  }
  kernel.targets.push_back(n * (1 - previous));
  // exp(epsilon u / (2 Delta)) with u = -1/2 sum |...| and Delta = 1 (1 +
  // 2^-16): a replaced record, which the record cap's subset needs (header).
  kernel.slope = epsilon / (4 * kSensitivitySafety);
  return kernel;
}

double JointSamplerBytes(size_t records, size_t quantiles) {
  const double gaps = static_cast<double>(records) + 1;
  const auto m = static_cast<double>(quantiles);
  // (Windows only for quantiles 1..m - 1: none for one quantile.)
  const double windows = quantiles > 1 ? 32 * (gaps + m) : 0;
  return 16 * m * gaps + windows + 8 * gaps +
         LogWeightDraw::ScratchBytes(gaps) + 256 * m + 65536;
}

size_t JointRecordCap(size_t quantiles, int64_t steps, double epsilon,
                      const JointKernelFor& kernel_for) {
  auto passes = [&](size_t n) {
    return CheckJointSize(n, quantiles).ok() &&
           CheckJointRounding(n, steps, kernel_for(n), epsilon).ok();
  };
  if (!passes(0)) return 0;
  if (passes(kMaxRecords)) return kMaxRecords;
  size_t low = 0;             // passes
  size_t high = kMaxRecords;  // does not
  while (high - low > 1) {
    const size_t middle = low + (high - low) / 2;
    (passes(middle) ? low : high) = middle;
  }
  return low;
}

Status CheckJointSize(size_t count, size_t quantiles) {
  const double entries =
      static_cast<double>(quantiles) * (static_cast<double>(count) + 1);
  if (entries > static_cast<double>(kMaxJointTableEntries)) {
    return Status(StatusCode::kTooLarge,
                  "joint mechanisms need m x (n + 1) <= 2^24 table entries");
  }
  if (entries * static_cast<double>(quantiles) >
      static_cast<double>(kMaxJointWork)) {
    return Status(StatusCode::kTooLarge,
                  "joint mechanisms take m^2 x (n + 1) steps, at most 2^29 "
                  "(about 2 s)");
  }
  return Status::Ok();
}

double JointMagnitudeBound(size_t count, int64_t steps,
                           const JointKernel& kernel) {
  const double n = static_cast<double>(count);
  const double m = static_cast<double>(kernel.targets.size() - 1);
  double targets = m + 1;
  for (double t : kernel.targets) targets += std::fabs(t);
  const double partial_tuples =
      (m + 1) * std::log(static_cast<double>(steps) + m + 2);
  return 2 * (partial_tuples + std::log(n + 2) +
              kernel.slope * (4 * n + 3 * targets + 4)) +
         64;
}

double JointRoundingReserve(double epsilon) {
  return std::max(epsilon / 256, std::min(epsilon / 2, std::ldexp(1.0, -20)));
}

double JointRoundingBound(size_t count, int64_t steps,
                          const JointKernel& kernel) {
  const double m = static_cast<double>(kernel.targets.size() - 1);
  const double largest = JointMagnitudeBound(count, steps, kernel);
  const double event = std::ldexp(largest + 256, -52);
  // Longest chain of log-adds through the blocked running sums, with
  // BlockFor's block size K >= sqrt(n + 2): 2 K + 4.
  const double chain = 2 * static_cast<double>(BlockFor(count)) + 4;
  const double per_level =
      (chain + 5 * m + 32) * event + m * std::ldexp(1.0, -86);
  return (m + 2) * per_level + 4 * event;
}

Status CheckJointRounding(size_t count, int64_t steps,
                          const JointKernel& kernel, double epsilon) {
  const double m = static_cast<double>(kernel.targets.size() - 1);
  const double loss =
      8 * (2 * m + 1) * JointRoundingBound(count + 1, steps, kernel);
  if (loss <= JointRoundingReserve(epsilon)) return Status::Ok();
  return Status(StatusCode::kTooLarge,
                "joint mechanisms certify their floating-point rounding, and "
                "the certified bound exceeds the budget's reserve for it");
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
  const size_t block = BlockFor(count);
  std::vector<SlidingLogSum> windows(m_, SlidingLogSum(block));
  std::vector<double> scratch(m_);
  std::vector<BlockedLogSum> prefixes(m_, BlockedLogSum(block));
  for (size_t i = 0; i < gaps_; ++i) {
    const double x = static_cast<double>(i);
    run_start_[i * m_] = kernel_.LogWeight(0, x);  // output 0 after i records
    for (size_t s = 1; s < m_; ++s) {
      const size_t width = widths[s];
      if (i >= width + 1) {
        const size_t leaving = i - width - 1;
        prefixes[s].Add(Forward(s - 1, leaving) +
                        slope * static_cast<double>(leaving));
      }
      if (width > 0 && i >= 1) {
        windows[s].Push(Forward(s - 1, i - 1) - slope * (x - 1));
        if (i >= width + 1) windows[s].Pop();
      }
      const double target = kernel_.targets[s];
      double total = slope * (target - x) + prefixes[s].Sum();
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
  BitReader bits(rng);
  return Sample(bits);
}

double JointSampler::LargestTableMagnitude() const {
  double largest = 0;
  for (const std::vector<double>* table : {&forward_, &run_start_}) {
    for (double v : *table) {
      if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
    }
  }
  return largest;
}

std::vector<int64_t> JointSampler::Sample(BitReader& bits, int headroom) const {
  const size_t count = gaps_ - 1;
  LogWeightDraw draw;
  std::vector<double> weights(gaps_);
  for (size_t i = 0; i < gaps_; ++i) {
    weights[i] = Forward(m_ - 1, i) +
                 kernel_.LogWeight(m_, static_cast<double>(count - i));
  }
  size_t gap = draw.Draw(weights, bits, headroom);
  std::vector<int64_t> points(m_);
  size_t e = m_ - 1;
  while (true) {
    // Which outputs s..e share this gap.
    const std::vector<double> counts = RunLogCounts(gap);
    std::vector<double> starts(e + 1);
    for (size_t s = 0; s <= e; ++s) {
      starts[s] = RunStart(s, gap) + counts[e - s + 1];
    }
    const size_t s = draw.Draw(starts, bits, headroom);
    // A uniform non-decreasing (e - s + 1)-tuple of the gap's points: a
    // uniform subset of size k of size + k - 1 slots ("stars and bars").
    const uint64_t k = e - s + 1;
    const uint64_t slots =
        static_cast<uint64_t>(gaps_problem_.GapSize(gap)) + k - 1;
    std::set<uint64_t> chosen;
    for (uint64_t j = slots - k; j < slots; ++j) {  // Floyd's algorithm
      const uint64_t t =
          static_cast<uint64_t>(UniformBits(bits, Uint128{j} + 1));
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
    gap = draw.Draw(before, bits, headroom);
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
