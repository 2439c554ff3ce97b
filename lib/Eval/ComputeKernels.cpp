//===- ComputeKernels.cpp - kernels of compute ops ------------------------===//
//
// matmul and the expert products (through BLAS), embedding, top_k, layer_norm,
// rms_norm, attention, dropout and cross_entropy, following the semantics in
// TGOps.td. Statistics and scores are computed in f32 (double in f64 mode).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/runtime/ScalarOps.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Support/Philox.h"

#include <algorithm>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

/// Copies computed values into a result of possibly another storage.
template <typename T> void store(const std::vector<T> &values, Tensor &result) {
  if constexpr (std::is_same_v<T, float>) {
    if (result.isFloatStorage()) {
      result.floats() = values;
      return;
    }
  } else {
    if (result.isDoubleStorage()) {
      result.doubles() = values;
      return;
    }
  }
  for (size_t i = 0, e = values.size(); i < e; ++i)
    result.setAsDouble(i, values[i]);
}

LogicalResult matmulKernel(Operation *op, ArrayRef<const Tensor *> operands,
                           SmallVectorImpl<Tensor> &results,
                           const KernelContext &context) {
  auto matmul = cast<tg::MatmulOp>(op);
  const Tensor &lhs = *operands[0], &rhs = *operands[1];
  bool transA = matmul.getTransposeA(), transB = matmul.getTransposeB();
  ArrayRef<int64_t> lhsShape = lhs.getShape(), rhsShape = rhs.getShape();
  int64_t rank = lhsShape.size();
  int64_t m = lhsShape[rank - (transA ? 1 : 2)];
  int64_t k = lhsShape[rank - (transA ? 2 : 1)];
  int64_t n = rhsShape[rhsShape.size() - (transB ? 2 : 1)];
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    batch *= lhsShape[d];
  bool sharedRhs = rhsShape.size() == 2;
  Tensor result = context.makeResult(matmul.getType());
  dispatchFloat(lhs, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &a = lhs.data<T>(), &b = rhs.data<T>();
    std::vector<T> c(batch * m * n);
    if (c.empty())
      return;
    if (k == 0) {
      std::fill(c.begin(), c.end(), T(0));
    } else if (sharedRhs && !transA) {
      // A linear layer: all batches form one tall matrix.
      gemm(false, transB, batch * m, n, k, a.data(), b.data(), c.data());
    } else {
      for (int64_t i = 0; i < batch; ++i)
        gemm(transA, transB, m, n, k, a.data() + i * m * k,
             b.data() + (sharedRhs ? 0 : i * k * n), c.data() + i * m * n);
    }
    store(c, result);
  });
  results.push_back(std::move(result));
  return success();
}

/// dst[r, :] = values[rows[r], :] for the n rows of `width`.
template <typename T>
void gatherRows(const std::vector<T> &values, int64_t width,
                const int64_t *rows, int64_t n, std::vector<T> &dst) {
  dst.resize(n * width);
  for (int64_t r = 0; r < n; ++r)
    std::copy_n(values.begin() + rows[r] * width, width,
                dst.begin() + r * width);
}

/// tg.expert_matmul: the rows of each expert gathered into one matrix and
/// multiplied by the expert's through BLAS (a grouped GEMM), the products
/// scattered back to their rows.
LogicalResult expertMatmulKernel(Operation *op,
                                 ArrayRef<const Tensor *> operands,
                                 SmallVectorImpl<Tensor> &results,
                                 const KernelContext &context) {
  auto expert = cast<tg::ExpertMatmulOp>(op);
  const Tensor &x = *operands[0], &w = *operands[1];
  const std::vector<int64_t> &ids = operands[2]->ints();
  int64_t h = expert.getInputWidth(), o = expert.getOutputWidth();
  std::vector<int64_t> offsets, order;
  if (failed(groupById(op, ids, expert.getNumExperts(), offsets, order,
                       expert.getNumGlobalExperts())))
    return failure();
  Tensor result = context.makeResult(expert.getType());
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &a = x.data<T>(), &b = w.data<T>();
    std::vector<T> c(ids.size() * o, T(0)), rows, products;
    for (int64_t e = 0, n; e < expert.getNumExperts(); ++e) {
      if ((n = offsets[e + 1] - offsets[e]) == 0)
        continue;
      const int64_t *positions = order.data() + offsets[e];
      gatherRows(a, h, positions, n, rows);
      products.resize(n * o);
      gemm(false, expert.getTransposeB(), n, o, h, rows.data(),
           b.data() + e * h * o, products.data());
      for (int64_t r = 0; r < n; ++r)
        std::copy_n(products.begin() + r * o, o, c.begin() + positions[r] * o);
    }
    store(c, result);
  });
  results.push_back(std::move(result));
  return success();
}

