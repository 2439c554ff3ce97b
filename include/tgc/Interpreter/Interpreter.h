//===- Interpreter.h - the CPU reference interpreter -----------*- C++ -*-===//
//
// Executes a func.func of tg ops on the CPU: the oracle every pass is checked
// against. It runs the op kernels of lib/Eval op by op; precision emulation
// rounds every low-precision result to its element type; f64 mode runs every
// float op in double for gradient checks.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_INTERPRETER_H
#define TGC_INTERPRETER_INTERPRETER_H

#include "tgc/Eval/Kernels.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace tgc {

/// The interpreter computes with the kernels' numerics.
using InterpreterOptions = EvalOptions;

class Interpreter {
public:
  explicit Interpreter(
      InterpreterOptions options = {},
      const KernelRegistry &registry = KernelRegistry::getDefault())
      : options(options), registry(registry) {}

  /// Whether `function` can run: one block, and every argument and value a
  /// tensor the machine can hold (a located error otherwise). Call it before
  /// allocating arguments; run() checks it too.
  static mlir::LogicalResult checkCanRun(mlir::FunctionOpInterface function);

  /// Runs `function` on `arguments` (one per argument, of its exact type and
  /// converted to the storage the options imply, see `convertTensor`).
  mlir::FailureOr<llvm::SmallVector<Tensor>>
  run(mlir::FunctionOpInterface function, llvm::ArrayRef<Tensor> arguments);

  /// Runs the ops of `block` with its arguments bound to `arguments` and
  /// returns the operands of its terminator (used for fusion bodies too).
  mlir::FailureOr<llvm::SmallVector<Tensor>>
  runBlock(mlir::Block &block, llvm::ArrayRef<const Tensor *> arguments);

  /// Runs the kernel of `op` (not a terminator) on `operands` and appends
  /// its results, checked against the op's result types and rounded to
  /// them. What runBlock does for each op; the simulated ranks call it per
  /// device.
  mlir::LogicalResult runOp(mlir::Operation *op,
                            llvm::ArrayRef<const Tensor *> operands,
                            llvm::SmallVectorImpl<Tensor> &results);

  const InterpreterOptions &getOptions() const { return options; }

private:
  InterpreterOptions options;
  const KernelRegistry &registry;
};

} // namespace tgc

#endif // TGC_INTERPRETER_INTERPRETER_H
