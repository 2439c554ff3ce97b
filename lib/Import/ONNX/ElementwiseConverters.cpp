//===- ElementwiseConverters.cpp - functions tg composes ------------------===//
//
// Activations and elementary functions tg has no op for, each composed of
// the ops it has, so that they are differentiable and fuse like any other:
// Elu, Selu, Celu, ThresholdedRelu, Softsign, PRelu, Shrink, Sign, the
// hyperbolic and inverse trigonometric functions, the roundings (Floor,
// Ceil, Round), Mod and Pow of integers; and the window functions, which
// are constants.
//
// A branch a select does not take still gets a zero gradient through its
// ops; where one would divide by zero there (0 * inf is NaN), its operand is
// replaced by a harmless value first.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

/// atan(x) as Cephes computes it (atanf for f32, atan for f64, both
/// within 2 ulp): the magnitude reduced to [0, tan(pi/8)] (f32) or
/// [0, 0.66] (f64) by atan(a) = pi/2 - atan(1/a) and
/// pi/4 + atan((a - 1) / (a + 1)), then an odd polynomial (f32) or
/// rational function (f64) of the reduced value.
Value Composer::atan(Value x) {
  bool isF64 = type.getElementType().isF64();
  Value a = abs(x), one = c(1.0);
  Value big = less(c(2.414213562373095), a);
  Value mid = less(c(isF64 ? 0.66 : 0.4142135623730950), a);
  // The reciprocal branch divides by a, and the other by a + 1, only
  // where they are taken (x = 0 and x = inf elsewhere).
  Value r = select(
      big, neg(div(one, select(big, a, one))),
      select(mid,
             div(sub(select(mid, a, one), one), add(select(mid, a, one), one)),
             a));
  Value base = select(big, c(M_PI_2), select(mid, c(M_PI_4), c(0.0)));
  Value z = mul(r, r);
  auto horner = [&](ArrayRef<double> coefficients, bool monic) {
    Value sum =
        monic ? add(z, c(coefficients.front())) : c(coefficients.front());
    for (double coefficient : coefficients.drop_front())
      sum = add(mul(sum, z), c(coefficient));
    return sum;
  };
  Value m;
  if (isF64) {
    Value p = horner({-8.750608600031904122785E-1, -1.615753718733365076637E1,
                      -7.500855792314704667340E1, -1.228866684490136173410E2,
                      -6.485021904942025371773E1},
                     false);
    Value q = horner({2.485846490142306297962E1, 1.650270098316988542046E2,
                      4.328810604912902668951E2, 4.853903996359136964868E2,
                      1.945506571482613964425E2},
                     true);
    double moreBits = 6.123233995736765886130E-17;
    m = add(mul(r, div(mul(z, p), q)), r);
    m = add(m,
            select(big, c(moreBits), select(mid, c(0.5 * moreBits), c(0.0))));
  } else {
    Value p = horner({8.05374449538e-2, -1.38776856032E-1, 1.99777106478E-1,
                      -3.33329491539E-1},
                     false);
    m = add(mul(mul(p, z), r), r);
  }
  m = add(base, m);
  return select(less(x, c(0.0)), neg(m), m);
}

LogicalResult onnx_import::requireFloat(Importer &g, Value value) {
  if (isFloat(value))
    return success();
  return g.fail("element type " +
                llvm::Twine(llvm::isa<IntegerType>(
                                Importer::getType(value).getElementType())
                                ? "integer/bool"
                                : "other") +
                " is not supported by this op in tg");
}

Value onnx_import::convertSaturating(Importer &g, Value x, Type target,
                                     bool saturate) {
  // f4E2M1FN, with neither infinity nor NaN, always saturates (tg rounds
  // to it so).
  if (!saturate || !isa<Float8E4M3FNType, Float8E5M2Type, Float8E4M3FNUZType,
                        Float8E5M2FNUZType>(target))
    return g.convert(x, target);
  if (!isFloat(x))
    x = g.convert(x, g.builder.getF32Type());
  double largest =
      APFloat::getLargest(cast<FloatType>(target).getFloatSemantics())
          .convertToDouble();
  Composer e{g, Importer::getType(x)};
  return g.convert(e.clamp(x, -largest, largest), target);
}

