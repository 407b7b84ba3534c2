#include "core/intervals.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "core/discrete_noise.h"
#include "core/exact_exponential.h"
#include "core/exponential_quantile.h"
#include "core/minimize.h"

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

StatusOr<AggTreeShape> IntervalTreeShape(const OutputGrid& grid) {
  return AggTreeShapeForPoints(grid.steps() + 1, 0, 0, false);
}

namespace {

// The nodes (level, index) of point j's noisy prefix: at each level the
// siblings before j's ancestor, and leaf j itself.
std::vector<std::pair<int, int64_t>> PrefixNodes(const AggTreeShape& shape,
                                                 int64_t j) {
  std::vector<std::pair<int, int64_t>> nodes = {{0, j}};
  int64_t index = j;
  for (int level = 0; level < shape.height; ++level) {
    const int64_t first_sibling = index - index % shape.branching;
    for (int64_t i = first_sibling; i < index; ++i) nodes.push_back({level, i});
    index /= shape.branching;
  }
  return nodes;
}

// How many of e(j)'s noises have coefficient 1 (in j's prefix only), 1 - q
// (in both prefixes) and -q (in N^'s only): every distinct triple over the
// grid's points. Public: the shape and the grid.
std::set<std::tuple<int, int, int>> CoefficientCounts(const AggTreeShape& shape,
                                                      const OutputGrid& grid) {
  const int64_t last = grid.steps();
  const auto total = PrefixNodes(shape, last);
  const std::set<std::pair<int, int64_t>> in_total(total.begin(), total.end());
  std::set<std::tuple<int, int, int>> counts;
  for (int64_t j = 0; j <= last; ++j) {
    int only = 0;
    int both = 0;
    for (const auto& node : PrefixNodes(shape, j)) {
      (in_total.count(node) > 0 ? both : only) += 1;
    }
    counts.insert({only, both, static_cast<int>(total.size()) - both});
  }
  // Only the triples no other one bounds in all three counts: each count
  // only raises the bound (every log-MGF term is >= 0), so a dominated
  // triple's bound at the dominating one's lambda is below that one's, and
  // the worst over the rest is valid for it too.
  std::set<std::tuple<int, int, int>> maximal;
  for (const auto& a : counts) {
    bool dominated = false;
    for (const auto& b : counts) {
      if (a != b && std::get<0>(b) >= std::get<0>(a) &&
          std::get<1>(b) >= std::get<1>(a) &&
          std::get<2>(b) >= std::get<2>(a)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) maximal.insert(a);
  }
  return maximal;
}

// log E[exp(u Z)] for the discrete Laplace with P(Z = z) proportional to
// p^|z|, |u| < -log p.
double LaplaceLogMgf(double p, double u) {
  return 2 * std::log1p(-p) - std::log1p(-p * std::exp(u)) -
         std::log1p(-p * std::exp(-u));
}

}  // namespace

namespace {

// The Chernoff offset for coefficients 1 (`only` noises), `inner` (`both`)
// and `outer` (`total_only`), each |coefficient| an upper bound: the
// noise's moment generating function grows with |u|, so larger ones only
// widen the bound.
double ChernoffTreeOffset(int only, int both, int total_only, double inner,
                          double outer, const CountNoise& noise,
                          double log_inverse) {
  const double parameter = noise.parameter.Value() * (1 + 1e-12);
  if (noise.kind == CountNoise::Kind::kGaussian) {
    // sigma-subgaussian: E e^{u Z} <= e^{u^2 sigma^2 / 2}.
    const double squares =
        only + both * inner * inner + total_only * outer * outer;
    return std::sqrt(2 * parameter * squares * log_inverse);
  }
  // P(e >= t) <= e^{-lambda t} E e^{lambda e} for every lambda in
  // (0, 1 / scale): any lambda gives a valid t. f(lambda) = (log E e^{lambda
  // e} + log(1 / beta)) / lambda falls then rises (its log-MGF is convex and
  // 0 at 0), so a golden-section search finds about its least value; any
  // point it returns is valid (45 steps leave 0.618^45, about 4e-10, of the
  // interval). (Both tails alike: the noise is symmetric.)
  const double p = std::exp(-1 / parameter);
  auto f = [&](double lambda) {
    return (only * LaplaceLogMgf(p, lambda) +
            both * LaplaceLogMgf(p, lambda * inner) +
            total_only * LaplaceLogMgf(p, lambda * outer) + log_inverse) /
           lambda;
  };
  return f(GoldenSectionMinimum(f, 0, (1 - 1e-9) / parameter, 45));
}

// Offsets cached per cell [i / 256, (i + 1) / 256) of q, each valid for the
// whole cell (coefficients 1 - i / 256 and (i + 1) / 256 bound 1 - q and q
// from above), the worst over the grid's coefficient counts.
class TreeOffsets {
 public:
  TreeOffsets(const AggTreeShape& shape, const OutputGrid& grid,
              const CountNoise& noise, double beta_half)
      : coefficients_(Coefficients(shape, grid)),
        noise_(noise),
        log_inverse_(-std::log(beta_half)),
        key_{shape.branching,
             shape.height,
             grid.steps(),
             noise.kind == CountNoise::Kind::kGaussian,
             noise.parameter.numerator,
             noise.parameter.denominator,
             beta_half,
             0} {}

