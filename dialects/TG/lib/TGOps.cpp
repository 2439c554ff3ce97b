//===- TGOps.cpp - tg op verifiers, type inference and custom syntax -----===//
//
// What ODS constraints cannot express: shape rules (as result type inference
// where the result follows from the operands, as verifiers otherwise), the
// slice range syntax, and hand-written builders.
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;
using namespace tgc::tg;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The value's type as a ranked tensor, or failure with a diagnostic (type
/// inference may run before operand constraints are verified).
static FailureOr<RankedTensorType>
getRankedTensor(std::optional<Location> loc, Value value, StringRef what) {
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    return type;
  (void)emitOptionalError(loc, "expected ", what,
                          " to be a ranked tensor, got ", value.getType());
  return failure();
}

/// Writes a shape as `2x3x4` (or `scalar`) for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

/// The shape without its last dimension (the statistics of a normalization
/// over the last dimension).
static RankedTensorType getRowStatisticsType(RankedTensorType type) {
  return RankedTensorType::get(type.getShape().drop_back(),
                               Float32Type::get(type.getContext()));
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto type = getRankedTensor(location, adaptor.getLhs(), "lhs");
  if (failed(type))
    return failure();
  inferred.push_back(
      RankedTensorType::get(type->getShape(), IntegerType::get(context, 1)));
  return success();
}

unsigned tgc::tg::getBitcastWidth(Type elementType) {
  return elementType.isInteger(1) ? 8 : elementType.getIntOrFloatBitWidth();
}

LogicalResult BitcastOp::verify() {
  Type from = getOperand().getType().getElementType();
  Type to = getResult().getType().getElementType();
  if (getBitcastWidth(from) != getBitcastWidth(to))
    return emitOpError("reinterprets ")
           << from << " (" << getBitcastWidth(from) << " bits) as " << to
           << " (" << getBitcastWidth(to)
           << " bits): the widths must be equal (i1 counts as 8)";
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType operandType = getOperand().getType();
  RankedTensorType resultType = getResult().getType();
  ArrayRef<int64_t> dims = getBroadcastDimensions();
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("result element type ")
           << resultType.getElementType() << " differs from operand's "
           << operandType.getElementType();
  if (static_cast<int64_t>(dims.size()) != operandType.getRank())
    return emitOpError("has ")
           << dims.size() << " broadcast dimensions for an operand of rank "
           << operandType.getRank();
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= resultType.getRank())
      return emitOpError("broadcast dimension ")
             << dim << " is out of range for a result of rank "
             << resultType.getRank();
    if (i > 0 && dim <= dims[i - 1])
      return emitOpError("broadcast dimensions must be strictly increasing");
    int64_t operandSize = operandType.getDimSize(i);
    int64_t resultSize = resultType.getDimSize(dim);
    if (operandSize != 1 && operandSize != resultSize)
      return emitOpError("operand dimension ")
             << i << " has size " << operandSize << ", which is neither 1 nor "
             << resultSize << " (result dimension " << dim << ")";
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType operandType = getOperand().getType();
  RankedTensorType resultType = getResult().getType();
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("result element type ")
           << resultType.getElementType() << " differs from operand's "
           << operandType.getElementType();
  if (operandType.getNumElements() != resultType.getNumElements())
    return emitOpError("cannot reshape ")
           << formatShape(operandType.getShape()) << " ("
           << operandType.getNumElements() << " elements) to "
           << formatShape(resultType.getShape()) << " ("
           << resultType.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto type = getRankedTensor(location, adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = type->getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOptionalError(location, "permutation has ", perm.size(),
                             " entries for an operand of rank ", rank);
  llvm::SmallBitVector seen(rank);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= rank || seen.test(dim))
      return emitOptionalError(
          location, "[", llvm::make_range(perm.begin(), perm.end()),
          "] is not a permutation of the dimensions 0..", rank - 1);
    seen.set(dim);
    shape.push_back(type->getDimSize(dim));
  }
  inferred.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  auto type = getRankedTensor(location, adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> start = adaptor.getStartIndices();
  ArrayRef<int64_t> limit = adaptor.getLimitIndices();
  ArrayRef<int64_t> strides = adaptor.getStrides();
  int64_t rank = type->getRank();
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOptionalError(location,
                             "expected one slice range per dimension (", rank,
                             "), got ", start.size(), " starts, ", limit.size(),
                             " limits and ", strides.size(), " strides");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = type->getDimSize(i);
    if (start[i] > limit[i])
      return emitOptionalError(location, "slice range ", start[i], ":",
                               limit[i], " of dimension ", i,
                               " starts after its limit");
    if (start[i] < 0 || limit[i] > size)
      return emitOptionalError(location, "slice range ", start[i], ":",
                               limit[i], " of dimension ", i,
                               " is not within 0:", size);
    if (strides[i] < 1)
      return emitOptionalError(location, "slice stride ", strides[i],
                               " of dimension ", i, " is not positive");
    shape.push_back(llvm::divideCeil(limit[i] - start[i], strides[i]));
  }
  inferred.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  auto type = getRankedTensor(location, adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh(),
                    interior = adaptor.getInterior();
  int64_t rank = type->getRank();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank ||
      static_cast<int64_t>(interior.size()) != rank)
    return emitOptionalError(location, "expected one padding per dimension (",
                             rank, "), got ", low.size(), " low, ", high.size(),
                             " high and ", interior.size(), " interior");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (low[i] < 0 || high[i] < 0 || interior[i] < 0)
      return emitOptionalError(location, "padding of dimension ", i,
                               " is negative");
    int64_t size = type->getDimSize(i);
    // Checked: a padding near 2^63 must not wrap around to a small size.
    std::optional<int64_t> padded =
        llvm::checkedMul<int64_t>(std::max<int64_t>(size - 1, 0), interior[i]);
    for (int64_t term : {low[i], size, high[i]})
      if (padded)
        padded = llvm::checkedAdd<int64_t>(*padded, term);
    if (!padded || *padded > kMaxTensorBytes)
      return emitOptionalError(location, "padding of dimension ", i,
                               " makes it larger than 2^44 elements");
    shape.push_back(*padded);
  }
  inferred.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

