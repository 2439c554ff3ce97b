//===- RecomputePlanner.cpp - keep or recompute each activation -----------===//
//
// Candidates, their closures, the block decomposition, the per-block option
// enumeration, the DP over the blocks, the check against the simulator, and
// the rewrite that clones recomputed ops into the backward.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/RecomputePlanner.h"

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/RecomputeBound.h"
#include "tgc/Analysis/Schedule.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGInterfaces.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGTraits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

using namespace mlir;
using namespace tgc;

FailureOr<int64_t> tgc::parseByteSize(StringRef text) {
  text = text.trim();
  size_t split = 0;
  while (split < text.size() &&
         (llvm::isDigit(text[split]) || text[split] == '.'))
    ++split;
  StringRef number = text.take_front(split);
  StringRef suffix = text.drop_front(split).trim();
  double value;
  if (number.empty() || number.getAsDouble(value) || value < 0)
    return failure();
  static const std::pair<const char *, double> suffixes[] = {
      {"", 1},
      {"B", 1},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"KiB", 1024.0},
      {"MiB", 1048576.0},
      {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  for (auto [name, scale] : suffixes)
    if (suffix == name) {
      double bytes = value * scale;
      if (bytes > 9.0e18)
        return failure();
      return static_cast<int64_t>(std::llround(bytes));
    }
  return failure();
}

int64_t tgc::getAutoBudget(const DeviceSpec &device) {
  return device.hbmBytes - device.hbmBytes / 20;
}

FailureOr<RecomputeStrategy> tgc::parseRecomputeStrategy(StringRef name) {
  if (name == "dp")
    return RecomputeStrategy::DP;
  if (name == "none")
    return RecomputeStrategy::None;
  if (name == "full")
    return RecomputeStrategy::Full;
  if (name == "sqrt")
    return RecomputeStrategy::Sqrt;
  if (name == "selective")
    return RecomputeStrategy::Selective;
  return failure();
}

//===----------------------------------------------------------------------===//
// What the backward reads
//===----------------------------------------------------------------------===//

namespace tgc::detail {
/// The forward ops of a step and which of them the backward reads.
struct ActivationInfo {
  explicit ActivationInfo(func::FuncOp function);

  bool isForward(Operation *op) const { return forward.contains(op); }
  /// The non-view op whose buffer `op`'s results share.
  Operation *getRootOp(Operation *op) const {
    while (op && forwardViews.contains(op)) {
      Operation *def = op->getOperand(0).getDefiningOp();
      if (!def || !forward.contains(def))
        break;
      op = def;
    }
    return op;
  }
  /// A forward op whose buffer the backward reads (directly or through
  /// views): its results are activations.
  bool isActivation(Operation *op) const { return activations.contains(op); }
  bool isRecomputable(Operation *op) const {
    return forward.contains(op) && isMemoryEffectFree(op) &&
           !returned.contains(op);
  }
  /// The forward ops defining what `op` (or an op nested in it) reads.
  ArrayRef<Operation *> getForwardOperands(Operation *op) const;
  /// The forward ops that run again for `recomputed` (see
  /// RecomputePlanner::getClosure), in block order.
  SetVector<Operation *> getClosure(ArrayRef<Operation *> recomputed,
                                    const DenseSet<Operation *> &recomputedSet,
                                    bool sorted = true) const;

  Block &body;
  std::vector<Operation *> backward; // top-level non-forward ops, in order
  DenseSet<Operation *> forward;
  /// The forward ops that are views (isViewOp asks the cost model).
  DenseSet<Operation *> forwardViews;
  DenseSet<Operation *> activations;
  DenseSet<Operation *> returned;
  DenseMap<Operation *, unsigned> order;
  mutable DenseMap<Operation *, SmallVector<Operation *, 4>> forwardOperands;
};
} // namespace tgc::detail

using tgc::detail::ActivationInfo;

/// Calls `callback` with every operand of `op` and of the ops nested in it
/// that is defined outside `op`.
static void forEachOuterOperand(Operation *op,
                                function_ref<void(OpOperand &)> callback) {
  op->walk([&](Operation *nested) {
    for (OpOperand &use : nested->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (nested != op && def && op->isAncestor(def))
        continue;
      if (nested != op && !def &&
          op->isProperAncestor(
              cast<BlockArgument>(use.get()).getOwner()->getParentOp()))
        continue;
      if (nested != op && !def &&
          cast<BlockArgument>(use.get()).getOwner()->getParentOp() == op)
        continue;
      callback(use);
    }
  });
}

ActivationInfo::ActivationInfo(func::FuncOp function)
    : body(function.getBody().front()) {
  StepStructure structure = StepStructure::compute(function);
  for (Operation &op : body.without_terminator()) {
    order[&op] = order.size();
    if (structure.getPhase(&op) == Phase::Forward) {
      forward.insert(&op);
      if (isViewOp(&op))
        forwardViews.insert(&op);
    } else
      backward.push_back(&op);
  }
  for (Operation *user : backward)
    forEachOuterOperand(user, [&](OpOperand &use) {
      Operation *def = use.get().getDefiningOp();
      if (!def || !forward.contains(def))
        return;
      if (Operation *root = getRootOp(body.findAncestorOpInBlock(*def)))
        activations.insert(root);
    });
  for (Value value : body.getTerminator()->getOperands())
    if (Operation *def = value.getDefiningOp()) {
      returned.insert(def);
      returned.insert(getRootOp(def));
    }
  // Constants are part of the program or filled for free: never activations
  // worth trading.
  for (Operation *op : llvm::make_early_inc_range(activations))
    if (op->getNumOperands() == 0 || returned.contains(op) ||
        matchPattern(op, m_Constant()))
      activations.erase(op);
}

ArrayRef<Operation *> ActivationInfo::getForwardOperands(Operation *op) const {
  auto [it, inserted] = forwardOperands.try_emplace(op);
  if (inserted)
    forEachOuterOperand(op, [&](OpOperand &use) {
      Operation *def = use.get().getDefiningOp();
      if (def && forward.contains(def))
        it->second.push_back(def);
    });
  return it->second;
}

SetVector<Operation *>
ActivationInfo::getClosure(ArrayRef<Operation *> recomputed,
                           const DenseSet<Operation *> &recomputedSet,
                           bool sorted) const {
  SetVector<Operation *> closure;
  SmallVector<Operation *> worklist(recomputed.begin(), recomputed.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!closure.insert(op))
      continue;
    for (Operation *def : getForwardOperands(op)) {
      Operation *root = getRootOp(def);
      if (activations.contains(root) && !recomputedSet.contains(root))
        continue; // kept: read the original
      worklist.push_back(def);
    }
  }
  // Views of recomputed values that the backward reads run again too, so
  // the backward reads no original of a recomputed buffer.
  for (size_t at = 0; at < closure.size(); ++at)
    for (Operation *user : closure[at]->getUsers())
      if (user->getBlock() == &body && forwardViews.contains(user))
        closure.insert(user);
  if (!sorted)
    return closure;
  SmallVector<Operation *> ordered(closure.begin(), closure.end());
  llvm::sort(ordered, [&](Operation *a, Operation *b) {
    return order.lookup(a) < order.lookup(b);
  });
  return SetVector<Operation *>(ordered.begin(), ordered.end());
}

