// The plan stage of a release (DESIGN.md, "A release is a pipeline"): every
// decision that public parameters make — the method, its options' names,
// the bounds, the quantiles, the budget and how it splits, the grid, the
// per-person bound, the intervals — taken before any data is read. A request
// that cannot be planned is refused here, so such a refusal says nothing
// about the data; a session refuses a release that would not fit here too.
#ifndef DPQ_CORE_PLAN_H_
#define DPQ_CORE_PLAN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "core/agg_tree.h"
#include "core/discrete_noise.h"
#include "core/methods.h"
#include "core/prepare.h"
#include "core/privacy.h"
#include "core/request.h"
#include "core/session.h"
#include "core/status.h"

namespace dpq {

// The release grid over [lower, upper]: the buckets', the public `step`'s,
// or the default. The records are prepared on it (runs.h).
StatusOr<OutputGrid> RequestGrid(const ReleaseRequest& request);

// Confidence intervals (intervals.h): their grid and budgets, per record.
struct IntervalPlan {
  OutputGrid grid;
  bool population = false;
  // The brackets' confidence: the caller's, or for population intervals
  // its part 1 - kPopulationMechanismBeta beta.
  double mechanism_confidence = 0;
  // The mechanisms' part of beta, each side half of it.
  double mechanism_beta = 0;
  PrivacyBudget brackets;         // the 2m brackets together
  double bracket_epsilon = 0;     // each bracket mechanism's
  PrivacyBudget count;            // population: the noisy count's
  double count_beta = 0;          // population: its failure probability
  double sampling_beta_half = 0;  // population: each sampling offset's
  bool simultaneous = false;      // beta split over the quantiles
  // Tree intervals (intervals.h), chosen when their offsets are smaller:
  // the tree over `grid`, every node's noise, each quantile's offset.
  bool tree = false;
  AggTreeShape tree_shape;
  PrivacyBudget tree_level;  // each level's share (the noise's budget)
  CountNoise tree_noise;
  std::vector<double> tree_offsets;
  PrivacyBudget spent;  // the intervals' share, as the ledger sees it
};

struct ReleasePlan {
  const MethodSpec* method = nullptr;
  OutputGrid grid;        // the release grid
  bool bucketed = false;  // rows are replaced by their buckets' edges
  PrivacyBudget spend;    // what the release spends, as written
  // The method's budget per record: at or below the decimals written
  // (AtOrBelowWritten), after the intervals' share and the per-person
  // division, every split rounded down.
  PrivacyBudget budget;
  Neighbouring neighbouring = Neighbouring::kAddRemove;
  int64_t max_contributions = 0;  // add-remove-user: k
  std::optional<IntervalPlan> intervals;
  SortedQuantiles quantiles;
  // The default's step look, when made before the release (a grouped
  // release's one look over every key; MethodInput).
  std::optional<StepLookOutcome> step_look;
};

// Brackets or a tree for the intervals on planned->grid, whichever has the
// smaller mechanism offsets, with planned->brackets, mechanism_confidence
// and mechanism_beta. Public parameters only: the plan's, and a step the
// default's step look found (release.cc).
Status PlanIntervalMechanism(const std::vector<double>& quantiles,
                             IntervalPlan* planned);

// `request.method` is a method's name ("auto" resolved, ResolveMethod).
// With a session, BUDGET_EXCEEDED when the release would not fit it.
StatusOr<ReleasePlan> PlanRelease(const ReleaseRequest& request,
                                  const PrivacySession* session);

}  // namespace dpq

#endif  // DPQ_CORE_PLAN_H_
