// Input preparation shared by every mechanism: validation, clamping, sorting
// and the public output grid.
#ifndef DPQ_CORE_PREPARE_H_
#define DPQ_CORE_PREPARE_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/status.h"

namespace dpq {

// Largest dataset the core accepts. Bounds the counts every mechanism keeps in
// 32-bit size_t (WASM) and in doubles exactly. Not privacy-relevant.
constexpr size_t kMaxRecords = size_t{1} << 31;
// Largest number of quantiles in one release. Not privacy-relevant.
constexpr size_t kMaxQuantiles = size_t{1} << 20;
// Most steps an output grid has: keeps every index and every count of
// indices exact in a double. Not privacy-relevant.
constexpr int64_t kMaxGridSteps = int64_t{1} << 52;
// Most steps of a release's default grid (no `step` given): a resolution of
// 10^-6 to 10^-5 of the range. Finer grids make the gap beside an atom so
// wide (ln(its points) / scale ranks of pull) that quantiles inside an
// atom's edge miss it; measured in docs/experiments. Public; any value is
// private.
constexpr int64_t kDefaultGridSteps = int64_t{1} << 20;

// PointOf's shortcut on decimal grids (OutputGrid::SetNearestShortcut
// proves it): t = x scale - offset is x's position in points to within the
// slack, and where t lies in [low, high] and within `half` of a whole
// number, that number is x's nearest point. A struct, so that a pass over
// many values (RowsToRuns) holds it in registers.
struct NearestShortcut {
  double scale = 0;
  double offset = 0;
  double low = 0;   // 1 + slack
  double high = 0;  // steps - 1 - slack
  double half = 0;  // 0.5 - slack; 0: no shortcut (no t passes)
  // 2^52, read rather than written as a constant: V8 rebuilds a
  // floating-point constant in every iteration of a loop but keeps a value
  // read before it in a register (placing 10^6 values in WebAssembly took
  // 16% less; native code is the same).
  double shift = 4503599627370496.0;

  // True when x's nearest point is certain from t alone; *point is then
  // that point. Always false for x outside [lower, upper], NaN and the
  // infinities (SetNearestShortcut's proof), so a caller may ask before
  // checking or clamping x.
  bool Nearest(double x, int64_t* point) const {
    const double t = x * scale - offset;
    // For 0 <= t < 2^52, t + 2^52 rounds t to a whole number (its last
    // place is 1) and holds it in its low 52 bits: no floor, and no
    // conversion to an integer (a checked one in WebAssembly). Then
    // t - nearest is exact (Sterbenz: t >= 1 and |t - nearest| <= 0.5).
    const double shifted = t + shift;
    if (t >= low && t <= high && std::fabs(t - (shifted - shift)) < half) {
      uint64_t bits;
      std::memcpy(&bits, &shifted, sizeof(bits));
      *point = static_cast<int64_t>(bits - 0x4330000000000000u);  // - 2^52's
      return true;
    }
    return false;
  }
};

// Mechanisms release points of a public grid over [lower, upper], never
// arbitrary doubles. The exponential mechanism then runs over a finite,
// data-independent output set, so the low bits of a release cannot reveal a
// data point (the failure Mironov 2012 showed for naive floating-point
// noise). The grid depends only on public parameters: for releases by
// default 2^20 steps (fewer where doubles cannot tell that many apart near
// the bounds); with a public `step`, the points lower + k step (and upper as
// the last point). Streams sketch on the finest grid, up to 2^52 steps.
//
// Grid points are 0..steps. The release path maps each record to its nearest
// point (PointOf), so records equal to a bound, or on a step grid to a
// multiple of the step, sit exactly on a point and an atom there can be
// released as itself. Streams sketch cells: CellOf(x) is the last grid point
// at or below x, in [0, steps).
class OutputGrid {
 public:
  // The grid ForBounds picks: 2^k steps, each at least 4 ulps of the largest
  // magnitude involved, so ValueAt is strictly increasing.
  static OutputGrid ForBounds(double lower, double upper);
  // A release's grid without a `step`: the multiples of 10^e between the
  // bounds, e the smallest exponent giving at most kDefaultGridSteps steps,
  // with the bounds as end points. Round values (0, 40, 37.5) are then
  // points, and releases print as short decimals. Where such multiples are
  // not exact or not distinct doubles (bounds far from 0 for their range),
  // ForBounds's grid coarsened to kDefaultGridSteps steps.
  // `most_steps` replaces kDefaultGridSteps (coarser grids, e.g. intervals').
  static OutputGrid Default(double lower, double upper,
                            int64_t most_steps = kDefaultGridSteps);
  // The grid of a public step: lower + k step for k < steps and upper at
  // k = steps, steps = ceil((upper - lower) / step) (a ratio within 10^-9 of
  // a whole number counts as that number). INVALID_OPTION for a step that is
  // not finite and > 0, or finer than ForBounds's grid (doubles cannot tell
  // its points apart).
  static StatusOr<OutputGrid> WithStep(double lower, double upper, double step);
  // [0, 1] in one step: a placeholder until a grid is assigned.
  OutputGrid() : OutputGrid(0, 1, 1) {}
  // A grid with an explicit number of steps (tests use small ones); with
  // `step` > 0 its points are lower + k step.
  OutputGrid(double lower, double upper, int64_t steps, double step = 0)
      : lower_(lower),
        upper_(upper),
        steps_(steps),
        step_(step),
        cells_per_unit_(static_cast<double>(steps) / (upper - lower)),
        per_step_(PerStep(steps)) {}

