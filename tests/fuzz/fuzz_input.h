// Reads typed values off a fuzzer's bytes; past the end every read gives 0.
#ifndef DPQ_TESTS_FUZZ_FUZZ_INPUT_H_
#define DPQ_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dpq::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  // Any double, NaN and infinities included.
  double Double() {
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | Byte();
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  // A double, mostly a tame one: a small whole number, a fraction, or (one
  // time in four) any bit pattern.
  double Number() {
    const uint8_t kind = Byte() % 4;
    if (kind == 0) return Double();
    if (kind == 1) return static_cast<double>(static_cast<int8_t>(Byte()));
    return static_cast<double>(Byte()) / 255.0 * (kind == 2 ? 1 : 200) -
           (kind == 2 ? 0 : 100);
  }
  size_t Remaining() const { return at_ < size_ ? size_ - at_ : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace dpq::fuzz

#endif  // DPQ_TESTS_FUZZ_FUZZ_INPUT_H_
