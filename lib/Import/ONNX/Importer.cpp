//===- Importer.cpp - ONNX models to tg functions -------------------------===//
//
// The model level of the import: tensors (inline, raw or in external data
// files), graph inputs and initializers as arguments, nodes in order through
// their converters, outputs and the loss as results.
//
//===----------------------------------------------------------------------===//

#include "tgc/Import/ONNX/Importer.h"

#include "ConverterUtils.h"
#include "GraphImporter.h"
#include "InitializerRoles.h"
#include "LocalFunctions.h"
#include "ParameterProvenance.h"

#include "tgc/Eval/TensorNpy.h"
#include "tgc/Support/Diagnostics.h"
#include "tgc/Support/InputFile.h"
#include "tgc/Support/Safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <functional>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

namespace {
/// A TensorProto decoded: its tg type and its elements as an .npy array
/// (bf16 widened to f32, the form tensorFromNpy reads).
struct DecodedTensor {
  RankedTensorType type;
  npy::Array value;
};
} // namespace

/// The bits of one element as stored: 4-bit and 2-bit types are packed,
/// two or four to a byte, the first element in the lowest bits.
static unsigned getOnnxElementBits(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return 64;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 32;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 16;
  case kInt4:
  case kUInt4:
  case kFloat4E2M1:
    return 4;
  case kInt2:
  case kUInt2:
    return 2;
  default:
    return 8;
  }
}

static npy::DType getNpyType(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::DOUBLE:
    return npy::DType::F64;
  case onnx::TensorProto::INT64:
    return npy::DType::I64;
  case onnx::TensorProto::INT32:
    return npy::DType::I32;
  case onnx::TensorProto::INT16:
    return npy::DType::I16;
  case onnx::TensorProto::INT8:
  case kInt4:
  case kInt2:
    return npy::DType::I8;
  case onnx::TensorProto::UINT32:
    return npy::DType::U32;
  case onnx::TensorProto::UINT64:
    return npy::DType::U64;
  case onnx::TensorProto::UINT16:
    return npy::DType::U16;
  case onnx::TensorProto::UINT8:
  case kUInt4:
  case kUInt2:
    return npy::DType::U8;
  case onnx::TensorProto::FLOAT16:
    return npy::DType::F16;
  case onnx::TensorProto::BOOL:
    return npy::DType::Bool;
  default:
    return npy::DType::F32;
  }
}

/// The bytes of an external tensor: `location` relative to `baseDirectory`,
/// never outside it (as the ONNX checker requires).
static llvm::Expected<std::string>
readExternalData(const onnx::TensorProto &proto, StringRef baseDirectory,
                 uint64_t expectedSize) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : proto.external_data()) {
    auto parse = [&](uint64_t &out) -> bool {
      return !StringRef(entry.value()).getAsInteger(10, out);
    };
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (!parse(offset))
        return makeError("bad external data offset '" + entry.value() + "'");
    } else if (entry.key() == "length") {
      uint64_t value;
      if (!parse(value))
        return makeError("bad external data length '" + entry.value() + "'");
      length = value;
    }
  }
  if (location.empty())
    return makeError("external data without a location");
  if (baseDirectory.empty())
    return makeError("external data '" + location +
                     "' cannot be read for a model held in memory");
  if (length && *length != expectedSize)
    return makeError("external data length " + llvm::Twine(*length) +
                     " does not match the " + llvm::Twine(expectedSize) +
                     " bytes of its shape");
  // Symlinks are resolved: a file or folder linked to outside the model's
  // directory is refused like `../`, and only the tensor's bytes are read.
  llvm::Expected<std::string> path =
      resolveInsideDirectory(baseDirectory, location);
  if (!path)
    return makeError("external data " + llvm::toString(path.takeError()));
  llvm::Expected<std::string> bytes =
      readInputFileRange(*path, offset, expectedSize);
  if (!bytes)
    return makeError("external data " + llvm::toString(bytes.takeError()));
  return bytes;
}

static llvm::Expected<DecodedTensor>
decodeTensor(MLIRContext &context, const onnx::TensorProto &proto,
             StringRef baseDirectory) {
  int32_t dataType = proto.data_type();
  Type elementType = getElementType(context, dataType);
  if (!elementType)
    return makeError("element type " + getDataTypeName(dataType) +
                     " has no tg equivalent");
  if (proto.has_segment())
    return makeError("segmented tensors are not supported");
  for (int64_t dim : proto.dims())
    if (dim < 0)
      return makeError("negative dimension " + llvm::Twine(dim));
  SmallVector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  if (span(dims) > kMaxImportElements)
    return makeError("more than " + llvm::Twine(kMaxImportElements) +
                     " elements (zero dimensions counted as one)");
  int64_t count = product(dims);
  DecodedTensor result;
  result.type = RankedTensorType::get(dims, elementType);
  npy::Array &array = result.value;
  array.dtype = getNpyType(dataType);
  array.shape.assign(proto.dims().begin(), proto.dims().end());
  unsigned elementBits = getOnnxElementBits(dataType);
  size_t size = llvm::divideCeil(size_t(count) * elementBits, 8);
  // Packed elements: one entry per byte in int32_data too.
  int64_t typedEntries = elementBits < 8 ? int64_t(size) : count;

  std::string external;
  const std::string *raw = nullptr;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    llvm::Expected<std::string> bytes =
        readExternalData(proto, baseDirectory, size);
    if (!bytes)
      return bytes.takeError();
    external = std::move(*bytes);
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
    if (raw->size() != size)
      return makeError("raw data holds " + llvm::Twine(raw->size()) +
                       " bytes, its shape needs " + llvm::Twine(size));
  }

  auto typedCount = [&]() -> int64_t {
    switch (dataType) {
    case onnx::TensorProto::FLOAT:
      return proto.float_data_size();
    case onnx::TensorProto::DOUBLE:
      return proto.double_data_size();
    case onnx::TensorProto::INT64:
      return proto.int64_data_size();
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      return proto.uint64_data_size();
    default:
      return proto.int32_data_size();
    }
  };
  if (!raw && typedCount() != typedEntries)
    return makeError("holds " + llvm::Twine(typedCount()) +
                     (elementBits < 8 ? " packed bytes" : " values") +
                     ", its shape needs " + llvm::Twine(typedEntries));
  // Element `i` of a packed type: its bits, from its byte.
  auto packedBits = [&](int64_t i) -> uint8_t {
    int64_t bit = i * elementBits;
    uint8_t byte =
        raw ? uint8_t((*raw)[bit / 8]) : uint8_t(proto.int32_data(bit / 8));
    return (byte >> (bit % 8)) & ((1u << elementBits) - 1);
  };

  size_t npySize = size_t(count) * npy::getElementSize(array.dtype);
  array.data.resize(npySize);
  char *out = array.data.data();
  for (int64_t i = 0; i < count; ++i) {
    switch (dataType) {
    case onnx::TensorProto::BFLOAT16: {
      uint16_t bits;
      if (raw)
        std::memcpy(&bits, raw->data() + 2 * i, 2);
      else
        bits = static_cast<uint16_t>(proto.int32_data(i));
      uint32_t wide = uint32_t(bits) << 16;
      std::memcpy(out + 4 * i, &wide, 4);
      break;
    }
    case onnx::TensorProto::BOOL: {
      bool value = raw ? (*raw)[i] != 0 : proto.int32_data(i) != 0;
      out[i] = value;
      break;
    }
    // float8 and float4: one byte each (raw, or the low byte of an
    // int32_data entry), or a packed nibble; held as the f32 of the same
    // value.
    case kFloat8E4M3FN:
    case kFloat8E5M2:
    case kFloat8E4M3FNUZ:
    case kFloat8E5M2FNUZ:
    case kFloat4E2M1: {
      const llvm::fltSemantics &semantics =
          dataType == kFloat8E4M3FN     ? APFloat::Float8E4M3FN()
          : dataType == kFloat8E5M2     ? APFloat::Float8E5M2()
          : dataType == kFloat8E4M3FNUZ ? APFloat::Float8E4M3FNUZ()
          : dataType == kFloat8E5M2FNUZ ? APFloat::Float8E5M2FNUZ()
                                        : APFloat::Float4E2M1FN();
      APFloat value(semantics, APInt(elementBits, packedBits(i)));
      float wide = value.convertToFloat();
      std::memcpy(out + 4 * i, &wide, 4);
      break;
    }
    // float8e8m0: 2^(bits - 127), 0xff NaN.
    case kFloat8E8M0: {
      uint8_t bits = packedBits(i);
      float wide = bits == 0xff ? NAN : std::ldexp(1.0f, int(bits) - 127);
      std::memcpy(out + 4 * i, &wide, 4);
      break;
    }
    // 4- and 2-bit integers: sign-extended (INT4, INT2) into an int8, or
    // zero-extended into a uint8.
    case kInt4:
    case kInt2: {
      unsigned shift = 8 - elementBits;
      out[i] = static_cast<char>(static_cast<int8_t>(packedBits(i) << shift) >>
                                 shift);
      break;
    }
    case kUInt4:
    case kUInt2:
      out[i] = static_cast<char>(packedBits(i));
      break;
    case onnx::TensorProto::FLOAT16: {
      uint16_t bits = raw ? 0 : static_cast<uint16_t>(proto.int32_data(i));
      if (raw)
        std::memcpy(&bits, raw->data() + 2 * i, 2);
      std::memcpy(out + 2 * i, &bits, 2);
      break;
    }
    case onnx::TensorProto::FLOAT:
      if (raw)
        std::memcpy(out + 4 * i, raw->data() + 4 * i, 4);
      else
        std::memcpy(out + 4 * i, &proto.float_data().data()[i], 4);
      break;
    case onnx::TensorProto::DOUBLE:
      if (raw)
        std::memcpy(out + 8 * i, raw->data() + 8 * i, 8);
      else
        std::memcpy(out + 8 * i, &proto.double_data().data()[i], 8);
      break;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
      if (raw)
        std::memcpy(out + 8 * i, raw->data() + 8 * i, 8);
      else if (dataType == onnx::TensorProto::INT64)
        std::memcpy(out + 8 * i, &proto.int64_data().data()[i], 8);
      else
        std::memcpy(out + 8 * i, &proto.uint64_data().data()[i], 8);
      break;
    case onnx::TensorProto::INT32:
      if (raw)
        std::memcpy(out + 4 * i, raw->data() + 4 * i, 4);
      else
        std::memcpy(out + 4 * i, &proto.int32_data().data()[i], 4);
      break;
    // The narrow integers: raw little-endian bytes, or one value per
    // int32_data (uint64_data for uint32) entry, truncated as ONNX does.
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
      out[i] = raw ? (*raw)[i] : static_cast<char>(proto.int32_data(i));
      break;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16: {
      uint16_t bits = 0;
      if (raw)
        std::memcpy(&bits, raw->data() + 2 * i, 2);
      else
        bits = static_cast<uint16_t>(proto.int32_data(i));
      std::memcpy(out + 2 * i, &bits, 2);
      break;
    }
    case onnx::TensorProto::UINT32: {
      uint32_t bits = 0;
      if (raw)
        std::memcpy(&bits, raw->data() + 4 * i, 4);
      else
        bits = static_cast<uint32_t>(proto.uint64_data(i));
      std::memcpy(out + 4 * i, &bits, 4);
      break;
    }
    }
  }
  return result;
}

static llvm::Expected<Tensor> toTensor(const DecodedTensor &decoded,
                                       StringRef name) {
  return tensorFromNpy(decoded.value, decoded.type, name,
                       /*allowNonFinite=*/true);
}

