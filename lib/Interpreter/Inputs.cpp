//===- Inputs.cpp - arguments for the interpreter: names and random -------===//

#include "tgc/Interpreter/Inputs.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace tgc;

static StringAttr getArgStringAttr(FunctionOpInterface function, unsigned index,
                                   StringRef name) {
  return function.getArgAttrOfType<StringAttr>(index, name);
}

std::string tgc::getArgumentName(FunctionOpInterface function, unsigned index) {
  if (StringAttr name =
          getArgStringAttr(function, index, tg::TGDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(index);
}

std::string tgc::getResultName(FunctionOpInterface function, unsigned index) {
  if (auto name = function.getResultAttrOfType<StringAttr>(
          index, tg::TGDialect::kNameAttrName))
    return name.str();
  return std::to_string(index);
}

/// The rows of an embedding table: the argument of a partitioned function
/// holds a block of them, its tg.sharding says how many blocks.
static int64_t getGlobalRows(Value table) {
  int64_t rows = cast<ShapedType>(table.getType()).getDimSize(0);
  auto argument = dyn_cast<BlockArgument>(table);
  auto function =
      argument
          ? dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp())
          : FunctionOpInterface();
  if (!function)
    return rows;
  tg::ShardingAttr sharding =
      tg::getArgSharding(function, argument.getArgNumber());
  if (!sharding)
    return rows;
  FailureOr<tg::Mesh> mesh =
      tg::Mesh::lookup(function, sharding.getMesh().getValue());
  if (failed(mesh))
    return rows;
  return rows * tg::getShardCount(sharding, 0, *mesh);
}

/// Calls `visit` on each use of the ids `value` holds, following them
/// through shape ops, `shard` collectives (the same ids, moved, gathered or
/// split) and fusion regions.
static void forEachIdUse(Value value,
                         llvm::function_ref<void(OpOperand &)> visit) {
  SmallVector<Value> worklist = {value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<tg::OpTrait::ShapeOp>() ||
          isa<shard::ShardDialect>(user->getDialect()))
        worklist.append(user->result_begin(), user->result_end());
      else if (auto fusion = dyn_cast<tg::FusionOp>(user))
        worklist.push_back(
            fusion.getBody().getArgument(use.getOperandNumber()));
      else if (auto yield = dyn_cast<tg::YieldOp>(user))
        // Out of a region (a micro-batch's slice of the ids).
        worklist.push_back(
            yield->getParentOp()->getResult(use.getOperandNumber()));
      else
        visit(use);
    }
  }
}

std::optional<int64_t> tgc::findIdBound(Value value) {
  std::optional<int64_t> bound;
  auto tighten = [&](int64_t limit) {
    bound = bound ? std::min(*bound, limit) : limit;
  };
  forEachIdUse(value, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    auto ownBound = user->getAttrOfType<IntegerAttr>(tg::kIdBoundAttrName);
    if (auto embedding = dyn_cast<tg::EmbeddingOp>(user)) {
      if (use.get() == embedding.getIndices()) {
        tighten(getGlobalRows(embedding.getTable()));
        if (ownBound) // A padded vocabulary.
          tighten(ownBound.getInt());
      }
    } else if (auto loss = dyn_cast<tg::CrossEntropyOp>(user)) {
      if (use.get() == loss.getLabels()) {
        tighten(loss.getLogits().getType().getShape().back());
        if (ownBound)
          tighten(ownBound.getInt());
      }
    } else if (ownBound && use.getOperandNumber() == 0) {
      // Shifted into a device's block of a split vocabulary.
      tighten(ownBound.getInt());
    }
  });
  return bound;
}

SmallVector<int64_t> tgc::findIgnoredIds(Value value) {
  SmallVector<int64_t> ignored;
  auto add = [&](IntegerAttr id) {
    if (id && !llvm::is_contained(ignored, id.getInt()))
      ignored.push_back(id.getInt());
  };
  forEachIdUse(value, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto loss = dyn_cast<tg::CrossEntropyOp>(user))
      add(loss.getIgnoreIndexAttr());
    else if (auto grad = dyn_cast<tg::CrossEntropyGradOp>(user))
      add(grad.getIgnoreIndexAttr());
    else if (auto compare = dyn_cast<tg::CompareOp>(user);
             compare && compare.getDirection() == tg::CompareDirection::EQ) {
      // A vocabulary-parallel loss tests its labels for the ignored id.
      Value other = compare->getOperand(1 - use.getOperandNumber());
      DenseIntElementsAttr splat;
      if (matchPattern(other, m_Constant(&splat)) && splat.isSplat())
        add(IntegerAttr::get(splat.getElementType(),
                             splat.getSplatValue<APInt>().getSExtValue()));
    }
  });
  return ignored;
}

