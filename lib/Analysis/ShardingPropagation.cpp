//===- ShardingPropagation.cpp - shardings of every value ----------------===//
//
// A Shardy-style propagation over factor-based rules. Annotations are
// processed priority by priority (lower first): in the round of priority p,
// only layouts of priority <= p propose axes, so a user annotation settles
// its region before data parallelism, which settles before tensor
// parallelism and ZeRO. Within a round, every op resolves each factor to the
// strongest proposal and fills the open, unsplit dimensions of its operands
// and results; layouts only grow, so the worklist reaches a fixed point.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/ShardingPropagation.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

//===----------------------------------------------------------------------===//
// TensorLayout
//===----------------------------------------------------------------------===//

TensorLayout TensorLayout::getUnset(int64_t rank) {
  TensorLayout layout;
  layout.dims.resize(rank);
  layout.open.assign(rank, true);
  return layout;
}

TensorLayout TensorLayout::fromAttr(ShardingAttr sharding, const Mesh &mesh) {
  TensorLayout layout;
  for (unsigned dim = 0, e = sharding.getRank(); dim < e; ++dim) {
    AxisList axes;
    for (StringRef axis : sharding.getDimAxes(dim))
      axes.push_back(*mesh.getAxisIndex(axis));
    layout.dims.push_back(axes);
    layout.open.push_back(sharding.isOpen(dim));
  }
  layout.priority = sharding.hasPriority() ? sharding.getPriority() : 0;
  return layout;
}

ShardingAttr TensorLayout::toAttr(MLIRContext *context, const Mesh &mesh,
                                  ArrayRef<unsigned> unreduced,
                                  bool withPriority) const {
  SmallVector<Attribute> dimAttrs;
  for (const AxisList &axes : dims)
    dimAttrs.push_back(ArrayAttr::get(
        context, llvm::map_to_vector(axes, [&](unsigned axis) -> Attribute {
          return StringAttr::get(context, mesh.axisNames[axis]);
        })));
  SmallVector<Attribute> unreducedAttrs =
      llvm::map_to_vector(unreduced, [&](unsigned axis) -> Attribute {
        return StringAttr::get(context, mesh.axisNames[axis]);
      });
  SmallVector<bool> openDims =
      withPriority ? open : SmallVector<bool>(dims.size(), false);
  return ShardingAttr::get(context, FlatSymbolRefAttr::get(context, mesh.name),
                           ArrayAttr::get(context, dimAttrs), openDims,
                           ArrayAttr::get(context, unreducedAttrs),
                           withPriority && priority != kUnsetPriority ? priority
                                                                      : -1);
}

bool TensorLayout::hasAxes() const {
  return llvm::any_of(dims, [](const AxisList &axes) { return !axes.empty(); });
}

