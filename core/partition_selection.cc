#include "core/partition_selection.h"

#include <cmath>
#include <string>

#include "core/privacy.h"

namespace dpq {

StatusOr<SelectionPlan> PlanSelection(double epsilon, double delta,
                                      int64_t max_groups, int64_t per_key) {
  if (!std::isfinite(epsilon) || !(epsilon > 0)) {
    return Status(StatusCode::kInvalidPrivacy,
                  "the key selection's epsilon must be finite and > 0");
  }
  if (!std::isfinite(delta) || !(delta > 0) || !(delta < 1)) {
    return Status(StatusCode::kInvalidPrivacy,
                  "private keys need delta strictly between 0 and 1: a key "
                  "held by one row appears with probability at most delta");
  }
  SelectionPlan plan;
  plan.epsilon = epsilon;
  plan.delta = delta;
  plan.max_groups = max_groups;
  plan.per_key = per_key;
  const auto g = static_cast<double>(max_groups);
  // A scale at least g per_key / epsilon: the product rounded up, then a
  // rational at least that.
  StatusOr<Rational> scale = LaplaceScaleAtLeast(MultiplyUp(
      MultiplyUp(g, static_cast<double>(per_key)), ReciprocalUp(epsilon)));
  if (!scale.ok()) return scale.status();
  plan.scale = scale.value();
  // T - 1 >= b (ln(g / delta) - ln(1 + e^(-1/b))): the logarithms in
  // doubles are within a few ulps, so a relative margin of 2^-40 (and one
  // more unit) keeps T at or above the exact bound; a larger T is only
  // more private.
  const double b = plan.scale.Value();
  const double exact = b * (std::log(g / delta) - std::log1p(std::exp(-1 / b)));
  const double margin = std::ldexp(std::fabs(exact) + b, -40) + 1e-9;
  // Past any count (2^53 rows), a threshold selects nothing: capped there
  // (a tiny delta gives an infinite logarithm).
  constexpr double kPastAnyCount = 9007199254740992.0;  // 2^53
  const double above = std::ceil(std::max(0.0, exact + margin));
  plan.threshold = per_key + static_cast<int64_t>(
                                 above < kPastAnyCount ? above : kPastAnyCount);
  return plan;
}

std::vector<uint8_t> SelectKeys(const std::vector<uint64_t>& counts,
                                const SelectionPlan& plan, RandomSource& rng,
                                std::vector<int64_t>* noisy) {
  std::vector<uint8_t> selected(counts.size(), 0);
  if (noisy != nullptr) noisy->assign(counts.size(), 0);
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    const int64_t value = static_cast<int64_t>(counts[i]) +
                          SampleDiscreteLaplace(rng, plan.scale);
    selected[i] = value >= plan.threshold ? 1 : 0;
    if (noisy != nullptr) (*noisy)[i] = value;
  }
  return selected;
}

long double SelectionComplement(uint64_t count, const SelectionPlan& plan) {
  const long double t = static_cast<long double>(plan.scale.denominator) /
                        static_cast<long double>(plan.scale.numerator);
  const long double x = static_cast<long double>(plan.threshold) -
                        static_cast<long double>(count);
  // P(Z < x) = P(Z <= x - 1) = P(Z >= 1 - x): the tail, without a
  // cancellation where it is tiny.
  if (x <= 0) return std::exp(-t * (1 - x)) / (1 + std::exp(-t));
  return 1 - std::exp(-t * x) / (1 + std::exp(-t));
}

long double SelectionProbability(uint64_t count, const SelectionPlan& plan) {
  const long double t = static_cast<long double>(plan.scale.denominator) /
                        static_cast<long double>(plan.scale.numerator);
  const long double e = std::exp(-t);
  // P(Z >= x) for the discrete Laplace of rate t: e^(-t x) / (1 + e^-t)
  // for x >= 1, and 1 - P(Z >= 1 - x) below (symmetry).
  const long double x = static_cast<long double>(plan.threshold) -
                        static_cast<long double>(count);
  if (x >= 1) return std::exp(-t * x) / (1 + e);
  return 1 - std::exp(-t * (1 - x)) / (1 + e);
}

}  // namespace dpq
