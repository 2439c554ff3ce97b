//===- Trainer.cpp - running training steps on the interpreter ------------===//

#include "tgc/Training/Trainer.h"

#include "tgc/Support/InputFile.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Eval/Kernels.h"
#include "tgc/Interpreter/GlobalStep.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/runtime/Random.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace tgc;

std::optional<CopyTask> CopyTask::find(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (tg::getArgumentRole(func, i) != tg::Role::Input ||
        !isa<IntegerType>(getElementTypeOrSelf(func.getArgumentTypes()[i])))
      continue;
    // The rows of the tables the ids index (through collectives, slices,
    // fusion regions, a vocabulary-parallel lookup's shift): findIdBound.
    std::optional<int64_t> vocabulary = findIdBound(func.getArgument(i));
    if (!vocabulary)
      continue;
    // A `label` argument first, else an input read as a loss's labels.
    for (tg::Role role : {tg::Role::Label, tg::Role::Input})
      for (unsigned j = 0; j < e; ++j) {
        if (j == i || tg::getArgumentRole(func, j) != role ||
            func.getArgumentTypes()[j] != func.getArgumentTypes()[i])
          continue;
        std::optional<bool> shifted = findLabelShift(func.getArgument(j));
        if (role == tg::Role::Label || shifted)
          return CopyTask{i, j, *vocabulary, shifted.value_or(false)};
      }
  }
  return std::nullopt;
}

llvm::Expected<TokenData> TokenData::load(StringRef path, func::FuncOp function,
                                          const CopyTask &task) {
  auto fail = [&](const Twine &message) {
    return llvm::createStringError("token file '" + path + "': " + message);
  };
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readInputFile(path, kMaxInputFileBytes, /*allowStdin=*/false,
                    /*nullTerminated=*/false);
  if (!file)
    return llvm::createStringError("token file " +
                                   llvm::toString(file.takeError()));
  auto type = cast<ShapedType>(function.getArgumentTypes()[task.ids]);
  int64_t seq = type.getRank() ? type.getShape().back() : 1;
  TokenData data;
  data.task = task;
  data.file = std::move(*file);
  StringRef bytes = data.file->getBuffer();
  std::string message;
  if (!rt::parseTokenFile(reinterpret_cast<const unsigned char *>(bytes.data()),
                          bytes.size(), seq, task.vocabulary, data.tokens,
                          message))
    return fail(message);
  return data;
}

llvm::Expected<ExampleData>
ExampleData::load(StringRef path, func::FuncOp step,
                  const llvm::StringMap<Tensor> &given) {
  auto fail = [&](const Twine &message) {
    return llvm::createStringError("example file '" + path + "': " + message);
  };
  FailureOr<SmallVector<RankedTensorType>> types = getGlobalArgumentTypes(step);
  if (failed(types))
    return fail("the step's arguments have no global types");
  ExampleData data;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    rt::RandomSpec spec = getRandomSpec(step, i);
    RankedTensorType type = (*types)[i];
    rt::DatasetArgument arg;
    arg.name = getArgumentName(step, i);
    arg.role = spec.role;
    arg.isFloat = spec.isFloat;
    arg.shape.assign(type.getShape().begin(), type.getShape().end());
    if (!spec.isFloat) {
      bool isI1 = type.getElementType().isInteger(1);
      arg.minValue = isI1 ? 0 : getIntMin(type.getElementType());
      arg.maxValue = isI1 ? 1 : getIntMax(type.getElementType());
      arg.idBound = spec.idBound;
      if (spec.idBound) {
        SmallVector<int64_t> ignored = findIgnoredIds(step.getArgument(i));
        arg.ignoredIds.assign(ignored.begin(), ignored.end());
      }
    }
    arg.given = given.contains(arg.name);
    data.arguments.push_back(std::move(arg));
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readInputFile(path, kMaxInputFileBytes, /*allowStdin=*/false,
                    /*nullTerminated=*/false);
  if (!file)
    return llvm::createStringError("example file " +
                                   llvm::toString(file.takeError()));
  data.file = std::move(*file);
  StringRef bytes = data.file->getBuffer();
  std::string message;
  if (!rt::openDataset(bytes.data(), bytes.size(), data.arguments, data.dataset,
                       message))
    return fail(message);
  return data;
}

