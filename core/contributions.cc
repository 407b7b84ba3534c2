#include "core/contributions.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace dpq {

StatusOr<int64_t> ValidateMaxContributions(double max_contributions) {
  if (!(max_contributions >= 1 &&
        max_contributions <= static_cast<double>(kMaxContributionsLimit)) ||
      max_contributions != std::floor(max_contributions)) {
    return Status(StatusCode::kInvalidOption,
                  "maxContributions must be a whole number from 1 to " +
                      std::to_string(kMaxContributionsLimit) + ", got " +
                      FormatNumber(max_contributions));
  }
  return static_cast<int64_t>(max_contributions);
}

size_t BoundContributions(double* data, const uint32_t* users, size_t count,
                          int64_t max_contributions, RandomSource& rng) {
  // (person, record index) pairs sorted by person: each person's records
  // form one run.
  std::vector<uint64_t> order(count);
  for (size_t i = 0; i < count; ++i) {
    order[i] = (static_cast<uint64_t>(users[i]) << 32) | i;
  }
  std::sort(order.begin(), order.end());
  const auto k = static_cast<size_t>(max_contributions);
  std::vector<bool> keep(count, false);
  for (size_t begin = 0; begin < count;) {
    size_t end = begin + 1;
    while (end < count && (order[end] >> 32) == (order[begin] >> 32)) ++end;
    const size_t size = end - begin;
    // A uniformly random k-subset of the run: the first k places of an
    // exact partial Fisher-Yates shuffle.
    const size_t chosen = std::min(size, k);
    if (size > k) {
      for (size_t i = 0; i < chosen; ++i) {
        const size_t j = i + UniformInteger(rng, size - i);
        std::swap(order[begin + i], order[begin + j]);
      }
    }
    for (size_t i = 0; i < chosen; ++i) {
      keep[order[begin + i] & 0xffffffffu] = true;
    }
    begin = end;
  }
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    if (keep[i]) data[kept++] = data[i];
  }
  return kept;
}

PrivacyBudget PerRecordBudget(const PrivacyBudget& per_person, int64_t k) {
  const auto groups = static_cast<double>(k);
  PrivacyBudget per_record = per_person;
  if (k == 1) return per_record;
  switch (per_person.kind) {
    case PrivacyBudget::Kind::kPure:
      per_record.epsilon = DivideDown(per_person.epsilon, groups);
      break;
    case PrivacyBudget::Kind::kZcdp:
      // Group privacy for zCDP costs k^2.
      per_record.rho = DivideDown(DivideDown(per_person.rho, groups), groups);
      break;
    case PrivacyBudget::Kind::kApprox: {
      per_record.epsilon = DivideDown(per_person.epsilon, groups);
      // delta' k e^{(k - 1) epsilon'} <= delta, with epsilon' as rounded.
      const double growth =
          MultiplyUp(groups, ExpUp(MultiplyUp(groups - 1, per_record.epsilon)));
      per_record.delta = DivideDown(per_person.delta, growth);
      break;
    }
  }
  return per_record;
}

}  // namespace dpq
