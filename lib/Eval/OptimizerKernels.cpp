//===- OptimizerKernels.cpp - kernels of optimizer ops --------------------===//
//
// sgd (with momentum), adamw, lamb and adafactor, as TGOps.td defines them,
// computed in the parameter's storage type (f32, or double in f64 mode).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/Dialect/TG/TGOps.h"

#include <algorithm>
#include <type_traits>

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

/// The gradient's elements as the parameter's storage type `T`, times the
/// op's `grad_scale` operand when it has one (its last operand). A gradient
/// narrower than its parameter (bf16 for f32, f32 for f64) may be held in
/// another storage: it is widened (and scaled) into `scratch`. The product
/// is rounded to `T` as a multiply of the widened gradient would be.
template <typename T>
const std::vector<T> &readGrad(Operation *op, ArrayRef<const Tensor *> operands,
                               std::vector<T> &scratch) {
  const Tensor &grad = *operands[1];
  bool scaled =
      static_cast<bool>(cast<tg::OptimizerOpInterface>(op).getParamGradScale());
  if (!scaled && (std::is_same_v<T, double> ? grad.isDoubleStorage()
                                            : grad.isFloatStorage()))
    return grad.data<T>();
  T scale = scaled ? static_cast<T>(operands.back()->getAsDouble(0)) : T(1);
  scratch.resize(grad.getNumElements());
  for (int64_t i = 0, e = grad.getNumElements(); i < e; ++i)
    scratch[i] = static_cast<T>(grad.getAsDouble(i)) * scale;
  return scratch;
}

