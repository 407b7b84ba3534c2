// Private bounds: a range [lower, upper] for data whose range is unknown,
// estimated from a noisy histogram on a signed base-two scale (the idea of
// Google's ApproxBounds), so that a quantile release can use it as its public
// bounds. Never reads the data's minimum or maximum.
//
// Bins, in value order: for e from kMaxBoundsExponent down to
// kMinBoundsExponent the negative bin (-2^(e+1), -2^e]; the zero bin
// (-2^kMinBoundsExponent, 2^kMinBoundsExponent); for e from
// kMinBoundsExponent up the positive bin [2^e, 2^(e+1)). K = 2 (1023 + 50 + 1)
// + 1 = 2149 bins cover every finite double. Each count gets exact discrete
// Laplace noise of scale >= 1 / epsilon (or discrete Gaussian noise of
// variance >= 1 / (2 rho)); a bin "clears" when its noisy count reaches the
// threshold tau, chosen so that the chance that any empty bin clears is at
// most kBoundsFailure (Laplace: tau = ceil(t ln(K / beta)), since
// P(noise >= tau) <= exp(-tau / t); Gaussian: tau = ceil(sigma sqrt(2
// ln(K / beta)))). The released range runs from the lower edge of the lowest
// bin that counts to the upper edge of the highest: a bin counts when it
// clears and is the zero bin, or has another clearing bin near it, or
// reaches the higher threshold for kBoundsIsolatedFailure; when none counts,
// the clearing bin with the largest noisy count does.
//
// Guarantee: epsilon-DP (or rho-zCDP) under add/remove-one-record
// neighbours. Proof: a record falls in exactly one bin, so the count vector
// has L1 (and L2) sensitivity 1; discrete Laplace noise of scale 1 / epsilon
// per count is epsilon-DP for it (and discrete Gaussian of variance
// 1 / (2 rho) is rho-zCDP; CKS 2020), and the range, or the error when no bin
// clears, is post-processing.
//
// Failure modes: a tail of the data spread thinly over many bins (fewer than
// about tau values per bin) is cut off; an empty bin may clear (probability
// at most kBoundsFailure) and widen the range; with too few values for the
// budget no bin clears and the result is NOT_ENOUGH_DATA (itself a private
// answer).
#ifndef DPQ_CORE_BOUNDS_H_
#define DPQ_CORE_BOUNDS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/privacy.h"
#include "core/random.h"
#include "core/session.h"
#include "core/status.h"

namespace dpq {

// Bin range (privacy-neutral: public constants).
constexpr int kMinBoundsExponent = -50;
constexpr int kMaxBoundsExponent = 1023;
// The chance that some empty bin clears the threshold. Not privacy-relevant.
constexpr double kBoundsFailure = 0.05;
// A cleared bin with no other cleared bin within kBoundsNearBins (and not
// the zero bin) counts only when it reaches the threshold for this chance:
// an empty bin far from the data, which clears tau with probability up to
// kBoundsFailure, made the range absurd (an upper bound of 2e276 for
// temperatures); one must now reach about twice tau. Post-processing of the
// noisy counts with public constants: not privacy-relevant.
constexpr double kBoundsIsolatedFailure = 1e-6;
constexpr int kBoundsNearBins = 2;

struct BoundsEstimate {
  double lower = 0;
  double upper = 0;
  int64_t threshold = 0;  // tau
  PrivacyBudget spent;
};

// The bin of a finite value (0 .. BoundsBinCount() - 1) and its edges.
int BoundsBinCount();
int BoundsBin(double value);
double BoundsBinLower(int bin);
double BoundsBinUpper(int bin);

// The threshold for a noise distribution and K bins.
int64_t BoundsThreshold(const PrivacyBudget& budget, int bins);

// Estimates bounds for values[0, n) (not modified). `budget` is pure epsilon
// or rho. With a session, checks it before reading the data and charges it
// after (also when no bin clears: that answer was released too).
StatusOr<BoundsEstimate> EstimateBounds(const double* values, size_t n,
                                        const PrivacyBudget& budget,
                                        RandomSource& rng,
                                        PrivacySession* session = nullptr);

// The request form the bindings use: exactly one of epsilon and rho; a seed
// makes it reproducible and NOT private (tests only).
//
// Per person (contributions.h): with `users` (parallel to the values, not
// owned) and `max_contributions` k, each person keeps at most k values (a
// uniform random subset) and the counts get the noise of the per-record
// budget (scale k / epsilon, or variance k^2 / (2 rho)): one person changes
// at most k counts by one, or one count by k, so the counts' L1 and L2
// sensitivity to a person is at most k. The guarantee is then for adding or
// removing one person, and a session charges it as a per-person release.
struct BoundsRequest {
  std::optional<double> epsilon;
  std::optional<double> rho;
  std::optional<uint64_t> seed;
  const uint32_t* users = nullptr;
  std::optional<double> max_contributions;
};
struct BoundsReport {
  BoundsEstimate estimate;
  bool seeded = false;
  // "add-remove", or "add-remove-user" with the k each person kept.
  std::string neighbouring = "add-remove";
  int64_t max_contributions = 0;
};
StatusOr<BoundsReport> ReleaseBounds(const double* values, size_t n,
                                     const BoundsRequest& request,
                                     PrivacySession* session = nullptr);

// The exact probability that a bin holding `count` values clears the
// threshold (for the tests and the privacy check).
double BoundsClearProbability(const PrivacyBudget& budget, int64_t count);

}  // namespace dpq

#endif  // DPQ_CORE_BOUNDS_H_
