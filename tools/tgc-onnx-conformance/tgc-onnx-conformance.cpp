//===- tgc-onnx-conformance.cpp - ONNX backend test cases on tgc ----------===//
//
// Runs ONNX backend test cases (a directory with model.onnx and
// test_data_set_*/{input,output}_*.pb) through the importer and the
// interpreter, compares the outputs with the suite's tolerances, prints one
// line per case and a table per suite, and checks a list of cases expected
// to pass.
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Eval/TensorNpy.h"
#include "tgc/Import/ONNX/Importer.h"
#include "tgc/InitAll.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/Interpreter.h"
#include "tgc/Pipeline/PostImportPipeline.h"
#include "tgc/Support/AllClose.h"
#include "tgc/Support/InputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/LineIterator.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;

static cl::list<std::string>
    suites(cl::Positional, cl::OneOrMore,
           cl::desc("<suite directory (e.g. .../data/node)>..."));
static cl::opt<std::string> expectedPass(
    "expected-pass",
    cl::desc("Fail unless every case listed in FILE (suite/case per line) "
             "passes"),
    cl::value_desc("FILE"));
static cl::opt<std::string>
    writePassing("write-passing", cl::desc("Write the cases that pass to FILE"),
                 cl::value_desc("FILE"));
static cl::opt<double>
    relativeTolerance("rtol",
                      cl::desc("Relative tolerance (default 1e-3, as "
                               "ONNX's backend tests; at least 2^-6 for bf16 "
                               "outputs, as its runner)"),
                      cl::init(1e-3));
static cl::opt<double>
    absoluteTolerance("atol", cl::desc("Absolute tolerance (default 1e-7)"),
                      cl::init(1e-7));
static cl::opt<bool> quiet("quiet",
                           cl::desc("Print only failures and the tables"));

namespace {
enum class Outcome { Pass, Fail, Unsupported };

struct CaseResult {
  Outcome outcome;
  std::string detail;
};

struct Tally {
  unsigned passed = 0, failed = 0, unsupported = 0;
};
} // namespace

/// Whether an import error says the model is outside what tg supports
/// (an op, an element type, a form of an op), rather than a wrong import.
static bool isUnsupported(StringRef message) {
  return message.contains("not supported") ||
         message.contains("which tg cannot hold") ||
         message.contains("has no tg equivalent") ||
         message.contains("must be computable at import");
}

