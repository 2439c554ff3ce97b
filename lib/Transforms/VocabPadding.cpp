//===- VocabPadding.cpp - A vocabulary tp does not divide, padded ---------===//
//
// See VocabPadding.h.
//
//===----------------------------------------------------------------------===//

#include "VocabPadding.h"

#include "Padding.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

namespace {

/// A value whose dimension `dim` is padded; `zero`: its padding holds zeros.
struct Padded {
  unsigned dim;
  bool zero;
};

class VocabPadder {
public:
  VocabPadder(func::FuncOp function, int64_t classes, int64_t padded)
      : function(function), classes(classes), paddedSize(padded),
        builder(function.getContext()) {}

  std::string run(ArrayRef<VocabularyParameter> parameters);

private:
  RankedTensorType paddedType(Value value, unsigned dim) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = paddedSize;
    return type.clone(shape);
  }
  void padArgument(BlockArgument arg, unsigned dim);
  /// `value` padded on `dim` just before `user`: a splat constant or a
  /// broadcast scalar made again in the padded shape (the same value in the
  /// padding), anything else padded with zeros.
  Value padOperand(Value value, unsigned dim, Operation *user);
  /// Whether padOperand(value) holds zeros in the padding.
  static bool padsWithZeros(Value value);
  /// The caller's shape of `operand` just before its owner.
  void sliceOperand(OpOperand &operand);
  /// Masks the padded classes of `logits` to the lowest value of their type.
  Value maskLogits(Value logits);
  void visit(Operation *op);
  /// The sharding rule's way: true when `op` took the padded dimension.
  bool visitByRule(Operation *op);
  void visitReturn(func::ReturnOp ret);

  func::FuncOp function;
  int64_t classes, paddedSize;
  OpBuilder builder;
  DenseMap<Value, Padded> padded;
  DenseMap<Value, Value> masked;
  DenseSet<unsigned> paddedArguments;
};

} // namespace

void VocabPadder::padArgument(BlockArgument arg, unsigned dim) {
  auto shape = cast<RankedTensorType>(arg.getType()).getShape();
  function.setArgAttr(arg.getArgNumber(), kUnpaddedShapeAttrName,
                      builder.getDenseI64ArrayAttr(shape));
  arg.setType(paddedType(arg, dim));
  padded[arg] = {dim, true};
  paddedArguments.insert(arg.getArgNumber());
}

Value VocabPadder::padOperand(Value value, unsigned dim, Operation *user) {
  builder.setInsertionPoint(user);
  RankedTensorType type = paddedType(value, dim);
  if (Value uniform = createUniform(builder, value, type.getShape(), user))
    return uniform;
  // The rows past the vocabulary hold no id: zeros.
  if (value.getDefiningOp<EmbeddingGradOp>() && dim == 0 && value.hasOneUse()) {
    value.setType(type);
    return value;
  }
  return createZeroPad(builder, value, type.getShape(), user);
}

bool VocabPadder::padsWithZeros(Value value) {
  if (auto constant = value.getDefiningOp<ConstantOp>())
    if (auto splat = dyn_cast<SplatElementsAttr>(constant.getValue()))
      return isa<FloatType>(splat.getElementType())
                 ? splat.getSplatValue<APFloat>().isZero()
                 : splat.getSplatValue<APInt>().isZero();
  if (auto broadcast = value.getDefiningOp<BroadcastInDimOp>())
    return cast<RankedTensorType>(broadcast.getOperand().getType()).getRank() !=
           0;
  return true;
}

void VocabPadder::sliceOperand(OpOperand &operand) {
  Value value = operand.get();
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(value.getType()).getShape());
  shape[padded.lookup(value).dim] = classes;
  builder.setInsertionPoint(operand.getOwner());
  operand.set(createCut(builder, value, shape, operand.getOwner()));
}

