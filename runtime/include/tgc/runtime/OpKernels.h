//===- OpKernels.h - op kernels that generated kernels call -----*- C++ -*-===//
//
// The ops that are more than one formula per element, as device functions
// over a set of threads (`Threads`: the block's, or the whole grid's when a
// kernel has no step that waits for another). Each loops over its outputs
// with the threads' stride, so it is correct for one thread (the host
// target) and for many. Ops with two phases (cross_entropy, the norm
// gradients) synchronize the block between them: the emitter runs them in
// one-block kernels. Float results accumulate in the compute type in the
// interpreter's order (one thread per output), so the host target equals
// the interpreter bit for bit; lib/Eval is the reference of every formula.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_OPKERNELS_H
#define TGC_RUNTIME_OPKERNELS_H

#include "tgc/runtime/Philox.h"
#include "tgc/runtime/ScalarOps.h"
#include "tgc/runtime/Storage.h"

#include <cfloat>
#include <cmath>
#include <type_traits>

namespace tgc::rt {

/// The threads a kernel step loops with: this thread's index among `count`.
struct Threads {
  int64_t index, count;
};
__device__ inline Threads blockThreads() {
  return {static_cast<int64_t>(threadIdx.x), static_cast<int64_t>(blockDim.x)};
}
__device__ inline Threads gridThreads() {
  return {static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
          static_cast<int64_t>(gridDim.x) * blockDim.x};
}

/// The elements of [0, count) a thread of `th` takes in a grid-stride
/// loop: chunks of kChunk consecutive elements, the threads taking chunks
/// in turn, `body(i)` for each element of its chunks in order. A full chunk
/// is unrolled, so that the compiler merges its accesses into 128-bit ones
/// where it knows their alignment (alignedArena). Every loop that reads
/// elements another loop of its kernel wrote at the same index takes them
/// this way: the same thread wrote them.
template <typename Body>
__device__ inline void forEachElement(Threads th, int64_t count, Body body) {
  for (int64_t g = th.index; g * kChunk < count; g += th.count) {
    int64_t first = g * kChunk;
    if (first + kChunk <= count) {
      TGC_UNROLL
      for (int64_t k = 0; k < kChunk; ++k)
        body(first + k);
    } else {
      for (int64_t i = first; i < count; ++i)
        body(i);
    }
  }
}

/// The arena and the scratch as generated kernels read them: 256-byte
/// aligned (cudaMalloc's alignment, and the host backend's).
__device__ inline char *alignedArena(char *base) {
  return static_cast<char *>(__builtin_assume_aligned(base, 256));
}

/// Element i of a row-wise op's result: stored as S, or handed unrounded
/// to the generated code's epilogue (a callable of the index and the
/// value) that computes the region's elementwise ops on it in registers.
template <typename S, typename Out, typename T>
__device__ inline void put(Out out, int64_t i, T value) {
  if constexpr (std::is_pointer_v<Out>)
    out[i] = st<S>(value);
  else
    out(i, value);
}

/// A row-wise step's split of the work: a block per row (the rows this
/// block takes among the grid's blocks), the block's threads sharing the
/// row's elements. With one thread per block (the host target) a row is
/// one thread's, in order.
struct RowThreads {
  Threads rows, columns;
};
__device__ inline RowThreads rowThreads() {
  return {
      {static_cast<int64_t>(blockIdx.x), static_cast<int64_t>(gridDim.x)},
      {static_cast<int64_t>(threadIdx.x), static_cast<int64_t>(blockDim.x)}};
}

/// Combines every thread's `value` over the block (up to 1024 threads) and
/// returns the result to all of them: pairs at doubling distances (thread
/// t takes t + s's value when t is a multiple of 2s, for s = 1, 2, 4...),
/// the same tree for the same block size, so the same result run after
/// run. One thread: `value` itself. Every thread of the block must call it.
/// On the GPU, with whole warps, the distances below 32 are warp shuffles
/// and the warps' results go through shared memory once, then through the
/// first warp's shuffles: the same pairs in the same order as the
/// shared-memory tree the host runs.
template <typename T, typename Combine>
__device__ T blockReduce(T value, Combine combine) {
  __shared__ T partials[1024];
  unsigned t = threadIdx.x, n = blockDim.x;
#if defined(__CUDA_ARCH__)
  if (n % 32 == 0) {
    unsigned lane = t % 32, warps = n / 32;
    for (unsigned s = 1; s < 32; s *= 2) {
      T other = __shfl_down_sync(0xffffffffu, value, s);
      if (lane % (2 * s) == 0)
        value = combine(value, other);
    }
    if (lane == 0)
      partials[t / 32] = value;
    __syncthreads();
    if (t < 32) {
      value = lane < warps ? partials[lane] : value;
      for (unsigned s = 1; s < warps; s *= 2) {
        T other = __shfl_down_sync(0xffffffffu, value, s);
        if (lane % (2 * s) == 0 && lane + s < warps)
          value = combine(value, other);
      }
      if (t == 0)
        partials[0] = value;
    }
    __syncthreads();
    T result = partials[0];
    __syncthreads();
    return result;
  }
#endif
  partials[t] = value;
  __syncthreads();
  for (unsigned s = 1; s < n; s *= 2) {
    if (t % (2 * s) == 0 && t + s < n)
      partials[t] = combine(partials[t], partials[t + s]);
    __syncthreads();
  }
  T result = partials[0];
  __syncthreads();
  return result;
}
template <typename T> __device__ T blockSum(T value) {
  return blockReduce(value, [](T a, T b) { return a + b; });
}
template <typename T> __device__ T blockMax(T value) {
  return blockReduce(value, [](T a, T b) { return propagatingMax(a, b); });
}

/// A small array by value (shapes and strides of up to 8 dimensions).
struct Dims {
  int64_t v[8];
};

/// Stops the step: a bad id or label. On the GPU the kernel traps (the
/// runtime reports the failing kernel); on the host it reports and exits.
void reportKernelError(const char *what, int64_t value, int64_t bound);
__device__ inline void kernelError(const char *what, int64_t value,
                                   int64_t bound) {
#if defined(__CUDA_ARCH__)
  printf("tgc: %s %lld is out of range [0, %lld)\n", what,
         static_cast<long long>(value), static_cast<long long>(bound));
  __trap();
#elif !defined(__CUDACC__)
  reportKernelError(what, value, bound);
#endif
}

namespace k {

/// out[i] = in[offset + sum_d index_d(i) * strides[d]] over `shape`
/// (row-major): broadcast_in_dim, transpose, slice, copies.
template <typename S>
__device__ void gather(Threads th, const S *in, S *out, int64_t count, int rank,
                       Dims shape, Dims strides, int64_t offset) {
  for (int64_t i = th.index; i < count; i += th.count) {
    int64_t rest = i, source = offset;
    for (int d = rank - 1; d >= 0; --d) {
      source += (rest % shape.v[d]) * strides.v[d];
      rest /= shape.v[d];
    }
    out[i] = in[source];
  }
}

/// tg.pad: operand element s lands at low + s * (interior + 1); the rest is
/// 0. The operand's index of element i of the result, or -1 where i is
/// padding.
__device__ inline int64_t padSource(int64_t i, int rank, Dims outShape,
                                    Dims inShape, Dims low, Dims step) {
  int64_t rest = i, source = 0, inStride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t q = rest % outShape.v[d] - low.v[d];
    rest /= outShape.v[d];
    if (q < 0 || q % step.v[d] != 0 || q / step.v[d] >= inShape.v[d])
      return -1;
    source += (q / step.v[d]) * inStride;
    inStride *= inShape.v[d];
  }
  return source;
}

template <typename S>
__device__ void fill(Threads th, S *out, int64_t count, S value) {
  for (int64_t i = th.index; i < count; i += th.count)
    out[i] = value;
}

enum class ReduceKind { Sum, Max, Min, Mean };

/// One thread's fold of reduction inputs: NaN-propagating max and min,
/// wrapping integer sums, float sums through CascadeSum (as the
/// interpreter); `combine` joins two threads' results.
template <ReduceKind Kind, typename T> struct Fold {
  T acc;
  CascadeSum<T> sum;
  static constexpr bool kCascade =
      std::is_floating_point_v<T> &&
      (Kind == ReduceKind::Sum || Kind == ReduceKind::Mean);
  TGC_HD explicit Fold(T init) : acc(init) {}
  TGC_HD void add(T x) {
    if constexpr (Kind == ReduceKind::Max)
      acc = propagatingMax(acc, x);
    else if constexpr (Kind == ReduceKind::Min)
      acc = propagatingMin(acc, x);
    else if constexpr (kCascade)
      sum.add(x);
    else
      acc = wrapAdd(acc, x);
  }
  TGC_HD T result() const {
    if constexpr (kCascade)
      return sum.result();
    return acc;
  }
  TGC_HD static T combine(T a, T b) {
    if constexpr (Kind == ReduceKind::Max)
      return propagatingMax(a, b);
    else if constexpr (Kind == ReduceKind::Min)
      return propagatingMin(a, b);
    else if constexpr (kCascade)
      return a + b;
    else
      return wrapAdd(a, b);
  }
  /// Mean: the sum over the count of folded elements, as the interpreter
  /// divides it (all the input's elements over the outputs').
  TGC_HD static T finish(T value, int64_t inputs, int64_t outputs) {
    if constexpr (Kind == ReduceKind::Mean)
      return value / (T(inputs) / T(outputs > 0 ? outputs : 1));
    return value;
  }
};

/// tg.reduce: out[r] folds, in row-major order, the input elements whose
/// kept indices are r's (float sums through CascadeSum, as the
/// interpreter); `reduced` has bit d set for a reduced dimension. A block
/// per output: its threads fold every count-th element, then the block
/// combines their folds (one thread: the interpreter's order).
template <ReduceKind Kind, typename S, typename D>
__device__ void reduce(RowThreads th, const S *in, D *out, int64_t outCount,
                       int rank, Dims shape, unsigned reduced,
                       Compute<S> init) {
  using T = Compute<S>;
  using F = Fold<Kind, T>;
  int64_t inner = 1, strides[8];
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = inner;
    inner *= shape.v[d];
  }
  int64_t perOutput = 1;
  for (int d = 0; d < rank; ++d)
    if (reduced >> d & 1)
      perOutput *= shape.v[d];
  Threads c = th.columns;
  for (int64_t r = th.rows.index; r < outCount; r += th.rows.count) {
    // The input offset of r's kept indices.
    int64_t rest = r, base = 0;
    for (int d = rank - 1; d >= 0; --d)
      if (!(reduced >> d & 1)) {
        base += (rest % shape.v[d]) * strides[d];
        rest /= shape.v[d];
      }
    F fold(init);
    for (int64_t j = c.index; j < perOutput; j += c.count) {
      int64_t restJ = j, at = base;
      for (int d = rank - 1; d >= 0; --d)
        if (reduced >> d & 1) {
          at += (restJ % shape.v[d]) * strides[d];
          restJ /= shape.v[d];
        }
      fold.add(ld(in[at]));
    }
    T acc =
        blockReduce(fold.result(), [](T a, T b) { return F::combine(a, b); });
    if (c.index == 0)
      out[r] = st<D>(F::finish(acc, inner, outCount));
  }
}

