//===- Partition.cpp - tg-partition
//----------------------------------------===//
//
// The per-device program of a propagated step: every value gets the local
// shape its sharding implies, and every op the layouts its factor decision
// needs. Where a producer's layout differs from what a consumer needs, the
// pass inserts the `shard` collective that converts it: all_reduce for
// partial sums (reduce_scatter when the consumer wants the reduced value
// split), all_to_all to move axes from one dimension to another, all_gather
// to join blocks, all_slice (local, no communication) to split further. Partial
// sums travel through additions and are reduced at the first op that needs the
// whole value.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "VocabParallel.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/ShardingPropagation.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InterleavedRange.h"

#include <map>

namespace tgc {
#define GEN_PASS_DEF_TGPARTITION
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

#define DEBUG_TYPE "tg-partition"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

namespace {

/// A value of the per-device program and the global layout it holds.
struct LocalValue {
  Value value;
  RankedTensorType globalType;
  TensorLayout layout;
  /// Axes over which `value` is a partial result, and how to combine them.
  AxisList unreduced;
  shard::ReductionKind kind = shard::ReductionKind::Sum;
  /// Expert parallelism: the partial sum over `unreduced` is exclusive. The
  /// value is [rows..., width] for the step's routing ids `exclusiveIds`
  /// [rows...] (global), and each row is whole on the devices that hold
  /// its expert and zero on the others; `ownedRows` (i1, the local rows)
  /// tells which rows a device holds.
  Value exclusiveIds;
  Value ownedRows;
  /// The experts of the products that made it (the blocks of a split).
  int64_t exclusiveExperts = 0;
  /// With exclusiveIds and nothing unreduced: valid on the device's rows
  /// only (a comparison of exclusive values). The ops that pass exclusive
  /// values on read it as it is; any other reader gets it rebuilt
  /// (materialize).
  bool ownedOnly = false;
};

class Partitioner {
public:
  Partitioner(func::FuncOp function, const Mesh &mesh, bool explain,
              DeviceSpec device)
      : function(function), mesh(mesh), explain(explain),
        device(std::move(device)), builder(function.getContext()) {}

  LogicalResult run();

private:
  FailureOr<Type> getLocalType(RankedTensorType global,
                               const TensorLayout &layout, Location loc);
  /// `source` converted to `required` for `user` (no partial sums left).
  FailureOr<Value> reshard(const LocalValue &source,
                           const TensorLayout &required, Operation *user,
                           StringRef why);
  LogicalResult partitionOp(Operation *op);
  LogicalResult partitionReturn(func::ReturnOp op);
  /// Records (and, with `explain`, reports) one inserted collective.
  void note(Operation *user, Operation *collective, const LocalValue &source,
            StringRef why);
  TensorLayout getResultLayout(Operation *op, unsigned index);
  /// Whether `pad` keeps its partial operand `source` partial (ZeRO's
  /// padded gradients): padding with zeros commutes with the sum, and it
  /// pays when the pad's readers split the padded value over the sum's axes
  /// (a reduce-scatter follows) and the padding at most doubles the value
  /// (the reduce-scatter then moves no more than an all-reduce of the
  /// operand would).
  bool padKeepsPartial(PadOp pad, const LocalValue &source);
  /// The operand of `op` it keeps partial, if it is a conversion between
  /// float types or a product of a partial value by values that are not
  /// (fp16's unscaling), its result is not wanted split over the partial
  /// value's axes, and its result is only summed, with summands that
  /// are partial too or computed later by such ops (the micro-batches'
  /// bf16 gradients accumulated in f32): the f32 sum is reduced once
  /// instead of each micro-batch's gradient. Rounding aside both commute
  /// with the sum; each device rounds its own partial value, as it would
  /// before the collective. `pendingValue` is the local value of the
  /// operand `pending`, whose producer is being partitioned.
  std::optional<unsigned>
  getScaledPartialOperand(Operation *op, Value pending = {},
                          const LocalValue *pendingValue = nullptr);
  /// Whether every reader of `result` sums it with values partial as
  /// `partial` is (or computed later by sums, conversions or scalings),
  /// directly or through at most kMaxScalings conversions and scalings.
  bool isSummed(Value result, const LocalValue &partial, int depth);
  static constexpr int kMaxScalings = 4;
  /// Whether `user` keeps its partial operand `original`, whose local
  /// value is `source`, partial.
  bool keepsPartial(Operation *user, Value original, const LocalValue &source);
  /// Expert parallelism. Whether `op` computes on exclusive partial values
  /// (LocalValue::exclusiveIds) without reducing them: a float elementwise
  /// op, or a slice, pad, concatenation or reshape that keeps the rows,
  /// whose partial operands are all exclusive alike (an elementwise op's
  /// other operands are taken in their layout, and its result masked to
  /// the rows the device holds unless zeros stay zeros). Returns the
  /// exclusive operand.
  std::optional<unsigned> getExclusiveOperand(Operation *op);
  /// Whether operand `index` of `op`, an expert product split over the
  /// experts on `axes`, can read `source` as it is: an exclusive value of
  /// the same routing ids over the same axes, in the layout `required`
  /// (a device holds whole the rows of its own experts, the only ones the
  /// product reads).
  bool readsExclusive(Operation *op, unsigned index, const LocalValue &source,
                      ArrayRef<unsigned> axes, const TensorLayout &required);
  /// The local value of `original` valid on every row: an owned-only value
  /// rebuilt by its op from its operands made whole (exclusive ones
  /// all-reduced) in the same layout, cached; any other value as it is.
  FailureOr<LocalValue> materialize(Value original, Operation *user);
  /// The local type of `value`, the per-device operand of `original`: an
  /// argument keeps its global type until every op is partitioned, so its
  /// local type comes from its layout.
  FailureOr<Type> getOperandType(Value original, Value value, Location loc);
  /// Remarks at `op`, rebuilt over a vocabulary split over `axes` as the
  /// ops `built`: what it became and each collective's cost.
  void explainVocabParallel(Operation *op,
                            llvm::iterator_range<Block::iterator> built,
                            ArrayRef<unsigned> axes);
  /// The bytes each device sends and the modelled time of `collective`.
  void appendCost(InFlightDiagnostic &remark, Operation *collective);
  std::string describeValue(Value value);

  func::FuncOp function;
  const Mesh &mesh;
  bool explain;
  /// The device the remarks' modelled times are for.
  DeviceSpec device;
  OpBuilder builder;
  DenseMap<Value, LocalValue> local;
  /// Collectives already built for (value, required layout): a value read
  /// by several ops in one layout is converted once. Arguments are not
  /// cached, so ZeRO-3's gathered parameters live only around each use.
  std::map<std::pair<void *, std::string>, Value> converted;
  /// The results of vocabulary-parallel ops, by the op they were rebuilt
  /// from, for the remarks.
  DenseMap<Value, std::string> rebuilt;
  /// Expert parallelism: the ids relative to the device's block of experts
  /// and whether each is in it, by (local ids, experts a block): the
  /// products of one routing share them.
  std::map<std::pair<void *, int64_t>, std::pair<Value, Value>> blockIds;
  /// The ids `ids` (local, of `type`) relative to the device's block of
  /// `block` experts split over `axes`, and whether each is in it, built
  /// at the insertion point once per (ids, block).
  std::pair<Value, Value> getBlockIds(Value ids, RankedTensorType type,
                                      ArrayRef<unsigned> axes, int64_t block,
                                      Location loc) {
    auto key = std::make_pair(ids.getAsOpaquePointer(), block);
    auto it = blockIds.find(key);
    if (it == blockIds.end())
      it = blockIds
               .try_emplace(key, buildBlockIds(builder, loc, ids, type, axes,
                                               mesh, block, std::nullopt))
               .first;
    return it->second;
  }
  /// The owned-only values built: those only rebuilt ones were read as are
  /// dropped at the end.
  SmallVector<Value> ownedValues;
};

} // namespace

static shard::ReductionKind getPartialKind(Operation *op) {
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    switch (reduce.getKind()) {
    case ReduceKind::Sum:
      return shard::ReductionKind::Sum;
    case ReduceKind::Max:
      return shard::ReductionKind::Max;
    case ReduceKind::Min:
      return shard::ReductionKind::Min;
    case ReduceKind::Mean:
      return shard::ReductionKind::Average;
    }
  }
  if (auto loss = dyn_cast<CrossEntropyOp>(op))
    return loss.getReduction() == LossReduction::Mean
               ? shard::ReductionKind::Average
               : shard::ReductionKind::Sum;
  return shard::ReductionKind::Sum;
}