/// Parses `[start:limit(:stride)?, ...]`.
static ParseResult parseSliceRanges(OpAsmParser &parser,
                                    DenseI64ArrayAttr &start,
                                    DenseI64ArrayAttr &limit,
                                    DenseI64ArrayAttr &strides) {
  SmallVector<int64_t> starts, limits, steps;
  auto parseRange = [&]() -> ParseResult {
    int64_t first, last, step = 1;
    if (parser.parseInteger(first) || parser.parseColon() ||
        parser.parseInteger(last))
      return failure();
    if (succeeded(parser.parseOptionalColon()) && parser.parseInteger(step))
      return failure();
    starts.push_back(first);
    limits.push_back(last);
    steps.push_back(step);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseRange,
                                     " in slice ranges"))
    return failure();
  MLIRContext *context = parser.getContext();
  start = DenseI64ArrayAttr::get(context, starts);
  limit = DenseI64ArrayAttr::get(context, limits);
  strides = DenseI64ArrayAttr::get(context, steps);
  return success();
}

static void printSliceRanges(OpAsmPrinter &printer, SliceOp,
                             DenseI64ArrayAttr start, DenseI64ArrayAttr limit,
                             DenseI64ArrayAttr strides) {
  // Invalid IR is printed in generic form, so the three arrays agree here;
  // the bound only keeps a printer of broken IR in range.
  int64_t rank = std::min({start.size(), limit.size(), strides.size()});
  printer << '[';
  for (int64_t i = 0; i < rank; ++i) {
    if (i > 0)
      printer << ", ";
    printer << start[i] << ':' << limit[i];
    if (strides[i] != 1)
      printer << ':' << strides[i];
  }
  printer << ']';
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(location, "expected at least one input");
  auto first = getRankedTensor(location, inputs.front(), "input 0");
  if (failed(first))
    return failure();
  int64_t rank = first->getRank();
  int64_t dim = adaptor.getDimension();
  if (dim < 0 || dim >= rank)
    return emitOptionalError(location, "concatenation dimension ", dim,
                             " is out of range for rank ", rank);
  SmallVector<int64_t> shape(first->getShape());
  for (auto [i, input] : llvm::enumerate(inputs.drop_front())) {
    auto type = getRankedTensor(location, input, "input");
    if (failed(type))
      return failure();
    if (type->getElementType() != first->getElementType() ||
        type->getRank() != rank)
      return emitOptionalError(location, "input ", i + 1, " has type ", *type,
                               ", which differs from input 0 (", *first,
                               ") in rank or element type");
    for (int64_t d = 0; d < rank; ++d) {
      if (d == dim)
        continue;
      if (type->getDimSize(d) != first->getDimSize(d))
        return emitOptionalError(location, "input ", i + 1, " has size ",
                                 type->getDimSize(d), " in dimension ", d,
                                 ", input 0 has ", first->getDimSize(d));
    }
    std::optional<int64_t> size =
        llvm::checkedAdd<int64_t>(shape[dim], type->getDimSize(dim));
    if (!size || *size > kMaxTensorBytes)
      return emitOptionalError(location,
                               "the concatenation is larger than "
                               "2^44 elements in dimension ",
                               dim);
    shape[dim] = *size;
  }
  inferred.push_back(RankedTensorType::get(shape, first->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto type = getRankedTensor(location, adaptor.getOperand(), "operand");
  if (failed(type))
    return failure();
  if (adaptor.getKind() == ReduceKind::Mean &&
      !isa<FloatType>(type->getElementType()))
    return emitOptionalError(location,
                             "'mean' needs a floating-point operand, got ",
                             type->getElementType());
  ArrayRef<int64_t> dims = adaptor.getDimensions();
  llvm::SmallBitVector reduced(type->getRank());
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= type->getRank())
      return emitOptionalError(location, "reduction dimension ", dim,
                               " is out of range for rank ", type->getRank());
    if (i > 0 && dim <= dims[i - 1])
      return emitOptionalError(
          location, "reduction dimensions must be strictly increasing");
    reduced.set(dim);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type->getRank(); ++d)
    if (!reduced.test(d))
      shape.push_back(type->getDimSize(d));
  inferred.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Compute ops
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
MatmulOp::inferResultShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                           bool transposeA, bool transposeB,
                           std::string &error) {
  llvm::raw_string_ostream os(error);
  if (lhs.size() < 2 || rhs.size() < 2) {
    os << "operands must have rank 2 or more, got " << formatShape(lhs)
       << " and " << formatShape(rhs);
    return failure();
  }
  ArrayRef<int64_t> lhsBatch = lhs.drop_back(2), rhsBatch = rhs.drop_back(2);
  if (rhs.size() != 2 && lhsBatch != rhsBatch) {
    auto formatBatch = [](ArrayRef<int64_t> batch) {
      return batch.empty() ? std::string("none") : formatShape(batch);
    };
    os << "batch dimensions differ: " << formatBatch(lhsBatch) << " and "
       << formatBatch(rhsBatch)
       << " (they must be equal, or rhs must be a matrix)";
    return failure();
  }
  int64_t m = lhs[lhs.size() - (transposeA ? 1 : 2)];
  int64_t k = lhs[lhs.size() - (transposeA ? 2 : 1)];
  int64_t rhsK = rhs[rhs.size() - (transposeB ? 1 : 2)];
  int64_t n = rhs[rhs.size() - (transposeB ? 2 : 1)];
  if (k != rhsK) {
    os << "contracting dimensions differ: lhs has " << k << ", rhs has "
       << rhsK;
    return failure();
  }
  SmallVector<int64_t> shape(lhsBatch);
  shape.push_back(m);
  shape.push_back(n);
  return shape;
}

