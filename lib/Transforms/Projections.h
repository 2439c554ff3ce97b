//===- Projections.h - products of an activation by a weight ---*- C++ -*-===//
//
// What tg-split-fused-projections and tg-shard-annotate's tp preset read as
// a layer: a tg.matmul, or a mixture of experts' tg.expert_matmul, whose
// weight is a stack of matrices (the right-hand side's batch dimension is
// the expert). Both take the activation as operand 0 and the weight as
// operand 1.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TRANSFORMS_PROJECTIONS_H
#define TGC_LIB_TRANSFORMS_PROJECTIONS_H

#include "tgc/Dialect/TG/TGOps.h"

namespace tgc {

inline bool isProjection(mlir::Operation *op) {
  return mlir::isa<tg::MatmulOp, tg::ExpertMatmulOp>(op);
}

/// Whether a projection applies its weight transposed (the output
/// dimension second to last).
inline bool getTransposeB(mlir::Operation *projection) {
  if (auto expert = mlir::dyn_cast<tg::ExpertMatmulOp>(projection))
    return expert.getTransposeB();
  return mlir::cast<tg::MatmulOp>(projection).getTransposeB();
}

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_PROJECTIONS_H