llvm::Expected<Tensor>
onnx_import::decodeTensorProto(MLIRContext &context,
                               const onnx::TensorProto &proto,
                               StringRef baseDirectory) {
  llvm::Expected<DecodedTensor> decoded =
      decodeTensor(context, proto, baseDirectory);
  if (!decoded)
    return decoded.takeError();
  return toTensor(*decoded, proto.name());
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

llvm::Error
tgc::parseInputShape(StringRef spec,
                     llvm::StringMap<std::vector<int64_t>> &shapes) {
  // Several at once, "ids=4x128,mask=4x128", as the other list flags take
  // them; a name with a comma in it keeps its comma (a piece without '='
  // stays in the one spec).
  SmallVector<StringRef> pieces;
  spec.split(pieces, ',');
  if (pieces.size() > 1 && llvm::all_of(pieces, [](StringRef piece) {
        return piece.contains('=');
      })) {
    for (StringRef piece : pieces)
      if (llvm::Error error = parseInputShape(piece, shapes))
        return error;
    return llvm::Error::success();
  }
  auto [name, shapeText] = spec.rsplit('=');
  if (name.empty() || !spec.contains('='))
    return makeError("--input-shape expects NAME=DIMS (e.g. ids=4x128), got '" +
                     spec + "'");
  std::vector<int64_t> shape;
  if (!shapeText.empty() && shapeText != "scalar") {
    SmallVector<StringRef> dims;
    shapeText.split(dims, 'x');
    for (StringRef dim : dims) {
      int64_t value;
      if (dim.getAsInteger(10, value) || value < 0)
        return makeError("--input-shape " + spec + ": '" + dim +
                         "' is not a dimension size");
      shape.push_back(value);
    }
  }
  if (!shapes.try_emplace(name, std::move(shape)).second)
    return makeError("--input-shape names '" + name + "' twice");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

namespace {
class ModelImporter {
public:
  ModelImporter(MLIRContext &context, StringRef name, StringRef baseDirectory,
                const ONNXImportOptions &options)
      : context(context), name(name), baseDirectory(baseDirectory),
        options(options), builder(&context),
        fileLoc(FileLineColLoc::get(&context, name, 0, 0)) {}

  FailureOr<ImportedModel> import(const onnx::ModelProto &model);

private:
  InFlightDiagnostic emitModelError() { return emitError(fileLoc); }
  FailureOr<Type> getInputElementType(const onnx::ValueInfoProto &info);
  FailureOr<RankedTensorType> getInputType(const onnx::ValueInfoProto &info);
  /// The sizes `--input-shape` gives the symbolic dimensions of the inputs
  /// it names (`batch` of `ids=4x128`), into `symbolSizes`, so that the
  /// other inputs with that dimension (`mask`, `labels`) get it too.
  LogicalResult bindSymbols(const onnx::GraphProto &graph);
  LogicalResult addInputValue(const onnx::ValueInfoProto &info,
                              const npy::Array &value, GraphImporter &importer);
  LogicalResult addArguments(const onnx::GraphProto &graph,
                             GraphImporter &importer);
  LogicalResult importNodes(const onnx::GraphProto &graph,
                            GraphImporter &importer);
  /// An If: the branch a condition known at import picks, inlined; else
  /// both branches, each output a tg.select of theirs.
  LogicalResult importIf(const onnx::NodeProto &node, GraphImporter &importer);
  /// A Loop whose trip count and conditions are known at import, unrolled.
  LogicalResult importLoop(const onnx::NodeProto &node,
                           GraphImporter &importer);
  /// A Scan, unrolled over the static length of its scan inputs.
  LogicalResult importScan(const onnx::NodeProto &node,
                           GraphImporter &importer);
  /// FlexAttention (ai.onnx.preview), its modifier subgraphs imported on
  /// the scores and the probabilities.
  LogicalResult importFlexAttention(const onnx::NodeProto &node,
                                    GraphImporter &importer);
  /// The nodes of `subgraph` (an If's branch, a Loop's body: it reads the
  /// names of the graphs around it) imported in a scope of their own, its
  /// inputs bound to `inputs`; `outputs` gets the values of its outputs,
  /// which must number `numOutputs`. With `sequences`, an output may be a
  /// sequence: its tensors go there, and its `outputs` entry is null.
  LogicalResult
  importSubgraph(const onnx::NodeProto &node, const onnx::GraphProto &subgraph,
                 StringRef attributeName, ArrayRef<Value> inputs,
                 unsigned numOutputs, GraphImporter &importer,
                 SmallVectorImpl<Value> &outputs,
                 SmallVectorImpl<SmallVector<Value>> *sequences = nullptr);
  LogicalResult addResults(const onnx::GraphProto &graph,
                           GraphImporter &importer);
  void reportSharedAndMissingParameters(const onnx::GraphProto &graph,
                                        const InitializerRoles &roles);
  /// The running statistic `argName` of a training-mode BatchNormalization
  /// as a `tg.buffer` state argument starting from `value`.
  void addRunningStatistic(GraphImporter &importer, RankedTensorType type,
                           StringRef argName, npy::Array value,
                           bool isVariance);
  /// Adds an argument of `role` named `argName` and defines the name; its
  /// tg.name is `tgName` where given.
  Value addArgument(GraphImporter &importer, RankedTensorType type,
                    tg::Role role, StringRef argName, StringRef tgName = {});
  /// The name parameter `initName` takes: its tie's first name, or its own.
  StringRef getParameterName(StringRef initName) const {
    auto tie = tiedNames.find(initName);
    return tie != tiedNames.end() ? StringRef(tie->second) : initName;
  }
  /// Adds a `param` argument named `argName` (`tgName` in the module and the
  /// parameters file, where given) holding `value`.
  Value addParameter(GraphImporter &importer, RankedTensorType type,
                     StringRef argName, npy::Array value,
                     StringRef tgName = {});
  bool addFoldedTranspose(GraphImporter &importer,
                          const onnx::GraphProto &graph,
                          const FoldedTranspose &transpose,
                          DecodedTensor &decoded);
  /// A view of another initializer, defined once all of them are.
  using Views = SmallVector<std::pair<std::string, std::function<Value()>>>;
  bool addTiedTranspose(GraphImporter &importer, const onnx::GraphProto &graph,
                        const FoldedTranspose &transpose,
                        const DecodedTensor &decoded, Views &views);
  /// A parameter the exporter folded from one parameter whose slices are
  /// copies along some dimensions (OPT's and Whisper's position rows,
  /// gathered for each batch row): imported as one slice, [1, T, E], under
  /// the fold's name, and the initializer as its tg.broadcast_in_dim, so
  /// that the copies train as one tensor. False where no slices repeat (or
  /// every element is equal: nothing to tell a copy by).
  bool addFoldedCopies(GraphImporter &importer, StringRef initName,
                       StringRef source, const DecodedTensor &decoded,
                       Views &views);
  bool addFoldedBroadcast(GraphImporter &importer,
                          const onnx::GraphProto &graph,
                          const FoldedBroadcast &broadcast,
                          const DecodedTensor &decoded, Views &views);
  /// The value of initializer `initName` of `graph`, or std::nullopt.
  std::optional<DecodedTensor> decodeInitializer(const onnx::GraphProto &graph,
                                                 StringRef initName);
  void addSplitParameters(GraphImporter &importer,
                          const ParameterProvenance &provenance);
  /// Warns of two parameters that are each other's transpose bit for bit.
  void warnTransposedCopies();
  /// Warns of the export's deviations, once per kind: at its first node,
  /// the other nodes' modules in a note.
  void warnExportDeviations();
  /// Adds the bias the exporter dropped to the output of `node`.
  LogicalResult addDroppedBias(GraphImporter &importer,
                               const onnx::NodeProto &node,
                               const DroppedBias &dropped);

  MLIRContext &context;
  std::string name;
  std::string baseDirectory;
  const ONNXImportOptions &options;
  OpBuilder builder;
  Location fileLoc;
  int64_t opset = 0;
  /// The model imports an opset of the default domain, of the training
  /// domain (ai.onnx.preview.training), of the preview domain
  /// (ai.onnx.preview).
  bool hasDefaultDomain = false, usesTrainingDomain = false,
       usesPreviewDomain = false;
  /// How many If, Loop and Scan bodies the node being imported is inside.
  unsigned branchDepth = 0;
  /// The name each parameter took from its tie, by initializer (GPT-2's
  /// `lm_head.weight` is `transformer.wte.weight`).
  llvm::StringMap<std::string> tiedNames;
  /// Symbolic dimensions bound by `--input-shape`: their size, and the
  /// input whose shape gave it.
  llvm::StringMap<std::pair<int64_t, std::string>> symbolSizes;
  /// The folds imported as one slice and its broadcast (addFoldedCopies).
  llvm::StringSet<> sliceFolds;
  /// The parameters the TorchScript exporter folded (`onnx::Conv_N`): as a
  /// Conv's weight, a BatchNorm folded into it.
  llvm::StringSet<> torchScriptFolds;
  /// Where the graph computes otherwise than the framework's code, in
  /// node order.
  SmallVector<std::pair<Location, ExportDeviation>> deviations;
  /// The nodes of every If, Loop and Scan body imported so far (each unrolled
  /// iteration again), against kMaxSubgraphNodes.
  int64_t subgraphNodes = 0;

  func::FuncOp function;
  Block *body = nullptr;
  SmallVector<Type> argumentTypes;
  SmallVector<DictionaryAttr> argumentAttrs;
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  ImportedModel imported;
  /// Param arguments by initializer name, with their decoded values.
  llvm::StringMap<unsigned> parameterIndex;
  /// Identity nodes whose input is a float initializer: output -> input.
  llvm::StringMap<std::string> identityParameters;
  /// The nodes that read a parameter the exporter merged into another
  /// tensor: (initializer, the split parameter) for each input.
  llvm::DenseMap<const onnx::NodeProto *,
                 SmallVector<std::pair<std::string, Value>>>
      splitInputs;
  /// The zero biases the exporter dropped, and the nodes that lost them.
  SmallVector<DroppedBias> droppedBiases;
  llvm::DenseMap<const onnx::NodeProto *, size_t> droppedBiasOf;
  /// What was said of each dropped bias added back, and its name: one
  /// remark for them all (GPT-2's 48 Linear biases), the others in a note.
  SmallVector<std::pair<std::string, std::string>> addedBiases;
};
} // namespace

/// The element type of a graph input: a tensor of a type tg holds.
FailureOr<Type>
ModelImporter::getInputElementType(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type()) {
    emitModelError() << "graph input '" << info.name()
                     << "' is not a tensor; tg takes tensors only";
    return failure();
  }
  int32_t dataType = info.type().tensor_type().elem_type();
  Type elementType = getElementType(context, dataType);
  if (!elementType) {
    emitModelError() << "graph input '" << info.name() << "' has element type "
                     << getDataTypeName(dataType) << ", which tg cannot hold";
    return failure();
  }
  return elementType;
}

FailureOr<RankedTensorType>
ModelImporter::getInputType(const onnx::ValueInfoProto &info) {
  const std::string &inputName = info.name();
  FailureOr<Type> elementType = getInputElementType(info);
  if (failed(elementType))
    return failure();
  const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
  auto bound = options.inputShapes.find(inputName);
  if (!tensorType.has_shape() && bound == options.inputShapes.end()) {
    emitModelError() << "graph input '" << inputName
                     << "' has no shape; give it with --input-shape "
                     << inputName << "=DIMS";
    return failure();
  }
  SmallVector<int64_t> shape;
  if (bound != options.inputShapes.end()) {
    shape.assign(bound->second.begin(), bound->second.end());
    if (tensorType.has_shape() &&
        tensorType.shape().dim_size() != int(shape.size())) {
      emitModelError() << "--input-shape gives '" << inputName << "' rank "
                       << shape.size() << ", the model says "
                       << tensorType.shape().dim_size();
      return failure();
    }
    if (tensorType.has_shape())
      for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim()))
        if (dim.has_dim_value() && dim.dim_value() != shape[i]) {
          emitModelError() << "--input-shape gives dimension " << i << " of '"
                           << inputName << "' size " << shape[i]
                           << ", the model says " << dim.dim_value();
          return failure();
        }
  } else {
    for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim())) {
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.push_back(dim.dim_value());
        continue;
      }
      auto symbol = dim.has_dim_param() ? symbolSizes.find(dim.dim_param())
                                        : symbolSizes.end();
      if (symbol != symbolSizes.end()) {
        shape.push_back(symbol->second.first);
        continue;
      }
      InFlightDiagnostic diag = emitModelError()
                                << "dimension " << i << " of graph input '"
                                << inputName << "' is symbolic";
      if (dim.has_dim_param())
        diag << " ('" << dim.dim_param() << "')";
      diag << "; bind it with --input-shape " << inputName << "=DIMS";
      return failure();
    }
  }
  if (span(shape) > kMaxImportElements) {
    emitModelError() << "graph input '" << inputName << "' is too large";
    return failure();
  }
  return RankedTensorType::get(shape, *elementType);
}

/// A graph input fixed at import (`--input-value`): a constant of `value`,
/// whose shape must be the one the model declares, if any.
LogicalResult ModelImporter::addInputValue(const onnx::ValueInfoProto &info,
                                           const npy::Array &value,
                                           GraphImporter &importer) {
  const std::string &inputName = info.name();
  FailureOr<Type> elementType = getInputElementType(info);
  if (failed(elementType))
    return failure();
  const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
  SmallVector<int64_t> shape(value.shape.begin(), value.shape.end());
  if (tensorType.has_shape()) {
    bool matches = tensorType.shape().dim_size() == int(shape.size());
    for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim()))
      matches &=
          !matches || !dim.has_dim_value() || dim.dim_value() == shape[i];
    if (!matches) {
      emitModelError() << "--input-value gives '" << inputName
                       << "' the shape [" << llvm::interleaved(shape)
                       << "], which the model's does not admit";
      return failure();
    }
  }
  if (span(shape) > kMaxImportElements) {
    emitModelError() << "--input-value of '" << inputName << "' is too large";
    return failure();
  }
  auto type = RankedTensorType::get(shape, *elementType);
  llvm::Expected<Tensor> tensor =
      tensorFromNpy(value, type, inputName, /*allowNonFinite=*/true);
  if (!tensor) {
    emitModelError() << "--input-value of '" << inputName
                     << "': " << llvm::toString(tensor.takeError());
    return failure();
  }
  importer.define(inputName, importer.constant(std::move(*tensor)));
  return success();
}

LogicalResult ModelImporter::bindSymbols(const onnx::GraphProto &graph) {
  llvm::StringSet<> inputNames;
  for (const onnx::ValueInfoProto &info : graph.input())
    inputNames.insert(info.name());
  // A misspelt name is said first: before, the inputs it meant to bind
  // said their dimension symbolic.
  for (const auto &[inputName, shape] : options.inputShapes)
    if (!inputNames.contains(inputName)) {
      emitModelError() << "--input-shape names '" << inputName
                       << "', which is no graph input";
      return failure();
    }
  for (const onnx::ValueInfoProto &info : graph.input()) {
    auto bound = options.inputShapes.find(info.name());
    const onnx::TypeProto::Tensor &tensorType = info.type().tensor_type();
    if (bound == options.inputShapes.end() || !tensorType.has_shape() ||
        tensorType.shape().dim_size() != int(bound->second.size()))
      continue; // getInputType says what is wrong
    for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim())) {
      if (!dim.has_dim_param() || dim.dim_param().empty())
        continue;
      int64_t size = bound->second[i];
      auto [it, inserted] = symbolSizes.try_emplace(
          dim.dim_param(), std::make_pair(size, info.name()));
      if (!inserted && it->second.first != size) {
        emitModelError() << "--input-shape gives dimension '" << dim.dim_param()
                         << "' size " << it->second.first << " in '"
                         << it->second.second << "' and " << size << " in '"
                         << info.name() << "'";
        return failure();
      }
    }
  }
  return success();
}

