//===- KernelUtils.h - helpers shared by the op kernels ---------*- C++ -*-===//
//
// Private to lib/Eval: dispatch over a tensor's storage, row-major strides
// and strided copies.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_EVAL_KERNELUTILS_H
#define TGC_LIB_EVAL_KERNELUTILS_H

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGSharding.h"
#include "tgc/Eval/Kernels.h"
#include "tgc/Eval/LineLayout.h"
#include "tgc/Eval/TensorVisit.h"
#include "tgc/Support/FloatFormats.h"
#include "tgc/Support/Philox.h"

#include "tgc/runtime/TiledGemm.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Parallel.h"

#include <cblas.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>

namespace tgc::detail {

/// The emulated format of a float element type (F32 for f32 and f64).
FloatFormat getFloatFormat(mlir::Type elementType);

/// Calls `fn(float{})` or `fn(double{})` for a Float or Double tensor, so a
/// generic lambda can be written once for both (`using T = decltype(tag)`).
template <typename Fn> auto dispatchFloat(const Tensor &tensor, Fn &&fn) {
  if (tensor.isDoubleStorage())
    return fn(double{});
  return fn(float{});
}

/// Calls `fn(vector)` with the tensor's element vector, whatever its storage.
template <typename Fn> auto visitData(Tensor &tensor, Fn &&fn) {
  switch (tensor.getStorage()) {
  case Tensor::Storage::Float:
    return fn(tensor.floats());
  case Tensor::Storage::Double:
    return fn(tensor.doubles());
  case Tensor::Storage::Int:
    break;
  }
  return fn(tensor.ints());
}

/// The elements of a float tensor as T (a copy when the storage differs).
template <typename T> std::vector<T> getFloatsAs(const Tensor &tensor) {
  if (tensor.isDoubleStorage())
    return std::vector<T>(tensor.doubles().begin(), tensor.doubles().end());
  return std::vector<T>(tensor.floats().begin(), tensor.floats().end());
}

/// tg.attention's optional soft cap c: a scaled score s becomes
/// c * tanh(s / c), whose slope is 1 - (capped / c)^2; without a cap both
/// are the identity.
template <typename T> class SoftCap {
public:
  explicit SoftCap(std::optional<llvm::APFloat> cap)
      : cap(cap ? T(cap->convertToDouble()) : T(0)) {}
  T operator()(T score) const {
    return cap > T(0) ? cap * std::tanh(score / cap) : score;
  }
  T slope(T capped) const {
    if (!(cap > T(0)))
      return T(1);
    T t = capped / cap;
    return T(1) - t * t;
  }

private:
  T cap;
};

/// The sizes of an attention: query [B, H, Sq, D], key [B, K, Sk, D] and
/// value [B, K, Sk, Dv]; query head h reads kv head h / group.
struct AttentionSizes {
  AttentionSizes(const Tensor &query, const Tensor &key, const Tensor &value)
      : batch(query.getShape()[0]), heads(query.getShape()[1]),
        queries(query.getShape()[2]), headSize(query.getShape()[3]),
        kvHeads(key.getShape()[1]), keys(key.getShape()[2]),
        valueSize(value.getShape()[3]), group(heads / kvHeads) {}
  int64_t batch, heads, queries, headSize, kvHeads, keys, valueSize, group;
};

/// The index in the whole tensor of each element of a CounterRandomOpInterface
/// op's numbers: a device's block of a split tensor (or a micro-batch's) has
/// the global index of its first element (the `offset` operand) and lies
/// where its elements lie in the whole.
std::function<uint64_t(int64_t)>
getCounterIndex(tg::CounterRandomOpInterface op, const Tensor *offset);

/// `x` through tg.dropout's mask at the element of whole-tensor index
/// `index`: x / (1 - rate) where the Philox draw keeps it, else 0.
template <typename T>
T applyDropout(T x, uint64_t seed, uint64_t index, uint32_t stream,
               double rate) {
  return dropoutUniform(seed, index, stream) >= rate ? x / (T(1) - T(rate))
                                                     : T(0);
}

/// tg.attention's optional dropout of its [B, H, Sq, Sk] probabilities:
/// apply(p, b, h, i, j) is what tg.dropout with the op's seed, stream, rate,
/// offset and global shape makes of probability (b, h, i, j), p / (1 - rate)
/// or 0; without dropout, p.
template <typename T> class AttentionDropout {
public:
  /// `seed` and `offset` are the op's operands (null without them).
  AttentionDropout(tg::CounterRandomOpInterface op,
                   std::optional<llvm::APFloat> rate, const Tensor *seed,
                   const Tensor *offset)
      : rate(rate ? rate->convertToDouble() : 0.0) {
    if (!seed)
      return;
    active = true;
    this->seed = static_cast<uint64_t>(seed->ints()[0]);
    stream = static_cast<uint32_t>(op.getRandomStream());
    indexOf = getCounterIndex(op, offset);
    llvm::SmallVector<int64_t> shape = op.getRandomShape();
    heads = shape[1];
    queries = shape[2];
    keys = shape[3];
  }
  explicit operator bool() const { return active; }
  T apply(T p, int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!active)
      return p;
    int64_t index = ((b * heads + h) * queries + i) * keys + j;
    return applyDropout(p, seed, indexOf(index), stream, rate);
  }

private:
  double rate;
  bool active = false;
  uint64_t seed = 0;
  uint32_t stream = 0;
  std::function<uint64_t(int64_t)> indexOf;
  int64_t heads = 0, queries = 0, keys = 0;
};

