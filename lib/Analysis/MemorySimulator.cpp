//===- MemorySimulator.cpp - exact live memory of a step ------------------===//

#include "tgc/Analysis/MemorySimulator.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGInterfaces.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Support/Diagnostics.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
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

/// The tensor `value` scales by a splat constant (a tg.mul of it and the
/// constant, at the top level or yielded by a loop region whose input it
/// is), or null.
static Value getScaledOperand(Value value) {
  auto isSplat = [](Value operand) {
    ElementsAttr constant;
    return matchPattern(operand, m_Constant(&constant)) &&
           isa<SplatElementsAttr>(constant);
  };
  auto scaled = [&](tg::MulOp mul) -> Value {
    if (isSplat(mul.getRhs()))
      return mul.getLhs();
    if (isSplat(mul.getLhs()))
      return mul.getRhs();
    return {};
  };
  if (auto mul = value.getDefiningOp<tg::MulOp>())
    return scaled(mul);
  auto fusion = value.getDefiningOp<tg::FusionOp>();
  if (!fusion)
    return {};
  Block &body = fusion.getBody().front();
  Value yielded =
      body.getTerminator()->getOperand(cast<OpResult>(value).getResultNumber());
  auto mul = yielded.getDefiningOp<tg::MulOp>();
  Value inside = mul ? scaled(mul) : Value();
  auto arg = dyn_cast_or_null<BlockArgument>(inside);
  if (!arg || arg.getOwner() != &body)
    return {};
  return fusion.getInputs()[arg.getArgNumber()];
}

SmallVector<Value> tgc::getBatchArguments(func::FuncOp function) {
  SmallVector<Value> batch;
  for (BlockArgument arg : function.getArguments()) {
    std::optional<tg::Role> role =
        tg::getArgumentRole(function, arg.getArgNumber());
    if (role == tg::Role::Input || role == tg::Role::Label)
      batch.push_back(arg);
  }
  return batch;
}

DenseSet<Value> tgc::getValuesDependingOn(Block &body, ArrayRef<Value> seeds) {
  DenseSet<Value> dependent(seeds.begin(), seeds.end());
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(), [&](Value operand) {
          return dependent.contains(operand);
        }))
      dependent.insert(op.result_begin(), op.result_end());
  return dependent;
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
    // all-reduced gradient (ZeRO-1) or the reduce-scattered one (ZeRO-2),
    // or its part of a bucket's all-reduce (tg-bucket-collectives): the
    // tensors these collectives read are the gradient as well, and so are
    // a bucket and the (flattened) gradients it joins.
    // With micro-batches the update reads the all-reduced sum of the
    // micro-batches' gradients times 1/M (the average's scale, often in a
    // loop region with the other scales): followed too.
    SmallVector<Value> path;
    bool collective = false;
    Value value = grad;
    while (Operation *def = value.getDefiningOp()) {
      if (isa<shard::AllSliceOp, shard::AllReduceOp, shard::ReduceScatterOp>(
              def))
        collective = true;
      else if (Value scaled = getScaledOperand(value))
        value = scaled;
      else if (!isa<tg::ReshapeOp, tg::SliceOp>(def))
        break;
      if (!isa<tg::MulOp, tg::FusionOp>(def))
        value = def->getOperand(0);
      path.push_back(value);
    }
    if (collective) {
      structure.gradients.insert(path.begin(), path.end());
      if (auto bucket = value.getDefiningOp<tg::ConcatOp>())
        for (Value input : bucket.getInputs())
          for (Value part = input;;
               part = part.getDefiningOp()->getOperand(0)) {
            structure.gradients.insert(part);
            if (!part.getDefiningOp<tg::ReshapeOp>())
              break;
          }
    }
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

bool tgc::isFilledAtFirstUse(Operation *op) {
  ElementsAttr value;
  return op->getNumResults() == 1 &&
         matchPattern(op->getResult(0), m_Constant(&value)) &&
         isa<SplatElementsAttr>(value);
}

