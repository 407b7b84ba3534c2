// The Greenwald-Khanna quantile sketch (Greenwald and Khanna 2001), as used
// by Alabi, Ben-Eliezer and Chaturvedi, "Bounded Space Differentially Private
// Quantiles" (Lemma 3.6).
//
// The sketch stores tuples (v_i, g_i, delta_i), v_i ascending: the rank of
// v_i among the n values seen lies in [r_i, r_i + delta_i] with
// r_i = g_1 + ... + g_i, and every tuple keeps g_i + delta_i <= 2 alpha n, so
// any rank is answered within alpha n. Values are cells of the public grid of
// the stream's bounds (prepare.h), so equal values are exactly equal and a
// value equal to earlier ones is inserted after them (stable order).
//
// Inserts are buffered and merged in sorted batches; a batch's new tuple takes
// the bounds of its successor (delta = g + delta - 1, the successor's rank
// uncertainty), or delta = 0 as a new minimum or maximum. COMPRESS then merges
// a tuple into its right neighbour whenever the merged tuple still satisfies
// g + delta <= 2 alpha n; it never merges across a bin edge, so the g of the
// tuples in a bin add up to the exact number of values in that bin (what
// DPHistGK needs), and it keeps the first and last tuple, the minimum and the
// maximum, as (value, 1, 0).
//
// A sketch is a summary of raw data: it must stay with the data owner, like
// the data itself. Only the private releases of dp_exp_gk and dp_hist_gk may
// leave.
#ifndef DPQ_CORE_GK_SKETCH_H_
#define DPQ_CORE_GK_SKETCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace dpq {

struct GkTuple {
  int64_t value = 0;   // a grid cell
  uint64_t g = 0;      // r_min(v_i) - r_min(v_{i-1})
  uint64_t delta = 0;  // r_max(v_i) - r_min(v_i)
};

// Most bytes a sketch may grow to (GK's size bound for the largest stream
// we accept): a smaller alpha is refused up front with TOO_LARGE instead of
// filling the 2 GiB WebAssembly heap mid-stream. Not privacy-relevant.
constexpr double kMaxSketchBytes = 256.0 * 1048576.0;

// GK's size bound for alpha and bins at kMaxRecords values, in bytes.
double MaxSketchBytes(double alpha, double bins);

class GkSketch {
 public:
  // Values in [lower, upper] are summarised as cells of the public grid
  // OutputGrid::ForBounds(lower, upper); alpha in (0, 1/2]; `bins` equal bins
  // of the cells that merges never cross (1 for none). Validate first with
  // ValidateBounds and ValidateGkParameters.
  GkSketch(double lower, double upper, double alpha, int64_t bins);

  // Adds one cell (buffered).
  void Insert(int64_t cell);
  // Merges the buffer into the tuples and compresses; queries call it.
  void Flush();

  double lower() const { return lower_; }
  double upper() const { return upper_; }
  double alpha() const { return alpha_; }
  int64_t steps() const { return steps_; }
  int64_t bins() const { return bins_; }
  uint64_t count() const { return count_; }
  // The tuples, after Flush().
  const std::vector<GkTuple>& tuples() const { return tuples_; }
  // The bin of a cell: floor(cell * bins / steps).
  int64_t BinOf(int64_t cell) const;
  // Bytes held: tuples and the insert buffer (their capacity).
  size_t MemoryBytes() const;
  // floor(2 alpha n): the bound every g + delta keeps.
  uint64_t Capacity() const;

  // The value of a tuple whose rank interval is closest to `rank` (1..n); by
  // Lemma 3.6 its true rank is within alpha n of `rank`. Flushes first.
  int64_t QuantileValue(uint64_t rank);

  // Merges `other` (a sketch of other values, with the same bounds, alpha
  // and bins) into this one: afterwards this sketch summarises both streams
  // with every invariant above at n = the two counts together, so ranks are
  // still answered within alpha n and bin counts are exact. Merging in any
  // order or tree shape keeps that (the error does not add up). A value of
  // `other` equal to one of this sketch's goes after it, as a later insert
  // would. INVALID_OPTION when the parameters differ.
  //
  // Proof. For a tuple of this sketch with rank bounds [r, R] among its own
  // n1 values, the other sketch's values before it (in merged order) are at
  // least r' of the last other tuple before it (0 if none) and at most
  // R'' - 1 of the first other tuple after it (n2 if none). So it gets
  // [r + r', R + R'' - 1], and the tuple after it in merged order, of either
  // sketch, gets g + delta <= (g1 + delta1) + (g2 + delta2) - 1 <=
  // max(1, floor(2 alpha (n1 + n2))) with (g1, delta1), (g2, delta2) the
  // two sketches' consecutive tuples bracketing the pair. Tuples of the
  // other sketch likewise (this sketch's equal values counted before them).
  // The last tuple of a bin gets r + r' = both sketches' exact counts up to
  // that bin, so bin counts stay exact; COMPRESS follows at the new n.
  Status Merge(GkSketch other);

  // Versioned bytes with a checksum.
  std::vector<uint8_t> Serialize();
  // CORRUPT_DATA for anything Serialize did not write: wrong magic, version,
  // truncation, checksum, or tuples breaking the sketch's invariants.
  static StatusOr<GkSketch> Deserialize(const uint8_t* bytes, size_t size);

 private:
  // Merges the sorted buffer (possibly empty) into the tuples and runs
  // COMPRESS (see the header) at the current count, in one in-place pass.
  void MergeBatchAndCompress();

  double lower_;
  double upper_;
  double alpha_;
  int64_t steps_;
  int64_t bins_;
  int steps_log2_ = 0;
  int bins_shift_ = -1;  // steps_log2_ - log2(bins) for power-of-two bins
  uint64_t count_ = 0;
  std::vector<GkTuple> tuples_;
  std::vector<int64_t> buffer_;
  std::vector<int64_t> scratch_;  // the batch sort's (radix) second buffer
  size_t buffer_limit_;
};

// alpha finite in (0, 1/2]; bins whole in [1, 2^20] (and <= steps).
Status ValidateGkParameters(double alpha, double bins, int64_t steps);

}  // namespace dpq

#endif  // DPQ_CORE_GK_SKETCH_H_
