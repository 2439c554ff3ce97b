//===- Raise.h - recognizers of decomposed high-level ops -------*- C++ -*-===//
//
// The raisers behind tg-raise, usable without the pass: each recognizes one
// decomposition rooted at an op and replaces it with the tg op.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TRANSFORMS_RAISE_H
#define TGC_TRANSFORMS_RAISE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace tgc {

/// The families of decompositions tg-raise recognizes.
enum class RaiseKind {
  LayerNorm,
  RmsNorm,
  Gelu,
  Silu,
  Attention,
  CrossEntropy,
};

/// The option name of a kind (`layer_norm`, `rms_norm`, ...).
llvm::StringRef getRaiseKindName(RaiseKind kind);
/// All kinds, in the order tg-raise tries them.
llvm::ArrayRef<RaiseKind> getAllRaiseKinds();

struct RaiseOptions {
  /// Attention mask values at or below this hide a key (-inf always does).
  double maskThreshold = -1.0e4;
};

/// Tries to raise the decomposition of `kind` whose last op is `root`. On
/// success the root's uses read the new op, and the root and the ops of the
/// decomposition, now dead, are erased, each also added to `erased` (so a
/// caller iterating over a list of ops can skip them).
mlir::LogicalResult
raiseDecomposition(RaiseKind kind, mlir::Operation *root,
                   const RaiseOptions &options,
                   llvm::SmallPtrSetImpl<mlir::Operation *> &erased);

} // namespace tgc

#endif // TGC_TRANSFORMS_RAISE_H
