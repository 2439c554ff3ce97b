//===- CudaCompat.h - CUDA kernels on the host ------------------*- C++ -*-===//
//
// The host target (-DTGC_TARGET=host) compiles the generated .cu source as
// C++ with this header. A launch runs its blocks on the host's cores, as a
// GPU runs them on its multiprocessors: the blocks are independent, so
// the workers (TGC_HOST_WORKERS, by default the CPUs the process may use,
// shared among the local ranks) take them in any order and the numbers do
// not depend on it. By default a block has one thread (blockDim = 1),
// __syncthreads is a no-op and __shared__ memory is a thread_local static:
// each worker's own, the block's while it runs. Every generated kernel
// loops over its elements with a stride of the threads it has, so the
// same source is correct for one thread per block and for the GPU's many.
//
// With TGC_HOST_THREADS=T (the environment, read once), every block runs
// as T threads (blockDim = T) cooperating through its shared memory:
// fibers of its worker that take turns at every __syncthreads, each
// running until it reaches the barrier (or returns) before the next
// resumes, in order in even blocks and in reverse in odd ones. These are
// the code paths the GPU takes, for tests: a missing barrier shows as
// wrong numbers, the same every run.
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
#define __shared__ static thread_local
#define __forceinline__ inline

namespace tgc::rt {

/// Host threads per block: TGC_HOST_THREADS, else 1 (HostBackend.cpp).
unsigned hostThreadsPerBlock();
/// Runs `block(context)` for each block of `grid`, `threads` threads a
/// block (fibers when more than one), on the workers; returns when every
/// block has run.
void hostLaunchBlocks(unsigned grid, unsigned threads, void (*block)(void *),
                      void *context);
/// Whether the running block has several threads (fibers), and the switch
/// to the next at a barrier.
inline thread_local bool hostBlockIsThreaded = false;
void hostSyncThreads();

/// Runs `body` (a kernel call) for each block of `grid`: one thread a
/// block, or `threads` (default hostThreadsPerBlock()).
template <typename Body>
void hostLaunch(unsigned grid, Body &&body, unsigned threads = 0) {
  if (!threads)
    threads = hostThreadsPerBlock();
  hostLaunchBlocks(
      grid, threads,
      [](void *context) { (*static_cast<decltype(&body)>(context))(); }, &body);
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
