#include "core/decimal.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace dpq {
namespace {

using Limbs = std::vector<uint32_t>;
constexpr uint32_t kBase = 1000000000;  // 10^9 per limb
constexpr uint32_t kPowersOfTen[9] = {
    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

void MultiplySmall(Limbs* limbs, uint32_t factor) {
  uint64_t carry = 0;
  for (uint32_t& limb : *limbs) {
    const uint64_t product = uint64_t{limb} * factor + carry;
    limb = static_cast<uint32_t>(product % kBase);
    carry = product / kBase;
  }
  while (carry > 0) {
    limbs->push_back(static_cast<uint32_t>(carry % kBase));
    carry /= kBase;
  }
}

// Divides in place and returns the remainder.
uint32_t DivideSmall(Limbs* limbs, uint32_t divisor) {
  uint64_t remainder = 0;
  for (size_t i = limbs->size(); i-- > 0;) {
    const uint64_t current = remainder * kBase + (*limbs)[i];
    (*limbs)[i] = static_cast<uint32_t>(current / divisor);
    remainder = current % divisor;
  }
  while (!limbs->empty() && limbs->back() == 0) limbs->pop_back();
  return static_cast<uint32_t>(remainder);
}

int CompareLimbs(const Limbs& a, const Limbs& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

Limbs AddLimbs(const Limbs& a, const Limbs& b) {
  Limbs sum(std::max(a.size(), b.size()) + 1, 0);
  uint32_t carry = 0;
  for (size_t i = 0; i + 1 < sum.size(); ++i) {
    uint32_t digit = carry;
    if (i < a.size()) digit += a[i];
    if (i < b.size()) digit += b[i];
    carry = digit >= kBase ? 1 : 0;
    sum[i] = digit - carry * kBase;
  }
  sum.back() = carry;
  return sum;
}

// a - b for a >= b.
Limbs SubtractLimbs(const Limbs& a, const Limbs& b) {
  Limbs difference = a;
  int64_t borrow = 0;
  for (size_t i = 0; i < difference.size(); ++i) {
    int64_t digit = static_cast<int64_t>(difference[i]) - borrow -
                    (i < b.size() ? static_cast<int64_t>(b[i]) : 0);
    borrow = digit < 0 ? 1 : 0;
    difference[i] = static_cast<uint32_t>(digit + borrow * kBase);
  }
  return difference;
}

Limbs MultiplyLimbs(const Limbs& a, const Limbs& b) {
  if (a.empty() || b.empty()) return {};
  std::vector<uint64_t> wide(a.size() + b.size() + 1, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < b.size(); ++j) {
      const uint64_t current = wide[i + j] + uint64_t{a[i]} * b[j] + carry;
      wide[i + j] = current % kBase;
      carry = current / kBase;
    }
    for (size_t k = i + b.size(); carry > 0; ++k) {
      const uint64_t current = wide[k] + carry;
      wide[k] = current % kBase;
      carry = current / kBase;
    }
  }
  return Limbs(wide.begin(), wide.end());
}

Limbs FromUint64(uint64_t value) {
  Limbs limbs;
  while (value > 0) {
    limbs.push_back(static_cast<uint32_t>(value % kBase));
    value /= kBase;
  }
  return limbs;
}

// The mantissa digits and exponent of "%.*e" output: value = digits x
// 10^exponent.
bool ParseScientific(const char* text, uint64_t* digits, int* exponent) {
  uint64_t value = 0;
  int fraction = 0;
  bool point = false;
  const char* c = text;
  for (; *c != '\0' && *c != 'e'; ++c) {
    if (*c == '.') {
      point = true;
      continue;
    }
    value = value * 10 + static_cast<uint64_t>(*c - '0');
    if (point) ++fraction;
  }
  if (*c != 'e') return false;
  *digits = value;
  *exponent = std::atoi(c + 1) - fraction;
  return true;
}

bool ReadsBackAs(uint64_t digits, int exponent, double x) {
  char text[48];
  std::snprintf(text, sizeof(text), "%llue%d",
                static_cast<unsigned long long>(digits), exponent);
  return std::strtod(text, nullptr) == x;
}

Decimal FromDigits(uint64_t digits, int exponent) {
  return Decimal::Integer(digits).Times(
      *Decimal::Parse("1e" + std::to_string(exponent)));
}

}  // namespace

Decimal Decimal::Integer(uint64_t value) {
  Decimal result;
  result.limbs_ = FromUint64(value);
  result.Normalise();
  return result;
}

Decimal Decimal::Written(double x) {
  if (!(x > 0) || !std::isfinite(x)) return Decimal();
  char text[48];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*e", precision - 1, x);
    uint64_t digits = 0;
    int exponent = 0;
    if (!ParseScientific(text, &digits, &exponent)) continue;
    // The correctly rounded decimal of this length is the nearest; when it
    // does not read back, a neighbour may (the halves of a double's rounding
    // interval differ at powers of two).
    if (std::strtod(text, nullptr) == x) return FromDigits(digits, exponent);
    if (ReadsBackAs(digits + 1, exponent, x))
      return FromDigits(digits + 1, exponent);
    if (digits > 1 && ReadsBackAs(digits - 1, exponent, x))
      return FromDigits(digits - 1, exponent);
  }
  return Exact(x);  // unreachable: 17 digits always read back
}

