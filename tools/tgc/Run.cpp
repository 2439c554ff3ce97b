//===- Run.cpp - tgc run: a function on the CPU reference interpreter -----===//

#include "Flags.h"

#include "tgc/Driver/Run.h"
#include "tgc/Interpreter/GlobalStep.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/Interpreter.h"
#include "tgc/Interpreter/PrecisionReport.h"
#include "tgc/Pipeline/RunPasses.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace mlir;
using namespace tgc;
namespace cl = llvm::cl;

#define TGC_RUN cl::sub(cli::getRunCommand()), cl::cat(cli::getCategory())

static cl::list<std::string>
    files(cl::Positional, cl::OneOrMore,
          cl::desc("<input .mlir or .onnx> (two with --compare)"), TGC_RUN);
static cl::opt<std::string> params(
    "params",
    cl::desc("Read the values of params (by tg.name) from a .safetensors "
             "file (tgc train: where training starts; the file holds every "
             "parameter, or with --lora every frozen one, and the running "
             "statistics it has replace the model's)"),
    cl::value_desc("FILE.safetensors"), TGC_RUN,
    cl::sub(cli::getGradcheckCommand()), cl::sub(cli::getTrainCommand()));
static cl::opt<bool> randomMissingParams(
    "random-missing-params",
    cl::desc("With --params: draw the params the file lacks with "
             "--random-inputs' rule (default: an error)"),
    TGC_RUN, cl::sub(cli::getGradcheckCommand()));
static cl::list<std::string> inputs(
    "input",
    cl::desc("Read argument NAME (its tg.name, or argN) from a .npy file or "
             "an ONNX TensorProto .pb file (tgc train: an input the data "
             "does not feed, the same every step)"),
    cl::value_desc("NAME=PATH.npy"), TGC_RUN,
    cl::sub(cli::getGradcheckCommand()), cl::sub(cli::getTrainCommand()));
static cl::opt<uint64_t> randomSeed(
    "random-inputs",
    cl::desc("Give every argument without --input a random value from SEED "
             "(params: normal std 0.02; inputs: normal; labels and ids: "
             "uniform valid ids; state: zeros; see docs/interpreter.md)"),
    cl::value_desc("SEED"), TGC_RUN, cl::sub(cli::getGradcheckCommand()));
static cl::opt<bool> allowNonFinite(
    "allow-non-finite",
    cl::desc("Accept NaN and infinity in --input files (default: an error)"),
    TGC_RUN, cl::sub(cli::getGradcheckCommand()));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write each result to DIR/<tg.name or index>.npy"),
              cl::value_desc("DIR"), TGC_RUN);
enum class Toggle { Off, On };
static cl::opt<Toggle> precisionEmulation(
    "precision-emulation",
    cl::desc("Round every bf16/f16/f8 result to its type (default: on)"),
    cl::values(clEnumValN(Toggle::On, "on", "round results"),
               clEnumValN(Toggle::Off, "off", "keep f32 values")),
    cl::init(Toggle::On), TGC_RUN);
static cl::opt<bool>
    f64("f64", cl::desc("Run every float op in double precision"), TGC_RUN);
static cl::opt<bool>
    printValues("print-values", cl::desc("Print every element of every result"),
                TGC_RUN);
static cl::opt<bool>
    timeRun("time", cl::desc("Print the interpretation time (without parsing)"),
            TGC_RUN);
static cl::opt<bool> precisionReport(
    "precision-report",
    cl::desc("Also run every op in f64 beside the run, and print the results "
             "that part most from f64 beyond their operands: the op's own "
             "rounding, or small differences it amplifies (a cancellation, a "
             "near tie in a max); docs/interpreter.md"),
    TGC_RUN);
static cl::opt<unsigned>
    precisionTop("precision-top",
                 cl::desc("The results --precision-report lists (default 10)"),
                 cl::value_desc("N"), cl::init(10), TGC_RUN);
static cl::opt<bool> evaluation(
    "evaluation",
    cl::desc("Run the forward graph as evaluated (PyTorch's model.eval()): "
             "dropout the identity, a training-mode BatchNormalization on its "
             "running statistics, the loss and outputs without the new "
             "values of state (tg-evaluation keep-outputs)"),
    TGC_RUN);
static cl::opt<bool> compare(
    "compare",
    cl::desc("Run two files on the same inputs and compare their results"),
    TGC_RUN);
static cl::opt<double>
    relativeTolerance("rtol", cl::desc("Relative tolerance of --compare"),
                      cl::init(1e-5), TGC_RUN);
static cl::opt<double>
    absoluteTolerance("atol", cl::desc("Absolute tolerance of --compare"),
                      cl::init(1e-8), TGC_RUN);

FailureOr<ArgumentSources>
cli::getArgumentSources(ArrayRef<ImportedParameter> modelParameters,
                        std::optional<uint64_t> defaultSeed) {
  ArgumentSources sources;
  sources.inputs.assign(inputs.begin(), inputs.end());
  for (const ImportedParameter &parameter : modelParameters)
    sources.parameters[parameter.name] = parameter.value;
  if (!params.empty()) {
    llvm::StringMap<npy::Array> fromFile;
    if (failed(readParameterFile(params, fromFile)))
      return failure();
    sources.parameterFileNames.emplace();
    for (auto &entry : fromFile) {
      sources.parameterFileNames->insert(entry.getKey());
      sources.parameters[entry.getKey()] = std::move(entry.getValue());
    }
  } else if (randomMissingParams) {
    return reportError("--random-missing-params goes with --params");
  }
  sources.allowMissingParameters = randomMissingParams;
  sources.allowNonFinite = allowNonFinite;
  if (randomSeed.getNumOccurrences())
    sources.randomSeed = randomSeed;
  else
    sources.randomSeed = defaultSeed;
  return sources;
}