void MatmulOp::build(OpBuilder &builder, OperationState &state, Value lhs,
                     Value rhs, bool transposeA, bool transposeB) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  std::string error;
  FailureOr<SmallVector<int64_t>> shape = inferResultShape(
      lhsType.getShape(), rhsType.getShape(), transposeA, transposeB, error);
  // An invalid combination still builds, so that the verifier reports it.
  Type resultType = lhsType;
  if (succeeded(shape))
    resultType = RankedTensorType::get(*shape, lhsType.getElementType());
  build(builder, state, resultType, lhs, rhs, transposeA, transposeB);
}

LogicalResult MatmulOp::verify() {
  RankedTensorType lhsType = getLhs().getType();
  RankedTensorType rhsType = getRhs().getType();
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOpError("operand element types differ: ")
           << lhsType.getElementType() << " and " << rhsType.getElementType();
  std::string error;
  FailureOr<SmallVector<int64_t>> shape =
      inferResultShape(lhsType.getShape(), rhsType.getShape(), getTransposeA(),
                       getTransposeB(), error);
  if (failed(shape))
    return emitOpError(error);
  if (getResult().getType().getShape() != ArrayRef<int64_t>(*shape))
    return emitOpError("result shape ")
           << formatShape(getResult().getType().getShape())
           << " differs from the expected " << formatShape(*shape);
  return success();
}

