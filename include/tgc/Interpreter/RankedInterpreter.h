//===- RankedInterpreter.h - all ranks of an SPMD program -------*- C++ -*-===//
//
// Runs a partitioned (per-device, SPMD) function for every device of its
// mesh in one process: op by op in lockstep, the tg ops through the
// interpreter's kernels on each device's values, the shard collectives
// (all_reduce, all_gather, all_slice, reduce_scatter, all_to_all) among the
// simulated devices. A pipelined function (docs/pipeline.md) runs each op on
// the devices of its stage only, and moves values between stages with
// shard.send/shard.recv pairs. The reference that partitioned programs are
// checked against, not a fast path: it holds every device's copy of every
// live value (in a pipelined function, the copies of the devices that hold
// it).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_RANKEDINTERPRETER_H
#define TGC_INTERPRETER_RANKEDINTERPRETER_H

#include "tgc/Interpreter/Interpreter.h"

#include <optional>

namespace tgc {

/// The mesh the ranks simulate: the shard.grid's name and shape (devices
/// numbered row-major, the last axis innermost).
struct SimulatedMesh {
  std::string gridName;
  llvm::SmallVector<int64_t> shape;

  int64_t getNumDevices() const;
};

/// The stages of a pipelined function (one with `tg.pipeline`) on a
/// simulated mesh: an op of stage s runs on the devices whose coordinate on
/// the pipeline axis is s mod P, P the size of that axis.
class SimulatedPipeline {
public:
  /// The pipeline of `function` on `mesh`, none when it has no
  /// `tg.pipeline`. A located error when its axis is not one of the mesh's
  /// `tg.mesh_axes` or its `stages` is not the axis' size, when a top-level
  /// op other than the terminator has no `tg.stage`, or a stage is not in
  /// [0, stages * virtual_stages).
  static mlir::FailureOr<std::optional<SimulatedPipeline>>
  get(mlir::FunctionOpInterface function, const SimulatedMesh &mesh);

  /// The pipeline axis of the mesh, its name, and its size P.
  unsigned getAxis() const { return axis; }
  llvm::StringRef getAxisName() const { return axisName; }
  int64_t getNumDevicesOnAxis() const { return axisSize; }
  /// The coordinate on the pipeline axis of the devices running stage
  /// `stage`, and of those running the top-level op `op` (not the
  /// terminator).
  int64_t getCoordinateOfStage(int64_t stage) const { return stage % axisSize; }
  int64_t getCoordinate(mlir::Operation *op) const;
  /// The coordinate of the devices that hold `value`: none for an argument
  /// of the body, which every device holds. A send's result is held by the
  /// sender.
  std::optional<int64_t> getHolder(mlir::Value value) const;

private:
  SimulatedPipeline(std::string axisName, unsigned axis, int64_t axisSize)
      : axisName(std::move(axisName)), axis(axis), axisSize(axisSize) {}

  std::string axisName;
  unsigned axis;
  int64_t axisSize;
};

class RankedInterpreter {
public:
  explicit RankedInterpreter(
      InterpreterOptions options = {},
      const KernelRegistry &registry = KernelRegistry::getDefault())
      : interpreter(options, registry) {}

  /// Whether `function` can run on the ranks of `mesh`: what
  /// Interpreter::checkCanRun asks, and every shard op one of the five
  /// collectives, on `mesh`'s grid, over distinct axes of it, with tensor
  /// axes in range, outside regions (a located error otherwise). A
  /// pipelined function must also have a valid SimulatedPipeline, its
  /// collectives must stay within a stage (not over the pipeline axis), each
  /// value must be used only on the devices that hold it, and values cross
  /// stages only through a shard.send whose one use is a shard.recv, both
  /// over the pipeline axis, with static indices naming each other's
  /// devices.
  static mlir::LogicalResult checkCanRun(mlir::FunctionOpInterface function,
                                         const SimulatedMesh &mesh);

  /// Runs `function` on every device: `arguments[d]` are device d's
  /// arguments (of the function's local types); the result is each device's
  /// results. In a pipelined function, a device that does not hold a result
  /// (SimulatedPipeline::getHolder of the returned value) has an empty
  /// Tensor in its place.
  mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<Tensor>>>
  run(mlir::FunctionOpInterface function, const SimulatedMesh &mesh,
      llvm::ArrayRef<llvm::SmallVector<Tensor>> arguments);

  const InterpreterOptions &getOptions() const {
    return interpreter.getOptions();
  }

private:
  /// Runs the collective `op` on every device's operand; a group whose
  /// devices have no operand (null: another stage's devices) is skipped.
  mlir::LogicalResult runCollective(mlir::Operation *op,
                                    const SimulatedMesh &mesh,
                                    llvm::ArrayRef<const Tensor *> inputs,
                                    llvm::SmallVectorImpl<Tensor> &results);

  Interpreter interpreter;
};

} // namespace tgc

#endif // TGC_INTERPRETER_RANKEDINTERPRETER_H
