#include "core/aq.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "core/bits.h"
#include "core/privacy.h"

namespace dpq {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

double LogAdd(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegativeInfinity) return a;
  return a + std::log1p(std::exp(b - a));
}

// Extrapolating past released cuts: how many output points beyond a cut a
// node's shells keep their full mass. Public: a multiple of the points
// `spacing` between two released cuts times `ratio`, the quantile mass on
// the far side over the quantile mass between them. Past it the mass halves
// per shell, so with loose bounds a tail quantile of few records stays near
// the data instead of anywhere in the empty stretch to the bound. -1 (no
// reach) when the cuts coincide (an atom says nothing of the spread).
constexpr double kReachMargin = 4;
// With a reach, a public bound keeps its own point (an atom there is still
// found) at 2^-kBoundDropBits of its weight, and its shells decay at once:
// outputs at or next to a bound far from the data were the worst values.
constexpr int kBoundDropBits = 4;
// The least quantile mass of a node beside a bound that draws from the
// first look's bins rather than the endpoint shells. Public.
constexpr double kAqLookBinsMass = 0.25;

// The reach's shell for a node whose released end is `width` points from
// its public bound, or -1: also when the bound is within the reach, where
// the records may well run up to it (a top-coded atom beside the bound).
int Reach(int64_t spacing, double ratio, int64_t width) {
  if (spacing <= 0 || !(ratio > 0)) return -1;
  const double points = kReachMargin * static_cast<double>(spacing) * ratio;
  if (!(points < static_cast<double>(width))) return -1;
  return BitWidth(static_cast<uint64_t>(points) + 1) - 1;
}

// One node of Algorithm 1: quantiles [begin, end) on the records of ranks
// [lo, hi) of the release's runs (a node's records are a contiguous slice
// of the sorted records: a cut sends the first `split` left), `runs` the
// runs holding them (a view into the release's: its first run's before()
// reads 0 there, which QuantileProblem::Local clamps to lo as it does the
// true count, at most lo; so a node's searches cover its own runs), and points
// [first_point, last_point]; `low` and `high` are the original quantiles at
// the node's ends (0 and 1 at the root); `first_end` and `last_end` weigh
// its ends in the base measure (kReleasedEndWeight where an end is a
// released cut, kBoundEndWeight for a public bound). `budget` is the
// epsilon left for the node's subtree (per path), or every node's epsilon
// (per level).
struct Node {
  size_t begin;
  size_t end;
  double low;
  double high;
  int64_t first_point;
  int64_t last_point;
  Runs runs;
  uint64_t lo;
  uint64_t hi;
  uint32_t first_end;
  uint32_t last_end;
  double budget;
  AqBudgetSplit split;
  // Reach shells of the ends' measures (PointMeasure::Shells), -1 for none:
  // set where one end is a public bound and the other a released cut with
  // a further released cut beyond it (Reach below).
  int first_reach = -1;
  int last_reach = -1;
  // The first look (aq.h), public; nullptr or not found(): none.
  const AqLook* look = nullptr;