static std::string layoutKey(const TensorLayout &layout) {
  std::string key;
  for (const AxisList &axes : layout.dims) {
    for (unsigned axis : axes)
      key += std::to_string(axis) + ",";
    key += ";";
  }
  return key;
}

FailureOr<Type> Partitioner::getLocalType(RankedTensorType global,
                                          const TensorLayout &layout,
                                          Location loc) {
  SmallVector<int64_t> shape(global.getShape());
  for (auto [dim, axes] : llvm::enumerate(layout.dims)) {
    int64_t count = 1;
    for (unsigned axis : axes)
      count *= mesh.axisSizes[axis];
    if (shape[dim] % count != 0)
      return emitError(loc)
             << "dimension " << dim << " of " << global << " (size "
             << shape[dim] << ") cannot be split into " << count
             << " equal blocks over " << describeLayout(layout, mesh);
    shape[dim] /= count;
  }
  return RankedTensorType::get(shape, global.getElementType());
}

std::string Partitioner::describeValue(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (auto name = function.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), TGDialect::kNameAttrName))
      return "argument '" + name.getValue().str() + "'";
    return "argument #" + std::to_string(arg.getArgNumber());
  }
  if (auto it = rebuilt.find(value); it != rebuilt.end())
    return it->second;
  auto result = cast<OpResult>(value);
  return "result #" + std::to_string(result.getResultNumber()) + " of " +
         result.getOwner()->getName().getStringRef().str();
}

void Partitioner::note(Operation *user, Operation *collective,
                       const LocalValue &source, StringRef why) {
  collective->setLoc(user->getLoc());
  if (!explain)
    return;
  // Bytes each device sends and the modelled time, on the link the group
  // spans (CollectiveCost.h).
  InFlightDiagnostic remark = user->emitRemark()
                              << collective->getName().stripDialect() << " of "
                              << describeValue(source.value) << " "
                              << describeLayout(source.layout, mesh) << " for "
                              << user->getName() << ": " << why;
  appendCost(remark, collective);
}

void Partitioner::appendCost(InFlightDiagnostic &remark,
                             Operation *collective) {
  FailureOr<CollectiveCost> cost = estimateCollectiveCost(collective, device);
  if (succeeded(cost))
    remark << " (" << cost->bytesPerDevice << " bytes per device, "
           << llvm::formatv("{0:F2}", cost->time * 1e6).str() << " us over "
           << stringifyLinkKind(cost->link) << ")";
}

void Partitioner::explainVocabParallel(
    Operation *op, llvm::iterator_range<Block::iterator> built,
    ArrayRef<unsigned> axes) {
  TensorLayout split = TensorLayout::getUnset(1);
  split.dims[0].assign(axes.begin(), axes.end());
  op->emitRemark() << op->getName()
                   << " is vocabulary-parallel: rebuilt on each device's "
                      "block of the dimension split "
                   << describeLayout(split, mesh);
  for (Operation &collective : built) {
    auto reduce = dyn_cast<shard::AllReduceOp>(collective);
    if (!reduce)
      continue;
    InFlightDiagnostic remark =
        op->emitRemark() << "all_reduce "
                         << stringifyReductionKind(reduce.getReduction())
                         << " of " << reduce.getInput().getType()
                         << " for the vocabulary-parallel " << op->getName();
    appendCost(remark, reduce);
  }
}

FailureOr<Type> Partitioner::getOperandType(Value original, Value value,
                                            Location loc) {
  const LocalValue &source = local.find(original)->second;
  if (source.value != value)
    return value.getType();
  return getLocalType(source.globalType, source.layout, loc);
}