void tgc::applyRecompute(func::FuncOp function,
                         ArrayRef<Operation *> recomputed) {
  if (recomputed.empty())
    return;
  ActivationInfo info(function);
  DenseSet<Operation *> recomputedSet(recomputed.begin(), recomputed.end());
  SetVector<Operation *> closure = info.getClosure(recomputed, recomputedSet);

  // Backward views of recomputed values (directly or through other such
  // views). A view allocates nothing, so tg-schedule runs it as soon as its
  // operand exists, often in the forward: placing a clone before such a view
  // would run the recomputation in the forward. The clones go before the
  // first backward reader that is not one of these views, and the views are
  // cloned next to each of their readers.
  DenseSet<Operation *> recomputedViews;
  for (Operation *op : info.backward) {
    if (!isViewOp(op))
      continue;
    Operation *def = op->getOperand(0).getDefiningOp();
    if (def && (closure.contains(def) || recomputedViews.contains(def)))
      recomputedViews.insert(op);
  }

  DenseMap<Operation *, Operation *> clones;
  std::function<Operation *(Operation *, Operation *)> cloneOf =
      [&](Operation *op, Operation *before) -> Operation * {
    auto it = clones.find(op);
    if (it != clones.end())
      return it->second;
    IRMapping mapping;
    forEachOuterOperand(op, [&](OpOperand &use) {
      Operation *def = use.get().getDefiningOp();
      if (def && closure.contains(def)) {
        Operation *clone = cloneOf(def, before);
        mapping.map(
            use.get(),
            clone->getResult(cast<OpResult>(use.get()).getResultNumber()));
      }
    });
    OpBuilder builder(before);
    Operation *clone = builder.clone(*op, mapping);
    clones[op] = clone;
    return clone;
  };
  // What the backward op `reader` reads instead of `value`.
  DenseMap<std::pair<Operation *, Operation *>, Value> viewClones;
  std::function<Value(Value, Operation *)> getRecomputed =
      [&](Value value, Operation *reader) -> Value {
    Operation *def = value.getDefiningOp();
    if (!def)
      return value;
    if (closure.contains(def))
      return cloneOf(def, reader)
          ->getResult(cast<OpResult>(value).getResultNumber());
    if (!recomputedViews.contains(def))
      return value;
    Value &clone = viewClones[{def, reader}];
    if (!clone) {
      IRMapping mapping;
      mapping.map(def->getOperand(0),
                  getRecomputed(def->getOperand(0), reader));
      OpBuilder builder(reader);
      clone = builder.clone(*def, mapping)->getResult(0);
    }
    return clone;
  };
  for (Operation *user : info.backward) {
    if (recomputedViews.contains(user))
      continue;
    forEachOuterOperand(user, [&](OpOperand &use) {
      Value replacement = getRecomputed(use.get(), user);
      if (replacement != use.get())
        use.set(replacement);
    });
  }
  // The bypassed views are dead now, unless something else (the terminator)
  // reads them; a dead view would keep the original buffer alive.
  for (Operation *view : llvm::reverse(info.backward))
    if (recomputedViews.contains(view) && view->use_empty())
      view->erase();
}