  size_t middle() const { return begin + (end - begin + 1) / 2 - 1; }
  bool leaf() const { return end - begin == 1; }
  // The node's epsilon. Per path: an equal share of what is left over the
  // levels of its own subtree (floor(log2 size) + 1), rounded down, so a
  // subtree shallower than its level's rest gets the rest.
  double epsilon() const {
    if (split == AqBudgetSplit::kPerLevel) return budget;
    return DivideDown(budget, ApproximateQuantilesLevels(end - begin));
  }
  // What the children have left, given epsilon(): never above the exact
  // difference.
  double ChildBudget(double own_epsilon) const {
    if (split == AqBudgetSplit::kPerLevel) return budget;
    return SubtractDown(budget, own_epsilon);
  }
  // `table` holds what the problem's measure reads for the look's factor:
  // the caller's, for as long as it uses the problem.
  QuantileProblem Problem(const std::vector<double>& quantiles,
                          PointMeasure::FactorTable* table) const {
    // Rescaling from the originals, not level by level, avoids compounding
    // rounding: (q - low) / (high - low) is the paper's repeated rescaling.
    QuantileProblem problem{
        runs,        lo,         hi,
        first_point, last_point, (quantiles[middle()] - low) / (high - low)};
    const bool first_bound = first_end == kBoundEndWeight;
    const bool last_bound = last_end == kBoundEndWeight;
    // Bins where they say more than the cut's shells: between both bounds;
    // beside one where the node holds a large share of the records
    // (kAqLookBinsMass of the quantile mass; fewer lie next to the cut at
    // scales finer than a bin); and wherever the node has no reach (its
    // parent held both bounds: p1 under a root at p5 had only shells).
    if (look != nullptr && look->found && (first_bound || last_bound) &&
        ((first_bound && last_bound) || high - low >= kAqLookBinsMass ||
         (first_reach < 0 && last_reach < 0))) {
      problem.measure =
          PointMeasure::Binned(first_point, last_point, &look->weights);
      return problem;
    }
    problem.measure = PointMeasure::Shells(
        first_point, last_point, first_end, last_end, first_reach, last_reach,
        first_reach == 0 ? kBoundDropBits : 0,
        last_reach == 0 ? kBoundDropBits : 0);
    // Beside a bound, the look's decay past its span on top of the shells.
    if (look != nullptr && look->first_found >= 0 &&
        (first_bound || last_bound)) {
      problem.measure = problem.measure.WithFactor(&look->shell_factor, table);
    }
    return problem;
  }
  // A child of this node after `cut` (its run an index into `runs`).
  Node Left(const std::vector<double>& quantiles, SplitPoint cut,
            double child_budget) const {
    // The run of the left part's last record: the cut's run if the cut
    // falls inside it, else the one before (none when nothing goes left).
    size_t left_runs = 0;
    if (cut.split > 0) {
      left_runs = cut.run < runs.size && runs.before(cut.run) < lo + cut.split
                      ? cut.run + 1
                      : cut.run;
    }
    Node left{begin,
              middle(),
              low,
              quantiles[middle()],
              first_point,
              cut.point,
              {runs.points, runs.ends, left_runs},
              lo,
              lo + cut.split,
              first_end,
              kReleasedEndWeight,
              child_budget,
              split};
    left.look = look;
    // A public bound on the left, released cuts at cut and at this node's
    // right end: the left child's records lie about as far below the cut as
    // the quantiles between them say.
    if (first_end == kBoundEndWeight && last_end == kReleasedEndWeight) {
      const double q = quantiles[middle()];
      const int reach = Reach(last_point - cut.point, (q - low) / (high - q),
                              cut.point - first_point);
      if (reach >= 0) {
        left.first_reach = 0;
        left.last_reach = reach;
      }
    }
    return left;
  }
  Node Right(const std::vector<double>& quantiles, SplitPoint cut,
             double child_budget) const {
    Node right{
        middle() + 1,
        end,
        quantiles[middle()],
        high,
        cut.point,
        last_point,
        {runs.points + cut.run, runs.ends + cut.run, runs.size - cut.run},
        lo + cut.split,
        hi,
        kReleasedEndWeight,
        last_end,
        child_budget,
        split};
    right.look = look;
    if (last_end == kBoundEndWeight && first_end == kReleasedEndWeight) {
      const double q = quantiles[middle()];
      const int reach = Reach(cut.point - first_point, (high - q) / (q - low),
                              last_point - cut.point);
      if (reach >= 0) {
        right.first_reach = reach;
        right.last_reach = 0;
      }
    }
    return right;
  }
};

Node Root(const Runs& runs, int64_t steps, size_t m, double epsilon,
          AqBudgetSplit split, const AqLook* look) {
  Node root{0,
            m,
            0.0,
            1.0,
            0,
            steps,
            runs,
            0,
            runs.total(),
            kBoundEndWeight,
            kBoundEndWeight,
            epsilon,
            split};
  root.look = look;
  return root;
}

void SampleNode(const Node& node, const std::vector<double>& quantiles,
                uint64_t sub_points, RandomSource& rng,
                std::vector<int64_t>* points) {
  if (node.begin >= node.end) return;
  PointMeasure::FactorTable table;  // NOLINT(*-member-init): written first
  const QuantileProblem problem = node.Problem(quantiles, &table);
  const double epsilon = node.epsilon();
  // (A sampler is its epsilon and K: nothing to share between nodes.)
  const ExponentialQuantileSampler sampler(epsilon, sub_points);
  if (node.leaf()) {
    (*points)[node.middle()] = sampler.SamplePoint(problem, rng);
    return;
  }
  const SplitPoint cut = sampler.SampleSplit(problem, rng);
  (*points)[node.middle()] = cut.point;
  const double child_budget = node.ChildBudget(epsilon);
  SampleNode(node.Left(quantiles, cut, child_budget), quantiles, sub_points,
             rng, points);
  SampleNode(node.Right(quantiles, cut, child_budget), quantiles, sub_points,
             rng, points);
}