LogicalResult EmbeddingOp::verify() {
  std::optional<int64_t> padding = getPaddingIdx();
  if (!padding)
    return success();
  RankedTensorType table = getTable().getType();
  if (!isa<FloatType>(table.getElementType()))
    return emitOpError("padding_idx needs a float table (only one has a "
                       "gradient), got ")
           << table;
  int64_t rows = table.getDimSize(0);
  if (*padding < 0 || (!ShapedType::isDynamic(rows) && *padding >= rows))
    return emitOpError("padding_idx ")
           << *padding << " is not a row of the " << rows << "-row table";
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto table = getRankedTensor(location, adaptor.getTable(), "table");
  auto indices = getRankedTensor(location, adaptor.getIndices(), "indices");
  if (failed(table) || failed(indices))
    return failure();
  if (table->getRank() != 2)
    return emitOptionalError(location, "table must have rank 2, got ", *table);
  SmallVector<int64_t> shape(indices->getShape());
  shape.push_back(table->getDimSize(1));
  inferred.push_back(RankedTensorType::get(shape, table->getElementType()));
  return success();
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto operand = getRankedTensor(location, adaptor.getOperand(), "operand");
  if (failed(operand))
    return failure();
  if (operand->getRank() == 0)
    return emitOptionalError(location, "operand must have rank >= 1");
  int64_t k = adaptor.getK();
  int64_t size = operand->getShape().back();
  if (k < 0 || k > size)
    return emitOptionalError(location, "k = ", k,
                             " is out of range for a last dimension of ", size);
  SmallVector<int64_t> shape(operand->getShape());
  shape.back() = k;
  inferred.push_back(operand->clone(shape));
  inferred.push_back(
      RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

/// Checks the dimension of softmax and its relatives.
static LogicalResult verifySoftmaxDimension(Operation *op, Type type,
                                            int64_t dim) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  if (dim < 0 || dim >= rank)
    return op->emitOpError("dimension ")
           << dim << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifySoftmaxDimension(*this, getType(), getDimension());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxDimension(*this, getType(), getDimension());
}

/// Checks the input and per-feature parameters of a normalization over the
/// last dimension.
static LogicalResult inferNormalizationTypes(std::optional<Location> location,
                                             Value input, ValueRange params,
                                             StringRef paramsName,
                                             unsigned numStatistics,
                                             SmallVectorImpl<Type> &inferred) {
  auto type = getRankedTensor(location, input, "input");
  if (failed(type))
    return failure();
  if (type->getRank() < 1)
    return emitOptionalError(location, "input must have rank 1 or more");
  int64_t features = type->getShape().back();
  for (Value param : params) {
    auto paramType = getRankedTensor(location, param, paramsName);
    if (failed(paramType))
      return failure();
    if (paramType->getRank() != 1 || paramType->getDimSize(0) != features)
      return emitOptionalError(location, paramsName, " must be ",
                               params.size() == 1 ? "a vector" : "vectors",
                               " of ", features,
                               " elements (the last dimension of the input), "
                               "got ",
                               *paramType);
  }
  inferred.push_back(*type);
  inferred.append(numStatistics, getRowStatisticsType(*type));
  return success();
}

/// Checks that attribute `name` of `op` is finite and non-negative.
static LogicalResult verifyFiniteNonNegative(Operation *op, StringRef name,
                                             double value) {
  if (!(value >= 0.0) || std::isinf(value))
    return op->emitOpError()
           << name << " must be finite and non-negative, got " << value;
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferNormalizationTypes(
      location, adaptor.getInput(), {adaptor.getScale(), adaptor.getBias()},
      "scale and bias", /*numStatistics=*/2, inferred);
}

LogicalResult LayerNormOp::verify() {
  return verifyFiniteNonNegative(*this, "epsilon",
                                 getEpsilon().convertToDouble());
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferNormalizationTypes(location, adaptor.getInput(),
                                 adaptor.getScale(), "scale",
                                 /*numStatistics=*/1, inferred);
}

LogicalResult RmsNormOp::verify() {
  return verifyFiniteNonNegative(*this, "epsilon",
                                 getEpsilon().convertToDouble());
}

/// Checks the operands of attention and its backward; returns the output
/// and logsumexp types.
static LogicalResult inferAttentionTypes(
    MLIRContext *context, std::optional<Location> location, Value queryValue,
    Value keyValue, Value valueValue, Value biasValue, bool causal,
    std::optional<APFloat> scaleAttr, std::optional<APFloat> softcapAttr,
    SmallVectorImpl<Type> &inferred) {
  auto query = getRankedTensor(location, queryValue, "query");
  auto key = getRankedTensor(location, keyValue, "key");
  auto value = getRankedTensor(location, valueValue, "value");
  if (failed(query) || failed(key) || failed(value))
    return failure();
  if (query->getRank() != 4 || key->getRank() != 4 || value->getRank() != 4)
    return emitOptionalError(location,
                             "query, key and value must have rank 4 "
                             "(batch x heads x sequence x head size), got ",
                             formatShape(query->getShape()), ", ",
                             formatShape(key->getShape()), " and ",
                             formatShape(value->getShape()));
  ArrayRef<int64_t> q = query->getShape(), k = key->getShape(),
                    v = value->getShape();
  if (q[0] != k[0] || k[0] != v[0])
    return emitOptionalError(location, "batch sizes differ: ", q[0], ", ", k[0],
                             " and ", v[0]);
  if (k[1] != v[1] || k[2] != v[2])
    return emitOptionalError(location, "key (", formatShape(k), ") and value (",
                             formatShape(v),
                             ") differ in heads or sequence length");
  if (k[1] == 0 || q[1] % k[1] != 0)
    return emitOptionalError(location, "query heads (", q[1],
                             ") are not a multiple of key/value heads (", k[1],
                             ")");
  if (q[3] != k[3])
    return emitOptionalError(
        location, "query and key head sizes differ: ", q[3], " and ", k[3]);
  if (causal && q[2] > k[2])
    return emitOptionalError(location,
                             "causal attention needs at most as "
                             "many queries as keys, got ",
                             q[2], " queries and ", k[2], " keys");
  if (scaleAttr) {
    double s = scaleAttr->convertToDouble();
    if (!std::isfinite(s) || s <= 0.0)
      return emitOptionalError(location,
                               "scale must be finite and positive, got ", s);
  }
  if (softcapAttr) {
    double c = softcapAttr->convertToDouble();
    if (!std::isfinite(c) || c <= 0.0)
      return emitOptionalError(location,
                               "softcap must be finite and positive, got ", c);
  }
  if (biasValue) {
    auto bias = getRankedTensor(location, biasValue, "bias");
    if (failed(bias))
      return failure();
    SmallVector<int64_t> scores = {q[0], q[1], q[2], k[2]};
    ArrayRef<int64_t> b = bias->getShape();
    if (!bias->getElementType().isF32() || b.size() != 4 ||
        llvm::any_of(llvm::zip(b, scores), [](auto pair) {
          auto [dim, full] = pair;
          return dim != full && dim != 1;
        }))
      return emitOptionalError(
          location, "bias must be an f32 tensor of shape ", formatShape(scores),
          " or with some of those dimensions 1 (broadcast), got ",
          biasValue.getType());
  }
  inferred.push_back(
      RankedTensorType::get({q[0], q[1], q[2], v[3]}, query->getElementType()));
  inferred.push_back(
      RankedTensorType::get({q[0], q[1], q[2]}, Float32Type::get(context)));
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferAttentionTypes(
      context, location, adaptor.getQuery(), adaptor.getKey(),
      adaptor.getValue(), adaptor.getBias(), adaptor.getCausal(),
      adaptor.getScale(), adaptor.getSoftcap(), inferred);
}

/// The attribute, else 1/sqrt(D) for the query's head size D.
static double getAttentionScale(std::optional<APFloat> scale,
                                RankedTensorType query) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(query.getDimSize(3)));
}

double AttentionOp::getScaleOrDefault() {
  return getAttentionScale(getScale(), getQuery().getType());
}

/// The dropout of tg.attention and tg.attention_grad: a rate in [0, 1), a
/// seed and a stream together; an offset or a global shape only with them.
template <typename Op> static LogicalResult verifyAttentionDropout(Op op) {
  if (!op.getDropout() && !op.getSeed() && !op.getStream()) {
    if (op.getOffset() || op.getGlobalShape())
      return op.emitOpError("offset and global_shape place a dropout mask: "
                            "they need dropout, seed and stream");
    return success();
  }
  if (!op.getDropout() || !op.getSeed() || !op.getStream())
    return op.emitOpError("attention dropout needs its rate, seed and stream "
                          "together");
  double rate = op.getDropout()->convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return op.emitOpError("dropout rate must be in [0, 1), got ") << rate;
  return success();
}

/// The probabilities' shape [B, H, Sq, Sk], which the dropout mask covers
/// (the query's shape while the operands are not yet verified).
static SmallVector<int64_t> getProbabilitiesShape(Value query, Value key) {
  auto q = dyn_cast<RankedTensorType>(query.getType());
  auto k = dyn_cast<RankedTensorType>(key.getType());
  if (!q || !k || q.getRank() != 4 || k.getRank() != 4)
    return q ? llvm::to_vector(q.getShape()) : SmallVector<int64_t>{};
  return {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), k.getDimSize(2)};
}

