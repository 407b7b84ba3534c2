// The methods a release dispatches to (DESIGN.md, "A release is a
// pipeline": the run stage). Each reads the prepared records — runs on the
// release grid (runs.h) — and nothing else, so the rows and the counts of
// the same buckets release the same values, and a method's cost follows the
// runs and m, not n. A method's guarantee and proof are in its own header.
#ifndef DPQ_CORE_METHODS_H_
#define DPQ_CORE_METHODS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/agg_tree.h"
#include "core/aq.h"
#include "core/prepare.h"
#include "core/privacy.h"
#include "core/random.h"
#include "core/request.h"
#include "core/runs.h"
#include "core/session.h"
#include "core/status.h"

namespace dpq {

// A request's method options by name (the names already checked).
class MethodOptions {
 public:
  explicit MethodOptions(const ReleaseRequest& request) : request_(request) {}
  std::optional<double> Number(const std::string& name) const;
  std::optional<std::string> Text(const std::string& name) const;
  // A whole number in [low, high], `fallback` when absent; INVALID_OPTION
  // naming it otherwise.
  StatusOr<int64_t> Whole(const char* name, int64_t fallback, int64_t low,
                          int64_t high) const;

 private:
  const ReleaseRequest& request_;
};

// What the default's step look (step_look.h) found: the level of the step
// (0: none) and whether it saw most values off every lattice
// (StepLookSawContinuous; a grouped release says no, and keeps AQ: one
// method for every key).
struct StepLookOutcome {
  int level = 0;
  bool continuous = false;
};

// What a method reads.
struct MethodInput {
  Runs runs;               // the records, on `grid`
  const OutputGrid& grid;  // the release grid
  const ReleaseRequest& request;
  // Per record: what the mechanism spends ((epsilon, delta) with `delta`,
  // which only appindexp takes).
  PrivacyBudget budget;
  const std::vector<double>& quantiles;  // distinct, ascending
  RandomSource& rng;
  MethodOptions options;
  // The default's step look (step_look.h), which the release's pipeline
  // takes before the intervals and the method (release.cc; a grouped
  // release once over every key's records, groups.cc). "auto" runs only
  // where it found no step: a step found runs that step's method instead.
  std::optional<StepLookOutcome> step_look = std::nullopt;
};

// Fills `values` (one per distinct quantile) and the report's details.
using MethodRunner = Status (*)(const MethodInput&, ReleaseReport*,
                                std::vector<double>*);

struct MethodSpec {
  const char* name;
  // The options it takes, by name, and whether each is text.
  std::vector<std::pair<const char*, bool>> options;
  MethodRunner run;
  // Public: which neighbours the guarantee is for.
  Neighbouring neighbouring = Neighbouring::kAddRemove;
  // The most heap the method allocates on any data, from public parameters
  // only (`runs` unread), where that is more than a few copies of the runs
  // and m: the joint methods' subset and tables at their record cap. The
  // bindings budget it before the data is read, so a release that runs
  // never fails an allocation (docs/refusals.md). nullptr: nothing beyond.
  double (*working_bytes)(const MethodInput&) = nullptr;
};

// The default's rule on a step grid of `points` points for the distinct
// quantiles (ResolveMethod, and the step look's release): AggTree where its
// leaves are few enough for m of them, else AQ. Under epsilon: m >=
// max(5, points / 24); on at most kAutoSmallGrid points also m >= 4, or
// m >= 2 all in the outer 5% ([p1, p99], [p95, p99]). Under rho: points
// <= 128 and m >= 40. Public parameters only.
bool AutoPicksTree(double points, const std::vector<double>& distinct,
                   bool rho);
// After the default's step look found a step: AggTree (else AQ) on the
// step's grid.
bool AutoTreeOnStep(const OutputGrid& step_grid,
                    const std::vector<double>& distinct, bool rho);
// The step look's noise and the budget's split: kStepLookShare of `budget`
// (what StepLookTest.HistogramSpendsItsShareExactly checks exactly).
StatusOr<AqLookPlan> PlanStepLook(const PrivacyBudget& budget);
// The default's step look on `runs` (on `grid`, the default grid) with
// PlanStepLook's noise: the outcome, what it spent in the report, and the
// rest of the budget in *rest.
StatusOr<StepLookOutcome> TakeStepLook(const Runs& runs, const OutputGrid& grid,
                                       const PrivacyBudget& budget,
                                       RandomSource& rng, ReleaseReport* report,
                                       PrivacyBudget* rest);
// A coarse grid, on which AggTree's trimmed tree of one or two levels beat
// AQ for 4 or more quantiles, and for 2 or more in the outer 5%. Measured
// natively (n = 1,000, epsilon = 1, 400 releases; rank error AQ -> AggTree):
// [p50, p90, p95, p99] Adult hours in [-100, 100] 4.2 -> 2.0, IMDB in
// [0, 10] 1.7 -> 1.0; [p1, p99] Adult hours 11.5 -> 4.2 (far values 12% ->
// 1%), IMDB 5.1 -> 1.9 (5% -> 0.2%); for [p25, p75] or [p25, p50, p75]
// AQ stays better (IMDB 0.43 against 0.50). Not privacy-relevant.
constexpr double kAutoSmallGrid = 256;

// Without a step found, on values the step look saw off every lattice
// (StepLookSawContinuous), after AQ's first look (spread: AqLook::spread, the
// fewest of its 16 bins that hold 90% of the counted records): AggTree
// where the records spread over at least kAutoSpreadBins bins and there are
// 2 or more quantiles, one within kAutoSpreadTail of 0 or 1 or at least
// kAutoSpreadManyQuantiles of them; else AQ. AQ's nodes deep in a long
// request have little budget, and beyond widely spread records (a quarter
// of the range or more) an empty stretch to the bound that the look could not
// weigh down: the extremes landed there. Measured natively (n = 1,000,
// epsilon = 1, 400 releases; share with a value 10% of the range off, rank
// error; AQ -> now): 120 quantiles in [-100, 100] of
// N(0, 25) 30.5% / 15.0 -> 0% / 5.5 and Uniform(-70, 70) 8.0% / 14.0 -> 0% /
// 5.1; [p1, p5, p95, p99] of Uniform(-30, 30) 4.0% / 10.9 -> 0% / 9.7
// (docs/algorithms/step-look.md). A tail request keeps AQ when the look
// placed the values' ends (less than kAutoSpreadFaintShare of the counted
// mass faint): at n = 10,000 AQ's tails were better in rank.
// Public; not privacy-relevant (a function of the look's noisy counts and
// the quantiles).
constexpr int kAutoSpreadBins = 5;
constexpr double kAutoSpreadTail = 0.02;
constexpr size_t kAutoSpreadManyQuantiles = 40;
constexpr double kAutoSpreadFaintShare = 0.05;
// The tree the default takes on spread records: 256 equal leaves (16 x 16),
// so two levels of noise and 273 nodes. Public.
constexpr AggTreeShape kAutoSpreadTree{16, 2, true};
bool AutoSpreadPicksTree(const AqLook& look,
                         const std::vector<double>& distinct, bool rho);

const std::vector<MethodSpec>& Methods();
// UNKNOWN_METHOD naming the ones there are.
StatusOr<const MethodSpec*> FindMethod(const std::string& name);
// INVALID_OPTION for an option the method does not take, or of the wrong
// kind.
Status CheckOptionNames(const MethodSpec& method,
                        const ReleaseRequest& request);

}  // namespace dpq

#endif  // DPQ_CORE_METHODS_H_
