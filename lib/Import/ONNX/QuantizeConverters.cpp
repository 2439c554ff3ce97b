//===- QuantizeConverters.cpp - quantization and bit shifts ---------------===//
//
// ONNX's linear quantization (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear), the integer products (MatMulInteger, ConvInteger)
// and their quantized forms (QLinearMatMul, QLinearConv), and BitShift.
//
// tg has no integer GEMM: the integer products run as f64 GEMMs of the
// zero-point-shifted operands, which are exact (an int8/uint8 product is at
// most 2^16, so a sum is exact below 2^37 terms) and converted to i32.
// Rounding is halves to even and saturation clamps to the output type, as
// the specification says.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Eval/Kernels.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

namespace {

/// The smallest and largest value of integer type `type`.
std::pair<double, double> getIntRange(Type type) {
  return {double(getIntMin(type)), double(getIntMax(type))};
}

bool isNarrowInt(Type type) {
  return isa<IntegerType>(type) && !type.isInteger(1) &&
         type.getIntOrFloatBitWidth() <= 32;
}

/// What QuantizeLinear quantizes to and DequantizeLinear reads: a narrow
/// integer (4- and 2-bit included), a float8 format (opset 19 on) or
/// float4e2m1 (opset 23).
bool isQuantizedType(Type type) {
  return isNarrowInt(type) ||
         isa<Float8E4M3FNType, Float8E5M2Type, Float8E4M3FNUZType,
             Float8E5M2FNUZType, Float4E2M1FNType>(type);
}

/// A blocked scale or zero point (QuantizeLinear-21's `block_size`):
/// `value` has `shape`'s rank and dimensions but along `axis`, where it has
/// ceil(shape[axis] / blockSize) elements, one per block of that many
/// consecutive elements (the last block may be short). Repeats each element
/// over its block.
FailureOr<Value> expandBlocks(Importer &g, Value value, StringRef what,
                              ArrayRef<int64_t> shape, int64_t axis,
                              int64_t blockSize) {
  RankedTensorType type = Importer::getType(value);
  int64_t blocks = llvm::divideCeil(shape[axis], blockSize);
  bool matches = type.getRank() == int64_t(shape.size());
  for (int64_t dim = 0; matches && dim < type.getRank(); ++dim)
    matches = type.getDimSize(dim) == (dim == axis ? blocks : shape[dim]);
  if (!matches)
    return (void)g.fail(what + " must have x's shape with " +
                        llvm::Twine(blocks) + " blocks of " +
                        llvm::Twine(blockSize) + " along axis " +
                        llvm::Twine(axis)),
           failure();
  // [..., blocks, ...] -> [..., blocks, 1, ...] -> [..., blocks, block,
  // ...] -> [..., blocks * block, ...], then the first shape[axis]. A
  // single block is as long as the axis, whatever block_size says.
  int64_t block = blocks == 1 ? shape[axis] : blockSize;
  SmallVector<int64_t> split(shape), repeated(shape), whole(shape);
  split[axis] = blocks;
  split.insert(split.begin() + axis + 1, 1);
  repeated[axis] = blocks;
  repeated.insert(repeated.begin() + axis + 1, block);
  whole[axis] = blocks * block;
  Value expanded =
      g.reshape(g.broadcastTo(g.reshape(value, split), repeated), whole);
  if (whole[axis] == shape[axis])
    return expanded;
  SmallVector<int64_t> starts(shape.size(), 0), strides(shape.size(), 1);
  return g.slice(expanded, starts, shape, strides);
}

/// A scale or zero point (input `index`) laid along `axis` of `shape`,
/// converted to `elementType`: a scalar (or one-element tensor) everywhere,
/// a vector of shape[axis] elements along that axis, a blocked tensor
/// (`blockSize` > 0, see expandBlocks), or a tensor that broadcasts to
/// `shape` (QLinearMatMul's [D1, D2, M, 1]). Null when the input is absent.
FailureOr<Value> spreadAlong(Importer &g, unsigned index, StringRef what,
                             ArrayRef<int64_t> shape, int64_t axis,
                             Type elementType, int64_t blockSize = 0) {
  Value value = g.input(index);
  if (!value)
    return Value();
  RankedTensorType type = Importer::getType(value);
  value = g.convert(value, elementType);
  if (blockSize > 0)
    return expandBlocks(g, value, what, shape, axis, blockSize);
  if (type.getNumElements() == 1 && type.getRank() <= 1)
    return g.broadcastTo(g.reshape(value, {}), shape);
  bool alongAxis = type.getRank() == 1 && axis >= 0 &&
                   axis < int64_t(shape.size()) &&
                   type.getDimSize(0) == shape[axis];
  if (alongAxis) {
    SmallVector<int64_t> column(shape.size(), 1);
    column[axis] = shape[axis];
    return g.broadcastTo(g.reshape(value, column), shape);
  }
  if (type.getRank() > 1 && broadcastsTo(type.getShape(), shape))
    return g.broadcastTo(value, shape);
  return (void)g.fail(what + " must be a scalar or a vector of the " +
                      llvm::Twine(axis >= 0 && axis < int64_t(shape.size())
                                      ? shape[axis]
                                      : 0) +
                      " elements of axis " + llvm::Twine(axis)),
         failure();
}

/// `value` (f32 or f64) rounded halves to even, plus `zeroPoint` (of the
/// same type, or null), saturated to `target` and converted to it.
Value saturateTo(Importer &g, Value value, Value zeroPoint, Type target) {
  Composer e{g, Importer::getType(value)};
  Value q = e.round(value);
  if (zeroPoint)
    q = e.add(q, zeroPoint);
  auto [lo, hi] = getIntRange(target);
  return g.convert(e.clamp(q, lo, hi), target);
}

/// The `axis` attribute (default 1), normalized, where the scale (input 1)
/// is a vector or blocked (`blocked`); a per-tensor scale ignores it.
FailureOr<int64_t> getQuantizationAxis(Importer &g, int64_t rank,
                                       bool blocked = false) {
  Value scale = g.input(1);
  if (!blocked &&
      (rank == 0 || (scale && Importer::getType(scale).getNumElements() == 1)))
    return 0;
  return g.normalizeAxis(g.getInt("axis", 1), rank);
}

/// QuantizeLinear's and DequantizeLinear's `block_size` (opset 21 on; 0
/// without blocks).
FailureOr<int64_t> getBlockSize(Importer &g, int64_t rank) {
  int64_t blockSize = g.getInt("block_size", 0);
  if (blockSize < 0)
    return (void)g.fail("block_size must be non-negative, got " +
                        llvm::Twine(blockSize)),
           failure();
  if (blockSize > 0 && rank == 0)
    return (void)g.fail("block_size needs an input of rank 1 or more"),
           failure();
  return blockSize;
}

/// Integer input `index`: an int8/uint8 (or wider, up to 32-bit) tensor.
FailureOr<Value> requireQuantized(Importer &g, unsigned index, StringRef what) {
  ASSIGN_OR_FAIL(value, g.requireInput(index));
  if (!isNarrowInt(Importer::getType(value).getElementType()))
    return (void)g.fail(what + " must be an integer tensor of at most 32 "
                               "bits"),
           failure();
  return value;
}

/// `value` minus zero point input `index` (scalar, or a vector along
/// `axis`), in f64.
FailureOr<Value> shiftedF64(Importer &g, Value value, unsigned index,
                            StringRef what, int64_t axis) {
  Type f64 = g.builder.getF64Type();
  ArrayRef<int64_t> shape = Importer::getType(value).getShape();
  Value wide = g.convert(value, f64);
  ASSIGN_OR_FAIL(zeroPoint, spreadAlong(g, index, what, shape, axis, f64));
  return zeroPoint ? buildBinary<tg::SubOp>(g, wide, zeroPoint) : wide;
}

/// The product of scale inputs `a` and `b` over `y` in f32 (as ONNX's
/// reference computes it), as f64 of `shape`; a vector scale lies along its
/// axis (`axes`, one per input).
FailureOr<Value> combinedScale(Importer &g, ArrayRef<unsigned> inputs,
                               ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> axes) {
  Type f32 = g.builder.getF32Type();
  ASSIGN_OR_FAIL(
      sa, spreadAlong(g, inputs[0], "the first scale", shape, axes[0], f32));
  ASSIGN_OR_FAIL(
      sb, spreadAlong(g, inputs[1], "the second scale", shape, axes[1], f32));
  ASSIGN_OR_FAIL(sy, spreadAlong(g, inputs[2], "y_scale", shape, axes[2], f32));
  if (!sa || !sb || !sy)
    return (void)g.fail("the scales are required"), failure();
  Value scale =
      buildBinary<tg::DivOp>(g, buildBinary<tg::MulOp>(g, sa, sb), sy);
  return g.convert(scale, g.builder.getF64Type());
}

/// The output type of a quantized product: y_zero_point's (input `index`),
/// uint8 without one.
FailureOr<Type> getQuantizedType(Importer &g, unsigned index) {
  if (Value zeroPoint = g.input(index)) {
    Type type = Importer::getType(zeroPoint).getElementType();
    if (!isNarrowInt(type))
      return (void)g.fail("y_zero_point must be an integer tensor"), failure();
    return type;
  }
  return Type(g.builder.getIntegerType(8, /*isSigned=*/false));
}

/// The output of QLinearMatMul and QLinearConv (scales at inputs 1, 4 and
/// 6, y's zero point at 7): the exact integer `product` (f64) times the
/// combined scale, rounded, shifted by y's zero point and saturated. Vector
/// scales lie along `axes` (a's, b's or w's, y's).
LogicalResult requantize(Importer &g, Value product, ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> shape = Importer::getType(product).getShape();
  ASSIGN_OR_FAIL(scale, combinedScale(g, {1, 4, 6}, shape, axes));
  ASSIGN_OR_FAIL(target, getQuantizedType(g, 7));
  ASSIGN_OR_FAIL(zeroPoint, spreadAlong(g, 7, "y_zero_point", shape, axes[2],
                                        g.builder.getF64Type()));
  g.setOutput(0, saturateTo(g, buildBinary<tg::MulOp>(g, product, scale),
                            zeroPoint, target));
  return success();
}

} // namespace

