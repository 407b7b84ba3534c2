// Randomness behind one small interface. Mechanisms take a RandomSource&;
// release code picks SecureRandom unless the caller passed a seed.
#ifndef DPQ_CORE_RANDOM_H_
#define DPQ_CORE_RANDOM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/status.h"

namespace dpq {

// Bits a BitReader (bits.h) took from a source's words and did not read:
// the next reader of the source goes on from them, so a release of many
// small draws spends every word it takes (each draw used to drop about a
// word and a half). They were never read, so they are as fresh as the
// next word.
struct SpareBits {
  uint64_t high = 0;  // `left` bits, at the top
  uint64_t low = 0;   // `low_left` more, at the top
  int left = 0;
  int low_left = 0;
};

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // 64 uniformly random bits.
  virtual uint64_t NextUint64() = 0;
  // What BitReaders of this source left unread.
  SpareBits& spare_bits() { return spare_; }
  // False once the source could not deliver real randomness; a release that
  // sees this discards its result.
  virtual bool healthy() const { return true; }

 private:
  SpareBits spare_;
};

// The operating system's cryptographically secure generator, through
// getentropy(): the kernel natively, crypto.getRandomValues under Emscripten
// (wasm/entropy.js). Buffered. Natively each source has its own buffer:
// 256 bytes first, then 4 KiB per refill for releases that draw a lot (256
// bytes a call, what getentropy serves); a forked process never shares
// bytes with its parent. In WebAssembly (one thread per instance, no fork)
// the sources share one 64 KiB pool of the module's: a crypto call costs
// about what 16 KiB of its bytes do, and a release of n = 1,000 and
// m = 120 reads about 2 KiB, so one call serves about 30 releases. Every
// byte is read once.
class SecureRandom final : public RandomSource {
 public:
  SecureRandom();
  uint64_t NextUint64() override;
  bool healthy() const override { return healthy_; }

 private:
#ifndef __EMSCRIPTEN__
  void Refill();
  std::array<uint8_t, 4096> buffer_{};
  size_t size_ = 0;      // bytes of buffer_ in use
  size_t position_ = 0;  // next unread byte
#endif
  bool healthy_ = true;
};

// ChaCha20 (RFC 8439) keyed by a 64-bit seed: reproducible, for tests and
// experiments only. A seeded release is NOT private: anyone who knows or
// guesses the seed can undo the noise.
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(uint64_t seed);
  uint64_t NextUint64() override;

  // The ChaCha20 block function on (key, 64-bit block counter, nonce);
  // exposed for the RFC 8439 test vector.
  static std::array<uint32_t, 16> Block(const std::array<uint32_t, 8>& key,
                                        uint32_t counter,
                                        const std::array<uint32_t, 3>& nonce);

 private:
  std::array<uint32_t, 8> key_{};
  std::array<uint32_t, 16> block_{};
  uint64_t counter_ = 0;
  size_t word_ = 16;
};

// The source a release uses: SeededRandom when a seed is given (tests only,
// not private), SecureRandom otherwise.
std::unique_ptr<RandomSource> MakeRandomSource(
    const std::optional<uint64_t>& seed);

// The error a release returns, discarding its result, when the source turned
// unhealthy.
Status EntropyUnavailable();

// Uniform double in [0, 1) with 53 random bits.
double UniformDouble(RandomSource& rng);
// Uniform double in (0, 1): the 2^52 midpoints (k + 1/2) 2^-52, k < 2^52,
// each exactly a double, from 2^-53 to 1 - 2^-53, so its log is always
// finite. (A 53-bit version rounds its top value to exactly 1.)
double UniformOpenDouble(RandomSource& rng);
// Uniform integer in [0, bound), bound >= 1, exact (rejection, no modulo bias).
uint64_t UniformInteger(RandomSource& rng, uint64_t bound);

}  // namespace dpq

#endif  // DPQ_CORE_RANDOM_H_
