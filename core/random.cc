#include "core/random.h"

#include <unistd.h>

#include <cmath>
#include <cstring>

namespace dpq {
namespace {

inline uint32_t RotateLeft(uint32_t x, int bits) {
  return (x << bits) | (x >> (32 - bits));
}

inline void QuarterRound(std::array<uint32_t, 16>& s, int a, int b, int c,
                         int d) {
  s[a] += s[b];
  s[d] = RotateLeft(s[d] ^ s[a], 16);
  s[c] += s[d];
  s[b] = RotateLeft(s[b] ^ s[c], 12);
  s[a] += s[b];
  s[d] = RotateLeft(s[d] ^ s[a], 8);
  s[c] += s[d];
  s[b] = RotateLeft(s[b] ^ s[c], 7);
}

constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
constexpr double kTwoToMinus52 = 1.0 / 4503599627370496.0;

}  // namespace

SecureRandom::SecureRandom() = default;

#ifdef __EMSCRIPTEN__
namespace {

// The module's pool (random.h). Refilled whole when a read would pass its
// end; a failed fill leaves it empty, so the next read tries again.
struct EntropyPool {
  static constexpr size_t kBytes = 65536;
  std::array<uint8_t, kBytes> bytes;
  size_t position = kBytes;  // next unread byte
};

EntropyPool& SharedPool() {
  static EntropyPool pool;
  return pool;
}

}  // namespace

uint64_t SecureRandom::NextUint64() {
  EntropyPool& pool = SharedPool();
  if (pool.position + sizeof(uint64_t) > EntropyPool::kBytes) {
    if (getentropy(pool.bytes.data(), EntropyPool::kBytes) != 0) {
      healthy_ = false;
      return 0;
    }
    pool.position = 0;
  }
  uint64_t value;
  std::memcpy(&value, pool.bytes.data() + pool.position, sizeof(value));
  pool.position += sizeof(value);
  return value;
}
#else
void SecureRandom::Refill() {
  constexpr size_t kPiece = 256;  // what POSIX getentropy() must serve
  // A system call per 256 bytes: small releases read little, 256 bytes
  // first, then the whole buffer.
  size_ = size_ == 0 ? kPiece : buffer_.size();
  bool ok = true;
  for (size_t offset = 0; ok && offset < size_; offset += kPiece) {
    ok = getentropy(buffer_.data() + offset, kPiece) == 0;
  }
  if (!ok) {
    healthy_ = false;
    buffer_.fill(0);
  }
  position_ = 0;
}

uint64_t SecureRandom::NextUint64() {
  if (position_ + sizeof(uint64_t) > size_) Refill();
  uint64_t value;
  std::memcpy(&value, buffer_.data() + position_, sizeof(value));
  position_ += sizeof(value);
  return value;
}
#endif

std::array<uint32_t, 16> SeededRandom::Block(
    const std::array<uint32_t, 8>& key, uint32_t counter,
    const std::array<uint32_t, 3>& nonce) {
  std::array<uint32_t, 16> initial = {0x61707865, 0x3320646e, 0x79622d32,
                                      0x6b206574};
  for (int i = 0; i < 8; ++i) initial[4 + i] = key[i];
  initial[12] = counter;
  for (int i = 0; i < 3; ++i) initial[13 + i] = nonce[i];
  std::array<uint32_t, 16> s = initial;
  for (int round = 0; round < 10; ++round) {
    QuarterRound(s, 0, 4, 8, 12);
    QuarterRound(s, 1, 5, 9, 13);
    QuarterRound(s, 2, 6, 10, 14);
    QuarterRound(s, 3, 7, 11, 15);
    QuarterRound(s, 0, 5, 10, 15);
    QuarterRound(s, 1, 6, 11, 12);
    QuarterRound(s, 2, 7, 8, 13);
    QuarterRound(s, 3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) s[i] += initial[i];
  return s;
}

SeededRandom::SeededRandom(uint64_t seed) {
  key_[0] = static_cast<uint32_t>(seed);
  key_[1] = static_cast<uint32_t>(seed >> 32);
}

uint64_t SeededRandom::NextUint64() {
  if (word_ + 2 > block_.size()) {
    // The high half of the 64-bit block counter goes in the first nonce word.
    block_ = Block(key_, static_cast<uint32_t>(counter_),
                   {static_cast<uint32_t>(counter_ >> 32), 0, 0});
    ++counter_;
    word_ = 0;
  }
  uint64_t value = block_[word_] | (uint64_t{block_[word_ + 1]} << 32);
  word_ += 2;
  return value;
}

std::unique_ptr<RandomSource> MakeRandomSource(
    const std::optional<uint64_t>& seed) {
  if (seed.has_value()) return std::make_unique<SeededRandom>(*seed);
  return std::make_unique<SecureRandom>();
}

Status EntropyUnavailable() {
  return Status(StatusCode::kEntropyUnavailable,
                "the secure random source failed; nothing was released");
}

double UniformDouble(RandomSource& rng) {
  return static_cast<double>(rng.NextUint64() >> 11) * kTwoToMinus53;
}

double UniformOpenDouble(RandomSource& rng) {
  // 52 bits: (k + 1/2) 2^-52 <= 1 - 2^-53, a double below 1.
  return (static_cast<double>(rng.NextUint64() >> 12) + 0.5) * kTwoToMinus52;
}

uint64_t UniformInteger(RandomSource& rng, uint64_t bound) {
  // Reject the top partial copy of [0, bound) so every value is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t value;
  do {
    value = rng.NextUint64();
  } while (value >= limit && rng.healthy());
  return value % bound;
}

}  // namespace dpq
