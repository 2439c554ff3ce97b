//===- Autodiff.cpp - tg-autodiff: reverse-mode differentiation -----------===//
//
// Collect the ops between the parameters and the loss, walk them backwards
// asking each for its vector-Jacobian product, accumulate fan-out with adds,
// and return one gradient per parameter.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/GlobPattern.h"

#define DEBUG_TYPE "tg-autodiff"

namespace tgc {
#define GEN_PASS_DEF_TGAUTODIFF
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// Records the ops a builder creates, to erase those that end up unused. In
/// a function cut into pipeline stages, each is marked backward and put in
/// the stage of the forward op it differentiates (`forward`).
struct CreatedOps : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
    if (!pipelined)
      return;
    op->setAttr(kBackwardAttrName, UnitAttr::get(op->getContext()));
    if (std::optional<int64_t> stage =
            forward ? getStage(forward) : std::nullopt)
      setStage(op, *stage);
  }
  SmallVector<Operation *> ops;
  bool pipelined = false;
  Operation *forward = nullptr;
};

/// Which parameters are trained: those that match no `frozen` glob and,
/// when `trainable` globs are given, match one of them.
struct TrainableFilter {
  SmallVector<llvm::GlobPattern> frozen, trainable;

  bool isTrainable(StringRef name) const {
    auto matches = [&](const llvm::GlobPattern &glob) {
      return glob.match(name);
    };
    return llvm::none_of(frozen, matches) &&
           (trainable.empty() || llvm::any_of(trainable, matches));
  }
};

/// The backward of one function: its active ops, and the gradients.
class ReverseModeDifferentiator {
public:
  ReverseModeDifferentiator(func::FuncOp func, const TrainableFilter &filter)
      : func(func), filter(filter) {}

  LogicalResult run();

private:
  /// Values that depend on a parameter, and ops that reach the loss.
  void findActiveOps(Value loss);
  void accumulate(OpBuilder &builder, Value value, Value grad);

  /// The name of parameter `index`: its tg.name, else argN.
  std::string getParamName(unsigned index);
  /// Whether parameter `index` gets a gradient: not `tg.frozen`, and
  /// trainable by the globs.
  bool isTrained(unsigned index);

  func::FuncOp func;
  const TrainableFilter &filter;
  llvm::DenseSet<Value> dependsOnParams;
  llvm::SetVector<Operation *> activeOps;
  llvm::DenseMap<Value, Value> grads;
};

void ReverseModeDifferentiator::findActiveOps(Value loss) {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (tg::getArgumentRole(func, arg.getArgNumber()) == tg::Role::Param &&
        isTrained(arg.getArgNumber()))
      dependsOnParams.insert(arg);
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return dependsOnParams.contains(v); }))
      dependsOnParams.insert(op.result_begin(), op.result_end());

  // Backwards from the loss: an op is active if a result of it reaches the
  // loss and an operand of it depends on a parameter.
  llvm::DenseSet<Value> reachesLoss = {loss};
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return reachesLoss.contains(v); }))
      continue;
    reachesLoss.insert(op.operand_begin(), op.operand_end());
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return dependsOnParams.contains(v); }))
      activeOps.insert(&op);
  }
}

bool ReverseModeDifferentiator::isTrained(unsigned index) {
  return !func.getArgAttr(index, tg::TGDialect::kFrozenAttrName) &&
         filter.isTrainable(getParamName(index));
}

std::string ReverseModeDifferentiator::getParamName(unsigned index) {
  StringAttr name =
      func.getArgAttrOfType<StringAttr>(index, tg::TGDialect::kNameAttrName);
  return name ? name.str() : "arg" + std::to_string(index);
}

void ReverseModeDifferentiator::accumulate(OpBuilder &builder, Value value,
                                           Value grad) {
  Value &slot = grads[value];
  if (!slot) {
    slot = grad;
    return;
  }
  auto sum = tg::AddOp::create(builder, grad.getLoc(), slot, grad);
  // In a pipeline, the terms of a gradient add up on the stage that
  // computed them when it is one (a value read twice on the next stage
  // sends one gradient back), else on the stage of the value.
  auto stageOf = [](Value v) -> std::optional<int64_t> {
    Operation *def = v.getDefiningOp();
    return def ? getStage(def) : std::nullopt;
  };
  if (sum->hasAttr(kStageAttrName)) {
    std::optional<int64_t> terms = stageOf(slot);
    if (terms != stageOf(grad) || !terms)
      terms = stageOf(value);
    if (terms)
      setStage(sum, *terms);
  }
  slot = sum;
}

