// Grouped releases (core/groups.h): the release block, with the groups'
// options in `extra` and their flags, looks and counts after the values.
#include "core/groups.h"

#include <emscripten/bind.h>

#include <limits>
#include <utility>

#include "wasm/release_block.h"

namespace dpq_wasm {
namespace {

// `extra` is Release's, with `groups`:
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
  request.release.quantiles = HeapQuantiles(quantiles_address, quantile_count);
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
  request.release.quantiles = HeapQuantiles(quantiles_address, quantile_count);
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

}  // namespace
}  // namespace dpq_wasm

EMSCRIPTEN_BINDINGS(dpq_groups) {
  emscripten::function("releaseByGroup", &dpq_wasm::ReleaseByGroup);
  emscripten::function("releaseByGroupFromCounts",
                       &dpq_wasm::ReleaseByGroupFromCounts);
}
