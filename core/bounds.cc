#include "core/bounds.h"

#include <cfloat>
#include <cmath>
#include <memory>
#include <string>

#include "core/contributions.h"
#include "core/discrete_noise.h"

namespace dpq {
namespace {

// Bins per sign: exponents kMinBoundsExponent..kMaxBoundsExponent.
constexpr int kPerSign = kMaxBoundsExponent - kMinBoundsExponent + 1;

// P(X >= k) for the count noise X, exactly in closed form for Laplace and by
// summing the pmf (to 40 standard deviations past k) for the Gaussian.
double NoiseAtLeast(const CountNoise& noise, int64_t k) {
  if (noise.kind == CountNoise::Kind::kLaplace) {
    const double t = noise.parameter.Value();
    // P(X >= k) = e^(-k/t) / (1 + e^(-1/t)) for k >= 1; symmetric below.
    if (k >= 1)
      return std::exp(-static_cast<double>(k) / t) / (1 + std::exp(-1 / t));
    return 1 -
           std::exp(-static_cast<double>(1 - k) / t) / (1 + std::exp(-1 / t));
  }
  const double sigma = std::sqrt(noise.parameter.Value());
  const int64_t reach = static_cast<int64_t>(std::ceil(40 * sigma)) + 1;
  double sum = 0;
  if (k > 0) {
    for (int64_t x = k; x <= k + reach; ++x) sum += noise.Pmf(x);
    return sum;
  }
  for (int64_t x = k - 1; x >= k - 1 - reach; --x) sum += noise.Pmf(x);
  return 1 - sum;
}

}  // namespace

int BoundsBinCount() { return 2 * kPerSign + 1; }

int BoundsBin(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude < std::ldexp(1.0, kMinBoundsExponent)) return kPerSign;
  int exponent = 0;
  std::frexp(magnitude,
             &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  const int e = exponent - 1;
  const int offset = e - kMinBoundsExponent;  // 0 .. kPerSign - 1
  return value > 0 ? kPerSign + 1 + offset : kPerSign - 1 - offset;
}

double BoundsBinLower(int bin) {
  if (bin == kPerSign) return -std::ldexp(1.0, kMinBoundsExponent);
  if (bin > kPerSign) {
    return std::ldexp(1.0, kMinBoundsExponent + (bin - kPerSign - 1));
  }
  const int e = kMinBoundsExponent + (kPerSign - 1 - bin);
  return e + 1 > kMaxBoundsExponent ? -DBL_MAX : -std::ldexp(1.0, e + 1);
}

double BoundsBinUpper(int bin) {
  if (bin == kPerSign) return std::ldexp(1.0, kMinBoundsExponent);
  if (bin < kPerSign) {
    return -std::ldexp(1.0, kMinBoundsExponent + (kPerSign - 1 - bin));
  }
  const int e = kMinBoundsExponent + (bin - kPerSign - 1);
  return e + 1 > kMaxBoundsExponent ? DBL_MAX : std::ldexp(1.0, e + 1);
}

namespace {

// tau for this noise and K bins (see bounds.h), at failure chance beta.
int64_t ThresholdFor(const CountNoise& noise, int bins,
                     double beta = kBoundsFailure) {
  const double log_ratio = std::log(bins / beta);
  if (noise.kind == CountNoise::Kind::kLaplace) {
    return static_cast<int64_t>(std::ceil(noise.parameter.Value() * log_ratio));
  }
  return static_cast<int64_t>(
      std::ceil(std::sqrt(noise.parameter.Value() * 2 * log_ratio)));
}

}  // namespace

int64_t BoundsThreshold(const PrivacyBudget& budget, int bins) {
  StatusOr<CountNoise> noise = CountNoiseFor(budget);
  return noise.ok() ? ThresholdFor(noise.value(), bins) : 0;
}

double BoundsClearProbability(const PrivacyBudget& budget, int64_t count) {
  StatusOr<CountNoise> noise = CountNoiseFor(budget);
  if (!noise.ok()) return 0;
  return NoiseAtLeast(noise.value(),
                      ThresholdFor(noise.value(), BoundsBinCount()) - count);
}

namespace {

// EstimateBounds with per-person bounding: the session is checked and
// charged `spent` as a `neighbouring` release of k records per person, the
// noise is for `noise_budget`, and with k > 0 each person keeps at most k of
// their values (users[i] is the person of values[i]).
StatusOr<BoundsEstimate> EstimateBoundsFor(
    const double* values, size_t n, const PrivacyBudget& noise_budget,
    const PrivacyBudget& spent, Neighbouring neighbouring, int64_t k,
    const uint32_t* users, RandomSource& rng, PrivacySession* session) {
  if (noise_budget.kind == PrivacyBudget::Kind::kApprox) {
    return Status(StatusCode::kInvalidPrivacy,
                  "private bounds take epsilon or rho, not delta");
  }
  StatusOr<CountNoise> noise = CountNoiseFor(noise_budget);
  if (!noise.ok()) return noise.status();
  if (session != nullptr) {
    Status status = session->Check(spent, neighbouring, k);
    if (!status.ok()) return status;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) {
      return Status(
          StatusCode::kNonFiniteValue,
          "value at index " + std::to_string(i) + " is not a finite number");
    }
  }
  // Per person: at most k values each, from a copy.
  std::vector<double> kept;
  if (k > 0) {
    kept.assign(values, values + n);
    n = BoundContributions(kept.data(), users, n, k, rng);
    values = kept.data();
  }
  std::vector<int64_t> counts(static_cast<size_t>(BoundsBinCount()), 0);
  for (size_t i = 0; i < n; ++i) {
    ++counts[static_cast<size_t>(BoundsBin(values[i]))];
  }
  noise.value().AddTo(&counts, rng);
  if (!rng.healthy()) return EntropyUnavailable();
  if (session != nullptr) {
    // Charged before anything is returned: the noisy counts now exist.
    Status status = session->Charge(spent, neighbouring, k);
    if (!status.ok()) return status;
  }
  BoundsEstimate out;
  out.threshold = ThresholdFor(noise.value(), BoundsBinCount());
  out.spent = spent;
  // The bins that count (bounds.h): an isolated clearing bin must reach
  // the higher threshold, so an empty bin far from the data does not
  // stretch the range. All post-processing of the noisy counts.
  const int64_t isolated_threshold =
      ThresholdFor(noise.value(), BoundsBinCount(), kBoundsIsolatedFailure);
  const int bins = BoundsBinCount();
  auto clears = [&](int b) {
    return b >= 0 && b < bins &&
           counts[static_cast<size_t>(b)] >= out.threshold;
  };
  int low = -1;
  int high = -1;
  int largest = -1;  // the clearing bin with the largest noisy count
  for (int b = 0; b < bins; ++b) {
    if (!clears(b)) continue;
    if (largest < 0 ||
        counts[static_cast<size_t>(b)] > counts[static_cast<size_t>(largest)]) {
      largest = b;
    }
    bool counts_here =
        b == kPerSign || counts[static_cast<size_t>(b)] >= isolated_threshold;
    for (int d = 1; d <= kBoundsNearBins && !counts_here; ++d) {
      counts_here = clears(b - d) || clears(b + d);
    }
    if (!counts_here) continue;
    if (low < 0) low = b;
    high = b;
  }
  if (low < 0) low = high = largest;
  if (low < 0) {
    return Status(StatusCode::kNotEnoughData,
                  "no bin of the private histogram reached its threshold of " +
                      std::to_string(out.threshold) +
                      " values: too few values for this budget to estimate "
                      "bounds (the budget is spent all the same)");
  }
  // The zero bin's edges, +-2^-50, are read as 0 where it is the lowest
  // (or, with negative bins below it, the highest) occupied bin: a lower
  // bound of -8.9e-16 for non-negative data looks wrong and clamps nothing
  // that matters. Post-processing of the noisy counts.
  out.lower = low == kPerSign ? 0 : BoundsBinLower(low);
  out.upper = high == kPerSign && low < kPerSign ? 0 : BoundsBinUpper(high);
  return out;
}

}  // namespace

