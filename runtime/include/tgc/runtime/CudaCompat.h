//===- CudaCompat.h - CUDA kernels on the host ------------------*- C++ -*-===//
//
// The host target (-DTGC_TARGET=host) compiles the generated .cu source as
// C++ with this header. By default a kernel runs once per block with
// blockDim = 1, __syncthreads is a no-op and __shared__ memory is a static.
// Every generated kernel loops over its elements with a stride of the
// threads it has, so the same source is correct for one thread per block
// and for the GPU's many.
//
// With TGC_HOST_THREADS=T (the environment, read once), every block runs
// on T host threads (blockDim = T), one block at a time, and
// __syncthreads is a barrier among them: the same source with real
// threads of a block cooperating through shared memory, for tests of the
// code paths the GPU takes (a missing barrier shows as wrong numbers).
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

inline thread_local dim3 threadIdx{0}, blockIdx{0};
inline dim3 blockDim{1}, gridDim{1};

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline

namespace tgc::rt {

/// Host threads per block: TGC_HOST_THREADS, else 1 (HostBackend.cpp).
unsigned hostThreadsPerBlock();
/// Runs `block(context)` for each block of `grid` on `threads` host threads
/// that wait for each other at every __syncthreads and between blocks.
void hostLaunchOnThreads(unsigned grid, unsigned threads, void (*block)(void *),
                         void *context);
/// Whether a block runs on several host threads now, and their barrier.
inline bool hostBlockIsThreaded = false;
void hostSyncThreads();

/// Runs `body` (a kernel call) for each block of `grid`, one block at a
/// time: on one thread, or on `threads` (default hostThreadsPerBlock()).
template <typename Body>
void hostLaunch(unsigned grid, Body &&body, unsigned threads = 0) {
  if (!threads)
    threads = hostThreadsPerBlock();
  gridDim = dim3(grid);
  if (threads > 1)
    return hostLaunchOnThreads(
        grid, threads,
        [](void *context) { (*static_cast<decltype(&body)>(context))(); },
        &body);
  blockDim = dim3(1);
  threadIdx = dim3(0);
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx = dim3(b);
    body();
  }
}
} // namespace tgc::rt

inline void __syncthreads() {
  if (tgc::rt::hostBlockIsThreaded)
    tgc::rt::hostSyncThreads();
}

/// kernel<<<grid, block>>>(args...) on the GPU; on the host the block size
/// is ignored (one thread per block, or TGC_HOST_THREADS).
#define TGC_LAUNCH(kernel, grid, block, ...)                                   \
  ::tgc::rt::hostLaunch((grid), [&] { kernel(__VA_ARGS__); })

#endif // TGC_RUNTIME_CUDACOMPAT_H