// QuantizeLinear-10/13/19/21/23: y = saturate(round(x / y_scale) +
// y_zero_point), per tensor, along `axis` or in blocks of `block_size`
// along it; y has y_zero_point's type (uint8 without it, or
// `output_dtype`): an integer, or a float8 or float4 format (y = x /
// y_scale + y_zero_point rounded to it). The division is computed in
// f32 (f64 at f64 precision).
LogicalResult onnx_import::convertQuantizeLinear(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  ASSIGN_OR_FAIL(blockSize, getBlockSize(g, type.getRank()));
  ASSIGN_OR_FAIL(axis, getQuantizationAxis(g, type.getRank(), blockSize > 0));
  Type target = g.builder.getIntegerType(8, /*isSigned=*/false);
  if (Value zeroPoint = g.input(2)) {
    target = Importer::getType(zeroPoint).getElementType();
    if (!isQuantizedType(target))
      return g.fail("y_zero_point must be an integer, float8 or float4 tensor");
  }
  if (std::optional<int64_t> dtype = g.getOptionalInt("output_dtype");
      dtype && *dtype != 0) {
    Type given = getElementType(*g.builder.getContext(), int32_t(*dtype));
    if (!given || !isQuantizedType(given))
      return g.fail("output_dtype " + getDataTypeName(int32_t(*dtype)) +
                    " is not a type tg quantizes to");
    if (g.input(2) && given != target)
      return g.fail("output_dtype differs from y_zero_point's type");
    target = given;
  }
  ASSIGN_OR_FAIL(scaleInput, g.requireInput(1));
  if (failed(requireFloat(g, scaleInput)))
    return failure();
  // The division's precision: the `precision` attribute (QuantizeLinear-23),
  // else y_scale's type (before opset 23 it is x's). An f16 or bf16
  // quotient is computed in f32 and rounded to that type.
  Type precision = Importer::getType(scaleInput).getElementType();
  if (std::optional<int64_t> given = g.getOptionalInt("precision");
      given && *given != 0 && g.opset >= 23) {
    precision = getElementType(*g.builder.getContext(), int32_t(*given));
    if (!precision || !isa<FloatType>(precision))
      return g.fail("precision " + getDataTypeName(int32_t(*given)) +
                    " is not a float type tg has");
  }
  Type compute = precision.isF64() ? Type(g.builder.getF64Type())
                                   : Type(g.builder.getF32Type());
  ASSIGN_OR_FAIL(scale, spreadAlong(g, 1, "y_scale", type.getShape(), axis,
                                    compute, blockSize));
  ASSIGN_OR_FAIL(zeroPoint, spreadAlong(g, 2, "y_zero_point", type.getShape(),
                                        axis, compute, blockSize));
  Value scaled = buildBinary<tg::DivOp>(g, g.convert(x, compute), scale);
  if (precision != compute)
    scaled = g.convert(g.convert(scaled, precision), compute);
  // A float8 y: x / y_scale + y_zero_point rounded to it (no rounding to an
  // integer), saturated unless `saturate` is 0.
  if (isa<FloatType>(target)) {
    if (zeroPoint)
      scaled = buildBinary<tg::AddOp>(g, scaled, zeroPoint);
    g.setOutput(
        0, convertSaturating(g, scaled, target, g.getBool("saturate", true)));
    return success();
  }
  Value quantized = saturateTo(g, scaled, zeroPoint, target);
  if (blockSize > 0) {
    // tg.quantize_dequantize takes a scale per tensor or along an axis.
    g.setOutput(0, quantized);
    return success();
  }
  auto [low, high] = getIntRange(target);
  g.quantizations[quantized] = {x,    g.input(1),   g.input(2),
                                axis, int64_t(low), int64_t(high)};
  g.setOutput(0, quantized);
  return success();
}

