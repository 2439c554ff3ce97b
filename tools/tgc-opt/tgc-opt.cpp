//===- tgc-opt.cpp - mlir-opt with every tgc dialect and pass -------------===//

#include "tgc/InitAll.h"
#include "tgc/Support/Diagnostics.h"
#include "tgc/Support/InputFile.h"
#include "tgc/Support/OutputFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  tgc::reportFileSizeLimitAsError();
  mlir::DialectRegistry registry;
  tgc::registerAllDialects(registry);
  tgc::registerAllPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "tgc optimizer driver\n", registry);
  // Long source lines and operation dumps are cut, except where
  // -verify-diagnostics must see every diagnostic or a verbosity flag filters
  // them.
  auto config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (!config.shouldVerifyDiagnostics() &&
      config.getDiagnosticVerbosityLevel() ==
          mlir::VerbosityLevel::ErrorsWarningsAndRemarks)
    tgc::registerConciseDiagnostics(registry);
  // The input is read as every tgc tool reads one: a regular file (or
  // stdin), never a FIFO or a device.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      tgc::readInputFile(inputFilename, tgc::kMaxInputFileBytes,
                         /*allowStdin=*/true);
  if (!input) {
    llvm::errs() << "tgc-opt: error: " << llvm::toString(input.takeError())
                 << "\n";
    return 1;
  }
  if (llvm::Error error =
          tgc::checkBracketNesting((*input)->getMemBufferRef())) {
    llvm::errs() << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  // The output replaces the file only on success: `-o in.mlir` keeps
  // in.mlir when parsing or a pass fails.
  llvm::Expected<std::unique_ptr<tgc::OutputFile>> output =
      tgc::OutputFile::open(outputFilename);
  if (!output) {
    llvm::errs() << "tgc-opt: error: " << llvm::toString(output.takeError())
                 << "\n";
    return 1;
  }
  if (failed(mlir::MlirOptMain((*output)->os(), std::move(*input), registry,
                               config)))
    return 1;
  if (llvm::Error error = (*output)->commit()) {
    llvm::errs() << "tgc-opt: error: " << llvm::toString(std::move(error))
                 << "\n";
    return 1;
  }
  return 0;
}
