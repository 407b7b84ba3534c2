#include "core/plan.h"

#include <string>

#include "core/contributions.h"
#include "core/intervals.h"

namespace dpq {

StatusOr<OutputGrid> RequestGrid(const ReleaseRequest& request) {
  if (request.buckets.has_value()) {
    return BucketGrid(request.lower, request.upper, *request.buckets);
  }
  if (const std::optional<double> step =
          MethodOptions(request).Number("step")) {
    return OutputGrid::WithStep(request.lower, request.upper, *step);
  }
  return OutputGrid::Default(request.lower, request.upper);
}

namespace {

// What the release spends, as written: epsilon or rho, with `delta`
// (appindexp) (epsilon, delta).
StatusOr<PrivacyBudget> SpendOf(const ReleaseRequest& request) {
  StatusOr<PrivacyBudget> budget =
      MakePrivacyBudget(request.epsilon, request.rho);
  if (!budget.ok()) return budget.status();
  if (const std::optional<double> delta =
          MethodOptions(request).Number("delta")) {
    return WithDelta(budget.value(), *delta);
  }
  return budget;
}

// The grid: the buckets' (not with a step), the step's, or the default.
StatusOr<OutputGrid> GridOf(const ReleaseRequest& request, bool* bucketed) {
  *bucketed = request.buckets.has_value();
  if (*bucketed && MethodOptions(request).Number("step").has_value()) {
    return Status(StatusCode::kInvalidOption,
                  "step and buckets both set the output grid; give one "
                  "(the buckets' width is (upper - lower) / buckets)");
  }
  return RequestGrid(request);
}

// Per person (contributions.h): k, and the relation the release protects.
Status PlanPerPerson(const ReleaseRequest& request, ReleasePlan* plan) {
  plan->neighbouring = plan->method->neighbouring;
  if (request.max_contributions.has_value() !=
      (request.users != nullptr || request.contributions_bounded)) {
    return Status(StatusCode::kInvalidOption,
                  "users and maxContributions go together: give both to "
                  "protect a person, or neither");
  }
  if (!request.max_contributions.has_value()) return Status::Ok();
  StatusOr<int64_t> k = ValidateMaxContributions(*request.max_contributions);
  if (!k.ok()) return k.status();
  if (plan->neighbouring != Neighbouring::kAddRemove) {
    return Status(StatusCode::kInvalidOption,
                  "method '" + request.method +
                      "' protects a replaced record with the number of "
                      "records public; per-person protection (users, "
                      "maxContributions) needs an add-remove method");
  }
  plan->neighbouring = Neighbouring::kAddRemoveUser;
  plan->max_contributions = k.value();
  return Status::Ok();
}

// Intervals: whether they are asked for, their kind, confidence and share.
Status PlanIntervalOptions(const ReleaseRequest& request, ReleasePlan* plan,
                           double* share) {
  if ((request.interval_share.has_value() || request.interval.has_value() ||
       request.interval_simultaneous.has_value()) &&
      !request.confidence.has_value()) {
    return Status(StatusCode::kInvalidOption,
                  "intervalShare, interval and simultaneous apply only with "
                  "confidence");
  }
  bool population = false;
  if (request.interval.has_value()) {
    StatusOr<bool> kind = ParseIntervalKind(*request.interval);
    if (!kind.ok()) return kind.status();
    population = kind.value();
  }
  if (population && plan->max_contributions > 1) {
    return Status(StatusCode::kInvalidOption,
                  "population intervals assume independent records; with "
                  "several records per person (maxContributions > 1) they "
                  "are not. Use interval 'sample', or maxContributions 1");
  }
  if (!request.confidence.has_value()) return Status::Ok();
  Status status = ValidateConfidence(*request.confidence);
  if (!status.ok()) return status;
  *share = request.interval_share.value_or(kDefaultIntervalShare);
  status = ValidateIntervalShare(*share);
  if (!status.ok()) return status;
  IntervalPlan intervals;
  intervals.grid = IntervalGrid(plan->grid);
  intervals.population = population;
  intervals.simultaneous = request.interval_simultaneous.value_or(false);
  intervals.mechanism_confidence = *request.confidence;
  plan->intervals = intervals;
  return Status::Ok();
}

// How the budget splits: the values get the rest of it, the intervals
// their share; per person each part is divided for k records; population
// intervals give part of theirs to a noisy count. Every split of the
// double at or below the decimals written, rounded down. Then brackets or a
// tree, whichever has the smaller mechanism offsets (population intervals
// add the same sampling offsets to either).
Status SplitBudgets(const ReleaseRequest& request, double share,
                    ReleasePlan* plan) {
  plan->budget = AtOrBelowWritten(plan->spend);
  PrivacyBudget intervals;
  if (plan->intervals.has_value()) {
    const BudgetSplit split = SplitBudget(plan->budget, share);
    plan->budget = split.rest;
    intervals = split.share;
    plan->intervals->spent = WrittenShare(plan->spend, share);
  }
  if (plan->max_contributions > 0) {
    plan->budget = PerRecordBudget(plan->budget, plan->max_contributions);
    intervals = PerRecordBudget(intervals, plan->max_contributions);
  }
  if (!plan->intervals.has_value()) return Status::Ok();
  IntervalPlan& planned = *plan->intervals;
  const std::vector<double>& quantiles = plan->quantiles.distinct;
  // Simultaneous: a union bound over the quantiles' intervals.
  const double beta =
      (1 - *request.confidence) /
      (planned.simultaneous ? static_cast<double>(quantiles.size()) : 1.0);
  planned.mechanism_confidence = 1 - beta;
  if (planned.population) {
    // A noisy count bounds n from above; then the sampling offsets.
    const BudgetSplit split = SplitBudget(intervals, kPopulationCountShare);
    intervals = split.rest;
    planned.count = split.share;
    planned.count_beta = kPopulationCountBeta * beta;
    planned.mechanism_confidence = 1 - kPopulationMechanismBeta * beta;
    planned.sampling_beta_half = kPopulationSamplingBeta * beta / 2;
  }
  planned.brackets = intervals;
  // The mechanisms' part of beta, each side half of it (population
  // intervals give the rest to the count and the sampling).
  planned.mechanism_beta =
      planned.population ? kPopulationMechanismBeta * beta : beta;
  return PlanIntervalMechanism(quantiles, &planned);
}

}  // namespace

Status PlanIntervalMechanism(const std::vector<double>& quantiles,
                             IntervalPlan* plan) {
  IntervalPlan& planned = *plan;
  const PrivacyBudget& intervals = planned.brackets;
  const double mechanism_beta = planned.mechanism_beta;
  planned.tree = false;
  planned.tree_offsets.clear();
  planned.bracket_epsilon = ExponentialMechanismEpsilonPerPart(
      intervals, static_cast<int>(2 * quantiles.size()));
  StatusOr<AggTreeShape> shape = IntervalTreeShape(planned.grid);
  if (!shape.ok()) return Status::Ok();  // brackets, then
  const PrivacyBudget level = AggTreeLevelBudget(shape.value(), intervals);
  StatusOr<CountNoise> noise = CountNoiseFor(level);
  if (!noise.ok()) return noise.status();
  std::vector<double> offsets =
      TreeIntervalOffsets(shape.value(), planned.grid, noise.value(), quantiles,
                          mechanism_beta / 2);
  double tree_total = 0;
  double brackets_total = 0;
  for (size_t i = 0; i < quantiles.size(); ++i) {
    tree_total += offsets[i];
    brackets_total +=
        IntervalRankOffset(planned.bracket_epsilon, quantiles[i],
                           planned.grid.steps(), planned.mechanism_confidence);
  }
  if (tree_total < brackets_total) {
    planned.tree = true;
    planned.tree_shape = shape.value();
    planned.tree_level = level;
    planned.tree_noise = noise.value();
    planned.tree_offsets = std::move(offsets);
  }
  return Status::Ok();
}

StatusOr<ReleasePlan> PlanRelease(const ReleaseRequest& request,
                                  const PrivacySession* session) {
  ReleasePlan plan;
  StatusOr<const MethodSpec*> method = FindMethod(request.method);
  if (!method.ok()) return method.status();
  plan.method = method.value();
  Status status = CheckOptionNames(*plan.method, request);
  if (!status.ok()) return status;
  status = ValidateBounds(request.lower, request.upper);
  if (!status.ok()) return status;
  status =
      ValidateQuantiles(request.quantiles.data(), request.quantiles.size());
  if (!status.ok()) return status;
  StatusOr<PrivacyBudget> spend = SpendOf(request);
  if (!spend.ok()) return spend.status();
  plan.spend = spend.value();
  StatusOr<OutputGrid> grid = GridOf(request, &plan.bucketed);
  if (!grid.ok()) return grid.status();
  plan.grid = grid.value();
  status = PlanPerPerson(request, &plan);
  if (!status.ok()) return status;
  double share = 0;
  status = PlanIntervalOptions(request, &plan, &share);
  if (!status.ok()) return status;
  plan.quantiles =
      SortDistinctQuantiles(request.quantiles.data(), request.quantiles.size());
  status = SplitBudgets(request, share, &plan);
  if (!status.ok()) return status;
  if (session != nullptr) {
    status =
        session->Check(plan.spend, plan.neighbouring, plan.max_contributions);
    if (!status.ok()) return status;
  }
  return plan;
}

}  // namespace dpq