LogicalResult ReverseModeDifferentiator::run() {
  // The loss result.
  std::optional<unsigned> lossIndex;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    std::optional<tg::Role> role = tg::getResultRole(func, i);
    if (role == tg::Role::Grad)
      return func.emitError("is already differentiated: result #")
             << i << " is a gradient";
    if (role == tg::Role::Loss)
      lossIndex = i;
  }
  if (!lossIndex)
    return success(); // Not a training graph: nothing to differentiate.
  if (func.isExternal())
    return func.emitError("cannot differentiate a function without a body");
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(*lossIndex);
  findActiveOps(loss);

  OpBuilder builder(ret);
  CreatedOps created;
  created.pipelined = func->hasAttr(kPipelineAttrName);
  created.forward = loss.getDefiningOp();
  builder.setListener(&created);
  Type lossType = loss.getType();
  auto one = DenseElementsAttr::get(
      cast<ShapedType>(lossType),
      builder.getFloatAttr(cast<ShapedType>(lossType).getElementType(), 1.0));
  grads[loss] = tg::ConstantOp::create(builder, loss.getLoc(), one);

  for (Operation *op : activeOps) { // In reverse order of the body.
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(grads.lookup(result));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    auto differentiable = dyn_cast<tg::DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError("is between the parameters and the loss but "
                             "has no DifferentiableOpInterface");
    if (!resultGrads.front())
      return op->emitOpError("cannot be differentiated through a secondary "
                             "result alone");
    builder.setInsertionPoint(ret);
    created.forward = op;
    FailureOr<SmallVector<Value>> operandGrads =
        differentiable.buildVjp(builder, resultGrads);
    if (failed(operandGrads))
      return failure();
    for (auto [index, operand, grad] :
         llvm::enumerate(op->getOperands(), *operandGrads))
      if (grad && dependsOnParams.contains(operand) &&
          differentiable.isDifferentiableOperand(index))
        accumulate(builder, operand, grad);
  }

  // One gradient per parameter, after the existing results.
  builder.setListener(nullptr);
  builder.setInsertionPoint(ret);
  SmallVector<Value> newResults(ret.getOperands());
  SmallVector<DictionaryAttr> resultAttrs;
  func.getAllResultAttrs(resultAttrs);
  resultAttrs.resize(func.getNumResults());
  for (BlockArgument arg : body.getArguments()) {
    unsigned index = arg.getArgNumber();
    if (tg::getArgumentRole(func, index) != tg::Role::Param)
      continue;
    if (!isTrained(index))
      continue;
    std::string name = getParamName(index);
    if (!isa<FloatType>(getElementTypeOrSelf(arg.getType()))) {
      emitRemark(arg.getLoc())
          << "parameter '" << name << "' is not a float tensor: no gradient";
      continue;
    }
    Value grad = grads.lookup(arg);
    if (!grad) {
      emitRemark(arg.getLoc())
          << "parameter '" << name
          << "' does not influence the loss: its gradient is zero";
      auto zero = DenseElementsAttr::get(
          cast<ShapedType>(arg.getType()),
          builder.getFloatAttr(getElementTypeOrSelf(arg.getType()), 0.0));
      grad = tg::ConstantOp::create(builder, arg.getLoc(), zero);
    }
    newResults.push_back(grad);
    resultAttrs.push_back(builder.getDictionaryAttr(
        {tg::getRoleAttr(builder, tg::Role::Grad),
         builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                              builder.getStringAttr(name + ".grad"))}));
  }
  func::ReturnOp::create(builder, ret.getLoc(), newResults);
  ret.erase();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ValueRange(newResults).getTypes()));
  func.setAllResultAttrs(resultAttrs);

  // Backward ops that no gradient needed (e.g. the gradient of an input).
  for (Operation *op : llvm::reverse(created.ops))
    if (op->use_empty() && isPure(op))
      op->erase();
  return success();
}

