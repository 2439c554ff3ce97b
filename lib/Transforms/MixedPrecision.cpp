//===- MixedPrecision.cpp - tg-mixed-precision: autocast a forward graph --===//
//
// Walk the forward ops in order and ask each, through PrecisionOpInterface,
// which operands may be bf16/f16/fp8; cast those (once per value, hoisting
// casts above shape ops), cast the f32-only operands back, and let results
// follow. fp16 adds the loss-scaling hooks, fp8 the quantization ops and
// their amax-history state.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#include <cmath>

#define DEBUG_TYPE "tg-mixed-precision"

namespace tgc {
#define GEN_PASS_DEF_TGMIXEDPRECISION
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;
using tg::OperandPrecision;

namespace {

/// What a policy turns f32 compute into, and the options it needs.
struct PrecisionPolicy {
  /// The compute type of reduced-precision ops (bf16 or f16).
  Type lowType;
  bool quantizeFp8 = false;
  bool lossScaling = false;
  double initScale = 65536.0;
  int64_t amaxHistory = 16;
  int64_t margin = 0;
  llvm::DenseSet<OperationName> keptOps;
  SmallVector<llvm::GlobPattern> keptParams;
};

bool isFloat(Value value) {
  return isa<FloatType>(getElementTypeOrSelf(value.getType()));
}

RankedTensorType withElementType(Value value, Type elementType) {
  return cast<RankedTensorType>(value.getType()).clone(elementType);
}

/// The precision the op accepts for operand `index` (ops without the
/// interface compute in f32).
OperandPrecision getPrecision(Operation *op, unsigned index) {
  auto precision = dyn_cast<tg::PrecisionOpInterface>(op);
  return precision ? precision.getOperandPrecision(index)
                   : OperandPrecision::Full;
}

/// An op that only moves data (every float operand `Follow`).
bool isDataMovement(Operation *op) {
  if (!isa<tg::PrecisionOpInterface>(op) || op->getNumRegions() != 0)
    return false;
  bool any = false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isFloat(operand.get()))
      continue;
    if (getPrecision(op, operand.getOperandNumber()) !=
        OperandPrecision::Follow)
      return false;
    any = true;
  }
  return any;
}

/// Rewrites one function.
class Autocaster {
public:
  Autocaster(func::FuncOp func, const PrecisionPolicy &policy)
      : func(func), policy(policy), builder(func.getContext()) {}

  LogicalResult run();

private:
  /// fp16: the `loss_scale` state, and `scale_grad` by its inverse on
  /// every parameter, so that gradients leave the backward unscaled.
  void addGradientUnscaling();
  /// fp16: `scale_grad` of the loss by `loss_scale`.
  void scaleLoss(func::ReturnOp ret, unsigned lossIndex);
  void rewriteOp(Operation *op);
  /// `value` in the low type: cast once, above shape ops where that casts
  /// fewer elements.
  Value getLow(Value value);
  /// A value this pass lowered, back in f32.
  Value getF32(Value value);
  /// `tg.fake_quant` of `value` with a new amax history named `name`.
  Value getQuantized(Value value, const std::string &name);
  BlockArgument addState(Type type, StringRef name, Attribute defaultValue);
  std::string getUniqueName(StringRef base);
  /// The parameter `value` is (through shape ops, casts and scale_grad).
  std::optional<std::string> getParamName(Value value);
  void setInsertionPointAfterValue(Value value);

  func::FuncOp func;
  const PrecisionPolicy &policy;
  OpBuilder builder;
  /// Values whose type this pass changed or created in the low type.
  llvm::DenseSet<Value> lowered;
  /// Values that must stay f32: kept parameters and their shape ops.
  llvm::DenseSet<Value> pinned;
  llvm::DenseMap<Value, Value> lowCache, f32Cache, quantCache;
  llvm::StringSet<> names;
  /// Where casts of block arguments go: after the pass's prologue.
  Operation *prologueEnd = nullptr;
  unsigned quantizedSites = 0;
  BlockArgument lossScale;
  SmallVector<Operation *> hoistedOriginals;
};

std::string Autocaster::getUniqueName(StringRef base) {
  std::string name = base.str();
  for (unsigned n = 1; names.contains(name); ++n)
    name = (base + "." + Twine(n)).str();
  names.insert(name);
  return name;
}