/// tg.expert_matmul_grad: each expert's matrix gradient, x^T dy over its
/// rows gathered (dy^T x when the matrices are stored transposed).
LogicalResult expertMatmulGradKernel(Operation *op,
                                     ArrayRef<const Tensor *> operands,
                                     SmallVectorImpl<Tensor> &results,
                                     const KernelContext &context) {
  auto grad = cast<tg::ExpertMatmulGradOp>(op);
  const Tensor &x = *operands[0], &dy = *operands[1];
  const std::vector<int64_t> &ids = operands[2]->ints();
  int64_t h = grad.getInputWidth(), o = grad.getOutputWidth();
  std::vector<int64_t> offsets, order;
  if (failed(groupById(op, ids, grad.getNumExperts(), offsets, order,
                       grad.getNumGlobalExperts())))
    return failure();
  Tensor result = context.makeResult(grad.getType());
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &a = x.data<T>(), &g = dy.data<T>();
    std::vector<T> c(grad.getType().getNumElements(), T(0)), rows, grads;
    for (int64_t e = 0, n; e < grad.getNumExperts(); ++e) {
      if ((n = offsets[e + 1] - offsets[e]) == 0)
        continue;
      const int64_t *positions = order.data() + offsets[e];
      gatherRows(a, h, positions, n, rows);
      gatherRows(g, o, positions, n, grads);
      T *out = c.data() + e * h * o;
      if (grad.getTransposeB())
        gemm(true, false, o, h, n, grads.data(), rows.data(), out);
      else
        gemm(true, false, h, o, n, rows.data(), grads.data(), out);
    }
    store(c, result);
  });
  results.push_back(std::move(result));
  return success();
}

LogicalResult embeddingKernel(Operation *op, ArrayRef<const Tensor *> operands,
                              SmallVectorImpl<Tensor> &results,
                              const KernelContext &context) {
  const Tensor &table = *operands[0];
  const std::vector<int64_t> &ids = operands[1]->ints();
  Tensor result = context.makeResult(op->getResult(0).getType());
  int64_t rows = getIdBound(op, table.getShape()[0]),
          width = table.getShape()[1];
  for (size_t i = 0, e = ids.size(); i < e; ++i) {
    if (ids[i] < 0 || ids[i] >= rows)
      return op->emitError("embedding id ")
             << ids[i] << " at flat position " << i << " is out of range [0, "
             << rows << ")";
    visitData(table, result, [&](const auto &src, auto &dst) {
      std::copy_n(src.begin() + ids[i] * width, width, dst.begin() + i * width);
    });
  }
  results.push_back(std::move(result));
  return success();
}

/// The k largest (or smallest) elements of each row of the last dimension,
/// ties broken by position, NaN above every number (as ONNX's reference).
LogicalResult topKKernel(Operation *op, ArrayRef<const Tensor *> operands,
                         SmallVectorImpl<Tensor> &results,
                         const KernelContext &context) {
  auto topK = cast<tg::TopKOp>(op);
  const Tensor &x = *operands[0];
  Tensor values = context.makeResult(topK.getValues().getType());
  Tensor indices = context.makeResult(topK.getIndices().getType());
  int64_t size = x.getShape().back(), k = topK.getK();
  int64_t rows = size == 0 ? 0 : x.getNumElements() / size;
  bool smallest = topK.getSmallest();
  // ui64 holds its values' bits: their order is unsigned.
  bool bits64 = x.getElementType().isUnsignedInteger(64);
  visitData(x, values, [&](const auto &src, auto &dst) {
    using T = typename std::decay_t<decltype(src)>::value_type;
    auto isNaN = [](T v) { return v != v; };
    // Whether a ranks strictly before b (position decides among equals).
    auto above = [&](T a, T b) {
      if (isNaN(a) || isNaN(b))
        return isNaN(a) && !isNaN(b);
      if constexpr (std::is_integral_v<T>)
        if (bits64)
          return uint64_t(a) > uint64_t(b);
      return a > b;
    };
    std::vector<int64_t> order(size);
    for (int64_t r = 0; r < rows; ++r) {
      const T *row = src.data() + r * size;
      std::iota(order.begin(), order.end(), int64_t(0));
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int64_t a, int64_t b) {
                          bool first = smallest ? above(row[b], row[a])
                                                : above(row[a], row[b]);
                          bool second = smallest ? above(row[a], row[b])
                                                 : above(row[b], row[a]);
                          return first || (!second && a < b);
                        });
      for (int64_t i = 0; i < k; ++i) {
        dst[r * k + i] = row[order[i]];
        indices.ints()[r * k + i] = order[i];
      }
    }
  });
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return success();
}

