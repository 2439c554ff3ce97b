//===- OpConverters.cpp - one converter per ONNX op type ------------------===//
//
// Each converter reads the current node through GraphImporter and defines its
// outputs with tg ops. Broadcasting becomes broadcast_in_dim; operands that
// ONNX passes as tensors but tg needs as attributes (shapes, axes, starts)
// must be computable at import, which the folding builder guarantees for
// shape sub-graphs.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"
#include "InitializerRoles.h"
#include "ParameterProvenance.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy, bool FloatOnly = true>
static LogicalResult convertUnary(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(FloatOnly ? requireFloat(g, x) : requireNumeric(g, x)))
    return failure();
  g.setOutput(0, g.create<OpTy>(x.getType(), x));
  return success();
}

/// Both operands broadcast to their common shape (and type checked).
FailureOr<std::pair<Value, Value>>
onnx_import::broadcastPair(Importer &g, Value lhs, Value rhs) {
  if (Importer::getType(lhs).getElementType() !=
      Importer::getType(rhs).getElementType()) {
    g.emitNodeError() << "operands have different element types: "
                      << lhs.getType() << " and " << rhs.getType();
    return failure();
  }
  ASSIGN_OR_FAIL(shape, g.broadcastShapes({lhs, rhs}));
  return std::make_pair(g.broadcastTo(lhs, shape), g.broadcastTo(rhs, shape));
}

/// The right operand of a binary op before opset 7 (Add-6, Pow-1, And-1,
/// Equal-1...), which broadcast only with `broadcast = 1`, by placing B's
/// dimensions at `axis` of A's (by default at its end, suffix matching):
/// B reshaped to A's rank with ones around it, so that the numpy rule then
/// gives those semantics. Without `broadcast`, the shapes must be equal.
FailureOr<Value> onnx_import::alignLegacyOperand(Importer &g, Value lhs,
                                                 Value rhs) {
  if (g.opset >= 7)
    return rhs;
  ArrayRef<int64_t> lhsShape = Importer::getType(lhs).getShape();
  ArrayRef<int64_t> rhsShape = Importer::getType(rhs).getShape();
  bool broadcast = g.getBool("broadcast", false);
  std::optional<int64_t> axis = g.getOptionalInt("axis");
  if (g.hadError())
    return failure();
  if (!broadcast) {
    if (lhsShape != rhsShape) {
      g.emitNodeError() << "before opset 7, operands of different shapes ("
                        << lhs.getType() << " and " << rhs.getType()
                        << ") need the attribute broadcast = 1";
      return failure();
    }
    return rhs;
  }
  int64_t lhsRank = lhsShape.size(), rhsRank = rhsShape.size();
  int64_t start = lhsRank - rhsRank;
  if (axis) {
    ASSIGN_OR_FAIL(normalized,
                   g.normalizeAxis(*axis, std::max<int64_t>(lhsRank, 1)));
    start = normalized;
  }
  if (rhsRank > lhsRank || start < 0 || start + rhsRank > lhsRank) {
    g.emitNodeError() << "the shape of B " << rhs.getType()
                      << " does not fit in A " << lhs.getType() << " at axis "
                      << start << " (legacy broadcast)";
    return failure();
  }
  SmallVector<int64_t> aligned(start, 1);
  llvm::append_range(aligned, rhsShape);
  aligned.append(lhsRank - start - rhsRank, 1);
  for (auto [a, b] : llvm::zip(lhsShape, aligned))
    if (b != a && b != 1) {
      g.emitNodeError() << "the shape of B " << rhs.getType()
                        << " does not match A " << lhs.getType() << " at axis "
                        << start << " (legacy broadcast)";
      return failure();
    }
  return g.reshape(rhs, aligned);
}

template <typename OpTy> static LogicalResult convertBinary(Importer &g) {
  ASSIGN_OR_FAIL(lhs, g.requireInput(0));
  ASSIGN_OR_FAIL(legacyRhs, g.requireInput(1));
  ASSIGN_OR_FAIL(rhs, alignLegacyOperand(g, lhs, legacyRhs));
  if (failed(requireNumeric(g, lhs)))
    return failure();
  ASSIGN_OR_FAIL(operands, broadcastPair(g, lhs, rhs));
  g.setOutput(0, buildBinary<OpTy>(g, operands.first, operands.second));
  return success();
}

/// Max, Min, Sum, Mean: a left fold over their inputs.
template <typename OpTy> static LogicalResult convertVariadic(Importer &g) {
  ASSIGN_OR_FAIL(result, g.requireInput(0));
  if (failed(requireNumeric(g, result)))
    return failure();
  for (unsigned i = 1; i < g.getNumInputs(); ++i) {
    ASSIGN_OR_FAIL(next, g.requireInput(i));
    ASSIGN_OR_FAIL(operands, broadcastPair(g, result, next));
    result = buildBinary<OpTy>(g, operands.first, operands.second);
  }
  g.setOutput(0, result);
  return success();
}

static LogicalResult convertMean(Importer &g) {
  if (failed(convertVariadic<tg::AddOp>(g)))
    return failure();
  Value sum = g.lookup(g.getNode().output(0));
  if (failed(requireFloat(g, sum)))
    return failure();
  Value count = g.splat(Importer::getType(sum), g.getNumInputs());
  g.setOutput(0, buildBinary<tg::DivOp>(g, sum, count));
  return success();
}

static LogicalResult convertReciprocal(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  g.setOutput(0,
              buildBinary<tg::DivOp>(g, g.splat(Importer::getType(x), 1.0), x));
  return success();
}

Value onnx_import::compare(Importer &g, tg::CompareDirection direction,
                           Value lhs, Value rhs) {
  // tg compares numbers: booleans compare as i32.
  if (isBool(lhs)) {
    lhs = g.convert(lhs, g.builder.getI32Type());
    rhs = g.convert(rhs, g.builder.getI32Type());
  }
  RankedTensorType type = Importer::getType(lhs);
  return g.create<tg::CompareOp>(type.clone(g.builder.getI1Type()), direction,
                                 lhs, rhs);
}

template <tg::CompareDirection Direction>
static LogicalResult convertCompare(Importer &g) {
  ASSIGN_OR_FAIL(lhs, g.requireInput(0));
  ASSIGN_OR_FAIL(legacyRhs, g.requireInput(1));
  ASSIGN_OR_FAIL(rhs, alignLegacyOperand(g, lhs, legacyRhs));
  ASSIGN_OR_FAIL(operands, broadcastPair(g, lhs, rhs));
  g.setOutput(0, compare(g, Direction, operands.first, operands.second));
  return success();
}

Value onnx_import::wrapNegativeIndices(Importer &g, Value indices,
                                       int64_t size) {
  RankedTensorType type = Importer::getType(indices);
  Value wrapped = buildBinary<tg::AddOp>(g, indices, g.splat(type, size));
  return select(g,
                compare(g, tg::CompareDirection::LT, indices, g.splat(type, 0)),
                wrapped, indices);
}

static LogicalResult convertNot(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (!isBool(x))
    return g.fail("Not expects a bool tensor");
  RankedTensorType type = Importer::getType(x);
  g.setOutput(0, select(g, x, g.splat(type, 0), g.splat(type, 1)));
  return success();
}

/// And, Or, Xor on booleans.
template <int Kind> static LogicalResult convertLogical(Importer &g) {
  ASSIGN_OR_FAIL(lhs, g.requireInput(0));
  ASSIGN_OR_FAIL(legacyRhs, g.requireInput(1));
  ASSIGN_OR_FAIL(rhs, alignLegacyOperand(g, lhs, legacyRhs));
  if (!isBool(lhs))
    return g.fail("expects bool tensors");
  ASSIGN_OR_FAIL(operands, broadcastPair(g, lhs, rhs));
  auto [a, b] = operands;
  RankedTensorType type = Importer::getType(a);
  Value result = Kind == 0   ? select(g, a, b, g.splat(type, 0))
                 : Kind == 1 ? select(g, a, g.splat(type, 1), b)
                             : compare(g, tg::CompareDirection::NE, a, b);
  g.setOutput(0, result);
  return success();
}

/// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18): integers of one type,
/// broadcast.
template <tg::BitwiseKind Kind>
static LogicalResult convertBitwise(Importer &g) {
  ASSIGN_OR_FAIL(lhs, g.requireInput(0));
  ASSIGN_OR_FAIL(rhs, g.requireInput(1));
  Type elementType = Importer::getType(lhs).getElementType();
  if (!isa<IntegerType>(elementType) || elementType.isInteger(1) ||
      Importer::getType(rhs).getElementType() != elementType)
    return g.fail("A and B must be integers of one type");
  ASSIGN_OR_FAIL(operands, broadcastPair(g, lhs, rhs));
  auto [a, b] = operands;
  g.setOutput(0, g.create<tg::BitwiseOp>(Importer::getType(a), Kind, a, b));
  return success();
}

// BitwiseNot-18.
static LogicalResult convertBitwiseNot(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  Type elementType = Importer::getType(x).getElementType();
  if (!isa<IntegerType>(elementType) || elementType.isInteger(1))
    return g.fail("X must be an integer tensor");
  g.setOutput(0, g.create<tg::BitwiseNotOp>(Importer::getType(x), x));
  return success();
}

/// The element type attribute `to` names (Cast, BitCast), or a located
/// error `what` (the operation, "casting", ...) cannot target it.
static FailureOr<Type> getTargetType(Importer &g, StringRef what) {
  ASSIGN_OR_FAIL(to, g.requireInt("to"));
  Type target = getElementType(*g.builder.getContext(), to);
  if (!target)
    return (void)g.fail(what + " to " + getDataTypeName(to) +
                        " is not supported: tg has no such element type"),
           failure();
  return target;
}

// BitCast-26: each element's bits as type `to` of the same size.
static LogicalResult convertBitCast(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(target, getTargetType(g, "BitCast"));
  int32_t to = int32_t(g.getInt("to", 0));
  RankedTensorType type = Importer::getType(x);
  if (tg::getBitcastWidth(type.getElementType()) != tg::getBitcastWidth(target))
    return g.fail("BitCast to " + getDataTypeName(to) +
                  " changes the element size (" +
                  llvm::Twine(tg::getBitcastWidth(type.getElementType())) +
                  " to " + llvm::Twine(tg::getBitcastWidth(target)) +
                  " bits); the sizes must be equal");
  g.setOutput(0, g.create<tg::BitcastOp>(type.clone(target), x));
  return success();
}

/// `fill`, or -inf where it is a scalar constant of the lowest float (the
/// dynamo exporter's fill of a boolean attention mask: a query whose keys
/// are all masked then averages every value, where PyTorch's masked
/// softmax, as the decomposition's NaN guard given -inf, gives zeros).
static Value maskWithInfinity(Importer &g, Value fill) {
  const Tensor *value = g.getConstant(fill);
  auto type = dyn_cast<FloatType>(Importer::getType(fill).getElementType());
  if (!value || !type || value->getNumElements() != 1 ||
      value->getAsDouble(0) !=
          APFloat::getLargest(type.getFloatSemantics(), /*Negative=*/true)
              .convertToDouble())
    return fill;
  ExportDeviation followed{
      "attention-mask-fill", getModuleScope(g.getNode()).value_or(""),
      "scaled_dot_product_attention's boolean mask, which the exporter fills "
      "with the lowest float (a query with every key masked averages the "
      "values): filled with -inf as in PyTorch, whose zeros the softmax's "
      "NaN guard then gives"};
  followed.recovered = true;
  g.followedFx.push_back({g.getLoc(), std::move(followed)});
  return g.splat(Importer::getType(fill), -INFINITY);
}

static LogicalResult convertWhere(Importer &g) {
  ASSIGN_OR_FAIL(cond, g.requireInput(0));
  ASSIGN_OR_FAIL(x, g.requireInput(1));
  ASSIGN_OR_FAIL(y, g.requireInput(2));
  if (!isBool(cond))
    return g.fail("the condition must be a bool tensor");
  if (Importer::getType(x).getElementType() !=
      Importer::getType(y).getElementType())
    return g.fail("the two branches have different element types");
  if (g.attentionMaskFills.contains(&g.getNode())) {
    x = maskWithInfinity(g, x);
    y = maskWithInfinity(g, y);
  }
  ASSIGN_OR_FAIL(shape, g.broadcastShapes({cond, x, y}));
  g.setOutput(0, select(g, g.broadcastTo(cond, shape), g.broadcastTo(x, shape),
                        g.broadcastTo(y, shape)));
  return success();
}

/// Cast to float8e8m0 (opset 24), as ONNX's reference computes it on the
/// f32 bits (the sign ignored): the exponent, one more when `round_mode`
/// rounds up ("up": any mantissa bit; "nearest": the mantissa's top bit and
/// a lower one or a nonzero exponent; "down": never), not past 254 with
/// `saturate`; exponent 0 is 2^-127, 255 (an f32 infinity or NaN, or an
/// unsaturated overflow) NaN. Composed of bitcasts and bitwise ops, so the
/// result is an exact power of two before the conversion.
static Value castToE8M0(Importer &g, Value x, Type target) {
  std::string mode = g.getString("round_mode", "up", {"up", "down", "nearest"});
  bool saturate = g.getBool("saturate", true);
  RankedTensorType type = Importer::getType(x);
  RankedTensorType i32 = type.clone(g.builder.getI32Type());
  RankedTensorType i1 = type.clone(g.builder.getI1Type());
  auto c = [&](int64_t value) { return g.splat(i32, double(value)); };
  auto bitwise = [&](tg::BitwiseKind kind, Value a, Value b) {
    return g.create<tg::BitwiseOp>(Importer::getType(a), kind, a, b);
  };
  auto bitsOf = [&](Value a, int64_t mask) {
    return bitwise(tg::BitwiseKind::And, a, c(mask));
  };
  auto is = [&](tg::CompareDirection direction, Value a, int64_t value) {
    return compare(g, direction, a, c(value));
  };
  using tg::CompareDirection;
  Value bits =
      g.create<tg::BitcastOp>(i32, g.convert(x, g.builder.getF32Type()));
  Value exponent =
      buildBinary<tg::DivOp>(g, bitsOf(bits, 0x7fffffff), c(1 << 23));
  Value mantissa = bitsOf(bits, 0x7fffff);
  Value up = g.splat(i1, 0.0);
  if (mode == "up") {
    up = is(CompareDirection::NE, mantissa, 0);
  } else if (mode == "nearest") {
    Value half = is(CompareDirection::NE, bitsOf(mantissa, 0x400000), 0);
    Value beyond = is(CompareDirection::NE, bitsOf(mantissa, 0x3fffff), 0);
    up = bitwise(tg::BitwiseKind::And, half,
                 bitwise(tg::BitwiseKind::Or, beyond,
                         is(CompareDirection::GT, exponent, 0)));
  }
  up = bitwise(tg::BitwiseKind::And, up,
               is(CompareDirection::NE, exponent, 255));
  if (saturate)
    up = bitwise(tg::BitwiseKind::And, up,
                 is(CompareDirection::NE, exponent, 254));
  exponent = select(g, up, buildBinary<tg::AddOp>(g, exponent, c(1)), exponent);
  Value result =
      select(g, is(CompareDirection::EQ, exponent, 0), c(0x400000),
             select(g, is(CompareDirection::EQ, exponent, 255), c(0x7fc00000),
                    buildBinary<tg::MulOp>(g, exponent, c(1 << 23))));
  return g.convert(
      g.create<tg::BitcastOp>(type.clone(g.builder.getF32Type()), result),
      target);
}

/// Cast's and CastLike's conversion of `x` to `target`. A float beyond a
/// narrower integer's range is undefined in ONNX; tg converts it through
/// i64 (saturating there) and then keeps the low bits, as numpy (ONNX's
/// reference) does: ONNX's int4 and int2 cases expect 8.0 to wrap to -8,
/// where a direct tg.convert would saturate to the narrow range.
static Value castTo(Importer &g, Value x, Type target) {
  if (isa<Float8E8M0FNUType>(target) &&
      !isa<Float8E8M0FNUType>(Importer::getType(x).getElementType()))
    return castToE8M0(g, x, target);
  auto integer = dyn_cast<IntegerType>(target);
  if (isFloat(x) && integer && integer.getWidth() > 1 &&
      integer.getWidth() < 64)
    x = g.convert(x, g.builder.getI64Type());
  return convertSaturating(g, x, target, g.getBool("saturate", true));
}

