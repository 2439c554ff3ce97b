//===- RankedInterpreter.h - all ranks of an SPMD program -------*- C++ -*-===//
//
// Runs a partitioned (per-device, SPMD) function for every device of its
// mesh in one process: op by op in lockstep, the tg ops through the
// interpreter's kernels on each device's values, the shard collectives
// (all_reduce, all_gather, all_slice, reduce_scatter, all_to_all) among the
// simulated devices. The reference that partitioned programs are checked
// against, not a fast path: it holds every device's copy of every live value.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_RANKEDINTERPRETER_H
#define TGC_INTERPRETER_RANKEDINTERPRETER_H

#include "tgc/Interpreter/Interpreter.h"

namespace tgc {

/// The mesh the ranks simulate: the shard.grid's name and shape (devices
/// numbered row-major, the last axis innermost).
struct SimulatedMesh {
  std::string gridName;
  llvm::SmallVector<int64_t> shape;

  int64_t getNumDevices() const;
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
  /// axes in range, outside regions (a located error otherwise).
  static mlir::LogicalResult checkCanRun(mlir::FunctionOpInterface function,
                                         const SimulatedMesh &mesh);

  /// Runs `function` on every device: `arguments[d]` are device d's
  /// arguments (of the function's local types); the result is each device's
  /// results.
  mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<Tensor>>>
  run(mlir::FunctionOpInterface function, const SimulatedMesh &mesh,
      llvm::ArrayRef<llvm::SmallVector<Tensor>> arguments);

  const InterpreterOptions &getOptions() const {
    return interpreter.getOptions();
  }

private:
  /// Runs the collective `op` on every device's operand.
  mlir::LogicalResult runCollective(mlir::Operation *op,
                                    const SimulatedMesh &mesh,
                                    llvm::ArrayRef<const Tensor *> inputs,
                                    llvm::SmallVectorImpl<Tensor> &results);

  Interpreter interpreter;
};

} // namespace tgc

#endif // TGC_INTERPRETER_RANKEDINTERPRETER_H
