//===- RankedInterpreter.cpp - all ranks of an SPMD program ---------------===//
//
// The lockstep executor of a partitioned function: one value per device for
// every SSA value, the tg ops run per device by the interpreter, the shard
// collectives run per device group. In a pipelined function an op runs on
// its stage's devices only, and a shard.recv copies what the devices of the
// matching shard.send's stage hold.
//
//===----------------------------------------------------------------------===//

#include "tgc/Interpreter/RankedInterpreter.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGSharding.h"
#include "tgc/Interpreter/Collectives.h"

#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
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

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

static IntegerAttr getStageAttr(Operation *op) {
  return op->getAttrOfType<IntegerAttr>(tg::TGDialect::kStageAttrName);
}

FailureOr<std::optional<SimulatedPipeline>>
SimulatedPipeline::get(FunctionOpInterface function,
                       const SimulatedMesh &mesh) {
  FailureOr<std::optional<PipelineConfig>> config =
      PipelineConfig::lookup(function);
  if (failed(config))
    return failure();
  if (!*config)
    return std::optional<SimulatedPipeline>();
  StringRef axisName = (*config)->axis;
  FailureOr<tg::Mesh> named = tg::Mesh::lookup(function, mesh.gridName);
  if (failed(named))
    return failure();
  std::optional<unsigned> axis = named->getAxisIndex(axisName);
  if (!axis || *axis >= mesh.shape.size())
    return function.emitError("the pipeline axis \"")
           << axisName << "\" is not an axis of @" << mesh.gridName << " ("
           << named->str() << ")";
  int64_t axisSize = mesh.shape[*axis];
  if ((*config)->stages != axisSize)
    return function.emitError("the pipeline has ")
           << (*config)->stages << " stages, but its axis \"" << axisName
           << "\" has " << axisSize << " devices";
  int64_t numStages = axisSize * (*config)->virtualStages;
  for (Operation &op : function.getFunctionBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    IntegerAttr stage = getStageAttr(&op);
    if (!stage)
      return op.emitError("every op of a pipelined function needs a '")
             << tg::TGDialect::kStageAttrName << "' (docs/pipeline.md)";
    if (stage.getInt() < 0 || stage.getInt() >= numStages)
      return op.emitError("stage ")
             << stage.getInt() << " is not a stage of the pipeline, whose "
             << "stages are 0 to " << numStages - 1;
  }
  return std::optional<SimulatedPipeline>(
      SimulatedPipeline(axisName.str(), *axis, axisSize));
}

int64_t SimulatedPipeline::getCoordinate(Operation *op) const {
  return getCoordinateOfStage(getStageAttr(op).getInt());
}

std::optional<int64_t> SimulatedPipeline::getHolder(Value value) const {
  if (Operation *producer = value.getDefiningOp())
    return getCoordinate(producer);
  return std::nullopt;
}

/// The one static index on the pipeline axis that the shard.send or
/// shard.recv `op` names (its `what`, destination or source), after
/// checking that `op` is on `mesh`'s grid over the pipeline axis only.
static FailureOr<int64_t> getPeer(Operation *op, StringRef grid,
                                  ArrayRef<int16_t> gridAxes,
                                  std::optional<ArrayRef<int64_t>> indices,
                                  ValueRange dynamicIndices, StringRef what,
                                  const SimulatedMesh &mesh,
                                  const SimulatedPipeline &pipeline) {
  if (grid != mesh.gridName)
    return op->emitError("the simulated ranks run the grid @")
           << mesh.gridName << "; this op is on @" << grid;
  if (gridAxes.size() != 1 ||
      gridAxes.front() != static_cast<int64_t>(pipeline.getAxis()))
    return op->emitError("'")
           << op->getName() << "' moves a value between stages: its "
           << "grid_axes must be [" << pipeline.getAxis()
           << "], the pipeline axis \"" << pipeline.getAxisName() << "\"";
  if (!dynamicIndices.empty() ||
      (indices && llvm::any_of(*indices, ShapedType::isDynamic)))
    return op->emitError("the simulated ranks need a static ")
           << what << " (docs/pipeline.md)";
  if (!indices || indices->size() != 1)
    return op->emitError("'") << op->getName() << "' needs a " << what
                              << " of one index on the pipeline axis";
  // The shard verifier keeps it in range.
  return indices->front();
}

