//===- Philox.h - the Philox4x32-10 counter-based generator ----*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11), as in Random123, cuRAND and PyTorch: a pure function of a 128-bit
// counter and a 64-bit key. tg.dropout draws its mask from it, so that the
// interpreter and generated kernels agree bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_PHILOX_H
#define TGC_SUPPORT_PHILOX_H

#include <array>
#include <cstdint>

namespace tgc {

/// Ten Philox rounds of `counter` under `key`.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter,
                                      std::array<uint32_t, 2> key);

/// The dropout draw of tg.dropout: the first output word of Philox4x32-10
/// with key (lo32(seed), hi32(seed)) and counter (lo32(index), hi32(index),
/// stream, 0), divided by 2^32, in [0, 1).
double dropoutUniform(uint64_t seed, uint64_t index, uint32_t stream);

/// tg.random's uniform number in [0, 1) and standard normal number.
double randomUniform(uint64_t seed, uint64_t index, uint32_t stream);
double randomNormal(uint64_t seed, uint64_t index, uint32_t stream);

} // namespace tgc

#endif // TGC_SUPPORT_PHILOX_H
