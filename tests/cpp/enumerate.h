// Exhaustive enumeration of a sampler's random bits, shared by the tests of
// the exact samplers: a scripted source feeds every bit string a trial can
// read (depth-first, extending a prefix only when the trial read past it),
// so each outcome's probability is known exactly up to the mass of the
// prefixes cut off at the depth limit.
#ifndef DPQ_TESTS_CPP_ENUMERATE_H_
#define DPQ_TESTS_CPP_ENUMERATE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "core/bits.h"
#include "core/random.h"

// Under AddressSanitizer a round runs 200 to 600 times slower, so the
// enumerations go 8 bits less deep (256 times fewer strings) and do not
// insist that little mass is left unresolved: every outcome is still
// bounded on both sides, and the sanitizers see every path. Natively and
// in WebAssembly they run in full.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DPQ_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DPQ_TEST_SANITIZED 1
#endif

namespace dpq::testing {

#ifdef DPQ_TEST_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Words from a fixed bit string, then zeros (never used: the reader's limit
// stops a trial that reads past the string).
class ScriptedSource final : public RandomSource {
 public:
  explicit ScriptedSource(const std::vector<int>& bits) : bits_(bits) {}
  uint64_t NextUint64() override {
    uint64_t word = 0;
    for (int i = 0; i < 64; ++i, ++position_) {
      const int bit = position_ < bits_.size() ? bits_[position_] : 0;
      word = (word << 1) | static_cast<uint64_t>(bit);
    }
    return word;
  }

 private:
  const std::vector<int>& bits_;
  size_t position_ = 0;
};

struct Enumeration {
  std::map<int64_t, double> mass;  // outcome -> probability of the leaves
  double unresolved = 0;           // mass of prefixes cut at the depth limit
  size_t leaves = 0;
};

// Every bit string `trial` can read, up to `depth` bits.
inline Enumeration Enumerate(const std::function<int64_t(BitReader&)>& trial,
                             size_t depth) {
  if (kSanitized && depth > 16) depth -= 8;
  Enumeration out;
  std::vector<int> prefix;
  std::function<void()> visit = [&] {
    ScriptedSource source(prefix);
    BitReader bits(source);
    bits.set_limit(prefix.size());  // reading past the prefix stops the trial
    const int64_t outcome = trial(bits);
    const double weight = std::ldexp(1.0, -static_cast<int>(prefix.size()));
    if (bits.consumed() <= prefix.size()) {
      out.mass[outcome] += weight;
      ++out.leaves;
      return;
    }
    if (prefix.size() == depth) {
      out.unresolved += weight;
      return;
    }
    for (int bit : {0, 1}) {
      prefix.push_back(bit);
      visit();
      prefix.pop_back();
    }
  };
  visit();
  return out;
}

}  // namespace dpq::testing

#endif  // DPQ_TESTS_CPP_ENUMERATE_H_
