//===- tgc.cpp - the tgc driver
//--------------------------------------------===//
//
// `tgc compile` and `tgc report`: the user's way in. Each subcommand parses
// and verifies its input with file:line:col diagnostics, returns 1 on any
// error, and never leaves a partial output file behind.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/OpCostSummary.h"
#include "tgc/InitAll.h"
#include "tgc/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <nlohmann/json.hpp>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory tgcCategory("tgc options");

static cl::SubCommand
    compileCommand("compile",
                   "Parse, verify and optimize a training step, and write it");
static cl::SubCommand
    reportCommand("report",
                  "Print the operations, FLOPs and bytes of every function");

static cl::opt<std::string> inputFilename(
    cl::Positional, cl::Required, cl::desc("<input .mlir, or - for stdin>"),
    cl::sub(compileCommand), cl::sub(reportCommand), cl::cat(tgcCategory));

static cl::opt<std::string> outputFilename(
    "o", cl::desc("Output file for the optimized module (default: stdout)"),
    cl::value_desc("file"), cl::init("-"), cl::sub(compileCommand),
    cl::cat(tgcCategory));

static cl::opt<bool> noCanonicalize(
    "no-canonicalize",
    cl::desc("Skip canonicalization and CSE (verify and print only)"),
    cl::sub(compileCommand), cl::cat(tgcCategory));

static cl::opt<bool> reportJson("json", cl::desc("Print the report as JSON"),
                                cl::sub(reportCommand), cl::cat(tgcCategory));

/// Parses and verifies the input; diagnostics go to stderr with locations.
static OwningOpRef<ModuleOp> loadModule(MLIRContext &context,
                                        llvm::SourceMgr &sourceMgr) {
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "tgc: error: " << errorMessage << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  // parseSourceFile verifies the module it returns.
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

static LogicalResult runCompile(MLIRContext &context,
                                llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr);
  if (!module)
    return failure();
  PassManager pm(&context);
  tgc::TrainingPipelineOptions options;
  options.canonicalize = !noCanonicalize;
  tgc::buildTrainingPipeline(pm, options);
  if (failed(pm.run(*module)))
    return failure();

  // The output file is removed again unless everything succeeded.
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "tgc: error: " << errorMessage << "\n";
    return failure();
  }
  module->print(output->os());
  output->os() << "\n";
  output->os().flush();
  if (output->os().has_error()) {
    llvm::errs() << "tgc: error: cannot write '" << outputFilename
                 << "': " << output->os().error().message() << "\n";
    output->os().clear_error();
    return failure();
  }
  output->keep();
  return success();
}

static LogicalResult runReport(MLIRContext &context,
                               llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr);
  if (!module)
    return failure();
  std::vector<tgc::FunctionCostSummary> summaries =
      tgc::summarizeModuleCosts(*module);
  if (reportJson)
    llvm::outs() << tgc::costSummariesToJson(summaries).dump(2) << "\n";
  else
    tgc::printCostTables(llvm::outs(), summaries);
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
      "  tgc compile FILE.mlir -o OUT.mlir   verify, optimize and write a "
      "step\n"
      "  tgc report FILE.mlir [--json]       FLOPs and bytes of every op\n\n"
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
  else {
    llvm::errs() << "tgc: error: expected a subcommand (compile, report); "
                    "see 'tgc --help'\n";
    return 1;
  }
  return succeeded(result) ? 0 : 1;
}
