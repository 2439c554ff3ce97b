//===- RankedInterpreter.cpp - all ranks of an SPMD program ---------------===//
//
// The lockstep executor of a partitioned function: one value per device for
// every SSA value, the tg ops run per device by the interpreter, the shard
// collectives run per device group.
//
//===----------------------------------------------------------------------===//

#include "tgc/Interpreter/RankedInterpreter.h"

#include "tgc/Interpreter/Collectives.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tgc;

int64_t SimulatedMesh::getNumDevices() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

namespace {

enum class CollectiveKind {
  AllReduce,
  AllGather,
  AllSlice,
  ReduceScatter,
  AllToAll
};

/// What the ranks need to know of a collective, whichever op it is.
struct Collective {
  CollectiveKind kind;
  StringRef grid;
  ArrayRef<int16_t> gridAxes;
  shard::ReductionKind reduction = shard::ReductionKind::Sum;
  /// gather_axis, slice_axis, scatter_axis, or split_axis.
  int64_t axis = 0;
  /// all_to_all's concat_axis.
  int64_t concatAxis = 0;
};

} // namespace

/// The collective `op` is, or none for a shard op the ranks do not run.
static std::optional<Collective> getCollective(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Collective>>(op)
      .Case([](shard::AllReduceOp reduce) {
        return Collective{CollectiveKind::AllReduce, reduce.getGrid(),
                          reduce.getGridAxes(), reduce.getReduction()};
      })
      .Case([](shard::AllGatherOp gather) {
        return Collective{CollectiveKind::AllGather, gather.getGrid(),
                          gather.getGridAxes(), shard::ReductionKind::Sum,
                          gather.getGatherAxis().getSExtValue()};
      })
      .Case([](shard::AllSliceOp slice) {
        return Collective{CollectiveKind::AllSlice, slice.getGrid(),
                          slice.getGridAxes(), shard::ReductionKind::Sum,
                          slice.getSliceAxis().getSExtValue()};
      })
      .Case([](shard::ReduceScatterOp scatter) {
        return Collective{CollectiveKind::ReduceScatter, scatter.getGrid(),
                          scatter.getGridAxes(), scatter.getReduction(),
                          scatter.getScatterAxis().getSExtValue()};
      })
      .Case([](shard::AllToAllOp exchange) {
        return Collective{CollectiveKind::AllToAll,
                          exchange.getGrid(),
                          exchange.getGridAxes(),
                          shard::ReductionKind::Sum,
                          exchange.getSplitAxis().getSExtValue(),
                          exchange.getConcatAxis().getSExtValue()};
      })
      .Default([](Operation *) { return std::nullopt; });
}

static bool isShardOp(Operation *op) {
  return isa_and_nonnull<shard::ShardDialect>(op->getDialect());
}

/// The group size of `collective` on `mesh` (its axes checked).
static int64_t getGroupSize(const Collective &collective,
                            const SimulatedMesh &mesh) {
  int64_t size = 1;
  for (int16_t axis : collective.gridAxes)
    size *= mesh.shape[axis];
  return size;
}