static LogicalResult convertCast(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(elementType, getTargetType(g, "casting"));
  g.setOutput(0, castTo(g, x, elementType));
  return success();
}

// CastLike-15: the element type comes from the second input, whose values
// are never read. Cast and CastLike saturate float8 results (opset 19's
// `saturate`, on by default).
static LogicalResult convertCastLike(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(like, g.requireInput(1));
  g.setOutput(0, castTo(g, x, Importer::getType(like).getElementType()));
  return success();
}

static LogicalResult convertIdentity(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  g.setOutput(0, x);
  return success();
}

// Dropout: the identity in inference mode; in training mode (the
// `training_mode` input from opset 12, `is_test = 0` before opset 7) a
// tg.dropout seeded by the step's `dropout_seed` argument, so each step
// draws new masks as tgc-zoo's models do (ONNX's `seed` attribute, which
// fixes one mask, is not followed). The mask output is the same stream's
// mask of ones.
static LogicalResult convertDropout(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  bool training = g.opset < 7 && !g.getBool("is_test", false);
  if (g.input(2)) {
    ASSIGN_OR_FAIL(mode, g.requireConstantScalar(2, "training_mode"));
    training = mode != 0.0;
  }
  double ratio = g.getFloat("ratio", 0.5f);
  if (g.input(1)) {
    ASSIGN_OR_FAIL(value, g.requireConstantScalar(1, "ratio"));
    ratio = value;
  }
  if (g.hadError())
    return failure();
  RankedTensorType type = Importer::getType(x);
  RankedTensorType maskType = type.clone(g.builder.getI1Type());
  if (!training || ratio == 0.0) {
    g.setOutput(0, x);
    if (g.hasOutput(1))
      g.setOutput(1, g.splat(maskType, 1.0));
    return success();
  }
  if (failed(requireFloat(g, x)))
    return failure();
  if (!(ratio > 0.0 && ratio < 1.0)) {
    g.emitNodeError() << "ratio must be in [0, 1), got " << ratio;
    return failure();
  }
  Value seed = g.getDropoutSeed ? g.getDropoutSeed() : Value();
  if (!seed)
    return g.fail("a training-mode Dropout needs the step's dropout_seed "
                  "argument, but the graph already has a value of that name");
  int64_t stream = g.nextDropoutStream++;
  auto dropout = [&](Value operand) {
    return g.create<tg::DropoutOp>(type, operand, seed, /*offset=*/Value(),
                                   g.builder.getF64FloatAttr(ratio),
                                   g.builder.getI64IntegerAttr(stream),
                                   /*global_shape=*/nullptr);
  };
  g.setOutput(0, dropout(x));
  if (g.hasOutput(1))
    g.setOutput(1, compare(g, tg::CompareDirection::NE,
                           dropout(g.splat(type, 1.0)), g.splat(type, 0.0)));
  return success();
}

// RandomUniform, RandomNormal (the `shape` attribute), RandomUniformLike,
// RandomNormalLike (the input's shape) and Bernoulli: a tg.random seeded by
// the step's `dropout_seed` argument, so that each step draws new numbers
// (a VAE's reparameterization noise, a diffusion model's noise, stochastic
// depth). ONNX's `seed` attribute seeds ONNX Runtime's generator once per
// session; it is not followed: the numbers come from tgc's Philox stream,
// which `--seed` makes reproducible. Drawn in f32 (f64 for a double
// result), then scaled and shifted, then converted to `dtype`.
static LogicalResult convertRandom(Importer &g) {
  StringRef opType = g.getNode().op_type();
  bool like = opType.ends_with("Like") || opType == "Bernoulli";
  bool normal = opType.starts_with("RandomNormal");
  SmallVector<int64_t> shape;
  Type elementType = g.builder.getF32Type();
  Value input;
  if (like) {
    ASSIGN_OR_FAIL(x, g.requireInput(0));
    input = x;
    RankedTensorType type = Importer::getType(x);
    shape.assign(type.getShape().begin(), type.getShape().end());
    elementType = type.getElementType();
  } else {
    std::optional<SmallVector<int64_t>> dims = g.getInts("shape");
    if (!dims)
      return g.fail("the 'shape' attribute is required");
    shape = *dims;
    for (int64_t dim : shape)
      if (dim < 0)
        return g.fail("shape has a negative dimension");
    if (span(shape) > kMaxImportElements)
      return g.fail("the random tensor is too large");
  }
  if (std::optional<int64_t> dtype = g.getOptionalInt("dtype")) {
    elementType = getElementType(*g.builder.getContext(), int32_t(*dtype));
    if (!elementType)
      return g.fail("dtype " + getDataTypeName(int32_t(*dtype)) +
                    " has no tg equivalent");
  }
  if (g.hadError())
    return failure();
  if (opType == "Bernoulli") {
    if (!isFloat(input)) {
      g.emitNodeError() << "the probabilities must be floats, got "
                        << Importer::getType(input).getElementType();
      return failure();
    }
  } else if (!isa<FloatType>(elementType)) {
    g.emitNodeError() << "the numbers must be floats, but the output type is "
                      << elementType
                      << (like && !g.getOptionalInt("dtype")
                              ? " (the input's; set 'dtype')"
                              : "");
    return failure();
  }
  Value seed = g.getDropoutSeed ? g.getDropoutSeed() : Value();
  if (!seed)
    return g.fail("random numbers need the step's dropout_seed argument, but "
                  "the graph already has a value of that name");
  // Drawn in f32, or f64 when the result (a Bernoulli's probabilities) is.
  bool f64 = elementType.isF64() ||
             (opType == "Bernoulli" &&
              Importer::getType(input).getElementType().isF64());
  Type drawType =
      f64 ? Type(g.builder.getF64Type()) : Type(g.builder.getF32Type());
  auto type = RankedTensorType::get(shape, drawType);
  Value numbers = g.create<tg::RandomOp>(
      type, seed, /*offset=*/Value(),
      tg::RandomDistributionAttr::get(g.builder.getContext(),
                                      normal ? tg::RandomDistribution::Normal
                                             : tg::RandomDistribution::Uniform),
      g.builder.getI64IntegerAttr(g.nextDropoutStream++),
      /*global_shape=*/DenseI64ArrayAttr());
  if (opType == "Bernoulli") {
    // 1 where u < p: probability p (0 never, 1 always).
    Value hit = compare(g, tg::CompareDirection::LT, numbers,
                        g.convert(input, drawType));
    if (isa<IntegerType>(elementType) &&
        cast<IntegerType>(elementType).getWidth() == 1)
      g.setOutput(0, hit);
    else
      g.setOutput(
          0, select(g, hit,
                    g.splat(RankedTensorType::get(shape, elementType), 1.0),
                    g.splat(RankedTensorType::get(shape, elementType), 0.0)));
    return success();
  }
  double scale = normal ? g.getFloat("scale", 1.0f)
                        : double(g.getFloat("high", 1.0f)) -
                              double(g.getFloat("low", 0.0f));
  double shift = normal ? g.getFloat("mean", 0.0f) : g.getFloat("low", 0.0f);
  if (!std::isfinite(scale) || !std::isfinite(shift))
    return g.fail(normal ? "mean and scale must be finite"
                         : "low and high must be finite");
  if (scale != 1.0)
    numbers = g.create<tg::MulOp>(numbers, g.splat(type, scale));
  if (shift != 0.0)
    numbers = g.create<tg::AddOp>(numbers, g.splat(type, shift));
  g.setOutput(0, g.convert(numbers, elementType));
  return success();
}

static LogicalResult convertClip(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireNumeric(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  Value result = x;
  auto bound = [&](unsigned index, StringRef attr, bool isMin) {
    Value limit;
    if (g.opset >= 11) {
      limit = g.input(index);
      if (!limit)
        return;
      limit = g.broadcastTo(limit, type.getShape());
    } else if (std::optional<float> value = g.getOptionalFloat(attr)) {
      limit = g.splat(type, *value);
    } else {
      return;
    }
    result = isMin ? buildBinary<tg::MaxOp>(g, result, limit)
                   : buildBinary<tg::MinOp>(g, result, limit);
  };
  bound(1, "min", true);
  bound(2, "max", false);
  // A clipped QuantizeLinear result (PyTorch exports its reduced range, 0
  // to 127, as QuantizeLinear, Clip, DequantizeLinear) is a quantization to
  // the narrower grid.
  if (auto it = g.quantizations.find(x);
      it != g.quantizations.end() && g.opset >= 11) {
    Importer::Quantization narrowed = it->second;
    bool known = true;
    for (auto [index, isMin] : {std::pair(1u, true), std::pair(2u, false)}) {
      Value limit = g.input(index);
      if (!limit)
        continue;
      const Tensor *value = g.getConstant(limit);
      known &= value && value->getNumElements() == 1;
      if (!known)
        break;
      int64_t bound = int64_t(value->getAsDouble(0));
      narrowed.low = isMin ? std::max(narrowed.low, bound) : narrowed.low;
      narrowed.high = isMin ? narrowed.high : std::min(narrowed.high, bound);
    }
    if (known && narrowed.low <= narrowed.high)
      g.quantizations[result] = narrowed;
  }
  g.setOutput(0, result);
  return success();
}

/// `alpha * x` for x < 0 (LeakyRelu), or an ELU form.
static LogicalResult convertLeakyRelu(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  Value zero = g.splat(type, 0.0);
  Value negative = compare(g, tg::CompareDirection::LT, x, zero);
  Value scaled =
      buildBinary<tg::MulOp>(g, x, g.splat(type, g.getFloat("alpha", 0.01f)));
  g.setOutput(0, select(g, negative, scaled, x));
  return success();
}

/// `v`, a vector of the C channels of `type` ([N, C, ...]) of its element
/// type, laid along dimension 1 and broadcast to `type`'s shape; null if it
/// is not such a vector.
static Value broadcastPerChannel(Importer &g, Value v, RankedTensorType type) {
  RankedTensorType t = Importer::getType(v);
  int64_t c = type.getDimSize(1);
  if (t.getRank() != 1 || t.getDimSize(0) != c ||
      t.getElementType() != type.getElementType())
    return {};
  SmallVector<int64_t> column(type.getRank() - 1, 1);
  column.front() = c;
  return g.broadcastTo(g.reshape(v, column), type.getShape());
}

/// The mean and biased variance of `x` over `dims`, kept with size 1.
static std::pair<Value, Value> getMoments(Importer &g, Value x,
                                          ArrayRef<int64_t> dims) {
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  Value mean = g.reduce(tg::ReduceKind::Mean, x, dims, /*keepDims=*/true);
  Value centered = buildBinary<tg::SubOp>(g, x, g.broadcastTo(mean, shape));
  Value variance = g.reduce(tg::ReduceKind::Mean,
                            buildBinary<tg::MulOp>(g, centered, centered), dims,
                            /*keepDims=*/true);
  return {mean, variance};
}

/// `(x - mean) * rsqrt(variance + epsilon) * scale + bias`, each operand
/// broadcast to x's shape.
static Value normalize(Importer &g, Value x, Value mean, Value variance,
                       double epsilon, Value scale, Value bias) {
  RankedTensorType type = Importer::getType(x);
  auto spread = [&](Value v) { return g.broadcastTo(v, type.getShape()); };
  Value inverse = g.create<tg::RsqrtOp>(
      type,
      buildBinary<tg::AddOp>(g, spread(variance), g.splat(type, epsilon)));
  Value normalized = buildBinary<tg::MulOp>(
      g, buildBinary<tg::SubOp>(g, x, spread(mean)), inverse);
  return buildBinary<tg::AddOp>(
      g, buildBinary<tg::MulOp>(g, normalized, spread(scale)), spread(bias));
}

// BatchNormalization: normalized per channel with the given statistics
// (inference), or in training mode with the batch's (over every dimension
// but the channels, the variance biased) whose running averages with
// `momentum` are outputs 1 and 2; a training-mode node's evaluation uses
// the given statistics (tg.mode_select). Training mode is `training_mode` from
// opset 14, more than one output before, `is_test = 0` before opset 7.
// A dynamo export's inference-mode node of a training-mode batch norm
// trains as its FX node says, as PyTorch does: the running statistics are
// updated without outputs, with PyTorch's momentum and the batch's unbiased
// variance, each update from the one before when the module runs twice.
static LogicalResult convertBatchNormalization(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() < 2 || type.getNumElements() == 0)
    return g.fail("expects a non-empty tensor of rank >= 2 (N, C, ...)");
  if (g.opset < 9 && g.getInt("spatial", 1) != 1)
    return g.fail("spatial = 0 is not supported");
  // Read for their types' checks; isTrainingBatchNorm decides.
  if (g.opset >= 14)
    g.getInt("training_mode", 0);
  else if (g.opset < 7)
    g.getInt("is_test", 0);
  bool training = isTrainingBatchNorm(g.getNode(), g.opset);
  std::optional<double> fxMomentum = getRecoveredBatchNormMomentum(g.getNode());
  // Before opset 14, training mode may also output the batch's mean and
  // (biased) variance it normalized with (PyTorch's training exports name
  // them).
  if ((g.hasOutput(3) || g.hasOutput(4)) && !training)
    return g.fail("the saved mean and variance outputs exist in training "
                  "mode only");
  // From opset 15 scale and B (T1) and mean and var (T2) may have float
  // types of their own (a half-precision X with f32 statistics): all
  // compute in the widest of the three, Y is rounded to X's type and the
  // running statistics to T2, as ONNX's reference does.
  SmallVector<Value> given;
  for (unsigned i = 1; i <= 4; ++i) {
    ASSIGN_OR_FAIL(input, g.requireInput(i));
    if (failed(requireFloat(g, input)))
      return failure();
    given.push_back(input);
  }
  auto isWider = [](Type a, Type b) {
    return a.getIntOrFloatBitWidth() > b.getIntOrFloatBitWidth();
  };
  Type computeType = type.getElementType();
  for (Value input : given) {
    Type t = Importer::getType(input).getElementType();
    if (isWider(t, computeType))
      computeType = t;
    else if (t != computeType && !isWider(computeType, t))
      computeType = g.builder.getF32Type(); // f16 with bf16
  }
  Type xType = type.getElementType();
  x = g.convert(x, computeType);
  type = type.clone(computeType);
  SmallVector<Value> channels;
  for (Value input : given) {
    Value spread = broadcastPerChannel(g, g.convert(input, computeType), type);
    if (!spread)
      return g.fail("scale, B, mean and var must be vectors of the " +
                    llvm::Twine(type.getDimSize(1)) + " channels");
    channels.push_back(spread);
  }
  Value mean = channels[2], variance = channels[3];
  Value batchMean, batchVariance;
  if (training) {
    SmallVector<int64_t> reduced = {0};
    for (int64_t d = 2; d < type.getRank(); ++d)
      reduced.push_back(d);
    std::tie(batchMean, batchVariance) = getMoments(g, x, reduced);
    // Evaluation (a validation loss) normalizes with the running
    // statistics, as PyTorch's model.eval() does.
    auto inMode = [&](Value batch, Value running) -> Value {
      RankedTensorType kept = Importer::getType(batch);
      return g.create<tg::ModeSelectOp>(
          kept, batch,
          g.reshape(g.convert(running, computeType), kept.getShape()));
    };
    mean = inMode(batchMean, given[2]);
    variance = inMode(batchVariance, given[3]);
  }
  g.setOutput(
      0, g.convert(normalize(g, x, mean, variance, g.getFloat("epsilon", 1e-5f),
                             channels[0], channels[1]),
                   xType));
  for (unsigned i = 3; i <= 4; ++i)
    if (g.hasOutput(i))
      g.setOutput(i, g.convert(g.reshape(i == 3 ? batchMean : batchVariance,
                                         {type.getDimSize(1)}),
                               xType));
  // The running statistics: input * momentum + batch * (1 - momentum).
  double momentum =
      fxMomentum ? 1.0 - *fxMomentum : g.getFloat("momentum", 0.9f);
  // PyTorch averages in the unbiased variance of the n values per channel.
  int64_t perChannel = type.getNumElements() / type.getDimSize(1);
  if (fxMomentum && perChannel < 2)
    return g.fail("training-mode batch norm over " + Twine(perChannel) +
                  " value per channel (PyTorch refuses it: the unbiased "
                  "variance is undefined)");
  for (unsigned i = 1; i <= 2; ++i) {
    if (!g.hasOutput(i) && !fxMomentum)
      continue;
    Value running = given[i + 1];
    if (!training) {
      g.setOutput(i, running);
      continue;
    }
    // A module run twice: its second call averages into the first's update.
    auto *earlier = llvm::find_if(g.stateUpdates, [&](const auto &update) {
      return update.first == running;
    });
    bool chained = fxMomentum && earlier != g.stateUpdates.end();
    Value from = chained ? earlier->second : running;
    RankedTensorType vector = Importer::getType(running);
    RankedTensorType wide = vector.clone(computeType);
    Value batch =
        g.reshape(i == 1 ? batchMean : batchVariance, vector.getShape());
    if (fxMomentum && i == 2)
      batch = buildBinary<tg::MulOp>(
          g, batch, g.splat(wide, double(perChannel) / double(perChannel - 1)));
    Value next = g.convert(
        buildBinary<tg::AddOp>(
            g,
            buildBinary<tg::MulOp>(g, g.convert(from, computeType),
                                   g.splat(wide, momentum)),
            buildBinary<tg::MulOp>(g, batch, g.splat(wide, 1.0 - momentum))),
        vector.getElementType());
    if (g.hasOutput(i))
      g.setOutput(i, next);
    // A running statistic imported as state: the step's next value of it.
    if (chained)
      earlier->second = next;
    else if (g.updatedState.contains(running))
      g.stateUpdates.push_back({running, next});
  }
  return success();
}

