// Protecting a person, not a row: bound each person's records to k, then run
// a mechanism with the budget that makes a change of k records cost the
// whole budget. docs/algorithms/per-person.md has the proof.
//
// Guarantee: if M is (epsilon / k)-DP (resp. (rho / k^2)-zCDP,
// (epsilon / k, delta')-DP with delta' = delta / (k e^{(k-1) epsilon / k}))
// under adding or removing one record, then "keep at most k records per
// person, then M" is epsilon-DP (rho-zCDP, (epsilon, delta)-DP) under adding
// or removing one person with all of their records. Proof sketch: the
// bounding acts on each person separately, so adding a person adds at most
// k records to its output and leaves the others' kept records identically
// distributed; group privacy for k records (Dwork and Roth, Thm 2.2; Bun and
// Steinke 2016, Prop. 27 for zCDP) turns the per-record guarantee into the
// stated one, and averaging over the bounding's randomness keeps it. The
// quantile mechanisms here have utilities or counts whose sensitivity to k
// records is exactly k times that to one, so nothing is lost to group
// privacy.
#ifndef DPQ_CORE_CONTRIBUTIONS_H_
#define DPQ_CORE_CONTRIBUTIONS_H_

#include <cstddef>
#include <cstdint>

#include "core/privacy.h"
#include "core/random.h"
#include "core/status.h"

namespace dpq {

// Largest max_contributions accepted. Public; not privacy-relevant.
constexpr int64_t kMaxContributionsLimit = int64_t{1} << 30;

// max_contributions must be a whole number from 1 to kMaxContributionsLimit.
StatusOr<int64_t> ValidateMaxContributions(double max_contributions);

// Keeps at most `max_contributions` records of each person: all of a
// person's records when they have that many or fewer, else a uniformly
// random subset of that size (exact, from `rng`). users[i] is the person of
// data[i]. The kept records move to data[0, kept) (in no particular order);
// returns kept. O(n log n) time, 8 bytes per record of scratch.
size_t BoundContributions(double* data, const uint32_t* users, size_t count,
                          int64_t max_contributions, RandomSource& rng);

// The per-record budget of the header comment: what each mechanism runs
// with so that one person (at most k records) costs `per_person`. Rounded
// so that it is never above the exact value (privacy-relevant).
PrivacyBudget PerRecordBudget(const PrivacyBudget& per_person, int64_t k);

}  // namespace dpq

#endif  // DPQ_CORE_CONTRIBUTIONS_H_