/// A block's threads over a chunk of C columns (reduceColumns,
/// normGradColumns): with at least C threads, `lanes` lanes of C threads,
/// thread t in lane t / C at column t % C (`active` unless it is past the
/// last whole lane); with fewer (the host target), one lane whose threads
/// take the chunk's columns from `first` by `stride`.
struct ColumnLanes {
  int64_t lanes, lane, first, stride;
  bool active;
};
__device__ inline ColumnLanes getColumnLanes(Threads threads, int64_t C) {
  int64_t t = threads.index, n = threads.count;
  if (n < C)
    return {1, 0, t, n, true};
  return {n / C, t / C, t % C, C, t / C < n / C};
}

/// tg.reduce over the leading dimensions: out[j] folds column j of `rows`
/// rows of `width` elements. A block per chunk of C columns (32: a warp
/// reads a row's chunk at once, where a block per output would read a
/// column, an element per row); its threads form lanes of a thread per
/// column, lane l folding every lanes-th row from l, and the lanes' folds
/// are combined in lane order. Fewer threads than a chunk (the host target)
/// make one lane that folds each column's rows in order, as the
/// interpreter does.
template <ReduceKind Kind, typename S, typename D>
__device__ void reduceColumns(RowThreads rt, const S *in, D *out, int64_t rows,
                              int64_t width, Compute<S> init, int64_t C) {
  using T = Compute<S>;
  using F = Fold<Kind, T>;
  __shared__ T partial[1024];
  const auto [lanes, lane, first, stride, active] =
      getColumnLanes(rt.columns, C);
  for (int64_t chunk = rt.rows.index; chunk * C < width;
       chunk += rt.rows.count) {
    for (int64_t s = first; s < C; s += stride) {
      int64_t j = chunk * C + s;
      F fold(init);
      if (active && j < width)
        for (int64_t r = lane; r < rows; r += lanes)
          fold.add(ld(in[r * width + j]));
      if (lanes > 1) {
        if (active)
          partial[lane * C + s] = fold.result();
      } else if (active && j < width) {
        out[j] = st<D>(F::finish(fold.result(), rows * width, width));
      }
    }
    if (lanes > 1) {
      __syncthreads();
      int64_t j = chunk * C + first;
      if (lane == 0 && j < width) {
        T total = partial[first];
        for (int64_t l = 1; l < lanes; ++l)
          total = F::combine(total, partial[l * C + first]);
        out[j] = st<D>(F::finish(total, rows * width, width));
      }
      __syncthreads();
    }
  }
}

