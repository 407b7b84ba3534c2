#include "core/gk_sketch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "core/prepare.h"

namespace dpq {
namespace {

__extension__ typedef unsigned __int128 Wide;

constexpr char kMagic[5] = {'D', 'P', 'Q', 'G', 'K'};
constexpr uint8_t kVersion = 1;
constexpr size_t kHeaderBytes = 5 + 1 + 8 * 7;  // magic, version, 7 fields
constexpr size_t kTupleBytes = 24;
constexpr int64_t kMaxBins = int64_t{1} << 20;

void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

uint64_t DoubleBits(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

double BitsDouble(uint64_t bits) {
  double x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

// FNV-1a, 64 bits: catches truncation and bit flips; not a security measure
// (a sketch is raw data and stays with its owner).
uint64_t Checksum(const uint8_t* bytes, size_t size) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

Status Corrupt(const std::string& why) {
  return Status(StatusCode::kCorruptData, "not a valid sketch: " + why);
}

// Sorts cells in [0, 2^bits): RadixSort for batches large enough to repay
// its counting passes, std::sort otherwise (the same order).
void SortCells(std::vector<int64_t>* cells, std::vector<int64_t>* scratch,
               int bits) {
  const size_t passes =
      static_cast<size_t>((bits + kRadixDigitBits - 1) / kRadixDigitBits);
  if (cells->size() < passes * (size_t{1} << kRadixDigitBits) / 4) {
    std::sort(cells->begin(), cells->end());
    return;
  }
  RadixSort(cells, scratch, bits);
}

}  // namespace

double MaxSketchBytes(double alpha, double bins) {
  // GK's bound (11 / (2 alpha)) log2(2 alpha n) tuples at the largest n we
  // accept, one more tuple per bin edge merges never cross, and the batch.
  const double n = static_cast<double>(kMaxRecords);
  const double tuples =
      11 / (2 * alpha) * std::log2(std::max(2.0, 2 * alpha * n)) + 2 * bins;
  // The batch and the radix sort's second buffer.
  return tuples * kTupleBytes +
         16 * std::min(std::ceil(1 / (2 * alpha)), 65536.0);
}

Status ValidateGkParameters(double alpha, double bins, int64_t steps) {
  if (!std::isfinite(alpha) || !(alpha > 0) || alpha > 0.5) {
    return Status(StatusCode::kInvalidOption,
                  "alpha must be a number in (0, 0.5]");
  }
  if (MaxSketchBytes(alpha, std::max(bins, 1.0)) > kMaxSketchBytes) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "alpha %g could make the sketch need %.3g MiB, above the "
                  "%g MiB a sketch may use; use alpha >= 2e-5",
                  alpha, MaxSketchBytes(alpha, bins) / 1048576.0,
                  kMaxSketchBytes / 1048576.0);
    return Status(StatusCode::kTooLarge, text);
  }
  if (!(bins >= 1 && bins <= static_cast<double>(kMaxBins)) ||
      bins != std::floor(bins) || bins > static_cast<double>(steps)) {
    return Status(StatusCode::kInvalidOption,
                  "bins must be a whole number from 1 to 2^20");
  }
  return Status::Ok();
}

GkSketch::GkSketch(double lower, double upper, double alpha, int64_t bins)
    : lower_(lower),
      upper_(upper),
      alpha_(alpha),
      steps_(OutputGrid::ForBounds(lower, upper).steps()),
      bins_(bins) {
  while ((int64_t{1} << steps_log2_) < steps_) ++steps_log2_;
  int bins_log2 = 0;
  while ((int64_t{1} << bins_log2) < bins_) ++bins_log2;
  if ((int64_t{1} << bins_log2) == bins_ && bins_log2 <= steps_log2_) {
    bins_shift_ = steps_log2_ - bins_log2;
  }
  const double batch = std::ceil(1 / (2 * alpha));
  buffer_limit_ = static_cast<size_t>(std::min(std::max(batch, 64.0), 65536.0));
}

int64_t GkSketch::BinOf(int64_t cell) const {
  // steps is a power of two (OutputGrid::ForBounds): shift, do not divide;
  // with a power-of-two bin count (the default) a single shift does it, and
  // WASM has no 128-bit multiply.
  if (bins_shift_ >= 0) return cell >> bins_shift_;
  return static_cast<int64_t>((static_cast<Wide>(cell) * bins_) >> steps_log2_);
}

uint64_t GkSketch::Capacity() const {
  const double capacity = std::floor(2 * alpha_ * static_cast<double>(count_));
  return std::max<uint64_t>(1, static_cast<uint64_t>(capacity));
}

size_t GkSketch::MemoryBytes() const {
  return sizeof(*this) + tuples_.capacity() * sizeof(GkTuple) +
         (buffer_.capacity() + scratch_.capacity()) * sizeof(int64_t);
}

void GkSketch::Insert(int64_t cell) {
  if (buffer_.capacity() < buffer_limit_) buffer_.reserve(buffer_limit_);
  buffer_.push_back(cell);
  ++count_;
  if (buffer_.size() >= buffer_limit_) Flush();
}

void GkSketch::Flush() {
  if (buffer_.empty()) return;
  SortCells(&buffer_, &scratch_, steps_log2_);
  MergeBatchAndCompress();
}

void GkSketch::MergeBatchAndCompress() {
  // One pass from the right, in place: tuples_[out, total) is the finished
  // part, and the existing tuples still to read sit below index t <= out.
  // A new tuple's delta comes from its successor in merged order before
  // compression (the element produced just before it), as a separate merge
  // would give. COMPRESS: merge the element into its right neighbour while
  // the result keeps g + delta <= floor(2 alpha n), within a bin, never
  // merging the first element (the minimum) or into the last (the maximum).
  // The result is that of merging and then compressing.
  const size_t old_size = tuples_.size();
  const size_t total = old_size + buffer_.size();
  if (tuples_.capacity() < total) tuples_.reserve(total);  // exactly total
  tuples_.resize(total);
  const uint64_t capacity = Capacity();
  const bool compress = total >= 3;
  size_t out = total;
  size_t t = old_size;
  size_t b = buffer_.size();
  bool has_successor = false;
  uint64_t successor_g = 0;
  uint64_t successor_delta = 0;
  int64_t right_bin = 0;
  while (t > 0 || b > 0) {
    GkTuple current;
    // Existing tuples with values greater than the new value come first
    // (from the right): a new value goes after equal ones (stable order).
    if (b == 0 || (t > 0 && tuples_[t - 1].value > buffer_[b - 1])) {
      current = tuples_[--t];
    } else {
      current.value = buffer_[--b];
      current.g = 1;
      const bool new_minimum = t == 0 && b == 0;
      current.delta =
          !has_successor || new_minimum ? 0 : successor_g + successor_delta - 1;
    }
    has_successor = true;
    successor_g = current.g;
    successor_delta = current.delta;
    const bool first = t == 0 && b == 0;  // the minimum: never merged
    const bool right_is_last = out == total - 1;
    const int64_t bin = BinOf(current.value);
    if (compress && out < total && !first && !right_is_last &&
        bin == right_bin &&
        current.g + tuples_[out].g + tuples_[out].delta <= capacity) {
      tuples_[out].g += current.g;
    } else {
      tuples_[--out] = current;
      right_bin = bin;
    }
  }
  // The finished tuples move to the front in pieces of `out`, so no piece
  // overlaps its destination: Emscripten's memmove (erase's) copies an
  // overlapping block 4 bytes at a time, its memcpy a large one at the
  // engine's speed (8% of a stream's pushes in WebAssembly went to the
  // memmove).
  const size_t kept = total - out;
  if (out > 0) {
    for (size_t done = 0; done < kept; done += out) {
      std::memcpy(&tuples_[done], &tuples_[out + done],
                  std::min(out, kept - done) * sizeof(GkTuple));
    }
    tuples_.resize(kept);
  }
  buffer_.clear();
}

Status GkSketch::Merge(GkSketch other) {
  if (other.lower_ != lower_ || other.upper_ != upper_ ||
      other.alpha_ != alpha_ || other.bins_ != bins_) {
    return Status(StatusCode::kInvalidOption,
                  "only streams with the same lower, upper, alpha and bins "
                  "can be merged");
  }
  Flush();
  other.Flush();
  const std::vector<GkTuple>& a = tuples_;
  const std::vector<GkTuple>& b = other.tuples_;
  // Rank bounds of each tuple within its own sketch.
  auto bounds = [](const std::vector<GkTuple>& tuples) {
    std::vector<std::pair<uint64_t, uint64_t>> out(tuples.size());
    uint64_t r_min = 0;
    for (size_t i = 0; i < tuples.size(); ++i) {
      r_min += tuples[i].g;
      out[i] = {r_min, r_min + tuples[i].delta};
    }
    return out;
  };
  const auto ra = bounds(a);
  const auto rb = bounds(b);
  const uint64_t na = count_;
  const uint64_t nb = other.count_;
  std::vector<GkTuple> merged;
  merged.reserve(a.size() + b.size());
  uint64_t previous_min = 0;
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() || j < b.size()) {
    // This sketch's tuple first at equal values (stable: `other` is later).
    const bool from_a =
        j == b.size() || (i < a.size() && a[i].value <= b[j].value);
    uint64_t r_min;
    uint64_t r_max;
    int64_t value;
    if (from_a) {
      value = a[i].value;
      r_min = ra[i].first + (j > 0 ? rb[j - 1].first : 0);
      r_max = ra[i].second + (j < b.size() ? rb[j].second - 1 : nb);
      ++i;
    } else {
      value = b[j].value;
      r_min = rb[j].first + (i > 0 ? ra[i - 1].first : 0);
      r_max = rb[j].second + (i < a.size() ? ra[i].second - 1 : na);
      ++j;
    }
    merged.push_back({value, r_min - previous_min, r_max - r_min});
    previous_min = r_min;
  }
  tuples_.swap(merged);
  count_ = na + nb;
  MergeBatchAndCompress();  // the batch is empty (both flushed): COMPRESS
  return Status::Ok();
}

