//===- ElementwiseKernels.cpp - kernels of elementwise ops ----------------===//
//
// Float kernels compute in the tensor's storage type (f32, or double in f64
// mode); normalizeTensor then rounds each result to its element type.
// Integer kernels compute in 64 bits and are wrapped to the element width.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/runtime/ScalarOps.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::detail;

namespace {

/// Wrap-around integer arithmetic without undefined behaviour.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// A kernel of a unary float op: `fn(x)` per element.
template <typename Fn> Kernel unaryFloat(Fn fn) {
  return [fn](Operation *op, ArrayRef<const Tensor *> operands,
              SmallVectorImpl<Tensor> &results, const KernelContext &context) {
    const Tensor &x = *operands[0];
    Tensor result = context.makeResult(op->getResult(0).getType());
    dispatchFloat(x, [&](auto tag) {
      using T = decltype(tag);
      const std::vector<T> &in = x.data<T>();
      std::vector<T> &out = result.data<T>();
      for (size_t i = 0, e = in.size(); i < e; ++i)
        out[i] = fn(in[i]);
    });
    results.push_back(std::move(result));
    return success();
  };
}

/// A kernel of a binary float op: `fn(a, b)` per element.
template <typename Fn> Kernel binaryFloat(Fn fn) {
  return [fn](Operation *op, ArrayRef<const Tensor *> operands,
              SmallVectorImpl<Tensor> &results, const KernelContext &context) {
    const Tensor &a = *operands[0], &b = *operands[1];
    Tensor result = context.makeResult(op->getResult(0).getType());
    dispatchFloat(a, [&](auto tag) {
      using T = decltype(tag);
      const std::vector<T> &x = a.data<T>(), &y = b.data<T>();
      std::vector<T> &out = result.data<T>();
      for (size_t i = 0, e = x.size(); i < e; ++i)
        out[i] = fn(x[i], y[i]);
    });
    results.push_back(std::move(result));
    return success();
  };
}

/// A kernel of an op on floats and integers: `floatFn(a[, b])` per float
/// element, `intFn(a[, b])` per integer element (which may fail: then it
/// reports the error and the kernel fails).
template <unsigned Arity, typename FloatFn, typename IntFn>
Kernel numeric(FloatFn floatFn, IntFn intFn) {
  return [floatFn, intFn](Operation *op, ArrayRef<const Tensor *> operands,
                          SmallVectorImpl<Tensor> &results,
                          const KernelContext &context) -> LogicalResult {
    const Tensor &a = *operands[0];
    const Tensor &b = *operands[Arity - 1];
    Tensor result = context.makeResult(op->getResult(0).getType());
    if (a.isIntStorage()) {
      const std::vector<int64_t> &x = a.ints(), &y = b.ints();
      std::vector<int64_t> &out = result.ints();
      for (size_t i = 0, e = x.size(); i < e; ++i) {
        FailureOr<int64_t> value;
        if constexpr (Arity == 1)
          value = intFn(op, x[i]);
        else
          value = intFn(op, x[i], y[i]);
        if (failed(value))
          return failure();
        out[i] = *value;
      }
    } else {
      dispatchFloat(a, [&](auto tag) {
        using T = decltype(tag);
        const std::vector<T> &x = a.data<T>(), &y = b.data<T>();
        std::vector<T> &out = result.data<T>();
        for (size_t i = 0, e = x.size(); i < e; ++i) {
          if constexpr (Arity == 1)
            out[i] = floatFn(x[i]);
          else
            out[i] = floatFn(x[i], y[i]);
        }
      });
    }
    results.push_back(std::move(result));
    return success();
  };
}

template <typename Fn>
Kernel binaryNumeric(Fn floatFn, int64_t (*intFn)(int64_t, int64_t)) {
  return numeric<2>(
      floatFn,
      [intFn](Operation *, int64_t a, int64_t b) -> FailureOr<int64_t> {
        return intFn(a, b);
      });
}

template <typename Fn>
Kernel unaryNumeric(Fn floatFn, int64_t (*intFn)(int64_t)) {
  return numeric<1>(floatFn,
                    [intFn](Operation *, int64_t a) -> FailureOr<int64_t> {
                      return intFn(a);
                    });
}

/// Whether `op`'s result is ui64, whose values are held as their bits in
/// int64: its order and division are unsigned.
bool isBits64(Operation *op) {
  return getElementTypeOrSelf(op->getResult(0).getType()).isUnsignedInteger(64);
}

/// Integer division rounds toward zero; dividing by zero is an error.
FailureOr<int64_t> divideInts(Operation *op, int64_t a, int64_t b) {
  if (b == 0) {
    op->emitError("integer division by zero");
    return failure();
  }
  if (isBits64(op))
    return static_cast<int64_t>(uint64_t(a) / uint64_t(b));
  if (b == -1)
    return wrapSub(0, a); // INT64_MIN / -1 wraps like the other ops.
  return a / b;
}

using rt::geluErf;
using rt::geluTanh;
using rt::sigmoid;

/// Float comparisons are ordered, except `ne`, which is true on NaN.
template <typename T> bool compare(tg::CompareDirection direction, T a, T b) {
  switch (direction) {
  case tg::CompareDirection::EQ:
    return a == b;
  case tg::CompareDirection::NE:
    return a != b;
  case tg::CompareDirection::LT:
    return a < b;
  case tg::CompareDirection::LE:
    return a <= b;
  case tg::CompareDirection::GT:
    return a > b;
  case tg::CompareDirection::GE:
    return a >= b;
  }
  return false;
}

LogicalResult compareKernel(Operation *op, ArrayRef<const Tensor *> operands,
                            SmallVectorImpl<Tensor> &results,
                            const KernelContext &context) {
  auto direction = cast<tg::CompareOp>(op).getDirection();
  const Tensor &a = *operands[0], &b = *operands[1];
  Tensor result = context.makeResult(op->getResult(0).getType());
  std::vector<int64_t> &out = result.ints();
  auto run = [&](const auto &x, const auto &y) {
    for (size_t i = 0, e = x.size(); i < e; ++i)
      out[i] = compare(direction, x[i], y[i]);
  };
  if (a.isIntStorage() && a.getElementType().isUnsignedInteger(64))
    // ui64 holds its values' bits: their order is unsigned.
    for (size_t i = 0, e = a.ints().size(); i < e; ++i)
      out[i] = compare(direction, uint64_t(a.ints()[i]), uint64_t(b.ints()[i]));
  else if (a.isIntStorage())
    run(a.ints(), b.ints());
  else if (a.isDoubleStorage())
    run(a.doubles(), b.doubles());
  else
    run(a.floats(), b.floats());
  results.push_back(std::move(result));
  return success();
}

LogicalResult selectKernel(Operation *op, ArrayRef<const Tensor *> operands,
                           SmallVectorImpl<Tensor> &results,
                           const KernelContext &context) {
  const std::vector<int64_t> &pred = operands[0]->ints();
  Tensor result = *operands[1];
  visitData(*operands[2], result, [&](const auto &onFalse, auto &out) {
    for (size_t i = 0, e = out.size(); i < e; ++i)
      if (!pred[i])
        out[i] = onFalse[i];
  });
  results.push_back(std::move(result));
  return success();
}

/// tg.quantize_dequantize, elementwise over its three operands with
/// rt::quantizeDequantize (the generated kernels' formula).
LogicalResult quantizeDequantizeKernel(Operation *op,
                                       ArrayRef<const Tensor *> operands,
                                       SmallVectorImpl<Tensor> &results,
                                       const KernelContext &context) {
  auto quant = cast<tg::QuantizeDequantizeOp>(op);
  const Tensor &x = *operands[0], &s = *operands[1], &z = *operands[2];
  Tensor result = context.makeResult(op->getResult(0).getType());
  dispatchFloat(x, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> &xs = x.data<T>(), &ss = s.data<T>(),
                         &zs = z.data<T>();
    std::vector<T> &out = result.data<T>();
    T low = T(int64_t(quant.getLow())), high = T(int64_t(quant.getHigh()));
    for (size_t i = 0, e = xs.size(); i < e; ++i)
      out[i] = rt::quantizeDequantize(xs[i], ss[i], zs[i], low, high);
  });
  results.push_back(std::move(result));
  return success();
}