/// Whether `a` and `b` are one value or constants of equal elements. Null
/// is an absent zero point, equal to a constant of zeros.
static bool sameValue(Importer &g, Value a, Value b) {
  if (a == b)
    return true;
  const Tensor *ta = a ? g.getConstant(a) : nullptr;
  const Tensor *tb = b ? g.getConstant(b) : nullptr;
  if ((a && !ta) || (b && !tb))
    return false;
  if (!ta || !tb) {
    const Tensor *given = ta ? ta : tb;
    for (int64_t i = 0, e = given->getNumElements(); i < e; ++i)
      if (given->getAsDouble(i) != 0)
        return false;
    return true;
  }
  if (ta->getType() != tb->getType())
    return false;
  for (int64_t i = 0, e = ta->getNumElements(); i < e; ++i)
    if (ta->getAsDouble(i) != tb->getAsDouble(i))
      return false;
  return true;
}

/// Whether every integer of [low, high] is exact in float type `type`.
static bool holdsGrid(Type type, int64_t low, int64_t high) {
  int64_t largest = std::max(std::abs(low), std::abs(high));
  unsigned digits = cast<FloatType>(type).getFPMantissaWidth();
  return largest <= (int64_t(1) << std::min(digits, 62u));
}

/// DequantizeLinear of a QuantizeLinear's result with the same scale, zero
/// point and axis: `tg.quantize_dequantize` of the QuantizeLinear's input
/// (the same values; its backward is the straight-through estimator
/// quantization-aware training expects, where the integer path has none).
static FailureOr<bool> convertQuantizeDequantize(Importer &g, Value x,
                                                 int64_t axis) {
  auto it = g.quantizations.find(x);
  if (it == g.quantizations.end())
    return false;
  const Importer::Quantization &q = it->second;
  Type type = Importer::getType(g.input(1)).getElementType();
  RankedTensorType inputType = Importer::getType(q.input);
  if (inputType.getElementType() != type || q.axis != axis ||
      !sameValue(g, q.scale, g.input(1)) ||
      !sameValue(g, q.zeroPoint, g.input(2)) || !holdsGrid(type, q.low, q.high))
    return false;
  ArrayRef<int64_t> shape = inputType.getShape();
  ASSIGN_OR_FAIL(scale, spreadAlong(g, 1, "x_scale", shape, axis, type));
  ASSIGN_OR_FAIL(zeroPoint,
                 spreadAlong(g, 2, "x_zero_point", shape, axis, type));
  if (!zeroPoint)
    zeroPoint = g.splat(inputType, 0.0);
  g.setOutput(0, g.create<tg::QuantizeDequantizeOp>(inputType, q.input, scale,
                                                    zeroPoint, q.low, q.high));
  return true;
}