static LogicalResult checkCollective(Operation *op, const Collective &c,
                                     const SimulatedMesh &mesh) {
  if (c.grid != mesh.gridName)
    return op->emitError("the simulated ranks run the grid @")
           << mesh.gridName << "; this collective is on @" << c.grid;
  llvm::SmallDenseSet<int16_t> seen;
  for (int16_t axis : c.gridAxes) {
    if (axis < 0 || axis >= static_cast<int64_t>(mesh.shape.size()))
      return op->emitError("grid axis ")
             << axis << " is not an axis of @" << mesh.gridName << " (rank "
             << mesh.shape.size() << ")";
    if (!seen.insert(axis).second)
      return op->emitError("grid axis ") << axis << " is listed twice";
  }
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!input || !result)
    return op->emitError("the simulated ranks run collectives on ranked "
                         "tensors only");
  int64_t rank = input.getRank();
  auto checkAxis = [&](int64_t axis, StringRef name,
                       bool divided) -> LogicalResult {
    if (axis < 0 || axis >= rank)
      return op->emitError()
             << name << " " << axis << " is not a dimension of " << input;
    int64_t groupSize = getGroupSize(c, mesh);
    if (divided && input.getDimSize(axis) % groupSize != 0)
      return op->emitError()
             << name << " " << axis << " of " << input
             << " does not split into " << groupSize << " equal pieces";
    return success();
  };
  switch (c.kind) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter: {
    Type from = input.getElementType(), to = result.getElementType();
    if (isa<FloatType>(from) != isa<FloatType>(to))
      return op->emitError("the simulated ranks reduce floats to floats and "
                           "integers to integers, not ")
             << from << " to " << to;
    if (!isSupportedReduction(c.reduction, to))
      return op->emitError("the simulated ranks do not reduce ")
             << to << " with '" << shard::stringifyReductionKind(c.reduction)
             << "' (sum, max, min, product; average of floats)";
    if (c.kind == CollectiveKind::ReduceScatter)
      return checkAxis(c.axis, "scatter_axis", /*divided=*/true);
    return success();
  }
  case CollectiveKind::AllGather:
    return checkAxis(c.axis, "gather_axis", /*divided=*/false);
  case CollectiveKind::AllSlice:
    return checkAxis(c.axis, "slice_axis", /*divided=*/true);
  case CollectiveKind::AllToAll:
    if (failed(checkAxis(c.axis, "split_axis", /*divided=*/true)))
      return failure();
    return checkAxis(c.concatAxis, "concat_axis", /*divided=*/false);
  }
  return success();
}

