//===- TGDifferentiation.cpp - DifferentiableOpInterface of the tg ops ----===//
//
// The vector-Jacobian product of every differentiable tg op, built from tg
// ops (and the dedicated backward ops where one kernel is worth it). Each
// buildVjp receives the gradients of the op's results (null where a result
// has none) and returns one gradient per operand (null where none exists).
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGOps.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace tgc::tg;

using Grads = FailureOr<SmallVector<Value>>;

namespace {

/// A splat constant of `type` (a float or integer tensor type).
Value splat(OpBuilder &b, Location loc, Type type, double value) {
  auto tensorType = cast<RankedTensorType>(type);
  Type elementType = tensorType.getElementType();
  Attribute element =
      isa<FloatType>(elementType)
          ? Attribute(b.getFloatAttr(elementType, value))
          : Attribute(b.getIntegerAttr(elementType, int64_t(value)));
  return ConstantOp::create(b, loc,
                            DenseElementsAttr::get(tensorType, element));
}

Value zerosLike(OpBuilder &b, Location loc, Value value) {
  return splat(b, loc, value.getType(), 0.0);
}

Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return MulOp::create(b, loc, x, y);
}

/// Gradient through `select(pred, grad, 0)`.
Value maskGrad(OpBuilder &b, Location loc, Value pred, Value grad,
               bool whereTrue = true) {
  Value zeros = zerosLike(b, loc, grad);
  return whereTrue ? SelectOp::create(b, loc, pred, grad, zeros).getResult()
                   : SelectOp::create(b, loc, pred, zeros, grad).getResult();
}

/// Sums `grad` over `dims` and reshapes the sum to `type` (the backward of
/// broadcasts and of dims that were repeated).
Value sumTo(OpBuilder &b, Location loc, Value grad, ArrayRef<int64_t> dims,
            RankedTensorType type) {
  Value sum = grad;
  if (!dims.empty())
    sum = ReduceOp::create(b, loc, ReduceKind::Sum, grad,
                           b.getDenseI64ArrayAttr(dims));
  if (sum.getType() != type)
    sum = ReshapeOp::create(b, loc, type, sum);
  return sum;
}

/// The error for a gradient that reaches a result the backward cannot take.
Grads unsupportedResultGrad(Operation *op, StringRef result) {
  return op->emitOpError("cannot be differentiated through its '")
         << result << "' result (only the main result carries a gradient)";
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

Grads AddOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{grads[0], grads[0]};
}

Grads SubOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{grads[0], NegOp::create(b, getLoc(), grads[0])};
}

Grads MulOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  return SmallVector<Value>{mul(b, loc, grads[0], getRhs()),
                            mul(b, loc, grads[0], getLhs())};
}

Grads DivOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // d(a/b)/db = -(a/b)/b.
  Location loc = getLoc();
  Value da = DivOp::create(b, loc, grads[0], getRhs());
  Value db = NegOp::create(
      b, loc,
      DivOp::create(b, loc, mul(b, loc, grads[0], getResult()), getRhs()));
  return SmallVector<Value>{da, db};
}

Grads MaxOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // Ties send the gradient to the left operand.
  Location loc = getLoc();
  Value left =
      CompareOp::create(b, loc, CompareDirection::GE, getLhs(), getRhs());
  return SmallVector<Value>{maskGrad(b, loc, left, grads[0]),
                            maskGrad(b, loc, left, grads[0], false)};
}

Grads MinOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  Value left =
      CompareOp::create(b, loc, CompareDirection::LE, getLhs(), getRhs());
  return SmallVector<Value>{maskGrad(b, loc, left, grads[0]),
                            maskGrad(b, loc, left, grads[0], false)};
}

Grads PowOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // d(a^b)/da = b * a^(b-1); d(a^b)/db = a^b * log(a).
  Location loc = getLoc();
  Value one = splat(b, loc, getType(), 1.0);
  Value power =
      PowOp::create(b, loc, getLhs(), SubOp::create(b, loc, getRhs(), one));
  Value da = mul(b, loc, grads[0], mul(b, loc, getRhs(), power));
  Value db = mul(b, loc, grads[0],
                 mul(b, loc, getResult(), LogOp::create(b, loc, getLhs())));
  return SmallVector<Value>{da, db};
}

Grads NegOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{NegOp::create(b, getLoc(), grads[0])};
}

