//===- TGShardingAttr.cpp - meshes and the sharding attribute ------------===//
//
// `#tg.sharding`: its syntax, its verifier and the arithmetic of local
// shapes; `Mesh`, the named axes of a `shard.grid`.
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGSharding.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tgc::tg;

#define GET_ATTRDEF_CLASSES
#include "tgc/Dialect/TG/TGAttrs.cpp.inc"

void TGDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tgc/Dialect/TG/TGAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

static bool isAxisName(StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh, ArrayAttr dims,
                                   ArrayRef<bool> openDims, ArrayAttr unreduced,
                                   int64_t priority) {
  if (!mesh)
    return emitError() << "a sharding names its mesh";
  if (static_cast<int64_t>(openDims.size()) !=
      static_cast<int64_t>(dims.size()))
    return emitError() << "a sharding has one open flag per dimension";
  if (priority < -1)
    return emitError() << "a sharding's priority is >= 0, got " << priority;
  llvm::StringSet<> seen;
  auto checkAxis = [&](Attribute attr) -> LogicalResult {
    auto axis = dyn_cast<StringAttr>(attr);
    if (!axis || !isAxisName(axis.getValue()))
      return emitError() << "a mesh axis is a string of letters, digits and "
                            "'_', got "
                         << attr;
    if (!seen.insert(axis.getValue()).second)
      return emitError() << "mesh axis \"" << axis.getValue()
                         << "\" is used twice in one sharding";
    return success();
  };
  for (Attribute dim : dims) {
    auto axes = dyn_cast<ArrayAttr>(dim);
    if (!axes)
      return emitError() << "a sharding dimension is an array of axes";
    for (Attribute axis : axes)
      if (failed(checkAxis(axis)))
        return failure();
  }
  for (Attribute axis : unreduced)
    if (failed(checkAxis(axis)))
      return failure();
  return success();
}

static SmallVector<StringRef> getStrings(ArrayAttr array) {
  return llvm::map_to_vector(
      array, [](Attribute attr) { return cast<StringAttr>(attr).getValue(); });
}

SmallVector<StringRef> ShardingAttr::getDimAxes(unsigned dim) const {
  return getStrings(cast<ArrayAttr>(getDims()[dim]));
}

SmallVector<StringRef> ShardingAttr::getUnreducedAxes() const {
  return getStrings(getUnreduced());
}

bool ShardingAttr::isReplicated() const {
  return getUnreduced().empty() && llvm::all_of(getDims(), [](Attribute dim) {
           return cast<ArrayAttr>(dim).empty();
         });
}

SmallVector<StringRef> ShardingAttr::getUsedAxes() const {
  SmallVector<StringRef> axes;
  for (unsigned dim = 0, e = getRank(); dim < e; ++dim)
    llvm::append_range(axes, getDimAxes(dim));
  llvm::append_range(axes, getUnreducedAxes());
  return axes;
}

static ArrayAttr getStringArray(MLIRContext *context,
                                ArrayRef<StringRef> strings) {
  return ArrayAttr::get(context, llvm::map_to_vector(strings, [&](StringRef s) {
                          return Attribute(StringAttr::get(context, s));
                        }));
}

ShardingAttr ShardingAttr::get(MLIRContext *context, StringRef mesh,
                               ArrayRef<SmallVector<StringRef>> dims,
                               ArrayRef<StringRef> unreduced,
                               int64_t priority) {
  SmallVector<Attribute> dimAttrs = llvm::map_to_vector(
      dims, [&](const SmallVector<StringRef> &axes) -> Attribute {
        return getStringArray(context, axes);
      });
  SmallVector<bool> open(dims.size(), false);
  return ShardingAttr::get(context, FlatSymbolRefAttr::get(context, mesh),
                           ArrayAttr::get(context, dimAttrs), open,
                           getStringArray(context, unreduced), priority);
}

ShardingAttr ShardingAttr::getReplicated(MLIRContext *context, StringRef mesh,
                                         int64_t rank, int64_t priority) {
  SmallVector<SmallVector<StringRef>> dims(rank);
  return get(context, mesh, dims, {}, priority);
}

