// The entry points callers use: a release of quantiles from rows or from
// counts, and a private synthetic sample. Each runs the pipeline of
// docs/architecture.md: plan (plan.h) -> prepare (runs.h) -> run
// (methods.h) -> report.
#ifndef DPQ_CORE_RELEASE_H_
#define DPQ_CORE_RELEASE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/privacy.h"
#include "core/request.h"
#include "core/session.h"
#include "core/status.h"

namespace dpq {

// The method names ReleaseQuantiles accepts ("auto" besides).
std::vector<std::string> ReleaseMethods();

// The method "auto" stands for, from public parameters only (the step, the
// bounds, the budget's kind and the number of distinct quantiles m), never
// from the data. AggTree on the grid when a `step` grid, or the grid of
// `buckets` (the counts path's too), has P <= 2^21 points and
// m >= max(5, P / 24) with epsilon (on P <= 256 also m >= 4, or m >= 2 all
// in the outer 5%: AutoPicksTree), or P <= 128 and m >= 40 with rho; AQ
// otherwise. Measured (docs/experiments, ten columns with a step): a
// tree over few grid points counts atoms exactly and its error does not grow
// with m, while AQ's grows with its log2 m levels; AQ is far better for few
// quantiles, on fine grids, and under zCDP, whose composition over AQ's
// levels is cheaper. Any other name is returned as is. "auto" takes only
// the option 'step' (INVALID_OPTION for others: they need a method).
StatusOr<std::string> ResolveMethod(const ReleaseRequest& request);

// The most heap a release of `request` (its quantiles given) allocates
// beyond copies of its input and runs, whatever the data: the joint
// methods' subset and tables at their public record cap; 0 for the other
// methods and for a request the plan refuses (the release then refuses it).
// From public parameters only, so a caller that checks it before the data
// is read (the bindings) refuses nothing the data decides.
double ReleaseWorkingBytes(const ReleaseRequest& request);

// The counts path: releases from `counts[i]`, the number of records in
// bucket i of `bucket_count` equal-width buckets over [lower, upper] (values
// below lower counted in bucket 0, above upper in the last, as clamping
// does), exactly as ReleaseQuantiles releases the records themselves with
// request.buckets = bucket_count: the non-empty buckets are the runs both
// paths prepare (runs.h), so the same grid and seed give the same values,
// bit for bit, for every method, with intervals too. O(buckets): nothing is
// expanded, and the counts may add up to 2^53 - 1 rows for every method.
// Same guarantees. Not per person (counts do not say whose rows they are):
// users and max_contributions are refused. INVALID_COUNTS for a count that
// is not a whole number >= 0; TOO_LARGE when they add up to more than
// 2^53 - 1 (an input check: for the data owner only, docs/refusals.md).
StatusOr<ReleaseReport> ReleaseFromCounts(const double* counts,
                                          size_t bucket_count,
                                          const ReleaseRequest& request,
                                          double* out,
                                          PrivacySession* session = nullptr);
// The same release from the caller's scratch copy of the counts, which is
// overwritten (the runs are built over it: one pass over memory and no
// second array of that size; what the bindings call).
StatusOr<ReleaseReport> ReleaseFromCountsInPlace(
    double* counts, size_t bucket_count, const ReleaseRequest& request,
    double* out, PrivacySession* session = nullptr);

// Releases one private value per requested quantile into
// out[0, request.quantiles.size()), in the order requested, non-decreasing
// along increasing quantiles and inside [lower, upper]. `data` is the
// caller's scratch copy: it is clamped, sorted and overwritten. On error,
// `out` is left unspecified and the Status names the problem. With a
// session, a release that would not fit is refused with BUDGET_EXCEEDED
// before the data is read, and a successful one is charged to it.
StatusOr<ReleaseReport> ReleaseQuantiles(double* data, size_t count,
                                         const ReleaseRequest& request,
                                         double* out,
                                         PrivacySession* session = nullptr);

// Quantile sanitization (AQ paper, Corollary 3.6): a private synthetic sample
// of `size` values whose empirical quantiles track the data's.
struct SanitizeRequest {
  double lower = 0;
  double upper = 0;
  std::optional<double> epsilon;
  std::optional<double> rho;
  // The sample size; public. Default kDefaultSanitizeSize, never the data's
  // own size, which would publish it.
  std::optional<double> size;
  // Public output resolution: sample values are lower + k step (release.cc).
  std::optional<double> step;
  std::optional<uint64_t> seed;  // NOT private: tests only
  // Per person, as for ReleaseRequest.
  const uint32_t* users = nullptr;
  std::optional<double> max_contributions;
};
constexpr size_t kDefaultSanitizeSize = 1000;

// Writes `size` sorted values into out; same contract for `data` as above.
StatusOr<ReleaseReport> SanitizeSample(double* data, size_t count,
                                       const SanitizeRequest& request,
                                       double* out,
                                       PrivacySession* session = nullptr);

// The size a sanitize request asks for (default if absent), or the error.
StatusOr<size_t> SanitizeSize(const std::optional<double>& size);

}  // namespace dpq

#endif  // DPQ_CORE_RELEASE_H_
