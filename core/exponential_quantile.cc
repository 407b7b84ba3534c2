#include "core/exponential_quantile.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace dpq {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

double LogAdd(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegativeInfinity) return a;
  return a + std::log1p(std::exp(b - a));
}

// A piece of the output range with one formula for its mass: empty grid
// points [first, last] (records == 0) standing for rank `below`, or one
// occupied point `first` holding `records` records above `below` others.
struct Segment {
  int64_t first = 0;
  int64_t last = 0;
  size_t below = 0;
  size_t records = 0;
  double log_mass = kNegativeInfinity;  // in units of grid points
  size_t chosen_split = 0;  // split form: the sub-gap drawn inside the point
};

// Walks the segments of a problem from one record index outward. Upward
// segments start at `next_point` with records [index, n) still ahead;
// downward ones end at `next_point` with records [0, index) still ahead.
class SegmentWalker {
 public:
  SegmentWalker(const QuantileProblem& problem, bool upward, size_t index,
                int64_t next_point)
      : p_(problem), upward_(upward), index_(index), next_point_(next_point) {}

  bool done() const {
    return upward_ ? next_point_ > p_.last_point : next_point_ < p_.first_point;
  }
  // Grid points not yet walked.
  double points_left() const {
    return static_cast<double>(upward_ ? p_.last_point - next_point_ + 1
                                       : next_point_ - p_.first_point + 1);
  }
  // The rank every remaining output is at least this far from: the rank of
  // the next gap, nearest to the target of all that remain.
  size_t next_rank() const { return index_; }

  // The next segment (possibly an empty gap of size 0, which has no mass).
  Segment Next() {
    Segment s;
    const size_t n = p_.count;
    if (upward_) {
      // The gap up to the next record's point, then that point.
      const int64_t gap_end = index_ < n
                                  ? static_cast<int64_t>(p_.cells[index_]) - 1
                                  : p_.last_point;
      if (gap_ && next_point_ <= gap_end) {
        s.first = next_point_;
        s.last = gap_end;
        s.below = index_;
        next_point_ = gap_end + 1;
        gap_ = false;
        return s;
      }
      gap_ = true;
      if (index_ >= n) {  // nothing left: an empty final gap
        next_point_ = p_.last_point + 1;
        s.first = 1;
        s.last = 0;
        return s;
      }
      const double cell = p_.cells[index_];
      const size_t end = static_cast<size_t>(
          std::upper_bound(p_.cells + index_, p_.cells + n, cell) - p_.cells);
      s.first = s.last = static_cast<int64_t>(cell);
      s.below = index_;
      s.records = end - index_;
      index_ = end;
      next_point_ = s.first + 1;
      return s;
    }
    const int64_t gap_start =
        index_ > 0 ? static_cast<int64_t>(p_.cells[index_ - 1]) + 1
                   : p_.first_point;
    if (gap_ && gap_start <= next_point_) {
      s.first = gap_start;
      s.last = next_point_;
      s.below = index_;
      next_point_ = gap_start - 1;
      gap_ = false;
      return s;
    }
    gap_ = true;
    if (index_ == 0) {
      next_point_ = p_.first_point - 1;
      s.first = 1;
      s.last = 0;
      return s;
    }
    const double cell = p_.cells[index_ - 1];
    const size_t start = static_cast<size_t>(
        std::lower_bound(p_.cells, p_.cells + index_, cell) - p_.cells);
    s.first = s.last = static_cast<int64_t>(cell);
    s.below = start;
    s.records = index_ - start;
    index_ = start;
    next_point_ = s.first - 1;
    return s;
  }

 private:
  const QuantileProblem& p_;
  bool upward_;
  size_t index_;
  int64_t next_point_;
  bool gap_ = true;  // the next segment is the gap (then the point after it)
};

// Sub-gaps of an occupied point with `records` records, each on an
// independent uniform sub-point of K: calls f(h, size) for h = records down
// to 0, sub-gap h holding the sub-points with exactly h of the point's
// records before them. Sorted uniforms are drawn top-down as sequential
// order statistics (U_(i) = U_(i+1) V^(1/i)), so nothing is stored; floor(K U)
// of continuous uniforms are independent uniform sub-points.
template <typename F>
void ForEachSubGap(uint64_t sub_points, size_t records, RandomSource& rng,
                   F&& f) {
  const double k = static_cast<double>(sub_points);
  double position_above = k - 1;  // p_(records + 1): the top sentinel
  double uniform = 1.0;
  for (size_t i = records; i >= 1; --i) {
    uniform *= std::pow(UniformOpenDouble(rng), 1.0 / static_cast<double>(i));
    const double position = std::min(k - 1, std::floor(uniform * k));
    if (!f(i, position_above - position)) return;
    position_above = position;
  }
  f(0, position_above + 1);
}

}  // namespace