LogicalResult AttentionOp::verify() { return verifyAttentionDropout(*this); }
uint64_t AttentionOp::getRandomStream() { return getStream().value_or(0); }
SmallVector<int64_t> AttentionOp::getRandomShape() {
  return getProbabilitiesShape(getQuery(), getKey());
}
bool AttentionOp::drawsRandom() { return getSeed() != nullptr; }

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError("rate must be in [0, 1), got ") << rate;
  return success();
}

LogicalResult tgc::tg::verifyCounterRandomOp(Operation *op) {
  auto random = cast<CounterRandomOpInterface>(op);
  if (!random.drawsRandom())
    return success();
  auto stream = static_cast<int64_t>(random.getRandomStream());
  if (stream < 0)
    return op->emitOpError("stream must be non-negative, got ") << stream;
  // The stream is a 32-bit word of the counter: a larger one would draw
  // another stream's numbers.
  if (stream > int64_t(UINT32_MAX))
    return op->emitOpError("stream must be below 2^32 (a word of the Philox "
                           "counter), got ")
           << stream;
  if (std::optional<ArrayRef<int64_t>> whole = random.getRandomGlobalShape()) {
    SmallVector<int64_t> shape = random.getRandomShape();
    if (whole->size() != shape.size())
      return op->emitOpError("global_shape has ")
             << whole->size() << " dimensions, the numbers " << shape.size();
    std::optional<int64_t> elements = 1;
    for (auto [dim, pair] : llvm::enumerate(llvm::zip(*whole, shape))) {
      if (std::get<0>(pair) < std::get<1>(pair))
        return op->emitOpError("global_shape dimension ")
               << dim << " (" << std::get<0>(pair)
               << ") is smaller than the numbers' (" << std::get<1>(pair)
               << ")";
      if (elements)
        elements = llvm::checkedMul(*elements, std::get<0>(pair));
    }
    // Element indices are 64-bit counters.
    if (!elements)
      return op->emitOpError("global_shape has more elements than a 64-bit "
                             "index counts");
  }
  return success();
}

SmallVector<std::array<int64_t, 3>>
tgc::tg::getCounterIndexLevels(ArrayRef<int64_t> shape,
                               std::optional<ArrayRef<int64_t>> whole) {
  SmallVector<std::array<int64_t, 3>> levels;
  int64_t localStride = 1, wholeStride = 1;
  bool innerWhole = false;
  for (int64_t dim = static_cast<int64_t>(shape.size()) - 1; dim >= 0; --dim) {
    int64_t size = shape[dim];
    int64_t wholeSize = whole ? (*whole)[dim] : size;
    // Below a dimension the block spans whole, the next one continues the
    // same run of consecutive elements.
    if (innerWhole)
      levels.back()[0] *= size;
    else
      levels.push_back({size, localStride, wholeStride});
    innerWhole = size == wholeSize;
    localStride *= size;
    wholeStride *= wholeSize;
  }
  if (levels.empty())
    levels.push_back({1, 1, 1});
  std::reverse(levels.begin(), levels.end());
  return levels;
}

/// The checks shared by tg.fake_quant and tg.fake_quant_grad.
static LogicalResult verifyFakeQuant(Operation *op, Type operandType,
                                     RankedTensorType history, Type format,
                                     int64_t margin) {
  if (!isa<Float8E4M3FNType, Float8E5M2Type>(format))
    return op->emitOpError("format must be f8E4M3FN or f8E5M2, got ") << format;
  if (isa<Float8E4M3FNType, Float8E5M2Type>(getElementTypeOrSelf(operandType)))
    return op->emitOpError("operand is already fp8 (")
           << operandType << "); it holds the dequantized values";
  if (history.getRank() != 1 || history.getDimSize(0) < 1 ||
      !history.getElementType().isF32())
    return op->emitOpError("amax history must be a non-empty 1-D f32 "
                           "tensor, got ")
           << history;
  if (margin < 0)
    return op->emitOpError("margin must be non-negative, got ") << margin;
  return success();
}

LogicalResult FakeQuantOp::verify() {
  return verifyFakeQuant(*this, getOperand().getType(),
                         getAmaxHistory().getType(), getFormat(), getMargin());
}

LogicalResult FakeQuantGradOp::verify() {
  return verifyFakeQuant(*this, getOperand().getType(),
                         getAmaxHistory().getType(), getFormat(), getMargin());
}

/// The grid of a quantize_dequantize: an integer range of at most 32 bits
/// (the f32 computation holds every point of it exactly below 2^24).
static LogicalResult verifyQuantizeRange(Operation *op, int64_t low,
                                         int64_t high) {
  if (low > high)
    return op->emitOpError("range [")
           << low << ", " << high << "] is empty (low > high)";
  if (low < INT32_MIN || high > UINT32_MAX)
    return op->emitOpError("range [")
           << low << ", " << high << "] exceeds 32-bit integers";
  return success();
}

LogicalResult QuantizeDequantizeOp::verify() {
  return verifyQuantizeRange(*this, getLow(), getHigh());
}