Value VocabPadder::maskLogits(Value logits) {
  if (Value done = masked.lookup(logits))
    return done;
  auto type = cast<RankedTensorType>(logits.getType());
  auto element = cast<FloatType>(type.getElementType());
  unsigned dim = padded.lookup(logits).dim;
  if (Operation *def = logits.getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(&function.getBody().front());
  // 0 on the classes, the lowest value of the type on the padding: exp of
  // it is 0 after the max is subtracted, so the padding has no probability
  // and no gradient.
  SmallVector<APFloat> values(paddedSize,
                              APFloat::getZero(element.getFloatSemantics()));
  for (int64_t c = classes; c < paddedSize; ++c)
    values[c] = APFloat::getLargest(element.getFloatSemantics(),
                                    /*Negative=*/true);
  auto maskType = RankedTensorType::get({paddedSize}, element);
  Location loc = logits.getLoc();
  auto constant = ConstantOp::create(builder, loc,
                                     DenseElementsAttr::get(maskType, values));
  auto broadcast = BroadcastInDimOp::create(
      builder, loc, type, constant,
      builder.getDenseI64ArrayAttr({static_cast<int64_t>(dim)}));
  auto add = AddOp::create(builder, loc, logits, broadcast);
  if (Operation *def = logits.getDefiningOp())
    for (Operation *made : {constant.getOperation(), broadcast.getOperation(),
                            add.getOperation()})
      copyPipelineAttrs(def, made);
  masked[logits] = add;
  padded[add] = {dim, false};
  return add;
}

void VocabPadder::visitReturn(func::ReturnOp ret) {
  for (OpOperand &operand : ret->getOpOperands()) {
    if (!padded.contains(operand.get()))
      continue;
    // A new parameter or optimizer state keeps the padded type of the
    // argument it replaces; any other result is the caller's shape.
    auto aliases = function.getResultAttrOfType<IntegerAttr>(
        operand.getOperandNumber(), TGDialect::kAliasesAttrName);
    if (aliases && paddedArguments.contains(aliases.getInt())) {
      SmallVector<int64_t> shape(
          cast<RankedTensorType>(operand.get().getType()).getShape());
      shape[padded.lookup(operand.get()).dim] = classes;
      function.setResultAttr(operand.getOperandNumber(), kUnpaddedShapeAttrName,
                             builder.getDenseI64ArrayAttr(shape));
      continue;
    }
    sliceOperand(operand);
  }
}

bool VocabPadder::visitByRule(Operation *op) {
  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruled)
    return false;
  ShardingRule rule = ruled.getShardingRule();
  // The factor of the padded dimension, which must be a dimension of its
  // own wherever it appears.
  std::optional<int64_t> factor;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    auto it = padded.find(operand);
    if (it == padded.end())
      continue;
    const auto &factors = rule.operandFactors[index][it->second.dim];
    if (factors.size() != 1 || (factor && *factor != factors.front()))
      return false;
    factor = factors.front();
  }
  // (The rule reads the operands' types, some of them padded already.)
  if (!factor || (rule.factorSizes[*factor] != classes &&
                  rule.factorSizes[*factor] != paddedSize))
    return false;
  FactorKind kind = rule.factorKinds[*factor];
  if (kind == FactorKind::NeedReplication)
    return false;
  // The (tensor, dimension) pairs of the factor, each a dimension of its
  // own; false where it shares one with another factor.
  using DimList = SmallVector<std::pair<unsigned, unsigned>>;
  auto findDims = [&](const auto &tensorFactors, DimList &found) {
    for (auto [index, dims] : llvm::enumerate(tensorFactors))
      for (auto [dim, factors] : llvm::enumerate(dims))
        if (llvm::is_contained(factors, *factor)) {
          if (factors.size() != 1)
            return false;
          found.push_back({index, dim});
        }
    return true;
  };
  DimList operandDims, resultDims;
  if (!findDims(rule.operandFactors, operandDims) ||
      !findDims(rule.resultFactors, resultDims))
    return false;
  // A sum over the padded dimension (a contraction) reads zeros there.
  bool anyZero = false, allZero = true;
  for (auto [index, dim] : operandDims) {
    auto it = padded.find(op->getOperand(index));
    bool zero = it != padded.end() ? it->second.zero
                                   : padsWithZeros(op->getOperand(index));
    if (it != padded.end() && it->second.dim != dim)
      return false;
    anyZero |= zero;
    allZero &= zero;
  }
  if (kind == FactorKind::Reduction && !allZero)
    return false;
  for (auto [index, dim] : operandDims)
    if (!padded.contains(op->getOperand(index)))
      op->setOperand(index, padOperand(op->getOperand(index), dim, op));
  // Zeros stay zeros through a product with them, and through the rest only
  // when every padded input is zero there.
  bool zero = isa<MulOp>(op) ? anyZero : allZero;
  for (auto [index, dim] : resultDims) {
    Value result = op->getResult(index);
    result.setType(paddedType(result, dim));
    padded[result] = {dim, zero};
  }
  return true;
}