//===----------------------------------------------------------------------===//
// The planner
//===----------------------------------------------------------------------===//

static int64_t getResultBytes(Operation *op) {
  int64_t bytes = 0;
  for (Type type : op->getResultTypes())
    if (isa<RankedTensorType>(type))
      bytes += tg::getTensorByteSize(type);
  return bytes;
}

RecomputePlanner::~RecomputePlanner() = default;

RecomputePlanner::RecomputePlanner(func::FuncOp function,
                                   const DeviceSpec &device)
    : function(function), device(device),
      activations(std::make_unique<ActivationInfo>(function)) {
  const ActivationInfo &info = *activations;
  for (Operation &op : info.body.without_terminator()) {
    opIndex[&op] = ops.size();
    ops.push_back(&op);
  }
  for (Operation *op : ops)
    if (info.isRecomputable(op))
      recomputable.insert(op);
  for (Operation *op : ops) {
    if (!info.isActivation(op) || !recomputable.contains(op))
      continue;
    // Everything that runs again with it alone must be able to.
    DenseSet<Operation *> alone{op};
    SetVector<Operation *> closure = info.getClosure({op}, alone);
    if (!llvm::all_of(closure,
                      [&](Operation *c) { return recomputable.contains(c); }))
      continue;
    candidateOf[op] = candidates.size();
    candidates.push_back(
        {op, getResultBytes(op), estimateOpTime(op, device).time});
  }
  peakBefore = computeSchedule(function, &device).peakBytes;
  decompose();
}

SmallVector<Operation *>
RecomputePlanner::getClosure(ArrayRef<unsigned> recomputed) const {
  const ActivationInfo &info = *activations;
  SmallVector<Operation *> chosen;
  DenseSet<Operation *> chosenSet;
  for (unsigned index : recomputed) {
    chosen.push_back(candidates[index].op);
    chosenSet.insert(candidates[index].op);
  }
  SetVector<Operation *> closure = info.getClosure(chosen, chosenSet);
  return SmallVector<Operation *>(closure.begin(), closure.end());
}

double RecomputePlanner::getOpTime(Operation *op) const {
  auto [it, inserted] = opTimes.try_emplace(op, 0.0);
  if (inserted)
    it->second = estimateOpTime(op, device).time;
  return it->second;
}

double RecomputePlanner::getExtraTime(ArrayRef<unsigned> recomputed) const {
  SmallVector<Operation *> chosen;
  DenseSet<Operation *> chosenSet;
  for (unsigned index : recomputed) {
    chosen.push_back(candidates[index].op);
    chosenSet.insert(candidates[index].op);
  }
  // The closure's order is a function of the set: equal sets, equal sums.
  double time = 0;
  for (Operation *op :
       activations->getClosure(chosen, chosenSet, /*sorted=*/false))
    time += getOpTime(op);
  return time;
}

int64_t RecomputePlanner::simulatePeak(ArrayRef<unsigned> recomputed) const {
  if (recomputed.empty())
    return peakBefore;
  SmallVector<unsigned> key(recomputed.begin(), recomputed.end());
  llvm::sort(key);
  auto it = simulatedPeaks.find(key);
  if (it != simulatedPeaks.end())
    return it->second;
  func::FuncOp copy = func::FuncOp(function).clone();
  SmallVector<Operation *> copyOps;
  for (Operation &op : copy.getBody().front().without_terminator())
    copyOps.push_back(&op);
  SmallVector<Operation *> chosen;
  for (unsigned index : key)
    chosen.push_back(copyOps[opIndex.lookup(candidates[index].op)]);
  applyRecompute(copy, chosen);
  // The peak of the program as tg-schedule will order it.
  int64_t peak = computeSchedule(copy, &device).peakBytes;
  copy.erase();
  simulatedPeaks[key] = peak;
  return peak;
}

