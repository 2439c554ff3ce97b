//===- ScalingUpdate.cpp - tg-scaling-update: loss scale and amax history -===//
//
// At the end of a mixed-precision step: roll every fp8 amax history forward
// with this step's largest magnitude, and for fp16 check the gradients, skip
// the update when one is inf/NaN, and grow or back off the loss scale.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

#define DEBUG_TYPE "tg-scaling-update"

namespace tgc {
#define GEN_PASS_DEF_TGSCALINGUPDATE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// Builds the end-of-step update of one function.
class ScalingUpdater {
public:
  ScalingUpdater(func::FuncOp func, unsigned growthInterval, double growth,
                 double backoff)
      : func(func), growthInterval(growthInterval), growth(growth),
        backoff(backoff), builder(func.getContext()), loc(func.getLoc()) {}

  LogicalResult run();

private:
  /// A scalar constant of `elementType`.
  Value scalar(Type elementType, double value);
  /// The reduction of `value` over all its dimensions, as an f32 scalar.
  Value reduceAll(tg::ReduceKind kind, Value value);
  void rollHistory(BlockArgument history, ArrayRef<tg::FakeQuantOp> readers);
  LogicalResult updateLossScale(BlockArgument scale);
  void addResult(Value value, StringRef name, unsigned aliases);
  StringRef getArgName(unsigned index);

  func::FuncOp func;
  unsigned growthInterval;
  double growth, backoff;
  OpBuilder builder;
  Location loc;
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
};

StringRef ScalingUpdater::getArgName(unsigned index) {
  auto name =
      func.getArgAttrOfType<StringAttr>(index, tg::TGDialect::kNameAttrName);
  return name ? name.getValue() : StringRef();
}

Value ScalingUpdater::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element =
      isa<FloatType>(elementType)
          ? Attribute(builder.getFloatAttr(elementType, value))
          : Attribute(builder.getIntegerAttr(elementType, int64_t(value)));
  return tg::ConstantOp::create(builder, loc,
                                DenseElementsAttr::get(type, element));
}

Value ScalingUpdater::reduceAll(tg::ReduceKind kind, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Value reduced = value;
  if (type.getRank() > 0)
    reduced = tg::ReduceOp::create(builder, loc, kind, value,
                                   builder.getDenseI64ArrayAttr(llvm::to_vector(
                                       llvm::seq<int64_t>(0, type.getRank()))));
  if (!type.getElementType().isF32())
    reduced = tg::ConvertOp::create(
        builder, loc, RankedTensorType::get({}, builder.getF32Type()), reduced);
  return reduced;
}

void ScalingUpdater::addResult(Value value, StringRef name, unsigned aliases) {
  results.push_back(value);
  resultAttrs.push_back(builder.getDictionaryAttr(
      {tg::getRoleAttr(builder, tg::Role::State),
       builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                            builder.getStringAttr(name)),
       builder.getNamedAttr(tg::TGDialect::kAliasesAttrName,
                            builder.getI64IntegerAttr(aliases))}));
}

void ScalingUpdater::rollHistory(BlockArgument history,
                                 ArrayRef<tg::FakeQuantOp> readers) {
  // This step's amax over every reader (micro-batches, forward and backward
  // uses of one tensor), newest first.
  Value amax;
  for (tg::FakeQuantOp reader : readers) {
    Value magnitude = tg::AbsOp::create(builder, loc, reader.getOperand());
    Value max = reduceAll(tg::ReduceKind::Max, magnitude);
    amax = amax ? tg::MaxOp::create(builder, loc, amax, max).getResult() : max;
  }
  auto type = cast<RankedTensorType>(history.getType());
  int64_t length = type.getDimSize(0);
  Value rolled = tg::ReshapeOp::create(
      builder, loc, RankedTensorType::get({1}, type.getElementType()), amax);
  if (length > 1) {
    Value kept = tg::SliceOp::create(
        builder, loc, history, ArrayRef<int64_t>{0},
        ArrayRef<int64_t>{length - 1}, ArrayRef<int64_t>{1});
    rolled = tg::ConcatOp::create(builder, loc, ValueRange{rolled, kept}, 0);
  }
  addResult(rolled, getArgName(history.getArgNumber()), history.getArgNumber());
}

