//===- TensorParallelPadding.cpp - Dimensions tp does not divide ----------===//
//
// See TensorParallelPadding.h.
//
//===----------------------------------------------------------------------===//

#include "TensorParallelPadding.h"

#include "Padding.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

namespace {

/// A value whose dimension `dim` is padded from `size` to `padded`; `zero`:
/// its padding holds zeros; `finite`: no infinity or NaN (a log of a zero
/// in the padding is neither, and its product with a zero is NaN).
struct Padded {
  unsigned dim;
  int64_t size, padded;
  bool zero;
  bool finite = true;
};

class DimensionPadder {
public:
  explicit DimensionPadder(func::FuncOp function)
      : function(function), builder(function.getContext()) {}

  std::string run(int64_t size, int64_t paddedSize,
                  ArrayRef<PaddedParameter> parameters);

private:
  static RankedTensorType paddedType(Value value, unsigned dim, int64_t size) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size;
    return type.clone(shape);
  }
  /// Gives `value` the padded type of `how` and records it.
  void setPadded(Value value, Padded how) {
    value.setType(paddedType(value, how.dim, how.padded));
    padded[value] = how;
  }
  void padArgument(BlockArgument arg, Padded how);
  /// `value` padded like `how` just before `user`: a splat constant, a
  /// broadcast scalar, or a broadcast that does not read the padded
  /// dimension made again in the padded shape (the same values in the
  /// padding), anything else padded with zeros.
  Value padOperand(Value value, Padded how, Operation *user);
  /// Whether padOperand(value) holds zeros in padded dimension `dim`.
  static bool padsWithZeros(Value value, unsigned dim);
  /// The caller's shape of `operand` just before its owner.
  void sliceOperand(OpOperand &operand);
  /// Masks the padded classes of `logits` to the lowest value of their type.
  Value maskLogits(Value logits);
  void visit(Operation *op);
  /// The sharding rule's way: true when `op` took the padded dimension.
  bool visitByRule(Operation *op);
  /// A reshape that keeps, splits or joins the padded dimension, the
  /// padding at the end of its group's outermost dimension.
  bool visitReshape(ReshapeOp reshape);
  /// A slice of the whole padded dimension takes the padding too.
  bool visitSlice(SliceOp slice);
  void visitReturn(func::ReturnOp ret);

  func::FuncOp function;
  OpBuilder builder;
  DenseMap<Value, Padded> padded;
  DenseMap<Value, Value> masked;
  DenseSet<unsigned> paddedArguments;
  /// Constants and broadcasts made again in the padded shape, erased when
  /// nothing reads them any more.
  llvm::SetVector<Operation *> remade;
};

} // namespace

void DimensionPadder::padArgument(BlockArgument arg, Padded how) {
  // (A parameter padded on another dimension before keeps its shape.)
  if (!getArgUnpaddedShape(function, arg.getArgNumber()))
    function.setArgAttr(arg.getArgNumber(), kUnpaddedShapeAttrName,
                        builder.getDenseI64ArrayAttr(
                            cast<RankedTensorType>(arg.getType()).getShape()));
  setPadded(arg, how);
  paddedArguments.insert(arg.getArgNumber());
}

Value DimensionPadder::padOperand(Value value, Padded how, Operation *user) {
  builder.setInsertionPoint(user);
  RankedTensorType type = paddedType(value, how.dim, how.padded);
  if (Value uniform = createUniform(builder, value, type.getShape(), user)) {
    remade.insert(value.getDefiningOp());
    return uniform;
  }
  // A broadcast along the padded dimension (a rotary table over the
  // heads): the same broadcast, longer.
  if (auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
      broadcast && !llvm::is_contained(broadcast.getBroadcastDimensions(),
                                       static_cast<int64_t>(how.dim))) {
    auto longer = BroadcastInDimOp::create(
        builder, value.getLoc(), type, broadcast.getOperand(),
        broadcast.getBroadcastDimensionsAttr());
    copyPipelineAttrs(user, longer);
    remade.insert(broadcast);
    return longer;
  }
  // The rows past the vocabulary hold no id: zeros.
  if (value.getDefiningOp<EmbeddingGradOp>() && how.dim == 0 &&
      value.hasOneUse()) {
    value.setType(type);
    return value;
  }
  return createZeroPad(builder, value, type.getShape(), user);
}

