//===- MemorySimulator.cpp - exact live memory of a step ------------------===//

#include "tgc/Analysis/MemorySimulator.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGInterfaces.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

StringRef tgc::stringifyPhase(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Optimizer:
    return "optimizer";
  }
  return "";
}

StringRef tgc::stringifyMemoryKind(MemoryKind kind) {
  static constexpr StringLiteral names[kNumMemoryKinds] = {
      "params",    "optimizer_state", "inputs",    "constants",
      "gradients", "activations",     "transient", "workspace"};
  return names[static_cast<unsigned>(kind)];
}

int64_t tgc::getTotal(const MemoryBreakdown &breakdown) {
  int64_t total = 0;
  for (int64_t bytes : breakdown)
    total += bytes;
  return total;
}

void tgc::forEachProducer(Operation *op, Block &body,
                          function_ref<void(Operation *)> callback) {
  auto visit = [&](Value operand) {
    if (Operation *def = operand.getDefiningOp())
      if (Operation *top = body.findAncestorOpInBlock(*def))
        if (top != op)
          callback(top);
  };
  for (Value operand : op->getOperands())
    visit(operand);
  // Values a region captures from above are read by the op as well.
  op->walk([&](Operation *nested) {
    if (nested != op)
      for (Value operand : nested->getOperands())
        visit(operand);
  });
}

/// Marks `roots` and every top-level op they depend on with `phase`, unless
/// already marked.
static void markSlice(ArrayRef<Operation *> roots, Block &body, Phase phase,
                      DenseMap<Operation *, Phase> &phases) {
  SmallVector<Operation *> worklist(roots);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!phases.try_emplace(op, phase).second)
      continue;
    forEachProducer(op, body, [&](Operation *producer) {
      if (!phases.count(producer))
        worklist.push_back(producer);
    });
  }
}

StepStructure StepStructure::compute(func::FuncOp function) {
  StepStructure structure;
  if (function.isExternal())
    return structure;
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();
  SmallVector<Operation *> forwardRoots, gradientRoots;
  bool hasLoss = false;
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    std::optional<tg::Role> role = tg::getResultRole(function, index);
    hasLoss |= role == tg::Role::Loss;
    if (role == tg::Role::Grad)
      structure.gradients.insert(value);
    Operation *def = value.getDefiningOp();
    if (!def)
      continue;
    if (role == tg::Role::Loss || role == tg::Role::Output)
      forwardRoots.push_back(def);
    else if (role == tg::Role::Grad)
      gradientRoots.push_back(def);
  }
  function.walk([&](tg::OptimizerOpInterface update) {
    Value grad = update.getParamGrad();
    // Inside a multi-tensor region, the gradient is the region's input.
    if (auto arg = dyn_cast<BlockArgument>(grad))
      if (auto fusion = dyn_cast<tg::FusionOp>(arg.getOwner()->getParentOp()))
        grad = fusion.getInputs()[arg.getArgNumber()];
    structure.gradients.insert(grad);
    // Partitioned, the gradient a device updates with is its slice of the
    // all-reduced gradient (ZeRO-1) or the reduce-scattered one (ZeRO-2):
    // the tensors these collectives read are the gradient as well.
    for (Operation *def = grad.getDefiningOp();
         isa_and_nonnull<shard::AllSliceOp, shard::AllReduceOp,
                         shard::ReduceScatterOp>(def);
         def = def->getOperand(0).getDefiningOp())
      structure.gradients.insert(def->getOperand(0));
    if (Operation *def = grad.getDefiningOp())
      if (Operation *top = body.findAncestorOpInBlock(*def))
        gradientRoots.push_back(top);
  });
  if (!hasLoss)
    return structure; // an inference graph: all forward
  markSlice(forwardRoots, body, Phase::Forward, structure.phases);
  markSlice(gradientRoots, body, Phase::Backward, structure.phases);
  for (Operation &op : body.without_terminator())
    structure.phases.try_emplace(&op, Phase::Optimizer);
  return structure;
}