LogicalResult ScalingUpdater::updateLossScale(BlockArgument scale) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // The gradients: what the updates consume, or what the step returns.
  llvm::SetVector<Value> grads;
  func.walk([&](tg::OptimizerOpInterface update) {
    grads.insert(update.getParamGrad());
  });
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (tg::getResultRole(func, i) == tg::Role::Grad)
      grads.insert(value);
  if (grads.empty())
    return func.emitError("tg-scaling-update: '")
           << func.getName()
           << "' has a 'loss_scale' but no gradients to check; run "
              "tg-autodiff (and tg-optimizer) first";

  // inf * 0 and NaN * 0 are NaN, so the sum is 0 exactly when every
  // gradient is finite.
  Type f32 = builder.getF32Type();
  Value total;
  for (Value grad : grads) {
    Type element = getElementTypeOrSelf(grad.getType());
    Value zeros =
        tg::BroadcastInDimOp::create(builder, loc, grad.getType(),
                                     scalar(element, 0.0), ArrayRef<int64_t>{});
    Value sum = reduceAll(tg::ReduceKind::Sum,
                          tg::MulOp::create(builder, loc, grad, zeros));
    total =
        total ? tg::AddOp::create(builder, loc, total, sum).getResult() : sum;
  }
  Value finite = tg::CompareOp::create(builder, loc, tg::CompareDirection::EQ,
                                       total, scalar(f32, 0.0));

  // Skipped step: every parameter and state result keeps its old value.
  for (auto [i, value] : llvm::enumerate(results)) {
    auto aliases =
        resultAttrs[i]
            ? resultAttrs[i].getAs<IntegerAttr>(tg::TGDialect::kAliasesAttrName)
            : IntegerAttr();
    if (!aliases)
      continue;
    Value old = body.getArgument(aliases.getInt());
    auto type = cast<RankedTensorType>(value.getType());
    Value predicate = finite;
    if (type.getRank() > 0)
      predicate = tg::BroadcastInDimOp::create(builder, loc,
                                               type.clone(builder.getI1Type()),
                                               finite, ArrayRef<int64_t>{});
    results[i] = tg::SelectOp::create(builder, loc, predicate, value, old);
  }

  // The scale: backoff after an overflow, growth after enough clean steps.
  Type i64 = builder.getI64Type();
  unsigned index = func.getNumArguments();
  (void)func.insertArgument(
      index, RankedTensorType::get({}, i64),
      builder.getDictionaryAttr(
          {tg::getRoleAttr(builder, tg::Role::State),
           builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                                builder.getStringAttr("loss_scale.good_steps")),
           builder.getNamedAttr(tg::TGDialect::kDefaultAttrName,
                                builder.getI64IntegerAttr(0))}),
      loc);
  BlockArgument goodSteps = func.getArgument(index);
  Value counted = tg::SelectOp::create(
      builder, loc, finite,
      tg::AddOp::create(builder, loc, goodSteps, scalar(i64, 1.0)),
      scalar(i64, 0.0));
  Value grows =
      tg::CompareOp::create(builder, loc, tg::CompareDirection::GE, counted,
                            scalar(i64, double(growthInterval)));
  Value grown = tg::SelectOp::create(
      builder, loc, grows,
      tg::MulOp::create(builder, loc, scale, scalar(f32, growth)), scale);
  Value newScale = tg::SelectOp::create(
      builder, loc, finite, grown,
      tg::MulOp::create(builder, loc, scale, scalar(f32, backoff)));
  Value newGoodSteps =
      tg::SelectOp::create(builder, loc, grows, scalar(i64, 0.0), counted);
  addResult(newScale, "loss_scale", scale.getArgNumber());
  addResult(newGoodSteps, "loss_scale.good_steps", goodSteps.getArgNumber());
  return success();
}

LogicalResult ScalingUpdater::run() {
  if (func.isExternal())
    return success();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // The state this pass updates: the loss scale and the amax histories.
  BlockArgument lossScale;
  llvm::MapVector<BlockArgument, SmallVector<tg::FakeQuantOp>> histories;
  for (BlockArgument arg : body.getArguments())
    if (tg::getArgumentRole(func, arg.getArgNumber()) == tg::Role::State &&
        getArgName(arg.getArgNumber()) == "loss_scale")
      lossScale = arg;
  func.walk([&](tg::FakeQuantOp op) {
    auto history = dyn_cast<BlockArgument>(op.getAmaxHistory());
    if (history && history.getOwner() == &body &&
        tg::getArgumentRole(func, history.getArgNumber()) == tg::Role::State)
      histories[history].push_back(op);
  });
  if (!lossScale && histories.empty())
    return success();

  results.assign(ret.getOperands().begin(), ret.getOperands().end());
  func.getAllResultAttrs(resultAttrs);
  resultAttrs.resize(func.getNumResults());
  for (DictionaryAttr attrs : resultAttrs) {
    auto aliases =
        attrs ? attrs.getAs<IntegerAttr>(tg::TGDialect::kAliasesAttrName)
              : IntegerAttr();
    if (aliases && (histories.contains(body.getArgument(aliases.getInt())) ||
                    body.getArgument(aliases.getInt()) == lossScale))
      return func.emitError("tg-scaling-update: '")
             << func.getName() << "' already updates its scaling state '"
             << getArgName(aliases.getInt()) << "'";
  }

  builder.setInsertionPoint(ret);
  if (lossScale && failed(updateLossScale(lossScale)))
    return failure();
  for (auto &[history, readers] : histories)
    rollHistory(history, readers);

  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

struct TGScalingUpdatePass
    : tgc::impl::TGScalingUpdateBase<TGScalingUpdatePass> {
  using TGScalingUpdateBase::TGScalingUpdateBase;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-scaling-update")))
      return signalPassFailure();
    if (growthInterval < 1 || !(growth >= 1.0) || !std::isfinite(growth) ||
        !(backoff > 0.0 && backoff <= 1.0)) {
      getOperation().emitError(
          "tg-scaling-update: expected growth-interval >= 1, a finite "
          "growth >= 1 and backoff in (0, 1]");
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(ScalingUpdater(func, growthInterval, growth, backoff).run()))
        return signalPassFailure();
  }
};

} // namespace
