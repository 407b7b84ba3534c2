#include "core/methods.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/agg_tree.h"
#include "core/app_ind_exp.h"
#include "core/aq.h"
#include "core/hs_joint_exp.h"
#include "core/inverse_sensitivity.h"
#include "core/joint_exp.h"
#include "core/step_look.h"
#include "core/tree_cdf.h"

namespace dpq {

std::optional<double> MethodOptions::Number(const std::string& name) const {
  for (const auto& option : request_.options) {
    if (option.first == name) return option.second;
  }
  return std::nullopt;
}

std::optional<std::string> MethodOptions::Text(const std::string& name) const {
  for (const auto& option : request_.text_options) {
    if (option.first == name) return option.second;
  }
  return std::nullopt;
}

StatusOr<int64_t> MethodOptions::Whole(const char* name, int64_t fallback,
                                       int64_t low, int64_t high) const {
  const std::optional<double> value = Number(name);
  if (!value.has_value()) return fallback;
  if (!(*value >= static_cast<double>(low) &&
        *value <= static_cast<double>(high)) ||
      *value != std::floor(*value)) {
    return Status(StatusCode::kInvalidOption,
                  std::string(name) + " must be a whole number from " +
                      std::to_string(low) + " to " + std::to_string(high));
  }
  return static_cast<int64_t>(*value);
}

namespace {

// The values of grid points.
void PointsToValues(const std::vector<int64_t>& points, const OutputGrid& grid,
                    std::vector<double>* values) {
  // Reserved: a grouped release makes one list a group, and its growth
  // by doubling took four reallocations a group of nine.
  values->clear();
  values->reserve(points.size());
  for (int64_t point : points) values->push_back(grid.ValueAt(point));
}

// The values of a successful release, or its error.
Status MoveInto(StatusOr<std::vector<double>> released,
                std::vector<double>* values) {
  if (!released.ok()) return released.status();
  *values = std::move(released.value());
  return Status::Ok();
}

// AQ on `quantiles` with `budget`: pure DP shares it along each path
// (aq.h), zCDP per level. Returns the root's epsilon (the smallest) in
// *root_epsilon.
std::vector<int64_t> SampleAq(const MethodInput& in,
                              const std::vector<double>& quantiles,
                              const PrivacyBudget& budget, const AqLook& look,
                              double* root_epsilon) {
  const int levels = ApproximateQuantilesLevels(quantiles.size());
  *root_epsilon = ExponentialMechanismEpsilonPerPart(budget, levels);
  const bool per_path = budget.kind == PrivacyBudget::Kind::kPure;
  return SampleApproximateQuantiles(
      in.runs, in.grid.steps(), quantiles,
      per_path ? budget.epsilon : *root_epsilon,
      per_path ? AqBudgetSplit::kPerPath : AqBudgetSplit::kPerLevel, in.rng,
      kSplitSubPoints, look);
}

// AQ's first look (aq.h) at `share` of in.budget, into *look, the report,
// and *rest (the budget left for the quantiles). Share 0: no look.
Status TakeAqLook(const MethodInput& in, double share, ReleaseReport* report,
                  AqLook* look, PrivacyBudget* rest) {
  *rest = in.budget;
  if (share <= 0) return Status::Ok();
  // A noisy histogram at `share` of the budget, composed in sequence with
  // the release; only base measures (and the default's choice) read it.
  StatusOr<AqLookPlan> plan = PlanAqLook(in.budget, share);
  if (!plan.ok()) return plan.status();
  *rest = plan.value().rest;
  const int64_t points = in.grid.steps() + 1;
  std::vector<int64_t> counts = AqLookCounts(in.runs, points, kAqLookBins);
  plan.value().noise.AddTo(&counts, in.rng);
  AqLookFromCounts(counts, plan.value().noise_scale, points, look);
  report->look_share = share;
  report->look_spent = plan.value().share;
  // `found`: the span of bins whose noisy count passed kAqLookFoundScales
  // noise scales (aq.h), a summary of the histogram for the reader, and
  // what the weights decay from.
  // The last bin ends at the upper bound (point `steps`).
  const auto value_at_edge = [&](int b) {
    return in.grid.ValueAt(std::min(look->weights.Edge(b), in.grid.steps()));
  };
  if (look->first_found >= 0) {
    report->look_low = value_at_edge(look->first_found);
    report->look_high = value_at_edge(look->last_found + 1);
  }
  // `seen`: the span of the bins holding most of the counted mass (aq.h),
  // where most values lie (on values spread over the bounds the found span
  // holds only part of them).
  if (look->first_seen >= 0) {
    report->look_seen_low = value_at_edge(look->first_seen);
    report->look_seen_high = value_at_edge(look->last_seen + 1);
  }
  return Status::Ok();
}

// AQ on in.quantiles with `budget` and the look's measures.
void ReleaseAqWith(const MethodInput& in, const PrivacyBudget& budget,
                   const AqLook& look, ReleaseReport* report,
                   std::vector<double>* values) {
  report->resolution = in.grid.resolution();
  report->levels = ApproximateQuantilesLevels(in.quantiles.size());
  PointsToValues(
      SampleAq(in, in.quantiles, budget, look, &report->mechanism_epsilon),
      in.grid, values);
}

StatusOr<double> AqLookShare(const MethodInput& in) {
  const std::optional<double> share = in.options.Number("look");
  if (share.has_value() && !(*share >= 0 && *share <= kMaxAqLookShare)) {
    return Status(StatusCode::kInvalidOption,
                  "look must be a share of the budget from 0 (no first look) "
                  "to " +
                      FormatNumber(kMaxAqLookShare));
  }
  return share.value_or(DefaultAqLookShare(in.quantiles));
}

Status RunAq(const MethodInput& in, ReleaseReport* report,
             std::vector<double>* values) {
  const StatusOr<double> share = AqLookShare(in);
  if (!share.ok()) return share.status();
  AqLook look;
  PrivacyBudget rest;
  Status status = TakeAqLook(in, share.value(), report, &look, &rest);
  if (!status.ok()) return status;
  ReleaseAqWith(in, rest, look, report, values);
  return Status::Ok();
}

// The tree's levels, and under epsilon what each level's counts ran with
// (AggTreeLevelBudget): what a reader (and the budget tests) add up.
void ReportTreeLevels(const AggTreeShape& shape, const PrivacyBudget& budget,
                      ReleaseReport* report) {
  report->levels = shape.height;
  if (budget.kind == PrivacyBudget::Kind::kPure) {
    report->mechanism_epsilon = AggTreeLevelBudget(shape, budget).epsilon;
  }
}

Status RunAggTree(const MethodInput& in, ReleaseReport* report,
                  std::vector<double>* values);

}  // namespace

StatusOr<AqLookPlan> PlanStepLook(const PrivacyBudget& budget) {
  return PlanAqLook(budget, kStepLookShare);
}

StatusOr<StepLookOutcome> TakeStepLook(const Runs& runs, const OutputGrid& grid,
                                       const PrivacyBudget& budget,
                                       RandomSource& rng, ReleaseReport* report,
                                       PrivacyBudget* rest) {
  StatusOr<AqLookPlan> look = PlanStepLook(budget);
  if (!look.ok()) return look.status();
  const int levels = StepLookLevels(grid);
  std::vector<int64_t> counts = StepLookCounts(runs, grid, levels);
  look.value().noise.AddTo(&counts, rng);
  StepLookOutcome outcome;
  outcome.level = StepLookChoice(counts, look.value().noise_scale);
  outcome.continuous = StepLookSawContinuous(counts, look.value().noise_scale);
  report->step_look_spent = look.value().share;
  *rest = look.value().rest;
  return outcome;
}

namespace {

// The default ('auto') where its step look (in.step_look, taken before the
// intervals by the pipeline: release.cc) found no step: AQ's first look and
// then AQ on this grid, or AggTree's small tree where that look shows
// spread records (AutoSpreadPicksTree), with what is left. in.budget is
// what the step look left. (A step found runs that step's method, on its
// grid, instead of this.)
Status RunAuto(const MethodInput& in, ReleaseReport* report,
               std::vector<double>* values) {
  if (!in.step_look.has_value() || in.step_look->level != 0) {
    return Status(StatusCode::kInvalidState,
                  "the default runs after its step look, on no step found");
  }
  // Where the step look saw values off every lattice and AQ's first look
  // shows them spread over the bounds, and the request reaches the tails
  // or is long, AggTree's small tree on this grid (AutoSpreadPicksTree). A
  // grouped release (continuous false) keeps AQ: one method for every key.
  const bool continuous = in.step_look->continuous;
  const PrivacyBudget& rest = in.budget;
  AqLook look;
  PrivacyBudget after_look;
  Status status = TakeAqLook(in, DefaultAqLookShare(in.quantiles), report,
                             &look, &after_look);
  if (!status.ok()) return status;
  if (!continuous ||
      !AutoSpreadPicksTree(look, in.quantiles,
                           rest.kind == PrivacyBudget::Kind::kZcdp)) {
    report->method = "aq";
    ReleaseAqWith(in, after_look, look, report, values);
    return Status::Ok();
  }
  report->method = "aggtree";
  // What the two looks left: the tree runs on it, and reports it.
  const PrivacyBudget& tree_budget = after_look;
  ReportTreeLevels(kAutoSpreadTree, tree_budget, report);
  StatusOr<std::vector<double>> released =
      ReleaseAggTree(in.runs, in.grid, in.request.lower, in.request.upper,
                     in.quantiles, kAutoSpreadTree, tree_budget, in.rng);
  if (!released.ok()) return released.status();
  // The tree interpolates inside its leaves; the default releases on its
  // grid, as AQ would (post-processing; monotone, so the order stays).
  values->clear();
  for (double value : released.value()) {
    values->push_back(in.grid.ValueAt(in.grid.PointOf(value)));
  }
  report->resolution = in.grid.resolution();
  return Status::Ok();
}

Status RunAppIndExp(const MethodInput& in, ReleaseReport* report,
                    std::vector<double>* values) {
  // With `delta`, in.budget is already (epsilon, delta).
  if (in.budget.kind == PrivacyBudget::Kind::kApprox &&
      in.quantiles.size() > static_cast<size_t>(kMaxOptimalCompositionParts)) {
    return Status(StatusCode::kTooLarge,
                  "appindexp with delta takes at most " +
                      std::to_string(kMaxOptimalCompositionParts) +
                      " distinct quantiles (its optimal composition costs "
                      "m^2 per step); got " +
                      std::to_string(in.quantiles.size()) +
                      ". Use 'aq', or appindexp without delta");
  }
  report->resolution = in.grid.resolution();
  report->mechanism_epsilon = ExponentialMechanismEpsilonPerPart(
      in.budget, static_cast<int>(in.quantiles.size()));
  PointsToValues(SampleAppIndExp(in.runs, in.grid.steps(), in.quantiles,
                                 report->mechanism_epsilon, in.rng),
                 in.grid, values);
  return Status::Ok();
}

// The joint mechanisms' epsilon, kernel and record cap (joint_exp.h), from
// public parameters only, for a sampling grid of `steps`.
struct JointSetup {
  double epsilon = 0;  // the mechanism's (the kernel keeps back a reserve)
  double kernel_epsilon = 0;  // what the kernel is built for
  JointKernelFor kernel_for;
  size_t cap = 0;
};

StatusOr<JointSetup> SetUpJoint(const MethodInput& in, int64_t steps,
                                bool inverse_sensitivity) {
  JointSetup setup;
  // One exponential mechanism: epsilon, or sqrt(8 rho) by bounded range, at
  // most kMaxJointEpsilon. Its kernel keeps back JointRoundingReserve of it
  // for the certified rounding bound.
  setup.epsilon = std::min(ExponentialMechanismEpsilonPerPart(in.budget, 1),
                           kMaxJointEpsilon);
  const double kernel_epsilon =
      SubtractDown(setup.epsilon, JointRoundingReserve(setup.epsilon));
  setup.kernel_epsilon = kernel_epsilon;
  const std::vector<double>& quantiles = in.quantiles;
  setup.kernel_for = [kernel_epsilon, &quantiles,
                      inverse_sensitivity](size_t count) {
    return inverse_sensitivity
               ? InverseSensitivityKernel(count, quantiles, kernel_epsilon)
               : JointExpKernel(count, quantiles, kernel_epsilon);
  };
  const size_t limit =
      JointRecordCap(quantiles.size(), steps, setup.epsilon, setup.kernel_for);
  setup.cap = std::min(limit, kDefaultJointRecords);
  if (limit == 0) {
    return Status(StatusCode::kTooLarge,
                  std::to_string(quantiles.size()) +
                      " distinct quantiles are too many for the joint "
                      "mechanisms on a grid of " +
                      std::to_string(steps) +
                      " steps at this budget: even with no records their "
                      "tables (m x (n + 1) <= 2^24, m^2 x (n + 1) <= 2^29 "
                      "steps) or their certified rounding do not fit. Use "
                      "'aq', fewer quantiles, a coarser step or more epsilon");
  }
  if (const std::optional<double> most = in.options.Number("maxRecords")) {
    if (!(*most >= 1 && *most <= static_cast<double>(limit)) ||
        *most != std::floor(*most)) {
      return Status(StatusCode::kInvalidOption,
                    "maxRecords must be a whole number from 1 to " +
                        std::to_string(limit) +
                        " for these quantiles, grid and budget");
    }
    setup.cap = static_cast<size_t>(*most);
  }
  return setup;
}

// The joint draw on `cells` (sorted points of `sampling`, at most the cap).
Status DrawJoint(const MethodInput& in, const JointSetup& setup,
                 const RecordPoints& cells, const OutputGrid& sampling,
                 ReleaseReport* report, std::vector<double>* values) {
  report->mechanism_epsilon = setup.epsilon;
  report->kernel_epsilon = setup.kernel_epsilon;
  report->record_cap = setup.cap;
  JointKernel kernel = setup.kernel_for(cells.size);
  // Passes at or below the cap; kept so that no change can skip it.
  Status status =
      CheckJointRounding(cells.size, sampling.steps(), kernel, setup.epsilon);
  if (!status.ok()) return status;
  const JointSampler sampler(cells.begin(), cells.size, sampling.steps(),
                             std::move(kernel));
  PointsToValues(sampler.Sample(in.rng), sampling, values);
  report->resolution = sampling.resolution();
  // HSJointExp's widened grid reaches beyond the bounds.
  for (double& value : *values) {
    value = std::min(std::max(value, in.request.lower), in.request.upper);
  }
  return Status::Ok();
}

Status RunJointOnReleaseGrid(const MethodInput& in, ReleaseReport* report,
                             std::vector<double>* values,
                             bool inverse_sensitivity) {
  StatusOr<JointSetup> setup =
      SetUpJoint(in, in.grid.steps(), inverse_sensitivity);
  if (!setup.ok()) return setup.status();
  // At most the cap: a uniformly random subset of more (joint_exp.h).
  RecordPoints cells;
  Status status = SampleRunPoints(in.runs, setup.value().cap, in.rng, &cells);
  if (!status.ok()) return status;
  return DrawJoint(in, setup.value(), cells, in.grid, report, values);
}

Status RunJointExp(const MethodInput& in, ReleaseReport* report,
                   std::vector<double>* values) {
  return RunJointOnReleaseGrid(in, report, values, false);
}

Status RunInverseSensitivity(const MethodInput& in, ReleaseReport* report,
                             std::vector<double>* values) {
  return RunJointOnReleaseGrid(in, report, values, true);
}

// HSJointExp's jitter and the widened grid it samples on: always the finest
// grid, also under a step. The jitter (2^-20 of the range by default) is what
// spreads an atom's records apart; on a step's grid they would round back onto
// one point and HSJointExp would be JointExp there (rank error 322 against 46
// on an atom at 0 with step 0.1). A step only rounds the released values.
struct HsGrid {
  JitterKind kind = JitterKind::kUniform;
  double sigma = 0;
  OutputGrid sampling;
};

StatusOr<HsGrid> HsJointExpGrid(const MethodInput& in) {
  HsGrid hs;
  if (const std::optional<std::string> jitter = in.options.Text("jitter")) {
    if (*jitter == "gaussian") {
      hs.kind = JitterKind::kGaussian;
    } else if (*jitter != "uniform") {
      return Status(
          StatusCode::kInvalidOption,
          "jitter must be 'uniform' or 'gaussian', got '" + *jitter + "'");
    }
  }
  const double lower = in.request.lower;
  const double upper = in.request.upper;
  hs.sigma = kDefaultJitterFraction * (upper - lower);
  if (const std::optional<double> scale = in.options.Number("scale")) {
    if (!std::isfinite(*scale) || !(*scale > 0)) {
      return Status(StatusCode::kInvalidOption,
                    "scale (the jitter's standard deviation) must be finite "
                    "and > 0");
    }
    hs.sigma = *scale;
  }
  // Jittered records may leave [lower, upper]: sample on a grid widened by
  // the jitter's margin.
  const double margin = JitterMargin(hs.kind, hs.sigma);
  const double low = lower - margin;
  const double high = upper + margin;
  Status status = ValidateBounds(low, high);
  if (!status.ok()) {
    return Status(
        StatusCode::kInvalidOption,
        "scale widens the bounds beyond doubles: " + status.message());
  }
  hs.sampling = OutputGrid::ForBounds(low, high);
  return hs;
}

Status RunHsJointExp(const MethodInput& in, ReleaseReport* report,
                     std::vector<double>* values) {
  StatusOr<HsGrid> hs = HsJointExpGrid(in);
  if (!hs.ok()) return hs.status();
  const OutputGrid& sampling = hs.value().sampling;
  StatusOr<JointSetup> setup = SetUpJoint(in, sampling.steps(), false);
  if (!setup.ok()) return setup.status();
  RecordPoints cells;
  Status status = SampleRunPoints(in.runs, setup.value().cap, in.rng, &cells);
  if (!status.ok()) return status;
  // Each record's value, jittered (public noise, one draw a record), then
  // its point on the widened grid.
  for (double& cell : cells) {
    cell = in.grid.ValueAt(static_cast<int64_t>(cell));
  }
  Jitter(cells.begin(), cells.size, in.request.lower, in.request.upper,
         hs.value().kind, hs.value().sigma, in.rng);
  std::sort(cells.begin(), cells.end());
  ConvertToPoints(cells.begin(), cells.size, sampling);
  status = DrawJoint(in, setup.value(), cells, sampling, report, values);
  if (!status.ok() || !(in.grid.step() > 0)) return status;
  // Under a step, each value moves to its nearest step point: post-
  // processing (monotone, so the order stays), and an atom's records,
  // jittered by far less than a step, release as the atom itself.
  for (double& value : *values) value = in.grid.ValueAt(in.grid.PointOf(value));
  report->resolution = in.grid.resolution();
  return Status::Ok();
}

Status RunAggTree(const MethodInput& in, ReleaseReport* report,
                  std::vector<double>* values) {
  AggTreeShape shape;
  StatusOr<int64_t> branching =
      in.options.Whole("branching", shape.branching, 2, 1024);
  if (!branching.ok()) return branching.status();
  StatusOr<int64_t> height = in.options.Whole("height", shape.height, 1, 24);
  if (!height.ok()) return height.status();
  shape.branching = static_cast<int>(branching.value());
  shape.height = static_cast<int>(height.value());
  if (const std::optional<std::string> aggregation =
          in.options.Text("aggregation")) {
    if (*aggregation == "none") {
      shape.aggregate = false;
    } else if (*aggregation != "honaker") {
      return Status(StatusCode::kInvalidOption,
                    "aggregation must be 'honaker' or 'none', got '" +
                        *aggregation + "'");
    }
  }
  const double lower = in.request.lower;
  const double upper = in.request.upper;
  // A step, or buckets of at most kMaxTreeLeaves - 1 (whose records all sit
  // on bucket edges): one leaf per grid point, releasing the point itself;
  // the shape from what was given. Finer buckets keep the equal leaves.
  if (in.options.Number("step").has_value() ||
      (in.request.buckets.has_value() &&
       in.grid.steps() + 1 <= kMaxTreeLeaves)) {
    StatusOr<AggTreeShape> fitted = AggTreeShapeForPoints(
        in.grid.steps() + 1,
        in.options.Number("branching").has_value() ? branching.value() : 0,
        in.options.Number("height").has_value() ? height.value() : 0,
        shape.aggregate);
    if (!fitted.ok()) return fitted.status();
    report->resolution = in.grid.resolution();
    ReportTreeLevels(fitted.value(), in.budget, report);
    return MoveInto(ReleaseAggTree(in.runs, in.grid, lower, upper, in.quantiles,
                                   fitted.value(), in.budget, in.rng, &in.grid),
                    values);
  }
  Status status = ValidateAggTreeShape(shape);
  if (!status.ok()) return status;
  ReportTreeLevels(shape, in.budget, report);
  return MoveInto(ReleaseAggTree(in.runs, in.grid, lower, upper, in.quantiles,
                                 shape, in.budget, in.rng),
                  values);
}

Status RunTreeCdf(const MethodInput& in, ReleaseReport* report,
                  std::vector<double>* values) {
  (void)report;
  TreeCdfShape shape;
  StatusOr<int64_t> cells =
      in.options.Whole("cells", shape.cells, 2, kMaxTreeCdfCells);
  if (!cells.ok()) return cells.status();
  shape.cells = cells.value();
  if (const std::optional<std::string> split = in.options.Text("budget")) {
    if (*split == "min-variance") {
      shape.split = TreeBudgetSplit::kMinVariance;
    } else if (*split != "uniform") {
      return Status(
          StatusCode::kInvalidOption,
          "budget must be 'uniform' or 'min-variance', got '" + *split + "'");
    }
  }
  Status status = ValidateTreeCdfShape(shape);
  if (!status.ok()) return status;
  return MoveInto(
      ReleaseTreeCdf(in.runs, in.grid, in.request.lower, in.request.upper,
                     in.quantiles, shape, in.budget, in.rng),
      values);
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) {
    if (!joined.empty()) joined += ", ";
    joined += "'" + name + "'";
  }
  return joined;
}

}  // namespace

