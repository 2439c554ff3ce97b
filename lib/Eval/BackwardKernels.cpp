//===- BackwardKernels.cpp - kernels of backward ops ----------------------===//
//
// The vector-Jacobian products with ops of their own: softmax_grad,
// gelu_grad, layer_norm_grad, rms_norm_grad, attention_grad, embedding_grad
// and cross_entropy_grad, as TGOps.td defines them.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/ScalarOps.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

LogicalResult softmaxGradKernel(Operation *op,
                                ArrayRef<const Tensor *> operands,
                                SmallVectorImpl<Tensor> &results,
                                const KernelContext &context) {
  auto grad = cast<tg::SoftmaxGradOp>(op);
  const Tensor &y = *operands[0], &dy = *operands[1];
  Tensor result = context.makeResult(grad.getType());
  ArrayRef<int64_t> shape = y.getShape();
  int64_t dim = grad.getDimension();
  LineLayout line = getLineLayout(shape, dim);
  int64_t outer = line.outer, size = line.size, inner = line.inner;
  dispatchFloat(y, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &yv = y.data<T>(), &dyv = dy.data<T>();
    std::vector<T> &out = result.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t base = o * size * inner + i;
        rt::CascadeSum<T> products;
        for (int64_t k = 0; k < size; ++k)
          products.add(yv[base + k * inner] * dyv[base + k * inner]);
        T dot = products.result();
        for (int64_t k = 0; k < size; ++k) {
          int64_t at = base + k * inner;
          out[at] = yv[at] * (dyv[at] - dot);
        }
      }
  });
  results.push_back(std::move(result));
  return success();
}

using rt::geluErfGrad;
using rt::geluTanhGrad;

LogicalResult geluGradKernel(Operation *op, ArrayRef<const Tensor *> operands,
                             SmallVectorImpl<Tensor> &results,
                             const KernelContext &context) {
  bool tanhForm = cast<tg::GeluGradOp>(op).getApproximation() ==
                  tg::GeluApproximation::Tanh;
  const Tensor &dy = *operands[0], &x = *operands[1];
  Tensor result = context.makeResult(op->getResult(0).getType());
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &g = dy.data<T>(), &in = x.data<T>();
    std::vector<T> &out = result.data<T>();
    for (size_t i = 0, e = in.size(); i < e; ++i)
      out[i] = g[i] * (tanhForm ? geluTanhGrad(in[i]) : geluErfGrad(in[i]));
  });
  results.push_back(std::move(result));
  return success();
}

/// The straight-through gradient of tg.quantize_dequantize
/// (rt::quantizeDequantizeGrad).
LogicalResult quantizeDequantizeGradKernel(Operation *op,
                                           ArrayRef<const Tensor *> operands,
                                           SmallVectorImpl<Tensor> &results,
                                           const KernelContext &context) {
  auto grad = cast<tg::QuantizeDequantizeGradOp>(op);
  const Tensor &dy = *operands[0], &x = *operands[1], &s = *operands[2],
               &z = *operands[3];
  Tensor result = context.makeResult(op->getResult(0).getType());
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &g = dy.data<T>(), &xs = x.data<T>(),
                         &ss = s.data<T>(), &zs = z.data<T>();
    std::vector<T> &out = result.data<T>();
    T low = T(int64_t(grad.getLow())), high = T(int64_t(grad.getHigh()));
    for (size_t i = 0, e = xs.size(); i < e; ++i)
      out[i] = rt::quantizeDequantizeGrad(g[i], xs[i], ss[i], zs[i], low, high);
  });
  results.push_back(std::move(result));
  return success();
}

