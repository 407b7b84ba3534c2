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
  // The default's step look (step_look.h) when it was made before the
  // method: a grouped release looks once over every key's records.
  std::optional<int> step_level = std::nullopt;
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

// The default's rule on a step grid of `points` points for m distinct
// quantiles (ResolveMethod, and the step look's release): AggTree where its
// leaves are few enough for m, else AQ. Public parameters only.
bool AutoPicksTree(double points, double m, bool rho);
// After the default's step look found a step: AggTree (else AQ) on the
// step's grid, for m distinct quantiles.
bool AutoTreeOnStep(const OutputGrid& step_grid, size_t m, bool rho);

const std::vector<MethodSpec>& Methods();
// UNKNOWN_METHOD naming the ones there are.
StatusOr<const MethodSpec*> FindMethod(const std::string& name);
// INVALID_OPTION for an option the method does not take, or of the wrong
// kind.
Status CheckOptionNames(const MethodSpec& method,
                        const ReleaseRequest& request);

}  // namespace dpq

#endif  // DPQ_CORE_METHODS_H_
