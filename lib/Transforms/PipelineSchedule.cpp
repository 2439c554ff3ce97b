//===- PipelineSchedule.cpp - tg-pipeline-schedule ------------------------===//
//
// Turns a step whose forward tg-pipeline-split cut into stages into the
// pipeline's program (docs/pipeline.md): every op gets a stage, values used
// on another pipeline device move through shard.send/shard.recv pairs, and
// the block is ordered so that each device's ops, in block order, are its
// units in the order of the schedule (GPipe, 1F1B, interleaved 1F1B).
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <queue>

#define DEBUG_TYPE "tg-pipeline-schedule"

namespace tgc {
#define GEN_PASS_DEF_TGPIPELINESCHEDULE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

struct TGPipelineSchedulePass
    : tgc::impl::TGPipelineScheduleBase<TGPipelineSchedulePass> {
  using TGPipelineScheduleBase::TGPipelineScheduleBase;

  void runOnOperation() override;
};

/// The pipeline program of one function.
class PipelineBuilder {
public:
  PipelineBuilder(func::FuncOp func, const PipelineConfig &config,
                  const tg::Mesh &mesh, unsigned axis, const DeviceSpec &spec)
      : func(func), body(func.getBody().front()), config(config), mesh(mesh),
        axis(axis), spec(spec) {}

  LogicalResult run() {
    inferStages();
    if (failed(insertTransfers()))
      return failure();
    return order();
  }

private:
  int64_t deviceOf(Operation *op) {
    return config.getDevice(getStage(op).value());
  }
  /// The first user of `op` on each pipeline device, in block order; empty
  /// when a user (but the return) has no stage yet.
  llvm::MapVector<int64_t, Operation *> getFirstUsers(Operation *op);
  void inferStages();
  /// `value` computed again before `user` (on another device) from the
  /// function's arguments, when that is cheaper than sending it; null
  /// otherwise.
  Value recomputeBefore(Value value, Operation *user, OpBuilder &builder);
  LogicalResult insertTransfers();
  LogicalResult order();
  /// When each unit starts, simulated with the cost model's op times.
  FailureOr<DenseMap<std::tuple<int64_t, int64_t, int64_t>, double>>
  simulateUnits();

