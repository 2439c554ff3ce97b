//===- Inputs.cpp - arguments for the interpreter: names and random -------===//

#include "tgc/Interpreter/Inputs.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

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

/// Where the elements of `value` come from, through what keeps a splat a
/// splat: a fusion region's argument is its operand; reshapes,
/// transposes, slices, broadcasts and a partitioned function's slices and
/// gathers move elements.
static Value lookThroughMoves(Value value) {
  while (true) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      auto fusion = dyn_cast<tg::FusionOp>(argument.getOwner()->getParentOp());
      if (!fusion)
        return value;
      value = fusion->getOperand(argument.getArgNumber());
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (!isa_and_present<tg::ReshapeOp, tg::TransposeOp, tg::SliceOp,
                         tg::BroadcastInDimOp, shard::AllSliceOp,
                         shard::AllGatherOp>(def))
      return value;
    value = def->getOperand(0);
  }
}

/// Whether `value` is a splat integer constant equal to `expected` (any
/// positive value for std::nullopt).
static bool isSplatInt(Value value, std::optional<int64_t> expected) {
  DenseIntElementsAttr splat;
  if (!matchPattern(lookThroughMoves(value), m_Constant(&splat)) ||
      !splat.isSplat())
    return false;
  int64_t constant = splat.getSplatValue<APInt>().getSExtValue();
  return expected ? constant == *expected : constant > 0;
}

/// Whether `select` is an importer's wrap of negative ids `ids` into
/// [0, n): select(ids < 0, ids + n, ids) (ONNX Gather's negative indices).
/// The wrapped ids index what `ids` in [0, n) index, so the bound that holds
/// for the wrapped ids holds for `ids`.
static bool isNegativeIdWrap(tg::SelectOp select, Value ids) {
  if (select.getOnFalse() != ids)
    return false;
  auto compare = select.getPred().getDefiningOp<tg::CompareOp>();
  auto add = select.getOnTrue().getDefiningOp<tg::AddOp>();
  if (!compare || !add || compare.getDirection() != tg::CompareDirection::LT ||
      compare.getLhs() != ids || !isSplatInt(compare.getRhs(), 0))
    return false;
  return (add.getLhs() == ids && isSplatInt(add.getRhs(), std::nullopt)) ||
         (add.getRhs() == ids && isSplatInt(add.getLhs(), std::nullopt));
}

/// Whether `user` passes the ids `ids` on where it does not put a constant
/// in their place: select(pred, ids, constant) or its mirror (an exporter's
/// fill of padding positions with the ignored label), max or min with a
/// constant (a clamp).
static bool isConstantFill(Operation *user, Value ids) {
  Value other;
  if (auto select = dyn_cast<tg::SelectOp>(user)) {
    if (select.getOnTrue() == ids)
      other = select.getOnFalse();
    else if (select.getOnFalse() == ids)
      other = select.getOnTrue();
  } else if (isa<tg::MaxOp, tg::MinOp>(user)) {
    other = user->getOperand(user->getOperand(0) == ids ? 1 : 0);
  }
  return other && other != ids &&
         matchPattern(lookThroughMoves(other), m_Constant());
}

/// Whether `user` converts integer ids to a wider integer type (the values
/// unchanged).
static bool isIdWidening(Operation *user) {
  auto convert = dyn_cast<tg::ConvertOp>(user);
  if (!convert)
    return false;
  auto from = dyn_cast<IntegerType>(getElementTypeOrSelf(convert.getOperand()));
  auto to = dyn_cast<IntegerType>(getElementTypeOrSelf(convert.getType()));
  return from && to && from.getWidth() > 1 && to.getWidth() >= from.getWidth();
}

/// Whether `slice` drops the first position of its operand's last
/// dimension and keeps the rest whole: `labels[..., 1:]`, the shift of a
/// causal language model's labels.
static bool isShiftByOne(tg::SliceOp slice) {
  ArrayRef<int64_t> shape = slice.getOperand().getType().getShape();
  if (shape.empty() || shape.back() < 2)
    return false;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    int64_t start = dim + 1 == shape.size() ? 1 : 0;
    if (slice.getStartIndices()[dim] != start ||
        slice.getLimitIndices()[dim] != size || slice.getStrides()[dim] != 1)
      return false;
  }
  return true;
}