// DequantizeLinear-10/13/19/21/23: y = (x - x_zero_point) * x_scale in f32,
// of x_scale's type (or output_dtype's), per tensor, along `axis` or in
// blocks of `block_size` along it; of a
// QuantizeLinear's result, a tg.quantize_dequantize
// (convertQuantizeDequantize).
LogicalResult onnx_import::convertDequantizeLinear(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (!isQuantizedType(Importer::getType(x).getElementType()))
    return g.fail("x must be an integer tensor of at most 32 bits, a "
                  "float8 or a float4 tensor");
  RankedTensorType type = Importer::getType(x);
  ASSIGN_OR_FAIL(blockSize, getBlockSize(g, type.getRank()));
  ASSIGN_OR_FAIL(axis, getQuantizationAxis(g, type.getRank(), blockSize > 0));
  ASSIGN_OR_FAIL(scaleInput, g.requireInput(1));
  if (failed(requireFloat(g, scaleInput)))
    return failure();
  Type scaleType = Importer::getType(scaleInput).getElementType();
  Type compute = scaleType.isF64() ? Type(g.builder.getF64Type())
                                   : Type(g.builder.getF32Type());
  if (Value zeroPoint = g.input(2);
      zeroPoint &&
      Importer::getType(zeroPoint).getElementType() != type.getElementType())
    return g.fail("x_zero_point must have x's element type");
  // DequantizeLinear-23's output_dtype: y's type, also the precision of the
  // multiplication (computed in f32, or f64, and rounded to it).
  Type outputType = scaleType;
  if (std::optional<int64_t> given = g.getOptionalInt("output_dtype");
      given && *given != 0 && g.opset >= 23) {
    outputType = getElementType(*g.builder.getContext(), int32_t(*given));
    if (!outputType || !isa<FloatType>(outputType))
      return g.fail("output_dtype " + getDataTypeName(int32_t(*given)) +
                    " is not a float type tg has");
    if (outputType.isF64())
      compute = g.builder.getF64Type();
  }
  if (outputType == scaleType && blockSize == 0) {
    ASSIGN_OR_FAIL(fused, convertQuantizeDequantize(g, x, axis));
    if (fused)
      return success();
  }
  ASSIGN_OR_FAIL(scale, spreadAlong(g, 1, "x_scale", type.getShape(), axis,
                                    compute, blockSize));
  ASSIGN_OR_FAIL(zeroPoint, spreadAlong(g, 2, "x_zero_point", type.getShape(),
                                        axis, compute, blockSize));
  Value value = g.convert(x, compute);
  if (zeroPoint)
    value = buildBinary<tg::SubOp>(g, value, zeroPoint);
  g.setOutput(0,
              g.convert(buildBinary<tg::MulOp>(g, value, scale), outputType));
  return success();
}

