//===- FusePeakBound.cpp - tg-fuse's incremental peak check ---------------===//

#include "FusePeakBound.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGInterfaces.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tgc;

static int64_t getByteSize(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? tg::getTensorByteSize(type) : 0;
}

void FusePeakBound::reset(func::FuncOp function,
                          const MemorySimulation &simulation) {
  this->function = function;
  numSlots = simulation.ops.size();
  slotOf.clear();
  for (auto [index, op] : llvm::enumerate(simulation.ops))
    slotOf[op] = index;
  tracked.clear();
  workspaceOf.clear();
  for (const Buffer &buffer : simulation.buffers) {
    size_t index = tracked.size();
    tracked.push_back({buffer.bytes, buffer.start, buffer.end,
                       static_cast<int64_t>(buffer.values.size())});
    if (buffer.workspaceOf)
      workspaceOf[buffer.workspaceOf] = index;
  }
  bufferOf.clear();
  for (auto [value, index] : simulation.bufferOf)
    bufferOf[value] = index;
  aliasedArguments.clear();
  aliasedResults.clear();
  for (unsigned index = 0; index < function.getNumResults(); ++index)
    if (auto alias = function.getResultAttrOfType<IntegerAttr>(
            index, tg::TGDialect::kAliasesAttrName)) {
      aliasedResults.push_back({index, alias.getInt()});
      aliasedArguments.insert(alias.getInt());
    }
  maxOf.assign(4 * std::max<size_t>(numSlots, 1), 0);
  lazy.assign(maxOf.size(), 0);
  for (auto [index, live] : llvm::enumerate(simulation.timeline))
    add(index, index, getTotal(live));
}

void FusePeakBound::addNode(size_t node, size_t lo, size_t hi, int64_t begin,
                            int64_t end, int64_t delta) {
  if (end < static_cast<int64_t>(lo) || begin > static_cast<int64_t>(hi))
    return;
  if (begin <= static_cast<int64_t>(lo) && static_cast<int64_t>(hi) <= end) {
    lazy[node] += delta;
    maxOf[node] += delta;
    return;
  }
  size_t mid = (lo + hi) / 2;
  addNode(2 * node, lo, mid, begin, end, delta);
  addNode(2 * node + 1, mid + 1, hi, begin, end, delta);
  maxOf[node] = lazy[node] + std::max(maxOf[2 * node], maxOf[2 * node + 1]);
}

void FusePeakBound::add(int64_t begin, int64_t end, int64_t delta) {
  if (numSlots == 0 || delta == 0 || begin > end)
    return;
  addNode(1, 0, numSlots - 1, begin, end, delta);
  addLog.emplace_back(begin, end, delta);
}

void FusePeakBound::setTracked(size_t index, Tracked value) {
  if (index < trackedSize)
    trackedLog.emplace_back(index, tracked[index]);
  tracked[index] = value;
}

size_t FusePeakBound::newTracked(Tracked value) {
  tracked.push_back(value);
  add(value.start, value.end, value.bytes);
  return tracked.size() - 1;
}

void FusePeakBound::prepare(ArrayRef<Operation *> members,
                            ArrayRef<Operation *> clones) {
  this->members.assign(members.begin(), members.end());
  memberResults.clear();
  slot = 0;
  for (Operation *member : members) {
    memberResults[member] = llvm::to_vector_of<Value, 1>(member->getResults());
    auto it = slotOf.find(member);
    slot = std::max(slot, it == slotOf.end() ? int64_t(numSlots) : it->second);
  }
  // An unused splat constant lives at its own position, which may come
  // before its old first use.
  splatClones.clear();
  for (Operation *clone : clones) {
    ElementsAttr value;
    if (clone->getNumResults() == 1 &&
        matchPattern(clone->getResult(0), m_Constant(&value)) &&
        isa<SplatElementsAttr>(value))
      splatClones.push_back(clone);
  }
  addLog.clear();
  trackedLog.clear();
  trackedSize = tracked.size();
  newBuffers.clear();
  fusionWorkspace = ~size_t(0);
}

