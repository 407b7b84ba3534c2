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

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "core/bits.h"
#include "core/prepare.h"
#include "core/random.h"
#include "core/status.h"

namespace dpq {

// The i-th 32-bit word of a byte buffer. Record buffers hold doubles, then
// 32-bit point keys or group codes, then runs, in overlapping places
// (RowsToRuns, groups.h), so they are read and written as bytes.
inline uint32_t LoadWord32(const unsigned char* bytes, size_t i) {
  uint32_t word;
  std::memcpy(&word, bytes + 4 * i, 4);
  return word;
}
inline void StoreWord32(unsigned char* bytes, size_t i, uint32_t word) {
  std::memcpy(bytes + 4 * i, &word, 4);
}

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

// Adds each run's count to counts[leaf(i)], i the run's index, for a
// `leaf` that never decreases with i (a leaf of the run's value, by
// monotone rounded steps): the trees' leaf counts. Each leaf then holds a
// contiguous stretch of runs, so with many runs a leaf each stretch's end
// is found by a search, O(leaves log runs) instead of O(runs) (at 10^6
// values on the default grid the pass over every run was most of a tree's
// time); the counts are the same either way.
template <typename Leaf>
void CountRunsByLeaf(const Runs& runs, size_t leaves, Leaf leaf,
                     int64_t* counts) {
  const auto bits = static_cast<size_t>(BitWidth(runs.size));  // a search
  if (runs.size <= 4 * leaves * bits) {
    for (size_t i = 0; i < runs.size; ++i) {
      counts[leaf(i)] += static_cast<int64_t>(runs.count(i));
    }
    return;
  }
  for (size_t begin = 0; begin < runs.size;) {
    const size_t at = leaf(begin);
    // The first run past this leaf, in (begin, runs.size].
    size_t low = begin + 1;
    size_t high = runs.size;
    while (low < high) {
      const size_t mid = low + (high - low) / 2;
      if (leaf(mid) > at) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    counts[at] += static_cast<int64_t>(runs.before(low) - runs.before(begin));
    begin = low;
  }
}

// Prepare, rows: checks every value is finite (NON_FINITE_VALUE naming the
// first that is not), clamps each to the grid's bounds, maps it to its
// nearest grid point (PointOf), sorts and run-length encodes: the runs'
// points land in `values` (the caller's copy of the records) and their
// cumulative counts in `ends` (room for `count`). For grids under 2^32
// steps and at least kRadixMinRecords records: one pass over the values
// that writes 32-bit point indices (keys) into the first half of `values`,
// an LSD radix sort of the keys (RadixDigitWidth's digits) ending in the
// second half of `ends`, and one pass over the sorted keys that writes the
// runs' counts behind them and their points into `values`. On a grid of
// at most 2 points a record the sort is one pass by the keys' high bits
// and the runs come from counting each bucket's low 11 bits. No memory
// beyond the two buffers but counters (16 KiB, or count / 256 bytes for the
// buckets' ends; 8 bytes a record fewer than sorting into buffers of its
// own), and no pass over doubles after the first. Otherwise ClampValues,
// std::sort, ConvertToPoints and RunLengthEncode. The runs are the same
// either way.
StatusOr<Runs> RowsToRuns(double* values, size_t count, const OutputGrid& grid,
                          double* ends);

// Whether a grid's points fit RowsToRuns' 32-bit keys.
inline bool KeyedGrid(const OutputGrid& grid) {
  return grid.steps() < (int64_t{1} << 32) - 1;
}
// A value's key as RowsToRuns makes it: the index of the grid point nearest
// x clamped to the grid's bounds. False (and no key) when x is not finite.
// `shortcut` is grid.shortcut(), copied by the caller (kept in registers).
inline bool PointKey(double x, const NearestShortcut& shortcut,
                     const OutputGrid& grid, uint32_t* key) {
  int64_t point;
  if (!shortcut.Nearest(x, &point)) {
    if (!std::isfinite(x)) return false;
    point = grid.PointOf(std::min(std::max(x, grid.lower()), grid.upper()));
  }
  *key = static_cast<uint32_t>(point);
  return true;
}
// RowsToRuns after its first step, for a caller that made the keys (a
// keyed grid): keys (PointKey's, 4 bytes at 4i) in the first half of
// `bytes` (8 count bytes), `sorted` whether they are in order; the runs'
// points land in `bytes` and their counts in `ends` (8 count bytes, used as
// scratch too). The same runs as RowsToRuns on the values.
Runs KeysToRunsInPlace(unsigned char* bytes, size_t count,
                       const OutputGrid& grid, double* ends, bool sorted);

// Sorted points (exact integer doubles, e.g. ConvertToPoints' output) to runs,
// in place: the distinct points move to sorted_points[0, k) and ends[0, k)
// receives their cumulative counts (room for n). Returns k. O(n).
size_t RunLengthEncode(double* sorted_points, size_t n, double* ends);

// Record points, sorted: what a mechanism with a record cap reads.
struct RecordPoints {
  std::unique_ptr<double[]> data;
  size_t size = 0;
  double* begin() { return data.get(); }
  double* end() { return data.get() + size; }
  const double* begin() const { return data.get(); }
};

// The points of a uniformly random subset of `keep` of the records, sorted,
// into *points; all the records' points when there are at most `keep`.
// What a mechanism with a public record cap reads (joint_exp.h). Exact, from
// `rng`: Floyd's algorithm over a bitmap of the ranks when there are at most
// 64 keep of them, else the first `keep` distinct values of independent
// uniform ranks (every keep-subset equally likely either way). O(keep) time
// (a radix sort of keep ranks) whatever the counts, and at most
// SubsetBytes(keep) = 16 bytes a kept record at once, the points included
// (the bitmap, at most 8, and the points; or the ranks and the sort's copy
// of them, freed before the points are written). TOO_LARGE when that memory
// cannot be had; a caller that budgets it up front (the bindings) never
// sees that.
Status SampleRunPoints(const Runs& runs, uint64_t keep, RandomSource& rng,
                       RecordPoints* points);
uint64_t SubsetBytes(uint64_t keep);

// The most rows counts may add up to: 2^53 - 1, so every cumulative count
// is exact in a double and an int64. Not privacy-relevant.
constexpr double kMaxCountedRecords = 9007199254740991.0;  // 2^53 - 1

// Prepare, counts: checks every count (a whole number >= 0, the first bad
// one named: INVALID_COUNTS) and their sum (at most kMaxCountedRecords, else
// TOO_LARGE; the sum is private, so that error is for the data owner's eyes,
// docs/refusals.md), and writes the non-empty buckets as runs, bucket i as
// grid point i: their points to `points` and their cumulative counts to
// `ends`, each with room for `buckets`. `ends` may be `counts` itself (the
// run of bucket i lands in a slot <= i after bucket i is read), so the
// counts are read and turned into runs in one pass over memory; they are
// overwritten then, also on an error. O(buckets).
StatusOr<Runs> CountsToRuns(const double* counts, size_t buckets,
                            double* points, double* ends);

// Runs that own their arrays (allocated without throwing: a failed
// allocation is TOO_LARGE, never an abort).
class RunsStore {
 public:
  RunsStore() = default;
  // CountsToRuns into arrays of its own (the counts are left as they are).
  static StatusOr<RunsStore> FromCounts(const double* counts, size_t buckets);
  // Room for `buckets` points only, for CountsToRuns over the caller's
  // counts (ends written in place); TOO_LARGE without the memory.
  static StatusOr<RunsStore> PointsFor(size_t buckets);
  double* points() { return points_.get(); }
  // From sorted points (tests, and callers holding a copy anyway).
  static RunsStore FromSortedPoints(const std::vector<double>& sorted_points);
  // `runs` on grid `from` moved to the nearest points of `to` (the step
  // look's grid, step_look.h), runs that meet merged; TOO_LARGE without
  // the memory. Takes 16 bytes a point of `to`, whatever the runs.
  static StatusOr<RunsStore> OnGrid(const Runs& runs, const OutputGrid& from,
                                    const OutputGrid& to);
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
