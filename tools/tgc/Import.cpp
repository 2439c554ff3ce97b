//===- Import.cpp - tgc import: an ONNX model as MLIR and safetensors -----===//

#include "Flags.h"

#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace tgc;

LogicalResult cli::runImport(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  if (!getInputFile().ends_with(".onnx"))
    return reportError("import reads an ONNX model (.onnx), got '" +
                       getInputFile() + "'");
  FailureOr<LoadedModel> model =
      loadModel(context, sourceMgr, getInputFile(), getImportFlags());
  if (failed(model))
    return failure();
  // The classification on stderr: the module may go to stdout.
  llvm::errs() << "tgc import: "
               << model->parameters.size() - model->states.size()
               << " parameters, ";
  if (!model->states.empty())
    llvm::errs() << model->states.size()
                 << " running statistics imported as state, ";
  llvm::errs() << model->buffers.size() << " buffers imported as constants";
  for (auto [i, buffer] : llvm::enumerate(model->buffers))
    llvm::errs() << (i ? ", " : ": ") << buffer.name;
  llvm::errs() << "\n";
  return writeModel(*model->module, model->parameters, getOutputFile(),
                    getInputFile());
}
