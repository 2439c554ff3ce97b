//===- Optimizer.cpp - tg-optimizer: the parameter update of a step -------===//
//
// Collect each parameter and its gradient, optionally clip the gradients by
// their global norm, then build one optimizer op per parameter and return
// the new parameters and state in place of the gradients.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/GlobPattern.h"

#define DEBUG_TYPE "tg-optimizer"

namespace tgc {
#define GEN_PASS_DEF_TGOPTIMIZER
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// A parameter to update: its argument and the returned gradient.
struct ParamUpdate {
  unsigned argIndex;
  unsigned gradResult;
  std::string name;
  Value grad;
};

/// One optimizer state tensor of a parameter: the suffix of its name
/// (`<param><suffix>`, as PyTorch and fairseq name it) and its type.
struct StateSpec {
  StringRef suffix;
  Type type;
};

StringAttr getStringAttr(DictionaryAttr dict, StringRef name) {
  return dict ? dict.getAs<StringAttr>(name) : StringAttr();
}

struct TGOptimizerPass : tgc::impl::TGOptimizerBase<TGOptimizerPass> {
  using TGOptimizerBase::TGOptimizerBase;

  void runOnOperation() override;
  LogicalResult updateFunction(func::FuncOp func);

  /// The parameters of `func` that have a gradient result.
  FailureOr<SmallVector<ParamUpdate>> collectUpdates(func::FuncOp func);
  /// Scales every gradient by min(1, clip / (global norm + 1e-6)).
  void clipGradients(OpBuilder &builder, Location loc,
                     MutableArrayRef<ParamUpdate> updates);
  bool decays(StringRef name) const;
  /// The state tensors `kind` keeps for a parameter of type `paramType`.
  SmallVector<StateSpec> getStateSpecs(Type paramType) const;

