// The entry points callers use: validate a request, prepare the records and
// dispatch to the mechanism named by `method`.
#ifndef DPQ_CORE_RELEASE_H_
#define DPQ_CORE_RELEASE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/privacy.h"
#include "core/session.h"
#include "core/status.h"

namespace dpq {

struct ReleaseRequest {
  double lower = 0;  // public lower bound; smaller values are clamped to it
  double upper = 0;  // public upper bound; larger values are clamped to it
  std::vector<double> quantiles;  // each in (0, 1), any order, repeats allowed
  std::optional<double> epsilon;  // pure epsilon-DP budget, or
  std::optional<double> rho;      // rho-zCDP budget: exactly one of the two
  // "auto" (the default): ResolveMethod picks 'aq' or 'aggtree'.
  std::string method = "auto";
  // Method-specific options by name; a name the method does not take is an
  // INVALID_OPTION error, never silently ignored.
  std::vector<std::pair<std::string, double>> options;
  std::vector<std::pair<std::string, std::string>> text_options;
  // Reproducible randomness for tests. NOT private: see SeededRandom.
  std::optional<uint64_t> seed;
  // Protecting a person (contributions.h): users[i] names the person of
  // record i (parallel to the data; not owned), and each person keeps at
  // most max_contributions records. Both or neither. The guarantee is then
  // for adding or removing one person.
  const uint32_t* users = nullptr;
  std::optional<double> max_contributions;
  // Confidence intervals (intervals.h): with `confidence` in (0, 1), the
  // release also brackets each true sample quantile, spending
  // `interval_share` of the budget on it (default kDefaultIntervalShare).
  std::optional<double> confidence;
  std::optional<double> interval_share;
  // "sample" (default): for the true quantile of these records; "population":
  // for the quantile of the distribution the records are an i.i.d. sample of
  // (intervals.h), also spending part of the intervals' share on a noisy
  // count.
  std::optional<std::string> interval;
  // Bucketed release (docs/scale.md): the values are first replaced by the
  // lower edges of `buckets` equal-width buckets over [lower, upper]
  // (prepare.h, BucketGrid), and the methods that release grid points release
  // bucket edges; so does AggTree, whose leaves are then the buckets (at most
  // 2^21 - 1 of them; finer buckets keep its equal leaves). Exactly what
  // ReleaseFromCounts releases from those buckets' counts. Not with the
  // `step` option (the buckets are the grid).
  std::optional<double> buckets;
};

// What a successful release spent, for the caller's privacy accounting.
struct ReleaseReport {
  std::string method;
  PrivacyBudget spent;
  // "add-remove" (one record added or removed), "replace-one" (one record
  // replaced, the number of records public) or "add-remove-user" (one
  // person added or removed with all their records).
  std::string neighbouring = "add-remove";
  // add-remove-user: the most records a person kept (0 otherwise). Public.
  int64_t max_contributions = 0;
  // With `confidence`: one [low, high] per requested quantile, in the order
  // requested, each holding its released value, and the part of `spent` the
  // intervals used (the values used the rest).
  bool has_intervals = false;
  bool interval_population = false;  // "population" intervals
  std::vector<double> interval_low;
  std::vector<double> interval_high;
  PrivacyBudget interval_spent;
  double interval_epsilon = 0;  // each bracket mechanism's epsilon
  // Population intervals: the noisy count's budget (inside interval_spent)
  // and the private upper bound on the record count it gave (ε-DP output).
  PrivacyBudget interval_count_spent;
  double interval_count_bound = 0;
  int levels = 0;  // AQ: recursion levels
  // True when a seed was given: the noise is reproducible by anyone who
  // knows the seed, so the release is NOT private, whatever `spent` says.
  bool seeded = false;
  // Epsilon of each exponential mechanism run; AQ under epsilon: the root's,
  // the smallest (nodes over shallower subtrees get more, aq.h).
  double mechanism_epsilon = 0;
  // The joint methods: the most records the mechanism read, from public
  // parameters only (joint_exp.h, JointRecordCap; lowered by the option
  // maxRecords); data with more was read through a uniformly random subset
  // of this size. 0 for the other methods.
  size_t record_cap = 0;
  // The spacing of the grid the values lie on (0 for the tree methods whose
  // values are interpolated: the tree CDF, and AggTree without a step or
  // buckets). Public: it depends on the bounds, step and buckets only.
  double resolution = 0;
};

// The method names ReleaseQuantiles accepts ("auto" besides).
std::vector<std::string> ReleaseMethods();

// The method "auto" stands for, from public parameters only (the step, the
// bounds, the budget's kind and the number of distinct quantiles m), never
// from the data. AggTree on the grid when a `step` grid, or the grid of
// `buckets` (the counts path's too), has P <= 2^21 points and
// m >= max(5, P / 24) with epsilon, or P <= 128 and m >= 40 with rho; AQ
// otherwise. Measured (docs/experiments, ten columns with a step): a
// tree over few grid points counts atoms exactly and its error does not grow
// with m, while AQ's grows with its log2 m levels; AQ is far better for few
// quantiles, on fine grids, and under zCDP, whose composition over AQ's
// levels is cheaper. Any other name is returned as is. "auto" takes only
// the option 'step' (INVALID_OPTION for others: they need a method).
StatusOr<std::string> ResolveMethod(const ReleaseRequest& request);

// The counts path: releases from `counts[i]`, the number of records in
// bucket i of `bucket_count` equal-width buckets over [lower, upper] (values
// below lower counted in bucket 0, above upper in the last, as clamping
// does), exactly as ReleaseQuantiles releases the records themselves with
// request.buckets = bucket_count: same grid, same seed, same values, bit for
// bit (the records are expanded to their buckets' lower edges, which is all
// the bucketed raw path keeps of them; for AQ, AppIndExp, JointExp and
// inverse sensitivity without intervals, straight to the sorted grid points
// those methods read, skipping the sort; for AggTree and the tree CDF
// without intervals, not at all: each non-empty bucket's edge once, weighed
// by its count, which gives the trees the same cell counts). Same
// guarantees. Not per person (counts do not say whose rows they are): users
// and max_contributions are refused. INVALID_ARGUMENT for a count that is
// not a whole number >= 0; TOO_LARGE when they add up to more than
// kMaxRecords where they are expanded, or kMaxCountedRecords (2^53 - 1) for
// the trees (private: for the data owner only).
//
// `fits`, if given, is asked once the counts are checked, with their sum,
// before anything is expanded (never for the trees, which expand nothing):
// a caller with a memory limit (the WebAssembly heap) returns TOO_LARGE to
// stop there, so the counts are read once. The sum is private: such an
// error is for the data owner only.
using RecordsCheck = std::function<Status(size_t records)>;
StatusOr<ReleaseReport> ReleaseFromCounts(const double* counts,
                                          size_t bucket_count,
                                          const ReleaseRequest& request,
                                          double* out,
                                          PrivacySession* session = nullptr,
                                          const RecordsCheck& fits = nullptr);

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
