// A stream of values summarised in bounded memory by a GK sketch; it hands
// out only private releases (DPExpGK, DPHistGK). The stream and its
// serialized bytes are raw data: they must stay with the data owner.
#ifndef DPQ_CORE_STREAM_H_
#define DPQ_CORE_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/gk_sketch.h"
#include "core/prepare.h"
#include "core/release.h"
#include "core/status.h"

namespace dpq {

// Histogram resolution a stream keeps for DPHistGK unless told otherwise.
// Memory and accuracy only; not privacy-relevant.
constexpr int64_t kDefaultStreamBins = 1024;

struct StreamOptions {
  double lower = 0;
  double upper = 0;
  double alpha = 0;  // rank error alpha n of the sketch, in (0, 1/2]
  double bins = kDefaultStreamBins;  // DPHistGK's finest bins
};

struct StreamReleaseRequest {
  std::vector<double> quantiles;
  std::optional<double> epsilon;
  std::optional<double> rho;
  // The default: DPHistGK (accurate, add/remove one value); "exp-gk" by name.
  std::string method = "hist-gk";                       // or "exp-gk"
  std::vector<std::pair<std::string, double>> options;  // hist-gk: bins
  std::optional<uint64_t> seed;                         // NOT private
};

class QuantileStream {
 public:
  static StatusOr<QuantileStream> Create(const StreamOptions& options);
  // CORRUPT_DATA for bytes Serialize did not write.
  static StatusOr<QuantileStream> Deserialize(const uint8_t* bytes,
                                              size_t size);

  // Adds values; NON_FINITE_VALUE names the first bad one's index, and then
  // nothing of this chunk is added. Values outside the bounds are clamped.
  Status Push(const double* values, size_t count);
  // Merges `other`'s sketch into this one (gk_sketch.h, GkSketch::Merge):
  // this stream then summarises both streams' values with the same alpha,
  // and its releases keep their guarantees (the sketch invariants they rest
  // on hold at the merged count; bin counts add exactly). `other` is not
  // changed. INVALID_OPTION unless lower, upper, alpha and bins match.
  Status Merge(const QuantileStream& other) {
    return sketch_.Merge(other.sketch_);
  }
  uint64_t count() const { return sketch_.count(); }
  size_t MemoryBytes() const { return sketch_.MemoryBytes(); }
  std::vector<uint8_t> Serialize() { return sketch_.Serialize(); }

  // One private value per quantile into out, in the order requested; with a
  // session, refused before the sketch is read when it would not fit, and
  // charged when it succeeds.
  StatusOr<ReleaseReport> Release(const StreamReleaseRequest& request,
                                  double* out,
                                  PrivacySession* session = nullptr);

  GkSketch& sketch() { return sketch_; }

 private:
  explicit QuantileStream(GkSketch sketch) : sketch_(std::move(sketch)) {}
  GkSketch sketch_;
};

}  // namespace dpq

#endif  // DPQ_CORE_STREAM_H_
