// A release's spec and report as one block of doubles in the heap (the
// slots below), read into a core request and written back from its report.
#ifndef DPQ_WASM_RELEASE_BLOCK_H_
#define DPQ_WASM_RELEASE_BLOCK_H_

#include <cstdint>
#include <optional>

#include "core/release.h"
#include "wasm/glue.h"

namespace dpq_wasm {

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
// A spec slot's number, or none when its "present" bit is clear.
std::optional<double> SlotNumber(const double* block, int slot);

// The request a block and `extra` describe (without quantiles), and in
// `need` the bytes the core may allocate for it on n records. `extra`:
// undefined, or { method?, options?, interval?, session? }, options mapping
// names to numbers or strings; JavaScript types are checked in TS.
dpq::ReleaseRequest ReadRequest(const double* block, const val& extra,
                                uint32_t quantile_count, double n,
                                double* need);

// The session `extra` names, or null.
dpq::PrivacySession* SessionOfExtra(const val& extra);

// The report into the block's report slots and, with intervals, the lows
// and highs after the m values at `out`; the code, 0 for success. A failure
// is kept for lastReleaseError().
int Report(const dpq::StatusOr<dpq::ReleaseReport>& report,
           uint32_t quantile_count, double* out, double* block);

}  // namespace dpq_wasm

#endif  // DPQ_WASM_RELEASE_BLOCK_H_