/// Layer norm (with mean) and RMS norm (without) backward over the last
/// dimension. Operands: dy, x, [mean,] rstd, scale.
template <bool IsLayerNorm>
LogicalResult normGradKernel(Operation *op, ArrayRef<const Tensor *> operands,
                             SmallVectorImpl<Tensor> &results,
                             const KernelContext &context) {
  const Tensor &dy = *operands[0], &x = *operands[1];
  const Tensor *mean = IsLayerNorm ? operands[2] : nullptr;
  const Tensor &rstd = *operands[IsLayerNorm ? 3 : 2];
  const Tensor &scaleTensor = *operands[IsLayerNorm ? 4 : 3];
  Tensor dx = context.makeResult(op->getResult(0).getType());
  Tensor dscale = context.makeResult(op->getResult(1).getType());
  Tensor dbias;
  if (IsLayerNorm)
    dbias = context.makeResult(op->getResult(2).getType());
  int64_t width = x.getShape().back();
  int64_t rows = width == 0 ? 0 : x.getNumElements() / width;
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &g = dy.data<T>(), &in = x.data<T>();
    std::vector<T> &out = dx.data<T>();
    std::vector<T> scale = getFloatsAs<T>(scaleTensor);
    std::vector<rt::CascadeSum<T>> sumScale(width), sumBias(width);
    std::vector<T> xhat(width), gs(width);
    for (int64_t r = 0; r < rows; ++r) {
      T mu = IsLayerNorm ? T(mean->getAsDouble(r)) : T(0);
      T inverse = T(rstd.getAsDouble(r));
      const T *row = in.data() + r * width;
      const T *grow = g.data() + r * width;
      rt::CascadeSum<T> sumG, sumGX;
      for (int64_t j = 0; j < width; ++j) {
        xhat[j] = (row[j] - mu) * inverse;
        gs[j] = grow[j] * scale[j];
        sumG.add(gs[j]);
        sumGX.add(gs[j] * xhat[j]);
        sumScale[j].add(grow[j] * xhat[j]);
        sumBias[j].add(grow[j]);
      }
      T meanG = sumG.result() / T(width);
      T meanGX = sumGX.result() / T(width);
      for (int64_t j = 0; j < width; ++j)
        out[r * width + j] =
            inverse * (gs[j] - (IsLayerNorm ? meanG : T(0)) - xhat[j] * meanGX);
    }
    for (int64_t j = 0; j < width; ++j) {
      dscale.setAsDouble(j, sumScale[j].result());
      if (IsLayerNorm)
        dbias.setAsDouble(j, sumBias[j].result());
    }
  });
  results.push_back(std::move(dx));
  results.push_back(std::move(dscale));
  if (IsLayerNorm)
    results.push_back(std::move(dbias));
  return success();
}

/// The probabilities p [queries, keys] of (batch `b`, head `h`) rebuilt
/// from its query and key rows `qp` and `kp`: exp(softcap(scale * q k^T) +
/// bias - lse), 0 past the causal diagonal, the row's logsumexp read at
/// `rowOffset + i`; on a row whose f32 logsumexp is too large to resolve
/// its log-sum (every key hidden by a huge finite mask), from the row's own
/// max and log-sum. With `slope`, the soft cap's slope at each score.
template <typename T>
void rebuildProbabilities(std::vector<T> &p, std::vector<T> *slope, const T *qp,
                          const T *kp, int64_t queries, int64_t keys,
                          int64_t headSize, bool causal, double scale,
                          const SoftCap<T> &cap, const AttentionBias<T> &bias,
                          const Tensor &lse, int64_t rowOffset, int64_t b,
                          int64_t h) {
  if (headSize == 0)
    std::fill(p.begin(), p.end(), T(0));
  else
    gemm(false, true, queries, keys, headSize, qp, kp, p.data(), T(scale),
         T(0));
  for (int64_t i = 0; i < queries; ++i) {
    int64_t visible = causal ? i + keys - queries + 1 : keys;
    T *row = p.data() + i * keys;
    for (int64_t j = 0; j < visible; ++j) {
      row[j] = cap(row[j]);
      if (slope)
        (*slope)[i * keys + j] = cap.slope(row[j]);
      row[j] += bias.at(b, h, i, j);
    }
    T rowMax = T(lse.getAsDouble(rowOffset + i)), logSum = 0;
    if (std::isfinite(rowMax) && std::abs(rowMax) >= rt::kDegenerateLse) {
      rowMax = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < visible; ++j)
        rowMax = std::max(rowMax, row[j]);
      T sum = 0;
      for (int64_t j = 0; j < visible; ++j)
        sum += std::exp(row[j] - rowMax);
      logSum = std::log(sum);
    }
    for (int64_t j = 0; j < keys; ++j)
      row[j] = j < visible ? std::exp((row[j] - rowMax) - logSum) : T(0);
  }
}

