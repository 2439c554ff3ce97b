//===- Fuse.cpp - group a step's ops into fusion regions (kernels) --------===//
//
// Collect: one pass over the top-level ops in order grows groups from op
// traits (Elementwise, ShapeOp, ReductionOp), matmul epilogues and the
// optimizer interface. Decide: a merge must keep the region placeable (no
// outside reader of a grouped value before the region) and small enough;
// cheap producers are duplicated by the cost model. Rewrite: each group
// becomes a tg.fusion, kept only if the simulated peak does not rise. In a
// pipelined step (docs/pipeline.md) only ops of one stage, micro-batch and
// direction fuse, and their region carries those attributes.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "FusePeakBound.h"

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/GemmEpilogue.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/Schedule.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Dialect/TG/TGTraits.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>

#define DEBUG_TYPE "tg-fuse"

namespace tgc {
#define GEN_PASS_DEF_TGFUSE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

/// A testing switch, not a pass option, so that the pipeline a compiled step
/// records is the same either way.
static llvm::cl::opt<bool> fullCheck(
    "tg-fuse-full-check", llvm::cl::Hidden, llvm::cl::init(false),
    llvm::cl::desc("tg-fuse: simulate the whole step for every vertical "
                   "region instead of bounding its peak first (the same "
                   "regions, slower; tests the bound)"));

namespace {

enum class KernelKind { Loop, Reduction, Gemm, MultiTensor };

/// The attributes that place an op in a pipeline (docs/pipeline.md).
constexpr StringLiteral kPipelineUnitAttrs[] = {
    kStageAttrName, kMicroBatchAttrName, kBackwardAttrName};

/// Whether `a` and `b` belong to the same stage, micro-batch and direction
/// (both without them outside a pipeline): only then may they fuse.
bool inSamePipelineUnit(Operation *a, Operation *b) {
  return llvm::all_of(kPipelineUnitAttrs, [&](StringRef name) {
    return a->getAttr(name) == b->getAttr(name);
  });
}

StringRef stringifyKernelKind(KernelKind kind) {
  switch (kind) {
  case KernelKind::Loop:
    return "loop";
  case KernelKind::Reduction:
    return "reduction";
  case KernelKind::Gemm:
    return "gemm";
  case KernelKind::MultiTensor:
    return "multi_tensor";
  }
  return "";
}

/// Where a GEMM group's chain of epilogue ops stands; each stage is optional
/// and they come in cuBLASLt's order.
enum class EpilogueStage { None, Bias, Activation, Residual, Cast };

struct Group {
  KernelKind kind;
  /// Ops moved into the region.
  llvm::SetVector<Operation *> members;
  /// Ops copied into the region; the original stays for its other readers.
  llvm::SetVector<Operation *> clones;
  /// The latest member: the region is placed right after it.
  Operation *last = nullptr;
  /// Reduction kernels: the operand shape of their reductions (the rows).
  SmallVector<int64_t> rowShape;
  /// GEMM kernels.
  EpilogueStage stage = EpilogueStage::None;
  Value output;
  bool bias = false, aux = false, residual = false;
  StringRef activation;
  /// A bias gradient the GEMM also writes: the column sums of its output
  /// after DGELU ("D"), or of its A or B operand over the contracted
  /// dimension ("A", "B": the weight-gradient GEMM's BGRADA/BGRADB).
  StringRef biasGrad;

  size_t size() const { return members.size() + clones.size(); }
};

/// The element count of a ranked tensor value.
int64_t getNumElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? type.getNumElements() : 0;
}

bool isSplatConstant(Operation *op) {
  ElementsAttr value;
  return op->getNumResults() == 1 &&
         matchPattern(op->getResult(0), m_Constant(&value)) &&
         isa<SplatElementsAttr>(value);
}

class Fuser {
public:
  Fuser(func::FuncOp function, const DeviceSpec &device, unsigned maxRegionOps,
        bool epilogues)
      : function(function), device(device), maxRegionOps(maxRegionOps),
        epilogues(epilogues) {
    for (Operation &op : body().without_terminator())
      position[&op] = position.size();
  }

  /// Grows the vertical groups (loop, reduction, GEMM epilogue).
  void collectVertical();
  /// Folds the bias gradients that weight-gradient GEMMs can write.
  void collectBiasGradients();
  /// Merges loop kernels that read the same tensor (sibling fusion).
  void collectSiblings();
  /// The groups worth a region, in block order of their last op.
  SmallVector<Group *> getRegions();
  bool isDuplicated(Operation *op) const { return duplicated.contains(op); }

private:
  Block &body() { return function.getBody().front(); }
  int64_t positionOf(Operation *op) {
    Operation *top = body().findAncestorOpInBlock(*op);
    auto it = top ? position.find(top) : position.end();
    return it == position.end() ? static_cast<int64_t>(position.size())
                                : it->second;
  }
  std::optional<KernelKind> classify(Operation *op);
  Group *newGroup(Operation *op, KernelKind kind);
  /// Whether the union of `a` and `b` can be one region placed after its
  /// latest member: nothing outside reads a member before that point.
  bool isPlaceable(ArrayRef<Operation *> members, Operation *last);
  bool isPlaceable(Group *a, Group *b);
  /// Whether every input of `group` is computed before `at`.
  bool hasInputsBefore(const Group &group, Operation *at);
  void absorb(Group *into, Group *from);
  bool shouldDuplicate(Operation *producer);
  bool tryEpilogue(Group *gemm, Operation *op, Group *consumer);
  bool tryBackwardEpilogue(Group *gemm, Operation *op, Group *consumer);
  bool tryMerge(Group *producer, Group *consumer, Operation *op);

