//===- TGCanonicalization.cpp - canonicalization patterns of tg ops ------===//
//
// Rewrites that create or restructure ops, beyond what the folders do.
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"

using namespace mlir;
using namespace tgc::tg;

namespace {

/// Whether every value of `from` is exactly representable in `to`, so that a
/// conversion from `from` to `to` loses nothing.
bool isLosslessConversion(Type from, Type to) {
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat)
    return APFloat::isRepresentableBy(fromFloat.getFloatSemantics(),
                                      toFloat.getFloatSemantics());
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  // i1 converts to 0/1, and only widening keeps every signed integer.
  return fromInt && toInt && fromInt.getWidth() > 1 &&
         fromInt.getWidth() <= toInt.getWidth();
}

/// convert(convert(x : A -> B) -> C) is convert(x : A -> C) when A -> B is
/// lossless (e.g. bf16 -> f32 -> f16 is bf16 -> f16).
struct FoldLosslessConvertChain : OpRewritePattern<ConvertOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getOperand().getDefiningOp<ConvertOp>();
    if (!producer)
      return rewriter.notifyMatchFailure(op, "operand is not a convert");
    Type source = producer.getOperand().getType().getElementType();
    Type middle = producer.getType().getElementType();
    if (!isLosslessConversion(source, middle))
      return rewriter.notifyMatchFailure(op, "first conversion rounds");
    rewriter.modifyOpInPlace(
        op, [&] { op.getOperandMutable().assign(producer.getOperand()); });
    return success();
  }
};

/// Drops fusion inputs the body never reads and results nobody uses, so the
/// kernel moves no bytes it does not need.
struct DropUnusedFusionValues : OpRewritePattern<FusionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusionOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    llvm::BitVector unusedArgs(body.getNumArguments());
    for (BlockArgument arg : body.getArguments())
      if (arg.use_empty())
        unusedArgs.set(arg.getArgNumber());
    SmallVector<Value> keptResults, keptYields;
    for (auto [result, yielded] : llvm::zip(op.getResults(), yield.getValues()))
      if (!result.use_empty()) {
        keptResults.push_back(result);
        keptYields.push_back(yielded);
      }
    if (unusedArgs.none() && keptResults.size() == op.getNumResults())
      return rewriter.notifyMatchFailure(op, "every input and result is used");

    SmallVector<Value> keptInputs;
    for (auto [i, input] : llvm::enumerate(op.getInputs()))
      if (!unusedArgs.test(i))
        keptInputs.push_back(input);
    auto fused = FusionOp::create(rewriter, op.getLoc(),
                                  ValueRange(keptResults).getTypes(),
                                  keptInputs, op->getAttrs());
    SmallVector<Location> argLocs;
    for (Value input : keptInputs)
      argLocs.push_back(input.getLoc());
    Block *newBody = rewriter.createBlock(
        &fused.getBody(), {}, ValueRange(keptInputs).getTypes(), argLocs);
    // An unused argument has no uses to rewrite: any value of its type does.
    SmallVector<Value> argReplacements;
    unsigned nextArg = 0;
    for (auto [i, input] : llvm::enumerate(op.getInputs()))
      argReplacements.push_back(
          unusedArgs.test(i) ? input : newBody->getArgument(nextArg++));
    rewriter.mergeBlocks(&body, newBody, argReplacements);
    rewriter.setInsertionPoint(yield);
    YieldOp::create(rewriter, yield.getLoc(), keptYields);
    rewriter.eraseOp(yield);
    for (auto [oldResult, newResult] :
         llvm::zip(keptResults, fused.getResults()))
      rewriter.replaceAllUsesWith(oldResult, newResult);
    rewriter.eraseOp(op);
    return success();
  }
};

/// An optimizer update of a widened gradient, update(p, convert(g)), reads
/// g and widens it itself: the wide copy of the gradient is never stored
/// (a mixed-precision step keeps bf16 gradients for its f32 master weights).
struct ReadNarrowGradient : OpInterfaceRewritePattern<OptimizerOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(OptimizerOpInterface op,
                                PatternRewriter &rewriter) const override {
    auto convert = op.getParamGrad().getDefiningOp<ConvertOp>();
    if (!convert)
      return rewriter.notifyMatchFailure(op, "gradient is not a convert");
    Type narrow = convert.getOperand().getType().getElementType();
    if (!isa<FloatType>(narrow) ||
        !isLosslessConversion(narrow, convert.getType().getElementType()))
      return rewriter.notifyMatchFailure(op, "conversion is not a widening");
    rewriter.modifyOpInPlace(
        op, [&] { op.getParamGradMutable().assign(convert.getOperand()); });
    return success();
  }
};

/// update(p, x * broadcast(s)) with a scalar s is update(p, x, grad_scale s)
/// when the product is in f32 or f64, the type the update computes in: the
/// update scales the gradient as it reads it (an fp16 step's unscaling by
/// the inverse loss scale), so x * s is never stored. Only one scale: a
/// product of two would round differently.
struct FoldGradScale : OpInterfaceRewritePattern<OptimizerOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(OptimizerOpInterface op,
                                PatternRewriter &rewriter) const override {
    if (op.getParamGradScale())
      return rewriter.notifyMatchFailure(op, "already scaled");
    auto mul = op.getParamGrad().getDefiningOp<MulOp>();
    if (!mul)
      return rewriter.notifyMatchFailure(op, "gradient is not a product");
    // The update computes in f32 (f64): the product must already be
    // rounded to that type, not to a narrower one.
    Type element = getElementTypeOrSelf(mul.getType());
    if (!(element.isF32() || element.isF64()))
      return rewriter.notifyMatchFailure(op, "product is not in f32 or f64");
    for (unsigned i = 0; i < 2; ++i) {
      auto broadcast = mul->getOperand(1 - i).getDefiningOp<BroadcastInDimOp>();
      if (!broadcast || broadcast.getOperand().getType().getRank() != 0)
        continue;
      Value gradient = mul->getOperand(i);
      rewriter.modifyOpInPlace(op, [&] {
        op.getParamGradMutable().assign(gradient);
        op.getParamGradScaleMutable().assign(broadcast.getOperand());
      });
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no scalar factor");
  }
};

} // namespace

void TGDialect::getCanonicalizationPatterns(RewritePatternSet &results) const {
  results.add<ReadNarrowGradient, FoldGradScale>(getContext());
}

void ConvertOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldLosslessConvertChain>(context);
}

void FusionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<DropUnusedFusionValues>(context);
}