FailureOr<Value> Partitioner::reshard(const LocalValue &source,
                                      const TensorLayout &required,
                                      Operation *user, StringRef why) {
  if (source.unreduced.empty() && source.layout == required)
    return source.value;
  // A parameter, or its low-precision copy, is converted around each use:
  // a split parameter (ZeRO-3) is gathered just before each reader and
  // freed after it, not kept gathered from the forward to the backward.
  auto isParameter = [](Value value) {
    if (auto convert = value.getDefiningOp<ConvertOp>())
      value = convert.getOperand();
    return isa<BlockArgument>(value);
  };
  bool cache = !isParameter(source.value);
  std::pair<void *, std::string> key(source.value.getAsOpaquePointer(),
                                     layoutKey(required));
  if (cache)
    if (auto it = converted.find(key); it != converted.end())
      return it->second;

  Location loc = user->getLoc();
  StringRef grid = mesh.name;
  Value value = source.value;
  TensorLayout layout = source.layout;
  AxisList unreduced = source.unreduced;
  auto axesOf = [](ArrayRef<unsigned> axes) {
    return llvm::map_to_vector(axes,
                               [](unsigned axis) { return int16_t(axis); });
  };
  auto localType = [&]() {
    return getLocalType(source.globalType, layout, loc);
  };

  // Partial sums: a reduce-scatter where the consumer splits a dimension
  // over exactly the axes the sum runs over, an all-reduce for the rest.
  if (!unreduced.empty()) {
    for (auto [dim, axes] : llvm::enumerate(layout.dims)) {
      const AxisList &want = required.dims[dim];
      if (want.size() <= axes.size() ||
          !llvm::equal(axes, ArrayRef(want).take_front(axes.size())))
        continue;
      AxisList extra(want.begin() + axes.size(), want.end());
      if (!llvm::all_of(extra,
                        [&](unsigned axis) {
                          return llvm::is_contained(unreduced, axis);
                        }) ||
          source.kind == shard::ReductionKind::Max ||
          source.kind == shard::ReductionKind::Min)
        continue;
      axes = extra.empty() ? axes : want;
      FailureOr<Type> type = localType();
      if (failed(type))
        return failure();
      auto scatter = shard::ReduceScatterOp::create(
          builder, loc, *type, grid, axesOf(extra), value, source.kind,
          APInt(64, dim));
      note(user, scatter, source,
           (why + "; partial result reduced and split in one step").str());
      value = scatter;
      llvm::erase_if(unreduced, [&](unsigned axis) {
        return llvm::is_contained(extra, axis);
      });
      break;
    }
    if (!unreduced.empty()) {
      auto reduce =
          shard::AllReduceOp::create(builder, loc, value.getType(), grid,
                                     axesOf(unreduced), value, source.kind);
      note(user, reduce, source, (why + "; partial result").str());
      value = reduce;
      unreduced.clear();
    }
  }

  // Move the axes that leave one dimension for another with an all_to_all,
  // join the blocks the consumer does not split the same way, then split
  // what it splits further. Joining first keeps every intermediate a
  // layout: an axis never splits two dimensions at once.
  auto commonPrefix = [&](unsigned dim) {
    const AxisList &axes = layout.dims[dim], &want = required.dims[dim];
    size_t common = 0;
    while (common < axes.size() && common < want.size() &&
           axes[common] == want[common])
      ++common;
    return common;
  };
  // The dimension the innermost axes of `dim` that the consumer does not
  // keep there can move to in one all_to_all: one whose own axes the
  // consumer keeps and that it splits next over exactly those axes (they
  // become its innermost). The blocks then arrive in order: member p of
  // the moved axes holds block p of `dim` and receives block p of the
  // other dimension.
  auto moveTarget = [&](unsigned dim) -> std::optional<unsigned> {
    ArrayRef<unsigned> moved =
        ArrayRef(layout.dims[dim]).drop_front(commonPrefix(dim));
    if (moved.empty())
      return std::nullopt;
    for (unsigned other = 0, e = layout.dims.size(); other < e; ++other) {
      const AxisList &axes = layout.dims[other], &want = required.dims[other];
      if (other != dim && commonPrefix(other) == axes.size() &&
          ArrayRef(want).drop_front(axes.size()).take_front(moved.size()) ==
              moved)
        return other;
    }
    return std::nullopt;
  };
  // Until none is left: a move, as long as one can go; a join otherwise
  // (which can free a dimension for a move).
  while (true) {
    std::optional<std::pair<unsigned, unsigned>> move;
    std::optional<unsigned> join;
    for (unsigned dim = 0, e = layout.dims.size(); dim < e && !move; ++dim) {
      if (commonPrefix(dim) == layout.dims[dim].size())
        continue;
      if (std::optional<unsigned> target = moveTarget(dim))
        move = {dim, *target};
      else if (!join)
        join = dim;
    }
    if (!move && !join)
      break;
    unsigned dim = move ? move->first : *join;
    AxisList &axes = layout.dims[dim];
    size_t common = commonPrefix(dim);
    AxisList moved(axes.begin() + common, axes.end());
    axes.resize(common);
    if (move)
      llvm::append_range(layout.dims[move->second], moved);
    FailureOr<Type> type = localType();
    if (failed(type))
      return failure();
    Operation *collective =
        move
            ? shard::AllToAllOp::create(builder, loc, *type, grid,
                                        axesOf(moved), value,
                                        APInt(64, move->second), APInt(64, dim))
                  .getOperation()
            : shard::AllGatherOp::create(builder, loc, *type, grid,
                                         axesOf(moved), value, APInt(64, dim))
                  .getOperation();
    note(user, collective, source, why);
    value = collective->getResult(0);
  }
  for (auto [dim, axes] : llvm::enumerate(layout.dims)) {
    const AxisList &want = required.dims[dim];
    if (axes.size() == want.size())
      continue;
    AxisList sliced(want.begin() + axes.size(), want.end());
    axes = want;
    FailureOr<Type> type = localType();
    if (failed(type))
      return failure();
    // Every device's block of a splat is the smaller splat: no whole
    // constant to store and slice.
    auto constant = value.getDefiningOp<tg::ConstantOp>();
    auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                          : SplatElementsAttr();
    if (splat) {
      value = tg::ConstantOp::create(
          builder, loc, splat.resizeSplat(cast<ShapedType>(*type)));
      continue;
    }
    auto slice = shard::AllSliceOp::create(
        builder, loc, *type, grid, axesOf(sliced), value, APInt(64, dim));
    note(user, slice, source, why);
    value = slice;
  }
  if (cache)
    converted[key] = value;
  return value;
}

TensorLayout Partitioner::getResultLayout(Operation *op, unsigned index) {
  auto type = cast<RankedTensorType>(op->getResult(index).getType());
  TensorLayout layout = TensorLayout::getUnset(type.getRank());
  layout.priority = TensorLayout::kUnsetPriority - 2;
  ShardingAttr sharding = getValueSharding(op->getResult(index));
  if (!sharding)
    return layout;
  layout = TensorLayout::fromAttr(sharding, mesh);
  if (sharding.hasPriority())
    return layout;
  // A propagated layout weighs as much as it did in propagation: a
  // gradient ZeRO splits (priority 3) does not outweigh the batch split of
  // the matmul producing it (1); a broadcast feeding the batch-split
  // activations (1) outweighs its ZeRO-3 parameter (3).
  layout.priority = TensorLayout::kUnsetPriority - 2;
  if (auto priorities =
          op->getAttrOfType<DenseI64ArrayAttr>(kShardingPrioritiesAttrName))
    if (index < priorities.size() && priorities[index] >= 0)
      layout.priority = priorities[index];
  return layout;
}

bool Partitioner::padKeepsPartial(PadOp pad, const LocalValue &source) {
  if (source.unreduced.empty() || source.kind != shard::ReductionKind::Sum)
    return false;
  ArrayRef<int64_t> in = source.globalType.getShape();
  ArrayRef<int64_t> out = pad.getType().getShape();
  for (auto [dim, axes] : llvm::enumerate(source.layout.dims))
    if (in[dim] != out[dim] && !axes.empty())
      return false;
  if (ShapedType::getNumElements(out) > 2 * ShapedType::getNumElements(in))
    return false;
  TensorLayout wanted = getResultLayout(pad, 0);
  return llvm::any_of(wanted.dims, [&](const AxisList &axes) {
    return llvm::all_of(source.unreduced, [&](unsigned axis) {
      return llvm::is_contained(axes, axis);
    });
  });
}

std::optional<unsigned>
Partitioner::getScaledPartialOperand(Operation *op, Value pending,
                                     const LocalValue *pendingValue) {
  if (!isa<ConvertOp, MulOp>(op) || op->getResult(0).use_empty())
    return std::nullopt;
  auto isFloat = [](Value value) {
    return isa<FloatType>(getElementTypeOrSelf(value.getType()));
  };
  if (!llvm::all_of(op->getOperands(), isFloat) || !isFloat(op->getResult(0)))
    return std::nullopt;
  // The partial operand, and every other one not partial: already
  // partitioned without a partial sum, or a broadcast or constant still to
  // come (the scale).
  std::optional<unsigned> partial;
  const LocalValue *partialValue = nullptr;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    const LocalValue *value = nullptr;
    if (operand == pending)
      value = pendingValue;
    else if (auto it = local.find(operand); it != local.end())
      value = &it->second;
    else if (isa_and_present<BroadcastInDimOp, ConstantOp>(
                 operand.getDefiningOp()))
      continue;
    if (!value)
      return std::nullopt;
    if (value->unreduced.empty())
      continue;
    if (partial || value->kind != shard::ReductionKind::Sum)
      return std::nullopt;
    partial = index;
    partialValue = value;
  }
  if (!partial)
    return std::nullopt;
  // A result the step wants split over the sum's axes (ZeRO-2 and 3's
  // gradients) is reduce-scattered before it: each device then accumulates
  // only its block, as those stages promise, instead of a whole f32 sum.
  TensorLayout wanted = getResultLayout(op, 0);
  for (const AxisList &axes : wanted.dims)
    for (unsigned axis : axes)
      if (llvm::is_contained(partialValue->unreduced, axis))
        return std::nullopt;
  if (!isSummed(op->getResult(0), *partialValue, /*depth=*/0))
    return std::nullopt;
  return partial;
}