double QuantileSensitivity(double q) {
  return std::max(q, 1 - q) * kSensitivitySafety;
}

size_t QuantileProblem::Below(int64_t point) const {
  return static_cast<size_t>(
      std::lower_bound(cells, cells + count, static_cast<double>(point)) -
      cells);
}

size_t QuantileProblem::AtOrBelow(int64_t point) const {
  return static_cast<size_t>(
      std::upper_bound(cells, cells + count, static_cast<double>(point)) -
      cells);
}

double QuantileProblem::Distance(size_t low, size_t high) const {
  // q n = product + error exactly (fma); compare with the integers exactly.
  const double n = static_cast<double>(count);
  const double product = quantile * n;
  const double error = std::fma(quantile, n, -product);
  const double lo = static_cast<double>(low);
  const double hi = static_cast<double>(high);
  if (product < lo || (product == lo && error < 0)) {
    return (lo - product) - error;
  }
  if (product > hi || (product == hi && error > 0)) {
    return (product - hi) + error;
  }
  return 0;
}

ExponentialQuantileSampler::ExponentialQuantileSampler(double epsilon,
                                                       uint64_t sub_points)
    : epsilon_(epsilon), sub_points_(std::max<uint64_t>(1, sub_points)) {}

int64_t ExponentialQuantileSampler::SamplePoint(const QuantileProblem& problem,
                                                RandomSource& rng) const {
  return Sample<false>(problem, rng).point;
}

SplitPoint ExponentialQuantileSampler::SampleSplit(
    const QuantileProblem& problem, RandomSource& rng) const {
  return Sample<true>(problem, rng);
}

template <bool kSplit>
SplitPoint ExponentialQuantileSampler::Sample(const QuantileProblem& problem,
                                              RandomSource& rng) const {
  const double scale = epsilon_ / (2 * QuantileSensitivity(problem.quantile));
  const size_t n = problem.count;
  const double log_sub_points = std::log(static_cast<double>(sub_points_));

  // The mass of a segment; in the split form an occupied point also draws
  // its sub-gaps and, given that the point is chosen, the sub-gap.
  auto measure = [&](Segment* s) {
    if (s->first > s->last) return;
    if (s->records == 0) {
      s->log_mass = std::log(static_cast<double>(s->last - s->first + 1)) -
                    scale * problem.Distance(s->below, s->below);
      return;
    }
    if (!kSplit) {
      s->log_mass = -scale * problem.Distance(s->below, s->below + s->records);
      return;
    }
    // In log space (no weight underflows, whatever epsilon); a weighted
    // reservoir picks the sub-gap in the same pass: sub-gap h replaces the
    // pick with probability w_h / (w_h + the weights before it).
    double log_total = kNegativeInfinity;
    ForEachSubGap(sub_points_, s->records, rng, [&](size_t h, double size) {
      if (size > 0) {
        const double log_weight =
            std::log(size) -
            problem.Distance(s->below + h, s->below + h) * scale;
        log_total = LogAdd(log_total, log_weight);
        if (std::log(UniformOpenDouble(rng)) < log_weight - log_total) {
          s->chosen_split = h;
        }
      }
      return true;
    });
    s->log_mass = log_total - log_sub_points;
  };

  if (n == 0) {
    const uint64_t points =
        static_cast<uint64_t>(problem.last_point - problem.first_point + 1);
    return {
        problem.first_point + static_cast<int64_t>(UniformInteger(rng, points)),
        0};
  }

  // Start at the record of rank floor(q n), clamped: its point's run and the
  // runs above go up, everything below goes down.
  const double product = problem.quantile * static_cast<double>(n);
  const size_t start = static_cast<size_t>(
      std::min(static_cast<double>(n - 1), std::max(0.0, std::floor(product))));
  const double start_cell = problem.cells[start];
  const size_t run_begin = problem.Below(static_cast<int64_t>(start_cell));
  const int64_t start_point = static_cast<int64_t>(start_cell);
  SegmentWalker walkers[2] = {
      SegmentWalker(problem, true, run_begin, start_point),
      SegmentWalker(problem, false, run_begin, start_point - 1)};

  std::vector<Segment> visited;
  double best = kNegativeInfinity;
  // Visit each direction until what remains is bounded far below the best.
  for (SegmentWalker& walker : walkers) {
    while (!walker.done()) {
      const double bound =
          std::log(walker.points_left()) -
          scale * problem.Distance(walker.next_rank(), walker.next_rank());
      if (bound < best - tail_log_margin_) break;
      Segment s = walker.Next();
      measure(&s);
      if (s.log_mass == kNegativeInfinity) continue;
      best = std::max(best, s.log_mass);
      visited.push_back(s);
    }
  }
  // What is left of each direction: an upper bound on its mass (slightly
  // raised for the roundings of the sum), expanded only when drawn.
  double tail_bound[2];
  std::vector<Segment> tail[2];
  bool expanded[2] = {false, false};
  for (int d = 0; d < 2; ++d) {
    tail_bound[d] = walkers[d].done()
                        ? kNegativeInfinity
                        : std::log(walkers[d].points_left()) + 1e-9 -
                              scale * problem.Distance(walkers[d].next_rank(),
                                                       walkers[d].next_rank());
  }

  auto finish = [&](const Segment& s) -> SplitPoint {
    if (s.records > 0)
      return {s.first, s.below + (kSplit ? s.chosen_split : 0)};
    const uint64_t size = static_cast<uint64_t>(s.last - s.first + 1);
    return {s.first + static_cast<int64_t>(UniformInteger(rng, size)), s.below};
  };

  // Rejection sampling: propose a visited segment or a tail by mass; a tail
  // is visited in full and one of its segments accepted with probability
  // (its mass) / (the tail's bound), else the proposal is redrawn.
  for (;;) {
    double total = 0;
    for (const Segment& s : visited) total += std::exp(s.log_mass - best);
    const double tail_mass[2] = {std::exp(tail_bound[0] - best),
                                 std::exp(tail_bound[1] - best)};
    const double threshold =
        UniformDouble(rng) * (total + tail_mass[0] + tail_mass[1]);
    double cumulative = 0;
    for (const Segment& s : visited) {
      cumulative += std::exp(s.log_mass - best);
      if (cumulative > threshold) return finish(s);
    }
    int d = cumulative + tail_mass[0] > threshold ? 0 : 1;
    if (tail_mass[d] == 0) {
      // A rounding shortfall: the last visited segment, or the other tail.
      if (!visited.empty() && tail_mass[1 - d] == 0)
        return finish(visited.back());
      d = 1 - d;
    }
    if (!expanded[d]) {
      while (!walkers[d].done()) {
        Segment s = walkers[d].Next();
        measure(&s);
        if (s.log_mass != kNegativeInfinity) tail[d].push_back(s);
      }
      expanded[d] = true;
    }
    const double accept = UniformDouble(rng) * tail_mass[d];
    double inside = 0;
    for (const Segment& s : tail[d]) {
      inside += std::exp(s.log_mass - best);
      if (inside > accept) return finish(s);
    }
  }
}

