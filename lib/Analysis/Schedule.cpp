//===- Schedule.cpp - the op order that lowers a step's peak memory -------===//
//
// List scheduling with the memory simulator as the judge: candidate orders
// come from greedy rules over the ready ops, each is simulated exactly, and
// the best one is kept (never one worse than the original). tg-schedule
// applies the order; the recompute planner and tg-fuse judge by it.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/Schedule.h"

#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <set>

using namespace mlir;
using namespace tgc;

namespace {

enum class Rule {
  /// Ops that free at least what they allocate first, else original order.
  FreeFirst,
  /// Always the op with the smallest net allocation.
  SmallestDelta,
};

/// The dependence graph of a function's top-level ops and the byte model
/// the greedy rules score with (the simulator's, approximated per op).
class Scheduler {
public:
  explicit Scheduler(func::FuncOp function);
  std::vector<Operation *> schedule(Rule rule);
  ArrayRef<Operation *> getOriginalOrder() const { return ops; }

private:
  /// The buffer a value lives in: views share their operand's.
  Value getRoot(Value value) {
    while (Operation *def = value.getDefiningOp()) {
      if (!isViewOp(def) || !index.count(def))
        break;
      value = def->getOperand(0);
    }
    return value;
  }
  bool isLazy(Operation *op) const { return lazy.contains(op); }
  /// An op that only expands a small operand produced by a non-lazy op (or
  /// an argument) into a large result, like the broadcast of a scalar: it
  /// is materialized just before its first reader, as constants are.
  bool isExpansion(Operation *op, const SetVector<size_t> &preds) const {
    if (op->getNumOperands() != 1 || op->getNumResults() != 1 || isViewOp(op))
      return false;
    for (size_t pred : preds)
      if (isLazy(ops[pred]))
        return false;
    return 2 * bytesOf(op->getOperand(0)) <= bytesOf(op->getResult(0));
  }
  int64_t bytesOf(Value value) const {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type ? tg::getTensorByteSize(type) : 0;
  }
  /// Net bytes allocated by running `op` next, and bytes it frees.
  std::pair<int64_t, int64_t> score(Operation *op);
  bool canWriteInPlace(Operation *op, Value result);
  void emit(Operation *op, std::vector<Operation *> &order);

  func::FuncOp function;
  Block &body;
  std::vector<Operation *> ops;
  DenseMap<Operation *, size_t> index;
  std::vector<SmallVector<size_t>> users;     // successors
  std::vector<SmallVector<size_t>> producers; // predecessors
  /// Ops emitted just before their first consumer (constants).
  DenseSet<Operation *> lazy;
  /// Roots whose buffer is never freed (arguments, dense constants, roots of
  /// returned values).
  DenseSet<Value> persistent;
  DenseMap<Value, BlockArgument> aliasOf;
  /// Per root: the distinct top-level ops reading it or a view of it.
  DenseMap<Value, SetVector<Operation *>> readers;
  /// Per op: the roots it reads.
  std::vector<SetVector<Value>> reads;

  // Per run.
  std::vector<bool> scheduled;
  DenseMap<Value, int64_t> remaining;
};

} // namespace

Scheduler::Scheduler(func::FuncOp function)
    : function(function), body(function.getBody().front()) {
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  users.resize(ops.size());
  producers.resize(ops.size());
  Operation *lastEffectful = nullptr;
  for (Operation *op : ops) {
    size_t at = index[op];
    SetVector<size_t> preds;
    forEachProducer(
        op, body, [&](Operation *producer) { preds.insert(index[producer]); });
    if (!isMemoryEffectFree(op)) {
      if (lastEffectful)
        preds.insert(index[lastEffectful]);
      lastEffectful = op;
    }
    for (size_t pred : preds) {
      producers[at].push_back(pred);
      users[pred].push_back(at);
    }
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
        (op->getNumOperands() == 0 || isExpansion(op, preds)))
      lazy.insert(op);
  }
  // Constants and expansions with users are emitted lazily; those without
  // stay put.
  for (Operation *op : llvm::make_early_inc_range(lazy))
    if (users[index[op]].empty())
      lazy.erase(op);
  // An op reading an expansion waits for what the expansion reads.
  for (size_t at = 0; at < ops.size(); ++at) {
    SmallVector<size_t> indirect;
    for (size_t pred : producers[at])
      if (isLazy(ops[pred]))
        llvm::append_range(indirect, producers[pred]);
    for (size_t pred : indirect)
      if (!llvm::is_contained(producers[at], pred)) {
        producers[at].push_back(pred);
        users[pred].push_back(at);
      }
  }

  for (BlockArgument arg : function.getArguments())
    persistent.insert(arg);
  for (Operation *op : ops) {
    ElementsAttr value;
    if (op->getNumResults() == 1 &&
        matchPattern(op->getResult(0), m_Constant(&value)) &&
        !isa<SplatElementsAttr>(value))
      persistent.insert(op->getResult(0));
  }
  Operation *terminator = body.getTerminator();
  for (auto [resultIndex, value] : llvm::enumerate(terminator->getOperands())) {
    persistent.insert(getRoot(value));
    if (auto alias = function.getResultAttrOfType<IntegerAttr>(
            resultIndex, tg::TGDialect::kAliasesAttrName))
      if (alias.getInt() >= 0 &&
          alias.getInt() < static_cast<int64_t>(function.getNumArguments()))
        aliasOf[value] = function.getArgument(alias.getInt());
  }
  reads.resize(ops.size());
  for (Operation *op : ops) {
    auto addReader = [&](Value value) {
      Operation *def = value.getDefiningOp();
      if (def && body.findAncestorOpInBlock(*def) == op)
        return; // defined inside `op`
      Value root = getRoot(value);
      readers[root].insert(op);
      reads[index[op]].insert(root);
    };
    for (Value operand : op->getOperands())
      addReader(operand);
    op->walk([&](Operation *nested) {
      if (nested != op)
        for (Value operand : nested->getOperands())
          addReader(operand);
    });
  }
}

