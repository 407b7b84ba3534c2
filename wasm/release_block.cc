#include "wasm/release_block.h"

#include <emscripten/bind.h>

#include <string>
#include <vector>

#include "wasm/session.h"

namespace dpq_wasm {
namespace {

constexpr const char* kSpecSlotNames[kSpecSlots] = {
    "method",        "lower",        "upper",   "epsilon",
    "rho",           "seed",         "buckets", "confidence",
    "intervalShare", "simultaneous", "users",   "maxContributions",
    "present"};
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

}  // namespace

std::optional<double> SlotNumber(const double* block, int slot) {
  const auto present = static_cast<uint32_t>(block[kSpecPresent]);
  if (((present >> slot) & 1) == 0) return std::nullopt;
  return block[slot];
}

// `need`: the joint methods' two m x (n + 1) tables, the trees' levels (up
// to 2^21 leaves), the intervals' copies, else a few copies of the inputs.
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

dpq::PrivacySession* SessionOfExtra(const val& extra) {
  return extra.isUndefined() ? nullptr : SessionOf(extra);
}

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

namespace {

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
  request.quantiles = HeapQuantiles(quantiles_address, quantile_count);
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
  request.quantiles = HeapQuantiles(quantiles_address, quantile_count);
  need += dpq::ReleaseWorkingBytes(request);
  const dpq::Status room = RequireHeap(need, "this release from counts");
  if (!room.ok()) return Report(room, quantile_count, out, block);
  return Report(dpq::ReleaseFromCountsInPlace(counts, bucket_count, request,
                                              out, SessionOfExtra(extra)),
                quantile_count, out, block);
}

// The last failed release's code, name and message.
WasmReleaseResult LastReleaseError() {
  return StatusResult(LastReleaseStatus());
}

}  // namespace
}  // namespace dpq_wasm

EMSCRIPTEN_BINDINGS(dpq_release) {
  emscripten::function("release", &dpq_wasm::Release);
  emscripten::function("releaseFromCounts", &dpq_wasm::ReleaseFromCounts);
  emscripten::function("releaseLayout", &dpq_wasm::ReleaseLayout);
  emscripten::function("lastReleaseError", &dpq_wasm::LastReleaseError);
}
