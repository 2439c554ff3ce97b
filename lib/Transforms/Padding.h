//===- Padding.h - The ops that pad and cut a value -------------*- C++ -*-===//
//
// What ZeRO's padding (ZeroPadding.h) and tensor parallelism's padded
// vocabularies and heads (TensorParallelPadding.h) build: a value cut back
// to the caller's shape, a value padded with zeros, and a uniform value made
// again in the padded shape. Each is built at the builder's insertion point,
// with the pipeline attributes (stage, micro-batch, direction) of the op
// `like`.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TRANSFORMS_PADDING_H
#define TGC_LIB_TRANSFORMS_PADDING_H

#include "mlir/IR/Builders.h"

namespace tgc {

/// `value`'s leading corner of `shape` (a tg.slice).
mlir::Value createCut(mlir::OpBuilder &builder, mlir::Value value,
                      llvm::ArrayRef<int64_t> shape, mlir::Operation *like);

/// `value` with zeros after its end in each dimension, up to `shape` (a
/// tg.pad).
mlir::Value createZeroPad(mlir::OpBuilder &builder, mlir::Value value,
                          llvm::ArrayRef<int64_t> shape, mlir::Operation *like);

/// `value`, a splat constant or a broadcast scalar, made again in `shape`
/// (the same value in the padding: a factor, a predicate); null for any
/// other value.
mlir::Value createUniform(mlir::OpBuilder &builder, mlir::Value value,
                          llvm::ArrayRef<int64_t> shape, mlir::Operation *like);

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_PADDING_H