/// A structural fingerprint of a block: op names, types and which op of the
/// block each operand comes from (attributes such as dropout streams differ
/// between identical layers and do not change costs).
static std::string fingerprint(ArrayRef<Operation *> blockOps,
                               const DenseMap<Operation *, unsigned> &index) {
  std::string text;
  llvm::raw_string_ostream os(text);
  unsigned first = blockOps.empty() ? 0 : index.lookup(blockOps.front());
  for (Operation *op : blockOps) {
    os << op->getName() << '(';
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      auto it = def ? index.find(def) : index.end();
      if (it != index.end() && it->second >= first)
        os << (it->second - first);
      else
        os << 'x';
      os << ':' << operand.getType() << ',';
    }
    os << ")->";
    for (Type type : op->getResultTypes())
      os << type << ',';
    os << ';';
  }
  return text;
}

void RecomputePlanner::decompose() {
  const ActivationInfo &info = *activations;
  std::vector<Operation *> forwardOps;
  DenseMap<Operation *, unsigned> position;
  for (Operation *op : ops)
    if (info.isForward(op)) {
      position[op] = forwardOps.size();
      forwardOps.push_back(op);
    }
  // Values that do not depend on the step's inputs (rotary tables, masks,
  // parameter casts) are computed once and read by every layer: like
  // constants, they do not keep layers together.
  DenseSet<Operation *> dataDependent;
  for (Operation *op : forwardOps) {
    bool dependent = false;
    forEachOuterOperand(op, [&](OpOperand &use) {
      if (auto arg = dyn_cast<BlockArgument>(use.get())) {
        if (arg.getOwner() == &info.body) {
          std::optional<tg::Role> role =
              tg::getArgumentRole(function, arg.getArgNumber());
          dependent |= role == tg::Role::Input || role == tg::Role::Label;
        }
      } else if (Operation *def = use.get().getDefiningOp()) {
        dependent |= dataDependent.contains(def);
      }
    });
    if (dependent)
      dataDependent.insert(op);
  }
  // crossing[i]: forward values defined at or before i read after i.
  std::vector<int> delta(forwardOps.size() + 1, 0);
  for (auto [at, op] : llvm::enumerate(forwardOps)) {
    if (!dataDependent.contains(op))
      continue; // available everywhere, like constants
    unsigned last = at;
    for (Operation *user : op->getUsers())
      if (Operation *top = info.body.findAncestorOpInBlock(*user))
        if (position.count(top))
          last = std::max(last, position[top]);
    if (last > at) {
      delta[at] += 1;
      delta[last] -= 1;
    }
  }
  std::vector<std::pair<unsigned, unsigned>> segments; // [begin, end)
  int crossing = 0;
  unsigned begin = 0;
  for (unsigned at = 0; at < forwardOps.size(); ++at) {
    crossing += delta[at];
    if (crossing <= 1) {
      segments.push_back({begin, at + 1});
      begin = at + 1;
    }
  }
  if (begin < forwardOps.size())
    segments.push_back({begin, static_cast<unsigned>(forwardOps.size())});

  // Merge segments while their candidates stay enumerable.
  auto countCandidates = [&](std::pair<unsigned, unsigned> segment) {
    unsigned count = 0;
    for (unsigned at = segment.first; at < segment.second; ++at)
      count += candidateOf.count(forwardOps[at]);
    return count;
  };
  std::vector<std::pair<unsigned, unsigned>> merged;
  for (auto segment : segments) {
    if (!merged.empty() &&
        countCandidates(merged.back()) + countCandidates(segment) <=
            blockLimit) {
      merged.back().second = segment.second;
      continue;
    }
    merged.push_back(segment);
  }

  llvm::StringMap<unsigned> representatives;
  for (auto segment : merged) {
    Block block;
    SmallVector<Operation *> blockOps;
    for (unsigned at = segment.first; at < segment.second; ++at) {
      blockOps.push_back(forwardOps[at]);
      auto it = candidateOf.find(forwardOps[at]);
      if (it != candidateOf.end())
        block.candidates.push_back(it->second);
    }
    if (block.candidates.empty())
      continue;
    // The block's input: the last candidate of the block before it that
    // this block reads (the residual stream at the cut).
    if (!blocks.empty()) {
      for (unsigned index : blocks.back().candidates) {
        Operation *op = candidates[index].op;
        bool readHere = llvm::any_of(op->getUsers(), [&](Operation *user) {
          Operation *top = info.body.findAncestorOpInBlock(*user);
          return top && llvm::is_contained(blockOps, top);
        });
        if (readHere)
          block.inputs = {index};
      }
    }
    std::string key = fingerprint(blockOps, opIndex);
    auto [it, inserted] =
        representatives.try_emplace(key, static_cast<unsigned>(blocks.size()));
    block.representative = it->second;
    blocks.push_back(std::move(block));
  }
  optionsOf.assign(blocks.size(), {});
  for (auto [at, block] : llvm::enumerate(blocks))
    if (block.representative == at)
      optionsOf[at] = enumerateOptions(block);
}

