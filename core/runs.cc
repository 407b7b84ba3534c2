#include "core/runs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/bits.h"

namespace dpq {
namespace {

// c a whole number in [0, 2^53], without a branch or a conversion (so the
// check vectorises): every double from 2^52 up is whole, and below it
// adding and removing 2^52 rounds c to a whole number, which changes it
// unless it was one.
inline bool WholeCount(double c) {
  constexpr double kMaxCount = 9007199254740992.0;   // 2^53
  constexpr double kWholeFrom = 4503599627370496.0;  // 2^52
  const double rounded = (c + kWholeFrom) - kWholeFrom;
  return (c >= 0) & (c <= kMaxCount) & ((c >= kWholeFrom) | (rounded == c));
}

// Counts checked, then turned into runs, per block (in cache for both).
// The total is a double: exact while it is at most 2^53, and past that
// rounding is monotone, so it never falls back below (a 64-bit integer
// total is no faster in WebAssembly, where converting costs a check).
constexpr size_t kCountsBlock = 512;

// RowsToRuns' first step: each value checked, clamped and mapped to its
// point, key i (4 bytes at 4i) written behind value i (8 bytes at 8i).
// *sorted tells whether the keys came in order.
Status ValuesToKeys(unsigned char* bytes, size_t count, const OutputGrid& grid,
                    bool* sorted) {
  // The shortcut first, on the value as it is: it holds only for finite
  // values inside the bounds (NearestShortcut::Nearest), which need no
  // clamping and no check, so those are left to the other values (placing
  // 10^6 values took a third less on both platforms). A local copy: its
  // fields stay in registers, which the byte stores cannot alias.
  const NearestShortcut shortcut = grid.shortcut();
  bool in_order = true;
  uint32_t previous = 0;
  for (size_t i = 0; i < count; ++i) {
    double x;
    std::memcpy(&x, bytes + 8 * i, 8);
    uint32_t key;
    if (!PointKey(x, shortcut, grid, &key)) return NonFiniteValueAt(i, x);
    StoreWord32(bytes, i, key);
    in_order &= key >= previous;
    previous = key;
  }
  *sorted = in_order;
  return Status::Ok();
}

// One LSD pass: the keys `from` to their places `to` by the digit at
// `shift`; `offsets` has room for mask + 1 counters.
void ScatterKeys(const unsigned char* from, unsigned char* to, size_t n,
                 int shift, uint32_t mask, uint32_t* offsets) {
  std::fill(offsets, offsets + mask + 1, 0);
  for (size_t i = 0; i < n; ++i)
    ++offsets[(LoadWord32(from, i) >> shift) & mask];
  uint32_t total = 0;
  for (uint32_t d = 0; d <= mask; ++d) {
    const uint32_t here = offsets[d];
    offsets[d] = total;
    total += here;
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t key = LoadWord32(from, i);
    StoreWord32(to, offsets[(key >> shift) & mask]++, key);
  }
}

// The last step: sorted keys to runs, their points from `points` on and
// cumulative counts into `ends`; returns the runs. Run r's count (8 bytes
// at 8r, r <= i) is written after key i + 1 is read, so the keys may lie
// in the second half of `ends` (from byte 4 count on): the count never
// reaches a key still to be read.
size_t KeysToRuns(const unsigned char* keys, size_t count,
                  unsigned char* points, double* ends) {
  size_t runs = 0;
  uint32_t key = LoadWord32(keys, 0);
  for (size_t i = 0; i + 1 < count; ++i) {
    const uint32_t next = LoadWord32(keys, i + 1);
    const auto point = static_cast<double>(key);
    std::memcpy(points + 8 * runs, &point, 8);
    ends[runs] = static_cast<double>(i + 1);
    runs += next != key ? 1 : 0;
    key = next;
  }
  const auto point = static_cast<double>(key);
  std::memcpy(points + 8 * runs, &point, 8);
  ends[runs] = static_cast<double>(count);
  return runs + 1;
}

// Low bits of a key counted in cache, per bucket of its high bits.
constexpr int kCountedBits = 11;

// The last step when the grid is small for the records: keys grouped by
// their high bits (bucket b in [bucket_ends[b - 1], bucket_ends[b])), each
// bucket's low `low_bits` counted in 2^low_bits counters, and the runs
// written from the counters in order: their points from `points` on and
// cumulative counts into `ends`; returns the runs. A bucket's keys are all
// read before its runs are written, and a run holds at least one key, so
// the runs stay behind the keys still to be read (as in KeysToRuns).
size_t CountedKeysToRuns(const unsigned char* keys, const uint32_t* bucket_ends,
                         size_t buckets, int low_bits, unsigned char* points,
                         double* ends) {
  const size_t slots = size_t{1} << low_bits;
  const uint32_t low_mask = static_cast<uint32_t>(slots) - 1;
  std::vector<uint32_t> counters(slots);
  std::vector<uint32_t> lows(slots);
  size_t runs = 0;
  uint64_t total = 0;  // an integer: a double sum would chain its latency
  size_t begin = 0;
  for (size_t b = 0; b < buckets; ++b) {
    const size_t end = bucket_ends[b];
    if (end == begin) continue;
    std::fill(counters.begin(), counters.end(), 0);
    for (size_t i = begin; i < end; ++i) {
      ++counters[LoadWord32(keys, i) & low_mask];
    }
    // The occupied counters moved to the front, in order, without a branch
    // (which points are occupied is random): slot k <= j is written after
    // counter j is read.
    size_t occupied = 0;
    for (uint32_t j = 0; j <= low_mask; ++j) {
      const uint32_t c = counters[j];
      counters[occupied] = c;
      lows[occupied] = j;
      occupied += c != 0 ? 1 : 0;
    }
    const auto base = static_cast<uint32_t>(b) << low_bits;
    for (size_t k = 0; k < occupied; ++k) {
      total += counters[k];
      const auto point = static_cast<double>(base | lows[k]);
      std::memcpy(points + 8 * runs, &point, 8);
      ends[runs] = static_cast<double>(total);
      ++runs;
    }
    begin = end;
  }
  return runs;
}

}  // namespace

StatusOr<Runs> RowsToRuns(double* values, size_t count, const OutputGrid& grid,
                          double* ends) {
  if (count < kRadixMinRecords || !KeyedGrid(grid)) {
    Status status = ClampValues(values, count, grid.lower(), grid.upper());
    if (!status.ok()) return status;
    std::sort(values, values + count);
    ConvertToPoints(values, count, grid);
    return Runs{values, ends, RunLengthEncode(values, count, ends)};
  }
  auto* bytes = reinterpret_cast<unsigned char*>(values);
  bool sorted = false;
  Status status = ValuesToKeys(bytes, count, grid, &sorted);
  if (!status.ok()) return status;
  return KeysToRunsInPlace(bytes, count, grid, ends, sorted);
}

Runs KeysToRunsInPlace(unsigned char* bytes, size_t count,
                       const OutputGrid& grid, double* ends, bool sorted) {
  auto* values = reinterpret_cast<double*>(bytes);
  if (count == 0) return Runs{values, ends, 0};
  if (count < kRadixMinRecords) {
    // Few keys: sorted on the stack, then to the second half of `ends`,
    // where KeysToRuns reads them (the same runs as std::sort of the
    // values: PointOf is monotone).
    uint32_t keys[kRadixMinRecords];
    for (size_t i = 0; i < count; ++i) keys[i] = LoadWord32(bytes, i);
    std::sort(keys, keys + count);
    unsigned char* last = reinterpret_cast<unsigned char*>(ends) + 4 * count;
    std::memcpy(last, keys, 4 * count);
    return Runs{values, ends, KeysToRuns(last, count, bytes, ends)};
  }
  // The sorted keys end in the second half of `ends`, so that the runs'
  // counts, written from its start, stay behind the keys still to be read,
  // and the points go to `values`, free by then: pass k of P writes there
  // when P - k is even, and to the second half of `values` otherwise.
  // (Ending in `values`, under the points being written, was 7% slower in
  // WebAssembly.)
  auto* spare = reinterpret_cast<unsigned char*>(ends);
  unsigned char* last = spare + 4 * count;
  if (sorted) {
    std::memcpy(last, bytes, 4 * count);
  } else {
    // Bits in the largest point, steps (below 2^32 here).
    const int bits = BitWidth(static_cast<Uint128>(grid.steps()));
    // A grid of at most 2 points a record: one pass scatters the keys by
    // their high bits into the second half of `ends`, and each bucket's
    // low bits are counted in cache; the runs come from the counters, in
    // order (13% of a release of 10^6 values on the default grid, against
    // a second pass and a run-length pass). Which path runs depends on n
    // and the grid; its time grows with n anyway.
    if ((uint64_t{1} << bits) <= 2 * static_cast<uint64_t>(count)) {
      const int low = std::min(bits, kCountedBits);
      const int high = bits - low;
      std::vector<uint32_t> bucket_ends(size_t{1} << high,
                                        static_cast<uint32_t>(count));
      const unsigned char* keys = bytes;
      if (high > 0) {
        ScatterKeys(bytes, last, count, low, (uint32_t{1} << high) - 1,
                    bucket_ends.data());
        keys = last;
      }
      return Runs{values, ends,
                  CountedKeysToRuns(keys, bucket_ends.data(),
                                    bucket_ends.size(), low, bytes, ends)};
    }
    const int width = RadixDigitWidth(count, bits);
    const int passes = (bits + width - 1) / width;
    std::vector<uint32_t> offsets(size_t{1} << width);
    unsigned char* second = bytes + 4 * count;
    const unsigned char* from = bytes;
    for (int p = 0; p < passes; ++p) {
      unsigned char* to = (passes - 1 - p) % 2 == 0 ? last : second;
      ScatterKeys(from, to, count, p * width, (uint32_t{1} << width) - 1,
                  offsets.data());
      from = to;
    }
  }
  return Runs{values, ends, KeysToRuns(last, count, bytes, ends)};
}

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

namespace {

// A uniform subset of ranks can be drawn over a bitmap of all n ranks when
// n is at most this many times the subset (n / 8 <= 8 keep bytes); beyond,
// as drawn values, sorted. Either way 16 bytes a kept record at the most.
// Not privacy-relevant (both are exact).
constexpr uint64_t kBitmapSubsetRatio = 64;

bool AllocatePoints(uint64_t size, RecordPoints* out) {
  out->size = static_cast<size_t>(size);
  out->data.reset(new (std::nothrow) double[std::max<uint64_t>(size, 1)]);
  return out->data != nullptr;
}

Status NoSubsetMemory() {
  return Status(StatusCode::kTooLarge,
                "no memory for the subset of the record cap");
}

// Floyd's algorithm with the kept ranks as bits: for j = n - k .. n - 1,
// draw t uniform in [0, j] and keep t, or j when t is kept already (j is
// never kept before its step). Every k-subset is equally likely. Then the
// kept ranks of each run, counted by words, give its points.
Status BitmapSubset(const Runs& runs, uint64_t keep, RandomSource& rng,
                    RecordPoints* out) {
  const uint64_t total = runs.total();
  const auto words = static_cast<size_t>((total + 63) / 64);
  std::unique_ptr<uint64_t[]> bits(new (std::nothrow) uint64_t[words]());
  if (bits == nullptr) return NoSubsetMemory();
  for (uint64_t j = total - keep; j < total; ++j) {
    uint64_t t = UniformInteger(rng, j + 1);
    if ((bits[t >> 6] >> (t & 63)) & 1) t = j;
    bits[t >> 6] |= uint64_t{1} << (t & 63);
  }
  // The kept ranks in [from, to), a word at a time.
  auto kept = [&](uint64_t from, uint64_t to) {
    uint64_t count = 0;
    while (from < to) {
      const uint64_t word = bits[from >> 6] >> (from & 63);
      const uint64_t span = std::min<uint64_t>(64 - (from & 63), to - from);
      const uint64_t mask =
          span == 64 ? ~uint64_t{0} : (uint64_t{1} << span) - 1;
      count += static_cast<uint64_t>(PopCount(word & mask));
      from += span;
    }
    return count;
  };
  if (!AllocatePoints(keep, out)) return NoSubsetMemory();
  double* points = out->data.get();
  size_t k = 0;
  for (size_t i = 0; i < runs.size; ++i) {
    const auto c = static_cast<size_t>(
        kept(runs.before(i), static_cast<uint64_t>(runs.ends[i])));
    std::fill(points + k, points + k + c, runs.points[i]);
    k += c;
  }
  return Status::Ok();
}

// Sorts keys[0, count), each below 2^bits: an LSD radix sort through
// `scratch` (count entries), std::sort for few.
void SortRanks(uint64_t* keys, size_t count, uint64_t* scratch, int bits) {
  if (count < kRadixMinRecords) {
    std::sort(keys, keys + count);
    return;
  }
  const size_t digits = size_t{1} << kRadixDigitBits;
  std::vector<size_t> offsets(digits);
  uint64_t* from = keys;
  uint64_t* to = scratch;
  for (int shift = 0; shift < bits; shift += kRadixDigitBits) {
    std::fill(offsets.begin(), offsets.end(), 0);
    for (size_t i = 0; i < count; ++i)
      ++offsets[(from[i] >> shift) & (digits - 1)];
    size_t sum = 0;
    for (size_t& offset : offsets) {
      const size_t here = offset;
      offset = sum;
      sum += here;
    }
    for (size_t i = 0; i < count; ++i) {
      to[offsets[(from[i] >> shift) & (digits - 1)]++] = from[i];
    }
    std::swap(from, to);
  }
  if (from != keys) std::memcpy(keys, from, count * sizeof(uint64_t));
}

// The first k distinct values of a sequence of independent uniform ranks
// in [0, n): by symmetry, every k-subset is equally likely. Drawn in
// rounds: k - (distinct so far) draws, sorted, each kept unless drawn
// before (a round cannot overshoot: it adds at most as many values as it
// draws). With n > 64 k a round repeats about k^2 / 2n values, so about
// one round in all. Then the sorted ranks to their runs' points.
Status DrawnSubset(const Runs& runs, uint64_t keep, RandomSource& rng,
                   RecordPoints* out) {
  const uint64_t total = runs.total();
  const auto k = static_cast<size_t>(keep);
  std::unique_ptr<uint64_t[]> ranks(new (std::nothrow) uint64_t[k]);
  std::unique_ptr<uint64_t[]> scratch(new (std::nothrow) uint64_t[k]);
  if (ranks == nullptr || scratch == nullptr) return NoSubsetMemory();
  const int bits = BitWidth(total - 1);
  size_t have = 0;
  while (have < k && rng.healthy()) {
    uint64_t* fresh = ranks.get() + have;
    const size_t draws = k - have;
    for (size_t i = 0; i < draws; ++i) fresh[i] = UniformInteger(rng, total);
    SortRanks(fresh, draws, scratch.get(), bits);
    // Merge the sorted old and new into scratch, each value once.
    const uint64_t* old = ranks.get();
    size_t a = 0;
    size_t b = 0;
    size_t out = 0;
    while (a < have || b < draws) {
      uint64_t next;
      if (b == draws || (a < have && old[a] <= fresh[b])) {
        next = old[a++];
      } else {
        next = fresh[b++];
      }
      if (out == 0 || scratch[out - 1] != next) scratch[out++] = next;
    }
    ranks.swap(scratch);
    have = out;
  }
  scratch.reset();
  if (!AllocatePoints(keep, out)) return NoSubsetMemory();
  double* points = out->data.get();
  // (A failed entropy source leaves fewer: the release reports that.)
  size_t run = 0;
  for (size_t i = 0; i < have; ++i) {
    while (runs.ends[run] <= static_cast<double>(ranks[i])) ++run;
    points[i] = runs.points[run];
  }
  std::fill(points + have, points + k, runs.points[0]);
  return Status::Ok();
}

}  // namespace

uint64_t SubsetBytes(uint64_t keep) { return 16 * keep; }

Status SampleRunPoints(const Runs& runs, uint64_t keep, RandomSource& rng,
                       RecordPoints* out) {
  const uint64_t total = runs.total();
  if (total <= keep) {
    if (!AllocatePoints(total, out)) return NoSubsetMemory();
    double* points = out->data.get();
    for (size_t i = 0, k = 0; i < runs.size; ++i) {
      const auto c = static_cast<size_t>(runs.count(i));
      std::fill(points + k, points + k + c, runs.points[i]);
      k += c;
    }
    return Status::Ok();
  }
  if (total / kBitmapSubsetRatio <= keep) {
    return BitmapSubset(runs, keep, rng, out);
  }
  return DrawnSubset(runs, keep, rng, out);
}

bool RunsStore::Allocate(size_t size) {
  const size_t room = std::max<size_t>(size, 1);
  points_.reset(new (std::nothrow) double[room]);
  ends_.reset(new (std::nothrow) double[room]);
  size_ = size;
  return points_ != nullptr && ends_ != nullptr;
}

StatusOr<Runs> CountsToRuns(const double* counts, size_t buckets,
                            double* points, double* ends) {
  // A block is checked before any of it is overwritten (ends may be
  // counts), so a bad count is still there to be named. The cumulative
  // count is a double chain (the total below). Slot k <= i is written only
  // after bucket i is read, and without a branch per bucket (occupied
  // buckets come at random): every bucket writes slot k, which advances
  // past the occupied ones only.
  double total = 0;
  size_t k = 0;
  for (size_t start = 0; start < buckets; start += kCountsBlock) {
    const size_t end = std::min(buckets, start + kCountsBlock);
    bool whole = true;
    for (size_t i = start; i < end; ++i) whole &= WholeCount(counts[i]);
    if (!whole) {
      size_t bad = start;
      while (WholeCount(counts[bad])) ++bad;
      // The position, never the value: a service may pass the message on
      // (docs/refusals.md: no message prints a count).
      return Status(StatusCode::kInvalidCounts,
                    "counts[" + std::to_string(bad) +
                        "] is not a whole number >= 0 (a count of rows)");
    }
    for (size_t i = start; i < end; ++i) {
      const double c = counts[i];
      total += c;
      points[k] = static_cast<double>(i);
      ends[k] = total;
      k += c > 0 ? 1 : 0;
    }
    if (!(total <= kMaxCountedRecords)) {
      return Status(StatusCode::kTooLarge,
                    "the counts add up to more than 2^53 - 1 rows, the most "
                    "a release reads (private: for the data owner only)");
    }
  }
  return Runs{points, ends, k};
}

StatusOr<RunsStore> RunsStore::FromCounts(const double* counts,
                                          size_t buckets) {
  RunsStore store;
  if (!store.Allocate(buckets)) {
    return Status(StatusCode::kTooLarge,
                  "no memory for the occupied buckets' runs");
  }
  StatusOr<Runs> runs =
      CountsToRuns(counts, buckets, store.points_.get(), store.ends_.get());
  if (!runs.ok()) return runs.status();
  store.size_ = runs.value().size;
  return store;
}

StatusOr<RunsStore> RunsStore::PointsFor(size_t buckets) {
  RunsStore store;
  store.points_.reset(new (std::nothrow) double[std::max<size_t>(buckets, 1)]);
  if (store.points_ == nullptr) {
    return Status(StatusCode::kTooLarge,
                  "no memory for the occupied buckets' runs");
  }
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

StatusOr<RunsStore> RunsStore::OnGrid(const Runs& runs, const OutputGrid& from,
                                      const OutputGrid& to) {
  RunsStore store;
  // At most one run a point of `to`: room for all of them, so what is
  // asked of the allocator depends on the public grid alone.
  const auto room = static_cast<size_t>(to.steps()) + 1;
  if (!store.Allocate(room)) {
    return Status(StatusCode::kTooLarge,
                  "no memory for the records' runs on the step's grid "
                  "(private: for the data owner only)");
  }
  size_t size = 0;
  for (size_t i = 0; i < runs.size; ++i) {
    const auto point =
        static_cast<double>(to.PointOf(from.ValueAt(runs.point(i))));
    if (size == 0 || store.points_[size - 1] != point) {
      store.points_[size++] = point;
    }
    store.ends_[size - 1] = runs.ends[i];
  }
  store.size_ = size;
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
