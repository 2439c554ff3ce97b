//===- Philox.h - the Philox4x32-10 counter-based generator ----*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11), as in Random123, cuRAND and PyTorch: a pure function of a 128-bit
// counter and a 64-bit key. tg.dropout draws its mask from it, tg.random its
// numbers. Header only
// and host/device, so the interpreter (through tgc/Support/Philox.h), the
// host target and CUDA kernels draw the same masks, bit for bit. Follows
// Random123's philox.h (philox4x32round, philox4x32bumpkey) so that its
// known-answer vectors hold.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_PHILOX_H
#define TGC_RUNTIME_PHILOX_H

#include "tgc/runtime/HostDevice.h"

#include <cmath>

namespace tgc::rt {

struct Philox4x32 {
  uint32_t v[4];
};

/// Ten Philox rounds of `counter` under the key (key0, key1).
TGC_HD inline Philox4x32 philox4x32_10(Philox4x32 counter, uint32_t key0,
                                       uint32_t key1) {
  constexpr uint32_t kMultiplier0 = 0xD2511F53u;
  constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
  // The Weyl sequence increments: the golden ratio and sqrt(3) - 1.
  constexpr uint32_t kWeyl0 = 0x9E3779B9u;
  constexpr uint32_t kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    uint64_t p0 = static_cast<uint64_t>(kMultiplier0) * counter.v[0];
    uint64_t p1 = static_cast<uint64_t>(kMultiplier1) * counter.v[2];
    Philox4x32 next;
    next.v[0] = static_cast<uint32_t>(p1 >> 32) ^ counter.v[1] ^ key0;
    next.v[1] = static_cast<uint32_t>(p1);
    next.v[2] = static_cast<uint32_t>(p0 >> 32) ^ counter.v[3] ^ key1;
    next.v[3] = static_cast<uint32_t>(p0);
    counter = next;
  }
  return counter;
}

/// The four words tg.dropout and tg.random draw for element `index`.
TGC_HD inline Philox4x32 philoxDraw(uint64_t seed, uint64_t index,
                                    uint32_t stream) {
  Philox4x32 counter = {{static_cast<uint32_t>(index),
                         static_cast<uint32_t>(index >> 32), stream, 0}};
  return philox4x32_10(counter, static_cast<uint32_t>(seed),
                       static_cast<uint32_t>(seed >> 32));
}

/// The dropout draw of tg.dropout: the first output word of Philox4x32-10
/// with key (lo32(seed), hi32(seed)) and counter (lo32(index), hi32(index),
/// stream, 0), divided by 2^32, in [0, 1).
TGC_HD inline double dropoutUniform(uint64_t seed, uint64_t index,
                                    uint32_t stream) {
  // 2^-32 is exact in a double, and so is every 32-bit word.
  return philoxDraw(seed, index, stream).v[0] * 0x1p-32;
}

/// tg.random's uniform number: the top 24 bits of the first word over
/// 2^24, in [0, 1) and exact in a float.
TGC_HD inline double randomUniform(uint64_t seed, uint64_t index,
                                   uint32_t stream) {
  return (philoxDraw(seed, index, stream).v[0] >> 8) * 0x1p-24;
}

/// tg.random's standard normal number: Box-Muller of the first two words,
/// u1 = (w0 + 1) / 2^32 in (0, 1] (its log is finite) and u2 = w1 / 2^32.
TGC_HD inline double randomNormal(uint64_t seed, uint64_t index,
                                  uint32_t stream) {
  Philox4x32 out = philoxDraw(seed, index, stream);
  double u1 = (static_cast<double>(out.v[0]) + 1.0) * 0x1p-32;
  double u2 = out.v[1] * 0x1p-32;
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(kTwoPi * u2);
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_PHILOX_H
