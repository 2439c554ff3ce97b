//===- ScalarOps.h - the scalar functions of elementwise ops ----*- C++ -*-===//
//
// One definition of each elementwise formula whose evaluation order matters
// (GELU and its gradient, sigmoid, NaN-propagating max/min, ReLU, long
// sums), used by the interpreter's kernels (lib/Eval) and by generated kernels
// on the host and the GPU, so that they compute the same float operations in
// the same order.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SCALAROPS_H
#define TGC_RUNTIME_SCALAROPS_H

#include "tgc/runtime/HostDevice.h"

#include <cmath>
#include <type_traits>

namespace tgc::rt {

template <typename T> TGC_HD inline bool isNaN(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  return false;
}

/// NaN-propagating max and min, as tg.max/tg.min and reductions define them.
template <typename T> TGC_HD inline T propagatingMax(T a, T b) {
  if (isNaN(a) || isNaN(b))
    return a + b; // NaN
  return a < b ? b : a;
}
template <typename T> TGC_HD inline T propagatingMin(T a, T b) {
  if (isNaN(a) || isNaN(b))
    return a + b;
  return b < a ? b : a;
}

/// A long sum in T (f32 for f32 data) whose rounding error grows with the
/// logarithm of the count, not the count: blocks of kBlock terms are summed
/// in order, and the block sums are combined pairwise, as the carries of a
/// binary counter (block sums 1+2, then 3+4, then (1+2)+(3+4)...). Sequential
/// summation stalls once the sum is 2^24 times a term (2^25 terms of
/// -0.0659535 sum to -2097152 instead of -2213030); this one is exact to a
/// few ulps there. A sum of at most kBlock terms is the plain sequential
/// sum. The interpreter and generated kernels add their terms in the same
/// order through it, so they agree bit for bit.
template <typename T> class CascadeSum {
public:
  static constexpr int64_t kBlock = 64;

  TGC_HD void add(T term) {
    block += term;
    if (++inBlock == kBlock)
      carryBlock();
  }

  TGC_HD T result() const {
    // Partial levels from the smallest (the latest terms) to the largest.
    T total = block;
    for (int level = 0; level < kLevels; ++level)
      if (blocks >> level & 1)
        total = levels[level] + total;
    return total;
  }

private:
  static constexpr int kLevels = 48;

  TGC_HD void carryBlock() {
    T carry = block;
    int level = 0;
    for (uint64_t n = blocks; n & 1; n >>= 1, ++level)
      carry = levels[level] + carry;
    levels[level] = carry;
    ++blocks;
    block = T(0);
    inBlock = 0;
  }

  /// levels[i]: the sum of 2^i blocks, valid when bit i of `blocks` is set.
  T levels[kLevels];
  T block = T(0);
  int64_t inBlock = 0;
  uint64_t blocks = 0;
};

template <typename T> TGC_HD inline T relu(T x) {
  return x > T(0) || isNaN(x) ? x : T(0);
}
template <typename T> TGC_HD inline T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}
template <typename T> TGC_HD inline T silu(T x) { return x * sigmoid(x); }
template <typename T> TGC_HD inline T geluErf(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
template <typename T> TGC_HD inline T geluTanh(T x) {
  const T k = T(0.7978845608028654); // sqrt(2 / pi)
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}
template <typename T> TGC_HD inline T geluErfGrad(T x) {
  const T invSqrt2Pi = T(0.3989422804014327); // 1 / sqrt(2 pi)
  return T(0.5) * (T(1) + std::erf(x * T(0.70710678118654752440))) +
         x * invSqrt2Pi * std::exp(T(-0.5) * x * x);
}
template <typename T> TGC_HD inline T geluTanhGrad(T x) {
  // Far from 0 the tanh has saturated (and x^2 would overflow): the
  // derivative is that of x or of 0.
  if (std::abs(x) > T(20))
    return x > 0 ? T(1) : T(0);
  const T k = T(0.7978845608028654); // sqrt(2 / pi)
  T inner = k * (x + T(0.044715) * x * x * x);
  T t = std::tanh(inner);
  return T(0.5) * (T(1) + t) +
         T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3 * 0.044715) * x * x);
}

/// Wrap-around integer arithmetic without undefined behaviour.
TGC_HD inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
TGC_HD inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
TGC_HD inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// Integer division toward zero; INT64_MIN / -1 wraps like the other ops.
/// (The interpreter reports a division by zero; a kernel gives 0.)
TGC_HD inline int64_t integerDivide(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return wrapSub(0, a);
  return a / b;
}

/// tg.quantize_dequantize: `x` rounded to the integer grid of `scale` and
/// `zero` (halves to even) clamped to [low, high] (NaN to the point 0, as
/// the conversion of a NaN to an integer), and back.
template <typename T>
TGC_HD inline T quantizeDequantize(T x, T scale, T zero, T low, T high) {
  T q = std::rint(x / scale) + zero;
  q = isNaN(q) ? T(0) : q < low ? low : q > high ? high : q;
  return (q - zero) * scale;
}

/// Its straight-through gradient: `grad` where the grid point lies in
/// [low, high] (not clamped), 0 elsewhere (and for NaN).
template <typename T>
TGC_HD inline T quantizeDequantizeGrad(T grad, T x, T scale, T zero, T low,
                                       T high) {
  T q = std::rint(x / scale) + zero;
  return q >= low && q <= high ? grad : T(0);
}

/// Float to integer: toward zero, saturating to [low, high], NaN to 0.
TGC_HD inline int64_t floatToInt(double value, int64_t low, int64_t high) {
  if (value != value)
    return 0;
  double truncated = std::trunc(value);
  if (truncated <= static_cast<double>(low))
    return low;
  if (truncated >= static_cast<double>(high))
    return high;
  return static_cast<int64_t>(truncated);
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_SCALAROPS_H