double NodeLogProbability(const Node& node,
                          const std::vector<double>& quantiles,
                          uint64_t sub_points,
                          const std::vector<int64_t>& points) {
  if (node.begin >= node.end) return 0;
  PointMeasure::FactorTable table;  // NOLINT(*-member-init): written first
  const QuantileProblem problem = node.Problem(quantiles, &table);
  const int64_t point = points[node.middle()];
  const double epsilon = node.epsilon();
  if (node.leaf()) return PointLogProbability(problem, epsilon, point);
  double total = kNegativeInfinity;
  const double child_budget = node.ChildBudget(epsilon);
  for (const auto& [output, probability] :
       SplitProbabilities(problem, epsilon, sub_points, false)) {
    if (output.first != point || !(probability > 0)) continue;
    // The run of the right part's first record, as the sampler gives it.
    const uint64_t split = output.second;
    const SplitPoint cut{point, split,
                         split < problem.count()
                             ? problem.runs.RunOfRank(problem.lo + split)
                             : problem.runs.size};
    total = LogAdd(
        total, std::log(probability) +
                   NodeLogProbability(node.Left(quantiles, cut, child_budget),
                                      quantiles, sub_points, points) +
                   NodeLogProbability(node.Right(quantiles, cut, child_budget),
                                      quantiles, sub_points, points));
  }
  return total;
}

// Each root-to-node path's epsilons, by the nodes' own epsilon() and
// ChildBudget (no records: a node's budget depends on its quantiles only).
void CollectPathEpsilons(size_t begin, size_t end, double budget,
                         AqBudgetSplit split, std::vector<double>* path,
                         std::vector<std::vector<double>>* paths) {
  if (begin >= end) return;
  Node node{};
  node.begin = begin;
  node.end = end;
  node.budget = budget;
  node.split = split;
  const double epsilon = node.epsilon();
  path->push_back(epsilon);
  if (node.leaf()) {
    paths->push_back(*path);
  } else {
    const double child = node.ChildBudget(epsilon);
    CollectPathEpsilons(begin, node.middle(), child, split, path, paths);
    CollectPathEpsilons(node.middle() + 1, end, child, split, path, paths);
  }
  path->pop_back();
}

}  // namespace

std::vector<std::vector<double>> ApproximateQuantilesPathEpsilons(
    size_t distinct_quantiles, double epsilon, AqBudgetSplit split) {
  std::vector<std::vector<double>> paths;
  std::vector<double> path;
  CollectPathEpsilons(0, distinct_quantiles, epsilon, split, &path, &paths);
  return paths;
}

int ApproximateQuantilesLevels(size_t distinct_quantiles) {
  int levels = 0;
  for (size_t m = distinct_quantiles; m > 0; m /= 2) ++levels;
  return levels;
}

std::vector<int64_t> SampleApproximateQuantiles(
    const Runs& runs, int64_t steps, const std::vector<double>& quantiles,
    double epsilon, AqBudgetSplit split, RandomSource& rng, uint64_t sub_points,
    const AqLook& look) {
  std::vector<int64_t> points(quantiles.size(), 0);
  SampleNode(Root(runs, steps, quantiles.size(), epsilon, split, &look),
             quantiles, sub_points, rng, &points);
  return points;
}

double ApproximateQuantilesLogProbability(const Runs& runs, int64_t steps,
                                          const std::vector<double>& quantiles,
                                          double epsilon, AqBudgetSplit split,
                                          const std::vector<int64_t>& points,
                                          uint64_t sub_points,
                                          const AqLook& look) {
  return NodeLogProbability(
      Root(runs, steps, quantiles.size(), epsilon, split, &look), quantiles,
      sub_points, points);
}

