#include "core/privacy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/decimal.h"

namespace dpq {
namespace {

constexpr double kInfinityUp = std::numeric_limits<double>::infinity();
constexpr double kInfinityDown = -std::numeric_limits<double>::infinity();

Status CheckPositiveFinite(const char* name, double value) {
  if (std::isnan(value)) {
    return Status(
        StatusCode::kInvalidPrivacy,
        std::string(name) + " is NaN; it must be a finite number > 0");
  }
  if (!std::isfinite(value)) {
    return Status(
        StatusCode::kInvalidPrivacy,
        std::string(name) + " is infinite; it must be finite and > 0");
  }
  if (value <= 0) {
    return Status(
        StatusCode::kInvalidPrivacy,
        std::string(name) + " is " + FormatNumber(value) + "; it must be > 0");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<PrivacyBudget> MakePrivacyBudget(std::optional<double> epsilon,
                                          std::optional<double> rho) {
  if (epsilon.has_value() && rho.has_value()) {
    return Status(StatusCode::kInvalidPrivacy,
                  "give exactly one of epsilon (pure DP) and rho (zCDP), not "
                  "both");
  }
  if (!epsilon.has_value() && !rho.has_value()) {
    return Status(StatusCode::kInvalidPrivacy,
                  "no privacy budget: give epsilon (pure DP) or rho (zCDP)");
  }
  if (epsilon.has_value()) {
    Status status = CheckPositiveFinite("epsilon", *epsilon);
    if (!status.ok()) return status;
    return PrivacyBudget::Pure(*epsilon);
  }
  Status status = CheckPositiveFinite("rho", *rho);
  if (!status.ok()) return status;
  return PrivacyBudget::Zcdp(*rho);
}

StatusOr<PrivacyBudget> WithDelta(const PrivacyBudget& budget, double delta) {
  if (budget.kind != PrivacyBudget::Kind::kPure) {
    return Status(StatusCode::kInvalidOption,
                  "delta goes with epsilon, not with rho");
  }
  if (!std::isfinite(delta) || !(delta > 0) || !(delta < 1)) {
    return Status(StatusCode::kInvalidOption,
                  "delta must be a number strictly between 0 and 1");
  }
  return PrivacyBudget::Approx(budget.epsilon, delta);
}

double OptimalExponentialCompositionDelta(double epsilon_part, int parts,
                                          double epsilon) {
  const int k = parts;
  const double e = epsilon_part;
  std::vector<double> log_binomial(k + 1);
  for (int i = 0; i <= k; ++i) {
    log_binomial[i] =
        std::lgamma(k + 1.0) - std::lgamma(i + 1.0) - std::lgamma(k - i + 1.0);
  }
  double worst = 0;
  for (int l = 0; l <= k; ++l) {
    // Each part's privacy loss is t (probability p under the neighbouring
    // dataset) or t - e: a randomized response shifted by t.
    const double t =
        std::min(std::max((epsilon + (l + 1) * e) / (k + 1), 0.0), e);
    const double p = (std::exp(-t) - std::exp(-e)) / (1 - std::exp(-e));
    if (!(p > 0)) continue;  // every part has loss t - e = 0: no delta
    const double log_p = std::log(p);
    const double log_not_p = std::log1p(-p);
    double sum = 0;
    for (int i = 0; i <= k; ++i) {
      const double loss = k * t - i * e;  // i parts took the lower loss
      if (loss <= epsilon) break;         // losses decrease with i
      const double log_weight =
          log_binomial[i] + (k - i) * log_p + (i > 0 ? i * log_not_p : 0.0);
      // weight * (e^loss - e^epsilon), in log space.
      sum +=
          std::exp(log_weight + loss + std::log1p(-std::exp(epsilon - loss)));
    }
    worst = std::max(worst, sum);
  }
  return worst;
}

double ProductMinus(double a, double b, double c) {
  constexpr double kLeast = 0x1p-450;
  constexpr double kMost = 0x1p450;
  const double fa = std::fabs(a);
  const double fb = std::fabs(b);
  if (!((fa == 0 || (fa >= kLeast && fa <= kMost)) &&
        (fb == 0 || (fb >= kLeast && fb <= kMost)))) {
    return std::fma(a, b, -c);
  }
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  const double ta = kSplit * a;
  const double a_high = ta - (ta - a);
  const double a_low = a - a_high;
  const double tb = kSplit * b;
  const double b_high = tb - (tb - b);
  const double b_low = b - b_high;
  const double p = a * b;
  const double e =
      ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low;
  return (p - c) + e;
}

double DivideDown(double numerator, double denominator) {
  const double q = numerator / denominator;
  // q - a / b = (q b - a) / b, so q is above a / b exactly when q b - a
  // has the sign of b.
  const double error = ProductMinus(q, denominator, numerator);
  const bool above = denominator > 0 ? error > 0 : error < 0;
  return above ? std::nextafter(q, kInfinityDown) : q;
}

double MultiplyDown(double a, double b) {
  const double p = a * b;
  return ProductMinus(a, b, p) < 0 ? std::nextafter(p, kInfinityDown) : p;
}

double SubtractDown(double a, double b) {
  // TwoSum of a and -b: d plus `error` is a - b exactly, any signs.
  const double d = a - b;
  const double a_part = d + b;
  const double b_part = d - a_part;
  const double error = (a - a_part) + (-b - b_part);
  return error < 0 ? std::nextafter(d, kInfinityDown) : d;
}

double SqrtDown(double x) {
  const double r = std::sqrt(x);
  return ProductMinus(r, r, x) > 0 ? std::nextafter(r, kInfinityDown) : r;
}

double ReciprocalUp(double x) {
  const double r = 1 / x;
  // r x - 1 < 0 means r < 1 / x for x > 0, and r > 1 / x for x < 0.
  const double error = ProductMinus(r, x, 1.0);
  return (x > 0 ? error < 0 : error > 0) ? std::nextafter(r, kInfinityUp) : r;
}

double AddUp(double a, double b) {
  // TwoSum gives the exact rounding error.
  const double sum = a + b;
  const double b_part = sum - a;
  const double a_part = sum - b_part;
  const double error = (a - a_part) + (b - b_part);
  return error > 0 ? std::nextafter(sum, kInfinityUp) : sum;
}

double MultiplyUp(double a, double b) {
  const double product = a * b;
  return ProductMinus(a, b, product) > 0 ? std::nextafter(product, kInfinityUp)
                                         : product;
}

double ExpUp(double x) { return RoundUpUlps(std::exp(x), 3); }

double RoundUpUlps(double x, int ulps) {
  double up = x;
  for (int i = 0; i < ulps; ++i) up = std::nextafter(up, kInfinityUp);
  return up;
}

namespace {

// Decimal::Written(x).Down(), remembering the last few answers: a release
// asks it for the same budget each time, and the decimal (printed, then
// parsed) costs about as much as a small release's draws. A pure
// function, so a remembered answer is the answer.
double DownWritten(double x) {
  if (x == 0) return 0;
  struct Remembered {
    double written = 0;
    double down = 0;
  };
  static thread_local std::array<Remembered, 4> remembered;
  static thread_local size_t next = 0;
  for (const Remembered& r : remembered) {
    if (r.written == x) return r.down;  // x != 0: never an empty slot
  }
  const double down = Decimal::Written(x).Down();
  remembered[next] = {x, down};
  next = (next + 1) % remembered.size();
  return down;
}

}  // namespace

PrivacyBudget AtOrBelowWritten(const PrivacyBudget& written) {
  PrivacyBudget running = written;
  running.epsilon = DownWritten(written.epsilon);
  running.delta = DownWritten(written.delta);
  running.rho = DownWritten(written.rho);
  return running;
}

BudgetSplit SplitBudget(const PrivacyBudget& budget, double share) {
  // Parts of x: share x and the rest, lowered until their sum rounded up is
  // at most x, so that the exact sum is too.
  auto parts = [share](double x) {
    const double part = MultiplyDown(x, share);
    double rest = MultiplyDown(x, 1 - share);
    while (rest > 0 && AddUp(part, rest) > x)
      rest = std::nextafter(rest, kInfinityDown);
    return std::pair<double, double>(rest, part);
  };
  BudgetSplit split{budget, budget};
  if (budget.kind == PrivacyBudget::Kind::kZcdp) {
    const auto [rest, part] = parts(budget.rho);
    split.rest.rho = rest;
    split.share.rho = part;
    return split;
  }
  const auto [rest, part] = parts(budget.epsilon);
  split.rest.epsilon = rest;
  split.share = PrivacyBudget::Pure(part);
  return split;
}

PrivacyBudget WrittenShare(const PrivacyBudget& written, double share) {
  const Decimal fraction = Decimal::Written(share);
  auto part = [&](double x) {
    return Decimal::Written(x).Times(fraction).Nearest();
  };
  if (written.kind == PrivacyBudget::Kind::kZcdp) {
    return PrivacyBudget::Zcdp(part(written.rho));
  }
  return PrivacyBudget::Pure(part(written.epsilon));
}

double ExponentialMechanismEpsilonPerPart(const PrivacyBudget& budget,
                                          int parts) {
  switch (budget.kind) {
    case PrivacyBudget::Kind::kPure:
      return DivideDown(budget.epsilon, parts);
    case PrivacyBudget::Kind::kZcdp:
      // 8 rho is exact (a power of two), unless it overflows to infinity.
      return SqrtDown(DivideDown(8.0 * budget.rho, parts));
    case PrivacyBudget::Kind::kApprox:
      break;
  }
  // Basic composition already meets (epsilon, 0); the delta buys a larger
  // per-part epsilon. The delta is increasing in the per-part epsilon, so
  // bisect and keep the lower end, which always satisfies the target.
  double low = DivideDown(budget.epsilon, parts);
  double high = budget.epsilon;
  if (OptimalExponentialCompositionDelta(high, parts, budget.epsilon) <=
      budget.delta) {
    return high;
  }
  // 1e-9 relative is far below any effect on accuracy; each step costs
  // O(parts^2) (kMaxOptimalCompositionParts bounds it).
  for (int iteration = 0; iteration < 60 && high - low > 1e-9 * high;
       ++iteration) {
    const double middle = (low + high) / 2;
    if (OptimalExponentialCompositionDelta(middle, parts, budget.epsilon) <=
        budget.delta) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

}  // namespace dpq
