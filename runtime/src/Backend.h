//===- Backend.h - what the trainer needs of a target -----------*- C++ -*-===//
//
// Memory and copies on the target's device: HostBackend.cpp (the CPU: the
// arena is host memory) or CudaBackend.cu (cudaMalloc, cudaMemcpy).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_BACKEND_H
#define TGC_RUNTIME_SRC_BACKEND_H

#include <cstddef>
#include <string>

namespace tgc::rt::backend {

/// "host" or "cuda (<GPU name>)".
std::string describe();
/// Device memory, zero-filled; null (with `error` set) when it cannot.
void *allocate(size_t bytes, std::string &error);
void release(void *pointer);
void toDevice(void *device, const void *host, size_t bytes);
void toHost(void *host, const void *device, size_t bytes);
void onDevice(void *destination, const void *source, size_t bytes);
/// Waits for the step; reports an asynchronous failure and exits.
void synchronize(const char *what);
/// The most device memory in use so far (0 where unknown).
size_t peakMemory();

} // namespace tgc::rt::backend

#endif // TGC_RUNTIME_SRC_BACKEND_H
