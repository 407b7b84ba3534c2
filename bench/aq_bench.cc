// Native speed of AQ at n = 10^6 next to sorting the same data alone (the
// floor: AQ must sort). Prints numbers; no timing is asserted.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "core/random.h"
#include "core/release.h"

namespace {

std::vector<double> MakeData(size_t n) {
  dpq::SeededRandom rng(1);
  std::vector<double> data(n);
  for (double& x : data) x = 100 * dpq::UniformDouble(rng);
  return data;
}

void BM_SortOnly(benchmark::State& state) {
  const std::vector<double> data = MakeData(state.range(0));
  std::vector<double> copy;
  for (auto _ : state) {
    copy = data;
    std::sort(copy.begin(), copy.end());
    benchmark::DoNotOptimize(copy.data());
  }
}
BENCHMARK(BM_SortOnly)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_AqRelease(benchmark::State& state) {
  const std::vector<double> data = MakeData(state.range(0));
  const size_t m = state.range(1);
  dpq::ReleaseRequest request;
  request.lower = 0;
  request.upper = 100;
  request.epsilon = 1.0;
  for (size_t i = 1; i <= m; ++i) request.quantiles.push_back(i / (m + 1.0));
  std::vector<double> copy, out(m);
  for (auto _ : state) {
    copy = data;
    auto report =
        dpq::ReleaseQuantiles(copy.data(), copy.size(), request, out.data());
    benchmark::DoNotOptimize(report.ok());
  }
}
BENCHMARK(BM_AqRelease)
    ->Args({1000000, 1})
    ->Args({1000000, 10})
    ->Args({1000000, 100})
    ->Args({1000000, 1000})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