static std::vector<std::string> listSorted(StringRef directory,
                                           StringRef prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(prefix))
      names.push_back(it->path());
  }
  // input_10.pb after input_9.pb.
  llvm::sort(names, [](const std::string &a, const std::string &b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return names;
}

static CaseResult runCase(StringRef directory) {
  MLIRContext context;
  DialectRegistry registry;
  tgc::registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && diagnostics.empty())
      diagnostics = diag.str();
    return success();
  });

  SmallString<256> modelPath(directory);
  llvm::sys::path::append(modelPath, "model.onnx");
  std::vector<std::string> dataSets = listSorted(directory, "test_data_set_");
  if (dataSets.empty())
    return {Outcome::Fail, "no test_data_set_*"};

  // Graph inputs in order, to bind their shapes from the first data set.
  onnx::ModelProto model;
  {
    auto file = tgc::readInputFile(modelPath, INT32_MAX);
    if (!file) {
      llvm::consumeError(file.takeError());
      return {Outcome::Fail, "cannot read model.onnx"};
    }
    if (!model.ParseFromArray((*file)->getBufferStart(),
                              (*file)->getBufferSize()))
      return {Outcome::Fail, "cannot read model.onnx"};
  }
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &t : model.graph().initializer())
    initializers.insert(t.name());
  std::vector<std::string> inputNames;
  // The bfloat16 inputs: their files may hold the bits as UINT16 (ONNX's
  // test data before 1.13).
  llvm::StringSet<> bfloat16Inputs;
  // The static shapes the model declares for its inputs.
  llvm::StringMap<std::vector<int64_t>> declaredShapes;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (initializers.contains(input.name()))
      continue;
    // A sequence or optional input: its data file is no TensorProto, and
    // the import refuses the input.
    if (input.type().has_sequence_type() || input.type().has_optional_type() ||
        input.type().has_map_type())
      return {Outcome::Unsupported,
              "graph input '" + input.name() +
                  "' is not a tensor; tg takes tensors only"};
    inputNames.push_back(input.name());
    if (input.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
      bfloat16Inputs.insert(input.name());
    if (input.type().tensor_type().has_shape()) {
      std::vector<int64_t> dims;
      for (const auto &dim : input.type().tensor_type().shape().dim())
        dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      if (llvm::all_of(dims, [](int64_t d) { return d >= 0; }))
        declaredShapes[input.name()] = std::move(dims);
    }
  }
  auto isBFloat16Input = [&](size_t index) {
    return index < inputNames.size() &&
           bfloat16Inputs.contains(inputNames[index]);
  };

  tgc::ONNXImportOptions options;
  std::vector<std::string> firstInputs = listSorted(dataSets[0], "input_");
  for (auto [i, path] : llvm::enumerate(firstInputs)) {
    llvm::Expected<tgc::ONNXTensorFile> tensor =
        tgc::readONNXTensorFile(context, path, isBFloat16Input(i));
    if (!tensor) {
      std::string message = llvm::toString(tensor.takeError());
      return {isUnsupported(message) ? Outcome::Unsupported : Outcome::Fail,
              message};
    }
    if (i >= inputNames.size())
      continue;
    // Data that contradicts the model (onnx 1.12's CastLike cases give
    // 'like' one element where the model declares 3x4): the test's fault.
    if (auto declared = declaredShapes.find(inputNames[i]);
        declared != declaredShapes.end() &&
        declared->second != tensor->value.shape)
      return {Outcome::Unsupported,
              "the test data's input_" + std::to_string(i) +
                  " has another shape than the model declares for '" +
                  inputNames[i] + "'"};
    options.inputShapes[inputNames[i]] = tensor->value.shape;
  }

  // A graph input tg needs at import (a shape operand passed as data) is
  // fixed to its value in the first data set, as `--input-value` does; the
  // error's hint names it.
  llvm::StringSet<> fixed;
  FailureOr<tgc::ImportedModel> imported =
      tgc::importONNXFile(context, modelPath, options);
  while (failed(imported) && fixed.size() < inputNames.size()) {
    StringRef hint = "--input-value ";
    size_t at = StringRef(diagnostics).find(hint);
    if (at == StringRef::npos)
      break;
    StringRef name = StringRef(diagnostics)
                         .drop_front(at + hint.size())
                         .split("=FILE")
                         .first;
    auto index = llvm::find(inputNames, name) - inputNames.begin();
    if (size_t(index) >= inputNames.size() ||
        size_t(index) >= firstInputs.size() || !fixed.insert(name).second)
      break;
    llvm::Expected<tgc::ONNXTensorFile> value = tgc::readONNXTensorFile(
        context, firstInputs[index], isBFloat16Input(index));
    if (!value)
      return {Outcome::Fail, llvm::toString(value.takeError())};
    options.inputValues[name] = std::move(value->value);
    diagnostics.clear();
    imported = tgc::importONNXFile(context, modelPath, options);
  }
  if (failed(imported))
    return {isUnsupported(diagnostics) ? Outcome::Unsupported : Outcome::Fail,
            "import: " + diagnostics};
  PassManager pm(&context);
  tgc::buildPostImportPipeline(pm);
  if (failed(pm.run(*imported->module)))
    return {Outcome::Fail, "post-import pipeline: " + diagnostics};
  auto function = *imported->module->getOps<func::FuncOp>().begin();

  tgc::Interpreter interpreter;
  double worst = 0.0;
  bool random = false;
  for (const std::string &dataSet : dataSets) {
    std::vector<std::string> inputs = listSorted(dataSet, "input_");
    std::vector<std::string> outputs = listSorted(dataSet, "output_");
    SmallVector<tgc::Tensor> arguments;
    size_t nextInput = 0, nextParam = 0;
    // The fixed inputs are constants of the first data set's values: the
    // others must hold the same.
    for (auto [index, inputName] : llvm::enumerate(inputNames)) {
      if (!fixed.contains(inputName) || dataSet == dataSets.front())
        continue;
      if (index >= inputs.size())
        return {Outcome::Fail, "missing input_" + std::to_string(index)};
      llvm::Expected<tgc::ONNXTensorFile> value = tgc::readONNXTensorFile(
          context, inputs[index], isBFloat16Input(index));
      if (!value)
        return {Outcome::Fail, llvm::toString(value.takeError())};
      const tgc::npy::Array &first = options.inputValues[inputName];
      if (value->value.shape != first.shape || value->value.data != first.data)
        return {Outcome::Unsupported,
                "input '" + inputName +
                    "', needed at import, differs between data sets"};
    }
    for (unsigned i = 0; i < function.getNumArguments(); ++i) {
      auto type = cast<RankedTensorType>(function.getArgumentTypes()[i]);
      std::string name = tgc::getArgumentName(function, i);
      while (nextInput < inputNames.size() &&
             fixed.contains(inputNames[nextInput]))
        ++nextInput;
      llvm::Expected<tgc::Tensor> tensor =
          llvm::createStringError("no value for argument '" + name + "'");
      if (nextInput < inputNames.size() && name == inputNames[nextInput]) {
        if (nextInput >= inputs.size())
          return {Outcome::Fail, "missing input_" + std::to_string(nextInput)};
        llvm::consumeError(tensor.takeError());
        llvm::Expected<tgc::ONNXTensorFile> file = tgc::readONNXTensorFile(
            context, inputs[nextInput], isBFloat16Input(nextInput));
        ++nextInput;
        tensor = file ? tgc::tensorFromNpy(file->value, type, name, true)
                      : llvm::Expected<tgc::Tensor>(file.takeError());
      } else if (tgc::tg::getArgumentRole(function, i) ==
                 tgc::tg::Role::Hyper) {
        // A random seed (training-mode dropout): 0.
        llvm::consumeError(tensor.takeError());
        tensor = tgc::Tensor(type, tgc::Tensor::Storage::Int);
        random = true;
      } else if (nextParam < imported->parameters.size()) {
        llvm::consumeError(tensor.takeError());
        tensor = tgc::tensorFromNpy(imported->parameters[nextParam++].value,
                                    type, name, true);
      }
      if (!tensor)
        return {Outcome::Fail, llvm::toString(tensor.takeError())};
      arguments.push_back(std::move(*tensor));
    }
    FailureOr<SmallVector<tgc::Tensor>> results =
        interpreter.run(function, arguments);
    if (failed(results))
      return {Outcome::Fail, "run: " + diagnostics};
    if (results->size() != outputs.size())
      return {Outcome::Fail, "expected " + std::to_string(outputs.size()) +
                                 " outputs, got " +
                                 std::to_string(results->size())};
    for (auto [result, path] : llvm::zip(*results, outputs)) {
      llvm::Expected<tgc::ONNXTensorFile> file = tgc::readONNXTensorFile(
          context, path, result.getElementType().isBF16());
      if (!file)
        return {Outcome::Fail, llvm::toString(file.takeError())};
      if (file->elementType != result.getElementType() ||
          ArrayRef<int64_t>(file->value.shape) != result.getShape()) {
        std::string message;
        llvm::raw_string_ostream os(message);
        os << "output " << llvm::sys::path::filename(path) << " is a "
           << result.getType() << ", expected " << file->elementType
           << " of shape [";
        llvm::interleave(file->value.shape, os, "x");
        os << "]";
        return {Outcome::Fail, message};
      }
      llvm::Expected<tgc::Tensor> expected = tgc::tensorFromNpy(
          file->value, result.getType(), "expected", /*allowNonFinite=*/true);
      if (!expected)
        return {Outcome::Fail, llvm::toString(expected.takeError())};
      // bf16 outputs within two of its ulps, as ONNX's own backend runner
      // compares them (onnx.backend.test.runner): max(rtol, 2^-6).
      double rtol = relativeTolerance;
      if (result.getElementType().isBF16())
        rtol = std::max(rtol, 0x1p-6);
      tgc::CloseComparison comparison = tgc::compareClose(
          result.getNumElements(),
          [&](int64_t i) { return result.getAsDouble(i); },
          [&](int64_t i) { return expected->getAsDouble(i); }, rtol,
          absoluteTolerance);
      worst = std::max(worst, comparison.maxErrorBeyond);
    }
  }
  if (worst > 0.0 && random)
    return {
        Outcome::Unsupported,
        "the outputs are random (tgc's dropout masks and random numbers come "
        "from its Philox stream, not from the reference's generator)"};
  if (worst > 0.0) {
    std::string message;
    llvm::raw_string_ostream(message)
        << llvm::format("max error %.3g beyond rtol=%g atol=%g", worst,
                        double(relativeTolerance), double(absoluteTolerance));
    return {Outcome::Fail, message};
  }
  return {Outcome::Pass, ""};
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tgc-onnx-conformance: ONNX backend test cases through the tgc "
      "importer and interpreter\n");

  std::map<std::string, Tally> tallies;
  std::vector<std::string> passing;
  llvm::StringMap<CaseResult> results;
  for (const std::string &suite : suites) {
    std::string suiteName = llvm::sys::path::filename(suite).str();
    Tally &tally = tallies[suiteName];
    for (const std::string &directory : listSorted(suite, "")) {
      SmallString<256> model(directory);
      llvm::sys::path::append(model, "model.onnx");
      if (!llvm::sys::fs::exists(model))
        continue;
      std::string name =
          suiteName + "/" + llvm::sys::path::filename(directory).str();
      CaseResult result = runCase(directory);
      switch (result.outcome) {
      case Outcome::Pass:
        ++tally.passed;
        passing.push_back(name);
        if (!quiet)
          llvm::outs() << "PASS " << name << "\n";
        break;
      case Outcome::Fail:
        ++tally.failed;
        llvm::outs() << "FAIL " << name << ": " << result.detail << "\n";
        break;
      case Outcome::Unsupported:
        ++tally.unsupported;
        if (!quiet)
          llvm::outs() << "UNSUPPORTED " << name << ": " << result.detail
                       << "\n";
        break;
      }
      results[name] = std::move(result);
    }
  }

  Tally total;
  llvm::outs() << llvm::format("\n%-20s %8s %8s %12s %8s\n", "suite", "passed",
                               "failed", "unsupported", "total");
  for (const auto &[suite, tally] : tallies) {
    llvm::outs() << llvm::format(
        "%-20s %8u %8u %12u %8u\n", suite.c_str(), tally.passed, tally.failed,
        tally.unsupported, tally.passed + tally.failed + tally.unsupported);
    total.passed += tally.passed;
    total.failed += tally.failed;
    total.unsupported += tally.unsupported;
  }
  llvm::outs() << total.passed << " passed, " << total.failed << " failed\n"
               << total.unsupported << " unsupported\n";

  if (!writePassing.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(writePassing, ec);
    if (ec) {
      llvm::errs() << "tgc-onnx-conformance: error: cannot write '"
                   << writePassing << "': " << ec.message() << "\n";
      return 1;
    }
    for (const std::string &name : passing)
      os << name << "\n";
  }
  if (expectedPass.empty())
    return 0;
  auto list = tgc::readInputFile(expectedPass);
  if (!list) {
    llvm::errs() << "tgc-onnx-conformance: error: "
                 << llvm::toString(list.takeError()) << "\n";
    return 1;
  }
  unsigned regressions = 0;
  for (llvm::line_iterator line(**list, /*SkipBlanks=*/true, '#');
       !line.is_at_end(); ++line) {
    StringRef name = line->trim();
    auto it = results.find(name);
    if (it != results.end() && it->second.outcome == Outcome::Pass)
      continue;
    ++regressions;
    llvm::errs() << "tgc-onnx-conformance: regression: " << name
                 << (it == results.end() ? " was not run"
                                         : ": " + it->second.detail)
                 << "\n";
  }
  if (regressions) {
    llvm::errs() << "tgc-onnx-conformance: error: " << regressions
                 << " expected-pass cases do not pass\n";
    return 1;
  }
  return 0;
}