/// The indices of the bits set in `mask`, below `count`.
static SmallVector<unsigned> getSubset(uint64_t mask, unsigned count) {
  SmallVector<unsigned> subset;
  for (unsigned bit = 0; bit < count; ++bit)
    if (mask & (uint64_t(1) << bit))
      subset.push_back(bit);
  return subset;
}

std::vector<RecomputePlanner::Option>
RecomputePlanner::enumerateOptions(const Block &block) const {
  unsigned count = block.candidates.size();
  std::vector<SmallVector<unsigned>> subsets;
  if (count <= blockLimit) {
    for (uint64_t mask = 0; mask < (uint64_t(1) << count); ++mask)
      subsets.push_back(getSubset(mask, count));
  } else {
    // Too many to enumerate (one op with many activations between cuts):
    // the prefixes of the candidates by bytes saved per second spent.
    SmallVector<unsigned> byRatio;
    for (unsigned bit = 0; bit < count; ++bit)
      byRatio.push_back(bit);
    auto ratio = [&](unsigned bit) {
      const RecomputeCandidate &c = candidates[block.candidates[bit]];
      return c.bytes / std::max(c.time, 1e-12);
    };
    llvm::stable_sort(
        byRatio, [&](unsigned a, unsigned b) { return ratio(a) > ratio(b); });
    SmallVector<unsigned> prefix;
    subsets.push_back(prefix);
    for (unsigned bit : byRatio) {
      prefix.push_back(bit);
      subsets.push_back(prefix);
    }
  }
  std::vector<Option> options;
  for (SmallVector<unsigned> &subset : subsets) {
    Option option;
    SmallVector<unsigned> global;
    for (unsigned bit : subset)
      global.push_back(block.candidates[bit]);
    for (unsigned bit = 0; bit < count; ++bit)
      if (!llvm::is_contained(subset, bit))
        option.kept += candidates[block.candidates[bit]].bytes;
    // While the block's backward runs, a recomputed value is live next to
    // the kept ones; the model counts the largest one (optimistic: the
    // simulator's check tightens the capacity when more stay live).
    // The cautious model counts every recomputed activation live at once
    // and the largest transient of their recomputation.
    int64_t transient = 0;
    for (Operation *op : getClosure(global)) {
      option.time += getOpTime(op);
      if (isViewOp(op))
        continue;
      option.extra = std::max(option.extra, getResultBytes(op));
      if (candidateOf.count(op))
        option.extraAll += getResultBytes(op);
      else
        transient = std::max(transient, getResultBytes(op));
    }
    option.extraAll += transient;
    option.recomputed = std::move(subset);
    options.push_back(std::move(option));
  }
  // Drop dominated options (more kept, more extra and more time).
  llvm::sort(options, [](const Option &a, const Option &b) {
    return std::tie(a.kept, a.extra, a.time) <
           std::tie(b.kept, b.extra, b.time);
  });
  std::vector<Option> pareto;
  for (Option &option : options) {
    bool dominated = llvm::any_of(pareto, [&](const Option &other) {
      return other.kept <= option.kept && other.extra <= option.extra &&
             other.extraAll <= option.extraAll && other.time <= option.time;
    });
    if (!dominated)
      pareto.push_back(std::move(option));
  }
  return pareto;
}

FailureOr<SmallVector<unsigned>> RecomputePlanner::solveDP(int64_t capacity,
                                                           bool cautious) {
  if (capacity < 0)
    return failure();
  // Bytes are counted in units so the state space stays small; every
  // quantity rounds up, so the DP never under-counts its own model.
  constexpr int64_t kUnits = 4096;
  int64_t unit = std::max<int64_t>(1, (capacity + kUnits - 1) / kUnits);
  int64_t states = capacity / unit + 1;
  auto units = [&](int64_t bytes) { return (bytes + unit - 1) / unit; };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> best(states, kInf), next(states);
  best[0] = 0;
  // choice[b][m]: the option of block b that reached kept units m, and the
  // kept units before it.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> choice(blocks.size());
  for (auto [at, block] : llvm::enumerate(blocks)) {
    const std::vector<Option> &options = optionsOf[block.representative];
    std::fill(next.begin(), next.end(), kInf);
    choice[at].assign(states, {-1, -1});
    for (int64_t m = 0; m < states; ++m) {
      if (best[m] == kInf)
        continue;
      for (auto [o, option] : llvm::enumerate(options)) {
        int64_t kept = m + units(option.kept);
        if (kept + units(cautious ? option.extraAll : option.extra) >= states)
          continue;
        double time = best[m] + option.time;
        if (time < next[kept]) {
          next[kept] = time;
          choice[at][kept] = {static_cast<int32_t>(o), static_cast<int32_t>(m)};
        }
      }
    }
    best.swap(next);
  }
  int64_t end = -1;
  for (int64_t m = 0; m < states; ++m)
    if (best[m] != kInf && (end < 0 || best[m] < best[end]))
      end = m;
  if (end < 0)
    return failure();
  return backtrack(choice, end);
}