// InstanceNormalization-6: each (sample, channel) normalized over its
// spatial positions, then scaled and shifted per channel.
static LogicalResult convertInstanceNormalization(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(scale, g.requireInput(1));
  ASSIGN_OR_FAIL(bias, g.requireInput(2));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() < 3)
    return g.fail("expects a tensor of rank >= 3 (N, C, D1, ...)");
  Value scales = broadcastPerChannel(g, scale, type);
  Value biases = broadcastPerChannel(g, bias, type);
  if (!scales || !biases)
    return g.fail("scale and B must be vectors of the " +
                  llvm::Twine(type.getDimSize(1)) +
                  " channels, of X's element type");
  SmallVector<int64_t> spatial;
  for (int64_t d = 2; d < type.getRank(); ++d)
    spatial.push_back(d);
  auto [mean, variance] = getMoments(g, x, spatial);
  g.setOutput(0, normalize(g, x, mean, variance, g.getFloat("epsilon", 1e-5f),
                           scales, biases));
  return success();
}

// GroupNormalization-18/21: each sample's channels in num_groups groups,
// each group normalized over its channels and positions (in f32, or f64 for
// f64 X or stash_type 11, rounded back to X's type), then scaled and
// shifted per channel (GroupNormalization-21) or per group (18, whose
// scale and bias have num_groups elements).
static LogicalResult convertGroupNormalization(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(scale, g.requireInput(1));
  ASSIGN_OR_FAIL(bias, g.requireInput(2));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() < 2)
    return g.fail("expects a tensor of rank >= 2 (N, C, D1, ...)");
  ASSIGN_OR_FAIL(groups, g.requireInt("num_groups"));
  int64_t channels = type.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    return g.fail("num_groups " + llvm::Twine(groups) + " must divide the " +
                  llvm::Twine(channels) + " channels");
  ASSIGN_OR_FAIL(stash, getStashType(g));
  int64_t perChannel = g.opset >= 21 ? channels : groups;
  Type elementType = type.getElementType();
  for (Value v : {scale, bias}) {
    RankedTensorType t = Importer::getType(v);
    if (t.getRank() != 1 || t.getDimSize(0) != perChannel ||
        t.getElementType() != elementType)
      return g.fail(
          "scale and bias must be vectors of the " + llvm::Twine(perChannel) +
          (g.opset >= 21 ? " channels" : " groups") + ", of X's element type");
  }
  ArrayRef<int64_t> shape = type.getShape();
  int64_t batch = shape[0];
  int64_t size = product(shape.drop_front(1)) / groups;
  Type compute = elementType.isF64() || stash == onnx::TensorProto::DOUBLE
                     ? Type(g.builder.getF64Type())
                     : Type(g.builder.getF32Type());
  Value grouped = g.convert(g.reshape(x, {batch, groups, size}), compute);
  auto [mean, variance] = getMoments(g, grouped, {2});
  RankedTensorType groupedType = Importer::getType(grouped);
  Value normalized = g.reshape(
      g.convert(normalize(g, grouped, mean, variance,
                          g.getFloat("epsilon", 1e-5f),
                          g.splat(groupedType, 1.0), g.splat(groupedType, 0.0)),
                elementType),
      shape);
  // Per group (opset 18): each group's value for its channels.
  auto toChannels = [&](Value v) {
    if (perChannel == channels)
      return v;
    return g.reshape(
        g.broadcastTo(g.reshape(v, {groups, 1}), {groups, channels / groups}),
        {channels});
  };
  Value scales = broadcastPerChannel(g, toChannels(scale), type);
  Value biases = broadcastPerChannel(g, toChannels(bias), type);
  g.setOutput(0, buildBinary<tg::AddOp>(
                     g, buildBinary<tg::MulOp>(g, normalized, scales), biases));
  return success();
}

// LpNormalization-1/22: x divided by its L1 or L2 norm along `axis`; a zero
// norm gives zeros.
static LogicalResult convertLpNormalization(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() == 0)
    return g.fail("expects a tensor of rank >= 1");
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", -1), type.getRank()));
  int64_t p = g.getInt("p", 2);
  if (p != 1 && p != 2)
    return g.fail("p must be 1 or 2");
  // A zero norm divides by one, so that neither the result nor its
  // gradient holds a NaN.
  Composer e{g, type};
  Value norm = g.broadcastTo(
      buildLpNorm(g, x, {axis}, /*keepDims=*/true, double(p)), type.getShape());
  Value zero = e.equal(norm, e.c(0.0));
  Value quotient = e.div(x, e.select(zero, e.c(1.0), norm));
  g.setOutput(0, e.select(zero, e.c(0.0), quotient));
  return success();
}

// LRN-13 (1): `x / (bias + alpha / size * square_sum) ^ beta`, the squares
// summed over the `size` channels around each (floor((size - 1) / 2)
// before, ceil after): the squares padded with zeros along the channels and
// `size` shifted slices added.
static LogicalResult convertLRN(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  ASSIGN_OR_FAIL(size, g.requireInt("size"));
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() < 3)
    return g.fail("expects a tensor of rank >= 3 (N, C, D1, ...)");
  int64_t channels = type.getDimSize(1);
  // Each channel of the window is a slice of the step.
  int64_t maxSize = std::min<int64_t>(2 * channels + 1, 1025);
  if (size < 1 || size > maxSize)
    return g.fail("size must be in [1, " + llvm::Twine(maxSize) + "] for " +
                  llvm::Twine(channels) + " channels");
  double alpha = g.getFloat("alpha", 1e-4f), beta = g.getFloat("beta", 0.75f),
         bias = g.getFloat("bias", 1.0f);
  int64_t rank = type.getRank(), before = (size - 1) / 2,
          after = size - 1 - before;
  SmallVector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  low[1] = before;
  high[1] = after;
  Value squares =
      g.create<tg::PadOp>(buildBinary<tg::MulOp>(g, x, x), low, high, interior);
  SmallVector<int64_t> starts(rank, 0), limits(type.getShape()),
      strides(rank, 1);
  Value sum;
  for (int64_t k = 0; k < size; ++k) {
    starts[1] = k;
    limits[1] = k + channels;
    Value part = g.slice(squares, starts, limits, strides);
    sum = sum ? buildBinary<tg::AddOp>(g, sum, part) : part;
  }
  Value base = buildBinary<tg::AddOp>(
      g, g.splat(type, bias),
      buildBinary<tg::MulOp>(g, g.splat(type, alpha / double(size)), sum));
  g.setOutput(0,
              buildBinary<tg::DivOp>(
                  g, x, buildBinary<tg::PowOp>(g, base, g.splat(type, beta))));
  return success();
}

// IsInf-10: x == +inf (detect_positive) or x == -inf (detect_negative).
static LogicalResult convertIsInf(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  double inf = std::numeric_limits<double>::infinity();
  Value result;
  for (auto [attribute, value] :
       {std::pair<StringRef, double>("detect_positive", inf),
        {"detect_negative", -inf}}) {
    if (!g.getBool(attribute, true))
      continue;
    Value hit = compare(g, tg::CompareDirection::EQ, x, g.splat(type, value));
    result = result ? select(g, result, result, hit) : hit;
  }
  if (!result)
    result = g.splat(type.clone(g.builder.getI1Type()), 0.0);
  g.setOutput(0, result);
  return success();
}

/// log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), without overflow.
static Value buildSoftplus(Importer &g, Value x) {
  RankedTensorType type = Importer::getType(x);
  Value positive = buildBinary<tg::MaxOp>(g, x, g.splat(type, 0.0));
  Value negAbs = g.create<tg::NegOp>(type, g.create<tg::AbsOp>(type, x));
  Value log1p = g.create<tg::LogOp>(
      type, buildBinary<tg::AddOp>(g, g.splat(type, 1.0),
                                   g.create<tg::ExpOp>(type, negAbs)));
  return buildBinary<tg::AddOp>(g, positive, log1p);
}

static LogicalResult convertSoftplus(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  g.setOutput(0, buildSoftplus(g, x));
  return success();
}

// Mish-18: x * tanh(softplus(x)).
static LogicalResult convertMish(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  Value tanh = g.create<tg::TanhOp>(Importer::getType(x), buildSoftplus(g, x));
  g.setOutput(0, buildBinary<tg::MulOp>(g, x, tanh));
  return success();
}

static LogicalResult convertHardSigmoid(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  bool isSwish = g.getNode().op_type() == "HardSwish";
  double alpha = isSwish ? 1.0 / 6.0 : g.getFloat("alpha", 0.2f);
  double beta = isSwish ? 0.5 : g.getFloat("beta", 0.5f);
  Value linear = buildBinary<tg::AddOp>(
      g, buildBinary<tg::MulOp>(g, x, g.splat(type, alpha)),
      g.splat(type, beta));
  Value clipped = buildBinary<tg::MinOp>(
      g, buildBinary<tg::MaxOp>(g, linear, g.splat(type, 0.0)),
      g.splat(type, 1.0));
  g.setOutput(0, isSwish ? buildBinary<tg::MulOp>(g, x, clipped) : clipped);
  return success();
}

static LogicalResult convertGelu(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  std::string approximate =
      g.getString("approximate", "none", {"none", "tanh"});
  g.setOutput(0, g.create<tg::GeluOp>(x.getType(), x,
                                      approximate == "tanh"
                                          ? tg::GeluApproximation::Tanh
                                          : tg::GeluApproximation::Erf));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations and softmax
//===----------------------------------------------------------------------===//

/// Softmax's layout (Softmax, LogSoftmax, Hardmax): `build(x, axis)` along
/// `axis`, or before opset 13 over all dimensions from `axis` on, as one.
template <typename Build>
static LogicalResult convertSoftmaxLike(Importer &g, Build build) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  if (rank == 0)
    return g.fail("expects a tensor of rank >= 1");
  ASSIGN_OR_FAIL(
      axis, g.normalizeAxis(g.getInt("axis", g.opset >= 13 ? -1 : 1), rank));
  if (g.opset >= 13) {
    Value result = build(x, axis);
    if (!result)
      return failure();
    g.setOutput(0, result);
    return success();
  }
  ArrayRef<int64_t> shape = type.getShape();
  Value flat = g.reshape(
      x, {product(shape.take_front(axis)), product(shape.drop_front(axis))});
  Value result = build(flat, 1);
  if (!result)
    return failure();
  g.setOutput(0, g.reshape(result, shape));
  return success();
}

template <typename OpTy> static LogicalResult convertSoftmax(Importer &g) {
  return convertSoftmaxLike(g, [&](Value x, int64_t axis) -> Value {
    return g.create<OpTy>(x.getType(), x, axis);
  });
}

// Hardmax: 1 at the first largest element of each row, 0 elsewhere.
static LogicalResult convertHardmax(Importer &g) {
  return convertSoftmaxLike(
      g, [&](Value x, int64_t axis) { return buildHardmax(g, x, axis); });
}