  func::FuncOp function;
  const DeviceSpec &device;
  unsigned maxRegionOps;
  bool epilogues;
  DenseMap<Operation *, int64_t> position;
  DenseMap<Operation *, Group *> groupOf;
  /// Ops duplicated into some region; they never become members.
  DenseSet<Operation *> duplicated;
  std::vector<std::unique_ptr<Group>> groups;
};

std::optional<KernelKind> Fuser::classify(Operation *op) {
  if (op->getNumRegions() != 0 || isa<tg::OptimizerOpInterface>(op))
    return std::nullopt;
  if (isa<tg::MatmulOp>(op))
    return KernelKind::Gemm;
  if (op->hasTrait<tg::OpTrait::ReductionOp>())
    return KernelKind::Reduction;
  // Dense constants are data of the program, not work.
  if (matchPattern(op, m_Constant()) && !isSplatConstant(op))
    return std::nullopt;
  if (op->hasTrait<OpTrait::Elementwise>() ||
      op->hasTrait<tg::OpTrait::ShapeOp>())
    return KernelKind::Loop;
  return std::nullopt;
}

Group *Fuser::newGroup(Operation *op, KernelKind kind) {
  groups.push_back(std::make_unique<Group>());
  Group *group = groups.back().get();
  group->kind = kind;
  group->members.insert(op);
  group->last = op;
  if (kind == KernelKind::Reduction && op->getNumOperands() > 0)
    group->rowShape = llvm::to_vector(
        cast<RankedTensorType>(op->getOperand(0).getType()).getShape());
  if (kind == KernelKind::Gemm)
    group->output = op->getResult(0);
  groupOf[op] = group;
  return group;
}

bool Fuser::isPlaceable(ArrayRef<Operation *> members, Operation *last) {
  int64_t at = position.lookup(last);
  DenseSet<Operation *> inside(members.begin(), members.end());
  for (Operation *member : members)
    for (Operation *user : member->getUsers()) {
      Operation *top = body().findAncestorOpInBlock(*user);
      if (!inside.contains(top) && positionOf(user) <= at)
        return false;
    }
  return true;
}

bool Fuser::isPlaceable(Group *a, Group *b) {
  SmallVector<Operation *> members(a->members.begin(), a->members.end());
  members.append(b->members.begin(), b->members.end());
  Operation *last =
      position.lookup(a->last) > position.lookup(b->last) ? a->last : b->last;
  return isPlaceable(members, last);
}

void Fuser::absorb(Group *into, Group *from) {
  for (Operation *op : from->members) {
    into->members.insert(op);
    groupOf[op] = into;
  }
  into->clones.insert(from->clones.begin(), from->clones.end());
  if (position.lookup(from->last) > position.lookup(into->last))
    into->last = from->last;
  from->members.clear();
  from->clones.clear();
}

/// Recomputing the producer in each reader costs its FLOPs and reading its
/// own operands; keeping it costs writing its result and reading it back.
bool Fuser::shouldDuplicate(Operation *producer) {
  auto costed = dyn_cast<tg::CostOpInterface>(producer);
  if (!costed || producer->getNumResults() != 1 ||
      classify(producer) != KernelKind::Loop)
    return false;
  tg::OpCost cost = costed.getCost();
  if (cost.matrixFlops > 0)
    return false;
  tg::OpCost recompute;
  recompute.flops = cost.flops;
  recompute.transcendentals = cost.transcendentals;
  recompute.computeType = cost.computeType;
  for (Value operand : producer->getOperands())
    if (auto type = dyn_cast<RankedTensorType>(operand.getType()))
      recompute.bytesRead +=
          type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  tg::OpCost keep;
  auto type = cast<RankedTensorType>(producer->getResult(0).getType());
  keep.bytesWritten =
      type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  keep.bytesRead = keep.bytesWritten;
  OpTime recomputeTime = estimateOpTime(recompute, device);
  OpTime keepTime = estimateOpTime(keep, device);
  return recomputeTime.computeTime + recomputeTime.memoryTime <
         keepTime.memoryTime;
}

/// Folds `op` (alone in `consumer`) into the GEMM group when it is the next
/// cuBLASLt epilogue stage of the group's output.
bool Fuser::tryEpilogue(Group *gemm, Operation *op, Group *consumer) {
  if (!epilogues || consumer->size() != 1 || gemm->size() + 1 > maxRegionOps)
    return false;
  if (tryBackwardEpilogue(gemm, op, consumer))
    return true;
  // After DGELU only its bias gradient.
  if (consumer->kind != KernelKind::Loop || !gemm->biasGrad.empty() ||
      gemm->activation == "DGELU")
    return false;
  Value out = gemm->output;
  if (!llvm::is_contained(op->getOperands(), out))
    return false;
  bool singleUse = out.hasOneUse();
  auto outType = cast<RankedTensorType>(out.getType());

  auto accept = [&](EpilogueStage stage) {
    if (!isPlaceable(gemm, consumer))
      return false;
    absorb(gemm, consumer);
    gemm->stage = stage;
    gemm->output = op->getResult(0);
    return true;
  };

  // Cast: the GEMM writes D in another element type. Not a widening cast
  // that only sums read (a micro-batch's bf16 gradient added to the f32
  // accumulator): the sum's loop reads the narrow D and converts it, where
  // the epilogue would write the wide D for that loop to read back.
  if (isa<tg::ConvertOp>(op) && singleUse) {
    Value cast = op->getResult(0);
    bool widening = getElementTypeOrSelf(cast).getIntOrFloatBitWidth() >
                    outType.getElementTypeBitWidth();
    if (widening && !cast.use_empty() &&
        llvm::all_of(cast.getUsers(), [](Operation *user) {
          return isa<tg::AddOp, tg::SubOp>(user);
        }))
      return false;
    return accept(EpilogueStage::Cast);
  }

  // Activation, with an aux output when the pre-activation is read
  // elsewhere (the backward's DGELU/DRELU epilogues read it).
  StringRef activation = getCublasLtActivation(op);
  if (!activation.empty() && gemm->stage < EpilogueStage::Activation) {
    if (!accept(EpilogueStage::Activation))
      return false;
    gemm->activation = activation;
    gemm->aux = !singleUse;
    return true;
  }

  // Bias or residual: an add of the output and a tensor of its shape.
  if (!singleUse || !isa<tg::AddOp>(op) ||
      op->getOperand(0) == op->getOperand(1))
    return false;
  Value other =
      op->getOperand(0) == out ? op->getOperand(1) : op->getOperand(0);
  if (other.getType() != out.getType())
    return false;
  auto broadcast = other.getDefiningOp<tg::BroadcastInDimOp>();
  int64_t rank = outType.getRank();
  int64_t columns = outType.getShape().back();
  Group *biasGroup = broadcast ? groupOf.lookup(broadcast) : nullptr;
  // The bias vector may be computed first (e.g. the cast of an f32 master
  // bias): a loop group that ends in the broadcast and only handles vectors.
  bool isBias =
      biasGroup && gemm->stage < EpilogueStage::Bias &&
      biasGroup->kind == KernelKind::Loop && biasGroup->last == broadcast &&
      biasGroup->clones.empty() &&
      broadcast.getBroadcastDimensions() == ArrayRef<int64_t>{rank - 1} &&
      getNumElements(broadcast.getOperand()) == columns &&
      llvm::all_of(biasGroup->members, [&](Operation *member) {
        return member == broadcast.getOperation() ||
               llvm::all_of(member->getResults(), [&](Value result) {
                 return getNumElements(result) <= columns;
               });
      });
  if (isBias) {
    if (!accept(EpilogueStage::Bias))
      return false;
    gemm->bias = true;
    // cuBLASLt reads the bias vector: its computation and the broadcast are
    // part of the kernel, copied so that other readers keep the original.
    for (Operation *member : biasGroup->members) {
      gemm->clones.insert(member);
      duplicated.insert(member);
    }
    biasGroup->members.clear();
    return true;
  }
  if (gemm->stage < EpilogueStage::Residual && !gemm->aux) {
    if (!accept(EpilogueStage::Residual))
      return false;
    gemm->residual = true;
    return true;
  }
  return false;
}

/// The backward's epilogues: the GELU gradient of the GEMM's output, whose
/// pre-activation the forward kept (cuBLASLt's DGELU reads it as aux), then
/// the column sums of that gradient, the bias gradient (DGELU_BGRAD).
bool Fuser::tryBackwardEpilogue(Group *gemm, Operation *op, Group *consumer) {
  Value out = gemm->output;
  if (auto geluGrad = dyn_cast<tg::GeluGradOp>(op)) {
    if (gemm->stage != EpilogueStage::None || !out.hasOneUse() ||
        geluGrad.getGradOutput() != out || geluGrad.getInput() == out ||
        geluGrad.getApproximation() != tg::GeluApproximation::Tanh ||
        !isPlaceable(gemm, consumer))
      return false;
    absorb(gemm, consumer);
    gemm->stage = EpilogueStage::Activation;
    gemm->activation = "DGELU";
    gemm->output = op->getResult(0);
    return true;
  }
  // The bias gradient is written besides the output, which stays D.
  if (gemm->activation != "DGELU" || !gemm->biasGrad.empty() ||
      !isColumnSum(op) || op->getOperand(0) != out ||
      !isPlaceable(gemm, consumer))
    return false;
  absorb(gemm, consumer);
  gemm->biasGrad = "D";
  return true;
}

bool Fuser::tryMerge(Group *producer, Group *consumer, Operation *op) {
  // A group's ops share their pipeline attributes: its first op's stand for
  // all of them.
  if (!inSamePipelineUnit(producer->members.front(), op))
    return false;
  if (producer->kind == KernelKind::Gemm)
    return tryEpilogue(producer, op, consumer);
  if (consumer->kind == KernelKind::Gemm)
    return false; // cuBLASLt has no prologue

  // A cheap producer with several readers is recomputed in each, unless
  // the reader is a view (a reshape): the copy would be written out anyway.
  auto costed = dyn_cast<tg::CostOpInterface>(op);
  bool isView = costed && costed.getCost().bytesMoved() == 0;
  if (producer->size() == 1 && producer->members.size() == 1 && !isView) {
    Operation *single = producer->members.front();
    if (!single->hasOneUse() && shouldDuplicate(single)) {
      if (consumer->size() + 1 > maxRegionOps)
        return false;
      consumer->clones.insert(single);
      duplicated.insert(single);
      return true;
    }
  }
  for (Operation *member : producer->members)
    if (duplicated.contains(member))
      return false;
  if (producer->size() + consumer->size() > maxRegionOps)
    return false;

  // Reductions share rows: a second reduction only over the same operand
  // shape, elementwise ops only over the rows or the reduced values.
  KernelKind kind = KernelKind::Loop;
  ArrayRef<int64_t> rowShape;
  if (producer->kind == KernelKind::Reduction &&
      consumer->kind == KernelKind::Reduction) {
    if (producer->rowShape != consumer->rowShape)
      return false;
    kind = KernelKind::Reduction;
    rowShape = producer->rowShape;
  } else if (producer->kind == KernelKind::Reduction ||
             consumer->kind == KernelKind::Reduction) {
    Group *reduction =
        producer->kind == KernelKind::Reduction ? producer : consumer;
    Group *loop = reduction == producer ? consumer : producer;
    int64_t rows = 1;
    for (int64_t size : reduction->rowShape)
      rows *= size;
    for (Operation *member : loop->members)
      for (Value result : member->getResults())
        if (getNumElements(result) > rows)
          return false;
    kind = KernelKind::Reduction;
    rowShape = reduction->rowShape;
  }
  if (!isPlaceable(producer, consumer))
    return false;
  SmallVector<int64_t> shape(rowShape);
  absorb(consumer, producer);
  consumer->kind = kind;
  consumer->rowShape = shape;
  return true;
}

void Fuser::collectVertical() {
  for (Operation &op : body().without_terminator()) {
    std::optional<KernelKind> kind = classify(&op);
    if (!kind)
      continue;
    Group *group = newGroup(&op, *kind);
    if (*kind == KernelKind::Gemm)
      continue;
    llvm::SetVector<Operation *> producers;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def->getBlock() == &body())
          producers.insert(def);
    for (Operation *producer : producers) {
      Group *producerGroup = groupOf.lookup(producer);
      if (!producerGroup || producerGroup == group ||
          producerGroup->members.empty())
        continue;
      if (group->kind == KernelKind::Gemm)
        break; // became an epilogue; its other operands stay inputs
      if (!tryMerge(producerGroup, group, &op))
        continue;
      if (producerGroup->kind == KernelKind::Gemm)
        group = producerGroup;
    }
  }
}