/// Float to integer: toward zero, saturating, NaN to 0.
int64_t floatToInt(double value, Type type) {
  if (std::isnan(value))
    return 0;
  double truncated = std::trunc(value);
  if (type.isUnsignedInteger(64)) // its bits, 0 to 2^64 - 1
    return truncated <= 0.0 ? 0
           : truncated >= 0x1p64
               ? -1
               : static_cast<int64_t>(static_cast<uint64_t>(truncated));
  int64_t low = getIntMin(type), high = getIntMax(type);
  if (truncated <= static_cast<double>(low))
    return low;
  if (truncated >= static_cast<double>(high))
    return high;
  return static_cast<int64_t>(truncated);
}

LogicalResult convertKernel(Operation *op, ArrayRef<const Tensor *> operands,
                            SmallVectorImpl<Tensor> &results,
                            const KernelContext &context) {
  const Tensor &x = *operands[0];
  Tensor result = context.makeResult(op->getResult(0).getType());
  Type target = result.getElementType();
  int64_t count = x.getNumElements();
  if (target.isInteger(1)) {
    for (int64_t i = 0; i < count; ++i)
      result.ints()[i] =
          x.isIntStorage() ? x.ints()[i] != 0 : x.getAsDouble(i) != 0.0;
  } else if (result.isIntStorage()) {
    for (int64_t i = 0; i < count; ++i)
      result.ints()[i] =
          x.isIntStorage() ? x.ints()[i] : floatToInt(x.getAsDouble(i), target);
  } else if (result.isFloatStorage() && !x.isFloatStorage() &&
             !target.isF32() && context.options.precisionEmulation) {
    // An f64 or integer source rounds once, straight to the target format
    // (through f32 it would round twice).
    const llvm::fltSemantics &semantics =
        cast<FloatType>(target).getFloatSemantics();
    for (int64_t i = 0; i < count; ++i) {
      APFloat value(semantics);
      bool losesInfo = false;
      if (x.isIntStorage()) {
        bool isSigned = !x.getElementType().isUnsignedInteger(64);
        value.convertFromAPInt(APInt(64, x.ints()[i], isSigned), isSigned,
                               APFloat::rmNearestTiesToEven);
      } else {
        value = APFloat(x.doubles()[i]);
        value.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
      }
      result.floats()[i] = value.convertToFloat();
    }
  } else if (x.isIntStorage() && result.isFloatStorage()) {
    bool bits64 = x.getElementType().isUnsignedInteger(64);
    for (int64_t i = 0; i < count; ++i)
      result.floats()[i] =
          bits64 ? static_cast<float>(static_cast<uint64_t>(x.ints()[i]))
                 : static_cast<float>(x.ints()[i]);
  } else {
    for (int64_t i = 0; i < count; ++i)
      result.setAsDouble(i, x.getAsDouble(i));
  }
  results.push_back(std::move(result));
  return success();
}

