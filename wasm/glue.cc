#include "wasm/glue.h"

#include <emscripten/heap.h>
#include <malloc.h>

namespace dpq_wasm {
namespace {

// Headroom kept for the glue's own small allocations. Not privacy-relevant.
constexpr size_t kHeapMargin = size_t{16} << 20;

}  // namespace

// TOO_LARGE unless the heap can still give `bytes` (plus the margin): a
// failed allocation inside the C++ core would abort the module (no
// exceptions), so calls that could need more than is left are refused up
// front, with nothing changed. Fragmentation aside, this is exact: the
// heap's maximum minus what malloc holds. `hint` says what else to do.
dpq::Status RequireHeap(double bytes, const char* what, const char* hint) {
  const double max = static_cast<double>(emscripten_get_heap_max());
  const double used = static_cast<double>(mallinfo().uordblks);
  if (used + bytes + static_cast<double>(kHeapMargin) <= max) {
    return dpq::Status::Ok();
  }
  // No sizes in the message: what a release needs grows with n, which is
  // private (docs/refusals.md).
  return dpq::Status(dpq::StatusCode::kTooLarge,
                     std::string(what) +
                         " does not fit what is left of the WebAssembly heap "
                         "(2 GiB): " +
                         hint);
}

const char* BudgetKindName(dpq::PrivacyBudget::Kind kind) {
  switch (kind) {
    case dpq::PrivacyBudget::Kind::kPure:
      return "pure";
    case dpq::PrivacyBudget::Kind::kApprox:
      return "approx";
    case dpq::PrivacyBudget::Kind::kZcdp:
      return "zcdp";
  }
  return "";
}

const char* PrivacyKindName(const dpq::ReleaseReport& r) {
  return r.seeded ? "none" : BudgetKindName(r.spent.kind);
}

WasmReleaseResult ToResult(const dpq::StatusOr<dpq::ReleaseReport>& report) {
  WasmReleaseResult result = StatusResult(report.status());
  if (!report.ok()) return result;
  const dpq::ReleaseReport& r = report.value();
  result.method = r.method;
  result.privacyKind = PrivacyKindName(r);
  result.epsilon = r.spent.epsilon;
  result.delta = r.spent.delta;
  result.rho = r.spent.rho;
  result.neighbouring = r.neighbouring;
  result.levels = r.levels;
  result.mechanismEpsilon = r.mechanism_epsilon;
  result.resolution = r.resolution;
  result.recordCap = static_cast<double>(r.record_cap);
  result.maxContributions = static_cast<double>(r.max_contributions);
  result.hasIntervals = r.has_intervals;
  result.intervalEpsilon = r.interval_spent.epsilon;
  result.intervalRho = r.interval_spent.rho;
  result.intervalPopulation = r.interval_population;
  result.intervalSimultaneous = r.interval_simultaneous;
  result.intervalMethod = r.interval_method;
  result.lookShare = r.look_share;
  result.lookLow = r.look_low;
  result.lookHigh = r.look_high;
  result.lookSeenLow = r.look_seen_low;
  result.lookSeenHigh = r.look_seen_high;
  result.stepLookShare = r.step_look_share;
  result.stepLookStep = r.step_look_step;
  return result;
}

std::optional<double> OptionalNumber(const val& object, const char* key) {
  const val value = object[key];
  if (value.isUndefined() || value.isNull()) return std::nullopt;
  return value.as<double>();
}

void ReadOptions(const val& options,
                 std::vector<std::pair<std::string, double>>* numbers,
                 std::vector<std::pair<std::string, std::string>>* texts) {
  if (options.isUndefined() || options.isNull()) return;
  const val keys = val::global("Object").call<val>("keys", options);
  const int length = keys["length"].as<int>();
  for (int i = 0; i < length; ++i) {
    const std::string key = keys[i].as<std::string>();
    const val value = options[key];
    if (texts != nullptr && value.isString()) {
      texts->emplace_back(key, value.as<std::string>());
    } else {
      numbers->emplace_back(key, value.as<double>());
    }
  }
}

std::optional<uint64_t> OptionalSeed(const val& spec) {
  const std::optional<double> seed = OptionalNumber(spec, "seed");
  if (!seed.has_value()) return std::nullopt;
  return static_cast<uint64_t>(*seed);  // a safe integer, checked in TS
}

WasmReleaseResult StatusResult(const dpq::Status& status) {
  WasmReleaseResult result;
  result.code = static_cast<int>(status.code());
  result.codeName = dpq::StatusCodeName(status.code());
  result.message = status.message();
  return result;
}

}  // namespace dpq_wasm
