#include "core/release.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>

#include "core/agg_tree.h"
#include "core/app_ind_exp.h"
#include "core/aq.h"
#include "core/contributions.h"
#include "core/hs_joint_exp.h"
#include "core/intervals.h"
#include "core/inverse_sensitivity.h"
#include "core/joint_exp.h"
#include "core/prepare.h"
#include "core/random.h"
#include "core/tree_cdf.h"

namespace dpq {
namespace {

// The options a method takes, by name and kind.
struct OptionSpec {
  const char* name;
  bool text;
};

// Options after name checks; typed lookups with defaults.
class Options {
 public:
  explicit Options(const ReleaseRequest& request) : request_(request) {}

  std::optional<double> Number(const std::string& name) const {
    for (const auto& option : request_.options) {
      if (option.first == name) return option.second;
    }
    return std::nullopt;
  }
  std::optional<std::string> Text(const std::string& name) const {
    for (const auto& option : request_.text_options) {
      if (option.first == name) return option.second;
    }
    return std::nullopt;
  }

 private:
  const ReleaseRequest& request_;
};

// Everything a method needs; `quantiles` are distinct and ascending.
struct Context {
  double* data;
  size_t count;
  const ReleaseRequest& request;
  // Per record: what the mechanism spends, (epsilon, delta) with `delta`
  // (only appindexp takes it; for every other method this is the budget).
  PrivacyBudget budget;
  const std::vector<double>& quantiles;
  RandomSource& rng;
  Options options;
  // The counts path's fast form: `data` already holds the records' sorted
  // points on the release grid (the bucket grid), not values.
  bool prepared = false;
  // The counts path for methods that read only cell counts: data[i] (a
  // bucket edge) stands for weights[i] records.
  const double* weights = nullptr;
};

// Fills `values` (one per distinct quantile) and the report's details.
using Runner = Status (*)(Context&, ReleaseReport*, std::vector<double>*);

struct MethodSpec {
  const char* name;
  std::vector<OptionSpec> options;
  Runner run;
  // Public: which neighbours the guarantee is for.
  Neighbouring neighbouring = Neighbouring::kAddRemove;
  // Reads the records only as sorted points of the release grid, so the
  // counts path may hand them over in that form (Context::prepared).
  bool takes_points = false;
  // Reads the records only as counts of cells, so the counts path may hand
  // over each non-empty bucket's edge once with its count
  // (Context::weights): nothing is expanded, and the counts may add up to
  // 2^53 - 1.
  bool takes_weights = false;
};

StatusOr<int64_t> WholeOption(const Options& options, const char* name,
                              int64_t fallback, int64_t low, int64_t high) {
  const std::optional<double> value = options.Number(name);
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

// The release grid over [lower, upper]: the buckets', the public `step`'s,
// or the default.
StatusOr<OutputGrid> RequestGrid(const ReleaseRequest& request) {
  if (request.buckets.has_value()) {
    return BucketGrid(request.lower, request.upper, *request.buckets);
  }
  if (const std::optional<double> step = Options(request).Number("step")) {
    return OutputGrid::WithStep(request.lower, request.upper, *step);
  }
  return OutputGrid::Default(request.lower, request.upper);
}

StatusOr<OutputGrid> ReleaseGrid(const Context& c) {
  return RequestGrid(c.request);
}

// Maps the records to their grid points and sorts them: the prepared form.
void PrepareOnGrid(double* data, size_t count, const OutputGrid& grid) {
  SortToPoints(data, count, grid);
}

// The release grid, with the records prepared on it and its resolution
// reported: what AQ and AppIndExp start from.
StatusOr<OutputGrid> PrepareOnReleaseGrid(Context& c, ReleaseReport* report) {
  StatusOr<OutputGrid> grid = ReleaseGrid(c);
  if (!grid.ok()) return grid.status();
  if (!c.prepared) PrepareOnGrid(c.data, c.count, grid.value());
  report->resolution = grid.value().resolution();
  return grid;
}

// Values of grid points: point j of `sampled` is point j - offset of the
// release grid `grid`, clamped to its ends.
void PointsToValues(const std::vector<int64_t>& points, const OutputGrid& grid,
                    int64_t offset, std::vector<double>* values) {
  values->clear();
  for (int64_t point : points) values->push_back(grid.ValueAt(point - offset));
}

Status RunAq(Context& c, ReleaseReport* report, std::vector<double>* values) {
  StatusOr<OutputGrid> grid = PrepareOnReleaseGrid(c, report);
  if (!grid.ok()) return grid.status();
  report->levels = ApproximateQuantilesLevels(c.quantiles.size());
  // The root's epsilon, the smallest: under pure DP the budget is shared
  // along each path (aq.h), so nodes over shallower subtrees get more; zCDP
  // composes per level.
  report->mechanism_epsilon =
      ExponentialMechanismEpsilonPerPart(c.budget, report->levels);
  const bool per_path = c.budget.kind == PrivacyBudget::Kind::kPure;
  PointsToValues(
      SampleApproximateQuantiles(
          c.data, c.count, grid.value().steps(), c.quantiles,
          per_path ? c.budget.epsilon : report->mechanism_epsilon,
          per_path ? AqBudgetSplit::kPerPath : AqBudgetSplit::kPerLevel, c.rng),
      grid.value(), 0, values);
  return Status::Ok();
}

Status RunAppIndExp(Context& c, ReleaseReport* report,
                    std::vector<double>* values) {
  // With `delta`, c.budget is already (epsilon, delta) (ReleaseQuantiles
  // derives it once, before the data is read).
  if (c.budget.kind == PrivacyBudget::Kind::kApprox) {
    if (c.quantiles.size() > static_cast<size_t>(kMaxOptimalCompositionParts)) {
      return Status(StatusCode::kTooLarge,
                    "appindexp with delta takes at most " +
                        std::to_string(kMaxOptimalCompositionParts) +
                        " distinct quantiles (its optimal composition costs "
                        "m^2 per step); got " +
                        std::to_string(c.quantiles.size()) +
                        ". Use 'aq', or appindexp without delta");
    }
  }
  StatusOr<OutputGrid> grid = PrepareOnReleaseGrid(c, report);
  if (!grid.ok()) return grid.status();
  report->mechanism_epsilon = ExponentialMechanismEpsilonPerPart(
      c.budget, static_cast<int>(c.quantiles.size()));
  PointsToValues(SampleAppIndExp(c.data, c.count, grid.value().steps(),
                                 c.quantiles, report->mechanism_epsilon, c.rng),
                 grid.value(), 0, values);
  return Status::Ok();
}

// JointExp and its variants on sorted, clamped data. They sample on
// `sampling` (the release grid, or for HSJointExp one widened by `offset`
// points at each end) and release point j as point j - offset of `grid`.
Status RunJoint(Context& c, ReleaseReport* report, std::vector<double>* values,
                const OutputGrid& sampling, const OutputGrid& grid,
                int64_t offset, bool inverse_sensitivity) {
  // One exponential mechanism: epsilon, or sqrt(8 rho) by bounded range,
  // at most kMaxJointEpsilon (joint_exp.h). Its kernel keeps back
  // JointRoundingReserve of it for the certified rounding bound.
  report->mechanism_epsilon = std::min(
      ExponentialMechanismEpsilonPerPart(c.budget, 1), kMaxJointEpsilon);
  const double kernel_epsilon =
      SubtractDown(report->mechanism_epsilon,
                   JointRoundingReserve(report->mechanism_epsilon));
  const JointKernelFor kernel_for = [&](size_t count) {
    return inverse_sensitivity
               ? InverseSensitivityKernel(count, c.quantiles, kernel_epsilon)
               : JointExpKernel(count, c.quantiles, kernel_epsilon);
  };
  // The record cap, from public parameters only (joint_exp.h): more
  // records are read through a uniformly random subset, never refused.
  size_t cap = JointRecordCap(c.quantiles.size(), sampling.steps(),
                              report->mechanism_epsilon, kernel_for);
  if (cap == 0) {
    return Status(StatusCode::kTooLarge,
                  std::to_string(c.quantiles.size()) +
                      " distinct quantiles are too many for the joint "
                      "mechanisms on a grid of " +
                      std::to_string(sampling.steps()) +
                      " steps at this budget: even with no records their "
                      "tables (m x (n + 1) <= 2^24, m^2 x (n + 1) <= 2^29 "
                      "steps) or their certified rounding do not fit. Use "
                      "'aq', fewer quantiles, a coarser step or more epsilon");
  }
  if (const std::optional<double> most = c.options.Number("maxRecords")) {
    if (!(*most >= 1 && *most <= static_cast<double>(cap)) ||
        *most != std::floor(*most)) {
      return Status(StatusCode::kInvalidOption,
                    "maxRecords must be a whole number from 1 to " +
                        std::to_string(cap) +
                        " for these quantiles, grid and budget");
    }
    cap = static_cast<size_t>(*most);
  }
  report->record_cap = cap;
  if (c.count > cap) {
    KeepUniformSubset(c.data, c.count, cap, c.rng);
    c.count = cap;
    // Prepared points were sorted; the subset is in no order.
    if (c.prepared) std::sort(c.data, c.data + c.count);
  }
  // Prepared data are points of the release grid, which is `sampling` here
  // (only JointExp and inverse sensitivity take prepared data).
  if (!c.prepared) PrepareOnGrid(c.data, c.count, sampling);
  JointKernel kernel = kernel_for(c.count);
  // Passes at or below the cap; kept so that no change can skip it.
  Status status = CheckJointRounding(c.count, sampling.steps(), kernel,
                                     report->mechanism_epsilon);
  if (!status.ok()) return status;
  const JointSampler sampler(c.data, c.count, sampling.steps(),
                             std::move(kernel));
  PointsToValues(sampler.Sample(c.rng), grid, offset, values);
  report->resolution = grid.resolution();
  // HSJointExp's widened grid reaches beyond the bounds.
  for (double& value : *values) {
    value = std::min(std::max(value, c.request.lower), c.request.upper);
  }
  return Status::Ok();
}

Status RunJointOnReleaseGrid(Context& c, ReleaseReport* report,
                             std::vector<double>* values,
                             bool inverse_sensitivity) {
  StatusOr<OutputGrid> grid = ReleaseGrid(c);
  if (!grid.ok()) return grid.status();
  return RunJoint(c, report, values, grid.value(), grid.value(), 0,
                  inverse_sensitivity);
}

Status RunJointExp(Context& c, ReleaseReport* report,
                   std::vector<double>* values) {
  return RunJointOnReleaseGrid(c, report, values, false);
}

Status RunInverseSensitivity(Context& c, ReleaseReport* report,
                             std::vector<double>* values) {
  return RunJointOnReleaseGrid(c, report, values, true);
}

Status RunHsJointExp(Context& c, ReleaseReport* report,
                     std::vector<double>* values) {
  JitterKind kind = JitterKind::kUniform;
  if (const std::optional<std::string> jitter = c.options.Text("jitter")) {
    if (*jitter == "gaussian") {
      kind = JitterKind::kGaussian;
    } else if (*jitter != "uniform") {
      return Status(
          StatusCode::kInvalidOption,
          "jitter must be 'uniform' or 'gaussian', got '" + *jitter + "'");
    }
  }
  const double range = c.request.upper - c.request.lower;
  double sigma = kDefaultJitterFraction * range;
  if (const std::optional<double> scale = c.options.Number("scale")) {
    if (!std::isfinite(*scale) || !(*scale > 0)) {
      return Status(StatusCode::kInvalidOption,
                    "scale (the jitter's standard deviation) must be finite "
                    "and > 0");
    }
    sigma = *scale;
  }
  StatusOr<OutputGrid> grid = ReleaseGrid(c);
  if (!grid.ok()) return grid.status();
  // Jittered records may leave [lower, upper]: sample on a grid widened by
  // the jitter's margin, a whole number of steps when there is a step.
  double margin = JitterMargin(kind, sigma);
  int64_t offset = 0;
  const double step = grid.value().step();
  if (step > 0) {
    const double whole_steps = std::ceil(margin / step);
    if (!(whole_steps <= static_cast<double>(kMaxGridSteps))) {
      return Status(StatusCode::kInvalidOption,
                    "scale is too large for step: the jitter spans more than "
                    "2^52 steps");
    }
    offset = static_cast<int64_t>(whole_steps);
    margin = whole_steps * step;
  }
  const double low = c.request.lower - margin;
  const double high = c.request.upper + margin;
  Status status = ValidateBounds(low, high);
  if (!status.ok()) {
    return Status(
        StatusCode::kInvalidOption,
        "scale widens the bounds beyond doubles: " + status.message());
  }
  Jitter(c.data, c.count, c.request.lower, c.request.upper, kind, sigma, c.rng);
  if (step > 0) {
    const int64_t steps = grid.value().steps() + 2 * offset;
    if (steps > kMaxGridSteps) {
      return Status(StatusCode::kInvalidOption,
                    "scale is too large for step: the widened grid has more "
                    "than 2^52 steps");
    }
    return RunJoint(c, report, values, OutputGrid(low, high, steps, step),
                    grid.value(), offset, false);
  }
  // The jitter (2^-20 of the range by default) needs a grid much finer than
  // itself: without a step, the finest.
  const OutputGrid widened = OutputGrid::ForBounds(low, high);
  return RunJoint(c, report, values, widened, widened, 0, false);
}

// The values of a successful release, or its error.
Status MoveInto(StatusOr<std::vector<double>> released,
                std::vector<double>* values) {
  if (!released.ok()) return released.status();
  *values = std::move(released.value());
  return Status::Ok();
}

Status RunAggTree(Context& c, ReleaseReport* report,
                  std::vector<double>* values) {
  AggTreeShape shape;
  StatusOr<int64_t> branching =
      WholeOption(c.options, "branching", shape.branching, 2, 1024);
  if (!branching.ok()) return branching.status();
  StatusOr<int64_t> height =
      WholeOption(c.options, "height", shape.height, 1, 24);
  if (!height.ok()) return height.status();
  shape.branching = static_cast<int>(branching.value());
  shape.height = static_cast<int>(height.value());
  if (const std::optional<std::string> aggregation =
          c.options.Text("aggregation")) {
    if (*aggregation == "none") {
      shape.aggregate = false;
    } else if (*aggregation != "honaker") {
      return Status(StatusCode::kInvalidOption,
                    "aggregation must be 'honaker' or 'none', got '" +
                        *aggregation + "'");
    }
  }
  // A step, or buckets of at most kMaxTreeLeaves - 1 (whose records all sit
  // on bucket edges): one leaf per grid point, releasing the point itself;
  // the shape from what was given. Finer buckets keep the equal leaves.
  if (c.options.Number("step").has_value() || c.request.buckets.has_value()) {
    StatusOr<OutputGrid> grid = ReleaseGrid(c);
    if (!grid.ok()) return grid.status();
    if (c.options.Number("step").has_value() ||
        grid.value().steps() + 1 <= kMaxTreeLeaves) {
      StatusOr<AggTreeShape> fitted = AggTreeShapeForPoints(
          grid.value().steps() + 1,
          c.options.Number("branching").has_value() ? branching.value() : 0,
          c.options.Number("height").has_value() ? height.value() : 0,
          shape.aggregate);
      if (!fitted.ok()) return fitted.status();
      report->resolution = grid.value().resolution();
      return MoveInto(
          ReleaseAggTree(c.data, c.count, c.request.lower, c.request.upper,
                         c.quantiles, fitted.value(), c.budget, c.rng,
                         c.weights, &grid.value()),
          values);
    }
  }
  Status status = ValidateAggTreeShape(shape);
  if (!status.ok()) return status;
  return MoveInto(
      ReleaseAggTree(c.data, c.count, c.request.lower, c.request.upper,
                     c.quantiles, shape, c.budget, c.rng, c.weights),
      values);
}

Status RunTreeCdf(Context& c, ReleaseReport* report,
                  std::vector<double>* values) {
  (void)report;
  TreeCdfShape shape;
  StatusOr<int64_t> cells =
      WholeOption(c.options, "cells", shape.cells, 2, kMaxTreeCdfCells);
  if (!cells.ok()) return cells.status();
  shape.cells = cells.value();
  if (const std::optional<std::string> split = c.options.Text("budget")) {
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
      ReleaseTreeCdf(c.data, c.count, c.request.lower, c.request.upper,
                     c.quantiles, shape, c.budget, c.rng, c.weights),
      values);
}

const std::vector<MethodSpec>& Methods() {
  static const std::vector<MethodSpec> methods = {
      {"aq", {{"step", false}}, RunAq, Neighbouring::kAddRemove, true},
      {"jointexp",
       {{"step", false}, {"maxRecords", false}},
       RunJointExp,
       Neighbouring::kAddRemove,
       true},
      {"inverse-sensitivity",
       {{"step", false}, {"maxRecords", false}},
       RunInverseSensitivity,
       Neighbouring::kReplaceOne,
       true},
      {"hs-jointexp",
       {{"jitter", true},
        {"scale", false},
        {"step", false},
        {"maxRecords", false}},
       RunHsJointExp},
      {"appindexp",
       {{"delta", false}, {"step", false}},
       RunAppIndExp,
       Neighbouring::kAddRemove,
       true},
      {"aggtree",
       {{"branching", false},
        {"height", false},
        {"aggregation", true},
        {"step", false}},
       RunAggTree,
       Neighbouring::kAddRemove,
       false,
       true},
      {"tree-cdf",
       {{"cells", false}, {"budget", true}},
       RunTreeCdf,
       Neighbouring::kAddRemove,
       false,
       true},
  };
  return methods;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) {
    if (!joined.empty()) joined += ", ";
    joined += "'" + name + "'";
  }
  return joined;
}

Status CheckOptionNames(const MethodSpec& method,
                        const ReleaseRequest& request) {
  std::vector<std::string> names;
  for (const OptionSpec& spec : method.options) names.push_back(spec.name);
  auto check = [&](const std::string& name, bool text) -> Status {
    for (const OptionSpec& spec : method.options) {
      if (name != spec.name) continue;
      if (spec.text == text) return Status::Ok();
      return Status(StatusCode::kInvalidOption,
                    "option '" + name + "' of method '" + method.name +
                        "' must be " + (spec.text ? "a string" : "a number"));
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

StatusOr<const MethodSpec*> FindMethod(const std::string& name) {
  for (const MethodSpec& method : Methods()) {
    if (name == method.name) return &method;
  }
  return Status(StatusCode::kUnknownMethod,
                "unknown method '" + name +
                    "'; available: 'auto' (the default), " +
                    JoinNames(ReleaseMethods()));
}

}  // namespace

std::vector<std::string> ReleaseMethods() {
  std::vector<std::string> names;
  for (const MethodSpec& method : Methods()) names.push_back(method.name);
  return names;
}

StatusOr<std::string> ResolveMethod(const ReleaseRequest& request) {
  if (request.method != "auto") return request.method;
  const Options options(request);
  for (const auto& option : request.options) {
    if (option.first != "step") {
      return Status(StatusCode::kInvalidOption,
                    "option '" + option.first +
                        "' needs a method: the default ('auto', which picks "
                        "'aq' or 'aggtree') takes only 'step'");
    }
  }
  if (!request.text_options.empty()) {
    return Status(StatusCode::kInvalidOption,
                  "option '" + request.text_options[0].first +
                      "' needs a method: the default ('auto', which picks "
                      "'aq' or 'aggtree') takes only 'step'");
  }
  // The step grid, or the buckets' (the same rule: buckets are a step
  // grid whose records sit on its points).
  const bool step = options.Number("step").has_value();
  if (step == request.buckets.has_value()) return std::string("aq");
  if (!ValidateBounds(request.lower, request.upper).ok())
    return std::string("aq");
  StatusOr<OutputGrid> grid = RequestGrid(request);
  // A bad step or bucket count is reported by the method that reads it.
  if (!grid.ok() || grid.value().steps() + 1 > kMaxTreeLeaves)
    return std::string("aq");
  const auto points = static_cast<double>(grid.value().steps() + 1);
  // Bad quantiles (NaN would break the sort) are reported by the method.
  if (!ValidateQuantiles(request.quantiles.data(), request.quantiles.size())
           .ok()) {
    return std::string("aq");
  }
  std::vector<double> distinct = request.quantiles;
  std::sort(distinct.begin(), distinct.end());
  const auto m = static_cast<double>(
      std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  const bool tree = request.rho.has_value() ? points <= 128 && m >= 40
                                            : m >= std::max(5.0, points / 24);
  return std::string(tree ? "aggtree" : "aq");
}

namespace {

// A request with "auto" replaced by the method it stands for.
StatusOr<ReleaseRequest> Resolved(const ReleaseRequest& request) {
  StatusOr<std::string> method = ResolveMethod(request);
  if (!method.ok()) return method.status();
  ReleaseRequest resolved = request;
  resolved.method = method.value();
  return resolved;
}

// ReleaseQuantiles; with `prepared`, `data` holds the records' sorted points
// on the request's bucket grid (ReleaseFromCounts, for methods that take
// points and no intervals), which skips clamping, bucketing and sorting.
StatusOr<ReleaseReport> Release(double* data, size_t count,
                                const ReleaseRequest& request, double* out,
                                PrivacySession* session, bool prepared,
                                const double* weights = nullptr) {
  StatusOr<const MethodSpec*> method = FindMethod(request.method);
  if (!method.ok()) return method.status();
  Status status = CheckOptionNames(*method.value(), request);
  if (!status.ok()) return status;
  status = ValidateRecordCount(count);
  if (!status.ok()) return status;
  status = ValidateBounds(request.lower, request.upper);
  if (!status.ok()) return status;
  status =
      ValidateQuantiles(request.quantiles.data(), request.quantiles.size());
  if (!status.ok()) return status;
  StatusOr<PrivacyBudget> budget =
      MakePrivacyBudget(request.epsilon, request.rho);
  if (!budget.ok()) return budget.status();
  // What the release will spend, from public parameters only: a session
  // refuses it here, before the data is read.
  PrivacyBudget spend = budget.value();
  if (const std::optional<double> delta = Options(request).Number("delta")) {
    StatusOr<PrivacyBudget> approx = WithDelta(spend, *delta);
    if (!approx.ok()) return approx.status();
    spend = approx.value();
  }
  // Buckets: their grid, checked before the data is read.
  std::optional<OutputGrid> bucket_grid;
  if (request.buckets.has_value()) {
    if (Options(request).Number("step").has_value()) {
      return Status(StatusCode::kInvalidOption,
                    "step and buckets both set the output grid; give one "
                    "(the buckets' width is (upper - lower) / buckets)");
    }
    StatusOr<OutputGrid> grid =
        BucketGrid(request.lower, request.upper, *request.buckets);
    if (!grid.ok()) return grid.status();
    bucket_grid = grid.value();
  }
  // Per person: bound each person's records, and run the mechanism with the
  // per-record budget that makes one person cost `spend` (contributions.h).
  Neighbouring neighbouring = method.value()->neighbouring;
  int64_t max_contributions = 0;
  if (request.max_contributions.has_value() != (request.users != nullptr)) {
    return Status(StatusCode::kInvalidOption,
                  "users and maxContributions go together: give both to "
                  "protect a person, or neither");
  }
  if (request.max_contributions.has_value()) {
    StatusOr<int64_t> k = ValidateMaxContributions(*request.max_contributions);
    if (!k.ok()) return k.status();
    if (neighbouring != Neighbouring::kAddRemove) {
      return Status(StatusCode::kInvalidOption,
                    "method '" + request.method +
                        "' protects a replaced record with the number of "
                        "records public; per-person protection (users, "
                        "maxContributions) needs an add-remove method");
    }
    neighbouring = Neighbouring::kAddRemoveUser;
    max_contributions = k.value();
  }
  // Intervals: their grid and share, from public parameters only.
  std::optional<OutputGrid> interval_grid;
  double interval_share = kDefaultIntervalShare;
  bool population = false;
  if ((request.interval_share.has_value() || request.interval.has_value()) &&
      !request.confidence.has_value()) {
    return Status(StatusCode::kInvalidOption,
                  "intervalShare and interval apply only with confidence");
  }
  if (request.interval.has_value()) {
    StatusOr<bool> kind = ParseIntervalKind(*request.interval);
    if (!kind.ok()) return kind.status();
    population = kind.value();
  }
  if (population && max_contributions > 1) {
    return Status(StatusCode::kInvalidOption,
                  "population intervals assume independent records; with "
                  "several records per person (maxContributions > 1) they "
                  "are not. Use interval 'sample', or maxContributions 1");
  }
  if (request.confidence.has_value()) {
    status = ValidateConfidence(*request.confidence);
    if (!status.ok()) return status;
    interval_share = request.interval_share.value_or(kDefaultIntervalShare);
    status = ValidateIntervalShare(interval_share);
    if (!status.ok()) return status;
    StatusOr<OutputGrid> grid = RequestGrid(request);
    if (!grid.ok()) return grid.status();
    interval_grid = IntervalGrid(grid.value());
  }
  if (session != nullptr) {
    status = session->Check(spend, neighbouring, max_contributions);
    if (!status.ok()) return status;
  }
  if (!prepared) {
    status = ClampValues(data, count, request.lower, request.upper);
    if (!status.ok()) return status;
    if (bucket_grid.has_value()) ToBucketEdges(data, count, *bucket_grid);
  }

  const SortedQuantiles sorted =
      SortDistinctQuantiles(request.quantiles.data(), request.quantiles.size());
  std::unique_ptr<RandomSource> rng = MakeRandomSource(request.seed);
  ReleaseReport report;
  report.method = method.value()->name;
  report.spent = spend;
  report.neighbouring = NeighbouringName(neighbouring);
  report.max_contributions = max_contributions;
  report.seeded = request.seed.has_value();
  // The mechanisms run at or below the decimals written (privacy.h); every
  // split below divides that, rounding down.
  PrivacyBudget per_record = AtOrBelowWritten(spend);
  PrivacyBudget intervals_per_record;
  if (interval_grid.has_value()) {
    // The values get the rest of the budget, the intervals their share.
    const BudgetSplit split = SplitBudget(per_record, interval_share);
    per_record = split.rest;
    intervals_per_record = split.share;
    report.has_intervals = true;
    // Reported as the ledger sees it: the share of the decimals written.
    report.interval_spent = WrittenShare(spend, interval_share);
  }
  if (max_contributions > 0) {
    count =
        BoundContributions(data, request.users, count, max_contributions, *rng);
    per_record = PerRecordBudget(per_record, max_contributions);
    intervals_per_record =
        PerRecordBudget(intervals_per_record, max_contributions);
  }
  if (bucket_grid.has_value() && !prepared && weights == nullptr) {
    // Sorted (after per-person bounding, which reads the records in the
    // users' order): then nothing downstream, such as HSJointExp's
    // per-record jitter, depends on an order that counts do not have.
    // (Counts arrive sorted; weighted edges too, and never go here.)
    if (!std::is_sorted(data, data + count)) std::sort(data, data + count);
  }
  Brackets brackets;
  if (interval_grid.has_value()) {
    // On the clamped, sorted records, before the method prepares them.
    std::sort(data, data + count);
    double mechanism_confidence = *request.confidence;
    std::vector<double> below;
    std::vector<double> above;
    if (population) {
      // A noisy count bounds n from above; then the sampling offsets.
      const double beta = 1 - *request.confidence;
      const BudgetSplit split =
          SplitBudget(intervals_per_record, kPopulationCountShare);
      intervals_per_record = split.rest;
      StatusOr<double> bound = NoisyCountUpperBound(
          count, split.share, kPopulationCountBeta * beta, *rng);
      if (!bound.ok()) return bound.status();
      mechanism_confidence = 1 - kPopulationMechanismBeta * beta;
      const double beta_half = kPopulationSamplingBeta * beta / 2;
      for (double q : sorted.distinct) {
        below.push_back(SamplingOffsetBelow(q, bound.value(), beta_half));
        above.push_back(SamplingOffsetAbove(q, bound.value(), beta_half));
      }
      report.interval_population = true;
      report.interval_count_spent = split.share;
      report.interval_count_bound = bound.value();
    }
    const double epsilon_each = ExponentialMechanismEpsilonPerPart(
        intervals_per_record, static_cast<int>(2 * sorted.distinct.size()));
    brackets =
        SampleBrackets(data, count, *interval_grid, sorted.distinct,
                       epsilon_each, mechanism_confidence, *rng, below, above);
    report.interval_epsilon = epsilon_each;
  }
  Context context{data,
                  count,
                  request,
                  per_record,
                  sorted.distinct,
                  *rng,
                  Options(request),
                  prepared,
                  weights};
  std::vector<double> values;
  status = method.value()->run(context, &report, &values);
  if (!status.ok()) return status;
  if (!rng->healthy()) return EntropyUnavailable();
  if (session != nullptr) {
    // Checked above with the same spend; nothing has been charged since on
    // this (single-threaded) session.
    status = session->Charge(report.spent, neighbouring, max_contributions);
    if (!status.ok()) return status;
  }
  for (size_t i = 0; i < request.quantiles.size(); ++i) {
    out[i] = values[sorted.index_of_input[i]];
  }
  if (report.has_intervals) {
    // Widened to hold the released value: still covers (post-processing).
    for (size_t i = 0; i < request.quantiles.size(); ++i) {
      const size_t j = sorted.index_of_input[i];
      report.interval_low.push_back(std::min(brackets.low[j], out[i]));
      report.interval_high.push_back(std::max(brackets.high[j], out[i]));
    }
  }
  return report;
}

}  // namespace

StatusOr<ReleaseReport> ReleaseQuantiles(double* data, size_t count,
                                         const ReleaseRequest& request,
                                         double* out, PrivacySession* session) {
  if (request.method == "auto") {
    StatusOr<ReleaseRequest> resolved = Resolved(request);
    if (!resolved.ok()) return resolved.status();
    return Release(data, count, resolved.value(), out, session, false);
  }
  return Release(data, count, request, out, session, false);
}

StatusOr<ReleaseReport> ReleaseFromCounts(const double* counts,
                                          size_t bucket_count,
                                          const ReleaseRequest& request,
                                          double* out, PrivacySession* session,
                                          const RecordsCheck& fits) {
  if (request.method == "auto") {
    // Resolved on the counts' grid, as the bucketed raw path resolves it.
    ReleaseRequest bucketed = request;
    if (!bucketed.buckets.has_value())
      bucketed.buckets = static_cast<double>(bucket_count);
    StatusOr<ReleaseRequest> resolved = Resolved(bucketed);
    if (!resolved.ok()) return resolved.status();
    return ReleaseFromCounts(counts, bucket_count, resolved.value(), out,
                             session, fits);
  }
  if (request.users != nullptr || request.max_contributions.has_value()) {
    return Status(StatusCode::kInvalidOption,
                  "counts do not say whose rows they are: per-person "
                  "protection (users, maxContributions) needs the rows");
  }
  if (request.buckets.has_value() &&
      *request.buckets != static_cast<double>(bucket_count)) {
    return Status(StatusCode::kInvalidOption,
                  "buckets is the number of counts here; leave it out");
  }
  // Public checks first, so a bad grid is reported before the counts are
  // read.
  Status status = ValidateBounds(request.lower, request.upper);
  if (!status.ok()) return status;
  StatusOr<OutputGrid> grid = BucketGrid(request.lower, request.upper,
                                         static_cast<double>(bucket_count));
  if (!grid.ok()) return grid.status();
  ReleaseRequest bucketed = request;
  bucketed.buckets = static_cast<double>(bucket_count);
  StatusOr<const MethodSpec*> method = FindMethod(request.method);
  // The trees read only cell counts: each non-empty bucket's edge once,
  // with its count as weight, is what the expanded records give them
  // (every record of a bucket sits on its edge), so nothing is expanded
  // and the counts may add up to 2^53 - 1. Intervals read the records.
  if (method.ok() && method.value()->takes_weights &&
      !request.confidence.has_value()) {
    StatusOr<double> sum =
        ValidateCounts(counts, bucket_count, kMaxCountedRecords);
    if (!sum.ok()) return sum.status();
    size_t occupied = 0;
    for (size_t i = 0; i < bucket_count; ++i) occupied += counts[i] > 0;
    std::unique_ptr<double[]> edges(new (std::nothrow) double[occupied + 1]);
    std::unique_ptr<double[]> weights(new (std::nothrow) double[occupied + 1]);
    if (edges == nullptr || weights == nullptr) {
      return Status(StatusCode::kTooLarge, "no memory for the buckets' edges");
    }
    size_t k = 0;
    for (size_t i = 0; i < bucket_count; ++i) {
      if (counts[i] > 0) {
        edges[k] = grid.value().ValueAt(static_cast<int64_t>(i));
        weights[k++] = counts[i];
      }
    }
    return Release(edges.get(), occupied, bucketed, out, session, false,
                   weights.get());
  }
  StatusOr<double> sum = ValidateCounts(counts, bucket_count);
  if (!sum.ok()) return sum.status();
  const auto total = static_cast<size_t>(sum.value());  // <= kMaxRecords
  if (fits) {
    status = fits(total);
    if (!status.ok()) return status;
  }
  // The bucketed raw path keeps only each record's bucket edge, and a
  // method that takes points then maps edge i to point i of the bucket grid
  // and sorts. So for those methods (without intervals, which read values)
  // the prepared form is bucket i's index repeated counts[i] times, built
  // directly; the others get the edges. Either way the mechanism reads what
  // the raw path gives it, so the release is the same bit for bit.
  const bool points = method.ok() && method.value()->takes_points &&
                      !request.confidence.has_value();
  // Every slot is written below, so none is zeroed first. Four spare slots:
  // each bucket writes its record to the next four slots and advances by
  // its count, so counts 0 to 4 (almost all of them with fine buckets) take
  // no data-dependent branch; a later bucket overwrites the excess. Without
  // exceptions, a failed allocation is a null pointer, reported as
  // TOO_LARGE.
  constexpr size_t kSpare = 4;
  const size_t n = total;
  std::unique_ptr<double[]> records(new (std::nothrow) double[n + kSpare]);
  if (records == nullptr) {
    return Status(StatusCode::kTooLarge,
                  "no memory to expand the counts to one number per row "
                  "(private: for the data owner only); 'aggtree' and "
                  "'tree-cdf' expand nothing");
  }
  double* next = records.get();
  for (size_t i = 0; i < bucket_count; ++i) {
    // Whole, and at most their sum <= kMaxRecords = 2^31 (ValidateCounts):
    // exact in a size_t, 32-bit in WebAssembly too.
    const auto c = static_cast<size_t>(counts[i]);
    // An empty bucket's record is overwritten (or past the end): no edge.
    const double record =
        points ? static_cast<double>(i)
               : (c == 0 ? 0.0 : grid.value().ValueAt(static_cast<int64_t>(i)));
    for (size_t k = 0; k < kSpare; ++k) next[k] = record;
    for (size_t k = kSpare; k < c; ++k) next[k] = record;
    next += c;
  }
  return Release(records.get(), n, bucketed, out, session, points);
}

StatusOr<size_t> SanitizeSize(const std::optional<double>& size) {
  if (!size.has_value()) return kDefaultSanitizeSize;
  if (!(*size >= 1 && *size <= static_cast<double>(kMaxQuantiles)) ||
      *size != std::floor(*size)) {
    return Status(StatusCode::kInvalidOption,
                  "size must be a whole number from 1 to " +
                      std::to_string(kMaxQuantiles));
  }
  return static_cast<size_t>(*size);
}

StatusOr<ReleaseReport> SanitizeSample(double* data, size_t count,
                                       const SanitizeRequest& request,
                                       double* out, PrivacySession* session) {
  StatusOr<size_t> size = SanitizeSize(request.size);
  if (!size.ok()) return size.status();
  ReleaseRequest release;
  release.lower = request.lower;
  release.upper = request.upper;
  release.epsilon = request.epsilon;
  release.rho = request.rho;
  release.seed = request.seed;
  release.users = request.users;
  release.max_contributions = request.max_contributions;
  release.method = "aq";
  if (request.step.has_value())
    release.options.push_back({"step", *request.step});
  // Evenly spaced quantiles i / (size + 1): each synthetic value stands for
  // an equal share of the records (Corollary 3.6 with AQ's uniform quantiles).
  for (size_t i = 1; i <= size.value(); ++i) {
    release.quantiles.push_back(static_cast<double>(i) /
                                static_cast<double>(size.value() + 1));
  }
  StatusOr<ReleaseReport> report =
      ReleaseQuantiles(data, count, release, out, session);
  if (report.ok()) report.value().method = "sanitize";
  return report;
}

}  // namespace dpq