/// The source of a GEMM operand through reshapes.
static Value throughReshapes(Value value) {
  while (auto reshape = value.getDefiningOp<tg::ReshapeOp>())
    value = reshape.getOperand();
  return value;
}

void Fuser::collectBiasGradients() {
  if (!epilogues)
    return;
  for (Operation &op : body().without_terminator()) {
    auto matmul = dyn_cast<tg::MatmulOp>(&op);
    Group *gemm = matmul ? groupOf.lookup(matmul) : nullptr;
    if (!gemm || gemm->size() != 1 || gemm->size() + 1 > maxRegionOps)
      continue;
    // cuBLASLt reduces an operand over the GEMM's k: the rows of a 2-D
    // [k, m] A read transposed or of a [k, n] B read as it is (a weight
    // gradient X^T dY, whose dY column sums are the bias gradient).
    std::pair<Value, StringRef> operands[] = {
        {matmul.getTransposeA() ? matmul.getLhs() : Value(), "A"},
        {matmul.getTransposeB() ? Value() : matmul.getRhs(), "B"}};
    for (auto [operand, name] : operands) {
      if (!operand || cast<RankedTensorType>(operand.getType()).getRank() != 2)
        continue;
      Value source = throughReshapes(operand);
      auto sourceType = cast<RankedTensorType>(source.getType());
      if (sourceType.getShape().back() !=
          cast<RankedTensorType>(operand.getType()).getShape().back())
        continue;
      Operation *sum = nullptr;
      for (Operation *user : source.getUsers()) {
        Group *group = groupOf.lookup(user);
        if (user->getBlock() == &body() && isColumnSum(user) && group &&
            group->size() == 1 && group->members.front() == user &&
            !duplicated.contains(user)) {
          sum = user;
          break;
        }
      }
      if (!sum)
        continue;
      Group *sumGroup = groupOf.lookup(sum);
      if (!inSamePipelineUnit(matmul, sum) || !isPlaceable(gemm, sumGroup))
        continue;
      absorb(gemm, sumGroup);
      gemm->biasGrad = name;
      break;
    }
  }
}

