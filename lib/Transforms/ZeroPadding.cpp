//===- ZeroPadding.cpp - ZeRO over dimensions dp does not divide ----------===//
//
// See ZeroPadding.h.
//
//===----------------------------------------------------------------------===//

#include "ZeroPadding.h"

#include "Padding.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

std::optional<unsigned> tgc::choosePaddedDim(RankedTensorType param,
                                             ArrayRef<bool> wholeDims,
                                             int64_t count) {
  std::optional<unsigned> best;
  int64_t fewest = 0;
  for (auto [dim, size] : llvm::enumerate(param.getShape())) {
    if (!wholeDims[dim] || size < count)
      continue;
    int64_t extra = (llvm::divideCeil(size, count) * count - size) *
                    (param.getNumElements() / size);
    if (!best || extra < fewest) {
      best = dim;
      fewest = extra;
    }
  }
  return best;
}

static std::string describe(Operation *op) {
  return "'" + op->getName().getStringRef().str() + "'";
}

namespace {
/// The readers of a gradient that see its padding: zero-preserving
/// elementwise ops (a value times itself, or times a broadcast scalar) that
/// end in sums over the padded dimension.
struct GradientReaders {
  llvm::SetVector<Value> values;
  SmallVector<Operation *> elementwise;
  /// Operands that are splat constants or broadcast scalars (fp16's zeros,
  /// which the gradients of one shape share): each gets a padded copy.
  SmallVector<OpOperand *> splats;
};
} // namespace

/// Collects the readers of `grad` besides `update`, or says which one
/// would see the padding as something other than zeros.
static std::string collectReaders(Value grad, Operation *update, unsigned dim,
                                  GradientReaders &readers) {
  readers.values.insert(grad);
  for (size_t i = 0; i < readers.values.size(); ++i) {
    Value value = readers.values[i];
    for (Operation *user : value.getUsers()) {
      if (user == update) {
        if (value != grad)
          return "its update reads its gradient twice";
        continue;
      }
      if (auto reduce = dyn_cast<ReduceOp>(user)) {
        if (reduce.getKind() != ReduceKind::Sum ||
            !llvm::is_contained(reduce.getDimensions(), int64_t(dim)))
          return "its gradient reaches a " + describe(user) +
                 " that does not sum over the padded dimension";
        continue;
      }
      if (!isa<ConvertOp, NegOp, AbsOp, MulOp>(user))
        return "its gradient is read by " + describe(user);
      if (!readers.values.insert(user->getResult(0)))
        continue;
      readers.elementwise.push_back(user);
      for (OpOperand &use : user->getOpOperands()) {
        Value operand = use.get();
        if (readers.values.contains(operand))
          continue;
        auto constant = operand.getDefiningOp<ConstantOp>();
        auto broadcast = operand.getDefiningOp<BroadcastInDimOp>();
        if (!(constant && isa<SplatElementsAttr>(constant.getValue())) &&
            !(broadcast &&
              cast<RankedTensorType>(broadcast.getOperand().getType())
                      .getRank() == 0))
          return "its gradient is multiplied by another tensor in " +
                 describe(user);
        readers.splats.push_back(&use);
      }
    }
  }
  return "";
}

/// fp16's skipped step, `select(broadcast(finite), new, old)`: keeps the
/// argument `old` where the update gave `new`.
static bool isSkipSelect(Operation *op, Operation *update) {
  auto select = dyn_cast<SelectOp>(op);
  if (!select)
    return false;
  auto broadcast = select.getPred().getDefiningOp<BroadcastInDimOp>();
  return broadcast &&
         cast<RankedTensorType>(broadcast.getOperand().getType()).getRank() ==
             0 &&
         select.getOnTrue().getDefiningOp() == update &&
         isa<BlockArgument>(select.getOnFalse());
}