double PointLogProbability(const QuantileProblem& problem, double epsilon,
                           int64_t point) {
  if (point < problem.first_point || point > problem.last_point) {
    return kNegativeInfinity;
  }
  const double scale = epsilon / (2 * QuantileSensitivity(problem.quantile));
  auto log_weight = [&](int64_t v) {
    return -scale * problem.Distance(problem.Below(v), problem.AtOrBelow(v));
  };
  // Every segment, bottom to top.
  SegmentWalker walker(problem, true, 0, problem.first_point);
  double normaliser = kNegativeInfinity;
  while (!walker.done()) {
    const Segment s = walker.Next();
    if (s.first > s.last) continue;
    const double size = static_cast<double>(s.last - s.first + 1);
    normaliser = LogAdd(normaliser, std::log(size) + log_weight(s.first));
  }
  return log_weight(point) - normaliser;
}

std::map<std::pair<int64_t, uint64_t>, double> SplitProbabilities(
    const QuantileProblem& problem, double epsilon, uint64_t sub_points,
    bool by_sub_point) {
  const double scale = epsilon / (2 * QuantileSensitivity(problem.quantile));
  const size_t n = problem.count;
  std::map<std::pair<int64_t, uint64_t>, double> result;
  std::vector<uint64_t> jitter(n, 0);
  double jitters =
      std::pow(static_cast<double>(sub_points), static_cast<double>(n));
  std::function<void(size_t)> each = [&](size_t i) {
    if (i < n) {
      for (uint64_t s = 0; s < sub_points; ++s) {
        jitter[i] = s;
        each(i + 1);
      }
      return;
    }
    // One jitter: the plain exponential mechanism over every sub-point.
    std::vector<std::pair<std::pair<int64_t, uint64_t>, double>> outputs;
    double top = kNegativeInfinity;
    for (int64_t v = problem.first_point; v <= problem.last_point; ++v) {
      for (uint64_t s = 0; s < sub_points; ++s) {
        size_t rank = 0;
        for (size_t r = 0; r < n; ++r) {
          const double cell = problem.cells[r];
          rank += cell < static_cast<double>(v) ||
                  (cell == static_cast<double>(v) && jitter[r] < s);
        }
        const double log_weight = -scale * problem.Distance(rank, rank);
        top = std::max(top, log_weight);
        outputs.push_back({{v, by_sub_point ? s : rank}, log_weight});
      }
    }
    double total = 0;
    for (const auto& o : outputs) total += std::exp(o.second - top);
    for (const auto& o : outputs) {
      result[o.first] += std::exp(o.second - top) / total / jitters;
    }
  };
  each(0);
  return result;
}

}  // namespace dpq
