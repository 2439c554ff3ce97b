//===- Model.cpp - reading and writing the models tgc is given ------------===//

#include "tgc/Driver/Model.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Eval/TensorNpy.h"
#include "tgc/Interpreter/GlobalStep.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Pipeline/PostImportPipeline.h"
#include "tgc/Pipeline/RunPasses.h"
#include "tgc/Support/InputFile.h"
#include "tgc/Support/OutputFile.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>

using namespace mlir;
using namespace tgc;

LogicalResult tgc::reportError(const llvm::Twine &message) {
  llvm::errs() << "tgc: error: " << message << "\n";
  return failure();
}

llvm::Expected<npy::Array> tgc::readArrayFile(MLIRContext &context,
                                              StringRef path) {
  if (!path.ends_with(".pb"))
    return npy::readNpy(path);
  llvm::Expected<ONNXTensorFile> file = readONNXTensorFile(context, path);
  if (!file)
    return file.takeError();
  return std::move(file->value);
}

/// The importer's options from the user's flags.
static FailureOr<ONNXImportOptions>
getImportOptions(MLIRContext &context, const ModelImportFlags &flags) {
  ONNXImportOptions options;
  for (StringRef spec : flags.inputShapes)
    if (llvm::Error error = parseInputShape(spec, options.inputShapes))
      return reportError(llvm::toString(std::move(error)));
  for (StringRef spec : flags.inputValues) {
    auto [name, path] = spec.split('=');
    if (name.empty() || path.empty())
      return reportError("--input-value expects NAME=FILE, got '" + spec + "'");
    if (options.inputValues.count(name))
      return reportError("--input-value gives '" + name + "' twice");
    llvm::Expected<npy::Array> value = readArrayFile(context, path);
    if (!value)
      return reportError("--input-value " + spec + ": " +
                         llvm::toString(value.takeError()));
    options.inputValues[name] = std::move(*value);
  }
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
  if (!flags.parametersFile.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(flags.parametersFile);
    if (!buffer)
      return reportError("--parameters " + flags.parametersFile + ": " +
                         buffer.getError().message());
    // One name a line; blank lines and `#` comments are skipped.
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    options.parameterNames.emplace();
    for (StringRef line : lines) {
      line = line.trim();
      if (!line.empty() && !line.starts_with("#"))
        options.parameterNames->push_back(line.str());
    }
  }
  options.parameterGlobs = flags.parameterGlobs;
  options.bufferGlobs = flags.bufferGlobs;
  return options;
}

/// Every function's arguments and results are statically shaped tensors
/// within tg::kMaxTensorBytes, as tg ops' operands are: the figures and the
/// interpreter's allocations are computed from them. Checked before
/// anything is allocated for them.
static LogicalResult verifySignatureSizes(ModuleOp module) {
  for (auto function : module.getOps<FunctionOpInterface>()) {
    auto check = [&](ArrayRef<Type> types, StringRef what) {
      for (auto [i, type] : llvm::enumerate(types)) {
        auto tensor = dyn_cast<TensorType>(type);
        if (!tensor || tg::isWithinTensorSizeLimit(tensor))
          continue;
        function.emitError()
            << what << " #" << i << " of @" << function.getName()
            << " has type " << type
            << (!tensor.hasStaticShape() ? ", which is not statically shaped"
                : tensor.getNumElements() == 0
                    ? ", which spans more than 2^44 bytes (its zero "
                      "dimensions counted as one)"
                    : ", larger than 2^44 bytes")
            << "; tgc works on statically shaped tensors of at most 2^44 bytes";
        return failure();
      }
      return success();
    };
    if (failed(check(function.getArgumentTypes(), "argument")) ||
        failed(check(function.getResultTypes(), "result")))
      return failure();
  }
  return success();
}

