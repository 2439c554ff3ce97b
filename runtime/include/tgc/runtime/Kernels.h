//===- Kernels.h - what generated kernels include ---------------*- C++ -*-===//
//
// The one header of a generated step: CUDA itself or, for the host target,
// its compatibility layer; element storage; scalar formulas; the op kernels
// that generated region kernels call.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_KERNELS_H
#define TGC_RUNTIME_KERNELS_H

#if defined(__CUDACC__)
#include <cuda_runtime.h>
namespace tgc::rt {
cudaStream_t currentStream();
/// The stream collectives run on, beside the kernels' (NCCL's calls).
cudaStream_t currentCommStream();
} // namespace tgc::rt
#define TGC_LAUNCH(kernel, grid, block, ...)                                   \
  kernel<<<(grid), (block), 0, ::tgc::rt::currentStream()>>>(__VA_ARGS__)
#else
#include "tgc/runtime/CudaCompat.h"
#endif

#include "tgc/runtime/OpKernels.h"
#include "tgc/runtime/Philox.h"
#include "tgc/runtime/ScalarOps.h"
#include "tgc/runtime/Storage.h"

#endif // TGC_RUNTIME_KERNELS_H
