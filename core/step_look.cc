#include "core/step_look.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace dpq {
namespace {

int64_t PowerOfTen(int k) {
  int64_t p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

// How many times 10 divides x, at most `levels` (x = 0: `levels`),
// without a division: WebAssembly divides with a divide instruction even by
// a constant, which made a pass over 10^6 runs cost as much as AQ's
// release. For a 32-bit x, 5 divides x exactly when x times 5's inverse
// mod 2^32 (0xCCCCCCCD) is at most (2^32 - 1) / 5, and that product is then
// x / 5 (Granlund and Montgomery 1994; Lemire, Kaser and Kurz 2019).
int TrailingDecimalZeros(uint32_t x, int levels) {
  int zeros = 0;
  while (zeros < levels && (x & 1) == 0) {
    const uint32_t tenth = (x >> 1) * 0xCCCCCCCDu;
    if (tenth > 0x33333333u) break;
    x = tenth;
    ++zeros;
  }
  return zeros;
}

}  // namespace

size_t StepLookCells(int levels) { return static_cast<size_t>(levels) + 2; }

int StepLookLevels(const OutputGrid& grid) {
  // (Release grids have at most kDefaultGridSteps steps; the counts' 32-bit
  // residues need fewer than 2^31 points.)
  if (!grid.BoundsOnMultiples() || grid.steps() >= (int64_t{1} << 31)) {
    return 0;
  }
  const int64_t first = grid.first_multiple();
  const int64_t last = first + grid.steps();
  int levels = 0;
  while (levels < kStepLookMostLevels) {
    const int64_t step = PowerOfTen(levels + 1);
    // Both bounds on the lattice, and enough of its steps between them
    // (and 10^(e + j) a power of ten a double holds exactly).
    if (grid.decimal_exponent() + levels + 1 > 22 || first % step != 0 ||
        last % step != 0 || grid.steps() / step < kStepLookLeastSteps) {
      break;
    }
    ++levels;
  }
  return levels;
}

double StepLookStep(const OutputGrid& grid, int level) {
  const int e = grid.decimal_exponent() + level;
  // 10^|e| is exact in a double for |e| <= 22 (StepLookLevels keeps e
  // there), so 1 / 10^|e| is the double nearest 10^e, which WithStep reads
  // as that decimal.
  double power = 1;
  for (int i = 0; i < (e >= 0 ? e : -e); ++i) power *= 10;
  return e >= 0 ? power : 1 / power;
}

std::vector<int64_t> StepLookCounts(const Runs& runs, const OutputGrid& grid,
                                    int levels) {
  // The class depends on (first_multiple + point) mod 10^levels only, and
  // offset + point is congruent to it, in 32 bits (StepLookLevels keeps
  // the points below 2^31). The runs' doubles are read as they are: in
  // WebAssembly a double's conversion to a 64-bit integer is a checked call.
  const int64_t modulus = PowerOfTen(levels);
  const auto offset = static_cast<uint32_t>(
      ((grid.first_multiple() % modulus) + modulus) % modulus);
  const auto last = static_cast<double>(grid.steps());
  const auto cap = static_cast<double>(kStepLookCap);
  // 2^52: a whole point p < 2^52 added to it sits in its low bits.
  const double shift = 4503599627370496.0;
  std::array<double, kStepLookMostLevels + 1> sums{};
  double total = 0;
  double bounds = 0;
  double before = 0;
  // The runs on a lattice of ten (a tenth of continuous data's, at random)
  // are listed as the pass goes, without a branch, and classed after each
  // chunk: a branch on the class, taken for a tenth of the runs at random,
  // was mispredicted often enough to take most of this pass's time.
  constexpr size_t kChunk = 256;
  std::array<uint32_t, kChunk> tenths;
  std::array<double, kChunk> listed;
  for (size_t start = 0; start < runs.size; start += kChunk) {
    const size_t stop = std::min(runs.size, start + kChunk);
    size_t on_count = 0;
    for (size_t i = start; i < stop; ++i) {
      const double point = runs.points[i];
      const double count = runs.ends[i] - before;
      before = runs.ends[i];
      // (A comparison, not std::min: WebAssembly's f64.min also orders NaNs
      // and signed zeros, which made this pass 40% slower.)
      const double counted = count < cap ? count : cap;
      if (point <= 0 || point >= last) {  // a bound: the last cell
        bounds += counted;
        continue;
      }
      const double shifted = point + shift;
      uint64_t bits;
      std::memcpy(&bits, &shifted, sizeof(bits));
      // Below 10^8 + 2^31 < 2^32.
      const uint32_t x = offset + static_cast<uint32_t>(bits);
      // x / 10 when 10 divides x: even, and half of it a multiple of 5.
      const uint32_t tenth = (x >> 1) * 0xCCCCCCCDu;
      const uint32_t on =
          (~x & 1u) & static_cast<uint32_t>(tenth <= 0x33333333u);
      total += counted;
      tenths[on_count] = tenth;
      listed[on_count] = counted;
      on_count += on;
    }
    for (size_t j = 0; j < on_count; ++j) {
      sums[1 + static_cast<size_t>(
                   TrailingDecimalZeros(tenths[j], levels - 1))] += listed[j];
    }
  }
  double on_ten = 0;
  for (size_t c = 1; c < sums.size(); ++c) on_ten += sums[c];
  sums[0] = total - on_ten;  // whole numbers below 2^53: exact
  std::vector<int64_t> counts(StepLookCells(levels), 0);
  for (size_t c = 0; c + 1 < counts.size(); ++c) {
    counts[c] = static_cast<int64_t>(sums[c]);  // whole, below 2^53
  }
  counts.back() = static_cast<int64_t>(bounds);  // at most 2 caps
  return counts;
}

namespace {

// The cells that count (kStepLookFoundScales), the others 0; and their sum.
std::vector<double> CountedCells(const std::vector<int64_t>& noisy,
                                 double scale, double* total) {
  std::vector<double> counted(noisy.size(), 0);
  *total = 0;
  for (size_t c = 0; c < noisy.size(); ++c) {
    const auto value = static_cast<double>(noisy[c]);
    if (value >= kStepLookFoundScales * scale) counted[c] = value;
    *total += counted[c];
  }
  return counted;
}

}  // namespace

int StepLookChoice(const std::vector<int64_t>& noisy, double scale) {
  if (noisy.size() < 2) return 0;
  double total = 0;
  const std::vector<double> counted = CountedCells(noisy, scale, &total);
  // The bounds' records lie on every lattice whatever the data: they add
  // to what the values inside show on a lattice, at most a third of it
  // (kStepLookBoundsShare), and the share off it is of the values inside.
  const double bounds = counted.back();
  total -= bounds;
  double inside = 0;  // the counted cells of classes >= j (on j's lattice)
  for (size_t j = noisy.size() - 1; j-- > 1;) {
    inside += counted[j];
    const double on = inside + std::min(bounds, kStepLookBoundsShare * inside);
    if (on >= kStepLookOnScales * scale &&
        total - inside <= kStepLookOffShare * total) {
      return static_cast<int>(j);
    }
  }
  return 0;
}

bool StepLookSawContinuous(const std::vector<int64_t>& noisy, double scale) {
  if (noisy.empty()) return false;
  double total = 0;
  const std::vector<double> counted = CountedCells(noisy, scale, &total);
  total -= counted.back();  // the values inside only (as before the bounds)
  return total > 0 && counted[0] >= kStepLookContinuousShare * total;
}

double StepLookLogProbability(const Runs& runs, const OutputGrid& grid,
                              int levels, const CountNoise& noise,
                              const std::vector<int64_t>& noisy) {
  const std::vector<int64_t> counts = StepLookCounts(runs, grid, levels);
  double total = 0;
  for (size_t c = 0; c < noisy.size(); ++c) {
    total += std::log(noise.Pmf(noisy[c] - counts[c]));
  }
  return total;
}

}  // namespace dpq
