//===- Trainer.cpp - running training steps on the interpreter ------------===//

#include "tgc/Interpreter/Trainer.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/Interpreter.h"

#include <cmath>

using namespace mlir;
using namespace tgc;

std::optional<CopyTask> CopyTask::find(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (tg::getArgumentRole(func, i) != "input")
      continue;
    for (OpOperand &use : func.getArgument(i).getUses()) {
      auto embedding = dyn_cast<tg::EmbeddingOp>(use.getOwner());
      if (!embedding || use.get() != embedding.getIndices())
        continue;
      for (unsigned j = 0; j < e; ++j)
        if (tg::getArgumentRole(func, j) == "label" &&
            func.getArgumentTypes()[j] == func.getArgumentTypes()[i])
          return CopyTask{i, j, embedding.getTable().getType().getDimSize(0)};
    }
  }
  return std::nullopt;
}

FailureOr<TrainingRun>
tgc::runTraining(func::FuncOp step, const TrainerOptions &options,
                 function_ref<void(const TrainingStepResult &)> onStep) {
  TrainingRun run;
  unsigned numArgs = step.getNumArguments();
  for (unsigned i = 0; i < numArgs; ++i)
    run.arguments.push_back(makeRandomArgument(step, i, options.seed));
  std::optional<unsigned> lossIndex;
  SmallVector<std::pair<unsigned, unsigned>> threaded; // result -> argument
  // The loss scale (tg-mixed-precision's fp16 state): result and argument.
  std::optional<std::pair<unsigned, unsigned>> lossScale;
  for (unsigned r = 0, e = step.getNumResults(); r < e; ++r) {
    if (tg::getResultRole(step, r) == "loss")
      lossIndex = r;
    if (auto aliases = step.getResultAttrOfType<IntegerAttr>(
            r, tg::TGDialect::kAliasesAttrName)) {
      unsigned arg = static_cast<unsigned>(aliases.getInt());
      threaded.push_back({r, arg});
      auto name =
          step.getArgAttrOfType<StringAttr>(arg, tg::TGDialect::kNameAttrName);
      if (tg::getArgumentRole(step, arg) == "state" && name &&
          name.getValue() == "loss_scale")
        lossScale = {r, arg};
    }
  }
  if (!lossIndex)
    return step.emitError("has no 'loss' result to train on");

  Interpreter interpreter;
  SmallVector<Tensor> &arguments = run.arguments;
  for (unsigned n = 0; n < options.steps; ++n) {
    uint64_t stepSeed = options.seed + 1000003 * (n + 1);
    for (unsigned i = 0; i < numArgs; ++i) {
      StringRef role = tg::getArgumentRole(step, i);
      auto name =
          step.getArgAttrOfType<StringAttr>(i, tg::TGDialect::kNameAttrName);
      bool isInt =
          !isa<FloatType>(getElementTypeOrSelf(step.getArgumentTypes()[i]));
      if (role == "hyper" && name && name.getValue() == "step")
        arguments[i].ints()[0] = n + 1;
      else if (role == "hyper" && isInt &&
               !step.getArgAttr(i, tg::TGDialect::kDefaultAttrName))
        arguments[i] = makeRandomArgument(step, i, stepSeed); // seeds
      else if (options.copyTask && i == options.copyTask->ids) {
        arguments[i] = makeRandomArgument(step, i, stepSeed);
        arguments[options.copyTask->labels] = arguments[i];
      }
    }
    FailureOr<SmallVector<Tensor>> results = interpreter.run(step, arguments);
    if (failed(results))
      return failure();
    double loss = (*results)[*lossIndex].getAsDouble(0);
    if (n == 0)
      run.firstLoss = loss;
    run.lastLoss = loss;
    if (!std::isfinite(loss))
      return step.emitError("the loss is ")
             << loss << " at step " << n + 1
             << "; try a smaller learning rate or gradient clipping";
    TrainingStepResult report{n + 1, loss};
    if (lossScale) {
      report.lossScale = arguments[lossScale->second].getAsDouble(0);
      report.newLossScale = (*results)[lossScale->first].getAsDouble(0);
      report.skipped = report.newLossScale < report.lossScale;
      run.skippedSteps += report.skipped;
    }
    onStep(report);
    for (auto [result, argument] : threaded)
      arguments[argument] = std::move((*results)[result]);
  }
  return run;
}