/// The iteration space of a loop group: its largest result.
static int64_t getLoopElements(const Group &group) {
  int64_t elements = 0;
  for (Operation *member : group.members)
    for (Value result : member->getResults())
      elements = std::max(elements, getNumElements(result));
  return elements;
}

/// Whether a group launches a kernel of its own: it moves bytes (a group
/// of views only, such as a lone reshape, is free).
static bool movesBytes(const Group &group) {
  return llvm::any_of(group.members, [](Operation *member) {
    auto costed = dyn_cast<tg::CostOpInterface>(member);
    return costed && costed.getCost().bytesMoved() > 0;
  });
}

bool Fuser::hasInputsBefore(const Group &group, Operation *at) {
  int64_t limit = position.lookup(at);
  SmallVector<Operation *> ops(group.members.begin(), group.members.end());
  ops.append(group.clones.begin(), group.clones.end());
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != &body() || group.members.contains(def) ||
          group.clones.contains(def))
        continue;
      // A value of another group exists once that group's region has run.
      Group *owner = groupOf.lookup(def);
      Operation *ready =
          owner && owner->members.contains(def) ? owner->last : def;
      if (position.lookup(ready) >= limit)
        return false;
    }
  return true;
}

void Fuser::collectSiblings() {
  // A backward reader merged with a forward one would run in the forward
  // and its result live until the backward: the forward op and its
  // recomputed clone (tg-recompute) both read the kept activation, and
  // merging them undoes the recomputation.
  StepStructure structure = StepStructure::compute(function);
  // The loop groups that read each value, in block order of the value.
  llvm::MapVector<Value, SmallVector<Group *>> readers;
  for (auto &owned : groups) {
    Group *group = owned.get();
    // A group holding an op copied into other regions stays as it is: that
    // op must outlive them.
    if (group->kind != KernelKind::Loop || group->members.empty() ||
        !movesBytes(*group) || llvm::any_of(group->members, [&](Operation *op) {
          return duplicated.contains(op);
        }))
      continue;
    for (Operation *member : group->members)
      for (Value operand : member->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && groupOf.lookup(def) == group)
          continue;
        SmallVector<Group *> &list = readers[operand];
        if (!llvm::is_contained(list, group))
          list.push_back(group);
      }
  }
  for (auto &[value, list] : readers) {
    if (list.size() < 2 || getNumElements(value) == 0)
      continue;
    Group *base = nullptr;
    for (Group *sibling : list) {
      if (sibling->members.empty())
        continue; // merged into another
      if (!base) {
        base = sibling;
        continue;
      }
      // One loop over the same elements, small enough, placed where the
      // later of the two ends or, when the later one's inputs exist by
      // then (the second reader of an attention output, after a GEMM that
      // reads the first), where the earlier one ends.
      if (sibling == base || sibling->kind != KernelKind::Loop ||
          base->kind != KernelKind::Loop ||
          getLoopElements(*sibling) != getLoopElements(*base) ||
          base->size() + sibling->size() > maxRegionOps ||
          !inSamePipelineUnit(base->members.front(),
                              sibling->members.front()) ||
          structure.getPhase(sibling->last) != structure.getPhase(base->last))
        continue;
      bool baseFirst =
          position.lookup(base->last) < position.lookup(sibling->last);
      Group *earlier = baseFirst ? base : sibling;
      Group *later = baseFirst ? sibling : base;
      Operation *at = later->last;
      if (!isPlaceable(base, sibling)) {
        SmallVector<Operation *> members(base->members.begin(),
                                         base->members.end());
        members.append(sibling->members.begin(), sibling->members.end());
        if (!hasInputsBefore(*later, earlier->last) ||
            !isPlaceable(members, earlier->last))
          continue;
        at = earlier->last;
      }
      absorb(base, sibling);
      base->last = at;
    }
  }
}