/// Softmax or log-softmax along a dimension: `outer` x `inner` lines of
/// `size` elements at stride `inner`.
template <bool Log, typename S>
__device__ void softmax(RowThreads th, const S *in, S *out, int64_t outer,
                        int64_t size, int64_t inner) {
  using T = Compute<S>;
  Threads c = th.columns;
  for (int64_t line = th.rows.index; line < outer * inner;
       line += th.rows.count) {
    int64_t base = (line / inner) * size * inner + line % inner;
    T max = -INFINITY;
    for (int64_t k = c.index; k < size; k += c.count)
      max = propagatingMax(max, ld(in[base + k * inner]));
    max = blockMax(max);
    CascadeSum<T> terms;
    for (int64_t k = c.index; k < size; k += c.count)
      terms.add(std::exp(ld(in[base + k * inner]) - max));
    T sum = blockSum(terms.result());
    T logSum = std::log(sum);
    for (int64_t k = c.index; k < size; k += c.count) {
      T shifted = ld(in[base + k * inner]) - max;
      out[base + k * inner] =
          st<S>(Log ? shifted - logSum : std::exp(shifted) / sum);
    }
  }
}

template <typename S>
__device__ void softmaxGrad(RowThreads th, const S *y, const S *dy, S *out,
                            int64_t outer, int64_t size, int64_t inner) {
  using T = Compute<S>;
  Threads c = th.columns;
  for (int64_t line = th.rows.index; line < outer * inner;
       line += th.rows.count) {
    int64_t base = (line / inner) * size * inner + line % inner;
    CascadeSum<T> products;
    for (int64_t k = c.index; k < size; k += c.count)
      products.add(ld(y[base + k * inner]) * ld(dy[base + k * inner]));
    T dot = blockSum(products.result());
    for (int64_t k = c.index; k < size; k += c.count) {
      int64_t at = base + k * inner;
      out[at] = st<S>(ld(y[at]) * (ld(dy[at]) - dot));
    }
  }
}

/// Layer norm (with a mean and a bias) or RMS norm over rows of `width`.
template <bool IsLayerNorm, typename S, typename P, typename F>
__device__ void norm(RowThreads th, const S *x, const P *scale, const P *bias,
                     S *y, F *mean, F *rstd, int64_t rows, int64_t width,
                     float epsilon) {
  using T = Compute<S>;
  Threads c = th.columns;
  for (int64_t r = th.rows.index; r < rows; r += th.rows.count) {
    const S *row = x + r * width;
    T mu = 0;
    if (IsLayerNorm) {
      CascadeSum<T> sum;
      for (int64_t j = c.index; j < width; j += c.count)
        sum.add(ld(row[j]));
      mu = blockSum(sum.result()) / T(width);
    }
    CascadeSum<T> squares;
    for (int64_t j = c.index; j < width; j += c.count)
      squares.add((ld(row[j]) - mu) * (ld(row[j]) - mu));
    T variance = blockSum(squares.result()) / T(width);
    T inverse = T(1) / std::sqrt(variance + T(epsilon));
    for (int64_t j = c.index; j < width; j += c.count) {
      T normalized = (ld(row[j]) - mu) * inverse * T(ld(scale[j]));
      y[r * width + j] =
          st<S>(IsLayerNorm ? normalized + T(ld(bias[j])) : normalized);
    }
    if (c.index != 0)
      continue;
    if (IsLayerNorm)
      mean[r] = st<F>(mu);
    rstd[r] = st<F>(inverse);
  }
}

/// The norms' backward, dx: a block per row, its threads sharing the row.
/// It reads only the inputs (normGradColumns runs beside it).
template <bool IsLayerNorm, typename S, typename P, typename F, typename Out>
__device__ void normGrad(RowThreads rt, const S *dy, const S *x, const F *mean,
                         const F *rstd, const P *scale, Out dx, int64_t rows,
                         int64_t width) {
  using T = Compute<S>;
  Threads c = rt.columns;
  for (int64_t r = rt.rows.index; r < rows; r += rt.rows.count) {
    T mu = IsLayerNorm ? T(ld(mean[r])) : T(0);
    T inverse = T(ld(rstd[r]));
    const S *row = x + r * width, *grow = dy + r * width;
    CascadeSum<T> sumG, sumGX;
    for (int64_t j = c.index; j < width; j += c.count) {
      T xhat = (ld(row[j]) - mu) * inverse;
      T gs = ld(grow[j]) * T(ld(scale[j]));
      sumG.add(gs);
      sumGX.add(gs * xhat);
    }
    T meanG = blockSum(sumG.result()) / T(width);
    T meanGX = blockSum(sumGX.result()) / T(width);
    for (int64_t j = c.index; j < width; j += c.count) {
      T xhat = (ld(row[j]) - mu) * inverse;
      T gs = ld(grow[j]) * T(ld(scale[j]));
      put<S>(dx, r * width + j,
             inverse * (gs - (IsLayerNorm ? meanG : T(0)) - xhat * meanGX));
    }
  }
}

/// The norms' backward, dscale and dbias: the sums over the rows of each
/// column. A block per chunk of `C` columns (32: a warp); its threads form
/// lanes of a thread per column (a warp reads a row's chunk at once), lane
/// l summing every lanes-th row from l, and the lanes' sums are added in
/// lane order. Fewer threads than a chunk (the host target) make one lane
/// that sums each column's rows in order, as the interpreter does.
template <bool IsLayerNorm, typename S, typename F, typename G>
__device__ void normGradColumns(RowThreads rt, const S *dy, const S *x,
                                const F *mean, const F *rstd, G *dscale,
                                G *dbias, int64_t rows, int64_t width,
                                int64_t C) {
  using T = Compute<S>;
  __shared__ T partialScale[1024], partialBias[1024];
  const auto [lanes, lane, first, stride, active] =
      getColumnLanes(rt.columns, C);
  for (int64_t chunk = rt.rows.index; chunk * C < width;
       chunk += rt.rows.count) {
    for (int64_t s = first; s < C; s += stride) {
      int64_t j = chunk * C + s;
      CascadeSum<T> sumScale, sumBias;
      if (active && j < width)
        for (int64_t r = lane; r < rows; r += lanes) {
          T mu = IsLayerNorm ? T(ld(mean[r])) : T(0);
          T xhat = (ld(x[r * width + j]) - mu) * T(ld(rstd[r]));
          sumScale.add(ld(dy[r * width + j]) * xhat);
          sumBias.add(ld(dy[r * width + j]));
        }
      if (lanes > 1) {
        if (active) {
          partialScale[lane * C + s] = sumScale.result();
          partialBias[lane * C + s] = sumBias.result();
        }
      } else if (active && j < width) {
        dscale[j] = st<G>(sumScale.result());
        if (IsLayerNorm)
          dbias[j] = st<G>(sumBias.result());
      }
    }
    if (lanes > 1) {
      __syncthreads();
      int64_t j = chunk * C + first;
      if (lane == 0 && j < width) {
        T totalScale = partialScale[first], totalBias = partialBias[first];
        for (int64_t l = 1; l < lanes; ++l) {
          totalScale += partialScale[l * C + first];
          totalBias += partialBias[l * C + first];
        }
        dscale[j] = st<G>(totalScale);
        if (IsLayerNorm)
          dbias[j] = st<G>(totalBias);
      }
      __syncthreads();
    }
  }
}

