//===- HostDevice.h - code compiled for the host and the GPU ----*- C++ -*-===//
//
// TGC_HD marks functions that the interpreter (host C++), the host target
// and CUDA kernels all call; it is empty outside nvcc.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_HOSTDEVICE_H
#define TGC_RUNTIME_HOSTDEVICE_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TGC_HD __host__ __device__
#else
#define TGC_HD
#endif

/// Unrolls the loop that follows (nvcc and clang; GCC by 8).
#if defined(__CUDACC__) || defined(__clang__)
#define TGC_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define TGC_UNROLL _Pragma("GCC unroll 8")
#else
#define TGC_UNROLL
#endif

namespace tgc::rt {

/// Elements a thread takes at a time in a generated kernel's grid-stride
/// loop (OpKernels.h's forEachElement); the emitter sizes launches by it.
constexpr int64_t kChunk = 8;

/// The rows and columns of a tile of the experts' products (OpKernels.h's
/// expertMatmul and expertMatmulGrad, a block per tile) for a compute type
/// of `computeBytes` bytes, and their launches' blocks, by which the
/// emitter sizes them: tiles of `size` rows of one expert (at most rows /
/// size + experts of them) by `size` of the o columns; and per expert, the
/// tiles of its [h, o] gradient.
TGC_HD constexpr int64_t expertTileSize(int64_t computeBytes) {
  return computeBytes == 8 ? 32 : 64;
}
TGC_HD constexpr int64_t expertMatmulBlocks(int64_t size, int64_t rows,
                                            int64_t o, int64_t experts) {
  return ((rows + size - 1) / size + experts) * ((o + size - 1) / size);
}
TGC_HD constexpr int64_t expertMatmulGradBlocks(int64_t size, int64_t experts,
                                                int64_t h, int64_t o) {
  return experts * ((h + size - 1) / size) * ((o + size - 1) / size);
}

/// The bits of `value` as another type of the same size (std::bit_cast is
/// C++20; memcpy is what it compiles to on both sides).
template <typename To, typename From> TGC_HD inline To bitCast(From value) {
  static_assert(sizeof(To) == sizeof(From), "bitCast needs equal sizes");
  To result;
  memcpy(&result, &value, sizeof(To));
  return result;
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_HOSTDEVICE_H
