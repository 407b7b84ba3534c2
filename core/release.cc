#include "core/release.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "core/agg_tree.h"
#include "core/contributions.h"
#include "core/intervals.h"
#include "core/methods.h"
#include "core/pipeline.h"
#include "core/plan.h"
#include "core/prepare.h"
#include "core/random.h"
#include "core/runs.h"
#include "core/step_look.h"

// A release is a pipeline (DESIGN.md): plan (plan.h: public parameters
// only, refusals before any data is read) -> prepare (rows or counts to
// runs on the release grid, runs.h) -> run (the intervals and the method on
// the runs, methods.h) -> report (values in the caller's order, intervals,
// what was spent; the session charged). This file is the entry points and
// that pipeline; what a method or a feature does lives in its own pair.

namespace dpq {

std::vector<std::string> ReleaseMethods() {
  std::vector<std::string> names;
  // ("auto" is the default's run, not a method one names.)
  for (const MethodSpec& method : Methods()) {
    if (std::string(method.name) != "auto") names.push_back(method.name);
  }
  return names;
}

double ReleaseWorkingBytes(const ReleaseRequest& request) {
  const StatusOr<std::string> method = ResolveMethod(request);
  if (!method.ok()) return 0;
  ReleaseRequest resolved = request;
  resolved.method = method.value();
  const StatusOr<ReleasePlan> planned = PlanRelease(resolved, nullptr);
  if (!planned.ok() || planned.value().method->working_bytes == nullptr) {
    return 0;
  }
  const ReleasePlan& plan = planned.value();
  SeededRandom unread(0);  // the estimate draws nothing
  const MethodInput input{Runs(),
                          plan.grid,
                          resolved,
                          plan.budget,
                          plan.quantiles.distinct,
                          unread,
                          MethodOptions(resolved)};
  return plan.method->working_bytes(input);
}

StatusOr<std::string> ResolveMethod(const ReleaseRequest& request) {
  if (request.method != "auto") return request.method;
  const MethodOptions options(request);
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
  const bool bounds = ValidateBounds(request.lower, request.upper).ok();
  if (!step && !request.buckets.has_value()) {
    // The default grid: the step look where it has candidates (step_look.h;
    // the method "auto"), else AQ.
    return std::string(bounds && StepLookLevels(OutputGrid::Default(
                                     request.lower, request.upper)) > 0
                           ? "auto"
                           : "aq");
  }
  if (step && request.buckets.has_value()) return std::string("aq");
  if (!bounds) return std::string("aq");
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
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return std::string(AutoPicksTree(points, distinct, request.rho.has_value())
                         ? "aggtree"
                         : "aq");
}

StatusOr<ReleaseRequest> Resolved(const ReleaseRequest& request) {
  StatusOr<std::string> method = ResolveMethod(request);
  if (!method.ok()) return method.status();
  ReleaseRequest resolved = request;
  resolved.method = method.value();
  return resolved;
}

namespace {

// Prepare, rows: with buckets or users, check finite and clamp, replace by
// the buckets' edges (buckets), keep at most k records a person (users);
// then RowsToRuns (check, clamp, map to the grid's points, sort,
// run-length): the runs live in the rows' buffer, their cumulative counts
// in *ends.
StatusOr<Runs> PrepareRows(double* data, size_t count, const uint32_t* users,
                           const ReleaseRequest& request,
                           const ReleasePlan& plan, RandomSource& rng,
                           std::unique_ptr<double[]>* ends) {
  Status status = ValidateRecordCount(count);
  if (!status.ok()) return status;
  if (plan.bucketed || plan.max_contributions > 0) {
    status = ClampValues(data, count, request.lower, request.upper);
    if (!status.ok()) return status;
  }
  if (plan.bucketed) ToBucketEdges(data, count, plan.grid);
  if (plan.max_contributions > 0) {
    count = BoundContributions(data, users, count, plan.max_contributions, rng);
  }
  ends->reset(new (std::nothrow) double[std::max<size_t>(count, 1)]);
  if (*ends == nullptr) {
    return Status(StatusCode::kTooLarge,
                  "no memory for the records' runs (private: for the data "
                  "owner only)");
  }
  return RowsToRuns(data, count, plan.grid, ends->get());
}

// The intervals' brackets on the runs (intervals.h), before the method runs.
StatusOr<Brackets> RunIntervals(const Runs& runs, const OutputGrid& grid,
                                const IntervalPlan& intervals,
                                const std::vector<double>& quantiles,
                                RandomSource& rng, ReleaseReport* report) {
  std::vector<double> below;
  std::vector<double> above;
  if (intervals.population) {
    // A noisy count bounds n from above; then the sampling offsets.
    StatusOr<double> bound =
        NoisyCountUpperBound(static_cast<size_t>(runs.total()), intervals.count,
                             intervals.count_beta, rng);
    if (!bound.ok()) return bound.status();
    for (double q : quantiles) {
      below.push_back(
          SamplingOffsetBelow(q, bound.value(), intervals.sampling_beta_half));
      above.push_back(
          SamplingOffsetAbove(q, bound.value(), intervals.sampling_beta_half));
    }
    report->interval_population = true;
    report->interval_count_spent = intervals.count;
    report->interval_count_bound = bound.value();
  }
  report->has_intervals = true;
  report->interval_spent = intervals.spent;
  report->interval_simultaneous = intervals.simultaneous;
  Brackets brackets;
  if (intervals.tree) {
    report->interval_method = "tree";
    report->interval_epsilon = intervals.tree_level.epsilon;
    report->interval_rho = intervals.tree_level.rho;
    report->interval_parts = intervals.tree_shape.height;
    // Population intervals aim their sampling offsets further out.
    std::vector<double> low_offsets = intervals.tree_offsets;
    std::vector<double> high_offsets = intervals.tree_offsets;
    for (size_t i = 0; i < below.size(); ++i) {
      low_offsets[i] += below[i];
      high_offsets[i] += above[i];
    }
    brackets = TreeIntervals(runs, grid, intervals.grid, intervals.tree_shape,
                             intervals.tree_noise, quantiles, low_offsets,
                             high_offsets, rng);
  } else {
    report->interval_method = "brackets";
    report->interval_epsilon = intervals.bracket_epsilon;
    report->interval_parts = static_cast<int>(2 * quantiles.size());
    brackets = SampleBrackets(
        runs, grid, intervals.grid, quantiles, intervals.bracket_epsilon,
        intervals.mechanism_confidence, rng, below, above);
  }
  // Monotone in q by post-processing that only widens: each low the least
  // of the lows at or above its quantile, each high the most of the highs
  // at or below it.
  for (size_t i = brackets.low.size(); i-- > 1;) {
    brackets.low[i - 1] = std::min(brackets.low[i - 1], brackets.low[i]);
  }
  for (size_t i = 1; i < brackets.high.size(); ++i) {
    brackets.high[i] = std::max(brackets.high[i], brackets.high[i - 1]);
  }
  return brackets;
}

}  // namespace

namespace {

// What the intervals and the method run with: the plan's, or after the
// default's step look its outcome and what it left, and on a step found
// that step's grid, method and intervals' plan.
struct Stage {
  const OutputGrid* grid;
  const MethodSpec* method;
  const IntervalPlan* intervals;  // nullptr: none asked for
  PrivacyBudget budget;
  std::optional<StepLookOutcome> step_look;
};

// The intervals, then the method, on runs on stage.grid.
StatusOr<ReleaseReport> RunStages(const Runs& runs,
                                  const ReleaseRequest& request,
                                  const ReleasePlan& plan, const Stage& stage,
                                  RandomSource& rng, double* out,
                                  ReleaseReport report) {
  Brackets brackets;
  if (stage.intervals != nullptr) {
    StatusOr<Brackets> drawn =
        RunIntervals(runs, *stage.grid, *stage.intervals,
                     plan.quantiles.distinct, rng, &report);
    if (!drawn.ok()) return drawn.status();
    brackets = std::move(drawn.value());
  }
  std::vector<double> values;
  const MethodInput input{runs,
                          *stage.grid,
                          request,
                          stage.budget,
                          plan.quantiles.distinct,
                          rng,
                          MethodOptions(request),
                          stage.step_look};
  Status status = stage.method->run(input, &report, &values);
  if (!status.ok()) return status;
  if (!rng.healthy()) return EntropyUnavailable();
  const std::vector<size_t>& index = plan.quantiles.index_of_input;
  for (size_t i = 0; i < request.quantiles.size(); ++i) {
    out[i] = values[index[i]];
  }
  if (report.has_intervals) {
    // Widened to hold the released value: still covers (post-processing).
    for (size_t i = 0; i < request.quantiles.size(); ++i) {
      report.interval_low.push_back(std::min(brackets.low[index[i]], out[i]));
      report.interval_high.push_back(std::max(brackets.high[index[i]], out[i]));
    }
  }
  return report;
}

}  // namespace

StatusOr<ReleaseReport> RunPrepared(const Runs& runs,
                                    const ReleaseRequest& request,
                                    const ReleasePlan& plan, RandomSource& rng,
                                    double* out, const DefaultOnStep* on_step) {
  ReleaseReport report;
  report.method = plan.method->name;
  report.spent = plan.spend;
  report.neighbouring = NeighbouringName(plan.neighbouring);
  report.max_contributions = plan.max_contributions;
  report.seeded = request.seed.has_value();
  const IntervalPlan* intervals =
      plan.intervals.has_value() ? &*plan.intervals : nullptr;
  if (std::string(plan.method->name) != "auto") {
    return RunStages(runs, request, plan,
                     {&plan.grid, plan.method, intervals, plan.budget, {}}, rng,
                     out, std::move(report));
  }
  // The default: its step look first (here, or before a grouped release
  // over every key), so that the intervals and the method both run on a
  // step it finds (step_look.h).
  PrivacyBudget rest = plan.budget;
  std::optional<StepLookOutcome> look = plan.step_look;
  if (!look.has_value()) {
    StatusOr<StepLookOutcome> taken =
        TakeStepLook(runs, plan.grid, plan.budget, rng, &report, &rest);
    if (!taken.ok()) return taken.status();
    look = taken.value();
  }
  report.step_look_share = kStepLookShare;
  if (look->level == 0) {
    return RunStages(runs, request, plan,
                     {&plan.grid, plan.method, intervals, rest, look}, rng, out,
                     std::move(report));
  }
  // A step found: the release `step` would give (the default's rule picks
  // AggTree or AQ), the records moved to the step's nearest points, the
  // intervals planned on its grid: all public given the step.
  std::optional<DefaultOnStep> made;
  if (on_step == nullptr) {
    StatusOr<DefaultOnStep> on = PlanDefaultOnStep(
        request, plan, look->level, rest.kind == PrivacyBudget::Kind::kZcdp);
    if (!on.ok()) return on.status();
    made = std::move(on.value());
    on_step = &*made;
  }
  const DefaultOnStep& chosen = *on_step;
  report.step_look_step = chosen.step;
  StatusOr<RunsStore> moved = RunsStore::OnGrid(runs, plan.grid, chosen.grid);
  if (!moved.ok()) return moved.status();
  report.method = chosen.method->name;
  return RunStages(moved.value().view(), chosen.request, plan,
                   {&chosen.grid,
                    chosen.method,
                    chosen.intervals.has_value() ? &*chosen.intervals : nullptr,
                    rest,
                    {}},
                   rng, out, std::move(report));
}

StatusOr<DefaultOnStep> PlanDefaultOnStep(const ReleaseRequest& request,
                                          const ReleasePlan& plan, int level,
                                          bool rho) {
  const double step = StepLookStep(plan.grid, level);
  StatusOr<OutputGrid> grid =
      OutputGrid::WithStep(request.lower, request.upper, step);
  if (!grid.ok()) return grid.status();  // (StepLookLevels checked it)
  StatusOr<const MethodSpec*> method = FindMethod(
      AutoTreeOnStep(grid.value(), plan.quantiles.distinct, rho) ? "aggtree"
                                                                 : "aq");
  if (!method.ok()) return method.status();
  DefaultOnStep on{step, grid.value(), method.value(), request, {}};
  on.request.options.emplace_back("step", step);
  on.request.method = on.method->name;
  if (plan.intervals.has_value()) {
    on.intervals = *plan.intervals;
    on.intervals->grid = IntervalGrid(on.grid);
    const Status status =
        PlanIntervalMechanism(plan.quantiles.distinct, &*on.intervals);
    if (!status.ok()) return status;
  }
  return on;
}

namespace {

// Run and report: the same for rows and counts, so the same runs give the
// same release; then the session is charged.
StatusOr<ReleaseReport> RunAndReport(const Runs& runs,
                                     const ReleaseRequest& request,
                                     const ReleasePlan& plan, RandomSource& rng,
                                     PrivacySession* session, double* out) {
  StatusOr<ReleaseReport> report = RunPrepared(runs, request, plan, rng, out);
  if (!report.ok() || session == nullptr) return report;
  // Checked in the plan with the same spend; nothing has been charged since
  // on this (single-threaded) session.
  const Status status = session->Charge(report.value().spent, plan.neighbouring,
                                        plan.max_contributions);
  if (!status.ok()) return status;
  return report;
}

}  // namespace

StatusOr<ReleaseReport> ReleaseQuantiles(double* data, size_t count,
                                         const ReleaseRequest& request,
                                         double* out, PrivacySession* session) {
  StatusOr<ReleaseRequest> resolved = Resolved(request);
  if (!resolved.ok()) return resolved.status();
  StatusOr<ReleasePlan> plan = PlanRelease(resolved.value(), session);
  if (!plan.ok()) return plan.status();
  std::unique_ptr<RandomSource> rng = MakeRandomSource(request.seed);
  std::unique_ptr<double[]> ends;
  StatusOr<Runs> runs = PrepareRows(
      data, count, request.users, resolved.value(), plan.value(), *rng, &ends);
  if (!runs.ok()) return runs.status();
  return RunAndReport(runs.value(), resolved.value(), plan.value(), *rng,
                      session, out);
}

namespace {

// Both counts entry points: `ends` is where the runs' cumulative counts go,
// `counts` itself or nullptr for arrays of their own.
StatusOr<ReleaseReport> CountsRelease(const double* counts, size_t bucket_count,
                                      double* ends,
                                      const ReleaseRequest& request,
                                      double* out, PrivacySession* session) {
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
  // The counts' grid is the buckets': resolved and planned as the bucketed
  // rows are, so both release the same values.
  ReleaseRequest bucketed = request;
  bucketed.buckets = static_cast<double>(bucket_count);
  StatusOr<ReleaseRequest> resolved = Resolved(bucketed);
  if (!resolved.ok()) return resolved.status();
  StatusOr<ReleasePlan> plan = PlanRelease(resolved.value(), session);
  if (!plan.ok()) return plan.status();
  // Prepare, counts: the non-empty buckets are the runs, in O(buckets).
  StatusOr<RunsStore> store = ends == nullptr
                                  ? RunsStore::FromCounts(counts, bucket_count)
                                  : RunsStore::PointsFor(bucket_count);
  if (!store.ok()) return store.status();
  Runs runs = store.value().view();
  if (ends != nullptr) {
    StatusOr<Runs> in_place =
        CountsToRuns(counts, bucket_count, store.value().points(), ends);
    if (!in_place.ok()) return in_place.status();
    runs = in_place.value();
  }
  std::unique_ptr<RandomSource> rng = MakeRandomSource(request.seed);
  return RunAndReport(runs, resolved.value(), plan.value(), *rng, session, out);
}

}  // namespace

StatusOr<ReleaseReport> ReleaseFromCounts(const double* counts,
                                          size_t bucket_count,
                                          const ReleaseRequest& request,
                                          double* out,
                                          PrivacySession* session) {
  return CountsRelease(counts, bucket_count, nullptr, request, out, session);
}

StatusOr<ReleaseReport> ReleaseFromCountsInPlace(double* counts,
                                                 size_t bucket_count,
                                                 const ReleaseRequest& request,
                                                 double* out,
                                                 PrivacySession* session) {
  return CountsRelease(counts, bucket_count, counts, request, out, session);
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