/// Checks a shard.send or shard.recv of a pipelined function: on the
/// pipeline axis, a recv of a send's value in flight, each naming the
/// other's devices.
static LogicalResult checkTransfer(Operation *op, const SimulatedMesh &mesh,
                                   const SimulatedPipeline &pipeline) {
  if (auto send = dyn_cast<shard::SendOp>(op))
    return getPeer(send, send.getGrid(), send.getGridAxes(),
                   send.getDestination(), send.getDestinationDynamic(),
                   "destination", mesh, pipeline);
  auto recv = cast<shard::RecvOp>(op);
  FailureOr<int64_t> source =
      getPeer(recv, recv.getGrid(), recv.getGridAxes(), recv.getSource(),
              recv.getSourceDynamic(), "source", mesh, pipeline);
  if (failed(source))
    return failure();
  auto send = recv.getInput().getDefiningOp<shard::SendOp>();
  if (!send)
    return recv.emitError("the operand of a shard.recv must be the value in "
                          "flight of a shard.send (docs/pipeline.md)");
  int64_t sender = pipeline.getCoordinate(send);
  int64_t receiver = pipeline.getCoordinate(recv);
  if (*source != sender) {
    InFlightDiagnostic diagnostic =
        recv.emitError("receives from source ")
        << *source << ", but its shard.send runs on the devices of "
        << pipeline.getAxisName() << " = " << sender;
    diagnostic.attachNote(send.getLoc()) << "the shard.send";
    return diagnostic;
  }
  int64_t destination = send.getDestination().front();
  if (destination != receiver) {
    InFlightDiagnostic diagnostic =
        send.emitError("sends to destination ")
        << destination << ", but its shard.recv runs on the devices of "
        << pipeline.getAxisName() << " = " << receiver;
    diagnostic.attachNote(recv.getLoc()) << "the shard.recv";
    return diagnostic;
  }
  return success();
}