/// Fills the arguments `data` feeds with the examples of `rows`.
static void fillExamples(const ExampleData &data,
                         const std::vector<int64_t> &rows,
                         SmallVector<Tensor> &arguments) {
  for (const rt::DatasetTensor &tensor : data.dataset.tensors) {
    Tensor &value = arguments[tensor.argument];
    rt::gatherExamples(
        tensor, rows, [&](int64_t j, int64_t id) { value.ints()[j] = id; },
        [&](int64_t j, double x) { value.setAsDouble(j, x); });
    // bf16/f16 inputs hold values of their type.
    normalizeTensor(value, EvalOptions());
  }
}

/// Fills the ids and labels of `data.task` with random windows of the file.
static void fillWindows(const TokenData &data, SmallVector<Tensor> &arguments,
                        uint64_t seed) {
  std::vector<int64_t> &ids = arguments[data.task.ids].ints();
  std::vector<int64_t> &labels = arguments[data.task.labels].ints();
  ArrayRef<int64_t> shape = arguments[data.task.ids].getShape();
  int64_t seq = shape.empty() ? 1 : shape.back();
  int64_t rows = seq ? static_cast<int64_t>(ids.size()) / seq : 0;
  rt::fillTokenWindows(data.tokens, ids.data(), labels.data(), rows, seq, seed,
                       data.task.labelsShifted);
}

/// The default value of integer `input` argument `index` that the data does
/// not feed, by its name (rt::getNamedInput: an attention mask all ones,
/// token type ids zeros, position ids 0, 1, ... along the last dimension);
/// none for a name that is none of these.
static std::optional<Tensor> makeDefaultInput(func::FuncOp step, unsigned index,
                                              RankedTensorType type) {
  rt::NamedInput kind = rt::getNamedInput(getArgumentName(step, index));
  if (kind == rt::NamedInput::None)
    return std::nullopt;
  Tensor tensor(type, Tensor::Storage::Int);
  std::vector<int64_t> &values = tensor.ints();
  rt::generateNamedInput(kind, values.size(),
                         type.getRank() ? type.getShape().back() : 1,
                         [&](int64_t i, int64_t value) { values[i] = value; });
  return tensor;
}

/// The starting value of `input` argument `index`: its value in
/// `options.inputs`, else for an integer the default its name says, else
/// the random ids it has if it is token ids or labels (it reaches an
/// embedding's ids or a loss's labels; the data feeds them); an error for
/// any other integer. Floats keep their random value.
static LogicalResult fillInput(func::FuncOp step, unsigned index,
                               const TrainerOptions &options, Tensor &value,
                               unsigned &given) {
  std::string name = getArgumentName(step, index);
  if (auto it = options.inputs.find(name); it != options.inputs.end()) {
    if (it->second.getType() != value.getType())
      return step.emitError("the value of input '")
             << name << "' has type " << it->second.getType()
             << ", the step takes " << value.getType();
    value = it->second;
    ++given;
    return success();
  }
  if (isa<FloatType>(getElementTypeOrSelf(step.getArgumentTypes()[index])))
    return success(); // Features: random, as `tgc run` draws them.
  if (std::optional<Tensor> fallback =
          makeDefaultInput(step, index, value.getType())) {
    value = std::move(*fallback);
    return success();
  }
  if (feedsIdsOrLabels(step.getArgument(index)))
    return success(); // Token ids or labels: the data's.
  return step.emitError("tgc train cannot fill input '")
         << name
         << "': it is no token ids or labels (read by an embedding or a "
            "loss), no attention mask, token type ids or position ids; give "
            "--input "
         << name << "=FILE.npy";
}

namespace {
/// Measures an evaluation's loss with a training step's current values.
class Evaluator {
public:
  /// For `step`, whose global argument types are `stepTypes`.
  static FailureOr<Evaluator> create(func::FuncOp step,
                                     ArrayRef<RankedTensorType> stepTypes,
                                     const TrainerOptions &options);
  /// The mean loss over the batches, with the step's `stepArguments`.
  FailureOr<double> run(ArrayRef<Tensor> stepArguments);
  unsigned getBatches() const { return batches; }

private:
  Evaluator(const EvaluationOptions &options, GlobalStepRunner runner)
      : options(&options), runner(std::move(runner)) {}