bool tgc::isViewOp(Operation *op) {
  auto costed = dyn_cast<tg::CostOpInterface>(op);
  if (!costed || op->getNumOperands() != 1 || op->getNumResults() != 1 ||
      op->getNumRegions() != 0)
    return false;
  auto operandType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return operandType && resultType &&
         tg::getTensorByteSize(operandType) ==
             tg::getTensorByteSize(resultType) &&
         costed.getCost().bytesMoved() == 0;
}

static int64_t getByteSize(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? tg::getTensorByteSize(type) : 0;
}

static MemoryKind getArgumentKind(std::optional<tg::Role> role) {
  if (role == tg::Role::Param)
    return MemoryKind::Params;
  if (role == tg::Role::State || role == tg::Role::Hyper)
    return MemoryKind::OptimizerState;
  return MemoryKind::Inputs;
}

namespace tgc::detail {
/// What the simulation of a function needs that does not depend on the
/// order of its ops, computed once when orders are compared.
struct SimulationFacts {
  SimulationFacts(func::FuncOp function, const DeviceSpec *device);

  struct OpFacts {
    bool view = false;
    bool usesMatrixUnits = false;
    int64_t workspaceBytes = 0;
    /// A constant: dense ones are part of the program, splats are filled
    /// just before their first use.
    bool constant = false;
    bool splat = false;
  };

  func::FuncOp function;
  const DeviceSpec *device;
  StepStructure structure;
  DenseMap<Operation *, OpFacts> ops;
  /// The argument each aliased returned value updates.
  DenseMap<Value, BlockArgument> aliasOf;
  SmallVector<MemoryKind> argumentKinds;
  /// The kind of each top-level op's results with a buffer of their own.
  DenseMap<Value, MemoryKind> resultKinds;
  /// A pipelined function's stages (docs/pipeline.md).
  std::optional<PipelineConfig> pipeline;

  /// The ops of `order` that run on pp device `device`, in order.
  std::vector<Operation *> getDeviceOrder(ArrayRef<Operation *> order,
                                          int64_t device) const {
    std::vector<Operation *> ops;
    for (Operation *op : order)
      if (pipeline->getDeviceOf(op) == device)
        ops.push_back(op);
    return ops;
  }
};
} // namespace tgc::detail

using tgc::detail::SimulationFacts;

SimulationFacts::SimulationFacts(func::FuncOp function,
                                 const DeviceSpec *device)
    : function(function), device(device),
      structure(StepStructure::compute(function)),
      pipeline(PipelineConfig::get(function)) {
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();
  for (Operation &op : body.without_terminator()) {
    OpFacts facts;
    if (auto costed = dyn_cast<tg::CostOpInterface>(&op)) {
      tg::OpCost cost = costed.getCost();
      facts.usesMatrixUnits = cost.matrixFlops > 0;
      facts.workspaceBytes = cost.workspaceBytes;
    }
    facts.view = isViewOp(&op);
    if (matchPattern(&op, m_Constant())) {
      ElementsAttr value;
      facts.constant = true;
      facts.splat = matchPattern(op.getResult(0), m_Constant(&value)) &&
                    isa<SplatElementsAttr>(value);
    }
    ops[&op] = facts;
    Phase phase = structure.getPhase(&op);
    for (Value value : op.getResults()) {
      MemoryKind kind = MemoryKind::Transient;
      if (structure.gradients.contains(value)) {
        kind = MemoryKind::Gradients;
      } else if (phase == Phase::Forward) {
        for (Operation *user : value.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (top && top != terminator &&
              structure.getPhase(top) != Phase::Forward) {
            kind = MemoryKind::Activations;
            break;
          }
        }
      }
      resultKinds[value] = kind;
    }
  }
  for (auto [index, value] : llvm::enumerate(terminator->getOperands()))
    if (auto alias = function.getResultAttrOfType<IntegerAttr>(
            index, tg::TGDialect::kAliasesAttrName))
      if (alias.getInt() >= 0 &&
          alias.getInt() < static_cast<int64_t>(function.getNumArguments()))
        aliasOf[value] = function.getArgument(alias.getInt());
  for (BlockArgument arg : function.getArguments())
    argumentKinds.push_back(
        getArgumentKind(tg::getArgumentRole(function, arg.getArgNumber())));
}

