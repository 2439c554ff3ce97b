//===- PrecisionKernels.cpp - kernels of mixed-precision ops --------------===//
//
// tg.scale_grad and tg.fake_quant_grad are identities in the forward, and
// tg.mode_select is its training value as imported;
// tg.fake_quant rounds to an fp8 format with the delayed scale of its amax
// history, as TGOps.td defines it.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/Dialect/TG/TGOps.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

LogicalResult identityKernel(Operation *op, ArrayRef<const Tensor *> operands,
                             SmallVectorImpl<Tensor> &results,
                             const KernelContext &) {
  results.push_back(*operands[0]);
  return success();
}

LogicalResult fakeQuantKernel(Operation *op, ArrayRef<const Tensor *> operands,
                              SmallVectorImpl<Tensor> &results,
                              const KernelContext &context) {
  auto quant = cast<tg::FakeQuantOp>(op);
  const Tensor &x = *operands[0], &history = *operands[1];
  FloatFormat format = getFloatFormat(quant.getFormat());
  double maxFinite = getMaxFinite(format);
  double amax = 0.0;
  for (int64_t i = 0, e = history.getNumElements(); i < e; ++i)
    amax = std::max(amax, history.getAsDouble(i));
  double scale = 1.0;
  if (amax > 0.0 && std::isfinite(amax))
    scale = std::ldexp(
        1.0, static_cast<int>(std::floor(std::log2(maxFinite / amax))) -
                 static_cast<int>(quant.getMargin()));
  Tensor result = context.makeResult(x.getType());
  for (int64_t i = 0, e = x.getNumElements(); i < e; ++i) {
    double value = x.getAsDouble(i) * scale;
    if (!std::isnan(value))
      value = std::clamp(value, -maxFinite, maxFinite);
    result.setAsDouble(i, roundToFormat(static_cast<float>(value), format) /
                              scale);
  }
  results.push_back(std::move(result));
  return success();
}

} // namespace

void tgc::registerPrecisionKernels(KernelRegistry &registry) {
  registry.add(tg::ScaleGradOp::getOperationName(), identityKernel);
  registry.add(tg::ModeSelectOp::getOperationName(), identityKernel);
  registry.add(tg::FakeQuantGradOp::getOperationName(), identityKernel);
  registry.add(tg::FakeQuantOp::getOperationName(), fakeQuantKernel);
}
