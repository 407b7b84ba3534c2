#include "core/prepare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/decimal.h"

namespace dpq {
OutputGrid OutputGrid::ForBounds(double lower, double upper) {
  const double range = upper - lower;
  const double magnitude =
      std::max({std::fabs(lower), std::fabs(upper), range});
  // One ulp of `magnitude`: the spacing of doubles at its exponent (from the
  // exponent, since the next double above DBL_MAX is infinity), and never
  // below the subnormal spacing (the formula underflows to 0 there).
  const double ulp = std::max(std::ldexp(1.0, std::ilogb(magnitude) - 52),
                              std::numeric_limits<double>::denorm_min());
  int64_t steps = kMaxGridSteps;
  while (steps > 1 && range / static_cast<double>(steps) < 4 * ulp) steps /= 2;
  return OutputGrid(lower, upper, steps);
}

OutputGrid OutputGrid::Default(double lower, double upper, int64_t most_steps) {
  const OutputGrid finest = ForBounds(lower, upper);
  const OutputGrid fallback(lower, upper, std::min(finest.steps(), most_steps));
  const double range = upper - lower;
  const double most = static_cast<double>(most_steps);
  // The smallest e with range / 10^e <= most; 10^|e| is exact for |e| <= 22.
  auto power = [](int k) {
    double p = 1;
    for (int i = 0; i < k; ++i) p *= 10;
    return p;
  };
  auto spacing = [&](int k) { return k >= 0 ? power(k) : 1 / power(-k); };
  const double estimate = std::ceil(std::log10(range / most));
  if (!(estimate > -40 && estimate < 40)) return fallback;
  int e = static_cast<int>(estimate);
  while (range / spacing(e) > most) ++e;
  while (e > -23 && range / spacing(e - 1) <= most) --e;
  if (e < -22 || e > 22) return fallback;
  OutputGrid grid(lower, upper, 1);
  if (e < 0) {
    grid.divisor_ = power(-e);
  } else {
    grid.multiplier_ = power(e);
  }
  constexpr double kExact = 4503599627370496.0;  // 2^52: exact multiples
  const double scaled_lower = std::floor(lower / spacing(e));
  const double scaled_upper = std::ceil(upper / spacing(e));
  if (!(std::fabs(scaled_lower) < kExact && std::fabs(scaled_upper) < kExact)) {
    return fallback;
  }
  // The last multiple at or below lower and the first at or above upper,
  // settled on the correctly rounded values.
  int64_t first = static_cast<int64_t>(scaled_lower);
  while (grid.Multiple(first) > lower) --first;
  while (grid.Multiple(first + 1) <= lower) ++first;
  int64_t last = static_cast<int64_t>(scaled_upper);
  while (grid.Multiple(last) < upper) ++last;
  while (grid.Multiple(last - 1) >= upper) --last;
  const int64_t steps = last - first;
  // Distinct doubles: no finer than ForBounds's grid.
  if (steps < 1 || steps > finest.steps()) return fallback;
  grid.steps_ = steps;
  grid.per_step_ = PerStep(steps);
  grid.cells_per_unit_ = static_cast<double>(steps) / range;
  grid.first_multiple_ = first;
  grid.decimal_default_ = true;
  grid.exponent_ = e;
  grid.SetNearestShortcut();
  return grid;
}

double OutputGrid::resolution() const {
  if (step_ > 0) return step_;
  if (divisor_ > 0) return 1 / divisor_;
  if (multiplier_ > 0) return multiplier_;
  return (upper_ - lower_) / static_cast<double>(steps_);
}

StatusOr<OutputGrid> OutputGrid::WithStep(double lower, double upper,
                                          double step) {
  if (!std::isfinite(step) || !(step > 0)) {
    return Status(
        StatusCode::kInvalidOption,
        "step must be a finite number > 0; got " + FormatNumber(step));
  }
  if (step > upper - lower) {
    // Such a grid holds only the two bounds: every value would print as
    // one of them (step 1000 on [0, 100] released 0).
    return Status(StatusCode::kInvalidOption,
                  "step " + FormatNumber(step) +
                      " is wider than the bounds' range [" +
                      FormatNumber(lower) + ", " + FormatNumber(upper) +
                      "]: at most " + FormatNumber(upper - lower));
  }
  const int64_t finest = ForBounds(lower, upper).steps();
  const double ratio = (upper - lower) / step;
  const double whole = std::round(ratio);
  const double steps =
      std::fabs(ratio - whole) <= 1e-9 * whole ? whole : std::ceil(ratio);
  if (!(steps <= static_cast<double>(finest))) {
    return Status(
        StatusCode::kInvalidOption,
        "step " + FormatNumber(step) + " makes " + FormatNumber(steps) +
            " grid steps over [" + FormatNumber(lower) + ", " +
            FormatNumber(upper) + "]; doubles tell at most " +
            std::to_string(finest) + " apart there, so step must be at least " +
            FormatNumber((upper - lower) / static_cast<double>(finest)));
  }
  OutputGrid grid(lower, upper,
                  std::max<int64_t>(1, static_cast<int64_t>(steps)), step);
  // Its points are lower + k step as the decimals say: with lower and step
  // read as the decimals they print as, (L + k S) / 10^d for whole L and S,
  // each the double nearest its decimal (one correctly rounded division), so
  // step 0.1 gives 2.9, not lower + 29 x fl(0.1) = 2.9000000000000004. While
  // every L + k S stays below 2^53 (else the sum in doubles, as before).
  const Decimal low = Decimal::Written(std::fabs(lower));
  const Decimal width = Decimal::Written(step);
  const int64_t places = std::max(low.places(), width.places());
  if (places <= 22) {
    const std::optional<int64_t> l = low.ScaledTo(places);
    const std::optional<int64_t> s = width.ScaledTo(places);
    constexpr int64_t kExact = int64_t{1} << 53;
    if (l.has_value() && s.has_value() && *s > 0 && *l < kExact &&
        *s <= (kExact - *l) / grid.steps_) {
      double power = 1;
      for (int64_t i = 0; i < places; ++i) power *= 10;
      grid.divisor_ = power;
      grid.first_multiple_ = lower < 0 ? -*l : *l;
      grid.stride_ = *s;
      grid.SetNearestShortcut();
    }
  }
  return grid;
}

StatusOr<OutputGrid> BucketGrid(double lower, double upper, double buckets) {
  if (!(buckets >= 1 && buckets <= static_cast<double>(kMaxBuckets)) ||
      buckets != std::floor(buckets)) {
    return Status(StatusCode::kInvalidOption,
                  "buckets must be a whole number from 1 to " +
                      std::to_string(kMaxBuckets) + ", got " +
                      FormatNumber(buckets));
  }
  StatusOr<OutputGrid> grid =
      OutputGrid::WithStep(lower, upper, (upper - lower) / buckets);
  if (!grid.ok()) {
    return Status(StatusCode::kInvalidOption,
                  FormatNumber(buckets) + " buckets are too fine for [" +
                      FormatNumber(lower) + ", " + FormatNumber(upper) +
                      "]: " + grid.status().message());
  }
  if (grid.value().steps() != static_cast<int64_t>(buckets)) {
    return Status(StatusCode::kInvalidOption,
                  "doubles cannot tell " + FormatNumber(buckets) +
                      " bucket edges apart over [" + FormatNumber(lower) +
                      ", " + FormatNumber(upper) + "]");
  }
  return grid;
}

void ToBucketEdges(double* values, size_t count, const OutputGrid& grid) {
  // A run of equal values (counts arrive as runs) is mapped once.
  double last = 0;
  double edge = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i == 0 || values[i] != last) {
      last = values[i];
      edge = BucketEdge(grid, last);
    }
    values[i] = edge;
  }
}

