// Fuzzes the release entry points (ReleaseQuantiles, ReleaseFromCounts,
// ReleaseByGroup and its counts, SanitizeSample) and
// their option parsing: any bytes must give a release or a Status, never a
// crash, a sanitizer report or a hang. Sizes stay small (what the fuzzer
// looks for is bad handling, not slow but valid work).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/groups.h"
#include "core/release.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

const char* const kMethods[] = {
    "aq",          "jointexp",  "inverse-sensitivity",
    "hs-jointexp", "appindexp", "aggtree",
    "tree-cdf",    "nonesuch"};
const char* const kNumberOptions[] = {"step",   "delta", "scale", "branching",
                                      "height", "cells", "bins",  "quantile"};
const char* const kTextOptions[] = {"jitter", "budget", "aggregation", "step"};
const char* const kTexts[] = {"uniform", "gaussian", "min-variance", "none",
                              "honaker", "",         "laplace"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  dpq::fuzz::FuzzInput in(bytes, size);
  dpq::ReleaseRequest request;
  request.method = kMethods[in.Byte() % 8];
  request.lower = in.Number();
  request.upper = in.Number();
  const size_t m = in.Byte() % 9;
  for (size_t i = 0; i < m; ++i) request.quantiles.push_back(in.Number());
  const uint8_t budget = in.Byte();
  if (budget & 1) request.epsilon = in.Number();
  if (budget & 2) request.rho = in.Number();
  if (budget & 4) request.seed = in.Byte();
  const size_t options = in.Byte() % 4;
  for (size_t i = 0; i < options; ++i) {
    if (in.Byte() % 2) {
      const char* name = kNumberOptions[in.Byte() % 8];
      double value = in.Number();
      // Keep the trees small: a huge valid tree is slow, not wrong.
      const std::string n = name;
      if (n == "height" && value > 6) value = 6;
      if (n == "branching" && value > 8) value = 8;
      if (n == "cells" && value > 4096) value = 4096;
      request.options.push_back({name, value});
    } else {
      request.text_options.push_back(
          {kTextOptions[in.Byte() % 4], kTexts[in.Byte() % 7]});
    }
  }
  // A step finer than 10^-4 of the range is valid but gives huge grids for
  // JointExp's sampler to walk; keep it coarse.
  for (auto& option : request.options) {
    if (option.first == "step" && option.second > 0 &&
        option.second < 1e-4 * (request.upper - request.lower)) {
      option.second = 1e-4 * (request.upper - request.lower);
    }
  }
  std::vector<double> data;
  const size_t n = in.Byte() % 65;
  for (size_t i = 0; i < n; ++i) data.push_back(in.Number());
  // Buckets: sometimes on the raw path, and the counts path always.
  const uint8_t bucketing = in.Byte();
  if (bucketing & 1) {
    // Fine bucket grids are valid but slow for JointExp, as with step.
    const double b = in.Number();
    request.buckets = b > 1e4 && b <= 67108864.0 ? 1e4 : b;
  }

  std::vector<double> out(request.quantiles.size() + 1, 0);
  std::vector<double> scratch = data;
  const dpq::StatusOr<dpq::ReleaseReport> report = dpq::ReleaseQuantiles(
      scratch.data(), scratch.size(), request, out.data());
  if (report.ok()) {
    // Released values stay inside the bounds.
    for (size_t i = 0; i < request.quantiles.size(); ++i) {
      if (!(out[i] >= request.lower && out[i] <= request.upper))
        __builtin_trap();
    }
  }

  // Counts: any doubles, except that valid ones above 100 (and below what
  // TOO_LARGE refuses unread) are capped, so expansion stays small.
  std::vector<double> counts;
  const size_t buckets = in.Byte() % 40;
  for (size_t i = 0; i < buckets; ++i) {
    double c = in.Number();
    if (c > 100 && c < 4294967296.0) c = 100;
    counts.push_back(c);
  }
  dpq::ReleaseRequest from_counts = request;
  from_counts.buckets.reset();
  if (bucketing & 2) from_counts.buckets = static_cast<double>(buckets);
  const dpq::StatusOr<dpq::ReleaseReport> counted = dpq::ReleaseFromCounts(
      counts.data(), counts.size(), from_counts, out.data());
  if (counted.ok()) {
    for (size_t i = 0; i < request.quantiles.size(); ++i) {
      if (!(out[i] >= request.lower && out[i] <= request.upper))
        __builtin_trap();
    }
  }

  // Grouped: the same request over up to 4 keys (public or private), the
  // codes from the input, some out of range (left out); and the same
  // groups' counts.
  dpq::GroupRequest grouped;
  grouped.release = request;
  grouped.release.buckets.reset();
  grouped.keys = in.Byte() % 5;
  const uint8_t keying = in.Byte();
  grouped.private_keys = (keying & 1) != 0;
  if (keying & 2) grouped.delta = in.Number();
  if (keying & 4) grouped.selection_share = in.Number();
  std::vector<unsigned char> codes(8 * (data.size() + 1));
  std::vector<uint32_t> keys;
  for (size_t i = 0; i < data.size(); ++i) {
    const uint32_t code = in.Byte() % 6;
    std::memcpy(codes.data() + 4 * i, &code, 4);
    keys.push_back(code);
  }
  std::vector<double> grouped_out(
      (grouped.keys + 1) * (request.quantiles.size() + 1), 0);
  scratch = data;
  const dpq::StatusOr<dpq::GroupedReport> by_group =
      dpq::ReleaseByGroup(scratch.data(), codes.data(), scratch.size(), grouped,
                          grouped_out.data());
  if (by_group.ok()) {
    for (size_t key = 0; key < grouped.keys; ++key) {
      if (by_group.value().released[key] == 0) continue;
      for (size_t i = 0; i < request.quantiles.size(); ++i) {
        const double v = grouped_out[key * request.quantiles.size() + i];
        if (!(v >= request.lower && v <= request.upper)) __builtin_trap();
      }
    }
  }
  std::vector<double> group_buckets;
  std::vector<double> group_counts;
  for (size_t i = 0; i < keys.size(); ++i) {
    group_buckets.push_back(in.Number());
    double c = in.Number();
    if (c > 100 && c < 4294967296.0) c = 100;
    group_counts.push_back(c);
  }
  (void)dpq::ReleaseByGroupFromCounts(
      keys.data(), group_buckets.data(), group_counts.data(), keys.size(),
      1 + in.Byte() % 50, grouped, grouped_out.data());

  dpq::SanitizeRequest sanitize;
  sanitize.lower = request.lower;
  sanitize.upper = request.upper;
  sanitize.epsilon = request.epsilon;
  sanitize.rho = request.rho;
  sanitize.seed = request.seed;
  sanitize.size = static_cast<double>(in.Byte() % 33);
  if (in.Byte() % 2) sanitize.step = in.Number();
  const dpq::StatusOr<size_t> count = dpq::SanitizeSize(sanitize.size);
  if (count.ok()) {
    std::vector<double> sample(count.value());
    scratch = data;
    (void)dpq::SanitizeSample(scratch.data(), scratch.size(), sanitize,
                              sample.data());
  }
  return 0;
}
