//===- Evaluation.cpp - tg-evaluation and tg-training-mode ----------------===//
//
// A validation loss is the forward graph's loss in evaluation mode: no
// dropout, the evaluation value of every tg.mode_select, and nothing of the
// model updated. The function keeps its loss result alone; dropout becomes
// the identity; what only the dropped results read goes with them. A
// training step takes the training value of every tg.mode_select instead.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#define DEBUG_TYPE "tg-evaluation"

namespace tgc {
#define GEN_PASS_DEF_TGEVALUATION
#define GEN_PASS_DEF_TGTRAININGMODE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// Replaces every tg.mode_select of `func` by its training or evaluation
/// operand, and erases what only the other operand read.
void resolveModes(func::FuncOp func, bool training) {
  SmallVector<tg::ModeSelectOp> selects;
  func.walk([&](tg::ModeSelectOp op) { selects.push_back(op); });
  SmallVector<Operation *> unread;
  for (tg::ModeSelectOp op : selects) {
    Value kept = training ? op.getTraining() : op.getEvaluation();
    Value other = training ? op.getEvaluation() : op.getTraining();
    op.getResult().replaceAllUsesWith(kept);
    op.erase();
    if (Operation *def = other.getDefiningOp())
      unread.push_back(def);
  }
  llvm::SmallPtrSet<Operation *, 8> erased;
  while (!unread.empty()) {
    Operation *op = unread.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        unread.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

/// Makes `func` its evaluation, the loss alone or (`keepOutputs`) with the
/// outputs; an error for a function that is no forward graph with a loss
/// (with `keepOutputs`: with a loss or an output).
LogicalResult evaluate(func::FuncOp func, bool keepOutputs) {
  if (func.isExternal())
    return success();
  std::optional<unsigned> lossIndex;
  llvm::BitVector dropped(func.getNumResults(), true);
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    std::optional<tg::Role> role = tg::getResultRole(func, i);
    if (role == tg::Role::Grad || role == tg::Role::Param)
      return func.emitError("tg-evaluation: '")
             << func.getName() << "' is already a training step: result #" << i
             << " is "
             << (role == tg::Role::Grad ? "a gradient"
                                        : "a parameter's new value")
             << "; evaluate the forward graph it was built from";
    if (role == tg::Role::Loss)
      lossIndex = i;
    if (role == tg::Role::Loss ||
        (keepOutputs && (!role || role == tg::Role::Output)))
      dropped.reset(i);
  }
  if (!keepOutputs && !lossIndex)
    return func.emitError("tg-evaluation: '")
           << func.getName()
           << "' has no 'loss' result to evaluate (tg.role = \"loss\")";
  if (dropped.all())
    return func.emitError("tg-evaluation: '")
           << func.getName() << "' has no loss or output to evaluate";

  // Dropout is the identity in evaluation (its masks' seed argument stays,
  // read by nothing).
  SmallVector<tg::DropoutOp> dropouts;
  func.walk([&](tg::DropoutOp op) { dropouts.push_back(op); });
  for (tg::DropoutOp op : dropouts) {
    op.getResult().replaceAllUsesWith(op.getOperand());
    op.erase();
  }

  // So is attention's dropout of its probabilities.
  func.walk([](tg::AttentionOp op) {
    if (!op.getDropout())
      return;
    op.removeDropoutAttr();
    op.removeStreamAttr();
    op.removeGlobalShapeAttr();
    op.getSeedMutable().clear();
    op.getOffsetMutable().clear();
  });

  resolveModes(func, /*training=*/false);

  // The loss alone, or with the outputs.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  ret->eraseOperands(dropped);
  if (failed(func.eraseResults(dropped)))
    return func.emitError("tg-evaluation: cannot drop the results of '")
           << func.getName() << "'";

  // What the dropped results and the dropout read alone, last first.
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  return success();
}

struct TGEvaluationPass : public tgc::impl::TGEvaluationBase<TGEvaluationPass> {
  using TGEvaluationBase::TGEvaluationBase;
  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-evaluation")))
      return signalPassFailure();
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(evaluate(func, keepOutputs)))
        return signalPassFailure();
  }
};

struct TGTrainingModePass
    : public tgc::impl::TGTrainingModeBase<TGTrainingModePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      resolveModes(func, /*training=*/true);
  }
};

} // namespace