/// `{"a", "b", ?}`: the axes of a dimension, `?` when open. Without
/// `allowOpen`, `?` is an error (the unreduced axes).
static ParseResult parseAxisList(AsmParser &parser,
                                 SmallVectorImpl<Attribute> &axes, bool &open,
                                 bool allowOpen) {
  open = false;
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Braces, [&]() -> ParseResult {
        if (succeeded(parser.parseOptionalQuestion())) {
          if (!allowOpen)
            return parser.emitError(parser.getCurrentLocation(),
                                    "unreduced axes cannot be open");
          if (open)
            return parser.emitError(parser.getCurrentLocation(),
                                    "'?' appears twice in a dimension");
          open = true;
          return success();
        }
        if (open)
          return parser.emitError(parser.getCurrentLocation(),
                                  "'?' comes after the dimension's axes");
        std::string axis;
        if (parser.parseString(&axis))
          return failure();
        axes.push_back(parser.getBuilder().getStringAttr(axis));
        return success();
      });
}

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  FlatSymbolRefAttr mesh;
  SmallVector<Attribute> dims;
  SmallVector<bool> open;
  SmallVector<Attribute> unreduced;
  int64_t priority = -1;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            SmallVector<Attribute> axes;
            bool isOpen = false;
            if (parseAxisList(parser, axes, isOpen, /*allowOpen=*/true))
              return failure();
            dims.push_back(ArrayAttr::get(context, axes));
            open.push_back(isOpen);
            return success();
          }))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword) || parser.parseEqual())
      return {};
    if (keyword == "unreduced") {
      bool isOpen = false;
      if (parseAxisList(parser, unreduced, isOpen, /*allowOpen=*/false))
        return {};
    } else if (keyword == "priority") {
      if (parser.parseInteger(priority))
        return {};
      if (priority < 0) {
        parser.emitError(loc, "a sharding's priority is >= 0");
        return {};
      }
    } else {
      parser.emitError(loc, "expected 'unreduced' or 'priority', got '")
          << keyword << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(
      context, mesh, ArrayAttr::get(context, dims), open,
      ArrayAttr::get(context, unreduced), priority);
}