bool DimensionPadder::padsWithZeros(Value value, unsigned dim) {
  if (auto constant = value.getDefiningOp<ConstantOp>())
    if (auto splat = dyn_cast<SplatElementsAttr>(constant.getValue()))
      return isa<FloatType>(splat.getElementType())
                 ? splat.getSplatValue<APFloat>().isZero()
                 : splat.getSplatValue<APInt>().isZero();
  if (auto broadcast = value.getDefiningOp<BroadcastInDimOp>())
    return llvm::is_contained(broadcast.getBroadcastDimensions(),
                              static_cast<int64_t>(dim));
  return true;
}

void DimensionPadder::sliceOperand(OpOperand &operand) {
  Value value = operand.get();
  Padded how = padded.lookup(value);
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(value.getType()).getShape());
  shape[how.dim] = how.size;
  builder.setInsertionPoint(operand.getOwner());
  operand.set(createCut(builder, value, shape, operand.getOwner()));
}

Value DimensionPadder::maskLogits(Value logits) {
  if (Value done = masked.lookup(logits))
    return done;
  auto type = cast<RankedTensorType>(logits.getType());
  auto element = cast<FloatType>(type.getElementType());
  Padded how = padded.lookup(logits);
  if (Operation *def = logits.getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(&function.getBody().front());
  // 0 on the classes, the lowest value of the type on the padding: exp of
  // it is 0 after the max is subtracted, so the padding has no probability
  // and no gradient.
  SmallVector<APFloat> values(how.padded,
                              APFloat::getZero(element.getFloatSemantics()));
  for (int64_t c = how.size; c < how.padded; ++c)
    values[c] = APFloat::getLargest(element.getFloatSemantics(),
                                    /*Negative=*/true);
  auto maskType = RankedTensorType::get({how.padded}, element);
  Location loc = logits.getLoc();
  auto constant = ConstantOp::create(builder, loc,
                                     DenseElementsAttr::get(maskType, values));
  auto broadcast = BroadcastInDimOp::create(
      builder, loc, type, constant,
      builder.getDenseI64ArrayAttr({static_cast<int64_t>(how.dim)}));
  auto add = AddOp::create(builder, loc, logits, broadcast);
  if (Operation *def = logits.getDefiningOp())
    for (Operation *made : {constant.getOperation(), broadcast.getOperation(),
                            add.getOperation()})
      copyPipelineAttrs(def, made);
  masked[logits] = add;
  padded[add] = {how.dim, how.size, how.padded, false};
  return add;
}

void DimensionPadder::visitReturn(func::ReturnOp ret) {
  for (OpOperand &operand : ret->getOpOperands()) {
    if (!padded.contains(operand.get()))
      continue;
    // A new parameter or optimizer state keeps the padded type of the
    // argument it replaces; any other result is the caller's shape.
    auto aliases = function.getResultAttrOfType<IntegerAttr>(
        operand.getOperandNumber(), TGDialect::kAliasesAttrName);
    if (aliases && paddedArguments.contains(aliases.getInt())) {
      Padded how = padded.lookup(operand.get());
      SmallVector<int64_t> shape(
          cast<RankedTensorType>(operand.get().getType()).getShape());
      if (DenseI64ArrayAttr before =
              getResultUnpaddedShape(function, operand.getOperandNumber()))
        shape.assign(before.asArrayRef().begin(), before.asArrayRef().end());
      shape[how.dim] = how.size;
      function.setResultAttr(operand.getOperandNumber(), kUnpaddedShapeAttrName,
                             builder.getDenseI64ArrayAttr(shape));
      continue;
    }
    sliceOperand(operand);
  }
}

/// Whether the results of `op` hold zeros in the padding: `zeros` says which
/// of its operands that carry the padded dimension do, `finite` whether all
/// of them are finite there.
static SmallVector<bool> getZeroResults(Operation *op,
                                        const DenseMap<unsigned, bool> &zeros,
                                        bool finite) {
  auto zeroAt = [&](unsigned index) {
    auto it = zeros.find(index);
    return it != zeros.end() && it->second;
  };
  bool all = llvm::all_of(zeros, [](auto entry) { return entry.second; });
  bool any = llvm::any_of(zeros, [](auto entry) { return entry.second; });
  SmallVector<bool> results(op->getNumResults(), false);
  // An attention's output is a weighted sum of its values (a head with zero
  // values outputs zeros; its log-sum-exp is not zero); its gradients are
  // products with the output's gradient. A product with a zero is zero
  // when the other factors are finite.
  if (isa<AttentionOp>(op))
    results[0] = zeroAt(2) && finite;
  else if (isa<AttentionGradOp, AttentionBiasGradOp>(op))
    results.assign(results.size(), zeroAt(0) && finite);
  else if (isa<MulOp>(op))
    results.assign(results.size(), any && finite);
  // Ops that map zeros to zeros.
  else if (isa<AddOp, SubOp, MaxOp, MinOp, NegOp, AbsOp, SqrtOp, TanhOp, ErfOp,
               SinOp, ReluOp, SiluOp, GeluOp, ConvertOp, BroadcastInDimOp,
               ReshapeOp, TransposeOp, SliceOp, PadOp, ConcatOp, ReduceOp,
               MatmulOp, SelectOp, GeluGradOp, SoftmaxGradOp, ExpertMatmulOp,
               ExpertMatmulGradOp, EmbeddingOp, EmbeddingGradOp, DropoutOp>(op))
    results.assign(results.size(), all);
  return results;
}

/// Whether `op` keeps finite values finite (a log, a division, a power or a
/// reciprocal square root does not; a square root does not of negatives).
static bool keepsFinite(Operation *op, bool allZero) {
  if (isa<SqrtOp>(op))
    return allZero;
  return !isa<LogOp, DivOp, PowOp, RsqrtOp>(op);
}

bool DimensionPadder::visitByRule(Operation *op) {
  auto ruled = dyn_cast<ShardingRuleOpInterface>(op);
  // A dropout's mask (a random op's numbers) is a function of each
  // element's index in its shape: a dropout's or an attention's, whose
  // padding holds zeros whatever the mask, is padded with its unpadded
  // shape recorded, which tg-partition draws the numbers in (a random op's
  // numbers are not zeros: it is not padded).
  auto random = dyn_cast<CounterRandomOpInterface>(op);
  bool draws = random && random.drawsRandom();
  if (!ruled ||
      (draws &&
       (!isa<DropoutOp, AttentionOp, AttentionGradOp, AttentionBiasGradOp>(
            op) ||
        random.getRandomGlobalShape())))
    return false;
  SmallVector<int64_t> unpaddedRandom;
  // The rule of the unpadded op (a broadcast's or a pad's compares its
  // operands' and results' sizes).
  SmallVector<std::pair<Value, Type>> paddedTypes;
  for (Value operand : op->getOperands()) {
    auto it = padded.find(operand);
    if (it == padded.end() ||
        operand.getType() !=
            paddedType(operand, it->second.dim, it->second.padded))
      continue;
    paddedTypes.push_back({operand, operand.getType()});
    operand.setType(paddedType(operand, it->second.dim, it->second.size));
  }
  ShardingRule rule = ruled.getShardingRule();
  if (draws)
    unpaddedRandom = random.getRandomShape();
  for (auto [operand, type] : paddedTypes)
    operand.setType(type);
  // The factor of the padded dimension, which must be a dimension of its
  // own wherever it appears.
  std::optional<int64_t> factor;
  std::optional<Padded> how;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    auto it = padded.find(operand);
    if (it == padded.end())
      continue;
    const auto &factors = rule.operandFactors[index][it->second.dim];
    if (factors.size() != 1 || (factor && *factor != factors.front()) ||
        (how &&
         (how->size != it->second.size || how->padded != it->second.padded)))
      return false;
    factor = factors.front();
    how = it->second;
  }
  if (!factor || rule.factorSizes[*factor] != how->size)
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
  DenseMap<unsigned, bool> zeros;
  bool finite = true;
  for (auto [index, dim] : operandDims) {
    auto it = padded.find(op->getOperand(index));
    if (it != padded.end() && it->second.dim != dim)
      return false;
    zeros[index] = it != padded.end()
                       ? it->second.zero
                       : padsWithZeros(op->getOperand(index), dim);
    // (An operand padded here repeats its own values, or zeros.)
    finite &= it == padded.end() || it->second.finite;
  }
  if (kind == FactorKind::Reduction &&
      llvm::any_of(zeros, [](auto entry) { return !entry.second; }))
    return false;
  SmallVector<bool> zeroResults = getZeroResults(op, zeros, finite);
  // The numbers' padding is unused only where the results it enters are
  // zeros there (an attention's log-sum-exp does not read the mask).
  if (draws && llvm::any_of(resultDims, [&](auto entry) {
        bool drawn = !isa<AttentionOp>(op) || entry.first == 0;
        return drawn && !zeroResults[entry.first];
      }))
    return false;
  for (auto [index, dim] : operandDims)
    if (!padded.contains(op->getOperand(index))) {
      Padded operand = *how;
      operand.dim = dim;
      op->setOperand(index, padOperand(op->getOperand(index), operand, op));
    }
  bool allZero = llvm::all_of(zeros, [](auto entry) { return entry.second; });
  if (draws) {
    // Padded before (heads, then a width): the smaller size of each.
    if (auto before =
            op->getAttrOfType<DenseI64ArrayAttr>(kUnpaddedRandomShapeAttrName))
      for (auto [size, earlier] :
           llvm::zip(unpaddedRandom, before.asArrayRef()))
        size = std::min(size, earlier);
    op->setAttr(kUnpaddedRandomShapeAttrName,
                builder.getDenseI64ArrayAttr(unpaddedRandom));
  }
  for (auto [index, dim] : resultDims)
    setPadded(op->getResult(index),
              {dim, how->size, how->padded, zeroResults[index],
               finite && keepsFinite(op, allZero)});
  return true;
}