// The joint methods' heap at their record cap (SetUpJoint): the subset's
// scratch, or the points and the sampler's tables, whichever is more
// (the subset's scratch is freed before the sampler is built).
double JointBytes(const MethodInput& in, int64_t steps, bool inverse) {
  const StatusOr<JointSetup> setup = SetUpJoint(in, steps, inverse);
  if (!setup.ok()) return 0;  // refused the same way when it runs
  const uint64_t cap = setup.value().cap;
  return std::max(static_cast<double>(SubsetBytes(cap)),
                  8.0 * static_cast<double>(cap) +
                      JointSamplerBytes(cap, in.quantiles.size()));
}

double JointExpBytes(const MethodInput& in) {
  return JointBytes(in, in.grid.steps(), false);
}

double InverseSensitivityBytes(const MethodInput& in) {
  return JointBytes(in, in.grid.steps(), true);
}

double HsJointExpBytes(const MethodInput& in) {
  const StatusOr<HsGrid> hs = HsJointExpGrid(in);
  if (!hs.ok()) return 0;
  return JointBytes(in, hs.value().sampling.steps(), false);
}

// The default's move to a found step's grid (RunsStore::OnGrid: 16 bytes a
// point of the finest candidate's grid, a tenth of this grid's steps).
double AutoBytes(const MethodInput& in) {
  if (StepLookLevels(in.grid) == 0) return 0;
  return 16.0 * (static_cast<double>(in.grid.steps()) / 10 + 1);
}

