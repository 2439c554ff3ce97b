//===- Backend.h - what the trainer needs of a target -----------*- C++ -*-===//
//
// Memory and copies on the target's device: HostBackend.cpp (the CPU: the
// arena is host memory) or CudaBackend.cu (cudaMalloc, cudaMemcpy).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_BACKEND_H
#define TGC_RUNTIME_SRC_BACKEND_H

#include "tgc/runtime/Runtime.h"

#include <cstddef>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace tgc::rt::backend {

/// "host" or "cuda (<GPU name>)".
std::string describe();
/// Whether the target moves values between pipeline stages (the host's
/// Gloo sends and receives; the CUDA target has none yet).
bool hasStageTransfers();
/// Device memory, zero-filled; null (with `error` set) when it cannot.
void *allocate(size_t bytes, std::string &error);
void release(void *pointer);
void toDevice(void *device, const void *host, size_t bytes);
void toHost(void *host, const void *device, size_t bytes);
void onDevice(void *destination, const void *source, size_t bytes);
/// `rows` rows of `width` bytes, from `source` (rows `sourcePitch` bytes
/// apart) to `destination` (`destinationPitch` apart), on the device.
void copyRows(void *destination, size_t destinationPitch, const void *source,
              size_t sourcePitch, size_t width, size_t rows,
              bool onCommStream = false);
/// Collective `id` on the communication stream: begin (after the work the
/// compute stream has queued), end (marks it done), and the compute
/// stream's wait for it. Nothing on the host, where collectives return
/// when done.
void beginCollective();
void endCollective(int id);
void waitCollective(int id);
/// Makes device `localRank` (modulo the devices there are) this process's,
/// before anything else touches the device; nothing on the host.
void selectDevice(int localRank);
/// The processes of the launch on this machine (its local world size): the
/// host target shares the CPUs among them; nothing on the GPU.
void setLocalProcesses(int count);
/// Waits for the step; reports an asynchronous failure and exits.
void synchronize(const char *what);
/// The most device memory in use so far (0 where unknown).
size_t peakMemory();

/// Whether gemmEpilogue may take a call: TGC_GEMM_EPILOGUE=0 declines
/// every one, so that the GEMM and its region's kernels run instead.
inline bool gemmEpiloguesEnabled() {
  static const bool enabled = [] {
    const char *choice = std::getenv("TGC_GEMM_EPILOGUE");
    return !choice || std::string(choice) != "0";
  }();
  return enabled;
}

/// Runs one step. On the GPU, when `mayCapture` (one device, no profile)
/// and TGC_CUDA_GRAPH is not 0, the second call captures the step as a
/// CUDA graph and every later call replays it: one launch instead of one
/// per kernel. A step that cannot be captured runs kernel by kernel, with a
/// note. On the host: step(context).
void runStep(StepFunction step, Context &context, bool mayCapture);

/// Kernel timing (train --profile): between profileBegin and profileEnd,
/// every kernel and library call marks its end (checkLaunch, the GEMM and
/// attention calls); profileEnd waits for the step and appends each mark's
/// kernel and the seconds since the mark before it (CUDA events on the GPU,
/// the wall clock on the host).
void profileBegin();
void profileMark(const char *kernel);
void profileEnd(std::vector<std::pair<std::string, double>> &times);

} // namespace tgc::rt::backend

#endif // TGC_RUNTIME_SRC_BACKEND_H