Grads AbsOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  Value negative = CompareOp::create(b, loc, CompareDirection::LT, getOperand(),
                                     zerosLike(b, loc, getOperand()));
  Value flipped = NegOp::create(b, loc, grads[0]);
  return SmallVector<Value>{
      SelectOp::create(b, loc, negative, flipped, grads[0])};
}

Grads ExpOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{mul(b, getLoc(), grads[0], getResult())};
}

Grads LogOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{DivOp::create(b, getLoc(), grads[0], getOperand())};
}

Grads SqrtOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // 1 / (2 sqrt(x)).
  Location loc = getLoc();
  Value twice = AddOp::create(b, loc, getResult(), getResult());
  return SmallVector<Value>{DivOp::create(b, loc, grads[0], twice)};
}

Grads RsqrtOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // -1/2 x^(-3/2) = -1/2 y^3.
  Location loc = getLoc();
  Value y = getResult();
  Value cube = mul(b, loc, y, mul(b, loc, y, y));
  Value factor = mul(b, loc, splat(b, loc, getType(), -0.5), cube);
  return SmallVector<Value>{mul(b, loc, grads[0], factor)};
}

Grads TanhOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  Value y = getResult();
  Value derivative =
      SubOp::create(b, loc, splat(b, loc, getType(), 1.0), mul(b, loc, y, y));
  return SmallVector<Value>{mul(b, loc, grads[0], derivative)};
}

Grads ErfOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // 2/sqrt(pi) exp(-x^2).
  Location loc = getLoc();
  Value x = getOperand();
  Value gauss = ExpOp::create(b, loc, NegOp::create(b, loc, mul(b, loc, x, x)));
  Value derivative =
      mul(b, loc, splat(b, loc, getType(), 1.1283791670955126), gauss);
  return SmallVector<Value>{mul(b, loc, grads[0], derivative)};
}

Grads SinOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  return SmallVector<Value>{
      mul(b, loc, grads[0], CosOp::create(b, loc, getOperand()))};
}

Grads CosOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  Value sine = SinOp::create(b, loc, getOperand());
  return SmallVector<Value>{NegOp::create(b, loc, mul(b, loc, grads[0], sine))};
}

Grads SigmoidOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  Value y = getResult();
  Value derivative =
      mul(b, loc, y, SubOp::create(b, loc, splat(b, loc, getType(), 1.0), y));
  return SmallVector<Value>{mul(b, loc, grads[0], derivative)};
}

Grads ReluOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  Value positive = CompareOp::create(b, loc, CompareDirection::GT, getOperand(),
                                     zerosLike(b, loc, getOperand()));
  return SmallVector<Value>{maskGrad(b, loc, positive, grads[0])};
}

Grads SiluOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // s + x s (1 - s), s = sigmoid(x).
  Location loc = getLoc();
  Value x = getOperand();
  Value s = SigmoidOp::create(b, loc, x);
  Value one = splat(b, loc, getType(), 1.0);
  Value inner =
      AddOp::create(b, loc, one, mul(b, loc, x, SubOp::create(b, loc, one, s)));
  return SmallVector<Value>{mul(b, loc, grads[0], mul(b, loc, s, inner))};
}

Grads GeluOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{GeluGradOp::create(
      b, getLoc(), grads[0], getOperand(), getApproximation())};
}

Grads SelectOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  return SmallVector<Value>{Value(), maskGrad(b, loc, getPred(), grads[0]),
                            maskGrad(b, loc, getPred(), grads[0], false)};
}

Grads ModeSelectOp::buildVjp(OpBuilder &, ValueRange grads) {
  // The value is `training`'s wherever a gradient is taken.
  return SmallVector<Value>{grads[0], Value()};
}

Grads ConvertOp::buildVjp(OpBuilder &b, ValueRange grads) {
  if (!isa<FloatType>(getOperand().getType().getElementType()))
    return SmallVector<Value>{Value()};
  return SmallVector<Value>{
      ConvertOp::create(b, getLoc(), getOperand().getType(), grads[0])};
}

Grads BitcastOp::buildVjp(OpBuilder &, ValueRange) {
  // A float's bits as another float: no derivative of the value. (A float's
  // bits as an integer have no gradient to pass back: autodiff never asks.)
  if (isa<FloatType>(getOperand().getType().getElementType()))
    return emitOpError("cannot be differentiated: the bits of a float read "
                       "as another float are no function of its value "
                       "with a derivative");
  return SmallVector<Value>{Value()};
}

