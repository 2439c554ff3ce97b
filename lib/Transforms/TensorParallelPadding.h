//===- TensorParallelPadding.h - Dimensions tp does not divide -*- C++ -*-===//
//
// What tp cannot split evenly, tg-shard-annotate pads with zeros so that it
// can: a vocabulary (Megatron pads it to a multiple of 128 times tp; tgc to
// the next multiple of tp: GPT-2's 50257 classes are 50258 on tp=2), the
// heads of multi-head attention (GPT-2 1.5b's 25 heads are 28 on tp=4), and
// the width of a column-parallel layer (an MLP's 176 is 177 on tp=3).
//
// The parameters with a row or column per class (the embedding tables and
// the output projection), per head (the columns of the query, key and
// value projections and their biases, the rows of the output projection),
// or per column of the layer (its weight's, bias's and gate's columns, the
// rows of its row-parallel partners) get zeros at the end of that
// dimension, and the step carries the longer
// dimension through the ops that read them: every op whose sharding rule
// maps the padded dimension to one dimension of its results gets the padded
// type; a reshape that splits or joins it keeps the padding at the end of
// the outermost dimension of the group (a projection's H*d columns become
// H' heads of d); a slice of the whole dimension takes the padding too.
// Each value knows whether its padding holds zeros: a parameter's does, and
// an op's result does when the op maps zeros to zeros (a product with a
// zero, a sum, a copy, a GELU; attention outputs zeros where the values
// are zero, and zero gradients where the output's gradient is). A padded
// head is therefore zero everywhere: its queries, keys and values are, so
// is its output, which the zero rows of the output projection read, and so
// are its gradients and its parameters after every update. The classes of
// a cross-entropy see the padded logits masked to the lowest value of their
// type, so that the padding has no probability (the loss, its gradient and
// the padded rows' gradients, zero, are the unpadded step's).
//
// Where an op cannot take the padded dimension (it needs the dimension
// whole, it sums it over values that are not zero in the padding, a
// dropout whose mask depends on the shape), it reads the caller's shape
// through a tg.slice: the padded step computes what the unpadded one does,
// wherever the padding stops. The signature records the caller's shapes in
// tg.unpadded_shape, and the lookups and losses the bound of their ids in
// tg.id_bound.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TRANSFORMS_TENSORPARALLELPADDING_H
#define TGC_LIB_TRANSFORMS_TENSORPARALLELPADDING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace tgc {

/// A parameter to pad: its dimension `dim`.
struct PaddedParameter {
  mlir::BlockArgument param;
  unsigned dim;
};

/// Pads dimension `dim` of each of `parameters` from `size` to `padded` and
/// carries the padding through the step (see the file comment). Returns why
/// it cannot (the IR untouched: an update of one of them that is not
/// elementwise), or an empty string.
std::string padParameters(mlir::func::FuncOp function, int64_t size,
                          int64_t padded,
                          llvm::ArrayRef<PaddedParameter> parameters);

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_TENSORPARALLELPADDING_H
