// The run and report stages a single release and a grouped one share
// (release.cc, groups.cc): internal to the core.
#ifndef DPQ_CORE_PIPELINE_H_
#define DPQ_CORE_PIPELINE_H_

#include <optional>

#include "core/plan.h"
#include "core/random.h"
#include "core/request.h"
#include "core/runs.h"
#include "core/status.h"

namespace dpq {

// The request with "auto" replaced by the method it stands for.
StatusOr<ReleaseRequest> Resolved(const ReleaseRequest& request);

// Where the default's step look found a step (level > 0): the step, its
// grid and the method the default's rule runs there (AggTree or AQ,
// AutoTreeOnStep), the request as `step` would give it, and the intervals
// planned on the step's grid (when asked for). Public parameters only.
struct DefaultOnStep {
  double step;
  OutputGrid grid;
  const MethodSpec* method;
  ReleaseRequest request;
  std::optional<IntervalPlan> intervals;
};
StatusOr<DefaultOnStep> PlanDefaultOnStep(const ReleaseRequest& request,
                                          const ReleasePlan& plan, int level,
                                          bool rho);

// Runs the planned method (and the intervals) on prepared runs; writes one
// value per requested quantile to out[0, m), in the order requested, and
// the intervals to the report. Charges nothing. `on_step`: the default's
// plan on the step plan.step_look found, made once for many calls (a
// grouped release's keys), or nullptr to make it here.
StatusOr<ReleaseReport> RunPrepared(const Runs& runs,
                                    const ReleaseRequest& request,
                                    const ReleasePlan& plan, RandomSource& rng,
                                    double* out,
                                    const DefaultOnStep* on_step = nullptr);

}  // namespace dpq

#endif  // DPQ_CORE_PIPELINE_H_
