//===- RaiseExperts.h - gathered experts to a grouped product --*- C++ -*-===//

#ifndef TGC_LIB_TRANSFORMS_RAISEEXPERTS_H
#define TGC_LIB_TRANSFORMS_RAISEEXPERTS_H

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace tgc {
namespace tg {
class MatmulOp;
} // namespace tg

/// The grouped form (tg.expert_matmul) of `root` when it multiplies vectors by
/// matrices gathered from a table of experts' matrices (RaiseExperts.cpp says
/// when), built at `b`'s insertion point; failure, building nothing, otherwise.
mlir::FailureOr<mlir::Value> raiseGatheredExperts(tg::MatmulOp root,
                                                  mlir::OpBuilder &b);

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_RAISEEXPERTS_H
