// Privacy budgets and every budget conversion the mechanisms need, in one
// place: mechanisms ask this file how to split a budget and never do budget
// arithmetic inline.
#ifndef DPQ_CORE_PRIVACY_H_
#define DPQ_CORE_PRIVACY_H_

#include <optional>

#include "core/status.h"

namespace dpq {

// A total budget: pure epsilon-DP, approximate (epsilon, delta)-DP or
// rho-zCDP. Each mechanism states its neighbouring relation; most use adding
// or removing one record. kZcdp with delta > 0 is delta-approximate rho-zCDP
// (Bun and Steinke 2016, Def. 8.1: outside events of probability at most
// delta on each side, the outputs are rho-zCDP); only a grouped release's
// private keys under rho cost that (groups.h).
struct PrivacyBudget {
  enum class Kind { kPure, kApprox, kZcdp };
  Kind kind = Kind::kPure;
  double epsilon = 0;  // kPure and kApprox
  double delta = 0;    // kApprox; kZcdp when approximate
  double rho = 0;      // kZcdp

  static PrivacyBudget Pure(double epsilon) {
    return {Kind::kPure, epsilon, 0, 0};
  }
  static PrivacyBudget Approx(double epsilon, double delta) {
    return {Kind::kApprox, epsilon, delta, 0};
  }
  static PrivacyBudget Zcdp(double rho) { return {Kind::kZcdp, 0, 0, rho}; }
  static PrivacyBudget ApproxZcdp(double rho, double delta) {
    return {Kind::kZcdp, 0, delta, rho};
  }
};

// Exactly one of epsilon and rho must be given, finite and > 0.
StatusOr<PrivacyBudget> MakePrivacyBudget(std::optional<double> epsilon,
                                          std::optional<double> rho);

// Turns a pure budget into an approximate one: delta must be finite and in
// (0, 1).
StatusOr<PrivacyBudget> WithDelta(const PrivacyBudget& budget, double delta);

// The epsilon to give each of `parts` exponential mechanisms run in sequence
// on the same records so that together they spend `budget`.
//  - pure: basic composition, epsilon / parts.
//  - zCDP: an epsilon-DP exponential mechanism is epsilon-bounded-range, hence
//    (epsilon^2 / 8)-zCDP (Cesar and Rogers 2021); zCDP composes additively, so
//    each part gets rho / parts and epsilon = sqrt(8 rho / parts). This is
//    twice the epsilon of the epsilon^2 / 2 conversion the AQ paper uses
//    (Sec. 3.3).
//  - (epsilon, delta): the optimal composition of `parts` non-adaptive
//    exponential mechanisms (Dong, Durfee and Rogers 2020, Theorem 3), by
//    bisection on the per-part epsilon; never below epsilon / parts.
// Directed rounding for budget arithmetic (privacy-relevant): a share of a
// budget must never round above its exact value, and a noise scale never
// below. Each returns the double next to the correctly rounded result on the
// safe side (toward -infinity or +infinity, whatever the signs) when that
// result fell on the unsafe one (checked exactly by ProductMinus or TwoSum).
double DivideDown(double numerator, double denominator);  // <= a / b
double MultiplyDown(double a, double b);                  // <= a b
double SubtractDown(double a, double b);                  // <= a - b
double SqrtDown(double x);                                // <= sqrt(x)
double ReciprocalUp(double x);                            // >= 1 / x
double AddUp(double a, double b);                         // >= a + b
double MultiplyUp(double a, double b);                    // >= a b
// >= e^x: libm's exp is within an ulp or two, so three ulps up.
double ExpUp(double x);
// >= x for x within `ulps` units in the last place of an exact value y
// (any sign): the result is >= y. For a floating-point evaluation that is
// within a few ulps of the quantity it bounds.
double RoundUpUlps(double x, int ulps);

// a b - c, rounded, with the sign of the exact value (0 only when it is 0):
// what the checks above read of an fma. Privacy-relevant (they decide the
// rounding's side by it). Dekker's product: with p = fl(a b) and e = a b - p
// exact (Veltkamp's split, exact in binary64 where no step overflows or
// underflows: a and b 0 or of magnitude in [2^-450, 2^450]), the result is
// fl(fl(p - c) + e). Where p - c is inexact, p and c differ by more than a
// factor of 2 (Sterbenz), so |p - c| > |p| / 2 >= |e| and the sign is p -
// c's; where it is exact, the sum of two doubles rounds to its own sign.
// Outside that range, std::fma. In WebAssembly fma is a software routine
// several times as slow as these eleven operations.
double ProductMinus(double a, double b, double c);

// The budget a mechanism runs with for a budget its caller wrote: each part
// the largest double at or below the decimal it prints as (decimal.h). fl(0.2)
// is above one fifth, so epsilon 0.2 runs as the double below it and the
// guarantee is never above what the session's ledger (exact decimals) says.
// Privacy-relevant.
PrivacyBudget AtOrBelowWritten(const PrivacyBudget& written);

// Splits `budget` in two parts that compose to at most it: `share` in
// (0, 1) of it as the second, the rest as the first, both rounded down.
// (epsilon, delta): the rest keeps delta; the share is pure epsilon.
struct BudgetSplit {
  PrivacyBudget rest;
  PrivacyBudget share;
};
BudgetSplit SplitBudget(const PrivacyBudget& budget, double share);
// SplitBudget's share as the ledger reports it: the exact product of the
// decimals written, to the nearest double (0.2 x 0.25 is 0.05). For reports;
// a mechanism runs with SplitBudget of AtOrBelowWritten, which is at most it.
PrivacyBudget WrittenShare(const PrivacyBudget& written, double share);

// Most parts the optimal composition (epsilon with delta) takes: each
// bisection step costs O(parts^2), and this keeps a release under about a
// second (0.4 s natively at 1024). Public (the number of quantiles); not
// privacy-relevant.
constexpr int kMaxOptimalCompositionParts = 1024;

double ExponentialMechanismEpsilonPerPart(const PrivacyBudget& budget,
                                          int parts);

// The delta of `parts`-fold composition of epsilon_part-bounded-range
// mechanisms at overall epsilon (DDR 2020, Theorem 3): the largest of the
// generalized randomized-response deltas over the parts + 1 candidate
// shifts t_l. Exposed for tests.
double OptimalExponentialCompositionDelta(double epsilon_part, int parts,
                                          double epsilon);

}  // namespace dpq

#endif  // DPQ_CORE_PRIVACY_H_