  const EvaluationOptions *options;
  GlobalStepRunner runner;
  SmallVector<Tensor> arguments;
  /// Evaluation argument <- the step's argument of its name.
  SmallVector<std::pair<unsigned, unsigned>> taken;
  unsigned lossIndex = 0, batches = 0;
};
} // namespace

FailureOr<Evaluator> Evaluator::create(func::FuncOp step,
                                       ArrayRef<RankedTensorType> stepTypes,
                                       const TrainerOptions &options) {
  const EvaluationOptions &evaluation = *options.evaluation;
  func::FuncOp function = evaluation.function;
  FailureOr<GlobalStepRunner> runner = GlobalStepRunner::create(function);
  if (failed(runner))
    return failure();
  Evaluator evaluator(evaluation, std::move(*runner));
  ArrayRef<RankedTensorType> types = evaluator.runner.getArgumentTypes();
  llvm::StringMap<unsigned> stepValues;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    std::optional<tg::Role> role = tg::getArgumentRole(step, i);
    if (role == tg::Role::Param || role == tg::Role::State)
      stepValues[getArgumentName(step, i)] = i;
  }
  std::optional<CopyTask> task =
      evaluation.tokens ? std::optional<CopyTask>(evaluation.tokens->task)
                        : std::nullopt;
  unsigned given = 0;
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    evaluator.arguments.push_back(
        makeRandomArgument(function, i, options.seed, types[i]));
    std::optional<tg::Role> role = tg::getArgumentRole(function, i);
    std::string name = getArgumentName(function, i);
    if (role == tg::Role::Param || role == tg::Role::State) {
      auto it = stepValues.find(name);
      if (it == stepValues.end())
        return function.emitError("the evaluation's ")
               << (role == tg::Role::Param ? "parameter" : "state") << " '"
               << name << "' is no parameter or state of the training step";
      if (stepTypes[it->second] != types[i])
        return function.emitError("the evaluation's '")
               << name << "' has type " << types[i] << ", the training step's "
               << stepTypes[it->second];
      evaluator.taken.push_back({i, it->second});
      continue;
    }
    bool fed = (task && (i == task->ids || i == task->labels)) ||
               (evaluation.examples &&
                llvm::any_of(evaluation.examples->dataset.tensors,
                             [&](const rt::DatasetTensor &tensor) {
                               return tensor.argument == i;
                             }));
    if (role == tg::Role::Input && !fed &&
        failed(
            fillInput(function, i, options, evaluator.arguments.back(), given)))
      return failure();
  }
  std::optional<unsigned> lossIndex;
  for (unsigned r = 0, e = function.getNumResults(); r < e; ++r)
    if (tg::getResultRole(function, r) == tg::Role::Loss)
      lossIndex = r;
  if (!lossIndex)
    return function.emitError("has no 'loss' result to evaluate");
  evaluator.lossIndex = *lossIndex;
  int64_t available = 0;
  if (task) {
    ArrayRef<int64_t> shape = types[task->ids].getShape();
    int64_t seq = shape.empty() ? 1 : shape.back();
    available = rt::countEvaluationBatches(
        evaluation.tokens->tokens,
        seq ? types[task->ids].getNumElements() / seq : 0, seq);
  } else if (evaluation.examples) {
    const rt::Dataset &dataset = evaluation.examples->dataset;
    available = dataset.batch ? dataset.examples / dataset.batch : 0;
  }
  if (available == 0)
    return function.emitError(
        "the validation data holds no whole batch of the evaluation");
  evaluator.batches = static_cast<unsigned>(
      std::min<int64_t>(available, std::max(1u, evaluation.batches)));
  return evaluator;
}