SmallVector<unsigned> RecomputePlanner::backtrack(
    ArrayRef<std::vector<std::pair<int32_t, int32_t>>> choice,
    int64_t end) const {
  SmallVector<unsigned> recomputed;
  for (size_t at = blocks.size(); at-- > 0;) {
    auto [o, previous] = choice[at][end];
    const Option &option = optionsOf[blocks[at].representative][o];
    for (unsigned bit : option.recomputed)
      recomputed.push_back(blocks[at].candidates[bit]);
    end = previous;
  }
  llvm::sort(recomputed);
  return recomputed;
}

RecomputePlan RecomputePlanner::finish(SmallVector<unsigned> recomputed) const {
  RecomputePlan plan;
  plan.extraTime = getExtraTime(recomputed);
  plan.peakBytes = simulatePeak(recomputed);
  plan.recomputed = std::move(recomputed);
  plan.blocks = blocks.size();
  for (auto [at, block] : llvm::enumerate(blocks))
    plan.distinctBlocks += block.representative == at;
  return plan;
}

ArrayRef<SmallVector<unsigned>> RecomputePlanner::getPlanPool() {
  if (planPool)
    return *planPool;
  std::vector<SmallVector<unsigned>> sets;
  if (candidates.size() <= exhaustiveLimit) {
    for (uint64_t mask = 1; mask < (uint64_t(1) << candidates.size()); ++mask)
      sets.push_back(getSubset(mask, candidates.size()));
  } else {
    // The model's cheapest plan for every capacity, under both models of
    // what a block's recomputation holds.
    for (bool cautious : {true, false})
      llvm::append_range(sets, solveFrontierDP(cautious));
    for (RecomputeStrategy strategy :
         {RecomputeStrategy::Full, RecomputeStrategy::Sqrt,
          RecomputeStrategy::Selective})
      sets.push_back(getBaselineSet(strategy));
    // Checkpoints at every block's input (half a transformer layer) too.
    SmallVector<unsigned> allBlocks =
        llvm::to_vector(llvm::seq<unsigned>(0, blocks.size()));
    for (bool sqrtStride : {false, true})
      sets.push_back(getCheckpointPlan(allBlocks, sqrtStride));
  }
  for (SmallVector<unsigned> &set : sets)
    llvm::sort(set);
  llvm::erase_if(sets,
                 [](const SmallVector<unsigned> &set) { return set.empty(); });
  // Cheapest first (fewest ops on ties), the order solve tries them in.
  std::vector<std::pair<double, SmallVector<unsigned>>> timed;
  for (SmallVector<unsigned> &set : sets)
    timed.push_back({getExtraTime(set), std::move(set)});
  llvm::sort(timed, [](const auto &a, const auto &b) {
    return std::make_tuple(a.first, a.second.size(), std::cref(a.second)) <
           std::make_tuple(b.first, b.second.size(), std::cref(b.second));
  });
  planPool.emplace();
  for (auto &[time, set] : timed)
    if (planPool->empty() || planPool->back() != set)
      planPool->push_back(std::move(set));
  return *planPool;
}

RecomputePeakBound &RecomputePlanner::getBound() {
  if (!bound) {
    SmallVector<Operation *> candidateOps;
    for (const RecomputeCandidate &candidate : candidates)
      candidateOps.push_back(candidate.op);
    bound =
        std::make_unique<RecomputePeakBound>(function, candidateOps, &device);
  }
  return *bound;
}