  double For(double q) {
    const int cell = std::min(255, std::max(0, static_cast<int>(q * 256)));
    OffsetKey key = key_;
    key.cell = cell;
    std::map<OffsetKey, double>& cache = OffsetCache();
    const auto found = cache.find(key);
    if (found != cache.end()) return found->second;
    double worst = 0;
    for (const auto& [only, both, total_only] : coefficients_) {
      worst = std::max(
          worst, ChernoffTreeOffset(only, both, total_only, 1 - cell / 256.0,
                                    (cell + 1) / 256.0, noise_, log_inverse_));
    }
    // Against the logs' rounding: a hair wider, and one rank more.
    const double offset = worst * (1 + 1e-9) + 1;
    if (cache.size() >= kMaxCachedOffsets) cache.clear();
    cache.emplace(key, offset);
    return offset;
  }

 private:
  // Everything an offset depends on (all public): the tree, the grid, the
  // noise, beta and q's cell.
  struct OffsetKey {
    int branching;
    int height;
    int64_t steps;
    bool gaussian;
    uint64_t numerator;
    uint64_t denominator;
    double beta_half;
    int cell;
    bool operator<(const OffsetKey& o) const {
      return std::tie(branching, height, steps, gaussian, numerator,
                      denominator, beta_half, cell) <
             std::tie(o.branching, o.height, o.steps, o.gaussian, o.numerator,
                      o.denominator, o.beta_half, o.cell);
    }
  };
  static constexpr size_t kMaxCachedOffsets = 1 << 16;

  // Kept for the thread's later releases: a session's releases ask for the
  // same offsets again (a golden-section search per coefficient triple,
  // 0.15 ms a cell), and the triples are the grid's (1 ms to count).
  static std::map<OffsetKey, double>& OffsetCache() {
    thread_local std::map<OffsetKey, double> cache;
    return cache;
  }
  static const std::set<std::tuple<int, int, int>>& Coefficients(
      const AggTreeShape& shape, const OutputGrid& grid) {
    thread_local std::map<std::tuple<int, int, int64_t>,
                          std::set<std::tuple<int, int, int>>>
        cache;
    const auto key =
        std::make_tuple(shape.branching, shape.height, grid.steps());
    auto found = cache.find(key);
    if (found == cache.end()) {
      if (cache.size() >= 64) cache.clear();
      found = cache.emplace(key, CoefficientCounts(shape, grid)).first;
    }
    return found->second;
  }