FailureOr<double> Evaluator::run(ArrayRef<Tensor> stepArguments) {
  for (auto [argument, stepArgument] : taken)
    arguments[argument] = stepArguments[stepArgument];
  double sum = 0;
  for (unsigned b = 0; b < batches; ++b) {
    if (options->tokens) {
      const CopyTask &task = options->tokens->task;
      std::vector<int64_t> &ids = arguments[task.ids].ints();
      ArrayRef<int64_t> shape = arguments[task.ids].getShape();
      int64_t seq = shape.empty() ? 1 : shape.back();
      rt::fillEvaluationWindows(options->tokens->tokens, ids.data(),
                                arguments[task.labels].ints().data(),
                                seq ? int64_t(ids.size()) / seq : 0, seq, b,
                                task.labelsShifted);
    }
    if (options->examples) {
      int64_t batch = options->examples->dataset.batch;
      std::vector<int64_t> rows(batch);
      for (int64_t r = 0; r < batch; ++r)
        rows[r] = b * batch + r;
      fillExamples(*options->examples, rows, arguments);
    }
    FailureOr<SmallVector<Tensor>> results = runner.run(arguments);
    if (failed(results))
      return failure();
    sum += (*results)[lossIndex].getAsDouble(0);
  }
  return sum / batches;
}