int64_t OutputGrid::FloorPoint(double x, int64_t max_point) const {
  int64_t cell = EstimatePoint(x, max_point);
  while (cell > 0 && ValueAt(cell) > x) --cell;
  while (cell < max_point && ValueAt(cell + 1) <= x) ++cell;
  return cell;
}

void OutputGrid::SetNearestShortcut() {
  // Point j (0 < j < steps) is m_j = (first + j stride) 10^e rounded, with
  // spacing s = stride 10^e. In units of s, with u = 2^-53, M the larger
  // bound's magnitude, S = steps, X = M / s + S + 2 and p(x) = x / s -
  // first / stride x's exact position:
  // - t is within 4 u X of p(x) for |x| <= M: the scale is 1 / s off by
  //   2 u (two roundings at most), x times it by 3 u of M / s; the offset
  //   first / stride, at most M / s + 1, by u of it; the subtraction by u
  //   of t, at most S + 1;
  // - PointOfByValues compares fl(m_{j+1} - x) with fl(x - m_j): each m is
  //   off by u (M + s) and each difference by u s, so its choice differs
  //   from the exact midpoint's only within u (M / s + 2) <= u X of it.
  // So a t further than 5 u X from a midpoint (and from 1 and S - 1) is on
  // the side the values say. The slack is 8 u X = 2^-50 X; where it reaches
  // a quarter (points near 2^48 spacings from 0) there is no shortcut.
  //
  // No x outside [lower, upper] passes (nor NaN, for which every comparison
  // is false), so RowsToRuns asks before it checks or clamps a value. t is
  // non-decreasing in x (rounding is monotone and the scale positive), and
  // m_1 > lower, m_{S-1} < upper (both grids choose them so). For x <
  // lower, t(x) <= t(lower) <= p(lower) + 4 u X < p(m_1) + 4 u X <= 1 +
  // u (M / s + 1) + 4 u X < 1 + slack = low; for x > upper, likewise t(x) >
  // S - 1 - slack = high. The infinities are such x.
  shortcut_ = NearestShortcut();
  if (divisor_ <= 0 && multiplier_ <= 0) return;
  const double unit = static_cast<double>(stride_) *
                      (divisor_ > 0 ? 1 / divisor_ : multiplier_);
  const double magnitude = std::max(std::fabs(lower_), std::fabs(upper_));
  const double slack =
      std::ldexp(magnitude / unit + static_cast<double>(steps_) + 2, -50);
  if (!(slack < 0.25)) return;
  shortcut_.scale = divisor_ > 0
                        ? divisor_ / static_cast<double>(stride_)
                        : 1 / (multiplier_ * static_cast<double>(stride_));
  shortcut_.offset =
      static_cast<double>(first_multiple_) / static_cast<double>(stride_);
  shortcut_.low = 1 + slack;
  shortcut_.high = static_cast<double>(steps_ - 1) - slack;
  shortcut_.half = 0.5 - slack;
}

