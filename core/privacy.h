// Privacy budgets and every budget conversion the mechanisms need, in one
// place: mechanisms ask this file how to split a budget and never do budget
// arithmetic inline.
#ifndef DPQ_CORE_PRIVACY_H_
#define DPQ_CORE_PRIVACY_H_

#include <optional>

#include "core/status.h"

namespace dpq {

// A total budget: pure epsilon-DP or rho-zCDP. Neighbouring datasets differ by
// adding or removing one record throughout the library.
struct PrivacyBudget {
  enum class Kind { kPure, kZcdp };
  Kind kind = Kind::kPure;
  double epsilon = 0;  // set when kind == kPure
  double rho = 0;      // set when kind == kZcdp

  static PrivacyBudget Pure(double epsilon) {
    return {Kind::kPure, epsilon, 0};
  }
  static PrivacyBudget Zcdp(double rho) { return {Kind::kZcdp, 0, rho}; }
};

// Exactly one of epsilon and rho must be given, finite and > 0.
StatusOr<PrivacyBudget> MakePrivacyBudget(std::optional<double> epsilon,
                                          std::optional<double> rho);

// The epsilon to give each of `parts` exponential mechanisms run in sequence
// on the same records so that together they spend `budget`.
//  - pure: basic composition, epsilon / parts.
//  - zCDP: an epsilon-DP exponential mechanism is epsilon-bounded-range, hence
//    (epsilon^2 / 8)-zCDP (Cesar and Rogers 2021); zCDP composes additively, so
//    each part gets rho / parts and epsilon = sqrt(8 rho / parts). This is
//    twice the epsilon of the epsilon^2 / 2 conversion the AQ paper uses
//    (Sec. 3.3).
double ExponentialMechanismEpsilonPerPart(const PrivacyBudget& budget,
                                          int parts);

}  // namespace dpq

#endif  // DPQ_CORE_PRIVACY_H_