bool FusePeakBound::apply(
    tg::FusionOp fusion,
    const llvm::DenseMap<Operation *, Operation *> &copyOf) {
  if (slot >= static_cast<int64_t>(numSlots))
    return false;
  for (Operation *clone : splatClones) {
    if (!clone->use_empty())
      continue;
    auto it = slotOf.find(clone);
    if (it == slotOf.end())
      return false;
    newTracked({getByteSize(clone->getResult(0)), it->second, it->second, 0});
  }
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();
  int64_t last = static_cast<int64_t>(numSlots) - 1;
  // The inputs (operands and values captured by nested ops) are read at the
  // region's position now.
  DenseSet<Value> inputs;
  fusion.getBody().walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      Region *region = operand.getParentRegion();
      if (region == &fusion.getBody() || fusion.getBody().isAncestor(region))
        continue;
      inputs.insert(operand);
    }
  });
  for (Value input : fusion.getInputs())
    inputs.insert(input);
  for (Value input : inputs) {
    // A read of an argument at or after the op writing it in place stops
    // that write in place.
    if (auto arg = dyn_cast<BlockArgument>(input))
      if (aliasedArguments.contains(arg.getArgNumber()))
        for (auto [index, alias] : aliasedResults) {
          if (alias != static_cast<int64_t>(arg.getArgNumber()))
            continue;
          Operation *def = terminator->getOperand(index).getDefiningOp();
          Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
          auto it = top ? slotOf.find(top) : slotOf.end();
          if (it == slotOf.end() || slot >= it->second)
            return false;
        }
    auto it = bufferOf.find(input);
    if (it == bufferOf.end())
      return false;
    Tracked buffer = tracked[it->second];
    if (buffer.end < slot) {
      add(buffer.end + 1, slot, buffer.bytes);
      buffer.end = slot;
      setTracked(it->second, buffer);
    }
  }
  if (auto costed = dyn_cast<tg::CostOpInterface>(fusion.getOperation())) {
    int64_t workspace = costed.getCost().workspaceBytes;
    if (workspace > 0)
      fusionWorkspace = newTracked({workspace, slot, slot, 0});
  }
  // The members' values and workspaces leave the step.
  for (Operation *member : members) {
    if (auto it = workspaceOf.find(member); it != workspaceOf.end()) {
      Tracked buffer = tracked[it->second];
      add(buffer.start, buffer.end, -buffer.bytes);
      buffer.bytes = 0;
      setTracked(it->second, buffer);
    }
    for (Value value : memberResults[member]) {
      auto it = bufferOf.find(value);
      if (it == bufferOf.end())
        return false;
      Tracked buffer = tracked[it->second];
      --buffer.refs;
      setTracked(it->second, buffer);
    }
  }
  // Each output takes its old value's buffer if nothing else holds it.
  DenseMap<Operation *, Operation *> originalOf;
  for (auto [original, copy] : copyOf)
    originalOf[copy] = original;
  auto yield = cast<tg::YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [result, yielded] :
       llvm::zip(fusion.getResults(), yield.getValues())) {
    int64_t end = slot;
    for (OpOperand &use : result.getUses()) {
      Operation *top = body.findAncestorOpInBlock(*use.getOwner());
      if (top == terminator) {
        if (llvm::any_of(aliasedResults, [&](auto entry) {
              return entry.first == use.getOperandNumber();
            }))
          return false; // written in place, or not, anew
        end = last;
        continue;
      }
      auto it = top ? slotOf.find(top) : slotOf.end();
      if (it == slotOf.end())
        return false;
      end = std::max(end, it->second);
    }
    auto copy = dyn_cast<OpResult>(yielded);
    Operation *original = copy ? originalOf.lookup(copy.getOwner()) : nullptr;
    if (!original)
      return false;
    Value old = memberResults[original][copy.getResultNumber()];
    size_t index = bufferOf.lookup(old);
    Tracked buffer = tracked[index];
    if (buffer.refs == 0 && buffer.start <= slot && end <= buffer.end &&
        buffer.bytes >= getByteSize(result)) {
      buffer.refs = 1;
      setTracked(index, buffer);
      newBuffers.emplace_back(result, index);
      continue;
    }
    newBuffers.emplace_back(result,
                            newTracked({getByteSize(result), slot, end, 1}));
  }
  // Buffers no value holds any more.
  for (Operation *member : members)
    for (Value value : memberResults[member]) {
      size_t index = bufferOf.lookup(value);
      Tracked buffer = tracked[index];
      if (buffer.refs == 0 && buffer.bytes != 0) {
        add(buffer.start, buffer.end, -buffer.bytes);
        buffer.bytes = 0;
        setTracked(index, buffer);
      }
    }
  return true;
}

bool FusePeakBound::fitsUnder(
    tg::FusionOp fusion, const llvm::DenseMap<Operation *, Operation *> &copyOf,
    int64_t limit) {
  if (!apply(fusion, copyOf) || maxOf[1] > limit)
    return false;
  ++numProved;
  return true;
}

void FusePeakBound::commit() {
  Operation *fusion = nullptr;
  for (auto [value, index] : newBuffers) {
    fusion = value.getDefiningOp();
    bufferOf[value] = index;
  }
  for (Operation *member : members) {
    for (Value value : memberResults[member])
      bufferOf.erase(value);
    slotOf.erase(member);
    workspaceOf.erase(member);
  }
  if (fusion) {
    slotOf[fusion] = slot;
    if (fusionWorkspace != ~size_t(0))
      workspaceOf[fusion] = fusionWorkspace;
  }
}

void FusePeakBound::rollback(
    const llvm::DenseMap<Operation *, Operation *> &copyOf) {
  for (auto &[begin, end, delta] : llvm::reverse(addLog))
    addNode(1, 0, numSlots - 1, begin, end, -delta);
  for (auto &[index, value] : llvm::reverse(trackedLog))
    tracked[index] = value;
  tracked.resize(trackedSize);
  // The copies are the members now.
  for (Operation *member : members) {
    Operation *copy = copyOf.lookup(member);
    if (auto it = slotOf.find(member); it != slotOf.end()) {
      int64_t at = it->second;
      slotOf.erase(it);
      slotOf[copy] = at;
    }
    if (auto it = workspaceOf.find(member); it != workspaceOf.end()) {
      size_t index = it->second;
      workspaceOf.erase(it);
      workspaceOf[copy] = index;
    }
    for (auto [number, value] : llvm::enumerate(memberResults[member]))
      if (auto it = bufferOf.find(value); it != bufferOf.end()) {
        size_t index = it->second;
        bufferOf.erase(it);
        bufferOf[copy->getResult(number)] = index;
      }
  }
}