/// Softmax cross-entropy, in two launches: the logsumexp per row, then
/// (crossEntropyLoss) the loss, summed over the rows in order by thread 0.
template <typename S, typename F>
__device__ void crossEntropyRows(RowThreads th, const S *logits, F *logsumexp,
                                 int64_t rows, int64_t classes) {
  using T = Compute<S>;
  Threads k = th.columns;
  for (int64_t t = th.rows.index; t < rows; t += th.rows.count) {
    const S *row = logits + t * classes;
    T max = -INFINITY;
    for (int64_t c = k.index; c < classes; c += k.count)
      max = propagatingMax(max, ld(row[c]));
    max = blockMax(max);
    CascadeSum<T> terms;
    for (int64_t c = k.index; c < classes; c += k.count)
      terms.add(std::exp(ld(row[c]) - max));
    T sum = blockSum(terms.result());
    if (k.index == 0)
      logsumexp[t] = st<F>(max + std::log(sum));
  }
}

template <typename S, typename I, typename L, typename F>
__device__ void crossEntropyLoss(Threads th, const S *logits, const I *labels,
                                 L *loss, const F *logsumexp, int64_t rows,
                                 int64_t classes, bool hasIgnore,
                                 int64_t ignoreIndex, bool mean) {
  using T = Compute<S>;
  if (th.index != 0)
    return;
  CascadeSum<T> losses;
  int64_t counted = 0;
  for (int64_t t = 0; t < rows; ++t) {
    int64_t label = ld(labels[t]);
    if (hasIgnore && label == ignoreIndex)
      continue;
    if (label < 0 || label >= classes)
      kernelError("cross_entropy label", label, classes);
    losses.add(T(ld(logsumexp[t])) - ld(logits[t * classes + label]));
    ++counted;
  }
  T total = losses.result();
  loss[0] = st<L>(mean ? total / T(counted) : total);
}

/// tg.cross_entropy_grad, in two launches: the weight of every row's
/// gradient (dloss, over the rows counted for a mean) by thread 0, which
/// checks the labels, then a block per row.
template <typename D, typename I, typename W>
__device__ void crossEntropyWeight(Threads th, const D *dloss, const I *labels,
                                   W *weight, int64_t rows, int64_t classes,
                                   bool hasIgnore, int64_t ignoreIndex,
                                   bool mean) {
  if (th.index != 0)
    return;
  int64_t counted = 0;
  for (int64_t t = 0; t < rows; ++t) {
    int64_t label = ld(labels[t]);
    if (hasIgnore && label == ignoreIndex)
      continue;
    if (label < 0 || label >= classes)
      kernelError("cross_entropy_grad label", label, classes);
    ++counted;
  }
  // 0/0 is NaN for the mean over no token, as in the forward.
  weight[0] = mean ? W(ld(dloss[0])) / W(counted) : W(ld(dloss[0]));
}

template <typename S, typename I, typename F>
__device__ void crossEntropyGrad(RowThreads th, const S *logits,
                                 const I *labels, const F *logsumexp,
                                 const Compute<S> *weight, S *out, int64_t rows,
                                 int64_t classes, bool hasIgnore,
                                 int64_t ignoreIndex) {
  using T = Compute<S>;
  Threads k = th.columns;
  for (int64_t t = th.rows.index; t < rows; t += th.rows.count) {
    const S *row = logits + t * classes;
    S *outRow = out + t * classes;
    int64_t label = ld(labels[t]);
    if (hasIgnore && label == ignoreIndex) {
      for (int64_t c = k.index; c < classes; c += k.count)
        outRow[c] = st<S>(T(0));
      continue;
    }
    T w = weight[0], rowLse = T(ld(logsumexp[t]));
    for (int64_t c = k.index; c < classes; c += k.count) {
      T p = std::exp(ld(row[c]) - rowLse);
      outRow[c] = st<S>(w * (p - (c == label ? T(1) : T(0))));
    }
  }
}

template <typename S, typename I>
__device__ void embedding(Threads th, const S *table, const I *ids, S *out,
                          int64_t count, int64_t width, int64_t rows) {
  for (int64_t i = th.index; i < count * width; i += th.count) {
    int64_t id = ld(ids[i / width]);
    if (id < 0 || id >= rows)
      kernelError("embedding id", id, rows);
    out[i] = table[id * width + i % width];
  }
}

/// The experts' products (tg.expert_matmul and its weight gradient) as
/// grouped GEMMs: each block computes a kSize x kSize tile of one expert's
/// product in shared memory, kDepth of the contraction at a time, every
/// thread a kMicro x kMicro part of it in registers (rows and columns kSize
/// / kMicro apart, so that a warp reads consecutive shared words). The
/// threads take the tile's parts in turn, so any block size computes it,
/// one thread on the host. Each result element is one thread's sum in
/// Compute<S>, in the contraction's order: deterministic.
template <typename T> struct ExpertTile {
  static constexpr int kSize = static_cast<int>(expertTileSize(sizeof(T)));
  static constexpr int kDepth = 16;
  static constexpr int kMicro = 4;
  static constexpr int kParts = kSize / kMicro;
  /// A block's shared memory: the operands' stages and the tile's sums
  /// (kSize x kSize, row-major).
  struct Shared {
    T as[kDepth][kSize + 1];
    T bs[kDepth][kSize + 1];
    T acc[kSize * kSize];
  };
};