int64_t GkSketch::QuantileValue(uint64_t rank) {
  Flush();
  int64_t best = tuples_.empty() ? 0 : tuples_[0].value;
  uint64_t best_error = UINT64_MAX;
  uint64_t r_min = 0;
  for (const GkTuple& tuple : tuples_) {
    r_min += tuple.g;
    const uint64_t r_max = r_min + tuple.delta;
    const uint64_t error = std::max(rank > r_min ? rank - r_min : 0,
                                    r_max > rank ? r_max - rank : 0);
    if (error < best_error) {
      best_error = error;
      best = tuple.value;
    }
  }
  return best;
}

std::vector<uint8_t> GkSketch::Serialize() {
  Flush();
  std::vector<uint8_t> out(kMagic, kMagic + 5);
  out.push_back(kVersion);
  PutU64(out, DoubleBits(lower_));
  PutU64(out, DoubleBits(upper_));
  PutU64(out, DoubleBits(alpha_));
  PutU64(out, static_cast<uint64_t>(steps_));
  PutU64(out, static_cast<uint64_t>(bins_));
  PutU64(out, count_);
  PutU64(out, tuples_.size());
  for (const GkTuple& tuple : tuples_) {
    PutU64(out, static_cast<uint64_t>(tuple.value));
    PutU64(out, tuple.g);
    PutU64(out, tuple.delta);
  }
  PutU64(out, Checksum(out.data(), out.size()));
  return out;
}