int64_t OutputGrid::PointOfByValues(double x) const {
  // FloorPoint(x, steps), keeping the two values it compares (usually the
  // only two ValueAt calls), then the nearer of the two points.
  int64_t below = EstimatePoint(x, steps_);
  double here = ValueAt(below);
  while (below > 0 && here > x) here = ValueAt(--below);
  if (below == steps_) return below;
  double next = ValueAt(below + 1);
  while (next <= x) {
    here = next;
    if (++below == steps_) return below;
    next = ValueAt(below + 1);
  }
  // Both differences are monotone in x, so the choice is too.
  return next - x < x - here ? below + 1 : below;
}

double OutputGrid::ValueAt(int64_t j) const {
  if (j <= 0) return lower_;
  if (j >= steps_) return upper_;
  double value;
  if (divisor_ > 0 || multiplier_ > 0) {
    value = Multiple(first_multiple_ + j * stride_);
  } else if (step_ > 0) {
    value = lower_ + static_cast<double>(j) * step_;
  } else if (per_step_ > 0) {
    return PowerValueAt(j);
  } else {
    value = lower_ + (upper_ - lower_) *
                         (static_cast<double>(j) / static_cast<double>(steps_));
  }
  return std::min(std::max(value, lower_), upper_);
}

Status ValidateBounds(double lower, double upper) {
  if (!std::isfinite(lower) || !std::isfinite(upper)) {
    return Status(StatusCode::kInvalidBounds,
                  "bounds must be finite numbers; got lower = " +
                      FormatNumber(lower) + ", upper = " + FormatNumber(upper));
  }
  if (!(lower < upper)) {
    return Status(StatusCode::kInvalidBounds,
                  "lower must be < upper; got lower = " + FormatNumber(lower) +
                      ", upper = " + FormatNumber(upper));
  }
  if (!std::isfinite(upper - lower)) {
    return Status(StatusCode::kInvalidBounds,
                  "upper - lower overflows a double; got lower = " +
                      FormatNumber(lower) + ", upper = " + FormatNumber(upper));
  }
  return Status::Ok();
}

