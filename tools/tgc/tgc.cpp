//===- tgc.cpp - the tgc driver
//--------------------------------------------===//
//
// `tgc compile` and `tgc report`: the user's way in. Each subcommand parses
// and verifies its input with file:line:col diagnostics, returns 1 on any
// error, and never leaves a partial output file behind.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/OpCostSummary.h"
#include "tgc/Analysis/RecomputePlanner.h"
#include "tgc/Analysis/StepReport.h"
#include "tgc/Analysis/TrainingMemory.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Eval/TensorNpy.h"
#include "tgc/Import/ONNX/Importer.h"
#include "tgc/InitAll.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/Interpreter.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Pipeline/PostImportPipeline.h"
#include "tgc/Support/Safetensors.h"
#include "tgc/Training/GradientCheck.h"
#include "tgc/Training/Trainer.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory tgcCategory("tgc options");

static cl::SubCommand
    compileCommand("compile",
                   "Parse, verify and optimize a training step, and write it");
static cl::SubCommand
    reportCommand("report",
                  "FLOPs and bytes of every op, estimated step time, simulated "
                  "peak memory");

static cl::SubCommand
    runCommand("run", "Run a function on the CPU reference interpreter");
static cl::SubCommand
    trainCommand("train",
                 "Train a model on the CPU interpreter (autodiff + optimizer)");
static cl::SubCommand
    importCommand("import", "Import an ONNX model: write OUT.mlir and its "
                            "parameters to OUT.safetensors");
static cl::SubCommand gradcheckCommand(
    "gradcheck",
    "Check tg-autodiff's gradients against finite differences (f64)");

static cl::opt<std::string>
    inputFilename(cl::Positional, cl::Required,
                  cl::desc("<input .mlir or .onnx, or - for stdin>"),
                  cl::sub(compileCommand), cl::sub(reportCommand),
                  cl::sub(gradcheckCommand), cl::sub(trainCommand),
                  cl::sub(importCommand), cl::cat(tgcCategory));

static cl::opt<std::string> outputFilename(
    "o",
    cl::desc("Output file for the module (default: stdout); the parameters "
             "of an ONNX model go next to it (OUT.safetensors)"),
    cl::value_desc("file"), cl::init("-"), cl::sub(compileCommand),
    cl::sub(importCommand), cl::cat(tgcCategory));

// ONNX import options, the same for every subcommand that reads a model.
static cl::list<std::string> importInputShapes(
    "input-shape",
    cl::desc("ONNX: the shape of graph input NAME, binding its symbolic "
             "dimensions (e.g. ids=4x128)"),
    cl::value_desc("NAME=DIMS"), cl::sub(importCommand),
    cl::sub(compileCommand), cl::sub(reportCommand), cl::sub(runCommand),
    cl::sub(gradcheckCommand), cl::sub(trainCommand), cl::cat(tgcCategory));
static cl::opt<std::string> importLossOutput(
    "loss-output",
    cl::desc("ONNX: the scalar graph output that is the loss (default: an "
             "output named 'loss')"),
    cl::value_desc("NAME"), cl::sub(importCommand), cl::sub(compileCommand),
    cl::sub(reportCommand), cl::sub(runCommand), cl::sub(gradcheckCommand),
    cl::sub(trainCommand), cl::cat(tgcCategory));
static cl::opt<std::string> importAddLoss(
    "add-loss",
    cl::desc("ONNX: add a mean cross-entropy of graph output LOGITS against "
             "a new 'label' argument, as the loss"),
    cl::value_desc("cross_entropy:LOGITS"), cl::sub(importCommand),
    cl::sub(compileCommand), cl::sub(reportCommand), cl::sub(runCommand),
    cl::sub(gradcheckCommand), cl::sub(trainCommand), cl::cat(tgcCategory));
static cl::opt<std::string> runParams(
    "params",
    cl::desc("Read the values of params (by tg.name) from a .safetensors "
             "file"),
    cl::value_desc("FILE.safetensors"), cl::sub(runCommand),
    cl::sub(gradcheckCommand), cl::cat(tgcCategory));

static cl::opt<bool> compileAutodiff(
    "autodiff",
    cl::desc("Differentiate: also return the gradient of every param"),
    cl::sub(compileCommand), cl::cat(tgcCategory));

static cl::opt<std::string>
    compileOptimizer("optimizer",
                     cl::desc("Also apply an optimizer update: sgd, adamw, "
                              "lamb or adafactor (implies "
                              "--autodiff)"),
                     cl::value_desc("kind"), cl::sub(compileCommand),
                     cl::cat(tgcCategory));
static cl::opt<double>
    compileLr("lr",
              cl::desc("Default learning rate of --optimizer (default 1e-3)"),
              cl::init(1e-3), cl::sub(compileCommand), cl::cat(tgcCategory));

