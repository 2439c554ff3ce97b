//===- Trainer.h - running training steps on the interpreter ----*- C++ -*-===//
//
// Runs a compiled training step (tg-autodiff + tg-optimizer) repeatedly on
// the interpreter, passing each step's new parameters and optimizer state
// (its results with tg.aliases) to the next: `tgc train`.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TRAINING_TRAINER_H
#define TGC_TRAINING_TRAINER_H

#include "tgc/Eval/Tensor.h"
#include "tgc/runtime/Dataset.h"
#include "tgc/runtime/LrSchedule.h"
#include "tgc/runtime/TokenFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tgc {

/// The synthetic copy task: a token-id `input` that indexes a table (its
/// bound is findIdBound's), and labels of the same type that receive the
/// same ids: a `label` argument, or an `input` that reaches a loss's labels
/// (an exported model that computes its loss, `model(ids, labels)`).
struct CopyTask {
  unsigned ids, labels;
  int64_t vocabulary;
  /// The step shifts the labels by one position itself (findLabelShift):
  /// the labels of position t go in at t + 1.
  bool labelsShifted = false;

  /// The task of `function`, if it has such arguments.
  static std::optional<CopyTask> find(mlir::func::FuncOp function);
};

/// Language-model batches from a token file, in nanoGPT's `train.bin`
/// format: the token ids as little-endian uint16, nothing else. Each step,
/// every row of the `input` ids is a window of the file starting at a random
/// offset, and the same row of the `label` argument is that window shifted
/// by one token (the next token at every position).
struct TokenData {
  /// The arguments filled (the same pair as the copy task's).
  CopyTask task;
  /// The file (mapped where it is large) and its ids.
  std::shared_ptr<llvm::MemoryBuffer> file;
  rt::TokenSpan tokens;

  /// Reads `path` (nanoGPT's or llm.c's format, tgc/runtime/TokenFile.h)
  /// for `function`, whose `task` arguments have rows of `seq` ids: the
  /// file must hold at least seq + 1 tokens, each below the vocabulary
  /// size.
  static llvm::Expected<TokenData>
  load(llvm::StringRef path, mlir::func::FuncOp function, const CopyTask &task);
};

/// Batches from an example file (tgc/runtime/Dataset.h): one tensor per
/// input and label by name, the examples along its first dimension; each
/// step takes B of them, in a new random order each epoch.
struct ExampleData {
  /// The file (mapped where it is large) and what it feeds.
  std::shared_ptr<llvm::MemoryBuffer> file;
  rt::Dataset dataset;
  std::vector<rt::DatasetArgument> arguments;

  /// Reads `path` and checks it against the inputs and labels of `step`
  /// (their global values, for a partitioned step) that `given` does not
  /// give (rt::openDataset's rules).
  static llvm::Expected<ExampleData> load(llvm::StringRef path,
                                          mlir::func::FuncOp step,
                                          const llvm::StringMap<Tensor> &given);
};

/// A validation loss (--val-data): the loss of `function` (the forward
/// graph's evaluation, buildEvaluation) on held-out data, measured with the
/// step's current parameters every `every` steps and after the last.
struct EvaluationOptions {
  mlir::func::FuncOp function;
  /// Consecutive windows of a token file (rt::fillEvaluationWindows), or
  /// the examples of an example file in the file's order, B a batch.
  std::optional<TokenData> tokens;
  std::optional<ExampleData> examples;
  /// 0: after the last step only.
  unsigned every = 0;
  /// The batches averaged (at most what the data holds).
  unsigned batches = 20;
};

struct TrainerOptions {
  unsigned steps = 100;
  /// Fresh copy-task ids every step; none: one fixed random batch.
  std::optional<CopyTask> copyTask;
  /// Windows of a token file every step (takes precedence over copyTask).
  std::optional<TokenData> tokens;
  /// Examples of an example file every step.
  std::optional<ExampleData> examples;
  uint64_t seed = 0;
  /// Starting values of `param` and `tg.buffer` state arguments by tg.name
  /// (an imported model's weights and running statistics, for
  /// fine-tuning); the others start random.
  llvm::StringMap<Tensor> initialParameters;
  /// Values of `input` arguments by tg.name (--input files), the same at
  /// every step; the others: see runTraining.
  llvm::StringMap<Tensor> inputs;
  std::optional<EvaluationOptions> evaluation;
  /// The `lr` hyper-parameter of step n: schedule.at(its default, n), as a
  /// generated `train` sets it (--warmup, --lr-schedule, --decay-steps).
  rt::LrSchedule schedule;
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
  /// The learning rate a schedule gave the step (NaN: no schedule).
  double lr = NAN;
  /// After the steps --val-every names and the last: the mean loss of the
  /// evaluation over its batches, and their number.
  std::optional<double> validationLoss;
  unsigned validationBatches = 0;
};

struct TrainingRun {
  double firstLoss = NAN, lastLoss = NAN;
  /// Steps whose update was skipped by dynamic loss scaling.
  unsigned skippedSteps = 0;
  /// The arguments after the last step (trained parameters and state).
  llvm::SmallVector<Tensor> arguments;
};

/// Runs `options.steps` steps of `step`. Arguments start as `tgc run
/// --random-inputs seed` makes them, but for the parameters given in
/// `options.initialParameters` and the inputs given in `options.inputs` (a
/// name with no such argument, or a value of another shape, is an error);
/// the `step` hyper counts from 1, the `lr` hyper follows
/// `options.schedule` (a schedule other than constant on a step without
/// one is an error); integer hypers without a default (dropout
/// seeds) are drawn anew each step. An integer `input` not in
/// `options.inputs` gets the default its name says: an attention mask (a
/// name with `mask`) all ones, token type ids (`token_type`) zeros,
/// position ids (`position`) 0, 1, ... along the last dimension; else it
/// must be token ids or labels (it reaches an embedding's ids or a loss's
/// labels), which the data feeds: one that is not is an error naming it.
/// With `options.examples`, the inputs and labels its file holds come from
/// it at every step, the step's B examples in rt::DatasetOrder's order.
/// With `options.evaluation`, the evaluation's parameters and state take
/// the step's values of the same name (one it does not have is an error)
/// and its other inputs start as the step's do.
/// `onStep` is called after every step. A non-finite loss is an error
/// reported on the function.
mlir::FailureOr<TrainingRun>
runTraining(mlir::func::FuncOp step, const TrainerOptions &options,
            llvm::function_ref<void(const TrainingStepResult &)> onStep);

} // namespace tgc

#endif // TGC_TRAINING_TRAINER_H
