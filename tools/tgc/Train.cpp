//===- Train.cpp - tgc train: the training step on the interpreter --------===//

#include "Flags.h"

#include "tgc/Interpreter/GlobalStep.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Driver/Compile.h"
#include "tgc/Eval/TensorNpy.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Support/OutputFile.h"
#include "tgc/Support/Safetensors.h"
#include "tgc/Training/Trainer.h"
#include "tgc/runtime/TokenFile.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace mlir;
using namespace tgc;
namespace cl = llvm::cl;

#define TGC_TRAIN cl::sub(cli::getTrainCommand()), cl::cat(cli::getCategory())

static cl::opt<std::string>
    init("init",
         cl::desc("Where the parameters start: imported (an ONNX model's "
                  "weights, the default; random where the model has none) "
                  "or random (normal std 0.02, from --seed)"),
         cl::value_desc("imported|random"), cl::init("imported"), TGC_TRAIN);

static cl::opt<unsigned> steps("steps",
                               cl::desc("Training steps (default 100)"),
                               cl::init(100), TGC_TRAIN);
static cl::opt<std::string>
    data("data",
         cl::desc("Training data: synthetic-copy (fresh random token ids each "
                  "step, labels = ids: the model learns to copy), fixed (one "
                  "random batch every step: memorization), or FILE.bin (uint16 "
                  "token ids as nanoGPT writes them, or llm.c with its header: "
                  "random windows, labels = the next tokens; the labels go "
                  "in one position later for a model that shifts them itself, "
                  "as Hugging Face's causal LMs do), or FILE.safetensors (a "
                  "tensor per input and label, named as it, the examples "
                  "along the first dimension: each step takes the batch's "
                  "number of them, in a new random order each epoch). "
                  "Default: synthetic-copy for token models, else fixed"),
         cl::value_desc("synthetic-copy|fixed|FILE.bin|FILE.safetensors"),
         TGC_TRAIN);
static cl::opt<uint64_t>
    seed("seed",
         cl::desc("Seeds the initial parameters and the data (default 0)"),
         cl::init(0), TGC_TRAIN);
static cl::opt<unsigned>
    logEvery("log-every", cl::desc("Print the loss every K steps (default 10)"),
             cl::init(10), TGC_TRAIN);
static cl::opt<std::string> valData(
    "val-data",
    cl::desc("Held-out data for a validation loss: FILE.bin (consecutive "
             "windows from the start, each with its next token, a batch of "
             "them at a time) or FILE.safetensors (the examples in the file's "
             "order). The loss of the forward graph as model.eval() runs it "
             "(tg-evaluation: no dropout, BatchNorm on its running "
             "statistics) with the current parameters, the mean over "
             "--val-batches batches, after every --val-every steps and the "
             "last"),
    cl::value_desc("FILE.bin|FILE.safetensors"), TGC_TRAIN);
static cl::opt<unsigned>
    valEvery("val-every",
             cl::desc("Measure the validation loss every K steps (default 0: "
                      "after the last step only)"),
             cl::init(0), TGC_TRAIN);
static cl::opt<unsigned>
    valBatches("val-batches",
               cl::desc("Batches of --val-data a validation loss averages "
                        "(default 20; at most what the file holds)"),
               cl::init(20), TGC_TRAIN);
static cl::opt<unsigned>
    warmup("warmup",
           cl::desc("Linear warmup of the learning rate over the first N "
                    "steps (step n at lr * n / N), as a generated train's "
                    "--warmup"),
           cl::value_desc("N"), cl::init(0), TGC_TRAIN);
static cl::opt<std::string> lrSchedule(
    "lr-schedule",
    cl::desc("After the warmup: constant (the default: --lr) or cosine (from "
             "--lr towards --min-lr, reached after --decay-steps)"),
    cl::value_desc("constant|cosine"), cl::init("constant"), TGC_TRAIN);
static cl::opt<double>
    minLr("min-lr",
          cl::desc("With --lr-schedule cosine: the rate the cosine ends at "
                   "(default 0)"),
          cl::value_desc("X"), cl::init(0.0), TGC_TRAIN);
static cl::opt<uint64_t> decaySteps(
    "decay-steps",
    cl::desc("With --lr-schedule cosine: the step the cosine ends at "
             "(default: --steps)"),
    cl::value_desc("N"), cl::init(0), TGC_TRAIN);