// DynamicQuantizeLinear-11: uint8 quantization of x over the range of its
// values widened to include 0: y_scale = (max - min) / 255, y_zero_point =
// saturate(round(-min / y_scale)), y = saturate(round(x / y_scale) +
// y_zero_point).
LogicalResult onnx_import::convertDynamicQuantizeLinear(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  RankedTensorType type = Importer::getType(x);
  if (!type.getElementType().isF32())
    return g.fail("x must be an f32 tensor");
  if (type.getNumElements() == 0)
    return g.fail("x must not be empty");
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  RankedTensorType scalar = RankedTensorType::get({}, type.getElementType());
  Composer s{g, scalar};
  Value low = buildBinary<tg::MinOp>(
      g, g.reduce(tg::ReduceKind::Min, x, all, /*keepDims=*/false), s.c(0.0));
  Value high = buildBinary<tg::MaxOp>(
      g, g.reduce(tg::ReduceKind::Max, x, all, /*keepDims=*/false), s.c(0.0));
  // A range of one point (x all zeros) takes 1 / 255, as ONNX's reference.
  Value range = s.sub(high, low);
  range = s.select(s.equal(range, s.c(0.0)), s.c(1.0), range);
  Value scale = s.div(range, s.c(255.0));
  Type u8 = g.builder.getIntegerType(8, /*isSigned=*/false);
  Value zeroPoint = saturateTo(g, s.div(s.neg(low), scale), Value(), u8);
  Value spreadScale = g.broadcastTo(scale, type.getShape());
  Value spreadZero = g.broadcastTo(g.convert(zeroPoint, type.getElementType()),
                                   type.getShape());
  g.setOutput(0, saturateTo(g, buildBinary<tg::DivOp>(g, x, spreadScale),
                            spreadZero, u8));
  g.setOutput(1, scale);
  g.setOutput(2, zeroPoint);
  return success();
}