FailureOr<TrainingRun>
tgc::runTraining(func::FuncOp step, const TrainerOptions &options,
                 function_ref<void(const TrainingStepResult &)> onStep) {
  TrainingRun run;
  unsigned numArgs = step.getNumArguments();
  // The trainer holds global parameters and state; a partitioned step
  // splits them over its mesh's simulated ranks at every step.
  FailureOr<GlobalStepRunner> runner = GlobalStepRunner::create(step);
  if (failed(runner))
    return failure();
  ArrayRef<RankedTensorType> types = runner->getArgumentTypes();
  unsigned initialized = 0, inputsGiven = 0;
  for (unsigned i = 0; i < numArgs; ++i) {
    run.arguments.push_back(
        makeRandomArgument(step, i, options.seed, types[i]));
    bool fed =
        options.examples && llvm::any_of(options.examples->dataset.tensors,
                                         [&](const rt::DatasetTensor &tensor) {
                                           return tensor.argument == i;
                                         });
    if (tg::getArgumentRole(step, i) == tg::Role::Input && !fed &&
        failed(fillInput(step, i, options, run.arguments.back(), inputsGiven)))
      return failure();
    auto name =
        step.getArgAttrOfType<StringAttr>(i, tg::TGDialect::kNameAttrName);
    if (!tg::isModelValue(step, i) || !name)
      continue;
    auto it = options.initialParameters.find(name.getValue());
    if (it == options.initialParameters.end())
      continue;
    if (it->second.getType() != run.arguments.back().getType())
      return step.emitError("the value of parameter '")
             << name.getValue() << "' has type " << it->second.getType()
             << ", the step takes " << run.arguments.back().getType();
    run.arguments.back() = it->second;
    ++initialized;
  }
  if (inputsGiven != options.inputs.size())
    return step.emitError("only ")
           << inputsGiven << " of the " << options.inputs.size()
           << " given input values name an input of the step";
  if (initialized != options.initialParameters.size())
    return step.emitError("only ")
           << initialized << " of the " << options.initialParameters.size()
           << " given parameter values name a parameter of the step";
  std::optional<unsigned> lossIndex;
  SmallVector<std::pair<unsigned, unsigned>> threaded; // result -> argument
  // The loss scale (tg-mixed-precision's fp16 state): result and argument.
  std::optional<std::pair<unsigned, unsigned>> lossScale;
  for (unsigned r = 0, e = step.getNumResults(); r < e; ++r) {
    if (tg::getResultRole(step, r) == tg::Role::Loss)
      lossIndex = r;
    if (auto aliases = step.getResultAttrOfType<IntegerAttr>(
            r, tg::TGDialect::kAliasesAttrName)) {
      unsigned arg = static_cast<unsigned>(aliases.getInt());
      threaded.push_back({r, arg});
      auto name =
          step.getArgAttrOfType<StringAttr>(arg, tg::TGDialect::kNameAttrName);
      if (tg::getArgumentRole(step, arg) == tg::Role::State && name &&
          name.getValue() == "loss_scale")
        lossScale = {r, arg};
    }
  }
  if (!lossIndex)
    return step.emitError("has no 'loss' result to train on");
  // The `lr` hyper-parameter, which the schedule sets from its default.
  std::optional<unsigned> lrIndex;
  for (unsigned i = 0; i < numArgs; ++i) {
    auto name =
        step.getArgAttrOfType<StringAttr>(i, tg::TGDialect::kNameAttrName);
    if (tg::getArgumentRole(step, i) == tg::Role::Hyper && name &&
        name.getValue() == "lr")
      lrIndex = i;
  }
  if (!lrIndex && !options.schedule.isConstant())
    return step.emitError("--warmup and --lr-schedule cosine need an 'lr' "
                          "hyper-parameter; this step has none");
  double peakLr = lrIndex ? run.arguments[*lrIndex].getAsDouble(0) : 0;
  if (options.schedule.minLr > peakLr)
    return step.emitError("--min-lr ")
           << options.schedule.minLr << " is above the peak rate " << peakLr;

  std::optional<Evaluator> evaluator;
  if (options.evaluation) {
    FailureOr<Evaluator> created = Evaluator::create(step, types, options);
    if (failed(created))
      return failure();
    evaluator.emplace(std::move(*created));
  }

  SmallVector<Tensor> &arguments = run.arguments;
  std::optional<rt::DatasetOrder> order;
  if (options.examples)
    order.emplace(options.examples->dataset.examples,
                  options.examples->dataset.batch, options.seed);
  for (unsigned n = 0; n < options.steps; ++n) {
    uint64_t stepSeed = rt::stepSeed(options.seed, n);
    for (unsigned i = 0; i < numArgs; ++i) {
      std::optional<tg::Role> role = tg::getArgumentRole(step, i);
      auto name =
          step.getArgAttrOfType<StringAttr>(i, tg::TGDialect::kNameAttrName);
      bool isInt =
          !isa<FloatType>(getElementTypeOrSelf(step.getArgumentTypes()[i]));
      if (role == tg::Role::Hyper && name && name.getValue() == "step")
        arguments[i].ints()[0] = n + 1;
      else if (i == lrIndex)
        arguments[i].setAsDouble(0, options.schedule.at(peakLr, n));
      else if (role == tg::Role::Hyper && isInt &&
               !step.getArgAttr(i, tg::TGDialect::kDefaultAttrName))
        arguments[i] = makeRandomArgument(step, i, stepSeed, types[i]); // seeds
      else if (!options.tokens && options.copyTask &&
               i == options.copyTask->ids) {
        arguments[i] = makeRandomArgument(step, i, stepSeed, types[i]);
        Tensor &labels = arguments[options.copyTask->labels];
        labels = arguments[i];
        if (options.copyTask->labelsShifted) {
          ArrayRef<int64_t> shape = labels.getShape();
          int64_t seq = shape.empty() ? 1 : shape.back();
          rt::shiftCopyLabels(reinterpret_cast<char *>(labels.ints().data()),
                              seq ? labels.getNumElements() / seq : 0, seq,
                              sizeof(int64_t));
        }
      }
    }
    if (options.tokens)
      fillWindows(*options.tokens, arguments, stepSeed);
    if (options.examples)
      fillExamples(*options.examples, order->examplesOf(n), arguments);
    FailureOr<SmallVector<Tensor>> results = runner->run(arguments);
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
    if (lrIndex && !options.schedule.isConstant())
      report.lr = options.schedule.at(peakLr, n);
    if (lossScale) {
      report.lossScale = arguments[lossScale->second].getAsDouble(0);
      report.newLossScale = (*results)[lossScale->first].getAsDouble(0);
      report.skipped = report.newLossScale < report.lossScale;
      run.skippedSteps += report.skipped;
    }
    for (auto [result, argument] : threaded)
      arguments[argument] = std::move((*results)[result]);
    unsigned every = options.evaluation ? options.evaluation->every : 0;
    if (evaluator &&
        (n + 1 == options.steps || (every && (n + 1) % every == 0))) {
      FailureOr<double> validation = evaluator->run(arguments);
      if (failed(validation))
        return failure();
      report.validationLoss = *validation;
      report.validationBatches = evaluator->getBatches();
    }
    onStep(report);
  }
  return run;
}