FailureOr<int64_t> onnx_import::getStashType(Importer &g) {
  int64_t stash = g.getInt("stash_type", onnx::TensorProto::FLOAT);
  if (stash != onnx::TensorProto::FLOAT && stash != onnx::TensorProto::DOUBLE)
    return (void)g.fail("stash_type must be FLOAT (1) or DOUBLE (11)"),
           failure();
  return stash;
}

LogicalResult onnx_import::requireNumeric(Importer &g, Value value) {
  if (!isBool(value))
    return success();
  return g.fail("bool operands are not supported by this op in tg");
}

/// Input 0 (a float; any number when `numeric`) through `build`. With
/// `widen`, f16 and bf16 are computed in f32 and rounded once, as a
/// library's half-precision function is.
template <typename Build>
static LogicalResult composeUnary(Importer &g, Build build,
                                  bool numeric = false, bool widen = false) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(numeric ? requireNumeric(g, x) : requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  Type elementType = type.getElementType();
  bool wide = widen && elementType.getIntOrFloatBitWidth() < 32;
  if (wide) {
    type = type.clone(g.builder.getF32Type());
    x = g.convert(x, type.getElementType());
  }
  Composer e{g, type};
  FailureOr<Value> result = build(e, x);
  if (failed(result))
    return failure();
  g.setOutput(0, g.convert(*result, elementType));
  return success();
}

/// x * sigmoid(alpha * x): tg.silu for alpha 1.
static Value buildSwish(Composer &e, Value x, double alpha) {
  if (alpha == 1.0)
    return e.g.create<tg::SiluOp>(e.type, x);
  return e.mul(x, e.g.create<tg::SigmoidOp>(e.type, e.mul(e.c(alpha), x)));
}

// Swish-24.
LogicalResult onnx_import::convertSwish(Importer &g) {
  double alpha = g.getFloat("alpha", 1.0f);
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    return buildSwish(e, x, alpha);
  });
}

// SwiGLU-28: Swish(A) * B, A and B of one shape.
LogicalResult onnx_import::convertSwiGLU(Importer &g) {
  ASSIGN_OR_FAIL(a, g.requireInput(0));
  ASSIGN_OR_FAIL(b, g.requireInput(1));
  if (failed(requireFloat(g, a)))
    return failure();
  if (a.getType() != b.getType())
    return g.fail("A and B must have one type and shape (SwiGLU does not "
                  "broadcast)");
  Composer e{g, Importer::getType(a)};
  g.setOutput(0, e.mul(buildSwish(e, a, g.getFloat("alpha", 1.0f)), b));
  return success();
}

LogicalResult onnx_import::convertElu(Importer &g) {
  double alpha = g.getFloat("alpha", 1.0f);
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    return e.select(e.less(x, e.c(0.0)), e.expm1Times(x, alpha), x);
  });
}

LogicalResult onnx_import::convertSelu(Importer &g) {
  double alpha = g.getFloat("alpha", 1.67326319217681884765625f);
  double gamma = g.getFloat("gamma", 1.05070102214813232421875f);
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    return e.mul(e.c(gamma),
                 e.select(e.less(e.c(0.0), x), x, e.expm1Times(x, alpha)));
  });
}

LogicalResult onnx_import::convertCelu(Importer &g) {
  double alpha = g.getFloat("alpha", 1.0f);
  if (alpha == 0.0)
    return g.fail("alpha must not be 0");
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    Value zero = e.c(0.0);
    return e.add(buildBinary<tg::MaxOp>(g, x, zero),
                 buildBinary<tg::MinOp>(
                     g, zero, e.expm1Times(e.div(x, e.c(alpha)), alpha)));
  });
}

LogicalResult onnx_import::convertThresholdedRelu(Importer &g) {
  double alpha = g.getFloat("alpha", 1.0f);
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    return e.select(e.less(e.c(alpha), x), x, e.c(0.0));
  });
}

LogicalResult onnx_import::convertSoftsign(Importer &g) {
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    return e.div(x, e.add(e.c(1.0), e.abs(x)));
  });
}