Status ValidateQuantiles(const double* quantiles, size_t count) {
  if (count == 0) {
    return Status(StatusCode::kInvalidQuantiles,
                  "no quantiles requested; give at least one in (0, 1)");
  }
  if (count > kMaxQuantiles) {
    return Status(StatusCode::kTooLarge,
                  std::to_string(count) + " quantiles requested; at most " +
                      std::to_string(kMaxQuantiles) + " per release");
  }
  for (size_t i = 0; i < count; ++i) {
    const double q = quantiles[i];
    if (!(q > 0 && q < 1)) {
      return Status(StatusCode::kInvalidQuantiles,
                    "quantiles[" + std::to_string(i) + "] is " +
                        FormatNumber(q) +
                        "; every quantile must be strictly between 0 and 1");
    }
  }
  return Status::Ok();
}

Status ValidateRecordCount(size_t count) {
  if (count > kMaxRecords) {
    // Never the count: n is private (docs/refusals.md).
    return Status(StatusCode::kTooLarge,
                  "more than " + std::to_string(kMaxRecords) +
                      " values (2^31); a release takes at most that many");
  }
  return Status::Ok();
}

Status ClampAndSort(double* values, size_t count, double lower, double upper) {
  Status status = ClampValues(values, count, lower, upper);
  if (status.ok()) std::sort(values, values + count);
  return status;
}

Status NonFiniteValueAt(size_t index, double value) {
  return Status(StatusCode::kNonFiniteValue,
                "value at index " + std::to_string(index) + " is " +
                    FormatNumber(value) + "; every value must be finite");
}

Status ClampValues(double* values, size_t count, double lower, double upper) {
  for (size_t i = 0; i < count; ++i) {
    const double x = values[i];
    if (!std::isfinite(x)) return NonFiniteValueAt(i, x);
    values[i] = std::min(std::max(x, lower), upper);
  }
  return Status::Ok();
}

void ConvertToPoints(double* sorted_values, size_t count,
                     const OutputGrid& grid) {
  // Equal values sit together once sorted: each run is mapped once.
  double last = 0;
  double point = 0;
  for (size_t i = 0; i < count; ++i) {
    if (i == 0 || sorted_values[i] != last) {
      last = sorted_values[i];
      point = static_cast<double>(grid.PointOf(last));
    }
    sorted_values[i] = point;
  }
}

int RadixDigitWidth(size_t count, int bits) {
  if (count >= 4096 || bits < 1) return kRadixDigitBits;
  int most = 1;
  while (most < kRadixDigitBits && (count >> most) != 0) ++most;
  const int passes = (bits + most - 1) / most;
  return (bits + passes - 1) / passes;
}

int64_t FloorProduct(double q, int64_t n) {
  const double nd = static_cast<double>(n);
  const double product = q * nd;
  double result = std::floor(product);
  // The rounded product can land on an integer the exact one is just below.
  if (result == product && std::fma(q, nd, -product) < 0) result -= 1;
  return static_cast<int64_t>(result);
}

int64_t CeilProduct(double q, int64_t n) {
  const int64_t floor = FloorProduct(q, n);
  return std::fma(q, static_cast<double>(n), -static_cast<double>(floor)) > 0
             ? floor + 1
             : floor;
}

SortedQuantiles SortDistinctQuantiles(const double* quantiles, size_t count) {
  SortedQuantiles sorted;
  sorted.distinct.assign(quantiles, quantiles + count);
  // Strictly increasing already (what callers usually pass): each is its
  // own index, without sorting or searching.
  if (std::adjacent_find(quantiles, quantiles + count, [](double a, double b) {
        return !(a < b);
      }) == quantiles + count) {
    sorted.index_of_input.resize(count);
    std::iota(sorted.index_of_input.begin(), sorted.index_of_input.end(),
              size_t{0});
    return sorted;
  }
  std::sort(sorted.distinct.begin(), sorted.distinct.end());
  sorted.distinct.erase(
      std::unique(sorted.distinct.begin(), sorted.distinct.end()),
      sorted.distinct.end());
  sorted.index_of_input.resize(count);
  for (size_t i = 0; i < count; ++i) {
    sorted.index_of_input[i] = static_cast<size_t>(
        std::lower_bound(sorted.distinct.begin(), sorted.distinct.end(),
                         quantiles[i]) -
        sorted.distinct.begin());
  }
  return sorted;
}

}  // namespace dpq