  double lower() const { return lower_; }
  double upper() const { return upper_; }
  int64_t steps() const { return steps_; }
  double step() const { return step_; }  // a `step` grid's step, else 0
  // Default's decimal grids: points j in (0, steps) are the multiples
  // (first_multiple() + j) 10^decimal_exponent(), and the bounds are
  // points 0 and steps (multiples too where they are whole multiples).
  // False for step, bucket and ForBounds grids.
  bool decimal_default() const { return decimal_default_; }
  int decimal_exponent() const { return exponent_; }
  int64_t first_multiple() const { return first_multiple_; }
  // Whether both bounds are multiples themselves: first_multiple() and
  // first_multiple() + steps() (a decimal default grid only).
  bool BoundsOnMultiples() const {
    return decimal_default_ && Multiple(first_multiple_) == lower_ &&
           Multiple(first_multiple_ + steps_) == upper_;
  }
  // The spacing of interior points: the step, the power of ten, or
  // (upper - lower) / steps.
  double resolution() const;

  // The largest c in [0, steps) with ValueAt(c) <= x, for x in [lower, upper].
  // Monotone non-decreasing in x, so sorted values give sorted cells.
  int64_t CellOf(double x) const;
  // The largest point j in [0, steps] with ValueAt(j) <= x, and the smallest
  // with ValueAt(j) >= x, for x in [lower, upper]. Monotone in x.
  int64_t FloorPointOf(double x) const { return FloorPoint(x, steps_); }
  int64_t CeilPointOf(double x) const {
    const int64_t below = FloorPoint(x, steps_);
    return ValueAt(below) < x ? below + 1 : below;
  }
  // The grid point nearest to x in [lower, upper] (the lower one on a tie).
  // Monotone non-decreasing in x.
  int64_t PointOf(double x) const;
  // PointOf by comparing x with its two neighbouring points' values: what
  // PointOf returns, always (it takes a shortcut on decimal grids where
  // the answer is certain; tests compare the two).
  int64_t PointOfByValues(double x) const;
  // The value of grid point j in [0, steps]: lower at 0, upper at steps,
  // monotone in j.
  double ValueAt(int64_t j) const;
  // PointOf's shortcut (half 0 where there is none).
  const NearestShortcut& shortcut() const { return shortcut_; }

