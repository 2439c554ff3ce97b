//===- CudaEmitter.h - the compiled step as a CUDA C++ project --*- C++ -*-===//
//
// The code generator: from the step `tgc compile` writes (after
// tg-memory-plan) to CUDA C++ that links tgc's runtime (runtime/): one
// kernel per tg.fusion region or remaining op, a GEMM call per matmul,
// runtime calls for attention, and a host `step` that runs them in the
// scheduled order over one arena at the planned offsets. The same source
// builds for the GPU (nvcc) and, with -DTGC_TARGET=host, for the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TARGET_CUDA_CUDAEMITTER_H
#define TGC_TARGET_CUDA_CUDAEMITTER_H

#include "tgc/Support/Safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace tgc {

/// The files of a generated project, as text.
struct CudaProject {
  /// step.cu: the kernels, the host step, its description and main().
  std::string stepSource;
  /// step.json: arguments, results and their aliasing, the arena, kernels.
  std::string stepJson;
  /// CMakeLists.txt: builds `train` for TGC_TARGET=cuda or host.
  std::string cmakeLists;
  /// Every kernel and call, in order, for reports and tests.
  std::vector<std::string> kernels;
  /// The cost model's time of each op that launches something, with the
  /// kernels and calls it launches (a gemm region: its one cuBLASLt call,
  /// or its GEMM and its epilogue kernels), for comparing with
  /// train --profile.
  struct Estimate {
    std::string name;
    std::vector<std::string> kernels;
    double seconds = 0;
    /// What it launches besides when its GEMM's epilogue call declines
    /// (Runtime.h's gemmEpilogue): the region's kernels.
    std::vector<std::string> fallback;
  };
  std::vector<Estimate> estimates;
  /// The device the estimates are for (the module's tg.device).
  std::string device;
  /// A pipelined step (docs/pipeline.md): per argument, the pipeline
  /// devices whose ranks hold it (those whose ops read it); per result, the
  /// device whose op computes it (-1: none). Empty otherwise.
  std::vector<std::vector<int64_t>> argumentPipelineHolders;
  std::vector<int64_t> resultPipelineHolders;
};

/// Emits the project of `step`, a function of a compiled module (it must
/// carry tg.arena_size and every value its tg.offset(s)). An op without a
/// lowering is a located error. `withEvaluation`: main() passes the
/// trainer the evaluation that emitCudaEvaluation's source defines.
mlir::FailureOr<CudaProject> emitCudaProject(mlir::func::FuncOp step,
                                             bool withEvaluation = false);

/// Emits `evaluation`, the compiled evaluation of the step's forward graph
/// (buildEvaluation with planning), as evaluate.cu: its kernels and step
/// under the accessors the trainer's main() declares.
mlir::FailureOr<CudaProject> emitCudaEvaluation(mlir::func::FuncOp evaluation);

/// Whether the emitter lowers the op named `opName` (tg.add...): every tg
/// op is (CudaEmitterTest).
bool hasCudaLowering(llvm::StringRef opName);

/// Writes the project of `step` to `directory`: CMakeLists.txt, step.cu,
/// step.json and params.safetensors: `parameters` when given, a model's
/// values (getImportedInitialValues), which the trainer starts from, the
/// parameters they do not name starting from --seed; else the initial
/// values `tgc train --seed 0` starts from, which the trainer does not load
/// (it seeds every parameter from --seed as tgc train does). A directory that
/// exists with other contents is refused; the files are written to a temporary
/// directory renamed at the end, so a failure leaves nothing behind.
///
/// With `evaluation` (see emitCudaEvaluation), the project also holds
/// evaluate.cu, and train takes --val-data; step.json describes it under
/// "evaluation". It must be of the step's mesh.
mlir::LogicalResult
writeCudaProject(mlir::func::FuncOp step, llvm::StringRef directory,
                 const std::vector<safetensors::Entry> *parameters,
                 mlir::func::FuncOp evaluation = nullptr);

} // namespace tgc

#endif // TGC_TARGET_CUDA_CUDAEMITTER_H