bool Partitioner::isSummed(Value result, const LocalValue &partial, int depth) {
  // The summands still to come: sums, conversions or scalings.
  auto isSummand = [&](Value operand) {
    if (auto it = local.find(operand); it != local.end())
      return it->second.unreduced == partial.unreduced &&
             it->second.kind == shard::ReductionKind::Sum &&
             it->second.layout == partial.layout;
    return isa_and_present<ConvertOp, MulOp, AddOp, SubOp>(
        operand.getDefiningOp());
  };
  // The scales of a scaling still to come: not partial.
  auto isScale = [&](Value operand) {
    if (auto it = local.find(operand); it != local.end())
      return it->second.unreduced.empty();
    return isa_and_present<BroadcastInDimOp, ConstantOp>(
        operand.getDefiningOp());
  };
  return !result.use_empty() &&
         llvm::all_of(result.getUsers(), [&](Operation *user) {
           auto others =
               llvm::make_filter_range(user->getOperands(), [&](Value operand) {
                 return operand != result;
               });
           if (isa<AddOp, SubOp>(user))
             return llvm::all_of(others, isSummand);
           if (isa<ConvertOp, MulOp>(user) && depth < kMaxScalings &&
               isa<FloatType>(getElementTypeOrSelf(user->getResult(0))))
             return llvm::all_of(others, isScale) &&
                    isSummed(user->getResult(0), partial, depth + 1);
           return false;
         });
}

/// The rows operands of an expert product (its input, and a gradient's
/// incoming gradient) and of an embedding gradient (its incoming
/// gradient): the ops that, split over the experts (rows), read only the
/// rows of the device's own.
static bool isExpertRowsOperand(Operation *op, unsigned index) {
  return (isa<ExpertMatmulOp>(op) && index == 0) ||
         (isa<ExpertMatmulGradOp>(op) && index <= 1) ||
         (isa<EmbeddingGradOp>(op) && index == 0);
}

/// The routing ids of such an op.
static Value getRoutingIds(Operation *op) {
  return op->getOperand(isa<EmbeddingGradOp>(op) ? 1 : 2);
}

/// The experts of an expert product (its whole stack), or the rows of an
/// embedding gradient's table.
static int64_t getNumGlobalExperts(Operation *op) {
  if (auto grad = dyn_cast<EmbeddingGradOp>(op))
    return grad.getType().getDimSize(0);
  if (auto product = dyn_cast<ExpertMatmulOp>(op))
    return product.getNumGlobalExperts();
  return cast<ExpertMatmulGradOp>(op).getNumGlobalExperts();
}

/// The factor of an expert product's experts (an embedding gradient's
/// table rows), -1 for other ops.
static int64_t getExpertFactor(Operation *op, const ShardingRule &rule) {
  if (isa<ExpertMatmulOp>(op))
    return rule.operandFactors[1][0].front();
  if (isa<ExpertMatmulGradOp, EmbeddingGradOp>(op))
    return rule.resultFactors[0][0].front();
  return -1;
}

/// Whether `ids` route rows to experts (an expert product reads them).
static bool isRoutingIds(Value ids) {
  return llvm::any_of(ids.getUses(), [](OpOperand &use) {
    return isa<ExpertMatmulOp, ExpertMatmulGradOp>(use.getOwner()) &&
           use.getOperandNumber() == 2;
  });
}

/// The ops an exclusive value may pass through: an elementwise op, or a
/// slice, padding, concatenation or reshape (getExclusiveOperand checks
/// that they keep the rows). A result that is not a float is owned-only.
static bool passesExclusive(Operation *op) {
  if (op->getNumResults() != 1)
    return false;
  if (isa<SliceOp, ConcatOp, ReshapeOp, PadOp>(op))
    return true;
  if (!op->hasTrait<mlir::OpTrait::Elementwise>() ||
      isa<CounterRandomOpInterface>(op))
    return false;
  auto shape = cast<ShapedType>(op->getResult(0).getType()).getShape();
  return llvm::all_of(op->getOperandTypes(), [&](Type type) {
    return cast<ShapedType>(type).getShape() == shape;
  });
}

/// Whether a slice, padding, concatenation or reshape of an exclusive value
/// of `rows` routing dimensions keeps them as they are, and only cuts,
/// pads, joins or reshapes whole dimensions after them.
static bool keepsRows(Operation *op, const LocalValue &source, int64_t rows) {
  auto isWhole = [](const AxisList &axes) { return axes.empty(); };
  if (!llvm::all_of(ArrayRef(source.layout.dims).drop_front(rows), isWhole))
    return false;
  ArrayRef<int64_t> in = source.globalType.getShape();
  if (auto slice = dyn_cast<SliceOp>(op))
    return llvm::all_of(llvm::seq<int64_t>(0, rows), [&](int64_t dim) {
      return slice.getStartIndices()[dim] == 0 &&
             slice.getLimitIndices()[dim] == in[dim] &&
             slice.getStrides()[dim] == 1;
    });
  if (auto pad = dyn_cast<PadOp>(op))
    return llvm::all_of(llvm::seq<int64_t>(0, rows), [&](int64_t dim) {
      return pad.getLow()[dim] == 0 && pad.getHigh()[dim] == 0 &&
             pad.getInterior()[dim] == 0;
    });
  if (auto concat = dyn_cast<ConcatOp>(op))
    return static_cast<int64_t>(concat.getDimension()) >= rows;
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    ArrayRef<int64_t> out = reshape.getType().getShape();
    return static_cast<int64_t>(out.size()) > rows &&
           in.take_front(rows) == out.take_front(rows);
  }
  return true;
}

/// Whether two exclusive or owned-only values hold the same rows: the same
/// routing ids and experts, in the same layout.
static bool holdsSameRows(const LocalValue &a, const LocalValue &b) {
  return a.exclusiveIds && a.exclusiveIds == b.exclusiveIds &&
         a.exclusiveExperts == b.exclusiveExperts && a.layout == b.layout;
}

/// Whether two exclusive values are exclusive alike: the same rows, summed
/// over the same axes.
static bool isExclusiveAlike(const LocalValue &a, const LocalValue &b) {
  return holdsSameRows(a, b) && a.unreduced == b.unreduced && a.kind == b.kind;
}

/// Whether `owned` is an owned-only value of the rows `exclusive` (an
/// exclusive or owned-only value) holds.
static bool isOwnedAlike(const LocalValue &owned, const LocalValue &exclusive) {
  return owned.ownedOnly && holdsSameRows(owned, exclusive);
}

/// The routing dimensions (the ids' rank) of an exclusive or owned-only
/// value: its leading dimensions.
static int64_t getRoutingRank(const LocalValue &value) {
  return cast<RankedTensorType>(value.exclusiveIds.getType()).getRank();
}

/// `axes` in mesh order, as LocalValue::unreduced lists them.
static AxisList sortAxes(ArrayRef<unsigned> axes) {
  AxisList sorted(axes.begin(), axes.end());
  llvm::sort(sorted);
  return sorted;
}

/// Whether `to` only splits further what `from` splits (all_slice: no
/// communication).
static bool isLocalReshard(const LocalValue &from, const TensorLayout &to) {
  if (!from.unreduced.empty() || from.layout.dims.size() != to.dims.size())
    return false;
  return llvm::all_of(llvm::zip(from.layout.dims, to.dims), [](auto pair) {
    const AxisList &have = std::get<0>(pair), &want = std::get<1>(pair);
    return have.size() <= want.size() &&
           llvm::equal(have, ArrayRef(want).take_front(have.size()));
  });
}

