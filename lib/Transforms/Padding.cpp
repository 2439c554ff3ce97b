//===- Padding.cpp - The ops that pad and cut a value ---------------------===//
//
// See Padding.h.
//
//===----------------------------------------------------------------------===//

#include "Padding.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

static RankedTensorType withShape(Value value, ArrayRef<int64_t> shape) {
  return cast<RankedTensorType>(value.getType()).clone(shape);
}

Value tgc::createCut(OpBuilder &builder, Value value, ArrayRef<int64_t> shape,
                     Operation *like) {
  SmallVector<int64_t> zeros(shape.size(), 0), ones(shape.size(), 1);
  auto slice = SliceOp::create(builder, value.getLoc(), withShape(value, shape),
                               value, zeros, shape, ones);
  copyPipelineAttrs(like, slice);
  return slice;
}

Value tgc::createZeroPad(OpBuilder &builder, Value value,
                         ArrayRef<int64_t> shape, Operation *like) {
  ArrayRef<int64_t> from = cast<RankedTensorType>(value.getType()).getShape();
  SmallVector<int64_t> zeros(shape.size(), 0), high;
  for (auto [size, to] : llvm::zip_equal(from, shape))
    high.push_back(to - size);
  auto pad = PadOp::create(builder, value.getLoc(), withShape(value, shape),
                           value, zeros, high, zeros);
  copyPipelineAttrs(like, pad);
  return pad;
}

Value tgc::createUniform(OpBuilder &builder, Value value,
                         ArrayRef<int64_t> shape, Operation *like) {
  RankedTensorType type = withShape(value, shape);
  Operation *made = nullptr;
  if (auto constant = value.getDefiningOp<ConstantOp>()) {
    if (auto splat = dyn_cast<SplatElementsAttr>(constant.getValue()))
      made =
          ConstantOp::create(builder, value.getLoc(), splat.resizeSplat(type));
  } else if (auto broadcast = value.getDefiningOp<BroadcastInDimOp>()) {
    if (cast<RankedTensorType>(broadcast.getOperand().getType()).getRank() == 0)
      made = BroadcastInDimOp::create(builder, value.getLoc(), type,
                                      broadcast.getOperand(),
                                      broadcast.getBroadcastDimensionsAttr());
  }
  if (!made)
    return {};
  copyPipelineAttrs(like, made);
  return made->getResult(0);
}