/// Graph inputs (that no initializer defines) become `input` arguments,
/// float initializers `param` arguments, other initializers constants.
LogicalResult ModelImporter::addArguments(const onnx::GraphProto &graph,
                                          GraphImporter &importer) {
  llvm::StringSet<> initializerNames;
  for (const onnx::TensorProto &initializer : graph.initializer())
    initializerNames.insert(initializer.name());
  if (failed(bindSymbols(graph)))
    return failure();
  for (const onnx::ValueInfoProto &info : graph.input()) {
    if (initializerNames.contains(info.name()))
      continue;
    if (info.name().empty() || importer.isDefined(info.name())) {
      emitModelError() << "graph input '" << info.name()
                       << "' is unnamed or defined twice";
      return failure();
    }
    auto fixed = options.inputValues.find(info.name());
    if (fixed != options.inputValues.end()) {
      if (failed(addInputValue(info, fixed->second, importer)))
        return failure();
      continue;
    }
    FailureOr<RankedTensorType> type = getInputType(info);
    if (failed(type))
      return failure();
    addArgument(importer, *type, tg::Role::Input, info.name());
  }
  for (const auto &[inputName, value] : options.inputValues)
    if (!importer.isDefined(inputName)) {
      emitModelError() << "--input-value names '" << inputName
                       << "', which is no graph input";
      return failure();
    }

  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Identity" && node.domain().empty() &&
        node.input_size() == 1 && node.output_size() == 1 &&
        initializerNames.contains(node.input(0)))
      identityParameters[node.output(0)] = node.input(0);

  llvm::Expected<InitializerRoles> roles =
      InitializerRoles::create(graph, options);
  if (!roles) {
    emitModelError() << llvm::toString(roles.takeError());
    return failure();
  }
  // An Identity whose output has a name the exporter made up (the dynamo
  // exporter's `alias_1` of a parameter read twice, among dotted state-dict
  // names) is a view of the parameter, not a merged one: it stays the same
  // tensor, with one gradient.
  SmallVector<std::string> aliases;
  for (const auto &entry : identityParameters)
    if (roles->isMadeUpName(entry.first()))
      aliases.push_back(entry.first().str());
  for (const std::string &alias : aliases)
    identityParameters.erase(alias);
  // The parameter names to recover lost ones against: the user's list, or
  // the one a dynamo export's signature records.
  ParameterProvenance provenance;
  if (options.parameterNames)
    provenance = ParameterProvenance::analyze(graph, *options.parameterNames,
                                              identityParameters);
  else if (!roles->getSignatureParameters().empty())
    provenance = ParameterProvenance::analyze(
        graph, roles->getSignatureParameters(), identityParameters);
  for (const TiedName &tie : provenance.tiedNames)
    tiedNames[tie.initializer] = tie.name;
  // Initializers that are a view of another one (a tied head's transpose,
  // an expanded token): defined once every initializer is.
  Views views;
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    const std::string &initName = initializer.name();
    if (initName.empty() || importer.isDefined(initName)) {
      emitModelError() << "initializer '" << initName
                       << "' is unnamed or defined twice";
      return failure();
    }
    llvm::Expected<DecodedTensor> decoded =
        decodeTensor(context, initializer, baseDirectory);
    if (!decoded) {
      emitModelError() << "initializer '" << initName
                       << "': " << llvm::toString(decoded.takeError());
      return failure();
    }
    // A Linear's weight whose transpose the exporter folded into a new
    // tensor trains under its state-dict name, in its state-dict layout.
    if (const FoldedTranspose *transpose = provenance.findTranspose(initName);
        transpose && isa<FloatType>(decoded->type.getElementType()) &&
        !roles->matchesGlob(initName) && !roles->matchesGlob(transpose->name)) {
      if (transpose->tied
              ? addTiedTranspose(importer, graph, *transpose, *decoded, views)
              : addFoldedTranspose(importer, graph, *transpose, *decoded))
        continue;
    }
    // A parameter the exporter expanded to the batch trains as one tensor.
    if (const FoldedBroadcast *broadcast = provenance.findBroadcast(initName);
        broadcast && isa<FloatType>(decoded->type.getElementType()) &&
        !roles->matchesGlob(initName) && !roles->matchesGlob(broadcast->name)) {
      if (addFoldedBroadcast(importer, graph, *broadcast, *decoded, views))
        continue;
    }
    // Scalars are constants of the formula (a scale, an epsilon), never
    // weights: they stay foldable. Buffers are constants too.
    bool trainable = isa<FloatType>(decoded->type.getElementType()) &&
                     decoded->type.getRank() > 0;
    if (trainable) {
      llvm::Expected<Tensor> value = toTensor(*decoded, initName);
      if (!value) {
        emitModelError() << "initializer '" << initName
                         << "': " << llvm::toString(value.takeError());
        return failure();
      }
      // A tie is what its first name is (GPT-2's `lm_head.weight`, which a
      // --parameters list of named_parameters() names as the embedding).
      std::optional<std::string> reason =
          roles->getBufferReason(getParameterName(initName), *value);
      // A running statistic a training-mode BatchNormalization updates:
      // state the step returns anew (unless a glob made it a parameter).
      if (unsigned statistic = roles->getRunningStatistic(initName, opset);
          statistic && reason) {
        addRunningStatistic(importer, decoded->type, initName,
                            std::move(decoded->value), statistic == 2);
        continue;
      }
      if (reason) {
        emitRemark(fileLoc)
            << "initializer '" << initName
            << "' is a buffer, imported as a constant: " << *reason;
        imported.buffers.push_back({initName, *reason});
        trainable = false;
      }
    }
    if (trainable) {
      if (roles->isTorchScriptFold(initName))
        torchScriptFolds.insert(initName);
      // Gathered at an index buffer too (ALBERT's token types at its
      // token_type_ids buffer of zeros: every position reads row 0).
      if (SmallVector<std::string> sources =
              roles->getFoldedParameters(initName);
          sources.size() == 1 && !roles->matchesGlob(initName) &&
          addFoldedCopies(importer, initName, sources.front(), *decoded, views))
        continue;
      StringRef name = getParameterName(initName);
      if (name != initName)
        emitRemark(fileLoc)
            << "parameter '" << initName << "' is imported as '" << name
            << "', the first name of its tie (torch.export "
               "reads both through one placeholder)";
      addParameter(importer, decoded->type, initName, std::move(decoded->value),
                   name);
      continue;
    }
    llvm::Expected<Tensor> tensor = toTensor(*decoded, initName);
    if (!tensor) {
      emitModelError() << "initializer '" << initName
                       << "': " << llvm::toString(tensor.takeError());
      return failure();
    }
    importer.define(initName, importer.constant(std::move(*tensor)));
  }
  for (auto &[viewName, build] : views)
    importer.define(viewName, build());

  // Exporters that deduplicate initializers by value put an Identity in
  // front of the second one: the two were separate tensors in the
  // framework, so they stay separate, each with its own value and role (a
  // fresh norm's weight merged with a running variance, both ones: the
  // weight trains, the variance does not).
  for (const auto &[output, input] : identityParameters) {
    if (importer.isDefined(output))
      continue;
    std::optional<DecodedTensor> decoded = decodeInitializer(graph, input);
    if (!decoded)
      continue;
    llvm::Expected<Tensor> value = toTensor(*decoded, input);
    if (!value) {
      llvm::consumeError(value.takeError());
      continue;
    }
    std::optional<std::string> reason = roles->getBufferReason(output, *value);
    bool parameter = parameterIndex.count(input);
    if (unsigned statistic = roles->getRunningStatistic(output, opset);
        statistic && reason) {
      addRunningStatistic(importer, decoded->type, output,
                          std::move(decoded->value), statistic == 2);
    } else if (!reason && decoded->type.getRank() > 0) {
      emitRemark(fileLoc) << "parameter '" << output << "' was merged with '"
                          << input
                          << "' by the exporter (equal values behind an "
                             "Identity); imported as a parameter of its own";
      addParameter(importer, decoded->type, output, std::move(decoded->value));
    } else if (parameter && reason) {
      emitRemark(fileLoc) << "initializer '" << output
                          << "' was merged with parameter '" << input
                          << "' by the exporter (equal values behind an "
                             "Identity); imported as a constant: "
                          << *reason;
      imported.buffers.push_back({output.str(), *reason});
      importer.define(output, importer.constant(std::move(*value)));
    }
  }
  addSplitParameters(importer, provenance);
  droppedBiases = std::move(provenance.droppedBiases);
  for (auto [i, dropped] : llvm::enumerate(droppedBiases))
    for (const onnx::NodeProto *node : dropped.nodes)
      droppedBiasOf[node] = i;
  for (const UnrecoveredParameter &unrecovered : provenance.unrecovered)
    emitRemark(fileLoc) << "initializer '" << unrecovered.initializer << "' "
                        << unrecovered.reason;
  reportSharedAndMissingParameters(graph, *roles);
  return success();
}

Value ModelImporter::addArgument(GraphImporter &importer, RankedTensorType type,
                                 tg::Role role, StringRef argName,
                                 StringRef tgName) {
  Value argument = body->addArgument(type, fileLoc);
  argumentTypes.push_back(type);
  argumentAttrs.push_back(builder.getDictionaryAttr(
      {tg::getRoleAttr(builder, role),
       builder.getNamedAttr(
           tg::TGDialect::kNameAttrName,
           builder.getStringAttr(tgName.empty() ? argName : tgName))}));
  importer.define(argName, argument);
  importer.argumentDescriptions[argument] = {
      role == tg::Role::Input   ? "graph input"
      : role == tg::Role::Param ? "parameter"
      : role == tg::Role::Hyper ? "hyperparameter"
                                : tg::stringifyRole(role).str(),
      argName.str()};
  return argument;
}

void ModelImporter::addRunningStatistic(GraphImporter &importer,
                                        RankedTensorType type,
                                        StringRef argName, npy::Array value,
                                        bool isVariance) {
  Value argument = addArgument(importer, type, tg::Role::State, argName);
  NamedAttrList attrs(argumentAttrs.back());
  attrs.set(tg::TGDialect::kBufferAttrName, builder.getUnitAttr());
  // A fresh module's: mean 0, variance 1 (--init random).
  attrs.set(tg::TGDialect::kInitAttrName,
            builder.getStringAttr(isVariance ? "ones" : "zeros"));
  argumentAttrs.back() = attrs.getDictionary(&context);
  importer.updatedState.insert(argument);
  imported.parameters.push_back({argName.str(), std::move(value)});
  imported.states.push_back(
      {argName.str(), "a training-mode BatchNormalization's running " +
                          std::string(isVariance ? "variance" : "mean")});
  emitRemark(fileLoc) << "initializer '" << argName << "' is "
                      << imported.states.back().reason
                      << ": imported as state the step updates";
}

Value ModelImporter::addParameter(GraphImporter &importer,
                                  RankedTensorType type, StringRef argName,
                                  npy::Array value, StringRef tgName) {
  Value argument =
      addArgument(importer, type, tg::Role::Param, argName, tgName);
  parameterIndex[argName] = imported.parameters.size();
  imported.parameters.push_back(
      {(tgName.empty() ? argName : tgName).str(), std::move(value)});
  return argument;
}

/// The [rows, cols] matrix `value` as [cols, rows].
static npy::Array transposeMatrix(const npy::Array &value) {
  npy::Array result = value;
  int64_t rows = value.shape[0], cols = value.shape[1];
  result.shape = {cols, rows};
  size_t size = npy::getElementSize(value.dtype);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(result.data.data() + (j * rows + i) * size,
                  value.data.data() + (i * cols + j) * size, size);
  return result;
}

/// Imports `transpose.initializer` as the parameter it was folded from, in
/// the state-dict layout ([out, in]: what PyTorch's state dict and
/// checkpoints hold), and the initializer as its tg.transpose. False (and a
/// remark) when the transposed value equals another initializer's bit for
/// bit: the head of a tied embedding, which the TorchScript exporter folds
/// like any Linear, and which must not train apart from it.
bool ModelImporter::addFoldedTranspose(GraphImporter &importer,
                                       const onnx::GraphProto &graph,
                                       const FoldedTranspose &transpose,
                                       DecodedTensor &decoded) {
  npy::Array original = transposeMatrix(decoded.value);
  for (const onnx::TensorProto &other : graph.initializer()) {
    if (other.name() == transpose.initializer || other.dims_size() != 2 ||
        other.dims(0) != original.shape[0] ||
        other.dims(1) != original.shape[1])
      continue;
    llvm::Expected<DecodedTensor> otherValue =
        decodeTensor(context, other, baseDirectory);
    if (!otherValue) {
      llvm::consumeError(otherValue.takeError());
      continue;
    }
    if (otherValue->value.dtype == original.dtype &&
        otherValue->value.data == original.data) {
      emitRemark(fileLoc) << "initializer '" << transpose.initializer
                          << "' not named '" << transpose.name
                          << "': it is the transpose of initializer '"
                          << other.name() << "' bit for bit (a tied weight?)";
      return false;
    }
  }
  auto type = RankedTensorType::get(
      {decoded.type.getDimSize(1), decoded.type.getDimSize(0)},
      decoded.type.getElementType());
  Value parameter =
      addParameter(importer, type, transpose.name, std::move(original));
  Value folded = tg::TransposeOp::create(
      builder,
      NameLoc::get(builder.getStringAttr(transpose.initializer), fileLoc),
      decoded.type, parameter, ArrayRef<int64_t>{1, 0});
  importer.define(transpose.initializer, folded);
  emitRemark(fileLoc) << "initializer '" << transpose.initializer
                      << "' is the transpose of '" << transpose.name
                      << "' folded by the exporter (" << transpose.evidence
                      << "): imported as that parameter in its state-dict "
                         "layout ["
                      << type.getDimSize(0) << ", " << type.getDimSize(1)
                      << "], transposed in the graph";
  return true;
}