/// The bytes of one element of `type`, or 0 for elements narrower than a
/// byte.
static int64_t getElementBytes(RankedTensorType type) {
  unsigned bits = type.getElementTypeBitWidth();
  return bits % 8 == 0 ? bits / 8 : 0;
}

std::optional<int64_t> tgc::getSliceViewOffset(Operation *op) {
  auto slice = dyn_cast<tg::SliceOp>(op);
  if (!slice)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(slice.getOperand().getType());
  auto resultType = dyn_cast<RankedTensorType>(slice.getType());
  if (!type || !resultType || !type.hasStaticShape() ||
      !resultType.hasStaticShape() || resultType.getNumElements() == 0)
    return std::nullopt;
  int64_t elementBytes = getElementBytes(type);
  ArrayRef<int64_t> shape = type.getShape(), start = slice.getStartIndices(),
                    limit = slice.getLimitIndices(),
                    strides = slice.getStrides();
  if (!elementBytes || start.size() != shape.size() ||
      limit.size() != shape.size() || strides.size() != shape.size())
    return std::nullopt;
  // Row-major: one index in each dimension before the first one cut, a run
  // with unit stride in it, whole dimensions after it.
  bool cut = false;
  int64_t offset = 0, stride = 1;
  for (int64_t dim = shape.size() - 1; dim >= 0; --dim) {
    int64_t size = limit[dim] - start[dim];
    bool whole = start[dim] == 0 && limit[dim] == shape[dim];
    if (cut && size != 1)
      return std::nullopt;
    if (!whole) {
      if (size > 1 && strides[dim] != 1)
        return std::nullopt;
      cut = true;
    }
    offset += start[dim] * stride;
    stride *= shape[dim];
  }
  offset *= elementBytes;
  if (offset % kInPlaceAlignment)
    return std::nullopt;
  return offset;
}

/// Whether `op` is a view the simulator shares a buffer through.
static bool isSharedView(Operation *op) {
  return isViewOp(op) || getSliceViewOffset(op);
}

/// Whether the producer of `value` can write it inside another buffer: the
/// result of a top-level op that is not a constant, a view, a concat or a
/// collective, read only by `reader`, through views read once each.
static bool canWriteInside(Value value, Operation *reader) {
  Block *block = reader->getBlock();
  while (true) {
    if (!value.hasOneUse() || *value.getUsers().begin() != reader)
      return false;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != block)
      return false;
    if (!isSharedView(def)) {
      return !matchPattern(def, m_Constant()) && !isa<tg::ConcatOp>(def) &&
             !isa<shard::ShardDialect>(def->getDialect());
    }
    // Only a reshape passes the whole buffer on; a slice view's producer
    // writes more than the slice.
    if (!isViewOp(def))
      return false;
    reader = def;
    value = def->getOperand(0);
  }
}

SmallVector<std::optional<int64_t>>
tgc::getInPlaceConcatOffsets(Operation *op) {
  auto concat = dyn_cast<tg::ConcatOp>(op);
  if (!concat)
    return {};
  SmallVector<std::optional<int64_t>> offsets(concat.getInputs().size());
  auto type = dyn_cast<RankedTensorType>(concat.getType());
  int64_t dim = concat.getDimension();
  if (!type || !type.hasStaticShape() || !getElementBytes(type) || dim < 0 ||
      dim >= type.getRank() ||
      llvm::any_of(
          type.getShape().take_front(dim),
          [](int64_t size) { return size != 1; }))
    return offsets;
  int64_t offset = 0;
  for (auto [index, input] : llvm::enumerate(concat.getInputs())) {
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    if (!inputType || !inputType.hasStaticShape())
      return offsets;
    if (offset % kInPlaceAlignment == 0 && inputType.getNumElements() > 0 &&
        canWriteInside(input, op))
      offsets[index] = offset;
    offset += tg::getTensorByteSize(inputType);
  }
  return offsets;
}