LogicalResult attentionGradKernel(Operation *op,
                                  ArrayRef<const Tensor *> operands,
                                  SmallVectorImpl<Tensor> &results,
                                  const KernelContext &context) {
  auto grad = cast<tg::AttentionGradOp>(op);
  const Tensor &dout = *operands[0], &query = *operands[1], &key = *operands[2],
               &value = *operands[3], &output = *operands[4],
               &lse = *operands[5];
  // Named, not structured bindings: the kernels' lambdas capture them.
  AttentionSizes n(query, key, value);
  int64_t batch = n.batch, heads = n.heads, queries = n.queries,
          headSize = n.headSize, kvHeads = n.kvHeads, keys = n.keys,
          valueSize = n.valueSize, group = n.group;
  bool causal = grad.getCausal();
  double scale = grad.getScaleOrDefault();
  std::optional<APFloat> softcap = grad.getSoftcap();
  Tensor dq = context.makeResult(grad.getGradQuery().getType());
  Tensor dk = context.makeResult(grad.getGradKey().getType());
  Tensor dv = context.makeResult(grad.getGradValue().getType());
  dispatchFloat(query, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &qd = query.data<T>(), &kd = key.data<T>(),
                         &vd = value.data<T>(), &od = output.data<T>(),
                         &dod = dout.data<T>();
    unsigned next = grad.getBias() ? 7 : 6;
    AttentionBias<T> bias(grad.getBias() ? operands[6] : nullptr);
    SoftCap<T> cap(softcap);
    AttentionDropout<T> drop(grad, grad.getDropout(),
                             grad.getSeed() ? operands[next] : nullptr,
                             grad.getOffset() ? operands[next + 1] : nullptr);
    std::vector<T> dqv(dq.getNumElements()), dkv(dk.getNumElements(), T(0)),
        dvv(dv.getNumElements(), T(0));
    // The soft cap's slope 1 - tanh^2 at each score (with a cap).
    // With dropout, `dropped` holds p through the mask.
    std::vector<T> p(queries * keys), dp(queries * keys),
        slope(softcap ? queries * keys : 0), dropped(drop ? queries * keys : 0);
    if (p.empty()) {
      dq.data<T>() = dqv;
      dk.data<T>() = dkv;
      dv.data<T>() = dvv;
      return;
    }
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads; ++h) {
        int64_t kvh = h / group;
        int64_t qOffset = ((b * heads + h) * queries);
        int64_t kvOffset = ((b * kvHeads + kvh) * keys);
        const T *qp = qd.data() + qOffset * headSize;
        const T *kp = kd.data() + kvOffset * headSize;
        const T *vp = vd.data() + kvOffset * valueSize;
        const T *outp = od.data() + qOffset * valueSize;
        const T *dop = dod.data() + qOffset * valueSize;
        rebuildProbabilities(p, softcap ? &slope : nullptr, qp, kp, queries,
                             keys, headSize, causal, scale, cap, bias, lse,
                             qOffset, b, h);
        if (drop)
          for (int64_t i = 0; i < queries; ++i)
            for (int64_t j = 0; j < keys; ++j)
              dropped[i * keys + j] = drop.apply(p[i * keys + j], b, h, i, j);
        // dv += p^T dout; dp = dout v^T (with dropout, dv from the dropped
        // p, and dp through the mask).
        if (valueSize == 0) {
          std::fill(dp.begin(), dp.end(), T(0));
        } else {
          gemm(true, false, keys, valueSize, queries,
               drop ? dropped.data() : p.data(), dop,
               dvv.data() + kvOffset * valueSize, T(1), T(1));
          gemm(false, true, queries, keys, valueSize, dop, vp, dp.data(), T(1),
               T(0));
          if (drop)
            for (int64_t i = 0; i < queries; ++i)
              for (int64_t j = 0; j < keys; ++j)
                dp[i * keys + j] = drop.apply(dp[i * keys + j], b, h, i, j);
        }
        // ds = p * (dp - rowsum(dout * out)), through the soft cap's
        // slope, scaled.
        for (int64_t i = 0; i < queries; ++i) {
          T delta = 0;
          for (int64_t d = 0; d < valueSize; ++d)
            delta += dop[i * valueSize + d] * outp[i * valueSize + d];
          for (int64_t j = 0; j < keys; ++j) {
            T ds = T(scale) * p[i * keys + j] * (dp[i * keys + j] - delta);
            dp[i * keys + j] = softcap ? ds * slope[i * keys + j] : ds;
          }
        }
        // dq = ds k; dk += ds^T q.
        if (headSize > 0) {
          gemm(false, false, queries, headSize, keys, dp.data(), kp,
               dqv.data() + qOffset * headSize, T(1), T(0));
          gemm(true, false, keys, headSize, queries, dp.data(), qp,
               dkv.data() + kvOffset * headSize, T(1), T(1));
        }
      }
    }
    dq.data<T>() = std::move(dqv);
    dk.data<T>() = std::move(dkv);
    dv.data<T>() = std::move(dvv);
  });
  results.push_back(std::move(dq));
  results.push_back(std::move(dk));
  results.push_back(std::move(dv));
  return success();
}

