#include "core/privacy.h"

#include <cmath>
#include <string>

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

double ExponentialMechanismEpsilonPerPart(const PrivacyBudget& budget,
                                          int parts) {
  if (budget.kind == PrivacyBudget::Kind::kPure) return budget.epsilon / parts;
  return std::sqrt(8.0 * budget.rho / parts);
}

}  // namespace dpq