static LogicalResult convertLayerNormalization(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(scale, g.requireInput(1));
  if (failed(requireFloat(g, x)) || failed(requireFloat(g, scale)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  if (rank == 0)
    return g.fail("expects a tensor of rank >= 1");
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", -1), rank));
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> outer = shape.take_front(axis);
  int64_t size = product(shape.drop_front(axis));
  auto vector = [&](Value v) -> Value {
    RankedTensorType t = Importer::getType(v);
    if (t.getRank() > rank - axis)
      return {};
    return g.reshape(g.broadcastTo(v, shape.drop_front(axis)), {size});
  };
  Value bias = g.input(2);
  if (!bias)
    bias = g.splat(Importer::getType(scale).clone(ArrayRef<int64_t>{size}), 0);
  Value scaleVector = vector(scale), biasVector = vector(bias);
  if (!scaleVector || !biasVector)
    return g.fail("Scale and B must broadcast to the normalized dimensions");
  SmallVector<int64_t> rows(outer);
  rows.push_back(size);
  Value input = g.reshape(x, rows);
  RankedTensorType statsType =
      RankedTensorType::get(outer, g.builder.getF32Type());
  SmallVector<Value> results = g.createResults<tg::LayerNormOp>(
      TypeRange{input.getType(), statsType, statsType}, input, scaleVector,
      biasVector, g.builder.getF64FloatAttr(g.getFloat("epsilon", 1e-5f)));
  g.setOutput(0, g.reshape(results[0], shape));
  SmallVector<int64_t> statsShape(outer);
  statsShape.append(rank - axis, 1);
  Type stashType =
      getElementType(*g.builder.getContext(), g.getInt("stash_type", 1));
  if (!stashType)
    stashType = g.builder.getF32Type();
  for (unsigned i : {1u, 2u})
    if (g.hasOutput(i))
      g.setOutput(i, g.reshape(g.convert(results[i], stashType), statsShape));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

FailureOr<std::optional<SmallVector<int64_t>>>
onnx_import::getReduceDims(Importer &g, Value x) {
  int64_t rank = Importer::getType(x).getRank();
  ASSIGN_OR_FAIL(axes, g.getAxes(1, "axes"));
  SmallVector<int64_t> dims;
  if (!axes || axes->empty()) {
    if (g.getBool("noop_with_empty_axes", false))
      return std::optional<SmallVector<int64_t>>();
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
    return std::optional<SmallVector<int64_t>>(dims);
  }
  for (int64_t axis : *axes) {
    ASSIGN_OR_FAIL(dim, g.normalizeAxis(axis, rank));
    if (llvm::is_contained(dims, dim)) {
      g.emitNodeError() << "axis " << axis << " is repeated";
      return failure();
    }
    dims.push_back(dim);
  }
  return std::optional<SmallVector<int64_t>>(dims);
}

namespace {
/// What a Reduce* op computes around a tg.reduce.
enum class ReduceForm { Plain, SumSquare, L1, L2, LogSum, LogSumExp, Product };
} // namespace

// tg has no product reduction: the reduced dimensions are moved last and
// flattened, padded with ones to a power of two, and halved by elementwise
// products (log2 n multiplications in a balanced tree, differentiable
// through every element, zeros included).
Value onnx_import::buildProduct(Importer &g, Value x, ArrayRef<int64_t> dims,
                                bool keepDims) {
  RankedTensorType type = Importer::getType(x);
  SmallVector<int64_t> perm, kept, resultShape;
  int64_t count = 1;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    bool reduced = llvm::is_contained(dims, i);
    if (!reduced) {
      perm.push_back(i);
      kept.push_back(type.getDimSize(i));
    } else {
      count *= type.getDimSize(i);
    }
    if (!reduced || keepDims)
      resultShape.push_back(reduced ? 1 : type.getDimSize(i));
  }
  SmallVector<int64_t> sortedDims(dims);
  llvm::sort(sortedDims);
  llvm::append_range(perm, sortedDims);
  int64_t rows = product(kept);
  Value flat = g.reshape(g.transpose(x, perm), {rows, count});
  int64_t width = llvm::PowerOf2Ceil(std::max<int64_t>(count, 1));
  RankedTensorType onesType =
      RankedTensorType::get({rows, width - count}, type.getElementType());
  if (count == 0)
    flat = g.splat(onesType, 1.0);
  else if (width != count)
    flat = g.create<tg::ConcatOp>(onesType.clone({rows, width}),
                                  ValueRange{flat, g.splat(onesType, 1.0)}, 1);
  for (; width > 1; width /= 2)
    flat = buildBinary<tg::MulOp>(
        g, g.slice(flat, {0, 0}, {rows, width / 2}, {1, 1}),
        g.slice(flat, {0, width / 2}, {rows, width}, {1, 1}));
  return g.reshape(flat, resultShape);
}

template <tg::ReduceKind Kind, ReduceForm Form = ReduceForm::Plain>
static LogicalResult convertReduce(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  // ReduceMax and ReduceMin of bools (opset 20 on): any and all, as the
  // maximum and minimum of 0s and 1s.
  if (isBool(x) && Form == ReduceForm::Plain &&
      (Kind == tg::ReduceKind::Max || Kind == tg::ReduceKind::Min)) {
    ASSIGN_OR_FAIL(dims, getReduceDims(g, x));
    if (!dims) {
      g.setOutput(0, x);
      return success();
    }
    Value bytes = g.convert(x, g.builder.getIntegerType(8, false));
    g.setOutput(
        0, g.convert(g.reduce(Kind, bytes, *dims, g.getBool("keepdims", true)),
                     g.builder.getI1Type()));
    return success();
  }
  if (failed(requireNumeric(g, x)))
    return failure();
  if ((Kind == tg::ReduceKind::Mean ||
       (Form != ReduceForm::Plain && Form != ReduceForm::Product)) &&
      failed(requireFloat(g, x)))
    return failure();
  ASSIGN_OR_FAIL(dims, getReduceDims(g, x));
  if (!dims) {
    g.setOutput(0, x);
    return success();
  }
  RankedTensorType type = Importer::getType(x);
  bool keepDims = g.getBool("keepdims", true);
  if (Form == ReduceForm::Product) {
    g.setOutput(0, buildProduct(g, x, *dims, keepDims));
    return success();
  }
  // The L2 norm of zeros is 0 with a zero gradient (PyTorch's norm), not 0
  // times the square root's infinite slope.
  if (Form == ReduceForm::L2) {
    g.setOutput(0, buildLpNorm(g, x, *dims, keepDims, 2.0));
    return success();
  }
  Value operand = x;
  if (Form == ReduceForm::SumSquare)
    operand = buildBinary<tg::MulOp>(g, x, x);
  else if (Form == ReduceForm::L1)
    operand = g.create<tg::AbsOp>(type, x);
  Value shift;
  if (Form == ReduceForm::LogSumExp) {
    // log(sum(exp(x - m))) + m with m the maximum: no overflow.
    shift = g.reduce(tg::ReduceKind::Max, x, *dims, /*keepDims=*/true);
    if (type.getNumElements() == 0)
      shift = g.splat(Importer::getType(shift), 0.0);
    operand = g.create<tg::ExpOp>(
        type,
        buildBinary<tg::SubOp>(g, x, g.broadcastTo(shift, type.getShape())));
  }
  Value result = g.reduce(Kind, operand, *dims, keepDims);
  RankedTensorType resultType = Importer::getType(result);
  if (Form == ReduceForm::LogSum || Form == ReduceForm::LogSumExp)
    result = g.create<tg::LogOp>(resultType, result);
  if (Form == ReduceForm::LogSumExp)
    result = buildBinary<tg::AddOp>(g, result,
                                    g.reshape(shift, resultType.getShape()));
  g.setOutput(0, result);
  return success();
}

// MeanVarianceNormalization-13 (9): `(x - mean) / (sqrt(variance) + 1e-9)`
// over `axes` (N and the spatial dimensions by default), as the function
// ONNX defines it by.
static LogicalResult convertMeanVarianceNormalization(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  // Axes as a Reduce*'s; by default N and the spatial dimensions of an
  // image.
  ASSIGN_OR_FAIL(given, getReduceDims(g, x));
  SmallVector<int64_t> dims = *given;
  if (!g.getInts("axes")) {
    if (type.getRank() != 4)
      return g.fail("the default axes [0, 2, 3] need a tensor of rank 4");
    dims = {0, 2, 3};
  }
  auto [mean, variance] = getMoments(g, x, dims);
  auto spread = [&](Value v) { return g.broadcastTo(v, type.getShape()); };
  Value deviation = buildBinary<tg::AddOp>(
      g, g.create<tg::SqrtOp>(type, spread(variance)), g.splat(type, 1e-9));
  g.setOutput(0, buildBinary<tg::DivOp>(
                     g, buildBinary<tg::SubOp>(g, x, spread(mean)), deviation));
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

// numpy's matmul: 1-D operands promoted and the promoted dimension dropped
// again, batch dimensions broadcast.
FailureOr<Value> onnx_import::buildMatMul(Importer &g, Value lhs, Value rhs) {
  if (failed(requireFloat(g, lhs)) || failed(requireFloat(g, rhs)))
    return failure();
  if (Importer::getType(lhs).getElementType() !=
      Importer::getType(rhs).getElementType()) {
    g.emitNodeError() << "operands have different element types";
    return failure();
  }
  SmallVector<int64_t> a(Importer::getType(lhs).getShape());
  SmallVector<int64_t> b(Importer::getType(rhs).getShape());
  if (a.empty() || b.empty()) {
    g.emitNodeError() << "MatMul operands must have rank >= 1";
    return failure();
  }
  bool vectorLhs = a.size() == 1, vectorRhs = b.size() == 1;
  if (vectorLhs)
    a.insert(a.begin(), 1);
  if (vectorRhs)
    b.push_back(1);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k) {
    g.emitNodeError() << "contracting dimensions differ: " << lhs.getType()
                      << " and " << rhs.getType();
    return failure();
  }
  lhs = g.reshape(lhs, a);
  rhs = g.reshape(rhs, b);
  // The batch dimensions, broadcast.
  ArrayRef<int64_t> batchA = ArrayRef(a).drop_back(2),
                    batchB = ArrayRef(b).drop_back(2);
  SmallVector<int64_t> batch(std::max(batchA.size(), batchB.size()), 1);
  for (auto [dims, offset] :
       {std::make_pair(batchA, batch.size() - batchA.size()),
        std::make_pair(batchB, batch.size() - batchB.size())})
    for (auto [i, dim] : llvm::enumerate(dims)) {
      int64_t &out = batch[offset + i];
      if (out != 1 && dim != 1 && out != dim) {
        g.emitNodeError() << "batch dimensions cannot be broadcast: "
                          << lhs.getType() << " and " << rhs.getType();
        return failure();
      }
      out = dim == 1 ? out : dim;
    }
  SmallVector<int64_t> resultShape(batch);
  resultShape.append({m, n});
  Type elementType = Importer::getType(lhs).getElementType();
  Value result;
  if (b.size() == 2) {
    // A matrix shared by every batch of lhs: a linear layer.
    SmallVector<int64_t> lhsShape(batch);
    lhsShape.append({m, k});
    result =
        g.create<tg::MatmulOp>(RankedTensorType::get(resultShape, elementType),
                               g.broadcastTo(lhs, lhsShape), rhs, false, false);
  } else {
    SmallVector<int64_t> lhsShape(batch), rhsShape(batch);
    lhsShape.append({m, k});
    rhsShape.append({k, n});
    result =
        g.create<tg::MatmulOp>(RankedTensorType::get(resultShape, elementType),
                               g.broadcastTo(lhs, lhsShape),
                               g.broadcastTo(rhs, rhsShape), false, false);
  }
  SmallVector<int64_t> finalShape(batch);
  if (!vectorLhs)
    finalShape.push_back(m);
  if (!vectorRhs)
    finalShape.push_back(n);
  return g.reshape(result, finalShape);
}

static LogicalResult convertMatMul(Importer &g) {
  ASSIGN_OR_FAIL(lhs, g.requireInput(0));
  ASSIGN_OR_FAIL(rhs, g.requireInput(1));
  ASSIGN_OR_FAIL(result, buildMatMul(g, lhs, rhs));
  g.setOutput(0, result);
  return success();
}

static LogicalResult convertGemm(Importer &g) {
  ASSIGN_OR_FAIL(a, g.requireInput(0));
  ASSIGN_OR_FAIL(b, g.requireInput(1));
  if (failed(requireFloat(g, a)) || failed(requireFloat(g, b)))
    return failure();
  RankedTensorType typeA = Importer::getType(a), typeB = Importer::getType(b);
  if (typeA.getRank() != 2 || typeB.getRank() != 2)
    return g.fail("Gemm expects matrices");
  bool transA = g.getBool("transA", false), transB = g.getBool("transB", false);
  int64_t m = typeA.getDimSize(transA ? 1 : 0);
  int64_t k = typeA.getDimSize(transA ? 0 : 1);
  int64_t n = typeB.getDimSize(transB ? 0 : 1);
  if (typeB.getDimSize(transB ? 1 : 0) != k)
    return g.fail("contracting dimensions differ");
  auto type = typeA.clone(ArrayRef<int64_t>{m, n});
  Value result = g.create<tg::MatmulOp>(type, a, b, transA, transB);
  double alpha = g.getFloat("alpha", 1.0f), beta = g.getFloat("beta", 1.0f);
  if (alpha != 1.0)
    result = buildBinary<tg::MulOp>(g, result, g.splat(type, alpha));
  if (Value c = g.input(2)) {
    // Before opset 7, C broadcasts only with `broadcast = 1`.
    if (g.opset < 7 && !g.getBool("broadcast", false) &&
        Importer::getType(c).getShape() != type.getShape())
      return g.fail("before opset 7, C of another shape than the result "
                    "needs the attribute broadcast = 1");
    ASSIGN_OR_FAIL(shape, g.broadcastShapes({result, c}));
    if (ArrayRef<int64_t>(shape) != type.getShape())
      return g.fail("C does not broadcast to the result");
    c = g.broadcastTo(g.convert(c, type.getElementType()), shape);
    if (beta != 1.0)
      c = buildBinary<tg::MulOp>(g, c, g.splat(type, beta));
    result = buildBinary<tg::AddOp>(g, result, c);
  }
  g.setOutput(0, result);
  return success();
}

namespace {
/// An einsum operand: its value and one label per dimension.
struct EinsumTerm {
  Value value;
  std::string labels;
};
} // namespace

/// Sums out the labels of `term` that are not in `needed`.
static EinsumTerm sumOut(Importer &g, EinsumTerm term, StringRef needed) {
  SmallVector<int64_t> dims;
  std::string kept;
  for (auto [i, label] : llvm::enumerate(term.labels)) {
    if (needed.contains(label))
      kept.push_back(label);
    else
      dims.push_back(i);
  }
  if (dims.empty())
    return term;
  return {g.reduce(tg::ReduceKind::Sum, term.value, dims, false), kept};
}

static int64_t labelSize(const EinsumTerm &term, char label) {
  return Importer::getType(term.value).getDimSize(term.labels.find(label));
}

/// The product of two terms keeping the labels in `keep`, as one batched
/// matmul: [batch, free a, contracted] x [batch, contracted, free b].
static FailureOr<EinsumTerm> contractPair(Importer &g, EinsumTerm a,
                                          EinsumTerm b, StringRef keep) {
  a = sumOut(g, a, keep.str() + b.labels);
  b = sumOut(g, b, keep.str() + a.labels);
  std::string batch, contract, freeA, freeB;
  for (char label : a.labels) {
    if (!StringRef(b.labels).contains(label))
      freeA.push_back(label);
    else if (keep.contains(label))
      batch.push_back(label);
    else
      contract.push_back(label);
  }
  for (char label : b.labels)
    if (!StringRef(a.labels).contains(label))
      freeB.push_back(label);
  for (char label : batch + contract)
    if (labelSize(a, label) != labelSize(b, label)) {
      g.emitNodeError() << "index '" << label << "' has sizes "
                        << labelSize(a, label) << " and " << labelSize(b, label)
                        << " (broadcasting in Einsum is not supported)";
      return failure();
    }
  auto arrange = [&](const EinsumTerm &term, ArrayRef<std::string> groups) {
    SmallVector<int64_t> perm;
    SmallVector<int64_t> sizes;
    for (const std::string &group : groups) {
      int64_t size = 1;
      for (char label : group) {
        perm.push_back(term.labels.find(label));
        size *= labelSize(term, label);
      }
      sizes.push_back(size);
    }
    return g.reshape(g.transpose(term.value, perm), sizes);
  };
  Value lhs = arrange(a, {batch, freeA, contract});
  Value rhs = arrange(b, {batch, contract, freeB});
  ArrayRef<int64_t> lhsShape = Importer::getType(lhs).getShape();
  ArrayRef<int64_t> rhsShape = Importer::getType(rhs).getShape();
  Value product =
      g.create<tg::MatmulOp>(Importer::getType(lhs).clone(ArrayRef<int64_t>{
                                 lhsShape[0], lhsShape[1], rhsShape[2]}),
                             lhs, rhs, false, false);
  SmallVector<int64_t> shape;
  for (char label : batch + freeA)
    shape.push_back(labelSize(a, label));
  for (char label : freeB)
    shape.push_back(labelSize(b, label));
  return EinsumTerm{g.reshape(product, shape), batch + freeA + freeB};
}

// Det-11: the determinant of each [n, n] matrix of X [..., n, n], by
// Gaussian elimination with partial pivoting unrolled over the n columns, in
// f64 (the precision of LAPACK's getrf, which numpy and PyTorch call), then
// rounded to X's type. Made of tg ops (the pivot a TopK of the column's
// magnitudes, the row swap a one-hot blend), so its gradient is autodiff's:
// det(X) X^-T wherever the pivot order is locally constant.
static LogicalResult convertDet(Importer &g) {
  constexpr int64_t kMaxOrder = 64;
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  if (rank < 2 || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return g.fail("X must be square matrices [..., n, n]");
  int64_t n = type.getDimSize(rank - 1);
  if (n > kMaxOrder)
    return g.fail("matrices of order " + llvm::Twine(n) +
                  " exceed the largest tgc unrolls, " + llvm::Twine(kMaxOrder));
  SmallVector<int64_t> batchShape(type.getShape().drop_back(2));
  int64_t batch = 1;
  for (int64_t size : batchShape)
    batch *= size;
  Type f64 = g.builder.getF64Type();
  auto typed = [&](ArrayRef<int64_t> shape, Type element = Type()) {
    return RankedTensorType::get(shape, element ? element : f64);
  };
  Value det = g.splat(typed({batch, 1}), 1.0);
  if (batch == 0 || n == 0) {
    g.setOutput(0,
                g.convert(g.reshape(det, batchShape), type.getElementType()));
    return success();
  }
  Value a = g.reshape(g.convert(x, f64), {batch, n, n});
  RankedTensorType full = typed({batch, n, n}), column = typed({batch, n, 1});
  auto constantColumn = [&](auto predicate) {
    SmallVector<double> values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(predicate(i) ? 1.0 : 0.0);
    return g.broadcastTo(g.constant(typed({n, 1}), values), column.getShape());
  };
  Value zeroColumn = g.splat(column, 0.0), minusOne = g.splat(column, -1.0);
  Value positions =
      g.broadcastTo(g.constantInts(llvm::to_vector(llvm::seq<int64_t>(0, n)),
                                   typed({1, n}, g.builder.getI64Type())),
                    {batch, n});
  SmallVector<int64_t> one3 = {1, 1, 1};
  for (int64_t k = 0; k < n; ++k) {
    // The pivot: the row at or below k of the largest magnitude in column k
    // (the first of equal ones, as getrf).
    Value col = g.slice(a, {0, 0, k}, {batch, n, k + 1}, one3);
    Value candidates = select(
        g,
        compare(g, tg::CompareDirection::GT,
                constantColumn([&](int64_t i) { return i >= k; }), zeroColumn),
        g.create<tg::AbsOp>(column, col), minusOne);
    SmallVector<Value> top = g.createResults<tg::TopKOp>(
        g.reshape(candidates, {batch, n}), uint64_t(1), false);
    if (g.hadError())
      return failure();
    Value pivotIndex = top[1]; // [batch, 1], i64
    Value isPivot = compare(g, tg::CompareDirection::EQ,
                            g.broadcastTo(pivotIndex, {batch, n}), positions);
    Value pivotColumn =
        g.reshape(select(g, isPivot, g.splat(typed({batch, n}), 1.0),
                         g.splat(typed({batch, n}), 0.0)),
                  {batch, n, 1});
    // Swap rows k and p: a += (e_k - e_p) (row_p - row_k).
    Value rowK = g.slice(a, {0, k, 0}, {batch, k + 1, n}, one3);
    Value pivotRow =
        g.reduce(tg::ReduceKind::Sum,
                 buildBinary<tg::MulOp>(
                     g, g.broadcastTo(pivotColumn, full.getShape()), a),
                 {1}, /*keepDims=*/true);
    Value blend = buildBinary<tg::SubOp>(
        g, constantColumn([&](int64_t i) { return i == k; }), pivotColumn);
    a = buildBinary<tg::AddOp>(
        g, a,
        buildBinary<tg::MulOp>(
            g, g.broadcastTo(blend, full.getShape()),
            g.broadcastTo(buildBinary<tg::SubOp>(g, pivotRow, rowK),
                          full.getShape())));
    Value swapped =
        compare(g, tg::CompareDirection::NE, pivotIndex,
                g.splat(typed({batch, 1}, g.builder.getI64Type()), double(k)));
    Value pivot = g.reshape(g.slice(a, {0, k, k}, {batch, k + 1, k + 1}, one3),
                            {batch, 1});
    det = buildBinary<tg::MulOp>(
        g, det,
        select(g, swapped, g.create<tg::NegOp>(pivot.getType(), pivot), pivot));
    if (k + 1 == n)
      break;
    // Eliminate below the pivot (a zero pivot: the determinant is 0; divide
    // by 1 instead, so that no infinity reaches the value or its gradient).
    Value safe = select(g,
                        compare(g, tg::CompareDirection::EQ, pivot,
                                g.splat(typed({batch, 1}), 0.0)),
                        g.splat(typed({batch, 1}), 1.0), pivot);
    Value factors = buildBinary<tg::DivOp>(
        g, g.slice(a, {0, 0, k}, {batch, n, k + 1}, one3),
        g.broadcastTo(g.reshape(safe, {batch, 1, 1}), column.getShape()));
    factors = buildBinary<tg::MulOp>(
        g, factors, constantColumn([&](int64_t i) { return i > k; }));
    Value pivotRowNow = g.slice(a, {0, k, 0}, {batch, k + 1, n}, one3);
    a = buildBinary<tg::SubOp>(
        g, a,
        buildBinary<tg::MulOp>(g, g.broadcastTo(factors, full.getShape()),
                               g.broadcastTo(pivotRowNow, full.getShape())));
  }
  g.setOutput(0, g.convert(g.reshape(det, batchShape), type.getElementType()));
  return success();
}

static LogicalResult convertEinsum(Importer &g) {
  std::string equation;
  if (!g.attribute("equation", onnx::AttributeProto::STRING))
    return g.hadError() ? failure()
                        : g.fail("attribute 'equation' is required");
  for (char c : g.getString("equation", ""))
    if (c != ' ')
      equation.push_back(c);
  auto [inputsText, outputText] = StringRef(equation).split("->");
  bool explicitOutput = StringRef(equation).contains("->");
  SmallVector<StringRef> inputSpecs;
  inputsText.split(inputSpecs, ',');
  if (inputSpecs.size() != g.getNumInputs())
    return g.fail("equation '" + equation + "' does not match the " +
                  llvm::Twine(g.getNumInputs()) + " inputs");
  SmallVector<EinsumTerm> terms;
  SmallVector<int64_t> ellipsisRanks;
  for (auto [i, spec] : llvm::enumerate(inputSpecs)) {
    ASSIGN_OR_FAIL(value, g.requireInput(i));
    if (failed(requireFloat(g, value)))
      return failure();
    int64_t rank = Importer::getType(value).getRank();
    int64_t named = spec.size() - (spec.contains("...") ? 3 : 0);
    if (named > rank || (!spec.contains("...") && named != rank))
      return g.fail("term '" + spec + "' does not match the rank " +
                    llvm::Twine(rank) + " of its input");
    ellipsisRanks.push_back(rank - named);
    terms.push_back({value, spec.str()});
  }
  int64_t ellipsis = *llvm::max_element(ellipsisRanks);
  if (ellipsis > 10)
    return g.fail("too many dimensions under '...'");
  // '...' becomes digits, right-aligned across the inputs.
  auto expand = [&](std::string &labels, int64_t count) {
    size_t at = labels.find("...");
    if (at == std::string::npos)
      return;
    std::string digits;
    for (int64_t d = ellipsis - count; d < ellipsis; ++d)
      digits.push_back(char('0' + d));
    labels.replace(at, 3, digits);
  };
  for (auto [term, count] : llvm::zip(terms, ellipsisRanks))
    expand(term.labels, count);
  std::string output;
  if (explicitOutput) {
    output = outputText.str();
    expand(output, ellipsis);
  } else {
    for (int64_t d = 0; d < ellipsis; ++d)
      output.push_back(char('0' + d));
    std::string letters;
    for (const EinsumTerm &term : terms)
      letters += term.labels;
    llvm::sort(letters);
    for (char c : letters)
      if (std::isalpha(c) && llvm::count(letters, c) == 1)
        output.push_back(c);
  }
  // A label repeated within one operand takes that operand's diagonal: the
  // repeated dimensions moved last and merged, the positions where their
  // indices agree taken, the label kept once (a trace sums it out later).
  for (EinsumTerm &term : terms) {
    for (size_t at = 0; at < term.labels.size(); ++at) {
      char label = term.labels[at];
      SmallVector<int64_t> repeated, kept;
      for (auto [d, other] : llvm::enumerate(term.labels))
        (other == label ? repeated : kept).push_back(d);
      if (repeated.size() < 2)
        continue;
      ArrayRef<int64_t> shape = Importer::getType(term.value).getShape();
      int64_t size = shape[repeated.front()];
      if (llvm::any_of(repeated, [&](int64_t d) { return shape[d] != size; }))
        return g.fail("equation '" + equation + "': the dimensions of '" +
                      llvm::Twine(label) + "' differ in size");
      SmallVector<int64_t> perm(kept), merged;
      llvm::append_range(perm, repeated);
      std::string labels;
      for (int64_t d : kept) {
        merged.push_back(shape[d]);
        labels.push_back(term.labels[d]);
      }
      int64_t cells = 1, step = 0;
      for (size_t r = 0; r < repeated.size(); ++r) {
        step += cells;
        cells *= size;
      }
      if (span(merged) * std::max<int64_t>(cells, 1) > kMaxImportElements)
        return g.fail("equation '" + equation + "': the diagonal of '" +
                      llvm::Twine(label) + "' is too large");
      merged.push_back(cells);
      if (failed(g.checkIndexLength(size, "the diagonal of '" +
                                              llvm::Twine(label) + "'")))
        return failure();
      SmallVector<int64_t> positions;
      for (int64_t i = 0; i < size; ++i)
        positions.push_back(i * step);
      term.value =
          g.takeAlongAxis(g.reshape(g.transpose(term.value, perm), merged),
                          merged.size() - 1, positions);
      term.labels = labels + label;
      at = static_cast<size_t>(-1); // the next repeated label, from 0
    }
  }
  for (char label : output)
    if (llvm::count(output, label) != 1 ||
        llvm::none_of(terms, [&](const EinsumTerm &term) {
          return StringRef(term.labels).contains(label);
        }))
      return g.fail("equation '" + equation + "' has a bad output");

  EinsumTerm result = terms.front();
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string keep = output;
    for (size_t j = i + 1; j < terms.size(); ++j)
      keep += terms[j].labels;
    ASSIGN_OR_FAIL(next, contractPair(g, result, terms[i], keep));
    result = next;
  }
  result = sumOut(g, result, output);
  SmallVector<int64_t> perm;
  for (char label : output)
    perm.push_back(result.labels.find(label));
  g.setOutput(0, g.transpose(result.value, perm));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

static LogicalResult convertReshape(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  SmallVector<int64_t> shape;
  if (g.opset < 5) {
    shape = g.getInts("shape").value_or(SmallVector<int64_t>());
  } else {
    ASSIGN_OR_FAIL(requested, g.requireConstantInts(1, "shape"));
    shape = requested;
  }
  ArrayRef<int64_t> inputShape = Importer::getType(x).getShape();
  bool allowZero = g.getBool("allowzero", false);
  int64_t inferred = -1, known = 1;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (dim == 0 && !allowZero) {
      if (i >= inputShape.size())
        return g.fail("shape copies dimension " + llvm::Twine(i) +
                      ", which the input does not have");
      dim = inputShape[i];
    }
    if (dim == -1) {
      if (inferred >= 0)
        return g.fail("shape has more than one -1");
      inferred = i;
      continue;
    }
    if (dim < 0)
      return g.fail("shape has a negative dimension " + llvm::Twine(dim));
    std::optional<int64_t> grown = llvm::checkedMul(known, dim);
    if (!grown)
      return g.fail("shape has more elements than an int64 counts");
    known = *grown;
  }
  int64_t count = product(inputShape);
  if (inferred >= 0) {
    if (known == 0 || count % known)
      return g.fail("cannot infer the -1 dimension");
    shape[inferred] = count / known;
  } else if (known != count) {
    return g.fail("cannot reshape " + llvm::Twine(count) + " elements to " +
                  llvm::Twine(known));
  }
  g.setOutput(0, g.reshape(x, shape));
  return success();
}

static LogicalResult convertTranspose(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  int64_t rank = Importer::getType(x).getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> attr = g.getInts("perm"))
    perm = *attr;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if (!llvm::equal(sorted, llvm::seq<int64_t>(0, rank)))
    return g.fail("perm is not a permutation of the " + llvm::Twine(rank) +
                  " dimensions");
  g.setOutput(0, g.transpose(x, perm));
  return success();
}

static LogicalResult convertSqueeze(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  ASSIGN_OR_FAIL(axes, g.getAxes(1, "axes"));
  SmallVector<int64_t> dims;
  for (int64_t axis : axes.value_or(SmallVector<int64_t>())) {
    ASSIGN_OR_FAIL(dim, g.normalizeAxis(axis, shape.size()));
    if (shape[dim] != 1)
      return g.fail("cannot squeeze dimension " + llvm::Twine(dim) +
                    " of size " + llvm::Twine(shape[dim]));
    dims.push_back(dim);
  }
  SmallVector<int64_t> result;
  for (auto [i, dim] : llvm::enumerate(shape))
    if (axes ? !llvm::is_contained(dims, int64_t(i)) : dim != 1)
      result.push_back(dim);
  g.setOutput(0, g.reshape(x, result));
  return success();
}

static LogicalResult convertUnsqueeze(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  ASSIGN_OR_FAIL(axes, g.getAxes(1, "axes"));
  if (!axes)
    return g.fail("axes are missing");
  int64_t rank = shape.size() + axes->size();
  SmallVector<int64_t> result(rank, -1);
  for (int64_t axis : *axes) {
    ASSIGN_OR_FAIL(dim, g.normalizeAxis(axis, rank));
    if (result[dim] == 1)
      return g.fail("axis " + llvm::Twine(axis) + " is repeated");
    result[dim] = 1;
  }
  auto it = shape.begin();
  for (int64_t &dim : result)
    if (dim == -1)
      dim = *it++;
  g.setOutput(0, g.reshape(x, result));
  return success();
}

static LogicalResult convertFlatten(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  int64_t rank = shape.size(), axis = g.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return g.fail("axis " + llvm::Twine(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  g.setOutput(0, g.reshape(x, {product(shape.take_front(axis)),
                               product(shape.drop_front(axis))}));
  return success();
}

/// DepthToSpace and SpaceToDepth (modes DCR and CRD; SpaceToDepth's from
/// opset 28 on) on [N, C, H, W]: a reshape, a transpose and a reshape.
static LogicalResult convertDepthSpace(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() != 4)
    return g.fail("expects a tensor of rank 4 (N, C, H, W)");
  ASSIGN_OR_FAIL(b, g.requireInt("blocksize"));
  if (b <= 0)
    return g.fail("blocksize must be positive");
  auto dims = type.getShape();
  int64_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
  if (g.getNode().op_type() == "SpaceToDepth") {
    if (h % b || w % b)
      return g.fail("blocksize " + llvm::Twine(b) +
                    " does not divide the height and width");
    // SpaceToDepth-28's CRD mode keeps each channel's block together.
    bool crd =
        g.opset >= 28 && g.getString("mode", "DCR", {"DCR", "CRD"}) == "CRD";
    Value split = g.reshape(x, {n, c, h / b, b, w / b, b});
    Value moved = crd ? g.transpose(split, {0, 1, 3, 5, 2, 4})
                      : g.transpose(split, {0, 3, 5, 1, 2, 4});
    g.setOutput(0, g.reshape(moved, {n, c * b * b, h / b, w / b}));
    return success();
  }
  if (c % (b * b))
    return g.fail("blocksize^2 = " + llvm::Twine(b * b) +
                  " does not divide the channels");
  bool crd =
      g.opset >= 11 && g.getString("mode", "DCR", {"DCR", "CRD"}) == "CRD";
  Value split = crd ? g.reshape(x, {n, c / (b * b), b, b, h, w})
                    : g.reshape(x, {n, b, b, c / (b * b), h, w});
  Value moved = crd ? g.transpose(split, {0, 1, 4, 2, 5, 3})
                    : g.transpose(split, {0, 3, 4, 1, 5, 2});
  g.setOutput(0, g.reshape(moved, {n, c / (b * b), h * b, w * b}));
  return success();
}

static LogicalResult convertConcat(Importer &g) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < g.getNumInputs(); ++i) {
    ASSIGN_OR_FAIL(x, g.requireInput(i));
    inputs.push_back(x);
  }
  if (inputs.empty())
    return g.fail("Concat needs at least one input");
  RankedTensorType type = Importer::getType(inputs.front());
  // Concat-1's axis defaults to 1; from Concat-4 on, it is required.
  int64_t axisValue = 1;
  if (g.opset < 4) {
    axisValue = g.getInt("axis", 1);
  } else {
    ASSIGN_OR_FAIL(required, g.requireInt("axis"));
    axisValue = required;
  }
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(axisValue, type.getRank()));
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = 0;
  for (Value input : inputs) {
    RankedTensorType other = Importer::getType(input);
    if (other.getRank() != type.getRank() ||
        other.getElementType() != type.getElementType())
      return g.fail("inputs differ in rank or element type");
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (i != axis && other.getDimSize(i) != type.getDimSize(i))
        return g.fail("inputs differ in a dimension other than the axis");
    shape[axis] += other.getDimSize(axis);
  }
  g.setOutput(0, inputs.size() == 1
                     ? inputs.front()
                     : g.create<tg::ConcatOp>(type.clone(shape), inputs, axis));
  return success();
}