/// Sets `sh.acc` (the tile) to the product A B over the contraction
/// [0, depth): a(k, m) and b(k, n) load the operands' elements (zero
/// outside them), staged through `sh.as` and `sh.bs` kDepth at a time;
/// consecutive threads load consecutive k of an operand whose `KFast` flag
/// is set (its k is contiguous in memory), else consecutive m or n. Every
/// thread of the block calls it.
template <typename T, bool KFastA, bool KFastB, typename LoadA, typename LoadB>
__device__ void tileProduct(Threads th, int64_t depth,
                            typename ExpertTile<T>::Shared &sh, LoadA a,
                            LoadB b) {
  using Tile = ExpertTile<T>;
  constexpr int kSize = Tile::kSize, kDepth = Tile::kDepth;
  constexpr int kMicro = Tile::kMicro, kParts = Tile::kParts;
  auto &as = sh.as;
  auto &bs = sh.bs;
  T *acc = sh.acc;
  for (int64_t i = th.index; i < kSize * kSize; i += th.count)
    acc[i] = T(0);
  for (int64_t k0 = 0; k0 < depth; k0 += kDepth) {
    __syncthreads();
    for (int64_t i = th.index; i < kDepth * kSize; i += th.count) {
      int k = static_cast<int>(i / kSize), m = static_cast<int>(i % kSize);
      int kt = static_cast<int>(i % kDepth), mt = static_cast<int>(i / kDepth);
      int ka = KFastA ? kt : k, ma = KFastA ? mt : m;
      int kb = KFastB ? kt : k, nb = KFastB ? mt : m;
      as[ka][ma] = k0 + ka < depth ? a(k0 + ka, ma) : T(0);
      bs[kb][nb] = k0 + kb < depth ? b(k0 + kb, nb) : T(0);
    }
    __syncthreads();
    for (int64_t part = th.index; part < kParts * kParts; part += th.count) {
      int pm = static_cast<int>(part / kParts),
          pn = static_cast<int>(part % kParts);
      T sums[kMicro][kMicro];
      TGC_UNROLL
      for (int i = 0; i < kMicro; ++i)
        TGC_UNROLL
      for (int j = 0; j < kMicro; ++j)
        sums[i][j] = acc[(pm + i * kParts) * kSize + pn + j * kParts];
      for (int k = 0; k < kDepth; ++k) {
        T x[kMicro], y[kMicro];
        TGC_UNROLL
        for (int i = 0; i < kMicro; ++i) {
          x[i] = as[k][pm + i * kParts];
          y[i] = bs[k][pn + i * kParts];
        }
        TGC_UNROLL
        for (int i = 0; i < kMicro; ++i)
          TGC_UNROLL
        for (int j = 0; j < kMicro; ++j)
          sums[i][j] += x[i] * y[j];
      }
      TGC_UNROLL
      for (int i = 0; i < kMicro; ++i)
        TGC_UNROLL
      for (int j = 0; j < kMicro; ++j)
        acc[(pm + i * kParts) * kSize + pn + j * kParts] = sums[i][j];
    }
  }
  __syncthreads();
}

/// The operands of the expert products' tiles (tileProduct's loaders).
/// Element (k, m) of a tile of rows: x[order[m], k], zero from row `count`.
template <typename S> struct LoadX {
  const S *x;
  const int64_t *order;
  int64_t h, count;
  __device__ Compute<S> operator()(int64_t k, int m) const {
    return m < count ? Compute<S>(ld(x[order[m] * h + k])) : Compute<S>(0);
  }
};
/// Element (k, n) of an expert's matrix: [k, c0 + n] of [h, o], or
/// [c0 + n, k] of [o, h] applied transposed; zero from column o.
template <typename S> struct LoadW {
  const S *w;
  int64_t c0, h, o;
  bool transB;
  __device__ Compute<S> operator()(int64_t k, int n) const {
    int64_t c = c0 + n;
    if (c >= o)
      return Compute<S>(0);
    return Compute<S>(ld(transB ? w[c * h + k] : w[k * o + c]));
  }
};
/// Element (k, j) of rows taken in order: [order[k], c0 + j] of rows of
/// `width`, zero from column `width`.
template <typename S> struct LoadRows {
  const S *rows;
  const int64_t *order;
  int64_t width, c0;
  __device__ Compute<S> operator()(int64_t k, int j) const {
    return c0 + j < width ? Compute<S>(ld(rows[order[k] * width + c0 + j]))
                          : Compute<S>(0);
  }
};

/// Each expert's rows listed in increasing order at `order[offsets[e]]`
/// on, a thread per expert (a counting sort in O(rows x experts),
/// deterministic): the first launch of both expert products. A block of
/// `experts` of `global` experts (expert parallelism) takes ids in
/// [experts - global, global), relative to the block, and lists the rows
/// of the other blocks' experts last, as slot `experts` (offsets has
/// experts + 2 entries then).
template <typename I>
__device__ void expertRows(Threads th, const I *ids, int64_t *offsets,
                           int64_t *order, int64_t rows, int64_t experts,
                           int64_t global) {
  int64_t slots = experts + (global > experts ? 1 : 0);
  auto slotOf = [&](int64_t id) {
    return id >= 0 && id < experts ? id : experts;
  };
  for (int64_t e = th.index; e < slots; e += th.count) {
    int64_t before = 0;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t id = ld(ids[i]);
      if (id < experts - global || id >= global)
        kernelError("expert id", id, global);
      before += slotOf(id) < e ? 1 : 0;
    }
    offsets[e] = before;
    for (int64_t i = 0; i < rows; ++i)
      if (slotOf(ld(ids[i])) == e)
        order[before++] = i;
    if (e == slots - 1)
      offsets[slots] = before;
  }
}

/// tg.expert_matmul after expertRows: out[r, :] = x[r, :] times the
/// matrix of r's expert ([experts, h, o], or [experts, o, h] applied
/// transposed when `transB`), a block per tile of one expert's rows (in
/// the order expertRows lists them) and kSize columns: the routed products
/// only, each matrix tile read once per tile of its rows. The rows of
/// slot `experts` (`slots` = experts + 1: other devices' experts) are
/// zeros.
template <typename S>
__device__ void expertMatmul(RowThreads th, const S *x, const S *w,
                             const int64_t *offsets, const int64_t *order,
                             S *out, int64_t rows, int64_t h, int64_t o,
                             int64_t experts, int64_t slots, bool transB) {
  using T = Compute<S>;
  constexpr int kSize = ExpertTile<T>::kSize;
  __shared__ typename ExpertTile<T>::Shared sh;
  int64_t columnTiles = (o + kSize - 1) / kSize;
  int64_t blocks = expertMatmulBlocks(kSize, rows, o, slots);
  for (int64_t block = th.rows.index; block < blocks; block += th.rows.count) {
    // The block's expert and first row among its rows: the tiles of each
    // expert in turn (the same for every thread of the block).
    int64_t tile = block / columnTiles, c0 = block % columnTiles * kSize;
    int64_t e = 0, first = -1;
    for (; e < slots; ++e) {
      int64_t count = offsets[e + 1] - offsets[e];
      int64_t tiles = (count + kSize - 1) / kSize;
      if (tile < tiles) {
        first = tile * kSize;
        break;
      }
      tile -= tiles;
    }
    if (first < 0)
      continue;
    int64_t begin = offsets[e] + first;
    int64_t count = offsets[e + 1] - begin;
    count = count < kSize ? count : kSize;
    if (e == experts) {
      for (int64_t i = th.columns.index; i < kSize * kSize;
           i += th.columns.count) {
        int64_t m = i / kSize, c = c0 + i % kSize;
        if (m < count && c < o)
          out[order[begin + m] * o + c] = st<S>(T(0));
      }
      continue;
    }
    // x's rows are contiguous along the contraction; the matrix is along
    // it when applied transposed.
    LoadX<S> rowsOfX{x, order + begin, h, count};
    LoadW<S> matrix{w + e * h * o, c0, h, o, transB};
    if (transB)
      tileProduct<T, true, true>(th.columns, h, sh, rowsOfX, matrix);
    else
      tileProduct<T, true, false>(th.columns, h, sh, rowsOfX, matrix);
    for (int64_t i = th.columns.index; i < kSize * kSize;
         i += th.columns.count) {
      int64_t m = i / kSize, c = c0 + i % kSize;
      if (m < count && c < o)
        out[order[begin + m] * o + c] = st<S>(sh.acc[i]);
    }
  }
}