SmallVector<Group *> Fuser::getRegions() {
  SmallVector<Group *> regions;
  for (auto &group : groups) {
    if (group->members.empty())
      continue;
    bool worthIt =
        group->kind == KernelKind::Gemm
            ? group->stage != EpilogueStage::None || !group->biasGrad.empty()
            : group->size() >= 2;
    if (worthIt)
      regions.push_back(group.get());
  }
  llvm::sort(regions, [&](Group *a, Group *b) {
    return position.lookup(a->last) < position.lookup(b->last);
  });
  return regions;
}

/// The cuBLASLt epilogue name of a GEMM group.
std::string getEpilogueName(const Group &group) {
  std::string name = "CUBLASLT_EPILOGUE_";
  if (group.biasGrad == "A" || group.biasGrad == "B")
    return name + "BGRAD" + group.biasGrad.str();
  if (group.activation == "DGELU")
    return name + (group.biasGrad.empty() ? "DGELU" : "DGELU_BGRAD");
  if (group.activation.empty())
    return name + (group.bias ? "BIAS" : "DEFAULT");
  name += group.activation.str();
  if (group.aux)
    name += "_AUX";
  if (group.bias)
    name += "_BIAS";
  return name;
}

/// A group turned into a region, with what undoing it needs.
struct Materialized {
  tg::FusionOp fusion;
  /// For each member copy in the region, the op it must go back before.
  SmallVector<std::pair<Operation *, Operation *>> memberAnchors;
  /// Clone copies in the region and their originals.
  SmallVector<std::pair<Operation *, Operation *>> cloneCopies;
  /// The copy of each member (erased) in the region: what `undo` puts back.
  DenseMap<Operation *, Operation *> copyOf;
};