Decimal Decimal::Exact(double x) {
  if (!(x > 0) || !std::isfinite(x)) return Decimal();
  int binary_exponent = 0;
  const double fraction = std::frexp(x, &binary_exponent);
  auto mantissa = static_cast<uint64_t>(std::ldexp(fraction, 53));
  binary_exponent -= 53;
  while ((mantissa & 1) == 0) {
    mantissa >>= 1;
    ++binary_exponent;
  }
  Decimal result;
  result.limbs_ = FromUint64(mantissa);
  // m 2^e: times 2^e for e >= 0; m 5^-e x 10^e for e < 0.
  for (int left = std::abs(binary_exponent); left > 0;) {
    const int chunk = std::min(left, binary_exponent > 0 ? 29 : 13);
    uint32_t factor = 1;
    for (int i = 0; i < chunk; ++i) factor *= binary_exponent > 0 ? 2 : 5;
    MultiplySmall(&result.limbs_, factor);
    left -= chunk;
  }
  result.exponent_ = binary_exponent < 0 ? binary_exponent : 0;
  result.Normalise();
  return result;
}

std::optional<Decimal> Decimal::Parse(const std::string& text) {
  std::string digits;
  int64_t exponent = 0;
  bool point = false;
  bool any_digit = false;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !point) {
      point = true;
    } else if (c >= '0' && c <= '9') {
      any_digit = true;
      if (!(digits.empty() && c == '0')) digits.push_back(c);
      if (point) --exponent;
    } else {
      break;
    }
  }
  if (!any_digit || digits.size() > 800) return std::nullopt;
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return std::nullopt;
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
      negative = text[i] == '-';
      ++i;
    }
    if (i == text.size()) return std::nullopt;
    int64_t written = 0;
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      written = written * 10 + (text[i] - '0');
      if (written > 100000) return std::nullopt;
    }
    exponent += negative ? -written : written;
  }
  Decimal result;
  // Base-10^9 limbs from the least significant digits up.
  for (size_t end = digits.size(); end > 0;) {
    const size_t start = end >= 9 ? end - 9 : 0;
    result.limbs_.push_back(
        static_cast<uint32_t>(std::stoul(digits.substr(start, end - start))));
    end = start;
  }
  result.exponent_ = exponent;
  result.Normalise();
  return result;
}

void Decimal::Normalise() {
  while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  if (limbs_.empty()) {
    exponent_ = 0;
    return;
  }
  size_t zero_limbs = 0;
  while (limbs_[zero_limbs] == 0) ++zero_limbs;
  limbs_.erase(limbs_.begin(),
               limbs_.begin() + static_cast<std::ptrdiff_t>(zero_limbs));
  exponent_ += 9 * static_cast<int64_t>(zero_limbs);
  while (limbs_[0] % 10 == 0) {
    DivideSmall(&limbs_, 10);
    ++exponent_;
  }
}

Limbs Decimal::LimbsAt(int64_t to) const {
  const int64_t shift = exponent_ - to;
  Limbs limbs(static_cast<size_t>(shift / 9), 0);
  limbs.insert(limbs.end(), limbs_.begin(), limbs_.end());
  MultiplySmall(&limbs, kPowersOfTen[shift % 9]);
  return limbs;
}

Decimal Decimal::Plus(const Decimal& other) const {
  if (IsZero()) return other;
  if (other.IsZero()) return *this;
  const int64_t to = std::min(exponent_, other.exponent_);
  Decimal sum;
  sum.limbs_ = AddLimbs(LimbsAt(to), other.LimbsAt(to));
  sum.exponent_ = to;
  sum.Normalise();
  return sum;
}