bool tgc::isPlacedInPlace(Operation *op) {
  // Only the step's top-level ops have buffers.
  if (!isa_and_nonnull<func::FuncOp>(op->getParentOp()))
    return false;
  if (getSliceViewOffset(op))
    return true;
  if (!isa<tg::ConcatOp>(op))
    return false;
  SmallVector<std::optional<int64_t>> offsets = getInPlaceConcatOffsets(op);
  return llvm::all_of(offsets, [](auto offset) { return offset.has_value(); });
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
    /// A view shares its operand's buffer, `viewOffset` bytes into it.
    bool view = false;
    int64_t viewOffset = 0;
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
  /// The values written in place inside a concat's buffer: the concat, and
  /// the byte offset.
  DenseMap<Value, std::pair<Operation *, int64_t>> insideConcat;
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
    if (std::optional<int64_t> offset = getSliceViewOffset(&op)) {
      facts.view = true;
      facts.viewOffset = *offset;
    }
    for (auto [input, offset] :
         llvm::zip(op.getOperands(), getInPlaceConcatOffsets(&op))) {
      if (!offset)
        continue;
      // The producer writes it, through the views in between.
      Value written = input;
      while (Operation *def = written.getDefiningOp()) {
        if (!isViewOp(def))
          break;
        written = def->getOperand(0);
      }
      insideConcat[written] = {&op, *offset};
    }
    if (matchPattern(&op, m_Constant())) {
      facts.constant = true;
      facts.splat = isFilledAtFirstUse(&op);
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
  /// Stores `value` in buffer `index`, `offset` bytes into it.
  void share(Value value, size_t index, int64_t offset) {
    result->bufferOf[value] = index;
    result->buffers[index].values.push_back(value);
    if (offset)
      result->offsetInBuffer[value] = offset;
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
  // The argument and its views (which share its buffer) must all be read
  // before; writing over one while reading it is only safe element by
  // element, at the same element (not through a slice view).
  for (Value shared : result->buffers[result->bufferOf[arg]].values) {
    bool readsShared = false;
    for (OpOperand &use : shared.getUses()) {
      Operation *top = body().findAncestorOpInBlock(*use.getOwner());
      if (top == def) {
        readsShared = true;
        continue;
      }
      if (positionOf(use.getOwner()) >= at)
        return false;
    }
    if (readsShared && (result->offsetInBuffer.count(shared) ||
                        !readsElementByElement(def, shared)))
      return false;
  }
  return true;
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
      Value operand = op->getOperand(0);
      auto it = result->bufferOf.find(operand);
      if (it != result->bufferOf.end()) {
        // Copied first: inserting the result may grow the map and move `it`.
        size_t shared = it->second;
        share(op->getResult(0), shared,
              result->offsetInBuffer.lookup(operand) + opFacts.viewOffset);
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
      if (result->bufferOf.count(value))
        continue; // a concat's, made by the first input written inside it
      auto alias = facts.aliasOf.find(value);
      if (alias != facts.aliasOf.end() &&
          result->bufferOf.count(alias->second) &&
          canUpdateInPlace(value, alias->second)) {
        share(value, result->bufferOf[alias->second], 0);
        continue;
      }
      // Written inside a concat's buffer (on this pp device's ops only).
      auto inside = facts.insideConcat.find(value);
      if (inside != facts.insideConcat.end() &&
          position.count(inside->second.first)) {
        Value joined = inside->second.first->getResult(0);
        auto it = result->bufferOf.find(joined);
        size_t buffer = it != result->bufferOf.end()
                            ? it->second
                            : addBuffer(joined, at, at, getResultKind(joined));
        share(value, buffer, inside->second.second);
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
  if (std::string where = describeLocation(op->getLoc()); !where.empty())
    os << " at " << where;
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