double DefaultAqLookShare(const std::vector<double>& quantiles) {
  if (quantiles.size() > kAqTailQuantiles) return kAqLookShare;
  for (double q : quantiles) {
    // (1 - q would make 0.95 a hair above 0.05.)
    if (q <= kAqTailMass || q >= 1 - kAqTailMass) return kAqTailLookShare;
  }
  return kAqLookShare;
}

namespace {

StatusOr<AqLookPlan> MakeAqLookPlan(const PrivacyBudget& budget, double share) {
  const BudgetSplit split = SplitBudget(budget, share);
  StatusOr<CountNoise> noise = CountNoiseFor(split.share);
  if (!noise.ok()) return noise.status();
  AqLookPlan plan;
  plan.share = split.share;
  plan.noise = noise.value();
  const double parameter = plan.noise.parameter.Value();
  plan.noise_scale = plan.noise.kind == CountNoise::Kind::kLaplace
                         ? parameter
                         : std::sqrt(parameter);
  plan.rest = split.rest;
  return plan;
}

}  // namespace

StatusOr<AqLookPlan> PlanAqLook(const PrivacyBudget& budget, double share) {
  // The plan is a function of the budget and the share alone, and a
  // grouped release asks for the same one for every group: the last one
  // made is kept per thread (public values only).
  struct Kept {
    bool valid = false;
    PrivacyBudget budget;
    double share = 0;
    AqLookPlan plan;
  };
  static thread_local Kept kept;
  if (kept.valid && kept.share == share && kept.budget.kind == budget.kind &&
      kept.budget.epsilon == budget.epsilon &&
      kept.budget.delta == budget.delta && kept.budget.rho == budget.rho) {
    return kept.plan;
  }
  StatusOr<AqLookPlan> made = MakeAqLookPlan(budget, share);
  if (made.ok()) kept = {true, budget, share, made.value()};
  return made;
}

std::vector<int64_t> AqLookCounts(const Runs& runs, int64_t points, int bins) {
  std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
  uint64_t below = 0;  // records below the bin's lower edge
  // Few runs (a group's): one pass over them beside the edges, instead of
  // a search per edge. The same counts.
  const bool walk = runs.size <= kAqLookWalkedRuns;
  size_t run = 0;  // walking: the first run at or above the edge
  for (int b = 0; b < bins; ++b) {
    const int64_t edge = BinnedWeights::EdgeOf(b + 1, bins, points);
    uint64_t up_to = 0;
    if (walk) {
      const auto at = static_cast<double>(edge);
      while (run < runs.size && runs.points[run] < at) ++run;
      up_to = runs.before(run);
    } else {
      up_to = runs.Below(edge);
    }
    counts[static_cast<size_t>(b)] = static_cast<int64_t>(up_to - below);
    below = up_to;
  }
  return counts;
}

double AqLookLogProbability(const Runs& runs, int64_t points,
                            const CountNoise& noise,
                            const std::vector<int64_t>& noisy) {
  const std::vector<int64_t> counts =
      AqLookCounts(runs, points, static_cast<int>(noisy.size()));
  double total = 0;
  for (size_t b = 0; b < noisy.size(); ++b) {
    total += std::log(noise.Pmf(noisy[b] - counts[b]));
  }
  return total;
}

AqLook AqLookFromCounts(const std::vector<int64_t>& noisy, double noise_scale,
                        int64_t points) {
  AqLook look;
  AqLookFromCounts(noisy, noise_scale, points, &look);
  return look;
}

