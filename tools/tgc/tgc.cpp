//===- tgc.cpp - the tgc driver -------------------------------------------===//
//
// The user's way in: parses the command line once and calls the subcommand
// (one file each), which calls library entry points (lib/Driver). Each
// subcommand reports errors with locations, returns 1 on any error, and
// never leaves a partial output file behind.
//
//===----------------------------------------------------------------------===//

#include "Flags.h"

#include "tgc/InitAll.h"
#include "tgc/Support/Diagnostics.h"
#include "tgc/Support/OutputFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace tgc;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  tgc::reportFileSizeLimitAsError();
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tgc " << TGC_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  llvm::cl::HideUnrelatedOptions(cli::getCategory());
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "tgc: a compiler for deep-learning training steps\n\n"
      "  tgc import MODEL.onnx -o OUT.mlir   import an ONNX model (+ "
      "OUT.safetensors)\n"
      "  tgc compile FILE.mlir -o OUT.mlir   build, optimize and plan a "
      "step, and write it\n"
      "  tgc report FILE.mlir [--json]       cost, step time and peak memory "
      "of that step\n"
      "  tgc run FILE.mlir --random-inputs 0 run on the CPU interpreter\n"
      "  tgc gradcheck FILE.mlir             check gradients (f64)\n"
      "  tgc train FILE.mlir --steps 300     train on the CPU interpreter\n"
      "  tgc plan FILE.mlir --devices 64     choose mesh (dp x pp x tp), ZeRO, "
      "micro-batches,\n                                      pipeline schedule "
      "and recompute for N GPUs\n\n"
      "Every subcommand reads .mlir or .onnx files; compile, report and "
      "train\nshare the pipeline's options (docs/tools.md).\n"
      "Run 'tgc SUBCOMMAND --help' for a subcommand's options.\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // The source line under each diagnostic says enough; the generic form of
  // the op would only repeat it. Long source lines and notes are cut.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  ConciseDiagnosticHandler diagnostics(sourceMgr, &context);

  using Subcommand = LogicalResult (*)(MLIRContext &, llvm::SourceMgr &);
  std::pair<llvm::cl::SubCommand &, Subcommand> subcommands[] = {
      {cli::getCompileCommand(), cli::runCompile},
      {cli::getReportCommand(), cli::runReport},
      {cli::getRunCommand(), cli::runRun},
      {cli::getGradcheckCommand(), cli::runGradcheck},
      {cli::getTrainCommand(), cli::runTrain},
      {cli::getImportCommand(), cli::runImport},
      {cli::getPlanCommand(), cli::runPlan}};
  for (auto &[command, run] : subcommands)
    if (command)
      return succeeded(run(context, sourceMgr)) ? 0 : 1;
  llvm::errs() << "tgc: error: expected a subcommand (import, compile, "
                  "report, run, gradcheck, train, plan); see 'tgc --help'\n";
  return 1;
}