struct TGAutodiffPass : tgc::impl::TGAutodiffBase<TGAutodiffPass> {
  using TGAutodiffBase::TGAutodiffBase;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-autodiff")))
      return signalPassFailure();
    TrainableFilter filter;
    for (auto [globs, patterns] :
         {std::make_pair(&filter.frozen, &frozen),
          std::make_pair(&filter.trainable, &trainable)})
      for (const std::string &pattern : *patterns) {
        llvm::Expected<llvm::GlobPattern> glob =
            llvm::GlobPattern::create(pattern);
        if (!glob) {
          getOperation().emitError("tg-autodiff: invalid glob '")
              << pattern << "': " << llvm::toString(glob.takeError());
          return signalPassFailure();
        }
        globs->push_back(std::move(*glob));
      }
    if (failed(checkSomeFunctionHasLoss()) || failed(checkGlobs(filter)))
      return signalPassFailure();
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(ReverseModeDifferentiator(func, filter).run()))
        return signalPassFailure();
  }

  /// Globs that would silently train nothing: a `trainable` glob that no
  /// parameter matches (a typo) or whose parameters are all frozen (errors),
  /// and globs that leave no parameter trainable at all (a warning).
  LogicalResult checkGlobs(const TrainableFilter &filter) {
    if (filter.frozen.empty() && filter.trainable.empty())
      return success();
    SmallVector<std::string> names;
    Operation *where = getOperation();
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (tg::getArgumentRole(func, i) == tg::Role::Param) {
          StringAttr name = func.getArgAttrOfType<StringAttr>(
              i, tg::TGDialect::kNameAttrName);
          names.push_back(name ? name.str() : "arg" + std::to_string(i));
          where = func;
        }
    auto isFrozen = [&](StringRef name) {
      return llvm::any_of(filter.frozen, [&](const llvm::GlobPattern &glob) {
        return glob.match(name);
      });
    };
    for (auto [glob, pattern] : llvm::zip(filter.trainable, trainable)) {
      SmallVector<StringRef> matched;
      for (const std::string &name : names)
        if (glob.match(name))
          matched.push_back(name);
      if (matched.empty())
        return where->emitError("tg-autodiff: the trainable glob '")
               << pattern << "' (--trainable) matches no parameter";
      // Frozen wins, but a trainable glob that only names frozen
      // parameters contradicts the freeze.
      if (llvm::all_of(matched, isFrozen)) {
        auto frozenGlob = llvm::find_if(filter.frozen, [&](const auto &glob) {
          return glob.match(matched.front());
        });
        return where->emitError("tg-autodiff: every parameter that the "
                                "trainable glob '")
               << pattern << "' (--trainable) matches is frozen by '"
               << frozen[frozenGlob - filter.frozen.begin()]
               << "' (--freeze), e.g. '" << matched.front() << "'";
      }
    }
    // Freezing every parameter is explicit (a loss-only step), but said.
    if (!names.empty() && llvm::none_of(names, [&](const std::string &name) {
          return filter.isTrainable(name);
        }))
      where->emitWarning("tg-autodiff: --freeze/--trainable leave no "
                         "parameter trainable (of ")
          << names.size() << "): the step computes no gradient";
    return success();
  }

  /// A function without a loss is left alone (a helper of the step), but a
  /// module without any would come out unchanged: a "training step" that
  /// computes no gradient and that an optimizer would not update.
  LogicalResult checkSomeFunctionHasLoss() {
    auto funcs = getOperation().getOps<func::FuncOp>();
    if (llvm::any_of(funcs, [](func::FuncOp func) {
          return llvm::any_of(llvm::seq(func.getNumResults()), [&](unsigned i) {
            return tg::getResultRole(func, i) == tg::Role::Loss;
          });
        }))
      return success();
    Operation *where = getOperation();
    for (func::FuncOp func : funcs)
      if (!func.isExternal()) {
        where = func;
        break;
      }
    return where->emitError(
        "tg-autodiff: no function of the module has a loss result (a scalar "
        "result with tg.role = \"loss\"), so there is nothing to "
        "differentiate and no gradient for an optimizer");
  }
};

} // namespace
