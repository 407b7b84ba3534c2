#include "wasm/session.h"

#include <emscripten/bind.h>

namespace dpq_wasm {
namespace {

// spec: { epsilon?, rho?, delta?, neighbouring: 'add-remove' | 'replace-one' },
// checked in TS.
WasmSession* CreateSession(const val& spec) {
  const std::optional<double> epsilon = OptionalNumber(spec, "epsilon");
  const std::optional<double> rho = OptionalNumber(spec, "rho");
  const std::optional<double> delta = OptionalNumber(spec, "delta");
  dpq::PrivacyBudget total =
      rho.has_value() ? dpq::PrivacyBudget::Zcdp(*rho)
      : delta.has_value()
          ? dpq::PrivacyBudget::Approx(epsilon.value_or(0), *delta)
          : dpq::PrivacyBudget::Pure(epsilon.value_or(0));
  const std::string name = spec["neighbouring"].as<std::string>();
  const dpq::Neighbouring neighbouring =
      name == "replace-one"       ? dpq::Neighbouring::kReplaceOne
      : name == "add-remove-user" ? dpq::Neighbouring::kAddRemoveUser
                                  : dpq::Neighbouring::kAddRemove;
  return new WasmSession(dpq::PrivacySession::Create(total, neighbouring));
}

}  // namespace

dpq::PrivacySession* SessionOf(const val& spec) {
  const val session = spec["session"];
  if (session.isUndefined() || session.isNull()) return nullptr;
  return session.as<WasmSession*>(emscripten::allow_raw_pointers())->get();
}

}  // namespace dpq_wasm

EMSCRIPTEN_BINDINGS(dpq_session) {
  using dpq_wasm::WasmSession;
  emscripten::class_<WasmSession>("Session")
      .function("status", &WasmSession::status)
      .function("spent", &WasmSession::Spent)
      .function("remaining", &WasmSession::Remaining)
      .function("total", &WasmSession::Total)
      .function("releases", &WasmSession::Releases)
      .function("neighbouring", &WasmSession::Neighbouring)
      .function("charges", &WasmSession::Charges)
      .function("replay", &WasmSession::Replay);
  emscripten::function("createSession", &dpq_wasm::CreateSession,
                       emscripten::allow_raw_pointers());
}
