//===- Trainer.h - running training steps on the interpreter ----*- C++ -*-===//
//
// Runs a compiled training step (tg-autodiff + tg-optimizer) repeatedly on
// the interpreter, passing each step's new parameters and optimizer state
// (its results with tg.aliases) to the next: `tgc train`.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_TRAINER_H
#define TGC_INTERPRETER_TRAINER_H

#include "tgc/Interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace tgc {

/// The synthetic copy task: a token-id `input` read by tg.embedding, and a
/// `label` argument of the same type that receives the same ids.
struct CopyTask {
  unsigned ids, labels;
  int64_t vocabulary;

  /// The task of `function`, if it has such arguments.
  static std::optional<CopyTask> find(mlir::func::FuncOp function);
};

struct TrainerOptions {
  unsigned steps = 100;
  /// Fresh copy-task ids every step; none: one fixed random batch.
  std::optional<CopyTask> copyTask;
  uint64_t seed = 0;
};

/// What one step did.
struct TrainingStepResult {
  unsigned step;
  double loss;
  /// With dynamic loss scaling (a `loss_scale` state): the scale the step
  /// ran with and the one it returned, and whether it skipped its update
  /// (the scale backed off after a non-finite gradient). NaN otherwise.
  double lossScale = NAN, newLossScale = NAN;
  bool skipped = false;
};

struct TrainingRun {
  double firstLoss = NAN, lastLoss = NAN;
  /// Steps whose update was skipped by dynamic loss scaling.
  unsigned skippedSteps = 0;
  /// The arguments after the last step (trained parameters and state).
  llvm::SmallVector<Tensor> arguments;
};

/// Runs `options.steps` steps of `step`. Arguments start as `tgc run
/// --random-inputs seed` makes them; the `step` hyper counts from 1; integer
/// hypers without a default (dropout seeds) are drawn anew each step.
/// `onStep` is called after every step. A non-finite loss is an error
/// reported on the function.
mlir::FailureOr<TrainingRun>
runTraining(mlir::func::FuncOp step, const TrainerOptions &options,
            llvm::function_ref<void(const TrainingStepResult &)> onStep);

} // namespace tgc

#endif // TGC_INTERPRETER_TRAINER_H
