//===- Run.cpp - a function's arguments and results on the interpreter ----===//

#include "tgc/Driver/Run.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Driver/Model.h"
#include "tgc/Eval/TensorNpy.h"
#include "tgc/Import/ONNX/Importer.h"
#include "tgc/Interpreter/GlobalStep.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/Interpreter.h"
#include "tgc/Support/AllClose.h"
#include "tgc/Support/OutputFile.h"
#include "tgc/Support/Safetensors.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace tgc;

LogicalResult tgc::readParameterFile(StringRef path,
                                     llvm::StringMap<npy::Array> &parameters) {
  auto entries = safetensors::read(path);
  if (!entries)
    return reportError(llvm::toString(entries.takeError()));
  for (safetensors::Entry &entry : *entries) {
    std::string name = entry.name;
    llvm::Expected<npy::Array> array = safetensors::toArray(std::move(entry));
    if (!array)
      return reportError(path + ": " + llvm::toString(array.takeError()));
    parameters[name] = std::move(*array);
  }
  return success();
}

FailureOr<SmallVector<std::optional<Tensor>>>
tgc::readGivenArguments(FunctionOpInterface function,
                        ArrayRef<std::string> inputs, bool allowNonFinite) {
  unsigned numArgs = function.getNumArguments();
  // The values are global: a partitioned function's arguments are split
  // over its mesh when it runs (GlobalStep.h).
  FailureOr<SmallVector<RankedTensorType>> types =
      getGlobalArgumentTypes(function);
  if (failed(types))
    return failure();
  llvm::StringMap<unsigned> indexOfName;
  for (unsigned i = 0; i < numArgs; ++i) {
    indexOfName[getArgumentName(function, i)] = i;
    indexOfName["arg" + std::to_string(i)] = i;
  }
  SmallVector<std::optional<Tensor>> values(numArgs);
  for (StringRef spec : inputs) {
    auto [name, path] = spec.split('=');
    if (path.empty())
      return reportError("--input expects NAME=PATH.npy, got '" + spec + "'");
    auto it = indexOfName.find(name);
    if (it == indexOfName.end()) {
      std::string names;
      for (unsigned i = 0; i < numArgs; ++i)
        names += " " + getArgumentName(function, i);
      return reportError("--input names '" + name +
                         "', which is no argument "
                         "of @" +
                         function.getName() + "; arguments:" + names);
    }
    unsigned index = it->second;
    if (values[index])
      return reportError("argument '" + name + "' is given twice by --input");
    llvm::Expected<npy::Array> array =
        readArrayFile(*function.getContext(), path);
    if (!array)
      return reportError("argument '" + name +
                         "': " + llvm::toString(array.takeError()));
    llvm::Expected<Tensor> tensor =
        tensorFromNpy(*array, (*types)[index], getArgumentName(function, index),
                      allowNonFinite);
    if (!tensor)
      return reportError(llvm::toString(tensor.takeError()));
    // One device's kernels report an id out of range at the op; a
    // partitioned step's vocabulary-parallel ops would mask it.
    if (isPartitioned(function) &&
        failed(checkIdsInRange(function, index, *tensor)))
      return failure();
    values[index] = std::move(*tensor);
  }
  return values;
}

FailureOr<SmallVector<Tensor>>
tgc::prepareArguments(FunctionOpInterface function,
                      const ArgumentSources &sources) {
  unsigned numArgs = function.getNumArguments();
  if (failed(Interpreter::checkCanRun(function)))
    return failure();
  // The interpreter holds ranked tensors only; check before any value is
  // read into one.
  for (unsigned i = 0; i < numArgs; ++i)
    if (!isa<RankedTensorType>(function.getArgumentTypes()[i])) {
      std::string type;
      llvm::raw_string_ostream(type) << function.getArgumentTypes()[i];
      return reportError("argument '" + getArgumentName(function, i) +
                         "' has type " + type +
                         ", which the interpreter cannot hold");
    }
  FailureOr<SmallVector<std::optional<Tensor>>> given =
      readGivenArguments(function, sources.inputs, sources.allowNonFinite);
  if (failed(given))
    return failure();
  SmallVector<std::optional<Tensor>> &values = *given;
  llvm::StringMap<unsigned> indexOfName;
  for (unsigned i = 0; i < numArgs; ++i)
    indexOfName[getArgumentName(function, i)] = i;
  if (sources.parameterFileNames)
    for (const auto &entry : *sources.parameterFileNames)
      if (!indexOfName.count(entry.getKey()))
        return reportError("--params holds '" + entry.getKey() +
                           "', which is no argument of @" + function.getName());
  FailureOr<SmallVector<RankedTensorType>> types =
      getGlobalArgumentTypes(function);
  if (failed(types))
    return failure();
  SmallVector<Tensor> arguments;
  for (unsigned i = 0; i < numArgs; ++i) {
    std::string name = getArgumentName(function, i);
    if (!values[i] && sources.parameterFileNames &&
        !sources.allowMissingParameters &&
        tg::getArgumentRole(function, i) == tg::Role::Param &&
        !sources.parameterFileNames->contains(name) &&
        !sources.parameters.count(name))
      return reportError("parameter '" + name +
                         "' is not in the --params file; give it with "
                         "--input, or --random-missing-params to draw it");
    auto known = sources.parameters.find(name);
    if (!values[i] && tg::isModelValue(function, i) &&
        known != sources.parameters.end()) {
      llvm::Expected<Tensor> tensor = tensorFromNpy(
          known->second, (*types)[i], name, /*allowNonFinite=*/true,
          /*allowSplitView=*/true);
      if (!tensor)
        return reportError(llvm::toString(tensor.takeError()));
      values[i] = std::move(*tensor);
    }
    if (values[i])
      arguments.push_back(std::move(*values[i]));
    else if (sources.randomSeed)
      arguments.push_back(
          makeRandomArgument(function, i, *sources.randomSeed, (*types)[i]));
    else if (function.getArgument(i).use_empty())
      // Read by nothing (an evaluation's dropout seed): any value.
      arguments.push_back(makeRandomArgument(function, i, 0, (*types)[i]));
    else
      return reportError("argument '" + name + "' has no value: give --input " +
                         name + "=FILE.npy or --random-inputs SEED");
  }
  return arguments;
}