bool DimensionPadder::visitReshape(ReshapeOp reshape) {
  Padded in = padded.lookup(reshape.getOperand());
  ArrayRef<int64_t> from =
      cast<RankedTensorType>(reshape.getOperand().getType()).getShape();
  ArrayRef<int64_t> to = reshape.getType().getShape();
  if (llvm::is_contained(from, 0) || llvm::is_contained(to, 0))
    return false;
  // The products of the dimensions before each, unpadded: the groups of
  // the reshape end where the operand's and the result's agree.
  SmallVector<int64_t> before(1, 1), after(1, 1);
  for (auto [dim, size] : llvm::enumerate(from))
    before.push_back(before.back() * (dim == in.dim ? in.size : size));
  for (int64_t size : to)
    after.push_back(after.back() * size);
  // The padded dimension starts its group (size-1 dimensions aside), and so
  // does the result's dimension that takes the padding.
  int64_t outer = before[in.dim];
  std::optional<unsigned> dim;
  for (auto [index, product] : llvm::enumerate(ArrayRef(after).drop_back()))
    if (product == outer)
      dim = index;
  if (!dim || to[*dim] == 1)
    return false;
  // The group's end: the first product past the padded dimension both
  // sides share; the dimensions after it in the group are its inner ones.
  for (unsigned end = in.dim + 1; end < before.size(); ++end) {
    auto shared = llvm::find(ArrayRef(after).drop_front(*dim + 1), before[end]);
    if (shared == after.end())
      continue;
    int64_t innerIn = before[end] / before[in.dim + 1];
    int64_t innerOut = *shared / after[*dim + 1];
    if ((in.padded * innerIn) % innerOut != 0)
      return false;
    int64_t size = to[*dim];
    setPadded(reshape.getResult(),
              {*dim, size, in.padded * innerIn / innerOut, in.zero, in.finite});
    return true;
  }
  return false;
}

