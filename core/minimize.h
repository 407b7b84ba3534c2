// Golden-section search for the least value of a unimodal function on an
// interval. Callers use it where any point gives a valid bound (a Chernoff
// parameter, a Renyi order): the search only needs to be good, and the
// value at the point returned is what counts. Not privacy-relevant.
#ifndef DPQ_CORE_MINIMIZE_H_
#define DPQ_CORE_MINIMIZE_H_

#include <cmath>

namespace dpq {

// The point of [low, high] with the least f found by golden-section search
// (at most `iterations` steps, stopping once the interval is narrower than
// `tolerance`).
template <typename F>
double GoldenSectionMinimum(F f, double low, double high, int iterations,
                            double tolerance = 0) {
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double a = high - golden * (high - low);
  double b = low + golden * (high - low);
  double fa = f(a);
  double fb = f(b);
  for (int i = 0; i < iterations && high - low > tolerance; ++i) {
    if (fa < fb) {
      high = b;
      b = a;
      fb = fa;
      a = high - golden * (high - low);
      fa = f(a);
    } else {
      low = a;
      a = b;
      fa = fb;
      b = low + golden * (high - low);
      fb = f(b);
    }
  }
  return fa < fb ? a : b;
}

}  // namespace dpq

#endif  // DPQ_CORE_MINIMIZE_H_