 private:
  // The largest j in [0, max_point] with ValueAt(j) <= x.
  int64_t FloorPoint(double x, int64_t max_point) const;
  // A first guess at FloorPoint (from the scale), clamped to [0, max_point].
  // Inline: CellOf calls it once a value. Any estimate in [0, max_point]
  // will do: callers settle on ValueAt's side exactly. Multiplying is
  // faster than dividing; divide when the scale overflows.
  int64_t EstimatePoint(double x, int64_t max_point) const {
    const double estimate = std::isfinite(cells_per_unit_)
                                ? std::floor((x - lower_) * cells_per_unit_)
                                : std::floor((x - lower_) / (upper_ - lower_) *
                                             static_cast<double>(steps_));
    return estimate > 0 ? static_cast<int64_t>(std::min(
                              estimate, static_cast<double>(max_point)))
                        : 0;
  }
  // ValueAt(j) for j in (0, steps) on a grid with per_step_ > 0 and no
  // decimal points or step (ForBounds's grids, streams'): ValueAt uses it.
  double PowerValueAt(int64_t j) const {
    const double value =
        lower_ + (upper_ - lower_) * (static_cast<double>(j) * per_step_);
    return std::min(std::max(value, lower_), upper_);
  }
  // per_step_ for a grid of `steps` steps.
  static double PerStep(int64_t steps) {
    return (steps & (steps - 1)) == 0 ? 1 / static_cast<double>(steps) : 0;
  }
  // Sets the decimal grids' shortcut for PointOf (shortcut_ below).
  void SetNearestShortcut();

  // A decimal grid's k-th multiple of 10^e, correctly rounded.
  double Multiple(int64_t k) const {
    return divisor_ > 0 ? static_cast<double>(k) / divisor_
                        : static_cast<double>(k) * multiplier_;
  }