/// Checks that every top-level op of a pipelined function reads only values
/// its devices hold: arguments, and values of ops that run on the same
/// devices; a send's value in flight is read by shard.recv only.
static LogicalResult checkPlacement(FunctionOpInterface function,
                                    const SimulatedPipeline &pipeline) {
  for (Operation &op : function.getFunctionBody().front()) {
    bool isTerminator = op.hasTrait<OpTrait::IsTerminator>();
    for (OpOperand &use : op.getOpOperands()) {
      Value value = use.get();
      if (value.getDefiningOp<shard::SendOp>()) {
        if (!isa<shard::RecvOp>(op))
          return op.emitError("operand #")
                 << use.getOperandNumber()
                 << " is the value in flight of a shard.send, which only a "
                    "shard.recv reads";
        continue;
      }
      std::optional<int64_t> holder = pipeline.getHolder(value);
      // A result belongs to the stage of the op that produces it.
      if (isTerminator || !holder)
        continue;
      int64_t here = pipeline.getCoordinate(&op);
      if (*holder == here)
        continue;
      InFlightDiagnostic diagnostic =
          op.emitError("operand #")
          << use.getOperandNumber() << " lives on the devices of "
          << pipeline.getAxisName() << " = " << *holder << " (stage "
          << getStageAttr(value.getDefiningOp()).getInt()
          << "), but this op runs on those of " << pipeline.getAxisName()
          << " = " << here << " (stage " << getStageAttr(&op).getInt()
          << "); a value moves between stages through shard.send and "
             "shard.recv";
      diagnostic.attachNote(value.getLoc()) << "the value is produced here";
      return diagnostic;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

LogicalResult RankedInterpreter::checkCanRun(FunctionOpInterface function,
                                             const SimulatedMesh &mesh) {
  if (failed(Interpreter::checkCanRun(function)))
    return failure();
  FailureOr<std::optional<SimulatedPipeline>> pipeline =
      SimulatedPipeline::get(function, mesh);
  if (failed(pipeline))
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
    if (*pipeline && isa<shard::SendOp, shard::RecvOp>(op))
      return failed(checkTransfer(op, mesh, **pipeline))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    std::optional<Collective> collective = getCollective(op);
    if (!collective) {
      op->emitError("the simulated ranks do not run '")
          << op->getName()
          << "' (they run shard.all_reduce, shard.all_gather, "
             "shard.all_slice, shard.reduce_scatter and shard.all_to_all; "
             "shard.send and shard.recv in a pipelined function)";
      return WalkResult::interrupt();
    }
    if (failed(checkCollective(op, *collective, mesh)))
      return WalkResult::interrupt();
    // The devices of one stage are one pp slice of the mesh.
    if (*pipeline &&
        llvm::is_contained(collective->gridAxes, (*pipeline)->getAxis())) {
      op->emitError("a collective of a pipelined function runs among the "
                    "devices of its stage; grid axis ")
          << (*pipeline)->getAxis() << " is the pipeline axis \""
          << (*pipeline)->getAxisName() << "\"";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return *pipeline ? checkPlacement(function, **pipeline) : success();
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
    if (!inputs[members.front()])
      continue;
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
  for (auto [input, result] : llvm::zip_equal(inputs, results)) {
    if (!input)
      continue;
    if (result.getType() != resultType)
      return op->emitError("on the simulated ranks this collective produces ")
             << result.getType() << ", not the declared " << resultType;
    normalizeTensor(result, options);
  }
  return success();
}

/// Per argument of `block`, whether device `device` holds it: every device
/// when there is no pipeline or the function returns it, else the devices of
/// the stages whose ops use it (docs/pipeline.md).
static SmallVector<SmallVector<bool>>
getArgumentHolders(Block &block, const SimulatedMesh &mesh,
                   const SimulatedPipeline *pipeline) {
  int64_t numDevices = mesh.getNumDevices();
  SmallVector<SmallVector<bool>> holds(
      block.getNumArguments(), SmallVector<bool>(numDevices, !pipeline));
  if (!pipeline)
    return holds;
  for (BlockArgument argument : block.getArguments()) {
    llvm::SmallDenseSet<int64_t> coordinates;
    bool everywhere = false;
    for (Operation *user : argument.getUsers()) {
      Operation *op = block.findAncestorOpInBlock(*user);
      if (op->hasTrait<OpTrait::IsTerminator>())
        everywhere = true;
      else
        coordinates.insert(pipeline->getCoordinate(op));
    }
    for (int64_t device = 0; device < numDevices; ++device)
      holds[argument.getArgNumber()][device] =
          everywhere || coordinates.contains(getDeviceCoordinates(
                            mesh.shape, device)[pipeline->getAxis()]);
  }
  return holds;
}

FailureOr<SmallVector<SmallVector<Tensor>>>
RankedInterpreter::run(FunctionOpInterface function, const SimulatedMesh &mesh,
                       ArrayRef<SmallVector<Tensor>> arguments) {
  if (failed(checkCanRun(function, mesh)))
    return failure();
  FailureOr<std::optional<SimulatedPipeline>> pipelineOrNone =
      SimulatedPipeline::get(function, mesh);
  if (failed(pipelineOrNone))
    return failure();
  const SimulatedPipeline *pipeline =
      *pipelineOrNone ? &**pipelineOrNone : nullptr;
  int64_t numDevices = mesh.getNumDevices();
  if (static_cast<int64_t>(arguments.size()) != numDevices)
    return function.emitError("expected the arguments of ")
           << numDevices << " devices, got " << arguments.size();
  Block &block = function.getFunctionBody().front();
  ArrayRef<Type> argumentTypes = function.getArgumentTypes();
  SmallVector<SmallVector<bool>> holdsArgument =
      getArgumentHolders(block, mesh, pipeline);
  // Per device, the arguments in the storage the options imply; in a
  // pipelined function, only those of the device's stages (the others
  // empty).
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
      converted[device].push_back(holdsArgument[i][device]
                                      ? convertTensor(argument, getOptions())
                                      : Tensor());
    }
  }

  // Per device, its coordinate on the pipeline axis; the distance between
  // devices one apart on that axis.
  SmallVector<int64_t> coordinateOf;
  int64_t pipelineStride = 1;
  if (pipeline) {
    for (int64_t device = 0; device < numDevices; ++device)
      coordinateOf.push_back(
          getDeviceCoordinates(mesh.shape, device)[pipeline->getAxis()]);
    for (int64_t size :
         ArrayRef(mesh.shape).drop_front(pipeline->getAxis() + 1))
      pipelineStride *= size;
  }
  // Whether `device` runs `op`, and holds `value`.
  auto runs = [&](Operation *op, int64_t device) {
    return !pipeline || coordinateOf[device] == pipeline->getCoordinate(op);
  };
  auto holds = [&](Value value, int64_t device) {
    if (!pipeline)
      return true;
    if (auto argument = dyn_cast<BlockArgument>(value))
      return static_cast<bool>(holdsArgument[argument.getArgNumber()][device]);
    return coordinateOf[device] == *pipeline->getHolder(value);
  };

  // A send's value in flight is its operand, read by its recv on the
  // sender's devices: no copy until the recv makes one.
  auto inFlight = [](Value value) -> Value {
    if (auto send = value.getDefiningOp<shard::SendOp>())
      return send.getInput();
    return value;
  };
  // Every value, one tensor per device (empty on the devices that do not
  // hold it); freed after its last use.
  llvm::DenseMap<Value, SmallVector<Tensor>> computed;
  llvm::DenseMap<Value, size_t> lastUse;
  SmallVector<Operation *> ops;
  for (Operation &op : block) {
    for (Value operand : op.getOperands())
      lastUse[inFlight(operand)] = ops.size();
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
    if (op->hasTrait<OpTrait::IsTerminator>()) {
      // Each device returns the results it holds.
      SmallVector<SmallVector<Tensor>> results(numDevices);
      for (int64_t device = 0; device < numDevices; ++device)
        for (Value operand : op->getOperands()) {
          if (!holds(operand, device)) {
            results[device].emplace_back();
            continue;
          }
          const Tensor *tensor = lookup(operand, device);
          if (!tensor)
            return op->emitError("the interpreter has no value for an "
                                 "operand defined outside the block");
          results[device].push_back(*tensor);
        }
      return results;
    }

    // results[device][r], on the devices that run the op.
    SmallVector<SmallVector<Tensor>> results(numDevices);
    if (auto recv = dyn_cast<shard::RecvOp>(op)) {
      // Device d of the receiving stage copies what the device with d's
      // coordinates but the source on the pipeline axis holds.
      Value sent = inFlight(recv.getInput());
      int64_t source = recv.getSource()->front();
      for (int64_t device = 0; device < numDevices; ++device) {
        if (!runs(op, device))
          continue;
        int64_t sender =
            device + (source - coordinateOf[device]) * pipelineStride;
        const Tensor *tensor = lookup(sent, sender);
        if (!tensor)
          return op->emitError("the interpreter has no value for an "
                               "operand defined outside the block");
        results[device].push_back(*tensor);
      }
    } else if (!isa<shard::SendOp>(op)) {
      // Operands per device: operands[device][i], on the devices that run
      // the op.
      SmallVector<SmallVector<const Tensor *>> operands(numDevices);
      for (int64_t device = 0; device < numDevices; ++device) {
        if (!runs(op, device))
          continue;
        for (Value operand : op->getOperands()) {
          const Tensor *tensor = lookup(operand, device);
          if (!tensor)
            return op->emitError("the interpreter has no value for an "
                                 "operand defined outside the block");
          operands[device].push_back(tensor);
        }
      }
      if (isShardOp(op)) {
        SmallVector<const Tensor *> inputs;
        for (int64_t device = 0; device < numDevices; ++device)
          inputs.push_back(runs(op, device) ? operands[device].front()
                                            : nullptr);
        SmallVector<Tensor> perDevice;
        if (failed(runCollective(op, mesh, inputs, perDevice)))
          return failure();
        for (int64_t device = 0; device < numDevices; ++device)
          if (runs(op, device))
            results[device].push_back(std::move(perDevice[device]));
      } else {
        for (int64_t device = 0; device < numDevices; ++device)
          if (runs(op, device) &&
              failed(interpreter.runOp(op, operands[device], results[device])))
            return failure();
      }
    }
    if (!isa<shard::SendOp>(op))
      for (auto [r, result] : llvm::enumerate(op->getResults())) {
        if (result.use_empty())
          continue;
        SmallVector<Tensor> &values = computed[result];
        values.resize(numDevices);
        for (int64_t device = 0; device < numDevices; ++device)
          if (runs(op, device))
            values[device] = std::move(results[device][r]);
      }
    for (Value operand : op->getOperands())
      if (lastUse.lookup(inFlight(operand)) == index)
        computed.erase(inFlight(operand));
  }
  return function.emitError("the interpreter found no terminator in the body");
}