std::optional<DecodedTensor>
ModelImporter::decodeInitializer(const onnx::GraphProto &graph,
                                 StringRef initName) {
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    if (initializer.name() != initName)
      continue;
    llvm::Expected<DecodedTensor> value =
        decodeTensor(context, initializer, baseDirectory);
    if (value)
      return std::move(*value);
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  return std::nullopt;
}

/// A tied head the dynamo exporter folded: its MatMul is aten.linear of an
/// embedding that is an initializer too, and the folded tensor is that
/// embedding's transpose bit for bit. It becomes the embedding's
/// tg.transpose, so the two stay one tensor as in PyTorch (trained apart,
/// they would differ after the first step). False (and a remark) when the
/// values differ: then it is no view.
bool ModelImporter::addTiedTranspose(GraphImporter &importer,
                                     const onnx::GraphProto &graph,
                                     const FoldedTranspose &transpose,
                                     const DecodedTensor &decoded,
                                     Views &views) {
  std::optional<DecodedTensor> source =
      decodeInitializer(graph, transpose.name);
  if (!source || source->value.dtype != decoded.value.dtype ||
      source->value.shape.size() != 2 ||
      transposeMatrix(source->value).shape != decoded.value.shape ||
      transposeMatrix(source->value).data != decoded.value.data) {
    emitRemark(fileLoc) << "initializer '" << transpose.initializer
                        << "' is read as the transpose of '" << transpose.name
                        << "' (" << transpose.evidence
                        << "), but its value is not that: imported as is";
    return false;
  }
  RankedTensorType type = decoded.type;
  std::string viewName = transpose.initializer, sourceName = transpose.name;
  views.push_back(
      {viewName, [&importer, this, type, viewName, sourceName] {
         return tg::TransposeOp::create(
             builder, NameLoc::get(builder.getStringAttr(viewName), fileLoc),
             type, importer.lookup(sourceName), ArrayRef<int64_t>{1, 0});
       }});
  emitRemark(fileLoc) << "initializer '" << transpose.initializer
                      << "' is the transpose of '"
                      << getParameterName(transpose.name)
                      << "' folded by the exporter (" << transpose.evidence
                      << "; a tied weight): imported as its tg.transpose, so "
                         "the two train as one tensor";
  return true;
}

/// `value` repeated along its dimensions of size 1 (and new leading ones)
/// to `shape`, as numpy and torch's expand broadcast.
static npy::Array broadcastArray(const npy::Array &value,
                                 ArrayRef<int64_t> shape) {
  npy::Array result;
  result.dtype = value.dtype;
  result.shape.assign(shape.begin(), shape.end());
  size_t size = npy::getElementSize(value.dtype);
  int64_t count = result.getNumElements();
  result.data.resize(count * size);
  size_t offset = shape.size() - value.shape.size();
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t source = 0;
    for (size_t d = 0; d < value.shape.size(); ++d)
      source = source * value.shape[d] +
               (value.shape[d] == 1 ? 0 : index[offset + d]);
    std::memcpy(result.data.data() + i * size,
                value.data.data() + source * size, size);
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

/// The first slice of `value` along dimension `dim` (kept, of size 1).
static npy::Array firstSlice(const npy::Array &value, size_t dim) {
  npy::Array result;
  result.dtype = value.dtype;
  result.shape = value.shape;
  result.shape[dim] = 1;
  size_t size = npy::getElementSize(value.dtype);
  int64_t outer = 1, inner = size;
  for (size_t d = 0; d < dim; ++d)
    outer *= value.shape[d];
  for (size_t d = dim + 1; d < value.shape.size(); ++d)
    inner *= value.shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    const char *begin = value.data.data() + o * value.shape[dim] * inner;
    result.data.insert(result.data.end(), begin, begin + inner);
  }
  return result;
}

/// `value` reduced to size 1 along every dimension along which all its
/// slices are equal: what broadcastArray expands back to `value`.
static npy::Array collapseEqualSlices(npy::Array value) {
  // An empty value has no slice to keep (a hostile model's zero dimension).
  if (value.getNumElements() == 0)
    return value;
  for (size_t d = 0; d < value.shape.size(); ++d) {
    if (value.shape[d] == 1)
      continue;
    npy::Array slice = firstSlice(value, d);
    if (broadcastArray(slice, value.shape).data == value.data)
      value = std::move(slice);
  }
  return value;
}

/// A parameter the dynamo exporter's optimizer folded with aten.expand
/// (ViT's class token expanded to the batch, `expand`): trained as folded,
/// each batch row would be a copy of its own. It becomes the parameter's
/// tg.broadcast_in_dim: of the parameter itself when the graph has it (and
/// the value is its broadcast bit for bit), else of a parameter recovered
/// under its name, of size 1 along every dimension along which all slices
/// are equal. When every element is equal (a zero-initialized token) the
/// parameter's shape is unknowable: a warning, and it is imported as is.
bool ModelImporter::addFoldedBroadcast(GraphImporter &importer,
                                       const onnx::GraphProto &graph,
                                       const FoldedBroadcast &broadcast,
                                       const DecodedTensor &decoded,
                                       Views &views) {
  const npy::Array &value = decoded.value;
  RankedTensorType type = decoded.type;
  std::string viewName = broadcast.initializer, sourceName = broadcast.name;
  auto view = [&importer, type, sourceName] {
    return importer.broadcastTo(importer.lookup(sourceName), type.getShape());
  };
  if (broadcast.present) {
    std::optional<DecodedTensor> source =
        decodeInitializer(graph, broadcast.name);
    bool broadcastable =
        source && source->value.dtype == value.dtype &&
        source->value.shape.size() <= value.shape.size() &&
        llvm::all_of(llvm::seq(source->value.shape.size()), [&](size_t d) {
          int64_t dim = source->value.shape[d];
          return dim == 1 || dim == value.shape[value.shape.size() -
                                                source->value.shape.size() + d];
        });
    if (!broadcastable ||
        broadcastArray(source->value, value.shape).data != value.data) {
      emitRemark(fileLoc) << "initializer '" << broadcast.initializer
                          << "' was folded from parameter '" << broadcast.name
                          << "', but its value is not that parameter "
                             "expanded: imported as is";
      return false;
    }
    views.push_back({viewName, view});
    emitRemark(fileLoc) << "initializer '" << broadcast.initializer
                        << "' is parameter '" << broadcast.name
                        << "' expanded by the exporter (its name and "
                           "folded_from say so): imported as its "
                           "tg.broadcast_in_dim, so the copies train as one "
                           "tensor";
    return true;
  }
  npy::Array source = collapseEqualSlices(value);
  if (source.getNumElements() == value.getNumElements() ||
      (source.getNumElements() == 1 && value.getNumElements() > 1)) {
    emitWarning(fileLoc)
        << "initializer '" << broadcast.initializer << "' is parameter '"
        << broadcast.name << "' expanded by the exporter, but "
        << (source.getNumElements() == 1
                ? "all its elements are equal (its shape is unknown)"
                : "its slices differ")
        << ": each copy trains apart; export with optimize=False to keep "
           "one tensor";
    return false;
  }
  auto sourceType = RankedTensorType::get(source.shape, type.getElementType());
  std::vector<int64_t> sourceShape = source.shape;
  addParameter(importer, sourceType, broadcast.name, std::move(source));
  views.push_back({viewName, view});
  InFlightDiagnostic remark = emitRemark(fileLoc);
  remark << "initializer '" << broadcast.initializer << "' is parameter '"
         << broadcast.name
         << "' expanded by the exporter (its name and folded_from say so): "
            "imported as that parameter, [";
  llvm::interleaveComma(sourceShape, remark);
  remark << "], and its tg.broadcast_in_dim, so the copies train as one tensor";
  return true;
}

bool ModelImporter::addFoldedCopies(GraphImporter &importer, StringRef initName,
                                    StringRef source,
                                    const DecodedTensor &decoded,
                                    Views &views) {
  npy::Array slice = collapseEqualSlices(decoded.value);
  int64_t elements = decoded.value.getNumElements();
  if (slice.getNumElements() == elements || slice.getNumElements() == 1)
    return false;
  std::vector<int64_t> shape = slice.shape;
  auto type = RankedTensorType::get(shape, decoded.type.getElementType());
  // The argument under a name no initializer has; tg.name is the fold's.
  std::string argName = (initName + "#slice").str();
  sliceFolds.insert(initName);
  addParameter(importer, type, argName, std::move(slice), initName);
  ArrayRef<int64_t> full = decoded.type.getShape();
  views.push_back({initName.str(), [&importer, argName, full] {
                     return importer.broadcastTo(importer.lookup(argName),
                                                 full);
                   }});
  InFlightDiagnostic remark = emitRemark(fileLoc);
  remark << "parameter '" << initName << "', folded by the exporter from '"
         << source << "', is copies of one slice (its value [";
  llvm::interleaveComma(full, remark);
  remark << "] is [";
  llvm::interleaveComma(shape, remark);
  remark << "] broadcast): imported as that slice and its "
            "tg.broadcast_in_dim, so the copies train as one tensor";
  return true;
}

/// The parameters the exporter merged into one tensor with another: each
/// gets its own argument holding a copy of the value, and its readers read
/// it instead of the merged tensor.
void ModelImporter::addSplitParameters(GraphImporter &importer,
                                       const ParameterProvenance &provenance) {
  for (const ParameterSplit &split : provenance.splits) {
    auto index = parameterIndex.find(split.initializer);
    if (index == parameterIndex.end() || importer.isDefined(split.name))
      continue;
    npy::Array value = imported.parameters[index->second].value;
    Value merged = importer.lookup(split.initializer);
    Value parameter = addParameter(importer, GraphImporter::getType(merged),
                                   split.name, std::move(value));
    InFlightDiagnostic remark = emitRemark(fileLoc);
    remark << "parameter '" << split.name << "' was merged with '"
           << split.initializer << "' by the exporter (equal values; ";
    llvm::interleaveComma(split.uses, remark, [&](const RecoveredUse &use) {
      remark << (use.node->name().empty() ? use.node->op_type()
                                          : use.node->name());
    });
    remark << (split.uses.size() > 1 ? " read" : " reads")
           << " it in the FX graph): imported as a parameter of its own";
    if (split.source != split.initializer)
      remark << ", in the layout of '" << split.initializer
             << "', which the exporter folded from '" << split.source << "' ["
             << llvm::interleaved(GraphImporter::getType(merged).getShape())
             << "]";
    for (const RecoveredUse &use : split.uses)
      splitInputs[use.node].push_back({split.initializer, parameter});
  }
}

/// Attaches to `warning` a note naming the `others` that are alike (at most
/// eight of them).
static void noteOthersAlike(InFlightDiagnostic &warning, Location loc,
                            ArrayRef<std::string> others) {
  if (others.empty())
    return;
  constexpr size_t kListed = 8;
  Diagnostic &note = warning.attachNote(loc);
  note << "and " << others.size() << " more alike: ";
  llvm::interleaveComma(others.take_front(kListed), note,
                        [&](const std::string &other) {
                          note << "'" << (other.empty() ? "?" : other) << "'";
                        });
  if (others.size() > kListed)
    note << ", ...";
}

/// Attaches to `warning` a note naming the source (the second member) of
/// each of `alike` but the first, which the warning is about.
template <typename Tuple>
static void noteSourcesAlike(InFlightDiagnostic &warning, Location loc,
                             ArrayRef<Tuple> alike) {
  SmallVector<std::string> others;
  for (const Tuple &other : alike.drop_front())
    others.push_back(std::get<1>(other));
  noteOthersAlike(warning, loc, others);
}

/// The number of distinct values (bit patterns) among `value`'s elements,
/// counted up to `limit` (past it, `limit + 1`).
static int64_t countDistinctValues(const npy::Array &value, int64_t limit) {
  size_t size = npy::getElementSize(value.dtype);
  assert(size <= sizeof(uint64_t) && "a float element is at most 8 bytes");
  // Each element's bits; DenseSet reserves ~0 and ~0 - 1 (two f64 NaNs),
  // counted apart.
  llvm::DenseSet<uint64_t> seen;
  bool reserved[2] = {false, false};
  auto count = [&] { return int64_t(seen.size()) + reserved[0] + reserved[1]; };
  for (int64_t i = 0, e = value.getNumElements(); i < e && count() <= limit;
       ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, value.data.data() + i * size, size);
    if (bits >= ~uint64_t(0) - 1)
      reserved[~bits] = true;
    else
      seen.insert(bits);
  }
  return count();
}

/// Whether `value` is what a gather of distinct entries of a parameter
/// gives (BERT's position rows at its `position_ids` buffer): its values
/// distinct but for rare collisions (trained weights collide about once in
/// thousands) and hardly any zeros (a mask's product has many).
static bool looksLikeDistinctGather(const npy::Array &value) {
  int64_t elements = value.getNumElements(), allowed = elements / 1024;
  size_t size = npy::getElementSize(value.dtype);
  int64_t zeros = 0;
  for (int64_t i = 0; i < elements && zeros <= allowed; ++i) {
    const char *element = value.data.data() + i * size;
    // +0 and -0: every bit but the sign bit (the last byte's top bit on
    // this little-endian host) clear.
    bool zero = (element[size - 1] & 0x7f) == 0 &&
                std::all_of(element, element + size - 1,
                            [](char byte) { return byte == 0; });
    zeros += zero;
  }
  return zeros <= allowed &&
         countDistinctValues(value, elements) >= elements - allowed;
}

