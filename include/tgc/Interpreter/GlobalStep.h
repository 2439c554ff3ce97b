//===- GlobalStep.h - a step run on global values ---------------*- C++ -*-===//
//
// What `tgc run` and `tgc train` call to run a step, partitioned or not, on
// the global values a user holds: an unpartitioned function runs on the
// interpreter; a partitioned one (its module holds a shard.grid) has each
// argument split by its tg.sharding, all ranks of its mesh run by the
// RankedInterpreter, and each result assembled by its tg.sharding, so both
// give the numbers of the unsharded step. In a pipelined function
// (docs/pipeline.md) every device receives every argument, and a result is
// assembled from the devices of the stage that produces it. A reference, not
// a fast path.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_GLOBALSTEP_H
#define TGC_INTERPRETER_GLOBALSTEP_H

#include "tgc/Interpreter/RankedInterpreter.h"
#include "tgc/Interpreter/ShardedTensors.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace tgc {

/// Whether `function` is partitioned: its module holds a shard.grid, or the
/// function holds shard ops or tg.sharding attributes.
bool isPartitioned(mlir::FunctionOpInterface function);

/// The types of the values the caller holds for the arguments: for a
/// partitioned function the global types (each dimension of the local type
/// times the blocks its tg.sharding cuts it into), else the argument types.
mlir::FailureOr<llvm::SmallVector<mlir::RankedTensorType>>
getGlobalArgumentTypes(mlir::FunctionOpInterface function);

class GlobalStepRunner {
public:
  /// Resolves the mesh of a partitioned `function` (the one grid its
  /// shardings and collectives name, or the module's only grid) and the
  /// layout of every argument and result, and checks that the function can
  /// run (a located error otherwise: no grid, a grid without tg.mesh_axes,
  /// an unknown axis, an unreduced argument, a shard op the ranks do not
  /// run, a result of a pipelined function sharded over the pipeline
  /// axis...).
  static mlir::FailureOr<GlobalStepRunner>
  create(mlir::FunctionOpInterface function, InterpreterOptions options = {});

  bool isPartitioned() const { return mesh.has_value(); }
  const std::optional<SimulatedMesh> &getMesh() const { return mesh; }
  /// The global argument and result types.
  llvm::ArrayRef<mlir::RankedTensorType> getArgumentTypes() const {
    return argumentTypes;
  }
  llvm::ArrayRef<mlir::RankedTensorType> getResultTypes() const {
    return resultTypes;
  }

  /// Runs the step on global `arguments` (of getArgumentTypes()) and
  /// returns the global results. Devices that should hold the same replica
  /// of a result but differ are an internal error naming the result.
  mlir::FailureOr<llvm::SmallVector<Tensor>>
  run(llvm::ArrayRef<Tensor> arguments);

private:
  GlobalStepRunner(mlir::FunctionOpInterface function,
                   InterpreterOptions options)
      : function(function), options(options) {}

  mlir::FunctionOpInterface function;
  InterpreterOptions options;
  std::optional<SimulatedMesh> mesh;
  std::optional<SimulatedPipeline> pipeline;
  llvm::SmallVector<ShardedLayout> argumentLayouts, resultLayouts;
  /// In a pipelined function, per result the pipeline-axis coordinate of
  /// the devices that hold it (none: every device, an argument returned).
  llvm::SmallVector<std::optional<int64_t>> resultHolders;
  llvm::SmallVector<mlir::RankedTensorType> argumentTypes, resultTypes;
  /// Per argument and result, the function's global type where ZeRO padded
  /// it (tg.unpadded_shape); null where it is the caller's.
  llvm::SmallVector<mlir::RankedTensorType> argumentPadded, resultPadded;
};

/// GlobalStepRunner::create(function, options), then run(arguments).
mlir::FailureOr<llvm::SmallVector<Tensor>>
runGlobalStep(mlir::FunctionOpInterface function,
              llvm::ArrayRef<Tensor> arguments,
              InterpreterOptions options = {});

} // namespace tgc

#endif // TGC_INTERPRETER_GLOBALSTEP_H