BlockArgument Autocaster::addState(Type type, StringRef name,
                                   Attribute defaultValue) {
  SmallVector<NamedAttribute> attrs = {
      tg::getRoleAttr(builder, tg::Role::State),
      builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                           builder.getStringAttr(getUniqueName(name)))};
  if (defaultValue)
    attrs.push_back(
        builder.getNamedAttr(tg::TGDialect::kDefaultAttrName, defaultValue));
  unsigned index = func.getNumArguments();
  (void)func.insertArgument(index, type, builder.getDictionaryAttr(attrs),
                            func.getLoc());
  return func.getArgument(index);
}

std::optional<std::string> Autocaster::getParamName(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isDataMovement(def) && !isa<tg::ConvertOp, tg::ScaleGradOp>(def))
      return std::nullopt;
    value = def->getOperand(0);
  }
  auto arg = cast<BlockArgument>(value);
  if (tg::getArgumentRole(func, arg.getArgNumber()) != tg::Role::Param)
    return std::nullopt;
  auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                tg::TGDialect::kNameAttrName);
  return name ? name.str() : "arg" + std::to_string(arg.getArgNumber());
}

void Autocaster::setInsertionPointAfterValue(Value value) {
  if (Operation *def = value.getDefiningOp())
    builder.setInsertionPointAfter(def);
  else if (prologueEnd)
    builder.setInsertionPointAfter(prologueEnd);
  else
    builder.setInsertionPointToStart(&func.getBody().front());
}

Value Autocaster::getLow(Value value) {
  if (getElementTypeOrSelf(value.getType()) == policy.lowType)
    return value;
  if (Value cached = lowCache.lookup(value))
    return cached;
  Value low;
  Operation *def = value.getDefiningOp();
  auto resultElements =
      cast<RankedTensorType>(value.getType()).getNumElements();
  bool hoist =
      def && def->getNumResults() == 1 && isDataMovement(def) &&
      llvm::all_of(def->getOperands(), [&](Value operand) {
        return !isFloat(operand) ||
               (getElementTypeOrSelf(operand.getType()).isF32() &&
                cast<RankedTensorType>(operand.getType()).getNumElements() <=
                    resultElements);
      });
  if (hoist) {
    IRMapping mapping;
    for (Value operand : def->getOperands())
      if (isFloat(operand))
        mapping.map(operand, getLow(operand));
    builder.setInsertionPointAfter(def);
    Operation *clone = builder.clone(*def, mapping);
    low = clone->getResult(0);
    low.setType(withElementType(value, policy.lowType));
    hoistedOriginals.push_back(def);
  } else {
    setInsertionPointAfterValue(value);
    low = builder.createOrFold<tg::ConvertOp>(
        value.getLoc(), withElementType(value, policy.lowType), value);
  }
  lowered.insert(low);
  lowCache[value] = low;
  return low;
}

Value Autocaster::getF32(Value value) {
  if (getElementTypeOrSelf(value.getType()).isF32())
    return value;
  if (Value cached = f32Cache.lookup(value))
    return cached;
  setInsertionPointAfterValue(value);
  Value full = builder.createOrFold<tg::ConvertOp>(
      value.getLoc(), withElementType(value, builder.getF32Type()), value);
  f32Cache[value] = full;
  return full;
}

Value Autocaster::getQuantized(Value value, const std::string &name) {
  if (Value cached = quantCache.lookup(value))
    return cached;
  BlockArgument history = addState(
      RankedTensorType::get({policy.amaxHistory}, builder.getF32Type()), name,
      {});
  setInsertionPointAfterValue(value);
  Value quantized = tg::FakeQuantOp::create(
      builder, value.getLoc(), value, history,
      TypeAttr::get(builder.getType<Float8E4M3FNType>()),
      builder.getI64IntegerAttr(policy.margin));
  lowered.insert(quantized);
  quantCache[value] = quantized;
  return quantized;
}

