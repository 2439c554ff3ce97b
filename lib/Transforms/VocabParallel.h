//===- VocabParallel.h - Per-device ops over a split vocabulary -*- C++ -*-===//
//
// Megatron's vocabulary-parallel embedding and cross-entropy, as tg-partition
// builds them: the ops whose local computation needs the global index of the
// rows or classes a device holds (an embedding table split on its rows, its
// gradient, a cross-entropy and its gradient split on the classes). Each
// becomes ordinary tg ops and `shard` collectives on the device's block; the
// block's first index comes from a table of block offsets sliced by
// `shard.all_slice`, so no new op is needed and every later stage (fusion,
// memory plan, interpreter, CUDA emitter) sees ops it already handles.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TRANSFORMS_VOCABPARALLEL_H
#define TGC_LIB_TRANSFORMS_VOCABPARALLEL_H

#include "tgc/Analysis/ShardingPropagation.h"

#include "mlir/IR/Builders.h"

namespace tgc {

/// The factor of `rule` whose split needs the device's block offset:
/// an embedding's table rows, an embedding gradient's result rows, a
/// cross-entropy's (or its gradient's) classes; -1 for other ops.
int64_t getVocabFactor(mlir::Operation *op, const tg::ShardingRule &rule);

/// Whether `op`'s results are complete over the axes of its vocabulary
/// factor (the cross-entropy reduces over them itself); otherwise they are
/// partial sums over them (an embedding) or split (the gradients).
bool reducesVocabFactor(mlir::Operation *op);

/// The first index of the device's block, for blocks of `block` indices
/// split over `axes` of `mesh` in position order: a table of the blocks'
/// offsets cut by `shard.all_slice`, as a `type` scalar.
mlir::Value buildBlockOffset(mlir::OpBuilder &builder, mlir::Location loc,
                             llvm::ArrayRef<unsigned> axes,
                             const tg::Mesh &mesh, int64_t block,
                             mlir::IntegerType type);

/// `ids` (local, of `type`) relative to the device's block of `block`
/// indices split over `axes` of `mesh`, and whether each falls in the
/// block (i1). `bound`, if any, is recorded on the subtraction as its
/// tg.id_bound.
std::pair<mlir::Value, mlir::Value>
buildBlockIds(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value ids,
              mlir::RankedTensorType type, llvm::ArrayRef<unsigned> axes,
              const tg::Mesh &mesh, int64_t block,
              std::optional<int64_t> bound);

/// Builds at `builder`'s insertion point the local computation of `op` with
/// its vocabulary factor split over `axes` of `mesh`, from the local
/// `operands` of `operandTypes` (an argument's type is still the global
/// one while tg-partition runs), with results of `resultTypes`. An
/// embedding's result is a partial sum over `axes` (zero rows for ids
/// another device holds).
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildVocabParallel(mlir::OpBuilder &builder, mlir::Operation *op,
                   mlir::ValueRange operands, mlir::TypeRange operandTypes,
                   mlir::TypeRange resultTypes, llvm::ArrayRef<unsigned> axes,
                   const tg::Mesh &mesh);

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_VOCABPARALLEL_H
