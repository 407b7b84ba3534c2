// embind bindings: pointers, lengths and plain values in, a status value out.
// No logic here: the core validates; TypeScript checks JavaScript types and
// turns a non-zero code into DpQuantilesError. Here: the result object,
// samples, bounds and streams; releases (release_block.cc), grouped releases
// (groups.cc) and sessions (session.cc) register their own functions.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/bounds.h"
#include "core/intervals.h"
#include "core/prepare.h"
#include "core/release.h"
#include "core/stream.h"
#include "wasm/glue.h"
#include "wasm/session.h"

namespace dpq_wasm {
namespace {

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
    request.quantiles = HeapQuantiles(quantiles_address, quantile_count);
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
}  // namespace dpq_wasm

EMSCRIPTEN_BINDINGS(dp_quantiles) {
  using dpq_wasm::WasmReleaseResult;
  using dpq_wasm::WasmStream;
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
  emscripten::function("sanitize", &dpq_wasm::Sanitize);
  emscripten::function("sanitizeSize", &dpq_wasm::SanitizeSize);
  emscripten::function("bounds", &dpq_wasm::Bounds);
  emscripten::function("methods", &dpq_wasm::Methods);
  emscripten::class_<WasmStream>("Stream")
      .function("status", &WasmStream::status)
      .function("push", &WasmStream::Push)
      .function("merge", &WasmStream::Merge)
      .function("count", &WasmStream::Count)
      .function("memoryBytes", &WasmStream::MemoryBytes)
      .function("release", &WasmStream::Release)
      .function("serialize", &WasmStream::Serialize);
  emscripten::function("createStream", &dpq_wasm::CreateStream,
                       emscripten::allow_raw_pointers());
  emscripten::function("loadStream", &dpq_wasm::LoadStream,
                       emscripten::allow_raw_pointers());
}
