//===- VocabParallel.cpp - Per-device ops over a split vocabulary ---------===//
//
// A device holding block p of a dimension of size V split into G blocks over
// some axes holds the global indices [p·V/G, (p+1)·V/G). Ops that compare
// global ids or labels with those indices are rebuilt on the block:
//
// - embedding: ids outside the block give zero rows, so the results of the
//   devices sum to the lookup (a partial sum over the axes);
// - embedding_grad: only the positions whose id is in the block scatter into
//   the device's rows;
// - cross_entropy: each device's log-sum-exp over its classes, combined with
//   an all-reduce max and an all-reduce sum of the rescaled exponentials;
//   the target logits enter the loss through one all-reduced scalar (each
//   device's counted tokens' lse minus its loss over them);
// - cross_entropy_grad: the op on the block, with the tokens whose label
//   another device holds given only their softmax part.
//
// Three all-reduces of the tokens' size (two of [tokens], one scalar) for the
// loss, as Megatron's vocab_parallel_cross_entropy.
//
//===----------------------------------------------------------------------===//

#include "VocabParallel.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

int64_t tgc::getVocabFactor(Operation *op, const ShardingRule &rule) {
  if (isa<EmbeddingOp>(op))
    return rule.operandFactors[0][0].front();
  if (isa<EmbeddingGradOp>(op))
    return rule.resultFactors[0][0].front();
  if (isa<CrossEntropyOp>(op))
    return rule.operandFactors[0].back().front();
  if (isa<CrossEntropyGradOp>(op))
    return rule.operandFactors[1].back().front();
  return -1;
}

bool tgc::reducesVocabFactor(Operation *op) { return isa<CrossEntropyOp>(op); }

namespace {

/// Label codes on a device: the local class of a label it holds, or one of
/// these for the tokens it does not count.
enum : int64_t { kElsewhere = -1, kIgnored = -2 };

class VocabBuilder {
public:
  VocabBuilder(OpBuilder &builder, Location loc, ArrayRef<unsigned> axes,
               const Mesh &mesh, ValueRange operands, TypeRange operandTypes)
      : b(builder), loc(loc), axes(axes), mesh(mesh) {
    for (auto [operand, type] : llvm::zip(operands, operandTypes))
      localTypes[operand] = cast<RankedTensorType>(type);
  }

  /// The op's tg.id_bound (a padded vocabulary), if any.
  std::optional<int64_t> idBound;

  /// The local type of a value: an argument keeps its global type until
  /// tg-partition has partitioned every op.
  RankedTensorType typeOf(Value value) {
    if (auto it = localTypes.find(value); it != localTypes.end())
      return it->second;
    return cast<RankedTensorType>(value.getType());
  }