LogicalResult cli::runRun(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  if (compare != (files.size() == 2) || files.size() > 2)
    return reportError(compare ? "--compare needs two files"
                               : "run takes one file (two with --compare)");
  if (precisionReport && (f64 || compare))
    return reportError(std::string("--precision-report compares the run with "
                                   "f64: leave out ") +
                       (f64 ? "--f64" : "--compare"));
  SmallVector<OwningOpRef<ModuleOp>> modules;
  SmallVector<FunctionOpInterface> functions;
  std::vector<ImportedParameter> modelParameters;
  // parseSourceFile parses a SourceMgr's main file: one SourceMgr per file.
  // (The diagnostic handler shows lines of the others by reading the file.)
  SmallVector<std::unique_ptr<llvm::SourceMgr>> otherSourceMgrs;
  for (const std::string &file : files) {
    llvm::SourceMgr *fileSourceMgr = &sourceMgr;
    if (!modules.empty())
      fileSourceMgr =
          otherSourceMgrs.emplace_back(std::make_unique<llvm::SourceMgr>())
              .get();
    FailureOr<LoadedModel> model =
        loadModel(context, *fileSourceMgr, file, getImportFlags());
    if (failed(model))
      return failure();
    modules.push_back(std::move(model->module));
    if (evaluation) {
      PassManager pm(&context);
      TGEvaluationOptions keep;
      keep.keepOutputs = true;
      pm.addPass(createTGEvaluation(keep));
      if (failed(runPasses(pm, *modules.back())))
        return failure();
    }
    llvm::append_range(modelParameters, model->parameters);
    functions.push_back(findEntry(*modules.back(), getEntryName(), file));
    if (!functions.back())
      return failure();
  }
  FunctionOpInterface function = functions.front();
  FailureOr<ArgumentSources> sources =
      getArgumentSources(modelParameters, std::nullopt);
  if (failed(sources))
    return failure();
  FailureOr<SmallVector<Tensor>> arguments =
      prepareArguments(function, *sources);
  if (failed(arguments))
    return failure();

  if (precisionReport && isPartitioned(function))
    return function.emitError("--precision-report runs an unpartitioned "
                              "function; compile the model without --mesh");
  InterpreterOptions options;
  options.precisionEmulation = precisionEmulation == Toggle::On;
  options.f64 = f64;
  // A partitioned module runs all ranks of its mesh on the global values.
  FailureOr<GlobalStepRunner> runner =
      GlobalStepRunner::create(function, options);
  if (failed(runner))
    return failure();
  auto start = std::chrono::steady_clock::now();
  FailureOr<SmallVector<Tensor>> results = runner->run(*arguments);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (failed(results))
    return failure();

  if (compare) {
    FunctionOpInterface other = functions.back();
    FailureOr<GlobalStepRunner> otherRunner =
        GlobalStepRunner::create(other, options);
    if (failed(otherRunner))
      return failure();
    // The same values, or a fused parameter viewed with one dimension split
    // (tg-split-fused-projections under tp): the same elements reshaped.
    auto sameOrView = [](RankedTensorType a, RankedTensorType b) {
      return a == b || (a.getElementType() == b.getElementType() &&
                        (isSplitView(a.getShape(), b.getShape()) ||
                         isSplitView(b.getShape(), a.getShape())));
    };
    ArrayRef<RankedTensorType> types = runner->getArgumentTypes();
    ArrayRef<RankedTensorType> otherTypes = otherRunner->getArgumentTypes();
    if (types.size() != otherTypes.size() ||
        !llvm::all_of(llvm::zip(types, otherTypes), [&](auto pair) {
          return sameOrView(std::get<0>(pair), std::get<1>(pair));
        }))
      return reportError("@" + function.getName() + " and @" + other.getName() +
                         " take different arguments");
    SmallVector<Tensor> otherArguments;
    for (auto [argument, type] : llvm::zip(*arguments, otherTypes))
      otherArguments.push_back(argument.withType(type));
    FailureOr<SmallVector<Tensor>> otherResults =
        otherRunner->run(otherArguments);
    if (failed(otherResults))
      return failure();
    for (auto [result, mine] : llvm::zip(*otherResults, *results))
      if (result.getType() != mine.getType() &&
          sameOrView(result.getType(), mine.getType()))
        result = result.withType(mine.getType());
    return compareResults(function, *results, *otherResults, relativeTolerance,
                          absoluteTolerance);
  }

  for (auto [i, tensor] : llvm::enumerate(*results))
    printResult(llvm::outs(), getResultName(function, i), tensor, printValues);
  if (precisionReport) {
    FailureOr<SmallVector<PrecisionRecord>> records =
        measurePrecision(function, *arguments, options);
    if (failed(records))
      return failure();
    printPrecisionReport(llvm::outs(), function, *records, precisionTop);
  }
  if (timeRun)
    llvm::outs() << llvm::format("time: %.6f s\n", seconds);
  if (!outputDir.empty() && failed(writeResults(function, *results, outputDir)))
    return failure();
  return success();
}