/// Whether an expert product reads `value`'s rows (as its input, or a
/// gradient's incoming gradient) with the routing ids `ids`, through at
/// most `depth` ops that pass exclusive values on.
static bool reachesExpertProduct(Value value, Value ids, int depth) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isExpertRowsOperand(user, use.getOperandNumber()) &&
        getRoutingIds(user) == ids)
      return true;
    if (depth > 0 && passesExclusive(user) &&
        reachesExpertProduct(user->getResult(0), ids, depth - 1))
      return true;
  }
  return false;
}

std::optional<unsigned> Partitioner::getExclusiveOperand(Operation *op) {
  if (!passesExclusive(op))
    return std::nullopt;
  // The exclusive operands (alike), or else the owned-only ones.
  std::optional<unsigned> exclusive, owned;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    auto it = local.find(operand);
    if (it == local.end())
      return std::nullopt;
    const LocalValue &value = it->second;
    if (value.ownedOnly) {
      if (owned && !isOwnedAlike(value, local[op->getOperand(*owned)]))
        return std::nullopt;
      owned = owned ? owned : index;
      continue;
    }
    if (value.unreduced.empty())
      continue;
    if (!value.exclusiveIds ||
        (exclusive &&
         !isExclusiveAlike(local[op->getOperand(*exclusive)], value)))
      return std::nullopt;
    if (!exclusive)
      exclusive = index;
  }
  if (exclusive && owned &&
      !isOwnedAlike(local[op->getOperand(*owned)],
                    local[op->getOperand(*exclusive)]))
    return std::nullopt;
  if (!exclusive)
    exclusive = owned;
  if (!exclusive)
    return std::nullopt;
  const LocalValue &first = local[op->getOperand(*exclusive)];
  // Only an elementwise op makes an owned-only value (materialize rebuilds
  // it as it is).
  bool ownedResult =
      first.ownedOnly ||
      !isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType()));
  if (ownedResult && !op->hasTrait<mlir::OpTrait::Elementwise>())
    return std::nullopt;
  if (!keepsRows(op, first, getRoutingRank(first)))
    return std::nullopt;
  // A concatenation or reshape of exclusive values only; the other operands
  // of an elementwise op are read in the exclusive value's layout. Where
  // that needs communication (the routing weights, split over dp with the
  // tokens), the exclusive value is reduced here instead, unless an expert
  // product reads the result (which would gather it again).
  bool free = true;
  for (Value operand : op->getOperands()) {
    const LocalValue &value = local[operand];
    if (!value.unreduced.empty() || value.ownedOnly)
      continue;
    if (isa<ConcatOp, ReshapeOp, SliceOp, PadOp>(op))
      return std::nullopt;
    Operation *def = operand.getDefiningOp();
    bool scalarBroadcast =
        isa_and_present<BroadcastInDimOp>(def) &&
        cast<BroadcastInDimOp>(def).getOperand().getType().getRank() == 0;
    if (!scalarBroadcast && !isa_and_present<ConstantOp>(def) &&
        !isLocalReshard(value, first.layout))
      free = false;
  }
  if (!free && !reachesExpertProduct(op->getResult(0), first.exclusiveIds,
                                     /*depth=*/8))
    return std::nullopt;
  return exclusive;
}

bool Partitioner::readsExclusive(Operation *op, unsigned index,
                                 const LocalValue &source,
                                 ArrayRef<unsigned> axes,
                                 const TensorLayout &required) {
  if (!source.exclusiveIds || !isExpertRowsOperand(op, index) ||
      getRoutingIds(op) != source.exclusiveIds ||
      getNumGlobalExperts(op) != source.exclusiveExperts ||
      source.kind != shard::ReductionKind::Sum || !(source.layout == required))
    return false;
  // An owned-only value's axes are those of the exclusive values it came
  // from: the product's, as the ids and experts are the same.
  return source.ownedOnly || source.unreduced == sortAxes(axes);
}

FailureOr<LocalValue> Partitioner::materialize(Value original,
                                               Operation *user) {
  LocalValue value = local[original];
  if (!value.ownedOnly)
    return value;
  // The op that made it, on its operands made valid on every row, in the
  // same layout (the local types do not change).
  Operation *def = original.getDefiningOp();
  SmallVector<Value> operands;
  for (Value operand : def->getOperands()) {
    FailureOr<LocalValue> source = materialize(operand, user);
    if (failed(source))
      return failure();
    LocalValue whole = *source;
    TensorLayout layout = whole.layout;
    if (whole.globalType.getShape() == value.globalType.getShape())
      layout = value.layout;
    FailureOr<Value> made =
        reshard(whole, layout, user,
                "an op computed on the rows of the device's experts is "
                "rebuilt on every row for a reader that needs them all");
    if (failed(made))
      return failure();
    operands.push_back(*made);
  }
  Operation *clone = builder.clone(*def);
  clone->setOperands(operands);
  clone->getResult(0).setType(value.value.getType());
  clone->removeAttr(kShardingsAttrName);
  clone->removeAttr(kShardingPrioritiesAttrName);
  LocalValue whole{clone->getResult(0), value.globalType, value.layout};
  local[original] = whole;
  return whole;
}

bool Partitioner::keepsPartial(Operation *user, Value original,
                               const LocalValue &source) {
  if (isa<AddOp, SubOp>(user))
    return true;
  // An exclusive value is reduced, if at all, where it meets an op that
  // does not pass it on (getExclusiveOperand, readsExclusive).
  if (source.exclusiveIds &&
      (passesExclusive(user) ||
       llvm::any_of(llvm::enumerate(user->getOperands()), [&](auto operand) {
         return operand.value() == original &&
                isExpertRowsOperand(user, operand.index()) &&
                getRoutingIds(user) == source.exclusiveIds;
       })))
    return true;
  if (auto pad = dyn_cast<PadOp>(user))
    return padKeepsPartial(pad, source);
  return getScaledPartialOperand(user, original, &source).has_value();
}

