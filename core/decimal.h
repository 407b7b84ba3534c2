// Exact non-negative decimals for the privacy ledger.
//
// A budget a person writes is a decimal: 0.2 means one fifth, and 0.2 + 0.8
// is exactly 1. Its double is not (fl(0.2) is 1/5 + 1.1e-17), so a ledger of
// doubles refuses the README's own split. The session reads each budget as
// the shortest decimal that reads back as its double (what JavaScript
// prints), adds and compares those exactly here, and the mechanisms run with
// a double at or below the decimal (Down), so the guarantee never exceeds
// what the ledger says.
#ifndef DPQ_CORE_DECIMAL_H_
#define DPQ_CORE_DECIMAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpq {

class Decimal {
 public:
  Decimal() = default;  // 0

  // The shortest decimal that reads back as x (JavaScript's String(x); of two
  // as short, the nearer): the number its writer meant. x finite, >= 0.
  static Decimal Written(double x);
  // The exact value of x (every double is a finite decimal). x finite, >= 0.
  static Decimal Exact(double x);
  static Decimal Integer(uint64_t value);
  // "0.25", "3", "1e-9", "2.5E+3": digits, one optional point, an optional
  // exponent. nullopt for anything else, a sign included, and for more than
  // 800 digits or exponents beyond +-100000 (a ledger never needs them).
  static std::optional<Decimal> Parse(const std::string& text);

  Decimal Plus(const Decimal& other) const;
  // this - other; requires this >= other.
  Decimal Minus(const Decimal& other) const;
  Decimal Times(const Decimal& other) const;
  Decimal TimesInteger(uint32_t factor) const;

  // -1, 0 or 1 as this is below, equal to or above other.
  int Compare(const Decimal& other) const;
  bool operator<=(const Decimal& other) const { return Compare(other) <= 0; }
  bool operator<(const Decimal& other) const { return Compare(other) < 0; }
  bool operator==(const Decimal& other) const { return Compare(other) == 0; }
  bool IsZero() const { return limbs_.empty(); }

  // The largest double <= this (DBL_MAX beyond it): what a mechanism runs
  // with. Privacy-relevant.
  double Down() const;
  // The smallest double >= this (infinity beyond DBL_MAX).
  double Up() const;
  // The nearest double: prints as this decimal when it has at most 15
  // significant digits.
  double Nearest() const;

  // Digits after the decimal point (0 for a whole number).
  int64_t places() const { return exponent_ < 0 ? -exponent_ : 0; }
  // This decimal times 10^places, if that is a whole number below 2^62.
  std::optional<int64_t> ScaledTo(int64_t places) const;

  // As JavaScript prints numbers: "1", "0.3", "1e-7", "1.5e+21". With
  // max_digits > 0, a value of more significant digits is rounded up to
  // max_digits (a bound from above, for messages about overspending).
  std::string ToString(int max_digits = 0) const;

 private:
  // value = limbs_ (base 10^9, least significant first) x 10^exponent_;
  // normalised: no most significant zero limb, no trailing decimal zero, and
  // zero is no limbs with exponent 0.
  std::vector<uint32_t> limbs_;
  int64_t exponent_ = 0;

  void Normalise();
  // limbs_ scaled to the exponent `to` (<= exponent_).
  std::vector<uint32_t> LimbsAt(int64_t to) const;
  std::string Digits() const;
};

}  // namespace dpq

#endif  // DPQ_CORE_DECIMAL_H_