static cl::opt<std::string>
    save("save",
         cl::desc("Write the trained parameters (and running statistics) to "
                  "FILE.safetensors"),
         cl::value_desc("FILE"), TGC_TRAIN);

/// Prints a step's validation loss, when it has one.
static void logValidation(const TrainingStepResult &report) {
  if (report.validationLoss)
    llvm::outs() << llvm::format("step %u: val loss %.6f (%u batch%s)\n",
                                 report.step, *report.validationLoss,
                                 report.validationBatches,
                                 report.validationBatches == 1 ? "" : "es");
}

/// Prints one line per logged step.
static void logStep(const TrainingStepResult &report) {
  unsigned n = report.step;
  unsigned every = std::max(1u, unsigned(logEvery));
  if (n != 1 && n % every != 0 && n != steps && !report.skipped)
    return logValidation(report);
  llvm::outs() << llvm::format("step %u: loss %.6f", n, report.loss);
  if (report.skipped)
    llvm::outs() << llvm::format(
        " (skipped: non-finite gradients; loss scale %g -> %g)",
        report.lossScale, report.newLossScale);
  else if (!std::isnan(report.lossScale))
    llvm::outs() << llvm::format(" (loss scale %g)", report.newLossScale);
  if (!std::isnan(report.lr))
    llvm::outs() << llvm::format(" (lr %g)", report.lr);
  llvm::outs() << "\n";
  logValidation(report);
}

/// Writes the `param` and `tg.buffer` state arguments of `step` (the
/// model's values) to --save.
static LogicalResult saveParameters(func::FuncOp step,
                                    ArrayRef<Tensor> arguments) {
  std::vector<safetensors::Entry> entries;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    if (tg::isModelValue(step, i))
      entries.push_back(safetensors::toEntry(getArgumentName(step, i),
                                             tensorToNpy(arguments[i])));
  if (llvm::Error error = safetensors::write(save, entries))
    return reportError(llvm::toString(std::move(error)));
  return success();
}

