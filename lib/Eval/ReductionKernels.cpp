//===- ReductionKernels.cpp - kernels of reductions -----------------------===//
//
// reduce, softmax and log_softmax. Float sums accumulate in the storage
// type (f32, or double in f64 mode) through rt::CascadeSum (blocked pairwise
// summation) and round once to the result.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/runtime/ScalarOps.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

/// out[r] = fold of in[i] over the elements i that map to result index r.
template <typename T, typename Combine>
void reduceInto(const std::vector<T> &in, std::vector<T> &out,
                ArrayRef<int64_t> shape, ArrayRef<int64_t> resultStrides,
                T init, Combine combine) {
  std::fill(out.begin(), out.end(), init);
  int64_t rank = shape.size();
  SmallVector<int64_t> index(rank, 0);
  int64_t target = 0;
  for (size_t i = 0, e = in.size(); i < e; ++i) {
    out[target] = combine(out[target], in[i]);
    advanceIndex(index, shape, resultStrides, rank, target);
  }
}

/// out[r] = the sum of the elements of `in` whose kept indices are r's,
/// added in row-major order through rt::CascadeSum (f32 accumulators with
/// O(log n) error growth), as the generated kernels add them.
template <typename T>
void sumInto(const std::vector<T> &in, std::vector<T> &out,
             ArrayRef<int64_t> shape, const llvm::SmallBitVector &reduced) {
  SmallVector<int64_t> strides = getStrides(shape);
  SmallVector<int64_t> keptShape, keptStrides, reducedShape, reducedStrides;
  int64_t perOutput = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced.test(d)) {
      reducedShape.push_back(shape[d]);
      reducedStrides.push_back(strides[d]);
      perOutput *= shape[d];
    } else {
      keptShape.push_back(shape[d]);
      keptStrides.push_back(strides[d]);
    }
  }
  int64_t keptRank = keptShape.size(), reducedRank = reducedShape.size();
  SmallVector<int64_t> keptIndex(keptRank, 0), reducedIndex(reducedRank, 0);
  int64_t base = 0;
  for (T &result : out) {
    rt::CascadeSum<T> sum;
    int64_t at = base;
    for (int64_t j = 0; j < perOutput; ++j) {
      sum.add(in[at]);
      advanceIndex(reducedIndex, reducedShape, reducedStrides, reducedRank, at);
    }
    result = sum.result();
    advanceIndex(keptIndex, keptShape, keptStrides, keptRank, base);
  }
}

LogicalResult reduceKernel(Operation *op, ArrayRef<const Tensor *> operands,
                           SmallVectorImpl<Tensor> &results,
                           const KernelContext &context) {
  auto reduce = cast<tg::ReduceOp>(op);
  const Tensor &x = *operands[0];
  Tensor result = context.makeResult(reduce.getType());
  ArrayRef<int64_t> shape = x.getShape();
  // The stride of each operand dimension in the result (0 when reduced).
  llvm::SmallBitVector reduced(shape.size());
  for (int64_t dim : reduce.getDimensions())
    reduced.set(dim);
  SmallVector<int64_t> keptStrides = getStrides(result.getShape());
  SmallVector<int64_t> strides(shape.size(), 0);
  for (size_t d = 0, k = 0; d < shape.size(); ++d)
    if (!reduced.test(d))
      strides[d] = keptStrides[k++];

  tg::ReduceKind kind = reduce.getKind();
  if (x.isIntStorage()) {
    Type type = x.getElementType();
    auto sum = [](int64_t a, int64_t b) {
      return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                  static_cast<uint64_t>(b));
    };
    // ui64 holds its values' bits: its maximum and minimum are unsigned.
    auto maxU64 = [](int64_t a, int64_t b) {
      return uint64_t(a) < uint64_t(b) ? b : a;
    };
    auto minU64 = [](int64_t a, int64_t b) {
      return uint64_t(b) < uint64_t(a) ? b : a;
    };
    bool bits64 = type.isUnsignedInteger(64);
    if (kind == tg::ReduceKind::Sum)
      reduceInto<int64_t>(x.ints(), result.ints(), shape, strides, 0, sum);
    else if (bits64 && kind == tg::ReduceKind::Max)
      reduceInto<int64_t>(x.ints(), result.ints(), shape, strides, 0, maxU64);
    else if (bits64)
      reduceInto<int64_t>(x.ints(), result.ints(), shape, strides, -1, minU64);
    else if (kind == tg::ReduceKind::Max)
      reduceInto<int64_t>(x.ints(), result.ints(), shape, strides,
                          getIntMin(type), propagatingMax<int64_t>);
    else
      reduceInto<int64_t>(x.ints(), result.ints(), shape, strides,
                          getIntMax(type), propagatingMin<int64_t>);
  } else {
    dispatchFloat(x, [&](auto tag) {
      using T = decltype(tag);
      const std::vector<T> &in = x.data<T>();
      std::vector<T> &out = result.data<T>();
      T infinity = std::numeric_limits<T>::infinity();
      switch (kind) {
      case tg::ReduceKind::Sum:
      case tg::ReduceKind::Mean:
        sumInto<T>(in, out, shape, reduced);
        break;
      case tg::ReduceKind::Max:
        reduceInto<T>(in, out, shape, strides, -infinity, propagatingMax<T>);
        break;
      case tg::ReduceKind::Min:
        reduceInto<T>(in, out, shape, strides, infinity, propagatingMin<T>);
        break;
      }
      if (kind == tg::ReduceKind::Mean) {
        T count = T(x.getNumElements()) /
                  T(std::max<int64_t>(1, result.getNumElements()));
        for (T &value : out)
          value /= count;
      }
    });
  }
  results.push_back(std::move(result));
  return success();
}

/// Softmax or log-softmax along `dim`: for each (outer, inner) line of
/// `size` elements at stride `inner`, with the max subtracted first.
template <bool Log>
LogicalResult softmaxKernel(Operation *op, ArrayRef<const Tensor *> operands,
                            SmallVectorImpl<Tensor> &results,
                            const KernelContext &context) {
  int64_t dim = op->getAttrOfType<IntegerAttr>("dimension").getInt();
  const Tensor &x = *operands[0];
  Tensor result = context.makeResult(op->getResult(0).getType());
  ArrayRef<int64_t> shape = x.getShape();
  LineLayout line = getLineLayout(shape, dim);
  int64_t outer = line.outer, size = line.size, inner = line.inner;
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &in = x.data<T>();
    std::vector<T> &out = result.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t base = o * size * inner + i;
        T max = -std::numeric_limits<T>::infinity();
        for (int64_t k = 0; k < size; ++k)
          max = propagatingMax(max, in[base + k * inner]);
        rt::CascadeSum<T> terms;
        for (int64_t k = 0; k < size; ++k)
          terms.add(std::exp(in[base + k * inner] - max));
        T sum = terms.result();
        T logSum = std::log(sum);
        for (int64_t k = 0; k < size; ++k) {
          T shifted = in[base + k * inner] - max;
          out[base + k * inner] =
              Log ? shifted - logSum : std::exp(shifted) / sum;
        }
      }
    }
  });
  results.push_back(std::move(result));
  return success();
}

} // namespace

void tgc::registerReductionKernels(KernelRegistry &registry) {
  registry.add(tg::ReduceOp::getOperationName(), reduceKernel);
  registry.add(tg::SoftmaxOp::getOperationName(), softmaxKernel<false>);
  registry.add(tg::LogSoftmaxOp::getOperationName(), softmaxKernel<true>);
}
