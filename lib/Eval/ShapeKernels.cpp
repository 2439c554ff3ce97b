//===- ShapeKernels.cpp - kernels of shape ops ----------------------------===//
//
// constant, broadcast_in_dim, reshape, transpose, slice and concat: data
// movement, written once for every storage through strided gathers.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/Dialect/TG/TGOps.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

LogicalResult constantKernel(Operation *op, ArrayRef<const Tensor *>,
                             SmallVectorImpl<Tensor> &results,
                             const KernelContext &context) {
  ElementsAttr value = cast<tg::ConstantOp>(op).getValue();
  Tensor result = context.makeResult(op->getResult(0).getType());
  int64_t i = 0;
  if (result.isIntStorage()) {
    auto values = value.tryGetValues<APInt>();
    if (!values)
      return op->emitError("the interpreter cannot read this constant's "
                           "storage");
    Type elementType = result.getElementType();
    bool zeroExtend =
        elementType.isInteger(1) || elementType.isUnsignedInteger();
    for (const APInt &v : *values)
      result.ints()[i++] = zeroExtend ? v.getZExtValue() : v.getSExtValue();
  } else {
    auto values = value.tryGetValues<APFloat>();
    if (!values)
      return op->emitError("the interpreter cannot read this constant's "
                           "storage");
    for (APFloat v : *values) {
      bool losesInfo = false;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      result.setAsDouble(i++, v.convertToDouble());
    }
  }
  results.push_back(std::move(result));
  return success();
}

/// A result computed by a strided gather from the single operand.
LogicalResult gatherInto(Operation *op, const Tensor &source,
                         ArrayRef<int64_t> sourceStrides, int64_t offset,
                         SmallVectorImpl<Tensor> &results,
                         const KernelContext &context) {
  Tensor result = context.makeResult(op->getResult(0).getType());
  ArrayRef<int64_t> shape = result.getShape();
  visitData(source, result, [&](const auto &src, auto &dst) {
    stridedGather(src, dst, shape, sourceStrides, offset);
  });
  results.push_back(std::move(result));
  return success();
}

LogicalResult broadcastKernel(Operation *op, ArrayRef<const Tensor *> operands,
                              SmallVectorImpl<Tensor> &results,
                              const KernelContext &context) {
  auto broadcast = cast<tg::BroadcastInDimOp>(op);
  const Tensor &source = *operands[0];
  SmallVector<int64_t> operandStrides = getStrides(source.getShape());
  // New and size-1 dimensions repeat: stride 0.
  SmallVector<int64_t> strides(broadcast.getType().getRank(), 0);
  for (auto [i, dim] : llvm::enumerate(broadcast.getBroadcastDimensions()))
    if (source.getShape()[i] != 1)
      strides[dim] = operandStrides[i];
  return gatherInto(op, source, strides, 0, results, context);
}

LogicalResult reshapeKernel(Operation *op, ArrayRef<const Tensor *> operands,
                            SmallVectorImpl<Tensor> &results,
                            const KernelContext &) {
  results.push_back(operands[0]->withType(
      cast<RankedTensorType>(op->getResult(0).getType())));
  return success();
}

LogicalResult transposeKernel(Operation *op, ArrayRef<const Tensor *> operands,
                              SmallVectorImpl<Tensor> &results,
                              const KernelContext &context) {
  const Tensor &source = *operands[0];
  SmallVector<int64_t> operandStrides = getStrides(source.getShape());
  SmallVector<int64_t> strides;
  for (int64_t dim : cast<tg::TransposeOp>(op).getPermutation())
    strides.push_back(operandStrides[dim]);
  return gatherInto(op, source, strides, 0, results, context);
}

LogicalResult sliceKernel(Operation *op, ArrayRef<const Tensor *> operands,
                          SmallVectorImpl<Tensor> &results,
                          const KernelContext &context) {
  auto slice = cast<tg::SliceOp>(op);
  const Tensor &source = *operands[0];
  SmallVector<int64_t> operandStrides = getStrides(source.getShape());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  for (auto [i, stride] : llvm::enumerate(operandStrides)) {
    offset += slice.getStartIndices()[i] * stride;
    strides.push_back(slice.getStrides()[i] * stride);
  }
  return gatherInto(op, source, strides, offset, results, context);
}

LogicalResult padKernel(Operation *op, ArrayRef<const Tensor *> operands,
                        SmallVectorImpl<Tensor> &results,
                        const KernelContext &context) {
  auto pad = cast<tg::PadOp>(op);
  const Tensor &source = *operands[0];
  Tensor result = context.makeResult(pad.getType());
  ArrayRef<int64_t> shape = source.getShape();
  SmallVector<int64_t> resultStrides = getStrides(result.getShape());
  // Element i of the operand lands at low + i * (interior + 1) per dimension.
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  for (auto [d, stride] : llvm::enumerate(resultStrides)) {
    offset += pad.getLow()[d] * stride;
    strides.push_back((pad.getInterior()[d] + 1) * stride);
  }
  visitData(source, result, [&](const auto &src, auto &dst) {
    int64_t rank = shape.size();
    SmallVector<int64_t> index(rank, 0);
    int64_t target = offset;
    for (size_t i = 0, e = src.size(); i < e; ++i) {
      dst[target] = src[i];
      advanceIndex(index, shape, strides, rank, target);
    }
  });
  results.push_back(std::move(result));
  return success();
}

LogicalResult concatKernel(Operation *op, ArrayRef<const Tensor *> operands,
                           SmallVectorImpl<Tensor> &results,
                           const KernelContext &context) {
  int64_t dim = cast<tg::ConcatOp>(op).getDimension();
  Tensor result = context.makeResult(op->getResult(0).getType());
  ArrayRef<int64_t> shape = result.getShape();
  LineLayout line = getLineLayout(shape, dim);
  int64_t outer = line.outer, size = line.size, inner = line.inner;
  // Each input contributes a contiguous chunk to every outer row.
  int64_t rowSize = size * inner, column = 0;
  for (const Tensor *input : operands) {
    int64_t chunk = input->getShape()[dim] * inner;
    visitData(*input, result, [&](const auto &src, auto &dst) {
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(src.begin() + o * chunk, chunk,
                    dst.begin() + o * rowSize + column);
    });
    column += chunk;
  }
  results.push_back(std::move(result));
  return success();
}

} // namespace

void tgc::registerShapeKernels(KernelRegistry &registry) {
  registry.add(tg::ConstantOp::getOperationName(), constantKernel);
  registry.add(tg::BroadcastInDimOp::getOperationName(), broadcastKernel);
  registry.add(tg::ReshapeOp::getOperationName(), reshapeKernel);
  registry.add(tg::TransposeOp::getOperationName(), transposeKernel);
  registry.add(tg::SliceOp::getOperationName(), sliceKernel);
  registry.add(tg::ConcatOp::getOperationName(), concatKernel);
  registry.add(tg::PadOp::getOperationName(), padKernel);
}