  Value constant(RankedTensorType type, double value) {
    Type element = type.getElementType();
    Attribute scalar =
        isa<FloatType>(element)
            ? Attribute(b.getFloatAttr(element, value))
            : Attribute(b.getIntegerAttr(element, static_cast<int64_t>(value)));
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, scalar));
  }
  Value broadcast(Value value, ArrayRef<int64_t> shape) {
    auto type = typeOf(value);
    if (type.getShape() == shape)
      return value;
    return BroadcastInDimOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
  }
  Value compare(CompareDirection direction, Value lhs, Value rhs) {
    auto type = typeOf(lhs);
    return CompareOp::create(b, loc, type.clone(b.getI1Type()), direction, lhs,
                             rhs);
  }
  Value select(Value pred, Value onTrue, Value onFalse) {
    return SelectOp::create(b, loc, typeOf(onTrue), pred, onTrue, onFalse);
  }
  Value toF32(Value value) {
    auto type = typeOf(value);
    if (type.getElementType().isF32())
      return value;
    return ConvertOp::create(b, loc, type.clone(b.getF32Type()), value);
  }
  /// The sum of every element, as a scalar.
  Value sumAll(Value value) {
    auto type = typeOf(value);
    if (type.getRank() == 0)
      return value;
    return ReduceOp::create(
        b, loc, RankedTensorType::get({}, type.getElementType()),
        ReduceKind::Sum, value,
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
  }
  Value allReduce(Value value, shard::ReductionKind kind) {
    return shard::AllReduceOp::create(
        b, loc, typeOf(value), mesh.name,
        llvm::map_to_vector(axes, [](unsigned axis) { return int16_t(axis); }),
        value, kind);
  }

  /// `ids` minus the device's block offset, and whether it falls in the
  /// block of `block` indices.
  std::pair<Value, Value> localIds(Value ids, int64_t block) {
    int64_t group = 1;
    for (unsigned axis : axes)
      group *= mesh.axisSizes[axis];
    // A padded vocabulary's ids stay below the op's own bound.
    int64_t bound = group * block;
    if (idBound)
      bound = std::min(bound, *idBound);
    return buildBlockIds(b, loc, ids, typeOf(ids), axes, mesh, block, bound);
  }

  /// The label codes of a loss: the local class, kElsewhere, or kIgnored.
  Value labelCodes(Value labels, int64_t block,
                   std::optional<int64_t> ignoreIndex) {
    auto type = typeOf(labels);
    auto [local, inBlock] = localIds(labels, block);
    Value codes = select(inBlock, local, constant(type, kElsewhere));
    if (ignoreIndex) {
      auto ignore = IntegerAttr::get(type.getElementType(), *ignoreIndex);
      Value ignored =
          compare(CompareDirection::EQ, labels,
                  ConstantOp::create(
                      b, loc, DenseElementsAttr::get(type, Attribute(ignore))));
      codes = select(ignored, constant(type, kIgnored), codes);
    }
    return codes;
  }
  /// The labels of the op on the block: the codes, with every token the
  /// device does not count ignored as kElsewhere.
  Value blockLabels(Value codes) {
    auto type = typeOf(codes);
    return MaxOp::create(b, loc, type, codes, constant(type, kElsewhere));
  }
  /// Tokens whose label is not the ignored one, in f32, summed.
  Value countedTokens(Value codes) {
    auto type = typeOf(codes);
    Value counted =
        compare(CompareDirection::NE, codes, constant(type, kIgnored));
    return sumAll(
        ConvertOp::create(b, loc, type.clone(b.getF32Type()), counted));
  }

  OpBuilder &b;
  Location loc;
  ArrayRef<unsigned> axes;
  const Mesh &mesh;
  DenseMap<Value, RankedTensorType> localTypes;
};

} // namespace

static SmallVector<Value> buildEmbedding(VocabBuilder &v, ValueRange operands,
                                         TypeRange resultTypes) {
  Value table = operands[0], ids = operands[1];
  auto idsType = v.typeOf(ids);
  auto resultType = cast<RankedTensorType>(resultTypes[0]);
  int64_t block = v.typeOf(table).getDimSize(0);
  auto [local, inBlock] = v.localIds(ids, block);
  Value clamped = v.select(inBlock, local, v.constant(idsType, 0));
  Value rows = EmbeddingOp::create(v.b, v.loc, resultType, table, clamped);
  Value mask = v.broadcast(inBlock, resultType.getShape());
  return {v.select(mask, rows, v.constant(resultType, 0))};
}

static SmallVector<Value> buildEmbeddingGrad(VocabBuilder &v,
                                             ValueRange operands,
                                             TypeRange resultTypes) {
  Value grad = operands[0], ids = operands[1];
  auto idsType = v.typeOf(ids);
  auto gradType = v.typeOf(grad);
  auto resultType = cast<RankedTensorType>(resultTypes[0]);
  auto [local, inBlock] = v.localIds(ids, resultType.getDimSize(0));
  Value clamped = v.select(inBlock, local, v.constant(idsType, 0));
  Value mask = v.broadcast(inBlock, gradType.getShape());
  Value kept = v.select(mask, grad, v.constant(gradType, 0));
  return {EmbeddingGradOp::create(v.b, v.loc, resultType, kept, clamped)};
}

static std::optional<int64_t> getIgnoreIndex(IntegerAttr attr) {
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}

