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

// The end of the run of `cell` that starts at index `begin` of cells[0, n):
// galloping, so a run of length r costs O(log r), not O(log n).
size_t RunEnd(const double* cells, size_t begin, size_t n, double cell) {
  size_t step = 1;
  size_t known = begin;  // cells[known] == cell
  while (known + step < n && cells[known + step] == cell) {
    known += step;
    step *= 2;
  }
  return static_cast<size_t>(
      std::upper_bound(cells + known, cells + std::min(n, known + step), cell) -
      cells);
}

// The start of the run of `cell` that ends just before index `end`.
size_t RunStart(const double* cells, size_t end, double cell) {
  size_t step = 1;
  size_t known = end - 1;  // cells[known] == cell
  while (known >= step && cells[known - step] == cell) {
    known -= step;
    step *= 2;
  }
  const size_t from = known >= step ? known - step : 0;
  return static_cast<size_t>(
      std::lower_bound(cells + from, cells + known, cell) - cells);
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
  // Split form, one record: its sub-point; the sub-gap is drawn only if the
  // point is chosen. -1 otherwise.
  double lone_position = -1;
  double weight = 0;  // in a band: the mass relative to the band's base
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
      const size_t end = RunEnd(p_.cells, index_, n, cell);
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
    const size_t start = RunStart(p_.cells, index_, cell);
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
    f(i, position_above - position);
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
  const double sub_points = static_cast<double>(sub_points_);
  const double log_sub_points = std::log(sub_points);

  if (n == 0) {
    const uint64_t points =
        static_cast<uint64_t>(problem.last_point - problem.first_point + 1);
    return {
        problem.first_point + static_cast<int64_t>(UniformInteger(rng, points)),
        0};
  }

  // A uniform sub-point in [0, K): with K = 2^32, half of a random word
  // (the other half is kept for the next one).
  uint64_t spare_bits = 0;
  bool has_spare = false;
  auto sub_point = [&]() -> double {
    if (sub_points_ != (uint64_t{1} << 32)) {
      return static_cast<double>(UniformInteger(rng, sub_points_));
    }
    if (has_spare) {
      has_spare = false;
      return static_cast<double>(spare_bits >> 32);
    }
    spare_bits = rng.NextUint64();
    has_spare = true;
    return static_cast<double>(spare_bits & 0xffffffffu);
  };

  // The exact log mass of any segment; in the split form an occupied point
  // also draws its sub-gaps and, for more than one record, picks the
  // sub-gap it would release in the same pass.
  auto measure = [&](Segment* s) {
    if (s->records == 0) {
      s->log_mass = std::log(static_cast<double>(s->last - s->first + 1)) -
                    scale * problem.Distance(s->below, s->below);
      return;
    }
    if (!kSplit) {
      s->log_mass = -scale * problem.Distance(s->below, s->below + s->records);
      return;
    }
    if (s->records == 1) {
      // Sub-gaps (p + 1) and (K - 1 - p) at ranks below and below + 1; the
      // sub-gap itself is drawn only if the point is chosen.
      const double position = sub_point();
      const double d0 = scale * problem.Distance(s->below, s->below);
      const double d1 = scale * problem.Distance(s->below + 1, s->below + 1);
      const double nearest = std::min(d0, d1);
      const double mass = (position + 1) * std::exp(nearest - d0) +
                          (sub_points - 1 - position) * std::exp(nearest - d1);
      s->lone_position = position;
      s->log_mass = std::log(mass) - log_sub_points - nearest;
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
    });
    s->log_mass = log_total - log_sub_points;
  };

  // The run holding the record of rank floor(q n) (clamped) holds the
  // target; it is measured on its own. Above it distances grow with the
  // rank, below it they grow as the rank falls.
  const double product = problem.quantile * static_cast<double>(n);
  const size_t start = static_cast<size_t>(
      std::min(static_cast<double>(n - 1), std::max(0.0, std::floor(product))));
  const double start_cell = problem.cells[start];
  const int64_t start_point = static_cast<int64_t>(start_cell);
  const size_t run_begin = problem.Below(start_point);
  const size_t run_end = RunEnd(problem.cells, run_begin, n, start_cell);
  Segment start_run;
  start_run.first = start_run.last = start_point;
  start_run.below = run_begin;
  start_run.records = run_end - run_begin;
  measure(&start_run);

  // Each direction in bands: a run at distance d0 + o from the target
  // (o a whole number of ranks from the direction's first rank r0) weighs
  // (its size factor) decay^(o - band start) relative to its band's base
  // exp(-scale (d0 + band start)): multiply-adds from a table of powers of
  // exp(-scale), and one log per band.
  struct Band {
    double log_base;
    double mass;
    size_t begin;
    size_t end;
  };
  std::vector<Segment> segments;
  segments.reserve(256);
  std::vector<Band> bands;
  const double ratio = std::exp(-scale);
  std::vector<double> decay = {1.0};
  auto power = [&](size_t i) {
    while (decay.size() <= i) decay.push_back(decay.back() * ratio);
    return decay[i];
  };
  const size_t width = static_cast<size_t>(
      std::max(1.0, std::min(4096.0, std::floor(30.0 / scale))));

  SegmentWalker walkers[2] = {
      SegmentWalker(problem, true, run_end, start_point + 1),
      SegmentWalker(problem, false, run_begin, start_point - 1)};
  const size_t first_rank[2] = {run_end, run_begin};
  double best = start_run.log_mass;
  for (int d = 0; d < 2; ++d) {
    const bool up = d == 0;
    const size_t r0 = first_rank[d];
    const double d0 = problem.Distance(r0, r0);
    size_t band_start = 0;
    bool open = false;
    SegmentWalker& walker = walkers[d];
    // Stop once log(points left) - scale d < best - margin; with all points
    // of the range in place of those left (a looser bound, no log per run).
    const double log_points = std::log(walker.points_left());
    double stop_distance = (log_points - best + tail_log_margin_) / scale;
    while (!walker.done()) {
      if (problem.Distance(walker.next_rank(), walker.next_rank()) >
          stop_distance) {
        break;
      }
      Segment s = walker.Next();
      if (s.first > s.last) continue;
      size_t offset;
      double weight;
      if (s.records == 0) {
        offset = up ? s.below - r0 : r0 - s.below;
        weight = static_cast<double>(s.last - s.first + 1);
      } else if (!kSplit) {
        offset = up ? s.below - r0 : r0 - (s.below + s.records);
        weight = 1;
      } else if (s.records == 1) {
        // Sub-gaps at offsets o (the nearer rank) and o + 1.
        offset = up ? s.below - r0 : r0 - (s.below + 1);
        const double position = sub_point();
        const double below_size = position + 1;
        const double above_size = sub_points - 1 - position;
        weight = ((up ? below_size : above_size) +
                  (up ? above_size : below_size) * ratio) /
                 sub_points;
        s.lone_position = position;
      } else {
        offset = up ? s.below - r0 : r0 - (s.below + s.records);
        measure(&s);
        weight =
            std::exp(s.log_mass + scale * (d0 + static_cast<double>(offset)));
      }
      if (!open || offset >= band_start + width) {
        if (open) {
          const Band& last = bands.back();
          best = std::max(best, std::log(last.mass) + last.log_base);
          stop_distance = (log_points - best + tail_log_margin_) / scale;
        }
        band_start = offset - offset % width;
        bands.push_back({-scale * (d0 + static_cast<double>(band_start)), 0,
                         segments.size(), segments.size()});
        open = true;
      }
      s.weight = weight * power(offset - band_start);
      segments.push_back(s);
      bands.back().mass += s.weight;
      bands.back().end = segments.size();
    }
  }
  // What is left of each direction: an upper bound on its mass (slightly
  // raised for the roundings of the sum), visited only when drawn.
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
    if (s.lone_position >= 0) {
      // The lone record's sub-gap, by its weight given the point, relative
      // to the nearer rank's so that neither underflows to a tie of zeros.
      const double d0 = scale * problem.Distance(s.below, s.below);
      const double d1 = scale * problem.Distance(s.below + 1, s.below + 1);
      const double nearest = std::min(d0, d1);
      const double w0 = (s.lone_position + 1) * std::exp(nearest - d0);
      const double w1 =
          (sub_points - 1 - s.lone_position) * std::exp(nearest - d1);
      const bool after = UniformDouble(rng) * (w0 + w1) >= w0;
      return {s.first, s.below + (after ? 1 : 0)};
    }
    if (s.records > 0) {
      return {s.first, s.below + (kSplit ? s.chosen_split : 0)};
    }
    const uint64_t size = static_cast<uint64_t>(s.last - s.first + 1);
    return {s.first + static_cast<int64_t>(UniformInteger(rng, size)), s.below};
  };

  // Proposals: the start run, the bands, the two tails, by mass. A band
  // gives one of its runs by inverse CDF; a tail is visited in full and one
  // of its runs accepted with probability (its mass) / (the tail's bound),
  // else the proposal is redrawn: rejection sampling, exact for any bound.
  std::vector<double> log_masses = {start_run.log_mass, tail_bound[0],
                                    tail_bound[1]};
  for (const Band& band : bands) {
    log_masses.push_back(std::log(band.mass) + band.log_base);
  }
  double top = kNegativeInfinity;
  for (double l : log_masses) top = std::max(top, l);
  for (;;) {
    double total = 0;
    for (double l : log_masses) total += std::exp(l - top);
    const double threshold = UniformDouble(rng) * total;
    double cumulative = 0;
    size_t item = log_masses.size() - 1;
    for (size_t i = 0; i < log_masses.size(); ++i) {
      const double mass = std::exp(log_masses[i] - top);
      if (mass > 0) item = i;  // a rounding shortfall: the last possible one
      cumulative += mass;
      if (cumulative > threshold) break;
    }
    if (item == 0) return finish(start_run);
    if (item >= 3) {
      const Band& band = bands[item - 3];
      const double inside = UniformDouble(rng) * band.mass;
      double running = 0;
      size_t chosen = band.end - 1;
      for (size_t i = band.begin; i < band.end; ++i) {
        running += segments[i].weight;
        if (running > inside) {
          chosen = i;
          break;
        }
      }
      return finish(segments[chosen]);
    }
    const int d = static_cast<int>(item) - 1;
    if (!expanded[d]) {
      while (!walkers[d].done()) {
        Segment s = walkers[d].Next();
        if (s.first > s.last) continue;
        measure(&s);
        if (s.log_mass != kNegativeInfinity) tail[d].push_back(s);
      }
      expanded[d] = true;
    }
    const double accept = UniformDouble(rng) * std::exp(tail_bound[d] - top);
    double inside = 0;
    for (const Segment& s : tail[d]) {
      inside += std::exp(s.log_mass - top);
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
