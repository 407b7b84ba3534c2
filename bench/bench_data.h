// What the native and the WASM benchmarks release, so they time the same
// work: 10^6 (or n) values uniform in [0, 100) from seed 1, and m evenly
// spaced quantiles at epsilon = 1.
#ifndef DPQ_BENCH_BENCH_DATA_H_
#define DPQ_BENCH_BENCH_DATA_H_

#include <cstddef>
#include <vector>

#include "core/random.h"
#include "core/release.h"

namespace dpq_bench {

inline std::vector<double> MakeData(size_t n) {
  dpq::SeededRandom rng(1);
  std::vector<double> data(n);
  for (double& x : data) x = 100 * dpq::UniformDouble(rng);
  return data;
}

inline dpq::ReleaseRequest UniformQuantilesRequest(const char* method,
                                                   size_t m) {
  dpq::ReleaseRequest request;
  request.lower = 0;
  request.upper = 100;
  request.epsilon = 1.0;
  request.method = method;
  for (size_t i = 1; i <= m; ++i) request.quantiles.push_back(i / (m + 1.0));
  return request;
}

}  // namespace dpq_bench

#endif  // DPQ_BENCH_BENCH_DATA_H_