LogicalResult tgc::checkIdsInRange(FunctionOpInterface function, unsigned index,
                                   const Tensor &tensor) {
  if (tensor.getStorage() != Tensor::Storage::Int)
    return success();
  Value arg = function.getArgument(index);
  std::optional<int64_t> bound = findIdBound(arg);
  if (!bound)
    return success();
  SmallVector<int64_t> ignored = findIgnoredIds(arg);
  const std::vector<int64_t> &ids = tensor.ints();
  for (auto [position, id] : llvm::enumerate(ids)) {
    if ((id >= 0 && id < *bound) || llvm::is_contained(ignored, id))
      continue;
    std::string message = "argument '" + getArgumentName(function, index) +
                          "': id " + std::to_string(id) + " at flat position " +
                          std::to_string(position) + " is out of range [0, " +
                          std::to_string(*bound) + ")";
    for (int64_t skip : ignored)
      message += " (and not the ignored " + std::to_string(skip) + ")";
    return emitError(arg.getLoc()) << message;
  }
  return success();
}

rt::RandomSpec tgc::getRandomSpec(FunctionOpInterface function,
                                  unsigned index) {
  auto type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
  Type elementType = type.getElementType();
  rt::RandomSpec spec;
  switch (tg::getArgumentRole(function, index).value_or(tg::Role::Input)) {
  case tg::Role::Param:
    spec.role = rt::ArgRole::Param;
    break;
  case tg::Role::State:
    spec.role = rt::ArgRole::State;
    break;
  case tg::Role::Label:
    spec.role = rt::ArgRole::Label;
    break;
  case tg::Role::Hyper:
    spec.role = rt::ArgRole::Hyper;
    break;
  default:
    spec.role = rt::ArgRole::Input;
    break;
  }
  spec.isFloat = isa<FloatType>(elementType);
  spec.isI1 = elementType.isInteger(1);
  if (Attribute value =
          function.getArgAttr(index, tg::TGDialect::kDefaultAttrName)) {
    spec.hasDefault = true;
    if (auto floatValue = dyn_cast<FloatAttr>(value))
      spec.defaultValue = floatValue.getValueAsDouble();
    else if (auto intValue = dyn_cast<IntegerAttr>(value))
      spec.defaultValue = static_cast<double>(intValue.getInt());
  }
  if (auto attr = function.getArgAttrOfType<StringAttr>(
          index, tg::TGDialect::kInitAttrName)) {
    if (attr.getValue() == "ones")
      spec.init = rt::RandomSpec::Init::Ones;
    else if (attr.getValue() != "normal")
      spec.init = rt::RandomSpec::Init::Zeros;
  }
  if (!spec.isFloat)
    if (std::optional<int64_t> bound = findIdBound(function.getArgument(index)))
      spec.idBound = *bound;
  return spec;
}

Tensor tgc::makeRandomArgument(FunctionOpInterface function, unsigned index,
                               uint64_t seed, RankedTensorType type) {
  if (!type)
    type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
  Type elementType = type.getElementType();
  rt::RandomSpec spec = getRandomSpec(function, index);
  int64_t count = type.getNumElements();
  if (spec.isFloat) {
    Tensor tensor(type, elementType.isF64() ? Tensor::Storage::Double
                                            : Tensor::Storage::Float);
    std::vector<double> values(count);
    rt::randomFloats(spec, count, seed, index, values.data());
    for (int64_t i = 0; i < count; ++i)
      tensor.setAsDouble(i, values[i]);
    return tensor;
  }
  Tensor tensor(type, Tensor::Storage::Int);
  rt::randomInts(spec, count, seed, index, tensor.ints().data());
  return tensor;
}
