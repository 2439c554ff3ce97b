//===- CudaCompat.h - CUDA kernels on the host, one thread a block -*- C++
//-*-===//
//
// The host target (-DTGC_TARGET=host) compiles the generated .cu source as
// C++ with this header: a kernel runs once per block with blockDim = 1,
// __syncthreads is a no-op and __shared__ memory is a static. Every
// generated kernel loops over its elements with a stride of the threads it
// has, so the same source is correct for one thread per block and for
// the GPU's many.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_CUDACOMPAT_H
#define TGC_RUNTIME_CUDACOMPAT_H

#if defined(__CUDACC__)
#error "tgc/runtime/CudaCompat.h is for the host target only"
#endif

#include <cstdint>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};

inline dim3 threadIdx{0}, blockIdx{0}, blockDim{1}, gridDim{1};

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline

inline void __syncthreads() {}

namespace tgc::rt {
/// Runs `body` (a kernel call) once per block of `grid`, one thread each.
template <typename Body> void hostLaunch(unsigned grid, Body &&body) {
  gridDim = dim3(grid);
  blockDim = dim3(1);
  threadIdx = dim3(0);
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx = dim3(b);
    body();
  }
}
} // namespace tgc::rt

/// kernel<<<grid, block>>>(args...) on the GPU; on the host the block size
/// is ignored (one thread per block).
#define TGC_LAUNCH(kernel, grid, block, ...)                                   \
  ::tgc::rt::hostLaunch((grid), [&] { kernel(__VA_ARGS__); })

#endif // TGC_RUNTIME_CUDACOMPAT_H
