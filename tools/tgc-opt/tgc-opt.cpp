//===- tgc-opt.cpp - mlir-opt with every tgc dialect and pass -------------===//

#include "tgc/InitAll.h"
#include "tgc/Support/Diagnostics.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
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
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
