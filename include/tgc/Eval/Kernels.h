//===- Kernels.h - the op kernels on host tensors ---------------*- C++ -*-===//
//
// What computes a tg op on host tensors: one kernel per op name, registered
// in a `KernelRegistry`, with the numerics options every kernel obeys
// (precision emulation, f64 mode). The interpreter runs them op by op; the
// ONNX importer runs them to fold constants. Nothing here depends on passes.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_EVAL_KERNELS_H
#define TGC_EVAL_KERNELS_H

#include "tgc/Eval/Tensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace mlir {
class Block;
} // namespace mlir

namespace tgc {

/// The numerics of the kernels.
struct EvalOptions {
  /// Round every bf16/f16/f8 result to its element type (else keep f32).
  bool precisionEmulation = true;
  /// Hold and compute every float tensor in double, without rounding.
  bool f64 = false;
};

/// Runs the ops of a block with its arguments bound to the given tensors and
/// returns the operands of its terminator: how a kernel of an op with a
/// region (tg.fusion) evaluates its body.
using BlockRunner =
    llvm::function_ref<mlir::FailureOr<llvm::SmallVector<Tensor>>(
        mlir::Block &, llvm::ArrayRef<const Tensor *>)>;

/// What a kernel sees: the options, and how to run a nested block. Errors
/// (an embedding id out of range, an integer division by zero...) are
/// reported on the op.
struct KernelContext {
  const EvalOptions &options;
  /// Null where no block can be run (constant folding at import).
  BlockRunner runBlock = nullptr;

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

/// The smallest and largest value of integer element type `type`
/// (signless types are signed; ui8, ui16 and ui32 unsigned).
int64_t getIntMin(mlir::Type type);
int64_t getIntMax(mlir::Type type);

/// Rounds the float elements of `tensor` to its element type (when
/// `options` emulate precision) and wraps integers to their width, as after
/// every op.
void normalizeTensor(Tensor &tensor, const EvalOptions &options);

/// `tensor` in the storage `options` use for its type (float <-> double),
/// normalized.
Tensor convertTensor(const Tensor &tensor, const EvalOptions &options);

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

#endif // TGC_EVAL_KERNELS_H
