//===- RecomputeBound.cpp - a lower bound on a recompute plan's peak ------===//
//
// Reachability over the top-level ops as bit sets (each op's ancestors and
// descendants), then, per buffer of the simulator's model, the ops it is
// certainly live at; summed per op (`full`), with the candidates' share kept
// apart so a plan's bound is `full` minus what it recomputes.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/RecomputeBound.h"

#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGInterfaces.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace tgc;

static int64_t getByteSize(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? tg::getTensorByteSize(type) : 0;
}

RecomputePeakBound::RecomputePeakBound(func::FuncOp function,
                                       ArrayRef<Operation *> candidates,
                                       const DeviceSpec *device) {
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();
  std::vector<Operation *> ops;
  DenseMap<Operation *, unsigned> index;
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  size_t n = ops.size();
  StepStructure structure = StepStructure::compute(function);

  // The simulator's buffer model, as far as the bound needs it: results
  // updating an argument in place may share its buffer (left out), views
  // share their operand's, constants are persistent or filled on use (left
  // out).
  DenseSet<Value> aliased;
  for (auto [resultIndex, value] : llvm::enumerate(terminator->getOperands()))
    if (auto alias = function.getResultAttrOfType<IntegerAttr>(
            resultIndex, tg::TGDialect::kAliasesAttrName))
      if (alias.getInt() >= 0 &&
          alias.getInt() < static_cast<int64_t>(function.getNumArguments()))
        aliased.insert(value);
  for (BlockArgument arg : function.getArguments())
    persistent += getByteSize(arg);
  std::vector<char> view(n), constant(n);
  std::vector<int64_t> workspace(n, 0);
  bool usesMatrixUnits = false;
  for (auto [at, op] : llvm::enumerate(ops)) {
    view[at] = isViewOp(op);
    if (auto costed = dyn_cast<tg::CostOpInterface>(op)) {
      tg::OpCost cost = costed.getCost();
      usesMatrixUnits |= cost.matrixFlops > 0;
      workspace[at] = cost.workspaceBytes;
    }
    if (matchPattern(op, m_Constant())) {
      constant[at] = true;
      ElementsAttr value;
      bool splat = matchPattern(op->getResult(0), m_Constant(&value)) &&
                   isa<SplatElementsAttr>(value);
      if (!splat)
        persistent += getByteSize(op->getResult(0));
    }
  }
  if (usesMatrixUnits && device)
    persistent += device->gemmWorkspaceBytes;

  // Ancestors and descendants (each op included) through the values ops
  // and their regions read.
  std::vector<llvm::BitVector> ancestors(n, llvm::BitVector(n));
  std::vector<llvm::BitVector> descendants(n, llvm::BitVector(n));
  std::vector<SmallVector<unsigned>> users(n);
  for (auto [at, op] : llvm::enumerate(ops)) {
    ancestors[at].set(at);
    forEachProducer(op, body, [&](Operation *producer) {
      unsigned from = index.lookup(producer);
      ancestors[at] |= ancestors[from];
      users[from].push_back(at);
    });
  }
  for (size_t at = n; at-- > 0;) {
    descendants[at].set(at);
    for (unsigned user : users[at])
      descendants[at] |= descendants[user];
  }

  llvm::BitVector cutSet(n);
  for (auto [at, op] : llvm::enumerate(ops))
    if (structure.getPhase(op) != Phase::Forward && !view[at] && !constant[at])
      cutSet.set(at);
  full.assign(n, 0);
  for (unsigned at : cutSet.set_bits()) {
    full[at] = persistent + workspace[at];
    for (Value result : ops[at]->getResults())
      if (!aliased.contains(result))
        full[at] += getByteSize(result);
  }

  DenseMap<Operation *, unsigned> candidateOf;
  for (auto [at, op] : llvm::enumerate(candidates))
    candidateOf[op] = at;
  parts.resize(candidates.size());
  // The top-level ops reading `result`'s buffer (through the views sharing
  // it); whether it is returned.
  auto getReaders = [&](Value result, llvm::BitVector &readers) {
    readers.reset();
    bool returned = false;
    SmallVector<Value> values = {result};
    while (!values.empty()) {
      Value value = values.pop_back_val();
      for (Operation *user : value.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        if (!top)
          continue;
        if (top == terminator) {
          returned = true;
          continue;
        }
        unsigned reader = index.lookup(top);
        if (user == top && view[reader] && !readers.test(reader))
          values.push_back(top->getResult(0));
        readers.set(reader);
      }
    }
    return returned;
  };
  // The cuts after `at` at which a buffer `at` writes is live: some reader
  // depends on the cut or is it (any cut when it is returned).
  auto getLive = [&](unsigned at, const llvm::BitVector &readers,
                     bool returned) {
    llvm::BitVector live = descendants[at];
    live.reset(at);
    live &= cutSet;
    if (!returned) {
      llvm::BitVector before(n);
      for (unsigned reader : readers.set_bits())
        before |= ancestors[reader];
      live &= before;
    }
    return live;
  };
  // The value whose buffer `value` is in.
  auto getRoot = [&](Value value) {
    while (Operation *def = value.getDefiningOp()) {
      auto it = index.find(def);
      if (it == index.end() || !view[it->second])
        break;
      value = def->getOperand(0);
    }
    return value;
  };
  // Whether every buffer `reader` reads, arguments and constants aside, is
  // `result`'s or one written by an op of `cone`.
  auto readsOnly = [&](unsigned reader, Value result,
                       const DenseSet<unsigned> &cone) {
    bool only = true;
    auto check = [&](Value operand) {
      Value root = getRoot(operand);
      if (root == result || isa<BlockArgument>(root))
        return;
      Operation *top = body.findAncestorOpInBlock(*root.getDefiningOp());
      if (top == ops[reader])
        return; // defined inside the reader
      unsigned from = index.lookup(top);
      only &= constant[from] || cone.contains(from);
    };
    for (Value operand : ops[reader]->getOperands())
      check(operand);
    ops[reader]->walk([&](Operation *nested) {
      if (nested != ops[reader])
        for (Value operand : nested->getOperands())
          check(operand);
    });
    return only;
  };
  // A chain of ops outside the forward, each reading nothing but `result`'s
  // buffer and the results of the ops of the chain's cone (the sigmoid,
  // subtraction, products of a SiLU's backward), from `result` to a value
  // read outside that cone: its ops, and the smallest buffer along it.
  auto getChain = [&](Value result, SmallVector<unsigned> &chain,
                      int64_t &smallest) {
    chain.clear();
    DenseSet<unsigned> cone;
    DenseMap<unsigned, int64_t> previous; // on the chain; -1: `result`
    std::vector<unsigned> queue;
    llvm::BitVector users(n);
    auto visit = [&](Value value, int64_t from) {
      getReaders(value, users);
      for (unsigned user : users.set_bits())
        if (!view[user] && !constant[user] && !cone.contains(user) &&
            ops[user]->getNumResults() == 1 &&
            structure.getPhase(ops[user]) != Phase::Forward &&
            previous.try_emplace(user, from).second)
          queue.push_back(user);
    };
    visit(result, -1);
    for (size_t next = 0; next < queue.size(); ++next) {
      unsigned at = queue[next];
      if (!readsOnly(at, result, cone)) {
        previous.erase(at); // may join later, once its other inputs have
        continue;
      }
      cone.insert(at);
      visit(ops[at]->getResult(0), at);
      if (queue.size() > 64)
        break; // a chain of a few elementwise ops is what is looked for
    }
    // The first op of the cone (in the order found) read outside it.
    for (unsigned at : queue) {
      if (!cone.contains(at))
        continue;
      bool exits = getReaders(ops[at]->getResult(0), users);
      for (unsigned user : users.set_bits())
        exits |= !cone.contains(user);
      if (!exits)
        continue;
      smallest = getByteSize(result);
      for (int64_t op = at; op >= 0; op = previous.lookup(op)) {
        chain.push_back(op);
        smallest = std::min(smallest, getByteSize(ops[op]->getResult(0)));
      }
      return;
    }
  };

  llvm::BitVector readers(n), carriedReaders(n);
  for (auto [at, op] : llvm::enumerate(ops)) {
    if (view[at] || constant[at])
      continue;
    auto candidate = candidateOf.find(op);
    for (Value result : op->getResults()) {
      int64_t bytes = getByteSize(result);
      if (aliased.contains(result) || bytes == 0)
        continue;
      bool returned = getReaders(result, readers);
      llvm::BitVector live = getLive(at, readers, returned);
      for (unsigned cut : live.set_bits())
        full[cut] += bytes;
      // At a cut that depends on `op` and that none of its readers depends
      // on or precedes, the buffer may be dead if the chain from it has run
      // (the backward of a SiLU, which needs no gradient): then the chain's
      // last value, read after the cut, is live, or a value in between. The
      // chains of different buffers share no op.
      SmallVector<unsigned> chain;
      int64_t carriedBytes = 0;
      llvm::BitVector carried;
      getChain(result, chain, carriedBytes);
      if (!chain.empty() && carriedBytes > 0) {
        carried = getLive(
            at, carriedReaders,
            getReaders(ops[chain.front()]->getResult(0), carriedReaders));
        carried.reset(live);
        carried.reset(readers);
        for (unsigned link : chain)
          carried.reset(descendants[link]);
      } else {
        carriedBytes = 0;
      }
      if (carriedBytes > 0)
        for (unsigned cut : carried.set_bits())
          full[cut] += carriedBytes;
      if (candidate == candidateOf.end())
        continue;
      // Recomputed, the buffer is read only in the forward: the cuts that
      // read it read its clone, which is live there instead; at the others
      // it counts no more.
      live.reset(readers);
      parts[candidate->second].push_back({bytes, std::move(live)});
      if (carriedBytes > 0)
        parts[candidate->second].push_back({carriedBytes, std::move(carried)});
    }
  }
  for (unsigned at : cutSet.set_bits())
    cuts.push_back(at);
  llvm::stable_sort(cuts,
                    [&](unsigned a, unsigned b) { return full[a] > full[b]; });
  if (!cuts.empty())
    lastHit = cuts.front();
}