/// The arithmetic op the optimizer folded into `name` (RWKV's `neg` of
/// -exp(time_decay)): the fold's own op, the last of the value's
/// computation, or one its folded_from names where nothing there makes or
/// reads an index (there the arithmetic may compute the index instead of
/// the value: GPT-2's `add` of positions from `arange`, WavLM's `abs` of
/// distances read by `embedding`). None for a layout fold (a transpose, a
/// gather of rows).
static std::optional<std::string>
getFoldArithmetic(const InitializerRoles &roles, StringRef name) {
  static const llvm::StringSet<> kArithmetic = {
      "add",     "sub",     "rsub",       "neg",         "mul",   "div",
      "exp",     "log",     "pow",        "sqrt",        "rsqrt", "reciprocal",
      "abs",     "sigmoid", "tanh",       "softplus",    "clamp", "square",
      "sin",     "cos",     "softmax",    "log_softmax", "exp2",  "log1p",
      "expm1",   "relu",    "gelu",       "silu",        "erf",   "maximum",
      "minimum", "where",   "masked_fill"};
  static const llvm::StringSet<> kIndexing = {
      "arange",    "ones_like", "zeros_like", "full",        "full_like",
      "ones",      "zeros",     "cumsum",     "new_ones",    "new_zeros",
      "embedding", "index",     "gather",     "index_select"};
  SmallVector<std::string> ops = roles.getFoldedOps(name);
  bool indexed = llvm::any_of(
      ops, [](const std::string &op) { return kIndexing.contains(op); });
  for (auto [i, op] : llvm::enumerate(ops))
    if ((i == 0 || !indexed) && kArithmetic.contains(op))
      return op;
  return std::nullopt;
}

/// What the import cannot undo but the user should know: a parameter that
/// several nodes read (a tied embedding, or equal tensors the dynamo
/// exporter merged: they train as one), one with a name the exporter made
/// up (a folded transpose), one folded with a buffer (an index), and names
/// of --parameters no initializer has.
void ModelImporter::reportSharedAndMissingParameters(
    const onnx::GraphProto &graph, const InitializerRoles &roles) {
  // Parameters folded with a buffer: (parameter, source, buffer).
  SmallVector<std::tuple<std::string, std::string, std::string>>
      foldedWithBuffer;
  // Folds of one parameter by arithmetic (parameter, source, op): those
  // the graph reads beside the parameter itself, and the others.
  SmallVector<std::tuple<std::string, std::string, std::string>>
      foldedBesideSource, foldedArithmetic;
  // Folds that repeat their parameters' entries: (parameter, source,
  // elements, distinct values).
  SmallVector<std::tuple<std::string, std::string, int64_t, int64_t>>
      foldedCopies;
  // Readers through which a gradient flows (not comparisons or shapes).
  static const llvm::StringSet<> noGradient = {
      "Equal",          "Less",  "LessOrEqual", "Greater",
      "GreaterOrEqual", "Shape", "Size",        "IsNaN"};
  llvm::StringMap<SmallVector<std::string>> readers;
  llvm::StringMap<SmallVector<const onnx::NodeProto *>> readerNodes;
  for (const onnx::NodeProto &node : graph.node()) {
    auto split = splitInputs.find(&node);
    SmallVector<std::string> inputs(node.input().begin(), node.input().end());
    llvm::append_range(inputs, getOuterNames(node));
    for (std::string input : inputs) {
      if (!parameterIndex.count(input) || noGradient.contains(node.op_type()) ||
          identityParameters.count(node.output_size() ? node.output(0) : ""))
        continue;
      if (split != splitInputs.end())
        for (const auto &[initializer, parameter] : split->second)
          if (initializer == input)
            input = argumentAttrs[cast<BlockArgument>(parameter).getArgNumber()]
                        .getAs<StringAttr>(tg::TGDialect::kNameAttrName)
                        .str();
      std::string label = node.name().empty() ? node.op_type() : node.name();
      if (readers[input].empty() || readers[input].back() != label) {
        readers[input].push_back(label);
        readerNodes[input].push_back(&node);
      }
    }
  }
  for (const ImportedParameter &parameter : imported.parameters) {
    auto it = readers.find(parameter.name);
    // Readers whose FX nodes all read this parameter read one tensor in
    // PyTorch too (a module applied twice, a Linear's bias).
    if (it != readers.end() && it->second.size() > 1 &&
        !llvm::all_of(readerNodes[parameter.name],
                      [&](const onnx::NodeProto *node) {
                        return readsParameterInFx(*node, parameter.name);
                      })) {
      // Readers in several modules, which the FX graph does not show
      // reading this parameter: the exporter merged equal parameters into
      // it (and what the import could not split, or a folded value, such
      // as Gemma's `1 + weight` of norms all initialized alike, stays
      // merged). Certain enough for a warning.
      llvm::StringSet<> modules;
      for (const onnx::NodeProto *node : readerNodes[parameter.name])
        if (hasScopeMetadata(*node))
          modules.insert(*getModuleScope(*node));
      bool merged = modules.size() > 1;
      InFlightDiagnostic remark =
          merged ? emitWarning(fileLoc) : emitRemark(fileLoc);
      if (merged) {
        remark << "parameter '" << parameter.name << "' is read in "
               << modules.size()
               << " modules whose FX nodes do not read it: the exporter "
                  "merged their equal parameters, which train as one tensor "
                  "here (one gradient, the sum of theirs); export with "
                  "optimize=False to keep them apart";
      } else {
        remark << "parameter '" << parameter.name << "' is read by "
               << it->second.size() << " nodes (";
        llvm::interleaveComma(it->second, remark);
        remark << "): one tensor, one gradient (the sum of theirs); if the "
                  "exporter merged equal parameters, they now train as one";
      }
      // Which modules share it, where the exporter's metadata says.
      for (const onnx::NodeProto *node : readerNodes[parameter.name])
        if (hasScopeMetadata(*node))
          remark.attachNote(fileLoc)
              << (node->name().empty() ? node->op_type() : node->name())
              << " is in module '" << *getModuleScope(*node) << "'";
    }
    if (sliceFolds.contains(parameter.name))
      continue; // said where it was imported
    if (llvm::SmallVector<std::string> sources =
            roles.getFoldedParameters(parameter.name);
        !sources.empty()) {
      // Named after an FX node (`transpose_1`, not an op's inner `val_N`),
      // a fold of several parameters computed with them in the model's own
      // code (DeBERTa's pos_key_proj(rel_embeddings)): trained, it is not
      // PyTorch's parameterization. An LSTM's `val_N` of its two biases
      // only rearranges them.
      bool computed =
          sources.size() > 1 && !StringRef(parameter.name).starts_with("val_");
      // One parameter folded by arithmetic (RWKV's `1 - time_mix`,
      // `-exp(time_decay)`, Gemma's `1 + weight`): trained, the value
      // takes the parameter's updates (Adam's, weight decay's) in its
      // place; and where the graph still reads the parameter itself, the
      // two train apart.
      std::optional<std::string> arithmetic;
      if (sources.size() == 1)
        arithmetic = getFoldArithmetic(roles, parameter.name);
      bool readAsItself = sources.size() == 1 &&
                          parameterIndex.count(sources.front()) &&
                          sources.front() != parameter.name;
      if (!computed && (arithmetic || readAsItself)) {
        (readAsItself ? foldedBesideSource : foldedArithmetic)
            .push_back(
                {parameter.name, sources.front(), arithmetic.value_or("")});
        continue;
      }
      // A parameter folded with a buffer: gathered at an index buffer
      // (Swin's relative_position_bias_table[relative_position_index]: the
      // entries one table row feeds train apart), or multiplied by a mask.
      llvm::SmallVector<std::string> buffers =
          roles.getFoldedBuffers(parameter.name);
      // Not where the fold's values are all distinct, as rows gathered at
      // distinct positions are (BERT's position embeddings at its
      // position_ids buffer): each entry trains once, as in PyTorch.
      if (!computed && !buffers.empty() &&
          !looksLikeDistinctGather(parameter.value)) {
        foldedWithBuffer.push_back(
            {parameter.name, sources.front(), buffers.front()});
        continue;
      }
      // A fold whose elements are mostly copies of one another (at most
      // half of them distinct, not all equal: random or trained values
      // almost never repeat): the exporter gathered the parameter at
      // constant indices computed in the forward (T5's and WavLM's
      // relative position buckets, rb(bucket(i - j))), and each copy of
      // an entry trains apart. A reshape or a gather of distinct rows
      // (GPT-2's position rows) keeps its values distinct.
      if (!computed) {
        int64_t elements = parameter.value.getNumElements();
        int64_t distinct = countDistinctValues(parameter.value, elements / 2);
        if (distinct > 1 && distinct <= elements / 2) {
          foldedCopies.push_back(
              {parameter.name, sources.front(), elements, distinct});
          continue;
        }
      }
      if (computed) {
        InFlightDiagnostic warning = emitWarning(fileLoc);
        warning << "parameter '" << parameter.name
                << "' is the exporter's fold of a computation on "
                << sources.size()
                << " parameters: it trains as one tensor in their place; "
                   "export with optimize=False to train them";
        for (const std::string &source : sources)
          warning.attachNote(fileLoc) << "folded from '" << source << "'";
        continue;
      }
      InFlightDiagnostic remark = emitRemark(fileLoc);
      remark << "parameter '" << parameter.name
             << "' is what the exporter folded from parameter"
             << (sources.size() > 1 ? "s " : " ");
      llvm::interleaveComma(sources, remark, [&](const std::string &source) {
        remark << "'" << source << "'";
      });
      remark << " (the exported program's signature and the optimizer's "
                "folded_from say so): it trains under this name";
    } else if (roles.isMadeUpName(parameter.name)) {
      emitRemark(fileLoc) << "parameter '" << parameter.name
                          << "' has no state-dict name: the exporter "
                             "computed it from a parameter (a folded "
                             "transpose?); it trains under this name";
    }
  }
  if (!foldedWithBuffer.empty()) {
    auto &[name, source, buffer] = foldedWithBuffer.front();
    InFlightDiagnostic warning = emitWarning(fileLoc);
    warning << "parameter '" << name << "' is the exporter's fold of '"
            << source << "' with buffer '" << buffer
            << "' (export with optimize=False to avoid): it trains in the "
               "parameter's place, entries an index shares apart";
    noteSourcesAlike(warning, fileLoc, ArrayRef(foldedWithBuffer));
  }
  for (auto *folds : {&foldedBesideSource, &foldedArithmetic}) {
    if (folds->empty())
      continue;
    auto &[name, source, op] = folds->front();
    InFlightDiagnostic warning = emitWarning(fileLoc);
    warning << "parameter '" << name << "' is the exporter's fold of "
            << (op.empty() ? std::string() : "'" + op + "' of ")
            << "parameter '" << source << "'"
            << (folds == &foldedBesideSource
                    ? ", which the graph also reads: the two train apart"
                    : ": it trains in the parameter's place, not as "
                      "PyTorch updates the parameter")
            << "; export with optimize=False to train it";
    noteSourcesAlike(warning, fileLoc, ArrayRef(*folds));
  }
  if (!foldedCopies.empty()) {
    auto &[name, source, elements, distinct] = foldedCopies.front();
    InFlightDiagnostic warning = emitWarning(fileLoc);
    warning << "parameter '" << name << "' is the exporter's fold of '"
            << source << "' with its entries copied (" << distinct
            << " distinct values in " << elements
            << "; export with optimize=False to avoid): each copy trains "
               "apart, a gather at positions computed in the forward";
    noteSourcesAlike(warning, fileLoc, ArrayRef(foldedCopies));
  }
  warnTransposedCopies();
  if (options.parameterNames)
    for (const std::string &listed : *options.parameterNames)
      if (!parameterIndex.count(listed) &&
          llvm::none_of(
              tiedNames,
              [&](const auto &tie) { return tie.getValue() == listed; }) &&
          llvm::none_of(droppedBiases, [&](const DroppedBias &dropped) {
            return dropped.name == listed;
          }))
        emitRemark(fileLoc) << "'" << listed
                            << "' of --parameters is no initializer of the "
                               "model (merged with an equal tensor or "
                               "folded by the exporter?)";
}

/// A tied weight folded into its transpose that nothing recovered (the
/// TorchScript exporter's `onnx::MatMul_N` of GPT-2's or BERT's head, with
/// no FX node to say it is tied): two parameters, which train apart after
/// the first step. Their values say so, bit for bit (matrices whose
/// elements are not all equal: zero-initialized ones prove nothing). The
/// first row of one is the first column of the other: candidates are
/// paired by that before comparing whole matrices.
void ModelImporter::warnTransposedCopies() {
  auto key = [](const npy::Array &value, bool column) {
    size_t size = npy::getElementSize(value.dtype);
    int64_t rows = value.shape[0], cols = value.shape[1];
    std::string bytes;
    for (int64_t i = 0, e = std::min<int64_t>(column ? rows : cols, 16); i < e;
         ++i) {
      int64_t at = column ? i * cols : i;
      bytes.append(value.data.data() + at * size, size);
    }
    return bytes + "/" + std::to_string(column ? rows : cols) + "/" +
           std::to_string(column ? cols : rows) + "/" +
           std::to_string(int(value.dtype));
  };
  llvm::StringMap<SmallVector<const ImportedParameter *>> byFirstRow;
  SmallVector<const ImportedParameter *> matrices;
  for (const ImportedParameter &parameter : imported.parameters) {
    const npy::Array &value = parameter.value;
    if (value.shape.size() != 2 || value.getNumElements() < 2 ||
        !parameterIndex.count(parameter.name))
      continue;
    size_t size = npy::getElementSize(value.dtype);
    bool constant = true;
    for (int64_t i = 1, e = value.getNumElements(); i < e && constant; ++i)
      constant =
          !std::memcmp(value.data.data(), value.data.data() + i * size, size);
    if (constant)
      continue;
    matrices.push_back(&parameter);
    byFirstRow[key(value, false)].push_back(&parameter);
  }
  for (const ImportedParameter *parameter : matrices) {
    auto candidates = byFirstRow.find(key(parameter->value, true));
    if (candidates == byFirstRow.end())
      continue;
    for (const ImportedParameter *other : candidates->second) {
      // Each pair once, the earlier parameter first.
      if (other <= parameter ||
          transposeMatrix(parameter->value).data != other->value.data)
        continue;
      emitWarning(fileLoc)
          << "parameters '" << parameter->name << "' and '" << other->name
          << "' are each other's transpose bit for bit: a tied weight the "
             "exporter folded into its transpose? They train as two tensors; "
             "if the model ties them, export with dynamo=True or "
             "do_constant_folding=False to keep one";
    }
  }
}