LogicalResult bitwiseKernel(Operation *op, ArrayRef<const Tensor *> operands,
                            SmallVectorImpl<Tensor> &results,
                            const KernelContext &context) {
  tg::BitwiseKind kind = cast<tg::BitwiseOp>(op).getKind();
  const std::vector<int64_t> &a = operands[0]->ints(), &b = operands[1]->ints();
  Tensor result = context.makeResult(op->getResult(0).getType());
  std::vector<int64_t> &out = result.ints();
  // On the sign- or zero-extended values: the low bits are the element
  // type's, and normalizeTensor keeps them.
  for (size_t i = 0, e = out.size(); i < e; ++i)
    out[i] = kind == tg::BitwiseKind::And  ? a[i] & b[i]
             : kind == tg::BitwiseKind::Or ? a[i] | b[i]
                                           : a[i] ^ b[i];
  results.push_back(std::move(result));
  return success();
}

/// The bits of element `i` of `tensor` (of `width` bits, zero-extended).
uint64_t getElementBits(const Tensor &tensor, int64_t i, unsigned width) {
  Type type = tensor.getElementType();
  if (tensor.isIntStorage())
    return width >= 64
               ? uint64_t(tensor.ints()[i])
               : uint64_t(tensor.ints()[i]) & ((uint64_t(1) << width) - 1);
  // A float held as an f32 or f64 of the same value: exact in its format.
  APFloat value = tensor.isDoubleStorage() ? APFloat(tensor.doubles()[i])
                                           : APFloat(tensor.floats()[i]);
  bool losesInfo = false;
  value.convert(cast<FloatType>(type).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &losesInfo);
  return value.bitcastToAPInt().getZExtValue();
}

LogicalResult bitcastKernel(Operation *op, ArrayRef<const Tensor *> operands,
                            SmallVectorImpl<Tensor> &results,
                            const KernelContext &context) {
  const Tensor &x = *operands[0];
  Tensor result = context.makeResult(op->getResult(0).getType());
  Type target = result.getElementType();
  unsigned width = tg::getBitcastWidth(target);
  for (int64_t i = 0, e = x.getNumElements(); i < e; ++i) {
    uint64_t bits = getElementBits(x, i, width);
    if (target.isInteger(1)) {
      result.ints()[i] = bits != 0;
    } else if (isa<IntegerType>(target)) {
      // Sign-extended for the signed types, as integers are held.
      result.ints()[i] = target.isUnsignedInteger() || width >= 64
                             ? int64_t(bits)
                             : int64_t(bits << (64 - width)) >> (64 - width);
    } else {
      APFloat value(cast<FloatType>(target).getFloatSemantics(),
                    APInt(width, bits));
      result.setAsDouble(i, value.convertToDouble());
    }
  }
  results.push_back(std::move(result));
  return success();
}

} // namespace

