// A privacy budget across releases: a total and what has been spent, with
// composition done in one place. A release asks the session first and is
// refused with BUDGET_EXCEEDED before any data is read when it would not fit;
// the session is charged when the release succeeds (a failed call publishes
// nothing).
//
// The ledger is exact: each epsilon, delta and rho is read as the decimal its
// caller wrote (the shortest that reads back as its double, decimal.h), sums
// are exact decimals and are compared with the total exactly, so 0.2 + 0.8
// fits a total of 1 and anything more is refused. Mechanisms run with a
// double at or below each decimal (AtOrBelowWritten), so the guarantee never
// exceeds what the ledger says. Conversions that are not exact in decimal
// (the zCDP conversion, group privacy's (1 + e^epsilon) delta) are rounded up
// to a double and enter the ledger as that double's exact value.
//
// Composition (docs/sessions.md gives the argument for each mixture):
//  - pure epsilon session: pure releases only; epsilons add (basic
//    composition).
//  - rho-zCDP session: rho adds (Bun and Steinke 2016, Lemma 2.3); a pure
//    epsilon release counts as epsilon^2 / 2 (Prop. 1.4: epsilon-DP implies
//    (epsilon^2 / 2)-zCDP); (epsilon, delta) releases are refused (no zCDP
//    bound follows from them).
//  - (epsilon, delta) session: (epsilon, delta) releases add both parts;
//    zCDP releases add their rho and the total rho is converted once with the
//    delta left over, by the conversion of Canonne, Kamath and Steinke 2020
//    (Prop. 12; see ZcdpToApproxEpsilon); delta-approximate zCDP releases
//    (private keys under rho, groups.h) add their rho there and their delta
//    beside the others' (approximate zCDP composes adding both parts, and
//    converts to (epsilon(rho, delta'), delta + delta')-DP); only this kind
//    of session holds them, each counted once. Pure releases either add their
//    epsilon or, when that is smaller in total, join the zCDP part as
//    epsilon^2 / 2. Both accountings are valid for the same sequence; the
//    smaller is reported.
//
// Neighbouring relations: an add-remove session holds add-remove releases; a
// release that protects a replaced record with n public (inverse
// sensitivity, DPExpGK) is refused there, since it says nothing about adding
// a record. A replace-one session holds both: replacing a record is removing
// one and adding one, so an add-remove release counts twice over (group
// privacy for 2: 2 epsilon; 4 rho; (2 epsilon, (1 + e^epsilon) delta)).
//
// Per-person releases (contributions.h: at most k records per person,
// add-remove-user) protect a whole person. An add-remove-user session holds
// only those: a per-record guarantee says nothing about a person with many
// records. An add-remove session holds them too: adding one record adds at
// most one kept record, or swaps one kept record of a person already at k
// for another (an exact uniform subset can be coupled that way), so the
// per-record mechanisms see at most 2 records change, which their k-record
// budget covers when k >= 2; with k = 1 the release counts twice over, as
// above. A replace-one session refuses them.
#ifndef DPQ_CORE_SESSION_H_
#define DPQ_CORE_SESSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "core/privacy.h"
#include "core/status.h"

namespace dpq {

enum class Neighbouring { kAddRemove, kReplaceOne, kAddRemoveUser };

// "add-remove", "replace-one" or "add-remove-user".
const char* NeighbouringName(Neighbouring neighbouring);

// The smallest epsilon the conversion of rho-zCDP to (epsilon, delta)-DP of
// Canonne, Kamath and Steinke 2020 (Prop. 12) gives: for every alpha > 1,
// epsilon(alpha) = alpha rho + (log(1 / delta) + alpha log(1 - 1 / alpha) -
// log(alpha - 1)) / (alpha - 1) is valid; the best alpha is found
// numerically and the value rounded up. At most rho + 2 sqrt(rho log(1 /
// delta)), the common bound, and about 10% below it at rho = 0.5,
// delta = 1e-5. rho >= 0, delta in (0, 1).
// `alpha_used`, if given, receives the alpha whose epsilon was returned (for
// the tests; 0 when the common bound was).
double ZcdpToApproxEpsilon(double rho, double delta,
                           double* alpha_used = nullptr);

// One charge of a session's ledger: what a release cost under its own
// neighbouring relation (k for a per-person release), as given.
struct SessionCharge {
  PrivacyBudget cost;
  Neighbouring release = Neighbouring::kAddRemove;
  int64_t max_contributions = 0;
};

class PrivacySession {
 public:
  // INVALID_PRIVACY for a total that is not a valid budget.
  static StatusOr<PrivacySession> Create(const PrivacyBudget& total,
                                         Neighbouring neighbouring);

  // OK when `cost` (what one release spends, under its own neighbouring
  // relation) fits in what is left; BUDGET_EXCEEDED naming both otherwise,
  // INVALID_PRIVACY when the kinds cannot compose here. `max_contributions`
  // is the k of an add-remove-user release (ignored otherwise).
  Status Check(const PrivacyBudget& cost, Neighbouring release,
               int64_t max_contributions = 0) const;
  // Check, then add the cost.
  Status Charge(const PrivacyBudget& cost, Neighbouring release,
                int64_t max_contributions = 0);

  const PrivacyBudget& total() const { return total_; }
  Neighbouring neighbouring() const { return neighbouring_; }
  // What the releases so far spend together, in the session's kind: the
  // nearest doubles of the exact ledger (they print as its decimals).
  PrivacyBudget Spent() const;
  // The same as text, e.g. "epsilon = 0.3".
  std::string SpentText() const;
  // The total minus Spent(), per part, never below 0. Informative: whether a
  // release fits is Check's answer (composition is not subtraction).
  PrivacyBudget Remaining() const;
  int releases() const { return releases_; }
  // Every charge so far, in order: the ledger a caller saves, and replays
  // through Charge to restore it (the totals follow from them).
  const std::vector<SessionCharge>& charges() const { return charges_; }

 private:
  // The ledger: exact sums of the decimals the releases were given.
  struct Totals {
    Decimal pure_epsilon;    // sum of pure releases' epsilon
    Decimal pure_as_rho;     // sum of their epsilon^2 / 2
    Decimal approx_epsilon;  // sum of (epsilon, delta) releases' parts
    Decimal approx_delta;
    Decimal rho;         // sum of zCDP releases' rho
    Decimal zcdp_delta;  // sum of approximate zCDP releases' delta
  };
  // What the totals spend, in the session's kind.
  struct Ledger {
    Decimal epsilon;
    Decimal delta;
    Decimal rho;
    bool unbounded = false;  // a zCDP part with no delta left to convert it
  };
  PrivacySession(const PrivacyBudget& total, Neighbouring neighbouring)
      : total_(total), neighbouring_(neighbouring) {}
  // The totals with `cost` added, or the reason it cannot be.
  StatusOr<Totals> With(const PrivacyBudget& cost, Neighbouring release,
                        int64_t max_contributions) const;
  Ledger SpentOf(const Totals& totals) const;
  bool Fits(const Ledger& spent) const;
  static Decimal Half();
  static std::string Describe(const PrivacyBudget& budget);
  static std::string Describe(const Ledger& ledger, PrivacyBudget::Kind kind);

  PrivacyBudget total_;
  Neighbouring neighbouring_;
  Totals totals_;
  int releases_ = 0;
  std::vector<SessionCharge> charges_;
};

}  // namespace dpq

#endif  // DPQ_CORE_SESSION_H_
