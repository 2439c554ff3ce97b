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

} // namespace tgc

#endif // TGC_TRANSFORMS_PASSES_H