static cl::list<std::string> freezeGlobs(
    "freeze",
    cl::desc("Do not train the parameters whose tg.name matches (globs, "
             "comma-separated)"),
    cl::value_desc("glob"), cl::CommaSeparated, cl::sub(compileCommand),
    cl::sub(trainCommand), cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::list<std::string> trainableGlobs(
    "trainable",
    cl::desc("Train only the parameters whose tg.name matches (globs, "
             "comma-separated)"),
    cl::value_desc("glob"), cl::CommaSeparated, cl::sub(compileCommand),
    cl::sub(trainCommand), cl::sub(reportCommand), cl::cat(tgcCategory));

static cl::opt<unsigned> microBatches(
    "micro-batches",
    cl::desc("Accumulate gradients over N micro-batches: the graph is written "
             "for one, the step takes N times its batch (default 1)"),
    cl::value_desc("N"), cl::init(1), cl::sub(compileCommand),
    cl::sub(trainCommand), cl::sub(reportCommand), cl::cat(tgcCategory));

static cl::opt<std::string> precisionPolicy(
    "precision",
    cl::desc("Mixed precision: fp32 (default), bf16, fp16 (dynamic loss "
             "scaling) or fp8 (fp8 matmuls, delayed scaling); parameters, "
             "gradients and optimizer state stay f32"),
    cl::value_desc("policy"), cl::init("fp32"), cl::sub(compileCommand),
    cl::sub(trainCommand), cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::list<std::string>
    keepFp32Ops("keep-fp32",
                cl::desc("With --precision: op names that always run in f32 "
                         "(comma-separated, e.g. tg.attention)"),
                cl::value_desc("op"), cl::CommaSeparated,
                cl::sub(compileCommand), cl::sub(trainCommand),
                cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::list<std::string> keepFp32Params(
    "keep-fp32-params",
    cl::desc("With --precision: the ops reading these parameters (globs, "
             "comma-separated) run in f32"),
    cl::value_desc("glob"), cl::CommaSeparated, cl::sub(compileCommand),
    cl::sub(trainCommand), cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<double> initLossScale(
    "init-scale",
    cl::desc("--precision fp16: the initial loss scale (default 65536)"),
    cl::init(65536.0), cl::sub(compileCommand), cl::sub(trainCommand),
    cl::cat(tgcCategory));
static cl::opt<unsigned> growthInterval(
    "growth-interval",
    cl::desc("--precision fp16: clean steps before the loss scale doubles "
             "(default 2000)"),
    cl::init(2000), cl::sub(compileCommand), cl::sub(trainCommand),
    cl::cat(tgcCategory));
static cl::opt<unsigned> amaxHistory(
    "amax-history",
    cl::desc("--precision fp8: steps of amax history per tensor (default 16)"),
    cl::init(16), cl::sub(compileCommand), cl::sub(trainCommand),
    cl::sub(reportCommand), cl::cat(tgcCategory));

static cl::opt<unsigned> fp8Margin(
    "fp8-margin",
    cl::desc("--precision fp8: scales leave 2^margin of headroom (default 0)"),
    cl::init(0), cl::sub(compileCommand), cl::sub(trainCommand),
    cl::sub(reportCommand), cl::cat(tgcCategory));

/// The mixed-precision flags, shared by compile, train and report.
static void setPrecisionOptions(tgc::TrainingPipelineOptions &options) {
  options.precision = precisionPolicy;
  options.keepFp32 = keepFp32Ops;
  options.keepFp32Params = keepFp32Params;
  options.initScale = initLossScale;
  options.growthInterval = growthInterval;
  options.amaxHistory = amaxHistory;
  options.fp8Margin = fp8Margin;
}

static cl::opt<bool> noCanonicalize("no-canonicalize",
                                    cl::desc("Skip canonicalization and CSE"),
                                    cl::sub(compileCommand),
                                    cl::cat(tgcCategory));
static cl::opt<bool> noFuse(
    "no-fuse",
    cl::desc("Do not group ops into fusion regions (skip tg-fuse); the "
             "report then shows the unfused kernels, bytes and step time"),
    cl::sub(compileCommand), cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<bool> noFuseOptimizer(
    "no-fuse-optimizer",
    cl::desc("Keep each optimizer update (and master-weight cast) its own "
             "kernel instead of multi-tensor kernels grouped by gradient "
             "readiness"),
    cl::sub(compileCommand), cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<bool>
    noSchedule("no-schedule",
               cl::desc("Keep the op order (skip tg-schedule, which reorders "
                        "ops to lower the peak memory)"),
               cl::sub(compileCommand), cl::cat(tgcCategory));
static cl::opt<bool>
    noMemoryPlan("no-memory-plan",
                 cl::desc("Skip tg-memory-plan (no arena offsets on the ops)"),
                 cl::sub(compileCommand), cl::cat(tgcCategory));

static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Recompute activations in the backward so the simulated peak "
             "fits BYTES (suffixes KiB, MiB, GiB, KB, MB, GB) or `auto` (the "
             "device's memory minus 5%); tg-recompute"),
    cl::value_desc("BYTES|auto"), cl::sub(compileCommand),
    cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<std::string> recomputeStrategy(
    "recompute",
    cl::desc("How to choose what to recompute: dp (default, with "
             "--memory-budget), none, full (keep only layer inputs), sqrt "
             "(keep every sqrt(n)-th layer input) or selective (Megatron's: "
             "the attention core, fused or scores, softmax and dropout)"),
    cl::init("dp"), cl::sub(compileCommand), cl::sub(reportCommand),
    cl::cat(tgcCategory));
static cl::opt<bool> explainRecompute(
    "explain",
    cl::desc("A remark per activation (kept or recomputed, bytes, recompute "
             "time) and a summary of tg-recompute"),
    cl::sub(compileCommand), cl::sub(reportCommand), cl::cat(tgcCategory));

static cl::opt<unsigned> recomputeFrontier(
    "recompute-frontier",
    cl::desc("Print the best recompute extra time for peaks from the "
             "smallest feasible to the peak without recomputation "
             "(tg-recompute at N+1 budgets; 0: off)"),
    cl::value_desc("N"), cl::init(0), cl::sub(reportCommand),
    cl::cat(tgcCategory));

static cl::opt<std::string> recomputeFrontierSvg(
    "recompute-frontier-svg",
    cl::desc("With --recompute-frontier: also draw the frontier (extra time "
             "against simulated peak) as an SVG file"),
    cl::value_desc("FILE"), cl::sub(reportCommand), cl::cat(tgcCategory));

static cl::opt<bool> reportTrain(
    "train",
    cl::desc("Report the persistent memory of the training step built with "
             "--optimizer (parameters, gradients, optimizer state)"),
    cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<bool> reportJson("json", cl::desc("Print the report as JSON"),
                                cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<std::string> reportTimeline(
    "memory-timeline",
    cl::desc("Draw live memory over the op sequence, by kind, as an SVG"),
    cl::value_desc("FILE.svg"), cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<std::string>
    deviceName("device",
               cl::desc("The GPU to plan for: A100-40GB, A100-80GB, "
                        "H100-SXM (default), H200, B200"),
               cl::value_desc("name"), cl::sub(compileCommand),
               cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<std::string> deviceFile(
    "device-file",
    cl::desc(
        "Read the GPU's figures from a JSON file (see docs/cost-model.md)"),
    cl::value_desc("FILE.json"), cl::sub(compileCommand),
    cl::sub(reportCommand), cl::cat(tgcCategory));

static cl::list<std::string>
    runFiles(cl::Positional, cl::OneOrMore,
             cl::desc("<input .mlir or .onnx> (two with --compare)"),
             cl::sub(runCommand), cl::cat(tgcCategory));
static cl::opt<std::string> runEntry(
    "entry",
    cl::desc("The function to run or report (default: the only one, or "
             "main)"),
    cl::value_desc("name"), cl::sub(runCommand), cl::sub(gradcheckCommand),
    cl::sub(trainCommand), cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::list<std::string> runInputs(
    "input",
    cl::desc("Read argument NAME (its tg.name, or argN) from a .npy file or "
             "an ONNX TensorProto .pb file"),
    cl::value_desc("NAME=PATH.npy"), cl::sub(runCommand),
    cl::sub(gradcheckCommand), cl::cat(tgcCategory));
static cl::opt<uint64_t> runRandomSeed(
    "random-inputs",
    cl::desc("Give every argument without --input a random value from SEED "
             "(params: normal std 0.02; inputs: normal; labels and ids: "
             "uniform valid ids; state: zeros; see docs/interpreter.md)"),
    cl::value_desc("SEED"), cl::sub(runCommand), cl::sub(gradcheckCommand),
    cl::cat(tgcCategory));
static cl::opt<std::string> runOutputDir(
    "output-dir", cl::desc("Write each result to DIR/<tg.name or index>.npy"),
    cl::value_desc("DIR"), cl::sub(runCommand), cl::cat(tgcCategory));
enum class Toggle { Off, On };
static cl::opt<Toggle> runPrecisionEmulation(
    "precision-emulation",
    cl::desc("Round every bf16/f16/f8 result to its type (default: on)"),
    cl::values(clEnumValN(Toggle::On, "on", "round results"),
               clEnumValN(Toggle::Off, "off", "keep f32 values")),
    cl::init(Toggle::On), cl::sub(runCommand), cl::cat(tgcCategory));
static cl::opt<bool> runF64("f64",
                            cl::desc("Run every float op in double precision"),
                            cl::sub(runCommand), cl::cat(tgcCategory));
static cl::opt<bool> runAllowNonFinite(
    "allow-non-finite",
    cl::desc("Accept NaN and infinity in --input files (default: an error)"),
    cl::sub(runCommand), cl::sub(gradcheckCommand), cl::cat(tgcCategory));
static cl::opt<bool>
    runPrintValues("print-values",
                   cl::desc("Print every element of every result"),
                   cl::sub(runCommand), cl::cat(tgcCategory));
static cl::opt<bool>
    runTime("time", cl::desc("Print the interpretation time (without parsing)"),
            cl::sub(runCommand), cl::cat(tgcCategory));
static cl::opt<bool> runCompare(
    "compare",
    cl::desc("Run two files on the same inputs and compare their results"),
    cl::sub(runCommand), cl::cat(tgcCategory));
static cl::opt<double> runRtol("rtol",
                               cl::desc("Relative tolerance of --compare"),
                               cl::init(1e-5), cl::sub(runCommand),
                               cl::cat(tgcCategory));
static cl::opt<double> runAtol("atol",
                               cl::desc("Absolute tolerance of --compare"),
                               cl::init(1e-8), cl::sub(runCommand),
                               cl::cat(tgcCategory));

static cl::opt<double> gradcheckEpsilon(
    "epsilon",
    cl::desc("Step of the central differences along unit directions "
             "(default 1e-3; Richardson extrapolation also uses half of it)"),
    cl::init(1e-3), cl::sub(gradcheckCommand), cl::cat(tgcCategory));
static cl::opt<unsigned> gradcheckDirections(
    "directions", cl::desc("Random directions per parameter (default 3)"),
    cl::init(3), cl::sub(gradcheckCommand), cl::cat(tgcCategory));
static cl::opt<double> gradcheckTolerance(
    "tolerance", cl::desc("Largest relative error accepted (default 1e-6)"),
    cl::init(1e-6), cl::sub(gradcheckCommand), cl::cat(tgcCategory));

static cl::opt<unsigned> trainSteps("steps",
                                    cl::desc("Training steps (default 100)"),
                                    cl::init(100), cl::sub(trainCommand),
                                    cl::cat(tgcCategory));
static cl::opt<std::string> trainData(
    "data",
    cl::desc("Training data: synthetic-copy (fresh random token ids each "
             "step, labels = ids: the model learns to copy), fixed (one "
             "random batch every step: memorization), or FILE.bin (uint16 "
             "token ids as nanoGPT writes them: random windows, labels = "
             "the next tokens). Default: synthetic-copy for token models, "
             "else fixed"),
    cl::value_desc("synthetic-copy|fixed|FILE.bin"), cl::sub(trainCommand),
    cl::cat(tgcCategory));
static cl::opt<std::string>
    trainOptimizer("optimizer",
                   cl::desc("sgd, adamw, lamb or adafactor (default adamw)"),
                   cl::init("adamw"), cl::sub(trainCommand),
                   cl::sub(reportCommand), cl::cat(tgcCategory));
static cl::opt<double> trainLr("lr", cl::desc("Learning rate (default 1e-3)"),
                               cl::init(1e-3), cl::sub(trainCommand),
                               cl::cat(tgcCategory));
static cl::opt<double> trainMomentum("momentum",
                                     cl::desc("SGD momentum (default 0)"),
                                     cl::init(0.0), cl::sub(trainCommand),
                                     cl::cat(tgcCategory));
static cl::opt<double> trainWeightDecay("weight-decay",
                                        cl::desc("Weight decay (default 0)"),
                                        cl::init(0.0), cl::sub(trainCommand),
                                        cl::cat(tgcCategory));
static cl::opt<double>
    trainClipNorm("clip-norm",
                  cl::desc("Global gradient-norm clipping (default: none)"),
                  cl::init(0.0), cl::sub(trainCommand), cl::cat(tgcCategory));
static cl::opt<uint64_t>
    trainSeed("seed",
              cl::desc("Seeds the initial parameters and the data (default 0)"),
              cl::init(0), cl::sub(trainCommand), cl::cat(tgcCategory));
static cl::opt<unsigned>
    trainLogEvery("log-every",
                  cl::desc("Print the loss every K steps (default 10)"),
                  cl::init(10), cl::sub(trainCommand), cl::cat(tgcCategory));
static cl::opt<std::string> trainSave(
    "save", cl::desc("Write the trained parameters to FILE.safetensors"),
    cl::value_desc("FILE"), cl::sub(trainCommand), cl::cat(tgcCategory));

/// Values of params by tg.name: from the ONNX models loaded, then --params.
static llvm::StringMap<tgc::npy::Array> parameterValues;
/// The parameters of the last ONNX model loaded, in argument order.
static std::optional<std::vector<tgc::ImportedParameter>> importedParameters;

/// Imports an ONNX model with the import options and the post-import
/// pipeline, and keeps its parameter values.
static OwningOpRef<ModuleOp> importModel(MLIRContext &context,
                                         StringRef filename) {
  tgc::ONNXImportOptions options;
  for (StringRef spec : importInputShapes)
    if (llvm::Error error = tgc::parseInputShape(spec, options.inputShapes)) {
      llvm::errs() << "tgc: error: " << llvm::toString(std::move(error))
                   << "\n";
      return nullptr;
    }
  options.lossOutput = importLossOutput;
  if (!importAddLoss.empty()) {
    auto [kind, logits] = StringRef(importAddLoss).split(':');
    if (kind != "cross_entropy" || logits.empty()) {
      llvm::errs() << "tgc: error: --add-loss expects cross_entropy:LOGITS, "
                      "got '"
                   << importAddLoss << "'\n";
      return nullptr;
    }
    if (!options.lossOutput.empty()) {
      llvm::errs() << "tgc: error: --loss-output and --add-loss exclude each "
                      "other\n";
      return nullptr;
    }
    options.crossEntropyLogits = logits.str();
  }
  FailureOr<tgc::ImportedModel> model =
      tgc::importONNXFile(context, filename, options);
  if (failed(model))
    return nullptr;
  PassManager pm(&context);
  tgc::buildPostImportPipeline(pm);
  if (failed(pm.run(*model->module)))
    return nullptr;
  for (const tgc::ImportedParameter &parameter : model->parameters)
    parameterValues[parameter.name] = parameter.value;
  importedParameters = std::move(model->parameters);
  return std::move(model->module);
}

/// Parses and verifies `filename` (.mlir, or .onnx through the importer);
/// diagnostics go to stderr with locations.
static OwningOpRef<ModuleOp> loadModule(MLIRContext &context,
                                        llvm::SourceMgr &sourceMgr,
                                        StringRef filename) {
  if (filename.ends_with(".onnx"))
    return importModel(context, filename);
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(filename, &errorMessage);
  if (!input) {
    llvm::errs() << "tgc: error: " << errorMessage << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  // parseSourceFile verifies the module it returns.
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

static LogicalResult writeModule(ModuleOp module);
static std::optional<tgc::DeviceSpec> resolveDevice();
static LogicalResult writeOutputFile(StringRef file,
                                     function_ref<void(raw_ostream &)> write);

/// The device as the passes' `device` option names it.
static std::string getDeviceOption() {
  if (!deviceFile.empty()) // A path, whatever its name (see tg-memory-plan).
    return StringRef(deviceFile).contains('/') ? std::string(deviceFile)
                                               : "./" + deviceFile;
  if (!deviceName.empty())
    return deviceName;
  return std::string(tgc::getDefaultDeviceName());
}

static LogicalResult runCompile(MLIRContext &context,
                                llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr, inputFilename);
  if (!module)
    return failure();
  PassManager pm(&context);
  tgc::TrainingPipelineOptions options;
  options.canonicalize = !noCanonicalize;
  options.fuse = !noFuse;
  options.fuseOptimizer = !noFuseOptimizer;
  options.schedule = !noSchedule;
  options.memoryPlan = !noMemoryPlan;
  if (!resolveDevice())
    return failure();
  options.device = getDeviceOption();
  options.autodiff = compileAutodiff;
  options.optimizer = compileOptimizer;
  options.microBatches = microBatches;
  options.frozen = freezeGlobs;
  options.trainable = trainableGlobs;
  options.lr = compileLr;
  options.memoryBudget = memoryBudget;
  options.recompute = recomputeStrategy;
  options.explainRecompute = explainRecompute;
  setPrecisionOptions(options);
  tgc::buildTrainingPipeline(pm, options);
  if (failed(pm.run(*module)))
    return failure();
  return writeModule(*module);
}

/// Writes `module` to -o and, for an imported ONNX model, its parameters
/// next to it (OUT.safetensors); on any error, neither file is left.
static LogicalResult writeModule(ModuleOp module) {
  std::string paramsFile;
  if (importedParameters && !importedParameters->empty()) {
    if (outputFilename == "-") {
      llvm::errs() << "tgc: error: the parameters of an ONNX model are "
                      "written next to the module: give -o FILE.mlir\n";
      return failure();
    }
    SmallString<128> path(outputFilename);
    llvm::sys::path::replace_extension(path, "safetensors");
    paramsFile = path.str().str();
  }
  if (failed(writeOutputFile(outputFilename, [&](raw_ostream &os) {
        module->print(os);
        os << "\n";
      })))
    return failure();
  if (paramsFile.empty())
    return success();
  if (llvm::Error error =
          tgc::writeParameters(paramsFile, *importedParameters)) {
    llvm::errs() << "tgc: error: " << llvm::toString(std::move(error)) << "\n";
    llvm::sys::fs::remove(outputFilename);
    return failure();
  }
  return success();
}

static func::FuncOp buildTrainingStep(ModuleOp module, func::FuncOp forward,
                                      bool fuse = false);
static FunctionOpInterface findEntry(ModuleOp module, StringRef filename);

/// The device of --device or --device-file (default H100-SXM).
static std::optional<tgc::DeviceSpec> resolveDevice() {
  if (!deviceName.empty() && !deviceFile.empty()) {
    llvm::errs() << "tgc: error: give --device or --device-file, not both\n";
    return std::nullopt;
  }
  llvm::Expected<tgc::DeviceSpec> device =
      deviceFile.empty()
          ? tgc::lookupDevice(deviceName.empty() ? tgc::getDefaultDeviceName()
                                                 : StringRef(deviceName))
          : tgc::loadDeviceFile(deviceFile);
  if (!device) {
    llvm::errs() << "tgc: error: " << llvm::toString(device.takeError())
                 << "\n";
    return std::nullopt;
  }
  return *device;
}

/// Writes `file` through `write`, or leaves nothing behind on failure.
static LogicalResult writeOutputFile(StringRef file,
                                     function_ref<void(raw_ostream &)> write) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(file, &errorMessage);
  if (!output) {
    llvm::errs() << "tgc: error: " << errorMessage << "\n";
    return failure();
  }
  write(output->os());
  output->os().flush();
  if (output->os().has_error()) {
    llvm::errs() << "tgc: error: cannot write '" << file
                 << "': " << output->os().error().message() << "\n";
    output->os().clear_error();
    return failure();
  }
  output->keep();
  return success();
}

static LogicalResult runImport(MLIRContext &context,
                               llvm::SourceMgr &sourceMgr) {
  if (!StringRef(inputFilename).ends_with(".onnx")) {
    llvm::errs() << "tgc: error: import reads an ONNX model (.onnx), got '"
                 << inputFilename << "'\n";
    return failure();
  }
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr, inputFilename);
  if (!module)
    return failure();
  return writeModule(*module);
}

/// The persistent memory of the step `tgc report --train` builds: the
/// gradients come from differentiating a copy of the forward.
static FailureOr<tgc::TrainingMemory>
computeTrainingMemory(ModuleOp module, func::FuncOp forward, bool fuse) {
  OwningOpRef<ModuleOp> differentiated = module.clone();
  PassManager pm(module.getContext());
  tgc::TGAutodiffOptions autodiff;
  autodiff.frozen.assign(freezeGlobs.begin(), freezeGlobs.end());
  autodiff.trainable.assign(trainableGlobs.begin(), trainableGlobs.end());
  pm.addPass(tgc::createTGAutodiff(autodiff));
  if (failed(pm.run(*differentiated)))
    return failure();
  auto gradients =
      differentiated->lookupSymbol<func::FuncOp>(forward.getName());
  func::FuncOp step = buildTrainingStep(module, forward, fuse);
  if (!step)
    return failure();
  return tgc::TrainingMemory::compute(gradients, step, trainOptimizer);
}

/// Kernels, bytes moved and step time without and with fusion regions.
static void printFusionComparison(raw_ostream &os,
                                  const tgc::StepTimeEstimate &unfused,
                                  const tgc::StepTimeEstimate &fused) {
  auto row = [&](StringRef name, const tgc::CostGroup &group) {
    os << llvm::format("  %-10s %8lld kernels %12.3f MB moved %10.3f ms\n",
                       name.str().c_str(), (long long)group.kernels,
                       group.bytes / 1e6, group.time * 1e3);
  };
  os << "\nfusion (tg-fuse; --no-fuse skips it):\n";
  row("unfused", unfused.total);
  row("fused", fused.total);
  static const char *phaseNames[] = {"forward", "backward", "optimizer"};
  for (unsigned phase = 0; phase < 3; ++phase)
    if (unfused.byPhase[phase].kernels > 0)
      os << llvm::format("  %-10s %8lld -> %lld kernels\n", phaseNames[phase],
                         (long long)unfused.byPhase[phase].kernels,
                         (long long)fused.byPhase[phase].kernels);
}

/// Turns the loaded function into what `tgc report` describes: the
/// autocast forward or, with --train, the training step (and its persistent
/// memory in `trainingMemory`), fused unless `fuse` is false.
static LogicalResult
prepareReportStep(ModuleOp module, func::FuncOp entry,
                  const tgc::DeviceSpec &device, bool fuse,
                  std::optional<tgc::TrainingMemory> *trainingMemory) {
  if (reportTrain) {
    FailureOr<tgc::TrainingMemory> memory =
        computeTrainingMemory(module, entry, fuse);
    if (failed(memory))
      return failure();
    if (trainingMemory)
      *trainingMemory = *memory;
    return success();
  }
  PassManager pm(module.getContext());
  if (precisionPolicy != "fp32") {
    // The forward alone, autocast as the training step would be.
    tgc::TrainingPipelineOptions options;
    setPrecisionOptions(options);
    options.fuse = false;
    options.memoryPlan = false;
    tgc::buildTrainingPipeline(pm, options);
  }
  if (fuse) {
    tgc::TGFuseOptions options;
    options.device = getDeviceOption();
    options.noHorizontal = noFuseOptimizer;
    pm.addNestedPass<func::FuncOp>(tgc::createTGFuse(options));
  }
  return pm.run(module);
}

static LogicalResult runReport(MLIRContext &context,
                               llvm::SourceMgr &sourceMgr) {
  if (!recomputeFrontierSvg.empty() && recomputeFrontier == 0) {
    llvm::errs() << "tgc: error: --recompute-frontier-svg draws the frontier "
                    "of --recompute-frontier N; give N too\n";
    return failure();
  }
  std::optional<tgc::DeviceSpec> device = resolveDevice();
  if (!device)
    return failure();
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr, inputFilename);
  if (!module)
    return failure();
  auto entry = dyn_cast_or_null<func::FuncOp>(
      static_cast<Operation *>(findEntry(*module, inputFilename)));
  if (!entry)
    return failure();
  // Fused by default, as `tgc compile` emits it; an unfused copy gives the
  // figures to compare with.
  std::optional<tgc::StepTimeEstimate> unfused;
  if (!noFuse) {
    OwningOpRef<ModuleOp> copy = module->clone();
    auto copyEntry = copy->lookupSymbol<func::FuncOp>(entry.getName());
    if (failed(prepareReportStep(*copy, copyEntry, *device, /*fuse=*/false,
                                 nullptr)))
      return failure();
    unfused = tgc::StepTimeEstimate::compute(
        copyEntry, *device, tgc::StepStructure::compute(copyEntry));
  }
  std::optional<tgc::TrainingMemory> trainingMemory;
  // Recomputation runs on the unfused step (tgc compile's order), the
  // frontier too.
  bool recompute = !memoryBudget.empty() || recomputeStrategy != "dp";
  if (failed(prepareReportStep(*module, entry, *device,
                               !noFuse && !recompute && recomputeFrontier == 0,
                               &trainingMemory)))
    return failure();
  if (recompute) {
    // The step as `tgc compile --memory-budget` leaves it: recomputation
    // before fusion, then the schedule.
    tgc::TGRecomputeOptions options;
    options.budget = memoryBudget;
    options.strategy = recomputeStrategy;
    options.device = getDeviceOption();
    options.explain = explainRecompute;
    PassManager pm(&context);
    pm.addNestedPass<func::FuncOp>(tgc::createTGRecompute(options));
    if (!noFuse) {
      tgc::TGFuseOptions fuse;
      fuse.device = getDeviceOption();
      fuse.noHorizontal = noFuseOptimizer;
      pm.addNestedPass<func::FuncOp>(tgc::createTGFuse(fuse));
    }
    pm.addNestedPass<func::FuncOp>(tgc::createTGSchedule());
    if (failed(pm.run(*module)))
      return failure();
  }
  if (recomputeFrontier > 0) {
    tgc::RecomputePlanner planner(entry, *device);
    std::vector<tgc::RecomputePlan> frontier =
        planner.computeFrontier(recomputeFrontier);
    llvm::outs() << "recompute frontier of @" << entry.getSymName() << " on "
                 << device->name << " (" << planner.getCandidates().size()
                 << " activations)\n";
    llvm::outs() << llvm::format("  %16s %14s %11s\n", "peak_bytes",
                                 "extra_time_s", "recomputed");
    for (const tgc::RecomputePlan &plan : frontier)
      llvm::outs() << llvm::format("  %16lld %14.6e %11zu\n",
                                   static_cast<long long>(plan.peakBytes),
                                   plan.extraTime, plan.recomputed.size());
    if (!recomputeFrontierSvg.empty() &&
        failed(writeOutputFile(recomputeFrontierSvg, [&](raw_ostream &os) {
          tgc::writeRecomputeFrontierSvg(os, entry.getSymName(), device->name,
                                         frontier,
                                         planner.getPeakWithoutRecompute(),
                                         planner.getCandidates().size());
        })))
      return failure();
    return success();
  }
  std::vector<tgc::FunctionCostSummary> summaries =
      tgc::summarizeModuleCosts(*module);
  tgc::StepReport report = tgc::StepReport::compute(entry, *device);
  if (!reportTimeline.empty() &&
      failed(writeOutputFile(reportTimeline, [&](raw_ostream &os) {
        report.memory.writeTimelineSvg(os);
      })))
    return failure();
  if (reportJson) {
    nlohmann::json json = report.toJson();
    json["ops"] = tgc::costSummariesToJson(summaries)["functions"];
    if (trainingMemory)
      json["training_memory"] = trainingMemory->toJson();
    // The figures without fusion regions, next to the fused ones above.
    if (unfused)
      json["unfused"] = {{"kernels", unfused->total.kernels},
                         {"hbm_bytes", unfused->total.bytes},
                         {"step_time_s", unfused->total.time},
                         {"time", unfused->toJson()}};
    llvm::outs() << json.dump(2) << "\n";
    return success();
  }
  tgc::printCostTables(llvm::outs(), summaries);
  if (trainingMemory)
    trainingMemory->print(llvm::outs());
  report.print(llvm::outs());
  if (unfused)
    printFusionComparison(llvm::outs(), *unfused, report.time);
  return success();
}

/// The function to run: --entry, else the only function, else @main.
static FunctionOpInterface findEntry(ModuleOp module, StringRef filename) {
  SmallVector<FunctionOpInterface> functions;
  for (auto function : module.getOps<FunctionOpInterface>())
    if (!function.isExternal())
      functions.push_back(function);
  StringRef wanted = runEntry;
  if (wanted.empty() && functions.size() == 1)
    return functions.front();
  if (wanted.empty())
    wanted = "main";
  for (FunctionOpInterface function : functions)
    if (function.getName() == wanted)
      return function;
  llvm::errs() << "tgc: error: " << filename << " has no function '" << wanted
               << "' to run; functions:";
  for (FunctionOpInterface function : functions)
    llvm::errs() << " " << function.getName();
  llvm::errs() << (functions.empty() ? " none\n" : " (choose with --entry)\n");
  return nullptr;
}

/// An --input file: .npy, or an ONNX TensorProto (.pb).
static llvm::Expected<tgc::npy::Array>
readArgumentFile(FunctionOpInterface function, StringRef path) {
  if (!path.ends_with(".pb"))
    return tgc::npy::readNpy(path);
  llvm::Expected<tgc::ONNXTensorFile> file =
      tgc::readONNXTensorFile(*function.getContext(), path);
  if (!file)
    return file.takeError();
  return std::move(file->value);
}

/// Adds the tensors of --params to `parameterValues`.
static LogicalResult readParamsFile() {
  if (runParams.empty())
    return success();
  auto entries = tgc::safetensors::read(runParams);
  if (!entries) {
    llvm::errs() << "tgc: error: " << llvm::toString(entries.takeError())
                 << "\n";
    return failure();
  }
  static const llvm::StringMap<tgc::npy::DType> dtypes = {
      {"F32", tgc::npy::DType::F32}, {"F64", tgc::npy::DType::F64},
      {"F16", tgc::npy::DType::F16}, {"I64", tgc::npy::DType::I64},
      {"I32", tgc::npy::DType::I32}, {"BOOL", tgc::npy::DType::Bool}};
  for (tgc::safetensors::Entry &entry : *entries) {
    auto dtype = dtypes.find(entry.dtype);
    if (dtype == dtypes.end()) {
      llvm::errs() << "tgc: error: " << runParams << ": tensor '" << entry.name
                   << "' has dtype " << entry.dtype
                   << ", which tgc cannot read\n";
      return failure();
    }
    parameterValues[entry.name] = {dtype->second, std::move(entry.shape),
                                   std::move(entry.data)};
  }
  return success();
}

/// Arguments for `function`: --input files, else random values.
static FailureOr<SmallVector<tgc::Tensor>>
prepareArguments(FunctionOpInterface function) {
  unsigned numArgs = function.getNumArguments();
  llvm::StringMap<unsigned> indexOfName;
  for (unsigned i = 0; i < numArgs; ++i) {
    indexOfName[tgc::getArgumentName(function, i)] = i;
    indexOfName["arg" + std::to_string(i)] = i;
  }
  SmallVector<std::optional<tgc::Tensor>> values(numArgs);
  for (StringRef spec : runInputs) {
    auto [name, path] = spec.split('=');
    if (path.empty()) {
      llvm::errs() << "tgc: error: --input expects NAME=PATH.npy, got '" << spec
                   << "'\n";
      return failure();
    }
    auto it = indexOfName.find(name);
    if (it == indexOfName.end()) {
      llvm::errs() << "tgc: error: --input names '" << name
                   << "', which is no argument of @" << function.getName()
                   << "; arguments:";
      for (unsigned i = 0; i < numArgs; ++i)
        llvm::errs() << " " << tgc::getArgumentName(function, i);
      llvm::errs() << "\n";
      return failure();
    }
    unsigned index = it->second;
    if (values[index]) {
      llvm::errs() << "tgc: error: argument '" << name
                   << "' is given twice by --input\n";
      return failure();
    }
    llvm::Expected<tgc::npy::Array> array = readArgumentFile(function, path);
    if (!array) {
      llvm::errs() << "tgc: error: argument '" << name
                   << "': " << llvm::toString(array.takeError()) << "\n";
      return failure();
    }
    llvm::Expected<tgc::Tensor> tensor = tgc::tensorFromNpy(
        *array, cast<RankedTensorType>(function.getArgumentTypes()[index]),
        tgc::getArgumentName(function, index), runAllowNonFinite);
    if (!tensor) {
      llvm::errs() << "tgc: error: " << llvm::toString(tensor.takeError())
                   << "\n";
      return failure();
    }
    values[index] = std::move(*tensor);
  }
  if (failed(readParamsFile()))
    return failure();
  SmallVector<tgc::Tensor> arguments;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (!isa<RankedTensorType>(function.getArgumentTypes()[i])) {
      llvm::errs() << "tgc: error: argument '"
                   << tgc::getArgumentName(function, i) << "' has type "
                   << function.getArgumentTypes()[i]
                   << ", which the interpreter cannot hold\n";
      return failure();
    }
    std::string name = tgc::getArgumentName(function, i);
    auto known = parameterValues.find(name);
    if (!values[i] &&
        tgc::tg::getArgumentRole(function, i) == tgc::tg::Role::Param &&
        known != parameterValues.end()) {
      llvm::Expected<tgc::Tensor> tensor = tgc::tensorFromNpy(
          known->second, cast<RankedTensorType>(function.getArgumentTypes()[i]),
          name, /*allowNonFinite=*/true);
      if (!tensor) {
        llvm::errs() << "tgc: error: " << llvm::toString(tensor.takeError())
                     << "\n";
        return failure();
      }
      values[i] = std::move(*tensor);
    }
    if (values[i]) {
      arguments.push_back(std::move(*values[i]));
    } else if (runRandomSeed.getNumOccurrences() || gradcheckCommand) {
      // gradcheck draws random values (seed 0) unless told otherwise.
      arguments.push_back(tgc::makeRandomArgument(function, i, runRandomSeed));
    } else {
      llvm::errs() << "tgc: error: argument '"
                   << tgc::getArgumentName(function, i)
                   << "' has no value: give --input "
                   << tgc::getArgumentName(function, i)
                   << "=FILE.npy or --random-inputs SEED\n";
      return failure();
    }
  }
  return arguments;
}

/// One line per result: name, type, mean, largest magnitude, non-finite
/// count; with --print-values, every element.
static void printResult(llvm::raw_ostream &os, StringRef name,
                        const tgc::Tensor &tensor) {
  int64_t count = tensor.getNumElements(), nonFinite = 0;
  double sum = 0.0, absMax = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    double value = tensor.getAsDouble(i);
    if (!std::isfinite(value)) {
      ++nonFinite;
      continue;
    }
    sum += value;
    absMax = std::max(absMax, std::abs(value));
  }
  double mean = count > nonFinite ? sum / double(count - nonFinite) : 0.0;
  os << name << ": " << tensor.getType()
     << llvm::format(" mean=%.6g absmax=%.6g", mean, absMax);
  if (nonFinite)
    os << " nonfinite=" << nonFinite;
  os << "\n";
  if (!runPrintValues)
    return;
  os << "  [";
  for (int64_t i = 0; i < count; ++i) {
    if (i)
      os << ", ";
    if (tensor.isIntStorage())
      os << tensor.ints()[i];
    else
      os << llvm::format("%.9g", tensor.getAsDouble(i));
  }
  os << "]\n";
}

/// Writes DIR/<name>.npy per result; on any error removes what it wrote.
static LogicalResult writeResults(FunctionOpInterface function,
                                  ArrayRef<tgc::Tensor> results) {
  if (std::error_code ec = llvm::sys::fs::create_directories(runOutputDir)) {
    llvm::errs() << "tgc: error: cannot create output directory '"
                 << runOutputDir << "': " << ec.message() << "\n";
    return failure();
  }
  SmallVector<std::string> written;
  llvm::StringSet<> names;
  for (auto [i, tensor] : llvm::enumerate(results)) {
    std::string name = tgc::getResultName(function, i);
    // A name is a file name: path separators would escape the directory.
    std::replace(name.begin(), name.end(), '/', '_');
    SmallString<128> path(runOutputDir);
    llvm::sys::path::append(path, name + ".npy");
    llvm::Error error =
        names.insert(name).second
            ? tgc::npy::writeNpy(path, tgc::tensorToNpy(tensor))
            : llvm::createStringError(llvm::inconvertibleErrorCode(),
                                      "two results are named '" + name + "'");
    if (error) {
      llvm::errs() << "tgc: error: " << llvm::toString(std::move(error))
                   << "\n";
      for (const std::string &file : written)
        llvm::sys::fs::remove(file);
      return failure();
    }
    written.push_back(path.str().str());
  }
  return success();
}

/// Compares `actual` with `expected` per result (numpy's allclose rule:
/// |a - b| <= atol + rtol * |b|; NaN matches NaN, infinities match
/// themselves) and prints the largest errors.
static LogicalResult compareResults(FunctionOpInterface function,
                                    ArrayRef<tgc::Tensor> actual,
                                    ArrayRef<tgc::Tensor> expected) {
  if (actual.size() != expected.size()) {
    llvm::errs() << "tgc: error: the two functions return " << actual.size()
                 << " and " << expected.size() << " results\n";
    return failure();
  }
  bool allClose = true;
  for (auto [i, a, b] : llvm::enumerate(actual, expected)) {
    std::string name = tgc::getResultName(function, i);
    if (a.getType() != b.getType()) {
      llvm::errs() << "tgc: error: result '" << name << "' has type "
                   << a.getType() << " and " << b.getType() << "\n";
      return failure();
    }
    double maxAbs = 0.0, maxRel = 0.0;
    int64_t mismatches = 0;
    for (int64_t j = 0, e = a.getNumElements(); j < e; ++j) {
      double x = a.getAsDouble(j), y = b.getAsDouble(j);
      if ((std::isnan(x) && std::isnan(y)) || x == y)
        continue;
      double diff = std::abs(x - y);
      if (std::isnan(diff))
        diff = INFINITY;
      maxAbs = std::max(maxAbs, diff);
      maxRel = std::max(maxRel, diff / std::max(std::abs(y), 1e-300));
      if (!(diff <= runAtol + runRtol * std::abs(y)))
        ++mismatches;
    }
    llvm::outs() << name << ": "
                 << llvm::format("max abs error %.3g, max rel error %.3g",
                                 maxAbs, maxRel)
                 << (mismatches ? " FAIL (" + std::to_string(mismatches) +
                                      " elements beyond tolerance)"
                                : std::string(" ok"))
                 << "\n";
    allClose &= mismatches == 0;
  }
  if (!allClose)
    llvm::errs() << "tgc: error: results differ beyond "
                 << llvm::format("rtol=%g atol=%g", double(runRtol),
                                 double(runAtol))
                 << "\n";
  return success(allClose);
}

/// Checks the gradients of every function with a loss (or of --entry).
static LogicalResult runGradcheck(MLIRContext &context,
                                  llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr, inputFilename);
  if (!module)
    return failure();
  SmallVector<func::FuncOp> functions;
  for (auto function : module->getOps<func::FuncOp>()) {
    bool hasLoss = false;
    for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
      if (auto role = function.getResultAttrOfType<StringAttr>(
              i, tgc::tg::TGDialect::kRoleAttrName))
        hasLoss |= role.getValue() == "loss";
    if (hasLoss && (runEntry.empty() || function.getName() == runEntry))
      functions.push_back(function);
  }
  if (functions.empty()) {
    llvm::errs() << "tgc: error: " << inputFilename << " has no function "
                 << (runEntry.empty() ? std::string("with a loss result")
                                      : "'" + runEntry + "' with a loss")
                 << " to check\n";
    return failure();
  }
  tgc::GradientCheckOptions options;
  options.epsilon = gradcheckEpsilon;
  options.directions = gradcheckDirections;
  options.seed = runRandomSeed;
  bool allPassed = true;
  for (func::FuncOp function : functions) {
    FailureOr<SmallVector<tgc::Tensor>> arguments = prepareArguments(function);
    if (failed(arguments))
      return failure();
    FailureOr<std::vector<tgc::ParameterGradientCheck>> checks =
        tgc::checkGradients(function, *arguments, options);
    if (failed(checks))
      return failure();
    for (const tgc::ParameterGradientCheck &check : *checks) {
      bool passed = check.maxRelativeError <= gradcheckTolerance;
      allPassed &= passed;
      llvm::outs() << "@" << function.getName() << " " << check.name << ": "
                   << llvm::format("max relative error %.3g over %u checks",
                                   check.maxRelativeError, check.checks)
                   << (passed ? " ok" : " FAIL") << "\n";
    }
  }
  if (!allPassed)
    llvm::errs() << "tgc: error: gradients differ from finite differences "
                    "beyond "
                 << llvm::format("%g", double(gradcheckTolerance)) << "\n";
  return success(allPassed);
}

/// Builds the training step of `forward` in place with the training
/// pipeline, configured by the train/report flags.
static func::FuncOp buildTrainingStep(ModuleOp module, func::FuncOp forward,
                                      bool fuse) {
  PassManager pm(module.getContext());
  tgc::TrainingPipelineOptions options;
  options.optimizer = trainOptimizer;
  options.lr = trainLr;
  options.momentum = trainMomentum;
  options.weightDecay = trainWeightDecay;
  options.clipNorm = trainClipNorm;
  options.microBatches = microBatches;
  options.frozen = freezeGlobs;
  options.trainable = trainableGlobs;
  setPrecisionOptions(options);
  // The order of `tgc compile` (the report simulates it); the offsets are
  // not needed to run or report the step. The interpreter trains the
  // unfused step.
  options.fuse = fuse;
  options.fuseOptimizer = !noFuseOptimizer;
  options.memoryPlan = false;
  tgc::buildTrainingPipeline(pm, options);
  if (failed(pm.run(module)))
    return nullptr;
  return forward;
}

static LogicalResult runTrain(MLIRContext &context,
                              llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr, inputFilename);
  if (!module)
    return failure();
  auto entry = dyn_cast_or_null<func::FuncOp>(
      static_cast<Operation *>(findEntry(*module, inputFilename)));
  if (!entry)
    return failure();
  std::optional<tgc::CopyTask> copyTask = tgc::CopyTask::find(entry);
  std::string data = trainData;
  if (data.empty())
    data = copyTask ? "synthetic-copy" : "fixed";
  bool fromFile = data != "synthetic-copy" && data != "fixed";
  if (!copyTask && data != "fixed") {
    llvm::errs() << "tgc: error: --data " << data
                 << " needs a token-id 'input' argument read by tg.embedding "
                    "and a 'label' argument of the same type; @"
                 << entry.getName() << " has none (try --data fixed)\n";
    return failure();
  }
  std::optional<tgc::TokenData> tokens;
  if (fromFile) {
    llvm::Expected<tgc::TokenData> loaded =
        tgc::TokenData::load(data, entry, *copyTask);
    if (!loaded) {
      llvm::errs() << "tgc: error: " << llvm::toString(loaded.takeError())
                   << "\n";
      return failure();
    }
    tokens = std::move(*loaded);
  }
  func::FuncOp step = buildTrainingStep(*module, entry);
  if (!step)
    return failure();

  tgc::TrainerOptions options;
  options.steps = trainSteps;
  options.seed = trainSeed;
  if (data == "synthetic-copy")
    options.copyTask = copyTask;
  options.tokens = std::move(tokens);
  unsigned logEvery = std::max(1u, unsigned(trainLogEvery));
  auto start = std::chrono::steady_clock::now();
  FailureOr<tgc::TrainingRun> run = tgc::runTraining(
      step, options, [&](const tgc::TrainingStepResult &report) {
        unsigned n = report.step;
        if (n == 1 || n % logEvery == 0 || n == trainSteps || report.skipped) {
          llvm::outs() << llvm::format("step %u: loss %.6f", n, report.loss);
          if (report.skipped)
            llvm::outs() << llvm::format(
                " (skipped: non-finite gradients; loss scale %g -> %g)",
                report.lossScale, report.newLossScale);
          else if (!std::isnan(report.lossScale))
            llvm::outs() << llvm::format(" (loss scale %g)",
                                         report.newLossScale);
          llvm::outs() << "\n";
        }
      });
  if (failed(run))
    return failure();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::outs() << llvm::format(
      "trained %u steps (%s%s, %s data) in %.2f s: loss %.6f -> %.6f\n",
      unsigned(trainSteps), trainOptimizer.c_str(),
      precisionPolicy == "fp32" ? ""
                                : (", " + precisionPolicy.getValue()).c_str(),
      data.c_str(), seconds, run->firstLoss, run->lastLoss);
  if (run->skippedSteps)
    llvm::outs() << run->skippedSteps
                 << " step(s) skipped by dynamic loss scaling\n";
  SmallVector<tgc::Tensor> &arguments = run->arguments;
  unsigned numArgs = step.getNumArguments();

  if (trainSave.empty())
    return success();
  std::vector<tgc::safetensors::Entry> entries;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (tgc::tg::getArgumentRole(step, i) != tgc::tg::Role::Param)
      continue;
    tgc::npy::Array array = tgc::tensorToNpy(arguments[i]);
    entries.push_back({tgc::getArgumentName(step, i),
                       array.dtype == tgc::npy::DType::F64   ? "F64"
                       : array.dtype == tgc::npy::DType::F32 ? "F32"
                       : array.dtype == tgc::npy::DType::I64 ? "I64"
                       : array.dtype == tgc::npy::DType::I32 ? "I32"
                                                             : "BOOL",
                       array.shape, std::move(array.data)});
  }
  if (llvm::Error error = tgc::safetensors::write(trainSave, entries)) {
    llvm::errs() << "tgc: error: " << llvm::toString(std::move(error)) << "\n";
    return failure();
  }
  return success();
}

static LogicalResult runRun(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  if (runCompare != (runFiles.size() == 2) || runFiles.size() > 2) {
    llvm::errs() << "tgc: error: "
                 << (runCompare ? "--compare needs two files"
                                : "run takes one file (two with --compare)")
                 << "\n";
    return failure();
  }
  SmallVector<OwningOpRef<ModuleOp>> modules;
  SmallVector<FunctionOpInterface> functions;
  // parseSourceFile parses a SourceMgr's main file: one SourceMgr per file.
  // (The diagnostic handler shows lines of the others by reading the file.)
  SmallVector<std::unique_ptr<llvm::SourceMgr>> otherSourceMgrs;
  for (const std::string &file : runFiles) {
    llvm::SourceMgr *fileSourceMgr = &sourceMgr;
    if (!modules.empty())
      fileSourceMgr =
          otherSourceMgrs.emplace_back(std::make_unique<llvm::SourceMgr>())
              .get();
    modules.push_back(loadModule(context, *fileSourceMgr, file));
    if (!modules.back())
      return failure();
    functions.push_back(findEntry(*modules.back(), file));
    if (!functions.back())
      return failure();
  }
  FunctionOpInterface function = functions.front();
  FailureOr<SmallVector<tgc::Tensor>> arguments = prepareArguments(function);
  if (failed(arguments))
    return failure();

  tgc::InterpreterOptions options;
  options.precisionEmulation = runPrecisionEmulation == Toggle::On;
  options.f64 = runF64;
  tgc::Interpreter interpreter(options);
  auto start = std::chrono::steady_clock::now();
  FailureOr<SmallVector<tgc::Tensor>> results =
      interpreter.run(function, *arguments);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (failed(results))
    return failure();

  if (runCompare) {
    FunctionOpInterface other = functions.back();
    if (other.getArgumentTypes() != function.getArgumentTypes()) {
      llvm::errs() << "tgc: error: @" << function.getName() << " and @"
                   << other.getName() << " take different arguments\n";
      return failure();
    }
    FailureOr<SmallVector<tgc::Tensor>> otherResults =
        interpreter.run(other, *arguments);
    if (failed(otherResults))
      return failure();
    return compareResults(function, *results, *otherResults);
  }

  for (auto [i, tensor] : llvm::enumerate(*results))
    printResult(llvm::outs(), tgc::getResultName(function, i), tensor);
  if (runTime)
    llvm::outs() << llvm::format("time: %.6f s\n", seconds);
  if (!runOutputDir.empty() && failed(writeResults(function, *results)))
    return failure();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tgc " << TGC_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  cl::HideUnrelatedOptions(tgcCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tgc: a compiler for deep-learning training steps\n\n"
      "  tgc import MODEL.onnx -o OUT.mlir   import an ONNX model (+ "
      "OUT.safetensors)\n"
      "  tgc compile FILE.mlir -o OUT.mlir   verify, optimize and write a "
      "step\n"
      "  tgc report FILE.mlir [--json]       cost, step time and peak memory\n"
      "  tgc run FILE.mlir --random-inputs 0 run on the CPU interpreter\n"
      "  tgc gradcheck FILE.mlir             check gradients (f64)\n"
      "  tgc train FILE.mlir --steps 300     train on the CPU interpreter\n\n"
      "Every subcommand reads .mlir or .onnx files.\n"
      "Run 'tgc SUBCOMMAND --help' for a subcommand's options.\n");

  DialectRegistry registry;
  tgc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // The source line under each diagnostic says enough; the generic form of
  // the op would only repeat it.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  LogicalResult result = failure();
  if (compileCommand)
    result = runCompile(context, sourceMgr);
  else if (reportCommand)
    result = runReport(context, sourceMgr);
  else if (runCommand)
    result = runRun(context, sourceMgr);
  else if (gradcheckCommand)
    result = runGradcheck(context, sourceMgr);
  else if (trainCommand)
    result = runTrain(context, sourceMgr);
  else if (importCommand)
    result = runImport(context, sourceMgr);
  else {
    llvm::errs() << "tgc: error: expected a subcommand (import, compile, "
                    "report, run, gradcheck, train); "
                    "see 'tgc --help'\n";
    return 1;
  }
  return succeeded(result) ? 0 : 1;
}
