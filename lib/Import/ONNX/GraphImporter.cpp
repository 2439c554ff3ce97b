//===- GraphImporter.cpp - values, attributes and folding of an import ----===//

#include "GraphImporter.h"

#include "tgc/Support/Diagnostics.h"

#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstring>
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
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case kFloat8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case kFloat8E5M2:
    return b.getType<Float8E5M2Type>();
  case kFloat8E4M3FNUZ:
    return b.getType<Float8E4M3FNUZType>();
  case kFloat8E5M2FNUZ:
    return b.getType<Float8E5M2FNUZType>();
  case kFloat4E2M1:
    return b.getType<Float4E2M1FNType>();
  case kFloat8E8M0:
    return b.getType<Float8E8M0FNUType>();
  case kInt4:
    return b.getIntegerType(4);
  case kUInt4:
    return b.getIntegerType(4, /*isSigned=*/false);
  case kInt2:
    return b.getIntegerType(2);
  case kUInt2:
    return b.getIntegerType(2, /*isSigned=*/false);
  default:
    return {};
  }
}

std::string onnx_import::getDataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  // The names ONNX 1.14 to 1.23 added.
  static const char *const later[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",
      "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0", "UINT2",          "INT2"};
  if (dataType >= 17 && dataType < 17 + int32_t(std::size(later)))
    return later[dataType - 17];
  return "data type " + std::to_string(dataType);
}

/// Whether every element has the first one's bits (a splat; NaN and -0.0
/// compared as bits, not as numbers).
template <typename T>
static bool hasEqualElements(const std::vector<T> &values) {
  return llvm::all_of(values, [&](const T &value) {
    return std::memcmp(&value, &values.front(), sizeof(T)) == 0;
  });
}