static SmallVector<Value> buildCrossEntropy(VocabBuilder &v, CrossEntropyOp op,
                                            ValueRange operands,
                                            TypeRange resultTypes) {
  OpBuilder &b = v.b;
  Location loc = v.loc;
  Value logits = operands[0], labels = operands[1];
  auto logitsType = v.typeOf(logits);
  auto labelsType = v.typeOf(labels);
  auto lseType = cast<RankedTensorType>(resultTypes[1]);
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  std::optional<int64_t> ignoreIndex = getIgnoreIndex(op.getIgnoreIndexAttr());
  Value codes = v.labelCodes(labels, logitsType.getShape().back(), ignoreIndex);

  // The loss over the tokens whose label the device holds, and every
  // token's log-sum-exp over the device's classes.
  auto onBlock = CrossEntropyOp::create(
      b, loc, scalar, lseType, LossReduction::Sum, logits, v.blockLabels(codes),
      b.getI64IntegerAttr(kElsewhere));
  Value blockLse = onBlock.getLogsumexp();
  // lse = m + log(sum_p exp(lse_p - m)), m the largest lse_p.
  Value max = v.allReduce(blockLse, shard::ReductionKind::Max);
  Value sum = v.allReduce(
      ExpOp::create(b, loc, lseType, SubOp::create(b, loc, blockLse, max)),
      shard::ReductionKind::Sum);
  Value lse = AddOp::create(b, loc, max, LogOp::create(b, loc, lseType, sum));

  // The counted tokens' target logits, summed: for the tokens the device
  // holds, lse_p - (lse_p - target) over them.
  Value counted =
      v.compare(CompareDirection::GE, codes, v.constant(labelsType, 0));
  Value targets = SubOp::create(
      b, loc, v.sumAll(v.select(counted, blockLse, v.constant(lseType, 0))),
      onBlock.getLoss());
  targets = v.allReduce(targets, shard::ReductionKind::Sum);
  Value lseOfCounted = lse;
  if (ignoreIndex)
    lseOfCounted = v.select(v.compare(CompareDirection::NE, codes,
                                      v.constant(labelsType, kIgnored)),
                            lse, v.constant(lseType, 0));
  Value loss = SubOp::create(b, loc, v.sumAll(lseOfCounted), targets);
  if (op.getReduction() == LossReduction::Mean) {
    // Without ignore_index, a mean over split tokens is each device's mean,
    // averaged by the partitioner; with it, the tokens are whole.
    Value count =
        ignoreIndex
            ? v.countedTokens(codes)
            : v.constant(scalar,
                         static_cast<double>(labelsType.getNumElements()));
    loss = DivOp::create(b, loc, loss, count);
  }
  if (loss.getType() != resultTypes[0])
    loss = ConvertOp::create(b, loc, resultTypes[0], loss);
  return {loss, lse};
}

static SmallVector<Value> buildCrossEntropyGrad(VocabBuilder &v,
                                                CrossEntropyGradOp op,
                                                ValueRange operands,
                                                TypeRange resultTypes) {
  OpBuilder &b = v.b;
  Location loc = v.loc;
  Value gradLoss = operands[0], logits = operands[1], labels = operands[2],
        lse = operands[3];
  auto logitsType = v.typeOf(logits);
  auto labelsType = v.typeOf(labels);
  auto gradType = v.typeOf(gradLoss);
  std::optional<int64_t> ignoreIndex = getIgnoreIndex(op.getIgnoreIndexAttr());
  Value codes = v.labelCodes(labels, logitsType.getShape().back(), ignoreIndex);
  // The weight of every counted token: the incoming gradient, over the
  // counted tokens for a mean (the partitioner has already scaled it by the
  // device's share of split tokens).
  Value weight = gradLoss;
  if (op.getReduction() == LossReduction::Mean) {
    Value count =
        ignoreIndex
            ? v.countedTokens(codes)
            : v.constant(RankedTensorType::get({}, b.getF32Type()),
                         static_cast<double>(labelsType.getNumElements()));
    if (!gradType.getElementType().isF32())
      count = ConvertOp::create(b, loc, gradType, count);
    weight = DivOp::create(b, loc, gradLoss, count);
  }
  Value onBlock = CrossEntropyGradOp::create(
      b, loc, logitsType, LossReduction::Sum, weight, logits,
      v.blockLabels(codes), lse, b.getI64IntegerAttr(kElsewhere));
  // The tokens whose label another device holds: weight · softmax, which
  // the op on the block leaves zero (it ignores them).
  auto wide = logitsType.clone(b.getF32Type());
  Value shifted = SubOp::create(b, loc, wide, v.toF32(logits),
                                v.broadcast(lse, logitsType.getShape()));
  Value softmax = ExpOp::create(b, loc, wide, shifted);
  Value scaled = MulOp::create(
      b, loc, softmax, v.broadcast(v.toF32(weight), logitsType.getShape()));
  if (!logitsType.getElementType().isF32())
    scaled = ConvertOp::create(b, loc, logitsType, scaled);
  Value elsewhere = v.broadcast(v.compare(CompareDirection::EQ, codes,
                                          v.constant(labelsType, kElsewhere)),
                                logitsType.getShape());
  Value rest = v.select(elsewhere, scaled, v.constant(logitsType, 0));
  return {AddOp::create(b, loc, logitsType, onBlock, rest)};
}

