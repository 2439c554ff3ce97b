//===- Philox.cpp - the Philox4x32-10 counter-based generator -------------===//
//
// Follows Random123's philox.h (philox4x32round, philox4x32bumpkey) so that
// its known-answer vectors hold.
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/Philox.h"

using namespace tgc;

namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53u;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
// The Weyl sequence increments: the golden ratio and sqrt(3) - 1, in 32 bits.
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;

struct HiLo {
  uint32_t hi;
  uint32_t lo;
};

HiLo multiplyHiLo(uint32_t a, uint32_t b) {
  uint64_t product = static_cast<uint64_t>(a) * b;
  return {static_cast<uint32_t>(product >> 32), static_cast<uint32_t>(product)};
}

std::array<uint32_t, 4> philoxRound(const std::array<uint32_t, 4> &counter,
                                    const std::array<uint32_t, 2> &key) {
  HiLo p0 = multiplyHiLo(kMultiplier0, counter[0]);
  HiLo p1 = multiplyHiLo(kMultiplier1, counter[2]);
  return {p1.hi ^ counter[1] ^ key[0], p1.lo, p0.hi ^ counter[3] ^ key[1],
          p0.lo};
}

} // namespace

std::array<uint32_t, 4> tgc::philox4x32_10(std::array<uint32_t, 4> counter,
                                           std::array<uint32_t, 2> key) {
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    counter = philoxRound(counter, key);
  }
  return counter;
}

double tgc::dropoutUniform(uint64_t seed, uint64_t index, uint32_t stream) {
  std::array<uint32_t, 2> key = {static_cast<uint32_t>(seed),
                                 static_cast<uint32_t>(seed >> 32)};
  std::array<uint32_t, 4> counter = {static_cast<uint32_t>(index),
                                     static_cast<uint32_t>(index >> 32), stream,
                                     0};
  // 2^-32 is exact in a double, and so is every 32-bit word.
  return philox4x32_10(counter, key)[0] * 0x1p-32;
}