DenseElementsAttr onnx_import::toAttribute(const Tensor &tensor) {
  RankedTensorType type = tensor.getType();
  Type elementType = type.getElementType();
  // A splat (a broadcast constant, a ConstantOfShape) is one value: not
  // spelled out element by element, which for a folded tensor of 2^24
  // elements took 16 bytes each.
  bool splat = tensor.getNumElements() > 1 &&
               (tensor.isIntStorage()      ? hasEqualElements(tensor.ints())
                : tensor.isFloatStorage()  ? hasEqualElements(tensor.floats())
                : tensor.isDoubleStorage() ? hasEqualElements(tensor.doubles())
                                           : false);
  int64_t count = splat ? 1 : tensor.getNumElements();
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
    for (int64_t value : ArrayRef(tensor.ints()).take_front(count))
      ints.push_back(
          APInt(width, value, /*isSigned=*/true, /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, ints);
  }
  if (elementType.isF32() && tensor.isFloatStorage())
    return DenseElementsAttr::get(
        type, ArrayRef<float>(tensor.floats()).take_front(count));
  if (elementType.isF64() && tensor.isDoubleStorage())
    return DenseElementsAttr::get(
        type, ArrayRef<double>(tensor.doubles()).take_front(count));
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

int64_t onnx_import::toInt64Saturating(double value) {
  if (std::isnan(value))
    return 0;
  if (value >= 0x1p63)
    return INT64_MAX;
  if (value < -0x1p63)
    return INT64_MIN;
  return static_cast<int64_t>(value);
}

Value GraphImporter::constant(RankedTensorType type, ArrayRef<double> values) {
  KernelContext context{foldOptions};
  Tensor tensor = context.makeResult(type);
  for (auto [i, value] : llvm::enumerate(values)) {
    if (tensor.isIntStorage())
      tensor.ints()[i] = toInt64Saturating(value);
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

LogicalResult GraphImporter::blameNode(Operation *op,
                                       function_ref<LogicalResult()> check) {
  std::string message;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler capture(
        builder.getContext(), [&](Diagnostic &diag) -> LogicalResult {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return failure();
          if (message.empty())
            message = diag.str();
          return success();
        });
    result = check();
  }
  if (failed(result)) {
    // The op's own prefix ("'tg.slice' op ") would name it twice.
    std::string prefix = "'" + op->getName().getStringRef().str() + "' op ";
    StringRef reason = message;
    reason.consume_front(prefix);
    emitNodeError() << "the '" << op->getName() << "' built for this node is "
                    << "invalid: "
                    << (reason.empty() ? StringRef("no reason given") : reason);
  }
  return result;
}

SmallVector<Value> GraphImporter::finish(Operation *op) {
  SmallVector<Value> results(op->getResults());
  if (errorSeen)
    return results;
  if (failed(blameNode(
          op, [&] { return verify(op, /*verifyRecursively=*/false); }))) {
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
  // Past either budget the op stays in the graph, computed at run time:
  // a chain of large constant ops cannot make the import itself huge.
  int64_t elements = 0;
  for (Type type : op->getResultTypes())
    elements += cast<RankedTensorType>(type).getNumElements();
  int64_t flops = 0;
  if (auto costed = dyn_cast<tg::CostOpInterface>(op))
    flops = std::max<int64_t>(0, costed.getCost().flops);
  if (elements > kMaxFoldElements) {
    if (!foldLimitReported)
      emitRemark(location) << "a constant of " << elements
                           << " elements is computed at run time, not folded "
                              "at import (the limit is "
                           << kMaxFoldElements << ")";
    foldLimitReported = true;
    return results;
  }
  bool small = elements <= kAlwaysFoldElements && flops <= kAlwaysFoldFlops;
  if (!small && (elements > kMaxTotalFoldElements - foldedElements ||
                 flops > kMaxTotalFoldFlops - foldedFlops)) {
    if (!foldBudgetReported)
      emitWarning(location)
          << "constant folding stops here, after " << foldedElements
          << " elements and " << foldedFlops
          << " FLOPs (the import's budget is " << kMaxTotalFoldElements
          << " elements and " << kMaxTotalFoldFlops
          << " FLOPs): this and later constant ops are computed at run time, "
             "but for those of at most "
          << kAlwaysFoldElements << " elements (shapes, axes)";
    foldBudgetReported = true;
    return results;
  }
  const Kernel *kernel =
      KernelRegistry::getDefault().lookup(op->getName().getStringRef());
  if (!kernel)
    return results;
  KernelContext context{foldOptions};
  SmallVector<Tensor> tensors;
  if (failed(blameNode(
          op, [&] { return (*kernel)(op, operands, tensors, context); }))) {
    errorSeen = true;
    return results;
  }
  foldedElements += elements;
  foldedFlops += flops;
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
  std::string name = node->name().empty() ? std::string("<unnamed>")
                                          : printableName(node->name());
  return emitError(location)
         << "node '" << name << "' (" << printableName(node->op_type())
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
  if (!value && sequences.count(node->input(index))) {
    emitNodeError() << "input '" << printableName(node->input(index))
                    << "' is a sequence: tg reads sequences only with "
                       "SequenceAt";
    return failure();
  }
  if (!value) {
    emitNodeError() << "input '" << printableName(node->input(index))
                    << "' is not defined before this node";
    return failure();
  }
  return value;
}

void GraphImporter::setOutput(unsigned index, Value value) {
  if (hasOutput(index))
    define(node->output(index), value);
}

void GraphImporter::setSequenceOutput(unsigned index, ArrayRef<Value> tensors) {
  if (!hasOutput(index))
    return;
  shadow(node->output(index));
  sequences[node->output(index)].assign(tensors.begin(), tensors.end());
}

void GraphImporter::shadow(StringRef name) {
  if (!openScopes)
    return;
  Shadowed entry{name.str(), std::nullopt, std::nullopt};
  if (auto it = values.find(name); it != values.end())
    entry.value = it->second;
  if (auto it = sequences.find(name); it != sequences.end())
    entry.sequence = it->second;
  shadowed.push_back(std::move(entry));
}

void GraphImporter::endScope(size_t mark) {
  // Newest first, so that a name defined twice gets its oldest value back.
  while (shadowed.size() > mark) {
    Shadowed &entry = shadowed.back();
    if (entry.value)
      values[entry.name] = *entry.value;
    else
      values.erase(entry.name);
    if (entry.sequence)
      sequences[entry.name] = std::move(*entry.sequence);
    else
      sequences.erase(entry.name);
    shadowed.pop_back();
  }
  --openScopes;
}

FailureOr<ArrayRef<Value>> GraphImporter::requireSequenceInput(unsigned index) {
  if (int(index) >= node->input_size() || node->input(index).empty()) {
    emitNodeError() << "input #" << index << " is missing";
    return failure();
  }
  auto it = sequences.find(node->input(index));
  if (it == sequences.end()) {
    emitNodeError() << "input '" << printableName(node->input(index))
                    << "' is not a sequence";
    return failure();
  }
  return ArrayRef<Value>(it->second);
}

std::string GraphImporter::explainNotConstant(Value value,
                                              std::string *hintOut) const {
  // The arguments `value` is computed from, depth first in operand order
  // (the values an op's regions capture count as its operands).
  SmallVector<Value> arguments, worklist = {value};
  DenseSet<Value> visited;
  while (!worklist.empty()) {
    Value next = worklist.pop_back_val();
    if (!visited.insert(next).second)
      continue;
    if (argumentDescriptions.count(next)) {
      arguments.push_back(next);
      continue;
    }
    Operation *op = next.getDefiningOp();
    if (!op)
      continue;
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    for (Value operand : llvm::reverse(captured))
      worklist.push_back(operand);
    for (Value operand : llvm::reverse(op->getOperands()))
      worklist.push_back(operand);
  }
  if (arguments.empty())
    return "it is computed at run time (by an op folding does not compute, "
           "such as a random one, or past the folding budget)";
  // "A", "A and B", "A, B and C", "A, B, C and 2 more".
  constexpr size_t kNamed = 3;
  std::string text = "it depends on ", hint;
  size_t named = std::min(arguments.size(), kNamed);
  for (auto [i, argument] : llvm::enumerate(arguments)) {
    const ArgumentDescription &description = argumentDescriptions.at(argument);
    if (hint.empty() && description.kind == "graph input")
      hint = "; a graph input can be fixed with --input-value " +
             printableName(description.name) + "=FILE";
    if (i >= named)
      continue;
    if (i)
      text += i + 1 == named && named == arguments.size() ? " and " : ", ";
    text += description.kind + " '" + printableName(description.name) + "'";
  }
  if (arguments.size() > named)
    text += " and " + std::to_string(arguments.size() - named) + " more";
  if (hintOut) {
    *hintOut = hint;
    return text;
  }
  return text + hint;
}

const Tensor *GraphImporter::requireConstant(unsigned index, StringRef what) {
  FailureOr<Value> value = requireInput(index);
  if (failed(value))
    return nullptr;
  const Tensor *tensor = getConstant(*value);
  if (!tensor)
    emitNodeError() << "'" << what << "' (input '"
                    << printableName(node->input(index))
                    << "') must be computable at import, but "
                    << explainNotConstant(*value);
  return tensor;
}

FailureOr<SmallVector<int64_t>>
GraphImporter::requireConstantInts(unsigned index, StringRef what) {
  const Tensor *tensor = requireConstant(index, what);
  if (!tensor)
    return failure();
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
    emitNodeError() << "'" << what << "' (input '"
                    << printableName(node->input(index))
                    << "') must be computable at import (a single value), "
                       "but "
                    << (tensor ? "it holds " +
                                     std::to_string(tensor->getNumElements()) +
                                     " values"
                               : explainNotConstant(*value));
    return failure();
  }
  return tensor->getAsDouble(0);
}

FailureOr<SmallVector<double>>
GraphImporter::requireConstantFloats(unsigned index, StringRef what) {
  const Tensor *tensor = requireConstant(index, what);
  if (!tensor)
    return failure();
  SmallVector<double> values;
  for (int64_t i = 0; i < tensor->getNumElements(); ++i) {
    values.push_back(tensor->getAsDouble(i));
    if (!std::isfinite(values.back())) {
      emitNodeError() << "'" << what << "' holds " << values.back() << " at "
                      << i << ": its values must be finite";
      return failure();
    }
  }
  return values;
}

/// The type of attribute `a`: its `type` field, or for models written
/// before the field existed, the value it holds.
static onnx::AttributeProto::AttributeType
getAttributeType(const onnx::AttributeProto &a) {
  using Attr = onnx::AttributeProto;
  if (a.type() != Attr::UNDEFINED)
    return a.type();
  if (a.has_i())
    return Attr::INT;
  if (a.has_f())
    return Attr::FLOAT;
  if (a.has_s())
    return Attr::STRING;
  if (a.has_t())
    return Attr::TENSOR;
  if (a.ints_size())
    return Attr::INTS;
  if (a.floats_size())
    return Attr::FLOATS;
  if (a.strings_size())
    return Attr::STRINGS;
  return Attr::UNDEFINED;
}

/// "an int", "a float (1.5)", "a string ("one")": what an attribute holds,
/// for an error.
static std::string describeAttribute(const onnx::AttributeProto &a) {
  using Attr = onnx::AttributeProto;
  switch (getAttributeType(a)) {
  case Attr::INT:
    return "an int (" + std::to_string(a.i()) + ")";
  case Attr::FLOAT: {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", a.f());
    return "a float (" + text + ")";
  }
  case Attr::STRING:
    return "a string ('" + printableName(a.s()) + "')";
  case Attr::TENSOR:
    return "a tensor";
  case Attr::INTS:
    return "a list of ints";
  case Attr::FLOATS:
    return "a list of floats";
  case Attr::STRINGS:
    return "a list of strings";
  case Attr::UNDEFINED:
    return "no value";
  default:
    return onnx::AttributeProto::AttributeType_Name(getAttributeType(a));
  }
}

static StringRef getTypeDescription(onnx::AttributeProto::AttributeType type) {
  using Attr = onnx::AttributeProto;
  switch (type) {
  case Attr::INT:
    return "an int";
  case Attr::FLOAT:
    return "a float";
  case Attr::STRING:
    return "a string";
  case Attr::TENSOR:
    return "a tensor";
  case Attr::INTS:
    return "a list of ints";
  case Attr::FLOATS:
    return "a list of floats";
  default:
    return "of another type";
  }
}

const onnx::AttributeProto *
GraphImporter::attribute(StringRef name,
                         onnx::AttributeProto::AttributeType type) {
  for (const onnx::AttributeProto &a : node->attribute()) {
    if (a.name() != name)
      continue;
    onnx::AttributeProto::AttributeType actual = getAttributeType(a);
    // An empty list written without a type (old exporters) fits any list.
    bool emptyList = actual == onnx::AttributeProto::UNDEFINED &&
                     (type == onnx::AttributeProto::INTS ||
                      type == onnx::AttributeProto::FLOATS);
    if (actual == type || emptyList)
      return &a;
    emitNodeError() << "attribute '" << name << "' must be "
                    << getTypeDescription(type) << ", got "
                    << describeAttribute(a);
    return nullptr;
  }
  return nullptr;
}

std::optional<int64_t> GraphImporter::getOptionalInt(StringRef name) {
  if (const onnx::AttributeProto *a =
          attribute(name, onnx::AttributeProto::INT))
    return a->i();
  return std::nullopt;
}

int64_t GraphImporter::getInt(StringRef name, int64_t defaultValue) {
  return getOptionalInt(name).value_or(defaultValue);
}

FailureOr<int64_t> GraphImporter::requireInt(StringRef name) {
  if (std::optional<int64_t> value = getOptionalInt(name))
    return *value;
  if (!errorSeen)
    emitNodeError() << "attribute '" << name << "' is required";
  return failure();
}

bool GraphImporter::getBool(StringRef name, bool defaultValue) {
  std::optional<int64_t> value = getOptionalInt(name);
  if (!value)
    return defaultValue;
  if (*value != 0 && *value != 1)
    emitNodeError() << "attribute '" << name << "' must be 0 or 1, got "
                    << *value;
  return *value != 0;
}

std::optional<float> GraphImporter::getOptionalFloat(StringRef name) {
  if (const onnx::AttributeProto *a =
          attribute(name, onnx::AttributeProto::FLOAT))
    return a->f();
  return std::nullopt;
}

float GraphImporter::getFloat(StringRef name, float defaultValue) {
  return getOptionalFloat(name).value_or(defaultValue);
}

std::string GraphImporter::getString(StringRef name, StringRef defaultValue,
                                     ArrayRef<StringRef> allowed) {
  const onnx::AttributeProto *a = attribute(name, onnx::AttributeProto::STRING);
  if (!a)
    return defaultValue.str();
  if (!allowed.empty() && !llvm::is_contained(allowed, a->s())) {
    InFlightDiagnostic diag = emitNodeError()
                              << "attribute '" << name << "' is '"
                              << printableName(a->s()) << "', expected one of";
    for (StringRef value : allowed)
      diag << " '" << value << "'";
    return defaultValue.str();
  }
  return a->s();
}

std::optional<SmallVector<int64_t>> GraphImporter::getInts(StringRef name) {
  const onnx::AttributeProto *a = attribute(name, onnx::AttributeProto::INTS);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

const onnx::TensorProto *GraphImporter::getTensor(StringRef name) {
  const onnx::AttributeProto *a = attribute(name, onnx::AttributeProto::TENSOR);
  return a ? &a->t() : nullptr;
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
    emitNodeError() << "input '" << printableName(node->input(inputIndex))
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

LogicalResult GraphImporter::checkIndexLength(int64_t size,
                                              const llvm::Twine &what) {
  if (size <= kMaxFoldElements)
    return success();
  return fail(what + " has " + llvm::Twine(size) +
              " positions, more than tgc lists at import (" +
              llvm::Twine(kMaxFoldElements) + ")");
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