StatusOr<GkSketch> GkSketch::Deserialize(const uint8_t* bytes, size_t size) {
  if (bytes == nullptr || size < kHeaderBytes + 8) return Corrupt("too short");
  if (std::memcmp(bytes, kMagic, 5) != 0) return Corrupt("wrong magic bytes");
  if (bytes[5] != kVersion) {
    return Corrupt("unknown version " + std::to_string(bytes[5]));
  }
  if (GetU64(bytes + size - 8) != Checksum(bytes, size - 8)) {
    return Corrupt("checksum mismatch (truncated or altered)");
  }
  const double lower = BitsDouble(GetU64(bytes + 6));
  const double upper = BitsDouble(GetU64(bytes + 14));
  const double alpha = BitsDouble(GetU64(bytes + 22));
  const int64_t steps = static_cast<int64_t>(GetU64(bytes + 30));
  const int64_t bins = static_cast<int64_t>(GetU64(bytes + 38));
  const uint64_t count = GetU64(bytes + 46);
  const uint64_t tuples = GetU64(bytes + 54);
  if (!ValidateBounds(lower, upper).ok() ||
      steps != OutputGrid::ForBounds(lower, upper).steps() ||
      !ValidateGkParameters(alpha, static_cast<double>(bins), steps).ok()) {
    return Corrupt("parameters out of range");
  }
  if (tuples > (size - kHeaderBytes - 8) / kTupleBytes ||
      kHeaderBytes + tuples * kTupleBytes + 8 != size) {
    return Corrupt("length does not match the tuple count");
  }
  GkSketch sketch(lower, upper, alpha, bins);
  sketch.count_ = count;
  sketch.tuples_.resize(tuples);
  uint64_t total = 0;
  const uint64_t capacity = sketch.Capacity();
  for (uint64_t i = 0; i < tuples; ++i) {
    const uint8_t* p = bytes + kHeaderBytes + i * kTupleBytes;
    GkTuple& tuple = sketch.tuples_[i];
    tuple.value = static_cast<int64_t>(GetU64(p));
    tuple.g = GetU64(p + 8);
    tuple.delta = GetU64(p + 16);
    if (tuple.value < 0 || tuple.value >= steps ||
        (i > 0 && tuple.value < sketch.tuples_[i - 1].value)) {
      return Corrupt("tuple values out of order or out of range");
    }
    if (tuple.g == 0 || tuple.g > count || tuple.delta > count ||
        tuple.g + tuple.delta > capacity) {
      return Corrupt("tuple breaks g + delta <= 2 alpha n");
    }
    total += tuple.g;
    if (total > count) return Corrupt("tuple counts exceed n");
  }
  if (total != count) return Corrupt("tuple counts do not add up to n");
  return sketch;
}

}  // namespace dpq