namespace {
/// Builds the buffers of one function for one op order.
class Simulator {
public:
  /// `device`: simulate the ops of `order` as the ones of one pp device of a
  /// pipelined function (-1: the whole function).
  Simulator(const SimulationFacts &facts, ArrayRef<Operation *> order,
            int64_t device = -1)
      : facts(facts), function(facts.function), order(order),
        restricted(device >= 0) {}

  void run(MemorySimulation &result);

private:
  int64_t positionOf(Operation *user) {
    Operation *top = body().findAncestorOpInBlock(*user);
    auto it = position.find(top);
    if (it != position.end())
      return it->second;
    // Uses by the terminator (returned values) last until the end; on one
    // pp device, other devices' ops (a recv reading a send) read nothing
    // here: -1.
    return restricted && top != body().getTerminator() ? -1 : lastIndex();
  }
  Block &body() { return function.getBody().front(); }
  int64_t lastIndex() { return std::max<int64_t>(0, order.size() - 1); }
  /// Where the collective `op` is known to have ended: the first kernel
  /// that consumes its result (through views, which launch nothing, and
  /// other collectives, which run on the communication stream), or the end.
  /// It runs on its own stream from where it stands until then
  /// (StreamTimeline), reading its operands.
  int64_t getCompletion(Operation *op) {
    int64_t completion = lastIndex();
    SmallVector<Value> worklist(op->getResults());
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        Operation *top = body().findAncestorOpInBlock(*user);
        auto it = top ? facts.ops.find(top) : facts.ops.end();
        if (top && ((it != facts.ops.end() && it->second.view) ||
                    getCollectiveKind(top)))
          llvm::append_range(worklist, top->getResults());
        else if (int64_t at = positionOf(user); at >= 0)
          completion = std::min(completion, at);
      }
    }
    return completion;
  }

  size_t addBuffer(Value value, int64_t start, int64_t end, MemoryKind kind) {
    Buffer buffer;
    if (value)
      buffer.values.push_back(value);
    buffer.bytes = value ? getByteSize(value) : 0;
    buffer.start = start;
    buffer.end = end;
    buffer.kind = kind;
    result->buffers.push_back(std::move(buffer));
    size_t index = result->buffers.size() - 1;
    if (value)
      result->bufferOf[value] = index;
    return index;
  }
  /// Whether the aliased result `value` can be written into argument `arg`.
  bool canUpdateInPlace(Value value, BlockArgument arg);
  MemoryKind getResultKind(Value value) const {
    auto it = facts.resultKinds.find(value);
    return it == facts.resultKinds.end() ? MemoryKind::Transient : it->second;
  }

  const SimulationFacts &facts;
  func::FuncOp function;
  ArrayRef<Operation *> order;
  bool restricted = false;
  MemorySimulation *result = nullptr;
  DenseMap<Operation *, int64_t> position;
};

/// Whether the buffer of a collective's operand must outlive the op until
/// the collective is known to have ended: not for a pipeline's send, which
/// keeps its operand until the send only, nor a recv, whose operand (the
/// message in flight) has no storage.
static bool extendsOperands(Operation *op) {
  std::optional<CollectiveKind> kind = getCollectiveKind(op);
  return kind && kind != CollectiveKind::Send && kind != CollectiveKind::Recv;
}
} // namespace

static bool readsElementByElement(Operation *op, Value value);

bool Simulator::canUpdateInPlace(Value value, BlockArgument arg) {
  Operation *def = value.getDefiningOp();
  if (!def || !position.count(def) || facts.ops.lookup(def).view)
    return false;
  int64_t at = position[def];
  bool readsArg = false;
  for (OpOperand &use : arg.getUses()) {
    Operation *top = body().findAncestorOpInBlock(*use.getOwner());
    if (top == def) {
      readsArg = true;
      continue;
    }
    if (positionOf(use.getOwner()) >= at)
      return false;
  }
  // Writing over an operand while reading it is only safe element by element.
  return !readsArg || readsElementByElement(def, arg);
}