void AqLookFromCounts(const std::vector<int64_t>& noisy, double noise_scale,
                      int64_t points, AqLook* out) {
  // In place: every field set below, the two weights built where they
  // stay (a look is 880 bytes; a grouped release builds one a group).
  AqLook& look = *out;
  look.first_found = -1;
  look.last_found = -1;
  look.first_seen = -1;
  look.last_seen = -1;
  look.spread = 0;
  look.counted = 0;
  look.faint = 0;
  const int bins = std::min(static_cast<int>(noisy.size()), kMostBins);
  // The bins' edges (a division each), kept per thread for the last grid:
  // a grouped release's groups share one, so each of its looks copies
  // them instead of dividing 51 times. A function of public values.
  static thread_local BinnedWeights shape;
  if (shape.points() != points || shape.bins() != bins) {
    const std::array<uint64_t, kMostBins> ones = {1, 1, 1, 1, 1, 1, 1, 1,
                                                  1, 1, 1, 1, 1, 1, 1, 1};
    shape.Assign(points, ones.data(), bins);
  }
  const auto edge = [&](int b) { return shape.Edge(b); };
  // How many bins b lies outside the found span (0 inside it).
  const auto outside = [&](int b) {
    return b < look.first_found  ? look.first_found - b
           : b > look.last_found ? b - look.last_found
                                 : 0;
  };
  for (int b = 0; b < bins; ++b) {
    // (A bin without points, on grids of fewer than 16, holds nothing.)
    if (edge(b) < edge(b + 1) &&
        static_cast<double>(noisy[static_cast<size_t>(b)]) >=
            kAqLookFoundScales * noise_scale) {
      if (look.first_found < 0) look.first_found = b;
      look.last_found = b;
    }
  }
  // The lift, so that points x weight stays below 2^63 and a weight below
  // 2^32 (the split form's sizes, RankOutputs): all 16 bits on grids of up
  // to 2^26 points, none at 2^52.
  const int most_bits = std::min(
      31, 63 - BitWidth(static_cast<uint64_t>(std::max<int64_t>(points, 1))));
  const int lift = look.first_found < 0
                       ? 0
                       : std::max(0, std::min(kAqLookLiftBits,
                                              most_bits - kMostBinWeightBits));
  std::array<uint64_t, kMostBins> weights{};
  for (int b = 0; b < bins; ++b) {
    // floor(count / s) doublings, in [0, kMostBinWeightBits].
    const double doublings = std::floor(
        static_cast<double>(noisy[static_cast<size_t>(b)]) / noise_scale);
    int bits = doublings <= 0                    ? 0
               : doublings >= kMostBinWeightBits ? kMostBinWeightBits
                                                 : static_cast<int>(doublings);
    if (lift > 0) {
      bits = std::max(
          0, bits + lift - std::min(lift, kAqLookDecayBits * outside(b)));
    }
    weights[static_cast<size_t>(b)] = uint64_t{1} << bits;
  }
  look.found = true;
  look.weights.Assign(shape, weights.data());
  {
    std::array<int64_t, kMostBins> counted{};
    int64_t total = 0;
    for (int b = 0; b < bins; ++b) {
      const int64_t count = noisy[static_cast<size_t>(b)];
      if (edge(b) < edge(b + 1) &&
          static_cast<double>(count) >= kAqLookCountedScales * noise_scale) {
        counted[static_cast<size_t>(b)] = count;
        total += count;
        if (static_cast<double>(count) < kAqLookFoundScales * noise_scale) {
          look.faint += count;
        }
      }
    }
    look.counted = total;
    // The bins by count, largest first (ties: the lower bin first).
    // (An insertion sort: stable, and for 16 bins a fraction of
    // std::stable_sort's cost, which a grouped release pays per key.)
    std::array<int, kMostBins> order{};
    for (int b = 0; b < bins; ++b) {
      int at = b;
      for (; at > 0 &&
             counted[static_cast<size_t>(order[static_cast<size_t>(at - 1)])] <
                 counted[static_cast<size_t>(b)];
           --at) {
        order[static_cast<size_t>(at)] = order[static_cast<size_t>(at - 1)];
      }
      order[static_cast<size_t>(at)] = b;
    }
    int64_t held = 0;
    while (total > 0 && look.spread < bins &&
           static_cast<double>(held) <
               kAqLookSpreadMass * static_cast<double>(total)) {
      const int b = order[static_cast<size_t>(look.spread++)];
      held += counted[static_cast<size_t>(b)];
      look.first_seen = look.first_seen < 0 ? b : std::min(look.first_seen, b);
      look.last_seen = std::max(look.last_seen, b);
    }
  }
  if (look.first_found >= 0) {
    std::array<uint64_t, kMostBins> factor{};
    for (int b = 0; b < bins; ++b) {
      factor[static_cast<size_t>(b)] =
          uint64_t{1} << (kAqLookShellBits -
                          std::min(kAqLookShellBits,
                                   kAqLookDecayBits * outside(b)));
    }
    look.shell_factor.Assign(shape, factor.data());
  } else {
    look.shell_factor = BinnedWeights();
  }
}

}  // namespace dpq