/// The part [start, start + size) of `x` along `axis`.
static Value sliceAxis(Importer &g, Value x, int64_t axis, int64_t start,
                       int64_t size) {
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  SmallVector<int64_t> starts(shape.size(), 0), limits(shape),
      strides(shape.size(), 1);
  starts[axis] = start;
  limits[axis] = start + size;
  return g.slice(x, starts, limits, strides);
}

static LogicalResult convertSplit(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", 0), shape.size()));
  int64_t outputs = g.getNumOutputs();
  SmallVector<int64_t> sizes;
  bool explicitSizes = true;
  if (g.input(1)) {
    ASSIGN_OR_FAIL(split, g.requireConstantInts(1, "split"));
    sizes = split;
  } else if (std::optional<SmallVector<int64_t>> split = g.getInts("split")) {
    sizes = *split;
  } else {
    explicitSizes = false;
    int64_t parts = g.getInt("num_outputs", outputs);
    if (parts <= 0 || parts != outputs)
      return g.fail("num_outputs does not match the outputs");
    int64_t chunk = (shape[axis] + parts - 1) / parts;
    if (g.opset < 18 && shape[axis] % parts)
      return g.fail("dimension " + llvm::Twine(shape[axis]) +
                    " does not split evenly in " + llvm::Twine(parts));
    for (int64_t i = 0, left = shape[axis]; i < parts; ++i) {
      sizes.push_back(std::min(chunk, left));
      left -= sizes.back();
    }
  }
  if (failed(checkHitSplit(g, x, axis, explicitSizes, sizes)))
    return failure();
  if (int64_t(sizes.size()) != outputs ||
      llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != shape[axis])
    return g.fail("split sizes do not add up to dimension " +
                  llvm::Twine(shape[axis]) + " in " + llvm::Twine(outputs) +
                  " outputs");
  int64_t start = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    g.setOutput(i, sliceAxis(g, x, axis, start, size));
    start += size;
  }
  return success();
}

