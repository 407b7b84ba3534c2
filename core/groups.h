// Quantiles by group (DESIGN.md, "Groups: the same pipeline, keyed"): one
// release per key, from rows with a key each or from (key, bucket, count)
// rows of a GROUP BY, in one pipeline: plan once, prepare the keyed runs in
// one pass, select keys (private keys only), run the method on each key's
// runs with one random source, charge the session once.
//
// Guarantee. Public keys, add/remove one record: a record is in one group,
// so adding it changes one group's runs and no other; every group's release
// is the method's guarantee at the whole budget (parallel composition:
// McSherry 2009), so the grouped release has the method's guarantee. Rows
// whose key is not listed are left out (a function of public keys). This
// needs add/remove methods: a replace-one method (inverse sensitivity)
// assumes its group's n fixed, but a replaced row can move to another key
// (two groups change size) or to an unlisted one, so it is refused
// (groups_test.cc has the exact witness: 1.50 at epsilon 1).
// appindexp with delta, per person across g > 1 groups: a person reaches
// at most g m exponential mechanisms, each k epsilon_p-bounded-range; the
// plan checks their optimal composition (Dong, Durfee and Rogers) against
// delta (CheckApproxAcrossGroups in groups.cc).
// Private keys need (epsilon, delta): a share of epsilon selects the keys
// (partition_selection.h, (epsilon_s, delta)-DP), the rest releases each
// selected group (parallel across groups as above), and the two compose
// sequentially: (epsilon, delta)-DP. A key new in a neighbour appears only
// in the selection's delta event.
// Per person (users, maxGroups g, maxContributions k): each person keeps at
// most g of their keys (uniformly chosen) and k rows in each (uniformly
// chosen), acting on each person separately. A person then changes at
// most g groups, each by at most k of their rows, so each group runs with
// epsilon / g (pure; under rho, rho / g: zCDP composes additively over the
// g groups, and an exponential mechanism's epsilon is then sqrt(8 rho /
// (g L)), better than epsilon / g for every g > 1) per person, divided for
// k rows as a per-person release is (contributions.h); the selection counts
// people, whose counts move by at most 1 in at most g keys. Guarantee:
// adding or removing one person with all their rows.
// Counts (`count`), public keys: a share c of the budget releases each
// key's count with discrete Laplace (Gaussian under rho) noise, in sequence
// with the quantiles (which run on the rest). A record changes one key's
// count by 1; a person (users) at most g keys' people counts by 1 each (L1
// g, L2 sqrt(g)); rows bounded upstream (counts path) at most g keys by k
// each (L1 g k, L2 sqrt(g) k): the noise is for c epsilon / L1, or c rho /
// L2^2. Private keys release the selection's noisy count c + Z of each
// selected key: the selection's proof (partition_selection.h) bounds every
// outcome of c + Z, not only the threshold's, so it costs nothing more.
#ifndef DPQ_CORE_GROUPS_H_
#define DPQ_CORE_GROUPS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/discrete_noise.h"
#include "core/partition_selection.h"
#include "core/random.h"
#include "core/request.h"
#include "core/session.h"
#include "core/status.h"