bool AutoPicksTree(double points, const std::vector<double>& distinct,
                   bool rho) {
  const auto m = static_cast<double>(distinct.size());
  if (rho) return points <= 128 && m >= 40;
  if (m >= std::max(5.0, points / 24)) return true;
  if (points > kAutoSmallGrid) return false;
  const bool outer =
      std::all_of(distinct.begin(), distinct.end(),
                  [](double q) { return q <= 0.05 || q >= 0.95; });
  return m >= 4 || (m >= 2 && outer);
}

bool AutoSpreadPicksTree(const AqLook& look,
                         const std::vector<double>& distinct, bool rho) {
  if (rho || look.spread < kAutoSpreadBins || distinct.size() < 2) {
    return false;
  }
  if (distinct.size() >= kAutoSpreadManyQuantiles) return true;
  return static_cast<double>(look.faint) >=
             kAutoSpreadFaintShare * static_cast<double>(look.counted) &&
         std::any_of(distinct.begin(), distinct.end(), [](double q) {
           return q <= kAutoSpreadTail || q >= 1 - kAutoSpreadTail;
         });
}

bool AutoTreeOnStep(const OutputGrid& step_grid,
                    const std::vector<double>& distinct, bool rho) {
  return step_grid.steps() + 1 <= kMaxTreeLeaves &&
         AutoPicksTree(static_cast<double>(step_grid.steps() + 1), distinct,
                       rho);
}