Grads QuantizeDequantizeOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // Straight through the grid, not through its clamped ends.
  return SmallVector<Value>{QuantizeDequantizeGradOp::create(
                                b, getLoc(), grads[0], getOperand(), getScale(),
                                getZeroPoint(), getLow(), getHigh()),
                            Value(), Value()};
}

//===----------------------------------------------------------------------===//
// Mixed-precision ops
//===----------------------------------------------------------------------===//

Grads ScaleGradOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  auto gradType = cast<RankedTensorType>(grads[0].getType());
  Value scale = getScale();
  auto scalarType = RankedTensorType::get({}, gradType.getElementType());
  if (scale.getType() != scalarType)
    scale = ConvertOp::create(b, loc, scalarType, scale);
  if (gradType.getRank() != 0)
    scale =
        BroadcastInDimOp::create(b, loc, gradType, scale, ArrayRef<int64_t>{});
  return SmallVector<Value>{mul(b, loc, grads[0], scale), Value()};
}

Grads FakeQuantOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // Straight-through: rounding is treated as the identity.
  return SmallVector<Value>{grads[0], Value()};
}

Grads FakeQuantGradOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{
      FakeQuantOp::create(b, getLoc(), grads[0], getAmaxHistory(),
                          getFormatAttr(), getMarginAttr()),
      Value()};
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

Grads BroadcastInDimOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // Sum over the new dimensions and over the repeated size-1 ones.
  RankedTensorType operandType = getOperand().getType();
  RankedTensorType resultType = getType();
  llvm::SmallBitVector kept(resultType.getRank());
  for (auto [i, dim] : llvm::enumerate(getBroadcastDimensions()))
    if (operandType.getDimSize(i) == resultType.getDimSize(dim))
      kept.set(dim);
  SmallVector<int64_t> summed;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (!kept.test(d))
      summed.push_back(d);
  return SmallVector<Value>{sumTo(b, getLoc(), grads[0], summed, operandType)};
}

Grads ReshapeOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{
      ReshapeOp::create(b, getLoc(), getOperand().getType(), grads[0])};
}

Grads TransposeOp::buildVjp(OpBuilder &b, ValueRange grads) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, dim] : llvm::enumerate(perm))
    inverse[dim] = i;
  return SmallVector<Value>{
      TransposeOp::create(b, getLoc(), grads[0], inverse)};
}

Grads SliceOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // Put the slice back in place, zeros around and between its elements.
  RankedTensorType operandType = getOperand().getType();
  SmallVector<int64_t> low, high, interior;
  for (int64_t d = 0; d < operandType.getRank(); ++d) {
    int64_t start = getStartIndices()[d], stride = getStrides()[d];
    int64_t count = getType().getDimSize(d);
    int64_t span = count == 0 ? 0 : (count - 1) * stride + 1;
    low.push_back(start);
    interior.push_back(count == 0 ? 0 : stride - 1);
    high.push_back(operandType.getDimSize(d) - start - span);
  }
  return SmallVector<Value>{
      PadOp::create(b, getLoc(), grads[0], low, high, interior)};
}

Grads PadOp::buildVjp(OpBuilder &b, ValueRange grads) {
  RankedTensorType operandType = getOperand().getType();
  SmallVector<int64_t> start, limit, strides;
  for (int64_t d = 0; d < operandType.getRank(); ++d) {
    int64_t size = operandType.getDimSize(d), step = getInterior()[d] + 1;
    start.push_back(getLow()[d]);
    limit.push_back(getLow()[d] + (size == 0 ? 0 : (size - 1) * step + 1));
    strides.push_back(step);
  }
  return SmallVector<Value>{
      SliceOp::create(b, getLoc(), grads[0], start, limit, strides)};
}