/// Where a use crosses a fusion region's boundary, the value it continues
/// as: the region's argument of an operand of tg.fusion, the region's result
/// of an operand of its tg.yield (a micro-batch's slice of the ids); null
/// for any other use.
static Value crossRegion(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto fusion = dyn_cast<tg::FusionOp>(user))
    return fusion.getBody().getArgument(use.getOperandNumber());
  if (isa<tg::YieldOp>(user))
    return user->getParentOp()->getResult(use.getOperandNumber());
  return Value();
}

/// Calls `visit` on each use of the ids `value` holds, following them
/// through shape ops, `shard` collectives (the same ids, moved, gathered or
/// split), fusion regions, an importer's wrap of negative ids, constant
/// fills and widening conversions; `shifted` says whether the path went
/// through a shift by one (isShiftByOne). With `intoBlocks`, also through
/// the shift of the ids into a device's block of a split vocabulary (a
/// tg.sub with tg.id_bound, which is visited too): where a
/// vocabulary-parallel lookup or loss takes them.
static void
forEachIdUse(Value value,
             llvm::function_ref<void(OpOperand &, bool shifted)> visit,
             bool intoBlocks = false) {
  SmallVector<std::pair<Value, bool>> worklist = {{value, false}};
  llvm::DenseSet<Value> seen[2]; // Reached unshifted, shifted.
  while (!worklist.empty()) {
    auto [current, shifted] = worklist.pop_back_val();
    if (!seen[shifted].insert(current).second)
      continue;
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      auto select = dyn_cast<tg::SelectOp>(user);
      if (user->hasTrait<tg::OpTrait::ShapeOp>() ||
          isa<shard::ShardDialect>(user->getDialect()) ||
          (select && isNegativeIdWrap(select, current)) ||
          isConstantFill(user, current) || isIdWidening(user)) {
        auto slice = dyn_cast<tg::SliceOp>(user);
        bool shift = shifted || (slice && isShiftByOne(slice));
        for (Value result : user->getResults())
          worklist.push_back({result, shift});
      } else if (Value inner = crossRegion(use)) {
        worklist.push_back({inner, shifted});
      } else {
        visit(use, shifted);
        if (intoBlocks && isa<tg::SubOp>(user) &&
            user->hasAttr(tg::kIdBoundAttrName) && use.getOperandNumber() == 0)
          worklist.push_back({user->getResult(0), shifted});
      }
    }
  }
}

std::optional<int64_t> tgc::findIdBound(Value value) {
  std::optional<int64_t> bound;
  auto tighten = [&](int64_t limit) {
    bound = bound ? std::min(*bound, limit) : limit;
  };
  forEachIdUse(value, [&](OpOperand &use, bool) {
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

std::optional<bool> tgc::findLabelShift(Value value) {
  std::optional<bool> found;
  forEachIdUse(
      value,
      [&](OpOperand &use, bool shifted) {
        auto loss = dyn_cast<tg::CrossEntropyOp>(use.getOwner());
        if (loss && use.get() == loss.getLabels())
          found = found.value_or(false) || shifted;
      },
      /*intoBlocks=*/true);
  return found;
}

bool tgc::feedsIdsOrLabels(Value value) {
  SmallVector<Value> worklist = {value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      auto embedding = dyn_cast<tg::EmbeddingOp>(user);
      auto loss = dyn_cast<tg::CrossEntropyOp>(user);
      if ((embedding && use.get() == embedding.getIndices()) ||
          (loss && use.get() == loss.getLabels()))
        return true;
      if (Value inner = crossRegion(use))
        worklist.push_back(inner);
      else
        worklist.append(user->result_begin(), user->result_end());
    }
  }
  return false;
}

SmallVector<int64_t> tgc::findIgnoredIds(Value value) {
  SmallVector<int64_t> ignored;
  auto add = [&](IntegerAttr id) {
    if (id && !llvm::is_contained(ignored, id.getInt()))
      ignored.push_back(id.getInt());
  };
  forEachIdUse(value, [&](OpOperand &use, bool) {
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
    if (std::optional<int64_t> bound =
            findIdBound(function.getArgument(index))) {
      spec.idBound = *bound;
      // Past the first kMaxIgnoredIds, an ignored id is refused by a
      // generated trainer's data checks (never taken for a class).
      for (int64_t id : findIgnoredIds(function.getArgument(index)))
        if (spec.numIgnoredIds < rt::RandomSpec::kMaxIgnoredIds)
          spec.ignoredIds[spec.numIgnoredIds++] = id;
    }
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