LogicalResult Partitioner::partitionOp(Operation *op) {
  builder.setInsertionPoint(op);
  if (op->getNumRegions() != 0)
    return op->emitError("tg-partition runs before tg-fuse: an op with "
                         "regions cannot be partitioned");
  for (Type type : op->getResultTypes())
    if (!isa<RankedTensorType>(type))
      return op->emitError("tg-partition: a result is not a ranked tensor");

  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  ShardingRule rule;
  SmallVector<FactorChoice> choices;
  SmallVector<TensorLayout> resultLayouts;
  for (unsigned index = 0, e = op->getNumResults(); index < e; ++index)
    resultLayouts.push_back(getResultLayout(op, index));
  if (ruled) {
    rule = ruled.getShardingRule();
    restrictRuleForPartitioning(op, rule);
    SmallVector<const TensorLayout *> operands, results;
    for (Value operand : op->getOperands())
      operands.push_back(&local.find(operand)->second.layout);
    for (const TensorLayout &layout : resultLayouts)
      results.push_back(&layout);
    choices = resolveFactors(op, rule, operands, results,
                             TensorLayout::kUnsetPriority - 1, mesh, nullptr);
  }
  // Every layout of the per-device program is decided: it proposes its
  // axes to the ops that read it.
  auto layoutOf = [&](ArrayRef<SmallVector<int64_t, 1>> dims, int64_t rank) {
    TensorLayout layout = ruled ? projectFactors(dims, rule, choices)
                                : TensorLayout::getUnset(rank);
    layout.priority = 0;
    return layout;
  };

  // Sums of partial values stay partial: the reduction moves past them. So
  // does padding with zeros (ZeRO's padded gradients, reduce-scattered
  // after it) along dimensions the partial value does not split, and a
  // conversion or scaling whose result is summed (getScaledPartialOperand).
  LocalValue first;
  bool keepPartial = false;
  // Expert parallelism: exclusive values pass through elementwise ops
  // (getExclusiveOperand).
  bool exclusive = false;
  if (std::optional<unsigned> operand = getExclusiveOperand(op)) {
    first = local[op->getOperand(*operand)];
    keepPartial = exclusive = true;
  } else if (isa<AddOp, SubOp>(op)) {
    first = local[op->getOperand(0)];
    keepPartial = !first.unreduced.empty() &&
                  llvm::all_of(op->getOperands(), [&](Value operand) {
                    const LocalValue &other = local[operand];
                    return other.unreduced == first.unreduced &&
                           other.kind == shard::ReductionKind::Sum &&
                           other.layout == first.layout;
                  });
  } else if (auto pad = dyn_cast<PadOp>(op)) {
    first = local[pad.getOperand()];
    keepPartial = padKeepsPartial(pad, first);
  } else if (std::optional<unsigned> partial = getScaledPartialOperand(op)) {
    first = local[op->getOperand(*partial)];
    keepPartial = true;
  }

  // An expert product split over its experts computes the rows of the
  // device's experts only (global_experts).
  int64_t expertFactor = ruled ? getExpertFactor(op, rule) : -1;
  AxisList expertAxes;
  if (expertFactor >= 0)
    expertAxes = choices[expertFactor].axes;

  SmallVector<Value> operands;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    LocalValue source = local[operand];
    if ((keepPartial && !source.unreduced.empty()) ||
        (exclusive && source.ownedOnly)) {
      operands.push_back(source.value);
      continue;
    }
    // An owned-only value read by an expert product of its rows is taken
    // as it is (readsExclusive); any other reader rebuilds it.
    if (source.ownedOnly &&
        !(!expertAxes.empty() && ruled &&
          readsExclusive(op, index, source, expertAxes,
                         layoutOf(rule.operandFactors[index],
                                  source.globalType.getRank())))) {
      FailureOr<LocalValue> whole = materialize(operand, op);
      if (failed(whole))
        return failure();
      source = *whole;
    }
    // The scale of a partial value: in the partial value's layout; a
    // broadcast scalar broadcast again to the local shape.
    if (keepPartial) {
      auto broadcast = operand.getDefiningOp<BroadcastInDimOp>();
      if (broadcast && broadcast.getOperand().getType().getRank() == 0) {
        const LocalValue &scalar = local[broadcast.getOperand()];
        FailureOr<Value> whole =
            reshard(scalar, TensorLayout::getUnset(0), op,
                    "a scale broadcast to a partial value's layout");
        FailureOr<Type> type =
            getLocalType(source.globalType, first.layout, op->getLoc());
        if (failed(whole) || failed(type))
          return failure();
        operands.push_back(BroadcastInDimOp::create(
            builder, broadcast.getLoc(), cast<RankedTensorType>(*type), *whole,
            ArrayRef<int64_t>{}));
        continue;
      }
      FailureOr<Value> value =
          reshard(source, first.layout, op,
                  "operand #" + std::to_string(index) +
                      " scales a partial value laid out as " +
                      describeLayout(first.layout, mesh));
      if (failed(value))
        return failure();
      operands.push_back(*value);
      continue;
    }
    TensorLayout required =
        layoutOf(ruled ? ArrayRef(rule.operandFactors[index])
                       : ArrayRef<SmallVector<int64_t, 1>>(),
                 source.globalType.getRank());
    if (!expertAxes.empty() &&
        readsExclusive(op, index, source, expertAxes, required)) {
      operands.push_back(source.value);
      continue;
    }
    std::string why = "operand #" + std::to_string(index) + " needs layout " +
                      describeLayout(required, mesh);
    FailureOr<Value> value = reshard(source, required, op, why);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }

  // A mean of the gradient over the tokens: each device divides by its own
  // token count; scaling the incoming gradient by the share of one device
  // makes it the mean over all of them.
  if (auto lossGrad = dyn_cast<CrossEntropyGradOp>(op);
      lossGrad && lossGrad.getReduction() == LossReduction::Mean) {
    int64_t shards = 1;
    for (const auto &factors : rule.operandFactors[2])
      for (int64_t factor : factors)
        for (unsigned axis : choices[factor].axes)
          shards *= mesh.axisSizes[axis];
    if (shards > 1) {
      auto scalar = cast<RankedTensorType>(operands[0].getType());
      auto share = ConstantOp::create(
          builder, op->getLoc(),
          DenseElementsAttr::get(
              scalar, builder
                          .getFloatAttr(scalar.getElementType(),
                                        1.0 / static_cast<double>(shards))
                          .getValue()));
      operands[0] = MulOp::create(builder, op->getLoc(), operands[0], share);
    }
  }

  SmallVector<Type> types;
  SmallVector<TensorLayout> layouts;
  for (unsigned index = 0, e = op->getNumResults(); index < e; ++index) {
    auto global = cast<RankedTensorType>(op->getResult(index).getType());
    TensorLayout layout =
        keepPartial ? first.layout
                    : layoutOf(ruled ? ArrayRef(rule.resultFactors[index])
                                     : ArrayRef<SmallVector<int64_t, 1>>(),
                               global.getRank());
    // A reshape of an exclusive value keeps its rows' layout; the
    // dimensions after them are whole (getExclusiveOperand).
    if (exclusive &&
        layout.dims.size() != static_cast<size_t>(global.getRank())) {
      layout.dims.resize(global.getRank());
      for (int64_t dim = getRoutingRank(first); dim < global.getRank(); ++dim)
        layout.dims[dim].clear();
      layout.open.assign(global.getRank(), false);
    }
    FailureOr<Type> type = getLocalType(global, layout, op->getLoc());
    if (failed(type))
      return failure();
    types.push_back(*type);
    layouts.push_back(layout);
  }

  // An op that compares global ids or labels with the rows or classes a
  // device holds (Megatron's vocabulary-parallel embedding and loss) is
  // rebuilt on the device's block; every other op is cloned.
  int64_t vocabFactor = ruled ? getVocabFactor(op, rule) : -1;
  Operation *clone = nullptr;
  SmallVector<Value> newResults;
  if (vocabFactor >= 0 && !choices[vocabFactor].axes.empty()) {
    Operation *before = op->getPrevNode();
    SmallVector<Type> operandTypes;
    for (auto [operand, value] : llvm::zip(op->getOperands(), operands)) {
      FailureOr<Type> type = getOperandType(operand, value, op->getLoc());
      if (failed(type))
        return failure();
      operandTypes.push_back(*type);
    }
    FailureOr<SmallVector<Value>> built =
        buildVocabParallel(builder, op, operands, operandTypes, types,
                           choices[vocabFactor].axes, mesh);
    if (failed(built))
      return failure();
    newResults = std::move(*built);
    for (auto [index, value] : llvm::enumerate(newResults))
      rebuilt[value] = "result #" + std::to_string(index) + " of the " +
                       "vocabulary-parallel " +
                       op->getName().getStringRef().str();
    // The rebuilt ops belong to the op's pipeline stage, micro-batch and
    // phase.
    auto rebuiltOps = llvm::make_range(before ? std::next(before->getIterator())
                                              : op->getBlock()->begin(),
                                       op->getIterator());
    for (Operation &rebuiltOp : rebuiltOps)
      copyPipelineAttrs(op, &rebuiltOp);
    if (explain)
      explainVocabParallel(op, rebuiltOps, choices[vocabFactor].axes);
  } else {
    vocabFactor = -1;
    clone = builder.clone(*op);
    clone->setOperands(operands);
    for (auto [result, type] : llvm::zip(clone->getResults(), types))
      result.setType(type);
    clone->removeAttr(kShardingsAttrName);
    clone->removeAttr(kShardingPrioritiesAttrName);
    llvm::append_range(newResults, clone->getResults());
  }
  // The device's block of experts: ids relative to it, and the rows of its
  // experts (the others' rows are zeros, or add nothing).
  Value ownedRows;
  if (clone && !expertAxes.empty() &&
      isa<ExpertMatmulOp, ExpertMatmulGradOp>(op)) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(clone);
    FailureOr<Type> idsType =
        getOperandType(op->getOperand(2), operands[2], op->getLoc());
    if (failed(idsType))
      return failure();
    int64_t global = getNumGlobalExperts(op);
    int64_t group = 1;
    for (unsigned axis : expertAxes)
      group *= mesh.axisSizes[axis];
    // One routing's products split alike share them (their experts take
    // the same axes, in the same order, at every product of the step).
    auto [ids, owned] =
        getBlockIds(operands[2], cast<RankedTensorType>(*idsType), expertAxes,
                    global / group, op->getLoc());
    clone->setOperand(2, ids);
    if (auto product = dyn_cast<ExpertMatmulOp>(clone))
      product.setGlobalExperts(global);
    else
      cast<ExpertMatmulGradOp>(clone).setGlobalExperts(global);
    ownedRows = owned;
  }
  // An exclusive result is masked to the device's rows unless its zeros
  // stay zeros: sums and products of exclusive values, negations,
  // conversions, and the ops that move or pad its elements. (A product by
  // a value that is not exclusive is masked: 0 times infinity is NaN.)
  Operation *last = clone;
  bool ownedResult =
      exclusive &&
      (first.ownedOnly ||
       !isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())));
  if (exclusive && !ownedResult) {
    bool keepsZeros =
        isa<NegOp, ConvertOp, SliceOp, ConcatOp, ReshapeOp, PadOp>(op) ||
        (isa<AddOp, SubOp, MulOp>(op) &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           return isExclusiveAlike(local[operand], first);
         }));
    if (!keepsZeros) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfter(clone);
      auto type = cast<RankedTensorType>(newResults[0].getType());
      Value mask = BroadcastInDimOp::create(
          builder, op->getLoc(), type.clone(builder.getI1Type()),
          first.ownedRows,
          llvm::to_vector(llvm::seq<int64_t>(0, getRoutingRank(first))));
      Value zeros = ConstantOp::create(
          builder, op->getLoc(),
          DenseElementsAttr::get(
              type, builder.getFloatAttr(type.getElementType(), 0.0)));
      auto select = SelectOp::create(builder, op->getLoc(), type, mask,
                                     newResults[0], zeros);
      newResults[0] = select;
      last = select;
    }
  }
  // A split dropout (random op) draws the device's part of the whole mask
  // (numbers): its elements' indices start at the block's first (plus a
  // micro-batch's offset) and lie where the block lies in the whole tensor.
  // tg.attention's dropout mask covers its [B, H, Sq, Sk] probabilities,
  // which lie as its [B, H, Sq, Dv] output does (keys and value width
  // stay whole).
  // Whose heads tp padded, it draws them as blocks of the unpadded shape
  // (kUnpaddedRandomShapeAttrName), split or not.
  auto unpadded =
      op->getAttrOfType<DenseI64ArrayAttr>(kUnpaddedRandomShapeAttrName);
  if (clone)
    clone->removeAttr(kUnpaddedRandomShapeAttrName);
  if (auto random = dyn_cast_if_present<CounterRandomOpInterface>(clone);
      random && random.drawsRandom() &&
      (unpadded || llvm::any_of(layouts[0].dims, [](const AxisList &axes) {
         return !axes.empty();
       }))) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(random);
    SmallVector<int64_t> whole =
        unpadded ? llvm::to_vector(unpadded.asArrayRef())
                 : cast<CounterRandomOpInterface>(op).getRandomShape();
    SmallVector<int64_t> block = random.getRandomShape();
    // Padded heads left whole would hold more heads than the unpadded
    // shape: their numbers would not be the unpadded step's.
    if (unpadded && llvm::any_of(llvm::zip(block, whole), [](auto pair) {
          return std::get<0>(pair) > std::get<1>(pair);
        }))
      return op->emitError("tg-partition: the padded heads of a dropout are "
                           "not split over the devices (its block of numbers ")
             << llvm::interleaved_array(block) << " exceeds the unpadded shape "
             << llvm::interleaved_array(whole) << ")";
    Value offset = random.getRandomOffset();
    auto indexType = offset ? cast<IntegerType>(getElementTypeOrSelf(offset))
                            : builder.getI64Type();
    int64_t stride = 1;
    for (int64_t dim = static_cast<int64_t>(whole.size()) - 1; dim >= 0;
         --dim) {
      if (!layouts[0].dims[dim].empty()) {
        Value start =
            buildBlockOffset(builder, op->getLoc(), layouts[0].dims[dim], mesh,
                             block[dim] * stride, indexType);
        offset = offset ? AddOp::create(builder, op->getLoc(), offset, start)
                              .getResult()
                        : start;
      }
      stride *= whole[dim];
    }
    if (offset)
      random.getRandomOffsetMutable().assign(offset);
    if (unpadded ||
        llvm::any_of(ArrayRef(layouts[0].dims).drop_front(),
                     [](const AxisList &axes) { return !axes.empty(); }))
      random.setRandomGlobalShape(whole);
  }
  // A slice keeps the dimensions it does not cut whole: their limits are
  // the local sizes.
  if (auto slice = dyn_cast_if_present<SliceOp>(clone)) {
    const LocalValue &source = local.find(op->getOperand(0))->second;
    FailureOr<Type> localType =
        getOperandType(op->getOperand(0), operands[0], op->getLoc());
    if (failed(localType))
      return failure();
    auto localShape = cast<RankedTensorType>(*localType).getShape();
    ArrayRef<int64_t> globalShape = source.globalType.getShape();
    SmallVector<int64_t> limits(slice.getLimitIndices());
    for (auto [dim, limit] : llvm::enumerate(limits))
      if (localShape[dim] != globalShape[dim])
        limit = localShape[dim];
    slice.setLimitIndices(limits);
  }

  for (unsigned index = 0, e = op->getNumResults(); index < e; ++index) {
    LocalValue result{newResults[index],
                      cast<RankedTensorType>(op->getResult(index).getType()),
                      layouts[index],
                      {},
                      getPartialKind(op)};
    if (keepPartial) {
      result.unreduced = first.unreduced;
      result.kind = first.kind;
      if (exclusive) {
        result.exclusiveIds = first.exclusiveIds;
        result.ownedRows = first.ownedRows;
        result.exclusiveExperts = first.exclusiveExperts;
        if (ownedResult) {
          result.unreduced.clear();
          result.ownedOnly = true;
        }
      }
    } else if (ruled) {
      for (int64_t factor = 0; factor < rule.getNumFactors(); ++factor)
        if (rule.isReducedIn(index, factor) &&
            !(factor == vocabFactor && reducesVocabFactor(op)))
          llvm::append_range(result.unreduced, choices[factor].axes);
      llvm::sort(result.unreduced);
      // A product over the device's experts: its rows of the other
      // experts are zeros, its own whole (when nothing else is summed).
      if (isa<ExpertMatmulOp>(op) && ownedRows &&
          result.unreduced == sortAxes(expertAxes)) {
        result.exclusiveIds = op->getOperand(2);
        result.ownedRows = ownedRows;
        result.exclusiveExperts = getNumGlobalExperts(op);
      }
      // A lookup of a row per expert by the routing ids (an expert's
      // bias), split on its rows: zero rows for the other experts' ids,
      // exclusive as the products'.
      if (auto lookup = dyn_cast<EmbeddingOp>(op);
          lookup && vocabFactor >= 0 && isRoutingIds(lookup.getIndices())) {
        FailureOr<Type> idsType =
            getOperandType(op->getOperand(1), operands[1], op->getLoc());
        FailureOr<Type> tableType =
            getOperandType(op->getOperand(0), operands[0], op->getLoc());
        if (failed(idsType) || failed(tableType))
          return failure();
        if (result.unreduced == sortAxes(choices[vocabFactor].axes)) {
          result.exclusiveIds = lookup.getIndices();
          result.ownedRows =
              getBlockIds(operands[1], cast<RankedTensorType>(*idsType),
                          choices[vocabFactor].axes,
                          cast<RankedTensorType>(*tableType).getDimSize(0),
                          op->getLoc())
                  .second;
          result.exclusiveExperts = lookup.getTable().getType().getDimSize(0);
        }
      }
    }
    // An annotated result (ZeRO-1's all-reduced gradient, a bf16 copy
    // kept whole) takes its layout right away, partial sums reduced; a
    // result the op computes in another layout than propagation gave it
    // (its consumers') is converted once, here. Otherwise partial sums stay
    // partial until a consumer needs them whole.
    const TensorLayout &wanted = resultLayouts[index];
    ShardingAttr annotation = getValueSharding(op->getResult(index));
    bool annotated = annotation && annotation.hasPriority();
    result.layout.priority = wanted.priority;
    // A constant stays whole: each reader slices what it needs, for free.
    bool isConstant = op->getNumOperands() == 0;
    // A partial result that only additions read stays partial: the sum of
    // the partial values is reduced once (the gradients of LLaMA's gate and
    // up projections, or of q, k and v, meet in one reduce-scatter).
    bool staysPartial =
        !result.unreduced.empty() && !op->getResult(index).use_empty() &&
        llvm::all_of(op->getResult(index).getUsers(), [&](Operation *user) {
          return keepsPartial(user, op->getResult(index), result);
        });
    // An owned-only value is rebuilt where a reader needs it whole
    // (materialize), not here.
    if (result.ownedOnly && !annotated) {
      local[op->getResult(index)] = result;
      ownedValues.push_back(result.value);
      continue;
    }
    if (result.ownedOnly) {
      local[op->getResult(index)] = result;
      if (last)
        builder.setInsertionPointAfter(last);
      FailureOr<LocalValue> whole = materialize(op->getResult(index), op);
      if (failed(whole))
        return failure();
      result = *whole;
    }
    if (annotated ||
        (!isConstant && !staysPartial && !(result.layout == wanted))) {
      if (last)
        builder.setInsertionPointAfter(last);
      std::string why =
          (annotated ? "the result is annotated " : "its users read it as ") +
          describeLayout(wanted, mesh);
      FailureOr<Value> value = reshard(result, wanted, last ? last : op, why);
      if (failed(value))
        return failure();
      result = {*value, result.globalType, wanted, {}, result.kind};
    }
    local[op->getResult(index)] = result;
  }
  return success();
}