Grads ConcatOp::buildVjp(OpBuilder &b, ValueRange grads) {
  SmallVector<Value> result;
  int64_t dim = getDimension(), offset = 0;
  RankedTensorType type = getType();
  for (Value input : getInputs()) {
    SmallVector<int64_t> start(type.getRank(), 0);
    SmallVector<int64_t> limit(type.getShape());
    SmallVector<int64_t> strides(type.getRank(), 1);
    int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(dim);
    start[dim] = offset;
    limit[dim] = offset + size;
    offset += size;
    result.push_back(
        SliceOp::create(b, getLoc(), grads[0], start, limit, strides));
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Reductions and compute ops
//===----------------------------------------------------------------------===//

Grads ReduceOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  RankedTensorType operandType = getOperand().getType();
  llvm::SmallBitVector reduced(operandType.getRank());
  for (int64_t dim : getDimensions())
    reduced.set(dim);
  SmallVector<int64_t> keptDims;
  for (int64_t d = 0; d < operandType.getRank(); ++d)
    if (!reduced.test(d))
      keptDims.push_back(d);
  auto spread = [&](Value value) -> Value {
    return BroadcastInDimOp::create(b, loc, operandType, value, keptDims);
  };
  Value grad = spread(grads[0]);
  switch (getKind()) {
  case ReduceKind::Sum:
    return SmallVector<Value>{grad};
  case ReduceKind::Mean: {
    // Divided by the count, as the forward divides its sum: a product with
    // 1/count rounded to the element type (0.2 for 5 rows) would make the
    // gradient another function's, by an f32 rounding (an exactly zero
    // gradient, a bias before a batch norm's, came out 1e-8).
    double count = double(operandType.getNumElements()) /
                   double(std::max<int64_t>(1, getType().getNumElements()));
    return SmallVector<Value>{
        DivOp::create(b, loc, grad, splat(b, loc, operandType, count))};
  }
  case ReduceKind::Max:
  case ReduceKind::Min: {
    // The elements equal to the extremum share the gradient evenly, as
    // PyTorch's amax: a subgradient. Each taking all of it would count it
    // once per tie (a max pool over a max pool's output, where one maximum
    // repeats in overlapping windows, got twice its gradient).
    Value extremum = spread(getResult());
    Value hit =
        CompareOp::create(b, loc, CompareDirection::EQ, getOperand(), extremum);
    Value ones = maskGrad(b, loc, hit, splat(b, loc, operandType, 1.0));
    Value ties = ReduceOp::create(b, loc, ReduceKind::Sum, ones,
                                  b.getDenseI64ArrayAttr(getDimensions()));
    // At least 1: a NaN extremum equals nothing.
    auto tiesType = cast<RankedTensorType>(ties.getType());
    ties = MaxOp::create(b, loc, ties, splat(b, loc, tiesType, 1.0));
    return SmallVector<Value>{
        DivOp::create(b, loc, maskGrad(b, loc, hit, grad), spread(ties))};
  }
  }
  return failure();
}

Grads MatmulOp::buildVjp(OpBuilder &b, ValueRange grads) {
  Location loc = getLoc();
  Value lhs = getLhs(), rhs = getRhs();
  bool ta = getTransposeA(), tb = getTransposeB();
  // The gradient in the operands' element type.
  Value g = grads[0];
  Type operandElement = getLhs().getType().getElementType();
  if (getType().getElementType() != operandElement)
    g = ConvertOp::create(
        b, loc, RankedTensorType::get(getType().getShape(), operandElement), g);

  // C = op(A) op(B): dop(A) = g op(B)^T, dop(B) = op(A)^T g, each written
  // in the stored layout of its operand.
  RankedTensorType lhsType = getLhs().getType();
  bool sharedRhs = getRhs().getType().getRank() == 2 && lhsType.getRank() > 2;
  Value da;
  if (ta && sharedRhs) {
    // B g^T would need B per batch: compute dop(A) and transpose it back.
    Value dopA = MatmulOp::create(b, loc, g, rhs, false, !tb);
    SmallVector<int64_t> perm =
        llvm::to_vector(llvm::seq<int64_t>(0, lhsType.getRank()));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    da = TransposeOp::create(b, loc, dopA, perm);
  } else {
    da = ta ? MatmulOp::create(b, loc, rhs, g, tb, true).getResult()
            : MatmulOp::create(b, loc, g, rhs, false, !tb).getResult();
  }

  if (sharedRhs && !ta) {
    // Every batch contributes to the shared matrix: one tall matmul.
    int64_t rows = lhsType.getNumElements() / lhsType.getShape().back();
    auto flat = [&](Value value) -> Value {
      auto type = cast<RankedTensorType>(value.getType());
      return ReshapeOp::create(
          b, loc,
          RankedTensorType::get({rows, type.getShape().back()},
                                type.getElementType()),
          value);
    };
    lhs = flat(lhs);
    g = flat(g);
  }
  Value db = tb ? MatmulOp::create(b, loc, g, lhs, true, ta).getResult()
                : MatmulOp::create(b, loc, lhs, g, !ta, false).getResult();
  if (sharedRhs && ta) {
    // Batched products, summed over the batch dimensions.
    SmallVector<int64_t> batchDims;
    for (int64_t d = 0; d + 2 < lhsType.getRank(); ++d)
      batchDims.push_back(d);
    db = sumTo(b, loc, db, batchDims, getRhs().getType());
  }
  return SmallVector<Value>{da, db};
}

Grads EmbeddingOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // A gathered mask or id table has no gradient.
  if (!isa<FloatType>(getTable().getType().getElementType()))
    return SmallVector<Value>{Value(), Value()};
  Location loc = getLoc();
  Value grad = grads[0];
  // padding_idx: the positions that read that row pass no gradient.
  if (std::optional<int64_t> padding = getPaddingIdx()) {
    Value ids = getIndices();
    Value kept =
        CompareOp::create(b, loc, CompareDirection::NE, ids,
                          splat(b, loc, ids.getType(), double(*padding)));
    auto idsRank = getIndices().getType().getRank();
    Value mask = BroadcastInDimOp::create(
        b, loc, cast<RankedTensorType>(grad.getType()).clone(b.getI1Type()),
        kept, llvm::to_vector(llvm::seq<int64_t>(0, idsRank)));
    grad = maskGrad(b, loc, mask, grad);
  }
  Value table =
      EmbeddingGradOp::create(b, loc, getTable().getType(), grad, getIndices());
  return SmallVector<Value>{table, Value()};
}

