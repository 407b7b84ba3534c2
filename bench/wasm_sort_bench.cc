// The floor for AQ in WASM: std::sort of the same 10^6 doubles, timed inside
// the WASM module. Run by bench/wasm-bench.mjs; prints milliseconds as JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/random.h"

int main() {
  dpq::SeededRandom rng(1);
  std::vector<double> data(1000000);
  for (double& x : data) x = 100 * dpq::UniformDouble(rng);
  std::vector<double> times;
  for (int run = 0; run < 9; ++run) {
    std::vector<double> copy = data;
    const auto start = std::chrono::steady_clock::now();
    std::sort(copy.begin(), copy.end());
    const auto stop = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(times.begin(), times.end());
  std::printf("{\"sortMs\": %.3f}\n", times[times.size() / 2]);
  return 0;
}