FailureOr<RecomputePlan> RecomputePlanner::solve(int64_t budget,
                                                 int64_t &minimumPeak) {
  auto start = std::chrono::steady_clock::now();
  minimumPeak = peakBefore;
  // A budget the step fits costs nothing, whatever else would fit.
  std::optional<SmallVector<unsigned>> best;
  if (peakBefore <= budget)
    best.emplace();
  // Every plan of the pool, cheapest first, until one fits: the result is
  // never more expensive than a plan of the frontier (built from the same
  // pool) that fits. A plan whose lower bound exceeds the budget cannot
  // fit and is not simulated.
  unsigned tried = 0;
  std::vector<const SmallVector<unsigned> *> ruledOut;
  for (const SmallVector<unsigned> &set :
       best ? ArrayRef<SmallVector<unsigned>>() : getPlanPool()) {
    if (best)
      break;
    if (useBound && getBound().exceeds(set, budget)) {
      ruledOut.push_back(&set);
      continue;
    }
    ++tried;
    int64_t peak = simulatePeak(set);
    minimumPeak = std::min(minimumPeak, peak);
    if (peak <= budget)
      best = set;
  }
  if (!best) {
    // The smallest peak the planner can reach: the plans ruled out too,
    // unless their bound shows they do not go below it.
    for (const SmallVector<unsigned> *set : ruledOut) {
      if (getBound().exceeds(*set, minimumPeak - 1))
        continue;
      ++tried;
      minimumPeak = std::min(minimumPeak, simulatePeak(*set));
    }
    return failure();
  }
  RecomputePlan plan = finish(std::move(*best));
  plan.exhaustive = candidates.size() <= exhaustiveLimit;
  plan.solves = tried;
  plan.solveSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return plan;
}

SmallVector<unsigned> RecomputePlanner::getAttentionCore() const {
  auto isRowwise = [](Operation *op) {
    return op->hasTrait<OpTrait::Elementwise>() ||
           op->hasTrait<tg::OpTrait::ShapeOp>() || isa<tg::DropoutOp>(op);
  };
  DenseSet<Operation *> core;
  for (Operation *op : ops) {
    // Fused attention is the core itself (Megatron checkpoints its core
    // attention module, flash attention included): its output and
    // logsumexp are recomputed from q, k and v.
    if (isa<tg::AttentionOp>(op) && recomputable.contains(op))
      core.insert(op);
    if (!isa<tg::SoftmaxOp>(op) || !recomputable.contains(op))
      continue;
    core.insert(op);
    // Back to the scores matmul, through the scale and the mask.
    SmallVector<Operation *> work = {op};
    while (!work.empty()) {
      Operation *at = work.pop_back_val();
      for (Value operand : at->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !recomputable.contains(def) || core.contains(def))
          continue;
        if (isa<tg::MatmulOp>(def)) {
          core.insert(def);
        } else if (isRowwise(def)) {
          core.insert(def);
          work.push_back(def);
        }
      }
    }
    // On to the matmul with the values, through the dropout.
    work = {op};
    while (!work.empty()) {
      Operation *at = work.pop_back_val();
      for (Operation *user : at->getUsers())
        if (recomputable.contains(user) && !core.contains(user) &&
            isRowwise(user)) {
          core.insert(user);
          work.push_back(user);
        }
    }
  }
  SmallVector<unsigned> recomputed;
  for (auto [index, candidate] : llvm::enumerate(candidates))
    if (core.contains(candidate.op))
      recomputed.push_back(index);
  return recomputed;
}

SmallVector<unsigned> RecomputePlanner::getLayerStarts() const {
  // The shortest period of the blocks' structures over the longest stretch
  // that repeats (a transformer layer is an attention and an MLP block);
  // the blocks before and after that stretch are layers of their own.
  size_t n = blocks.size();
  size_t bestPeriod = 1, bestBegin = 0, bestEnd = n;
  size_t bestCover = 0;
  for (size_t period = 1; period <= n / 2; ++period) {
    // The longest run of blocks equal to the block `period` later.
    size_t runBegin = 0;
    for (size_t at = 0; at + period <= n; ++at) {
      bool same = at + period < n && blocks[at].representative ==
                                         blocks[at + period].representative;
      if (same)
        continue;
      // [runBegin, at + period) repeats with this period.
      size_t cover = at + period - runBegin;
      if (cover >= 2 * period && cover > bestCover) {
        bestCover = cover;
        bestPeriod = period;
        bestBegin = runBegin;
        bestEnd = at + period;
      }
      runBegin = at + 1;
    }
  }
  SmallVector<unsigned> starts;
  for (size_t at = 0; at < n; ++at)
    if (at < bestBegin || at >= bestEnd || (at - bestBegin) % bestPeriod == 0)
      starts.push_back(at);
  return starts;
}

SmallVector<unsigned>
RecomputePlanner::getCheckpointPlan(ArrayRef<unsigned> starts,
                                    bool sqrtStride) const {
  unsigned stride = 1;
  if (sqrtStride)
    stride = std::max<unsigned>(
        1, static_cast<unsigned>(std::ceil(std::sqrt(starts.size()))));
  DenseSet<unsigned> keptInputs;
  for (auto [at, start] : llvm::enumerate(starts))
    if (at % stride == 0)
      keptInputs.insert(blocks[start].inputs.begin(),
                        blocks[start].inputs.end());
  SmallVector<unsigned> recomputed;
  for (unsigned index = 0; index < candidates.size(); ++index)
    if (!keptInputs.contains(index))
      recomputed.push_back(index);
  return recomputed;
}