/// A's zero point: a scalar, or a vector of A's rows (axis rank - 2).
static FailureOr<Value> shiftLhs(Importer &g, Value a, unsigned index) {
  int64_t rank = Importer::getType(a).getRank();
  return shiftedF64(g, a, index, "a_zero_point",
                    std::max<int64_t>(rank - 2, 0));
}

/// B's zero point: a scalar, or a vector of B's columns (its last axis).
static FailureOr<Value> shiftRhs(Importer &g, Value b, unsigned index) {
  int64_t rank = Importer::getType(b).getRank();
  return shiftedF64(g, b, index, "b_zero_point", rank - 1);
}

/// The exact product (f64) of integer inputs `a` and `b` less their zero
/// points (inputs `aZero`, `bZero`).
static FailureOr<Value> shiftedMatMul(Importer &g, unsigned a, unsigned aZero,
                                      unsigned b, unsigned bZero) {
  ASSIGN_OR_FAIL(lhsInput, requireQuantized(g, a, "A"));
  ASSIGN_OR_FAIL(rhsInput, requireQuantized(g, b, "B"));
  ASSIGN_OR_FAIL(lhs, shiftLhs(g, lhsInput, aZero));
  ASSIGN_OR_FAIL(rhs, shiftRhs(g, rhsInput, bZero));
  return buildMatMul(g, lhs, rhs);
}

// MatMulInteger-10: (A - a_zero_point) x (B - b_zero_point) as int32.
LogicalResult onnx_import::convertMatMulInteger(Importer &g) {
  ASSIGN_OR_FAIL(product, shiftedMatMul(g, 0, 2, 1, 3));
  g.setOutput(0, g.convert(product, g.builder.getI32Type()));
  return success();
}

// QLinearMatMul-10: the product of the dequantized operands requantized to
// y: round((A - a_zp) x (B - b_zp) * (a_scale * b_scale / y_scale)) + y_zp,
// saturated (inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
LogicalResult onnx_import::convertQLinearMatMul(Importer &g) {
  ASSIGN_OR_FAIL(product, shiftedMatMul(g, 0, 2, 3, 5));
  // a's scale is per row, b's per column, y's per row.
  int64_t rank = Importer::getType(product).getRank();
  int64_t rows = std::max<int64_t>(rank - 2, 0), columns = rank - 1;
  return requantize(g, product, {rows, columns, rows});
}

// ConvInteger-10: the convolution of x - x_zero_point with w - w_zero_point
// (per output channel or scalar) as int32; padding is zero after the shift.
LogicalResult onnx_import::convertConvInteger(Importer &g) {
  ASSIGN_OR_FAIL(x, requireQuantized(g, 0, "x"));
  ASSIGN_OR_FAIL(w, requireQuantized(g, 1, "w"));
  ASSIGN_OR_FAIL(shiftedX, shiftedF64(g, x, 2, "x_zero_point", 1));
  ASSIGN_OR_FAIL(shiftedW, shiftedF64(g, w, 3, "w_zero_point", 0));
  ASSIGN_OR_FAIL(product, convolve(g, shiftedX, shiftedW, Value()));
  g.setOutput(0, g.convert(product, g.builder.getI32Type()));
  return success();
}

