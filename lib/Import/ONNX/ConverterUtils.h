//===- ConverterUtils.h - helpers shared by the op converters ---*- C++ -*-===//
//
// Private to lib/Import/ONNX: the error-propagation macro and the small
// builders (element-type tests, compare, select, binary ops) that the
// converter files share.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_IMPORT_ONNX_CONVERTERUTILS_H
#define TGC_LIB_IMPORT_ONNX_CONVERTERUTILS_H

#include "GraphImporter.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>

/// `var = *expr`, returning failure from the converter when `expr` failed.
#define ASSIGN_OR_FAIL(var, expr)                                              \
  auto var##OrFailure = (expr);                                                \
  if (failed(var##OrFailure))                                                  \
    return mlir::failure();                                                    \
  auto var = std::move(*var##OrFailure)

namespace tgc::onnx_import {

/// The element count of `dims`, INT64_MAX when it does not fit (checked: a
/// shape like 2^32 x 2^32 must not wrap around to 0 and pass a size check).
inline int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    std::optional<int64_t> next = llvm::checkedMul(count, dim);
    if (!next)
      return INT64_MAX;
    count = *next;
  }
  return count;
}

/// The product of `dims` with zero dimensions counted as one, INT64_MAX
/// when it does not fit: what size limits bound, so that an empty tensor
/// with a dimension of 2^63 - 1 (whose strides overflow) is refused too.
inline int64_t span(llvm::ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    std::optional<int64_t> next =
        llvm::checkedMul(count, std::max<int64_t>(dim, 1));
    if (!next)
      return INT64_MAX;
    count = *next;
  }
  return count;
}

inline bool isFloat(mlir::Value value) {
  return llvm::isa<mlir::FloatType>(
      GraphImporter::getType(value).getElementType());
}

/// Whether `from` broadcasts to `to` by numpy's right-aligned rule.
inline bool broadcastsTo(llvm::ArrayRef<int64_t> from,
                         llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  for (auto [f, t] : llvm::zip(llvm::reverse(from), llvm::reverse(to)))
    if (f != 1 && f != t)
      return false;
  return true;
}

inline bool isBool(mlir::Value value) {
  return GraphImporter::getType(value).getElementType().isInteger(1);
}

template <typename OpTy>
mlir::Value buildBinary(GraphImporter &g, mlir::Value lhs, mlir::Value rhs) {
  return g.create<OpTy>(lhs.getType(), lhs, rhs);
}

inline mlir::Value select(GraphImporter &g, mlir::Value pred,
                          mlir::Value onTrue, mlir::Value onFalse) {
  return g.create<tg::SelectOp>(onTrue.getType(), pred, onTrue, onFalse);
}

/// `lhs <direction> rhs` as i1 (booleans compare as i32).
mlir::Value compare(GraphImporter &g, tg::CompareDirection direction,
                    mlir::Value lhs, mlir::Value rhs);

/// The product of `x` over `dims` (ReduceProd's; a scatter's reduction
/// "mul").
mlir::Value buildProduct(GraphImporter &g, mlir::Value x,
                         llvm::ArrayRef<int64_t> dims, bool keepDims);

/// `x` converted to `target`; to a float8 type with `saturate` (ONNX's
/// default for Cast, CastLike and QuantizeLinear), values beyond its largest
/// finite value, infinities included, become that value (NaN stays NaN);
/// without, the conversion's overflow (NaN for f8E4M3FN and the FNUZ
/// formats, an infinity for f8E5M2). f4E2M1FN always saturates.
mlir::Value convertSaturating(GraphImporter &g, mlir::Value x,
                              mlir::Type target, bool saturate);

/// `(|x|^p summed over `dims`)^(1/p)` (LpNormalization, LpPool), the dims
/// kept with size 1 when `keepDims`; a zero sum gives 0 with a zero
/// gradient (not 0 times the root's infinite slope).
mlir::Value buildLpNorm(GraphImporter &g, mlir::Value x,
                        llvm::ArrayRef<int64_t> dims, bool keepDims, double p);

/// The node's `stash_type` (the precision of a normalization's statistics,
/// or of a low-precision Range), FLOAT (the default) or DOUBLE; any other
/// is an error on the node.
mlir::FailureOr<int64_t> getStashType(GraphImporter &g);

/// Success for a float `value`, else an error on the node.
mlir::LogicalResult requireFloat(GraphImporter &g, mlir::Value value);
/// Success for a number (not a bool) `value`, else an error on the node.
mlir::LogicalResult requireNumeric(GraphImporter &g, mlir::Value value);

/// Both operands broadcast to their common shape (their element types must
/// be the same).
mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
broadcastPair(GraphImporter &g, mlir::Value lhs, mlir::Value rhs);
/// Before opset 7, a binary op's B laid at `axis` of A (`broadcast` = 1)
/// so that the numpy rule applies; B itself from opset 7.
mlir::FailureOr<mlir::Value>
alignLegacyOperand(GraphImporter &g, mlir::Value lhs, mlir::Value rhs);

/// Builders of elementwise ops of one tensor type, for the compositions
/// (ElementwiseConverters.cpp, GridSample).
struct Composer {
  GraphImporter &g;
  mlir::RankedTensorType type;

  mlir::Value c(double value) { return g.splat(type, value); }
  mlir::Value add(mlir::Value a, mlir::Value b) {
    return buildBinary<tg::AddOp>(g, a, b);
  }
  mlir::Value sub(mlir::Value a, mlir::Value b) {
    return buildBinary<tg::SubOp>(g, a, b);
  }
  mlir::Value mul(mlir::Value a, mlir::Value b) {
    return buildBinary<tg::MulOp>(g, a, b);
  }
  mlir::Value div(mlir::Value a, mlir::Value b) {
    return buildBinary<tg::DivOp>(g, a, b);
  }
  mlir::Value exp(mlir::Value a) { return g.create<tg::ExpOp>(type, a); }
  mlir::Value log(mlir::Value a) { return g.create<tg::LogOp>(type, a); }
  mlir::Value sqrt(mlir::Value a) { return g.create<tg::SqrtOp>(type, a); }
  mlir::Value neg(mlir::Value a) { return g.create<tg::NegOp>(type, a); }
  mlir::Value abs(mlir::Value a) { return g.create<tg::AbsOp>(type, a); }
  mlir::Value less(mlir::Value a, mlir::Value b) {
    return compare(g, tg::CompareDirection::LT, a, b);
  }
  mlir::Value equal(mlir::Value a, mlir::Value b) {
    return compare(g, tg::CompareDirection::EQ, a, b);
  }
  mlir::Value select(mlir::Value pred, mlir::Value a, mlir::Value b) {
    return onnx_import::select(g, pred, a, b);
  }
  /// `alpha * (exp(a) - 1)`, ELU's negative side.
  mlir::Value expm1Times(mlir::Value a, double alpha) {
    return mul(c(alpha), sub(exp(a), c(1.0)));
  }

  /// x rounded toward zero. Converting to i64 truncates, and is exact for
  /// every magnitude below 2^63 (floats from 2^(p-1) up are integers);
  /// larger ones, infinities and NaN are their own truncation. A zero
  /// result keeps x's sign, as C's trunc.
  mlir::Value trunc(mlir::Value x) {
    mlir::Type elementType = type.getElementType();
    mlir::Value t =
        g.convert(g.convert(x, g.builder.getI64Type()), elementType);
    t = select(equal(t, c(0.0)), mul(x, c(0.0)), t);
    return select(less(abs(x), c(std::ldexp(1.0, 63))), t, x);
  }
  mlir::Value floor(mlir::Value x) {
    mlir::Value t = trunc(x);
    return select(less(x, t), sub(t, c(1.0)), t);
  }
  mlir::Value ceil(mlir::Value x) {
    mlir::Value t = trunc(x);
    return select(less(t, x), add(t, c(1.0)), t);
  }

  /// x rounded to the nearest integer, halves to even (ONNX's Round,
  /// numpy's rint): floor(x), plus one when the fraction (exact: x -
  /// floor(x) loses nothing) is above a half, or a half and floor(x) odd;
  /// round(-0.3) is -0.
  mlir::Value round(mlir::Value x) {
    mlir::Value f = floor(x), half = c(0.5);
    mlir::Value fraction = sub(x, f);
    mlir::Value odd = less(mul(floor(mul(f, half)), c(2.0)), f);
    mlir::Value up = select(equal(fraction, half), odd, less(half, fraction));
    mlir::Value r = select(up, add(f, c(1.0)), f);
    return select(equal(r, c(0.0)), mul(x, c(0.0)), r);
  }
  /// x limited to [lo, hi].
  mlir::Value clamp(mlir::Value x, double lo, double hi) {
    return buildBinary<tg::MinOp>(g, buildBinary<tg::MaxOp>(g, x, c(lo)),
                                  c(hi));
  }
  mlir::Value atan(mlir::Value x);
};

/// `table` ([R, rest...]) with the rows of `updates` ([N, rest...]) written
/// at rows `ids` ([N], i64) by `reduction`: none (replaced), add, mul, max,
/// min (combined with what is there, in the updates' order). Ids known at
/// import: gathers, exact for every type; computed at run time: a
/// tg.embedding_grad scatter-add (f32, f16, bf16, bool; none and add).
mlir::FailureOr<mlir::Value> scatterRows(GraphImporter &g, mlir::Value table,
                                         mlir::Value ids, mlir::Value updates,
                                         llvm::StringRef reduction);

/// The element that leaves a value unchanged under a scatter's or a
/// reduction's `reduction` ("mul", "max", "min"; 0 for "none" and "add"),
/// of `elementType` (integers: their smallest or largest value).
double getNeutralElement(llvm::StringRef reduction, mlir::Type elementType);

/// Negative integer indices counted from the end of a dimension of `size`.
mlir::Value wrapNegativeIndices(GraphImporter &g, mlir::Value indices,
                                int64_t size);
/// ONNX Gather: the slices of `data` along `axis` that the integer
/// `indices` (negative ones counted from the end) pick, in the shape
/// data[:axis] + indices + data[axis+1:]; constant indices are range-checked.
mlir::FailureOr<mlir::Value> gatherAxis(GraphImporter &g, mlir::Value data,
                                        mlir::Value indices, int64_t axis);

// The converters of IndexingConverters.cpp.
mlir::LogicalResult convertPad(GraphImporter &g);
mlir::LogicalResult convertCumSum(GraphImporter &g);
mlir::LogicalResult convertCumProd(GraphImporter &g);
mlir::LogicalResult convertGatherND(GraphImporter &g);
mlir::LogicalResult convertGatherElements(GraphImporter &g);
mlir::LogicalResult convertScatterND(GraphImporter &g);
mlir::LogicalResult convertScatterElements(GraphImporter &g);
mlir::LogicalResult convertReverseSequence(GraphImporter &g);
mlir::LogicalResult convertTile(GraphImporter &g);
mlir::LogicalResult convertCenterCropPad(GraphImporter &g);
mlir::LogicalResult convertTopK(GraphImporter &g);
mlir::LogicalResult convertIsNaN(GraphImporter &g);
mlir::LogicalResult convertArgExtreme(GraphImporter &g);
mlir::LogicalResult convertOneHot(GraphImporter &g);
mlir::LogicalResult convertConv(GraphImporter &g);
mlir::LogicalResult convertConvTranspose(GraphImporter &g);
mlir::LogicalResult convertCol2Im(GraphImporter &g);
mlir::LogicalResult convertTensorScatter(GraphImporter &g);
mlir::LogicalResult convertPool(GraphImporter &g);
mlir::LogicalResult convertMaxUnpool(GraphImporter &g);
mlir::LogicalResult convertGlobalPool(GraphImporter &g);
mlir::LogicalResult convertEyeLike(GraphImporter &g);
mlir::LogicalResult convertCompress(GraphImporter &g);
mlir::LogicalResult convertNonZero(GraphImporter &g);
mlir::LogicalResult convertUnique(GraphImporter &g);

// NonZero of values computed at run time, imported densely
// (NonZeroHits.cpp; GraphImporter::Hits).
/// NonZero's output for an input `x` computed at run time: every position
/// that can be a hit, its hits' mask recorded.
mlir::LogicalResult convertNonZeroDensely(GraphImporter &g, mlir::Value x);
/// Before the current node converts: a reduction over a dense NonZero's
/// positions reads input 0 with the positions that are not hits set to its
/// neutral element (the name redefined for the node; `restore` lists what
/// to define back after it), or an error when it has none.
mlir::LogicalResult maskHitReduction(
    GraphImporter &g,
    llvm::SmallVectorImpl<std::pair<std::string, mlir::Value>> &restore);
/// After the current node converted: its outputs that run over a dense
/// NonZero's positions, or an error when it would mix them.
mlir::LogicalResult propagateHits(GraphImporter &g);
/// A Split of `x` along `axis` into `sizes` (`explicitSizes`: given by the
/// graph): an error when it splits a dense NonZero's positions into fewer
/// pieces than there are positions, or into equal pieces.
mlir::LogicalResult checkHitSplit(GraphImporter &g, mlir::Value x, int64_t axis,
                                  bool explicitSizes,
                                  llvm::ArrayRef<int64_t> sizes);
/// For a ScatterElements along `axis` (none: a ScatterND): null when
/// neither `indices` nor `updates` run over a dense NonZero's positions,
/// else which of their updates are hits (i1, of the indices' shape; for
/// ScatterND, without its last dimension); an error when only one of them
/// does, or along another dimension.
mlir::FailureOr<mlir::Value> getScatterHitMask(GraphImporter &g,
                                               mlir::Value indices,
                                               mlir::Value updates,
                                               std::optional<int64_t> axis);
/// An error at the NonZero when `value`, leaving the graph as `what` (a
/// graph or subgraph output), runs over its positions.
mlir::LogicalResult checkNoHits(GraphImporter &g, mlir::Value value,
                                llvm::StringRef what);
/// The convolution of `x` ([N, C, D1..Dn], float) with `weight` ([M,
/// C/group, k1..kn]) by the node's Conv attributes (strides, pads,
/// dilations, group, auto_pad), plus `bias` ([M]) if not null.
mlir::FailureOr<mlir::Value> convolve(GraphImporter &g, mlir::Value x,
                                      mlir::Value weight, mlir::Value bias);
/// The reduced dimensions of a Reduce* node reading `x` (axes from its
/// input or attribute, normalized; all when empty, or none at all, nullopt,
/// with noop_with_empty_axes); an error on a repeated or out-of-range axis.
mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
getReduceDims(GraphImporter &g, mlir::Value x);
/// One axis of a Slice node, against the size of its dimension: a positive
/// step keeps begin, begin + step, ... below limit (0 <= begin <= limit <=
/// size); a negative one keeps begin, begin + step, ... above limit (begin
/// in [0, size - 1], limit in [-1, size - 1]).
struct SliceAxis {
  int64_t dim, begin, limit, step;
};
/// The axes the current Slice node slices of a tensor of `shape` (starts,
/// ends, axes and steps from its inputs, or attributes before opset 10),
/// or an error on the node.
mlir::FailureOr<llvm::SmallVector<SliceAxis>>
getSliceAxes(GraphImporter &g, llvm::ArrayRef<int64_t> shape);
/// numpy's matmul of two float tensors of one element type (OpConverters).
mlir::FailureOr<mlir::Value> buildMatMul(GraphImporter &g, mlir::Value lhs,
                                         mlir::Value rhs);
// The converters of QuantizeConverters.cpp.
mlir::LogicalResult convertQuantizeLinear(GraphImporter &g);
mlir::LogicalResult convertDequantizeLinear(GraphImporter &g);
mlir::LogicalResult convertDynamicQuantizeLinear(GraphImporter &g);
mlir::LogicalResult convertMatMulInteger(GraphImporter &g);
mlir::LogicalResult convertQLinearMatMul(GraphImporter &g);
mlir::LogicalResult convertConvInteger(GraphImporter &g);
mlir::LogicalResult convertQLinearConv(GraphImporter &g);
mlir::LogicalResult convertBitShift(GraphImporter &g);
// The converters of TransformerConverters.cpp.
mlir::LogicalResult convertAttention(GraphImporter &g);
mlir::LogicalResult convertCausalConvWithState(GraphImporter &g);
mlir::LogicalResult convertLinearAttention(GraphImporter &g);
/// One of FlexAttention's modifier subgraphs (`score_mod`, `prob_mod`)
/// imported on `input`: its output (of the input's type), or `input` when
/// the node has no such subgraph.
using FlexModifier = llvm::function_ref<mlir::FailureOr<mlir::Value>(
    llvm::StringRef attribute, mlir::Value input)>;
/// FlexAttention-1 of ai.onnx.preview, its subgraphs imported by `modify`
/// (the model importer's).
mlir::LogicalResult convertFlexAttention(GraphImporter &g, FlexModifier modify);
mlir::LogicalResult convertRMSNormalization(GraphImporter &g);
mlir::LogicalResult convertRotaryEmbedding(GraphImporter &g);
// The converters of SpectralConverters.cpp.
mlir::LogicalResult convertDFT(GraphImporter &g);
mlir::LogicalResult convertSTFT(GraphImporter &g);
mlir::LogicalResult convertMelWeightMatrix(GraphImporter &g);
// The converters of TrainingConverters.cpp (ai.onnx.preview.training).
mlir::LogicalResult convertAdagrad(GraphImporter &g);
mlir::LogicalResult convertAdam(GraphImporter &g);
mlir::LogicalResult convertGradient(GraphImporter &g);
mlir::LogicalResult convertMomentum(GraphImporter &g);
// The converters of RecurrentConverters.cpp.
mlir::LogicalResult convertRNN(GraphImporter &g);
mlir::LogicalResult convertGRU(GraphImporter &g);
mlir::LogicalResult convertLSTM(GraphImporter &g);
// The converters of ResizeConverters.cpp.
mlir::LogicalResult convertResize(GraphImporter &g);
mlir::LogicalResult convertUpsample(GraphImporter &g);
mlir::LogicalResult convertGridSample(GraphImporter &g);
mlir::LogicalResult convertDeformConv(GraphImporter &g);
mlir::LogicalResult convertAffineGrid(GraphImporter &g);
mlir::LogicalResult convertRoiAlign(GraphImporter &g);
// The converters of ElementwiseConverters.cpp.
mlir::LogicalResult convertElu(GraphImporter &g);
mlir::LogicalResult convertSwish(GraphImporter &g);
mlir::LogicalResult convertSwiGLU(GraphImporter &g);
mlir::LogicalResult convertSelu(GraphImporter &g);
mlir::LogicalResult convertCelu(GraphImporter &g);
mlir::LogicalResult convertThresholdedRelu(GraphImporter &g);
mlir::LogicalResult convertSoftsign(GraphImporter &g);
mlir::LogicalResult convertPRelu(GraphImporter &g);
mlir::LogicalResult convertShrink(GraphImporter &g);
mlir::LogicalResult convertSign(GraphImporter &g);
mlir::LogicalResult convertTan(GraphImporter &g);
mlir::LogicalResult convertSinh(GraphImporter &g);
mlir::LogicalResult convertCosh(GraphImporter &g);
mlir::LogicalResult convertAsinh(GraphImporter &g);
mlir::LogicalResult convertAcosh(GraphImporter &g);
mlir::LogicalResult convertAtanh(GraphImporter &g);
mlir::LogicalResult convertAtan(GraphImporter &g);
mlir::LogicalResult convertAsin(GraphImporter &g);
mlir::LogicalResult convertAcos(GraphImporter &g);
mlir::LogicalResult convertFloor(GraphImporter &g);
mlir::LogicalResult convertCeil(GraphImporter &g);
mlir::LogicalResult convertRound(GraphImporter &g);
mlir::LogicalResult convertMod(GraphImporter &g);
mlir::LogicalResult convertPow(GraphImporter &g);
mlir::LogicalResult convertHannWindow(GraphImporter &g);
mlir::LogicalResult convertHammingWindow(GraphImporter &g);
mlir::LogicalResult convertBlackmanWindow(GraphImporter &g);
/// Hardmax along `axis` of `x` (float, rank >= 1): 1 at the first largest
/// element of each row, 0 elsewhere.
mlir::Value buildHardmax(GraphImporter &g, mlir::Value x, int64_t axis);

} // namespace tgc::onnx_import

#endif // TGC_LIB_IMPORT_ONNX_CONVERTERUTILS_H