/// Layer and RMS normalization over the last dimension. Results: y, then
/// mean (layer norm only) and rstd, as f32 statistics.
template <bool IsLayerNorm>
LogicalResult normKernel(Operation *op, ArrayRef<const Tensor *> operands,
                         SmallVectorImpl<Tensor> &results,
                         const KernelContext &context) {
  const Tensor &x = *operands[0];
  double epsilon =
      op->getAttrOfType<FloatAttr>("epsilon").getValue().convertToDouble();
  Tensor y = context.makeResult(op->getResult(0).getType());
  Tensor mean, rstd = context.makeResult(op->getResults().back().getType());
  if (IsLayerNorm)
    mean = context.makeResult(op->getResult(1).getType());
  int64_t width = x.getShape().back();
  int64_t rows = width == 0 ? 0 : x.getNumElements() / width;
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &in = x.data<T>();
    std::vector<T> &out = y.data<T>();
    std::vector<T> scale = getFloatsAs<T>(*operands[1]);
    std::vector<T> bias;
    if (IsLayerNorm)
      bias = getFloatsAs<T>(*operands[2]);
    for (int64_t r = 0; r < rows; ++r) {
      const T *row = in.data() + r * width;
      T mu = 0;
      if (IsLayerNorm) {
        rt::CascadeSum<T> sum;
        for (int64_t j = 0; j < width; ++j)
          sum.add(row[j]);
        mu = sum.result() / T(width);
      }
      rt::CascadeSum<T> squares;
      for (int64_t j = 0; j < width; ++j)
        squares.add((row[j] - mu) * (row[j] - mu));
      T variance = squares.result() / T(width);
      T inverse = T(1) / std::sqrt(variance + T(epsilon));
      for (int64_t j = 0; j < width; ++j) {
        T normalized = (row[j] - mu) * inverse * scale[j];
        out[r * width + j] = IsLayerNorm ? normalized + bias[j] : normalized;
      }
      if (IsLayerNorm)
        mean.setAsDouble(r, mu);
      rstd.setAsDouble(r, inverse);
    }
  });
  results.push_back(std::move(y));
  if (IsLayerNorm)
    results.push_back(std::move(mean));
  results.push_back(std::move(rstd));
  return success();
}

