//===- OverlapSchedule.cpp - an order that hides communication ------------===//
//
// Reorders a scheduled step so that its collectives overlap compute on the
// two streams of StreamTimeline: gradient all-reduces and reduce-scatters
// are issued as soon as their gradient exists, their consumers (the
// optimizer updates, in the buckets tg-fuse made) run only once the
// collective is modelled done, and ZeRO-3 parameter all-gathers are issued
// one layer ahead of their use. Every other op keeps the order it was given.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/Schedule.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/StreamTimeline.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace mlir;
using namespace tgc;

namespace {

/// What the overlap scheduler does with an op.
enum class Role {
  /// Keeps its place among the other kept ops.
  Kept,
  /// A gradient all-reduce or reduce-scatter, or the all-reduce of a scalar
  /// (the loss of each micro-batch): issued as soon as it can be.
  GradientCollective,
  /// An op that reads a reduced gradient (or scalar): run once it need not
  /// wait.
  Deferred,
  /// An all-gather of a parameter argument (ZeRO-3): prefetched.
  ParameterGather,
  /// Another collective of an argument of the step (the micro-batches'
  /// gather of the inputs): issued first, it waits for nothing.
  InputCollective,
};

class OverlapScheduler {
public:
  OverlapScheduler(func::FuncOp function, ArrayRef<Operation *> order,
                   const DeviceSpec &device);
  std::vector<Operation *> run();

private:
  void classify();
  void anchorPrefetches();
  /// Emits op `at` after its producers (and the gathers prefetched before
  /// it); false when a prefetch cycle reached it first.
  bool emit(size_t at);
  /// Emits the deferred ops whose operands are ready by the time the
  /// compute stream is free, in the given order.
  void emitDeferredWithoutWaiting();

  func::FuncOp function;
  Block &body;
  std::vector<Operation *> ops;
  DenseMap<Operation *, size_t> index;
  std::vector<SmallVector<size_t>> producers, users;
  std::vector<Role> roles;
  /// The prefetched gathers to issue just before each op.
  std::vector<SmallVector<size_t>> prefetchBefore;

  // While emitting.
  StreamTimeline timeline;
  std::vector<Operation *> order;
  std::vector<char> emitted, visiting;
  std::vector<unsigned> waiting;
  /// Gradient collectives and deferred ops whose producers are emitted.
  SetVector<size_t> readyCollectives;
  std::set<size_t> readyDeferred;
  size_t collectivesLeft = 0;
};

} // namespace

OverlapScheduler::OverlapScheduler(func::FuncOp function,
                                   ArrayRef<Operation *> given,
                                   const DeviceSpec &device)
    : function(function), body(function.getBody().front()),
      ops(given.begin(), given.end()), timeline(function, device) {
  for (auto [at, op] : llvm::enumerate(ops))
    index[op] = at;
  producers.resize(ops.size());
  users.resize(ops.size());
  std::optional<size_t> lastEffectful;
  for (auto [at, op] : llvm::enumerate(ops)) {
    SetVector<size_t> preds;
    forEachProducer(op, body, [&](Operation *producer) {
      auto it = index.find(producer);
      if (it != index.end())
        preds.insert(it->second);
    });
    // Ops with memory effects keep their relative order, as in tg-schedule.
    if (!isMemoryEffectFree(op)) {
      if (lastEffectful)
        preds.insert(*lastEffectful);
      lastEffectful = at;
    }
    for (size_t pred : preds) {
      producers[at].push_back(pred);
      users[pred].push_back(at);
    }
  }
  classify();
  anchorPrefetches();
}

/// The argument of the step `value` is (a view or cast of, possibly by a
/// fusion region such as the multi-tensor cast of the master weights), or
/// null.
static BlockArgument getStepArgument(func::FuncOp function, Value value) {
  Block &body = function.getBody().front();
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == &body)
        return arg;
      auto fusion = dyn_cast<tg::FusionOp>(arg.getOwner()->getParentOp());
      if (!fusion)
        return {};
      value = fusion.getInputs()[arg.getArgNumber()];
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (auto fusion = dyn_cast<tg::FusionOp>(def)) {
      value = fusion.getBody().front().getTerminator()->getOperand(
          cast<OpResult>(value).getResultNumber());
      continue;
    }
    if (def->getNumOperands() != 1 || def->getNumRegions() != 0 ||
        !isMemoryEffectFree(def))
      return {};
    value = def->getOperand(0);
  }
}

