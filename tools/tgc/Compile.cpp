//===- Compile.cpp - tgc compile: the compiled step, written --------------===//

#include "Flags.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Driver/Compile.h"
#include "tgc/Eval/TensorNpy.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Support/Safetensors.h"
#include "tgc/Target/CUDA/CudaEmitter.h"

#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace tgc;
namespace cl = llvm::cl;

static cl::opt<std::string> emit(
    "emit",
    cl::desc("What to write: mlir (the compiled step, default) or cuda (a "
             "CMake project in the directory -o names: step.cu, "
             "CMakeLists.txt, step.json, params.safetensors; build it with "
             "-DTGC_TARGET=host to run on the CPU)"),
    cl::value_desc("mlir|cuda"), cl::init("mlir"),
    cl::sub(cli::getCompileCommand()), cl::cat(cli::getCategory()));

static cl::opt<bool> evaluation(
    "evaluation",
    cl::desc("With --emit cuda: also compile the forward graph's evaluation "
             "(tg-evaluation: no dropout, the loss alone) into evaluate.cu, "
             "so that the generated train measures a validation loss "
             "(--val-data); on a pipelined mesh, whole on each stage's "
             "ranks"),
    cl::init(false), cl::sub(cli::getCompileCommand()),
    cl::cat(cli::getCategory()));

LogicalResult cli::runCompile(MLIRContext &context,
                              llvm::SourceMgr &sourceMgr) {
  FailureOr<std::optional<DeviceSpec>> device = getChosenDevice();
  if (failed(device))
    return failure();
  FailureOr<LoadedModel> model =
      loadModel(context, sourceMgr, getInputFile(), getImportFlags());
  if (failed(model))
    return failure();
  TrainingPipelineOptions options;
  if (failed(fillPipelineOptions(options, wantsTrainingStep())))
    return failure();
  CompileRequest request;
  request.device = *device;
  if (shouldDumpPipeline())
    request.pipelineDump = &llvm::errs();
  if (emit != "mlir" && emit != "cuda")
    return reportError("--emit is mlir or cuda, not '" + emit + "'");
  if (emit == "cuda" && !wantsTrainingStep())
    return reportError("--emit cuda generates a training step: give --train");
  if (evaluation && emit != "cuda")
    return reportError("--evaluation goes with --emit cuda (tgc train "
                       "--val-data evaluates on the interpreter)");
  // The evaluation is compiled from the forward graph, beside the step.
  OwningOpRef<ModuleOp> evaluationModule;
  if (evaluation) {
    evaluationModule = model->module->clone();
    if (failed(buildEvaluation(*evaluationModule, options, /*plan=*/true,
                               request)))
      return failure();
  }
  if (failed(compileModule(*model->module, options, request)))
    return failure();
  if (emit == "mlir")
    return writeModel(*model->module, model->parameters, getOutputFile(),
                      getInputFile());
  auto entry = dyn_cast_or_null<func::FuncOp>(static_cast<Operation *>(
      findEntry(*model->module, getEntryName(), getInputFile())));
  if (!entry)
    return failure();
  // The model's values, as `tgc train` starts from them: the trainer
  // loads them by default, the other parameters start from --seed.
  FailureOr<llvm::StringMap<Tensor>> imported =
      getImportedInitialValues(entry, model->parameters);
  if (failed(imported))
    return failure();
  std::vector<safetensors::Entry> parameters;
  for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i) {
    auto it = imported->find(getArgumentName(entry, i));
    if (tg::isModelValue(entry, i) && it != imported->end())
      parameters.push_back(
          safetensors::toEntry(it->first().str(), tensorToNpy(it->second)));
  }
  func::FuncOp evaluationEntry =
      evaluationModule
          ? evaluationModule->lookupSymbol<func::FuncOp>(entry.getName())
          : nullptr;
  return writeCudaProject(entry, getOutputFile(),
                          model->parameters.empty() ? nullptr : &parameters,
                          evaluationEntry);
}