/// Whether `op` reads `value` only at the element it writes: an elementwise
/// op, an optimizer update, or a fusion region whose body reads it so.
static bool readsElementByElement(Operation *op, Value value) {
  if (op->hasTrait<OpTrait::Elementwise>() || isa<tg::OptimizerOpInterface>(op))
    return true;
  auto fusion = dyn_cast<tg::FusionOp>(op);
  if (!fusion)
    return false;
  SmallVector<Value> worklist;
  for (auto [input, arg] :
       llvm::zip(fusion.getInputs(), fusion.getBody().getArguments()))
    if (input == value)
      worklist.push_back(arg);
  while (!worklist.empty()) {
    Value next = worklist.pop_back_val();
    for (Operation *user : next.getUsers()) {
      if (isa<tg::YieldOp>(user))
        continue;
      if (!user->hasTrait<OpTrait::Elementwise>() &&
          !isa<tg::OptimizerOpInterface>(user))
        return false;
      llvm::append_range(worklist, user->getResults());
    }
  }
  return true;
}

void Simulator::run(MemorySimulation &out) {
  result = &out;
  for (auto [index, op] : llvm::enumerate(order))
    position[op] = index;
  int64_t last = lastIndex();

  // Arguments, and the results that update them. On one pp device, the
  // arguments its ops read (every device receives them all, each holds its
  // stages').
  DenseSet<Value> read;
  if (restricted)
    for (Operation *op : order)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (isa<BlockArgument>(operand))
            read.insert(operand);
      });
  for (BlockArgument arg : function.getArguments()) {
    if (restricted && !read.contains(arg))
      continue;
    size_t index =
        addBuffer(arg, 0, last, facts.argumentKinds[arg.getArgNumber()]);
    result->buffers[index].argument = arg.getArgNumber();
  }

  // Op results, in order.
  bool usesMatrixUnits = false;
  for (auto [index, op] : llvm::enumerate(order)) {
    int64_t at = index;
    const SimulationFacts::OpFacts &opFacts = facts.ops.find(op)->second;
    usesMatrixUnits |= opFacts.usesMatrixUnits;
    if (opFacts.workspaceBytes > 0) {
      size_t workspace = addBuffer({}, at, at, MemoryKind::Workspace);
      result->buffers[workspace].bytes = opFacts.workspaceBytes;
      result->buffers[workspace].workspaceOf = op;
    }
    if (opFacts.view) {
      auto it = result->bufferOf.find(op->getOperand(0));
      if (it != result->bufferOf.end()) {
        // Copied first: inserting the result may grow the map and move `it`.
        size_t shared = it->second;
        result->bufferOf[op->getResult(0)] = shared;
        result->buffers[shared].values.push_back(op->getResult(0));
        continue;
      }
    }
    if (opFacts.constant) {
      if (!opFacts.splat) {
        addBuffer(op->getResult(0), 0, last, MemoryKind::Constants);
        continue;
      }
      // Filled just before its first use: start at the earliest user.
      int64_t start = at;
      bool used = false;
      for (Operation *user : op->getResult(0).getUsers()) {
        int64_t userAt = positionOf(user);
        if (userAt < 0)
          continue;
        start = used ? std::min(start, userAt) : userAt;
        used = true;
      }
      addBuffer(op->getResult(0), start, start, MemoryKind::Transient);
      continue;
    }
    // A send's result is the value in flight: no storage of its own
    // (docs/pipeline.md); its operand lives until the send.
    if (isa<shard::SendOp>(op))
      continue;
    for (Value value : op->getResults()) {
      auto alias = facts.aliasOf.find(value);
      if (alias != facts.aliasOf.end() &&
          result->bufferOf.count(alias->second) &&
          canUpdateInPlace(value, alias->second)) {
        size_t argBuffer = result->bufferOf[alias->second];
        result->bufferOf[value] = argBuffer;
        result->buffers[argBuffer].values.push_back(value);
        continue;
      }
      addBuffer(value, at, at, getResultKind(value));
    }
  }
  if (usesMatrixUnits && facts.device && facts.device->gemmWorkspaceBytes > 0) {
    size_t workspace = addBuffer({}, 0, last, MemoryKind::Workspace);
    result->buffers[workspace].bytes = facts.device->gemmWorkspaceBytes;
  }

  // Lifetimes: every buffer lives until its last use, and an operand of a
  // collective until the collective is known to have ended, so that no
  // kernel reuses it while the communication stream still reads it; a
  // buffer shared by views takes the strongest kind of its values.
  for (Buffer &buffer : result->buffers) {
    for (Value value : buffer.values) {
      for (Operation *user : value.getUsers()) {
        buffer.end = std::max(buffer.end, positionOf(user));
        Operation *top = body().findAncestorOpInBlock(*user);
        if (top && extendsOperands(top) && position.count(top))
          buffer.end = std::max(buffer.end, getCompletion(top));
      }
      if (buffer.argument < 0 && buffer.kind == MemoryKind::Transient &&
          buffer.values.size() > 1)
        if (value.getDefiningOp())
          buffer.kind = std::min(buffer.kind, getResultKind(value));
    }
  }

  // The timeline, from the lifetimes.
  std::vector<MemoryBreakdown> deltas(order.size() + 1, MemoryBreakdown{});
  for (const Buffer &buffer : result->buffers) {
    if (order.empty())
      break;
    unsigned kind = static_cast<unsigned>(buffer.kind);
    deltas[buffer.start][kind] += buffer.bytes;
    deltas[buffer.end + 1][kind] -= buffer.bytes;
    if (buffer.argument >= 0 || buffer.kind == MemoryKind::Constants)
      result->persistentBytes += buffer.bytes;
  }
  MemoryBreakdown live{};
  result->timeline.reserve(order.size());
  for (size_t index = 0; index < order.size(); ++index) {
    for (unsigned kind = 0; kind < kNumMemoryKinds; ++kind)
      live[kind] += deltas[index][kind];
    result->timeline.push_back(live);
    result->activationBytes =
        std::max(result->activationBytes,
                 live[static_cast<unsigned>(MemoryKind::Activations)]);
    int64_t total = getTotal(live);
    result->area += total;
    if (total > result->peakBytes || result->peakIndex < 0) {
      result->peakBytes = total;
      result->peakIndex = index;
      result->peakBreakdown = live;
    }
  }
  if (order.empty())
    for (const Buffer &buffer : result->buffers)
      result->peakBytes += buffer.bytes;
}