/// The parameter argument `value` is (see getStepArgument), or null.
static BlockArgument getParameterArgument(func::FuncOp function, Value value) {
  BlockArgument arg = getStepArgument(function, value);
  return arg && tg::getArgumentRole(function, arg.getArgNumber()) ==
                     tg::Role::Param
             ? arg
             : BlockArgument();
}

void OverlapScheduler::classify() {
  StepStructure structure = StepStructure::compute(function);
  roles.assign(ops.size(), Role::Kept);
  for (auto [at, op] : llvm::enumerate(ops)) {
    std::optional<CollectiveKind> kind = getCollectiveKind(op);
    // A scalar's reduction feeds only scalar arithmetic (the loss, a
    // norm): a kernel waiting for it at once would wait for every
    // collective queued before it.
    auto operandType =
        kind ? dyn_cast<RankedTensorType>(op->getOperand(0).getType())
             : RankedTensorType();
    bool scalar = operandType && operandType.getRank() == 0;
    if ((kind == CollectiveKind::AllReduce ||
         kind == CollectiveKind::ReduceScatter) &&
        (structure.gradients.contains(op->getOperand(0)) || scalar)) {
      roles[at] = Role::GradientCollective;
      ++collectivesLeft;
      continue;
    }
    if (kind == CollectiveKind::AllGather &&
        getParameterArgument(function, op->getOperand(0))) {
      roles[at] = Role::ParameterGather;
      continue;
    }
    if (kind && kind != CollectiveKind::AllSlice &&
        getStepArgument(function, op->getOperand(0))) {
      roles[at] = Role::InputCollective;
      continue;
    }
  }
  // The ops a gradient collective waits for are the backward's critical
  // path: none is deferred, even where it reads a reduced scalar (a mean
  // loss's count of tokens that are not ignored, read by its gradient).
  std::vector<char> feedsCollective(ops.size(), 0);
  for (size_t at = ops.size(); at-- > 0;) {
    if (roles[at] != Role::GradientCollective && !feedsCollective[at])
      continue;
    for (size_t pred : producers[at])
      feedsCollective[pred] = 1;
  }
  for (size_t at = 0; at < ops.size(); ++at)
    if (roles[at] == Role::Kept && !feedsCollective[at] &&
        llvm::any_of(producers[at], [&](size_t pred) {
          return roles[pred] == Role::GradientCollective ||
                 roles[pred] == Role::Deferred;
        }))
      roles[at] = Role::Deferred;
}

/// The layer a parameter belongs to: its name up to its first numeric
/// component ("h.3" of "h.3.attn.c_attn.weight", "layers.3" of
/// "layers.3.mlp.up_proj.weight"), or the whole name (wte.weight).
static std::string getLayerKey(func::FuncOp function, BlockArgument arg) {
  auto name = function.getArgAttrOfType<StringAttr>(
      arg.getArgNumber(), tg::TGDialect::kNameAttrName);
  if (!name)
    return "#" + std::to_string(arg.getArgNumber());
  SmallVector<StringRef> parts;
  name.getValue().split(parts, '.');
  std::string key;
  for (StringRef part : parts) {
    key += (key.empty() ? "" : ".") + part.str();
    if (!part.empty() &&
        llvm::all_of(part, [](char c) { return llvm::isDigit(c); }))
      return key;
  }
  return key;
}

void OverlapScheduler::anchorPrefetches() {
  prefetchBefore.resize(ops.size());
  for (size_t at = 0; at < ops.size(); ++at)
    if (roles[at] == Role::InputCollective)
      prefetchBefore.front().push_back(at);
  // The parameter gathers in the order of their first use, grouped into
  // layers: consecutive gathers of the same layer.
  SmallVector<std::pair<size_t, size_t>> gathers; // (first use, gather)
  for (size_t at = 0; at < ops.size(); ++at) {
    if (roles[at] != Role::ParameterGather)
      continue;
    size_t firstUse = ops.size();
    for (size_t user : users[at])
      firstUse = std::min(firstUse, user);
    gathers.push_back({firstUse, at});
  }
  llvm::stable_sort(gathers);
  // Each layer's gathers are issued just before the first use of the
  // previous layer's: one layer's compute ahead of their own use (a
  // collective is issued where it stands, StreamTimeline).
  std::string previousKey;
  size_t previousFirstUse = ops.size(), layerFirstUse = ops.size();
  for (auto [firstUse, at] : gathers) {
    std::string key = getLayerKey(
        function, getParameterArgument(function, ops[at]->getOperand(0)));
    if (key != previousKey) {
      previousFirstUse = layerFirstUse;
      layerFirstUse = firstUse;
      previousKey = key;
    }
    // The first layer's gathers go together before its first use.
    size_t anchor =
        previousFirstUse < ops.size() ? previousFirstUse : layerFirstUse;
    if (anchor < ops.size())
      prefetchBefore[anchor].push_back(at);
  }
}