LogicalResult Partitioner::partitionReturn(func::ReturnOp op) {
  builder.setInsertionPoint(op);
  SmallVector<Value> operands;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    FailureOr<LocalValue> whole = materialize(operand, op);
    if (failed(whole))
      return failure();
    const LocalValue &source = *whole;
    TensorLayout required = TensorLayout::getUnset(source.globalType.getRank());
    if (ShardingAttr sharding = getResultSharding(function, index))
      required = TensorLayout::fromAttr(sharding, mesh);
    FailureOr<Value> value =
        reshard(source, required, op,
                "result #" + std::to_string(index) + " is stored as " +
                    describeLayout(required, mesh));
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }
  func::ReturnOp::create(builder, op.getLoc(), operands);
  op.erase();
  return success();
}

LogicalResult Partitioner::run() {
  Block &body = function.getBody().front();
  // The arguments keep their global types until every op is partitioned:
  // the sharding rules are read off the original ops' types.
  SmallVector<Type> argTypes;
  for (BlockArgument arg : body.getArguments()) {
    auto global = dyn_cast<RankedTensorType>(arg.getType());
    if (!global)
      return function.emitError("tg-partition: argument #")
             << arg.getArgNumber() << " is not a ranked tensor";
    TensorLayout layout = TensorLayout::getUnset(global.getRank());
    if (ShardingAttr sharding = getArgSharding(function, arg.getArgNumber())) {
      if (!sharding.getUnreducedAxes().empty())
        return function.emitError("argument #")
               << arg.getArgNumber() << " cannot be a partial sum";
      layout = TensorLayout::fromAttr(sharding, mesh);
    }
    FailureOr<Type> type = getLocalType(global, layout, arg.getLoc());
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    local[arg] = {arg, global, layout, {}, shard::ReductionKind::Sum};
  }

  // The ops before the terminator; partitionReturn replaces the terminator
  // itself.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops)
    if (failed(partitionOp(op)))
      return failure();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return body.getTerminator()->emitError(
        "tg-partition: a function must end in func.return");
  if (failed(partitionReturn(ret)))
    return failure();
  // The original ops, last first so that every use goes before its value.
  for (Operation *op : llvm::reverse(ops)) {
    op->dropAllUses();
    op->erase();
  }
  // Expert parallelism's values nothing reads: the test of a block of
  // experts no exclusive value was masked by (the weight gradients' ids),
  // and owned-only values whose readers all took them rebuilt (last
  // first); with the ops only they read.
  SmallVector<Operation *> unread;
  for (auto &[key, built] : blockIds)
    unread.push_back(built.second.getDefiningOp());
  for (Value value : llvm::reverse(ownedValues))
    unread.push_back(value.getDefiningOp());
  llvm::SmallPtrSet<Operation *, 16> erased;
  for (Operation *candidate : unread) {
    SmallVector<Operation *> dead = {candidate};
    while (!dead.empty()) {
      Operation *op = dead.pop_back_val();
      if (!op || erased.contains(op) || !op->use_empty() || !isPure(op))
        continue;
      for (Value operand : op->getOperands())
        dead.push_back(operand.getDefiningOp());
      erased.insert(op);
      op->erase();
    }
  }
  // A whole splat every reader took its smaller block of (toLayout) is
  // read by nothing: no arena bytes for it.
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    if (isa<tg::ConstantOp>(op) && op.use_empty())
      op.erase();

  for (auto [arg, type] : llvm::zip(body.getArguments(), argTypes))
    arg.setType(type);
  SmallVector<Type> results(body.getTerminator()->getOperandTypes().begin(),
                            body.getTerminator()->getOperandTypes().end());
  function.setType(FunctionType::get(function.getContext(),
                                     body.getArgumentTypes(), results));
  return success();
}

namespace {
struct PartitionPass : public tgc::impl::TGPartitionBase<PartitionPass> {
  using TGPartitionBase::TGPartitionBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    FailureOr<std::optional<Mesh>> found = lookupFunctionMesh(function);
    if (failed(found))
      return signalPassFailure();
    if (!*found)
      return;
    const Mesh *mesh = &**found;
    llvm::Expected<DeviceSpec> device = getDeviceOf(function);
    if (!device) {
      function.emitError() << llvm::toString(device.takeError());
      return signalPassFailure();
    }
    Partitioner partitioner(function, *mesh, explain, *device);
    if (failed(partitioner.run()))
      return signalPassFailure();
  }
};
} // namespace
