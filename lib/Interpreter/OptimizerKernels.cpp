//===- OptimizerKernels.cpp - interpreter kernels of optimizer ops --------===//
//
// sgd (with momentum), adamw and lamb, as TGOps.td defines them, computed in
// the parameter's storage type (f32, or double in f64 mode).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/Dialect/TG/TGOps.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

LogicalResult sgdKernel(Operation *op, ArrayRef<const Tensor *> operands,
                        SmallVectorImpl<Tensor> &results,
                        const KernelContext &context) {
  auto sgd = cast<tg::SgdOp>(op);
  const Tensor &param = *operands[0], &grad = *operands[1];
  double lr = operands[2]->getAsDouble(0);
  double momentum = sgd.getMomentum().convertToDouble();
  double decay = sgd.getWeightDecay().convertToDouble();
  bool nesterov = sgd.getNesterov();
  Tensor newParam = context.makeResult(param.getType());
  Tensor newBuffer;
  if (sgd.getMomentumBuffer())
    newBuffer = context.makeResult(param.getType());
  dispatchFloat(param, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &p = param.data<T>(), &g = grad.data<T>();
    std::vector<T> &out = newParam.data<T>();
    for (size_t i = 0, e = p.size(); i < e; ++i) {
      T d = g[i] + T(decay) * p[i];
      if (momentum > 0.0) {
        T buffer = T(momentum) * operands[3]->data<T>()[i] + d;
        newBuffer.data<T>()[i] = buffer;
        d = nesterov ? d + T(momentum) * buffer : buffer;
      }
      out[i] = p[i] - T(lr) * d;
    }
  });
  results.push_back(std::move(newParam));
  if (sgd.getMomentumBuffer())
    results.push_back(std::move(newBuffer));
  return success();
}

/// AdamW, or LAMB when `Lamb` (the update scaled by the trust ratio).
template <typename OpTy, bool Lamb>
LogicalResult adamKernel(Operation *op, ArrayRef<const Tensor *> operands,
                         SmallVectorImpl<Tensor> &results,
                         const KernelContext &context) {
  auto adam = cast<OpTy>(op);
  const Tensor &param = *operands[0], &grad = *operands[1];
  double lr = operands[4]->getAsDouble(0);
  int64_t step = operands[5]->ints()[0];
  if (step < 1)
    return op->emitOpError("step must be at least 1 (the first step is 1), "
                           "got ")
           << step;
  double beta1 = adam.getBeta1().convertToDouble();
  double beta2 = adam.getBeta2().convertToDouble();
  double epsilon = adam.getEpsilon().convertToDouble();
  double decay = adam.getWeightDecay().convertToDouble();
  double correction1 = 1.0 - std::pow(beta1, double(step));
  double correction2 = 1.0 - std::pow(beta2, double(step));
  Tensor newParam = context.makeResult(param.getType());
  Tensor newM = context.makeResult(param.getType());
  Tensor newV = context.makeResult(param.getType());
  dispatchFloat(param, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &p = param.data<T>(), &g = grad.data<T>(),
                         &m = operands[2]->data<T>(),
                         &v = operands[3]->data<T>();
    std::vector<T> &mOut = newM.data<T>(), &vOut = newV.data<T>(),
                   &out = newParam.data<T>();
    std::vector<T> update(p.size());
    T updateNorm = 0, paramNorm = 0;
    for (size_t i = 0, e = p.size(); i < e; ++i) {
      mOut[i] = T(beta1) * m[i] + T(1 - beta1) * g[i];
      vOut[i] = T(beta2) * v[i] + T(1 - beta2) * g[i] * g[i];
      T mHat = mOut[i] / T(correction1);
      T vHat = vOut[i] / T(correction2);
      update[i] = mHat / (std::sqrt(vHat) + T(epsilon)) + T(decay) * p[i];
      updateNorm += update[i] * update[i];
      paramNorm += p[i] * p[i];
    }
    T ratio = 1;
    if (Lamb && updateNorm > 0 && paramNorm > 0)
      ratio = std::sqrt(paramNorm) / std::sqrt(updateNorm);
    for (size_t i = 0, e = p.size(); i < e; ++i)
      out[i] = p[i] - T(lr) * ratio * update[i];
  });
  results.push_back(std::move(newParam));
  results.push_back(std::move(newM));
  results.push_back(std::move(newV));
  return success();
}

} // namespace

void tgc::registerOptimizerKernels(KernelRegistry &registry) {
  registry.add(tg::SgdOp::getOperationName(), sgdKernel);
  registry.add(tg::AdamWOp::getOperationName(), adamKernel<tg::AdamWOp, false>);
  registry.add(tg::LambOp::getOperationName(), adamKernel<tg::LambOp, true>);
}