Decimal Decimal::Minus(const Decimal& other) const {
  if (other.IsZero()) return *this;
  const int64_t to = std::min(exponent_, other.exponent_);
  Decimal difference;
  difference.limbs_ = SubtractLimbs(LimbsAt(to), other.LimbsAt(to));
  difference.exponent_ = to;
  difference.Normalise();
  return difference;
}

Decimal Decimal::Times(const Decimal& other) const {
  Decimal product;
  product.limbs_ = MultiplyLimbs(limbs_, other.limbs_);
  product.exponent_ = exponent_ + other.exponent_;
  product.Normalise();
  return product;
}

Decimal Decimal::TimesInteger(uint32_t factor) const {
  Decimal product = *this;
  MultiplySmall(&product.limbs_, factor);
  product.Normalise();
  return product;
}

int Decimal::Compare(const Decimal& other) const {
  if (IsZero() || other.IsZero()) {
    return IsZero() ? (other.IsZero() ? 0 : -1) : 1;
  }
  // The position of the leading digit decides unless it is the same.
  const auto leading = [](const Decimal& d) {
    return static_cast<int64_t>(d.Digits().size()) + d.exponent_;
  };
  const int64_t mine = leading(*this);
  const int64_t theirs = leading(other);
  if (mine != theirs) return mine < theirs ? -1 : 1;
  const int64_t to = std::min(exponent_, other.exponent_);
  return CompareLimbs(LimbsAt(to), other.LimbsAt(to));
}

std::string Decimal::Digits() const {
  if (limbs_.empty()) return "0";
  std::string digits = std::to_string(limbs_.back());
  char limb[16];
  for (size_t i = limbs_.size() - 1; i-- > 0;) {
    std::snprintf(limb, sizeof(limb), "%09u", limbs_[i]);
    digits += limb;
  }
  return digits;
}

std::string Decimal::ToString(int max_digits) const {
  if (IsZero()) return "0";
  std::string digits = Digits();
  int64_t exponent = exponent_;
  if (max_digits > 0 && digits.size() > static_cast<size_t>(max_digits)) {
    // Round up: the digits cut off are not all zero (normalised).
    exponent += static_cast<int64_t>(digits.size()) - max_digits;
    digits.resize(static_cast<size_t>(max_digits));
    size_t i = digits.size();
    while (i > 0 && digits[i - 1] == '9') digits[--i] = '0';
    if (i == 0) {
      digits.insert(digits.begin(), '1');
    } else {
      ++digits[i - 1];
    }
    while (digits.size() > 1 && digits.back() == '0') {
      digits.pop_back();
      ++exponent;
    }
  }
  // JavaScript's Number.prototype.toString: k digits, the point after n.
  const auto k = static_cast<int64_t>(digits.size());
  const int64_t n = k + exponent;
  if (k <= n && n <= 21) return digits + std::string(n - k, '0');
  if (0 < n && n <= 21) {
    return digits.substr(0, static_cast<size_t>(n)) + "." +
           digits.substr(static_cast<size_t>(n));
  }
  if (-6 < n && n <= 0) return "0." + std::string(-n, '0') + digits;
  const int64_t e = n - 1;
  std::string text = digits.substr(0, 1);
  if (k > 1) text += "." + digits.substr(1);
  return text + "e" + (e >= 0 ? "+" : "-") + std::to_string(e < 0 ? -e : e);
}

std::optional<int64_t> Decimal::ScaledTo(int64_t places) const {
  constexpr int64_t kMost = int64_t{1} << 62;
  const int64_t shift = exponent_ + places;
  if (IsZero()) return 0;
  if (shift < 0 || shift > 18) return std::nullopt;
  int64_t value = 0;
  for (size_t i = limbs_.size(); i-- > 0;) {
    if (value > (kMost - limbs_[i]) / kBase) return std::nullopt;
    value = value * kBase + limbs_[i];
  }
  for (int64_t i = 0; i < shift; ++i) {
    if (value > kMost / 10) return std::nullopt;
    value *= 10;
  }
  return value;
}

double Decimal::Nearest() const {
  if (IsZero()) return 0;
  return std::strtod(ToString().c_str(), nullptr);
}

double Decimal::Down() const {
  double x = Nearest();
  if (std::isinf(x)) x = DBL_MAX;
  while (x > 0 && *this < Exact(x)) x = std::nextafter(x, 0.0);
  return x;
}

double Decimal::Up() const {
  double x = Nearest();
  while (std::isfinite(x) && Exact(x) < *this) {
    x = std::nextafter(x, std::numeric_limits<double>::infinity());
  }
  return x;
}

}  // namespace dpq
