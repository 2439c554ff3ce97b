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
#include "tgc/Dialect/TG/TGPipeline.h"

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
/// the greedy rules score with (the simulator's, approximated per op). Ops
/// are numbered by their block order and buffers by root (the value views
/// share), so that scoring, which runs for every ready op at every step,
/// reads only vectors.
class Scheduler {
public:
  explicit Scheduler(func::FuncOp function);
  std::vector<Operation *> schedule(Rule rule);
  ArrayRef<Operation *> getOriginalOrder() const { return ops; }

private:
  /// A result of an op, as scoring sees it.
  struct Result {
    int64_t bytes = 0;
    bool unused = false;
    /// Whether it is the new value of an argument (`tg.aliases`), and the
    /// root of that argument (-1 when nothing reads it).
    bool aliased = false;
    int64_t argumentRoot = -1;
  };

  /// The buffer a value lives in: views share their operand's.
  Value getRoot(Value value) const {
    while (Operation *def = value.getDefiningOp()) {
      auto it = index.find(def);
      if (it == index.end() || !isView[it->second])
        break;
      value = def->getOperand(0);
    }
    return value;
  }
  unsigned getRootId(Value root) {
    auto [it, inserted] = rootIds.try_emplace(root, rootBytes.size());
    if (inserted) {
      rootBytes.push_back(bytesOf(root));
      rootPersistent.push_back(false);
      rootReaders.emplace_back();
    }
    return it->second;
  }
  /// An op that only expands a small operand produced by a non-lazy op (or
  /// an argument) into a large result, like the broadcast of a scalar: it
  /// is materialized just before its first reader, as constants are.
  bool isExpansion(size_t at, const SetVector<size_t> &preds) const {
    Operation *op = ops[at];
    if (op->getNumOperands() != 1 || op->getNumResults() != 1 || isView[at])
      return false;
    for (size_t pred : preds)
      if (lazy[pred])
        return false;
    return 2 * bytesOf(op->getOperand(0)) <= bytesOf(op->getResult(0));
  }
  static int64_t bytesOf(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type ? tg::getTensorByteSize(type) : 0;
  }
  /// Net bytes allocated by running op `at` next.
  int64_t score(size_t at) const;
  bool canWriteInPlace(size_t at, int64_t argumentRoot) const;
  void emit(size_t at, std::vector<Operation *> &order);

  std::vector<Operation *> ops;
  DenseMap<Operation *, size_t> index;
  std::vector<char> isView;
  /// Whether the op may overwrite an operand it reads (element by element).
  std::vector<char> updatesInPlace;
  std::vector<SmallVector<Result, 1>> results;
  std::vector<SmallVector<size_t>> users;     // successors
  std::vector<SmallVector<size_t>> producers; // predecessors
  /// Ops emitted just before their first consumer (constants).
  std::vector<char> lazy;

  /// Per root: its bytes, whether its buffer is never freed (arguments,
  /// dense constants, roots of returned values) and the distinct top-level
  /// ops reading it or a view of it.
  DenseMap<Value, unsigned> rootIds;
  std::vector<int64_t> rootBytes;
  std::vector<char> rootPersistent;
  std::vector<SmallVector<size_t>> rootReaders;
  /// Per op: the roots it reads.
  std::vector<SmallVector<unsigned>> reads;

  // Per run.
  std::vector<char> scheduled;
  std::vector<int64_t> remaining;
};

} // namespace

Scheduler::Scheduler(func::FuncOp function) {
  Block &body = function.getBody().front();
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
    isView.push_back(isViewOp(&op));
    updatesInPlace.push_back(op.hasTrait<OpTrait::Elementwise>() ||
                             isa<tg::OptimizerOpInterface>(op));
  }
  users.resize(ops.size());
  producers.resize(ops.size());
  lazy.assign(ops.size(), false);
  Operation *lastEffectful = nullptr;
  for (auto [at, op] : llvm::enumerate(ops)) {
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
        (op->getNumOperands() == 0 || isExpansion(at, preds)))
      lazy[at] = true;
  }
  // Constants and expansions with users are emitted lazily; those without
  // stay put.
  for (size_t at = 0; at < ops.size(); ++at)
    if (users[at].empty())
      lazy[at] = false;
  // An op reading an expansion waits for what the expansion reads.
  for (size_t at = 0; at < ops.size(); ++at) {
    SmallVector<size_t> indirect;
    for (size_t pred : producers[at])
      if (lazy[pred])
        llvm::append_range(indirect, producers[pred]);
    for (size_t pred : indirect)
      if (!llvm::is_contained(producers[at], pred)) {
        producers[at].push_back(pred);
        users[pred].push_back(at);
      }
  }

  // Readers of every root, in block order.
  reads.resize(ops.size());
  for (auto [at, op] : llvm::enumerate(ops)) {
    auto addReader = [&](Value value) {
      Operation *def = value.getDefiningOp();
      if (def && body.findAncestorOpInBlock(*def) == op)
        return; // defined inside `op`
      unsigned root = getRootId(getRoot(value));
      if (rootReaders[root].empty() || rootReaders[root].back() != at)
        rootReaders[root].push_back(at);
      if (!llvm::is_contained(reads[at], root))
        reads[at].push_back(root);
    };
    for (Value operand : op->getOperands())
      addReader(operand);
    op->walk([&](Operation *nested) {
      if (nested != op)
        for (Value operand : nested->getOperands())
          addReader(operand);
    });
  }

  auto markPersistent = [&](Value root) {
    auto it = rootIds.find(root);
    if (it != rootIds.end())
      rootPersistent[it->second] = true;
  };
  for (BlockArgument arg : function.getArguments())
    markPersistent(arg);
  for (Operation *op : ops) {
    ElementsAttr value;
    if (op->getNumResults() == 1 &&
        matchPattern(op->getResult(0), m_Constant(&value)) &&
        !isa<SplatElementsAttr>(value))
      markPersistent(op->getResult(0));
  }
  DenseMap<Value, BlockArgument> aliasOf;
  Operation *terminator = body.getTerminator();
  for (auto [resultIndex, value] : llvm::enumerate(terminator->getOperands())) {
    markPersistent(getRoot(value));
    if (auto alias = function.getResultAttrOfType<IntegerAttr>(
            resultIndex, tg::TGDialect::kAliasesAttrName))
      if (alias.getInt() >= 0 &&
          alias.getInt() < static_cast<int64_t>(function.getNumArguments()))
        aliasOf[value] = function.getArgument(alias.getInt());
  }
  results.resize(ops.size());
  for (auto [at, op] : llvm::enumerate(ops))
    for (Value value : op->getResults()) {
      Result result;
      result.bytes = bytesOf(value);
      result.unused = value.use_empty();
      auto alias = aliasOf.find(value);
      if (alias != aliasOf.end()) {
        result.aliased = true;
        auto root = rootIds.find(alias->second);
        if (root != rootIds.end())
          result.argumentRoot = root->second;
      }
      results[at].push_back(result);
    }
}