SmallVector<unsigned>
RecomputePlanner::getBaselineSet(RecomputeStrategy strategy) const {
  if (strategy == RecomputeStrategy::Selective)
    return getAttentionCore();
  if (strategy == RecomputeStrategy::Full ||
      strategy == RecomputeStrategy::Sqrt)
    return getCheckpointPlan(getLayerStarts(),
                             strategy == RecomputeStrategy::Sqrt);
  return {};
}

RecomputePlan RecomputePlanner::baseline(RecomputeStrategy strategy) {
  auto start = std::chrono::steady_clock::now();
  RecomputePlan plan = finish(getBaselineSet(strategy));
  plan.solveSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return plan;
}

std::vector<SmallVector<unsigned>>
RecomputePlanner::solveFrontierDP(bool cautious) {
  // The state: the kept units of the blocks so far (m) and the largest
  // model peak so far (p >= m), in units of the largest peak the model can
  // reach; the value, the least extra time.
  constexpr int64_t kUnits = 256;
  int64_t maxKept = 0, maxExtra = 0;
  for (const Block &block : blocks) {
    int64_t kept = 0;
    for (const Option &option : optionsOf[block.representative]) {
      kept = std::max(kept, option.kept);
      maxExtra = std::max(maxExtra, cautious ? option.extraAll : option.extra);
    }
    maxKept += kept;
  }
  int64_t unit =
      std::max<int64_t>(1, (maxKept + maxExtra + kUnits - 1) / kUnits);
  auto units = [&](int64_t bytes) { return (bytes + unit - 1) / unit; };
  int64_t side = units(maxKept) + units(maxExtra) + 2;
  auto index = [&](int64_t m, int64_t p) { return m * side + p; };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> best(side * side, kInf), next(side * side);
  best[index(0, 0)] = 0;
  // choice[b][state]: the option of block b that reached it and the state
  // before.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> choice(blocks.size());
  for (auto [at, block] : llvm::enumerate(blocks)) {
    const std::vector<Option> &options = optionsOf[block.representative];
    std::fill(next.begin(), next.end(), kInf);
    choice[at].assign(side * side, {-1, -1});
    for (int64_t m = 0; m < side; ++m)
      for (int64_t p = m; p < side; ++p) {
        double time = best[index(m, p)];
        if (time == kInf)
          continue;
        for (auto [o, option] : llvm::enumerate(options)) {
          int64_t kept = m + units(option.kept);
          int64_t peak = std::max(
              p, kept + units(cautious ? option.extraAll : option.extra));
          if (peak >= side)
            continue;
          int64_t to = index(kept, peak);
          if (time + option.time < next[to]) {
            next[to] = time + option.time;
            choice[at][to] = {static_cast<int32_t>(o),
                              static_cast<int32_t>(index(m, p))};
          }
        }
      }
    best.swap(next);
  }
  // The staircase: by increasing peak, each state cheaper than every one
  // with a smaller peak.
  std::vector<SmallVector<unsigned>> plans;
  double cheapest = kInf;
  for (int64_t p = 0; p < side; ++p) {
    int64_t end = -1;
    for (int64_t m = 0; m <= p; ++m)
      if (best[index(m, p)] < cheapest &&
          (end < 0 || best[index(m, p)] < best[end]))
        end = index(m, p);
    if (end < 0)
      continue;
    cheapest = best[end];
    plans.push_back(backtrack(choice, end));
  }
  return plans;
}

std::vector<RecomputePlan> RecomputePlanner::computeFrontier(unsigned points) {
  // The plans solve chooses from, and the step as it is.
  std::vector<RecomputePlan> plans;
  plans.push_back(finish({}));
  for (const SmallVector<unsigned> &set : getPlanPool())
    plans.push_back(finish(set));
  // What the simulator says: the plans no other beats on both.
  llvm::sort(plans, [](const RecomputePlan &a, const RecomputePlan &b) {
    return std::tie(a.peakBytes, a.extraTime) <
           std::tie(b.peakBytes, b.extraTime);
  });
  std::vector<RecomputePlan> frontier;
  for (RecomputePlan &plan : plans)
    if (frontier.empty() || plan.extraTime < frontier.back().extraTime)
      frontier.push_back(std::move(plan));
  if (frontier.size() <= static_cast<size_t>(points) + 1 || points == 0)
    return frontier;
  std::vector<RecomputePlan> thinned;
  for (unsigned at = 0; at <= points; ++at)
    thinned.push_back(std::move(
        frontier[static_cast<size_t>(at) * (frontier.size() - 1) / points]));
  return thinned;
}