const std::vector<MethodSpec>& Methods() {
  static const std::vector<MethodSpec> methods = {
      {"aq", {{"step", false}, {"look", false}}, RunAq},
      {"auto", {}, RunAuto, Neighbouring::kAddRemove, AutoBytes},
      {"jointexp",
       {{"step", false}, {"maxRecords", false}},
       RunJointExp,
       Neighbouring::kAddRemove,
       JointExpBytes},
      {"inverse-sensitivity",
       {{"step", false}, {"maxRecords", false}},
       RunInverseSensitivity,
       Neighbouring::kReplaceOne,
       InverseSensitivityBytes},
      {"hs-jointexp",
       {{"jitter", true},
        {"scale", false},
        {"step", false},
        {"maxRecords", false}},
       RunHsJointExp,
       Neighbouring::kAddRemove,
       HsJointExpBytes},
      {"appindexp", {{"delta", false}, {"step", false}}, RunAppIndExp},
      {"aggtree",
       {{"branching", false},
        {"height", false},
        {"aggregation", true},
        {"step", false}},
       RunAggTree},
      {"tree-cdf", {{"cells", false}, {"budget", true}}, RunTreeCdf},
  };
  return methods;
}

StatusOr<const MethodSpec*> FindMethod(const std::string& name) {
  std::vector<std::string> names;
  for (const MethodSpec& method : Methods()) {
    if (name == method.name) return &method;
    if (std::string(method.name) != "auto") names.push_back(method.name);
  }
  return Status(StatusCode::kUnknownMethod,
                "unknown method '" + name +
                    "'; available: 'auto' (the default), " + JoinNames(names));
}

Status CheckOptionNames(const MethodSpec& method,
                        const ReleaseRequest& request) {
  std::vector<std::string> names;
  for (const auto& spec : method.options) names.push_back(spec.first);
  auto check = [&](const std::string& name, bool text) -> Status {
    for (const auto& spec : method.options) {
      if (name != spec.first) continue;
      if (spec.second == text) return Status::Ok();
      return Status(StatusCode::kInvalidOption,
                    "option '" + name + "' of method '" + method.name +
                        "' must be " + (spec.second ? "a string" : "a number"));
    }
    return Status(StatusCode::kInvalidOption,
                  "option '" + name + "' does not apply to method '" +
                      method.name + "'" +
                      (names.empty() ? " (it takes no options)"
                                     : " (it takes " + JoinNames(names) + ")"));
  };
  for (const auto& option : request.options) {
    Status status = check(option.first, false);
    if (!status.ok()) return status;
  }
  for (const auto& option : request.text_options) {
    Status status = check(option.first, true);
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

}  // namespace dpq