LogicalResult attentionKernel(Operation *op, ArrayRef<const Tensor *> operands,
                              SmallVectorImpl<Tensor> &results,
                              const KernelContext &context) {
  auto attention = cast<tg::AttentionOp>(op);
  const Tensor &query = *operands[0], &key = *operands[1],
               &value = *operands[2];
  // Named, not structured bindings: the kernels' lambdas capture them.
  AttentionSizes n(query, key, value);
  int64_t batch = n.batch, heads = n.heads, queries = n.queries,
          headSize = n.headSize, kvHeads = n.kvHeads, keys = n.keys,
          valueSize = n.valueSize, group = n.group;
  bool causal = attention.getCausal();
  double scale = attention.getScaleOrDefault();
  std::optional<APFloat> softcap = attention.getSoftcap();
  Tensor output = context.makeResult(attention.getOutput().getType());
  Tensor logsumexp = context.makeResult(attention.getLogsumexp().getType());
  dispatchFloat(query, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &qd = query.data<T>(), &kd = key.data<T>(),
                         &vd = value.data<T>();
    unsigned next = attention.getBias() ? 4 : 3;
    AttentionBias<T> bias(attention.getBias() ? operands[3] : nullptr);
    SoftCap<T> cap(softcap);
    AttentionDropout<T> drop(attention, attention.getDropout(),
                             attention.getSeed() ? operands[next] : nullptr,
                             attention.getOffset() ? operands[next + 1]
                                                   : nullptr);
    std::vector<T> out(output.getNumElements());
    std::vector<T> scores(queries * keys);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads; ++h) {
        int64_t kvh = h / group;
        const T *qp = qd.data() + ((b * heads + h) * queries) * headSize;
        const T *kp = kd.data() + ((b * kvHeads + kvh) * keys) * headSize;
        const T *vp = vd.data() + ((b * kvHeads + kvh) * keys) * valueSize;
        T *outRows = out.data() + ((b * heads + h) * queries) * valueSize;
        if (scores.empty())
          continue;
        // scores = softcap(scale * q k^T) + bias, then a masked, stable
        // softmax per row.
        if (headSize == 0)
          std::fill(scores.begin(), scores.end(), T(0));
        else
          gemm(false, true, queries, keys, headSize, qp, kp, scores.data(),
               T(scale));
        for (int64_t i = 0; i < queries; ++i) {
          T *row = scores.data() + i * keys;
          int64_t visible = causal ? i + keys - queries + 1 : keys;
          T max = -std::numeric_limits<T>::infinity();
          for (int64_t j = 0; j < visible; ++j) {
            row[j] = cap(row[j]) + bias.at(b, h, i, j);
            max = propagatingMax(max, row[j]);
          }
          if (max == -std::numeric_limits<T>::infinity()) {
            // No key has a score above -inf: zeros, and a logsumexp of
            // +inf that makes the backward's probabilities 0.
            std::fill(row, row + keys, T(0));
            logsumexp.setAsDouble((b * heads + h) * queries + i,
                                  std::numeric_limits<double>::infinity());
            continue;
          }
          T sum = 0;
          for (int64_t j = 0; j < keys; ++j) {
            row[j] = j < visible ? std::exp(row[j] - max) : T(0);
            sum += row[j];
          }
          // The probabilities weigh the values through the dropout mask;
          // the logsumexp is the undropped softmax's.
          for (int64_t j = 0; j < visible; ++j)
            row[j] = drop.apply(row[j] / sum, b, h, i, j);
          logsumexp.setAsDouble((b * heads + h) * queries + i,
                                max + std::log(sum));
        }
        if (keys > 0 && valueSize > 0)
          gemm(false, false, queries, valueSize, keys, scores.data(), vp,
               outRows);
      }
    }
    store(out, output);
  });
  results.push_back(std::move(output));
  results.push_back(std::move(logsumexp));
  return success();
}

} // namespace

std::function<uint64_t(int64_t)>
tgc::detail::getCounterIndex(tg::CounterRandomOpInterface op,
                             const Tensor *offset) {
  uint64_t first = offset ? static_cast<uint64_t>(offset->ints()[0]) : 0;
  return [first, levels = op.getIndexLevels()](int64_t i) {
    uint64_t index = first;
    for (const auto &[size, stride, wholeStride] : levels)
      index += static_cast<uint64_t>((i / stride) % size * wholeStride);
    return index;
  };
}

namespace {

LogicalResult dropoutKernel(Operation *op, ArrayRef<const Tensor *> operands,
                            SmallVectorImpl<Tensor> &results,
                            const KernelContext &context) {
  auto dropout = cast<tg::DropoutOp>(op);
  const Tensor &x = *operands[0];
  uint64_t seed = static_cast<uint64_t>(operands[1]->ints()[0]);
  auto indexOf =
      getCounterIndex(dropout, dropout.getOffset() ? operands[2] : nullptr);
  uint32_t stream = static_cast<uint32_t>(dropout.getStream());
  double rate = dropout.getRate().convertToDouble();
  Tensor result = context.makeResult(dropout.getType());
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &in = x.data<T>();
    std::vector<T> &out = result.data<T>();
    for (size_t i = 0, e = in.size(); i < e; ++i)
      out[i] = applyDropout(in[i], seed, indexOf(static_cast<int64_t>(i)),
                            stream, rate);
  });
  results.push_back(std::move(result));
  return success();
}