LogicalResult sgdKernel(Operation *op, ArrayRef<const Tensor *> operands,
                        SmallVectorImpl<Tensor> &results,
                        const KernelContext &context) {
  auto sgd = cast<tg::SgdOp>(op);
  const Tensor &param = *operands[0];
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
    std::vector<T> scratch;
    const std::vector<T> &p = param.data<T>(),
                         &g = readGrad<T>(op, operands, scratch);
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
  const Tensor &param = *operands[0];
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
    std::vector<T> scratch;
    const std::vector<T> &p = param.data<T>(),
                         &g = readGrad<T>(op, operands, scratch),
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

/// Adafactor: the second moment factored over the last two dimensions for a
/// parameter of rank >= 2 (two states), unfactored otherwise (one state).
LogicalResult adafactorKernel(Operation *op, ArrayRef<const Tensor *> operands,
                              SmallVectorImpl<Tensor> &results,
                              const KernelContext &context) {
  auto adafactor = cast<tg::AdafactorOp>(op);
  size_t numStates = adafactor.getState().size();
  const Tensor &param = *operands[0];
  ArrayRef<const Tensor *> states = operands.slice(2, numStates);
  double lr = operands[2 + numStates]->getAsDouble(0);
  int64_t step = operands[3 + numStates]->ints()[0];
  if (step < 1)
    return op->emitOpError("step must be at least 1 (the first step is 1), "
                           "got ")
           << step;
  double beta =
      1.0 - std::pow(double(step), adafactor.getDecayRate().convertToDouble());
  double epsilon1 = adafactor.getEpsilon1().convertToDouble();
  double clipThreshold = adafactor.getClipThreshold().convertToDouble();
  double decay = adafactor.getWeightDecay().convertToDouble();
  bool factored = numStates == 2;
  // A factored parameter is seen as [batches, rows, columns].
  ArrayRef<int64_t> shape = param.getShape();
  int64_t rows = factored ? shape[shape.size() - 2] : 1;
  int64_t columns = factored ? shape.back() : 1;
  int64_t batches = 1;
  if (factored)
    for (int64_t size : shape.drop_back(2))
      batches *= size;

  Tensor newParam = context.makeResult(param.getType());
  SmallVector<Tensor, 2> newStates;
  for (const Tensor *state : states)
    newStates.push_back(context.makeResult(state->getType()));
  dispatchFloat(param, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> scratch;
    const std::vector<T> &p = param.data<T>(),
                         &g = readGrad<T>(op, operands, scratch);
    std::vector<T> &out = newParam.data<T>();
    size_t size = p.size();
    T b = T(beta), oneMinusB = T(1 - beta), eps = T(epsilon1);
    // An empty dimension has a zero mean, not 0/0.
    auto mean = [](T sum, int64_t count) {
      return count ? sum / T(count) : T(0);
    };
    // The update divides the gradient by the square root of the second
    // moment. Factored, that moment is row * column / mean(row), taken as
    // two factors (as Hugging Face's Adafactor does): the product of two
    // small moments underflows in f32 (1e-24 each for LLaMA's q and k
    // projections at initialisation; 1e-30, epsilon1 alone, for a zero
    // gradient) and gave 0/0.
    std::vector<T> rootVariance(size);
    if (factored) {
      const std::vector<T> &row = states[0]->data<T>(),
                           &column = states[1]->data<T>();
      std::vector<T> &newRow = newStates[0].data<T>(),
                     &newColumn = newStates[1].data<T>();
      std::vector<T> rowSum(batches * rows, 0), columnSum(batches * columns, 0);
      for (int64_t n = 0; n < batches; ++n)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < columns; ++j) {
            int64_t index = (n * rows + i) * columns + j;
            T g2 = g[index] * g[index] + eps;
            rowSum[n * rows + i] += g2;
            columnSum[n * columns + j] += g2;
          }
      for (size_t k = 0, e = newRow.size(); k < e; ++k)
        newRow[k] = b * row[k] + oneMinusB * mean(rowSum[k], columns);
      for (size_t k = 0, e = newColumn.size(); k < e; ++k)
        newColumn[k] = b * column[k] + oneMinusB * mean(columnSum[k], rows);
      for (int64_t n = 0; n < batches; ++n) {
        T rowTotal = 0;
        for (int64_t i = 0; i < rows; ++i)
          rowTotal += newRow[n * rows + i];
        T rowMean = mean(rowTotal, rows);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < columns; ++j)
            rootVariance[(n * rows + i) * columns + j] =
                std::sqrt(newRow[n * rows + i] / rowMean) *
                std::sqrt(newColumn[n * columns + j]);
      }
    } else {
      const std::vector<T> &v = states[0]->data<T>();
      std::vector<T> &newV = newStates[0].data<T>();
      for (size_t i = 0; i < size; ++i) {
        newV[i] = b * v[i] + oneMinusB * (g[i] * g[i] + eps);
        rootVariance[i] = std::sqrt(newV[i]);
      }
    }
    // U = grad / sqrt(V), then clipped by its root mean square.
    std::vector<T> update(size);
    T sumOfSquares = 0;
    for (size_t i = 0; i < size; ++i) {
      update[i] = g[i] / rootVariance[i];
      sumOfSquares += update[i] * update[i];
    }
    T rms = std::sqrt(mean(sumOfSquares, static_cast<int64_t>(size)));
    T scale = T(1) / std::max(T(1), rms / T(clipThreshold));
    for (size_t i = 0; i < size; ++i)
      out[i] = p[i] - T(lr) * (update[i] * scale + T(decay) * p[i]);
  });
  results.push_back(std::move(newParam));
  for (Tensor &state : newStates)
    results.push_back(std::move(state));
  return success();
}

} // namespace

void tgc::registerOptimizerKernels(KernelRegistry &registry) {
  registry.add(tg::SgdOp::getOperationName(), sgdKernel);
  registry.add(tg::AdamWOp::getOperationName(), adamKernel<tg::AdamWOp, false>);
  registry.add(tg::LambOp::getOperationName(), adamKernel<tg::LambOp, true>);
  registry.add(tg::AdafactorOp::getOperationName(), adafactorKernel);
}