/// tg.attention's optional bias [B|1, H|1, Sq|1, Sk|1] as T, read through
/// the broadcast: at(b, h, i, j), 0 without a bias.
template <typename T> class AttentionBias {
public:
  explicit AttentionBias(const Tensor *bias) {
    if (!bias)
      return;
    values = getFloatsAs<T>(*bias);
    llvm::ArrayRef<int64_t> shape = bias->getShape();
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) {
      strides[d] = shape[d] == 1 ? 0 : stride;
      stride *= shape[d];
    }
  }
  T at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (values.empty())
      return T(0);
    return values[index(b, h, i, j)];
  }
  /// The bias element score (b, h, i, j) reads.
  int64_t index(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return b * strides[0] + h * strides[1] + i * strides[2] + j * strides[3];
  }

private:
  std::vector<T> values;
  int64_t strides[4] = {0, 0, 0, 0};
};

/// Row-major strides of `shape`.
inline llvm::SmallVector<int64_t> getStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Advances the row-major multi-index `index` over `shape` by one step in
/// dimensions [0, rank) and moves `position` along `strides` with it: the
/// odometer of every strided loop below.
inline void advanceIndex(llvm::MutableArrayRef<int64_t> index,
                         llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<int64_t> strides, int64_t rank,
                         int64_t &position) {
  for (int64_t d = rank - 1; d >= 0; --d) {
    position += strides[d];
    if (++index[d] < shape[d])
      return;
    position -= strides[d] * shape[d];
    index[d] = 0;
  }
}

/// dst[i] = src[offset + sum_d index_d(i) * sourceStrides[d]] for every
/// row-major index i of `shape`: transposes, broadcasts and slices.
template <typename Vector>
void stridedGather(const Vector &src, Vector &dst,
                   llvm::ArrayRef<int64_t> shape,
                   llvm::ArrayRef<int64_t> sourceStrides, int64_t offset) {
  int64_t rank = shape.size();
  int64_t count = static_cast<int64_t>(dst.size());
  if (count == 0)
    return;
  if (rank == 0) {
    dst[0] = src[offset];
    return;
  }
  llvm::SmallVector<int64_t> index(rank, 0);
  int64_t inner = shape[rank - 1], innerStride = sourceStrides[rank - 1];
  int64_t source = offset;
  for (int64_t out = 0; out < count; out += inner) {
    for (int64_t j = 0; j < inner; ++j)
      dst[out + j] = src[source + j * innerStride];
    // Advance the multi-index over the outer dimensions.
    advanceIndex(index, shape, sourceStrides, rank - 1, source);
  }
}