LogicalResult randomKernel(Operation *op, ArrayRef<const Tensor *> operands,
                           SmallVectorImpl<Tensor> &results,
                           const KernelContext &context) {
  auto random = cast<tg::RandomOp>(op);
  uint64_t seed = static_cast<uint64_t>(operands[0]->ints()[0]);
  auto indexOf =
      getCounterIndex(random, random.getOffset() ? operands[1] : nullptr);
  uint32_t stream = static_cast<uint32_t>(random.getStream());
  auto draw = random.getDistribution() == tg::RandomDistribution::Normal
                  ? randomNormal
                  : randomUniform;
  Tensor result = context.makeResult(random.getType());
  dispatchFloat(result, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> &out = result.data<T>();
    for (size_t i = 0, e = out.size(); i < e; ++i)
      out[i] =
          static_cast<T>(draw(seed, indexOf(static_cast<int64_t>(i)), stream));
  });
  results.push_back(std::move(result));
  return success();
}

LogicalResult crossEntropyKernel(Operation *op,
                                 ArrayRef<const Tensor *> operands,
                                 SmallVectorImpl<Tensor> &results,
                                 const KernelContext &context) {
  auto crossEntropy = cast<tg::CrossEntropyOp>(op);
  const Tensor &logits = *operands[0];
  const std::vector<int64_t> &labels = operands[1]->ints();
  std::optional<int64_t> ignoreIndex;
  if (auto attr = crossEntropy.getIgnoreIndexAttr())
    ignoreIndex = attr.getInt();
  Tensor loss = context.makeResult(crossEntropy.getLoss().getType());
  Tensor logsumexp = context.makeResult(crossEntropy.getLogsumexp().getType());
  int64_t classes = logits.getShape().back();
  int64_t labelBound = getIdBound(op, classes);
  LogicalResult status = success();
  dispatchFloat(logits, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &in = logits.data<T>();
    rt::CascadeSum<T> losses;
    int64_t counted = 0;
    for (size_t t = 0, e = labels.size(); t < e; ++t) {
      const T *row = in.data() + t * classes;
      T max = -std::numeric_limits<T>::infinity();
      for (int64_t c = 0; c < classes; ++c)
        max = propagatingMax(max, row[c]);
      rt::CascadeSum<T> terms;
      for (int64_t c = 0; c < classes; ++c)
        terms.add(std::exp(row[c] - max));
      T lse = max + std::log(terms.result());
      logsumexp.setAsDouble(t, lse);
      if (ignoreIndex && labels[t] == *ignoreIndex)
        continue;
      if (labels[t] < 0 || labels[t] >= labelBound) {
        op->emitError("label ") << labels[t] << " of token " << t
                                << " is out of range [0, " << labelBound << ")";
        status = failure();
        return;
      }
      losses.add(lse - row[labels[t]]);
      ++counted;
    }
    T total = losses.result();
    bool mean = crossEntropy.getReduction() == tg::LossReduction::Mean;
    // 0/0 is NaN when every token is ignored, as in PyTorch and ONNX.
    loss.setAsDouble(0, mean ? total / T(counted) : total);
  });
  if (failed(status))
    return failure();
  results.push_back(std::move(loss));
  results.push_back(std::move(logsumexp));
  return success();
}

} // namespace

void tgc::registerComputeKernels(KernelRegistry &registry) {
  registry.add(tg::MatmulOp::getOperationName(), matmulKernel);
  registry.add(tg::ExpertMatmulOp::getOperationName(), expertMatmulKernel);
  registry.add(tg::ExpertMatmulGradOp::getOperationName(),
               expertMatmulGradKernel);
  registry.add(tg::EmbeddingOp::getOperationName(), embeddingKernel);
  registry.add(tg::TopKOp::getOperationName(), topKKernel);
  registry.add(tg::LayerNormOp::getOperationName(), normKernel<true>);
  registry.add(tg::RmsNormOp::getOperationName(), normKernel<false>);
  registry.add(tg::AttentionOp::getOperationName(), attentionKernel);
  registry.add(tg::DropoutOp::getOperationName(), dropoutKernel);
  registry.add(tg::RandomOp::getOperationName(), randomKernel);
  registry.add(tg::CrossEntropyOp::getOperationName(), crossEntropyKernel);
}
