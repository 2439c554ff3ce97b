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
  return writeModel(*model->module, model->parameters, getOutputFile(),
                    getInputFile());
}
