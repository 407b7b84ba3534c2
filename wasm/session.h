// A privacy session owned by JavaScript, and the session a spec names.
#ifndef DPQ_WASM_SESSION_H_
#define DPQ_WASM_SESSION_H_

#include <optional>
#include <string>

#include "core/session.h"
#include "wasm/glue.h"

namespace dpq_wasm {

// A privacy session owned by JavaScript (TypeScript disposes it). Holds the
// construction error instead of a session when creation failed.
class WasmSession {
 public:
  explicit WasmSession(dpq::StatusOr<dpq::PrivacySession> created)
      : status_(created.status()) {
    if (created.ok()) session_.emplace(created.value());
  }
  WasmReleaseResult status() const { return StatusResult(status_); }
  dpq::PrivacySession* get() { return session_ ? &*session_ : nullptr; }
  val Spent() const { return Budget(session_->Spent()); }
  val Remaining() const { return Budget(session_->Remaining()); }
  val Total() const { return Budget(session_->total()); }
  int Releases() const { return session_->releases(); }
  std::string Neighbouring() const {
    return dpq::NeighbouringName(session_->neighbouring());
  }
  // The ledger's charges, in order: { kind, epsilon?, delta?, rho?,
  // neighbouring, maxContributions? }.
  val Charges() const {
    val list = val::array();
    for (const dpq::SessionCharge& charge : session_->charges()) {
      val entry = Budget(charge.cost);
      entry.set("kind", BudgetKindName(charge.cost.kind));
      entry.set("neighbouring", dpq::NeighbouringName(charge.release));
      if (charge.max_contributions > 0) {
        entry.set("maxContributions",
                  static_cast<double>(charge.max_contributions));
      }
      list.call<void>("push", entry);
    }
    return list;
  }
  // Charges a saved ledger's entry again (restoring it): { kind, epsilon?,
  // delta?, rho?, neighbouring, maxContributions? }, shapes checked in TS.
  WasmReleaseResult Replay(const val& spec) {
    const std::string kind = spec["kind"].as<std::string>();
    const double epsilon = OptionalNumber(spec, "epsilon").value_or(0);
    const double delta = OptionalNumber(spec, "delta").value_or(0);
    const double rho = OptionalNumber(spec, "rho").value_or(0);
    const dpq::PrivacyBudget cost =
        kind == "zcdp"     ? dpq::PrivacyBudget::ApproxZcdp(rho, delta)
        : kind == "approx" ? dpq::PrivacyBudget::Approx(epsilon, delta)
                           : dpq::PrivacyBudget::Pure(epsilon);
    const std::string name = spec["neighbouring"].as<std::string>();
    const dpq::Neighbouring release =
        name == "replace-one"       ? dpq::Neighbouring::kReplaceOne
        : name == "add-remove-user" ? dpq::Neighbouring::kAddRemoveUser
                                    : dpq::Neighbouring::kAddRemove;
    const double k = OptionalNumber(spec, "maxContributions").value_or(0);
    return StatusResult(
        session_->Charge(cost, release, static_cast<int64_t>(k)));
  }

 private:
  // { epsilon } / { rho } / { epsilon, delta }, as the caller wrote it.
  static val Budget(const dpq::PrivacyBudget& budget) {
    val object = val::object();
    if (budget.kind == dpq::PrivacyBudget::Kind::kZcdp) {
      object.set("rho", budget.rho);
      // Approximate zCDP (a grouped release's private keys under rho).
      if (budget.delta > 0) object.set("delta", budget.delta);
    } else {
      object.set("epsilon", budget.epsilon);
      if (budget.kind == dpq::PrivacyBudget::Kind::kApprox) {
        object.set("delta", budget.delta);
      }
    }
    return object;
  }
  dpq::Status status_;
  std::optional<dpq::PrivacySession> session_;
};

// The session a spec names (its `session` property), or null.
dpq::PrivacySession* SessionOf(const val& spec);

}  // namespace dpq_wasm

#endif  // DPQ_WASM_SESSION_H_