std::pair<Value, Value> tgc::buildBlockIds(OpBuilder &b, Location loc,
                                           Value ids, RankedTensorType type,
                                           ArrayRef<unsigned> axes,
                                           const Mesh &mesh, int64_t block,
                                           std::optional<int64_t> bound) {
  auto constant = [&](int64_t value) -> Value {
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type,
                               IntegerAttr::get(type.getElementType(), value)));
  };
  auto compare = [&](CompareDirection direction, Value lhs, Value rhs) {
    return CompareOp::create(b, loc, type.clone(b.getI1Type()), direction, lhs,
                             rhs)
        .getResult();
  };
  Value offset = buildBlockOffset(b, loc, axes, mesh, block,
                                  cast<IntegerType>(type.getElementType()));
  if (type.getRank() > 0)
    offset =
        BroadcastInDimOp::create(b, loc, type, offset, ArrayRef<int64_t>{});
  auto local = SubOp::create(b, loc, type, ids, offset);
  if (bound)
    local->setAttr(kIdBoundAttrName, b.getI64IntegerAttr(*bound));
  Value size = constant(block);
  // Negative ids become `block`, so one comparison tells both bounds.
  Value capped = SelectOp::create(
      b, loc, type, compare(CompareDirection::GE, local, constant(0)), local,
      size);
  return {local, compare(CompareDirection::LT, capped, size)};
}

Value tgc::buildBlockOffset(OpBuilder &b, Location loc, ArrayRef<unsigned> axes,
                            const Mesh &mesh, int64_t block, IntegerType type) {
  // The offsets of the blocks in position order, sliced to the device's.
  int64_t group = 1;
  for (unsigned axis : axes)
    group *= mesh.axisSizes[axis];
  auto tableType = RankedTensorType::get({group}, type);
  SmallVector<APInt> offsets;
  for (int64_t position = 0; position < group; ++position)
    offsets.push_back(
        APInt(type.getWidth(), position * block, /*isSigned=*/true));
  Value table =
      ConstantOp::create(b, loc, DenseElementsAttr::get(tableType, offsets));
  Value mine = shard::AllSliceOp::create(
      b, loc, RankedTensorType::get({1}, type), mesh.name,
      llvm::map_to_vector(axes, [](unsigned axis) { return int16_t(axis); }),
      table, APInt(64, 0));
  return ReshapeOp::create(b, loc, RankedTensorType::get({}, type), mine);
}

FailureOr<SmallVector<Value>>
tgc::buildVocabParallel(OpBuilder &builder, Operation *op, ValueRange operands,
                        TypeRange operandTypes, TypeRange resultTypes,
                        ArrayRef<unsigned> axes, const Mesh &mesh) {
  VocabBuilder v(builder, op->getLoc(), axes, mesh, operands, operandTypes);
  if (auto bound = op->getAttrOfType<IntegerAttr>(kIdBoundAttrName))
    v.idBound = bound.getInt();
  if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
    if (!isa<FloatType>(embedding.getTable().getType().getElementType()))
      return op->emitError("tg-partition: only a float embedding table can be "
                           "split on its rows");
    return buildEmbedding(v, operands, resultTypes);
  }
  if (isa<EmbeddingGradOp>(op))
    return buildEmbeddingGrad(v, operands, resultTypes);
  if (auto loss = dyn_cast<CrossEntropyOp>(op))
    return buildCrossEntropy(v, loss, operands, resultTypes);
  if (auto grad = dyn_cast<CrossEntropyGradOp>(op))
    return buildCrossEntropyGrad(v, grad, operands, resultTypes);
  return op->emitError("tg-partition: no vocabulary-parallel form of this op");
}
