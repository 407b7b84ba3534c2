#include "core/runs.h"

#include <algorithm>
#include <new>

namespace dpq {

size_t Runs::FirstAtOrAbove(int64_t point) const {
  return static_cast<size_t>(
      std::lower_bound(points, points + size, static_cast<double>(point)) -
      points);
}

size_t Runs::FirstAbove(int64_t point) const {
  return static_cast<size_t>(
      std::upper_bound(points, points + size, static_cast<double>(point)) -
      points);
}

size_t Runs::RunOfRank(uint64_t rank) const {
  // The first run whose cumulative count exceeds the rank.
  return static_cast<size_t>(
      std::upper_bound(ends, ends + size, static_cast<double>(rank)) - ends);
}

size_t RunLengthEncode(double* sorted_points, size_t n, double* ends) {
  if (n == 0) return 0;
  // Without a branch per record (runs end at random places, so a branch
  // would mispredict): every record writes its run's slot, and the slot
  // advances where the next record differs. The slot never passes i, so
  // the record after i is still unread when it is compared.
  size_t runs = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const double point = sorted_points[i];
    sorted_points[runs] = point;
    ends[runs] = static_cast<double>(i + 1);
    runs += sorted_points[i + 1] != point ? 1 : 0;
  }
  sorted_points[runs] = sorted_points[n - 1];
  ends[runs] = static_cast<double>(n);
  return runs + 1;
}

Status SampleRunPoints(const Runs& runs, uint64_t keep, RandomSource& rng,
                       std::vector<double>* points) {
  points->clear();
  const uint64_t total = runs.total();
  if (total <= keep) {
    points->reserve(static_cast<size_t>(total));
    for (size_t i = 0; i < runs.size; ++i) {
      points->insert(points->end(), static_cast<size_t>(runs.count(i)),
                     runs.points[i]);
    }
    return Status::Ok();
  }
  // Floyd: for j = N - k .. N - 1, draw t uniform in [0, j]; keep t, or j
  // when t is kept already. Every k-subset of ranks is equally likely. The
  // kept ranks live in an open-addressing table of twice their number.
  size_t slots = 1;
  while (slots < 2 * keep) slots *= 2;
  std::unique_ptr<uint64_t[]> table(new (std::nothrow) uint64_t[slots]);
  std::unique_ptr<uint64_t[]> kept(new (std::nothrow) uint64_t[keep]);
  if (table == nullptr || kept == nullptr) {
    return Status(StatusCode::kTooLarge,
                  "no memory for the subset of the record cap");
  }
  constexpr uint64_t kEmpty = ~uint64_t{0};
  std::fill(table.get(), table.get() + slots, kEmpty);
  auto insert = [&](uint64_t rank) {  // false if already kept
    size_t at =
        static_cast<size_t>((rank * 0x9E3779B97F4A7C15u) >> 20) & (slots - 1);
    while (table[at] != kEmpty) {
      if (table[at] == rank) return false;
      at = (at + 1) & (slots - 1);
    }
    table[at] = rank;
    return true;
  };
  size_t n = 0;
  for (uint64_t j = total - keep; j < total; ++j) {
    const uint64_t t = UniformInteger(rng, j + 1);
    kept[n++] = insert(t) ? t : (insert(j), j);
  }
  std::sort(kept.get(), kept.get() + n);
  // The ranks to their runs' points, in one merge.
  points->reserve(n);
  size_t run = 0;
  for (size_t i = 0; i < n; ++i) {
    while (runs.ends[run] <= static_cast<double>(kept[i])) ++run;
    points->push_back(runs.points[run]);
  }
  return Status::Ok();
}

bool RunsStore::Allocate(size_t size) {
  const size_t room = std::max<size_t>(size, 1);
  points_.reset(new (std::nothrow) double[room]);
  ends_.reset(new (std::nothrow) double[room]);
  size_ = size;
  return points_ != nullptr && ends_ != nullptr;
}

StatusOr<RunsStore> RunsStore::FromCounts(const double* counts,
                                          size_t buckets) {
  RunsStore store;
  if (!store.Allocate(buckets)) {
    return Status(StatusCode::kTooLarge,
                  "no memory for the occupied buckets' runs");
  }
  // One pass without a branch per bucket: every bucket writes the next
  // slot, which advances past the occupied ones only. Exact: every partial
  // sum is a whole number at most the validated total.
  double total = 0;
  size_t k = 0;
  double* points = store.points_.get();
  double* ends = store.ends_.get();
  for (size_t i = 0; i < buckets; ++i) {
    total += counts[i];
    points[k] = static_cast<double>(i);
    ends[k] = total;
    k += counts[i] > 0 ? 1 : 0;
  }
  store.size_ = k;
  return store;
}

RunsStore RunsStore::FromSortedPoints(const std::vector<double>& sorted) {
  RunsStore store;
  store.Allocate(sorted.size());
  std::copy(sorted.begin(), sorted.end(), store.points_.get());
  store.size_ =
      RunLengthEncode(store.points_.get(), sorted.size(), store.ends_.get());
  return store;
}

RunsStore RunsStore::FromPairs(
    const std::vector<std::pair<int64_t, uint64_t>>& runs) {
  RunsStore store;
  store.Allocate(runs.size());
  double total = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    total += static_cast<double>(runs[i].second);
    store.points_[i] = static_cast<double>(runs[i].first);
    store.ends_[i] = total;
  }
  return store;
}

}  // namespace dpq