// SplitToSequence-11: Split's sizes (a scalar: chunks of that size, the
// last one smaller; none: pieces of size 1, the axis dropped unless
// keepdims), the pieces kept as a sequence for SequenceAt.
static LogicalResult convertSplitToSequence(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  if (shape.empty())
    return g.fail("cannot split a scalar");
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", 0), shape.size()));
  SmallVector<int64_t> sizes;
  bool keepAxis = true;
  // Each piece is a tensor of the import: a sequence of millions (a
  // hostile dimension split by 1) would exhaust memory.
  constexpr int64_t kMaxPieces = int64_t(1) << 16;
  auto tooMany = [&](int64_t pieces) {
    return g.fail("splitting into " + llvm::Twine(pieces) +
                  " tensors: a sequence holds at most " +
                  llvm::Twine(kMaxPieces));
  };
  if (g.input(1)) {
    ASSIGN_OR_FAIL(split, g.requireConstantInts(1, "split"));
    if (Importer::getType(g.input(1)).getRank() == 0) {
      if (split[0] <= 0)
        return g.fail("split size " + llvm::Twine(split[0]) +
                      " is not positive");
      if (shape[axis] / split[0] >= kMaxPieces)
        return tooMany(shape[axis] / split[0] + 1);
      for (int64_t left = shape[axis]; left > 0; left -= split[0])
        sizes.push_back(std::min(split[0], left));
    } else {
      sizes = split;
    }
  } else {
    if (shape[axis] > kMaxPieces)
      return tooMany(shape[axis]);
    sizes.assign(shape[axis], 1);
    keepAxis = g.getBool("keepdims", true);
  }
  if (int64_t(sizes.size()) > kMaxPieces)
    return tooMany(sizes.size());
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != shape[axis])
    return g.fail("split sizes do not add up to dimension " +
                  llvm::Twine(shape[axis]));
  SmallVector<Value> pieces;
  int64_t start = 0;
  for (int64_t size : sizes) {
    Value piece = sliceAxis(g, x, axis, start, size);
    if (!keepAxis) {
      SmallVector<int64_t> squeezed(shape);
      squeezed.erase(squeezed.begin() + axis);
      piece = g.reshape(piece, squeezed);
    }
    pieces.push_back(piece);
    start += size;
  }
  g.setSequenceOutput(0, pieces);
  return success();
}

// SequenceAt-11: the tensor at a constant position (negative from the end).
/// A sequence position (input `index`, a constant scalar; negative from
/// the end) in [0, size) (or [0, size] where `end` is allowed, for
/// inserting).
static FailureOr<int64_t> getSequencePosition(Importer &g, unsigned index,
                                              int64_t size, bool end) {
  ASSIGN_OR_FAIL(position, g.requireConstantInts(index, "position"));
  if (position.size() != 1)
    return (void)g.fail("position must be a scalar"), failure();
  int64_t at = position[0] < 0 ? position[0] + size : position[0];
  if (at < 0 || at > size || (at == size && !end))
    return (void)g.fail("position " + llvm::Twine(position[0]) +
                        " is out of range for a sequence of " +
                        llvm::Twine(size) + " tensors"),
           failure();
  return at;
}

static LogicalResult convertSequenceAt(Importer &g) {
  ASSIGN_OR_FAIL(sequence, g.requireSequenceInput(0));
  ASSIGN_OR_FAIL(at, getSequencePosition(g, 1, sequence.size(), false));
  g.setOutput(0, sequence[at]);
  return success();
}

// Sequences are lists of the step's tensors at import (see
// setSequenceOutput): SequenceConstruct, SequenceEmpty, SequenceInsert and
// SequenceErase (positions known at import) edit the list; SequenceLength
// is a constant; ConcatFromSequence concatenates or stacks it.
static LogicalResult convertSequenceConstruct(Importer &g) {
  SmallVector<Value> tensors;
  for (unsigned i = 0; i < g.getNumInputs(); ++i) {
    ASSIGN_OR_FAIL(tensor, g.requireInput(i));
    if (!tensors.empty() &&
        Importer::getType(tensor).getElementType() !=
            Importer::getType(tensors.front()).getElementType())
      return g.fail("the tensors of a sequence must have one element type");
    tensors.push_back(tensor);
  }
  g.setSequenceOutput(0, tensors);
  return success();
}

static LogicalResult convertSequenceEmpty(Importer &g) {
  g.setSequenceOutput(0, {});
  return success();
}

static LogicalResult convertSequenceInsert(Importer &g) {
  ASSIGN_OR_FAIL(sequence, g.requireSequenceInput(0));
  ASSIGN_OR_FAIL(tensor, g.requireInput(1));
  SmallVector<Value> tensors(sequence.begin(), sequence.end());
  if (!tensors.empty() &&
      Importer::getType(tensor).getElementType() !=
          Importer::getType(tensors.front()).getElementType())
    return g.fail("the tensor's element type is not the sequence's");
  int64_t at = tensors.size();
  if (g.input(2)) {
    ASSIGN_OR_FAIL(position, getSequencePosition(g, 2, tensors.size(), true));
    at = position;
  }
  tensors.insert(tensors.begin() + at, tensor);
  g.setSequenceOutput(0, tensors);
  return success();
}

static LogicalResult convertSequenceErase(Importer &g) {
  ASSIGN_OR_FAIL(sequence, g.requireSequenceInput(0));
  SmallVector<Value> tensors(sequence.begin(), sequence.end());
  if (tensors.empty())
    return g.fail("cannot erase from an empty sequence");
  int64_t at = tensors.size() - 1;
  if (g.input(1)) {
    ASSIGN_OR_FAIL(position, getSequencePosition(g, 1, tensors.size(), false));
    at = position;
  }
  tensors.erase(tensors.begin() + at);
  g.setSequenceOutput(0, tensors);
  return success();
}

static LogicalResult convertSequenceLength(Importer &g) {
  ASSIGN_OR_FAIL(sequence, g.requireSequenceInput(0));
  g.setOutput(
      0, g.constantInts({int64_t(sequence.size())},
                        RankedTensorType::get({}, g.builder.getI64Type())));
  return success();
}

// ConcatFromSequence-11: the tensors concatenated along `axis`, or stacked
// along a new one (`new_axis`).
static LogicalResult convertConcatFromSequence(Importer &g) {
  ASSIGN_OR_FAIL(sequence, g.requireSequenceInput(0));
  if (sequence.empty())
    return g.fail("cannot concatenate an empty sequence");
  ASSIGN_OR_FAIL(axisValue, g.requireInt("axis"));
  bool newAxis = g.getBool("new_axis", false);
  RankedTensorType first = Importer::getType(sequence.front());
  int64_t rank = first.getRank() + (newAxis ? 1 : 0);
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(axisValue, rank));
  SmallVector<Value> parts;
  SmallVector<int64_t> shape;
  for (Value tensor : sequence) {
    RankedTensorType type = Importer::getType(tensor);
    if (type.getElementType() != first.getElementType())
      return g.fail("the sequence's tensors have different element types");
    if (type.getRank() != first.getRank() || rank == 0)
      return g.fail("the sequence's tensors have different ranks");
    SmallVector<int64_t> partShape(type.getShape());
    if (newAxis)
      partShape.insert(partShape.begin() + axis, 1);
    if (shape.empty()) {
      shape = partShape;
    } else {
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && partShape[d] != shape[d])
          return g.fail("the sequence's tensors differ in dimension " +
                        llvm::Twine(d));
      shape[axis] += partShape[axis];
    }
    parts.push_back(g.reshape(tensor, partShape));
  }
  g.setOutput(0, parts.size() == 1
                     ? parts.front()
                     : g.create<tg::ConcatOp>(first.clone(shape), parts, axis));
  return success();
}