namespace dpq {

// The share of epsilon private keys spend selecting keys, unless the request
// gives another. Public; any share in (0, 1) is private (the split composes).
constexpr double kDefaultSelectionShare = 0.1;
// With `count` and public keys: the share of the budget the groups' noisy
// counts spend, unless the request gives another. Public; any share in
// (0, 1) is private (it composes in sequence with the quantiles). A tenth:
// the quantiles' rank error grows by about 1.1 at n = 1,000 (their budget
// 0.9 of it), and a count's discrete Laplace has scale 10 / epsilon (87% of
// counts within 20 at epsilon = 1; `countShare: 0.15` gives 95%, at about
// 1.17 times the rank error). Private keys reuse the selection's noisy
// count instead (partition_selection.h): no share.
constexpr double kDefaultCountShare = 0.1;
// The most groups a grouped release holds. Public; not privacy-relevant.
constexpr uint32_t kMaxGroups = uint32_t{1} << 24;

struct GroupRequest {
  // Every per-group option of a release (quantiles, method, step, buckets,
  // confidence, seed) and the budget of the whole grouped release; per
  // person: users (one id a row) and max_contributions (rows a person
  // keeps in each group).
  ReleaseRequest release;
  // The groups: codes 0..keys - 1 (rows with another code are left out).
  uint32_t keys = 0;
  // Private keys: every code is a key seen in the data, and a key is
  // released only if selected (partition_selection.h). Needs `delta`.
  bool private_keys = false;
  std::optional<double> delta;
  std::optional<double> selection_share;
  // Per person: the most groups a person counts in (with users).
  std::optional<double> max_groups;
  // Each released group's size beside its quantiles: a noisy count of its
  // rows (people, per person with users), from count_share of the budget
  // (public keys) or the selection's own noisy count (private keys).
  bool count = false;
  std::optional<double> count_share;
};

struct GroupedReport {
  // The release's report (method, spent: the whole grouped release,
  // neighbouring, per-group mechanism details; intervals: keys x m, by key
  // then quantile, for the released keys only).
  ReleaseReport release;
  // Per key: 1 if released (always, with public keys).
  std::vector<uint8_t> released;
  // Per key: the span its first look found (AQ, aq.h; NaN where a key was
  // not released or its look found nothing). `release` holds the share.
  std::vector<double> look_low;
  std::vector<double> look_high;
  // Per key: the span where its look saw most values (request.h), or NaN.
  std::vector<double> look_seen_low;
  std::vector<double> look_seen_high;
  // Private keys: the selection's plan and what it spent (part of `spent`).
  bool private_keys = false;
  SelectionPlan selection;
  PrivacyBudget selection_spent;
  // Per person: g (0 otherwise).
  int64_t max_groups = 0;
  // With `count`: per key its noisy count (NaN where not released), what
  // the counts spent (public keys: count_share of the budget, part of
  // `spent`; private keys: nothing beyond the selection, whose noisy counts
  // they are), and the share.
  std::vector<double> counts;
  PrivacyBudget count_spent;
  double count_share = 0;
  // What a group's count counts: "rows", or "people" (per person with
  // users).
  const char* count_of = "rows";
};

// Per person: each person keeps at most g of their keys (uniformly chosen
// among them) and at most k rows in each kept key (uniformly chosen), from
// `rng`, acting on each person separately; rows whose code is keys or more
// are dropped. The kept rows move to the front of values and codes (uint32
// codes, 4 bytes a row, read and written as bytes); *people receives, per
// key, the people who kept rows in it. Returns the rows kept. 17 bytes a row
// of scratch.
StatusOr<size_t> BoundPeopleAcrossGroups(double* values, unsigned char* codes,
                                         const uint32_t* users, size_t count,
                                         uint32_t keys, int64_t g, int64_t k,
                                         RandomSource& rng,
                                         std::vector<uint64_t>* people);

// The noise the default's step look adds to each cell of its histogram
// over every key's records (groups.cc: a person moves the histogram by at
// most g k; the look costs kStepLookShare of the budget after the
// selection's share). For the privacy tests.
StatusOr<CountNoise> GroupStepLookNoise(const GroupRequest& request);

// The noise each group's count takes with `count` and public keys (its
// share of the budget over the count's sensitivity). For the privacy tests.
StatusOr<CountNoise> GroupCountNoise(const GroupRequest& request);

// From rows: values[i] in the group of code codes[i]. `codes` is a buffer of
// 8 bytes a row holding the codes as uint32 in its first 4 bytes a row; the
// codes are read, then the buffer holds the runs' counts (so a grouped
// release needs no more heap than a release: 16 bytes a row). Both buffers
// are overwritten. Writes m values per released key to out[key * m ...].
StatusOr<GroupedReport> ReleaseByGroup(double* values, unsigned char* codes,
                                       size_t count,
                                       const GroupRequest& request, double* out,
                                       PrivacySession* session = nullptr);

// From a GROUP BY's rows: (keys[i], buckets[i], counts[i]) for i < rows, in
// any order, each bucket in [0, bucket_count) of equal-width buckets over
// [lower, upper] and each count a whole number (repeated pairs add up):
// bit for bit the release of the rows with `buckets` = bucket_count and the
// same seed. Not per person (counts do not say whose rows they are).
StatusOr<GroupedReport> ReleaseByGroupFromCounts(
    const uint32_t* keys, const double* buckets, const double* counts,
    size_t rows, size_t bucket_count, const GroupRequest& request, double* out,
    PrivacySession* session = nullptr);

}  // namespace dpq

#endif  // DPQ_CORE_GROUPS_H_
