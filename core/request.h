// What a release is asked (ReleaseRequest) and what it reports
// (ReleaseReport): the types every stage of the pipeline shares (plan.h,
// methods.h, release.h), apart from the stages themselves.
#ifndef DPQ_CORE_REQUEST_H_
#define DPQ_CORE_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/privacy.h"

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
  // The records were bounded to max_contributions a person before they
  // reached the core (a grouped release from counts bounded in SQL): no
  // users, and no bounding here; the budget is divided as for a person.
  bool contributions_bounded = false;
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
  // With `confidence`: every interval of the release holds at once with
  // probability >= confidence (each at 1 - (1 - confidence) / m, m the
  // distinct quantiles), instead of each on its own.
  std::optional<bool> interval_simultaneous;
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
  bool interval_population = false;    // "population" intervals
  bool interval_simultaneous = false;  // all hold at once (request)
  // How the intervals were drawn: "brackets" (two exponential mechanisms per
  // quantile) or "tree" (one noisy tree of counts; intervals.h).
  std::string interval_method;
  std::vector<double> interval_low;
  std::vector<double> interval_high;
  PrivacyBudget interval_spent;
  // Under epsilon, each of the intervals' mechanisms' epsilon (a bracket's,
  // or a level of the tree's: the count noise's budget) and how many of
  // them compose on the same records (2 per quantile, or the levels).
  double interval_epsilon = 0;
  int interval_parts = 0;
  // Under rho, a tree level's rho (the brackets' is interval_epsilon^2 / 8).
  double interval_rho = 0;
  // Population intervals: the noisy count's budget (inside interval_spent)
  // and the private upper bound on the record count it gave (ε-DP output).
  PrivacyBudget interval_count_spent;
  double interval_count_bound = 0;
  // AQ: recursion levels; AggTree: the tree's levels below the root (each
  // level's counts take an equal share of the budget).
  int levels = 0;
  // AQ's first look (aq.h): its share of the method's budget (0: none), the
  // budget its histogram ran with (with mechanism_epsilon's, what the
  // method spent), and the span of the bins whose noisy count reached
  // kAqLookFoundScales noise scales, from the lowest one's lower edge to the
  // highest one's upper edge (NaN when none did). Public: outputs of a private
  // release.
  double look_share = 0;
  PrivacyBudget look_spent;  // per record: the histogram's noise budget
  double look_low = std::numeric_limits<double>::quiet_NaN();
  double look_high = std::numeric_limits<double>::quiet_NaN();
  // The span of the fewest bins past two noise scales that hold 90% of
  // their mass (aq.h, first_seen), or NaN: where the look saw most values.
  double look_seen_low = std::numeric_limits<double>::quiet_NaN();
  double look_seen_high = std::numeric_limits<double>::quiet_NaN();
  // The default's step look (step_look.h), where it ran: its share of the
  // method's budget (0: it did not run), the budget its histogram ran
  // with, and the step it found (NaN: none; the default grid was kept).
  // The release then ran on the step's grid, as with `step`. Public.
  double step_look_share = 0;
  PrivacyBudget step_look_spent;  // per record
  double step_look_step = std::numeric_limits<double>::quiet_NaN();
  // True when a seed was given: the noise is reproducible by anyone who
  // knows the seed, so the release is NOT private, whatever `spent` says.
  bool seeded = false;
  // Epsilon of each exponential mechanism run; AQ under epsilon: the root's,
  // the smallest (nodes over shallower subtrees get more, aq.h). AggTree
  // under epsilon: each level's counts' (0 under rho).
  double mechanism_epsilon = 0;
  // The joint methods: the most records the mechanism read, from public
  // parameters only (joint_exp.h, JointRecordCap; lowered by the option
  // maxRecords); data with more was read through a uniformly random subset
  // of this size. 0 for the other methods.
  size_t record_cap = 0;
  // The joint methods: the epsilon their kernel is built for, the rest of
  // mechanism_epsilon kept back for the certified rounding (joint_exp.h).
  double kernel_epsilon = 0;
  // The spacing of the grid the values lie on (0 for the tree methods whose
  // values are interpolated: the tree CDF, and AggTree without a step or
  // buckets). Public: it depends on the bounds, step and buckets only.
  double resolution = 0;
};

}  // namespace dpq

#endif  // DPQ_CORE_REQUEST_H_
