// Timed inside the WASM module, on the same 10^6 doubles as the native
// benchmarks; run by bench/wasm-bench.mjs, prints milliseconds as JSON.
// - No argument: the floor for AQ in WASM, std::sort of the values.
// - --release: the core's release alone (m = 100, epsilon = 1, a copy of the
//   values then ReleaseQuantiles, as BM_AqRelease does natively), for WASM /
//   native without the package's boundary. A release called from a WASM
//   loop stays in V8's baseline tier (15-17 ms a call here), so this mode is
//   run with node --no-liftoff: the optimized code the package reaches
//   after a few calls.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench/bench_data.h"
#include "core/release.h"

namespace {

double Median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<double> data = dpq_bench::MakeData(1000000);
  std::vector<double> times;
  if (argc > 1 && std::strcmp(argv[1], "--release") == 0) {
    const dpq::ReleaseRequest request =
        dpq_bench::UniformQuantilesRequest("aq", 100);
    std::vector<double> copy;
    std::vector<double> out(request.quantiles.size());
    auto release = [&] {
      copy = data;
      return dpq::ReleaseQuantiles(copy.data(), copy.size(), request,
                                   out.data())
          .ok();
    };
    // A second untimed, as the package's rounds do.
    const auto warm = std::chrono::steady_clock::now();
    while (MillisecondsSince(warm) < 1000) {
      if (!release()) return 1;
    }
    for (int run = 0; run < 9; ++run) {
      const auto start = std::chrono::steady_clock::now();
      if (!release()) return 1;
      times.push_back(MillisecondsSince(start));
    }
    std::printf("{\"releaseMs\": %.3f}\n", Median(times));
    return 0;
  }
  for (int run = 0; run < 9; ++run) {
    std::vector<double> copy = data;
    const auto start = std::chrono::steady_clock::now();
    std::sort(copy.begin(), copy.end());
    times.push_back(MillisecondsSince(start));
  }
  std::printf("{\"sortMs\": %.3f}\n", Median(times));
  return 0;
}