bool OverlapScheduler::emit(size_t at) {
  if (emitted[at])
    return true;
  // Producer edges are acyclic; a prefetch edge can close a cycle (a gather
  // whose operand needs the op it was to precede): that prefetch is
  // dropped, and nothing on the way back is emitted before its producers.
  if (visiting[at])
    return false;
  visiting[at] = true;
  bool ready = true;
  for (size_t pred : producers[at])
    ready &= emit(pred);
  if (ready)
    for (size_t gather : prefetchBefore[at])
      if (gather != at)
        (void)emit(gather);
  visiting[at] = false;
  if (!ready)
    return false;
  if (emitted[at])
    return true; // a prefetch needed it
  emitted[at] = true;
  order.push_back(ops[at]);
  timeline.append(ops[at]);
  if (roles[at] == Role::GradientCollective) {
    --collectivesLeft;
    readyCollectives.remove(at);
  }
  readyDeferred.erase(at);
  for (size_t user : users[at]) {
    if (--waiting[user] != 0 || emitted[user])
      continue;
    if (roles[user] == Role::GradientCollective)
      readyCollectives.insert(user);
    else if (roles[user] == Role::Deferred)
      readyDeferred.insert(user);
  }
  return true;
}

void OverlapScheduler::emitDeferredWithoutWaiting() {
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t at : readyDeferred) {
      // The updated parameters' all-gathers (ZeRO-1/2) would queue ahead of
      // the gradient collectives still to come: they go only while the
      // communication stream has nothing queued.
      if (getCollectiveKind(ops[at]) && collectivesLeft > 0 &&
          timeline.getCommunicationFree() > timeline.getComputeFree())
        continue;
      double ready = 0;
      for (size_t pred : producers[at])
        ready = std::max(ready, timeline.getEnd(ops[pred]));
      if (ready > timeline.getComputeFree())
        continue;
      emit(at);
      changed = true;
      break; // the set changed
    }
  }
}

std::vector<Operation *> OverlapScheduler::run() {
  emitted.assign(ops.size(), false);
  visiting.assign(ops.size(), false);
  waiting.assign(ops.size(), 0);
  for (size_t at = 0; at < ops.size(); ++at)
    waiting[at] = producers[at].size();
  for (size_t at = 0; at < ops.size(); ++at) {
    if (roles[at] == Role::GradientCollective && !waiting[at])
      readyCollectives.insert(at);
    if (roles[at] == Role::Deferred && !waiting[at])
      readyDeferred.insert(at);
  }
  for (size_t at = 0; at < ops.size(); ++at) {
    if (roles[at] != Role::Kept || emitted[at])
      continue;
    emitDeferredWithoutWaiting();
    emit(at);
    // Issue the gradient collectives this op completed, in the given order.
    while (!readyCollectives.empty()) {
      SmallVector<size_t> issue(readyCollectives.begin(),
                                readyCollectives.end());
      llvm::sort(issue);
      for (size_t collective : issue)
        emit(collective);
    }
  }
  // What is left (the last updates, gathers nothing used) in order.
  for (size_t at = 0; at < ops.size(); ++at)
    emit(at);
  return std::move(order);
}

std::vector<Operation *> tgc::overlapCommunication(func::FuncOp function,
                                                   ArrayRef<Operation *> order,
                                                   const DeviceSpec &device) {
  // A pipelined function's order is its pipeline schedule: kept.
  if (function.isExternal() || order.empty() || PipelineConfig::get(function))
    return {order.begin(), order.end()};
  return OverlapScheduler(function, order, device).run();
}