bool Scheduler::canWriteInPlace(size_t at, int64_t argumentRoot) const {
  if (argumentRoot < 0)
    return true; // nothing reads the argument
  bool readsArg = false;
  for (size_t reader : rootReaders[argumentRoot]) {
    if (reader == at)
      readsArg = true;
    else if (!scheduled[reader])
      return false;
  }
  return !readsArg || updatesInPlace[at];
}

int64_t Scheduler::score(size_t at) const {
  int64_t allocated = 0, freed = 0;
  if (!isView[at])
    for (const Result &result : results[at]) {
      if (result.aliased) {
        // Written in place, or a second copy that lives to the end.
        allocated +=
            canWriteInPlace(at, result.argumentRoot) ? 0 : 2 * result.bytes;
        continue;
      }
      allocated += result.bytes;
      if (result.unused)
        freed += result.bytes;
    }
  for (size_t pred : producers[at])
    if (lazy[pred] && !scheduled[pred])
      allocated += results[pred].front().bytes;
  for (unsigned root : reads[at])
    if (!rootPersistent[root] && remaining[root] == 1)
      freed += rootBytes[root];
  return allocated - freed;
}

void Scheduler::emit(size_t at, std::vector<Operation *> &order) {
  // Constants this op reads are filled just before it.
  for (size_t pred : producers[at])
    if (lazy[pred] && !scheduled[pred])
      emit(pred, order);
  scheduled[at] = true;
  order.push_back(ops[at]);
  for (unsigned root : reads[at])
    --remaining[root];
}

std::vector<Operation *> Scheduler::schedule(Rule rule) {
  scheduled.assign(ops.size(), false);
  remaining.resize(rootReaders.size());
  for (auto [root, rootOps] : llvm::enumerate(rootReaders))
    remaining[root] = rootOps.size();
  std::vector<size_t> waiting(ops.size(), 0);
  for (size_t at = 0; at < ops.size(); ++at)
    for (size_t pred : producers[at])
      if (!lazy[pred])
        ++waiting[at];
  // The ready set, kept sorted by original index for determinism.
  std::set<size_t> ready;
  for (size_t at = 0; at < ops.size(); ++at)
    if (!waiting[at] && !lazy[at])
      ready.insert(at);

  std::vector<Operation *> order;
  order.reserve(ops.size());
  while (!ready.empty()) {
    size_t chosen = *ready.begin();
    int64_t bestDelta = 0;
    bool found = false;
    for (size_t candidate : ready) {
      int64_t delta = score(candidate);
      bool eligible = rule == Rule::SmallestDelta || delta <= 0;
      if (eligible && (!found || delta < bestDelta)) {
        chosen = candidate;
        bestDelta = delta;
        found = true;
      }
    }
    ready.erase(chosen);
    emit(chosen, order);
    for (size_t user : users[chosen])
      if (!lazy[user] && --waiting[user] == 0 && !scheduled[user])
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
  OrderSimulator simulator(function, device);
  ScheduledOrder best;
  best.order.assign(scheduler.getOriginalOrder().begin(),
                    scheduler.getOriginalOrder().end());
  // Orders compare by peak, then by how long bytes stay live (e.g. the
  // same peak at the loss, but gradients freed by early updates).
  std::pair<int64_t, int64_t> bestCost = simulator.getPeakAndArea(best.order);
  // A pipelined function's order is its pipeline schedule: kept.
  bool pipelined = PipelineConfig::get(function).has_value();
  for (Rule rule : {Rule::FreeFirst, Rule::SmallestDelta}) {
    if (pipelined)
      break;
    std::vector<Operation *> order = scheduler.schedule(rule);
    std::pair<int64_t, int64_t> cost = simulator.getPeakAndArea(order);
    if (cost < bestCost) {
      bestCost = cost;
      best.order = std::move(order);
    }
  }
  best.peakBytes = bestCost.first;
  best.area = bestCost.second;
  return best;
}