/// tg.expert_matmul_grad after expertRows: out[e] = x_e^T dy_e over the
/// rows of expert e in order ([experts, h, o]; dy_e^T x_e, [experts, o,
/// h], when `transB`), zero for an expert of no row; a block per tile.
template <typename S>
__device__ void expertMatmulGrad(RowThreads th, const S *x, const S *dy,
                                 const int64_t *offsets, const int64_t *order,
                                 S *out, int64_t experts, int64_t h, int64_t o,
                                 bool transB) {
  using T = Compute<S>;
  constexpr int kSize = ExpertTile<T>::kSize;
  __shared__ typename ExpertTile<T>::Shared sh;
  // The result's matrices are [height, width]: rows from a, columns from
  // b, both read along their rows (the contraction is over x's and dy's
  // rows).
  const S *a = transB ? dy : x, *b = transB ? x : dy;
  int64_t height = transB ? o : h, width = transB ? h : o;
  int64_t rowTiles = (height + kSize - 1) / kSize;
  int64_t columnTiles = (width + kSize - 1) / kSize;
  for (int64_t block = th.rows.index;
       block < expertMatmulGradBlocks(kSize, experts, h, o);
       block += th.rows.count) {
    int64_t e = block / (rowTiles * columnTiles);
    int64_t within = block % (rowTiles * columnTiles);
    int64_t r0 = within / columnTiles * kSize,
            c0 = within % columnTiles * kSize;
    int64_t begin = offsets[e], count = offsets[e + 1] - begin;
    tileProduct<T, false, false>(th.columns, count, sh,
                                 LoadRows<S>{a, order + begin, height, r0},
                                 LoadRows<S>{b, order + begin, width, c0});
    for (int64_t i = th.columns.index; i < kSize * kSize;
         i += th.columns.count) {
      int64_t r = r0 + i / kSize, c = c0 + i % kSize;
      if (r < height && c < width)
        out[(e * height + r) * width + c] = st<S>(sh.acc[i]);
    }
  }
}

/// Top-k along rows of `width` (tg.top_k): a thread per element counts the
/// elements of its row that come before it (larger, or smallest: smaller;
/// of equal ones the lower position; NaN above every number), stopping at
/// k, and an element of rank r < k writes output r. The row is visited
/// with `stride` (coprime to the width) from the element on, so that a
/// sorted row stops early too. Every output is written once: the order is
/// strict.
template <typename S, typename I>
__device__ void topK(Threads th, const S *x, S *values, I *indices,
                     int64_t rows, int64_t width, int64_t k, int64_t stride,
                     bool smallest) {
  using T = Compute<S>;
  for (int64_t e = th.index; e < rows * width; e += th.count) {
    int64_t row = e / width, i = e % width;
    const S *r = x + row * width;
    T xi = ld(r[i]);
    bool nanI = xi != xi;
    int64_t rank = 0;
    for (int64_t m = 1; m < width && rank < k; ++m) {
      int64_t j = (i + m * stride) % width;
      T xj = ld(r[j]);
      bool nanJ = xj != xj, before;
      if (nanI || nanJ)
        before = nanI && nanJ ? j < i : smallest ? nanI : nanJ;
      else
        before = smallest ? (xj < xi || (xj == xi && j < i))
                          : (xj > xi || (xj == xi && j < i));
      rank += before;
    }
    if (rank < k) {
      values[row * k + rank] = r[i];
      indices[row * k + rank] = static_cast<I>(i);
    }
  }
}

/// tg.embedding_grad, a scatter-add of rows, in two launches: O(ids x
/// width) work and the interpreter's order (each table row the sum, from
/// zero, of its ids' gradient rows by position, in the compute type,
/// rounded once), with no atomics.
///
/// The first launch zeroes the table and links each id position i to the
/// next position with the same id: chains[i] = next * 2 + head, next the
/// count when there is none and head 1 when no earlier position has the
/// id. Each thread scans from its position both ways and stops at the
/// first match, so a frequent id costs little; an id seen once scans all
/// positions (count^2 comparisons for distinct ids: 4e9 for 64 x 1024
/// tokens, still far below the rows x width x count of a scan per table
/// element).
template <typename S, typename I>
__device__ void embeddingGradChains(Threads th, const I *ids, int64_t *chains,
                                    S *out, int64_t count, int64_t width,
                                    int64_t rows) {
  for (int64_t e = th.index; e < rows * width; e += th.count)
    out[e] = st<S>(Compute<S>(0));
  for (int64_t i = th.index; i < count; i += th.count) {
    int64_t id = ld(ids[i]);
    if (id < 0 || id >= rows)
      kernelError("embedding_grad id", id, rows);
    int64_t next = i + 1, before = i - 1;
    while (next < count && ld(ids[next]) != id)
      ++next;
    while (before >= 0 && ld(ids[before]) != id)
      --before;
    chains[i] = next * 2 + (before < 0 ? 1 : 0);
  }
}

/// The second launch: a thread per element of an id's gradient row; those
/// of the first position of their id walk its chain and write the row's
/// sum, the others (and rows no id names, zeroed) are done.
template <typename S, typename I>
__device__ void embeddingGradSums(Threads th, const S *dy, const I *ids,
                                  const int64_t *chains, S *out, int64_t count,
                                  int64_t width) {
  using T = Compute<S>;
  for (int64_t e = th.index; e < count * width; e += th.count) {
    int64_t i = e / width, d = e % width;
    if (!(chains[i] & 1))
      continue;
    T acc = 0;
    for (int64_t j = i; j < count; j = chains[j] >> 1)
      acc += ld(dy[j * width + d]);
    out[static_cast<int64_t>(ld(ids[i])) * width + d] = st<S>(acc);
  }
}

