// What every binding shares: the heap check before a call that allocates,
// heap addresses as pointers, a call's outcome as a plain JavaScript object,
// and reading optional properties of a spec.
#ifndef DPQ_WASM_GLUE_H_
#define DPQ_WASM_GLUE_H_

#include <emscripten/val.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/release.h"
#include "core/status.h"

namespace dpq_wasm {

using emscripten::val;

// TOO_LARGE unless the heap can still give `bytes` (plus a margin): a
// failed allocation inside the C++ core would abort the module (no
// exceptions), so calls that could need more than is left are refused up
// front, with nothing changed. `hint` says what else to do.
dpq::Status RequireHeap(
    double bytes, const char* what,
    const char* hint = "dispose streams you no longer need");

// JavaScript passes heap addresses as integers (from _malloc): the one place
// they become pointers.
template <typename T>
T* HeapPointer(uintptr_t address) {
  return reinterpret_cast<T*>(address);  // NOLINT(performance-no-int-to-ptr)
}

// `count` quantiles at a heap address (from _malloc), as a request lists them.
inline std::vector<double> HeapQuantiles(uintptr_t address, uint32_t count) {
  const double* quantiles = HeapPointer<const double>(address);
  return std::vector<double>(quantiles, quantiles + count);
}

// The outcome of one release, as a plain JavaScript object.
struct WasmReleaseResult {
  int code = 0;
  std::string codeName;
  std::string message;
  std::string method;
  std::string privacyKind;  // "pure", "approx", "zcdp" or "none" (seeded)
  double epsilon = 0;
  double delta = 0;
  double rho = 0;
  std::string neighbouring;
  int levels = 0;
  double mechanismEpsilon = 0;
  double resolution = 0;
  double maxContributions = 0;  // add-remove-user: k; 0 otherwise
  double recordCap = 0;         // joint methods: the public record cap
  // With confidence: the intervals' share of the budget (epsilon or rho).
  bool hasIntervals = false;
  double intervalEpsilon = 0;
  double intervalRho = 0;
  bool intervalPopulation = false;    // population intervals (intervals.h)
  bool intervalSimultaneous = false;  // all hold at once
  std::string intervalMethod;         // "brackets" or "tree"
  // AQ's first look: its share of the method's budget (0: none) and the
  // span its histogram found (NaN: none).
  double lookShare = 0;
  double lookLow = 0;
  double lookHigh = 0;
  // Where it saw most of the values (NaN: nowhere).
  double lookSeenLow = 0;
  double lookSeenHigh = 0;
  // The default's step look: its share of the budget (0: it did not run)
  // and the step it found (NaN: none).
  double stepLookShare = 0;
  double stepLookStep = 0;
};

// A budget's kind by name: "pure", "approx" or "zcdp".
const char* BudgetKindName(dpq::PrivacyBudget::Kind kind);
// What a release spent, by name: its budget's kind, or "none" for a seeded
// release, which is not private whatever the budget.
const char* PrivacyKindName(const dpq::ReleaseReport& r);
WasmReleaseResult ToResult(const dpq::StatusOr<dpq::ReleaseReport>& report);
WasmReleaseResult StatusResult(const dpq::Status& status);

// A spec's number property, or none when undefined or null.
std::optional<double> OptionalNumber(const val& object, const char* key);
// Every own property of `options` (a plain object, or undefined): strings to
// `texts` when given, numbers to `numbers`.
void ReadOptions(const val& options,
                 std::vector<std::pair<std::string, double>>* numbers,
                 std::vector<std::pair<std::string, std::string>>* texts);
// A spec's `seed` (a safe integer, checked in TS), or none.
std::optional<uint64_t> OptionalSeed(const val& spec);

// The per-person part of a spec: `users`, the heap address of one uint32
// person id per record (from _malloc), and `maxContributions`. Adds what
// bounding needs to `need` (bytes).
template <typename Request>
void ReadContributions(const val& spec, Request* request, double* need,
                       uint32_t count) {
  const std::optional<double> users = OptionalNumber(spec, "users");
  if (users.has_value()) {
    request->users =
        HeapPointer<const uint32_t>(static_cast<uintptr_t>(*users));
    *need += 9.0 * count;
  }
  request->max_contributions = OptionalNumber(spec, "maxContributions");
}

}  // namespace dpq_wasm

#endif  // DPQ_WASM_GLUE_H_