LogicalResult QuantizeDequantizeGradOp::verify() {
  return verifyQuantizeRange(*this, getLow(), getHigh());
}

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto logits = getRankedTensor(location, adaptor.getLogits(), "logits");
  auto labels = getRankedTensor(location, adaptor.getLabels(), "labels");
  if (failed(logits) || failed(labels))
    return failure();
  if (logits->getRank() < 1)
    return emitOptionalError(location,
                             "logits must have a class dimension "
                             "(rank 1 or more), got ",
                             *logits);
  if (logits->getShape().drop_back() != labels->getShape())
    return emitOptionalError(
        location, "labels (", formatShape(labels->getShape()),
        ") must have the shape of the logits (",
        formatShape(logits->getShape()), ") without the class dimension");
  Type f32 = Float32Type::get(context);
  inferred.push_back(RankedTensorType::get({}, f32));
  inferred.push_back(RankedTensorType::get(labels->getShape(), f32));
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

/// The gradient's type after the parameter's: nothing when they are equal,
/// else `grad <type>`.
static ParseResult parseGradType(OpAsmParser &parser, Type &gradType,
                                 Type paramType) {
  if (succeeded(parser.parseOptionalKeyword("grad")))
    return parser.parseType(gradType);
  gradType = paramType;
  return success();
}

static void printGradType(OpAsmPrinter &printer, Operation *, Type gradType,
                          Type paramType) {
  if (gradType != paramType)
    printer << " grad " << gradType;
}

/// The gradient has the parameter's shape and its element type or a
/// narrower float type that widens to it exactly.
static LogicalResult verifyGradType(Operation *op, RankedTensorType param,
                                    RankedTensorType grad) {
  if (grad.getShape() != param.getShape())
    return op->emitOpError("gradient has shape ")
           << formatShape(grad.getShape()) << ", the parameter "
           << formatShape(param.getShape());
  auto paramFloat = cast<FloatType>(param.getElementType());
  auto gradFloat = cast<FloatType>(grad.getElementType());
  if (!APFloat::isRepresentableBy(gradFloat.getFloatSemantics(),
                                  paramFloat.getFloatSemantics()))
    return op->emitOpError("gradient element type ")
           << gradFloat << " does not widen exactly to the parameter's "
           << paramFloat;
  return success();
}

LogicalResult SgdOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getParam().getType());
  if (adaptor.getMomentumBuffer())
    inferred.push_back(adaptor.getParam().getType());
  return success();
}

LogicalResult SgdOp::verify() {
  if (failed(verifyGradType(*this, getParam().getType(), getGrad().getType())))
    return failure();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum < 1.0))
    return emitOpError("momentum must be in [0, 1), got ") << momentum;
  if ((momentum > 0.0) != static_cast<bool>(getMomentumBuffer()))
    return emitOpError(momentum > 0.0
                           ? "momentum > 0 needs a momentum_buffer operand"
                           : "a momentum_buffer needs momentum > 0");
  if (getMomentumBuffer() &&
      getMomentumBuffer().getType() != getParam().getType())
    return emitOpError("momentum_buffer has type ")
           << getMomentumBuffer().getType() << ", the parameter "
           << getParam().getType();
  if (getNesterov() && momentum == 0.0)
    return emitOpError("nesterov needs momentum > 0");
  return verifyFiniteNonNegative(*this, "weight_decay",
                                 getWeightDecay().convertToDouble());
}

/// AdamW and LAMB: moments of the parameter's type, betas in [0, 1), a
/// positive epsilon.
template <typename AdamLikeOp>
static LogicalResult verifyAdamLike(AdamLikeOp op) {
  if (failed(
          verifyGradType(op, op.getParam().getType(), op.getGrad().getType())))
    return failure();
  for (double beta :
       {op.getBeta1().convertToDouble(), op.getBeta2().convertToDouble()})
    if (!(beta >= 0.0 && beta < 1.0))
      return op.emitOpError("betas must be in [0, 1), got ") << beta;
  double epsilon = op.getEpsilon().convertToDouble();
  if (!(epsilon > 0.0) || std::isinf(epsilon))
    return op.emitOpError("epsilon must be finite and positive, got ")
           << epsilon;
  return verifyFiniteNonNegative(op, "weight_decay",
                                 op.getWeightDecay().convertToDouble());
}

LogicalResult AdamWOp::verify() { return verifyAdamLike(*this); }

LogicalResult LambOp::verify() { return verifyAdamLike(*this); }

SmallVector<RankedTensorType, 2>
AdafactorOp::getStateTypes(RankedTensorType param) {
  ArrayRef<int64_t> shape = param.getShape();
  if (shape.size() < 2)
    return {param};
  SmallVector<int64_t> columns(shape.drop_back(2));
  columns.push_back(shape.back());
  return {RankedTensorType::get(shape.drop_back(), param.getElementType()),
          RankedTensorType::get(columns, param.getElementType())};
}

LogicalResult AdafactorOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getParam().getType());
  llvm::append_range(inferred, adaptor.getState().getTypes());
  return success();
}