// QLinearConv-10: the integer convolution plus the int32 bias B, requantized
// with x_scale * w_scale / y_scale (w_scale per output channel or scalar)
// (inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B).
LogicalResult onnx_import::convertQLinearConv(Importer &g) {
  ASSIGN_OR_FAIL(x, requireQuantized(g, 0, "x"));
  ASSIGN_OR_FAIL(w, requireQuantized(g, 3, "w"));
  ASSIGN_OR_FAIL(shiftedX, shiftedF64(g, x, 2, "x_zero_point", 1));
  ASSIGN_OR_FAIL(shiftedW, shiftedF64(g, w, 5, "w_zero_point", 0));
  Value bias = g.input(8);
  if (bias) {
    if (!Importer::getType(bias).getElementType().isInteger(32))
      return g.fail("B must be an int32 vector");
    bias = g.convert(bias, g.builder.getF64Type());
  }
  ASSIGN_OR_FAIL(product, convolve(g, shiftedX, shiftedW, bias));
  // w's scale is per output channel; x's and y's are scalars.
  return requantize(g, product, {1, 1, 1});
}

// BitShift-11 on unsigned integers, BitShift-28 also on signed ones: a left
// shift is x times 2^y in x's type (its multiplication wraps; for a signed
// type 2^(width - 1) is the type's minimum, which wraps alike); a right
// shift is x divided by 2^y rounded toward minus infinity (arithmetic, sign
// extending). A shift that is negative or of the width or more gives what
// the sign fill alone gives: -1 for a right shift of a negative x, else 0.
LogicalResult onnx_import::convertBitShift(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(y, g.requireInput(1));
  Type elementType = Importer::getType(x).getElementType();
  bool integer = isa<IntegerType>(elementType) && !elementType.isInteger(1);
  if (!integer || Importer::getType(y).getElementType() != elementType ||
      (g.opset < 28 && !elementType.isUnsignedInteger()))
    return g.fail(g.opset < 28 ? "X and Y must be unsigned integers of one type"
                               : "X and Y must be integers of one type");
  std::string direction = g.getString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return g.fail("direction must be LEFT or RIGHT");
  ASSIGN_OR_FAIL(operands, broadcastPair(g, x, y));
  Type f64 = g.builder.getF64Type();
  RankedTensorType type = Importer::getType(operands.first);
  Value value = operands.first;
  Composer e{g, type.clone(f64)};
  Composer t{g, type};
  Value shift = g.convert(operands.second, f64);
  bool isSigned = !elementType.isUnsignedInteger();
  int64_t width = elementType.getIntOrFloatBitWidth();
  bool left = direction == "LEFT";
  // The shifts computed by a multiplication or a division: 2^y must be a
  // value of the type (a right shift of a signed type by width - 1 is the
  // sign fill, a division by its minimum would not floor).
  int64_t last = isSigned && !left ? width - 2 : width - 1;
  Value nonNegative = e.less(e.c(-0.5), shift);
  Value inRange =
      e.select(nonNegative, e.less(shift, e.c(double(last + 1))), nonNegative);
  Value clamped = e.select(inRange, shift, e.c(0.0));
  Value power = g.convert(
      g.create<tg::PowOp>(type.clone(f64), e.c(2.0), clamped), elementType);
  if (isSigned && left)
    power = t.select(e.equal(clamped, e.c(double(width - 1))),
                     t.c(double(getIntMin(elementType))), power);
  Value shifted;
  if (left) {
    shifted = t.mul(value, power);
  } else {
    Value quotient = t.div(value, power);
    if (isSigned) {
      // Toward minus infinity: one less where a negative x was not a
      // multiple of 2^y.
      Value inexact =
          compare(g, tg::CompareDirection::NE, t.mul(quotient, power), value);
      Value negative = t.less(value, t.c(0.0));
      quotient = t.select(t.select(negative, inexact, negative),
                          t.sub(quotient, t.c(1.0)), quotient);
    }
    shifted = quotient;
  }
  Value fill = t.c(0.0);
  if (isSigned && !left)
    fill = t.select(t.less(value, t.c(0.0)), t.c(-1.0), fill);
  g.setOutput(0, t.select(inRange, shifted, fill));
  return success();
}
