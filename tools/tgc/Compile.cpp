//===- Compile.cpp - tgc compile: the compiled step, written --------------===//

#include "Flags.h"

#include "tgc/Driver/Compile.h"

#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace tgc;

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
  fillPipelineOptions(options, wantsTrainingStep());
  if (llvm::Error error = validatePipelineOptions(options))
    return reportError(llvm::toString(std::move(error)));
  CompileRequest request;
  request.device = *device;
  if (shouldDumpPipeline())
    request.pipelineDump = &llvm::errs();
  if (failed(compileModule(*model->module, options, request)))
    return failure();
  return writeModel(*model->module, model->parameters, getOutputFile(),
                    getInputFile());
}