/// tg.fake_quant: each element times the power of two `scale` its amax
/// history gives (delayed scaling: amax the history's largest value, NaN
/// ignored; 2^(floor(log2(maxFinite / amax)) - margin), or 1 when amax is
/// 0 or infinite), clamped to the format's largest finite value, rounded
/// to the fp8 format (E4M3FN or E5M2) and divided by the scale: the
/// interpreter's operations, in double (exact for a power of two).
template <bool E4M3, typename S, typename H>
__device__ void fakeQuant(Threads th, const S *x, const H *history, S *out,
                          int64_t count, int64_t historyLength,
                          double maxFinite, int margin) {
  double amax = 0;
  for (int64_t i = 0; i < historyLength; ++i) {
    double h = static_cast<double>(ld(history[i]));
    amax = amax < h ? h : amax;
  }
  double scale = 1;
  if (amax > 0 && amax <= DBL_MAX)
    scale = ::ldexp(1.0, static_cast<int>(::floor(::log2(maxFinite / amax))) -
                             margin);
  for (int64_t i = th.index; i < count; i += th.count) {
    double value = static_cast<double>(ld(x[i])) * scale;
    if (value == value)
      value = value < -maxFinite ? -maxFinite
                                 : (value > maxFinite ? maxFinite : value);
    float rounded = E4M3 ? roundToF8E4M3FN(static_cast<float>(value))
                         : roundToF8E5M2(static_cast<float>(value));
    out[i] = st<S>(static_cast<Compute<S>>(double(rounded) / scale));
  }
}

/// The index in the whole tensor of element `i` of a block that is the
/// whole tensor, or a run of its consecutive elements.
struct ContiguousIndex {
  TGC_HD int64_t operator()(int64_t i) const { return i; }
};

/// `offset` (null: 0) is the global index of the block's first element;
/// `indexOf(i)` the index of the block's element `i` in the whole tensor,
/// counted from the block's first (tg.dropout's `global_shape`).
template <typename S, typename I, typename O, typename Index = ContiguousIndex>
__device__ void dropout(Threads th, const S *x, const I *seed, const O *offset,
                        S *out, int64_t count, double rate, uint32_t stream,
                        Index indexOf = {}) {
  using T = Compute<S>;
  uint64_t key = static_cast<uint64_t>(ld(seed[0]));
  uint64_t first = offset ? static_cast<uint64_t>(ld(offset[0])) : 0;
  T keepScale = T(1) - T(rate);
  forEachElement(th, count, [&](int64_t i) {
    out[i] = dropoutUniform(key, first + static_cast<uint64_t>(indexOf(i)),
                            stream) >= rate
                 ? st<S>(ld(x[i]) / keepScale)
                 : st<S>(T(0));
  });
}

/// tg.random: uniform numbers in [0, 1) or standard normal ones (`Normal`),
/// with dropout's `offset` and `indexOf`, each rounded from f64 to the
/// compute type and then to the storage type, as the interpreter does.
template <bool Normal, typename S, typename I, typename O,
          typename Index = ContiguousIndex>
__device__ void random(Threads th, const I *seed, const O *offset, S *out,
                       int64_t count, uint32_t stream, Index indexOf = {}) {
  uint64_t key = static_cast<uint64_t>(ld(seed[0]));
  uint64_t first = offset ? static_cast<uint64_t>(ld(offset[0])) : 0;
  forEachElement(th, count, [&](int64_t i) {
    uint64_t index = first + static_cast<uint64_t>(indexOf(i));
    double value = Normal ? randomNormal(key, index, stream)
                          : randomUniform(key, index, stream);
    out[i] = st<S>(static_cast<Compute<S>>(value));
  });
}

/// The gradient an optimizer reads: widened to the parameter's compute type
/// and times the `grad_scale` operand when there is one.
template <typename T, typename G, typename C>
__device__ inline T optimizerGrad(const G *grad, const C *scale, int64_t i) {
  if (scale)
    return static_cast<T>(ld(grad[i])) * static_cast<T>(ld(scale[0]));
  return static_cast<T>(ld(grad[i]));
}

/// An optimizer's step count (from 1; else the step stops, naming `what`).
template <typename N>
__device__ inline int64_t optimizerStep(const N *stepValue, const char *what) {
  int64_t step = ld(stepValue[0]);
  if (step < 1)
    kernelError(what, step, INT64_MAX);
  return step;
}

/// AdamW's and LAMB's step: the learning rate and the bias corrections of
/// step `step` (from 1).
struct AdamStep {
  double lr, correction1, correction2;
};
template <typename L, typename N>
__device__ inline AdamStep getAdamStep(const L *lrValue, const N *stepValue,
                                       double beta1, double beta2,
                                       const char *what) {
  int64_t step = optimizerStep(stepValue, what);
  return {static_cast<double>(ld(lrValue[0])),
          1.0 - std::pow(beta1, double(step)),
          1.0 - std::pow(beta2, double(step))};
}

/// Element i's new moments (stored) and update direction, as AdamW's.
template <typename P, typename G, typename C, typename T = Compute<P>>
__device__ inline T adamDirection(const P *param, const G *grad, const P *m,
                                  const P *v, const C *gradScale, P *outM,
                                  P *outV, int64_t i, const AdamStep &step,
                                  double beta1, double beta2, double epsilon,
                                  double decay) {
  T p = ld(param[i]), g = optimizerGrad<T>(grad, gradScale, i);
  T mOut = T(beta1) * T(ld(m[i])) + T(1 - beta1) * g;
  T vOut = T(beta2) * T(ld(v[i])) + T(1 - beta2) * g * g;
  T mHat = mOut / T(step.correction1);
  T vHat = vOut / T(step.correction2);
  outM[i] = st<P>(mOut);
  outV[i] = st<P>(vOut);
  return mHat / (std::sqrt(vHat) + T(epsilon)) + T(decay) * p;
}

template <typename P, typename G, typename C, typename L, typename N>
__device__ void adamw(Threads th, const P *param, const G *grad, const P *m,
                      const P *v, const L *lrValue, const N *stepValue,
                      const C *gradScale, P *outParam, P *outM, P *outV,
                      int64_t count, double beta1, double beta2, double epsilon,
                      double decay) {
  using T = Compute<P>;
  AdamStep step = getAdamStep(lrValue, stepValue, beta1, beta2,
                              "adamw step (the first step is 1)");
  forEachElement(th, count, [&](int64_t i) {
    T p = ld(param[i]);
    T update = adamDirection(param, grad, m, v, gradScale, outM, outV, i, step,
                             beta1, beta2, epsilon, decay);
    outParam[i] = st<P>(p - T(step.lr) * T(1) * update);
  });
}