LogicalResult attentionBiasGradKernel(Operation *op,
                                      ArrayRef<const Tensor *> operands,
                                      SmallVectorImpl<Tensor> &results,
                                      const KernelContext &context) {
  auto grad = cast<tg::AttentionBiasGradOp>(op);
  const Tensor &dout = *operands[0], &query = *operands[1], &key = *operands[2],
               &value = *operands[3], &output = *operands[4],
               &lse = *operands[5];
  AttentionSizes n(query, key, value);
  Tensor dbias = context.makeResult(grad.getGradBias().getType());
  dispatchFloat(query, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &qd = query.data<T>(), &kd = key.data<T>(),
                         &vd = value.data<T>(), &od = output.data<T>(),
                         &dod = dout.data<T>();
    AttentionBias<T> bias(operands[6]);
    SoftCap<T> cap(grad.getSoftcap());
    AttentionDropout<T> drop(grad, grad.getDropout(),
                             grad.getSeed() ? operands[7] : nullptr,
                             grad.getOffset() ? operands[8] : nullptr);
    // ds = p * (dp - rowsum(dout * out)) of each score, summed into the
    // bias element it read (the sum over the dimensions it broadcasts).
    std::vector<double> sums(dbias.getNumElements(), 0.0);
    std::vector<T> p(n.queries * n.keys), dp(n.queries * n.keys);
    for (int64_t b = 0; b < n.batch && !p.empty(); ++b)
      for (int64_t h = 0; h < n.heads; ++h) {
        int64_t qOffset = (b * n.heads + h) * n.queries;
        int64_t kvOffset = (b * n.kvHeads + h / n.group) * n.keys;
        const T *outp = od.data() + qOffset * n.valueSize;
        const T *dop = dod.data() + qOffset * n.valueSize;
        rebuildProbabilities(
            p, static_cast<std::vector<T> *>(nullptr),
            qd.data() + qOffset * n.headSize, kd.data() + kvOffset * n.headSize,
            n.queries, n.keys, n.headSize, grad.getCausal(),
            grad.getScaleOrDefault(), cap, bias, lse, qOffset, b, h);
        if (n.valueSize == 0)
          std::fill(dp.begin(), dp.end(), T(0));
        else
          gemm(false, true, n.queries, n.keys, n.valueSize, dop,
               vd.data() + kvOffset * n.valueSize, dp.data(), T(1), T(0));
        for (int64_t i = 0; i < n.queries; ++i) {
          T delta = 0;
          for (int64_t d = 0; d < n.valueSize; ++d)
            delta += dop[i * n.valueSize + d] * outp[i * n.valueSize + d];
          for (int64_t j = 0; j < n.keys; ++j)
            sums[bias.index(b, h, i, j)] +=
                p[i * n.keys + j] *
                (drop.apply(dp[i * n.keys + j], b, h, i, j) - delta);
        }
      }
    for (size_t x = 0; x < sums.size(); ++x)
      dbias.setAsDouble(static_cast<int64_t>(x), sums[x]);
  });
  results.push_back(std::move(dbias));
  return success();
}