Materialized materialize(Group &group, Block &body) {
  SmallVector<Operation *> ops(group.members.begin(), group.members.end());
  ops.append(group.clones.begin(), group.clones.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  DenseSet<Operation *> inside(ops.begin(), ops.end());

  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !inside.contains(def))
        inputs.insert(operand);
    }
  SmallVector<Value> outputs;
  for (Operation *member : group.members)
    for (Value result : member->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !group.members.contains(body.findAncestorOpInBlock(*user));
          }))
        outputs.push_back(result);
  llvm::sort(outputs, [](Value a, Value b) {
    if (a.getDefiningOp() != b.getDefiningOp())
      return a.getDefiningOp()->isBeforeInBlock(b.getDefiningOp());
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });

  Materialized result;
  DenseMap<Operation *, Operation *> anchorOf;
  for (Operation *member : group.members) {
    Operation *next = member->getNextNode();
    while (next && group.members.contains(next))
      next = next->getNextNode();
    anchorOf[member] = next;
  }

  OpBuilder builder(group.last->getContext());
  builder.setInsertionPointAfter(group.last);
  Location loc = group.last->getLoc();
  auto fusion = tg::FusionOp::create(
      builder, loc, ValueRange(outputs).getTypes(), inputs.getArrayRef());
  fusion.setKind(stringifyKernelKind(group.kind));
  // The region runs where its ops did (they share these attributes).
  for (StringRef name : kPipelineUnitAttrs)
    if (Attribute value = group.members.front()->getAttr(name))
      fusion->setAttr(name, value);
  if (group.kind == KernelKind::Gemm) {
    fusion.setEpilogue(getEpilogueName(group));
    fusion.setEpilogueC(group.residual);
  }
  SmallVector<Location> argLocs;
  for (Value input : inputs)
    argLocs.push_back(input.getLoc());
  Block *block =
      builder.createBlock(&fusion.getBody(), {},
                          ValueRange(inputs.getArrayRef()).getTypes(), argLocs);
  IRMapping mapping;
  for (auto [input, arg] : llvm::zip(inputs, block->getArguments()))
    mapping.map(input, arg);
  for (Operation *op : ops) {
    Operation *copy = builder.clone(*op, mapping);
    if (group.members.contains(op)) {
      result.memberAnchors.push_back({copy, anchorOf[op]});
      result.copyOf[op] = copy;
    } else
      result.cloneCopies.push_back({copy, op});
  }
  SmallVector<Value> yielded;
  for (Value output : outputs)
    yielded.push_back(mapping.lookup(output));
  tg::YieldOp::create(builder, loc, yielded);

  for (auto [output, replacement] : llvm::zip(outputs, fusion.getResults()))
    output.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !group.members.contains(
          body.findAncestorOpInBlock(*use.getOwner()));
    });
  for (Operation *member : llvm::reverse(ops))
    if (group.members.contains(member)) {
      member->dropAllUses();
      member->erase();
    }
  result.fusion = fusion;
  return result;
}

/// Puts the region's ops back where their originals were.
void undo(Materialized &region) {
  tg::FusionOp fusion = region.fusion;
  Block &block = fusion.getBody().front();
  for (auto [copy, original] : region.cloneCopies)
    copy->replaceAllUsesWith(original);
  for (auto [arg, input] : llvm::zip(block.getArguments(), fusion.getInputs()))
    arg.replaceAllUsesWith(input);
  auto yield = cast<tg::YieldOp>(block.getTerminator());
  for (auto [result, value] : llvm::zip(fusion.getResults(), yield.getValues()))
    result.replaceAllUsesWith(value);
  for (auto [copy, anchor] : region.memberAnchors) {
    if (anchor)
      copy->moveBefore(anchor);
    else
      copy->moveBefore(fusion->getBlock()->getTerminator());
  }
  fusion->erase();
}

/// The sum of the bytes `ops` move as separate kernels.
int64_t getBytesMoved(ArrayRef<Operation *> ops) {
  int64_t bytes = 0;
  for (Operation *op : ops)
    if (auto costed = dyn_cast<tg::CostOpInterface>(op))
      bytes += costed.getCost().bytesMoved();
  return bytes;
}

/// Groups the optimizer updates (`OptimizerOpInterface`), and the
/// elementwise ops left alone that read only arguments (the casts of master
/// weights), into multi-tensor regions: one kind of kernel per op name,
/// element types and attributes, and within a kind buckets of consecutive
/// ops in the order tg-schedule runs them, i.e. the order their gradients
/// become ready in the backward. A bucket is kept only if neither the peak of
/// the step as tg-schedule will order it nor the peak in the current order
/// rises above the step's before any bucket (plus `peak-rise` percent);
/// otherwise it is undone and its two halves are tried, down to single ops
/// (left alone). Halving keeps the tries to about twice the number of
/// buckets, each one schedule and two simulations of the step.
class MultiTensorBucketer {
public:
  MultiTensorBucketer(func::FuncOp function, unsigned maxRegionOps,
                      double peakRisePercent, unsigned maxTries, bool explain)
      : function(function), maxRegionOps(maxRegionOps),
        peakRisePercent(peakRisePercent), triesLeft(maxTries),
        explain(explain) {}

  void run();
  unsigned getNumRegions() const { return numRegions; }
  unsigned getNumRefused() const { return numRefused; }

private:
  Block &body() { return function.getBody().front(); }
  bool isCandidate(Operation *op);
  /// Whether a region of `members` placed after the last of them in block
  /// order has no outside reader before that point.
  bool isPlaceable(ArrayRef<Operation *> members, Operation *last);
  /// Tries `members` (in readiness order) as one region; false (with
  /// `members` now the ops put back) if the peak check refused it.
  bool tryBucket(MutableArrayRef<Operation *> members);