LogicalResult AdafactorOp::verify() {
  RankedTensorType paramType = getParam().getType();
  if (failed(verifyGradType(*this, paramType, getGrad().getType())))
    return failure();
  SmallVector<RankedTensorType, 2> expected = getStateTypes(paramType);
  bool factored = expected.size() == 2;
  if (getState().size() != expected.size())
    return emitOpError("a parameter of rank ")
           << paramType.getRank() << " needs "
           << (factored ? "2 states (the factored row and column second "
                          "moments)"
                        : "1 state (its second moment)")
           << ", got " << getState().size();
  static constexpr StringLiteral factoredStates[][2] = {
      {"row state", "the parameter's shape without its last dimension"},
      {"column state",
       "the parameter's shape without its second-to-last dimension"}};
  for (auto [i, state, type] : llvm::enumerate(getState(), expected)) {
    if (state.getType() == type)
      continue;
    InFlightDiagnostic diag =
        emitOpError(factored ? factoredStates[i][0] : "state")
        << " has type " << state.getType() << ", expected " << type;
    if (factored)
      diag << " (" << factoredStates[i][1] << ")";
    else
      diag << " (the parameter's)";
    return diag;
  }
  double decayRate = getDecayRate().convertToDouble();
  if (!(decayRate < 0.0) || std::isinf(decayRate))
    return emitOpError("decay_rate must be finite and negative, got ")
           << decayRate;
  for (auto [name, value] :
       {std::make_pair("epsilon1", getEpsilon1().convertToDouble()),
        std::make_pair("clip_threshold", getClipThreshold().convertToDouble())})
    if (!(value > 0.0) || std::isinf(value))
      return emitOpError() << name << " must be finite and positive, got "
                           << value;
  return verifyFiniteNonNegative(*this, "weight_decay",
                                 getWeightDecay().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxGradOp::verify() {
  return verifySoftmaxDimension(*this, getType(), getDimension());
}

/// Checks the gradient, input and statistics of a normalization's backward.
static LogicalResult verifyNormalizationGrad(std::optional<Location> location,
                                             Value gradOutput, Value input,
                                             ValueRange statistics, Value scale,
                                             SmallVectorImpl<Type> &inferred) {
  SmallVector<Type> forward;
  if (failed(inferNormalizationTypes(location, input, scale, "scale",
                                     statistics.size(), forward)))
    return failure();
  if (gradOutput.getType() != input.getType())
    return emitOptionalError(location, "grad_output has type ",
                             gradOutput.getType(), ", the input ",
                             input.getType());
  for (Value statistic : statistics) {
    auto type = dyn_cast<RankedTensorType>(statistic.getType());
    if (!type || type != forward.back())
      return emitOptionalError(location, "statistics must have type ",
                               forward.back(), " (the forward's), got ",
                               statistic.getType());
  }
  inferred.push_back(input.getType());
  return success();
}

LogicalResult LayerNormGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(verifyNormalizationGrad(location, adaptor.getGradOutput(),
                                     adaptor.getInput(),
                                     {adaptor.getMean(), adaptor.getRstd()},
                                     adaptor.getScale(), inferred)))
    return failure();
  inferred.append(2, adaptor.getScale().getType());
  return success();
}

LogicalResult RmsNormGradOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  if (failed(verifyNormalizationGrad(location, adaptor.getGradOutput(),
                                     adaptor.getInput(), adaptor.getRstd(),
                                     adaptor.getScale(), inferred)))
    return failure();
  inferred.push_back(adaptor.getScale().getType());
  return success();
}

/// Checks the operands of an attention backward op (tg.attention_grad,
/// tg.attention_bias_grad): the forward's, and its output gradient, output
/// and logsumexp of the forward's types.
template <typename Adaptor>
static LogicalResult verifyAttentionBackward(MLIRContext *context,
                                             std::optional<Location> location,
                                             Adaptor adaptor) {
  SmallVector<Type> forward;
  if (failed(inferAttentionTypes(
          context, location, adaptor.getQuery(), adaptor.getKey(),
          adaptor.getValue(), adaptor.getBias(), adaptor.getCausal(),
          adaptor.getScale(), adaptor.getSoftcap(), forward)))
    return failure();
  if (adaptor.getGradOutput().getType() != forward[0] ||
      adaptor.getOutput().getType() != forward[0])
    return emitOptionalError(location,
                             "grad_output and output must have the "
                             "forward's output type ",
                             forward[0]);
  if (adaptor.getLogsumexp().getType() != forward[1])
    return emitOptionalError(location, "logsumexp must have type ", forward[1]);
  return success();
}

LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(verifyAttentionBackward(context, location, adaptor)))
    return failure();
  inferred.push_back(adaptor.getQuery().getType());
  inferred.push_back(adaptor.getKey().getType());
  inferred.push_back(adaptor.getValue().getType());
  return success();
}

double AttentionGradOp::getScaleOrDefault() {
  return getAttentionScale(getScale(), getQuery().getType());
}

LogicalResult AttentionGradOp::verify() {
  return verifyAttentionDropout(*this);
}

LogicalResult AttentionBiasGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(verifyAttentionBackward(context, location, adaptor)))
    return failure();
  inferred.push_back(adaptor.getBias().getType());
  return success();
}

double AttentionBiasGradOp::getScaleOrDefault() {
  return getAttentionScale(getScale(), getQuery().getType());
}
LogicalResult AttentionBiasGradOp::verify() {
  return verifyAttentionDropout(*this);
}
uint64_t AttentionBiasGradOp::getRandomStream() {
  return getStream().value_or(0);
}
SmallVector<int64_t> AttentionBiasGradOp::getRandomShape() {
  return getProbabilitiesShape(getQuery(), getKey());
}
bool AttentionBiasGradOp::drawsRandom() { return getSeed() != nullptr; }
uint64_t AttentionGradOp::getRandomStream() { return getStream().value_or(0); }
SmallVector<int64_t> AttentionGradOp::getRandomShape() {
  return getProbabilitiesShape(getQuery(), getKey());
}
bool AttentionGradOp::drawsRandom() { return getSeed() != nullptr; }

LogicalResult EmbeddingGradOp::verify() {
  RankedTensorType gradType = getGradOutput().getType();
  RankedTensorType resultType = getType();
  if (resultType.getRank() != 2)
    return emitOpError("result must be a table of rank 2, got ") << resultType;
  if (gradType.getElementType() != resultType.getElementType())
    return emitOpError("result element type differs from grad_output's");
  if (gradType.getRank() < 1 ||
      gradType.getShape().drop_back() != getIndices().getType().getShape() ||
      gradType.getShape().back() != resultType.getDimSize(1))
    return emitOpError("grad_output (")
           << formatShape(gradType.getShape())
           << ") must have the shape of the indices ("
           << formatShape(getIndices().getType().getShape())
           << ") followed by the table width (" << resultType.getDimSize(1)
           << ")";
  return success();
}

