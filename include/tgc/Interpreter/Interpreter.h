//===- Interpreter.h - the CPU reference interpreter -----------*- C++ -*-===//
//
// Executes a func.func of tg ops on the CPU: the oracle every pass is checked
// against. Kernels are registered per op name; precision emulation rounds
// every low-precision result to its element type; f64 mode runs every float
// op in double for gradient checks.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_INTERPRETER_H
#define TGC_INTERPRETER_INTERPRETER_H

#include "tgc/Interpreter/Tensor.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace tgc {

struct InterpreterOptions {
  /// Round every bf16/f16/f8 result to its element type (else keep f32).
  bool precisionEmulation = true;
  /// Hold and compute every float tensor in double, without rounding.
  bool f64 = false;
};

/// What a kernel sees: the options, and where to report a runtime error
/// (an embedding id out of range, an integer division by zero...).
class Interpreter;

struct KernelContext {
  const InterpreterOptions &options;
  /// The interpreter running the op, for ops with regions (tg.fusion).
  Interpreter &interpreter;
  /// The storage of float results: Double in f64 mode or for f64 tensors.
  Tensor::Storage floatStorageFor(mlir::Type elementType) const;
  /// A zero-filled result tensor of `type` with the storage it needs.
  Tensor makeResult(mlir::Type type) const;
};

/// Computes the results of `op` from its operands. Errors are reported on
/// `op` (with its location) before returning failure.
using Kernel = std::function<mlir::LogicalResult(
    mlir::Operation *op, llvm::ArrayRef<const Tensor *> operands,
    llvm::SmallVectorImpl<Tensor> &results, const KernelContext &context)>;

/// Op name -> kernel.
class KernelRegistry {
public:
  void add(llvm::StringRef opName, Kernel kernel);
  const Kernel *lookup(llvm::StringRef opName) const;

  /// The registry with a kernel for every tg op.
  static const KernelRegistry &getDefault();

private:
  llvm::StringMap<Kernel> kernels;
};

class Interpreter {
public:
  explicit Interpreter(
      InterpreterOptions options = {},
      const KernelRegistry &registry = KernelRegistry::getDefault())
      : options(options), registry(registry) {}

  /// Runs `function` on `arguments` (one per argument, of its exact type and
  /// in the storage the options imply, see `convertArgument`).
  mlir::FailureOr<llvm::SmallVector<Tensor>>
  run(mlir::FunctionOpInterface function, llvm::ArrayRef<Tensor> arguments);

  /// Runs the ops of `block` with its arguments bound to `arguments` and
  /// returns the operands of its terminator (used for fusion bodies too).
  mlir::FailureOr<llvm::SmallVector<Tensor>>
  runBlock(mlir::Block &block, llvm::ArrayRef<const Tensor *> arguments);

  /// Converts a tensor to the storage these options use for its type
  /// (float <-> double), rounding low-precision floats when emulating.
  Tensor convertArgument(const Tensor &tensor) const;

  /// Rounds the float elements of `tensor` to its element type (and wraps
  /// integers to their width), as after every op.
  void normalize(Tensor &tensor) const;

  const InterpreterOptions &getOptions() const { return options; }

private:
  InterpreterOptions options;
  const KernelRegistry &registry;
};

/// Registration hooks of the kernel groups (one file each).
void registerElementwiseKernels(KernelRegistry &registry);
void registerShapeKernels(KernelRegistry &registry);
void registerReductionKernels(KernelRegistry &registry);
void registerComputeKernels(KernelRegistry &registry);
void registerBackwardKernels(KernelRegistry &registry);
void registerOptimizerKernels(KernelRegistry &registry);
void registerStructureKernels(KernelRegistry &registry);
void registerPrecisionKernels(KernelRegistry &registry);

} // namespace tgc

#endif // TGC_INTERPRETER_INTERPRETER_H