StatusOr<BoundsEstimate> EstimateBounds(const double* values, size_t n,
                                        const PrivacyBudget& budget,
                                        RandomSource& rng,
                                        PrivacySession* session) {
  return EstimateBoundsFor(values, n, budget, budget, Neighbouring::kAddRemove,
                           0, nullptr, rng, session);
}

StatusOr<BoundsReport> ReleaseBounds(const double* values, size_t n,
                                     const BoundsRequest& request,
                                     PrivacySession* session) {
  StatusOr<PrivacyBudget> budget =
      MakePrivacyBudget(request.epsilon, request.rho);
  if (!budget.ok()) return budget.status();
  if (request.max_contributions.has_value() != (request.users != nullptr)) {
    return Status(StatusCode::kInvalidOption,
                  "users and maxContributions go together: give both to "
                  "protect a person, or neither");
  }
  int64_t k = 0;
  // The noise runs at or below the decimals written (privacy.h).
  PrivacyBudget noise_budget = AtOrBelowWritten(budget.value());
  Neighbouring neighbouring = Neighbouring::kAddRemove;
  if (request.max_contributions.has_value()) {
    StatusOr<int64_t> valid =
        ValidateMaxContributions(*request.max_contributions);
    if (!valid.ok()) return valid.status();
    k = valid.value();
    noise_budget = PerRecordBudget(noise_budget, k);
    neighbouring = Neighbouring::kAddRemoveUser;
  }
  std::unique_ptr<RandomSource> rng = MakeRandomSource(request.seed);
  StatusOr<BoundsEstimate> estimate =
      EstimateBoundsFor(values, n, noise_budget, budget.value(), neighbouring,
                        k, request.users, *rng, session);
  if (!estimate.ok()) return estimate.status();
  BoundsReport report;
  report.estimate = estimate.value();
  report.seeded = request.seed.has_value();
  report.neighbouring = NeighbouringName(neighbouring);
  report.max_contributions = k;
  return report;
}

}  // namespace dpq