MemorySimulation MemorySimulation::run(func::FuncOp function,
                                       const DeviceSpec *device) {
  MemorySimulation simulation;
  simulation.functionName = function.getName().str();
  if (function.isExternal())
    return simulation;
  for (Operation &op : function.getBody().front().without_terminator())
    simulation.ops.push_back(&op);
  SimulationFacts facts(function, device);
  if (facts.pipeline) {
    // Each pp device simulates its stages' ops; the step's figures are the
    // device with the largest peak's.
    std::vector<MemorySimulation> devices(facts.pipeline->stages);
    int64_t binding = 0;
    for (auto [index, deviceSimulation] : llvm::enumerate(devices)) {
      deviceSimulation.functionName = simulation.functionName;
      deviceSimulation.ops = facts.getDeviceOrder(simulation.ops, index);
      Simulator(facts, deviceSimulation.ops, index).run(deviceSimulation);
      for (Operation *op : deviceSimulation.ops)
        deviceSimulation.phases.push_back(facts.structure.getPhase(op));
      if (deviceSimulation.peakBytes > devices[binding].peakBytes)
        binding = index;
    }
    simulation = devices[binding];
    simulation.devices = std::move(devices);
    simulation.peakDevice = binding;
    return simulation;
  }
  Simulator(facts, simulation.ops).run(simulation);
  for (Operation *op : simulation.ops)
    simulation.phases.push_back(facts.structure.getPhase(op));
  return simulation;
}

std::pair<int64_t, int64_t>
MemorySimulation::peakAndAreaOf(func::FuncOp function,
                                ArrayRef<Operation *> order,
                                const DeviceSpec *device) {
  return OrderSimulator(function, device).getPeakAndArea(order);
}

int64_t MemorySimulation::peakOf(func::FuncOp function,
                                 ArrayRef<Operation *> order,
                                 const DeviceSpec *device) {
  return peakAndAreaOf(function, order, device).first;
}

OrderSimulator::OrderSimulator(func::FuncOp function, const DeviceSpec *device)
    : facts(std::make_unique<SimulationFacts>(function, device)) {}