  std::set<std::tuple<int, int, int>> coefficients_;
  CountNoise noise_;
  double log_inverse_;
  OffsetKey key_;
};

}  // namespace

std::vector<double> TreeIntervalOffsets(const AggTreeShape& shape,
                                        const OutputGrid& grid,
                                        const CountNoise& noise,
                                        const std::vector<double>& quantiles,
                                        double beta_half) {
  TreeOffsets offsets(shape, grid, noise, beta_half);
  std::vector<double> out;
  out.reserve(quantiles.size());
  for (const double q : quantiles) out.push_back(offsets.For(q));
  return out;
}

std::vector<std::vector<int64_t>> IntervalTreeCounts(
    const Runs& runs, const OutputGrid& release_grid, const OutputGrid& grid,
    const AggTreeShape& shape) {
  const auto b = static_cast<size_t>(shape.branching);
  size_t leaves = 1;
  for (int level = 0; level < shape.height; ++level) leaves *= b;
  std::vector<std::vector<int64_t>> counts;
  counts.emplace_back(leaves, 0);
  // A run's leaf (its value's point, mapped down) never decreases with it.
  CountRunsByLeaf(
      runs, leaves,
      [&](size_t i) {
        return static_cast<size_t>(
            grid.FloorPointOf(release_grid.ValueAt(runs.point(i))));
      },
      counts[0].data());
  for (int level = 1; level < shape.height; ++level) {
    const std::vector<int64_t>& below = counts.back();
    std::vector<int64_t> nodes(below.size() / b, 0);
    for (size_t i = 0; i < below.size(); ++i) nodes[i / b] += below[i];
    counts.push_back(std::move(nodes));
  }
  return counts;
}

Brackets TreeIntervals(const Runs& runs, const OutputGrid& release_grid,
                       const OutputGrid& grid, const AggTreeShape& shape,
                       const CountNoise& noise,
                       const std::vector<double>& quantiles,
                       const std::vector<double>& low_offsets,
                       const std::vector<double>& high_offsets,
                       RandomSource& rng) {
  const int64_t last = grid.steps();
  std::vector<std::vector<int64_t>> counts =
      IntervalTreeCounts(runs, release_grid, grid, shape);
  // Every node's noise (the mechanism); what follows is post-processing.
  for (std::vector<int64_t>& level : counts) noise.AddTo(&level, rng);
  std::vector<double> prefix(static_cast<size_t>(last) + 1);
  for (int64_t j = 0; j <= last; ++j) {
    double sum = 0;
    for (const auto& [level, index] : PrefixNodes(shape, j)) {
      sum += static_cast<double>(counts[level][static_cast<size_t>(index)]);
    }
    prefix[static_cast<size_t>(j)] = sum;
  }
  const double total = prefix.back();
  std::vector<double> high_envelope(prefix.size());  // max over i <= j
  std::vector<double> low_envelope(prefix.size());   // min over i >= j
  for (size_t j = 0; j < prefix.size(); ++j) {
    high_envelope[j] =
        j == 0 ? prefix[j] : std::max(high_envelope[j - 1], prefix[j]);
  }
  for (size_t j = prefix.size(); j-- > 0;) {
    low_envelope[j] = j + 1 == prefix.size()
                          ? prefix[j]
                          : std::min(low_envelope[j + 1], prefix[j]);
  }
  Brackets brackets;
  for (size_t i = 0; i < quantiles.size(); ++i) {
    const double q = quantiles[i];
    const auto low = std::upper_bound(
        high_envelope.begin(), high_envelope.end(), q * total - low_offsets[i]);
    const auto high = std::lower_bound(low_envelope.begin(), low_envelope.end(),
                                       q * total + high_offsets[i]);
    const int64_t low_point = std::min<int64_t>(
        last, static_cast<int64_t>(low - high_envelope.begin()));
    const int64_t high_point = std::min<int64_t>(
        last, static_cast<int64_t>(high - low_envelope.begin()) + 1);
    brackets.low.push_back(grid.ValueAt(low_point));
    brackets.high.push_back(grid.ValueAt(high_point));
  }
  return brackets;
}

}  // namespace dpq