  SmallVector<llvm::GlobPattern> noDecayPatterns;
};

void TGOptimizerPass::runOnOperation() {
  if (failed(checkSingleBlockFunctions(getOperation(), "tg-optimizer")))
    return signalPassFailure();
  if (kind != "sgd" && kind != "adamw" && kind != "lamb" &&
      kind != "adafactor") {
    getOperation().emitError("tg-optimizer: unknown kind '")
        << kind << "'; expected sgd, adamw, lamb or adafactor";
    return signalPassFailure();
  }
  if (kind != "sgd" && (momentum != 0.0 || nesterov)) {
    getOperation().emitError(
        "tg-optimizer: momentum and nesterov are options of kind=sgd");
    return signalPassFailure();
  }
  SmallVector<std::string> patterns(noDecay.begin(), noDecay.end());
  if (patterns.empty())
    patterns = {"*bias", "*norm*", "*ln_*"};
  for (const std::string &pattern : patterns) {
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
    if (!glob) {
      getOperation().emitError("tg-optimizer: invalid no-decay glob '")
          << pattern << "': " << llvm::toString(glob.takeError());
      return signalPassFailure();
    }
    noDecayPatterns.push_back(std::move(*glob));
  }
  for (auto func : getOperation().getOps<func::FuncOp>())
    if (failed(updateFunction(func)))
      return signalPassFailure();
}

bool TGOptimizerPass::decays(StringRef name) const {
  return llvm::none_of(noDecayPatterns, [&](const llvm::GlobPattern &glob) {
    return glob.match(name);
  });
}

SmallVector<StateSpec> TGOptimizerPass::getStateSpecs(Type paramType) const {
  if (kind == "sgd")
    return momentum > 0.0
               ? SmallVector<StateSpec>{{".momentum_buffer", paramType}}
               : SmallVector<StateSpec>{};
  if (kind != "adafactor")
    return {{".exp_avg", paramType}, {".exp_avg_sq", paramType}};
  SmallVector<RankedTensorType, 2> types =
      tg::AdafactorOp::getStateTypes(cast<RankedTensorType>(paramType));
  if (types.size() == 2)
    return {{".exp_avg_sq_row", types[0]}, {".exp_avg_sq_col", types[1]}};
  return {{".exp_avg_sq", types[0]}};
}

FailureOr<SmallVector<ParamUpdate>>
TGOptimizerPass::collectUpdates(func::FuncOp func) {
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  func.getAllArgAttrs(argAttrs);
  func.getAllResultAttrs(resultAttrs);
  resultAttrs.resize(func.getNumResults());
  // Gradients are named "<param name>.grad" by tg-autodiff.
  llvm::StringMap<unsigned> gradResultOf;
  for (auto [i, attrs] : llvm::enumerate(resultAttrs)) {
    StringAttr name = getStringAttr(attrs, tg::TGDialect::kNameAttrName);
    if (tg::getRole(attrs) == tg::Role::Grad && name &&
        name.getValue().ends_with(".grad"))
      gradResultOf[name.getValue().drop_back(5)] = i;
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<ParamUpdate> updates;
  for (auto [i, attrs] : llvm::enumerate(argAttrs)) {
    if (tg::getRole(attrs) != tg::Role::Param)
      continue;
    StringAttr nameAttr = getStringAttr(attrs, tg::TGDialect::kNameAttrName);
    std::string name = nameAttr ? nameAttr.str() : "arg" + std::to_string(i);
    auto it = gradResultOf.find(name);
    if (it == gradResultOf.end())
      continue; // Frozen, or not a float: nothing to update.
    updates.push_back({static_cast<unsigned>(i), it->second, name,
                       ret.getOperand(it->second)});
  }
  return updates;
}

void TGOptimizerPass::clipGradients(OpBuilder &builder, Location loc,
                                    MutableArrayRef<ParamUpdate> updates) {
  auto f32Scalar = RankedTensorType::get({}, builder.getF32Type());
  auto f32Splat = [&](double value) -> Value {
    return tg::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(f32Scalar, builder.getF32FloatAttr(value)));
  };
  // The squared norm of every gradient, summed in f32.
  Value total;
  for (ParamUpdate &update : updates) {
    auto type = cast<RankedTensorType>(update.grad.getType());
    Value grad = update.grad;
    if (!type.getElementType().isF32())
      grad = tg::ConvertOp::create(
          builder, loc,
          RankedTensorType::get(type.getShape(), builder.getF32Type()), grad);
    Value squares = tg::MulOp::create(builder, loc, grad, grad);
    Value sum =
        tg::ReduceOp::create(builder, loc, tg::ReduceKind::Sum, squares,
                             builder.getDenseI64ArrayAttr(llvm::to_vector(
                                 llvm::seq<int64_t>(0, type.getRank()))));
    total =
        total ? tg::AddOp::create(builder, loc, total, sum).getResult() : sum;
  }
  Value norm = tg::SqrtOp::create(builder, loc, total);
  Value coefficient =
      tg::DivOp::create(builder, loc, f32Splat(clipNorm),
                        tg::AddOp::create(builder, loc, norm, f32Splat(1e-6)));
  coefficient = tg::MinOp::create(builder, loc, coefficient, f32Splat(1.0));
  for (ParamUpdate &update : updates) {
    auto type = cast<RankedTensorType>(update.grad.getType());
    Value scale = coefficient;
    if (!type.getElementType().isF32())
      scale = tg::ConvertOp::create(
          builder, loc, RankedTensorType::get({}, type.getElementType()),
          scale);
    scale = tg::BroadcastInDimOp::create(builder, loc, type, scale,
                                         ArrayRef<int64_t>{});
    update.grad = tg::MulOp::create(builder, loc, update.grad, scale);
  }
}

LogicalResult TGOptimizerPass::updateFunction(func::FuncOp func) {
  if (func.isExternal())
    return success();
  FailureOr<SmallVector<ParamUpdate>> collected = collectUpdates(func);
  if (failed(collected))
    return failure();
  SmallVector<ParamUpdate> updates = std::move(*collected);
  if (updates.empty())
    return success(); // Not a differentiated step.

  MLIRContext *context = func.getContext();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder builder(ret);
  Location loc = func.getLoc();

  // New arguments: state per parameter, then the hyperparameters.
  auto addArgument = [&](Type type, tg::Role role, StringRef name,
                         Attribute defaultValue = {}) -> BlockArgument {
    SmallVector<NamedAttribute> attrs = {
        tg::getRoleAttr(builder, role),
        builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                             builder.getStringAttr(name))};
    if (defaultValue)
      attrs.push_back(
          builder.getNamedAttr(tg::TGDialect::kDefaultAttrName, defaultValue));
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, type,
                                   builder.getDictionaryAttr(attrs), loc)))
      return {};
    return func.getArgument(index);
  };
  SmallVector<SmallVector<StateSpec>> stateSpecs;
  SmallVector<SmallVector<BlockArgument>> states;
  for (const ParamUpdate &update : updates) {
    stateSpecs.push_back(
        getStateSpecs(func.getArgumentTypes()[update.argIndex]));
    SmallVector<BlockArgument> paramStates;
    for (const StateSpec &spec : stateSpecs.back())
      paramStates.push_back(addArgument(spec.type, tg::Role::State,
                                        update.name + spec.suffix.str()));
    states.push_back(std::move(paramStates));
  }
  BlockArgument lrArg =
      addArgument(RankedTensorType::get({}, builder.getF32Type()),
                  tg::Role::Hyper, "lr", builder.getF32FloatAttr(lr));
  BlockArgument stepArg;
  if (kind != "sgd")
    stepArg =
        addArgument(RankedTensorType::get({}, builder.getI64Type()),
                    tg::Role::Hyper, "step", builder.getI64IntegerAttr(1));

  if (clipNorm > 0.0)
    clipGradients(builder, loc, updates);

  // One update per parameter; results in place of the gradients.
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  SmallVector<DictionaryAttr> oldResultAttrs;
  func.getAllResultAttrs(oldResultAttrs);
  oldResultAttrs.resize(func.getNumResults());
  llvm::SmallDenseSet<unsigned> gradResults;
  for (const ParamUpdate &update : updates)
    gradResults.insert(update.gradResult);
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (!gradResults.contains(i)) {
      results.push_back(value);
      resultAttrs.push_back(oldResultAttrs[i]);
    }
  auto addResult = [&](Value value, tg::Role role, StringRef name,
                       unsigned aliases) {
    results.push_back(value);
    resultAttrs.push_back(builder.getDictionaryAttr(
        {tg::getRoleAttr(builder, role),
         builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                              builder.getStringAttr(name)),
         builder.getNamedAttr(tg::TGDialect::kAliasesAttrName,
                              builder.getI64IntegerAttr(aliases))}));
  };
  for (auto [update, paramStates, specs] :
       llvm::zip(updates, states, stateSpecs)) {
    Value param = body.getArgument(update.argIndex);
    double decay = decays(update.name) ? weightDecay.getValue() : 0.0;
    SmallVector<Value> newValues;
    if (kind == "sgd") {
      auto sgd = tg::SgdOp::create(
          builder, loc, param, update.grad, lrArg,
          paramStates.empty() ? Value() : Value(paramStates.front()),
          /*grad_scale=*/Value(), builder.getF64FloatAttr(momentum),
          builder.getF64FloatAttr(decay),
          nesterov ? builder.getUnitAttr() : UnitAttr());
      newValues.append(sgd->result_begin(), sgd->result_end());
    } else if (kind == "adafactor") {
      auto adafactor = tg::AdafactorOp::create(
          builder, loc, param, update.grad, ValueRange(paramStates), lrArg,
          stepArg, /*grad_scale=*/Value(), builder.getF64FloatAttr(decayRate),
          builder.getF64FloatAttr(epsilon1),
          builder.getF64FloatAttr(clipThreshold),
          builder.getF64FloatAttr(decay));
      newValues.append(adafactor->result_begin(), adafactor->result_end());
    } else {
      auto betas = std::make_pair(builder.getF64FloatAttr(beta1),
                                  builder.getF64FloatAttr(beta2));
      Operation *op =
          kind == "adamw"
              ? tg::AdamWOp::create(
                    builder, loc, param, update.grad, paramStates[0],
                    paramStates[1], lrArg, stepArg, /*grad_scale=*/Value(),
                    betas.first, betas.second, builder.getF64FloatAttr(epsilon),
                    builder.getF64FloatAttr(decay))
                    .getOperation()
              : tg::LambOp::create(
                    builder, loc, param, update.grad, paramStates[0],
                    paramStates[1], lrArg, stepArg, /*grad_scale=*/Value(),
                    betas.first, betas.second, builder.getF64FloatAttr(epsilon),
                    builder.getF64FloatAttr(decay))
                    .getOperation();
      newValues.append(op->result_begin(), op->result_end());
    }
    addResult(newValues[0], tg::Role::Param, update.name, update.argIndex);
    for (auto [state, value, spec] :
         llvm::zip(paramStates, ArrayRef(newValues).drop_front(), specs))
      addResult(value, tg::Role::State, update.name + spec.suffix.str(),
                state.getArgNumber());
  }
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  func.setType(FunctionType::get(context, func.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

} // namespace
