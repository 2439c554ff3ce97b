//===- Model.cpp - reading and writing the models tgc is given ------------===//

#include "tgc/Driver/Model.h"

#include "tgc/Pipeline/PostImportPipeline.h"
#include "tgc/Support/InputFile.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace tgc;

LogicalResult tgc::reportError(const llvm::Twine &message) {
  llvm::errs() << "tgc: error: " << message << "\n";
  return failure();
}

/// The importer's options from the user's flags.
static FailureOr<ONNXImportOptions>
getImportOptions(const ModelImportFlags &flags) {
  ONNXImportOptions options;
  for (StringRef spec : flags.inputShapes)
    if (llvm::Error error = parseInputShape(spec, options.inputShapes))
      return reportError(llvm::toString(std::move(error)));
  options.lossOutput = flags.lossOutput;
  if (!flags.addLoss.empty()) {
    auto [kind, logits] = StringRef(flags.addLoss).split(':');
    if (kind != "cross_entropy" || logits.empty())
      return reportError("--add-loss expects cross_entropy:LOGITS, got '" +
                         flags.addLoss + "'");
    if (!options.lossOutput.empty())
      return reportError("--loss-output and --add-loss exclude each other");
    options.crossEntropyLogits = logits.str();
  }
  return options;
}

FailureOr<LoadedModel> tgc::loadModel(MLIRContext &context,
                                      llvm::SourceMgr &sourceMgr,
                                      StringRef path,
                                      const ModelImportFlags &flags) {
  LoadedModel loaded;
  if (path.ends_with(".onnx")) {
    FailureOr<ONNXImportOptions> options = getImportOptions(flags);
    if (failed(options))
      return failure();
    FailureOr<ImportedModel> model = importONNXFile(context, path, *options);
    if (failed(model))
      return failure();
    PassManager pm(&context);
    buildPostImportPipeline(pm);
    if (failed(pm.run(*model->module)))
      return failure();
    loaded.module = std::move(model->module);
    loaded.parameters = std::move(model->parameters);
    return loaded;
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      readInputFile(path, kMaxInputFileBytes, /*allowStdin=*/true);
  if (!input)
    return reportError(llvm::toString(input.takeError()));
  sourceMgr.AddNewSourceBuffer(std::move(*input), llvm::SMLoc());
  // parseSourceFile verifies the module it returns.
  loaded.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!loaded.module)
    return failure();
  return loaded;
}

FunctionOpInterface tgc::findEntry(ModuleOp module, StringRef wanted,
                                   StringRef filename) {
  SmallVector<FunctionOpInterface> functions;
  for (auto function : module.getOps<FunctionOpInterface>())
    if (!function.isExternal())
      functions.push_back(function);
  if (wanted.empty() && functions.size() == 1)
    return functions.front();
  if (wanted.empty())
    wanted = "main";
  for (FunctionOpInterface function : functions)
    if (function.getName() == wanted)
      return function;
  std::string names;
  for (FunctionOpInterface function : functions)
    names += " " + function.getName().str();
  (void)reportError(filename + " has no function '" + wanted +
                    "' to run; functions:" +
                    (functions.empty() ? std::string(" none")
                                       : names + " (choose with --entry)"));
  return nullptr;
}

LogicalResult tgc::writeOutputFile(StringRef file,
                                   function_ref<void(raw_ostream &)> write) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(file, &errorMessage);
  if (!output)
    return reportError(errorMessage);
  write(output->os());
  output->os().flush();
  if (output->os().has_error()) {
    std::string message = output->os().error().message();
    output->os().clear_error();
    return reportError("cannot write '" + file + "': " + message);
  }
  output->keep();
  return success();
}

LogicalResult tgc::writeModel(ModuleOp module,
                              ArrayRef<ImportedParameter> parameters,
                              StringRef file) {
  std::string paramsFile;
  if (!parameters.empty()) {
    if (file == "-")
      return reportError("the parameters of an ONNX model are written next "
                         "to the module: give -o FILE.mlir");
    SmallString<128> path(file);
    llvm::sys::path::replace_extension(path, "safetensors");
    paramsFile = path.str().str();
  }
  if (failed(writeOutputFile(file, [&](raw_ostream &os) {
        module->print(os);
        os << "\n";
      })))
    return failure();
  if (paramsFile.empty())
    return success();
  if (llvm::Error error = writeParameters(paramsFile, parameters)) {
    llvm::sys::fs::remove(file);
    return reportError(llvm::toString(std::move(error)));
  }
  return success();
}
