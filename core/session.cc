#include "core/session.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dpq {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// epsilon(alpha) of ZcdpToApproxEpsilon, in floating point.
double EpsilonAt(double alpha, double rho, double log_inverse_delta) {
  return alpha * rho + (log_inverse_delta + alpha * std::log1p(-1 / alpha) -
                        std::log(alpha - 1)) /
                           (alpha - 1);
}

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

double ZcdpToApproxEpsilon(double rho, double delta) {
  if (!(rho > 0)) return 0;
  const double log_inverse_delta = -std::log(delta);
  // epsilon(alpha) is unimodal in alpha > 1: golden-section search on
  // log(alpha - 1) around the common bound's alpha = 1 + sqrt(log(1/delta) /
  // rho). Any alpha gives a valid epsilon, so the search only needs to be
  // good, not exact; the value at the alpha found is what counts.
  const double center = std::log(std::sqrt(log_inverse_delta / rho));
  double low = center - 20;
  double high = center + 20;
  const double golden = (std::sqrt(5.0) - 1) / 2;
  auto value = [&](double t) {
    return EpsilonAt(1 + std::exp(t), rho, log_inverse_delta);
  };
  double a = high - golden * (high - low);
  double b = low + golden * (high - low);
  double fa = value(a);
  double fb = value(b);
  for (int i = 0; i < 200 && high - low > 1e-12; ++i) {
    if (fa < fb) {
      high = b;
      b = a;
      fb = fa;
      a = high - golden * (high - low);
      fa = value(a);
    } else {
      low = a;
      a = b;
      fa = fb;
      b = low + golden * (high - low);
      fb = value(b);
    }
  }
  const double best = std::min(fa, fb);
  const double common = rho + 2 * std::sqrt(rho * log_inverse_delta);
  // The floating-point evaluation is within a few ulps of the exact
  // epsilon(alpha); 2^-40 relative covers it (privacy-relevant: upward).
  const double found = std::isfinite(best) ? std::min(best, common) : common;
  return found * (1 + std::ldexp(1.0, -40)) + 1e-300;
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
  switch (budget.kind) {
    case PrivacyBudget::Kind::kPure:
      return "epsilon = " + FormatNumber(budget.epsilon);
    case PrivacyBudget::Kind::kZcdp:
      return "rho = " + FormatNumber(budget.rho);
    case PrivacyBudget::Kind::kApprox:
      return "epsilon = " + FormatNumber(budget.epsilon) +
             ", delta = " + FormatNumber(budget.delta);
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
  // An add-remove release inside a replace-one session: group privacy for
  // the two records a replacement removes and adds.
  // A per-person release with k = 1 inside an add-remove session: a record
  // added to a person already at k swaps a kept record (session.h).
  PrivacyBudget charged = cost;
  const bool twice = (release == Neighbouring::kAddRemove &&
                      neighbouring_ == Neighbouring::kReplaceOne) ||
                     (per_person && neighbouring_ == Neighbouring::kAddRemove &&
                      max_contributions < 2);
  if (twice) {
    charged.epsilon = 2 * cost.epsilon;
    charged.rho = 4 * cost.rho;
    if (cost.kind == PrivacyBudget::Kind::kApprox) {
      charged.delta = MultiplyUp(cost.delta, AddUp(1, ExpUp(cost.epsilon)));
    }
  }
  Totals next = totals_;
  switch (charged.kind) {
    case PrivacyBudget::Kind::kPure:
      next.pure_epsilon = AddUp(next.pure_epsilon, charged.epsilon);
      next.pure_as_rho = AddUp(
          next.pure_as_rho, MultiplyUp(charged.epsilon, charged.epsilon) / 2);
      break;
    case PrivacyBudget::Kind::kZcdp:
      if (total_.kind == PrivacyBudget::Kind::kPure) {
        return Status(StatusCode::kInvalidPrivacy,
                      "a pure epsilon session cannot hold a rho-zCDP "
                      "release (create the session with rho, or with "
                      "epsilon and delta)");
      }
      next.rho = AddUp(next.rho, charged.rho);
      break;
    case PrivacyBudget::Kind::kApprox:
      if (total_.kind != PrivacyBudget::Kind::kApprox) {
        return Status(StatusCode::kInvalidPrivacy,
                      "an (epsilon, delta) release needs a session with "
                      "epsilon and delta");
      }
      next.approx_epsilon = AddUp(next.approx_epsilon, charged.epsilon);
      next.approx_delta = AddUp(next.approx_delta, charged.delta);
      break;
  }
  return next;
}

PrivacyBudget PrivacySession::SpentOf(const Totals& t) const {
  switch (total_.kind) {
    case PrivacyBudget::Kind::kPure:
      return PrivacyBudget::Pure(t.pure_epsilon);
    case PrivacyBudget::Kind::kZcdp:
      return PrivacyBudget::Zcdp(AddUp(t.rho, t.pure_as_rho));
    case PrivacyBudget::Kind::kApprox:
      break;
  }
  // (epsilon, delta): the delta not taken by (epsilon, delta) releases goes
  // to the conversion of the zCDP part, rounded down.
  const bool has_zcdp = t.rho > 0;
  double left = total_.delta - t.approx_delta;
  left = left > 0 ? std::nextafter(left, 0.0) : 0;
  auto converted = [&](double rho) {
    if (!(rho > 0)) return 0.0;
    return left > 0 ? ZcdpToApproxEpsilon(rho, left) : kInfinity;
  };
  // Pure releases added as epsilon, or folded into the zCDP part.
  const double direct =
      AddUp(AddUp(t.pure_epsilon, t.approx_epsilon), converted(t.rho));
  const double folded =
      t.pure_epsilon > 0
          ? AddUp(t.approx_epsilon, converted(AddUp(t.rho, t.pure_as_rho)))
          : direct;
  const bool folds = folded < direct;
  const double epsilon = std::min(direct, folded);
  const bool converts = has_zcdp || (folds && t.pure_epsilon > 0);
  return PrivacyBudget::Approx(
      epsilon, converts ? AddUp(t.approx_delta, left) : t.approx_delta);
}

Status PrivacySession::Check(const PrivacyBudget& cost, Neighbouring release,
                             int64_t max_contributions) const {
  StatusOr<Totals> next = With(cost, release, max_contributions);
  if (!next.ok()) return next.status();
  const PrivacyBudget after = SpentOf(next.value());
  const bool fits = after.epsilon <= total_.epsilon &&
                    after.delta <= total_.delta && after.rho <= total_.rho;
  if (fits) return Status::Ok();
  // Over by a hair: decimal budgets are not exact in binary (10 x 0.1 is
  // 1 + 5.6e-17), and the session adds them exactly, rounding up.
  const bool hair = after.epsilon <= total_.epsilon * (1 + 1e-9) &&
                    after.delta <= total_.delta * (1 + 1e-9) &&
                    after.rho <= total_.rho * (1 + 1e-9);
  const std::string note =
      hair ? " (over by less than a billionth: decimal budgets such as 0.1 "
             "are slightly above their value in binary, and ten of them "
             "exceed 1; give the session a little more, e.g. 1.000001)"
           : "";
  return Status(
      StatusCode::kBudgetExceeded,
      "this release (" + Describe(cost) + ", " + NeighbouringName(release) +
          ") does not fit the session: " + Describe(Spent()) + " of " +
          Describe(total_) + " spent in " + std::to_string(releases_) +
          " release" + (releases_ == 1 ? "" : "s") + ", and it would make " +
          Describe(after) + note);
}

Status PrivacySession::Charge(const PrivacyBudget& cost, Neighbouring release,
                              int64_t max_contributions) {
  Status status = Check(cost, release, max_contributions);
  if (!status.ok()) return status;
  totals_ = With(cost, release, max_contributions).value();
  ++releases_;
  return Status::Ok();
}

PrivacyBudget PrivacySession::Spent() const { return SpentOf(totals_); }

PrivacyBudget PrivacySession::Remaining() const {
  const PrivacyBudget spent = Spent();
  PrivacyBudget left = total_;
  left.epsilon = std::max(0.0, total_.epsilon - spent.epsilon);
  left.delta = std::max(0.0, total_.delta - spent.delta);
  left.rho = std::max(0.0, total_.rho - spent.rho);
  return left;
}

}  // namespace dpq