Grads EmbeddingGradOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{EmbeddingOp::create(b, getLoc(),
                                                getGradOutput().getType(),
                                                grads[0], getIndices()),
                            Value()};
}

Grads ExpertMatmulOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // y = x W[id] (W[id]^T transposed): dx = dy W[id]^T, in the input's
  // element type, and dW[e] = the sum of x^T dy over the rows of e.
  Location loc = getLoc();
  RankedTensorType input = getInput().getType();
  Value g = grads[0];
  if (getType().getElementType() != input.getElementType())
    g = ConvertOp::create(
        b, loc,
        RankedTensorType::get(getType().getShape(), input.getElementType()), g);
  Value dx = ExpertMatmulOp::create(b, loc, input, g, getWeight(), getIds(),
                                    !getTransposeB(), getGlobalExpertsAttr());
  Value dw = ExpertMatmulGradOp::create(
      b, loc, getWeight().getType(), getInput(), g, getIds(), getTransposeB(),
      getGlobalExpertsAttr());
  return SmallVector<Value>{dx, dw, Value()};
}

Grads TopKOp::buildVjp(OpBuilder &b, ValueRange grads) {
  RankedTensorType operandType = getOperand().getType();
  if (!grads[0] || !isa<FloatType>(operandType.getElementType()))
    return SmallVector<Value>{Value()};
  // Scatter-add each value's gradient to the position it came from: the
  // rows flattened into one table of single elements, indexed by
  // row * size + index.
  Location loc = getLoc();
  int64_t size = operandType.getShape().back(), k = getK();
  int64_t rows = size == 0 ? 0 : operandType.getNumElements() / size;
  auto i64 = b.getI64Type();
  SmallVector<int64_t> offsets;
  for (int64_t row = 0; row < rows; ++row)
    offsets.push_back(row * size);
  auto rowType = RankedTensorType::get({rows, 1}, i64);
  Value rowOffsets = ConstantOp::create(
      b, loc, DenseElementsAttr::get(rowType, ArrayRef<int64_t>(offsets)));
  auto pairType = RankedTensorType::get({rows, k}, i64);
  Value spread = BroadcastInDimOp::create(b, loc, pairType, rowOffsets,
                                          ArrayRef<int64_t>{0, 1});
  Value positions = AddOp::create(
      b, loc, spread, ReshapeOp::create(b, loc, pairType, getIndices()));
  Value flatIds = ReshapeOp::create(
      b, loc, RankedTensorType::get({rows * k}, i64), positions);
  Type element = operandType.getElementType();
  Value flatGrads = ReshapeOp::create(
      b, loc, RankedTensorType::get({rows * k, 1}, element), grads[0]);
  Value table = EmbeddingGradOp::create(
      b, loc, RankedTensorType::get({rows * size, 1}, element), flatGrads,
      flatIds);
  return SmallVector<Value>{ReshapeOp::create(b, loc, operandType, table)};
}