void Autocaster::rewriteOp(Operation *op) {
  auto precision = dyn_cast<tg::PrecisionOpInterface>(op);
  bool blocked = !precision || policy.keptOps.contains(op->getName());
  bool wantsLow = false, followsLow = false, readsPinned = false;
  bool onlyFollow = isDataMovement(op);
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (!isFloat(value))
      continue;
    readsPinned |= pinned.contains(value);
    switch (getPrecision(op, operand.getOperandNumber())) {
    case OperandPrecision::Follow:
      followsLow |= lowered.contains(value);
      break;
    case OperandPrecision::Reduced:
    case OperandPrecision::Fp8: {
      wantsLow = true;
      Type element = getElementTypeOrSelf(value.getType());
      blocked |= !element.isF32() && element != policy.lowType;
      break;
    }
    case OperandPrecision::Full:
      break;
    }
  }

  if (blocked || readsPinned || !(wantsLow || followsLow)) {
    // The op runs as written, in f32: undo the casts that reach it.
    for (OpOperand &operand : op->getOpOperands())
      if (lowered.contains(operand.get()))
        operand.set(getF32(operand.get()));
    if (readsPinned && onlyFollow)
      pinned.insert(op->result_begin(), op->result_end());
    return;
  }

  // Name of the quantization site: the parameter it reads, if any.
  std::optional<std::string> site;
  bool quantizes = false;
  if (policy.quantizeFp8)
    for (OpOperand &operand : op->getOpOperands())
      if (isFloat(operand.get()) &&
          getPrecision(op, operand.getOperandNumber()) ==
              OperandPrecision::Fp8) {
        quantizes = true;
        if (!site)
          site = getParamName(operand.get());
      }
  std::string siteName =
      site ? *site
           : (op->getName().stripDialect() + "." + Twine(quantizedSites)).str();
  if (quantizes)
    ++quantizedSites;

  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (!isFloat(value))
      continue;
    OperandPrecision operandPrecision =
        getPrecision(op, operand.getOperandNumber());
    if (operandPrecision == OperandPrecision::Full) {
      if (lowered.contains(value))
        operand.set(getF32(value));
      continue;
    }
    Value low = getLow(value);
    if (quantizes && operandPrecision == OperandPrecision::Fp8) {
      std::optional<std::string> param = getParamName(value);
      std::string name = param ? *param + ".fp8_amax_history"
                         : site
                             ? siteName + ".fp8_input_amax_history"
                             : siteName + ".operand" +
                                   std::to_string(operand.getOperandNumber()) +
                                   ".fp8_amax_history";
      low = getQuantized(low, name);
    }
    operand.set(low);
  }
  for (OpResult result : op->getResults()) {
    if (!isFloat(result) || !getElementTypeOrSelf(result.getType()).isF32() ||
        !precision.isResultInComputeType(result.getResultNumber()))
      continue;
    result.setType(withElementType(result, policy.lowType));
    lowered.insert(result);
    if (!quantizes)
      continue;
    // The output gradient of an fp8 matmul is quantized in the backward.
    BlockArgument history = addState(
        RankedTensorType::get({policy.amaxHistory}, builder.getF32Type()),
        siteName + ".fp8_grad_amax_history", {});
    builder.setInsertionPointAfter(op);
    auto hook = tg::FakeQuantGradOp::create(
        builder, op->getLoc(), result, history,
        TypeAttr::get(builder.getType<Float8E5M2Type>()),
        builder.getI64IntegerAttr(policy.margin));
    result.replaceAllUsesExcept(hook.getResult(), hook);
    lowered.insert(hook.getResult());
  }
}

void Autocaster::addGradientUnscaling() {
  Block &body = func.getBody().front();
  auto scalar = RankedTensorType::get({}, builder.getF32Type());
  lossScale =
      addState(scalar, "loss_scale", builder.getF32FloatAttr(policy.initScale));
  builder.setInsertionPointToStart(&body);
  Location loc = func.getLoc();
  Value one = tg::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(scalar, builder.getF32FloatAttr(1.0)));
  Value inverse = tg::DivOp::create(builder, loc, one, lossScale);
  prologueEnd = inverse.getDefiningOp();
  for (BlockArgument arg : body.getArguments()) {
    if (tg::getArgumentRole(func, arg.getArgNumber()) != tg::Role::Param ||
        !isFloat(arg) || arg.use_empty())
      continue;
    auto hook = tg::ScaleGradOp::create(builder, arg.getLoc(), arg, inverse);
    arg.replaceAllUsesExcept(hook.getResult(), hook);
    if (pinned.contains(arg))
      pinned.insert(hook.getResult());
    prologueEnd = hook;
  }
}

void Autocaster::scaleLoss(func::ReturnOp ret, unsigned lossIndex) {
  builder.setInsertionPoint(ret);
  Value loss = ret.getOperand(lossIndex);
  ret.setOperand(lossIndex, tg::ScaleGradOp::create(builder, loss.getLoc(),
                                                    loss, lossScale));
}