/// Checks the shapes an expert product relates: `input` [rows..., H],
/// `ids` [rows...], `other` [rows..., O] (the product or its gradient) and
/// the experts' matrices `weight` [E, H, O] ([E, O, H] transposed).
static LogicalResult verifyExpertShapes(Operation *op, RankedTensorType input,
                                        RankedTensorType ids,
                                        RankedTensorType other, StringRef name,
                                        RankedTensorType weight,
                                        bool transposeB,
                                        std::optional<uint64_t> global) {
  if (weight.getRank() != 3)
    return op->emitOpError("expert matrices must have rank 3 (E, ")
           << (transposeB ? "O, H" : "H, O") << "), got " << weight;
  if (weight.getDimSize(0) == 0 && ids.getNumElements() > 0)
    return op->emitOpError("no expert for the ")
           << ids.getNumElements() << " rows: every id would be out of range";
  if (global && static_cast<int64_t>(*global) < weight.getDimSize(0))
    return op->emitOpError("global_experts (")
           << static_cast<int64_t>(*global) << ") must be at least the block's "
           << weight.getDimSize(0) << " experts";
  int64_t h = weight.getDimSize(transposeB ? 2 : 1);
  int64_t o = weight.getDimSize(transposeB ? 1 : 2);
  auto rowsOf = [](RankedTensorType type) {
    return type.getRank() < 1 ? ArrayRef<int64_t>()
                              : type.getShape().drop_back();
  };
  if (input.getRank() < 1 || rowsOf(input) != ids.getShape() ||
      input.getShape().back() != h)
    return op->emitOpError("input (")
           << formatShape(input.getShape())
           << ") must have the shape of the ids ("
           << formatShape(ids.getShape())
           << ") followed by the matrices' input width (" << h << ")";
  if (other.getRank() < 1 || rowsOf(other) != ids.getShape() ||
      other.getShape().back() != o)
    return op->emitOpError()
           << name << " (" << formatShape(other.getShape())
           << ") must have the shape of the ids ("
           << formatShape(ids.getShape())
           << ") followed by the matrices' output width (" << o << ")";
  return success();
}

LogicalResult ExpertMatmulOp::verify() {
  RankedTensorType input = getInput().getType(), weight = getWeight().getType();
  if (input.getElementType() != weight.getElementType())
    return emitOpError("input and weight must have one element type, got ")
           << input.getElementType() << " and " << weight.getElementType();
  return verifyExpertShapes(*this, input, getIds().getType(), getType(),
                            "result", weight, getTransposeB(),
                            getGlobalExperts());
}
RankedTensorType ExpertMatmulOp::getMatricesType() {
  return getWeight().getType();
}
RankedTensorType ExpertMatmulGradOp::getMatricesType() { return getType(); }

LogicalResult ExpertMatmulGradOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType grad = getGradOutput().getType();
  if (input.getElementType() != grad.getElementType() ||
      input.getElementType() != getType().getElementType())
    return emitOpError("input, grad_output and result must have one element "
                       "type, got ")
           << input.getElementType() << ", " << grad.getElementType() << " and "
           << getType().getElementType();
  return verifyExpertShapes(*this, input, getIds().getType(), grad,
                            "grad_output", getType(), getTransposeB(),
                            getGlobalExperts());
}

LogicalResult CrossEntropyGradOp::verify() {
  RankedTensorType logits = getLogits().getType();
  ArrayRef<int64_t> tokens = getLabels().getType().getShape();
  if (logits.getRank() < 1 || logits.getShape().drop_back() != tokens)
    return emitOpError("labels (")
           << formatShape(tokens) << ") must have the shape of the logits ("
           << formatShape(logits.getShape()) << ") without the class dimension";
  auto expected = RankedTensorType::get(tokens, Float32Type::get(getContext()));
  if (getLogsumexp().getType() != expected)
    return emitOpError("logsumexp must have type ")
           << expected << " (the forward's), got " << getLogsumexp().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

LogicalResult FusionOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " argument(s) for "
           << getInputs().size() << " input(s)";
  for (auto [i, input, arg] : llvm::enumerate(getInputs(), body.getArguments()))
    if (input.getType() != arg.getType())
      return emitOpError("body argument ") << i << " has type " << arg.getType()
                                           << ", input has " << input.getType();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end with tg.yield");
  if (yield.getValues().getTypes() != getResultTypes()) {
    InFlightDiagnostic diag = yield.emitOpError("yields ");
    if (yield.getValues().empty())
      diag << "no values";
    else
      diag << yield.getValues().getTypes();
    return diag << ", the fusion returns " << getResultTypes();
  }
  std::optional<StringRef> kind = getKind();
  if (kind &&
      !llvm::is_contained({"loop", "reduction", "gemm", "multi_tensor"}, *kind))
    return emitOpError("has unknown kind '")
           << *kind << "' (expected loop, reduction, gemm or multi_tensor)";
  if ((getEpilogue() || getEpilogueC()) && kind != "gemm")
    return emitOpError("has an epilogue but is not a gemm region");
  if (getEpilogue() && !getEpilogue()->starts_with("CUBLASLT_EPILOGUE_"))
    return emitOpError("epilogue '")
           << *getEpilogue() << "' is not a cuBLASLt epilogue name";
  return success();
}

#define GET_OP_CLASSES
#include "tgc/Dialect/TG/TGOps.cpp.inc"
