//===- Philox.cpp - the Philox4x32-10 counter-based generator -------------===//
//
// The generator itself lives in the runtime's header (tgc/runtime/Philox.h),
// which CUDA kernels and the host target include too: one implementation.
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/Philox.h"

#include "tgc/runtime/Philox.h"

using namespace tgc;

std::array<uint32_t, 4> tgc::philox4x32_10(std::array<uint32_t, 4> counter,
                                           std::array<uint32_t, 2> key) {
  rt::Philox4x32 out = rt::philox4x32_10(
      {{counter[0], counter[1], counter[2], counter[3]}}, key[0], key[1]);
  return {out.v[0], out.v[1], out.v[2], out.v[3]};
}

double tgc::dropoutUniform(uint64_t seed, uint64_t index, uint32_t stream) {
  return rt::dropoutUniform(seed, index, stream);
}

double tgc::randomUniform(uint64_t seed, uint64_t index, uint32_t stream) {
  return rt::randomUniform(seed, index, stream);
}

double tgc::randomNormal(uint64_t seed, uint64_t index, uint32_t stream) {
  return rt::randomNormal(seed, index, stream);
}