/// What onnx.checker refuses in a node whatever its op: an input name that
/// no earlier node, graph input or initializer defines (an optional input is
/// omitted with an empty name, never with an unknown one), and an attribute
/// given twice.
static LogicalResult checkNodeStructure(const onnx::NodeProto &node,
                                        GraphImporter &importer) {
  for (auto [i, input] : llvm::enumerate(node.input()))
    if (!input.empty() && !importer.isDefined(input))
      return importer.fail("input #" + llvm::Twine(i) + " '" +
                           printableName(input) +
                           "' is not defined before this node (an optional "
                           "input is omitted with an empty name)");
  llvm::StringSet<> attributeNames;
  for (const onnx::AttributeProto &attribute : node.attribute())
    if (!attributeNames.insert(attribute.name()).second)
      return importer.fail("attribute '" + printableName(attribute.name()) +
                           "' is given twice");
  return success();
}

void ModelImporter::warnExportDeviations() {
  llvm::MapVector<StringRef, SmallVector<unsigned>> kinds;
  for (auto [i, deviation] : llvm::enumerate(deviations))
    kinds[deviation.second.kind].push_back(i);
  for (auto &[kind, indices] : kinds) {
    auto &[loc, first] = deviations[indices.front()];
    InFlightDiagnostic warning =
        (first.recovered ? emitRemark(loc) : emitWarning(loc)) << first.message;
    SmallVector<std::string> others;
    for (unsigned i : ArrayRef(indices).drop_front())
      others.push_back(deviations[i].second.module);
    noteOthersAlike(warning, fileLoc, others);
  }
}

LogicalResult ModelImporter::importNodes(const onnx::GraphProto &graph,
                                         GraphImporter &importer) {
  for (const onnx::NodeProto &node : graph.node()) {
    std::string label = !node.name().empty() ? node.name()
                        : node.output_size() ? node.output(0)
                                             : node.op_type();
    importer.setNode(&node,
                     NameLoc::get(builder.getStringAttr(label), fileLoc));
    // Once per model node (not again in an unrolled Loop's iterations).
    if (branchDepth == 0) {
      if (std::optional<ExportDeviation> deviation = getExportDeviation(node))
        deviations.push_back({importer.getLoc(), std::move(*deviation)});
      // The TorchScript exporter's eval-mode peephole folds a BatchNorm
      // into the Conv before it (a weight and a bias it names
      // `onnx::Conv_N`); constant folding, a weight computed from
      // parameters (weight norm). Either way the fold trains in their place.
      if ((node.op_type() == "Conv" || node.op_type() == "ConvTranspose") &&
          node.input_size() > 1 && torchScriptFolds.contains(node.input(1)))
        deviations.push_back(
            {importer.getLoc(),
             ExportDeviation{
                 "torchscript-folded-conv", getModuleScope(node).value_or(""),
                 node.op_type() + " weight '" + node.input(1) +
                     "' was folded by the TorchScript exporter (export with "
                     "do_constant_folding=False to avoid): the fold trains, "
                     "not the parameters it came from (an eval-mode "
                     "BatchNorm's, a computed weight's)"}});
    }
    bool trainingDomain = node.domain() == kTrainingDomain;
    bool previewDomain = node.domain() == kPreviewDomain;
    if (node.domain() != "" && node.domain() != "ai.onnx" && !trainingDomain &&
        !previewDomain)
      return importer.fail("op '" + printableName(node.op_type()) +
                           "' of domain '" + printableName(node.domain()) +
                           "' is not supported (only the default ONNX "
                           "domain, " +
                           kTrainingDomain + " and " + kPreviewDomain +
                           " are)");
    if (trainingDomain  ? !usesTrainingDomain
        : previewDomain ? !usesPreviewDomain
                        : !hasDefaultDomain)
      return importer.fail("the model imports no opset of the node's domain");
    if (previewDomain) {
      if (node.op_type() != "FlexAttention")
        return importer.fail("op '" + printableName(node.op_type()) +
                             "' of domain " + kPreviewDomain +
                             " is not supported (FlexAttention is)");
      if (failed(checkNodeStructure(node, importer)) ||
          failed(importFlexAttention(node, importer)) || importer.hadError())
        return failure();
      continue;
    }
    // An Identity in front of a merged initializer was already resolved.
    if (node.op_type() == "Identity" && node.output_size() == 1 &&
        identityParameters.count(node.output(0)) &&
        importer.isDefined(node.output(0)))
      continue;
    if (trainingDomain) {
      NodeConverter convert = lookupTrainingOp(node.op_type());
      if (!convert)
        return importer.fail("op '" + printableName(node.op_type()) +
                             "' of domain " + kTrainingDomain +
                             " is not supported");
      if (failed(checkNodeStructure(node, importer)) ||
          failed(convert(importer)) || importer.hadError())
        return failure();
      continue;
    }
    const OpSupport *op = lookupOp(node.op_type());
    if (!op)
      return importer.fail("op '" + printableName(node.op_type()) +
                           "' is not supported");
    if (opset < op->introduced)
      return importer.fail("op '" + node.op_type() +
                           "' does not exist at opset " + llvm::Twine(opset) +
                           " (it was introduced in opset " +
                           llvm::Twine(op->introduced) + ")");
    if (opset < op->supportedFrom)
      return importer.fail("the version of '" + node.op_type() + "' at opset " +
                           llvm::Twine(opset) +
                           " is not supported (its meaning changed in opset " +
                           llvm::Twine(op->supportedFrom) +
                           "; tg converts that version and later ones)");
    if (failed(checkNodeStructure(node, importer)))
      return failure();
    for (const std::string &output : node.output())
      if (!output.empty() && importer.isDefined(output))
        return importer.fail("output '" + printableName(output) +
                             "' is defined twice");
    // A reader of a merged tensor whose own parameter was split off reads
    // that parameter instead.
    SmallVector<std::pair<std::string, Value>> merged;
    if (auto split = splitInputs.find(&node); split != splitInputs.end())
      for (const auto &[initializer, parameter] : split->second) {
        merged.push_back({initializer, importer.lookup(initializer)});
        importer.define(initializer, parameter);
      }
    if (failed(maskHitReduction(importer, merged)))
      return failure();
    LogicalResult converted =
        op->convert                ? op->convert(importer)
        : node.op_type() == "If"   ? importIf(node, importer)
        : node.op_type() == "Loop" ? importLoop(node, importer)
                                   : importScan(node, importer);
    for (const auto &[initializer, value] : merged)
      importer.define(initializer, value);
    if (failed(converted) || importer.hadError() ||
        failed(propagateHits(importer)))
      return failure();
    for (auto [i, output] : llvm::enumerate(node.output()))
      if (!output.empty() && !importer.isDefined(output))
        return importer.fail(
            "output #" + llvm::Twine(i) + " ('" + printableName(output) +
            "') is not one this op produces here (it has no such output, or "
            "tgc does not compute that one)");
    if (auto dropped = droppedBiasOf.find(&node);
        dropped != droppedBiasOf.end() &&
        failed(addDroppedBias(importer, node, droppedBiases[dropped->second])))
      return failure();
  }
  return success();
}

LogicalResult ModelImporter::addDroppedBias(GraphImporter &importer,
                                            const onnx::NodeProto &node,
                                            const DroppedBias &dropped) {
  Value output = importer.lookup(node.output(0));
  RankedTensorType type = GraphImporter::getType(output);
  int64_t dim = dropped.lastDimension ? type.getRank() - 1 : 1;
  std::optional<npy::DType> dtype =
      type.getElementType().isF32()   ? std::optional(npy::DType::F32)
      : type.getElementType().isF16() ? std::optional(npy::DType::F16)
      : type.getElementType().isF64() ? std::optional(npy::DType::F64)
                                      : std::nullopt;
  if (dim < 0 || dim >= type.getRank() || !dtype) {
    emitRemark(importer.getLoc())
        << "parameter '" << dropped.name
        << "' is this node's bias in the FX graph, which the exporter "
           "dropped; not added back (a "
        << type << " result)";
    return success();
  }
  int64_t channels = type.getDimSize(dim);
  auto biasType = RankedTensorType::get({channels}, type.getElementType());
  if (!parameterIndex.count(dropped.name)) {
    if (importer.isDefined(dropped.name))
      return importer.fail("the dropped bias '" + dropped.name +
                           "' names a value of the graph");
    npy::Array zeros;
    zeros.dtype = *dtype;
    zeros.shape = {channels};
    zeros.data.assign(channels * npy::getElementSize(*dtype), 0);
    addParameter(importer, biasType, dropped.name, std::move(zeros));
    std::string text;
    llvm::raw_string_ostream remark(text);
    remark << "parameter '" << dropped.name << "' is the bias of "
           << node.op_type() << " '" << node.name() << "'";
    if (dropped.nodes.size() > 1)
      remark << " and " << dropped.nodes.size() - 1 << " more";
    remark << " in the FX graph, which the exporter dropped as zero: "
              "imported as a zero parameter ["
           << channels << "] added to the result, so it trains";
    addedBiases.push_back({std::move(text), dropped.name});
  }
  Value bias = importer.lookup(dropped.name);
  if (GraphImporter::getType(bias) != biasType)
    return importer.fail("the dropped bias '" + dropped.name +
                         "' is read with " + llvm::Twine(channels) +
                         " channels here, and another size elsewhere");
  importer.define(node.output(0),
                  importer.create<tg::AddOp>(
                      output, importer.create<tg::BroadcastInDimOp>(
                                  type, bias, ArrayRef<int64_t>{dim})));
  return success();
}

/// Branches nested deeper than this are refused (a hostile model could
/// otherwise exhaust the stack).
static constexpr unsigned kMaxBranchDepth = 16;
/// The most nodes of If, Loop and Scan bodies one import may import, counting
/// each unrolled iteration (nested loops multiply).
static constexpr int64_t kMaxSubgraphNodes = int64_t(1) << 20;

LogicalResult ModelImporter::importSubgraph(
    const onnx::NodeProto &node, const onnx::GraphProto &subgraph,
    StringRef attributeName, ArrayRef<Value> inputs, unsigned numOutputs,
    GraphImporter &importer, SmallVectorImpl<Value> &outputs,
    SmallVectorImpl<SmallVector<Value>> *sequences) {
  auto fail = [&](const Twine &message) {
    return importer.fail(attributeName + ": " + message);
  };
  if (subgraph.input_size() != static_cast<int>(inputs.size()))
    return fail("the graph declares " + Twine(subgraph.input_size()) +
                " inputs; " + Twine(inputs.size()) + " are given to it");
  if (subgraph.output_size() != static_cast<int>(numOutputs))
    return fail("the graph has " + Twine(subgraph.output_size()) +
                " outputs; " + Twine(numOutputs) + " are expected");
  if (subgraph.sparse_initializer_size())
    return fail("sparse initializers are not supported");
  if (branchDepth >= kMaxBranchDepth)
    return fail("If, Loop and Scan nodes are nested more than " +
                Twine(kMaxBranchDepth) + " deep");
  subgraphNodes += subgraph.node_size();
  if (subgraphNodes > kMaxSubgraphNodes)
    return fail(
        "the If, Loop and Scan bodies imported (each unrolled iteration "
        "again) exceed " +
        Twine(kMaxSubgraphNodes) + " nodes in all");
  Location location = importer.getLoc();
  size_t scope = importer.beginScope();
  auto scopeEnd = llvm::make_scope_exit([&] { importer.endScope(scope); });
  for (auto [input, value] : llvm::zip(subgraph.input(), inputs)) {
    if (input.name().empty())
      return fail("an input has no name");
    importer.define(input.name(), value);
  }
  for (const onnx::TensorProto &initializer : subgraph.initializer()) {
    if (initializer.name().empty() || importer.isDefined(initializer.name()))
      return fail("initializer '" + printableName(initializer.name()) +
                  "' is unnamed or defined twice");
    llvm::Expected<Tensor> value =
        decodeTensorProto(context, initializer, baseDirectory);
    if (!value)
      return fail("initializer '" + printableName(initializer.name()) +
                  "': " + llvm::toString(value.takeError()));
    importer.define(initializer.name(), importer.constant(std::move(*value)));
  }
  ++branchDepth;
  LogicalResult imported = importNodes(subgraph, importer);
  --branchDepth;
  if (failed(imported))
    return failure();
  importer.setNode(&node, location);
  for (const onnx::ValueInfoProto &output : subgraph.output()) {
    Value value = importer.lookup(output.name());
    const SmallVector<Value> *sequence = importer.lookupSequence(output.name());
    if (!value && !(sequence && sequences))
      return fail("output '" + printableName(output.name()) +
                  (sequence ? "' is a sequence: sequence outputs of a Loop or "
                              "Scan body are not supported"
                            : "' is not defined in the graph or around it"));
    if (value && failed(checkNoHits(importer, value,
                                    (attributeName + " output '" +
                                     printableName(output.name()) + "'")
                                        .str())))
      return failure();
    outputs.push_back(value);
    if (sequences)
      sequences->push_back(value ? SmallVector<Value>() : *sequence);
  }
  return success();
}

/// The most iterations an unrolled Loop may have, and the most body nodes
/// all of them may import together.
static constexpr int64_t kMaxLoopIterations = 4096;
static constexpr int64_t kMaxUnrolledNodes = int64_t(1) << 18;

/// The most iterations of `body` a Loop or Scan may unroll.
static int64_t getUnrollLimit(const onnx::GraphProto &body) {
  return std::min<int64_t>(kMaxLoopIterations,
                           kMaxUnrolledNodes /
                               std::max<int64_t>(body.node_size(), 1));
}