  func::FuncOp function;
  unsigned maxRegionOps;
  double peakRisePercent;
  /// Scheduled-peak checks left: each costs a schedule of the step.
  unsigned triesLeft;
  bool explain;
  /// The most bytes the step may peak at, scheduled and in the current
  /// order: its peaks before any bucket, plus the allowed rise.
  int64_t scheduledPeak = 0, orderPeak = 0;
  unsigned numRegions = 0, numRefused = 0;
};

bool MultiTensorBucketer::isCandidate(Operation *op) {
  if (op->getNumRegions() != 0 || op->getNumResults() == 0 ||
      op->getNumOperands() == 0)
    return false;
  if (isa<tg::OptimizerOpInterface>(op))
    return true;
  // An elementwise op outside every region that only reads arguments of the
  // step is independent of the rest: a multi-tensor kernel can run it with
  // others of its kind.
  return op->hasTrait<OpTrait::Elementwise>() &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           auto arg = dyn_cast<BlockArgument>(operand);
           return arg && arg.getOwner() == &body();
         });
}

bool MultiTensorBucketer::isPlaceable(ArrayRef<Operation *> members,
                                      Operation *last) {
  DenseSet<Operation *> inside(members.begin(), members.end());
  for (Operation *member : members)
    for (Operation *user : member->getUsers()) {
      Operation *top = body().findAncestorOpInBlock(*user);
      if (top && !inside.contains(top) && !last->isBeforeInBlock(top))
        return false;
    }
  return true;
}

bool MultiTensorBucketer::tryBucket(MutableArrayRef<Operation *> members) {
  if (!llvm::all_of(members, [&](Operation *member) {
        return inSamePipelineUnit(member, members.front());
      }))
    return false;
  Operation *last = members.front();
  for (Operation *member : members)
    if (last->isBeforeInBlock(member))
      last = member;
  if (!isPlaceable(members, last))
    return false;
  Group group;
  group.kind = KernelKind::MultiTensor;
  group.members.insert(members.begin(), members.end());
  group.last = last;
  int64_t bytesBefore = getBytesMoved(members);
  Materialized region = materialize(group, body());
  --triesLeft;
  int64_t scheduled = computeSchedule(function).peakBytes;
  int64_t inOrder = MemorySimulation::run(function).peakBytes;
  if (scheduled <= scheduledPeak && inOrder <= orderPeak) {
    ++numRegions;
    if (explain)
      region.fusion.emitRemark()
          << "tg-fuse: multi_tensor region of " << members.size()
          << " ops, saves "
          << (bytesBefore - region.fusion.getCost().bytesMoved()) << " bytes";
    return true;
  }
  if (explain) {
    InFlightDiagnostic remark = region.fusion.emitRemark();
    remark << "tg-fuse: not fused: the multi_tensor region of "
           << members.size() << " ops raises the peak memory";
    if (scheduled > scheduledPeak)
      remark << " of the scheduled step to " << scheduled << " bytes (limit "
             << scheduledPeak << ")";
    if (members.size() >= 4)
      remark << "; its halves are tried";
  }
  // The ops put back are the region's copies.
  for (Operation *&member : members)
    member = region.copyOf.lookup(member);
  undo(region);
  ++numRefused;
  return false;
}

void MultiTensorBucketer::run() {
  // The kinds of kernel, in block order of their first op.
  using Key =
      std::tuple<const void *, const void *, const void *, const void *>;
  std::map<Key, size_t> kindOf;
  SmallVector<SmallVector<Operation *>> kinds;
  for (Operation &op : body().without_terminator()) {
    if (!isCandidate(&op))
      continue;
    // Every operand's element type: an f32 update of a bf16 gradient is not
    // batched with one of an f32 gradient.
    SmallVector<Type> operandElements =
        llvm::map_to_vector(op.getOperandTypes(), [](Type type) {
          return getElementTypeOrSelf(type);
        });
    Key key = std::make_tuple(
        op.getName().getAsOpaquePointer(),
        TupleType::get(op.getContext(), operandElements).getAsOpaquePointer(),
        getElementTypeOrSelf(op.getResult(0).getType()).getAsOpaquePointer(),
        op.getAttrDictionary().getAsOpaquePointer());
    auto [it, inserted] = kindOf.try_emplace(key, kinds.size());
    if (inserted)
      kinds.emplace_back();
    kinds[it->second].push_back(&op);
  }
  if (llvm::none_of(kinds, [](auto &ops) { return ops.size() >= 2; }))
    return;

  // Readiness: the position of each op in the order tg-schedule gives the
  // step, which runs an update as soon as its gradient is complete.
  ScheduledOrder schedule = computeSchedule(function);
  auto withRise = [&](int64_t peak) {
    return peak + static_cast<int64_t>(static_cast<double>(peak) *
                                       peakRisePercent / 100.0);
  };
  scheduledPeak = withRise(schedule.peakBytes);
  orderPeak = withRise(MemorySimulation::run(function).peakBytes);
  DenseMap<Operation *, size_t> readiness;
  for (auto [index, op] : llvm::enumerate(schedule.order))
    readiness[op] = index;
  // Breadth first, so that a bounded number of tries goes to the largest
  // buckets: the runs of each kind (split to max-region-ops), then the
  // halves of each refused run, down to pairs.
  std::deque<SmallVector<Operation *>> runs;
  auto push = [&](ArrayRef<Operation *> ops) {
    if (ops.size() >= 2)
      runs.emplace_back(ops.begin(), ops.end());
  };
  std::function<void(ArrayRef<Operation *>)> pushCapped =
      [&](ArrayRef<Operation *> ops) {
        if (ops.size() <= maxRegionOps)
          return push(ops);
        pushCapped(ops.take_front(ops.size() / 2));
        pushCapped(ops.drop_front(ops.size() / 2));
      };
  for (SmallVector<Operation *> &ops : kinds) {
    llvm::stable_sort(ops, [&](Operation *a, Operation *b) {
      return readiness.lookup(a) < readiness.lookup(b);
    });
    pushCapped(ops);
  }
  while (!runs.empty() && triesLeft > 0) {
    SmallVector<Operation *> run = std::move(runs.front());
    runs.pop_front();
    if (tryBucket(run))
      continue;
    size_t half = run.size() / 2;
    push(ArrayRef(run).take_front(half));
    push(ArrayRef(run).drop_front(half));
  }
  if (explain && !runs.empty())
    function.emitRemark() << "tg-fuse: max-bucket-tries reached; "
                          << runs.size()
                          << " runs of updates left as separate kernels";
}

