// The prepared form every mechanism reads (DESIGN.md, "One prepared form"):
// the occupied cells of a release's public grid, in increasing order, each
// with how many records it holds. Nothing per record survives preparation,
// so a mechanism's cost follows the runs and m, not n, and the rows and the
// counts of the same buckets give the same Runs, hence the same release.
//
// Points and cumulative counts are doubles: exact integers there (grid
// points below 2^52, counts up to 2^53 - 1, kMaxCountedRecords), and the
// raw path builds them inside the record buffer it already holds.
#ifndef DPQ_CORE_RUNS_H_
#define DPQ_CORE_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/random.h"
#include "core/status.h"

namespace dpq {

// A view: the arrays belong to a RunsStore or to the caller's buffers.
struct Runs {
  const double* points = nullptr;  // strictly increasing grid points
  const double* ends = nullptr;    // ends[i]: the records at points[0..i]
  size_t size = 0;                 // runs (occupied points)

  uint64_t total() const {
    return size == 0 ? 0 : static_cast<uint64_t>(ends[size - 1]);
  }
  // The records at points[0, i).
  uint64_t before(size_t i) const {
    return i == 0 ? 0 : static_cast<uint64_t>(ends[i - 1]);
  }
  // The records at points[i].
  uint64_t count(size_t i) const {
    return static_cast<uint64_t>(ends[i]) - before(i);
  }
  int64_t point(size_t i) const { return static_cast<int64_t>(points[i]); }
  // The first run at or above `point` (size when none); binary search.
  size_t FirstAtOrAbove(int64_t point) const;
  // The first run above `point` (size when none).
  size_t FirstAbove(int64_t point) const;
  // Records below `point`, and at or below it.
  uint64_t Below(int64_t point) const { return before(FirstAtOrAbove(point)); }
  uint64_t AtOrBelow(int64_t point) const { return before(FirstAbove(point)); }
  // The run holding the record of 0-based rank `rank` < total().
  size_t RunOfRank(uint64_t rank) const;
};

// Sorted points (exact integer doubles, e.g. SortToPoints' output) to runs,
// in place: the distinct points move to sorted_points[0, k) and ends[0, k)
// receives their cumulative counts (room for n). Returns k. O(n).
size_t RunLengthEncode(double* sorted_points, size_t n, double* ends);

// The points of a uniformly random subset of `keep` of the records (exact:
// Floyd's algorithm on ranks, from `rng`), sorted, into *points; all the
// records' points when there are at most `keep`. What a mechanism with a
// public record cap reads (joint_exp.h). O(keep log keep) time and 16 bytes
// per kept record of scratch, whatever the counts. TOO_LARGE when that
// memory cannot be had.
Status SampleRunPoints(const Runs& runs, uint64_t keep, RandomSource& rng,
                       std::vector<double>* points);

// Runs that own their arrays (allocated without throwing: a failed
// allocation is TOO_LARGE, never an abort).
class RunsStore {
 public:
  RunsStore() = default;
  // The non-empty buckets of counts already validated (ValidateCounts:
  // whole, >= 0, summing to at most 2^53 - 1): bucket i is grid point i.
  // O(buckets).
  static StatusOr<RunsStore> FromCounts(const double* counts, size_t buckets);
  // From sorted points (tests, and callers holding a copy anyway).
  static RunsStore FromSortedPoints(const std::vector<double>& sorted_points);
  // From (point, count) pairs with increasing points and counts >= 1.
  static RunsStore FromPairs(
      const std::vector<std::pair<int64_t, uint64_t>>& runs);

  Runs view() const { return {points_.get(), ends_.get(), size_}; }

 private:
  // Room for `size` runs, or false.
  bool Allocate(size_t size);

  std::unique_ptr<double[]> points_;
  std::unique_ptr<double[]> ends_;
  size_t size_ = 0;
};

}  // namespace dpq

#endif  // DPQ_CORE_RUNS_H_