LogicalResult onnx_import::convertPRelu(Importer &g) {
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    ASSIGN_OR_FAIL(slope, g.requireInput(1));
    RankedTensorType slopeType = Importer::getType(slope);
    if (slopeType.getElementType() != e.type.getElementType())
      return g.fail("slope has another element type than X");
    // Before opset 7 a slope of one value per channel (dimension 1) is
    // laid along it; since, slopes broadcast from the right.
    if (g.opset < 7 && slopeType.getRank() == 1 && e.type.getRank() >= 2 &&
        slopeType.getDimSize(0) == e.type.getDimSize(1)) {
      SmallVector<int64_t> channels(e.type.getRank() - 1, 1);
      channels.front() = slopeType.getDimSize(0);
      slope = g.reshape(slope, channels);
    }
    ASSIGN_OR_FAIL(shape, g.broadcastShapes({x, slope}));
    if (ArrayRef<int64_t>(shape) != e.type.getShape())
      return g.fail("slope does not broadcast to X's shape");
    return e.select(e.less(x, e.c(0.0)), e.mul(g.broadcastTo(slope, shape), x),
                    x);
  });
}

// Shrink-9: x + bias below -lambd, x - bias above lambd, 0 between.
LogicalResult onnx_import::convertShrink(Importer &g) {
  double lambd = g.getFloat("lambd", 0.5f), bias = g.getFloat("bias", 0.0f);
  return composeUnary(
      g,
      [&](Composer &e, Value x) -> FailureOr<Value> {
        Value below = e.less(x, e.c(-lambd)), above = e.less(e.c(lambd), x);
        return e.select(below, e.add(x, e.c(bias)),
                        e.select(above, e.sub(x, e.c(bias)), e.c(0.0)));
      },
      /*numeric=*/true);
}

// Sign, also of integers: x * 0 keeps a NaN (and is 0 otherwise).
LogicalResult onnx_import::convertSign(Importer &g) {
  return composeUnary(
      g,
      [&](Composer &e, Value x) -> FailureOr<Value> {
        Value zero = e.c(0.0);
        return e.select(e.less(zero, x), e.c(1.0),
                        e.select(e.less(x, zero), e.c(-1.0), e.mul(x, zero)));
      },
      /*numeric=*/true);
}

LogicalResult onnx_import::convertTan(Importer &g) {
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    return e.div(g.create<tg::SinOp>(e.type, x),
                 g.create<tg::CosOp>(e.type, x));
  });
}

template <bool Sinh> static LogicalResult convertSinhCosh(Importer &g) {
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    Value up = e.exp(x), down = e.exp(e.neg(x));
    return e.mul(e.c(0.5), Sinh ? e.sub(up, down) : e.add(up, down));
  });
}

LogicalResult onnx_import::convertSinh(Importer &g) {
  return convertSinhCosh<true>(g);
}

LogicalResult onnx_import::convertCosh(Importer &g) {
  return convertSinhCosh<false>(g);
}

// Odd: computed on |x| so that large negative x does not cancel.
LogicalResult onnx_import::convertAsinh(Importer &g) {
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    Value a = e.abs(x);
    Value magnitude = e.log(e.add(a, e.sqrt(e.add(e.mul(a, a), e.c(1.0)))));
    return e.select(e.less(x, e.c(0.0)), e.neg(magnitude), magnitude);
  });
}

LogicalResult onnx_import::convertAcosh(Importer &g) {
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    return e.log(e.add(x, e.sqrt(e.sub(e.mul(x, x), e.c(1.0)))));
  });
}

LogicalResult onnx_import::convertAtanh(Importer &g) {
  return composeUnary(g, [&](Composer &e, Value x) -> FailureOr<Value> {
    Value one = e.c(1.0);
    return e.mul(e.c(0.5), e.log(e.div(e.add(one, x), e.sub(one, x))));
  });
}

LogicalResult onnx_import::convertAtan(Importer &g) {
  return composeUnary(
      g, [&](Composer &e, Value x) -> FailureOr<Value> { return e.atan(x); },
      /*numeric=*/false, /*widen=*/true);
}