LogicalResult Autocaster::run() {
  if (func.isExternal())
    return success();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  std::optional<unsigned> lossIndex;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    std::optional<tg::Role> role = tg::getResultRole(func, i);
    if (role == tg::Role::Grad)
      return func.emitError("tg-mixed-precision runs before tg-autodiff, so "
                            "that the backward inherits the forward's "
                            "precision; result #")
             << i << " is already a gradient";
    if (role == tg::Role::Loss)
      lossIndex = i;
  }
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto name =
        func.getArgAttrOfType<StringAttr>(i, tg::TGDialect::kNameAttrName);
    if (name)
      names.insert(name.getValue());
    if (tg::getArgumentRole(func, i) == tg::Role::Param &&
        isFloat(func.getArgument(i)))
      if (llvm::any_of(policy.keptParams, [&](const llvm::GlobPattern &glob) {
            return glob.match(name ? name.getValue()
                                   : StringRef("arg" + std::to_string(i)));
          }))
        pinned.insert(func.getArgument(i));
  }
  if (policy.lossScaling && names.contains("loss_scale"))
    return func.emitError("tg-mixed-precision: argument 'loss_scale' already "
                          "exists; the function is already loss-scaled");

  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  bool scalesLoss = policy.lossScaling && lossIndex;
  if (scalesLoss)
    addGradientUnscaling();
  for (Operation *op : ops)
    rewriteOp(op);

  // The results keep their types.
  for (OpOperand &operand : ret->getOpOperands())
    if (lowered.contains(operand.get()))
      operand.set(getF32(operand.get()));
  if (scalesLoss)
    scaleLoss(ret, *lossIndex);
  for (Operation *op : llvm::reverse(hoistedOriginals))
    if (op->use_empty())
      op->erase();
  return success();
}

struct TGMixedPrecisionPass
    : tgc::impl::TGMixedPrecisionBase<TGMixedPrecisionPass> {
  using TGMixedPrecisionBase::TGMixedPrecisionBase;

  FailureOr<PrecisionPolicy> parseOptions();
  void runOnOperation() override;
};

FailureOr<PrecisionPolicy> TGMixedPrecisionPass::parseOptions() {
  ModuleOp module = getOperation();
  Builder b(module.getContext());
  PrecisionPolicy result;
  if (policy == "bf16" || policy == "fp8") {
    result.lowType = b.getBF16Type();
    result.quantizeFp8 = policy == "fp8";
  } else if (policy == "fp16") {
    result.lowType = b.getF16Type();
    result.lossScaling = true;
  } else if (policy != "fp32") {
    return module.emitError("tg-mixed-precision: unknown policy '")
           << policy << "'; expected fp32, bf16, fp16 or fp8";
  }
  if (!(initScale > 0.0) || !std::isfinite(initScale.getValue()))
    return module.emitError("tg-mixed-precision: init-scale must be positive "
                            "and finite, got ")
           << initScale.getValue();
  if (amaxHistory < 1)
    return module.emitError("tg-mixed-precision: amax-history must be >= 1");
  result.initScale = initScale;
  result.amaxHistory = amaxHistory;
  result.margin = margin;
  for (const std::string &name : keepFp32) {
    std::string full = StringRef(name).starts_with("tg.") ? name : "tg." + name;
    std::optional<RegisteredOperationName> op =
        RegisteredOperationName::lookup(full, module.getContext());
    if (!op)
      return module.emitError("tg-mixed-precision: keep-fp32 names '")
             << name << "', which is not a tg op";
    result.keptOps.insert(*op);
  }
  for (const std::string &pattern : keepFp32Params) {
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
    if (!glob)
      return module.emitError("tg-mixed-precision: invalid keep-fp32-params "
                              "glob '")
             << pattern << "': " << llvm::toString(glob.takeError());
    result.keptParams.push_back(std::move(*glob));
  }
  return result;
}

void TGMixedPrecisionPass::runOnOperation() {
  if (failed(checkSingleBlockFunctions(getOperation(), "tg-mixed-precision")))
    return signalPassFailure();
  FailureOr<PrecisionPolicy> parsed = parseOptions();
  if (failed(parsed))
    return signalPassFailure();
  if (!parsed->lowType)
    return; // fp32: nothing to do.
  for (auto func : getOperation().getOps<func::FuncOp>())
    if (failed(Autocaster(func, *parsed).run()))
      return signalPassFailure();
}

} // namespace
