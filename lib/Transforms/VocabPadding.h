//===- VocabPadding.h - A vocabulary tp does not divide, padded -*- C++ -*-===//
//
// Megatron pads the vocabulary so that tp splits it (to a multiple of 128
// times tp; tgc to the next multiple of tp): GPT-2's 50257 classes are 50258
// on tp=2. tg-shard-annotate pads the parameters with a row or column per
// class (the embedding tables and the output projection) with zeros, and
// carries the longer dimension through the step that reads them: every op
// whose sharding rule maps the padded dimension to one dimension of its
// results gets the padded type; the classes of a cross-entropy see the
// padded logits masked to the lowest value of their type, so that the
// padding has no probability (the loss, its gradient and the padded rows'
// gradients, zero, are the unpadded step's). Where an op cannot take the
// padded dimension (it needs the dimension whole, or sums it over values
// that are not zero in the padding), it reads the caller's shape through a
// tg.slice. The signature records the caller's shapes in
// tg.unpadded_shape, and the lookups and losses the bound of their ids in
// tg.id_bound.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TRANSFORMS_VOCABPADDING_H
#define TGC_LIB_TRANSFORMS_VOCABPADDING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace tgc {

/// One parameter with a row or column per class: its dimension `dim`.
struct VocabularyParameter {
  mlir::BlockArgument param;
  unsigned dim;
};

/// Pads `classes` to `padded` in `parameters` and the step (see the file
/// comment). Returns why it cannot (the IR untouched: an update of one of
/// them that is not elementwise), or an empty string.
std::string padVocabulary(mlir::func::FuncOp function, int64_t classes,
                          int64_t padded,
                          llvm::ArrayRef<VocabularyParameter> parameters);

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_VOCABPADDING_H