  func::FuncOp func;
  Block &body;
  const PipelineConfig &config;
  const tg::Mesh &mesh;
  unsigned axis;
  const DeviceSpec &spec;
};

/// The ops of `block` but its terminator, as a list that edits cannot
/// invalidate.
SmallVector<Operation *> getOps(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  return ops;
}

llvm::MapVector<int64_t, Operation *>
PipelineBuilder::getFirstUsers(Operation *op) {
  llvm::MapVector<int64_t, Operation *> firstUserOn;
  for (Operation *user : op->getUsers()) {
    if (isa<func::ReturnOp>(user))
      continue;
    if (!getStage(user))
      return {};
    Operation *&first = firstUserOn[deviceOf(user)];
    if (!first || user->isBeforeInBlock(first))
      first = user;
  }
  return firstUserOn;
}

void PipelineBuilder::inferStages() {
  // Ops that earlier passes built without a stage (partitioning's
  // collectives, the optimizer, folded constants) take the stage,
  // micro-batch and direction of their users when those agree on a device,
  // else of their first staged operand; an op that has neither (a constant
  // used on several devices) is copied to each device that uses it.
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> ops = getOps(body);
    for (Operation *op : llvm::reverse(ops)) {
      if (getStage(op))
        continue;
      llvm::MapVector<int64_t, Operation *> firstUserOn = getFirstUsers(op);
      if (firstUserOn.size() == 1) {
        copyPipelineAttrs(firstUserOn.front().second, op);
        changed = true;
      }
    }
    for (Operation *op : getOps(body)) {
      if (getStage(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp(); def && getStage(def)) {
          copyPipelineAttrs(def, op);
          changed = true;
          break;
        }
    }
    if (changed)
      continue;
    // Copies per device of the ops whose staged users span devices.
    ops = getOps(body);
    for (Operation *op : llvm::reverse(ops)) {
      if (getStage(op))
        continue;
      llvm::MapVector<int64_t, Operation *> firstUserOn = getFirstUsers(op);
      if (firstUserOn.size() < 2 || !isPure(op))
        continue;
      OpBuilder builder(op->getContext());
      builder.setInsertionPointAfter(op);
      for (auto [device, user] : llvm::drop_begin(firstUserOn)) {
        Operation *copy = builder.clone(*op);
        copyPipelineAttrs(user, copy);
        int64_t target = device;
        for (auto [from, to] : llvm::zip(op->getResults(), copy->getResults()))
          from.replaceUsesWithIf(to, [&](OpOperand &use) {
            Operation *owner = use.getOwner();
            return getStage(owner) && deviceOf(owner) == target;
          });
      }
      copyPipelineAttrs(firstUserOn.front().second, op);
      changed = true;
    }
  }
  // What is left reads only arguments and is only returned (or has side
  // effects and users on several devices): stage 0.
  for (Operation *op : getOps(body))
    if (!getStage(op))
      setStage(op, 0);
}

Value PipelineBuilder::recomputeBefore(Value value, Operation *user,
                                       OpBuilder &builder) {
  // The ops between the batch and hyper-parameter arguments and `value`
  // (masks, positions, rotary tables): few, pure, reading no parameter.
  constexpr size_t kMaxOps = 16;
  llvm::SetVector<Operation *> closure;
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (tg::getArgumentRole(func, arg.getArgNumber()) == tg::Role::Param)
        return {};
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (closure.contains(def))
      continue;
    if (!isPure(def) || def->getNumRegions() || closure.size() == kMaxOps)
      return {};
    closure.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  // Cheaper than the message over the slowest link.
  auto type = cast<RankedTensorType>(value.getType());
  double bytes = double(type.getNumElements()) *
                 double(type.getElementTypeBitWidth()) / 8.0;
  const LinkSpec &link =
      spec.infiniband.bandwidth > 0 ? spec.infiniband : spec.nvlink;
  double transfer =
      link.latency + (link.bandwidth > 0 ? bytes / link.bandwidth : 0);
  double time = 0;
  for (Operation *op : closure)
    time += estimateOpTime(op, spec).time;
  if (time > transfer)
    return {};
  SmallVector<Operation *> ordered(closure.begin(), closure.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  IRMapping mapping;
  builder.setInsertionPoint(user);
  for (Operation *op : ordered)
    copyPipelineAttrs(user, builder.clone(*op, mapping));
  return mapping.lookup(value);
}

LogicalResult PipelineBuilder::insertTransfers() {
  OpBuilder builder(func.getContext());
  auto grid = FlatSymbolRefAttr::get(func.getContext(), mesh.name);
  SmallVector<int16_t> axes{static_cast<int16_t>(axis)};
  for (Operation *op : getOps(body)) {
    int64_t from = deviceOf(op);
    for (Value result : op->getResults()) {
      // The first user on each other device.
      llvm::MapVector<int64_t, Operation *> firstUserOn;
      for (Operation *user : result.getUsers()) {
        if (isa<func::ReturnOp>(user) || deviceOf(user) == from)
          continue;
        Operation *&first = firstUserOn[deviceOf(user)];
        if (!first || user->isBeforeInBlock(first))
          first = user;
      }
      if (firstUserOn.empty())
        continue;
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type)
        return op->emitOpError("tg-pipeline-schedule: a value used on "
                               "another pipeline stage must be a ranked "
                               "tensor, got ")
               << result.getType();
      Value sent;
      for (auto [device, user] : firstUserOn) {
        int64_t target = device;
        auto onTarget = [&](OpOperand &use) {
          Operation *owner = use.getOwner();
          return !isa<func::ReturnOp>(owner) && deviceOf(owner) == target;
        };
        if (Value copy = recomputeBefore(result, user, builder)) {
          result.replaceUsesWithIf(copy, onTarget);
          continue;
        }
        if (!sent) {
          // shard.send moves tensors of rank 1 and more: a scalar travels
          // as one element.
          sent = result;
          if (type.getRank() == 0) {
            builder.setInsertionPointAfter(op);
            sent = tg::ReshapeOp::create(
                builder, op->getLoc(),
                RankedTensorType::get({1}, type.getElementType()), result);
            copyPipelineAttrs(op, sent.getDefiningOp());
          }
        }
        builder.setInsertionPointAfter(
            sent.getDefiningOp() ? sent.getDefiningOp() : op);
        auto send = shard::SendOp::create(
            builder, op->getLoc(), sent.getType(), grid,
            builder.getDenseI16ArrayAttr(axes), sent,
            builder.getDenseI64ArrayAttr({device}), ValueRange());
        copyPipelineAttrs(op, send);
        builder.setInsertionPoint(user);
        auto recv = shard::RecvOp::create(
            builder, op->getLoc(), sent.getType(), grid,
            builder.getDenseI16ArrayAttr(axes), send.getResult(),
            builder.getDenseI64ArrayAttr({from}), ValueRange());
        copyPipelineAttrs(user, recv);
        Value received = recv.getResult();
        if (type.getRank() == 0) {
          received =
              tg::ReshapeOp::create(builder, op->getLoc(), type, received);
          copyPipelineAttrs(user, received.getDefiningOp());
        }
        result.replaceUsesWithIf(received, [&](OpOperand &use) {
          Operation *owner = use.getOwner();
          return !isa<func::ReturnOp>(owner) && owner != recv &&
                 owner != received.getDefiningOp() && deviceOf(owner) == target;
        });
      }
    }
  }
  return success();
}

FailureOr<DenseMap<std::tuple<int64_t, int64_t, int64_t>, double>>
PipelineBuilder::simulateUnits() {
  using Key = std::tuple<int64_t, int64_t, int64_t>; // stage, mb, bwd
  int64_t p = config.stages, numStages = config.getNumStages();
  DenseMap<Key, double> duration;
  for (Operation *op : getOps(body)) {
    Key key{getStage(op).value(), getMicroBatch(op).value_or(0),
            isBackward(op)};
    duration[key] += estimateOpTime(op, spec).time;
  }
  auto timeOf = [&](int64_t stage, int64_t mb, bool backward) {
    auto it = duration.find(Key{stage, mb, backward});
    // An empty unit still takes its place in the order.
    return it == duration.end() ? 1e-9 : std::max(it->second, 1e-9);
  };
  DenseMap<Key, double> start, end;
  SmallVector<SmallVector<PipelineUnit>> orders;
  for (int64_t d = 0; d < p; ++d)
    orders.push_back(getPipelineOrder(config, d));
  SmallVector<size_t> next(p, 0);
  SmallVector<double> free(p, 0);
  size_t remaining = 0;
  for (auto &order : orders)
    remaining += order.size();
  while (remaining) {
    bool progressed = false;
    for (int64_t d = 0; d < p; ++d) {
      while (next[d] < orders[d].size()) {
        const PipelineUnit &unit = orders[d][next[d]];
        int64_t stage = unit.chunk * p + d;
        SmallVector<Key> deps;
        if (!unit.backward) {
          if (stage > 0)
            deps.push_back({stage - 1, unit.microBatch, false});
        } else {
          deps.push_back({stage, unit.microBatch, false});
          if (stage + 1 < numStages)
            deps.push_back({stage + 1, unit.microBatch, true});
        }
        double ready = free[d];
        bool blocked = false;
        for (const Key &dep : deps) {
          auto it = end.find(dep);
          if (it == end.end()) {
            blocked = true;
            break;
          }
          ready = std::max(ready, it->second);
        }
        if (blocked)
          break;
        Key key{stage, unit.microBatch, unit.backward};
        start[key] = ready;
        end[key] = ready + timeOf(stage, unit.microBatch, unit.backward);
        free[d] = end[key];
        ++next[d];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed)
      return func.emitError("tg-pipeline-schedule: the ")
             << stringifyPipelineScheduleKind(config.schedule)
             << " order deadlocks for " << p << " stages, "
             << config.virtualStages << " virtual stages and "
             << config.microBatches << " micro-batches";
  }
  return start;
}

LogicalResult PipelineBuilder::order() {
  auto starts = simulateUnits();
  if (failed(starts))
    return failure();
  for (Operation *op : getOps(body)) {
    int64_t mb = getMicroBatch(op).value_or(0);
    if (mb < 0 || mb >= config.microBatches || *getStage(op) < 0 ||
        *getStage(op) >= config.getNumStages())
      return op->emitOpError("tg-pipeline-schedule: stage ")
             << *getStage(op) << " / micro-batch " << mb
             << " out of range for the pipeline of @" << func.getName();
  }
  // Each op's priority: its unit's start. Ops shared by the micro-batches
  // run just before their first user, or (the optimizer) after their last
  // operand.
  bool perMicroBatch = config.microBatches > 1;
  DenseMap<Operation *, double> priority;
  SmallVector<Operation *> ops = getOps(body);
  for (Operation *op : ops)
    if (!perMicroBatch || getMicroBatch(op))
      priority[op] = starts->lookup(
          {*getStage(op), getMicroBatch(op).value_or(0), isBackward(op)});
  for (Operation *op : llvm::reverse(ops)) {
    if (priority.count(op))
      continue;
    double first = std::numeric_limits<double>::infinity();
    for (Operation *user : op->getUsers())
      if (auto it = priority.find(user); it != priority.end())
        first = std::min(first, it->second);
    if (first != std::numeric_limits<double>::infinity())
      priority[op] = first;
  }
  for (Operation *op : ops) {
    if (priority.count(op))
      continue;
    double last = -1;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        last = std::max(last, priority.lookup(def));
    priority[op] = last;
  }

  // A topological order by (priority, position).
  DenseMap<Operation *, unsigned> position, pending;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;
  using Entry = std::tuple<double, unsigned, Operation *>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (Operation *op : ops) {
    unsigned count = 0;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == &body)
        ++count;
    pending[op] = count;
    if (!count)
      ready.push({priority[op], position[op], op});
  }
  Operation *terminator = body.getTerminator();
  while (!ready.empty()) {
    Operation *op = std::get<2>(ready.top());
    ready.pop();
    op->moveBefore(terminator);
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (auto it = pending.find(user); it != pending.end())
          if (--it->second == 0)
            ready.push({priority[user], position[user], user});
  }
  return success();
}

void TGPipelineSchedulePass::runOnOperation() {
  func::FuncOp func = getOperation();
  FailureOr<std::optional<PipelineConfig>> config =
      PipelineConfig::lookup(func);
  if (failed(config))
    return signalPassFailure();
  if (!*config || func.isExternal())
    return;
  if (failed(checkSingleBlockFunctions(func, "tg-pipeline-schedule")))
    return signalPassFailure();
  FailureOr<std::optional<tg::Mesh>> mesh = tg::lookupFunctionMesh(func);
  if (failed(mesh))
    return signalPassFailure();
  if (!*mesh) {
    // A mesh no sharding names (pp alone): the module's grid.
    auto module = func->getParentOfType<ModuleOp>();
    SmallVector<shard::GridOp> grids;
    if (module)
      grids = llvm::to_vector(module.getOps<shard::GridOp>());
    if (grids.size() == 1) {
      FailureOr<tg::Mesh> found = tg::Mesh::lookup(func, grids[0].getSymName());
      if (failed(found))
        return signalPassFailure();
      *mesh = *found;
    }
  }
  if (!*mesh) {
    func.emitError("tg-pipeline-schedule: @")
        << func.getName() << " is split into pipeline stages but has no "
        << "mesh (tg-shard-annotate with a '" << (*config)->axis
        << "' axis runs first)";
    return signalPassFailure();
  }
  std::optional<unsigned> axis = (*mesh)->getAxisIndex((*config)->axis);
  if (!axis || (*mesh)->axisSizes[*axis] != (*config)->stages) {
    func.emitError("tg-pipeline-schedule: the pipeline of @")
        << func.getName() << " has " << (*config)->stages
        << " stages, but the mesh " << (*mesh)->str() << " has "
        << (axis ? "a '" + (*config)->axis + "' axis of size " +
                       std::to_string((*mesh)->axisSizes[*axis])
                 : "no '" + (*config)->axis + "' axis");
    return signalPassFailure();
  }
  llvm::Expected<DeviceSpec> spec = getDeviceOf(func, device);
  if (!spec) {
    func.emitError() << "tg-pipeline-schedule: "
                     << llvm::toString(spec.takeError());
    return signalPassFailure();
  }
  PipelineBuilder builder(func, **config, **mesh, *axis, *spec);
  if (failed(builder.run()))
    return signalPassFailure();
}

} // namespace
