//===- TGFolders.cpp - folders of the tg ops -----------------------------===//
//
// Local simplifications that need no new ops: identities (x * 1, a reshape
// to the same type), compositions updated in place (transpose of transpose)
// and constants (a splat broadcast stays a splat).
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tgc::tg;

/// Whether `attr` is a splat constant whose elements equal `value` exactly
/// (for floats, bit for bit: -0.0 is not +0.0).
static bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat expected(value);
    bool losesInfo = false;
    expected.convert(floatType.getFloatSemantics(),
                     APFloat::rmNearestTiesToEven, &losesInfo);
    return !losesInfo &&
           splat.getSplatValue<APFloat>().bitwiseIsEqual(expected);
  }
  if (isa<IntegerType>(elementType)) {
    APInt bits = splat.getSplatValue<APInt>();
    return (elementType.isUnsignedInteger()
                ? int64_t(bits.getZExtValue())
                : bits.getSExtValue()) == static_cast<int64_t>(value);
  }
  return false;
}

static bool isFloatTensor(Value value) {
  return isa<FloatType>(getElementTypeOrSelf(value.getType()));
}

/// A splat constant of another shape, for shape ops over splats.
static Attribute reshapeSplat(Attribute attr, Type type) {
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(attr))
    return splat.resizeSplat(cast<ShapedType>(type));
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + (-0.0) is x for every float x (x + +0.0 is not, for x = -0.0).
  if (isSplatOf(adaptor.getRhs(), isFloatTensor(getLhs()) ? -0.0 : 0.0))
    return getLhs();
  return {};
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0.0))
    return getLhs();
  return {};
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    return getLhs();
  return {};
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    return getLhs();
  return {};
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto producer = getOperand().getDefiningOp<NegOp>())
    return producer.getOperand();
  return {};
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return getOnTrue();
  if (auto pred = dyn_cast_or_null<SplatElementsAttr>(adaptor.getPred()))
    return pred.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  return {};
}

OpFoldResult ConvertOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return getValue(); }

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  // Same rank means the identity: the dimensions are strictly increasing.
  if (getOperand().getType() == getType())
    return getOperand();
  if (Attribute splat = reshapeSplat(adaptor.getOperand(), getType()))
    return splat;
  if (auto producer = getOperand().getDefiningOp<BroadcastInDimOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t dim : producer.getBroadcastDimensions())
      composed.push_back(getBroadcastDimensions()[dim]);
    setBroadcastDimensions(composed);
    getOperandMutable().assign(producer.getOperand());
    return getResult();
  }
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    return dense.reshape(getType());
  if (auto producer = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(producer.getOperand());
    return getResult();
  }
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getOperand();
  if (Attribute splat = reshapeSplat(adaptor.getOperand(), getType()))
    return splat;
  if (auto producer = getOperand().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t dim : perm)
      composed.push_back(producer.getPermutation()[dim]);
    setPermutation(composed);
    getOperandMutable().assign(producer.getOperand());
    return getResult();
  }
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return reshapeSplat(adaptor.getOperand(), getType());
}

OpFoldResult PadOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

//===----------------------------------------------------------------------===//
// Reductions and compute ops
//===----------------------------------------------------------------------===//

OpFoldResult EmbeddingOp::fold(FoldAdaptor adaptor) {
  // Every row in order (ids 0, 1, ..., V - 1): the table itself.
  if (auto ids = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getIndices());
      ids && getType() == getTable().getType()) {
    int64_t expected = 0;
    bool inOrder = true;
    for (const APInt &id : ids.getValues<APInt>())
      inOrder &= id.getSExtValue() == expected++;
    if (inOrder)
      return getTable();
  }
  // Every row of a splat table is the same.
  return reshapeSplat(adaptor.getTable(), getType());
}

LogicalResult TopKOp::fold(FoldAdaptor adaptor,
                           SmallVectorImpl<OpFoldResult> &results) {
  // All of a row of one element, in order: the operand and position 0.
  RankedTensorType type = getOperand().getType();
  if (type.getShape().back() != 1 || getK() != 1)
    return failure();
  results.push_back(getOperand());
  results.push_back(DenseElementsAttr::get(
      getIndices().getType(),
      IntegerAttr::get(getIndices().getType().getElementType(), 0)));
  return success();
}

OpFoldResult ReduceOp::fold(FoldAdaptor adaptor) {
  if (getDimensions().empty())
    return getOperand();
  return {};
}

OpFoldResult DropoutOp::fold(FoldAdaptor adaptor) {
  if (getRate().isZero())
    return getOperand();
  return {};
}