static void printAxisList(AsmPrinter &printer, ArrayAttr axes, bool open) {
  printer << "{";
  llvm::interleaveComma(axes, printer, [&](Attribute axis) {
    printer << "\"" << cast<StringAttr>(axis).getValue() << "\"";
  });
  if (open)
    printer << (axes.empty() ? "?" : ", ?");
  printer << "}";
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<" << getMesh() << ", [";
  for (unsigned dim = 0, e = getRank(); dim < e; ++dim) {
    if (dim)
      printer << ", ";
    printAxisList(printer, cast<ArrayAttr>(getDims()[dim]), isOpen(dim));
  }
  printer << "]";
  if (!getUnreduced().empty()) {
    printer << ", unreduced = ";
    printAxisList(printer, getUnreduced(), /*open=*/false);
  }
  if (hasPriority())
    printer << ", priority = " << getPriority();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

int64_t Mesh::getNumDevices() const {
  int64_t devices = 1;
  for (int64_t size : axisSizes)
    devices *= size;
  return devices;
}

std::optional<unsigned> Mesh::getAxisIndex(StringRef axis) const {
  for (auto [index, name] : llvm::enumerate(axisNames))
    if (name == axis)
      return index;
  return std::nullopt;
}

int64_t Mesh::getAxisSize(StringRef axis) const {
  return axisSizes[*getAxisIndex(axis)];
}

int64_t Mesh::getGroupSize(ArrayRef<StringRef> axes) const {
  int64_t size = 1;
  for (StringRef axis : axes)
    size *= getAxisSize(axis);
  return size;
}

/// The most devices a mesh may have: far above any cluster, low enough that
/// products of axis sizes and dimensions stay small.
static constexpr int64_t kMaxMeshDevices = int64_t(1) << 20;

FailureOr<Mesh> Mesh::parse(StringRef spec, std::string &error) {
  Mesh mesh;
  mesh.name = "mesh";
  SmallVector<StringRef> parts;
  spec.split(parts, ',');
  int64_t devices = 1;
  for (StringRef part : parts) {
    auto [name, size] = part.trim().split('=');
    name = name.trim();
    int64_t value = 0;
    if (!isAxisName(name) || size.trim().getAsInteger(10, value)) {
      error = "a mesh is NAME=SIZE[,NAME=SIZE...] (e.g. dp=8,tp=4), got '" +
              spec.str() + "'";
      return failure();
    }
    if (mesh.getAxisIndex(name)) {
      error = "mesh axis '" + name.str() + "' appears twice";
      return failure();
    }
    if (value < 1 || value > kMaxMeshDevices) {
      error = "mesh axis '" + name.str() + "' must have a size in [1, " +
              std::to_string(kMaxMeshDevices) + "], got " + size.trim().str();
      return failure();
    }
    devices *= value;
    if (devices > kMaxMeshDevices) {
      error =
          "a mesh has at most " + std::to_string(kMaxMeshDevices) + " devices";
      return failure();
    }
    mesh.axisNames.push_back(name.str());
    mesh.axisSizes.push_back(value);
  }
  return mesh;
}

FailureOr<Mesh> Mesh::lookup(Operation *from, StringRef gridName) {
  auto grid =
      dyn_cast_or_null<shard::GridOp>(SymbolTable::lookupNearestSymbolFrom(
          from, StringAttr::get(from->getContext(), gridName)));
  if (!grid)
    return from->emitError() << "no shard.grid named @" << gridName;
  auto names = grid->getAttrOfType<ArrayAttr>(kMeshAxesAttrName);
  if (!names || static_cast<int64_t>(names.size()) != grid.getRank())
    return from->emitError()
           << "shard.grid @" << gridName << " needs '" << kMeshAxesAttrName
           << "', one axis name per grid dimension";
  Mesh mesh;
  mesh.name = gridName.str();
  for (auto [name, size] : llvm::zip(names, grid.getShape())) {
    auto axis = dyn_cast<StringAttr>(name);
    if (!axis || !isAxisName(axis.getValue()) || size < 1 ||
        mesh.getAxisIndex(axis.getValue()))
      return from->emitError()
             << "shard.grid @" << gridName
             << " needs unique axis names and static sizes >= 1";
    mesh.axisNames.push_back(axis.getValue().str());
    mesh.axisSizes.push_back(size);
  }
  return mesh;
}

std::string Mesh::str() const {
  std::string text;
  for (auto [index, name] : llvm::enumerate(axisNames)) {
    if (index)
      text += ",";
    text += name + "=" + std::to_string(axisSizes[index]);
  }
  return text;
}

Mesh Mesh::withoutAxis(StringRef axis) const {
  Mesh result = *this;
  if (std::optional<unsigned> index = getAxisIndex(axis)) {
    result.axisNames.erase(result.axisNames.begin() + *index);
    result.axisSizes.erase(result.axisSizes.begin() + *index);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

int64_t tgc::tg::getShardCount(ShardingAttr sharding, unsigned dim,
                               const Mesh &mesh) {
  return mesh.getGroupSize(sharding.getDimAxes(dim));
}

std::optional<SmallVector<int64_t>>
tgc::tg::getLocalShape(ShardingAttr sharding, ArrayRef<int64_t> globalShape,
                       const Mesh &mesh) {
  SmallVector<int64_t> local(globalShape);
  if (!sharding)
    return local;
  for (auto [dim, size] : llvm::enumerate(local)) {
    int64_t count = getShardCount(sharding, dim, mesh);
    if (size % count != 0)
      return std::nullopt;
    size /= count;
  }
  return local;
}

SmallVector<int64_t> tgc::tg::getGlobalShape(ShardingAttr sharding,
                                             ArrayRef<int64_t> localShape,
                                             const Mesh &mesh) {
  SmallVector<int64_t> global(localShape);
  if (!sharding)
    return global;
  for (auto [dim, size] : llvm::enumerate(global))
    size *= getShardCount(sharding, dim, mesh);
  return global;
}

/// The `name` entry of type `AttrT` in the dictionary `index` of an
/// argument or result attribute array (null: none).
template <typename AttrT>
static AttrT getEntry(ArrayAttr attrs, unsigned index, StringRef name) {
  if (!attrs || index >= attrs.size())
    return {};
  auto entry = dyn_cast_or_null<DictionaryAttr>(attrs[index]);
  return entry ? dyn_cast_or_null<AttrT>(entry.get(name)) : AttrT();
}

DenseI64ArrayAttr tgc::tg::getArgUnpaddedShape(FunctionOpInterface function,
                                               unsigned index) {
  return getEntry<DenseI64ArrayAttr>(function.getArgAttrsAttr(), index,
                                     kUnpaddedShapeAttrName);
}

DenseI64ArrayAttr tgc::tg::getResultUnpaddedShape(FunctionOpInterface function,
                                                  unsigned index) {
  return getEntry<DenseI64ArrayAttr>(function.getResAttrsAttr(), index,
                                     kUnpaddedShapeAttrName);
}

FailureOr<SmallVector<int64_t>>
tgc::tg::getCallerShape(ArrayRef<int64_t> global, DenseI64ArrayAttr unpadded,
                        std::string &error) {
  if (!unpadded)
    return SmallVector<int64_t>(global);
  ArrayRef<int64_t> shape = unpadded.asArrayRef();
  bool fits = shape.size() == global.size();
  for (size_t d = 0; fits && d < shape.size(); ++d)
    fits = shape[d] >= 1 && shape[d] <= global[d];
  if (!fits) {
    llvm::raw_string_ostream os(error);
    os << "'" << kUnpaddedShapeAttrName << "' " << unpadded
       << " does not fit the global shape [";
    llvm::interleaveComma(global, os);
    os << "]: it needs the same rank and no dimension larger";
    return failure();
  }
  return SmallVector<int64_t>(shape);
}

FailureOr<SmallVector<int64_t>>
tgc::tg::getCallerArgShape(FunctionOpInterface function, unsigned index,
                           const Mesh *mesh) {
  auto type = cast<ShapedType>(function.getArgumentTypes()[index]);
  SmallVector<int64_t> global(type.getShape());
  if (mesh)
    global = getGlobalShape(getArgSharding(function, index), global, *mesh);
  std::string error;
  FailureOr<SmallVector<int64_t>> caller =
      getCallerShape(global, getArgUnpaddedShape(function, index), error);
  if (failed(caller))
    return function.emitError("argument #") << index << ": " << error;
  return caller;
}

ShardingAttr tgc::tg::getArgSharding(FunctionOpInterface function,
                                     unsigned index) {
  return getEntry<ShardingAttr>(function.getArgAttrsAttr(), index,
                                kShardingAttrName);
}

ShardingAttr tgc::tg::getResultSharding(FunctionOpInterface function,
                                        unsigned index) {
  return getEntry<ShardingAttr>(function.getResAttrsAttr(), index,
                                kShardingAttrName);
}

ShardingAttr tgc::tg::getValueSharding(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return {};
  auto shardings =
      result.getOwner()->getAttrOfType<ArrayAttr>(kShardingsAttrName);
  if (!shardings || result.getResultNumber() >= shardings.size())
    return {};
  return dyn_cast<ShardingAttr>(shardings[result.getResultNumber()]);
}

FlatSymbolRefAttr tgc::tg::getFunctionMesh(FunctionOpInterface function) {
  for (unsigned index = 0, e = function.getNumArguments(); index < e; ++index)
    if (ShardingAttr sharding = getArgSharding(function, index))
      return sharding.getMesh();
  for (unsigned index = 0, e = function.getNumResults(); index < e; ++index)
    if (ShardingAttr sharding = getResultSharding(function, index))
      return sharding.getMesh();
  return {};
}

FailureOr<std::optional<Mesh>>
tgc::tg::lookupFunctionMesh(FunctionOpInterface function) {
  FlatSymbolRefAttr name = getFunctionMesh(function);
  if (!name)
    return std::optional<Mesh>();
  FailureOr<Mesh> mesh = Mesh::lookup(function, name.getValue());
  if (failed(mesh))
    return failure();
  return std::optional<Mesh>(std::move(*mesh));
}