LogicalResult RankedInterpreter::checkCanRun(FunctionOpInterface function,
                                             const SimulatedMesh &mesh) {
  if (failed(Interpreter::checkCanRun(function)))
    return failure();
  Region &body = function.getFunctionBody();
  WalkResult walk = function->walk([&](Operation *op) {
    if (!isShardOp(op))
      return WalkResult::advance();
    // A fusion region is one kernel on one device: no communication inside.
    if (op->getParentRegion() != &body) {
      op->emitError("the simulated ranks run collectives at the top level of "
                    "the function only, not inside '")
          << op->getParentOp()->getName() << "'";
      return WalkResult::interrupt();
    }
    std::optional<Collective> collective = getCollective(op);
    if (!collective) {
      op->emitError("the simulated ranks do not run '")
          << op->getName()
          << "' (they run shard.all_reduce, shard.all_gather, "
             "shard.all_slice, shard.reduce_scatter and shard.all_to_all)";
      return WalkResult::interrupt();
    }
    if (failed(checkCollective(op, *collective, mesh)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult
RankedInterpreter::runCollective(Operation *op, const SimulatedMesh &mesh,
                                 ArrayRef<const Tensor *> inputs,
                                 SmallVectorImpl<Tensor> &results) {
  Collective c = *getCollective(op);
  SmallVector<unsigned> axes(c.gridAxes.begin(), c.gridAxes.end());
  DeviceGroups groups = DeviceGroups::get(mesh.shape, axes);
  int64_t groupSize = groups.getGroupSize();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  const EvalOptions &options = getOptions();
  results.resize(inputs.size());
  for (ArrayRef<int64_t> members : groups.members) {
    SmallVector<const Tensor *> pieces;
    for (int64_t device : members)
      pieces.push_back(inputs[device]);
    switch (c.kind) {
    case CollectiveKind::AllReduce: {
      Tensor reduced =
          allReduce(pieces, c.reduction, resultType.getElementType(), options);
      for (int64_t device : members)
        results[device] = reduced;
      break;
    }
    case CollectiveKind::AllGather: {
      Tensor gathered = allGather(pieces, c.axis);
      for (int64_t device : members)
        results[device] = gathered;
      break;
    }
    case CollectiveKind::AllSlice:
      for (auto [position, device] : llvm::enumerate(members))
        results[device] =
            allSlice(*inputs[device], c.axis, groupSize, position);
      break;
    case CollectiveKind::ReduceScatter:
      for (auto [device, piece] :
           llvm::zip_equal(members, reduceScatter(pieces, c.reduction,
                                                  resultType.getElementType(),
                                                  c.axis, options)))
        results[device] = std::move(piece);
      break;
    case CollectiveKind::AllToAll:
      for (auto [device, piece] :
           llvm::zip_equal(members, allToAll(pieces, c.axis, c.concatAxis)))
        results[device] = std::move(piece);
      break;
    }
  }
  // The op's declared type is checked against what the devices computed:
  // a collective whose shapes do not fit the mesh's group sizes.
  for (Tensor &result : results) {
    if (result.getType() != resultType)
      return op->emitError("on the simulated ranks this collective produces ")
             << result.getType() << ", not the declared " << resultType;
    normalizeTensor(result, options);
  }
  return success();
}

FailureOr<SmallVector<SmallVector<Tensor>>>
RankedInterpreter::run(FunctionOpInterface function, const SimulatedMesh &mesh,
                       ArrayRef<SmallVector<Tensor>> arguments) {
  if (failed(checkCanRun(function, mesh)))
    return failure();
  int64_t numDevices = mesh.getNumDevices();
  if (static_cast<int64_t>(arguments.size()) != numDevices)
    return function.emitError("expected the arguments of ")
           << numDevices << " devices, got " << arguments.size();
  ArrayRef<Type> argumentTypes = function.getArgumentTypes();
  // Per device, the arguments in the storage the options imply.
  SmallVector<SmallVector<Tensor>> converted(numDevices);
  for (auto [device, deviceArguments] : llvm::enumerate(arguments)) {
    if (deviceArguments.size() != argumentTypes.size())
      return function.emitError("expected ")
             << argumentTypes.size() << " arguments on device " << device
             << ", got " << deviceArguments.size();
    for (auto [i, argument, type] :
         llvm::enumerate(deviceArguments, argumentTypes)) {
      if (argument.getType() != type)
        return function.emitError("argument #")
               << i << " of device " << device << " has type "
               << argument.getType() << ", expected " << type;
      converted[device].push_back(convertTensor(argument, getOptions()));
    }
  }

  Block &block = function.getFunctionBody().front();
  // Every value, one tensor per device; freed after its last use.
  llvm::DenseMap<Value, SmallVector<Tensor>> computed;
  llvm::DenseMap<Value, size_t> lastUse;
  SmallVector<Operation *> ops;
  for (Operation &op : block) {
    for (Value operand : op.getOperands())
      lastUse[operand] = ops.size();
    ops.push_back(&op);
  }
  auto lookup = [&](Value value, int64_t device) -> const Tensor * {
    if (auto argument = dyn_cast<BlockArgument>(value))
      if (argument.getOwner() == &block)
        return &converted[device][argument.getArgNumber()];
    auto it = computed.find(value);
    return it == computed.end() ? nullptr : &it->second[device];
  };

  for (auto [index, op] : llvm::enumerate(ops)) {
    // Operands per device: operands[device][i].
    SmallVector<SmallVector<const Tensor *>> operands(numDevices);
    for (int64_t device = 0; device < numDevices; ++device)
      for (Value operand : op->getOperands()) {
        const Tensor *tensor = lookup(operand, device);
        if (!tensor)
          return op->emitError("the interpreter has no value for an operand "
                               "defined outside the block");
        operands[device].push_back(tensor);
      }
    if (op->hasTrait<OpTrait::IsTerminator>()) {
      SmallVector<SmallVector<Tensor>> results(numDevices);
      for (int64_t device = 0; device < numDevices; ++device)
        for (const Tensor *tensor : operands[device])
          results[device].push_back(*tensor);
      return results;
    }

    // results[device][r].
    SmallVector<SmallVector<Tensor>> results(numDevices);
    if (isShardOp(op)) {
      SmallVector<const Tensor *> inputs;
      for (int64_t device = 0; device < numDevices; ++device)
        inputs.push_back(operands[device].front());
      SmallVector<Tensor> perDevice;
      if (failed(runCollective(op, mesh, inputs, perDevice)))
        return failure();
      for (int64_t device = 0; device < numDevices; ++device)
        results[device].push_back(std::move(perDevice[device]));
    } else {
      for (int64_t device = 0; device < numDevices; ++device)
        if (failed(interpreter.runOp(op, operands[device], results[device])))
          return failure();
    }
    for (auto [r, result] : llvm::enumerate(op->getResults())) {
      if (result.use_empty())
        continue;
      SmallVector<Tensor> &values = computed[result];
      for (int64_t device = 0; device < numDevices; ++device)
        values.push_back(std::move(results[device][r]));
    }
    for (Value operand : op->getOperands())
      if (lastUse.lookup(operand) == index)
        computed.erase(operand);
  }
  return function.emitError("the interpreter found no terminator in the body");
}