FailureOr<LoadedModel> tgc::loadModel(MLIRContext &context,
                                      llvm::SourceMgr &sourceMgr,
                                      StringRef path,
                                      const ModelImportFlags &flags) {
  LoadedModel loaded;
  if (path.ends_with(".onnx")) {
    FailureOr<ONNXImportOptions> options = getImportOptions(context, flags);
    if (failed(options))
      return failure();
    FailureOr<ImportedModel> model = importONNXFile(context, path, *options);
    if (failed(model))
      return failure();
    PassManager pm(&context);
    buildPostImportPipeline(pm, flags.explainAttention);
    if (failed(runPasses(pm, *model->module)))
      return failure();
    loaded.module = std::move(model->module);
    loaded.parameters = std::move(model->parameters);
    loaded.buffers = std::move(model->buffers);
    loaded.states = std::move(model->states);
    return loaded;
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      readInputFile(path, kMaxInputFileBytes, /*allowStdin=*/true);
  if (!input)
    return reportError(llvm::toString(input.takeError()));
  if (llvm::Error error = checkBracketNesting((*input)->getMemBufferRef())) {
    llvm::errs() << llvm::toString(std::move(error)) << "\n";
    return failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(*input), llvm::SMLoc());
  // parseSourceFile verifies the module it returns.
  loaded.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!loaded.module || failed(verifySignatureSizes(*loaded.module)))
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
  if (llvm::Error error = writeOutput(file, write))
    return reportError(llvm::toString(std::move(error)));
  return success();
}

LogicalResult tgc::writeModel(ModuleOp module,
                              ArrayRef<ImportedParameter> parameters,
                              StringRef file, StringRef inputFile) {
  std::string paramsFile;
  if (!parameters.empty()) {
    if (file == "-")
      return reportError("the parameters of an ONNX model are written next "
                         "to the module: give -o FILE.mlir");
    SmallString<128> path(file);
    llvm::sys::path::replace_extension(path, "safetensors");
    paramsFile = path.str().str();
    if (paramsFile == file)
      return reportError("-o '" + file +
                         "' would hold the module and its parameters (written "
                         "next to it as .safetensors): give -o FILE.mlir");
  }
  std::vector<std::string> inputs{inputFile.str()};
  for (StringRef output : {StringRef(file), StringRef(paramsFile)})
    if (!output.empty())
      if (llvm::Error error = checkOutputIsNoInput(output, inputs, "-o"))
        return reportError(llvm::toString(std::move(error)));
  // Both files are written before either replaces what was there.
  std::vector<std::unique_ptr<OutputFile>> outputs;
  llvm::Expected<std::unique_ptr<OutputFile>> moduleFile =
      OutputFile::open(file);
  if (!moduleFile)
    return reportError(llvm::toString(moduleFile.takeError()));
  module->print((*moduleFile)->os());
  (*moduleFile)->os() << "\n";
  outputs.push_back(std::move(*moduleFile));
  if (!paramsFile.empty()) {
    llvm::Expected<std::unique_ptr<OutputFile>> params =
        OutputFile::open(paramsFile);
    if (!params)
      return reportError(llvm::toString(params.takeError()));
    if (llvm::Error error = writeParameters((*params)->os(), parameters))
      return reportError("'" + paramsFile +
                         "': " + llvm::toString(std::move(error)));
    outputs.push_back(std::move(*params));
  }
  if (llvm::Error error = commitAll(outputs))
    return reportError(llvm::toString(std::move(error)));
  return success();
}

FailureOr<llvm::StringMap<Tensor>>
tgc::getImportedInitialValues(FunctionOpInterface entry,
                              ArrayRef<ImportedParameter> parameters) {
  llvm::StringMap<Tensor> values;
  if (parameters.empty())
    return values;
  FailureOr<SmallVector<RankedTensorType>> globalTypes =
      getGlobalArgumentTypes(entry);
  if (failed(globalTypes))
    return failure();
  for (const ImportedParameter &parameter : parameters) {
    std::optional<RankedTensorType> type;
    for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i)
      if (tg::isModelValue(entry, i) &&
          getArgumentName(entry, i) == parameter.name)
        type = (*globalTypes)[i];
    if (!type)
      continue; // Not trained nor read by the step.
    // Non-finite values are refused here, as the model's, whatever flags
    // the tool has for its inputs.
    llvm::Expected<Tensor> value = tensorFromNpy(
        parameter.value, *type, parameter.name, /*allowNonFinite=*/true,
        /*allowSplitView=*/true);
    if (!value)
      return reportError(llvm::toString(value.takeError()));
    for (int64_t i = 0, e = value->getNumElements(); i < e; ++i)
      if (double element = value->getAsDouble(i); !std::isfinite(element)) {
        std::string typeText;
        llvm::raw_string_ostream(typeText) << type->getElementType();
        return reportError(llvm::formatv("parameter '{0}': element {1} is {2} "
                                         "as {3}; the model's values must be "
                                         "finite",
                                         parameter.name, i, element, typeText)
                               .str());
      }
    values[parameter.name] = std::move(*value);
  }
  return values;
}
