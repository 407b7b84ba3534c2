#include "core/session.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/minimize.h"

namespace dpq {
namespace {

// epsilon(alpha) of ZcdpToApproxEpsilon in floating point, and the sum of
// its terms' magnitudes, which bounds how far rounding can move it (the
// terms can cancel, so the value's own magnitude does not).
struct EpsilonEstimate {
  double value;
  double magnitude;
};

EpsilonEstimate EpsilonAt(double alpha, double rho, double log_inverse_delta) {
  const double linear = alpha * rho;
  const double tail = alpha * std::log1p(-1 / alpha);
  const double log_gap = std::log(alpha - 1);
  const double value =
      linear + (log_inverse_delta + tail - log_gap) / (alpha - 1);
  const double magnitude = linear + (std::fabs(log_inverse_delta) +
                                     std::fabs(tail) + std::fabs(log_gap)) /
                                        (alpha - 1);
  return {value, magnitude};
}

// The ledger's decimal of a part a caller wrote.
Decimal Written(double x) { return Decimal::Written(x); }

}  // namespace

const char* NeighbouringName(Neighbouring neighbouring) {
  switch (neighbouring) {
    case Neighbouring::kAddRemove:
      return "add-remove";
    case Neighbouring::kReplaceOne:
      return "replace-one";
    case Neighbouring::kAddRemoveUser:
      return "add-remove-user";
  }
  return "";
}

double ZcdpToApproxEpsilon(double rho, double delta, double* alpha_used) {
  if (alpha_used != nullptr) *alpha_used = 0;
  if (!(rho > 0)) return 0;
  const double log_inverse_delta = -std::log(delta);
  // epsilon(alpha) is unimodal in alpha > 1: golden-section search on
  // log(alpha - 1) around the common bound's alpha = 1 + sqrt(log(1/delta) /
  // rho). Any alpha gives a valid epsilon, so the search only needs to be
  // good, not exact; the value at the alpha found is what counts.
  const double center = std::log(std::sqrt(log_inverse_delta / rho));
  auto value = [&](double t) {
    return EpsilonAt(1 + std::exp(t), rho, log_inverse_delta).value;
  };
  const double best_t =
      GoldenSectionMinimum(value, center - 20, center + 20, 200, 1e-12);
  // The value at the alpha found, rounded up: each term is within a few ulps
  // of its exact value, so 2^-40 of the terms' magnitudes (not of the value:
  // they can cancel) covers the rounding, toward +infinity whatever the sign.
  // Privacy-relevant.
  const double alpha = 1 + std::exp(best_t);
  const EpsilonEstimate best = EpsilonAt(alpha, rho, log_inverse_delta);
  double found = AddUp(best.value, std::ldexp(best.magnitude, -40));
  if (alpha_used != nullptr) *alpha_used = alpha;
  // The common bound's terms are positive: relative rounding suffices.
  const double common = rho + 2 * std::sqrt(rho * log_inverse_delta);
  const double common_up = RoundUpUlps(common, 8);
  if (!std::isfinite(found) || !(found <= common_up)) {
    found = common_up;
    if (alpha_used != nullptr) *alpha_used = 0;
  }
  // (epsilon, delta)-DP with epsilon < 0 is also (0, delta)-DP.
  return std::max(0.0, AddUp(found, 1e-300));
}

StatusOr<PrivacySession> PrivacySession::Create(const PrivacyBudget& total,
                                                Neighbouring neighbouring) {
  auto positive = [](double x) { return std::isfinite(x) && x > 0; };
  const bool valid = total.kind == PrivacyBudget::Kind::kZcdp
                         ? positive(total.rho)
                         : positive(total.epsilon) &&
                               (total.kind == PrivacyBudget::Kind::kPure ||
                                (positive(total.delta) && total.delta < 1));
  if (!valid) {
    return Status(StatusCode::kInvalidPrivacy,
                  "a session's total must be epsilon > 0, rho > 0, or "
                  "epsilon > 0 with delta in (0, 1), all finite; got " +
                      Describe(total));
  }
  return PrivacySession(total, neighbouring);
}

std::string PrivacySession::Describe(const PrivacyBudget& budget) {
  // The doubles as written (FormatNumber prints the shortest decimal).
  switch (budget.kind) {
    case PrivacyBudget::Kind::kPure:
      return "epsilon = " + FormatNumber(budget.epsilon);
    case PrivacyBudget::Kind::kZcdp:
      return "rho = " + FormatNumber(budget.rho) +
             (budget.delta > 0 ? ", delta = " + FormatNumber(budget.delta)
                               : "");
    case PrivacyBudget::Kind::kApprox:
      return "epsilon = " + FormatNumber(budget.epsilon) +
             ", delta = " + FormatNumber(budget.delta);
  }
  return "";
}

std::string PrivacySession::Describe(const Ledger& ledger,
                                     PrivacyBudget::Kind kind) {
  // 17 significant digits at most, rounded up: a sum just above a total
  // never prints as the total.
  auto text = [](const Decimal& d) { return d.ToString(17); };
  switch (kind) {
    case PrivacyBudget::Kind::kPure:
      return "epsilon = " + text(ledger.epsilon);
    case PrivacyBudget::Kind::kZcdp:
      return "rho = " + text(ledger.rho);
    case PrivacyBudget::Kind::kApprox:
      return (ledger.unbounded ? std::string("epsilon = Infinity")
                               : "epsilon = " + text(ledger.epsilon)) +
             ", delta = " + text(ledger.delta);
  }
  return "";
}

StatusOr<PrivacySession::Totals> PrivacySession::With(
    const PrivacyBudget& cost, Neighbouring release,
    int64_t max_contributions) const {
  const bool per_person = release == Neighbouring::kAddRemoveUser;
  if (neighbouring_ == Neighbouring::kAddRemoveUser && !per_person) {
    return Status(
        StatusCode::kInvalidPrivacy,
        "this session protects a person (add-remove-user); a release that "
        "protects one record cannot join it: give it users and "
        "maxContributions");
  }
  if (per_person && neighbouring_ == Neighbouring::kReplaceOne) {
    return Status(StatusCode::kInvalidPrivacy,
                  "a per-person release (users, maxContributions) cannot "
                  "join a replace-one session");
  }
  if (release == Neighbouring::kReplaceOne &&
      neighbouring_ == Neighbouring::kAddRemove) {
    return Status(
        StatusCode::kInvalidPrivacy,
        "this release protects a replaced record with the number of records "
        "public; an add-remove session cannot hold it (create the session "
        "with neighbouring 'replace-one')");
  }
  if (cost.kind == PrivacyBudget::Kind::kZcdp &&
      total_.kind == PrivacyBudget::Kind::kPure) {
    return Status(StatusCode::kInvalidPrivacy,
                  "a pure epsilon session cannot hold a rho-zCDP release "
                  "(zCDP does not imply pure DP): create the session with "
                  "rho, or with epsilon and delta");
  }
  if (cost.kind == PrivacyBudget::Kind::kApprox &&
      total_.kind != PrivacyBudget::Kind::kApprox) {
    return Status(StatusCode::kInvalidPrivacy,
                  "an (epsilon, delta) release needs a session with epsilon "
                  "and delta");
  }
  const bool approximate_zcdp =
      cost.kind == PrivacyBudget::Kind::kZcdp && cost.delta > 0;
  if (approximate_zcdp && total_.kind != PrivacyBudget::Kind::kApprox) {
    return Status(StatusCode::kInvalidPrivacy,
                  "a release with rho and delta (private keys under rho) "
                  "needs a session with epsilon and delta: a rho session "
                  "has no delta to spend");
  }
  // The decimals the caller wrote.
  Decimal epsilon = Written(cost.epsilon);
  Decimal delta = Written(cost.delta);
  Decimal rho = Written(cost.rho);
  // An add-remove release inside a replace-one session: group privacy for
  // the two records a replacement removes and adds.
  // A per-person release with k = 1 inside an add-remove session: a record
  // added to a person already at k swaps a kept record (session.h).
  const bool twice = (release == Neighbouring::kAddRemove &&
                      neighbouring_ == Neighbouring::kReplaceOne) ||
                     (per_person && neighbouring_ == Neighbouring::kAddRemove &&
                      max_contributions < 2);
  if (twice) {
    if (approximate_zcdp) {
      // Group privacy for approximate zCDP has no tight form worth keeping.
      return Status(StatusCode::kInvalidPrivacy,
                    "a release with rho and delta counts once per record "
                    "or person: this session would count it twice (" +
                        std::string(NeighbouringName(neighbouring_)) +
                        " session); give the keys, or epsilon and delta");
    }
    if (cost.kind == PrivacyBudget::Kind::kApprox) {
      // (1 + e^epsilon) delta, rounded up.
      delta =
          Decimal::Exact(MultiplyUp(delta.Up(), AddUp(1, ExpUp(epsilon.Up()))));
    }
    epsilon = epsilon.TimesInteger(2);
    rho = rho.TimesInteger(4);
  }
  Totals next = totals_;
  switch (cost.kind) {
    case PrivacyBudget::Kind::kPure:
      next.pure_epsilon = next.pure_epsilon.Plus(epsilon);
      // epsilon^2 / 2, exactly.
      next.pure_as_rho =
          next.pure_as_rho.Plus(epsilon.Times(epsilon).Times(Half()));
      break;
    case PrivacyBudget::Kind::kZcdp:
      next.rho = next.rho.Plus(rho);
      // Approximate zCDP composes adding both parts (Bun and Steinke 2016).
      next.zcdp_delta = next.zcdp_delta.Plus(delta);
      break;
    case PrivacyBudget::Kind::kApprox:
      next.approx_epsilon = next.approx_epsilon.Plus(epsilon);
      next.approx_delta = next.approx_delta.Plus(delta);
      break;
  }
  return next;
}

Decimal PrivacySession::Half() {
  static const Decimal half = *Decimal::Parse("0.5");
  return half;
}

PrivacySession::Ledger PrivacySession::SpentOf(const Totals& t) const {
  Ledger spent;
  switch (total_.kind) {
    case PrivacyBudget::Kind::kPure:
      spent.epsilon = t.pure_epsilon;
      return spent;
    case PrivacyBudget::Kind::kZcdp:
      spent.rho = t.rho.Plus(t.pure_as_rho);
      return spent;
    case PrivacyBudget::Kind::kApprox:
      break;
  }
  // (epsilon, delta), docs/sessions.md: the (epsilon, delta) releases' parts
  // add; the zCDP part (its releases' rho, and the deltas of the
  // approximate ones, which it keeps) converts once with the delta they
  // leave, at a double at or below it: delta_z-approximate rho-zCDP is
  // (epsilon(rho, delta'), delta_z + delta')-DP. Pure releases add their
  // epsilon or join the zCDP part as epsilon^2 / 2, whichever gives less.
  const Decimal total_delta = Written(total_.delta);
  const Decimal kept = t.approx_delta.Plus(t.zcdp_delta);
  const Decimal left =
      kept <= total_delta ? total_delta.Minus(kept) : Decimal();
  const double conversion_delta = left.Down();
  const bool has_zcdp = !t.rho.IsZero();
  // The converted epsilon of rho, or nullopt when no delta is left for it.
  auto converted = [&](const Decimal& rho) -> std::optional<Decimal> {
    if (rho.IsZero()) return Decimal();
    if (!(conversion_delta > 0)) return std::nullopt;
    return Decimal::Exact(ZcdpToApproxEpsilon(rho.Up(), conversion_delta));
  };
  std::optional<Decimal> direct = converted(t.rho);
  if (direct.has_value()) {
    direct = direct->Plus(t.pure_epsilon).Plus(t.approx_epsilon);
  }
  std::optional<Decimal> folded = direct;
  if (!t.pure_epsilon.IsZero()) {
    folded = converted(t.rho.Plus(t.pure_as_rho));
    if (folded.has_value()) folded = folded->Plus(t.approx_epsilon);
  }
  const bool folds =
      folded.has_value() && (!direct.has_value() || *folded < *direct);
  const std::optional<Decimal>& epsilon = folds ? folded : direct;
  spent.unbounded = !epsilon.has_value();
  if (epsilon.has_value()) spent.epsilon = *epsilon;
  const bool converts = has_zcdp || (folds && !t.pure_epsilon.IsZero());
  // What the conversion used is at most `left`; the rest is the releases'.
  spent.delta = converts ? kept.Plus(left) : kept;
  return spent;
}

bool PrivacySession::Fits(const Ledger& spent) const {
  if (spent.unbounded) return false;
  return spent.epsilon <= Written(total_.epsilon) &&
         spent.delta <= Written(total_.delta) &&
         spent.rho <= Written(total_.rho);
}

Status PrivacySession::Check(const PrivacyBudget& cost, Neighbouring release,
                             int64_t max_contributions) const {
  StatusOr<Totals> next = With(cost, release, max_contributions);
  if (!next.ok()) return next.status();
  const Ledger after = SpentOf(next.value());
  if (Fits(after)) return Status::Ok();
  return Status(StatusCode::kBudgetExceeded,
                "this release (" + Describe(cost) + ", " +
                    NeighbouringName(release) + ") does not fit the session: " +
                    Describe(SpentOf(totals_), total_.kind) + " of " +
                    Describe(total_) + " spent in " +
                    std::to_string(releases_) + " release" +
                    (releases_ == 1 ? "" : "s") + ", and it would make " +
                    Describe(after, total_.kind) +
                    " (budgets add up as the decimals written, exactly)");
}

namespace {

// A cost a release can have: positive, finite amounts of its kind only, a
// delta below 1, and k >= 1 exactly for a per-person release. What a saved
// ledger replays must be one (a charge of epsilon -0.5 once counted as 0).
Status CheckCost(const PrivacyBudget& cost, Neighbouring release,
                 int64_t max_contributions) {
  auto positive = [](double x) { return std::isfinite(x) && x > 0; };
  bool valid = false;
  switch (cost.kind) {
    case PrivacyBudget::Kind::kPure:
      valid = positive(cost.epsilon) && cost.delta == 0 && cost.rho == 0;
      break;
    case PrivacyBudget::Kind::kApprox:
      valid = positive(cost.epsilon) && positive(cost.delta) &&
              cost.delta < 1 && cost.rho == 0;
      break;
    case PrivacyBudget::Kind::kZcdp:
      valid = positive(cost.rho) && cost.epsilon == 0 &&
              (cost.delta == 0 || (positive(cost.delta) && cost.delta < 1));
      break;
  }
  const bool per_person = release == Neighbouring::kAddRemoveUser;
  if (per_person ? max_contributions < 1 : max_contributions != 0) {
    valid = false;
  }
  if (valid) return Status::Ok();
  return Status(StatusCode::kInvalidPrivacy,
                "a charge must be positive, finite amounts of its kind (delta "
                "below 1), with maxContributions >= 1 exactly when per person");
}

}  // namespace

Status PrivacySession::Charge(const PrivacyBudget& cost, Neighbouring release,
                              int64_t max_contributions) {
  Status status = CheckCost(cost, release, max_contributions);
  if (!status.ok()) return status;
  status = Check(cost, release, max_contributions);
  if (!status.ok()) return status;
  totals_ = With(cost, release, max_contributions).value();
  ++releases_;
  charges_.push_back({cost, release, max_contributions});
  return Status::Ok();
}

PrivacyBudget PrivacySession::Spent() const {
  const Ledger spent = SpentOf(totals_);
  PrivacyBudget budget = total_;
  budget.epsilon = spent.unbounded ? std::numeric_limits<double>::infinity()
                                   : spent.epsilon.Nearest();
  budget.delta = spent.delta.Nearest();
  budget.rho = spent.rho.Nearest();
  return budget;
}

std::string PrivacySession::SpentText() const {
  return Describe(SpentOf(totals_), total_.kind);
}

PrivacyBudget PrivacySession::Remaining() const {
  const Ledger spent = SpentOf(totals_);
  auto left = [](double total, const Decimal& used) {
    const Decimal written = Written(total);
    return used <= written ? written.Minus(used).Nearest() : 0.0;
  };
  PrivacyBudget remaining = total_;
  remaining.epsilon = spent.unbounded ? 0 : left(total_.epsilon, spent.epsilon);
  remaining.delta = left(total_.delta, spent.delta);
  remaining.rho = left(total_.rho, spent.rho);
  return remaining;
}

}  // namespace dpq