bool DimensionPadder::visitSlice(SliceOp slice) {
  Padded in = padded.lookup(slice.getOperand());
  if (slice.getStartIndices()[in.dim] != 0 ||
      slice.getLimitIndices()[in.dim] != in.size ||
      slice.getStrides()[in.dim] != 1)
    return false;
  SmallVector<int64_t> limits(slice.getLimitIndices());
  limits[in.dim] = in.padded;
  slice.setLimitIndices(limits);
  setPadded(slice.getResult(), in);
  return true;
}

void DimensionPadder::visit(Operation *op) {
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
      Padded how = it->second;
      logits.set(maskLogits(logits.get()));
      op->setAttr(kIdBoundAttrName, builder.getI64IntegerAttr(how.size));
      if (auto grad = dyn_cast<CrossEntropyGradOp>(op)) {
        how.zero = true;
        setPadded(grad.getResult(), how);
      }
      return;
    }
  }
  // A lookup reads the rows of its ids, below the vocabulary.
  if (auto lookup = dyn_cast<EmbeddingOp>(op);
      lookup && padded.contains(lookup.getTable()) &&
      padded.lookup(lookup.getTable()).dim == 0) {
    lookup->setAttr(
        kIdBoundAttrName,
        builder.getI64IntegerAttr(padded.lookup(lookup.getTable()).size));
    return;
  }
  // An update of a padded parameter: its gradient padded, its results too
  // (its state is padded with it; the update acts elementwise, and keeps
  // zeros zero).
  if (auto update = dyn_cast<OptimizerOpInterface>(op);
      update && padded.contains(update.getUpdatedParam())) {
    Value param = update.getUpdatedParam();
    Padded how = padded.lookup(param);
    OpOperand &grad = update.getParamGradMutable();
    if (!padded.contains(grad.get()))
      grad.set(padOperand(grad.get(), how, op));
    // The results of the parameter's shape, before it was padded.
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(param.getType()).getShape());
    shape[how.dim] = how.size;
    for (OpResult result : op->getResults())
      if (cast<RankedTensorType>(result.getType()).getShape() ==
          ArrayRef(shape))
        setPadded(result, how);
    return;
  }
  // Reshapes and slices: their rules, read from the operand's padded type
  // and the result's unpadded one, would not show the padded dimension.
  if (auto reshape = dyn_cast<ReshapeOp>(op); reshape && visitReshape(reshape))
    return;
  if (auto slice = dyn_cast<SliceOp>(op); slice && visitSlice(slice))
    return;
  if (visitByRule(op))
    return;
  for (OpOperand &operand : op->getOpOperands())
    if (padded.contains(operand.get()))
      sliceOperand(operand);
}

std::string DimensionPadder::run(int64_t size, int64_t paddedSize,
                                 ArrayRef<PaddedParameter> parameters) {
  // Each parameter's update and optimizer state: the update must act
  // elementwise, so that the padding stays zero.
  SmallVector<std::pair<BlockArgument, unsigned>> arguments;
  for (const PaddedParameter &parameter : parameters) {
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
      padArgument(arg, {dim, size, paddedSize, /*zero=*/true});
  SmallVector<Operation *> ops;
  for (Operation &op : function.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value operand) { return padded.contains(operand); }))
      visit(op);
  for (Operation *op : llvm::reverse(remade))
    if (op->use_empty())
      op->erase();
  auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
  function.setType(FunctionType::get(function.getContext(),
                                     function.getBody().getArgumentTypes(),
                                     ret.getOperandTypes()));
  return "";
}

std::string tgc::padParameters(func::FuncOp function, int64_t size,
                               int64_t padded,
                               ArrayRef<PaddedParameter> parameters) {
  return DimensionPadder(function).run(size, padded, parameters);
}