// asin(x) = atan(x / sqrt(1 - x^2)): +-pi/2 at +-1 (atan of infinity),
// NaN outside [-1, 1].
LogicalResult onnx_import::convertAsin(Importer &g) {
  return composeUnary(
      g,
      [&](Composer &e, Value x) -> FailureOr<Value> {
        return e.atan(e.div(x, e.sqrt(e.sub(e.c(1.0), e.mul(x, x)))));
      },
      /*numeric=*/false, /*widen=*/true);
}

// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))), accurate near 1 where
// pi/2 - asin(x) would cancel; pi at -1.
LogicalResult onnx_import::convertAcos(Importer &g) {
  return composeUnary(
      g,
      [&](Composer &e, Value x) -> FailureOr<Value> {
        Value one = e.c(1.0);
        return e.mul(e.c(2.0),
                     e.atan(e.sqrt(e.div(e.sub(one, x), e.add(one, x)))));
      },
      /*numeric=*/false, /*widen=*/true);
}

LogicalResult onnx_import::convertFloor(Importer &g) {
  return composeUnary(
      g, [&](Composer &e, Value x) -> FailureOr<Value> { return e.floor(x); });
}

LogicalResult onnx_import::convertCeil(Importer &g) {
  return composeUnary(
      g, [&](Composer &e, Value x) -> FailureOr<Value> { return e.ceil(x); });
}

// Halves to even, as ONNX's Round.
LogicalResult onnx_import::convertRound(Importer &g) {
  return composeUnary(
      g, [&](Composer &e, Value x) -> FailureOr<Value> { return e.round(x); });
}

/// Mod-10/13/28. Integers: the remainder of the truncating division, moved
/// by the divisor where its sign differs from the divisor's (fmod = 0,
/// Python's %) or kept (fmod = 1, C's). Floats: C's fmod, a - trunc(a / b)
/// * b, moved by |b| toward a's sign where the rounded quotient overshot;
/// with fmod = 0 (from Mod-28 on) then moved by b where its sign differs
/// from b's (a zero taking b's sign), numpy's mod. f32, f16 and bf16 compute in
/// f64, where that product and difference are exact: the result is exact while
/// |a / b| < 2^29; f64 carries the rounding of the product (an error of
/// about 2^-53 |a|).
LogicalResult onnx_import::convertMod(Importer &g) {
  ASSIGN_OR_FAIL(a, g.requireInput(0));
  ASSIGN_OR_FAIL(b, g.requireInput(1));
  if (failed(requireNumeric(g, a)))
    return failure();
  bool fmod = g.getBool("fmod", false);
  bool floats = isFloat(a);
  if (floats && !fmod && g.opset < 28)
    return g.fail("a float Mod must set fmod = 1 (before opset 28)");
  Type elementType = Importer::getType(a).getElementType();
  ASSIGN_OR_FAIL(operands, broadcastPair(g, a, b));
  Value lhs = operands.first, rhs = operands.second;
  if (floats) {
    lhs = g.convert(lhs, g.builder.getF64Type());
    rhs = g.convert(rhs, g.builder.getF64Type());
  }
  Composer e{g, Importer::getType(lhs)};
  Value quotient = e.div(lhs, rhs);
  if (floats)
    quotient = e.trunc(quotient);
  Value r = e.sub(lhs, e.mul(quotient, rhs));
  Value zero = e.c(0.0);
  auto moveBy = [&](Value r, Value reference, Value step) {
    Value wrongSign = compare(g, tg::CompareDirection::NE, e.less(r, zero),
                              e.less(reference, zero));
    Value nonzero = compare(g, tg::CompareDirection::NE, r, zero);
    return e.select(e.select(nonzero, wrongSign, nonzero), e.add(r, step), r);
  };
  if (floats) {
    // C's fmod: the sign of a.
    Value magnitude = e.abs(rhs);
    r = moveBy(r, lhs,
               e.select(e.less(lhs, zero), e.neg(magnitude), magnitude));
    // fmod(a, +-inf) is a finite a (a - 0 * inf is NaN).
    Value infinite = e.equal(e.abs(rhs), e.c(INFINITY));
    Value finite = e.less(e.abs(lhs), e.c(INFINITY));
    r = e.select(e.select(infinite, finite, infinite), lhs, r);
  }
  if (!fmod) {
    // Python's %: the sign of b; a zero remainder takes b's sign.
    r = moveBy(r, rhs, rhs);
    if (floats)
      r = e.select(e.equal(r, zero),
                   e.select(e.less(rhs, zero), e.c(-0.0), zero), r);
  }
  g.setOutput(0, g.convert(r, elementType));
  return success();
}