/// Output `output` of the current node: the values of every iteration of
/// its scan output #`index`, stacked on a new dimension `axis` (each the
/// same type).
static LogicalResult setStackedOutput(GraphImporter &importer, unsigned output,
                                      ArrayRef<Value> values, int64_t axis,
                                      unsigned index) {
  RankedTensorType type = GraphImporter::getType(values.front());
  SmallVector<int64_t> one(type.getShape());
  one.insert(one.begin() + axis, 1);
  SmallVector<Value> parts;
  for (Value value : values) {
    if (GraphImporter::getType(value) != type)
      return importer.fail("scan output #" + Twine(index) +
                           " changes type between iterations");
    parts.push_back(importer.reshape(value, one));
  }
  SmallVector<int64_t> stacked(one);
  stacked[axis] = static_cast<int64_t>(parts.size());
  importer.setOutput(output, parts.size() == 1
                                 ? parts.front()
                                 : importer.create<tg::ConcatOp>(
                                       type.clone(stacked), parts, axis));
  return success();
}

LogicalResult ModelImporter::importLoop(const onnx::NodeProto &node,
                                        GraphImporter &importer) {
  const onnx::AttributeProto *bodyAttribute =
      importer.attribute("body", onnx::AttributeProto::GRAPH);
  if (importer.hadError())
    return failure();
  if (!bodyAttribute)
    return importer.fail("a Loop needs a body graph");
  const onnx::GraphProto &body = bodyAttribute->g();
  // Unrolled at import: the trip count and the condition of each iteration
  // must be known there (a graph input they come from can be fixed with
  // --input-value).
  std::optional<int64_t> tripCount;
  if (importer.input(0)) {
    ASSIGN_OR_FAIL(count, importer.requireConstantInts(0, "M"));
    if (count.size() != 1)
      return importer.fail("the trip count M must be one integer");
    tripCount = std::max<int64_t>(count.front(), 0);
  }
  bool condition = true;
  if (importer.input(1)) {
    const Tensor *cond = importer.requireConstant(1, "cond");
    if (!cond)
      return failure();
    if (!cond->getElementType().isInteger(1) || cond->getNumElements() != 1)
      return importer.fail("the condition must be a bool tensor of one "
                           "element");
    condition = cond->getAsDouble(0) != 0;
  }
  SmallVector<Value> carried;
  for (unsigned i = 2; i < importer.getNumInputs(); ++i) {
    ASSIGN_OR_FAIL(value, importer.requireInput(i));
    carried.push_back(value);
  }
  unsigned numCarried = carried.size();
  if (importer.getNumOutputs() < numCarried)
    return importer.fail("the Loop has " + Twine(numCarried) +
                         " loop-carried values but only " +
                         Twine(importer.getNumOutputs()) + " outputs");
  unsigned numScans = importer.getNumOutputs() - numCarried;
  int64_t limit = getUnrollLimit(body);
  if (tripCount && *tripCount > limit)
    return importer.fail("the trip count " + Twine(*tripCount) +
                         " is past what the import unrolls (" + Twine(limit) +
                         " iterations of this body)");
  Type i64 = importer.builder.getI64Type();
  RankedTensorType scalarType = RankedTensorType::get({}, i64);
  SmallVector<SmallVector<Value>> scans(numScans);
  // Once an iteration's condition is known only at run time (a
  // data-dependent break), the remaining iterations up to M are imported
  // masked: `active` says whether the loop still runs, and each
  // loop-carried value keeps its old value where it does not.
  Value active;
  size_t updatesBefore = importer.stateUpdates.size();
  Type i1 = importer.builder.getI1Type();
  int64_t iteration = 0;
  for (; (active || condition) && (!tripCount || iteration < *tripCount);
       ++iteration) {
    if (iteration == limit)
      return importer.fail("the condition is still true after " + Twine(limit) +
                           " iterations, as many as the import unrolls");
    SmallVector<Value> inputs = {
        importer.constantInts({iteration}, scalarType),
        active ? active : importer.constantInts({1}, scalarType.clone(i1))};
    llvm::append_range(inputs, carried);
    SmallVector<Value> outputs;
    if (failed(importSubgraph(node, body, "body", inputs,
                              1 + numCarried + numScans, importer, outputs)))
      return failure();
    RankedTensorType condType = GraphImporter::getType(outputs[0]);
    if (!condType.getElementType().isInteger(1) ||
        condType.getNumElements() != 1)
      return importer.fail("body: the condition output must be a bool "
                           "tensor of one element");
    Value next = importer.reshape(outputs[0], {});
    const Tensor *known = importer.getConstant(next);
    if (!active && known) {
      condition = known->getAsDouble(0) != 0;
      for (unsigned i = 0; i < numCarried; ++i)
        carried[i] = outputs[1 + i];
      for (unsigned k = 0; k < numScans; ++k)
        scans[k].push_back(outputs[1 + numCarried + k]);
      continue;
    }
    auto runTime = [&](const Twine &why) {
      return importer.fail(
          "body: the condition is known only at run time (from iteration " +
          Twine(iteration) + "), and " + why);
    };
    if (!tripCount)
      return runTime("the Loop has no trip count M to unroll it to");
    if (numScans)
      return runTime("scan outputs would have a run-time length");
    if (importer.stateUpdates.size() != updatesBefore)
      return runTime("the body updates running statistics");
    for (unsigned i = 0; i < numCarried; ++i) {
      Value value = outputs[1 + i];
      RankedTensorType type = GraphImporter::getType(value);
      if (active && type != GraphImporter::getType(carried[i]))
        return runTime("loop-carried value #" + Twine(i) +
                       " changes type between iterations");
      carried[i] =
          active
              ? select(importer, importer.broadcastTo(active, type.getShape()),
                       value, carried[i])
              : value;
    }
    // The loop goes on where it was running and the body said so.
    active = active ? select(importer, active, next,
                             importer.constantInts({0}, scalarType.clone(i1)))
                    : next;
  }
  for (unsigned i = 0; i < numCarried; ++i)
    if (importer.hasOutput(i))
      importer.setOutput(i, carried[i]);
  // Each scan output: its values of every iteration stacked on a new
  // first dimension.
  for (unsigned k = 0; k < numScans; ++k) {
    if (!importer.hasOutput(numCarried + k))
      continue;
    if (scans[k].empty())
      return importer.fail("scan output #" + Twine(k) +
                           " of a Loop that runs no iteration has no shape");
    if (failed(setStackedOutput(importer, numCarried + k, scans[k], 0, k)))
      return failure();
  }
  return success();
}

LogicalResult ModelImporter::importScan(const onnx::NodeProto &node,
                                        GraphImporter &importer) {
  const onnx::AttributeProto *bodyAttribute =
      importer.attribute("body", onnx::AttributeProto::GRAPH);
  FailureOr<int64_t> numScanInputs = importer.requireInt("num_scan_inputs");
  if (importer.hadError() || failed(numScanInputs))
    return failure();
  if (!bodyAttribute)
    return importer.fail("a Scan needs a body graph");
  const onnx::GraphProto &body = bodyAttribute->g();
  int64_t numInputs = importer.getNumInputs();
  if (*numScanInputs < 1 || *numScanInputs > numInputs)
    return importer.fail("num_scan_inputs must be in [1, " + Twine(numInputs) +
                         "]");
  unsigned numStates = numInputs - *numScanInputs;
  if (importer.getNumOutputs() < numStates)
    return importer.fail("the Scan has " + Twine(numStates) +
                         " state variables but only " +
                         Twine(importer.getNumOutputs()) + " outputs");
  unsigned numScans = importer.getNumOutputs() - numStates;
  // An attribute of one integer per scan input or output, default 0.
  auto perScan = [&](StringRef name,
                     size_t count) -> FailureOr<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> values = importer.getInts(name);
    if (importer.hadError())
      return failure();
    if (!values)
      return SmallVector<int64_t>(count, 0);
    if (values->size() != count)
      return importer.fail(name + " must have " + Twine(count) + " values");
    return *values;
  };
  ASSIGN_OR_FAIL(inputAxes, perScan("scan_input_axes", *numScanInputs));
  ASSIGN_OR_FAIL(inputDirections,
                 perScan("scan_input_directions", *numScanInputs));
  ASSIGN_OR_FAIL(outputAxes, perScan("scan_output_axes", numScans));
  ASSIGN_OR_FAIL(outputDirections, perScan("scan_output_directions", numScans));
  for (int64_t direction :
       llvm::concat<int64_t>(inputDirections, outputDirections))
    if (direction != 0 && direction != 1)
      return importer.fail("a scan direction must be 0 or 1");

  SmallVector<Value> states, scanInputs;
  for (int64_t i = 0; i < numInputs; ++i) {
    ASSIGN_OR_FAIL(value, importer.requireInput(i));
    (i < numStates ? states : scanInputs).push_back(value);
  }
  // Every scan input is cut along its axis into slices of the same count.
  int64_t length = -1;
  for (auto [i, value] : llvm::enumerate(scanInputs)) {
    int64_t rank = GraphImporter::getType(value).getRank();
    ASSIGN_OR_FAIL(axis, importer.normalizeAxis(inputAxes[i], rank));
    inputAxes[i] = axis;
    int64_t size = GraphImporter::getType(value).getDimSize(axis);
    if (length >= 0 && size != length)
      return importer.fail("scan input #" + Twine(i) + " has " + Twine(size) +
                           " slices along its axis; the first has " +
                           Twine(length));
    length = size;
  }
  int64_t limit = getUnrollLimit(body);
  if (length > limit)
    return importer.fail("the scan length " + Twine(length) +
                         " is past what the import unrolls (" + Twine(limit) +
                         " iterations of this body)");
  if (length == 0 && numScans)
    return importer.fail("the scan inputs are empty: the scan outputs would "
                         "have no shape");
  SmallVector<SmallVector<Value>> scans(numScans);
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Value> inputs(states);
    for (auto [i, value] : llvm::enumerate(scanInputs)) {
      RankedTensorType type = GraphImporter::getType(value);
      int64_t axis = inputAxes[i], at = inputDirections[i] ? length - 1 - t : t;
      SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape()),
          strides(type.getRank(), 1);
      starts[axis] = at;
      limits[axis] = at + 1;
      SmallVector<int64_t> sliceShape(type.getShape());
      sliceShape.erase(sliceShape.begin() + axis);
      inputs.push_back(importer.reshape(
          importer.slice(value, starts, limits, strides), sliceShape));
    }
    SmallVector<Value> outputs;
    if (failed(importSubgraph(node, body, "body", inputs, numStates + numScans,
                              importer, outputs)))
      return failure();
    for (unsigned i = 0; i < numStates; ++i)
      states[i] = outputs[i];
    for (unsigned k = 0; k < numScans; ++k)
      scans[k].push_back(outputs[numStates + k]);
  }
  for (unsigned i = 0; i < numStates; ++i)
    if (importer.hasOutput(i))
      importer.setOutput(i, states[i]);
  // Each scan output: the iterations' values stacked on its axis, last
  // first when its direction is 1.
  for (unsigned k = 0; k < numScans; ++k) {
    if (!importer.hasOutput(numStates + k))
      continue;
    if (outputDirections[k])
      std::reverse(scans[k].begin(), scans[k].end());
    int64_t rank = GraphImporter::getType(scans[k].front()).getRank() + 1;
    ASSIGN_OR_FAIL(axis, importer.normalizeAxis(outputAxes[k], rank));
    if (failed(setStackedOutput(importer, numStates + k, scans[k], axis, k)))
      return failure();
  }
  return success();
}

LogicalResult ModelImporter::importFlexAttention(const onnx::NodeProto &node,
                                                 GraphImporter &importer) {
  if (node.output_size() != 1)
    return importer.fail("FlexAttention has one output, Y");
  auto modify = [&](StringRef name, Value input) -> FailureOr<Value> {
    const onnx::AttributeProto *graph =
        importer.attribute(name, onnx::AttributeProto::GRAPH);
    if (importer.hadError())
      return failure();
    if (!graph)
      return input;
    SmallVector<Value> outputs;
    if (failed(importSubgraph(node, graph->g(), name, {input}, 1, importer,
                              outputs)))
      return failure();
    if (outputs[0].getType() != input.getType()) {
      std::string types;
      llvm::raw_string_ostream os(types);
      os << name << ": its output is " << outputs[0].getType()
         << "; it must have its input's type " << input.getType();
      return (void)importer.fail(types), failure();
    }
    return outputs[0];
  };
  return onnx_import::convertFlexAttention(importer, modify);
}

