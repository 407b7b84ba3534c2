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
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  // The fewest significant digits that read back exactly, then written as
  // JavaScript's String(x) writes them (the package prints numbers that
  // way too): plain from 1e-6 up to 1e21, else d.ddde-7 or de+21, with no
  // padded exponent (1e-06 and 0.000001 side by side confused readers).
  char text[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*e", digits - 1, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  const std::string all(text);
  const size_t e = all.find('e');
  const bool negative = all[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (all[i] != '.') digits += all[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exponent = std::atoi(all.c_str() + e + 1);
  const double magnitude = std::fabs(value);
  std::string out = negative ? "-" : "";
  if (magnitude >= 1e-6 && magnitude < 1e21) {
    const int point = exponent + 1;  // digits before the decimal point
    if (point <= 0) {
      out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (static_cast<size_t>(point) >= digits.size()) {
      out +=
          digits + std::string(static_cast<size_t>(point) - digits.size(), '0');
    } else {
      out += digits.substr(0, static_cast<size_t>(point)) + "." +
             digits.substr(static_cast<size_t>(point));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += exponent < 0 ? "e-" : "e+";
  out += std::to_string(exponent < 0 ? -exponent : exponent);
  return out;
}

}  // namespace dpq