void VocabPadder::visit(Operation *op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return visitReturn(ret);
  // The classes of a loss: the padding masked out. The loss and the
  // log-sum-exp keep their types; the logits' gradient is zero there.
  if (isa<CrossEntropyOp, CrossEntropyGradOp>(op)) {
    unsigned logitsIndex = isa<CrossEntropyOp>(op) ? 0 : 1;
    OpOperand &logits = op->getOpOperand(logitsIndex);
    auto it = padded.find(logits.get());
    if (it != padded.end() &&
        it->second.dim + 1 ==
            cast<RankedTensorType>(logits.get().getType()).getRank()) {
      logits.set(maskLogits(logits.get()));
      op->setAttr(kIdBoundAttrName, builder.getI64IntegerAttr(classes));
      if (auto grad = dyn_cast<CrossEntropyGradOp>(op)) {
        grad.getResult().setType(paddedType(grad.getResult(), it->second.dim));
        padded[grad.getResult()] = {it->second.dim, true};
      }
      return;
    }
  }
  // A lookup reads the rows of its ids, below the vocabulary.
  if (auto lookup = dyn_cast<EmbeddingOp>(op);
      lookup && padded.contains(lookup.getTable()) &&
      padded.lookup(lookup.getTable()).dim == 0) {
    lookup->setAttr(kIdBoundAttrName, builder.getI64IntegerAttr(classes));
    return;
  }
  // An update of a padded parameter: its gradient padded, its results too
  // (its state is padded with it; the update acts elementwise).
  if (auto update = dyn_cast<OptimizerOpInterface>(op);
      update && padded.contains(update.getUpdatedParam())) {
    Value param = update.getUpdatedParam();
    unsigned dim = padded.lookup(param).dim;
    OpOperand &grad = update.getParamGradMutable();
    if (!padded.contains(grad.get()))
      grad.set(padOperand(grad.get(), dim, op));
    // The results of the parameter's shape, before it was padded.
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(param.getType()).getShape());
    shape[dim] = classes;
    for (OpResult result : op->getResults())
      if (cast<RankedTensorType>(result.getType()).getShape() ==
          ArrayRef(shape)) {
        result.setType(paddedType(result, dim));
        padded[result] = {dim, true};
      }
    return;
  }
  // A reshape that keeps the padded dimension as a dimension of its own
  // (the same sizes before it): its rule, read from the operand's padded
  // type and the result's unpadded one, would not show it.
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    Padded in = padded.lookup(reshape.getOperand());
    ArrayRef<int64_t> from =
        cast<RankedTensorType>(reshape.getOperand().getType()).getShape();
    ArrayRef<int64_t> to = reshape.getType().getShape();
    int64_t before = 1;
    for (int64_t size : from.take_front(in.dim))
      before *= size;
    int64_t product = 1;
    for (auto [dim, size] : llvm::enumerate(to)) {
      if (product == before && size == classes) {
        reshape.getResult().setType(paddedType(reshape.getResult(), dim));
        padded[reshape.getResult()] = {static_cast<unsigned>(dim), in.zero};
        return;
      }
      product *= size;
    }
  }
  if (visitByRule(op))
    return;
  for (OpOperand &operand : op->getOpOperands())
    if (padded.contains(operand.get()))
      sliceOperand(operand);
}

std::string VocabPadder::run(ArrayRef<VocabularyParameter> parameters) {
  // Each parameter's update and optimizer state: the update must act
  // elementwise, so that the padding stays zero.
  SmallVector<std::pair<BlockArgument, unsigned>> arguments;
  for (const VocabularyParameter &parameter : parameters) {
    arguments.push_back({parameter.param, parameter.dim});
    for (Operation *user : parameter.param.getUsers()) {
      auto update = dyn_cast<OptimizerOpInterface>(user);
      if (!update || update.getUpdatedParam() != parameter.param)
        continue;
      ShardingRule rule = cast<ShardingRuleOpInterface>(user).getShardingRule();
      if (llvm::any_of(rule.factorKinds, [](FactorKind kind) {
            return kind != FactorKind::PassThrough;
          }))
        return "the update '" + user->getName().getStringRef().str() +
               "' reads statistics of the whole tensor";
      for (Value operand : user->getOperands())
        if (auto state = dyn_cast<BlockArgument>(operand);
            state && state != parameter.param &&
            state.getType() == parameter.param.getType() &&
            getArgumentRole(function, state.getArgNumber()) == Role::State)
          arguments.push_back({state, parameter.dim});
    }
  }
  for (auto [arg, dim] : arguments)
    if (!padded.contains(arg))
      padArgument(arg, dim);
  SmallVector<Operation *> ops;
  for (Operation &op : function.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value operand) { return padded.contains(operand); }))
      visit(op);
  auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
  function.setType(FunctionType::get(function.getContext(),
                                     function.getBody().getArgumentTypes(),
                                     ret.getOperandTypes()));
  return "";
}

std::string tgc::padVocabulary(func::FuncOp function, int64_t classes,
                               int64_t padded,
                               ArrayRef<VocabularyParameter> parameters) {
  return VocabPadder(function, classes, padded).run(parameters);
}