/// tg.lamb: AdamW's update direction, scaled per tensor by the trust ratio
/// |param| / |direction| (1 when either is 0). The norms are the whole
/// tensor's, so one block does it all: its threads compute the moments
/// and the direction (kept in `direction`) and sum the squares in order,
/// the block adds their sums, then applies the update. The interpreter's
/// numbers on one thread; on a GPU one block per tensor (slow for a large
/// one).
template <typename P, typename G, typename C, typename L, typename N>
__device__ void lamb(RowThreads th, const P *param, const G *grad, const P *m,
                     const P *v, const L *lrValue, const N *stepValue,
                     const C *gradScale, P *outParam, P *outM, P *outV,
                     Compute<P> *direction, int64_t count, double beta1,
                     double beta2, double epsilon, double decay) {
  using T = Compute<P>;
  if (th.rows.index != 0)
    return;
  AdamStep step = getAdamStep(lrValue, stepValue, beta1, beta2,
                              "lamb step (the first step is 1)");
  Threads c = th.columns;
  T directionNorm = 0, paramNorm = 0;
  for (int64_t i = c.index; i < count; i += c.count) {
    T p = ld(param[i]);
    T update = adamDirection(param, grad, m, v, gradScale, outM, outV, i, step,
                             beta1, beta2, epsilon, decay);
    direction[i] = update;
    directionNorm += update * update;
    paramNorm += p * p;
  }
  directionNorm = blockSum(directionNorm);
  paramNorm = blockSum(paramNorm);
  T ratio = 1;
  if (directionNorm > 0 && paramNorm > 0)
    ratio = std::sqrt(paramNorm) / std::sqrt(directionNorm);
  for (int64_t i = c.index; i < count; i += c.count)
    outParam[i] = st<P>(ld(param[i]) - T(step.lr) * ratio * direction[i]);
}

/// tg.adafactor, in one block per tensor (its update is clipped by its
/// root mean square over the whole tensor), the interpreter's operations:
/// `state0` is the row moment and `state1` the column moment of a
/// parameter seen as [batches, rows, columns] (factored), or `state0` the
/// unfactored moment and `state1` null. `work` holds the update (`count`),
/// then, factored, the new row and column moments and each batch's row
/// mean. Each sum runs in the interpreter's order on one thread; on a GPU
/// one block per tensor (slow for a large one).
template <typename P, typename G, typename C, typename L, typename N>
__device__ void adafactor(RowThreads th, const P *param, const G *grad,
                          const P *state0, const P *state1, const L *lrValue,
                          const N *stepValue, const C *gradScale, P *outParam,
                          P *outState0, P *outState1, Compute<P> *work,
                          int64_t batches, int64_t rows, int64_t columns,
                          double decayRate, double epsilon1,
                          double clipThreshold, double decay) {
  using T = Compute<P>;
  if (th.rows.index != 0)
    return;
  int64_t step =
      optimizerStep(stepValue, "adafactor step (the first step is 1)");
  double lr = static_cast<double>(ld(lrValue[0]));
  double beta = 1.0 - std::pow(double(step), decayRate);
  T b = T(beta), oneMinusB = T(1 - beta), eps = T(epsilon1);
  auto mean = [](T sum, int64_t n) { return n ? sum / T(n) : T(0); };
  int64_t count = batches * rows * columns;
  T *update = work;
  Threads c = th.columns;
  T sumOfSquares = 0;
  if (!state1) {
    for (int64_t i = c.index; i < count; i += c.count) {
      T g = optimizerGrad<T>(grad, gradScale, i);
      T v = b * T(ld(state0[i])) + oneMinusB * (g * g + eps);
      outState0[i] = st<P>(v);
      update[i] = g / std::sqrt(v);
      sumOfSquares += update[i] * update[i];
    }
  } else {
    T *newRow = work + count, *newColumn = newRow + batches * rows;
    T *rowMean = newColumn + batches * columns;
    for (int64_t k = c.index; k < batches * rows; k += c.count) {
      T sum = 0;
      for (int64_t j = 0; j < columns; ++j) {
        T g = optimizerGrad<T>(grad, gradScale, k * columns + j);
        sum += g * g + eps;
      }
      newRow[k] = b * T(ld(state0[k])) + oneMinusB * mean(sum, columns);
      outState0[k] = st<P>(newRow[k]);
    }
    for (int64_t k = c.index; k < batches * columns; k += c.count) {
      int64_t n = k / columns, j = k % columns;
      T sum = 0;
      for (int64_t i = 0; i < rows; ++i) {
        T g = optimizerGrad<T>(grad, gradScale, (n * rows + i) * columns + j);
        sum += g * g + eps;
      }
      newColumn[k] = b * T(ld(state1[k])) + oneMinusB * mean(sum, rows);
      outState1[k] = st<P>(newColumn[k]);
    }
    __syncthreads();
    for (int64_t n = c.index; n < batches; n += c.count) {
      T total = 0;
      for (int64_t i = 0; i < rows; ++i)
        total += newRow[n * rows + i];
      rowMean[n] = mean(total, rows);
    }
    __syncthreads();
    // The second moment's root as two factors (the interpreter's: their
    // product underflows in f32).
    for (int64_t e = c.index; e < count; e += c.count) {
      int64_t j = e % columns, ni = e / columns, n = ni / rows;
      T root = std::sqrt(newRow[ni] / rowMean[n]) *
               std::sqrt(newColumn[n * columns + j]);
      update[e] = optimizerGrad<T>(grad, gradScale, e) / root;
      sumOfSquares += update[e] * update[e];
    }
  }
  sumOfSquares = blockSum(sumOfSquares);
  T rms = std::sqrt(mean(sumOfSquares, count));
  T ratio = rms / T(clipThreshold);
  T scale = T(1) / (ratio > T(1) ? ratio : T(1));
  for (int64_t i = c.index; i < count; i += c.count) {
    T p = ld(param[i]);
    outParam[i] = st<P>(p - T(lr) * (update[i] * scale + T(decay) * p));
  }
}

template <typename P, typename G, typename C, typename L>
__device__ void sgd(Threads th, const P *param, const G *grad, const L *lrValue,
                    const P *buffer, const C *gradScale, P *outParam,
                    P *outBuffer, int64_t count, double momentum, double decay,
                    bool nesterov) {
  using T = Compute<P>;
  double lr = static_cast<double>(ld(lrValue[0]));
  forEachElement(th, count, [&](int64_t i) {
    T p = ld(param[i]), g = optimizerGrad<T>(grad, gradScale, i);
    T d = g + T(decay) * p;
    if (momentum > 0.0) {
      T b = T(momentum) * T(ld(buffer[i])) + d;
      outBuffer[i] = st<P>(b);
      d = nesterov ? d + T(momentum) * b : b;
    }
    outParam[i] = st<P>(p - T(lr) * d);
  });
}

} // namespace k
} // namespace tgc::rt

#endif // TGC_RUNTIME_OPKERNELS_H