int64_t RecomputePeakBound::getAt(unsigned at,
                                  ArrayRef<unsigned> recomputed) const {
  int64_t bound = full[at];
  for (unsigned candidate : recomputed)
    for (const Part &part : parts[candidate])
      if (part.at.test(at))
        bound -= part.bytes;
  return bound;
}

int64_t RecomputePeakBound::get(ArrayRef<unsigned> recomputed) const {
  std::vector<int64_t> bounds = full;
  for (unsigned candidate : recomputed)
    for (const Part &part : parts[candidate])
      for (unsigned at : part.at.set_bits())
        bounds[at] -= part.bytes;
  int64_t bound = persistent;
  for (unsigned at : cuts)
    bound = std::max(bound, bounds[at]);
  return bound;
}

bool RecomputePeakBound::exceeds(ArrayRef<unsigned> recomputed,
                                 int64_t threshold) {
  if (persistent > threshold)
    return true;
  if (cuts.empty())
    return false;
  if (full[lastHit] > threshold && getAt(lastHit, recomputed) > threshold)
    return true;
  for (unsigned at : cuts) {
    if (full[at] <= threshold)
      return false; // no cut can exceed it, whatever is recomputed
    if (getAt(at, recomputed) > threshold) {
      lastHit = at;
      return true;
    }
  }
  return false;
}