FailureOr<SmallVector<SliceAxis>>
onnx_import::getSliceAxes(Importer &g, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> starts, ends, axes, steps;
  if (g.opset < 10) {
    std::optional<SmallVector<int64_t>> s = g.getInts("starts"),
                                        e = g.getInts("ends");
    if (!s || !e) {
      if (!g.hadError())
        (void)g.fail(
            "attributes 'starts' and 'ends' are required before opset 10");
      return failure();
    }
    starts = *s;
    ends = *e;
    axes = g.getInts("axes").value_or(SmallVector<int64_t>());
  } else {
    ASSIGN_OR_FAIL(s, g.requireConstantInts(1, "starts"));
    ASSIGN_OR_FAIL(e, g.requireConstantInts(2, "ends"));
    starts = s;
    ends = e;
    if (g.input(3)) {
      ASSIGN_OR_FAIL(a, g.requireConstantInts(3, "axes"));
      axes = a;
    }
    if (g.input(4)) {
      ASSIGN_OR_FAIL(st, g.requireConstantInts(4, "steps"));
      steps = st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return (void)g.fail("starts, ends, axes and steps differ in length"),
           failure();
  int64_t rank = shape.size();
  SmallVector<bool> seen(rank, false);
  SmallVector<SliceAxis> result;
  for (auto [start, end, axis, step] : llvm::zip(starts, ends, axes, steps)) {
    ASSIGN_OR_FAIL(dim, g.normalizeAxis(axis, rank));
    if (seen[dim])
      return (void)g.fail("axis " + llvm::Twine(axis) + " is repeated"),
             failure();
    seen[dim] = true;
    if (step == 0)
      return (void)g.fail("a step is 0"), failure();
    int64_t size = shape[dim];
    if (step < 0) {
      // Backwards from start (clamped to [0, size - 1]) while above end
      // (clamped to [-1, size - 1]); nothing of an empty dimension.
      int64_t first = 0, last = 0;
      if (size > 0) {
        first =
            std::clamp<int64_t>(start < 0 ? start + size : start, 0, size - 1);
        last = std::clamp<int64_t>(end < 0 ? end + size : end, -1, size - 1);
      }
      result.push_back({dim, first, last, step});
      continue;
    }
    auto clamp = [&](int64_t v) {
      if (v < 0)
        v = v < -size ? 0 : v + size;
      return std::min(v, size);
    };
    int64_t begin = clamp(start);
    result.push_back({dim, begin, std::max(begin, clamp(end)), step});
  }
  return result;
}

static LogicalResult convertSlice(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  ASSIGN_OR_FAIL(sliceAxes, getSliceAxes(g, shape));
  int64_t rank = shape.size();
  SmallVector<int64_t> begin(rank, 0), limit(shape), stride(rank, 1);
  std::map<int64_t, SmallVector<int64_t>> reversed;
  for (const SliceAxis &axis : sliceAxes) {
    if (axis.step > 0) {
      begin[axis.dim] = axis.begin;
      limit[axis.dim] = axis.limit;
      stride[axis.dim] = axis.step;
      continue;
    }
    // The positions of a negative step, taken after the positive-step
    // slice of the other axes. begin - limit <= size: the count, rounded
    // up, cannot overflow.
    if (axis.begin > axis.limit &&
        failed(g.checkIndexLength(
            (axis.begin - axis.limit - 1) /
                    (axis.step == INT64_MIN ? INT64_MAX : -axis.step) +
                1,
            "the slice of axis " + llvm::Twine(axis.dim))))
      return failure();
    SmallVector<int64_t> &positions = reversed[axis.dim];
    // begin >= 0 and step >= INT64_MIN: i + step cannot overflow.
    for (int64_t i = axis.begin; i > axis.limit; i += axis.step)
      positions.push_back(i);
  }
  Value result = g.slice(x, begin, limit, stride);
  for (auto &[dim, positions] : reversed)
    result = g.takeAlongAxis(result, dim, positions);
  g.setOutput(0, result);
  return success();
}

static LogicalResult convertExpand(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(shape, g.requireConstantInts(1, "shape"));
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return g.fail("shape has a negative dimension");
  // Expand broadcasts both ways: the result is the broadcast of the shapes.
  SmallVector<int64_t> resultShape(shape);
  ArrayRef<int64_t> inputShape = Importer::getType(x).getShape();
  if (inputShape.size() > resultShape.size())
    resultShape.insert(resultShape.begin(),
                       inputShape.size() - resultShape.size(), 1);
  size_t offset = resultShape.size() - inputShape.size();
  for (auto [i, dim] : llvm::enumerate(inputShape)) {
    int64_t &out = resultShape[offset + i];
    if (out != dim && out != 1 && dim != 1)
      return g.fail("cannot expand " + llvm::Twine(dim) + " to " +
                    llvm::Twine(out) + " in dimension " +
                    llvm::Twine(offset + i));
    out = out == 1 ? dim : out;
  }
  if (span(resultShape) > kMaxImportElements)
    return g.fail("the expanded tensor is too large");
  g.setOutput(0, g.broadcastTo(x, resultShape));
  return success();
}

static LogicalResult convertShape(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ArrayRef<int64_t> shape = Importer::getType(x).getShape();
  int64_t rank = shape.size();
  auto clamp = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t start = clamp(g.getInt("start", 0));
  int64_t end = std::max(start, clamp(g.getInt("end", rank)));
  ArrayRef<int64_t> dims = shape.slice(start, end - start);
  g.setOutput(
      0, g.constantInts(dims, RankedTensorType::get({int64_t(dims.size())},
                                                    g.builder.getI64Type())));
  return success();
}

static LogicalResult convertSize(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  g.setOutput(
      0, g.constantInts({Importer::getType(x).getNumElements()},
                        RankedTensorType::get({}, g.builder.getI64Type())));
  return success();
}

static LogicalResult convertConstant(Importer &g) {
  MLIRContext &context = *g.builder.getContext();
  const onnx::NodeProto &node = g.getNode();
  if (node.attribute_size() != 1)
    return g.fail("expects exactly one value attribute");
  const onnx::AttributeProto &a = node.attribute(0);
  auto ints = [&](ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
    return g.constantInts(values,
                          RankedTensorType::get(shape, g.builder.getI64Type()));
  };
  auto floats = [&](ArrayRef<float> values, ArrayRef<int64_t> shape) {
    SmallVector<double> wide(values.begin(), values.end());
    return g.constant(RankedTensorType::get(shape, g.builder.getF32Type()),
                      wide);
  };
  using Attr = onnx::AttributeProto;
  auto typed = [&](Attr::AttributeType type) {
    return g.attribute(a.name(), type) != nullptr;
  };
  Value value;
  if (a.name() == "value") {
    if (!typed(Attr::TENSOR))
      return failure();
    llvm::Expected<Tensor> tensor =
        decodeTensorProto(context, a.t(), g.baseDirectory);
    if (!tensor)
      return g.fail("value: " + llvm::toString(tensor.takeError()));
    value = g.constant(std::move(*tensor));
  } else if (a.name() == "value_float") {
    if (!typed(Attr::FLOAT))
      return failure();
    value = floats({a.f()}, {});
  } else if (a.name() == "value_floats") {
    if (!typed(Attr::FLOATS))
      return failure();
    SmallVector<float> values(a.floats().begin(), a.floats().end());
    value = floats(values, {int64_t(values.size())});
  } else if (a.name() == "value_int") {
    if (!typed(Attr::INT))
      return failure();
    value = ints({a.i()}, {});
  } else if (a.name() == "value_ints") {
    if (!typed(Attr::INTS))
      return failure();
    SmallVector<int64_t> values(a.ints().begin(), a.ints().end());
    value = ints(values, {int64_t(values.size())});
  } else {
    return g.fail("a constant '" + printableName(a.name()) +
                  "' is not supported (strings and sparse tensors have no "
                  "tg equivalent)");
  }
  g.setOutput(0, value);
  return success();
}

static LogicalResult convertConstantOfShape(Importer &g) {
  ASSIGN_OR_FAIL(shape, g.requireConstantInts(0, "shape"));
  for (int64_t dim : shape)
    if (dim < 0)
      return g.fail("shape has a negative dimension");
  // A splat is a scalar broadcast: past the fold limit it is computed at
  // run time (light_vgg19's weights are ConstantOfShape nodes of 10^8).
  if (span(shape) > kMaxImportElements)
    return g.fail("the constant is too large");
  Type elementType = g.builder.getF32Type();
  double fill = 0.0;
  if (const onnx::TensorProto *value = g.getTensor("value")) {
    llvm::Expected<Tensor> tensor =
        decodeTensorProto(*g.builder.getContext(), *value, g.baseDirectory);
    if (!tensor)
      return g.fail("value: " + llvm::toString(tensor.takeError()));
    if (tensor->getNumElements() != 1)
      return g.fail("value must hold one element");
    elementType = tensor->getElementType();
    // An integer fill stays exact (a double holds integers up to 2^53).
    if (tensor->isIntStorage()) {
      Value scalar =
          g.constant(tensor->withType(RankedTensorType::get({}, elementType)));
      g.setOutput(0, g.broadcastTo(scalar, shape));
      return success();
    }
    fill = tensor->getAsDouble(0);
  }
  g.setOutput(0, g.splat(RankedTensorType::get(shape, elementType), fill));
  return success();
}

static LogicalResult convertRange(Importer &g) {
  ASSIGN_OR_FAIL(startValue, g.requireInput(0));
  ASSIGN_OR_FAIL(start, g.requireConstantScalar(0, "start"));
  ASSIGN_OR_FAIL(limit, g.requireConstantScalar(1, "limit"));
  ASSIGN_OR_FAIL(delta, g.requireConstantScalar(2, "delta"));
  if (delta == 0.0)
    return g.fail("delta is 0");
  // Range-27's stash_type: the precision of an f16 or bf16 range's
  // arithmetic, f32 or f64. Both are computed as here: each element once,
  // start + i * delta in f64, rounded to the type.
  if (g.opset >= 27 && failed(getStashType(g)))
    return failure();
  double steps = std::ceil((limit - start) / delta);
  if (!(steps < double(kMaxFoldElements)))
    return g.fail("the range is too long");
  // Not int64_t(steps) first: steps may be -inf.
  int64_t count = steps > 0 ? int64_t(steps) : 0;
  Type elementType = Importer::getType(startValue).getElementType();
  // Integer ranges are computed in doubles, exact up to 2^53 (2^62 and
  // 2^62 + 3 are the same double: the range would be empty).
  if (isa<IntegerType>(elementType) &&
      !(std::abs(start) <= 0x1p53 && std::abs(limit) <= 0x1p53 &&
        std::abs(delta) <= 0x1p53))
    return g.fail("an integer range beyond 2^53 in magnitude is not "
                  "supported");
  SmallVector<double> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(start + double(i) * delta);
  g.setOutput(0,
              g.constant(RankedTensorType::get({count}, elementType), values));
  return success();
}

static LogicalResult convertTrilu(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() < 2)
    return g.fail("expects a tensor of rank >= 2");
  int64_t k = 0;
  if (g.input(1)) {
    ASSIGN_OR_FAIL(kValue, g.requireConstantScalar(1, "k"));
    if (!(kValue == std::floor(kValue)))
      return g.fail("k must be an integer");
    // Saturated: a diagonal beyond the matrix keeps all or nothing.
    k = toInt64Saturating(kValue);
  }
  bool upper = g.getBool("upper", true);
  int64_t rows = type.getDimSize(type.getRank() - 2),
          cols = type.getDimSize(type.getRank() - 1);
  if (rows > kMaxFoldElements || cols > kMaxFoldElements)
    return g.fail("a matrix of " + llvm::Twine(rows) + "x" + llvm::Twine(cols) +
                  " has more rows or columns than the " +
                  "importer's limit of " + llvm::Twine(kMaxFoldElements));
  // The mask from the row and column indices (j - i against k), not as
  // rows x cols host values: folded when small, computed at run time past
  // the folding limit.
  auto indexType = g.builder.getI64Type();
  SmallVector<double> rowIds, colIds;
  for (int64_t i = 0; i < rows; ++i)
    rowIds.push_back(double(i));
  for (int64_t j = 0; j < cols; ++j)
    colIds.push_back(double(j));
  auto maskType = RankedTensorType::get({rows, cols}, indexType);
  Value rowIndex = g.broadcastTo(
      g.constant(RankedTensorType::get({rows, 1}, indexType), rowIds),
      maskType.getShape());
  Value colIndex = g.broadcastTo(
      g.constant(RankedTensorType::get({1, cols}, indexType), colIds),
      maskType.getShape());
  Value diagonal = g.create<tg::SubOp>(maskType, colIndex, rowIndex);
  Value keep =
      compare(g, upper ? tg::CompareDirection::GE : tg::CompareDirection::LE,
              diagonal, g.splat(maskType, double(k)));
  g.setOutput(
      0, select(g, g.broadcastTo(keep, type.getShape()), x, g.splat(type, 0)));
  return success();
}

FailureOr<Value> onnx_import::gatherAxis(Importer &g, Value data, Value indices,
                                         int64_t axis) {
  RankedTensorType type = Importer::getType(data);
  RankedTensorType indexType = Importer::getType(indices);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t size = shape[axis];
  SmallVector<int64_t> resultShape(shape.take_front(axis));
  llvm::append_range(resultShape, indexType.getShape());
  llvm::append_range(resultShape, shape.drop_front(axis + 1));

  const Tensor *constantIndices = g.getConstant(indices);
  SmallVector<int64_t> wrapped;
  if (constantIndices)
    for (int64_t index : constantIndices->ints()) {
      if (index < -size || index >= size) {
        g.emitNodeError() << "index " << index << " is out of range [" << -size
                          << ", " << size << ")";
        return failure();
      }
      wrapped.push_back(index < 0 ? index + size : index);
    }
  // A few constant indices into a computed tensor: slices, which later
  // passes see through (views, the raising of split heads).
  if (constantIndices && !g.getConstant(data) && wrapped.size() <= 16) {
    SmallVector<Value> parts;
    for (int64_t index : wrapped)
      parts.push_back(sliceAxis(g, data, axis, index, 1));
    Value gathered;
    if (parts.empty()) {
      SmallVector<int64_t> emptyShape(shape);
      emptyShape[axis] = 0;
      gathered = g.splat(type.clone(emptyShape), 0);
    } else if (parts.size() == 1) {
      gathered = parts.front();
    } else {
      SmallVector<int64_t> concatShape(shape);
      concatShape[axis] = parts.size();
      gathered = g.create<tg::ConcatOp>(type.clone(concatShape), parts, axis);
    }
    return g.reshape(gathered, resultShape);
  }
  // Any other: the rows of the data with `axis` moved first.
  Value ids =
      constantIndices
          ? g.constantInts(wrapped, indexType.clone(g.builder.getI64Type()))
          : wrapNegativeIndices(g, indices, size);
  SmallVector<int64_t> perm{axis};
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i != axis)
      perm.push_back(i);
  Value rows = g.takeRows(g.transpose(data, perm), ids);
  // [indices..., data before axis, data after] -> [before, indices..., after].
  int64_t indexRank = indexType.getRank();
  SmallVector<int64_t> order;
  for (int64_t i = 0; i < axis; ++i)
    order.push_back(indexRank + i);
  for (int64_t i = 0; i < indexRank; ++i)
    order.push_back(i);
  for (int64_t i = axis + 1; i < type.getRank(); ++i)
    order.push_back(indexRank + i - 1);
  return g.transpose(rows, order);
}

/// Gather along `axis` (gatherAxis).
static LogicalResult convertGather(Importer &g) {
  ASSIGN_OR_FAIL(data, g.requireInput(0));
  ASSIGN_OR_FAIL(indices, g.requireInput(1));
  RankedTensorType type = Importer::getType(data);
  if (type.getRank() == 0)
    return g.fail("cannot gather from a scalar");
  if (!isa<IntegerType>(Importer::getType(indices).getElementType()) ||
      isBool(indices))
    return g.fail("indices must be integers");
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", 0), type.getRank()));
  ASSIGN_OR_FAIL(gathered, gatherAxis(g, data, indices, axis));
  // nn.Embedding(padding_idx=p) in the dynamo exporter's FX node: row p of
  // the table gets no gradient, as in PyTorch.
  std::optional<int64_t> padding = getEmbeddingPaddingIdx(g.getNode());
  if (padding && axis == 0 && type.getRank() == 2 &&
      isa<FloatType>(type.getElementType())) {
    Operation *op = gathered.getDefiningOp();
    while (isa_and_nonnull<tg::ReshapeOp, tg::TransposeOp>(op))
      op = op->getOperand(0).getDefiningOp();
    // Metadata that disagrees with the graph is not followed.
    if (*padding >= type.getDimSize(0))
      emitWarning(g.getLoc())
          << "the FX node's padding_idx " << *padding << " is not a row of the "
          << type.getDimSize(0) << "-row table: not followed";
    else if (auto lookup = dyn_cast_or_null<tg::EmbeddingOp>(op)) {
      lookup.setPaddingIdx(*padding);
      emitRemark(g.getLoc())
          << "nn.Embedding's padding_idx " << *padding
          << " (the FX node's): that row of the table gets no gradient, as "
             "in PyTorch";
    }
  }
  g.setOutput(0, gathered);
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// NegativeLogLikelihoodLoss on `logProbs` (N x C x d...) and `labels`
/// (N x d...), with optional class weights: the loss output of both NLL and
/// SoftmaxCrossEntropyLoss, composed of elementwise ops and reductions.
static FailureOr<Value> buildNllLoss(Importer &g, Value logProbs, Value labels,
                                     Value weights, StringRef reduction) {
  RankedTensorType type = Importer::getType(logProbs);
  RankedTensorType labelType = Importer::getType(labels);
  int64_t rank = type.getRank();
  if (rank < 2 || labelType.getRank() != rank - 1 ||
      labelType.getDimSize(0) != type.getDimSize(0))
    return (void)g.fail("expects N x C x d... scores and N x d... labels"),
           failure();
  for (int64_t i = 1; i < labelType.getRank(); ++i)
    if (labelType.getDimSize(i) != type.getDimSize(i + 1))
      return (void)g.fail("labels do not match the scores"), failure();
  if (!isa<IntegerType>(labelType.getElementType()) || isBool(labels))
    return (void)g.fail("labels must be integers"), failure();
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return (void)g.fail("unknown reduction '" + reduction + "'"), failure();
  int64_t classes = type.getDimSize(1);
  // Classes last.
  SmallVector<int64_t> perm{0};
  for (int64_t i = 2; i < rank; ++i)
    perm.push_back(i);
  perm.push_back(1);
  Value scores = g.transpose(logProbs, perm);
  RankedTensorType scoresType = Importer::getType(scores);
  SmallVector<int64_t> labelDims;
  for (int64_t i = 0; i < rank - 1; ++i)
    labelDims.push_back(i);
  Value wideLabels = g.create<tg::BroadcastInDimOp>(
      scoresType.clone(labelType.getElementType()), labels, labelDims);
  if (classes > kMaxFoldElements)
    return g.fail(llvm::Twine(classes) +
                  " classes are more than the importer's limit of " +
                  llvm::Twine(kMaxFoldElements));
  SmallVector<double> classIds;
  for (int64_t c = 0; c < classes; ++c)
    classIds.push_back(c);
  Value iota = g.broadcastTo(
      g.constant(RankedTensorType::get({classes}, labelType.getElementType()),
                 classIds),
      scoresType.getShape());
  Value onehot = compare(g, tg::CompareDirection::EQ, wideLabels, iota);
  Value picked = g.reduce(tg::ReduceKind::Sum,
                          select(g, onehot, scores, g.splat(scoresType, 0)),
                          {rank - 1}, false);
  RankedTensorType lossType = Importer::getType(picked);
  Value loss = g.create<tg::NegOp>(lossType, picked);
  Value valid;
  if (std::optional<int64_t> ignore = g.getOptionalInt("ignore_index")) {
    valid = compare(g, tg::CompareDirection::NE, labels,
                    g.splat(labelType, *ignore));
  }
  Value weight;
  if (weights) {
    RankedTensorType weightType = Importer::getType(weights);
    if (weightType.getRank() != 1 || weightType.getDimSize(0) != classes ||
        weightType.getElementType() != type.getElementType())
      return (void)g.fail("weights must be a vector of C scores"), failure();
    Value safeLabels =
        valid ? select(g, valid, labels, g.splat(labelType, 0)) : labels;
    // Out-of-range labels are the user's error; the interpreter reports it.
    Value rows = g.create<tg::EmbeddingOp>(
        RankedTensorType::get({product(labelType.getShape()), 1},
                              type.getElementType()),
        g.reshape(weights, {classes, 1}),
        g.reshape(safeLabels, {product(labelType.getShape())}));
    weight = g.reshape(rows, lossType.getShape());
  }
  if (valid) {
    Value zero = g.splat(lossType, 0);
    weight = select(g, valid, weight ? weight : g.splat(lossType, 1), zero);
  }
  if (weight)
    loss = buildBinary<tg::MulOp>(g, loss, weight);
  if (reduction == "none")
    return loss;
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < lossType.getRank(); ++i)
    all.push_back(i);
  Value total = g.reduce(tg::ReduceKind::Sum, loss, all, false);
  if (reduction == "sum")
    return total;
  if (!weight)
    return g.reduce(tg::ReduceKind::Mean, loss, all, false);
  return buildBinary<tg::DivOp>(
      g, total, g.reduce(tg::ReduceKind::Sum, weight, all, false));
}

static std::string getReduction(Importer &g) {
  return g.getString("reduction", "mean", {"none", "sum", "mean"});
}

static LogicalResult convertNegativeLogLikelihoodLoss(Importer &g) {
  ASSIGN_OR_FAIL(input, g.requireInput(0));
  ASSIGN_OR_FAIL(target, g.requireInput(1));
  if (failed(requireFloat(g, input)))
    return failure();
  ASSIGN_OR_FAIL(loss,
                 buildNllLoss(g, input, target, g.input(2), getReduction(g)));
  g.setOutput(0, loss);
  return success();
}

