//===- GemmEpilogue.h - the ops a cuBLASLt epilogue computes ----*- C++ -*-===//
//
// What tg-fuse folds into a gemm region as cuBLASLt epilogue stages, and
// what the CUDA emitter reads back off the region to make the one cuBLASLt
// call: the same tests on both sides.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_GEMMEPILOGUE_H
#define TGC_ANALYSIS_GEMMEPILOGUE_H

#include "tgc/Dialect/TG/TGOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

namespace tgc {

/// The cuBLASLt activation epilogue computing `op` exactly, or "".
/// cuBLASLt's GELU is the tanh approximation, so erf GELU stays apart.
inline llvm::StringRef getCublasLtActivation(mlir::Operation *op) {
  if (auto gelu = llvm::dyn_cast<tg::GeluOp>(op))
    return gelu.getApproximation() == tg::GeluApproximation::Tanh ? "GELU" : "";
  if (llvm::isa<tg::ReluOp>(op))
    return "RELU";
  return "";
}

/// Whether `op` sums all but the last dimension of its operand: the bias
/// gradient of a [..., N] tensor.
inline bool isColumnSum(mlir::Operation *op) {
  auto reduce = llvm::dyn_cast<tg::ReduceOp>(op);
  if (!reduce || reduce.getKind() != tg::ReduceKind::Sum)
    return false;
  int64_t rank =
      llvm::cast<mlir::RankedTensorType>(reduce.getOperand().getType())
          .getRank();
  return rank >= 2 &&
         llvm::equal(reduce.getDimensions(), llvm::seq<int64_t>(0, rank - 1));
}

} // namespace tgc

#endif // TGC_ANALYSIS_GEMMEPILOGUE_H