LogicalResult embeddingGradKernel(Operation *op,
                                  ArrayRef<const Tensor *> operands,
                                  SmallVectorImpl<Tensor> &results,
                                  const KernelContext &context) {
  const Tensor &dy = *operands[0];
  const std::vector<int64_t> &ids = operands[1]->ints();
  Tensor result = context.makeResult(op->getResult(0).getType());
  int64_t rows = result.getShape()[0], width = result.getShape()[1];
  for (size_t i = 0, e = ids.size(); i < e; ++i)
    if (ids[i] < 0 || ids[i] >= rows)
      return op->emitError("embedding id ")
             << ids[i] << " at flat position " << i << " is out of range [0, "
             << rows << ")";
  dispatchFloat(dy, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &g = dy.data<T>();
    std::vector<T> &out = result.data<T>();
    for (size_t i = 0, e = ids.size(); i < e; ++i)
      for (int64_t d = 0; d < width; ++d)
        out[ids[i] * width + d] += g[i * width + d];
  });
  results.push_back(std::move(result));
  return success();
}

LogicalResult crossEntropyGradKernel(Operation *op,
                                     ArrayRef<const Tensor *> operands,
                                     SmallVectorImpl<Tensor> &results,
                                     const KernelContext &context) {
  auto grad = cast<tg::CrossEntropyGradOp>(op);
  double dloss = operands[0]->getAsDouble(0);
  const Tensor &logits = *operands[1], &lse = *operands[3];
  const std::vector<int64_t> &labels = operands[2]->ints();
  std::optional<int64_t> ignoreIndex;
  if (auto attr = grad.getIgnoreIndexAttr())
    ignoreIndex = attr.getInt();
  int64_t classes = logits.getShape().back();
  int64_t counted = 0;
  for (int64_t label : labels) {
    if (ignoreIndex && label == *ignoreIndex)
      continue;
    if (label < 0 || label >= getIdBound(op, classes))
      return op->emitError("label ") << label << " is out of range [0, "
                                     << getIdBound(op, classes) << ")";
    ++counted;
  }
  bool mean = grad.getReduction() == tg::LossReduction::Mean;
  Tensor result = context.makeResult(grad.getType());
  dispatchFloat(logits, [&](auto tag) {
    using T = decltype(tag);
    // 0/0 is NaN for the mean over no token, as in the forward.
    T weight = mean ? T(dloss) / T(counted) : T(dloss);
    const std::vector<T> &in = logits.data<T>();
    std::vector<T> &out = result.data<T>();
    for (size_t t = 0, e = labels.size(); t < e; ++t) {
      if (ignoreIndex && labels[t] == *ignoreIndex)
        continue;
      T rowLse = T(lse.getAsDouble(t));
      for (int64_t c = 0; c < classes; ++c) {
        T p = std::exp(in[t * classes + c] - rowLse);
        out[t * classes + c] = weight * (p - (c == labels[t] ? T(1) : T(0)));
      }
    }
  });
  results.push_back(std::move(result));
  return success();
}

} // namespace

void tgc::registerBackwardKernels(KernelRegistry &registry) {
  registry.add(tg::SoftmaxGradOp::getOperationName(), softmaxGradKernel);
  registry.add(tg::GeluGradOp::getOperationName(), geluGradKernel);
  registry.add(tg::QuantizeDequantizeGradOp::getOperationName(),
               quantizeDequantizeGradKernel);
  registry.add(tg::LayerNormGradOp::getOperationName(), normGradKernel<true>);
  registry.add(tg::RmsNormGradOp::getOperationName(), normGradKernel<false>);
  registry.add(tg::AttentionGradOp::getOperationName(), attentionGradKernel);
  registry.add(tg::AttentionBiasGradOp::getOperationName(),
               attentionBiasGradKernel);
  registry.add(tg::EmbeddingGradOp::getOperationName(), embeddingGradKernel);
  registry.add(tg::CrossEntropyGradOp::getOperationName(),
               crossEntropyGradKernel);
}