void tgc::printResult(raw_ostream &os, StringRef name, const Tensor &tensor,
                      bool printValues) {
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
  if (!printValues)
    return;
  os << "  [";
  for (int64_t i = 0; i < count; ++i) {
    if (i)
      os << ", ";
    if (tensor.isIntStorage() && tensor.getElementType().isUnsignedInteger(64))
      os << static_cast<uint64_t>(tensor.ints()[i]); // ui64's bits
    else if (tensor.isIntStorage())
      os << tensor.ints()[i];
    else
      os << llvm::format("%.9g", tensor.getAsDouble(i));
  }
  os << "]\n";
}

LogicalResult tgc::writeResults(FunctionOpInterface function,
                                ArrayRef<Tensor> results, StringRef directory) {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return reportError("cannot create output directory '" + directory +
                       "': " + ec.message());
  // Every result is written to a temporary file first; the files replace
  // what the directory held only once all are written, so a failure leaves
  // the directory as it was.
  std::vector<std::unique_ptr<OutputFile>> files;
  llvm::StringSet<> names;
  for (auto [i, tensor] : llvm::enumerate(results)) {
    std::string name = getResultName(function, i);
    // A name is a file name: path separators would escape the directory.
    std::replace(name.begin(), name.end(), '/', '_');
    if (!names.insert(name).second)
      return reportError("two results are named '" + name + "'");
    SmallString<128> path(directory);
    llvm::sys::path::append(path, name + ".npy");
    llvm::Expected<std::unique_ptr<OutputFile>> file = OutputFile::open(path);
    if (!file)
      return reportError(llvm::toString(file.takeError()));
    if (llvm::Error error =
            npy::writeNpy((*file)->os(), tensorToNpy(tensor), path))
      return reportError(llvm::toString(std::move(error)));
    files.push_back(std::move(*file));
  }
  if (llvm::Error error = commitAll(files))
    return reportError(llvm::toString(std::move(error)));
  return success();
}

LogicalResult tgc::compareResults(FunctionOpInterface function,
                                  ArrayRef<Tensor> actual,
                                  ArrayRef<Tensor> expected, double rtol,
                                  double atol) {
  if (actual.size() != expected.size())
    return reportError("the two functions return " + Twine(actual.size()) +
                       " and " + Twine(expected.size()) + " results");
  bool allClose = true;
  for (auto [i, a, b] : llvm::enumerate(actual, expected)) {
    std::string name = getResultName(function, i);
    if (a.getType() != b.getType()) {
      std::string types;
      llvm::raw_string_ostream(types) << a.getType() << " and " << b.getType();
      return reportError("result '" + name + "' has type " + types);
    }
    CloseComparison comparison = compareClose(
        a.getNumElements(), [&](int64_t j) { return a.getAsDouble(j); },
        [&](int64_t j) { return b.getAsDouble(j); }, rtol, atol);
    llvm::outs() << name << ": "
                 << llvm::format("max abs error %.3g, max rel error %.3g",
                                 comparison.maxAbsError, comparison.maxRelError)
                 << (comparison.mismatches
                         ? " FAIL (" + std::to_string(comparison.mismatches) +
                               " elements beyond tolerance)"
                         : std::string(" ok"))
                 << "\n";
    allClose &= comparison.allClose();
  }
  if (!allClose)
    llvm::errs() << "tgc: error: results differ beyond "
                 << llvm::format("rtol=%g atol=%g", rtol, atol) << "\n";
  return success(allClose);
}