std::string tgc::padForZero(func::FuncOp function, OptimizerOpInterface update,
                            BlockArgument param, unsigned dim, int64_t count,
                            bool storeSharded) {
  Operation *updateOp = update.getOperation();
  auto type = cast<RankedTensorType>(param.getType());
  ArrayRef<int64_t> shape = type.getShape();

  // The padding stays zero only through an update that acts elementwise.
  auto ruled = dyn_cast<ShardingRuleOpInterface>(updateOp);
  if (!ruled ||
      llvm::any_of(ruled.getShardingRule().factorKinds, [](FactorKind kind) {
        return kind != FactorKind::PassThrough;
      }))
    return "its update " + describe(updateOp) +
           " reads statistics of the whole tensor";
  if (updateOp->getNumResults() == 0 ||
      updateOp->getResult(0).getType() != type)
    return "its update " + describe(updateOp) +
           " does not return the new parameter first";
  SmallVector<BlockArgument> states;
  for (Value operand : updateOp->getOperands()) {
    auto state = dyn_cast<BlockArgument>(operand);
    if (!state || state == param || state.getType() != type ||
        getArgumentRole(function, state.getArgNumber()) != Role::State)
      continue;
    if (!llvm::all_of(state.getUsers(), [&](Operation *user) {
          return user == updateOp || isSkipSelect(user, updateOp);
        }))
      return "its optimizer state argument #" +
             std::to_string(state.getArgNumber()) +
             " is read by more than its update";
    states.push_back(state);
  }
  Value grad = update.getParamGrad();
  if (cast<RankedTensorType>(grad.getType()).getShape() != shape)
    return "its gradient has another shape";
  GradientReaders readers;
  if (std::string why = collectReaders(grad, updateOp, dim, readers);
      !why.empty())
    return why;

  // Nothing can fail from here on.
  MLIRContext *context = function.getContext();
  SmallVector<int64_t> paddedShape(shape);
  paddedShape[dim] = llvm::divideCeil(shape[dim], count) * count;
  auto padded = [&](Value value) {
    return cast<RankedTensorType>(value.getType()).clone(paddedShape);
  };
  OpBuilder builder(context);
  // Every use of `value` but those `keep` accepts reads the caller's shape,
  // cut just before its owner.
  auto sliceUses = [&](Value value, function_ref<bool(OpOperand &)> keep) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : value.getUses())
      if (!keep(use))
        uses.push_back(&use);
    for (OpOperand *use : uses) {
      builder.setInsertionPoint(use->getOwner());
      use->set(createCut(builder, use->get(), shape, use->getOwner()));
    }
  };

  // The gradient, padded where it is made; its readers see the padding.
  if (Operation *def = grad.getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(param.getOwner());
  Value paddedGrad =
      createZeroPad(builder, grad, paddedShape,
                    grad.getDefiningOp() ? grad.getDefiningOp() : updateOp);
  for (Operation *op : readers.elementwise)
    op->getResult(0).setType(padded(op->getResult(0)));
  for (OpOperand *use : readers.splats) {
    builder.setInsertionPoint(use->getOwner());
    use->set(createUniform(builder, use->get(), paddedShape, use->getOwner()));
  }
  grad.replaceAllUsesExcept(paddedGrad, paddedGrad.getDefiningOp());

  // The parameter: stored padded, or whole with a padded copy for the
  // update.
  auto isUpdate = [&](OpOperand &use) { return use.getOwner() == updateOp; };
  if (storeSharded) {
    param.setType(padded(param));
    SmallVector<ConvertOp> copies;
    for (Operation *user : param.getUsers())
      if (auto convert = dyn_cast<ConvertOp>(user))
        copies.push_back(convert);
    for (ConvertOp convert : copies) {
      // The low-precision copy is made of the padded blocks (gathered in
      // its precision, not in f32) and cut just before each reader, so
      // that a gathered copy lives only around its use (ZeRO-3).
      convert.getResult().setType(padded(convert.getResult()));
      sliceUses(convert.getResult(), [](OpOperand &) { return false; });
    }
    sliceUses(param, [&](OpOperand &use) {
      return isUpdate(use) || isa<ConvertOp>(use.getOwner()) ||
             isSkipSelect(use.getOwner(), updateOp);
    });
  } else {
    builder.setInsertionPoint(updateOp);
    updateOp->replaceUsesOfWith(
        param, createZeroPad(builder, param, paddedShape, updateOp));
  }
  for (BlockArgument state : states)
    state.setType(padded(state));

  // The update's results: the new state is returned padded, as is the new
  // parameter when it is stored padded; every other reader sees the
  // caller's shape.
  auto isReturn = [](OpOperand &use) {
    return isa<func::ReturnOp>(use.getOwner());
  };
  for (OpResult result : updateOp->getResults()) {
    if (result.getType() != type)
      continue;
    result.setType(padded(result));
    bool keepPadded = result.getResultNumber() != 0 || storeSharded;
    SmallVector<SelectOp> selects;
    if (keepPadded)
      for (Operation *user : result.getUsers())
        if (isSkipSelect(user, updateOp))
          selects.push_back(cast<SelectOp>(user));
    for (SelectOp select : selects) {
      // Padded like the values it chooses between, with a predicate of its
      // own (one broadcast serves every select of a shape).
      builder.setInsertionPoint(select);
      select.getPredMutable().assign(
          createUniform(builder, select.getPred(), paddedShape, select));
      select.getResult().setType(padded(select.getResult()));
      sliceUses(select.getResult(), isReturn);
    }
    sliceUses(result, [&](OpOperand &use) {
      return keepPadded &&
             (isReturn(use) || isSkipSelect(use.getOwner(), updateOp));
    });
  }

  // The signature: the padded types, and the caller's shape beside them
  // (that of a padded vocabulary if it is one already).
  DenseI64ArrayAttr unpadded =
      getArgUnpaddedShape(function, param.getArgNumber());
  if (!unpadded)
    unpadded = DenseI64ArrayAttr::get(context, shape);
  if (storeSharded)
    function.setArgAttr(param.getArgNumber(), kUnpaddedShapeAttrName, unpadded);
  for (BlockArgument state : states)
    function.setArgAttr(state.getArgNumber(), kUnpaddedShapeAttrName, unpadded);
  auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
  for (OpOperand &operand : ret->getOpOperands())
    if (Operation *def = operand.get().getDefiningOp();
        def && (def == updateOp || isSkipSelect(def, updateOp)) &&
        operand.get().getType() != type)
      function.setResultAttr(operand.getOperandNumber(), kUnpaddedShapeAttrName,
                             unpadded);
  function.setType(FunctionType::get(
      context, function.getBody().getArgumentTypes(), ret.getOperandTypes()));
  return "";
}
