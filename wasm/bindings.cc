// embind bindings: pointers, lengths and plain values in, a status value out.
// No logic here: the core validates; TypeScript checks JavaScript types and
// turns a non-zero code into DpQuantilesError.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>

#include "core/release.h"

namespace {

using emscripten::val;

// The outcome of one release, as a plain JavaScript object.
struct WasmReleaseResult {
  int code = 0;
  std::string codeName;
  std::string message;
  std::string method;
  std::string privacyKind;  // "pure", "approx" or "zcdp"
  double epsilon = 0;
  double delta = 0;
  double rho = 0;
  int levels = 0;
  double mechanismEpsilon = 0;
  std::string neighbouring;
};

std::optional<double> OptionalNumber(const val& object, const char* key) {
  const val value = object[key];
  if (value.isUndefined() || value.isNull()) return std::nullopt;
  return value.as<double>();
}

// data: `count` doubles at data_address (overwritten: it is the caller's
// scratch copy); quantiles: `quantile_count` doubles; out: room for as many.
// spec: { method, lower, upper, epsilon?, rho?, seed?, options? }, with
// JavaScript types already checked by the TypeScript layer.
WasmReleaseResult Release(uintptr_t data_address, uint32_t count,
                          uintptr_t quantiles_address, uint32_t quantile_count,
                          uintptr_t out_address, const val& spec) {
  dpq::ReleaseRequest request;
  request.method = spec["method"].as<std::string>();
  request.lower = spec["lower"].as<double>();
  request.upper = spec["upper"].as<double>();
  request.epsilon = OptionalNumber(spec, "epsilon");
  request.rho = OptionalNumber(spec, "rho");
  const std::optional<double> seed = OptionalNumber(spec, "seed");
  if (seed.has_value()) request.seed = static_cast<uint64_t>(*seed);
  const double* quantiles = reinterpret_cast<const double*>(quantiles_address);
  request.quantiles.assign(quantiles, quantiles + quantile_count);
  const val options = spec["options"];
  if (!options.isUndefined() && !options.isNull()) {
    const val keys = val::global("Object").call<val>("keys", options);
    const int length = keys["length"].as<int>();
    for (int i = 0; i < length; ++i) {
      const std::string key = keys[i].as<std::string>();
      request.options.emplace_back(key, options[key].as<double>());
    }
  }

  const dpq::StatusOr<dpq::ReleaseReport> report =
      dpq::ReleaseQuantiles(reinterpret_cast<double*>(data_address), count,
                            request, reinterpret_cast<double*>(out_address));
  WasmReleaseResult result;
  result.code = static_cast<int>(report.status().code());
  result.codeName = dpq::StatusCodeName(report.status().code());
  result.message = report.status().message();
  if (report.ok()) {
    const dpq::ReleaseReport& r = report.value();
    result.method = r.method;
    result.privacyKind =
        r.spent.kind == dpq::PrivacyBudget::Kind::kPure
            ? "pure"
            : (r.spent.kind == dpq::PrivacyBudget::Kind::kApprox ? "approx"
                                                                 : "zcdp");
    result.epsilon = r.spent.epsilon;
    result.delta = r.spent.delta;
    result.rho = r.spent.rho;
    result.levels = r.levels;
    result.mechanismEpsilon = r.mechanism_epsilon;
    result.neighbouring = r.neighbouring;
  }
  return result;
}

std::string Methods() {
  std::string joined;
  for (const std::string& name : dpq::ReleaseMethods()) {
    if (!joined.empty()) joined += ",";
    joined += name;
  }
  return joined;
}

}  // namespace

EMSCRIPTEN_BINDINGS(dp_quantiles) {
  emscripten::value_object<WasmReleaseResult>("ReleaseResult")
      .field("code", &WasmReleaseResult::code)
      .field("codeName", &WasmReleaseResult::codeName)
      .field("message", &WasmReleaseResult::message)
      .field("method", &WasmReleaseResult::method)
      .field("privacyKind", &WasmReleaseResult::privacyKind)
      .field("epsilon", &WasmReleaseResult::epsilon)
      .field("delta", &WasmReleaseResult::delta)
      .field("rho", &WasmReleaseResult::rho)
      .field("levels", &WasmReleaseResult::levels)
      .field("mechanismEpsilon", &WasmReleaseResult::mechanismEpsilon)
      .field("neighbouring", &WasmReleaseResult::neighbouring);
  emscripten::function("release", &Release);
  emscripten::function("methods", &Methods);
}
