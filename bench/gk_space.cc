// Sketch size against n, for n up to 10^8 values generated on the fly (never
// held), next to the 8 n bytes the full-data mechanisms need: the analogue of
// Table 2 of Alabi, Ben-Eliezer and Chaturvedi. Prints a Markdown table.
#include <cstdio>

#include "core/gk_sketch.h"
#include "core/random.h"

int main() {
  std::printf(
      "| alpha | n | tuples | sketch bytes | full data bytes | saving |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (double alpha : {1e-3, 1e-4}) {
    dpq::GkSketch sketch(0, 1, alpha, 1024);
    dpq::SeededRandom rng(1);
    const uint64_t steps = static_cast<uint64_t>(sketch.steps());
    uint64_t n = 0;
    for (uint64_t target :
         {10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull}) {
      for (; n < target; ++n) {
        sketch.Insert(static_cast<int64_t>(dpq::UniformInteger(rng, steps)));
      }
      sketch.Flush();
      const double full = 8.0 * static_cast<double>(n);
      std::printf("| %g | %llu | %zu | %zu | %.0f | %.2gx |\n", alpha,
                  static_cast<unsigned long long>(n), sketch.tuples().size(),
                  sketch.MemoryBytes(), full,
                  full / static_cast<double>(sketch.MemoryBytes()));
    }
  }
  return 0;
}