struct TGFusePass : tgc::impl::TGFuseBase<TGFusePass> {
  using TGFuseBase::TGFuseBase;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-fuse")))
      return signalPassFailure();
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    if (maxRegionOps < 2) {
      function.emitError() << "tg-fuse: max-region-ops must be at least 2, got "
                           << static_cast<unsigned>(maxRegionOps);
      return signalPassFailure();
    }
    if (!(peakRise >= 0.0 && peakRise <= 100.0)) {
      std::string given;
      llvm::raw_string_ostream(given)
          << llvm::format("%g", static_cast<double>(peakRise));
      function.emitError()
          << "tg-fuse: peak-rise must be a percentage from 0 to 100, got "
          << given;
      return signalPassFailure();
    }
    llvm::Expected<DeviceSpec> spec = getDeviceOf(function, device);
    if (!spec) {
      function.emitError() << "tg-fuse: " << llvm::toString(spec.takeError());
      return signalPassFailure();
    }

    Fuser fuser(function, *spec, maxRegionOps, !noEpilogue);
    fuser.collectVertical();
    fuser.collectBiasGradients();
    fuser.collectSiblings();
    SmallVector<Group *> regions = fuser.getRegions();

    Block &body = function.getBody().front();
    MemorySimulation start = MemorySimulation::run(function);
    int64_t peak = start.peakBytes;
    // The bound proves most regions keep the peak without simulating the
    // step; the others are simulated, which refreshes it.
    FusePeakBound bound;
    if (!fullCheck)
      bound.reset(function, start);
    for (Group *group : regions) {
      SmallVector<Operation *> ops(group->members.begin(),
                                   group->members.end());
      ops.append(group->clones.begin(), group->clones.end());
      int64_t bytesBefore = getBytesMoved(ops);
      size_t numOps = group->size();
      if (!fullCheck)
        bound.prepare(group->members.getArrayRef(),
                      group->clones.getArrayRef());
      Materialized region = materialize(*group, body);
      bool fits =
          !fullCheck && bound.fitsUnder(region.fusion, region.copyOf, peak);
      if (fits) {
        bound.commit();
      } else {
        MemorySimulation simulation = MemorySimulation::run(function);
        if (simulation.peakBytes > peak) {
          if (explain)
            region.fusion.emitRemark()
                << "tg-fuse: not fused: the "
                << stringifyKernelKind(group->kind) << " region of " << numOps
                << " ops raises the peak memory";
          undo(region);
          if (!fullCheck)
            bound.rollback(region.copyOf);
          ++numRefused;
          continue;
        }
        if (!fullCheck)
          bound.reset(function, simulation);
      }
      ++numRegions;
      if (explain) {
        int64_t bytesAfter = region.fusion.getCost().bytesMoved();
        InFlightDiagnostic remark = region.fusion.emitRemark();
        remark << "tg-fuse: " << stringifyKernelKind(group->kind)
               << " region of " << numOps << " ops";
        if (auto epilogue = region.fusion.getEpilogueAttr())
          remark << " (" << epilogue.getValue() << ")";
        remark << ", saves " << (bytesBefore - bytesAfter) << " bytes";
      }
    }
    // Duplicated producers nobody reads any more.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (fuser.isDuplicated(&op) && op.use_empty())
        op.erase();

    // Multi-tensor regions last: their buckets are judged on the step as
    // tg-schedule will order it, vertical regions included.
    if (!noFuseOptimizer) {
      MultiTensorBucketer bucketer(function, maxRegionOps, peakRise,
                                   maxBucketTries, explain);
      bucketer.run();
      numRegions += bucketer.getNumRegions();
      numRefused += bucketer.getNumRefused();
    }
  }
};

} // namespace