/// The tiles of a GEMM on LLVM's threads, each an OpenBLAS call on one
/// thread (tgc/runtime/TiledGemm.h).
inline void forEachGemmTile(int64_t tiles,
                            llvm::function_ref<void(int64_t)> tile) {
  // OpenBLAS's own threads would split the tiles again.
  static const bool serialBlas = (openblas_set_num_threads(1), true);
  (void)serialBlas;
  llvm::parallelFor(0, static_cast<size_t>(tiles),
                    [&](size_t t) { tile(static_cast<int64_t>(t)); });
}

/// C[m x n] = alpha * op(A) op(B) + beta * C in row-major storage, through
/// BLAS (f32 accumulation for floats, f64 for doubles), in tiles that
/// depend on the shape alone: the same bits on any number of threads, and
/// the host target's.
template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const T *a,
          const T *b, T *c, T alpha = T(1), T beta = T(0)) {
  tgc::rt::tiledGemm(transA, transB, m, n, k, a, b, c, alpha, beta,
                     forEachGemmTile);
}

/// NaN-propagating max and min, as tg.max/tg.min and reductions define them.
template <typename T> T propagatingMax(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  return a < b ? b : a;
}
template <typename T> T propagatingMin(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  return b < a ? b : a;
}

using tgc::getIntMax;
using tgc::getIntMin;

/// The exclusive bound of the ids or labels `op` reads: `size` (its table's
/// rows, its classes), or its tg.id_bound where a padded vocabulary makes it
/// smaller.
inline int64_t getIdBound(mlir::Operation *op, int64_t size) {
  if (auto bound = op->getAttrOfType<mlir::IntegerAttr>(tg::kIdBoundAttrName))
    return std::min(size, bound.getInt());
  return size;
}

/// The positions of `ids` grouped by id, each group in increasing order (a
/// stable counting sort): the positions of id e are
/// order[offsets[e]] .. order[offsets[e + 1] - 1]. Fails with an error on
/// `op` for an id outside [0, groups), or, for a block of `globalGroups`,
/// outside [groups - globalGroups, globalGroups) (ids of other blocks are
/// left out).
inline mlir::LogicalResult
groupById(mlir::Operation *op, llvm::ArrayRef<int64_t> ids, int64_t groups,
          std::vector<int64_t> &offsets, std::vector<int64_t> &order,
          int64_t globalGroups) {
  // A block of `groups` of `globalGroups` (expert parallelism): ids are
  // relative to the block, in [groups - globalGroups, globalGroups), and
  // those outside [0, groups) belong to other blocks.
  int64_t low = groups - globalGroups, high = globalGroups;
  offsets.assign(groups + 1, 0);
  for (size_t i = 0, e = ids.size(); i < e; ++i) {
    if (ids[i] < low || ids[i] >= high)
      return op->emitError("expert id ")
             << ids[i] << " at flat position " << i << " is out of range ["
             << low << ", " << high << ")";
    if (ids[i] >= 0 && ids[i] < groups)
      ++offsets[ids[i] + 1];
  }
  for (int64_t g = 0; g < groups; ++g)
    offsets[g + 1] += offsets[g];
  std::vector<int64_t> next(offsets.begin(), offsets.end() - 1);
  order.resize(offsets[groups]);
  for (size_t i = 0, e = ids.size(); i < e; ++i)
    if (ids[i] >= 0 && ids[i] < groups)
      order[next[ids[i]]++] = static_cast<int64_t>(i);
  return mlir::success();
}

} // namespace tgc::detail

#endif // TGC_LIB_EVAL_KERNELUTILS_H