LogicalResult ModelImporter::importIf(const onnx::NodeProto &node,
                                      GraphImporter &importer) {
  ASSIGN_OR_FAIL(cond, importer.requireInput(0));
  RankedTensorType condType = GraphImporter::getType(cond);
  if (!condType.getElementType().isInteger(1) || condType.getNumElements() != 1)
    return importer.fail("the condition must be a bool tensor of one "
                         "element");
  const onnx::AttributeProto *branches[2] = {
      importer.attribute("then_branch", onnx::AttributeProto::GRAPH),
      importer.attribute("else_branch", onnx::AttributeProto::GRAPH)};
  if (importer.hadError())
    return failure();
  if (!branches[0] || !branches[1])
    return importer.fail("an If needs a then_branch and an else_branch graph");
  // A condition known at import (a constant, or a graph input fixed with
  // --input-value) picks its branch: only that one is imported, whatever
  // shapes the other would give.
  if (const Tensor *known = importer.getConstant(cond)) {
    bool taken = known->getAsDouble(0) != 0;
    SmallVector<Value> outputs;
    SmallVector<SmallVector<Value>> sequences;
    if (failed(importSubgraph(node, branches[taken ? 0 : 1]->g(),
                              taken ? "then_branch" : "else_branch", {},
                              node.output_size(), importer, outputs,
                              &sequences)))
      return failure();
    for (auto [i, value] : llvm::enumerate(outputs)) {
      if (value)
        importer.setOutput(i, value);
      else
        importer.setSequenceOutput(i, sequences[i]);
    }
    return success();
  }
  // A condition known at run time: both branches run, and each output
  // selects one of theirs, so the two must agree on its type. Running
  // both is the price of a static graph; state a branch updates would be
  // updated whichever ran, so it is refused.
  size_t updatesBefore = importer.stateUpdates.size();
  SmallVector<Value> results[2];
  SmallVector<SmallVector<Value>> sequences[2];
  for (int b = 0; b < 2; ++b)
    if (failed(importSubgraph(
            node, branches[b]->g(), b ? "else_branch" : "then_branch", {},
            node.output_size(), importer, results[b], &sequences[b])))
      return failure();
  auto fixIt = [&] {
    return std::string(" (a condition known at import picks one branch: "
                       "give the graph input it comes from with "
                       "--input-value)");
  };
  if (importer.stateUpdates.size() != updatesBefore)
    return importer.fail("a branch updates running statistics, and the "
                         "condition is only known at run time" +
                         fixIt());
  Value pred = importer.reshape(cond, {});
  auto mismatch = [&](unsigned i, const Twine &what) {
    return importer.fail("output #" + Twine(i) + " " + what +
                         "; a condition known only at run time needs one "
                         "type" +
                         fixIt());
  };
  for (unsigned i = 0; i < node.output_size(); ++i) {
    // A tensor, or a sequence of tensors selected one by one.
    bool isSequence = !results[0][i];
    if (isSequence != !results[1][i])
      return mismatch(i, "is a tensor in one branch and a sequence in the "
                         "other");
    SmallVector<Value> thens =
        isSequence ? sequences[0][i] : SmallVector<Value>{results[0][i]};
    SmallVector<Value> elses =
        isSequence ? sequences[1][i] : SmallVector<Value>{results[1][i]};
    if (thens.size() != elses.size())
      return mismatch(i, "is a sequence of " + Twine(thens.size()) +
                             " tensors in then_branch and of " +
                             Twine(elses.size()) + " in else_branch");
    SmallVector<Value> selected;
    for (auto [a, b] : llvm::zip(thens, elses)) {
      RankedTensorType thenType = GraphImporter::getType(a);
      RankedTensorType elseType = GraphImporter::getType(b);
      if (thenType != elseType) {
        std::string types;
        llvm::raw_string_ostream os(types);
        os << "is " << thenType << " in then_branch and " << elseType
           << " in else_branch";
        return mismatch(i, types);
      }
      selected.push_back(select(
          importer, importer.broadcastTo(pred, thenType.getShape()), a, b));
    }
    if (isSequence)
      importer.setSequenceOutput(i, selected);
    else
      importer.setOutput(i, selected.front());
  }
  return success();
}

LogicalResult ModelImporter::addResults(const onnx::GraphProto &graph,
                                        GraphImporter &importer) {
  auto addResult = [&](Value value, StringRef resultName,
                       std::optional<tg::Role> role) {
    SmallVector<NamedAttribute> attrs{builder.getNamedAttr(
        tg::TGDialect::kNameAttrName, builder.getStringAttr(resultName))};
    if (role)
      attrs.push_back(tg::getRoleAttr(builder, *role));
    results.push_back(value);
    resultAttrs.push_back(builder.getDictionaryAttr(attrs));
  };
  auto isFloatScalar = [](Value value) {
    auto type = GraphImporter::getType(value);
    return type.getRank() == 0 && isa<FloatType>(type.getElementType());
  };

  std::string lossName = options.lossOutput;
  bool explicitLoss = !lossName.empty();
  if (!explicitLoss && options.crossEntropyLogits.empty())
    for (const onnx::ValueInfoProto &output : graph.output())
      if (output.name() == "loss")
        if (Value value = importer.lookup("loss");
            value && isFloatScalar(value))
          lossName = "loss";

  if (!options.crossEntropyLogits.empty()) {
    Value logits = importer.lookup(options.crossEntropyLogits);
    bool isOutput = llvm::any_of(graph.output(), [&](const auto &output) {
      return output.name() == options.crossEntropyLogits;
    });
    if (!logits || !isOutput) {
      emitModelError() << "--add-loss: '" << options.crossEntropyLogits
                       << "' is no graph output";
      return failure();
    }
    RankedTensorType type = GraphImporter::getType(logits);
    if (type.getRank() < 1 || !isa<FloatType>(type.getElementType())) {
      emitModelError() << "--add-loss: '" << options.crossEntropyLogits
                       << "' is a " << type
                       << ", not float logits with classes last";
      return failure();
    }
    if (importer.isDefined("label")) {
      emitModelError() << "--add-loss: the model already has a value named "
                          "'label'";
      return failure();
    }
    auto labelType = RankedTensorType::get(type.getShape().drop_back(),
                                           builder.getI64Type());
    Value label = addArgument(importer, labelType, tg::Role::Label, "label");
    auto loss =
        tg::CrossEntropyOp::create(builder, fileLoc, tg::LossReduction::Mean,
                                   logits, label, IntegerAttr());
    addResult(loss.getLoss(), "loss", tg::Role::Loss);
  }

  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = importer.lookup(output.name());
    if (!value) {
      emitModelError() << "graph output '" << output.name()
                       << (importer.lookupSequence(output.name())
                               ? "' is a sequence: sequence graph outputs are "
                                 "not supported"
                               : "' is not computed by any node");
      return failure();
    }
    if (failed(
            checkNoHits(importer, value,
                        "graph output '" + printableName(output.name()) + "'")))
      return failure();
    bool isLoss = output.name() == lossName;
    if (isLoss && !isFloatScalar(value)) {
      emitModelError() << "--loss-output '" << lossName
                       << "' must be a float scalar, it is a "
                       << value.getType();
      return failure();
    }
    addResult(value, output.name(),
              isLoss ? std::optional(tg::Role::Loss) : std::nullopt);
  }
  // The running statistics' new values, after the graph's outputs.
  llvm::DenseSet<Value> updated;
  for (auto [argument, next] : importer.stateUpdates) {
    unsigned index = cast<BlockArgument>(argument).getArgNumber();
    StringRef argName = cast<StringAttr>(
        argumentAttrs[index].get(tg::TGDialect::kNameAttrName));
    if (!updated.insert(argument).second) {
      emitRemark(fileLoc) << "running statistic '" << argName
                          << "' is updated by several BatchNormalizations: "
                             "the step keeps the first's update";
      continue;
    }
    results.push_back(next);
    resultAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                              builder.getStringAttr(argName)),
         tg::getRoleAttr(builder, tg::Role::State),
         builder.getNamedAttr(tg::TGDialect::kAliasesAttrName,
                              builder.getI64IntegerAttr(index))}));
  }
  if (explicitLoss && !llvm::any_of(graph.output(), [&](const auto &output) {
        return output.name() == lossName;
      })) {
    emitModelError() << "--loss-output: '" << lossName
                     << "' is no graph output";
    return failure();
  }
  return success();
}

FailureOr<ImportedModel> ModelImporter::import(const onnx::ModelProto &model) {
  if (!model.has_graph() && model.opset_import().empty()) {
    emitModelError() << "not an ONNX model: it has neither a graph nor an "
                        "opset";
    return failure();
  }
  for (const onnx::OperatorSetIdProto &opsetId : model.opset_import())
    if (opsetId.domain().empty() || opsetId.domain() == "ai.onnx") {
      if (hasDefaultDomain && opsetId.version() != opset) {
        emitModelError() << "the model imports two opsets of the default "
                            "ONNX domain ("
                         << opset << " and " << opsetId.version() << ")";
        return failure();
      }
      hasDefaultDomain = true;
      opset = opsetId.version();
    }
  // The training and preview domains, each at version 1.
  for (const onnx::OperatorSetIdProto &opsetId : model.opset_import()) {
    bool *uses = opsetId.domain() == kTrainingDomain  ? &usesTrainingDomain
                 : opsetId.domain() == kPreviewDomain ? &usesPreviewDomain
                                                      : nullptr;
    if (!uses)
      continue;
    if (opsetId.version() != 1) {
      emitModelError() << "version " << opsetId.version() << " of "
                       << opsetId.domain()
                       << " is not supported: tgc imports version 1";
      return failure();
    }
    *uses = true;
  }
  if (!hasDefaultDomain && !usesTrainingDomain) {
    emitModelError() << "the model imports no opset of the default ONNX "
                        "domain; models of other domains only are not "
                        "supported";
    return failure();
  }
  // A model of the training domain alone: its default-domain opset is
  // never read (a node of that domain is an error).
  if (!hasDefaultDomain)
    opset = kMaxOpset;
  if (opset < kMinOpset || opset > kMaxOpset) {
    emitModelError() << "opset " << opset
                     << " of the default ONNX domain is not supported: tgc "
                        "imports opsets "
                     << kMinOpset << " to " << kMaxOpset;
    return failure();
  }
  if (!model.has_graph()) {
    emitModelError() << "the model has no graph";
    return failure();
  }
  const onnx::GraphProto &graph = model.graph();

  imported.module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(imported.module->getBody());
  function = func::FuncOp::create(builder, fileLoc, "main",
                                  builder.getFunctionType({}, {}));
  body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  GraphImporter importer(builder, name, opset);
  importer.baseDirectory = baseDirectory;
  importer.attentionMaskFills = findAttentionMaskFills(graph);
  // The seed of training-mode dropouts, drawn anew each step as tgc-zoo's
  // models' is.
  Value dropoutSeed;
  importer.getDropoutSeed = [&]() -> Value {
    if (!dropoutSeed && !importer.isDefined("dropout_seed"))
      dropoutSeed =
          addArgument(importer, RankedTensorType::get({}, builder.getI64Type()),
                      tg::Role::Hyper, "dropout_seed");
    return dropoutSeed;
  };
  if (failed(addArguments(graph, importer)))
    return failure();
  LogicalResult nodes = importNodes(graph, importer);
  deviations.append(importer.followedFx.begin(), importer.followedFx.end());
  warnExportDeviations();
  if (!addedBiases.empty()) {
    InFlightDiagnostic remark = emitRemark(fileLoc)
                                << addedBiases.front().first;
    SmallVector<std::string> others;
    for (auto &added : ArrayRef(addedBiases).drop_front())
      others.push_back(added.second);
    noteOthersAlike(remark, fileLoc, others);
  }
  if (failed(nodes) || failed(addResults(graph, importer)))
    return failure();
  func::ReturnOp::create(builder, fileLoc, results);
  function.setFunctionType(
      builder.getFunctionType(argumentTypes, ValueRange(results).getTypes()));
  function.setAllArgAttrs(argumentAttrs);
  function.setAllResultAttrs(resultAttrs);
  if (failed(verify(*imported.module)))
    return failure();
  return std::move(imported);
}

FailureOr<ImportedModel>
tgc::importONNXBytes(MLIRContext &context, StringRef bytes, StringRef name,
                     StringRef baseDirectory,
                     const ONNXImportOptions &options) {
  context.loadDialect<tg::TGDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (bytes.empty()) {
    emitError(FileLineColLoc::get(&context, name, 0, 0))
        << "the file is empty: not an ONNX model";
    return failure();
  }
  if (bytes.size() > size_t(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(FileLineColLoc::get(&context, name, 0, 0))
        << "not a valid ONNX model (the protobuf cannot be parsed)";
    return failure();
  }
  if (llvm::Error error = onnx_import::inlineLocalFunctions(model)) {
    emitError(FileLineColLoc::get(&context, name, 0, 0))
        << llvm::toString(std::move(error));
    return failure();
  }
  return ModelImporter(context, name, baseDirectory, options).import(model);
}

FailureOr<ImportedModel> tgc::importONNXFile(MLIRContext &context,
                                             StringRef path,
                                             const ONNXImportOptions &options) {
  // Protobuf parses at most 2 GiB: a larger file is refused unread.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readInputFile(path, INT32_MAX, /*allowStdin=*/true);
  if (!file) {
    emitError(FileLineColLoc::get(&context, path, 0, 0))
        << llvm::toString(file.takeError());
    return failure();
  }
  SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  if (directory.empty())
    directory = ".";
  return importONNXBytes(context, (*file)->getBuffer(), path, directory,
                         options);
}

llvm::Expected<ONNXTensorFile> tgc::readONNXTensorFile(MLIRContext &context,
                                                       StringRef path,
                                                       bool uint16AsBFloat16) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readInputFile(path, INT32_MAX);
  if (!file)
    return file.takeError();
  onnx::TensorProto proto;
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() > size_t(INT32_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return makeError("'" + path + "' is not an ONNX TensorProto");
  // The bits, stored the same way (raw 2-byte values or int32_data).
  if (uint16AsBFloat16 && proto.data_type() == onnx::TensorProto::UINT16)
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  llvm::Expected<DecodedTensor> decoded =
      decodeTensor(context, proto, directory.empty() ? "." : directory.str());
  if (!decoded)
    return makeError("'" + path + "': " + llvm::toString(decoded.takeError()));
  return ONNXTensorFile{proto.name(), decoded->type.getElementType(),
                        std::move(decoded->value)};
}

static std::vector<safetensors::Entry>
toEntries(ArrayRef<ImportedParameter> parameters) {
  std::vector<safetensors::Entry> entries;
  for (const ImportedParameter &parameter : parameters)
    entries.push_back(safetensors::toEntry(parameter.name, parameter.value));
  return entries;
}

llvm::Error tgc::writeParameters(StringRef path,
                                 ArrayRef<ImportedParameter> parameters) {
  return safetensors::write(path, toEntries(parameters));
}

llvm::Error tgc::writeParameters(llvm::raw_ostream &os,
                                 ArrayRef<ImportedParameter> parameters) {
  return safetensors::write(os, toEntries(parameters));
}
