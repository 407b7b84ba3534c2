#include "core/privacy.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace dpq {
namespace {

Status CheckPositiveFinite(const char* name, double value) {
  if (std::isnan(value)) {
    return Status(
        StatusCode::kInvalidPrivacy,
        std::string(name) + " is NaN; it must be a finite number > 0");
  }
  if (!std::isfinite(value)) {
    return Status(
        StatusCode::kInvalidPrivacy,
        std::string(name) + " is infinite; it must be finite and > 0");
  }
  if (value <= 0) {
    return Status(StatusCode::kInvalidPrivacy, std::string(name) + " is " +
                                                   std::to_string(value) +
                                                   "; it must be > 0");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<PrivacyBudget> MakePrivacyBudget(std::optional<double> epsilon,
                                          std::optional<double> rho) {
  if (epsilon.has_value() && rho.has_value()) {
    return Status(StatusCode::kInvalidPrivacy,
                  "give exactly one of epsilon (pure DP) and rho (zCDP), not "
                  "both");
  }
  if (!epsilon.has_value() && !rho.has_value()) {
    return Status(StatusCode::kInvalidPrivacy,
                  "no privacy budget: give epsilon (pure DP) or rho (zCDP)");
  }
  if (epsilon.has_value()) {
    Status status = CheckPositiveFinite("epsilon", *epsilon);
    if (!status.ok()) return status;
    return PrivacyBudget::Pure(*epsilon);
  }
  Status status = CheckPositiveFinite("rho", *rho);
  if (!status.ok()) return status;
  return PrivacyBudget::Zcdp(*rho);
}

StatusOr<PrivacyBudget> WithDelta(const PrivacyBudget& budget, double delta) {
  if (budget.kind != PrivacyBudget::Kind::kPure) {
    return Status(StatusCode::kInvalidOption,
                  "delta goes with epsilon, not with rho");
  }
  if (!std::isfinite(delta) || !(delta > 0) || !(delta < 1)) {
    return Status(StatusCode::kInvalidOption,
                  "delta must be a number strictly between 0 and 1");
  }
  return PrivacyBudget::Approx(budget.epsilon, delta);
}

double OptimalExponentialCompositionDelta(double epsilon_part, int parts,
                                          double epsilon) {
  const int k = parts;
  const double e = epsilon_part;
  std::vector<double> log_binomial(k + 1);
  for (int i = 0; i <= k; ++i) {
    log_binomial[i] =
        std::lgamma(k + 1.0) - std::lgamma(i + 1.0) - std::lgamma(k - i + 1.0);
  }
  double worst = 0;
  for (int l = 0; l <= k; ++l) {
    // Each part's privacy loss is t (probability p under the neighbouring
    // dataset) or t - e: a randomized response shifted by t.
    const double t =
        std::min(std::max((epsilon + (l + 1) * e) / (k + 1), 0.0), e);
    const double p = (std::exp(-t) - std::exp(-e)) / (1 - std::exp(-e));
    if (!(p > 0)) continue;  // every part has loss t - e = 0: no delta
    double sum = 0;
    for (int i = 0; i <= k; ++i) {
      const double loss = k * t - i * e;  // i parts took the lower loss
      if (loss <= epsilon) break;         // losses decrease with i
      const double log_weight = log_binomial[i] + (k - i) * std::log(p) +
                                (i > 0 ? i * std::log1p(-p) : 0.0);
      // weight * (e^loss - e^epsilon), in log space.
      sum +=
          std::exp(log_weight + loss + std::log1p(-std::exp(epsilon - loss)));
    }
    worst = std::max(worst, sum);
  }
  return worst;
}

double ExponentialMechanismEpsilonPerPart(const PrivacyBudget& budget,
                                          int parts) {
  switch (budget.kind) {
    case PrivacyBudget::Kind::kPure:
      return budget.epsilon / parts;
    case PrivacyBudget::Kind::kZcdp:
      return std::sqrt(8.0 * budget.rho / parts);
    case PrivacyBudget::Kind::kApprox:
      break;
  }
  // Basic composition already meets (epsilon, 0); the delta buys a larger
  // per-part epsilon. The delta is increasing in the per-part epsilon, so
  // bisect and keep the lower end, which always satisfies the target.
  double low = budget.epsilon / parts;
  double high = budget.epsilon;
  if (OptimalExponentialCompositionDelta(high, parts, budget.epsilon) <=
      budget.delta) {
    return high;
  }
  for (int iteration = 0; iteration < 100 && high - low > 1e-12 * high;
       ++iteration) {
    const double middle = (low + high) / 2;
    if (OptimalExponentialCompositionDelta(middle, parts, budget.epsilon) <=
        budget.delta) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

}  // namespace dpq
