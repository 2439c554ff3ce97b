//===- TrainingMemory.h - persistent memory of a training step -*- C++ -*-===//
//
// What a training step keeps in device memory across steps, read off the
// compiled step itself: its parameters and optimizer-state arguments, and the
// gradient buffers the backward produces for the optimizer.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_TRAININGMEMORY_H
#define TGC_ANALYSIS_TRAININGMEMORY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace tgc {

struct MemoryCategory {
  std::string name;
  int64_t tensors = 0;
  int64_t elements = 0;
  int64_t bytes = 0;
};

struct TrainingMemory {
  std::string functionName;
  std::string optimizer;
  MemoryCategory parameters{"parameters"};
  MemoryCategory trainable{"trainable parameters"};
  MemoryCategory gradients{"gradients"};
  MemoryCategory optimizerState{"optimizer state"};
  /// Mixed precision: the bf16/f16 copies of the f32 parameters that the
  /// low-precision ops read (counted at one byte per element where only fp8
  /// kernels read them), live from the forward through the backward.
  MemoryCategory parameterCopies{"param copies"};
  /// Mixed precision: the loss scale and the fp8 amax histories.
  MemoryCategory scalingState{"scaling state"};
  /// The model's state the step updates (`tg.buffer`: a training-mode
  /// BatchNorm's running statistics).
  MemoryCategory buffers{"buffers"};

  int64_t getTotalBytes() const {
    return parameters.bytes + gradients.bytes + optimizerState.bytes +
           parameterCopies.bytes + scalingState.bytes + buffers.bytes;
  }

  /// Read off the step itself: its `param` and `state` arguments, the
  /// casts of its parameters, and the gradients its updates read, in the
  /// type they are stored in (bf16 where an f32 update reads a bf16
  /// gradient); the trained parameters are those the updates update. A step
  /// without updates counts its `grad` results.
  static TrainingMemory compute(mlir::func::FuncOp step);
  /// Whether the step holds any: parameters or gradients.
  bool empty() const {
    return parameters.tensors == 0 && gradients.tensors == 0;
  }

  /// The table, bytes per parameter taken over `modelParams` when given
  /// (a partitioned step: the model's parameters, not the device's).
  void print(llvm::raw_ostream &os, int64_t modelParams = 0) const;
  nlohmann::json toJson() const;
};

} // namespace tgc

#endif // TGC_ANALYSIS_TRAININGMEMORY_H
