#include "core/dp_exp_gk.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/exact_exponential.h"
#include "core/exponential_quantile.h"
#include "core/prepare.h"

namespace dpq {

double ExpGkSensitivity(const GkSketch& sketch) {
  return static_cast<double>(sketch.Capacity());
}

std::vector<ExpGkCandidate> ExpGkCandidates(const GkSketch& sketch, double q,
                                            double epsilon) {
  const std::vector<GkTuple>& tuples = sketch.tuples();
  const size_t s = tuples.size();
  const uint64_t n = sketch.count();
  const double target =
      static_cast<double>(CeilProduct(q, static_cast<int64_t>(n)));
  const BaseTwoRate rate(epsilon / (2 * ExpGkSensitivity(sketch)));
  // prefix[i]: sum of g over the first i tuples; lowest_upper[i]: the
  // smallest prefix + delta over tuples i.. (n + 1 past the end).
  std::vector<double> prefix(s + 1, 0), lowest_upper(s + 1);
  for (size_t i = 0; i < s; ++i) {
    prefix[i + 1] = prefix[i] + static_cast<double>(tuples[i].g);
  }
  lowest_upper[s] = static_cast<double>(n) + 1;
  for (size_t i = s; i-- > 0;) {
    lowest_upper[i] =
        std::min(lowest_upper[i + 1],
                 prefix[i + 1] + static_cast<double>(tuples[i].delta));
  }
  std::vector<ExpGkCandidate> candidates;
  auto add = [&](int64_t first, int64_t points, double low, double high) {
    if (points <= 0) return;
    // Integers below 2^33: exact, and exact again in units of 2^-20.
    const double distance =
        target < low ? low - target : (target > high ? target - high : 0);
    const Exponent exponent = rate.ExponentFor(static_cast<uint64_t>(distance)
                                               << kTargetFractionBits);
    candidates.push_back({first, points,
                          std::log(static_cast<double>(points)) -
                              0.6931471805599453 * exponent.Value(),
                          exponent});
  };
  int64_t next_point = 0;  // the first grid point not yet covered
  size_t i = 0;
  while (i < s) {
    // Tuples [i, j) share one value.
    size_t j = i;
    while (j < s && tuples[j].value == tuples[i].value) ++j;
    const int64_t value = tuples[i].value;
    add(next_point, value - next_point, prefix[i], lowest_upper[i]);
    add(value, 1, prefix[i], lowest_upper[j]);
    next_point = value + 1;
    i = j;
  }
  add(next_point, sketch.steps() + 1 - next_point, prefix[s],
      static_cast<double>(n) + 1);
  return candidates;
}

int64_t SampleExpGk(const GkSketch& sketch, double q, double epsilon,
                    RandomSource& rng) {
  const std::vector<ExpGkCandidate> candidates =
      ExpGkCandidates(sketch, q, epsilon);
  // The exact draw of exact_exponential.h: every candidate listed.
  DyadicTable table;
  table.Reset();
  table.Reserve(candidates.size());
  for (const ExpGkCandidate& c : candidates) {
    table.Add(ExactWeight{static_cast<Uint128>(c.points), c.exponent}
                  .ProposalExponent());
  }
  table.Finish();
  BitReader bits(rng);
  while (bits.healthy()) {
    const size_t i = table.Draw(bits);
    if (i == DyadicTable::kNone) continue;
    const ExpGkCandidate& c = candidates[i];
    if (table.Thin(bits, i) &&
        BernoulliSizeShare(bits, static_cast<Uint128>(c.points)) &&
        BernoulliTwoToMinusFraction(bits, c.exponent.fraction)) {
      return c.first_point + static_cast<int64_t>(UniformBits(
                                 bits, static_cast<Uint128>(c.points)));
    }
  }
  return candidates.front().first_point;
}

}  // namespace dpq
