//===- GraphImporter.cpp - values, attributes and folding of an import ----===//

#include "GraphImporter.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

Type onnx_import::getElementType(MLIRContext &context, int32_t dataType) {
  Builder b(&context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::string onnx_import::getDataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

DenseElementsAttr onnx_import::toAttribute(const Tensor &tensor) {
  RankedTensorType type = tensor.getType();
  Type elementType = type.getElementType();
  int64_t count = tensor.getNumElements();
  if (tensor.isIntStorage()) {
    if (elementType.isInteger(1)) {
      SmallVector<bool> bits(count);
      for (int64_t i = 0; i < count; ++i)
        bits[i] = tensor.ints()[i] != 0;
      return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
    }
    unsigned width = elementType.getIntOrFloatBitWidth();
    SmallVector<APInt> ints;
    ints.reserve(count);
    for (int64_t value : tensor.ints())
      ints.push_back(
          APInt(width, value, /*isSigned=*/true, /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, ints);
  }
  if (elementType.isF32() && tensor.isFloatStorage())
    return DenseElementsAttr::get(type, ArrayRef<float>(tensor.floats()));
  if (elementType.isF64() && tensor.isDoubleStorage())
    return DenseElementsAttr::get(type, ArrayRef<double>(tensor.doubles()));
  const llvm::fltSemantics &semantics =
      cast<FloatType>(elementType).getFloatSemantics();
  SmallVector<APFloat> floats;
  floats.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    APFloat value(tensor.getAsDouble(i));
    bool losesInfo = false;
    value.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    floats.push_back(value);
  }
  return DenseElementsAttr::get(type, floats);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

const Tensor *GraphImporter::getConstant(Value value) const {
  auto it = constants.find(value);
  return it == constants.end() ? nullptr : &it->second;
}

Value GraphImporter::constant(Tensor tensor) {
  normalizeTensor(tensor, foldOptions);
  Value value = tg::ConstantOp::create(builder, location, toAttribute(tensor))
                    .getResult();
  constants[value] = std::move(tensor);
  return value;
}

Value GraphImporter::constant(RankedTensorType type, ArrayRef<double> values) {
  KernelContext context{foldOptions};
  Tensor tensor = context.makeResult(type);
  for (auto [i, value] : llvm::enumerate(values)) {
    if (tensor.isIntStorage())
      tensor.ints()[i] = static_cast<int64_t>(value);
    else if (tensor.isDoubleStorage())
      tensor.doubles()[i] = value;
    else
      tensor.floats()[i] = static_cast<float>(value);
  }
  return constant(std::move(tensor));
}

Value GraphImporter::constantInts(ArrayRef<int64_t> values, Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  Tensor tensor(tensorType, Tensor::Storage::Int);
  llvm::copy(values, tensor.ints().begin());
  return constant(std::move(tensor));
}

Value GraphImporter::splat(RankedTensorType type, double value) {
  Value scalar =
      constant(RankedTensorType::get({}, type.getElementType()), {value});
  return broadcastTo(scalar, type.getShape());
}

SmallVector<Value> GraphImporter::finish(Operation *op) {
  SmallVector<Value> results(op->getResults());
  if (errorSeen)
    return results;
  if (failed(verify(op, /*verifyRecursively=*/false))) {
    errorSeen = true;
    return results;
  }
  SmallVector<const Tensor *> operands;
  for (Value operand : op->getOperands()) {
    const Tensor *tensor = getConstant(operand);
    if (!tensor)
      return results;
    operands.push_back(tensor);
  }
  for (Type type : op->getResultTypes())
    if (cast<RankedTensorType>(type).getNumElements() > kMaxFoldElements) {
      op->emitError("constant too large to fold at import: ") << type;
      errorSeen = true;
      return results;
    }
  const Kernel *kernel =
      KernelRegistry::getDefault().lookup(op->getName().getStringRef());
  if (!kernel)
    return results;
  KernelContext context{foldOptions};
  SmallVector<Tensor> tensors;
  if (failed((*kernel)(op, operands, tensors, context))) {
    errorSeen = true;
    return results;
  }
  // The op is new: nothing uses it yet, so its constants simply replace it.
  SmallVector<Value> folded;
  for (Tensor &tensor : tensors)
    folded.push_back(constant(std::move(tensor)));
  op->erase();
  return folded;
}

//===----------------------------------------------------------------------===//
// The current node
//===----------------------------------------------------------------------===//

InFlightDiagnostic GraphImporter::emitNodeError() {
  errorSeen = true;
  std::string name =
      node->name().empty() ? std::string("<unnamed>") : node->name();
  return emitError(location) << "node '" << name << "' (" << node->op_type()
                             << ", opset " << opset << "): ";
}

Value GraphImporter::input(unsigned index) const {
  if (int(index) >= node->input_size() || node->input(index).empty())
    return {};
  return values.lookup(node->input(index));
}

FailureOr<Value> GraphImporter::requireInput(unsigned index) {
  if (int(index) >= node->input_size() || node->input(index).empty()) {
    emitNodeError() << "input #" << index << " is missing";
    return failure();
  }
  Value value = values.lookup(node->input(index));
  if (!value) {
    emitNodeError() << "input '" << node->input(index)
                    << "' is not defined before this node";
    return failure();
  }
  return value;
}

void GraphImporter::setOutput(unsigned index, Value value) {
  if (hasOutput(index))
    values[node->output(index)] = value;
}

FailureOr<SmallVector<int64_t>>
GraphImporter::requireConstantInts(unsigned index, StringRef what) {
  FailureOr<Value> value = requireInput(index);
  if (failed(value))
    return failure();
  const Tensor *tensor = getConstant(*value);
  if (!tensor) {
    emitNodeError() << "'" << what << "' (input '" << node->input(index)
                    << "') must be computable at import, but it depends on "
                       "a graph input or parameter";
    return failure();
  }
  if (!tensor->isIntStorage() || tensor->getElementType().isInteger(1)) {
    emitNodeError() << "'" << what << "' must hold integers, got "
                    << tensor->getType();
    return failure();
  }
  return SmallVector<int64_t>(tensor->ints().begin(), tensor->ints().end());
}

FailureOr<double> GraphImporter::requireConstantScalar(unsigned index,
                                                       StringRef what) {
  FailureOr<Value> value = requireInput(index);
  if (failed(value))
    return failure();
  const Tensor *tensor = getConstant(*value);
  if (!tensor || tensor->getNumElements() != 1) {
    emitNodeError() << "'" << what << "' (input '" << node->input(index)
                    << "') must be computable at import (a single value), "
                       "but it is not";
    return failure();
  }
  return tensor->getAsDouble(0);
}

const onnx::AttributeProto *GraphImporter::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attribute : node->attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

int64_t GraphImporter::getInt(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *a = attribute(name);
  return a && a->has_i() ? a->i() : defaultValue;
}

float GraphImporter::getFloat(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *a = attribute(name);
  return a && a->has_f() ? a->f() : defaultValue;
}

std::string GraphImporter::getString(StringRef name,
                                     StringRef defaultValue) const {
  const onnx::AttributeProto *a = attribute(name);
  return a && a->has_s() ? a->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>>
GraphImporter::getInts(StringRef name) const {
  const onnx::AttributeProto *a = attribute(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<std::optional<SmallVector<int64_t>>>
GraphImporter::getAxes(unsigned inputIndex, StringRef attributeName) {
  if (input(inputIndex)) {
    FailureOr<SmallVector<int64_t>> axes =
        requireConstantInts(inputIndex, "axes");
    if (failed(axes))
      return failure();
    return std::optional<SmallVector<int64_t>>(std::move(*axes));
  }
  if (int(inputIndex) < node->input_size() &&
      !node->input(inputIndex).empty()) {
    emitNodeError() << "input '" << node->input(inputIndex)
                    << "' is not defined before this node";
    return failure();
  }
  return getInts(attributeName);
}

FailureOr<int64_t> GraphImporter::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    emitNodeError() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

Value GraphImporter::reshape(Value value, ArrayRef<int64_t> shape) {
  RankedTensorType type = getType(value);
  if (type.getShape() == shape)
    return value;
  return create<tg::ReshapeOp>(type.clone(shape), value);
}

Value GraphImporter::transpose(Value value, ArrayRef<int64_t> perm) {
  RankedTensorType type = getType(value);
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return value;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(p >= 0 && p < type.getRank() ? type.getDimSize(p) : 1);
  return create<tg::TransposeOp>(type.clone(shape), value, perm);
}

Value GraphImporter::convert(Value value, Type elementType) {
  RankedTensorType type = getType(value);
  if (type.getElementType() == elementType)
    return value;
  return create<tg::ConvertOp>(type.clone(elementType), value);
}

FailureOr<SmallVector<int64_t>>
GraphImporter::broadcastShapes(ArrayRef<Value> operands) {
  SmallVector<int64_t> shape;
  for (Value operand : operands) {
    ArrayRef<int64_t> other = getType(operand).getShape();
    if (other.size() > shape.size())
      shape.insert(shape.begin(), other.size() - shape.size(), 1);
    size_t offset = shape.size() - other.size();
    for (auto [i, dim] : llvm::enumerate(other)) {
      int64_t &result = shape[offset + i];
      if (result == dim || dim == 1)
        continue;
      if (result != 1) {
        InFlightDiagnostic diag = emitNodeError()
                                  << "shapes cannot be broadcast together:";
        for (Value v : operands)
          diag << " " << v.getType();
        return failure();
      }
      result = dim;
    }
  }
  return shape;
}

Value GraphImporter::broadcastTo(Value value, ArrayRef<int64_t> shape) {
  RankedTensorType type = getType(value);
  if (type.getShape() == shape)
    return value;
  int64_t offset = int64_t(shape.size()) - type.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getRank(); ++i)
    dims.push_back(offset + i);
  return create<tg::BroadcastInDimOp>(type.clone(shape), value, dims);
}

Value GraphImporter::reduce(tg::ReduceKind kind, Value value,
                            ArrayRef<int64_t> dims, bool keepDims) {
  RankedTensorType type = getType(value);
  SmallVector<int64_t> sorted(dims);
  llvm::sort(sorted);
  SmallVector<int64_t> kept, keptWithOnes;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    bool reduced = llvm::is_contained(sorted, i);
    if (!reduced)
      kept.push_back(type.getDimSize(i));
    keptWithOnes.push_back(reduced ? 1 : type.getDimSize(i));
  }
  Value result = value;
  if (!sorted.empty())
    result = create<tg::ReduceOp>(type.clone(kept), kind, value, sorted);
  return keepDims ? reshape(result, keptWithOnes) : result;
}

Value GraphImporter::slice(Value value, ArrayRef<int64_t> starts,
                           ArrayRef<int64_t> limits,
                           ArrayRef<int64_t> strides) {
  RankedTensorType type = getType(value);
  SmallVector<int64_t> shape;
  bool whole = true;
  for (auto [i, start, limit, stride] :
       llvm::enumerate(starts, limits, strides)) {
    shape.push_back(stride > 0 && limit > start
                        ? (limit - start + stride - 1) / stride
                        : 0);
    whole &= start == 0 && limit == type.getDimSize(i) && stride == 1;
  }
  if (whole)
    return value;
  return create<tg::SliceOp>(type.clone(shape), value, starts, limits, strides);
}

Value GraphImporter::takeRows(Value table, Value ids) {
  RankedTensorType type = getType(table);
  RankedTensorType idType = getType(ids);
  ArrayRef<int64_t> rest = type.getShape().drop_front();
  int64_t width = 1, count = 1;
  for (int64_t dim : rest)
    width *= dim;
  for (int64_t dim : idType.getShape())
    count *= dim;
  Value rows = create<tg::EmbeddingOp>(
      type.clone(ArrayRef<int64_t>{count, width}),
      reshape(table, {type.getDimSize(0), width}), reshape(ids, {count}));
  SmallVector<int64_t> shape(idType.getShape());
  llvm::append_range(shape, rest);
  return reshape(rows, shape);
}

Value GraphImporter::takeAlongAxis(Value value, int64_t axis,
                                   ArrayRef<int64_t> indices) {
  RankedTensorType type = getType(value);
  if (llvm::equal(indices, llvm::seq<int64_t>(0, type.getDimSize(axis))))
    return value;
  // The axis first, its positions picked as rows, then back in place.
  SmallVector<int64_t> perm{axis}, inverse;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != axis)
      perm.push_back(d);
  for (int64_t d = 0; d < type.getRank(); ++d)
    inverse.push_back(d < axis ? d + 1 : d == axis ? 0 : d);
  Value ids =
      constantInts(indices, RankedTensorType::get({int64_t(indices.size())},
                                                  builder.getI64Type()));
  return transpose(takeRows(transpose(value, perm), ids), inverse);
}
