//===- Report.cpp - tgc report: the figures of the compiled step ----------===//
//
// A model is compiled exactly as `tgc compile` with the same flags would
// compile it, then reported; a compiled step is reported as it is.
//
//===----------------------------------------------------------------------===//

#include "Flags.h"

#include "tgc/Driver/Compile.h"
#include "tgc/Driver/Report.h"

#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace tgc;
namespace cl = llvm::cl;

static cl::opt<bool> json("json", cl::desc("Print the report as JSON"),
                          cl::sub(cli::getReportCommand()),
                          cl::cat(cli::getCategory()));
static cl::opt<std::string> memoryTimeline(
    "memory-timeline",
    cl::desc("Draw live memory over the op sequence, by kind, as an SVG"),
    cl::value_desc("FILE.svg"), cl::sub(cli::getReportCommand()),
    cl::cat(cli::getCategory()));
static constexpr unsigned kMaxFrontierPoints = 1024;
static cl::opt<unsigned> recomputeFrontier(
    "recompute-frontier",
    cl::desc("Print the best recompute extra time for peaks from the "
             "smallest feasible to the peak without recomputation, of the "
             "training step before planning (N+1 points; 0: off)"),
    cl::value_desc("N"), cl::init(0), cl::sub(cli::getReportCommand()),
    cl::cat(cli::getCategory()));
static cl::opt<std::string> recomputeFrontierSvg(
    "recompute-frontier-svg",
    cl::desc("With --recompute-frontier: also draw the frontier (extra time "
             "against simulated peak) as an SVG file"),
    cl::value_desc("FILE"), cl::sub(cli::getReportCommand()),
    cl::cat(cli::getCategory()));

LogicalResult cli::runReport(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  // Each point of the frontier is a recompute plan solved and simulated.
  if (recomputeFrontier > kMaxFrontierPoints)
    return reportError("--recompute-frontier must be in [0, " +
                       llvm::Twine(kMaxFrontierPoints) + "], got " +
                       llvm::Twine(recomputeFrontier.getValue()));
  if (!recomputeFrontierSvg.empty() && recomputeFrontier == 0)
    return reportError("--recompute-frontier-svg draws the frontier of "
                       "--recompute-frontier N; give N too");
  FailureOr<std::optional<DeviceSpec>> device = getChosenDevice();
  if (failed(device))
    return failure();
  FailureOr<LoadedModel> model =
      loadModel(context, sourceMgr, getInputFile(), getImportFlags());
  if (failed(model))
    return failure();
  ModuleOp module = *model->module;
  auto entry = dyn_cast_or_null<func::FuncOp>(static_cast<Operation *>(
      findEntry(module, getEntryName(), getInputFile())));
  if (!entry)
    return failure();

  TrainingPipelineOptions options;
  if (failed(fillPipelineOptions(options, wantsTrainingStep())))
    return failure();
  CompileRequest compile;
  compile.device = *device;
  if (shouldDumpPipeline())
    compile.pipelineDump = &llvm::errs();
  if (recomputeFrontier > 0) {
    if (failed(buildTrainingStep(module, options, compile)))
      return failure();
    return reportRecomputeFrontier(entry, recomputeFrontier,
                                   recomputeFrontierSvg, llvm::outs());
  }

  ReportRequest report;
  report.json = json;
  report.memoryTimelineFile = memoryTimeline;
  if (isCompiledStep(module)) {
    if (anyPipelineFlagGiven())
      return reportError(getInputFile() +
                         " is a compiled step, reported as it is: pipeline "
                         "options do not apply (give the model instead)");
    report.device = *device;
    return reportStep(module, entry, report, llvm::outs());
  }
  // LoRA against full fine-tuning: the same model's step with every
  // parameter trained (the training-step stage is all that decides it).
  if (options.lora > 0 && options.differentiates()) {
    OwningOpRef<ModuleOp> full = module.clone();
    TrainingPipelineOptions fullOptions;
    fullOptions.copyOptionValuesFrom(options);
    fullOptions.lora = 0;
    fullOptions.freeze.clear();
    fullOptions.trainable.clear();
    CompileRequest fullCompile;
    fullCompile.device = *device;
    if (failed(buildTrainingStep(*full, fullOptions, fullCompile)))
      return failure();
    report.fullFineTuning = TrainingMemory::compute(
        full->lookupSymbol<func::FuncOp>(entry.getName()));
  }
  CompileObservations observations;
  compile.observations = &observations;
  std::string entryName = entry.getName().str();
  if (failed(compileModule(module, options, compile)))
    return failure();
  // Compiling replaces the module's functions with the planned ones.
  entry = module.lookupSymbol<func::FuncOp>(entryName);
  auto unfused = observations.unfused.find(entry.getName());
  if (unfused != observations.unfused.end())
    report.unfused = unfused->second;
  return reportStep(module, entry, report, llvm::outs());
}