static LogicalResult convertSoftmaxCrossEntropyLoss(Importer &g) {
  ASSIGN_OR_FAIL(scores, g.requireInput(0));
  ASSIGN_OR_FAIL(labels, g.requireInput(1));
  if (failed(requireFloat(g, scores)))
    return failure();
  RankedTensorType type = Importer::getType(scores);
  if (type.getRank() < 2)
    return g.fail("expects N x C x d... scores");
  std::string reduction = getReduction(g);
  Value weights = g.input(2);
  Value logProbs;
  if (g.hasOutput(1) || weights || reduction == "none" ||
      !type.getElementType().isF32()) {
    logProbs = g.create<tg::LogSoftmaxOp>(type, scores, 1);
    g.setOutput(1, logProbs);
  }
  if (!weights && reduction != "none" && type.getElementType().isF32()) {
    // The fused op: classes last, labels as they are.
    SmallVector<int64_t> perm{0};
    for (int64_t i = 2; i < type.getRank(); ++i)
      perm.push_back(i);
    perm.push_back(1);
    Value logits = g.transpose(scores, perm);
    RankedTensorType labelType = Importer::getType(labels);
    ArrayRef<int64_t> expected =
        Importer::getType(logits).getShape().drop_back();
    if (labelType.getShape() != expected ||
        !isa<IntegerType>(labelType.getElementType()) || isBool(labels))
      return g.fail("labels must be integers of shape N x d...");
    IntegerAttr ignore;
    if (std::optional<int64_t> index = g.getOptionalInt("ignore_index"))
      ignore = g.builder.getI64IntegerAttr(*index);
    RankedTensorType f32 = RankedTensorType::get({}, g.builder.getF32Type());
    SmallVector<Value> results = g.createResults<tg::CrossEntropyOp>(
        TypeRange{f32, RankedTensorType::get(expected, f32.getElementType())},
        reduction == "sum" ? tg::LossReduction::Sum : tg::LossReduction::Mean,
        logits, labels, ignore);
    g.setOutput(0, results[0]);
    return success();
  }
  ASSIGN_OR_FAIL(loss, buildNllLoss(g, logProbs, labels, weights, reduction));
  g.setOutput(0, loss);
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const OpSupport *onnx_import::lookupOp(StringRef opType) {
  using tg::CompareDirection;
  using tg::ReduceKind;
  // {converter, opset that introduced the op, first opset tg implements}.
  // Cast-1 names its target type with a string, Tile-1 takes `tiles` and
  // `axis` inputs: tg refuses them. Other legacy forms are converted (see
  // docs/import.md).
  static const llvm::StringMap<OpSupport> ops = {
      {"Abs", {convertUnary<tg::AbsOp, false>, 1, 1}},
      {"Acos", {convertAcos, 7, 7}},
      {"Acosh", {convertAcosh, 9, 9}},
      {"Add", {convertBinary<tg::AddOp>, 1, 1}},
      {"AffineGrid", {convertAffineGrid, 20, 20}},
      {"And", {convertLogical<0>, 1, 1}},
      {"ArgMax", {convertArgExtreme, 1, 1}},
      {"ArgMin", {convertArgExtreme, 1, 1}},
      {"Asin", {convertAsin, 7, 7}},
      {"Asinh", {convertAsinh, 9, 9}},
      {"Atan", {convertAtan, 7, 7}},
      {"Attention", {convertAttention, 23, 23}},
      {"Atanh", {convertAtanh, 9, 9}},
      {"AveragePool", {convertPool, 1, 1}},
      {"BatchNormalization", {convertBatchNormalization, 1, 1}},
      {"Bernoulli", {convertRandom, 15, 15}},
      {"BitCast", {convertBitCast, 26, 26}},
      {"BitShift", {convertBitShift, 11, 11}},
      {"BitwiseAnd", {convertBitwise<tg::BitwiseKind::And>, 18, 18}},
      {"BitwiseNot", {convertBitwiseNot, 18, 18}},
      {"BitwiseOr", {convertBitwise<tg::BitwiseKind::Or>, 18, 18}},
      {"BitwiseXor", {convertBitwise<tg::BitwiseKind::Xor>, 18, 18}},
      {"BlackmanWindow", {convertBlackmanWindow, 17, 17}},
      {"Cast", {convertCast, 1, 6}},
      {"CastLike", {convertCastLike, 15, 15}},
      {"CausalConvWithState", {convertCausalConvWithState, 27, 27}},
      {"CenterCropPad", {convertCenterCropPad, 18, 18}},
      {"Ceil", {convertCeil, 1, 1}},
      {"Celu", {convertCelu, 12, 12}},
      {"Clip", {convertClip, 1, 1}},
      {"Col2Im", {convertCol2Im, 18, 18}},
      {"Compress", {convertCompress, 9, 9}},
      {"Concat", {convertConcat, 1, 1}},
      {"ConcatFromSequence", {convertConcatFromSequence, 11, 11}},
      {"Constant", {convertConstant, 1, 1}},
      {"ConstantOfShape", {convertConstantOfShape, 9, 9}},
      {"Conv", {convertConv, 1, 1}},
      {"ConvInteger", {convertConvInteger, 10, 10}},
      {"ConvTranspose", {convertConvTranspose, 1, 1}},
      {"Cos", {convertUnary<tg::CosOp>, 7, 7}},
      {"Cosh", {convertCosh, 9, 9}},
      {"CumProd", {convertCumProd, 26, 26}},
      {"CumSum", {convertCumSum, 11, 11}},
      {"DeformConv", {convertDeformConv, 19, 19}},
      {"DepthToSpace", {convertDepthSpace, 1, 1}},
      {"DequantizeLinear", {convertDequantizeLinear, 10, 10}},
      {"Det", {convertDet, 11, 11}},
      {"DFT", {convertDFT, 17, 17}},
      {"Div", {convertBinary<tg::DivOp>, 1, 1}},
      {"Dropout", {convertDropout, 1, 1}},
      {"DynamicQuantizeLinear", {convertDynamicQuantizeLinear, 11, 11}},
      {"Einsum", {convertEinsum, 12, 12}},
      {"Elu", {convertElu, 1, 1}},
      {"Equal", {convertCompare<CompareDirection::EQ>, 1, 1}},
      {"Erf", {convertUnary<tg::ErfOp>, 9, 9}},
      {"Exp", {convertUnary<tg::ExpOp>, 1, 1}},
      {"Expand", {convertExpand, 8, 8}},
      {"EyeLike", {convertEyeLike, 9, 9}},
      {"Flatten", {convertFlatten, 1, 1}},
      {"Floor", {convertFloor, 1, 1}},
      {"Gather", {convertGather, 1, 1}},
      {"GatherElements", {convertGatherElements, 11, 11}},
      {"GatherND", {convertGatherND, 11, 11}},
      {"Gelu", {convertGelu, 20, 20}},
      {"Gemm", {convertGemm, 1, 1}},
      {"GlobalAveragePool", {convertGlobalPool, 1, 1}},
      {"GlobalLpPool", {convertGlobalPool, 1, 1}},
      {"GlobalMaxPool", {convertGlobalPool, 1, 1}},
      {"Greater", {convertCompare<CompareDirection::GT>, 1, 1}},
      {"GreaterOrEqual", {convertCompare<CompareDirection::GE>, 12, 12}},
      {"GridSample", {convertGridSample, 16, 16}},
      {"GRU", {convertGRU, 1, 7}},
      {"HammingWindow", {convertHammingWindow, 17, 17}},
      {"HannWindow", {convertHannWindow, 17, 17}},
      {"Hardmax", {convertHardmax, 1, 1}},
      {"HardSigmoid", {convertHardSigmoid, 1, 1}},
      {"HardSwish", {convertHardSigmoid, 14, 14}},
      {"Identity", {convertIdentity, 1, 1}},
      {"If", {nullptr, 1, 1}},
      {"GroupNormalization", {convertGroupNormalization, 18, 18}},
      {"InstanceNormalization", {convertInstanceNormalization, 1, 6}},
      {"IsInf", {convertIsInf, 10, 10}},
      {"IsNaN", {convertIsNaN, 9, 9}},
      {"LayerNormalization", {convertLayerNormalization, 17, 17}},
      {"LeakyRelu", {convertLeakyRelu, 1, 1}},
      {"Less", {convertCompare<CompareDirection::LT>, 1, 1}},
      {"LessOrEqual", {convertCompare<CompareDirection::LE>, 12, 12}},
      {"Log", {convertUnary<tg::LogOp>, 1, 1}},
      {"LogSoftmax", {convertSoftmax<tg::LogSoftmaxOp>, 1, 1}},
      {"LRN", {convertLRN, 1, 1}},
      {"Loop", {nullptr, 1, 1}},
      {"LSTM", {convertLSTM, 1, 7}},
      {"MatMul", {convertMatMul, 1, 1}},
      {"MatMulInteger", {convertMatMulInteger, 10, 10}},
      {"Max", {convertVariadic<tg::MaxOp>, 1, 1}},
      {"MaxPool", {convertPool, 1, 1}},
      {"MaxUnpool", {convertMaxUnpool, 9, 9}},
      {"Mean", {convertMean, 1, 1}},
      {"LinearAttention", {convertLinearAttention, 27, 27}},
      {"LpNormalization", {convertLpNormalization, 1, 1}},
      {"LpPool", {convertPool, 1, 1}},
      {"MeanVarianceNormalization", {convertMeanVarianceNormalization, 9, 9}},
      {"MelWeightMatrix", {convertMelWeightMatrix, 17, 17}},
      {"Min", {convertVariadic<tg::MinOp>, 1, 1}},
      {"Mish", {convertMish, 18, 18}},
      {"Mod", {convertMod, 10, 10}},
      {"Mul", {convertBinary<tg::MulOp>, 1, 1}},
      {"Neg", {convertUnary<tg::NegOp, false>, 1, 1}},
      {"NegativeLogLikelihoodLoss", {convertNegativeLogLikelihoodLoss, 12, 12}},
      {"NonZero", {convertNonZero, 9, 9}},
      {"Not", {convertNot, 1, 1}},
      {"OneHot", {convertOneHot, 9, 9}},
      {"Or", {convertLogical<1>, 1, 1}},
      {"Pad", {convertPad, 1, 1}},
      {"Pow", {convertPow, 1, 1}},
      {"PRelu", {convertPRelu, 1, 1}},
      {"QLinearConv", {convertQLinearConv, 10, 10}},
      {"QLinearMatMul", {convertQLinearMatMul, 10, 10}},
      {"QuantizeLinear", {convertQuantizeLinear, 10, 10}},
      {"RandomNormal", {convertRandom, 1, 1}},
      {"RandomNormalLike", {convertRandom, 1, 1}},
      {"RandomUniform", {convertRandom, 1, 1}},
      {"RandomUniformLike", {convertRandom, 1, 1}},
      {"Range", {convertRange, 11, 11}},
      {"RMSNormalization", {convertRMSNormalization, 23, 23}},
      {"RotaryEmbedding", {convertRotaryEmbedding, 23, 23}},
      {"Reciprocal", {convertReciprocal, 1, 1}},
      {"ReduceL1", {convertReduce<ReduceKind::Sum, ReduceForm::L1>, 1, 1}},
      {"ReduceL2", {convertReduce<ReduceKind::Sum, ReduceForm::L2>, 1, 1}},
      {"ReduceLogSum",
       {convertReduce<ReduceKind::Sum, ReduceForm::LogSum>, 1, 1}},
      {"ReduceLogSumExp",
       {convertReduce<ReduceKind::Sum, ReduceForm::LogSumExp>, 1, 1}},
      {"ReduceMax", {convertReduce<ReduceKind::Max>, 1, 1}},
      {"ReduceMean", {convertReduce<ReduceKind::Mean>, 1, 1}},
      {"ReduceMin", {convertReduce<ReduceKind::Min>, 1, 1}},
      {"ReduceProd",
       {convertReduce<ReduceKind::Sum, ReduceForm::Product>, 1, 1}},
      {"ReduceSum", {convertReduce<ReduceKind::Sum>, 1, 1}},
      {"ReduceSumSquare",
       {convertReduce<ReduceKind::Sum, ReduceForm::SumSquare>, 1, 1}},
      {"Relu", {convertUnary<tg::ReluOp>, 1, 1}},
      {"Reshape", {convertReshape, 1, 1}},
      {"Resize", {convertResize, 10, 10}},
      {"ReverseSequence", {convertReverseSequence, 10, 10}},
      {"RNN", {convertRNN, 1, 7}},
      {"RoiAlign", {convertRoiAlign, 10, 10}},
      {"Round", {convertRound, 11, 11}},
      {"Scan", {nullptr, 8, 9}},
      {"Scatter", {convertScatterElements, 9, 9}},
      {"ScatterElements", {convertScatterElements, 11, 11}},
      {"ScatterND", {convertScatterND, 11, 11}},
      {"Selu", {convertSelu, 1, 1}},
      {"SequenceAt", {convertSequenceAt, 11, 11}},
      {"SequenceConstruct", {convertSequenceConstruct, 11, 11}},
      {"SequenceEmpty", {convertSequenceEmpty, 11, 11}},
      {"SequenceErase", {convertSequenceErase, 11, 11}},
      {"SequenceInsert", {convertSequenceInsert, 11, 11}},
      {"SequenceLength", {convertSequenceLength, 11, 11}},
      {"Shape", {convertShape, 1, 1}},
      {"Shrink", {convertShrink, 9, 9}},
      {"Sigmoid", {convertUnary<tg::SigmoidOp>, 1, 1}},
      {"Sign", {convertSign, 9, 9}},
      {"Sin", {convertUnary<tg::SinOp>, 7, 7}},
      {"Sinh", {convertSinh, 9, 9}},
      {"Size", {convertSize, 1, 1}},
      {"Slice", {convertSlice, 1, 1}},
      {"Softmax", {convertSoftmax<tg::SoftmaxOp>, 1, 1}},
      {"SoftmaxCrossEntropyLoss", {convertSoftmaxCrossEntropyLoss, 12, 12}},
      {"Softplus", {convertSoftplus, 1, 1}},
      {"Softsign", {convertSoftsign, 1, 1}},
      {"SpaceToDepth", {convertDepthSpace, 1, 1}},
      {"Split", {convertSplit, 1, 1}},
      {"SplitToSequence", {convertSplitToSequence, 11, 11}},
      {"Sqrt", {convertUnary<tg::SqrtOp>, 1, 1}},
      {"Squeeze", {convertSqueeze, 1, 1}},
      {"STFT", {convertSTFT, 17, 17}},
      {"Sub", {convertBinary<tg::SubOp>, 1, 1}},
      {"Sum", {convertVariadic<tg::AddOp>, 1, 1}},
      {"SwiGLU", {convertSwiGLU, 28, 28}},
      {"Swish", {convertSwish, 24, 24}},
      {"Tan", {convertTan, 7, 7}},
      {"Tanh", {convertUnary<tg::TanhOp>, 1, 1}},
      {"TensorScatter", {convertTensorScatter, 24, 24}},
      {"ThresholdedRelu", {convertThresholdedRelu, 10, 10}},
      {"Tile", {convertTile, 1, 6}},
      {"TopK", {convertTopK, 1, 1}},
      {"Transpose", {convertTranspose, 1, 1}},
      {"Trilu", {convertTrilu, 14, 14}},
      {"Unique", {convertUnique, 11, 11}},
      {"Unsqueeze", {convertUnsqueeze, 1, 1}},
      {"Upsample", {convertUpsample, 7, 7}},
      {"Where", {convertWhere, 9, 9}},
      {"Xor", {convertLogical<2>, 1, 1}},
  };
  auto it = ops.find(opType);
  return it == ops.end() ? nullptr : &it->second;
}

NodeConverter onnx_import::lookupTrainingOp(StringRef opType) {
  static const llvm::StringMap<NodeConverter> ops = {
      {"Adagrad", convertAdagrad},
      {"Adam", convertAdam},
      {"Gradient", convertGradient},
      {"Momentum", convertMomentum},
  };
  return ops.lookup(opType);
}
