//===- Passes.h - the tg passes ---------------------------------*- C++ -*-===//

#ifndef TGC_TRANSFORMS_PASSES_H
#define TGC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace tgc {

#define GEN_PASS_DECL
#include "tgc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tgc/Transforms/Passes.h.inc"

/// The tg passes work on functions of one block (a training step is
/// straight-line code): a located error for each function under `root`
/// (`root` itself when it is one) with more blocks, naming `pass`.
mlir::LogicalResult checkSingleBlockFunctions(mlir::Operation *root,
                                              llvm::StringRef pass);

} // namespace tgc

#endif // TGC_TRANSFORMS_PASSES_H