  double lower_;
  double upper_;
  int64_t steps_;
  double step_;
  double cells_per_unit_;  // only for FloorPoint's first estimate
  // 1 / steps when steps is a power of two (ForBounds' grids, streams'):
  // j / steps is then exactly j times it, without a division. Else 0.
  double per_step_;
  // Decimal grids: point j in (0, steps) is
  // Multiple(first_multiple_ + j stride_), 10^e = 1 / divisor_ (e < 0) or
  // multiplier_ (e >= 0); the default grid's stride is 1, a step grid's the
  // step in units of 10^e. divisor_ and multiplier_ 0 otherwise.
  int64_t first_multiple_ = 0;
  int64_t stride_ = 1;
  double divisor_ = 0;
  double multiplier_ = 0;
  bool decimal_default_ = false;  // Default's decimal grids
  int exponent_ = 0;              // their e
  // PointOf's shortcut on decimal grids: t is x's position in points,
  // (x 10^-e - first_multiple_) / stride_, to within a slack (which also
  // covers how far the rounded points' midpoints lie from the exact ones);
  // where t is further than that from a midpoint, inside [1, steps - 1],
  // the nearest point is round(t). No shortcut (half 0) elsewhere.
  NearestShortcut shortcut_;
};

// Inline: the preparation's pass over the records calls it once a record.
inline int64_t OutputGrid::PointOf(double x) const {
  int64_t point;
  return shortcut_.Nearest(x, &point) ? point : PointOfByValues(x);
}

// Inline: a stream's push calls it once a value. On power-of-two grids
// (every stream's) FloorPoint's first estimate, when its value and the
// next point's bracket x, is FloorPoint's answer (its loops would not
// move); it is checked here without the call and the general ValueAt.
inline int64_t OutputGrid::CellOf(double x) const {
  const int64_t last = steps_ - 1;
  if (per_step_ > 0 && divisor_ <= 0 && multiplier_ <= 0 && step_ <= 0) {
    const int64_t cell = EstimatePoint(x, last);
    if ((cell == 0 || PowerValueAt(cell) <= x) &&
        (cell == last || PowerValueAt(cell + 1) > x)) {
      return cell;
    }
  }
  return FloorPoint(x, last);
}

// Most buckets a bucketed release or a release from counts takes: 2^26
// counts are 512 MiB as doubles. Public; not privacy-relevant.
constexpr int64_t kMaxBuckets = int64_t{1} << 26;

// Buckets (the counts path, docs/scale.md). `buckets` equal-width buckets of
// width w = (upper - lower) / buckets over [lower, upper]; bucket i holds
// the values x with lower + i w <= x < lower + (i + 1) w (the last one also
// upper), which is what clamping and floor((x - lower) / w) give. The grid
// is the step grid of step w: point i is bucket i's lower edge, point
// `buckets` is upper. INVALID_OPTION when `buckets` is not a whole number in
// [1, kMaxBuckets] or doubles cannot tell the edges apart.
StatusOr<OutputGrid> BucketGrid(double lower, double upper, double buckets);
// The lower edge of a clamped value's bucket on a bucket grid.
inline double BucketEdge(const OutputGrid& grid, double clamped) {
  return grid.ValueAt(grid.CellOf(clamped));
}
// Replaces each clamped value by its bucket's lower edge (BucketEdge):
// afterwards the values say no more than the buckets' counts do.
void ToBucketEdges(double* values, size_t count, const OutputGrid& grid);
// lower < upper, both finite, and upper - lower finite.
Status ValidateBounds(double lower, double upper);
// 1 <= count <= kMaxQuantiles, each finite and strictly inside (0, 1).
Status ValidateQuantiles(const double* quantiles, size_t count);
// count <= kMaxRecords.
Status ValidateRecordCount(size_t count);

// NON_FINITE_VALUE for the record at `index`: the refusal of a record that
// is NaN or infinite (for the data owner; it names the index, never n).
Status NonFiniteValueAt(size_t index, double value);
// Checks every value is finite (naming the first bad index) and clamps values
// to [lower, upper] in place. The buffer is the caller's copy.
Status ClampValues(double* values, size_t count, double lower, double upper);
// ClampValues, then sorts.
Status ClampAndSort(double* values, size_t count, double lower, double upper);

// Replaces sorted values by their nearest grid points (PointOf, as exact
// integer doubles), in place: the prepared form every grid mechanism reads.
void ConvertToPoints(double* sorted_values, size_t count,
                     const OutputGrid& grid);

// Fewest records RowsToRuns radix-sorts (std::sort below).
constexpr size_t kRadixMinRecords = 64;
// The digit width for an LSD radix sort of `count` keys below 2^bits:
// kRadixDigitBits (11: two passes on the default 2^20-step grid); under
// 4,096 records digits of at most as many bits as the count has, so that
// clearing and summing the counters costs no more than the records, in as
// few passes as that allows (two of 10 bits for 1,000 records on the
// default grid, not three of 7: 2% of a release in WebAssembly).
int RadixDigitWidth(size_t count, int bits);

// Digit width of RadixSort for large inputs: 2^11 counters per pass.
constexpr int kRadixDigitBits = 11;
// Sorts non-negative integer keys below 2^bits into the order std::sort
// gives: an LSD radix sort, ceil(bits / digit_bits) passes through
// `scratch` (resized to match; its contents are lost). Typed, where
// RowsToRuns' passes (runs.cc) read and write bytes because they sort
// inside the records' buffer: one pass shared by both, in the byte form,
// made stream pushes 2-3% slower in WebAssembly.
template <typename Key>
void RadixSort(std::vector<Key>* keys, std::vector<Key>* scratch, int bits,
               int digit_bits = kRadixDigitBits) {
  const size_t digits = size_t{1} << digit_bits;
  scratch->resize(keys->size());
  std::vector<size_t> offsets(digits);
  for (int shift = 0; shift < bits; shift += digit_bits) {
    std::fill(offsets.begin(), offsets.end(), 0);
    for (Key key : *keys) ++offsets[(key >> shift) & (digits - 1)];
    size_t total = 0;
    for (size_t& offset : offsets) {
      const size_t here = offset;
      offset = total;
      total += here;
    }
    for (Key key : *keys) {
      (*scratch)[offsets[(key >> shift) & (digits - 1)]++] = key;
    }
    keys->swap(*scratch);
  }
}

// Exact floor(q * n) for q in [0, 1] (no floating-point rounding across an
// integer).
int64_t FloorProduct(double q, int64_t n);

// Exact ceil(q * n) for q in [0, 1].
int64_t CeilProduct(double q, int64_t n);

// The distinct values of `quantiles`, ascending, and for every input position
// the index of its value among them.
struct SortedQuantiles {
  std::vector<double> distinct;
  std::vector<size_t> index_of_input;
};
SortedQuantiles SortDistinctQuantiles(const double* quantiles, size_t count);

}  // namespace dpq

#endif  // DPQ_CORE_PREPARE_H_