Grads SoftmaxOp::buildVjp(OpBuilder &b, ValueRange grads) {
  return SmallVector<Value>{SoftmaxGradOp::create(b, getLoc(), getResult(),
                                                  grads[0], getDimension())};
}

Grads LogSoftmaxOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // dx = g - softmax(x) * sum(g).
  Location loc = getLoc();
  RankedTensorType type = getType();
  int64_t dim = getDimension();
  SmallVector<int64_t> keptDims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != dim)
      keptDims.push_back(d);
  Value sum = ReduceOp::create(b, loc, ReduceKind::Sum, grads[0],
                               b.getDenseI64ArrayAttr({dim}));
  Value spread = BroadcastInDimOp::create(b, loc, type, sum, keptDims);
  Value probabilities = ExpOp::create(b, loc, getResult());
  return SmallVector<Value>{
      SubOp::create(b, loc, grads[0], mul(b, loc, probabilities, spread))};
}

Grads LayerNormOp::buildVjp(OpBuilder &b, ValueRange grads) {
  if (grads[1] || grads[2])
    return unsupportedResultGrad(*this, grads[1] ? "mean" : "rstd");
  auto grad = LayerNormGradOp::create(b, getLoc(), grads[0], getInput(),
                                      getMean(), getRstd(), getScale());
  return SmallVector<Value>{grad.getGradInput(), grad.getGradScale(),
                            grad.getGradBias()};
}

Grads RmsNormOp::buildVjp(OpBuilder &b, ValueRange grads) {
  if (grads[1])
    return unsupportedResultGrad(*this, "rstd");
  auto grad = RmsNormGradOp::create(b, getLoc(), grads[0], getInput(),
                                    getRstd(), getScale());
  return SmallVector<Value>{grad.getGradInput(), grad.getGradScale()};
}

Grads AttentionOp::buildVjp(OpBuilder &b, ValueRange grads) {
  if (grads[1])
    return unsupportedResultGrad(*this, "logsumexp");
  auto grad = AttentionGradOp::create(
      b, getLoc(), grads[0], getQuery(), getKey(), getValue(), getOutput(),
      getLogsumexp(), getBias(), getSeed(), getOffset(), getCausal(),
      getScaleAttr(), getSoftcapAttr(), getDropoutAttr(), getStreamAttr(),
      getGlobalShapeAttr());
  SmallVector<Value> result(getNumOperands());
  result[0] = grad.getGradQuery();
  result[1] = grad.getGradKey();
  result[2] = grad.getGradValue();
  // The bias's gradient, where a trained value reaches it (a mask computed
  // from the inputs never builds it).
  if (getBias())
    result[3] = AttentionBiasGradOp::create(
        b, getLoc(), grads[0], getQuery(), getKey(), getValue(), getOutput(),
        getLogsumexp(), getBias(), getSeed(), getOffset(), getCausal(),
        getScaleAttr(), getSoftcapAttr(), getDropoutAttr(), getStreamAttr(),
        getGlobalShapeAttr());
  return result;
}

Grads DropoutOp::buildVjp(OpBuilder &b, ValueRange grads) {
  // The same seed, stream, offset and global shape regenerate the
  // forward's mask.
  Value dx =
      DropoutOp::create(b, getLoc(), grads[0], getSeed(), getOffset(),
                        getRateAttr(), getStreamAttr(), getGlobalShapeAttr());
  SmallVector<Value> result(getNumOperands());
  result[0] = dx;
  return result;
}

Grads CrossEntropyOp::buildVjp(OpBuilder &b, ValueRange grads) {
  if (grads[1])
    return unsupportedResultGrad(*this, "logsumexp");
  Value dlogits = CrossEntropyGradOp::create(
      b, getLoc(), getLogits().getType(), getReduction(), grads[0], getLogits(),
      getLabels(), getLogsumexp(), getIgnoreIndexAttr());
  return SmallVector<Value>{dlogits, Value()};
}