bool Scheduler::canWriteInPlace(Operation *op, Value result) {
  auto alias = aliasOf.find(result);
  if (alias == aliasOf.end())
    return false;
  bool readsArg = false;
  for (Operation *reader : readers.lookup(alias->second)) {
    if (reader == op)
      readsArg = true;
    else if (!scheduled[index[reader]])
      return false;
  }
  return !readsArg || op->hasTrait<OpTrait::Elementwise>() ||
         isa<tg::OptimizerOpInterface>(op);
}

std::pair<int64_t, int64_t> Scheduler::score(Operation *op) {
  int64_t allocated = 0, freed = 0;
  if (!isViewOp(op))
    for (Value result : op->getResults()) {
      if (aliasOf.count(result)) {
        // Written in place, or a second copy that lives to the end.
        allocated += canWriteInPlace(op, result) ? 0 : 2 * bytesOf(result);
        continue;
      }
      allocated += bytesOf(result);
      if (result.use_empty())
        freed += bytesOf(result);
    }
  for (size_t pred : producers[index[op]])
    if (isLazy(ops[pred]) && !scheduled[pred])
      allocated += bytesOf(ops[pred]->getResult(0));
  for (Value root : reads[index[op]])
    if (!persistent.contains(root) && remaining.lookup(root) == 1)
      freed += bytesOf(root);
  return {allocated - freed, freed};
}

void Scheduler::emit(Operation *op, std::vector<Operation *> &order) {
  size_t at = index[op];
  // Constants this op reads are filled just before it.
  for (size_t pred : producers[at])
    if (isLazy(ops[pred]) && !scheduled[pred])
      emit(ops[pred], order);
  scheduled[at] = true;
  order.push_back(op);
  for (Value root : reads[at])
    --remaining[root];
}

std::vector<Operation *> Scheduler::schedule(Rule rule) {
  scheduled.assign(ops.size(), false);
  remaining.clear();
  for (auto &[root, rootReaders] : readers)
    remaining[root] = rootReaders.size();
  std::vector<size_t> waiting(ops.size(), 0);
  for (size_t at = 0; at < ops.size(); ++at)
    for (size_t pred : producers[at])
      if (!isLazy(ops[pred]))
        ++waiting[at];
  // The ready set, kept sorted by original index for determinism.
  std::set<size_t> ready;
  for (size_t at = 0; at < ops.size(); ++at)
    if (!waiting[at] && !isLazy(ops[at]))
      ready.insert(at);

  std::vector<Operation *> order;
  order.reserve(ops.size());
  while (!ready.empty()) {
    size_t chosen = *ready.begin();
    int64_t bestDelta = 0;
    bool found = false;
    for (size_t candidate : ready) {
      int64_t delta = score(ops[candidate]).first;
      bool eligible = rule == Rule::SmallestDelta || delta <= 0;
      if (eligible && (!found || delta < bestDelta)) {
        chosen = candidate;
        bestDelta = delta;
        found = true;
      }
    }
    ready.erase(chosen);
    emit(ops[chosen], order);
    for (size_t user : users[chosen])
      if (!isLazy(ops[user]) && --waiting[user] == 0 && !scheduled[user])
        ready.insert(user);
  }
  // Anything left (lazy ops nobody emitted) keeps its place at the end.
  for (size_t at = 0; at < ops.size(); ++at)
    if (!scheduled[at])
      order.push_back(ops[at]);
  return order;
}

ScheduledOrder tgc::computeSchedule(func::FuncOp function,
                                    const DeviceSpec *device) {
  Scheduler scheduler(function);
  ScheduledOrder best;
  best.order.assign(scheduler.getOriginalOrder().begin(),
                    scheduler.getOriginalOrder().end());
  // Orders compare by peak, then by how long bytes stay live (e.g. the
  // same peak at the loss, but gradients freed by early updates).
  std::pair<int64_t, int64_t> bestCost =
      MemorySimulation::peakAndAreaOf(function, best.order, device);
  for (Rule rule : {Rule::FreeFirst, Rule::SmallestDelta}) {
    std::vector<Operation *> order = scheduler.schedule(rule);
    std::pair<int64_t, int64_t> cost =
        MemorySimulation::peakAndAreaOf(function, order, device);
    if (cost < bestCost) {
      bestCost = cost;
      best.order = std::move(order);
    }
  }
  best.peakBytes = bestCost.first;
  best.area = bestCost.second;
  return best;
}