LogicalResult cli::runTrain(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  // Checked before training: a checkpoint written over the model (or the
  // token data) would lose it.
  if (!save.empty()) {
    if (llvm::Error error = checkOutputIsNoInput(
            save, {getInputFile().str(), data.getValue(), valData.getValue()},
            "--save"))
      return reportError(llvm::toString(std::move(error)));
    // Nor should a mistyped directory lose the run.
    if (llvm::Error error = checkWritable(save))
      return reportError("--save: " + llvm::toString(std::move(error)));
  }
  // The learning rate schedule, checked before the model is built.
  rt::LrSchedule schedule;
  if (lrSchedule != "constant" && lrSchedule != "cosine")
    return reportError("--lr-schedule expects constant or cosine, got '" +
                       lrSchedule + "'");
  schedule.warmup = warmup;
  schedule.cosine = lrSchedule == "cosine";
  schedule.decaySteps = steps;
  if (decaySteps.getNumOccurrences()) {
    if (!schedule.cosine)
      return reportError("--decay-steps needs --lr-schedule cosine");
    if (decaySteps <= warmup)
      return reportError("--decay-steps " + std::to_string(decaySteps) +
                         " must be above --warmup " + std::to_string(warmup));
    schedule.decaySteps = decaySteps;
  }
  if (minLr.getNumOccurrences()) {
    if (!schedule.cosine)
      return reportError("--min-lr needs --lr-schedule cosine");
    if (!(minLr >= 0) || !std::isfinite(minLr))
      return reportError("--min-lr must be a finite number >= 0, got " +
                         llvm::formatv("{0}", minLr.getValue()).str());
    schedule.minLr = minLr;
  }
  FailureOr<LoadedModel> model =
      loadModel(context, sourceMgr, getInputFile(), getImportFlags());
  if (failed(model))
    return failure();
  auto entry = dyn_cast_or_null<func::FuncOp>(static_cast<Operation *>(
      findEntry(*model->module, getEntryName(), getInputFile())));
  if (!entry)
    return failure();
  std::optional<CopyTask> copyTask = CopyTask::find(entry);
  std::string source = data;
  if (source.empty())
    source = copyTask ? "synthetic-copy" : "fixed";
  bool fromExamples = rt::isDatasetPath(source);
  bool fromFile =
      !fromExamples && source != "synthetic-copy" && source != "fixed";
  if (!copyTask && source != "fixed" && !fromExamples)
    return reportError("--data " + source +
                       " needs a token-id 'input' argument read by "
                       "tg.embedding and labels of the same type (a 'label' "
                       "argument, or an 'input' read as a loss's labels); @" +
                       entry.getName() +
                       " has none (try --data fixed, or --data "
                       "FILE.safetensors of examples)");
  std::optional<TokenData> tokens;
  if (fromFile) {
    llvm::Expected<TokenData> loaded =
        TokenData::load(source, entry, *copyTask);
    if (!loaded)
      return reportError(llvm::toString(loaded.takeError()));
    tokens = std::move(*loaded);
  }
  if (copyTask && source != "fixed" && !fromExamples) {
    // Which arguments the data feeds, and how (docs/training.md).
    entry.emitRemark() << rt::describeDataFeed(
        source, getArgumentName(entry, copyTask->ids),
        getArgumentName(entry, copyTask->labels), copyTask->vocabulary,
        copyTask->labelsShifted);
  }
  // The interpreter trains the step the training-step stage builds.
  TrainingPipelineOptions pipeline;
  if (failed(fillPipelineOptions(pipeline, /*trainingStep=*/true)))
    return failure();
  if (schedule.minLr > pipeline.lr)
    return reportError(
        llvm::formatv("--min-lr {0} is above the peak rate --lr {1}",
                      llvm::format("%g", schedule.minLr),
                      llvm::format("%g", double(pipeline.lr)))
            .str());
  CompileRequest compile;
  if (shouldDumpPipeline())
    compile.pipelineDump = &llvm::errs();
  // The validation loss: the forward graph's evaluation, built beside it.
  OwningOpRef<ModuleOp> evaluationModule;
  if (!valData.empty()) {
    if (!rt::isDatasetPath(valData) && !StringRef(valData).ends_with(".bin"))
      return reportError("--val-data expects FILE.bin (token ids) or "
                         "FILE.safetensors (examples), got '" +
                         valData + "'");
    if (valBatches == 0)
      return reportError("--val-batches takes at least 1 batch");
    evaluationModule = model->module->clone();
    if (failed(buildEvaluation(*evaluationModule, pipeline, /*plan=*/false,
                               compile)))
      return failure();
  } else if (valEvery.getNumOccurrences() || valBatches.getNumOccurrences()) {
    return reportError("--val-every and --val-batches need --val-data");
  }
  if (failed(buildTrainingStep(*model->module, pipeline, compile)))
    return failure();

  TrainerOptions options;
  options.schedule = schedule;
  if (init != "imported" && init != "random")
    return reportError("--init expects imported or random, got '" + init + "'");
  // Imported values are global: a partitioned step splits them over its
  // mesh as it runs.
  if (init == "imported") {
    FailureOr<llvm::StringMap<Tensor>> imported =
        getImportedInitialValues(entry, model->parameters);
    if (failed(imported))
      return failure();
    options.initialParameters = std::move(*imported);
  }
  // --input: inputs the data does not feed (an attention mask...); --params:
  // the values training starts from.
  FailureOr<ArgumentSources> sources = getArgumentSources({}, std::nullopt);
  if (failed(sources))
    return failure();
  if (sources->parameterFileNames) {
    // As a generated train's --params: every parameter, and the model's
    // state (running statistics) the file has; its other tensors (a
    // checkpoint's optimizer state) are not read.
    // In a step with frozen parameters (a LoRA step's base weights), the
    // trained ones the file lacks (its adapters) start from --seed.
    auto isFrozen = [&](unsigned i) {
      return static_cast<bool>(
          entry.getArgAttr(i, tg::TGDialect::kFrozenAttrName));
    };
    bool anyFrozen = false;
    for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i)
      anyFrozen |= isFrozen(i);
    std::vector<ImportedParameter> fromFile;
    SmallVector<std::string> fresh;
    for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i) {
      if (!tg::isModelValue(entry, i))
        continue;
      std::string name = getArgumentName(entry, i);
      auto found = sources->parameters.find(name);
      if (found != sources->parameters.end())
        fromFile.push_back({name, found->second});
      else if (tg::getArgumentRole(entry, i) == tg::Role::Param && anyFrozen &&
               !isFrozen(i))
        fresh.push_back(name);
      else if (tg::getArgumentRole(entry, i) == tg::Role::Param)
        return reportError(
            "--params: the file has no tensor '" + name +
            "', a parameter of @" + entry.getName() +
            (anyFrozen ? " that the step keeps frozen (the file holds every "
                         "frozen parameter)"
                       : " (it must hold every parameter)"));
    }
    if (!fresh.empty())
      entry.emitRemark() << "--params: " << fresh.size() << " trained parameter"
                         << (fresh.size() == 1 ? "" : "s")
                         << " not in the file start from --seed ("
                         << fresh.front()
                         << (fresh.size() > 1 ? ", ...)" : ")");
    FailureOr<llvm::StringMap<Tensor>> values =
        getImportedInitialValues(entry, fromFile);
    if (failed(values))
      return failure();
    for (auto &value : *values)
      options.initialParameters[value.getKey()] = std::move(value.getValue());
  }
  FailureOr<SmallVector<std::optional<Tensor>>> given =
      readGivenArguments(entry, sources->inputs, sources->allowNonFinite);
  if (failed(given))
    return failure();
  for (auto [index, value] : llvm::enumerate(*given)) {
    if (!value)
      continue;
    std::string name = getArgumentName(entry, index);
    if (tg::getArgumentRole(entry, index) != tg::Role::Input)
      return reportError("--input " + name +
                         ": tgc train reads inputs only (the parameters "
                         "come from the model or --init, labels from "
                         "--data)");
    if (copyTask && source != "fixed" && !fromExamples &&
        (index == copyTask->ids || index == copyTask->labels))
      return reportError("--input " + name + ": the token " +
                         (index == copyTask->ids ? "ids" : "labels") +
                         " are fed by --data " + source);
    options.inputs[name] = std::move(*value);
  }
  if (fromExamples) {
    llvm::Expected<ExampleData> examples =
        ExampleData::load(source, entry, options.inputs);
    if (!examples)
      return reportError(llvm::toString(examples.takeError()));
    // Which arguments the examples feed, and how (docs/training.md).
    entry.emitRemark() << rt::describeDataset(source, examples->dataset,
                                              examples->arguments);
    options.examples = std::move(*examples);
  }
  if (evaluationModule) {
    EvaluationOptions evaluation;
    evaluation.function =
        evaluationModule->lookupSymbol<func::FuncOp>(entry.getName());
    evaluation.every = valEvery;
    evaluation.batches = valBatches;
    if (rt::isDatasetPath(valData)) {
      llvm::Expected<ExampleData> examples =
          ExampleData::load(valData, evaluation.function, options.inputs);
      if (!examples)
        return reportError("--val-data: " +
                           llvm::toString(examples.takeError()));
      evaluation.examples = std::move(*examples);
    } else {
      std::optional<CopyTask> task = CopyTask::find(evaluation.function);
      if (!task)
        return reportError(
            "--val-data " + valData +
            ": a token file needs a token-id 'input' read by tg.embedding "
            "and labels of the same type; @" +
            entry.getName() + " has none (give FILE.safetensors of examples)");
      llvm::Expected<TokenData> loaded =
          TokenData::load(valData, evaluation.function, *task);
      if (!loaded)
        return reportError("--val-data: " + llvm::toString(loaded.takeError()));
      evaluation.tokens = std::move(*loaded);
    }
    options.evaluation = std::move(evaluation);
  }
  options.steps = steps;
  options.seed = seed;
  if (source == "synthetic-copy")
    options.copyTask = copyTask;
  options.tokens = std::move(tokens);
  auto start = std::chrono::steady_clock::now();
  FailureOr<TrainingRun> run = runTraining(entry, options, logStep);
  if (failed(run))
    return failure();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::string policy =
      pipeline.precision == PrecisionPolicy::FP32
          ? ""
          : (", " + stringifyPrecisionPolicy(pipeline.precision)).str();
  llvm::outs() << llvm::format(
      "trained %u steps (%s%s, %s data) in %.2f s: loss %.6f -> %.6f\n",
      unsigned(steps), stringifyOptimizerKind(pipeline.optimizer).data(),
      policy.c_str(), source.c_str(), seconds, run->firstLoss, run->lastLoss);
  if (run->skippedSteps)
    llvm::outs() << run->skippedSteps
                 << " step(s) skipped by dynamic loss scaling\n";
  if (save.empty())
    return success();
  return saveParameters(entry, run->arguments);
}