std::string tgc::describeLayout(const TensorLayout &layout, const Mesh &mesh) {
  std::string text = "[";
  for (auto [index, axes] : llvm::enumerate(layout.dims)) {
    if (index)
      text += ", ";
    text += "{";
    text +=
        llvm::join(llvm::map_range(axes,
                                   [&](unsigned axis) {
                                     return "\"" + mesh.axisNames[axis] + "\"";
                                   }),
                   ", ");
    text += "}";
  }
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Factors
//===----------------------------------------------------------------------===//

namespace {
struct Proposal {
  AxisList axes;
  int64_t priority;
  int64_t source;
  int64_t bytes;
};
} // namespace

static std::string describeSource(int64_t source) {
  return source >= 0 ? "operand #" + std::to_string(source)
                     : "result #" + std::to_string(-1 - source);
}

static std::string describeAxes(const AxisList &axes, const Mesh &mesh) {
  return "{" +
         llvm::join(llvm::map_range(axes,
                                    [&](unsigned axis) {
                                      return "\"" + mesh.axisNames[axis] + "\"";
                                    }),
                    ", ") +
         "}";
}

/// The axes each factor of one dimension takes from the dimension's axes:
/// the major factor takes axes while they divide it, and the next factor
/// gets axes only once the previous one is split completely.
static void
assignDimAxes(ArrayRef<int64_t> factors, ArrayRef<unsigned> axes,
              const ShardingRule &rule, const Mesh &mesh,
              function_ref<void(int64_t factor, AxisList axes)> assign) {
  size_t next = 0;
  for (int64_t factor : factors) {
    int64_t size = rule.factorSizes[factor];
    int64_t product = 1;
    AxisList taken;
    while (next < axes.size() &&
           size % (product * mesh.axisSizes[axes[next]]) == 0) {
      product *= mesh.axisSizes[axes[next]];
      taken.push_back(axes[next++]);
    }
    if (!taken.empty())
      assign(factor, taken);
    if (product != size || next == axes.size())
      return;
  }
}

static int64_t getProduct(const AxisList &axes, const Mesh &mesh) {
  int64_t product = 1;
  for (unsigned axis : axes)
    product *= mesh.axisSizes[axis];
  return product;
}

SmallVector<FactorChoice>
tgc::resolveFactors(Operation *op, const ShardingRule &rule,
                    ArrayRef<const TensorLayout *> operands,
                    ArrayRef<const TensorLayout *> results, int64_t maxPriority,
                    const Mesh &mesh,
                    SmallVectorImpl<ShardingConflict> *conflicts) {
  int64_t numFactors = rule.getNumFactors();
  SmallVector<SmallVector<Proposal>> proposals(numFactors);
  auto collect = [&](const TensorLayout *layout,
                     ArrayRef<SmallVector<int64_t, 1>> dimFactors,
                     int64_t source, Type type) {
    if (!layout || layout->priority > maxPriority)
      return;
    int64_t bytes = getTensorByteSize(type);
    for (auto [dim, factors] : llvm::enumerate(dimFactors))
      if (dim < layout->dims.size() && !layout->dims[dim].empty())
        assignDimAxes(factors, layout->dims[dim], rule, mesh,
                      [&](int64_t factor, AxisList axes) {
                        proposals[factor].push_back(
                            {axes, layout->priority, source, bytes});
                      });
  };
  // A constant (an op without operands) is sliced to whatever its readers
  // want; it proposes nothing, or one shared constant would carry a layout
  // from one layer to another.
  for (auto [index, layout] : llvm::enumerate(operands)) {
    Operation *def = op->getOperand(index).getDefiningOp();
    if (def && def->getNumOperands() == 0)
      continue;
    collect(layout, rule.operandFactors[index], index,
            op->getOperand(index).getType());
  }
  for (auto [index, layout] : llvm::enumerate(results))
    collect(layout, rule.resultFactors[index], -1 - int64_t(index),
            op->getResult(index).getType());

  SmallVector<FactorChoice> choices(numFactors);
  // The axes of a choice that a weaker proposal's refinement added, and
  // that proposal's priority: they claim their axes at that priority.
  SmallVector<size_t> winnerAxes(numFactors, 0);
  SmallVector<int64_t> refinedPriority(numFactors,
                                       TensorLayout::kUnsetPriority);
  for (int64_t factor = 0; factor < numFactors; ++factor) {
    if (rule.factorKinds[factor] == FactorKind::NeedReplication ||
        proposals[factor].empty())
      continue;
    const Proposal *best = &proposals[factor].front();
    for (const Proposal &proposal : proposals[factor])
      if (proposal.priority < best->priority ||
          (proposal.priority == best->priority && proposal.bytes > best->bytes))
        best = &proposal;
    // A weaker proposal that splits further along the same axes (ZeRO's
    // [tp, dp] state next to its [tp] parameter) refines the winner.
    const Proposal *refined = best;
    for (const Proposal &proposal : proposals[factor])
      if (proposal.axes.size() > refined->axes.size() &&
          llvm::equal(refined->axes,
                      ArrayRef(proposal.axes).take_front(refined->axes.size())))
        refined = &proposal;
    choices[factor] = {refined->axes, best->priority, best->source};
    winnerAxes[factor] = best->axes.size();
    refinedPriority[factor] = refined->priority;
    if (!conflicts)
      continue;
    for (const Proposal &proposal : proposals[factor]) {
      if (llvm::equal(ArrayRef(refined->axes).take_front(proposal.axes.size()),
                      proposal.axes))
        continue;
      std::string why =
          proposal.priority != best->priority
              ? "its priority " + std::to_string(best->priority) +
                    " is stronger than " + std::to_string(proposal.priority)
              : "the same priority; resharding the other side moves fewer "
                "bytes (" +
                    std::to_string(proposal.bytes) +
                    " <= " + std::to_string(best->bytes) + ")";
      conflicts->push_back(
          {op, "factor of size " + std::to_string(rule.factorSizes[factor]) +
                   ": " + describeAxes(best->axes, mesh) + " from " +
                   describeSource(best->source) + " wins over " +
                   describeAxes(proposal.axes, mesh) + " from " +
                   describeSource(proposal.source) + ": " + why});
    }
  }

  // Each axis in at most one factor: the stronger claim keeps it. A
  // choice's winning axes claim at the winner's priority, the axes a
  // refinement added at the refining proposal's: a weaker [tp, dp] does not
  // take tp from a factor that a stronger proposal splits over it.
  struct Claim {
    int64_t priority, factor;
    size_t begin;
  };
  SmallVector<Claim> claims;
  for (int64_t factor = 0; factor < numFactors; ++factor) {
    claims.push_back({choices[factor].priority, factor, 0});
    if (choices[factor].axes.size() > winnerAxes[factor])
      claims.push_back({refinedPriority[factor], factor, winnerAxes[factor]});
  }
  llvm::stable_sort(claims, [](const Claim &a, const Claim &b) {
    return a.priority < b.priority;
  });
  llvm::SmallDenseMap<unsigned, int64_t> owner;
  for (const Claim &claim : claims) {
    int64_t factor = claim.factor;
    AxisList &axes = choices[factor].axes;
    size_t end = claim.begin == 0 ? std::min(axes.size(), winnerAxes[factor])
                                  : axes.size();
    for (size_t i = claim.begin; i < end; ++i) {
      auto [it, inserted] = owner.try_emplace(axes[i], factor);
      if (inserted)
        continue;
      if (conflicts)
        conflicts->push_back(
            {op, "axis \"" + mesh.axisNames[axes[i]] +
                     "\" already splits a factor of size " +
                     std::to_string(rule.factorSizes[it->second]) +
                     "; the factor of size " +
                     std::to_string(rule.factorSizes[factor]) + " from " +
                     describeSource(choices[factor].source) +
                     " stays unsplit on it"});
      // The axes after it were not claimed yet (a factor's claims come in
      // order): they stay free for other factors.
      axes.resize(i);
      break;
    }
  }

  // A minor factor of a dimension can only be split when the factors before
  // it in every dimension it shares are split completely; otherwise no
  // tensor could hold the decision as blocks.
  bool changed = true;
  while (changed) {
    changed = false;
    auto check = [&](ArrayRef<SmallVector<int64_t, 1>> dims) {
      for (const auto &factors : dims) {
        bool complete = true;
        for (int64_t factor : factors) {
          AxisList &axes = choices[factor].axes;
          if (!complete && !axes.empty()) {
            axes.clear();
            changed = true;
          }
          complete =
              complete && getProduct(axes, mesh) == rule.factorSizes[factor];
        }
      }
    };
    for (const auto &dims : rule.operandFactors)
      check(dims);
    for (const auto &dims : rule.resultFactors)
      check(dims);
  }
  return choices;
}

TensorLayout tgc::projectFactors(ArrayRef<SmallVector<int64_t, 1>> dimFactors,
                                 const ShardingRule &rule,
                                 ArrayRef<FactorChoice> factors) {
  TensorLayout layout = TensorLayout::getUnset(dimFactors.size());
  for (auto [dim, list] : llvm::enumerate(dimFactors))
    for (int64_t factor : list)
      llvm::append_range(layout.dims[dim], factors[factor].axes);
  return layout;
}

void tgc::restrictRuleForPartitioning(Operation *op, ShardingRule &rule) {
  // A constant is the same on every device: each reader slices what it
  // needs.
  if (op->getNumOperands() == 0) {
    for (FactorKind &kind : rule.factorKinds)
      kind = FactorKind::NeedReplication;
    return;
  }
  if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
    ruled.restrictForPartitioning(rule);
}

//===----------------------------------------------------------------------===//
// ShardingPropagation
//===----------------------------------------------------------------------===//

static int64_t getRank(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? type.getRank() : 0;
}

ShardingPropagation::ShardingPropagation(func::FuncOp function,
                                         const Mesh &mesh)
    : function(function), mesh(mesh) {}

const TensorLayout &ShardingPropagation::getLayout(Value value) {
  auto it = layouts.find(value);
  if (it != layouts.end())
    return it->second;
  return layouts.try_emplace(value, TensorLayout::getUnset(getRank(value)))
      .first->second;
}

void ShardingPropagation::annotate(Value value, TensorLayout layout) {
  layouts[value] = std::move(layout);
  annotated.insert(value);
  pendingSeeds.push_back(value);
}

LogicalResult ShardingPropagation::seed() {
  for (BlockArgument arg : function.getArguments())
    if (ShardingAttr sharding = getArgSharding(function, arg.getArgNumber()))
      annotate(arg, TensorLayout::fromAttr(sharding, mesh));
  WalkResult walk = function.walk([&](Operation *op) {
    auto shardings = op->getAttrOfType<ArrayAttr>(kShardingsAttrName);
    if (!shardings)
      return WalkResult::advance();
    if (shardings.size() != op->getNumResults()) {
      op->emitError() << "'" << kShardingsAttrName
                      << "' needs one sharding per result";
      return WalkResult::interrupt();
    }
    for (auto [result, attr] : llvm::zip(op->getResults(), shardings)) {
      auto sharding = dyn_cast<ShardingAttr>(attr);
      if (sharding && sharding.hasPriority())
        annotate(result, TensorLayout::fromAttr(sharding, mesh));
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (unsigned index = 0, e = function.getNumResults(); index < e; ++index) {
    auto type = dyn_cast<RankedTensorType>(function.getResultTypes()[index]);
    TensorLayout layout = TensorLayout::getUnset(type ? type.getRank() : 0);
    layout.open.assign(layout.dims.size(), false);
    layout.priority = 0;
    if (ShardingAttr sharding = getResultSharding(function, index)) {
      layout = TensorLayout::fromAttr(sharding, mesh);
    } else if (auto alias = function.getResultAttrOfType<IntegerAttr>(
                   index, TGDialect::kAliasesAttrName)) {
      const TensorLayout &arg = getLayout(function.getArgument(alias.getInt()));
      layout.dims = arg.dims;
      layout.priority =
          arg.priority == TensorLayout::kUnsetPriority ? 0 : arg.priority;
    }
    resultLayouts.push_back(layout);
  }
  return success();
}

bool ShardingPropagation::update(Value value, const TensorLayout &proposed,
                                 int64_t priority) {
  if (proposed.dims.empty())
    return false;
  TensorLayout &layout =
      layouts.try_emplace(value, TensorLayout::getUnset(getRank(value)))
          .first->second;
  std::set<unsigned> used;
  for (const AxisList &axes : layout.dims)
    used.insert(axes.begin(), axes.end());
  bool changed = false;
  for (auto [dim, axes] : llvm::enumerate(layout.dims)) {
    const AxisList &next = proposed.dims[dim];
    if (!layout.open[dim] || next.size() <= axes.size() ||
        !llvm::equal(axes, ArrayRef(next).take_front(axes.size())))
      continue;
    // An axis splits one dimension of a tensor at most.
    if (llvm::any_of(ArrayRef(next).drop_front(axes.size()),
                     [&](unsigned axis) { return used.count(axis); }))
      continue;
    used.insert(next.begin() + axes.size(), next.end());
    axes = next;
    changed = true;
  }
  // A layout is as strong as its weakest part: a gradient split over tp
  // (priority 2) and then over dp by ZeRO (3) yields to the batch split (1)
  // of the matmul that produces it.
  if (changed && (layout.priority == TensorLayout::kUnsetPriority ||
                  layout.priority < priority))
    layout.priority = priority;
  return changed;
}

void ShardingPropagation::pushNeighbors(
    Value value, SmallVectorImpl<Operation *> &worklist) {
  if (Operation *def = value.getDefiningOp())
    worklist.push_back(def);
  for (Operation *user : value.getUsers())
    worklist.push_back(user);
}

SmallVector<FactorChoice>
ShardingPropagation::resolveOpFactors(Operation *op, const ShardingRule &rule,
                                      int64_t maxPriority,
                                      SmallVectorImpl<ShardingConflict> *out) {
  // Every layout first, then pointers: an insertion may move the others.
  for (Value operand : op->getOperands())
    (void)getLayout(operand);
  for (Value result : op->getResults())
    (void)getLayout(result);
  SmallVector<const TensorLayout *> operands, results;
  for (Value operand : op->getOperands())
    operands.push_back(&getLayout(operand));
  for (Value result : op->getResults())
    results.push_back(&getLayout(result));
  return resolveFactors(op, rule, operands, results, maxPriority, mesh, out);
}

void ShardingPropagation::processOp(Operation *op, int64_t maxPriority,
                                    SmallVectorImpl<Operation *> &worklist) {
  if (lastOp && op != lastOp && !op->isBeforeInBlock(lastOp))
    return;
  if (isa<func::ReturnOp>(op)) {
    // Without seed(), the results constrain nothing (the presets' use).
    for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
      if (index >= resultLayouts.size())
        break;
      const TensorLayout &required = resultLayouts[index];
      if (required.priority <= maxPriority && required.hasAxes() &&
          update(operand, required, required.priority))
        pushNeighbors(operand, worklist);
    }
    return;
  }
  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruled)
    return;
  ShardingRule rule = ruled.getShardingRule();
  restrictRuleForPartitioning(op, rule);
  SmallVector<FactorChoice> choices =
      resolveOpFactors(op, rule, maxPriority, nullptr);
  if (llvm::all_of(choices,
                   [](const FactorChoice &c) { return c.axes.empty(); }))
    return;
  auto propose = [&](Value value,
                     ArrayRef<SmallVector<int64_t, 1>> dimFactors) {
    if (annotated.contains(value) &&
        llvm::none_of(getLayout(value).open, [](bool open) { return open; }))
      return;
    if (update(value, projectFactors(dimFactors, rule, choices), maxPriority))
      pushNeighbors(value, worklist);
  };
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    propose(operand, rule.operandFactors[index]);
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    propose(result, rule.resultFactors[index]);
}

void ShardingPropagation::runRound(int64_t maxPriority,
                                   SmallVectorImpl<Operation *> &initial) {
  llvm::SetVector<Operation *> queue(initial.begin(), initial.end());
  initial.clear();
  size_t next = 0;
  SmallVector<Operation *> pushed;
  while (next < queue.size()) {
    Operation *op = queue[next++];
    processOp(op, maxPriority, pushed);
    for (Operation *other : pushed) {
      // Re-queue an op already processed: a later change may extend it.
      if (queue.contains(other)) {
        if (llvm::find(queue, other) - queue.begin() <
            static_cast<ptrdiff_t>(next)) {
          queue.remove(other);
          --next;
          queue.insert(other);
        }
        continue;
      }
      queue.insert(other);
    }
    pushed.clear();
  }
}

void ShardingPropagation::run() {
  std::set<int64_t> priorities;
  for (Value value : annotated)
    priorities.insert(getLayout(value).priority);
  for (const TensorLayout &layout : resultLayouts)
    if (layout.hasAxes())
      priorities.insert(layout.priority);
  pendingSeeds.clear();
  for (int64_t priority : priorities) {
    SmallVector<Operation *> all;
    function.walk([&](Operation *op) {
      if (op->getParentOp() == function)
        all.push_back(op);
    });
    runRound(priority, all);
  }
}

void ShardingPropagation::runIncremental(int64_t maxPriority) {
  SmallVector<Operation *> worklist;
  for (Value value : pendingSeeds)
    pushNeighbors(value, worklist);
  pendingSeeds.clear();
  runRound(maxPriority, worklist);
}

void ShardingPropagation::writeShardings() {
  MLIRContext *context = function.getContext();
  for (BlockArgument arg : function.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      continue;
    bool isAnnotation = annotated.contains(arg);
    function.setArgAttr(arg.getArgNumber(), kShardingAttrName,
                        getLayout(arg).toAttr(context, mesh, {}, isAnnotation));
  }
  for (auto [index, layout] : llvm::enumerate(resultLayouts))
    function.setResultAttr(index, kShardingAttrName,
                           layout.toAttr(context, mesh));
  conflicts.clear();
  for (Operation &op : function.getBody().front()) {
    if (op.getNumResults() == 0)
      continue;
    SmallVector<Attribute> shardings;
    for (Value result : op.getResults())
      shardings.push_back(getLayout(result).toAttr(context, mesh, {},
                                                   annotated.contains(result)));
    op.setAttr(kShardingsAttrName, ArrayAttr::get(context, shardings));
    SmallVector<int64_t> priorities;
    for (Value result : op.getResults()) {
      int64_t priority = getLayout(result).priority;
      priorities.push_back(priority == TensorLayout::kUnsetPriority ? -1
                                                                    : priority);
    }
    op.setAttr(kShardingPrioritiesAttrName,
               DenseI64ArrayAttr::get(context, priorities));
    if (auto ruled = dyn_cast<ShardingRuleOpInterface>(&op)) {
      ShardingRule rule = ruled.getShardingRule();
      restrictRuleForPartitioning(&op, rule);
      resolveOpFactors(&op, rule, TensorLayout::kUnsetPriority - 1, &conflicts);
    }
  }
}