OrderSimulator::~OrderSimulator() = default;

std::pair<int64_t, int64_t>
OrderSimulator::getPeakAndArea(ArrayRef<Operation *> order) const {
  if (facts->pipeline) {
    // The largest device peak, and the devices' areas together.
    std::pair<int64_t, int64_t> cost{0, 0};
    for (int64_t device = 0; device < facts->pipeline->stages; ++device) {
      std::vector<Operation *> ops = facts->getDeviceOrder(order, device);
      MemorySimulation simulation;
      Simulator(*facts, ops, device).run(simulation);
      cost.first = std::max(cost.first, simulation.peakBytes);
      cost.second += simulation.area;
    }
    return cost;
  }
  MemorySimulation simulation;
  Simulator(*facts, order).run(simulation);
  return {simulation.peakBytes, simulation.area};
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

static std::string formatBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::abs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (unit == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.2f %s", value, units[unit]);
  return text;
}

static std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at " << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn();
  return text;
}

void MemorySimulation::print(raw_ostream &os) const {
  os << "memory of @" << functionName << " (simulated, " << ops.size()
     << " ops in order)\n";
  os << "  peak " << formatBytes(peakBytes) << " (" << peakBytes << " bytes)";
  if (peakIndex >= 0)
    os << " during op #" << peakIndex << " ("
       << stringifyPhase(phases[peakIndex])
       << "): " << describeOp(ops[peakIndex]);
  os << "\n  persistent across steps: " << formatBytes(persistentBytes)
     << "; activations kept for the backward: " << formatBytes(activationBytes)
     << "\n";
  if (!devices.empty()) {
    os << "  pipelined: the peak of pp device " << peakDevice << " of "
       << devices.size() << " (each simulates its stages' ops)\n";
    for (auto [index, device] : llvm::enumerate(devices))
      os << "    pp device " << index << ": peak "
         << formatBytes(device.peakBytes) << " (" << device.peakBytes
         << " bytes), " << device.ops.size() << " ops\n";
  }
  os << llvm::format("  %-16s %18s %12s\n", "at the peak", "bytes", "");
  for (unsigned kind = 0; kind < kNumMemoryKinds; ++kind)
    os << llvm::format("  %-16s %18lld %12s\n",
                       stringifyMemoryKind(MemoryKind(kind)).str().c_str(),
                       static_cast<long long>(peakBreakdown[kind]),
                       formatBytes(peakBreakdown[kind]).c_str());
}

nlohmann::json MemorySimulation::toJson(bool withTimeline) const {
  nlohmann::json breakdown = nlohmann::json::object();
  for (unsigned kind = 0; kind < kNumMemoryKinds; ++kind)
    breakdown[stringifyMemoryKind(MemoryKind(kind)).str()] =
        peakBreakdown[kind];
  nlohmann::json json = {{"function", functionName},
                         {"ops", ops.size()},
                         {"buffers", buffers.size()},
                         {"peak_bytes", peakBytes},
                         {"peak_breakdown", breakdown},
                         {"persistent_bytes", persistentBytes},
                         {"activation_bytes", activationBytes}};
  if (peakIndex >= 0) {
    json["peak_op_index"] = peakIndex;
    json["peak_op"] = describeOp(ops[peakIndex]);
    json["peak_phase"] = stringifyPhase(phases[peakIndex]).str();
  }
  if (!devices.empty()) {
    nlohmann::json devicesJson = nlohmann::json::array();
    for (const MemorySimulation &device : devices)
      devicesJson.push_back(device.toJson(withTimeline));
    json["pp_devices"] = std::move(devicesJson);
    json["peak_device"] = peakDevice;
  }
  if (withTimeline) {
    nlohmann::json timelineJson = nlohmann::json::array();
    for (auto [index, live] : llvm::enumerate(timeline)) {
      nlohmann::json entry = {{"op", ops[index]->getName().getStringRef()},
                              {"phase", stringifyPhase(phases[index]).str()},
                              {"bytes", getTotal(live)}};
      timelineJson.push_back(std::move(entry));
    }
    json["timeline"] = std::move(timelineJson);
  }
  return json;
}
