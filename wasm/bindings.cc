// embind bindings: pointers, lengths and plain values in, a status value out.
// No logic here: the core validates; TypeScript checks JavaScript types and
// turns a non-zero code into DpQuantilesError.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/bounds.h"
#include "core/groups.h"
#include "core/intervals.h"
#include "core/prepare.h"
#include "core/release.h"
#include "core/stream.h"

namespace {

// Headroom kept for the glue's own small allocations. Not privacy-relevant.
constexpr size_t kHeapMargin = size_t{16} << 20;

// TOO_LARGE unless the heap can still give `bytes` (plus the margin): a
// failed allocation inside the C++ core would abort the module (no
// exceptions), so calls that could need more than is left are refused up
// front, with nothing changed. Fragmentation aside, this is exact: the
// heap's maximum minus what malloc holds. `hint` says what else to do.
dpq::Status RequireHeap(
    double bytes, const char* what,
    const char* hint = "dispose streams you no longer need") {
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

// JavaScript passes heap addresses as integers (from _malloc): the one place
// they become pointers.
template <typename T>
T* HeapPointer(uintptr_t address) {
  return reinterpret_cast<T*>(address);  // NOLINT(performance-no-int-to-ptr)
}

using emscripten::val;

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

// What a release spent, by name: its budget's kind, or "none" for a seeded
// release, which is not private whatever the budget.
const char* PrivacyKindName(const dpq::ReleaseReport& r) {
  return r.seeded ? "none" : BudgetKindName(r.spent.kind);
}

WasmReleaseResult ToResult(const dpq::StatusOr<dpq::ReleaseReport>& report) {
  WasmReleaseResult result;
  result.code = static_cast<int>(report.status().code());
  result.codeName = dpq::StatusCodeName(report.status().code());
  result.message = report.status().message();
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

// Every own property of `options` (a plain object, or undefined): strings to
// `texts` when given, numbers to `numbers`.
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

WasmReleaseResult StatusResult(const dpq::Status& status) {
  WasmReleaseResult result;
  result.code = static_cast<int>(status.code());
  result.codeName = dpq::StatusCodeName(status.code());
  result.message = status.message();
  return result;
}

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

// The session a spec names (its `session` property), or null.
dpq::PrivacySession* SessionOf(const val& spec) {
  const val session = spec["session"];
  if (session.isUndefined() || session.isNull()) return nullptr;
  return session.as<WasmSession*>(emscripten::allow_raw_pointers())->get();
}

// A release's spec and report travel as one block of doubles in the heap:
// reading a dozen properties through embind and building a result object
// of twenty fields cost about what a small release's draws do. The slots'
// names, in order, are exported (releaseLayout), so TypeScript never
// hard-codes an index. An optional number is given when its bit in the
// "present" slot is set (so a NaN the caller passes reaches the core's
// check); a name is its index in its list (kPrivacyKinds, ...; a method's
// in ReleaseMethods(), -1 for "auto", -2 for any other, which
// `extra.method` then gives).
enum SpecSlot {
  kSpecMethod,
  kSpecLower,
  kSpecUpper,
  kSpecEpsilon,
  kSpecRho,
  kSpecSeed,
  kSpecBuckets,
  kSpecConfidence,
  kSpecIntervalShare,
  kSpecSimultaneous,  // 0 or 1
  kSpecUsers,         // the heap address of one uint32 person id per record
  kSpecMaxContributions,
  kSpecPresent,  // bit i set: slot i holds a value (NaN included)
  kSpecSlots
};
constexpr const char* kSpecSlotNames[kSpecSlots] = {
    "method",        "lower",        "upper",   "epsilon",
    "rho",           "seed",         "buckets", "confidence",
    "intervalShare", "simultaneous", "users",   "maxContributions",
    "present"};
enum ReportSlot {
  kReportCode = kSpecSlots,
  kReportMethod,
  kReportPrivacyKind,
  kReportEpsilon,
  kReportDelta,
  kReportRho,
  kReportNeighbouring,
  kReportLevels,
  kReportMechanismEpsilon,
  kReportResolution,
  kReportRecordCap,
  kReportMaxContributions,
  kReportHasIntervals,
  kReportIntervalEpsilon,
  kReportIntervalRho,
  kReportIntervalPopulation,
  kReportIntervalSimultaneous,
  kReportIntervalMethod,
  kReportLookShare,
  kReportLookLow,
  kReportLookHigh,
  kReportLookSeenLow,
  kReportLookSeenHigh,
  kReportStepLookShare,
  kReportStepLookStep,
  kBlockSlots
};
constexpr const char* kReportSlotNames[kBlockSlots - kSpecSlots] = {
    "code",
    "method",
    "privacyKind",
    "epsilon",
    "delta",
    "rho",
    "neighbouring",
    "levels",
    "mechanismEpsilon",
    "resolution",
    "recordCap",
    "maxContributions",
    "hasIntervals",
    "intervalEpsilon",
    "intervalRho",
    "intervalPopulation",
    "intervalSimultaneous",
    "intervalMethod",
    "lookShare",
    "lookLow",
    "lookHigh",
    "lookSeenLow",
    "lookSeenHigh",
    "stepLookShare",
    "stepLookStep"};
const std::vector<std::string> kPrivacyKinds = {"pure", "approx", "zcdp",
                                                "none"};
const std::vector<std::string> kNeighbourings = {
    dpq::NeighbouringName(dpq::Neighbouring::kAddRemove),
    dpq::NeighbouringName(dpq::Neighbouring::kReplaceOne),
    dpq::NeighbouringName(dpq::Neighbouring::kAddRemoveUser)};
const std::vector<std::string> kIntervalMethods = {"", "brackets", "tree"};

// ReleaseMethods(), built once.
const std::vector<std::string>& MethodNames() {
  static const std::vector<std::string> names = dpq::ReleaseMethods();
  return names;
}

double IndexOf(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<double>(i);
  }
  return -1;
}

std::optional<double> SlotNumber(const double* block, int slot) {
  const auto present = static_cast<uint32_t>(block[kSpecPresent]);
  if (((present >> slot) & 1) == 0) return std::nullopt;
  return block[slot];
}

// The layout as JSON: { spec: [names], report: [names], privacyKinds,
// neighbourings, intervalMethods }.
std::string ReleaseLayout() {
  auto list = [](const auto& names) {
    std::string out = "[";
    for (const auto& name : names) {
      if (out.size() > 1) out += ",";
      out += "\"" + std::string(name) + "\"";
    }
    return out + "]";
  };
  return "{\"spec\":" + list(kSpecSlotNames) +
         ",\"report\":" + list(kReportSlotNames) +
         ",\"privacyKinds\":" + list(kPrivacyKinds) +
         ",\"neighbourings\":" + list(kNeighbourings) +
         ",\"intervalMethods\":" + list(kIntervalMethods) + "}";
}

// The status of the last release that failed, for lastReleaseError().
dpq::Status& LastReleaseStatus() {
  static dpq::Status status;
  return status;
}

// The request a block and `extra` describe (without quantiles), and in
// `need` the bytes the core may allocate for it on n records: the joint
// methods' two m x (n + 1) tables, the trees' levels (up to 2^21 leaves),
// the intervals' copies, else a few copies of the inputs. `extra`:
// undefined, or { method?, options?, interval?, session? }, options mapping
// names to numbers or strings; JavaScript types are checked in TS.
dpq::ReleaseRequest ReadRequest(const double* block, const val& extra,
                                uint32_t quantile_count, double n,
                                double* need) {
  dpq::ReleaseRequest request;
  const bool has_extra = !extra.isUndefined();
  const double method_index = block[kSpecMethod];
  if (method_index == -1) {
    request.method = "auto";
  } else if (method_index >= 0) {
    request.method = MethodNames().at(static_cast<size_t>(method_index));
  } else if (has_extra) {
    request.method = extra["method"].as<std::string>();
  }
  request.lower = block[kSpecLower];
  request.upper = block[kSpecUpper];
  request.epsilon = SlotNumber(block, kSpecEpsilon);
  request.rho = SlotNumber(block, kSpecRho);
  if (const std::optional<double> seed = SlotNumber(block, kSpecSeed)) {
    request.seed = static_cast<uint64_t>(*seed);  // a safe integer (TS)
  }
  request.buckets = SlotNumber(block, kSpecBuckets);
  if (has_extra) {
    ReadOptions(extra["options"], &request.options, &request.text_options);
    const val interval = extra["interval"];
    if (interval.isString()) request.interval = interval.as<std::string>();
  }
  const std::string& method = request.method;
  const double m = quantile_count;
  // The quantiles' copies, and the runs' cumulative counts: the records'
  // copy (already in the heap) and those counts are all RowsToRuns sorts
  // in (runs.h).
  *need = 32.0 * m + 8.0 * n;
  // (The joint methods' subset and tables at their record cap:
  // WorkingBytes, once the quantiles are read.)
  if (method == "aggtree" || method == "tree-cdf" || method == "auto") {
    // "auto" picks a tree on a step or bucket grid, and may after its step
    // look (dpq::ResolveMethod, step_look.h), whose runs on the step's grid
    // take at most 16 bytes a point of it (below 2^20 / 10).
    *need += 128.0 * 1048576 + 16.0 * 131072;
  }
  request.confidence = SlotNumber(block, kSpecConfidence);
  request.interval_share = SlotNumber(block, kSpecIntervalShare);
  if (const std::optional<double> both = SlotNumber(block, kSpecSimultaneous)) {
    request.interval_simultaneous = *both != 0;
  }
  if (request.confidence.has_value()) {
    // The brackets' runs, down and up, as pairs and as runs, or the tree's
    // counts (at most 2^16 leaves and their levels; intervals.h).
    *need += 64.0 * n + 8.0 * 131072;
  }
  request.max_contributions = SlotNumber(block, kSpecMaxContributions);
  return request;
}

// The session `extra` names, or null.
dpq::PrivacySession* SessionOfExtra(const val& extra) {
  return extra.isUndefined() ? nullptr : SessionOf(extra);
}

// The report into the block's report slots and, with intervals, the lows
// and highs after the m values at `out`; the code, 0 for success. A failure
// is kept for lastReleaseError().
int Report(const dpq::StatusOr<dpq::ReleaseReport>& report,
           uint32_t quantile_count, double* out, double* block) {
  block[kReportCode] = static_cast<double>(report.status().code());
  if (!report.ok()) {
    LastReleaseStatus() = report.status();
    return static_cast<int>(report.status().code());
  }
  const dpq::ReleaseReport& r = report.value();
  if (r.has_intervals) {
    for (uint32_t i = 0; i < quantile_count; ++i) {
      out[quantile_count + i] = r.interval_low[i];
      out[2 * quantile_count + i] = r.interval_high[i];
    }
  }
  block[kReportMethod] = IndexOf(MethodNames(), r.method);
  block[kReportPrivacyKind] = IndexOf(kPrivacyKinds, PrivacyKindName(r));
  block[kReportEpsilon] = r.spent.epsilon;
  block[kReportDelta] = r.spent.delta;
  block[kReportRho] = r.spent.rho;
  block[kReportNeighbouring] = IndexOf(kNeighbourings, r.neighbouring);
  block[kReportLevels] = r.levels;
  block[kReportMechanismEpsilon] = r.mechanism_epsilon;
  block[kReportResolution] = r.resolution;
  block[kReportRecordCap] = static_cast<double>(r.record_cap);
  block[kReportMaxContributions] = static_cast<double>(r.max_contributions);
  block[kReportHasIntervals] = r.has_intervals ? 1 : 0;
  block[kReportIntervalEpsilon] = r.interval_spent.epsilon;
  block[kReportIntervalRho] = r.interval_spent.rho;
  block[kReportIntervalPopulation] = r.interval_population ? 1 : 0;
  block[kReportIntervalSimultaneous] = r.interval_simultaneous ? 1 : 0;
  block[kReportIntervalMethod] = IndexOf(kIntervalMethods, r.interval_method);
  block[kReportLookShare] = r.look_share;
  block[kReportLookLow] = r.look_low;
  block[kReportLookHigh] = r.look_high;
  block[kReportLookSeenLow] = r.look_seen_low;
  block[kReportLookSeenHigh] = r.look_seen_high;
  block[kReportStepLookShare] = r.step_look_share;
  block[kReportStepLookStep] = r.step_look_step;
  return 0;
}

// data: `count` doubles at data_address (overwritten: it is the caller's
// scratch copy); quantiles: `quantile_count` doubles; out: room for as many
// (3 m with confidence); block: kBlockSlots doubles, the spec in, the
// report out. Returns the status code (0: released).
int Release(uintptr_t data_address, uint32_t count, uintptr_t quantiles_address,
            uint32_t quantile_count, uintptr_t out_address,
            uintptr_t block_address, const val& extra) {
  double* block = HeapPointer<double>(block_address);
  double need = 0;
  dpq::ReleaseRequest request =
      ReadRequest(block, extra, quantile_count, count, &need);
  if (const std::optional<double> users = SlotNumber(block, kSpecUsers)) {
    request.users = HeapPointer<const uint32_t>(static_cast<uintptr_t>(*users));
    need += 9.0 * count;
  }
  double* out = HeapPointer<double>(out_address);
  const double* quantiles = HeapPointer<const double>(quantiles_address);
  request.quantiles.assign(quantiles, quantiles + quantile_count);
  need += dpq::ReleaseWorkingBytes(request);
  const dpq::Status room = RequireHeap(need, "this release");
  if (!room.ok()) return Report(room, quantile_count, out, block);
  return Report(dpq::ReleaseQuantiles(HeapPointer<double>(data_address), count,
                                      request, out, SessionOfExtra(extra)),
                quantile_count, out, block);
}

// counts: `bucket_count` doubles at counts_address (the caller's scratch
// copy: overwritten, the runs are built over it); the rest as Release. The
// core reads the non-empty buckets as runs: what it needs grows with the
// buckets, not with the rows they count.
int ReleaseFromCounts(uintptr_t counts_address, uint32_t bucket_count,
                      uintptr_t quantiles_address, uint32_t quantile_count,
                      uintptr_t out_address, uintptr_t block_address,
                      const val& extra) {
  double* block = HeapPointer<double>(block_address);
  double* counts = HeapPointer<double>(counts_address);
  double need = 0;
  dpq::ReleaseRequest request =
      ReadRequest(block, extra, quantile_count, bucket_count, &need);
  double* out = HeapPointer<double>(out_address);
  const double* quantiles = HeapPointer<const double>(quantiles_address);
  request.quantiles.assign(quantiles, quantiles + quantile_count);
  need += dpq::ReleaseWorkingBytes(request);
  const dpq::Status room = RequireHeap(need, "this release from counts");
  if (!room.ok()) return Report(room, quantile_count, out, block);
  return Report(dpq::ReleaseFromCountsInPlace(counts, bucket_count, request,
                                              out, SessionOfExtra(extra)),
                quantile_count, out, block);
}

// Grouped releases (core/groups.h). `extra` is Release's, with `groups`:
// { keys, private, delta?, selectionShare?, maxGroups?, count,
// countShare? }. out: keys x m values (by key), then with confidence keys x
// m lows and keys x m highs, then one flag a key (1: released), four
// first-look spans a key, one noisy count a key (NaN without count). The
// selection's and the counts' details go to extra's `report` object:
// { selectionEpsilon, selectionRho, selectionThreshold, maxGroups,
// countEpsilon, countRho, countShare, countOf }.
dpq::GroupRequest ReadGroups(const val& extra, dpq::ReleaseRequest release) {
  dpq::GroupRequest request;
  request.release = std::move(release);
  const val groups = extra["groups"];
  request.keys = groups["keys"].as<uint32_t>();
  request.private_keys = groups["private"].as<bool>();
  request.delta = OptionalNumber(groups, "delta");
  request.selection_share = OptionalNumber(groups, "selectionShare");
  request.max_groups = OptionalNumber(groups, "maxGroups");
  request.count = groups["count"].as<bool>();
  request.count_share = OptionalNumber(groups, "countShare");
  return request;
}

// The grouped report into the block, the intervals spread by key, the
// flags after them, then each key's first-look spans (found low, high, then
// seen low, high; NaN for none), the selection into extra's `report`.
int GroupedReport(const dpq::StatusOr<dpq::GroupedReport>& grouped,
                  uint32_t keys, uint32_t m, double* out, double* block,
                  const val& extra) {
  if (!grouped.ok()) {
    return Report(grouped.status(), m, out, block);
  }
  const dpq::GroupedReport& g = grouped.value();
  dpq::ReleaseReport release = g.release;
  const bool intervals = release.has_intervals;
  const size_t width = static_cast<size_t>(keys) * m;
  size_t next = 0;
  double* looks = out + (intervals ? 3 : 1) * width + keys;
  double* counts = looks + 4 * static_cast<size_t>(keys);
  for (uint32_t key = 0; key < keys; ++key) {
    out[(intervals ? 3 : 1) * width + key] = g.released[key];
    counts[key] = g.counts.empty() ? std::numeric_limits<double>::quiet_NaN()
                                   : g.counts[key];
    looks[4 * key] = g.look_low[key];
    looks[4 * key + 1] = g.look_high[key];
    looks[4 * key + 2] = g.look_seen_low[key];
    looks[4 * key + 3] = g.look_seen_high[key];
    if (!intervals || g.released[key] == 0) continue;
    for (uint32_t j = 0; j < m; ++j, ++next) {
      out[width + key * m + j] = release.interval_low[next];
      out[2 * width + key * m + j] = release.interval_high[next];
    }
  }
  release.has_intervals = false;  // written here, not by Report
  const int code = Report(release, m, out, block);
  block[kReportHasIntervals] = intervals ? 1 : 0;
  val report = val::object();
  report.set("selectionEpsilon", g.selection_spent.epsilon);
  report.set("selectionRho", g.selection_spent.rho);
  report.set("selectionThreshold", static_cast<double>(g.selection.threshold));
  report.set("maxGroups", static_cast<double>(g.max_groups));
  report.set("countEpsilon", g.count_spent.epsilon);
  report.set("countRho", g.count_spent.rho);
  report.set("countShare", g.count_share);
  report.set("countOf", std::string(g.count_of));
  val target = extra;  // the same JavaScript object
  target.set("report", report);
  return code;
}

int ReleaseByGroup(uintptr_t values_address, uintptr_t codes_address,
                   uint32_t count, uintptr_t quantiles_address,
                   uint32_t quantile_count, uintptr_t out_address,
                   uintptr_t block_address, const val& extra) {
  double* block = HeapPointer<double>(block_address);
  double need = 0;
  dpq::ReleaseRequest release =
      ReadRequest(block, extra, quantile_count, count, &need);
  if (const std::optional<double> users = SlotNumber(block, kSpecUsers)) {
    release.users = HeapPointer<const uint32_t>(static_cast<uintptr_t>(*users));
    need += 17.0 * count;  // BoundPeopleAcrossGroups' scratch
  }
  dpq::GroupRequest request = ReadGroups(extra, std::move(release));
  double* out = HeapPointer<double>(out_address);
  const double* quantiles = HeapPointer<const double>(quantiles_address);
  request.release.quantiles.assign(quantiles, quantiles + quantile_count);
  // Small arrays a key besides the runs (offsets, runs, the looks' spans).
  need += dpq::ReleaseWorkingBytes(request.release) + 80.0 * request.keys;
  const dpq::Status room = RequireHeap(need, "this grouped release");
  if (!room.ok()) return Report(room, quantile_count, out, block);
  return GroupedReport(
      dpq::ReleaseByGroup(HeapPointer<double>(values_address),
                          HeapPointer<unsigned char>(codes_address), count,
                          request, out, SessionOfExtra(extra)),
      request.keys, quantile_count, out, block, extra);
}

// keys: `rows` uint32 codes; buckets and counts: `rows` doubles each.
int ReleaseByGroupFromCounts(uintptr_t keys_address, uintptr_t buckets_address,
                             uintptr_t counts_address, uint32_t rows,
                             uint32_t bucket_count, uintptr_t quantiles_address,
                             uint32_t quantile_count, uintptr_t out_address,
                             uintptr_t block_address, const val& extra) {
  double* block = HeapPointer<double>(block_address);
  double need = 0;
  dpq::ReleaseRequest release =
      ReadRequest(block, extra, quantile_count, rows, &need);
  dpq::GroupRequest request = ReadGroups(extra, std::move(release));
  double* out = HeapPointer<double>(out_address);
  const double* quantiles = HeapPointer<const double>(quantiles_address);
  request.release.quantiles.assign(quantiles, quantiles + quantile_count);
  // The rows' order and runs (8 + 16 bytes a row), and the keys' arrays.
  need += 24.0 * rows + dpq::ReleaseWorkingBytes(request.release) +
          80.0 * request.keys;
  const dpq::Status room = RequireHeap(need, "this grouped release");
  if (!room.ok()) return Report(room, quantile_count, out, block);
  return GroupedReport(dpq::ReleaseByGroupFromCounts(
                           HeapPointer<const uint32_t>(keys_address),
                           HeapPointer<const double>(buckets_address),
                           HeapPointer<const double>(counts_address), rows,
                           bucket_count, request, out, SessionOfExtra(extra)),
                       request.keys, quantile_count, out, block, extra);
}

// The last failed release's code, name and message.
WasmReleaseResult LastReleaseError() {
  return StatusResult(LastReleaseStatus());
}

// data as for Release; out: room for SanitizeSize(spec) doubles.
// spec: { lower, upper, epsilon?, rho?, size?, step?, seed? }.
WasmReleaseResult Sanitize(uintptr_t data_address, uint32_t count,
                           uintptr_t out_address, const val& spec) {
  dpq::SanitizeRequest request;
  request.lower = spec["lower"].as<double>();
  request.upper = spec["upper"].as<double>();
  request.epsilon = OptionalNumber(spec, "epsilon");
  request.rho = OptionalNumber(spec, "rho");
  request.size = OptionalNumber(spec, "size");
  request.step = OptionalNumber(spec, "step");
  request.seed = OptionalSeed(spec);
  // A size the core will refuse counts as the default here.
  const double size =
      request.size.has_value() &&
              *request.size <= static_cast<double>(dpq::kMaxQuantiles)
          ? *request.size
          : static_cast<double>(dpq::kDefaultSanitizeSize);
  double need = 32.0 * size + 8.0 * count;
  ReadContributions(spec, &request, &need, count);
  const dpq::Status room = RequireHeap(need, "this sample");
  if (!room.ok()) return StatusResult(room);
  return ToResult(dpq::SanitizeSample(HeapPointer<double>(data_address), count,
                                      request, HeapPointer<double>(out_address),
                                      SessionOf(spec)));
}

// data: `count` doubles at data_address (read only); out: room for 3
// doubles: lower, upper and the threshold. spec: { epsilon?, rho?, seed?,
// users?, maxContributions? }.
WasmReleaseResult Bounds(uintptr_t data_address, uint32_t count,
                         uintptr_t out_address, const val& spec) {
  dpq::BoundsRequest request;
  request.epsilon = OptionalNumber(spec, "epsilon");
  request.rho = OptionalNumber(spec, "rho");
  request.seed = OptionalSeed(spec);
  // Per person: a copy of the values and the bounding's scratch.
  double need = 0;
  ReadContributions(spec, &request, &need, count);
  if (request.users != nullptr) {
    need += 16.0 * count;
    const dpq::Status room = RequireHeap(need, "these bounds");
    if (!room.ok()) return StatusResult(room);
  }
  const dpq::StatusOr<dpq::BoundsReport> report = dpq::ReleaseBounds(
      HeapPointer<const double>(data_address), count, request, SessionOf(spec));
  if (!report.ok()) return StatusResult(report.status());
  const dpq::BoundsEstimate& e = report.value().estimate;
  double* out = HeapPointer<double>(out_address);
  out[0] = e.lower;
  out[1] = e.upper;
  out[2] = static_cast<double>(e.threshold);
  dpq::ReleaseReport as_release;
  as_release.method = "bounds";
  as_release.spent = e.spent;
  as_release.seeded = report.value().seeded;
  as_release.neighbouring = report.value().neighbouring;
  as_release.max_contributions = report.value().max_contributions;
  return ToResult(as_release);
}

// The sample size a sanitize spec asks for, or -1 when it is invalid (the
// Sanitize call then reports why).
double SanitizeSize(const val& spec) {
  const dpq::StatusOr<size_t> size =
      dpq::SanitizeSize(OptionalNumber(spec, "size"));
  return size.ok() ? static_cast<double>(size.value()) : -1;
}

// A quantile stream owned by JavaScript (TypeScript disposes it). Holds the
// construction error instead of a stream when creation failed.
class WasmStream {
 public:
  explicit WasmStream(dpq::StatusOr<dpq::QuantileStream> created)
      : status_(created.status()) {
    if (created.ok()) stream_.emplace(std::move(created.value()));
  }

  WasmReleaseResult status() const { return StatusResult(status_); }

  // `count` doubles at data_address. A merge can briefly double the
  // sketch's memory: refused with nothing pushed when that could not fit.
  WasmReleaseResult Push(uintptr_t data_address, uint32_t count) {
    const dpq::Status room = RequireHeap(
        2.0 * static_cast<double>(stream_->MemoryBytes()), "pushing");
    if (!room.ok()) return StatusResult(room);
    return StatusResult(
        stream_->Push(HeapPointer<const double>(data_address), count));
  }
  // Merges `other` into this stream (stream.h); `other` is not changed. The
  // merge holds a copy of `other`'s sketch and the merged tuples.
  WasmReleaseResult Merge(const WasmStream& other) {
    const dpq::Status room =
        RequireHeap(2.0 * static_cast<double>(stream_->MemoryBytes() +
                                              other.stream_->MemoryBytes()),
                    "merging streams");
    if (!room.ok()) return StatusResult(room);
    return StatusResult(stream_->Merge(*other.stream_));
  }
  double Count() const { return static_cast<double>(stream_->count()); }
  double MemoryBytes() const {
    return static_cast<double>(stream_->MemoryBytes());
  }

  // spec: { method, epsilon?, rho?, seed?, options? } as for Release.
  WasmReleaseResult Release(uintptr_t quantiles_address,
                            uint32_t quantile_count, uintptr_t out_address,
                            const val& spec) {
    dpq::StreamReleaseRequest request;
    request.method = spec["method"].as<std::string>();
    request.epsilon = OptionalNumber(spec, "epsilon");
    request.rho = OptionalNumber(spec, "rho");
    request.seed = OptionalSeed(spec);
    const double* quantiles = HeapPointer<const double>(quantiles_address);
    request.quantiles.assign(quantiles, quantiles + quantile_count);
    ReadOptions(spec["options"], &request.options, nullptr);
    return ToResult(stream_->Release(request, HeapPointer<double>(out_address),
                                     SessionOf(spec)));
  }

  // A fresh Uint8Array copy of the serialized sketch.
  val Serialize() {
    const std::vector<uint8_t> bytes = stream_->Serialize();
    return val(emscripten::typed_memory_view(bytes.size(), bytes.data()))
        .call<val>("slice");
  }

 private:
  dpq::Status status_;
  std::optional<dpq::QuantileStream> stream_;
};

// spec: { lower, upper, alpha, bins? }.
WasmStream* CreateStream(const val& spec) {
  dpq::StreamOptions options;
  options.lower = spec["lower"].as<double>();
  options.upper = spec["upper"].as<double>();
  options.alpha = spec["alpha"].as<double>();
  if (const std::optional<double> bins = OptionalNumber(spec, "bins")) {
    options.bins = *bins;
  }
  // The sketch starts small (its batch buffer and a few tuples).
  const dpq::Status room = RequireHeap(1 << 20, "a new stream");
  if (!room.ok()) return new WasmStream(room);
  return new WasmStream(dpq::QuantileStream::Create(options));
}

// `size` bytes at bytes_address, as Serialize wrote them.
WasmStream* LoadStream(uintptr_t bytes_address, uint32_t size) {
  const dpq::Status room = RequireHeap(2.0 * size, "loading a stream");
  if (!room.ok()) return new WasmStream(room);
  return new WasmStream(dpq::QuantileStream::Deserialize(
      HeapPointer<const uint8_t>(bytes_address), size));
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
      .field("neighbouring", &WasmReleaseResult::neighbouring)
      .field("levels", &WasmReleaseResult::levels)
      .field("mechanismEpsilon", &WasmReleaseResult::mechanismEpsilon)
      .field("resolution", &WasmReleaseResult::resolution)
      .field("recordCap", &WasmReleaseResult::recordCap)
      .field("maxContributions", &WasmReleaseResult::maxContributions)
      .field("hasIntervals", &WasmReleaseResult::hasIntervals)
      .field("intervalEpsilon", &WasmReleaseResult::intervalEpsilon)
      .field("intervalRho", &WasmReleaseResult::intervalRho)
      .field("intervalPopulation", &WasmReleaseResult::intervalPopulation)
      .field("intervalSimultaneous", &WasmReleaseResult::intervalSimultaneous)
      .field("intervalMethod", &WasmReleaseResult::intervalMethod)
      .field("lookShare", &WasmReleaseResult::lookShare)
      .field("lookLow", &WasmReleaseResult::lookLow)
      .field("lookHigh", &WasmReleaseResult::lookHigh)
      .field("lookSeenLow", &WasmReleaseResult::lookSeenLow)
      .field("lookSeenHigh", &WasmReleaseResult::lookSeenHigh)
      .field("stepLookShare", &WasmReleaseResult::stepLookShare)
      .field("stepLookStep", &WasmReleaseResult::stepLookStep);
  emscripten::function("release", &Release);
  emscripten::function("releaseFromCounts", &ReleaseFromCounts);
  emscripten::function("releaseByGroup", &ReleaseByGroup);
  emscripten::function("releaseByGroupFromCounts", &ReleaseByGroupFromCounts);
  emscripten::function("releaseLayout", &ReleaseLayout);
  emscripten::function("lastReleaseError", &LastReleaseError);
  emscripten::function("sanitize", &Sanitize);
  emscripten::function("sanitizeSize", &SanitizeSize);
  emscripten::function("bounds", &Bounds);
  emscripten::function("methods", &Methods);
  emscripten::class_<WasmStream>("Stream")
      .function("status", &WasmStream::status)
      .function("push", &WasmStream::Push)
      .function("merge", &WasmStream::Merge)
      .function("count", &WasmStream::Count)
      .function("memoryBytes", &WasmStream::MemoryBytes)
      .function("release", &WasmStream::Release)
      .function("serialize", &WasmStream::Serialize);
  emscripten::function("createStream", &CreateStream,
                       emscripten::allow_raw_pointers());
  emscripten::function("loadStream", &LoadStream,
                       emscripten::allow_raw_pointers());
  emscripten::class_<WasmSession>("Session")
      .function("status", &WasmSession::status)
      .function("spent", &WasmSession::Spent)
      .function("remaining", &WasmSession::Remaining)
      .function("total", &WasmSession::Total)
      .function("releases", &WasmSession::Releases)
      .function("neighbouring", &WasmSession::Neighbouring)
      .function("charges", &WasmSession::Charges)
      .function("replay", &WasmSession::Replay);
  emscripten::function("createSession", &CreateSession,
                       emscripten::allow_raw_pointers());
}