/// Pow: a float base raised to an exponent of any type (converted to the
/// base's), or an integer base (ONNX's result has the base's type), raised
/// in f64 and rounded to the nearest integer when the power is within a
/// few ulps of one (pow of exact integers is), else truncated as C's cast.
LogicalResult onnx_import::convertPow(Importer &g) {
  ASSIGN_OR_FAIL(base, g.requireInput(0));
  ASSIGN_OR_FAIL(legacyExponent, g.requireInput(1));
  if (failed(requireNumeric(g, base)) ||
      failed(requireNumeric(g, legacyExponent)))
    return failure();
  Type elementType = Importer::getType(base).getElementType();
  Type computeType = isFloat(base) ? elementType : g.builder.getF64Type();
  ASSIGN_OR_FAIL(exponent, alignLegacyOperand(g, base, legacyExponent));
  ASSIGN_OR_FAIL(shape, g.broadcastShapes({base, exponent}));
  Value lhs = g.broadcastTo(g.convert(base, computeType), shape);
  Value rhs = g.broadcastTo(g.convert(exponent, computeType), shape);
  Value power = buildBinary<tg::PowOp>(g, lhs, rhs);
  if (!isFloat(base)) {
    Composer e{g, Importer::getType(power)};
    Value nearest = e.floor(e.add(power, e.c(0.5)));
    Value close = e.less(e.abs(e.sub(power, nearest)),
                         e.mul(e.abs(nearest), e.c(0x1p-40)));
    power = e.select(close, nearest, power);
  }
  g.setOutput(0, g.convert(power, elementType));
  return success();
}

/// HannWindow, HammingWindow and BlackmanWindow (opset 17): the window of
/// `size` (known at import) as a constant, `a0 - a1 cos(2 pi n / N) +
/// a2 cos(4 pi n / N)` with N = size (periodic) or size - 1 (symmetric),
/// computed in double and rounded to `output_datatype`.
template <int Kind> static LogicalResult convertWindow(Importer &g) {
  ASSIGN_OR_FAIL(sizeValue, g.requireConstantScalar(0, "size"));
  int64_t size = toInt64Saturating(sizeValue);
  if (double(size) != sizeValue || size < 0 || size > (int64_t(1) << 24))
    return g.fail("size must be an integer in [0, 2^24]");
  bool periodic = g.getBool("periodic", true);
  Type elementType = getElementType(*g.builder.getContext(),
                                    int32_t(g.getInt("output_datatype", 1)));
  if (g.hadError())
    return failure();
  if (!elementType)
    return g.fail("output_datatype has no tg equivalent");
  double a0 = Kind == 0 ? 0.5 : Kind == 1 ? 25.0 / 46.0 : 0.42;
  double a1 = Kind == 0 ? 0.5 : Kind == 1 ? 1 - 25.0 / 46.0 : 0.5;
  double a2 = Kind == 2 ? 0.08 : 0.0;
  double period = double(periodic ? size : size - 1);
  SmallVector<double> values;
  for (int64_t n = 0; n < size; ++n) {
    double angle = 2 * M_PI * double(n) / period;
    values.push_back(a0 - a1 * std::cos(angle) + a2 * std::cos(2 * angle));
  }
  g.setOutput(0,
              g.constant(RankedTensorType::get({size}, elementType), values));
  return success();
}

LogicalResult onnx_import::convertHannWindow(Importer &g) {
  return convertWindow<0>(g);
}

LogicalResult onnx_import::convertHammingWindow(Importer &g) {
  return convertWindow<1>(g);
}

LogicalResult onnx_import::convertBlackmanWindow(Importer &g) {
  return convertWindow<2>(g);
}