void tgc::registerElementwiseKernels(KernelRegistry &registry) {
  auto add = [](auto a, auto b) { return a + b; };
  auto sub = [](auto a, auto b) { return a - b; };
  auto mul = [](auto a, auto b) { return a * b; };
  auto max = [](auto a, auto b) { return propagatingMax(a, b); };
  auto min = [](auto a, auto b) { return propagatingMin(a, b); };
  registry.add(tg::AddOp::getOperationName(), binaryNumeric(add, wrapAdd));
  registry.add(tg::SubOp::getOperationName(), binaryNumeric(sub, wrapSub));
  registry.add(tg::MulOp::getOperationName(), binaryNumeric(mul, wrapMul));
  // ui64's order is unsigned.
  registry.add(tg::MaxOp::getOperationName(),
               numeric<2>(max, [](Operation *op, int64_t a, int64_t b) {
                 return FailureOr<int64_t>(
                     isBits64(op) ? (uint64_t(a) < uint64_t(b) ? b : a)
                                  : std::max(a, b));
               }));
  registry.add(tg::MinOp::getOperationName(),
               numeric<2>(min, [](Operation *op, int64_t a, int64_t b) {
                 return FailureOr<int64_t>(
                     isBits64(op) ? (uint64_t(b) < uint64_t(a) ? b : a)
                                  : std::min(a, b));
               }));
  registry.add(tg::DivOp::getOperationName(),
               numeric<2>([](auto a, auto b) { return a / b; }, divideInts));
  registry.add(tg::PowOp::getOperationName(),
               binaryFloat([](auto a, auto b) { return std::pow(a, b); }));
  registry.add(tg::NegOp::getOperationName(),
               unaryNumeric([](auto a) { return -a; },
                            [](int64_t a) { return wrapSub(0, a); }));
  registry.add(tg::AbsOp::getOperationName(),
               numeric<1>([](auto a) { return std::abs(a); },
                          [](Operation *op, int64_t a) -> FailureOr<int64_t> {
                            // ui64's values from 2^63 are held as negative
                            // bits.
                            return a < 0 && !isBits64(op) ? wrapSub(0, a) : a;
                          }));

  registry.add(tg::ExpOp::getOperationName(),
               unaryFloat([](auto x) { return std::exp(x); }));
  registry.add(tg::LogOp::getOperationName(),
               unaryFloat([](auto x) { return std::log(x); }));
  registry.add(tg::SqrtOp::getOperationName(),
               unaryFloat([](auto x) { return std::sqrt(x); }));
  registry.add(tg::RsqrtOp::getOperationName(), unaryFloat([](auto x) {
                 return decltype(x)(1) / std::sqrt(x);
               }));
  registry.add(tg::TanhOp::getOperationName(),
               unaryFloat([](auto x) { return std::tanh(x); }));
  registry.add(tg::ErfOp::getOperationName(),
               unaryFloat([](auto x) { return std::erf(x); }));
  registry.add(tg::SinOp::getOperationName(),
               unaryFloat([](auto x) { return std::sin(x); }));
  registry.add(tg::CosOp::getOperationName(),
               unaryFloat([](auto x) { return std::cos(x); }));
  registry.add(tg::SigmoidOp::getOperationName(),
               unaryFloat([](auto x) { return sigmoid(x); }));
  registry.add(tg::ReluOp::getOperationName(), unaryFloat([](auto x) {
                 return x > 0 || std::isnan(x) ? x : decltype(x)(0);
               }));
  registry.add(tg::SiluOp::getOperationName(),
               unaryFloat([](auto x) { return x * sigmoid(x); }));
  registry.add(
      tg::GeluOp::getOperationName(),
      [](Operation *op, ArrayRef<const Tensor *> operands,
         SmallVectorImpl<Tensor> &results, const KernelContext &context) {
        bool tanhForm = cast<tg::GeluOp>(op).getApproximation() ==
                        tg::GeluApproximation::Tanh;
        Kernel kernel = tanhForm
                            ? unaryFloat([](auto x) { return geluTanh(x); })
                            : unaryFloat([](auto x) { return geluErf(x); });
        return kernel(op, operands, results, context);
      });
  registry.add(tg::QuantizeDequantizeOp::getOperationName(),
               quantizeDequantizeKernel);
  registry.add(tg::CompareOp::getOperationName(), compareKernel);
  registry.add(tg::SelectOp::getOperationName(), selectKernel);
  registry.add(tg::ConvertOp::getOperationName(), convertKernel);
  registry.add(tg::BitwiseOp::getOperationName(), bitwiseKernel);
  registry.add(tg::BitwiseNotOp::getOperationName(),
               [](Operation *op, ArrayRef<const Tensor *> operands,
                  SmallVectorImpl<Tensor> &results,
                  const KernelContext &context) {
                 Tensor result = *operands[0];
                 for (int64_t &value : result.ints())
                   value = ~value;
                 results.push_back(std::move(result));
                 return success();
               });
  registry.add(tg::BitcastOp::getOperationName(), bitcastKernel);
}
