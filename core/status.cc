#include "core/status.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dpq {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kNonFiniteValue:
      return "NON_FINITE_VALUE";
    case StatusCode::kInvalidBounds:
      return "INVALID_BOUNDS";
    case StatusCode::kInvalidPrivacy:
      return "INVALID_PRIVACY";
    case StatusCode::kInvalidQuantiles:
      return "INVALID_QUANTILES";
    case StatusCode::kUnknownMethod:
      return "UNKNOWN_METHOD";
    case StatusCode::kInvalidOption:
      return "INVALID_OPTION";
    case StatusCode::kTooLarge:
      return "TOO_LARGE";
    case StatusCode::kInvalidState:
      return "INVALID_STATE";
    case StatusCode::kCorruptData:
      return "CORRUPT_DATA";
    case StatusCode::kEntropyUnavailable:
      return "ENTROPY_UNAVAILABLE";
    case StatusCode::kBudgetExceeded:
      return "BUDGET_EXCEEDED";
    case StatusCode::kNotEnoughData:
      return "NOT_ENOUGH_DATA";
    case StatusCode::kInvalidCounts:
      return "INVALID_COUNTS";
  }
  return "UNKNOWN";
}

std::string FormatNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  // The fewest digits that read back exactly; plain notation (10, not
  // 1e+01) for magnitudes from 1e-5 to 1e16, where it is also short.
  const double magnitude = std::fabs(value);
  const bool plain = magnitude == 0 || (magnitude >= 1e-5 && magnitude < 1e16);
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) != value) continue;
    if (!plain || std::strchr(text, 'e') == nullptr) break;
  }
  return text;
}

}  // namespace dpq
